"""Fixtures of the AMD engine's tests: an AMD device made current for a test (or a module), then the device
that was current before put back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import strata.cuda as cuda


def _current(model: str) -> Iterator[cuda.Device]:
    before = cuda.current_device()
    dev = cuda.Device(model=model)
    cuda.set_device(dev)
    try:
        yield dev
    finally:
        cuda.set_device(before)


@pytest.fixture
def mi300x() -> Iterator[cuda.Device]:
    """A virtual MI300X (gfx942), current for the test."""
    yield from _current("mi300x")


@pytest.fixture
def mi250x() -> Iterator[cuda.Device]:
    """A virtual MI250X (gfx90a), current for the test."""
    yield from _current("mi250x")


@pytest.fixture(params=["mi300x", "mi250x"])
def amd(request: pytest.FixtureRequest) -> Iterator[cuda.Device]:
    """Each AMD model in turn (gfx942, then gfx90a), current for the test."""
    yield from _current(request.param)


@pytest.fixture(scope="module")
def mi300x_module() -> Iterator[cuda.Device]:
    """A virtual MI300X, current for a whole module (tests that compile many small kernels)."""
    yield from _current("mi300x")
