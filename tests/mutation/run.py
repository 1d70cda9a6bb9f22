"""A small mutation-testing runner: does the suite notice when the code is wrong?

Usage (by hand, like bench/; it is slow and never part of ``scripts/check``)::

    .venv/bin/python tests/mutation/run.py                      # every target, sampled
    .venv/bin/python tests/mutation/run.py --target engine --sample 40 --seed 1
    .venv/bin/python tests/mutation/run.py --list               # mutation points only

How it works: the repository's ``hookd/``, ``client/`` and ``tests/`` are copied
once to a scratch directory, which goes first on ``PYTHONPATH`` (ahead of the
editable install).  For each mutant the target module is re-parsed, exactly one
AST node is changed, and the module is written back with ``ast.unparse``; then
only the target's own fast test files run (``pytest -x``, with a time limit).
A mutant is *killed* when those tests fail or time out, *survives* when they
pass.  The unmutated module is first written the same way (``ast.unparse``)
and its tests must pass, so formatting cannot count as a kill.

The operators are the classic ones: comparisons flipped (``==``/``!=``,
``<``/``<=``/``>``/``>=``, ``in``/``not in``, ``is``/``is not``), ``and``/``or``
swapped, ``not`` dropped, an ``if``/``while`` condition negated, ``True``/``False``
swapped, small integers changed by one, ``+``/``-`` swapped, a ``return`` value
replaced by ``None``, a call statement deleted, and ``break``/``continue``
swapped.  Docstrings, ``log.*`` calls, ``__all__`` and type annotations are
left alone: changing them tests nothing.

CPU is scarce on the shared machine: ``--sample`` bounds the mutants per
target, and each run is limited by ``--timeout`` (default: 4 × the clean run,
at least 30 s).  Results go to ``tests/mutation/results/<target>.json`` and a
summary to stdout; docs/testing.md records the last full run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"

_INSTALLER_TESTS = [
    "tests/installers/test_install_rules.py",  # the rules over every agent, scope, event
    "tests/installers/test_install_planted_paths.py",
    "tests/installers/test_agent_install.py",
    "tests/installers/test_claude_install.py",
    "tests/installers/test_claude_install_mod.py",
    "tests/installers/test_claude_door.py",  # the port and token it wires, a real daemon
    "tests/cli/test_agents_claude_route.py::test_agents_install_claude_writes_what_claude_install_writes",
    "tests/cli/test_agents_claude_route.py::test_agents_list_and_status_show_claude_wired_after_install",
]
"""What covers the installers: the pair's target and each installer's own."""


TARGETS: dict[str, tuple[list[str], list[str]]] = {
    # name: (modules, the test files that cover them, fastest and sharpest first:
    # pytest -x stops at the first failure, so a killed mutant costs little and a
    # survivor costs the whole list)
    "interpret": (
        ["hookd/engine/interpret.py"],
        [
            "tests/engine/test_failure_policy.py",
            "tests/engine/test_exit_codes.py",
            "tests/engine/test_vectors.py::test_vector_engine",
        ],
    ),
    "aggregate": (
        ["hookd/engine/aggregate.py", "hookd/engine/claude_output.py"],
        [
            "tests/engine/test_claude_output.py",
            "tests/properties/test_aggregation.py",
            "tests/engine/test_failure_policy.py",
            "tests/engine/test_vectors.py",
        ],
    ),
    "engine": (
        ["hookd/engine/engine.py", "hookd/engine/selection.py", "hookd/engine/breaker.py"],
        [
            "tests/engine/test_narrow_matchers.py",
            "tests/engine/test_failure_policy.py",
            "tests/engine/test_runtime.py",
            "tests/reliability/test_breaker.py",
            "tests/engine/test_vectors.py::test_vector_engine",
        ],
    ),
    "matching": (
        ["hookd/config/matching.py"],
        [
            "tests/engine/test_if_rules.py",
            "tests/engine/test_dedup.py",
            "tests/engine/test_narrow_matchers.py",
            "tests/properties/test_matchers.py",
        ],
    ),
    "process": (
        ["hookd/handlers/process.py"],
        [
            "tests/engine/test_kill_nets.py",
            "tests/engine/test_runtime.py",
            "tests/async_hooks/test_bookkeeping.py",  # the output-level async handoff
            "tests/async_hooks/test_supervision.py",
        ],
    ),
    "async": (
        [
            "hookd/daemon/async_runner.py",
            "hookd/daemon/async_delivery.py",
            "hookd/daemon/async_store.py",
        ],
        [
            "tests/async_hooks/test_bookkeeping.py",
            "tests/async_hooks/test_persistence.py",
            "tests/async_hooks/test_delivery.py",
            "tests/async_hooks/test_front_doors.py",
            "tests/async_hooks/test_supervision.py",
            "tests/async_hooks/test_wake_up_layouts.py",
        ],
    ),
    # issue 32: where the risk is now (trust, the doors, the installers, the pipeline)
    "limits": (
        ["hookd/daemon/limits.py"],
        [
            "tests/properties/test_limits_ledger.py",  # the budget and the caps as ledgers
            "tests/properties/test_codec.py",  # the refused frame's prefix reader
            "tests/reliability/test_limits.py",
            "tests/reliability/test_door_inputs.py",
            "tests/daemon/test_settings.py",
        ],
    ),
    "trust": (
        ["hookd/daemon/trust.py"],
        [
            "tests/properties/test_trust_store.py",  # which entry covers; every pin change
            "tests/reliability/test_trust_settings.py",  # no untrusted setting in effect
            "tests/reliability/test_trust_boundary.py",
            "tests/reliability/test_trust.py",
            "tests/reliability/test_trust_commands.py",
            "tests/daemon/test_skills.py",  # a project skill's hooks need trust
            "tests/reliability/test_pipeline_rules.py::test_a_reply_names_the_held_back_hooks_exactly_when_some_were",
        ],
    ),
    "pipeline": (
        ["hookd/daemon/pipeline.py"],
        [
            "tests/reliability/test_pipeline_rules.py",
            # fire(): another agent's input at Claude Code's http door
            "tests/agents/test_guests.py::test_at_the_http_door_copilot_s_input_is_copilot_s_and_runs_once",
            "tests/agents/test_guests.py::test_at_the_http_door_copilot_s_stop_loop_is_capped_as_at_its_own_door",
            "tests/reliability/test_door_inputs.py",
            "tests/async_hooks/test_late_context_doors.py",
            "tests/agents/test_agent_door.py",  # another agent's event: degraded, losses logged
            "tests/client/test_flavours.py::test_fire_returns_a_typed_result_with_progress",
            # fire() asks for the agent only for a new session or hooks that run
            "tests/doors/test_http_agent_lookup.py::test_the_agent_is_looked_up_only_when_needed_and_once_per_connection",
            "tests/reliability/test_trust.py",
            "tests/reliability/test_breaker.py",
            "tests/doors/test_http_socket.py",  # fire() with a hang-up watcher: the http door
            "tests/properties/test_path_sources.py",
            "tests/daemon/test_serving.py",
            # The trust boundary's tests that go through the pipeline (skills, the project
            # directory); the others are trust.py's and cost a minute per mutant here.
            "tests/reliability/test_trust_boundary.py::test_a_pin_covers_the_projects_skills",
            "tests/reliability/test_trust_boundary.py::test_a_skill_name_cannot_walk_out_of_the_skill_directories",
            "tests/reliability/test_trust_boundary.py::test_the_project_is_claude_project_dir_and_its_links_are_its_own",
            "tests/reliability/test_trust_boundary.py::test_a_project_reached_through_a_symlinked_path_keeps_its_trust",
            "tests/daemon/test_telemetry.py",  # each event and each run reach the exporter
        ],
    ),
    "http": (
        [
            "hookd/doors/http_admission.py",
            "hookd/doors/http_endpoint.py",
            "hookd/doors/http_wire.py",
        ],
        [
            "tests/properties/test_door_admission.py",  # the pending pool and the cap, unit
            "tests/properties/test_door_credentials.py",
            "tests/doors/test_http_endpoint.py",
            "tests/doors/test_http_fast_path.py",
            "tests/properties/test_http_body_budget.py",  # the budget and MAX_BODY, each framing
            "tests/doors/test_http_socket.py",
            "tests/reliability/test_http_door.py",
            "tests/doors/test_http_agent_lookup.py",  # one lookup per connection, own uid only
            "tests/reliability/test_limits.py::test_http_connections_over_the_cap_get_503",
            "tests/reliability/test_limits.py::test_http_headers_sent_byte_by_byte_time_out",
        ],
    ),
    "installers": (
        ["hookd/installers/agent_install.py", "hookd/installers/claude_settings.py"],
        _INSTALLER_TESTS,
    ),
    # each installer alone: a sample of its own when the pair's is short of one
    "agent_install": (
        ["hookd/installers/agent_install.py"],
        _INSTALLER_TESTS,
    ),
    "claude_settings": (
        ["hookd/installers/claude_settings.py"],
        _INSTALLER_TESTS,
    ),
    "doctor": (
        ["hookd/installers/agent_doctor.py"],
        [
            "tests/properties/test_doctor_findings.py",  # each finding over every agent
            "tests/installers/test_install_rules.py::test_an_agents_relay_fails_closed_exactly_where_hookds_config_blocks",
            "tests/installers/test_install_rules.py::test_doctor_lints_every_file_of_every_scope_and_says_each_silent_failure_once",
            "tests/agents/test_lint_rules.py",
            "tests/agents/test_docs_adapters.py::test_lint_finds_the_silent_failures",
            "tests/cli/test_doctor_explain.py",
            "tests/agents/test_mcp_names.py",
            "tests/agents/test_cline_adapter.py::test_doctor_says_an_event_install_left_to_the_user_s_own_hook",
        ],
    ),
    "agents": (
        sorted(
            f"hookd/agents/{p.name}"
            for p in (ROOT / "hookd" / "agents").glob("*.py")
            if p.name != "__init__.py"
        ),
        [
            "tests/agents/test_detect.py",
            "tests/agents/test_lint_rules.py",
            "tests/cli/test_doctor_explain.py",  # codex_lint's findings
            "tests/agents/test_docs_adapters.py",
            "tests/agents/test_mcp_names.py",
            "tests/agents/test_capabilities.py",
            "tests/agents/test_guests.py",
            "tests/agents/test_agent_door.py",
            "tests/docs/test_agents_doc.py",  # the capability matrix, every agent x event
            "tests/properties/test_agent_blocks.py",
            "tests/properties/test_agent_stop_inputs.py",
            "tests/agents/test_wiring_forms.py",
            *sorted(
                f"tests/agents/{p.name}"
                for p in (ROOT / "tests" / "agents").glob("test_*_adapter.py")
            ),
        ],
    ),
}

_FLIP_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


@dataclass(frozen=True)
class Point:
    """One mutation: the ``index``-th node (in ``ast.walk`` order) changed by ``op``."""

    module: str
    index: int
    op: str
    line: int
    text: str


@dataclass
class Outcome:
    point: Point
    status: str  # killed | survived | timeout | error
    seconds: float


@dataclass
class Report:
    target: str
    command: str
    points: int
    sampled: int
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def killed(self) -> int:
        return sum(o.status in ("killed", "timeout") for o in self.outcomes)

    @property
    def score(self) -> float:
        ran = [o for o in self.outcomes if o.status != "error"]
        return self.killed / len(ran) if ran else float("nan")


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """Nodes that are docs, logging, annotations or ``__all__``: never mutated."""
    skip: set[int] = set()

    def skip_all(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                skip_all(body[0])
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip_all(node)  # attribute docstrings
        if isinstance(node, ast.AnnAssign):
            skip_all(node.annotation)
        if isinstance(node, ast.arg):
            skip_all(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for decorator in node.decorator_list:  # frozen=, slots=, maxsize=: not behaviour
                skip_all(decorator)
        if isinstance(node, ast.ClassDef):
            for keyword in node.keywords:  # a Struct's frozen=, kw_only=: the same
                skip_all(keyword)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            skip_all(node.returns)
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            skip_all(node)
        call = node.value if isinstance(node, ast.Expr) else node  # a log call's statement too
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.value.id in ("log", "logger", "structlog"):
                    skip_all(node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            if node.test.id == "TYPE_CHECKING":
                skip_all(node)
    return skip


def _ops(node: ast.AST) -> Iterator[str]:
    """The mutation operators that apply to ``node``."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        if type(node.ops[0]) in _FLIP_COMPARE:
            yield "flip-compare"
    elif isinstance(node, ast.BoolOp):
        yield "swap-boolop"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "drop-not"
    elif isinstance(node, ast.If | ast.While | ast.IfExp):
        yield "negate-condition"
    elif isinstance(node, ast.Constant):
        if node.value is True or node.value is False:
            yield "swap-bool"
        elif isinstance(node.value, int) and not isinstance(node.value, bool):
            if -2 <= node.value <= 1024:
                yield "int-plus-one"
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        yield "swap-addsub"
    elif isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield "return-none"
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
        yield "delete-call"
    elif isinstance(node, ast.Break | ast.Continue):
        yield "swap-break-continue"


