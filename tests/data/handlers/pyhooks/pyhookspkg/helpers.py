def tag(text: str) -> str:
    return f"<{text}>"
