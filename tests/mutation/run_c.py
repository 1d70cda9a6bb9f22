"""Mutation testing for the compiled relay (relay/hookd-relay.c): run.py's twin for C.

Usage (by hand, like run.py; slow, never part of ``scripts/check``)::

    .venv/bin/python tests/mutation/run_c.py --sample 40 --seed 11
    .venv/bin/python tests/mutation/run_c.py --list
    .venv/bin/python tests/mutation/run_c.py --sample 8 --seed 22 --op delete-call

run.py mutates Python through its AST; the relay is C, so here a mutant is one
token of the source changed as text: ``==``/``!=`` swapped, ``<``/``<=`` and
``>``/``>=`` flipped, ``&&``/``||`` swapped, a ``!`` dropped, an integer literal
plus one, a ``return`` of a non-zero constant (``-1``, ``1``, ``2``) made
``return 0``, and a call statement replaced by ``(void)0``.  Comments, string
literals and ``#include`` lines are never touched; array sizes in declarations
(``char why[8192]``) neither.

Each mutant is written into run.py's scratch copy of the tree and built there by
``scripts/build-relay`` (the same flags as the real build, ``-Werror``
included).  One that does not compile is *stillborn*; one whose binary is byte
for byte the clean build's is *same-binary* (the compiler proved it
equivalent).  Neither counts.  The others run ``TESTS`` against the scratch
tree, whose ``compiled_relay`` fixture (tests/conftest.py) builds the relay from
the scratch copy, so every test that uses the compiled relay tests the mutant.
Results go to ``tests/mutation/results/relay.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: tests/ is the package base, as for mypy
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutation.run import RESULTS, ROOT, _run_tests, _scratch

SOURCE = "relay/hookd-relay.c"

# The tests that run the compiled relay; the Python relay's half of the shared
# cases is deselected (it cannot see a C mutant).
TESTS = [
    "tests/doors/test_relay.py",
    "tests/reliability/test_socket_squatting.py::test_compiled_relay_refuses_a_squatted_fallback",
    "tests/reliability/test_client_socket_checks.py::test_compiled_relay_refuses",
    "tests/installers/test_claude_install.py::test_install_wires_the_compiled_relay_and_runs_through_it",
    "-k",
    "not python",
]

_FLIP = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">", "&&": "||", "||": "&&"}
_PUNCT = re.compile(r"->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!~<>=?:;,.(){}\[\]#\\]")
_TOKEN = re.compile(
    r"(?P<skip>/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|#include[^\n]*)"
    r"|(?P<num>\d[\w.]*(?:[eE][-+]\d+)?)"
    r"|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<space>\s+)",
    re.DOTALL,
)
_MARKS = {"survived": "S", "stillborn": "b", "same-binary": "=", "error": "E"}
_KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "defined"}


@dataclass(frozen=True)
class Token:
    kind: str  # num | name | punct
    text: str
    start: int


@dataclass(frozen=True)
class Point:
    """One mutant: ``source[start:end]`` becomes ``new``."""

    start: int
    end: int
    new: str
    op: str
    line: int
    text: str


@dataclass
class Outcome:
    point: Point
    status: str  # killed | timeout | survived | stillborn | same-binary | error
    seconds: float


def tokens(source: str) -> list[Token]:
    found: list[Token] = []
    at = 0
    while at < len(source):
        match = _TOKEN.match(source, at)
        if match and match.lastgroup in ("num", "name"):
            found.append(Token(match.lastgroup, match.group(), at))
        elif not match:
            match = _PUNCT.match(source, at)
            if not match:
                raise ValueError(f"cannot tokenize at {source[at : at + 20]!r}")
            found.append(Token("punct", match.group(), at))
        at = match.end()
    return found


def _int_plus_one(text: str) -> str | None:
    match = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)([uUlL]*)", text)
    if not match:
        return None  # a float
    digits, suffix = match.groups()
    if digits.lower().startswith("0x"):
        return f"0x{int(digits, 16) + 1:x}{suffix}"
    if digits.startswith("0") and len(digits) > 1:  # octal, as in modes (022)
        return f"0{int(digits, 8) + 1:o}{suffix}"
    return f"{int(digits) + 1}{suffix}"


def _call_end(toks: list[Token], k: int) -> int | None:
    """The index of the ``;`` ending the call statement that starts at ``toks[k]``.

    (Until 2026-11-27 the mutant kept the call's closing ``)``, so every
    delete-call mutant was ``(void)0);`` and stillborn.)"""
    depth = 0
    for j in range(k + 1, len(toks)):
        depth += {"(": 1, ")": -1}.get(toks[j].text, 0)
        if depth == 0:
            return j + 1 if j + 1 < len(toks) and toks[j + 1].text == ";" else None
    return None


def _opening(toks: list[Token], k: int) -> str:
    """The token before the ``(`` that the ``)`` at ``toks[k]`` closes."""
    depth = 0
    for j in range(k, 0, -1):
        depth += {")": 1, "(": -1}.get(toks[j].text, 0)
        if depth == 0:
            return toks[j - 1].text
    return ""


def _ops(toks: list[Token], k: int) -> Iterator[tuple[int, int, str, str]]:
    tok, prev = toks[k], toks[k - 1] if k else None
    end = tok.start + len(tok.text)
    if tok.kind == "punct" and tok.text in _FLIP:
        op = "swap-boolop" if tok.text in ("&&", "||") else "flip-compare"
        yield tok.start, end, _FLIP[tok.text], op
    elif tok.text == "!":
        yield tok.start, end, "", "drop-not"
    elif tok.kind == "num":
        declared_size = prev is not None and prev.text == "[" and toks[k - 3].text == "char"
        returned_error = [t.text for t in toks[k - 2 : k]] == ["return", "-"]  # return-zero's
        plus = _int_plus_one(tok.text)
        if plus is not None and not declared_size and not returned_error:
            yield tok.start, end, plus, "int-plus-one"
    elif tok.text == "return" and k + 2 < len(toks):
        value = toks[k + 1 : k + 4]
        if value[0].kind == "num" and value[1].text == ";" and value[0].text != "0":
            yield value[0].start, value[0].start + len(value[0].text), "0", "return-zero"
        elif [t.text for t in value[:2]] == ["-", "1"] and value[2].text == ";":
            yield value[0].start, value[1].start + 1, "0", "return-zero"
    elif tok.kind == "name" and tok.text not in _KEYWORDS and k + 1 < len(toks):
        at_statement = prev is not None and prev.text in (";", "{", "}", "else", ":")
        if prev is not None and prev.text == ")":  # after if (...), not after a cast
            at_statement = _opening(toks, k - 1) in ("if", "while", "for")
        if at_statement and toks[k + 1].text == "(":
            semi = _call_end(toks, k)  # the index of the ``;``: the call ends before it
            if semi is not None:
                yield tok.start, toks[semi].start, "(void)0", "delete-call"


def points_of(source: str) -> list[Point]:
    lines = source.splitlines()
    toks = tokens(source)
    found: list[Point] = []
    for k in range(len(toks)):
        for start, end, new, op in _ops(toks, k):
            line = source.count("\n", 0, start) + 1
            found.append(Point(start, end, new, op, line, lines[line - 1].strip()))
    return found


def mutated(source: str, point: Point) -> str:
    return source[: point.start] + point.new + source[point.end :]


def _build(scratch: Path, out: Path) -> bytes | None:
    out.unlink(missing_ok=True)
    proc = subprocess.run(
        [str(scratch / "scripts" / "build-relay"), str(out)], capture_output=True, check=False
    )
    return out.read_bytes() if proc.returncode == 0 and out.exists() else None


def run(
    sample: int | None, seed: int, timeout: float | None, ops: list[str] | None = None
) -> list[Outcome]:
    source = (ROOT / SOURCE).read_text(encoding="utf-8")
    points = [p for p in points_of(source) if not ops or p.op in ops]
    chosen = points
    if sample is not None and sample < len(points):
        chosen = sorted(random.Random(seed).sample(points, sample), key=lambda p: p.start)
    scratch = _scratch()
    outcomes: list[Outcome] = []
    try:
        binary = scratch / "mutant-relay"
        clean = _build(scratch, binary)
        status, clean_seconds = _run_tests(scratch, TESTS, timeout or 900)
        if clean is None or status != "survived":
            raise SystemExit(f"relay: the tests fail without any mutation ({status})")
        limit = timeout or max(60.0, 4 * clean_seconds)
        print(f"relay: {len(chosen)} of {len(points)} mutants; clean run {clean_seconds:.1f}s")
        for n, point in enumerate(chosen, 1):
            target = scratch / SOURCE
            try:
                target.write_text(mutated(source, point), encoding="utf-8")
                built = _build(scratch, binary)
                if built is None:
                    status, seconds = "stillborn", 0.0
                elif built == clean:
                    status, seconds = "same-binary", 0.0
                else:
                    status, seconds = _run_tests(scratch, TESTS, limit)
            finally:
                target.write_text(source, encoding="utf-8")
            outcomes.append(Outcome(point, status, round(seconds, 1)))
            mark = _MARKS.get(status, ".")
            print(
                f"  [{n}/{len(chosen)}] {mark} {SOURCE}:{point.line} {point.op} "
                f"-> {point.new!r}: {point.text[:70]}",
                flush=True,
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, help="mutants (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, help="seconds per mutant's test run")
    parser.add_argument("--list", action="store_true", help="print the mutation points")
    parser.add_argument("--op", action="append", help="only mutants of this kind (delete-call, …)")
    args = parser.parse_args()
    if args.list:
        for point in points_of((ROOT / SOURCE).read_text(encoding="utf-8")):
            print(f"{SOURCE}:{point.line} {point.op} -> {point.new!r}: {point.text}")
        return 0
    outcomes = run(args.sample, args.seed, args.timeout, args.op)
    counted = [o for o in outcomes if o.status in ("killed", "timeout", "survived")]
    killed = sum(o.status != "survived" for o in counted)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "relay.json").write_text(
        json.dumps(
            {
                "command": f".venv/bin/python tests/mutation/run_c.py --seed {args.seed}"
                + (f" --sample {args.sample}" if args.sample else "")
                + "".join(f" --op {op}" for op in args.op or ()),
                "killed": killed,
                "counted": len(counted),
                "outcomes": [asdict(o) for o in outcomes],
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(
        f"relay: killed {killed} of {len(counted)} ({killed / max(1, len(counted)):.0%}); "
        f"{len(outcomes) - len(counted)} stillborn or same binary"
    )
    for outcome in outcomes:
        if outcome.status not in ("killed", "timeout"):
            point = outcome.point
            print(
                f"  {outcome.status}: {SOURCE}:{point.line} {point.op} -> {point.new!r}: "
                f"{point.text}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
