"""Wire Claude Code to hookd by rewriting its settings files (``hookctl claude …``).

``install`` makes one Claude Code settings file (user, project or local scope)
send *every* event to hookd, and moves the hooks it already had into hookd's
config file of the same scope, so that nothing runs twice:

==========  ================================  ====================================
scope       Claude Code settings              hookd config the hooks move to
==========  ================================  ====================================
user        ``~/.claude/settings.json``       ``~/.config/hookd/hooks.json``
project     ``.claude/settings.json``         ``.claude/hooks.json``
local       ``.claude/settings.local.json``   ``.claude/hooks.local.json``
==========  ================================  ====================================

Each event gets one matcher-less group with one handler: an ``http`` hook to
the loopback endpoint, or — for the events where Claude Code runs no http hooks
(SessionStart, Setup; reference §1.5) and those whose verdict only an exit
code carries (TeammateIdle, TaskCompleted, WorktreeCreate failures; Stop and
SubagentStop, where an exit-2 block continues the turn without the system
message a JSON block adds) — a
``command`` hook running hookd-relay: the compiled one (relay/hookd-relay.c,
built into the venv's ``bin/hookd-relay-c`` by the setup scripts; ~1 ms an
event) when it is there, else the Python one with an absolute interpreter and
file path (no console-script wrapper: it costs a second interpreter start-up).

``--transport mod`` (user scope only) wires the per-tool-call events —
PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch
(:data:`~hookd.doors.mod_answer.MOD_EVENTS`) — through hookd's Claude Code
mod instead (``hookd/doors/claude_mod``, loaded in process by Claude Code:
no process, no TCP per event): the settings file's ``env`` gets
``CLAUDE_CODE_PLUGIN_DIRS`` (the mod's folder), ``HOOKD_HTTP_SOCKET`` (the
daemon's http socket the mod posts to) and ``HOOKD_MOD_FAIL_CLOSED`` (the
events with an ``onFailure: "block"`` hook); every other event gets the relay
command hook, whose output Claude Code applies exactly as a native hook's.
Claude Code reads ``CLAUDE_CODE_PLUGIN_DIRS`` only from the user's settings
(never a project's), hence the scope; a project's hooks still run through it
(hookd loads every project's ``.claude/hooks.json``).  The default stays
``http``: mods are early access in Claude Code (≥ 2.1.287), user scope only,
and cannot carry ``systemMessage``.

Everything here is pure planning (:func:`plan_install` and friends return the
files' old and new text); :func:`apply_plan` writes them, keeping a backup of
the first settings file it ever changed.  Planning twice gives the same
texts, which is what makes ``install`` idempotent.

``install`` also records the groups it moved and the settings file as it was
(``settings.json.hookd-moved`` beside the settings file) so that ``uninstall``
gives every byte back, or, over a file edited since, moves back exactly those
groups: hooks the user wrote into hookd's config directly are hookd's, and stay
there.  Every file written here may hold a secret (a literal token, a hook's
header), so backups, records and new files are created owner-only (0600); a
file that already exists keeps its mode.

A project's folder is the repository's: any name written there may be a
planted symlink.  So every write goes through :mod:`hookd.safe_files` (an
exclusive, unguessable temporary file renamed into place), a project's files
must resolve inside the project (:meth:`Plan.destinations`), a user's
symlinked file is edited at its target, and records are read only as regular
files naming their own scope's hookd config.
"""

from __future__ import annotations

import difflib
import errno
import importlib.metadata
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hookd.doors.mod_answer import MOD_EVENTS
from hookd.installers.json_files import dump_object, read_object
from hookd.json_object import parse_object
from hookd.safe_files import UnsafePath, read_own_text, write_atomically, write_destination
from hookd_client.events import EVENT_NAMES
from hookd_client.relay import deadline_for

__all__ = [
    "BACKUP_SUFFIX",
    "MOD_ENV",
    "MOVED_SUFFIX",
    "RELAY_EVENTS",
    "Bridge",
    "FileChange",
    "Plan",
    "ScopeName",
    "Transport",
    "apply_plan",
    "bridge_hooks",
    "compiled_relay",
    "is_bridge_handler",
    "mod_dir",
    "paths_for",
    "plan_import",
    "plan_install",
    "plan_uninstall",
    "relay_bootstrap",
    "relay_script",
]

ScopeName = Literal["user", "project", "local"]
Transport = Literal["http", "mod"]

