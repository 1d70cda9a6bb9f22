def tag(text):
    return f"<{text}>"
