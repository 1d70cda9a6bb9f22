"""Wire any agent to hookd through its adapter's install side (``hookctl agents …``).

The generic driver behind ``hookctl agents install | uninstall | status``: for
one agent and one scope it plans the change to the agent's own hook file and
to hookd's config, prints it (``--dry-run``) or applies it.  Like
:mod:`hookd.installers.claude_settings` (Claude Code's richer installer, which
``hookctl agents install claude`` routes to), everything here is pure planning
— old and new text per file — and :func:`apply_plan` is the only writer.

What ``install`` does, for an agent whose adapter says where its hooks live:

* the agent's file (``adapter.install_files(scope)``: the first of its hook
  files; Cline: one per event) gets one hookd entry per event —
  ``adapter.wire_file(path, text, command)``, the command being the
  relay (compiled when built, else the Python one) with
  ``--agent <name> <native event>``, and ``--fail-closed`` where one of hookd's
  hooks for that event has ``onFailure: "block"``;
* the user's own hooks in that file (``adapter.read_hooks``: already in
  hookd's shape, canonical events and tool names, seconds) move into hookd's
  config of the same scope, so nothing runs twice:

  ========  ==================================  ====================================
  scope     the agent's file                    hookd config the hooks move to
  ========  ==================================  ====================================
  user      the adapter's user file             ``~/.config/hookd/hooks.json``
  project   the adapter's project file          ``<project>/.claude/hooks.json``
  ========  ==================================  ====================================

  hookd has one project config for every agent (``.claude/hooks.json``, the
  file hookd's loader reads and ``hookctl trust`` covers), so a project's hooks
  from any agent land in the same place as Claude Code's;
* a backup of the agent's file as it was (``<file>.hookd-backup``, with the
  original file's mode) and a record beside it (``<file>.hookd-moved``, 0600):
  the original text, the text install wrote, and the groups it *added* to
  hookd's config (a group hookd already had — say the same guard moved from
  Claude Code — is not recorded, so uninstalling this agent leaves it for the
  other).

``uninstall`` gives the file back exactly as it was when the file still holds
what install wrote; when it was edited since, it refuses (``--force``
restores the original anyway, and the dry run shows what would be lost),
because a generic driver cannot take hookd's entries out of a native format it
does not know without an adapter's help.  In hookd's config it removes the
groups install added that are still there unchanged; edited ones stay, said so.

Records sit beside the file they describe, so a project's can come with the
repository: :func:`read_record` accepts one only as a regular file for this
agent and scope that names this scope's hookd config, and uninstall edits that
config — never a path a record names.  Paths are checked as
:mod:`hookd.installers.claude_settings` does (a user's symlinked file edited at its
target; a project's file leading outside the project refused).

Re-planning an install of an installed agent gives the same texts (the
adapter's ``wire`` is idempotent and read_hooks skips hookd's own entries), which
is what makes ``install`` idempotent.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from hookd.agents.base import Adapter, EventSpec, NativeHooks, Scope
from hookd.agents.capabilities import mcp_install_notes
from hookd.installers.claude_settings import (
    FileChange,
    Plan,
    check_inside,
    compiled_relay,
    dirs_to_clear,
    merge_hooks,
    missing_dirs,
    paths_for,
    relay_bootstrap,
    relay_script,
    remove_empty_dirs,
    same_file_name,
    scope_root,
)
from hookd.installers.json_files import dump_object, read_object
from hookd.safe_files import read_own_text, write_atomically, write_destination

__all__ = [
    "BACKUP_SUFFIX",
    "RECORD_SUFFIX",
    "AgentFileState",
    "AgentPlan",
    "InstallRecord",
    "Relay",
    "apply_plan",
    "file_state",
    "hookd_config_path",
    "plan_install",
    "plan_uninstall",
    "read_native",
    "read_record",
]

BACKUP_SUFFIX = ".hookd-backup"
RECORD_SUFFIX = ".hookd-moved"


@dataclass(frozen=True)
class Relay:
    """The command every wired hook runs: ``hookd-relay --agent <name> <native event>``.

    The compiled relay when ``scripts/build-relay`` built it beside this
    interpreter (~1 ms an event), else the Python relay run from its cached
    bytecode with an absolute interpreter (no console-script wrapper: that costs
    a second interpreter start), exactly as Claude Code's installer picks it.
    """

    binary: str | None = field(default_factory=compiled_relay)
    python: str = field(default_factory=lambda: sys.executable)
    script: str = field(default_factory=lambda: str(relay_script()))
    socket: str | None = None

    def command(self, agent: str, native_event: str, *, fail_closed: bool) -> str:
        """One shell command line (agents run their hooks' ``command`` through a shell)."""
        if self.binary:
            argv = [self.binary]
        else:
            argv = [self.python, "-I", "-S", "-c", relay_bootstrap(self.script)]
        argv += ["--agent", agent, native_event]
        if self.socket:
            argv += ["--socket", self.socket]
        if fail_closed:
            argv.append("--fail-closed")
        return shlex.join(argv)


def hookd_config_path(scope: Scope, project: Path | None) -> Path:
    """hookd's config file of ``scope`` (the same table as Claude Code's installer)."""
    return paths_for(scope, project)[1]


def backup_path(agent_file: Path) -> Path:
    return agent_file.with_name(agent_file.name + BACKUP_SUFFIX)


def record_path(agent_file: Path) -> Path:
    return agent_file.with_name(agent_file.name + RECORD_SUFFIX)


class InstallRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What one install did to one agent file (the ``.hookd-moved`` JSON beside it).

    Read back by ``uninstall``, so it is validated like every file hookd reads: a
    record that is not what install wrote is an error naming the file and field,
    never a guess about what to restore."""

    agent: str
    scope: str
    hookd_config: str
    """hookd's config file the groups were added to."""
    hookd_config_existed: bool = True
    """Was there a hookd config before the first install (else uninstall may remove it)."""
    original: str | None
    """The file's text before the first install; None: there was no file."""
    installed: str
    """The text install wrote last (uninstall restores only over this text)."""
    added: dict[str, list[Any]] = msgspec.field(default_factory=dict)
    """The groups install added to hookd's config, per canonical event."""
    created_dirs: list[str] = msgspec.field(default_factory=list)
    """Folders the first install created (uninstall removes them again when empty)."""


def read_record(
    agent_file: Path, *, agent: str, scope: Scope, project: Path | None
) -> InstallRecord | None:
    """The install record beside ``agent_file``, validated before anything trusts it.

    A project's records sit in the project, so a repository can carry one; what
    it may make uninstall do is therefore bounded here: the record must be a
    regular file (a symlink there is refused, never read through), decode as an
    :class:`InstallRecord`, be for this agent and scope, and name as hookd's
    config exactly the one this scope owns — a record naming any other file (the
    user's ``~/.config/hookd/hooks.json`` from a project) is refused, with the
    reason, and nothing is touched.
    """
    path = record_path(agent_file)
    text = read_own_text(path)
    if text is None:
        return None
    try:
        record = msgspec.json.decode(text, type=InstallRecord)
    except msgspec.DecodeError as exc:  # ValidationError included
        raise ValueError(f"{path}: not an install record hookctl wrote: {exc}") from exc
    expected = str(hookd_config_path(scope, project))
    if record.agent != agent or record.scope != scope:
        raise ValueError(
            f"{path}: refused: a record of {record.agent!r} at {record.scope!r} scope, found "
            f"beside {agent!r}'s {scope}-scope file (remove it if hookctl did not write it)"
        )
    if not same_file_name(record.hookd_config, Path(expected)):
        raise ValueError(
            f"{path}: refused: it names {record.hookd_config} as hookd's config, but this "
            f"scope's is {expected} (a record only ever speaks for its own scope's files; "
            "remove it if you did not install from here)"
        )
    return record


# --- planning --------------------------------------------------------------------------


@dataclass
class AgentPlan(Plan):
    """A :class:`Plan` over several agent files (Cline: one per event), each backed up."""

    backups: dict[Path, Path] = field(default_factory=dict)
    """Agent file → where its original goes (fresh installs of existing files)."""
    modes: dict[Path, int] = field(default_factory=dict)
    """Mode of a file the plan creates, where it is not owner-only 0600 (Cline's scripts)."""

    def destinations(self) -> dict[Path, Path]:
        """:meth:`Plan.destinations`, the backups included (never through a link at their
        name; inside the project)."""
        backups = {b: write_destination(b, self.root, follow=False) for b in self.backups.values()}
        return {**super().destinations(), **backups}


def plan_install(
    adapter: Adapter,
    scope: Scope,
    relay: Relay,
    *,
    home: Path,
    project: Path | None,
) -> AgentPlan:
    """Wire ``adapter``'s file(s) of ``scope`` to hookd and move its own hooks into hookd's config.

    Raises ``ValueError`` (with the file) when a file involved cannot be read as it
    must be: hookd's config is not a JSON object, or the agent's file does not parse
    (wiring over it would drop whatever it held).
    """
    targets = adapter.install_files(scope, home, project)
    if not targets:
        raise ValueError(_no_file(adapter, scope))
    hookd_path = hookd_config_path(scope, project)
    check_inside(scope_root(scope, project), hookd_path)  # the agent files: at the end
    old_hookd, hookd_cfg = read_object(hookd_path)
    plan = AgentPlan(root=scope_root(scope, project))
    found = hookd_cfg.get("hooks")
    base: dict[str, Any] = found if isinstance(found, dict) else {}
    merged = dict(base)
    moved: dict[Path, dict[str, list[Any]]] = {}
    for target in targets:
        if _read_text(target) is None:
            continue
        native = read_native(adapter, target)
        plan.notes.extend(f"{target}: {warning}" for warning in native.warnings)
        own = native.hooks
        added = _added_groups(merged, own)
        moved[target] = added
        merged = merge_hooks(merged, own)
        count = sum(len(g) for g in added.values())
        if count:
            plan.notes.append(
                f"moved {count} hook group(s) from {target} to {hookd_path}: they now run "
                "for every agent wired to hookd (edit them there)"
            )
        already = sum(len(g) for g in own.values()) - count
        if already:
            plan.notes.append(
                f"{already} hook group(s) of {target} were already in {hookd_path}: removed "
                "from the agent's file only"
            )
    if merged != base:
        plan.changes.append(
            FileChange(hookd_path, old_hookd, dump_object({**hookd_cfg, "hooks": merged}))
        )
    plan.notes.extend(mcp_install_notes(adapter, merged))

    def command(spec: EventSpec) -> str:
        return relay.command(adapter.name, spec.native, fail_closed=_fails_closed(merged, spec))

    for target in targets:
        _plan_file(plan, adapter, scope, target, command, moved.get(target, {}), hookd_path,
                   project=project, config_existed=old_hookd is not None)  # fmt: skip
    plan.destinations()  # a project's file leading outside it: refused, dry run included
    for other in adapter.hook_files(scope, home, project):
        if other not in targets:
            plan.notes.extend(_unmoved_note(adapter, other))
    if scope == "project" and any(moved.values()):
        where = project or Path.cwd()
        plan.notes.append(
            f"hookd runs a project's hooks only once it is trusted: hookctl trust {where}"
        )
    plan.notes.extend(f"{adapter.title}: {step}" for step in adapter.trust_steps(scope))
    return plan


def _plan_file(
    plan: AgentPlan,
    adapter: Adapter,
    scope: Scope,
    target: Path,
    command: Callable[[EventSpec], str],
    added: dict[str, list[Any]],
    hookd_path: Path,
    *,
    project: Path | None,
    config_existed: bool,
) -> None:
    """One agent file: its wired text, its backup (fresh install) and its install record."""
    old_text = _read_text(target)
    record = read_record(target, agent=adapter.name, scope=scope, project=project)
    new_text = adapter.wire_file(target, old_text, command)
    if record is None and new_text == old_text:
        return  # a file the adapter leaves as it is (Cline: the user's own hook for an event)
    if record is None:
        original = old_text
        if old_text is not None:
            plan.backups[target] = backup_path(target)
        earlier: dict[str, list[Any]] = {}
        created = missing_dirs(target, hookd_path)
    else:
        original = record.original
        earlier = record.added
        config_existed = record.hookd_config_existed
        created = record.created_dirs
    # A file edited since install keeps the text install wrote before as ``installed``:
    # re-installing must not turn the user's edits into "what install wrote", or
    # uninstall would then drop them without the refusal (and ``--force``) they get.
    edited = record is not None and old_text != record.installed
    new_record = InstallRecord(
        agent=adapter.name,
        scope=scope,
        hookd_config=str(hookd_path),
        hookd_config_existed=config_existed,
        original=original,
        installed=record.installed if record is not None and edited else new_text,
        added=merge_hooks(earlier, added),
        created_dirs=created,
    )
    if old_text is None:
        plan.modes[target] = adapter.install_mode
    plan.changes.append(FileChange(target, old_text, new_text))
    old_record = read_own_text(record_path(target))
    record_text = dump_object(msgspec.to_builtins(new_record))
    plan.changes.append(FileChange(record_path(target), old_record, record_text, True))


def plan_uninstall(
    adapter: Adapter,
    scope: Scope,
    *,
    home: Path,
    project: Path | None,
    force: bool = False,
) -> AgentPlan:
    """Give the agent's file(s) back as they were before install, and take back from hookd's
    config the groups install added (those still there unchanged).

    Raises ``ValueError`` when a file was changed since install and ``force`` is not
    given, or when one is wired to hookd with no record of the install (nothing says
    what it held before).
    """
    targets = adapter.install_files(scope, home, project)
    if not targets:
        raise ValueError(_no_file(adapter, scope))
    check_inside(scope_root(scope, project), hookd_config_path(scope, project))
    plan = AgentPlan(root=scope_root(scope, project))
    records: list[InstallRecord] = []
    for target in targets:
        current = _read_text(target)
        record = read_record(target, agent=adapter.name, scope=scope, project=project)
        if record is None:
            if current is not None and adapter.is_wired(current):
                raise ValueError(
                    f"{target} sends {adapter.title}'s events to hookd but there is no install "
                    f"record ({record_path(target)}): remove hookd's entries by hand"
                )
            continue
        if current != record.installed and not force:
            raise ValueError(
                f"{target} was changed since hookctl installed it: uninstall --force restores "
                "it as it was before install (see the change with --dry-run --force), losing "
                "those edits"
            )
        if record.original is None:
            if current is not None:
                plan.removals.append(target)
        else:
            plan.changes.append(FileChange(target, current, record.original))
        plan.removals.append(record_path(target))
        if os.path.lexists(backup_path(target)):
            plan.removals.append(backup_path(target))
        records.append(record)
        hookd_path = hookd_config_path(scope, project)
        for folder in dirs_to_clear(record.created_dirs, plan.root, target, hookd_path):
            if folder not in plan.empty_dirs:
                plan.empty_dirs.append(folder)
    plan.empty_dirs.sort(key=lambda f: -len(f.parts))
    if not records:
        plan.notes.append(f"{adapter.title} is not installed ({', '.join(map(str, targets))})")
    _take_back(plan, records, hookd_config_path(scope, project))
    plan.destinations()  # a project's file leading outside it: refused, dry run included
    return plan


def _no_file(adapter: Adapter, scope: Scope) -> str:
    """Why there is nothing to install into, and what to do instead (the adapter's words)."""
    steps = adapter.trust_steps(scope)
    return f"{adapter.title} has no {scope}-scope hook file to install into" + (
        f": {'; '.join(steps)}" if steps else ""
    )


def _take_back(plan: AgentPlan, records: list[InstallRecord], path: Path) -> None:
    """hookd's config of the scope (``path``: never one a record names, see
    :func:`read_record`) without the groups the installs added (when still there as added)."""
    added: dict[str, list[Any]] = {}
    for record in records:
        added = merge_hooks(added, record.added)
    if not added or not records:
        return
    existed = all(r.hookd_config_existed for r in records)
    old, cfg = read_object(path)
    hooks = cfg.get("hooks")
    if old is None or not isinstance(hooks, dict):
        return
    kept, removed = _without_added(hooks, added)
    edited = _added_but_changed(hooks, added)
    if removed:
        new_cfg = dict(cfg)
        if kept:
            new_cfg["hooks"] = kept
        else:
            new_cfg.pop("hooks")
        if not new_cfg and not existed:
            plan.removals.append(path)  # install created it; nothing else was put there
        else:
            plan.changes.append(FileChange(path, old, dump_object(new_cfg)))
        plan.notes.append(f"moved {removed} hook group(s) back out of {path}")
    if edited:
        plan.notes.append(
            f"{edited} group(s) install moved are no longer in {path} as moved (edited or "
            "removed there): left as they are"
        )


def _without_added(
    hooks: dict[str, Any], added: dict[str, list[Any]]
) -> tuple[dict[str, Any], int]:
    """``hooks`` less every group install added, and how many groups that took out."""
    kept: dict[str, Any] = {}
    removed = 0
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        left = [g for g in groups if g not in added.get(event, [])]
        removed += len(groups) - len(left)
        if left:
            kept[event] = left
    return kept, removed


def _added_but_changed(hooks: dict[str, Any], added: dict[str, list[Any]]) -> int:
    """How many groups install added are no longer in ``hooks`` as added (the user edited them)."""
    edited = 0
    for event, groups in added.items():
        present = hooks.get(event)
        present_groups = present if isinstance(present, list) else []
        edited += sum(1 for g in groups if g not in present_groups)
    return edited


def read_native(adapter: Adapter, path: Path) -> NativeHooks:
    """``adapter.read_hooks(path)``, its errors naming the file (and, for JSON, the line)."""
    try:
        return adapter.read_hooks(path)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    except ValueError as exc:
        if str(path) in str(exc):
            raise
        raise ValueError(f"{path}: {exc}") from exc


def _added_groups(base: dict[str, Any], own: dict[str, list[Any]]) -> dict[str, list[Any]]:
    added: dict[str, list[Any]] = {}
    for event, groups in own.items():
        present = base.get(event) if isinstance(base.get(event), list) else []
        for group in groups:
            if group not in (present or []) and group not in added.get(event, []):
                added.setdefault(event, []).append(group)
    return added


def _fails_closed(hooks: dict[str, Any], spec: EventSpec) -> bool:
    groups = hooks.get(spec.canonical)
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and handler.get("onFailure") == "block":
                return True
    return False


def _unmoved_note(adapter: Adapter, path: Path) -> list[str]:
    """Another file of the same scope that still has hooks of its own (they keep running)."""
    if _read_text(path) is None:
        return []
    try:
        found = read_native(adapter, path)
    except (OSError, ValueError) as exc:
        return [f"not read: {exc}"]
    count = sum(len(g) for g in found.hooks.values())
    notes = [f"{path}: {warning}" for warning in found.warnings]
    if count:
        notes.append(
            f"{path} keeps {count} hook group(s) of its own: {adapter.title} still runs them "
            "itself (move them into hookd's config by hand)"
        )
    return notes


# --- state (status, list) --------------------------------------------------------------


@dataclass(frozen=True)
class AgentFileState:
    """One of an agent's hook files as ``hookctl agents status`` reports it."""

    path: Path
    exists: bool
    wired: bool
    own_groups: int
    """The user's hooks still in the file (they run natively, not through hookd)."""
    recorded: bool
    """An install record is beside it (``uninstall`` can restore)."""
    error: str | None = None
    notes: tuple[str, ...] = ()
    """What reading the file's own hooks said (hooks that stay in the agent, and why)."""


def file_state(adapter: Adapter, path: Path) -> AgentFileState:
    text = _read_text(path)
    recorded = record_path(path).exists()
    if text is None:
        return AgentFileState(path, False, False, 0, recorded)
    try:
        wired = adapter.is_wired(text)
        native = read_native(adapter, path)
    except (OSError, ValueError) as exc:
        return AgentFileState(path, True, False, 0, recorded, error=str(exc))
    own = sum(len(g) for g in native.hooks.values())
    return AgentFileState(path, True, wired, own, recorded, notes=tuple(native.warnings))


# --- files -----------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def apply_plan(plan: AgentPlan) -> list[Path]:
    """Write the changed files atomically; back up an agent file first (fresh installs).

    Paths go through :meth:`Plan.destinations` (a user's symlinked file is edited
    at its target, the link kept; a project's file leading outside the project
    is refused before anything is written; backups and records are never
    followed), writes through :func:`hookd.safe_files.write_atomically`.
    The backup keeps the original file's mode: it is a copy of a file the user
    already had, with the exposure it already had.  New files are owner-only
    (hook commands and headers may hold secrets) unless the adapter says its files
    are programs (``install_mode``); a file that exists keeps its mode; the install
    record is always owner-only (it holds the original text).
    """
    where = plan.destinations()
    written: list[Path] = []
    for change in plan.changed:
        target = where[change.path]
        target.parent.mkdir(parents=True, exist_ok=True)
        backup = plan.backups.get(change.path)
        if backup is not None and change.old is not None and not _is_regular(backup):
            write_atomically(where[backup], change.old, _mode_of(target))
        if change.private:
            mode = 0o600
        elif change.old is None:
            mode = plan.modes.get(change.path, 0o600)
        else:
            mode = _mode_of(target)
        write_atomically(target, change.new, mode)
        written.append(change.path)
    for path in plan.removals:
        where[path].unlink(missing_ok=True)
    remove_empty_dirs(plan.empty_dirs)
    return written


def _is_regular(path: Path) -> bool:
    """A regular file at ``path`` itself (a symlink planted there is not hookd's backup)."""
    return path.is_file() and not path.is_symlink()


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o600