RELAY_EVENTS = frozenset(
    {
        "SessionStart",
        "Setup",
        "TeammateIdle",
        "TaskCompleted",
        "WorktreeCreate",
        "Stop",
        "SubagentStop",
    }
)
"""Events installed as a hookd-relay command hook instead of an http hook."""

BACKUP_SUFFIX = ".hookd-backup"
MOVED_SUFFIX = ".hookd-moved"
"""Beside the settings file: the groups ``install`` moved into hookd's config."""
TOKEN_ENV = "HOOKD_HTTP_TOKEN"
PLUGIN_DIRS_ENV = "CLAUDE_CODE_PLUGIN_DIRS"
SOCKET_ENV = "HOOKD_HTTP_SOCKET"
FAIL_CLOSED_ENV = "HOOKD_MOD_FAIL_CLOSED"
MOD_ENV = (PLUGIN_DIRS_ENV, SOCKET_ENV, FAIL_CLOSED_ENV)
"""The ``env`` keys ``install --transport mod`` writes (and uninstall takes out again)."""

_CLAUDE_TYPES = frozenset({"command", "http", "mcp_tool", "prompt", "agent"})
"""Handler types Claude Code itself understands (hookd adds python, callback …)."""
_BRIDGE_URL = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\]):\d+/hooks/[A-Za-z]+$")
_CC_DEFAULT_TIMEOUT = {"UserPromptSubmit": 30.0, "PreModelSwitch": 30.0, "PostModelSwitch": 30.0}


def relay_script() -> Path:
    """The relay's source file; installed hooks run it with ``python -I -S``."""
    from hookd_client import relay

    return Path(relay.__file__).resolve()


def mod_dir() -> Path:
    """The mod's plugin folder, shipped inside the package (``hookd/doors/claude_mod``)."""
    return Path(__file__).resolve().parent.parent / "doors" / "claude_mod"


COMPILED_RELAY_NAME = "hookd-relay-c"


def compiled_relay() -> str | None:
    """The compiled relay: next to this interpreter (a venv's or pipx's ``bin``, where
    installing hookd and ``scripts/build-relay`` put it), else wherever the hookd
    distribution installed its script (``pip install --user``: ``~/.local/bin``); None
    when it was not built (no C compiler): then the installed hooks run the Python
    relay, which behaves the same, ~10x slower to start."""
    beside = os.path.join(os.path.dirname(sys.executable), COMPILED_RELAY_NAME)
    for path in (beside, _installed_script(COMPILED_RELAY_NAME)):
        if path is not None and os.access(path, os.X_OK) and os.path.isfile(path):
            return path
    return None


def _installed_script(name: str) -> str | None:
    """Where the installed hookd distribution put the script ``name`` (its RECORD)."""
    try:
        dist = importlib.metadata.distribution("hookd")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name == name:
            return os.path.normpath(str(dist.locate_file(file)))
    return None


def relay_bootstrap(relay_file: str) -> str:
    """The ``-c`` program that runs the relay from its cached bytecode.

    Importing (rather than running ``python relay.py``) skips compiling the
    source on every event.  The directory is *appended* to ``sys.path`` so
    that no file next to the relay can shadow a standard module.
    """
    directory = os.path.dirname(relay_file)
    return f"import sys;sys.path.append({directory!r});import relay;sys.exit(relay.main())"


@dataclass(frozen=True)
class Bridge:
    """Where hookd listens, as the installed hooks must say it."""

    port: int
    token: str
    python: str = field(default_factory=lambda: sys.executable)
    relay: str = field(default_factory=lambda: str(relay_script()))
    relay_binary: str | None = field(default_factory=compiled_relay)
    """The compiled relay to install; None: the Python relay (``python -I -S``)."""
    socket: str | None = None
    token_in_env: bool = False
    """Reference the token as ``$HOOKD_HTTP_TOKEN`` instead of writing it: for
    project settings, which are usually committed."""
    transport: Transport = "http"
    """``mod``: the per-tool-call events go through the mod, the rest through the relay."""
    http_socket: str = ""
    """The daemon's http socket the mod posts to (``transport = "mod"``)."""
    mod: str = field(default_factory=lambda: str(mod_dir()))


