"""Where hookd keeps its configuration: ``$XDG_CONFIG_HOME/hookd`` (default ``~/.config/hookd``).

Below everything that reads or writes there — the daemon's settings
(``hookd.toml``), the http endpoint's token, ``hookctl claude``'s check of the
configured port — so none of them imports another for this one fact.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["config_dir"]


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hookd"
