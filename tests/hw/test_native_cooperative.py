"""Cooperative launches (cooperative groups' `this_grid().sync()`) on the native executor: the grid runs as
one chunk, as on the reference, and blocks spinning on the grid barrier yield to those still on their way.
Outputs bit for bit and counters identical to the reference's; a block that never arrives hangs until the
watchdog with the reference's note. Kernels compiled by NVRTC (tests/cuda/test_cooperative.py's); NumPy
oracles there, the reference executor here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata import trace  # noqa: E402

from ..cuda.test_cooperative import DIVERGENT, HEADER, JACOBI, LATE_WARPS, REDUCE  # noqa: E402
from .native_harness import on_both_executors  # noqa: E402


@pytest.fixture(autouse=True)
def compile_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")


def _cooperative(src: str, name: str, grid: int, block: int) -> Any:
    k = cuda.compile(src).get_function(name)
    return lambda args: k.launch_cooperative(grid, block, args)


def test_grid_sync_reduction(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(50_000).astype(np.float32)
    blocks, threads = 12, 128

    def make() -> Any:
        partial, out = cuda.zeros(blocks, np.float32), cuda.zeros(blocks, np.float32)
        valid = cuda.zeros(blocks * threads, np.int32)
        return (cuda.to_device(x), np.int32(x.size), partial, out, valid), [partial, out, valid]

    outs, counters, _ = on_both_executors(monkeypatch, _cooperative(REDUCE, "reduce", blocks, threads), make)
    assert counters["barriers"] > 0
    np.testing.assert_allclose(outs[1], np.full(blocks, x.astype(np.float64).sum()), rtol=1e-4, atol=1e-3)


def test_jacobi_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    n, sweeps = 700, 25
    rng = np.random.default_rng(2)
    u0 = rng.standard_normal(n).astype(np.float32)
    f = rng.standard_normal(n).astype(np.float32) * np.float32(1e3)

    def make() -> Any:
        u, v = cuda.to_device(u0), cuda.to_device(u0)
        h2 = np.float32((1.0 / (n - 1)) ** 2)
        return (u, v, cuda.to_device(f), np.int32(n), np.int32(sweeps), h2), [u, v]

    on_both_executors(monkeypatch, _cooperative(JACOBI, "jacobi", 3, 64), make)


def test_divergent_call_sites_and_atomics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "20")  # were the spinning blocks to starve the others: fail, not hang
    blocks, threads, nrounds = 6, 64, 3

    def make() -> Any:
        counter, busy = cuda.zeros(1, np.int32), cuda.zeros(1, np.int32)
        seen = cuda.zeros(nrounds * blocks * threads, np.int32)
        return (counter, seen, busy, np.int32(nrounds)), [counter, seen, busy]

    outs, _, _ = on_both_executors(monkeypatch, _cooperative(DIVERGENT, "rounds", blocks, threads), make)
    np.testing.assert_array_equal(outs[1], np.repeat((np.arange(nrounds) + 1) * blocks, blocks * threads))


def test_late_warps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_CHUNK_LANES", "64")  # (a plain launch would run a block per chunk)
    blocks, threads = 5, 96
    n = blocks * threads
    spins = (np.arange(n // 32) * 7 % 23).astype(np.int32)

    def make() -> Any:
        a, out = cuda.zeros(n, np.float32), cuda.zeros(n, np.float32)
        return (cuda.to_device(spins), a, out, np.int32(n)), [a, out]

    on_both_executors(monkeypatch, _cooperative(LATE_WARPS, "late", blocks, threads), make)


@pytest.mark.parametrize("executor", ["reference", "native"])
def test_a_block_that_skips_the_grid_sync_hangs_with_the_same_note(monkeypatch: pytest.MonkeyPatch,
                                                                   executor: str) -> None:
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.3")
    k = cuda.compile(HEADER + r"""
extern "C" __global__ void skip(int* x) {
  if (blockIdx.x == 1) return;     // never arrives: the others wait forever, as on a GPU
  cg::this_grid().sync();
  x[blockIdx.x] = 1;
}""").get_function("skip")
    with trace.record() as rec, pytest.raises(cuda.LaunchTimeout) as ei:
        k.launch_cooperative(3, 32, (cuda.zeros(3, np.int32),)).wait()
    assert "grid sync with 2 of 3 blocks arrived" in str(ei.value)
    assert not [e for e in rec.events if e.name == "native_fallback"]
    cuda.current_device().reset()
