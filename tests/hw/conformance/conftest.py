# Pytest wiring for the conformance corpus: puts conformance_lib on sys.path (the repo runs pytest in
# importlib mode, where test modules cannot import conftest or each other) and exposes the shared
# helpers (run, assert_exact, assert_ulp, oracles) as a fixture. The `nvcc` marker is in pyproject.
"""Conformance corpus fixtures; the helpers themselves live in conformance_lib.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import conformance_lib  # noqa: E402


@pytest.fixture
def lib() -> Any:
    """The conformance_lib module: run, assert_exact, assert_ulp, assert_close, oracles."""
    return conformance_lib
