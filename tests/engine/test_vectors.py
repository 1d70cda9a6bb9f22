"""Every vector in tests/data/vectors runs through Engine.fire with real processes;
the ones marked ``cli`` also run through ``hookctl fire --local`` in a subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookd.engine.claude_output import render_claude

from .vectors import (
    check_claude,
    check_result,
    fire_prepared,
    load_vectors,
    prepare,
    run_cli,
)

ALL = load_vectors()
CLI = [(name, v) for name, v in ALL if v.get("cli")]


@pytest.mark.parametrize(("name", "vector"), ALL, ids=[n for n, _ in ALL])
async def test_vector_engine(name: str, vector: dict[str, Any], tmp_path: Path) -> None:
    prepared = prepare(vector, tmp_path)
    result = await fire_prepared(prepared)
    check_result(result, prepared.vector.get("expect", {}), prepared)
    if "expect_claude" in prepared.vector:
        rendered = render_claude(result, prepared.raw.get("tool_name"))
        check_claude(
            rendered.stdout, rendered.stderr, rendered.exit_code, prepared.vector["expect_claude"]
        )


@pytest.mark.parametrize(("name", "vector"), CLI, ids=[n for n, _ in CLI])
def test_vector_cli(name: str, vector: dict[str, Any], tmp_path: Path) -> None:
    prepared = prepare(vector, tmp_path)
    proc = run_cli(prepared)
    expect = prepared.vector.get("expect_claude")
    assert expect is not None, f"{name}: a cli vector needs expect_claude"
    # The CLI may log config problems on stderr; compare stderr only if the vector asks.
    check_claude(proc.stdout, proc.stderr, proc.returncode, expect)
    if "runs" in prepared.vector.get("expect", {}):
        for key, count in prepared.vector["expect"]["runs"].items():
            assert len(list(prepared.records.glob(f"{key}-*.json"))) == count
