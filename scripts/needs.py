"""Which optional tools the selected tests need, so scripts/check installs only those.

Usage: ``.venv/bin/python scripts/needs.py [pytest args...]`` prints one word per line:
``npm`` (the pinned agent CLIs in tests/e2e, ~1.7 GB), ``systemd`` (systemd-analyze and
systemd-socket-activate), ``tmux`` (``hookctl top`` in a real terminal), ``otel`` (hookd's
``otel`` extra: opentelemetry-sdk and the OTLP exporter, for the telemetry tests),
``phoenix`` (Arize Phoenix, the OpenTelemetry backend of the telemetry e2e test, in its
own ``.venv-phoenix``).

It collects the tests the arguments select (pytest ``--collect-only``, nothing runs) and reads
each selected test file: a file that names a tool's program or the CLIs' folder needs that
tool. Reading the files, not a hand-kept table, means a new test that starts ``tmux`` or an
agent CLI is counted without anyone remembering to add it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: What a test file says when it needs a tool, by the word scripts/check installs it under.
NEEDS = {
    "npm": (
        "node_modules",
        "require_cli(",
        "e2e.harness",
        "codex_harness",
        "copilot_harness",
        "cline_harness",
        "pytest.mark.claude",
        "pytest.mark.codex",
        "pytest.mark.factory",
        "pytest.mark.gemini",
        "pytest.mark.copilot",
        "pytest.mark.cline",
        "pytest.mark.qwen",
        "pytest.mark.opencode",
        "pytest.mark.agent_sdk",
    ),
    "systemd": ("systemd-analyze", "systemd-socket-activate"),
    "tmux": ('"tmux"',),
    "otel": ("support.otlp", "opentelemetry", "phoenix_binary"),
    "phoenix": ("phoenix_binary",),
}


def selected_files(args: list[str]) -> set[Path]:
    """The test files that hold at least one test the arguments select."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    files = set()
    for line in out.stdout.splitlines():
        path, sep, _ = line.partition("::")
        if sep and path.endswith(".py"):
            files.add(Path(path))
    if not files and out.returncode not in (0, 5):
        # Collection failed (a syntax error, a bad flag): install everything; pytest will say why.
        return {p for p in Path("tests").rglob("test_*.py")}
    return files


def main() -> None:
    needed: set[str] = set()
    for path in selected_files(sys.argv[1:]):
        text = path.read_text(encoding="utf-8", errors="replace")
        needed.update(tool for tool, marks in NEEDS.items() if any(m in text for m in marks))
    print("\n".join(sorted(needed)))


if __name__ == "__main__":
    main()
