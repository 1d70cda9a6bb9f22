def helper() -> int:
    return 42