_SOURCES: dict[str, str] = {}


def source_of(module: str) -> str:
    """The module's text as it was when first read: the run mutates a snapshot, so
    editing or rebasing the working tree meanwhile cannot change what is tested."""
    if module not in _SOURCES:
        _SOURCES[module] = (ROOT / module).read_text(encoding="utf-8")
    return _SOURCES[module]


def points_of(module: str) -> list[Point]:
    source = source_of(module)
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    lines = source.splitlines()
    found: list[Point] = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        for op in _ops(node):
            line = getattr(node, "lineno", 0)
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            found.append(Point(module, index, op, line, text))
    return found


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST, op: str) -> None:
        self.target = target
        self.op = op

    def visit(self, node: ast.AST) -> ast.AST | None:
        if node is not self.target:
            result: ast.AST | None = self.generic_visit(node)
            return result
        return _mutate(node, self.op)


def _mutate(node: ast.AST, op: str) -> ast.AST | None:
    if op == "flip-compare" and isinstance(node, ast.Compare):
        node.ops = [_FLIP_COMPARE[type(node.ops[0])]()]
    elif op == "swap-boolop" and isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif op == "drop-not" and isinstance(node, ast.UnaryOp):
        return node.operand
    elif op == "negate-condition" and isinstance(node, ast.If | ast.While | ast.IfExp):
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    elif op == "swap-bool" and isinstance(node, ast.Constant):
        node.value = not node.value
    elif op == "int-plus-one" and isinstance(node, ast.Constant) and isinstance(node.value, int):
        node.value = node.value + 1
    elif op == "swap-addsub" and isinstance(node, ast.BinOp):
        node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
    elif op == "return-none" and isinstance(node, ast.Return):
        node.value = ast.Constant(value=None)
    elif op == "delete-call" and isinstance(node, ast.Expr):
        return ast.Pass()
    elif op == "swap-break-continue":
        return ast.Continue() if isinstance(node, ast.Break) else ast.Break()
    return node


