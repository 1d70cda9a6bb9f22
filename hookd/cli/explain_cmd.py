"""``hookctl explain EVENT --cwd DIR --agent A [--tool T]``: which hooks would run, and why.

For one agent's event in one directory, without running anything: the
canonical event the agent's event becomes, the tool name hookd will match
(the agent's native name mapped), hookd's trust state for the project, every
hook configured for the event with the file it comes from and the matcher
trace (matched, not matched, decided per call by an ``if`` rule, held back
until the project is trusted, switched off by ``disableAllHooks``), and what
that agent loses on this event — what it cannot do with the hooks' answers
(:func:`hookd.agents.capabilities.report`, the event's note).

The config is loaded the way the daemon loads it (``hookd.toml``'s sources,
the same trust store), so the answer is the daemon's, minus what only an
event's input decides.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from hookd.agents.base import Adapter, EventSpec
from hookd.agents.capabilities import report
from hookd.agents.mcp_names import McpTool, parse_claude
from hookd.agents.registry import UnknownAgent, adapter_for, names
from hookd.cli.style import Style
from hookd.config.assemble import load_config
from hookd.config.matching import compile_matcher, tool_aliases
from hookd.config.model import HookConfig, HookSpec
from hookd.config.schema import CommandHandler, handler_label
from hookd.daemon.settings import SettingsError, load_settings, source_layout
from hookd.daemon.trust import TrustGate, TrustStore, needs_trust
from hookd.handlers.warm_python import launch_preview
from hookd_client.events import EVENTS

__all__ = ["add_explain_command", "cmd_explain", "explain"]

EXIT_OK, EXIT_ERROR = 0, 1

_CAPS = (
    ("block", "block"),
    ("rewrite_input", "rewrite input"),
    ("add_context", "add context"),
    ("ask", "ask the user"),
    ("continue_stop", "continue after a stop"),
    ("system_message", "show a systemMessage"),
)


def specs_for(adapter: Adapter, event: str) -> list[EventSpec]:
    """``event`` as the agent's own name, else as the canonical one (all its native events)."""
    native = [s for s in adapter.events if s.native == event]
    return native or [s for s in adapter.events if s.canonical == event]


def explain(
    adapter: Adapter,
    spec: EventSpec,
    config: HookConfig,
    gate: TrustGate,
    cwd: str,
    tool: str | None,
) -> dict[str, Any]:
    """The explanation of one native event, as data (the text output prints it)."""
    event = spec.canonical
    field = EVENTS[event].matcher_field if event in EVENTS else None
    canonical_tool, tested, tool_note = _tool_names(adapter, tool)
    verdict = gate.verdict(cwd)
    hooks: list[dict[str, Any]] = []
    for g_index, group in enumerate(config.groups_for(event)):
        for spec_ in group.hooks:
            hooks.append(_trace(config, spec_, group.matcher, g_index, event, field,
                                tested, cwd, verdict.trusted))  # fmt: skip
    can = [label for attr, label in _CAPS if getattr(spec.caps, attr)]
    cannot = [label for attr, label in _CAPS if not getattr(spec.caps, attr)]
    # One line per loss, with the hooks it concerns (the event's note is shown once, above).
    losses: dict[str, dict[str, Any]] = {}
    for r in report(adapter, [h for h in config.all_hooks() if h.event == event]):
        if any(text and r.message.endswith(text) for text in (spec.note, spec.differs)):
            continue
        if not r.message.startswith(adapter.title) and spec.native not in r.message:
            continue  # about another native event of the same canonical one
        entry = losses.setdefault(r.message, {"severity": r.severity, "hooks": []})
        entry["hooks"].append(r.hook)
    return {
        "agent": adapter.name,
        "title": adapter.title,
        "verified": adapter.verified,
        "native_event": spec.native,
        "event": event,
        "note": spec.note,
        "differs": spec.differs,
        "tool": tool,
        "canonical_tool": canonical_tool,
        "tool_names": list(dict.fromkeys(tested)),
        "tool_note": tool_note,
        "cwd": cwd,
        "trusted": verdict.trusted,
        "trust": verdict.reason,
        "can": can,
        "cannot": cannot,
        "matchers_applied_by": "the agent"
        if spec.caps.matchers
        else "hookd (the agent ignores them)",
        "parallel": spec.caps.parallel,
        "hooks": hooks,
        "losses": [{"message": m, **v} for m, v in losses.items()],
    }


