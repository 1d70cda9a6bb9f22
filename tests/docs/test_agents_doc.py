"""docs/agents.md's capability matrix is the adapters' own EventSpecs, rendered."""

from __future__ import annotations

from pathlib import Path

from hookd.agents.matrix import BEGIN, END, render, splice
from hookd.agents.registry import ADAPTERS

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def test_the_matrix_in_the_docs_is_the_one_the_code_renders() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert splice(text, render()) == text, (
        "docs/agents.md's capability matrix differs from the adapters' EventSpecs: "
        "run `python -m hookd.agents.matrix --write docs/agents.md` and review the diff"
    )


def test_every_agent_and_every_event_is_in_it() -> None:
    block = DOC.read_text(encoding="utf-8").split(BEGIN)[1].split(END)[0]
    for adapter in ADAPTERS:
        assert f"#### {adapter.title} (`{adapter.name}`)" in block
        for spec in adapter.events:
            assert f"| `{spec.native}` | {spec.canonical} |" in block


def test_every_agent_has_an_install_story() -> None:
    text = DOC.read_text(encoding="utf-8").split(BEGIN)[0]
    for adapter in ADAPTERS:
        assert f"(`{adapter.name}`" in text, f"docs/agents.md tells nothing of {adapter.name}"