@dataclass(frozen=True)
class FileChange:
    path: Path
    old: str | None
    """The current text; None if the file does not exist."""
    new: str
    private: bool = False
    """Holds a secret (the literal token): written with mode 0600."""
    mode: int | None = None
    """The mode to give it (uninstall restoring the original's); None: the usual rule."""

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        old = (self.old or "").splitlines(keepends=True)
        new = self.new.splitlines(keepends=True)
        label = str(self.path)
        return "".join(
            difflib.unified_diff(old, new, "/dev/null" if self.old is None else label, label, n=3)
        )


@dataclass
class Plan:
    changes: list[FileChange] = field(default_factory=list)
    backup: Path | None = None
    """Where the settings file's original is (or will be) kept."""
    notes: list[str] = field(default_factory=list)
    removals: list[Path] = field(default_factory=list)
    """Files to delete (the moved-groups record, once uninstall used it)."""
    root: Path | None = None
    """The project a project- or local-scope plan writes into (None: the user's files):
    nothing it writes or removes may lead outside it (:meth:`destinations`)."""
    empty_dirs: list[Path] = field(default_factory=list)
    """Folders install created, removed after the removals when they are empty again."""

    @property
    def changed(self) -> list[FileChange]:
        return [c for c in self.changes if c.changed]

    def diff(self) -> str:
        return "".join(c.diff() for c in self.changed)

    def destinations(self) -> dict[Path, Path]:
        """Where each file the plan writes or removes really is.

        A user's symlinked file (a dotfile link) is edited at its target, the
        link kept; hookd's own files (backups, install records) are never
        followed, a symlink at their name is replaced; and in a project every
        file, its directory included, must stay inside the project — else
        :class:`~hookd.safe_files.UnsafePath` (a ``ValueError``) before anything
        is written.  Planners call it too, so ``--dry-run`` refuses the same.
        A project's file that will hold the literal token (``--local``) is not
        written through a link at all: even inside the project, the link could
        lead it into a committed file.
        """
        paths = [c.path for c in self.changed] + self.removals
        if self.backup is not None:
            paths.append(self.backup)
        for change in self.changed:
            if self.root is not None and change.private and change.path.is_symlink():
                if not is_own_file(change.path):
                    raise UnsafePath(
                        f"{change.path} is a symlink (to {os.readlink(change.path)}) and would "
                        "hold hookd's token: hookd does not write a secret through a link in a "
                        "project — replace the link with a file"
                    )
        return {p: write_destination(p, self.root, follow=not is_own_file(p)) for p in paths}


def is_own_file(path: Path) -> bool:
    """A bookkeeping file hookd keeps beside an agent's file (a backup, an install record):
    known by its name, written and read without following a link at that name."""
    return path.name.endswith((BACKUP_SUFFIX, MOVED_SUFFIX))


def missing_dirs(*paths: Path) -> list[str]:
    """The folders writing ``paths`` will create (deepest first): recorded by install so
    that uninstall leaves no empty folder behind."""
    out: list[str] = []
    for path in paths:
        for folder in path.parents:
            if os.path.lexists(folder):
                break
            if str(folder) not in out:
                out.append(str(folder))
    return sorted(out, key=lambda f: -f.count(os.sep))


def dirs_to_clear(named: Any, within: Path | None, *files: Path) -> list[Path]:
    """The folders a record says install created, kept only where they are folders of
    ``files`` below ``within`` (the project; None: the home folder) — a record names
    nothing else, and only an empty folder is ever removed."""
    base = within or Path.home()
    allowed = {str(p) for f in files for p in f.parents if base in p.parents}
    return [Path(d) for d in named if d in allowed] if isinstance(named, list) else []