def _trace(
    config: HookConfig,
    spec: HookSpec,
    matcher: str | None,
    group: int,
    event: str,
    field: str | None,
    tools: tuple[str, ...],
    cwd: str,
    trusted: bool,
) -> dict[str, Any]:
    """One hook's trace; ``tools``: every name its matcher is tested against (Claude Code's
    name of the tool first, its legacy names, an MCP tool's other readings)."""
    tool = tools[0] if tools else None
    row: dict[str, Any] = {
        "hook": handler_label(spec.handler),
        "type": type(spec.handler).__struct_config__.tag,
        "source": spec.source,
        "scope": spec.scope.name.lower(),
        "group": group,
        "matcher": matcher,
        "if": spec.handler.if_,
        "timeout": spec.timeout,
    }
    if isinstance(spec.handler, CommandHandler):
        row["start"] = launch_preview(spec.handler, os.environ, cwd)
    if needs_trust(spec) and not trusted:
        return {**row, "runs": "no", "why": "held back: the project is not trusted by hookd"}
    if not config.scope_allowed(spec.scope):
        return {
            **row,
            "runs": "no",
            "why": "switched off (disableAllHooks / allowManagedHooksOnly)",
        }
    compiled = compile_matcher(matcher, event)
    if matcher in (None, "", "*"):
        runs, why = "yes", "no matcher: every time"
    elif field is None:
        runs, why = "yes", f"{event} has no matcher: {matcher!r} is ignored"
    elif field == "tool_name" and tool is not None:
        hit = compiled.matches(tools)
        runs = "yes" if hit else "no"
        why = f"matcher {matcher!r} {'matches' if hit else 'does not match'} {tool}"
    else:
        runs, why = "depends", f"matcher {matcher!r} on {field}: decided by each event's input"
    if runs != "no" and spec.handler.if_ is not None:
        runs, why = "depends", f"{why}; if {spec.handler.if_!r}: decided per call"
    return {**row, "runs": runs, "why": why}


def _tool_names(adapter: Adapter, tool: str | None) -> tuple[str | None, tuple[str, ...], str]:
    """``--tool``'s canonical name, every name a matcher is tested against, and what
    explain says about it (an MCP tool's naming under this agent)."""
    if not tool:
        return None, (), ""
    canonical = adapter.canonical_tool(tool)
    mcp = adapter.mcp_tool(tool)
    others = mcp.candidates if mcp is not None else adapter.tool_candidates(tool)
    return canonical, (*tool_aliases(canonical), *others), _tool_note(adapter, tool, mcp)


def _tool_note(adapter: Adapter, tool: str | None, mcp: McpTool | None) -> str:
    """What explain says about an MCP tool's name under this agent: how the agent names
    it, and every reading when there is more than one (never a silent guess)."""
    if not tool:
        return ""
    if mcp is None:
        parsed = parse_claude(tool)
        if parsed is None or adapter.mcp.is_claude:
            return ""
        native = adapter.mcp.native(*parsed)
        if native is None:
            return f"{adapter.mcp.how}: a matcher naming {tool} never matches there"
        return f"{adapter.title} calls {tool} `{native}`; hookd maps it back ({adapter.mcp.how})"
    readings = [c for c in mcp.candidates if c != tool]
    if len([c for c in readings if parse_claude(c) is not None]) > 1:
        return (
            f"{tool!r} reads several ways ({', '.join(readings)}): hookd names it {mcp.name}"
            " and tests each matcher against every reading, so a guard may fire for a"
            " look-alike tool but never misses its own"
        )
    return f"{adapter.mcp.how}; matchers are tested against {', '.join(readings)}"


