from . import helpers


def check(event: object) -> dict[str, str]:
    return {"systemMessage": helpers.tag("PKG-V1")}
