"""hookd's build backend: setuptools, told whether the wheel it builds is editable.

An editable install (``pip install -e .``, the checkout's ``.venv``) is the
developer's: it maps ``hookd`` *and* ``client/hookd_client`` onto the sources, so
an edit to either takes effect at once, and it needs nothing from an index.  A
real install (a wheel, ``pip install .``, ``pipx install .``) ships ``hookd``
alone and depends on the ``hookd-client`` distribution, so that the two never
own the same files (``setup.py`` says how).  PEP 517 asks for an editable
wheel through its own hooks, and ``setup.py`` cannot see which hook runs: this
module sets ``HOOKD_BUILD_EDITABLE`` around the editable ones and hands
everything else to setuptools unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (
    build_sdist,
    build_wheel,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

EDITABLE = "HOOKD_BUILD_EDITABLE"


def _editable(hook: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        os.environ[EDITABLE] = "1"
        try:
            return hook(*args, **kwargs)
        finally:
            os.environ.pop(EDITABLE, None)

    run.__name__ = hook.__name__
    return run


build_editable = _editable(_setuptools.build_editable)
get_requires_for_build_editable = _editable(_setuptools.get_requires_for_build_editable)
prepare_metadata_for_build_editable = _editable(_setuptools.prepare_metadata_for_build_editable)