def remove_empty_dirs(folders: list[Path]) -> None:
    """``rmdir`` each folder (deepest first); one that is not empty (the user put something
    there) or already gone stays as it is."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                raise


def same_file_name(named: str, path: Path) -> bool:
    """Whether a path a record names is ``path`` (both made absolute, links resolved)."""
    return os.path.realpath(named) == os.path.realpath(path)


def scope_root(scope: str, project: Path | None) -> Path | None:
    """The folder a scope's files must stay in: the project's (project, local), else None."""
    return None if scope == "user" else (project or Path.cwd())


def check_inside(root: Path | None, *paths: Path) -> None:
    """Refuse (:class:`~hookd.safe_files.UnsafePath`) before reading any of ``paths`` when
    one leads outside the project ``root``: a repository's link must not even get a file
    outside read into a plan (and its diff)."""
    for path in paths:
        write_destination(path, root)


def paths_for(scope: ScopeName, project: Path | None = None) -> tuple[Path, Path]:
    """``(claude settings file, hookd config file)`` of one scope."""
    if scope == "user":
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        return Path.home() / ".claude" / "settings.json", config_home / "hookd" / "hooks.json"
    base = (project or Path.cwd()) / ".claude"
    if scope == "project":
        return base / "settings.json", base / "hooks.json"
    return base / "settings.local.json", base / "hooks.local.json"


# --- recognising and building hookd's own entries ------------------------------------


def is_bridge_handler(handler: Any) -> bool:
    """Whether a settings handler is one ``install`` wrote (and may remove)."""
    if not isinstance(handler, dict):
        return False
    if handler.get("type") == "http":
        return bool(_BRIDGE_URL.match(str(handler.get("url", ""))))
    if handler.get("type") == "command":
        text = " ".join([str(handler.get("command", "")), *map(str, handler.get("args") or [])])
        return (
            "hookd_client/relay.py" in text
            or "hookd-relay" in text
            or ("hookd_client" in text and "import relay" in text)
        )
    return False


def bridge_handler(
    event: str, bridge: Bridge, *, fail_closed: bool, timeout: float | None
) -> dict[str, Any]:
    handler: dict[str, Any]
    if event in RELAY_EVENTS or bridge.transport == "mod":
        args = [event]
        if bridge.socket:
            args += ["--socket", bridge.socket]
        if fail_closed:
            args.append("--fail-closed")
        if timeout is not None:
            # The relay must decide (open or closed) before Claude Code kills it and
            # goes ahead; without this it keeps under Claude Code's default timeout.
            args += ["--timeout", f"{deadline_for(timeout):g}"]
        if bridge.relay_binary:
            handler = {"type": "command", "command": bridge.relay_binary, "args": args}
        else:
            python_args = ["-I", "-S", "-c", relay_bootstrap(bridge.relay), *args]
            handler = {"type": "command", "command": bridge.python, "args": python_args}
    else:
        token = f"${TOKEN_ENV}" if bridge.token_in_env else bridge.token
        handler = {
            "type": "http",
            "url": f"http://127.0.0.1:{bridge.port}/hooks/{event}",
            "headers": {"Authorization": f"Bearer {token}"},
        }
        if bridge.token_in_env:
            handler["allowedEnvVars"] = [TOKEN_ENV]
        if fail_closed:
            # Daemon down or endpoint error: block instead of going ahead (2.1.295).
            handler["onFailure"] = "block"
    if timeout is not None:
        handler["timeout"] = timeout
    return handler


def bridge_hooks(bridge: Bridge, hookd_hooks: dict[str, Any]) -> dict[str, Any]:
    """The ``hooks`` value that sends every event to hookd.

    ``hookd_hooks`` (the config the events will run) decides two things per
    event: ``--fail-closed`` / ``onFailure: "block"`` when one of its hooks
    asks to fail closed, and a Claude Code timeout long enough for its
    slowest hook (hookd enforces each hook's own timeout; Claude Code must not
    give up first).
    """
    out: dict[str, Any] = {}
    for event in EVENT_NAMES:
        if bridge.transport == "mod" and event in MOD_EVENTS:
            continue  # the mod carries it
        handlers = list(_handlers(hookd_hooks.get(event)))
        fail_closed = any(h.get("onFailure") == "block" for h in handlers)
        longest = max((float(h.get("timeout") or 0) for h in handlers), default=0.0)
        default = _CC_DEFAULT_TIMEOUT.get(event, 600.0)
        timeout = longest + 5 if longest + 5 > default else None
        handler = bridge_handler(event, bridge, fail_closed=fail_closed, timeout=timeout)
        out[event] = [{"hooks": [handler]}]
    return out


def fail_closed_events(hookd_hooks: dict[str, Any]) -> list[str]:
    """Events with a hook marked ``onFailure: "block"``, in Claude Code's event order."""
    return [
        event
        for event in EVENT_NAMES
        if any(h.get("onFailure") == "block" for h in _handlers(hookd_hooks.get(event)))
    ]


