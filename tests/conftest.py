"""Suite-wide fixtures.

A kernel fault is sticky on its device's context, as in CUDA: every later synchronizing call raises it
until the device is reset. Tests that provoke faults on purpose would otherwise poison the tests after
them, so after each test any faulted device is reset (what a CUDA test harness does with
cudaDeviceReset between cases).
"""

from __future__ import annotations

import gc
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


@pytest.fixture
def mi300x() -> Iterator[object]:
    """A virtual MI300X as the current device for the test (the one it replaced is current again after), with
    no peer access: an NCCL clique an earlier test made enabled it, as NCCL does, for good; the test sees it off
    and the peers come back after."""
    import strata.cuda as cuda

    before = cuda.current_device()
    dev = cuda.Device(model="mi300x")
    mem = dev.file.gpu.memory
    peers = list(mem.peers.values())
    for p in peers:
        mem.disable_peer(p)
    cuda.set_device(dev)
    try:
        yield dev
    finally:
        cuda.set_device(before)
        for p in peers:
            if p.slot not in mem.peers:
                mem.enable_peer(p)


@pytest.fixture(scope="module", autouse=True)
def _settle_the_heap() -> None:
    """Before each test module: collect the garbage the last one left, then freeze what survives (caches of
    parsed and lowered kernels, session fixtures) out of the cyclic collector's sight. Thousands of kernels
    leave millions of live objects by the end of the suite, and without this each full collection (every
    `gc.collect()` a test makes to run finalizers, and the collector's own) scanned them all: about 5 s
    apiece late in the suite, 110 s of it in all. Objects created from here on are collected as usual."""
    gc.collect()
    gc.freeze()
