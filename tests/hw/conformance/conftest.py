# Pytest wiring for the conformance corpus: puts conformance_lib on sys.path (works under both the
# default and the importlib import modes), registers the `nvcc` marker, and exposes the shared
# helpers (run, assert_ulp, ...) as fixtures for tests that prefer fixtures to imports.
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nvcc: runs PTX produced by nvcc (skipped when nvcc is absent)")


@pytest.fixture
def lib() -> Any:
    """The conformance_lib module: run, assert_exact, assert_ulp, assert_close, oracles."""
    return conformance_lib