def mod_env(env: Any, bridge: Bridge | None, hookd_hooks: dict[str, Any]) -> dict[str, Any]:
    """A settings ``env`` with hookd's mod entries taken out, then (``bridge`` with the
    mod transport) put in: the mod's folder appended to ``CLAUDE_CODE_PLUGIN_DIRS``
    (the user's own folders kept), the socket, the fail-closed events."""
    out = dict(env) if isinstance(env, dict) else {}
    dirs = [d for d in str(out.pop(PLUGIN_DIRS_ENV, "") or "").split(os.pathsep) if d]
    dirs = [d for d in dirs if not _is_hookd_mod(d)]
    out.pop(SOCKET_ENV, None)
    out.pop(FAIL_CLOSED_ENV, None)
    if bridge is not None and bridge.transport == "mod":
        dirs.append(bridge.mod)
        out[SOCKET_ENV] = bridge.http_socket
        closed = [e for e in fail_closed_events(hookd_hooks) if e in MOD_EVENTS]
        if closed:
            out[FAIL_CLOSED_ENV] = ",".join(closed)
    if dirs:
        out[PLUGIN_DIRS_ENV] = os.pathsep.join(dirs)
    return out


def _set_env(settings: dict[str, Any], env: dict[str, Any]) -> None:
    """Write ``env`` into the settings unless that changes nothing (an empty ``env`` the
    user wrote stays; one hookd's entries emptied goes)."""
    if env == settings.get("env", {}):
        return
    if env:
        settings["env"] = env
    else:
        settings.pop("env", None)


def _is_hookd_mod(directory: str) -> bool:
    """A plugin folder install wrote: hookd's mod (its manifest names it ``hookd``)."""
    path = Path(directory).expanduser()
    if path.resolve() == mod_dir():
        return True
    try:
        manifest = json.loads((path / ".claude-plugin" / "plugin.json").read_text("utf-8"))
    except (OSError, ValueError):
        # A deleted copy, at a folder name hookd used: today's, or the older bridge/.
        return path.name == "claude_mod" and path.parent.name in ("doors", "bridge")
    return isinstance(manifest, dict) and manifest.get("name") == "hookd"


def _handlers(groups: Any) -> Iterable[dict[str, Any]]:
    if not isinstance(groups, list):
        return
    for group in groups:
        if isinstance(group, dict):
            for handler in group.get("hooks") or []:
                if isinstance(handler, dict):
                    yield handler


# --- splitting and merging hooks -------------------------------------------------------


def split_settings_hooks(hooks: Any) -> dict[str, list[Any]]:
    """The user's own groups in a settings ``hooks`` value, with hookd's entries removed."""
    own: dict[str, list[Any]] = {}
    if not isinstance(hooks, dict):
        return own
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            own[event] = groups  # malformed: keep as is, hookd's loader reports it
            continue
        kept = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept.append(group)
                continue
            handlers = [h for h in group["hooks"] if not is_bridge_handler(h)]
            if handlers:
                kept.append({**group, "hooks": handlers})
        if kept:
            own[event] = kept
    return own


def merge_hooks(base: dict[str, Any], extra: dict[str, list[Any]]) -> dict[str, Any]:
    """``base`` plus the groups of ``extra`` it does not already hold (so re-running is a no-op)."""
    merged = {k: list(v) if isinstance(v, list) else v for k, v in base.items()}
    for event, groups in extra.items():
        current = merged.setdefault(event, [])
        if not isinstance(current, list):
            continue
        for group in groups:
            if group not in current:
                current.append(group)
    return merged


def _claude_compatible(group: Any) -> bool:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    if group.get("sequential"):
        return False
    return all(isinstance(h, dict) and h.get("type") in _CLAUDE_TYPES for h in group["hooks"])


# --- files ----------------------------------------------------------------------------


