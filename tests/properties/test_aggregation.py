"""Aggregation invariants, through the engine with real hooks finishing in random order.

Reference §6: PreToolUse decisions rank ``deny`` > ``defer`` > ``ask`` >
``allow`` (exit 2 counts as ``deny``); hookd replaces Claude Code's races with
configuration order: the reason is the first (in configuration order) hook's
that gave the winning decision, every deny's message is kept in that order, and
the rewrite is the first one whose paired decision is the final one (or that
has none), and none at all when the final decision is deny or defer.

Each example is a real event with 1–4 command hooks, each sleeping a drawn
time first, so they finish in an order that has nothing to do with their order
in the configuration.  The expected answer is computed from the drawn plan.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.vectors import fire_prepared, hook_command, prepare

RANK = {"deny": 4, "defer": 3, "ask": 2, "allow": 1}

hooks = st.fixed_dictionaries(
    {
        # Weighted towards the cases where a rewrite's own decision matters.
        "decision": st.sampled_from(
            ["deny", "defer", "ask", "ask", "allow", "allow", None, "exit2"]
        ),
        "rewrite": st.booleans(),
        "sleep": st.sampled_from([0, 0.01, 0.03, 0.06]),
    }
)


def _hook(decision: str | None, *, rewrite: bool = False, sleep: float = 0) -> dict[str, Any]:
    return {"decision": decision, "rewrite": rewrite, "sleep": sleep}


def _behaviour(i: int, hook: dict[str, Any]) -> dict[str, Any]:
    behaviour: dict[str, Any] = {"sleep": hook["sleep"]}
    if hook["decision"] == "silent":  # exit 0, nothing on stdout: no output at all
        return behaviour
    if hook["decision"] == "exit2":
        behaviour.update(stderr=f"R{i}", exit=2)
        return behaviour
    specific: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if hook["decision"] is not None:
        specific.update(permissionDecision=hook["decision"], permissionDecisionReason=f"R{i}")
    if hook["rewrite"]:
        specific["updatedInput"] = {"command": f"rewritten by {i}"}
    behaviour["stdout"] = {"hookSpecificOutput": specific}
    return behaviour


def _expected(plan: list[dict[str, Any]]) -> dict[str, Any]:
    verdicts = [{"exit2": "deny", "silent": None}.get(h["decision"], h["decision"]) for h in plan]
    ranked = [d for d in verdicts if d is not None]
    best = max(ranked, key=RANK.__getitem__) if ranked else None

    def message(i: int) -> str:
        return f"[{hook_command(f'K{i}')}]: R{i}" if plan[i]["decision"] == "exit2" else f"R{i}"

    reason = None
    if best is not None:
        reason = next(message(i) for i, d in enumerate(verdicts) if d == best)
    rewrite = None
    if best not in ("deny", "defer"):
        rewrite = next(
            (
                {"command": f"rewritten by {i}"}
                for i, h in enumerate(plan)
                if h["rewrite"]
                and h["decision"] not in ("exit2", "silent")
                and verdicts[i] in (None, best)
            ),
            None,
        )
    denies = [message(i) for i, d in enumerate(verdicts) if d == "deny"]
    return {"decision": best, "reason": reason, "updated_input": rewrite, "denies": denies}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(hooks, min_size=1, max_size=4))
# The cases the rewrite rule turns on, always tried: a decision-less rewrite next to
# a decision; a rewrite whose own decision lost; a rewrite under a winning deny.
@example([_hook(None, rewrite=True, sleep=0.06), _hook("ask")])
@example([_hook("allow", rewrite=True), _hook("ask", rewrite=True, sleep=0.06)])
@example([_hook("ask", rewrite=True, sleep=0.03), _hook("exit2")])
@example([_hook("silent"), _hook("allow", rewrite=True)])
async def test_the_verdict_depends_on_configuration_order_never_on_timing(
    plan: list[dict[str, Any]],
) -> None:
    vector = {
        "input": "PreToolUse-Bash",
        "settings": {
            "hooks": {
                "PreToolUse": [
                    {"hooks": [{"type": "command", "command": f"@HOOK:K{i}@"}]}
                    for i in range(len(plan))
                ]
            }
        },
        "behaviours": {f"K{i}": _behaviour(i, hook) for i, hook in enumerate(plan)},
    }
    with tempfile.TemporaryDirectory(prefix="hkagg") as tmp:
        result = await fire_prepared(prepare(vector, Path(tmp)))
    expected = _expected(plan)
    assert len(result.hooks) == len(plan)
    assert result.decision == expected["decision"]
    assert result.reason == expected["reason"]
    assert result.updated_input == expected["updated_input"]
    if expected["decision"] is not None:
        assert result.blocking_messages == expected["denies"]
