import time


def hook(event):
    time.sleep(0.0)
    return {"systemMessage": "EDITABLE-V2"}
