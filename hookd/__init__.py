"""hookd: the persistent hook runtime for AI coding agents."""

from importlib.util import find_spec

__version__ = "0.1.0"

if find_spec("hookd_client") is None:
    # hookd_client is the hookd-client distribution's (hookd depends on it); say so rather
    # than fail on the first import of it, wherever that is.
    raise ImportError(
        "hookd needs the hookd-client distribution (the hookd_client package), which is "
        f"not installed — was it uninstalled? `pip install hookd-client=={__version__}` "
        "(from a checkout: `pip install ./client`), or reinstall hookd"
    )
