"""Matcher semantics against a small reference model written from the spec's table.

Reference §5.1 (and the observed table in claude-code-observed.md):

| matcher | evaluated as |
|---|---|
| absent, ``""``, ``"*"`` | everything |
| only ``[A-Za-z0-9_|, -]`` (after trimming) | exact names, split on ``|`` and ``,``, trimmed |
| anything else | a regex, searched (unanchored); invalid: matches nothing |

FileChanged and StopFailure: the exact set is ``[A-Za-z0-9_|]``, split on ``|``
only.  PreModelSwitch/PostModelSwitch strip a ``[1m]``/``[2m]`` suffix first.
The model is deliberately naive (no caching, no precompiled sets) so that the
two can only agree by both following the table.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookd.config.matching import compile_matcher

NARROW = {"FileChanged", "StopFailure"}
EVENTS = ["PreToolUse", "FileChanged", "StopFailure", "PreModelSwitch", "Notification"]


def model(matcher: str | None, event: str, name: str) -> bool:
    if matcher is None or matcher == "" or matcher == "*":
        return True
    text = matcher
    if event in ("PreModelSwitch", "PostModelSwitch") and (
        text.endswith("[1m]") or text.endswith("[2m]")
    ):
        text = text[: -len("[1m]")]
    allowed = set(string.ascii_letters + string.digits + "_|")
    if event not in NARROW:
        allowed |= set(", -")
    trimmed = text.strip()
    if trimmed == "" or all(ch in allowed for ch in trimmed):
        separators = "|" if event in NARROW else "|,"
        names = [text]
        for sep in separators:
            names = [piece for part in names for piece in part.split(sep)]
        return name in {n.strip() for n in names if n.strip()}
    try:
        return re.search(text, name) is not None
    except re.error:
        return False


NAME_CHARS = string.ascii_letters[:6] + "_-. " + "Bash"
names = st.text(alphabet=NAME_CHARS, min_size=1, max_size=8)
matcher_chars = NAME_CHARS + "|,*^$()[]\\+?{}"
matchers = st.one_of(
    st.none(),
    st.sampled_from(["", "*", "Bash", "Bash|Read", "Bash, Read", " Bash ", "Edit|", "B.*"]),
    st.text(alphabet=matcher_chars, max_size=10),
    st.builds(
        lambda m, s: m + s,
        st.text(alphabet=matcher_chars, max_size=6),
        st.sampled_from(["[1m]", "[2m]"]),
    ),
    st.lists(names, min_size=1, max_size=3).map("|".join),
    st.lists(names, min_size=1, max_size=3).map(", ".join),
)


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")  # `[[` in a regex
@settings(max_examples=300, deadline=None)
@given(matchers, st.sampled_from(EVENTS), names)
def test_compiled_matchers_agree_with_the_reference_model(
    matcher: str | None, event: str, name: str
) -> None:
    assert compile_matcher(matcher, event).matches([name]) is model(matcher, event, name)


@settings(max_examples=100, deadline=None)
@given(matchers, st.sampled_from(EVENTS), st.lists(names, min_size=1, max_size=4))
def test_a_matcher_matches_a_tool_when_it_matches_any_of_its_names(
    matcher: str | None, event: str, candidates: list[str]
) -> None:
    """A tool is tested with its legacy aliases too: any one matching is enough."""
    compiled = compile_matcher(matcher, event)
    assert compiled.matches(candidates) is any(compiled.matches([c]) for c in candidates)
