"""Suite-wide fixtures.

A kernel fault is sticky on its device's context, as in CUDA: every later synchronizing call raises it
until the device is reset. Tests that provoke faults on purpose would otherwise poison the tests after
them, so after each test any faulted device is reset (what a CUDA test harness does with
cudaDeviceReset between cases).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _reset_faulted_devices() -> Iterator[None]:
    yield
    from strata.runtime import contexts

    for ctx in contexts():
        if ctx.error is not None:
            ctx.reset()


@pytest.fixture(autouse=True)
def _native_compiles_at_once(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The native executor's own tests (test_native_*.py) compare it with the reference on small launches,
    which the default tiering (STRATA_NATIVE_AFTER_MS) would leave on the reference: they compile at once."""
    if request.node.path.name.startswith("test_native"):
        monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
