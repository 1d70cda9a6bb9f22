"""What Codex skips, or runs beside hookd, without a word — read from its ``config.toml``.

Codex keeps hook trust and inline hooks in ``config.toml``, not in
``hooks.json``, so :meth:`CodexAdapter.lint <hookd.agents.codex.CodexAdapter.lint>`
looks there (``hookctl doctor``):

* **hook trust**: ``codex exec`` runs only hooks recorded as trusted
  (``[hooks.state."<id>"] trusted_hash``) and skips the rest *silently* — the
  run succeeds, no hook ran.  With no trusted hook at all, every hook of the
  file is skipped (unless ``--dangerously-bypass-hook-trust``);
* **project trust**: a project's ``.codex/hooks.json`` also needs the project
  trusted (``[projects."<path>"] trust_level = "trusted"``);
* **hooks switched off**: ``[features] hooks = false`` (checked with 0.169: no
  hook runs, nothing is said);
* **inline hooks**: ``[[hooks.PreToolUse]]`` tables in ``config.toml`` run too;
  ``install`` wires ``hooks.json`` only, so they keep running in Codex, beside
  hookd's entries, and never move.

The trusted hash itself is Codex's own (not worked out here), so the check is
"none trusted", not "these trusted": it never claims a hook will run.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from hookd.agents.base import Finding

__all__ = ["lint_codex"]


def _toml(path: Path) -> tuple[dict[str, Any] | None, Finding | None]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return None, Finding(
            severity="error",
            message=f"Codex cannot read its config.toml: {exc}",
            path=str(path),
        )


def _switched_off(user: dict[str, Any] | None, config: Path, path: Path) -> list[Finding]:
    """``[features] hooks = false``: seen with 0.169, no hook runs and nothing is said."""
    features = (user or {}).get("features")
    if not (isinstance(features, dict) and features.get("hooks") is False):
        return []
    return [
        Finding(
            severity="error",
            message=f"hooks are switched off in {config} ([features] hooks = false): "
            "Codex runs none of this file's hooks, and says nothing",
            path=str(path),
        )
    ]


def lint_codex(path: Path, has_hooks: bool, home: Path) -> list[Finding]:
    """Findings for Codex's hook file ``path`` (``has_hooks``: it holds any hook at all)."""
    out: list[Finding] = []
    user_config = home / ".codex" / "config.toml"
    user, problem = _toml(user_config)
    out.extend([problem] if problem else [])
    is_user_file = path.parent == home / ".codex"
    if has_hooks:
        out.extend(_switched_off(user, user_config, path))
        hooks = (user or {}).get("hooks")
        state = hooks.get("state") if isinstance(hooks, dict) else None
        if not (isinstance(state, dict) and state):
            out.append(
                Finding(
                    severity="warning",
                    message="Codex has trusted no hook (no [hooks.state] in config.toml): "
                    "`codex exec` skips this file's hooks silently — start `codex` once and "
                    "approve them, or run it with --dangerously-bypass-hook-trust",
                    path=str(path),
                )
            )
        if not is_user_file:
            project = str(path.parent.parent)
            projects = (user or {}).get("projects")
            entry = projects.get(project) if isinstance(projects, dict) else None
            if not (isinstance(entry, dict) and entry.get("trust_level") == "trusted"):
                out.append(
                    Finding(
                        severity="warning",
                        message=f"Codex runs a project's hooks only in a trusted project, and "
                        f'{project} is not ([projects."{project}"] trust_level = "trusted" '
                        "in config.toml, or `codex --trust`)",
                        path=str(path),
                    )
                )
    local = path.parent / "config.toml"
    inline_config, problem = (user, None) if local == user_config else _toml(local)
    out.extend([problem] if problem else [])
    inline = (inline_config or {}).get("hooks")
    events = (
        [k for k, v in inline.items() if k != "state" and v] if isinstance(inline, dict) else []
    )
    if events:
        out.append(
            Finding(
                severity="warning",
                message=f"hooks inline in config.toml ({', '.join(events)}) run in Codex "
                "itself, beside hookd's entries, and `hookctl agents install codex` does not "
                "move them: move them into hooks.json and install again",
                path=str(local),
                where="hooks",
            )
        )
    return out
