"""The README's flow ends working: its Install and Using-it blocks, verbatim on a fresh HOME,
then the real Claude Code CLI through the wiring they made.

The Using-it block starts ``hookd serve &`` with no http port, writes a hook that
denies ``rm -rf``, and runs ``hookctl claude install --user``, which wires Claude
Code's http hooks to port 47470.  The daemon must open that port itself (no
restart): here the model asks for ``rm -rf`` on a canary directory, and the hook
must deny it — through the same daemon the block started — instead of failing
open.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.fake_api import Turn
from e2e.harness import claude_available, run_claude
from support.clis import require_cli
from support.readme import (
    ROOT,
    fresh_home_dir,
    readme_block,
    readme_env,
    run_block,
    stop_group,
)

pytestmark = [pytest.mark.slow, pytest.mark.claude]


async def test_readme_flow_then_claude_code_denies_through_hookd() -> None:
    require_cli(claude_available(), "the Claude Code CLI or node")
    with fresh_home_dir() as home:
        env = readme_env(home)
        install, out, err = run_block(readme_block("Install"), ROOT, env)
        assert install.returncode == 0, out + err
        work = home / "work"
        work.mkdir()
        usage, out, err = run_block(readme_block("Using it"), work, env)
        try:
            assert usage.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
            await _claude_is_denied(home, work, env)
        finally:
            stop_group(usage.pid)


async def _claude_is_denied(home: Path, work: Path, env: dict[str, str]) -> None:
    canary = work / "canary"
    canary.mkdir()
    (canary / "keep").write_text("still here\n")
    turns = [
        Turn([{"type": "tool_use", "name": "Bash", "input": {"command": f"rm -rf {canary}"}}]),
        Turn([{"type": "text", "text": "done"}]),
    ]
    run = await run_claude(
        prompt="please clean up",
        turns=turns,
        home=home,
        project=work,
        # The agent's own environment: the same runtime directory (the relay's socket).
        env={"XDG_RUNTIME_DIR": env["XDG_RUNTIME_DIR"], "PATH": env["PATH"]},
    )
    assert run.exit_code == 0, run.stderr
    results = run.tool_results()
    assert len(results) == 1, run.requests[-1:]
    said = json.dumps(results[0])
    assert "no rm -rf" in said, said  # the hook's stderr, as Claude Code shows a deny
    assert (canary / "keep").exists(), "the hook failed open: the command ran"
    # The one daemon the block started answered (no restart): its audit log has the event.
    audit = home / ".local" / "state" / "hookd" / "audit" / "audit.jsonl"
    assert "rm -rf" in audit.read_text(), "the event did not go through hookd"