def plan_install(scope: ScopeName, bridge: Bridge, project: Path | None = None) -> Plan:
    """Wire one scope's settings file to hookd, moving its own hooks into hookd's config.

    The install record beside the settings file (``.hookd-moved``, 0600) keeps what
    uninstall needs to give every byte back: the file's text before the first
    install (``original``, None when there was none, and its mode), the text install
    wrote last (``installed``), whether hookd's config existed, and the groups moved.
    """
    if bridge.transport == "mod" and scope != "user":
        raise ValueError(
            "--transport mod needs --user: Claude Code reads CLAUDE_CODE_PLUGIN_DIRS only "
            "from ~/.claude/settings.json (a project's hooks run through the user's mod too)"
        )
    settings_path, hookd_path = paths_for(scope, project)
    check_inside(scope_root(scope, project), settings_path, hookd_path)
    old_settings, settings = read_object(settings_path)
    old_hookd, hookd_cfg = read_object(hookd_path)
    own = split_settings_hooks(settings.get("hooks"))
    backup = settings_path.with_name(settings_path.name + BACKUP_SUFFIX)
    plan = Plan(backup=backup, root=scope_root(scope, project))
    record_path = _moved_record(settings_path)
    old_record, record = _read_record(record_path, hookd_path)

    hookd_hooks = hookd_cfg.get("hooks") if isinstance(hookd_cfg.get("hooks"), dict) else {}
    merged = merge_hooks(hookd_hooks or {}, own)
    if own:
        new_cfg = {**hookd_cfg, "hooks": merged}
        plan.changes.append(FileChange(hookd_path, old_hookd, dump_object(new_cfg)))
        count = sum(len(g) for g in own.values() if isinstance(g, list))
        plan.notes.append(f"moved {count} hook group(s) from {settings_path} to {hookd_path}")

    new_settings = {**settings, "hooks": bridge_hooks(bridge, merged)}
    _set_env(new_settings, mod_env(settings.get("env"), bridge, merged))
    private = not bridge.token_in_env
    new_text = dump_object(new_settings)
    plan.changes.append(FileChange(settings_path, old_settings, new_text, private))

    first = None
    if old_record is None:  # the first install: the file as it was is this one
        first = {"original": old_settings, "original_mode": _existing_mode(settings_path),
                 "hookd_config_existed": old_hookd is not None,
                 "created_dirs": missing_dirs(settings_path, hookd_path)}  # fmt: skip
    # Edited since install: the record keeps the text install wrote before, so that
    # uninstall sees the edits (and keeps them) instead of restoring over them.
    edited = "installed" in record and old_settings != record["installed"]
    new_record = _install_record(record, first, own, hookd_path, new_text, edited=edited)
    plan.changes.append(FileChange(record_path, old_record, dump_object(new_record), private=True))
    plan.destinations()  # a project's file leading outside it: refused, dry run included
    if scope != "user" and own:
        where = project or Path.cwd()
        plan.notes.append(
            f"hookd runs a project's hooks only once it is trusted: hookctl trust {where}"
        )
    if bridge.token_in_env:
        plan.notes.append(
            f"the http hooks read the token from ${TOKEN_ENV}: export it where Claude Code runs "
            f"(its value is in the hookd http-token file)"
        )
    return plan


_FIRST_INSTALL_KEYS = ("original", "original_mode", "hookd_config_existed", "created_dirs")


def _install_record(
    record: dict[str, Any],
    first: dict[str, Any] | None,
    own: dict[str, list[Any]],
    hookd_path: Path,
    text: str,
    *,
    edited: bool = False,
) -> dict[str, Any]:
    """The record after this install: the groups moved so far, and the first install's
    original (``first``: this is it).  A record written before records kept the
    original gets no ``installed`` either (uninstall then puts groups back, not bytes);
    over a file ``edited`` since, ``installed`` stays the text install wrote before."""
    earlier = record.get("moved") if isinstance(record.get("moved"), dict) else {}
    moved = merge_hooks(earlier or {}, own)
    new: dict[str, Any] = {"hookd_config": str(hookd_path), "moved": moved}
    if first is not None:
        new.update(first)
    elif "installed" in record:
        new.update({k: record.get(k) for k in _FIRST_INSTALL_KEYS})
    else:
        return new
    new["installed"] = record["installed"] if edited else text
    return new


