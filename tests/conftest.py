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
