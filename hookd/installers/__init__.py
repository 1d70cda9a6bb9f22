"""The installers: what edits an agent's own files so that its events reach hookd.

This package changes when an agent's *files* change (a new settings key, a
new scope, a new hooks file); :mod:`hookd.doors` changes when an agent's wire
does.  Only the CLI uses it; the daemon never edits an agent's files.

* :mod:`hookd.installers.claude_settings` — Claude Code's settings files:
  install/uninstall/import plans that move the user's own hooks into hookd's
  config and leave one bridge entry per event (``hookctl claude install``);
* :mod:`hookd.installers.agent_install` — the same for any agent, through its
  adapter's install side: plans, backups with the original's mode, install
  records for an exact uninstall (``hookctl agents install``);
* :mod:`hookd.installers.agent_doctor` — every agent's hook files linted for
  the ways a hook silently stops running (``hookctl doctor``);
* :mod:`hookd.installers.door` — whether the running daemon serves the door an
  install just wired, fixed in ``hookd.toml`` when it does not.
"""