def plan_uninstall(scope: ScopeName, project: Path | None = None) -> Plan:
    """Remove hookd's entries and give the settings file back the hooks ``install`` moved.

    When the settings file still holds exactly what install wrote, it gets back
    every byte it had before the first install (or is removed, if there was none),
    and the backup and record go: nothing of hookd is left beside it.  Otherwise
    (edited since, or installed by a hookd that kept no original) only the groups
    ``install`` moved go back (its record beside the settings file says which;
    without one, the backup's hooks), and the backup stays.  Hooks the user wrote
    into hookd's config directly, groups edited since they were moved, and groups
    only hookd understands (``sequential``, python or callback handlers) stay in
    hookd's config, each with a note.  When hookd's config is gone, the moved
    groups come back from the record (or backup) itself.
    """
    settings_path, hookd_path = paths_for(scope, project)
    check_inside(scope_root(scope, project), settings_path, hookd_path)
    old_settings, settings = read_object(settings_path)
    old_hookd, hookd_cfg = read_object(hookd_path)
    backup = settings_path.with_name(settings_path.name + BACKUP_SUFFIX)
    plan = Plan(root=scope_root(scope, project))  # no backup: uninstall makes none

    record_path = _moved_record(settings_path)
    record_text, record = _read_record(record_path, hookd_path)
    moved = _moved_groups(record_text, record, backup)
    hookd_hooks = hookd_cfg.get("hooks") if isinstance(hookd_cfg.get("hooks"), dict) else None
    back, stay = _sort_back(moved if hookd_hooks is None else hookd_hooks, moved)
    edited = _count_edited(moved, back)
    if edited:
        plan.notes.append(
            f"{edited} group(s) install moved are no longer in {hookd_path} as moved "
            "(edited or removed there): left as they are"
        )
    exact = "installed" in record and old_settings == record["installed"] and not edited
    if exact:
        _restore_original(plan, settings_path, old_settings, record)
    else:
        _restore_groups(plan, settings_path, old_settings, settings, back)
    if old_hookd is not None and hookd_hooks is not None:
        created = record.get("hookd_config_existed") is False
        _keep_in_hookd(plan, hookd_path, old_hookd, hookd_cfg, stay, created=created)
    if record_text is not None:
        plan.removals.append(record_path)
    if _is_regular(backup):
        if exact:
            plan.removals.append(backup)
        else:
            plan.notes.append(f"kept {backup}: {settings_path} as it was before install")
    if exact:
        named = record.get("created_dirs")
        plan.empty_dirs = dirs_to_clear(named, plan.root, settings_path, hookd_path)
    plan.destinations()  # a project's file leading outside it: refused, dry run included
    return plan


def _restore_original(
    plan: Plan, settings_path: Path, current: str | None, record: dict[str, Any]
) -> None:
    """The settings file exactly as it was before the first install (its mode too)."""
    original = record.get("original")
    if not isinstance(original, str):
        if current is not None:
            plan.removals.append(settings_path)
        return
    mode = record.get("original_mode")
    known = mode if isinstance(mode, int) and 0 <= mode <= 0o777 else None
    plan.changes.append(FileChange(settings_path, current, original, mode=known))


def _restore_groups(
    plan: Plan,
    settings_path: Path,
    old_settings: str | None,
    settings: dict[str, Any],
    back: dict[str, list[Any]],
) -> None:
    """The settings file less hookd's entries, plus the groups that go back."""
    restored = merge_hooks(split_settings_hooks(settings.get("hooks")), back)
    new_settings = dict(settings)
    if restored:
        new_settings["hooks"] = restored
    else:
        new_settings.pop("hooks", None)
    _set_env(new_settings, mod_env(settings.get("env"), None, {}))
    if old_settings is not None or new_settings:
        plan.changes.append(FileChange(settings_path, old_settings, dump_object(new_settings)))


def _moved_groups(record_text: str | None, record: dict[str, Any], backup: Path) -> dict[str, Any]:
    """The groups ``install`` moved: from its record, else from the backup of the settings
    file, else none."""
    if record_text is not None:
        recorded = record.get("moved")
        return recorded if isinstance(recorded, dict) else {}
    text = read_own_text(backup)
    if text is not None and text.strip():
        saved = json.loads(text)
        if isinstance(saved, dict):
            return split_settings_hooks(saved.get("hooks"))
    return {}


def _read_record(path: Path, hookd_path: Path) -> tuple[str | None, dict[str, Any]]:
    """The install record beside a settings file, validated: written by hookd as a
    regular file (a symlink there is refused), a JSON object, and naming no hookd
    config but its own scope's — a record a repository carries cannot point
    uninstall at any other file."""
    text = read_own_text(path)
    if text is None:
        return None, {}
    record = parse_object(path, text, what="not an install record hookctl wrote: ")
    named = record.get("hookd_config")
    if named is not None and not same_file_name(str(named), hookd_path):
        raise ValueError(
            f"{path}: refused: it names {named} as hookd's config, but this scope's is "
            f"{hookd_path} (a record can only speak for its own scope's files; remove it "
            "if you did not install from here)"
        )
    return text, record


