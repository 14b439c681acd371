"""The native executor keeps per-kernel state from launch to launch (register sets with their views and pointer
tables, the launch's invariant registers written into lane arrays only when the reference handlers may read
them): launches of one kernel with other arguments, one after another, must each see their own arguments,
on the native blocks and on the blocks the reference handlers run. Kernels compiled by NVRTC; NumPy oracles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata import trace  # noqa: E402

SRC = r"""
extern "C" __global__ void histogram(int n, const int* x, unsigned* counts, float* scaled, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&counts[x[i]], 1u);                     // native: the pointers are the launch's invariant registers
  scaled[i] = __fdiv_rz((float)x[i], s);            // directed division: the reference handler reads `s` there
}
"""


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


def test_each_launch_sees_its_own_pointers_on_native_and_reference_blocks(monkeypatch: pytest.MonkeyPatch,
                                                                          mod: Any) -> None:
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")  # compiled at its first launch
    fn = mod.get_function("histogram")
    rng = np.random.default_rng(11)
    runs = []
    scales = (0.5, 2.0, 0.25, 4.0)  # (powers of two: the quotients are exact, so round-toward-zero is exact too)
    for k, n in enumerate((1000, 1000, 700, 1000)):  # same chunk size (the register sets are reused), other n
        bins = 5 + k
        x = rng.integers(0, bins, n).astype(np.int32)
        counts, scaled = cuda.to_device(np.zeros(bins, np.uint32)), cuda.to_device(np.zeros(n, np.float32))
        with trace.record() as rec:
            r = fn(4, 256, (np.int32(n), cuda.to_device(x), counts, scaled, np.float32(scales[k])))
            r.wait()
        assert r.executor == "native"
        assert [e for e in rec.events if e.name == "native_partial"]  # the division ran on the reference
        runs.append((x, bins, scales[k], counts, scaled))
    for x, bins, s, counts, scaled in runs:  # (read after all launches: no launch wrote another's buffers)
        np.testing.assert_array_equal(counts.get(), np.bincount(x, minlength=bins).astype(np.uint32))
        np.testing.assert_array_equal(scaled.get(), x.astype(np.float32) / np.float32(s))
