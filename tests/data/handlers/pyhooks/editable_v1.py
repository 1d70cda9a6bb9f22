import time


def hook(event):
    time.sleep(0.5)
    return {"systemMessage": "EDITABLE-V1"}