def _sort_back(
    source: dict[str, Any], moved: dict[str, Any]
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Split hookd's groups into those that go back (moved, unchanged, and runnable by
    Claude Code) and those that stay in hookd's config."""
    back: dict[str, list[Any]] = {}
    stay: dict[str, list[Any]] = {}
    for event, groups in source.items():
        listed = moved.get(event)
        was_moved: list[Any] = listed if isinstance(listed, list) else []
        for group in groups if isinstance(groups, list) else []:
            goes_back = group in was_moved and _claude_compatible(group)
            (back if goes_back else stay).setdefault(event, []).append(group)
    return back, stay


def _count_edited(moved: dict[str, Any], back: dict[str, list[Any]]) -> int:
    """Moved groups Claude Code could run that are no longer in hookd's config as moved."""
    edited = 0
    for event, groups in moved.items():
        for group in groups if isinstance(groups, list) else []:
            if group not in back.get(event, []) and _claude_compatible(group):
                edited += 1
    return edited


def _keep_in_hookd(
    plan: Plan,
    hookd_path: Path,
    old_hookd: str,
    hookd_cfg: dict[str, Any],
    stay: dict[str, Any],
    *,
    created: bool,
) -> None:
    """hookd's config keeps only the groups that stay (or loses its ``hooks`` key; or,
    when install ``created`` it and nothing else is left in it, goes)."""
    new_cfg = dict(hookd_cfg)
    if stay:
        new_cfg["hooks"] = stay
        plan.notes.append(
            f"kept {sum(len(g) for g in stay.values())} group(s) install did not move "
            f"(or Claude Code cannot run) in {hookd_path}"
        )
    else:
        new_cfg.pop("hooks")
    if created and not new_cfg:
        plan.removals.append(hookd_path)
    else:
        plan.changes.append(FileChange(hookd_path, old_hookd, dump_object(new_cfg)))


def plan_import(scope: ScopeName, project: Path | None = None) -> Plan:
    """Copy the settings file's own hooks into hookd's config; Claude Code's file is untouched."""
    settings_path, hookd_path = paths_for(scope, project)
    _, settings = read_object(settings_path)
    old_hookd, hookd_cfg = read_object(hookd_path)
    own = split_settings_hooks(settings.get("hooks"))
    plan = Plan()
    if own:
        base = hookd_cfg.get("hooks") if isinstance(hookd_cfg.get("hooks"), dict) else {}
        new_cfg = {**hookd_cfg, "hooks": merge_hooks(base or {}, own)}
        plan.changes.append(FileChange(hookd_path, old_hookd, dump_object(new_cfg)))
        plan.notes.append(
            f"copied into {hookd_path}; while Claude Code also runs them from {settings_path} "
            "they run twice (use `hookctl claude install` to move them instead)"
        )
    return plan


def apply_plan(plan: Plan) -> list[Path]:
    """Write the changed files (atomically); back up a settings file the first time.

    Every path goes through :meth:`Plan.destinations` first (a symlinked user
    file is edited at its target; a project's file leading outside the project
    is refused before anything is written), and every write through
    :func:`hookd.safe_files.write_atomically` (no planted name is ever opened).
    The backup is owner-only whatever the original's mode: it may hold an API
    key or, after an install, the literal bearer token.
    """
    where = plan.destinations()
    written = []
    for change in plan.changed:
        target = where[change.path]
        target.parent.mkdir(parents=True, exist_ok=True)
        backup = plan.backup
        is_settings = backup is not None and change.path.name + BACKUP_SUFFIX == backup.name
        if is_settings and change.old is not None and backup and not _is_regular(backup):
            write_atomically(where[backup], change.old, 0o600)
        if change.mode is not None:
            mode = change.mode
        else:
            mode = 0o600 if change.private else _mode_of(target)
        write_atomically(target, change.new, mode)
        written.append(change.path)
    for path in plan.removals:
        where[path].unlink(missing_ok=True)
    remove_empty_dirs(plan.empty_dirs)
    return written


def _mode_of(path: Path) -> int:
    """An existing file keeps its mode; a new one is owner-only (it may hold a secret)."""
    return _existing_mode(path) or 0o600


def _existing_mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None


def _is_regular(path: Path) -> bool:
    """A regular file at ``path`` itself (a symlink there is not hookd's backup)."""
    return path.is_file() and not path.is_symlink()


def _moved_record(settings_path: Path) -> Path:
    return settings_path.with_name(settings_path.name + MOVED_SUFFIX)