def mutated_source(point: Point) -> str:
    tree = ast.parse(source_of(point.module))
    nodes = list(ast.walk(tree))
    mutant = _Apply(nodes[point.index], point.op).visit(tree)
    assert isinstance(mutant, ast.Module)
    return ast.unparse(ast.fix_missing_locations(mutant))


def clean_source(module: str) -> str:
    return ast.unparse(ast.parse(source_of(module)))


def _scratch() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="hkmut"))
    # scripts/ and relay/: the installers' tests build the compiled relay; docs/ and
    # README.md: the tests that check what the docs say.
    parts = ("hookd", "client", "tests", "pyproject.toml", "scripts", "relay", "docs", "README.md")
    for part in parts:
        src = ROOT / part
        if not src.exists():
            continue
        if src.is_dir():
            shutil.copytree(
                src,
                scratch / part,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "node_modules", "results"),
            )
        else:
            shutil.copy2(src, scratch / part)
    return scratch


def _run_tests(scratch: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(scratch), str(scratch / "client")]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
            cwd=scratch,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - started
    status = "survived" if proc.returncode == 0 else "killed"
    if proc.returncode in (2, 3, 4):  # interrupted, internal error, usage: not a verdict
        status = "error"
    return status, time.monotonic() - started


def run_target(
    name: str, sample: int | None, seed: int, timeout: float | None, only: list[str] | None = None
) -> Report:
    modules, tests = TARGETS[name]
    if only:  # --module: sample within these of the target's modules only
        modules = [m for m in modules if any(part in m for part in only)]
    points = [p for m in modules for p in points_of(m)]
    chosen = points
    if only and sample is not None:  # a sample of each module: small files get their share
        chosen = []
        for module in modules:
            of = points_of(module)
            chosen += random.Random(seed).sample(of, min(sample, len(of)))
        chosen.sort(key=lambda p: (p.module, p.line))
    elif sample is not None and sample < len(points):
        chosen = sorted(
            random.Random(seed).sample(points, sample), key=lambda p: (p.module, p.line)
        )
    command = " ".join(
        [".venv/bin/python tests/mutation/run.py", f"--target {name}", f"--seed {seed}"]
        + ([f"--sample {sample}"] if sample is not None else [])
        + [f"--module {part}" for part in only or []]
    )
    report = Report(name, command, len(points), len(chosen))
    scratch = _scratch()
    try:
        for module in modules:  # the clean run: ast.unparse'd, it must pass
            (scratch / module).write_text(clean_source(module), encoding="utf-8")
        status, clean_seconds = _run_tests(scratch, tests, timeout or 900)
        if status != "survived":
            raise SystemExit(f"{name}: the tests fail without any mutation ({status})")
        limit = timeout or max(30.0, 4 * clean_seconds)
        print(f"{name}: {len(chosen)} of {len(points)} mutants; clean run {clean_seconds:.1f}s")
        for n, point in enumerate(chosen, 1):
            target = scratch / point.module
            try:
                target.write_text(mutated_source(point), encoding="utf-8")
                status, seconds = _run_tests(scratch, tests, limit)
            finally:
                target.write_text(clean_source(point.module), encoding="utf-8")
            report.outcomes.append(Outcome(point, status, round(seconds, 1)))
            mark = "." if status in ("killed", "timeout") else status[0].upper()
            print(
                f"  [{n}/{len(chosen)}] {mark} {point.module}:{point.line} {point.op}: "
                f"{point.text[:70]}",
                flush=True,
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(TARGETS), action="append")
    parser.add_argument("--sample", type=int, help="mutants per target (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, help="seconds per mutant's test run")
    parser.add_argument("--list", action="store_true", help="print the mutation points")
    parser.add_argument(
        "--module",
        action="append",
        help="only the target's modules whose path contains this (repeatable); "
        "--sample is then per module",
    )
    args = parser.parse_args()
    targets = args.target or sorted(TARGETS)
    if args.list:
        for name in targets:
            for module in TARGETS[name][0]:
                if args.module and not any(part in module for part in args.module):
                    continue
                for point in points_of(module):
                    print(f"{point.module}:{point.line} {point.op}: {point.text}")
        return 0
    RESULTS.mkdir(exist_ok=True)
    for name in targets:
        report = run_target(name, args.sample, args.seed, args.timeout, args.module)
        suffix = "".join(f"-{Path(part).stem}" for part in args.module or [])
        (RESULTS / f"{name}{suffix}.json").write_text(
            json.dumps(
                {
                    "target": report.target,
                    "command": report.command,
                    "points": report.points,
                    "sampled": report.sampled,
                    "killed": report.killed,
                    "score": report.score,
                    "outcomes": [asdict(o) for o in report.outcomes],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
        print(
            f"{name}: killed {report.killed} of {len(report.outcomes)} "
            f"({report.score:.0%}); {report.points} mutation points in all"
        )
        for outcome in report.outcomes:
            if outcome.status not in ("killed", "timeout"):
                point = outcome.point
                print(f"  {outcome.status}: {point.module}:{point.line} {point.op}: {point.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
