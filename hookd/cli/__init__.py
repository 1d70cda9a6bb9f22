"""Command-line entry points: ``hookd`` (the daemon) and ``hookctl`` (the control tool)."""
