"""The rule for tests that need a real agent CLI: skip on a developer's machine, fail in CI.

scripts/check installs every pinned CLI (tests/e2e/package.json) and the Agent SDK, so
in CI (``$CI`` set) a missing one is a broken setup: a silent skip there would report an
end-to-end suite green without running it.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["NPM_HINT", "require_cli"]

NPM_HINT = "run `npm install` in tests/e2e first"


def require_cli(available: bool, what: str, hint: str = NPM_HINT) -> None:
    """Return when ``available``; else fail in CI, skip (saying ``hint``) elsewhere."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing; scripts/check installs it in CI")
    pytest.skip(hint)
