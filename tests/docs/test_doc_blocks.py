"""The docs' code blocks work: every fenced block of the checked documents is run or loaded.

What each kind of block goes through:

* ``json`` — hookd's own loader (the one ``hookctl validate`` uses): no error, no warning;
* ``toml`` — ``[[hooks]]`` files through the loader; anything else is ``hookd.toml`` and goes
  through :class:`DaemonSettings`;
* ``markdown`` — a SKILL.md: its frontmatter through the loader;
* ``python`` — run as a script in a fresh interpreter against a real daemon (``$HOOKD_SOCKET``
  points at it), and must exit 0.  A block marked ``python-hook NAME,…`` is a python hook
  module instead: each named function is run by the daemon as a hook and must succeed;
* ``sh`` and anything else — only with a marker saying what happens to it.

A block that cannot run on its own carries a marker comment on the line before its fence, so
this check is honest about what it skips (skips show up in the test report with the reason)::

    <!-- doc-check: fragment (why) -->      not runnable alone (undefined names, a shape …)
    <!-- doc-check: skip (why) -->          runnable, but must not run here
    <!-- doc-check: python-hook f,g -->     a python hook module; run f and g as hooks

A block of a kind this file cannot check and without a marker fails the test: a new block
must say what it is.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from hookd.config.loader import parse_source_text
from hookd.config.model import Scope
from hookd.config.sources import SourceSpec
from hookd.daemon.settings import DaemonSettings
from hookd_client.client import Client
from support.daemon import configure

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "docs" / "configuration.md",
    ROOT / "docs" / "client.md",
    ROOT / "docs" / "observability.md",
]
FIXTURES = ROOT / "tests" / "data" / "cc-fixtures"

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*doc-check:\s*([\w-]+)\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    lang: str
    text: str
    marker: str | None
    detail: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}:{self.lang or 'plain'}"


def blocks_of(path: Path) -> list[Block]:
    """Every top-level fenced block (indented fences, inside lists, are included too)."""
    out: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i].strip())
        if match is None:
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:])
            i += 1
        marker = _MARKER.match(lines[start - 1].strip()) if start else None
        out.append(
            Block(
                doc=path.name,
                line=start + 1,
                lang=match.group(1),
                text="\n".join(body) + "\n",
                marker=marker.group(1) if marker else None,
                detail=marker.group(2) if marker else "",
            )
        )
        i += 1
    return out


ALL = [block for doc in DOCS for block in blocks_of(doc)]


def test_every_checked_document_has_blocks() -> None:
    """The extraction itself works (a regex gone wrong would check nothing and pass)."""
    for doc in DOCS:
        assert len(blocks_of(doc)) >= 3, doc


def _load(block: Block, kind: str) -> None:
    spec = SourceSpec(Path(block.id), Scope.USER, kind=kind)  # type: ignore[arg-type]
    loaded = parse_source_text(spec, block.text)
    problems = [str(e) for e in (*loaded.errors, *loaded.warnings)]
    assert not problems, problems
    assert loaded.groups or block.lang != "markdown", "a skill block without hooks"


def _env(socket: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOOKD_SOCKET": str(socket),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }


async def _run_script(block: Block, socket: Path, tmp: Path) -> None:
    script = tmp / "block.py"
    script.write_text(block.text)
    done = await trio.run_process(
        [sys.executable, str(script)],
        env=_env(socket),
        cwd=tmp,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()


async def _run_as_hooks(block: Block, handle: Any, tmp: Path) -> None:
    module = tmp / "doc_hook.py"
    module.write_text(block.text)
    names = [n.strip() for n in block.detail.split(",") if n.strip()]
    assert names, "python-hook needs the function names"
    groups = [{"hooks": [{"type": "python", "callable": f"{module}:{name}"}]} for name in names]
    configure(handle, {"PreToolUse": groups})
    raw = json.loads((FIXTURES / "PreToolUse-Bash.json").read_text())
    raw["cwd"] = str(tmp)

    def fire() -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", raw).result

    result = await trio.to_thread.run_sync(fire)
    assert [r.outcome for r in result.hooks] == ["success"] * len(names), result.errors


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
async def test_doc_block(block: Block, daemon_factory: Any, tmp_path: Path) -> None:
    if block.marker in ("fragment", "skip"):
        pytest.skip(f"{block.marker}: {block.detail or 'no reason given'}")
    if block.marker == "python-hook":
        assert block.lang == "python", "python-hook marks a python block"
        await _run_as_hooks(block, await daemon_factory(), tmp_path)
        return
    assert block.marker is None, f"unknown doc-check marker {block.marker!r}"
    if block.lang == "json":
        _load(block, "settings")
    elif block.lang == "toml" and "[[hooks]]" in block.text:
        _load(block, "toml")
    elif block.lang == "toml":
        msgspec.convert(tomllib.loads(block.text), DaemonSettings)
    elif block.lang == "markdown":
        _load(block, "skill")
    elif block.lang == "python":
        handle = await daemon_factory()
        await _run_script(block, handle.socket, tmp_path)
    else:
        pytest.fail(
            f"a `{block.lang or 'plain'}` block cannot be checked: mark it "
            "`<!-- doc-check: skip (why) -->` or `fragment`"
        )
