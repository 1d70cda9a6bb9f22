def main() -> None:
    # TODO: remove the debug print before shipping
    print("debug")
