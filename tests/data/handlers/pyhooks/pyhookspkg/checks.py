from . import helpers


def check(event):
    return {"systemMessage": helpers.tag("PKG-V1")}