def cmd_explain(args: argparse.Namespace) -> int:
    try:
        adapter = adapter_for(args.agent)
    except UnknownAgent as exc:
        print(f"hookctl explain: {exc}", file=sys.stderr)
        return EXIT_ERROR
    specs = specs_for(adapter, args.event)
    if not specs:
        known = ", ".join(dict.fromkeys(s.native for s in adapter.events))
        print(
            f"hookctl explain: {adapter.title} has no event {args.event!r} (its events: {known})",
            file=sys.stderr,
        )
        return EXIT_ERROR
    cwd = str(Path(args.cwd).resolve())
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"hookctl explain: {exc}", file=sys.stderr)
        return EXIT_ERROR
    layout = source_layout(settings)
    config = load_config(layout, cwd)
    gate = TrustGate(
        TrustStore(settings.state_path() / "trust.json"), layout, required=settings.require_trust
    )
    found = [explain(adapter, spec, config, gate, cwd, args.tool) for spec in specs]
    if args.json:
        print(json.dumps(found if len(found) > 1 else found[0], indent=2))
        return EXIT_OK
    style = Style.for_stream(sys.stdout, getattr(args, "color", "auto"))
    for error in config.errors:
        print(style.red(f"config error: {error}"))
    for one in found:
        _print(one, style)
    return EXIT_OK


def _print(e: dict[str, Any], style: Style) -> None:
    kind = "" if e["verified"] else " (built from its docs, not run here)"
    print(style.bold(f"{e['title']}{kind}: {e['native_event']} → {e['event']} in {e['cwd']}"))
    if e["tool"]:
        mapped = e["canonical_tool"]
        print(f"  tool       {e['tool']}" + (f" → {mapped}" if mapped != e["tool"] else ""))
        if e["tool_note"]:
            print(f"  {style.yellow('mcp')}        {e['tool_note']}")
    print(f"  can        {', '.join(e['can']) or 'nothing but observe'}")
    if e["cannot"]:
        print(f"  cannot     {', '.join(e['cannot'])}")
    print(f"  matchers   applied by {e['matchers_applied_by']}")
    if e["note"]:
        print(f"  note       {e['note']}")
    if e["differs"]:
        print(f"  {style.yellow('differs')}    hookd, deliberately: {e['differs']}")
    trust = style.green("trusted") if e["trusted"] else style.yellow("NOT trusted")
    print(f"  hookd      project {trust}: {e['trust']}")
    if not e["hooks"]:
        print(f"  hooks      none configured for {e['event']}")
    for h in e["hooks"]:
        mark = {"yes": style.green("runs   "), "no": style.dim("skipped"),
                "depends": style.yellow("depends")}[h["runs"]]  # fmt: skip
        print(f"  {mark}    {h['hook']}  [{h['scope']}] {h['source']}")
        print(f"             {h['why']}")
        if "start" in h:
            print(f"             starts {h['start']}")
    for loss in e["losses"]:
        paint = style.yellow if loss["severity"] != "info" else style.dim
        print(f"  {paint('loses')}      {loss['message']} ({', '.join(loss['hooks'])})")


def add_explain_command(sub: Any) -> None:
    explain_ = sub.add_parser(
        "explain",
        help="which hooks an agent's event would run here, and what the agent loses",
        description="For one agent's event in one directory: the canonical event, the tool "
        "name hookd matches, hookd's trust state, every configured hook with its file and "
        "matcher trace, and what the agent cannot do with the answers. Runs nothing.",
    )
    explain_.add_argument(
        "event", help="the agent's event (BeforeTool) or Claude Code's (PreToolUse)"
    )
    explain_.add_argument("--agent", default="claude", help=f"one of: {', '.join(names())}")
    explain_.add_argument("--cwd", default=".", help="the session's directory (default: .)")
    explain_.add_argument(
        "--tool", help="a tool name, the agent's (run_shell_command) or Claude Code's"
    )
    explain_.add_argument("--json", action="store_true", help="the explanation as JSON")
    explain_.set_defaults(func=cmd_explain)
