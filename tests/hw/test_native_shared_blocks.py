"""Blocks that compile to the same code share one body (codegen.KernelCodegen._shared_block): a kernel whose
basic blocks repeat up to register names and parameters (the framework's loop over dimensions, unrolled)
compiles each distinct block once, and each block becomes a small glue function that passes its registers
in a table. The glue is a second module, compiled without optimization, in the same object blob
(compiler.compile_ir / compiler.objects). Results, counters and fault reports stay the reference's. Kernels
compiled by NVRTC; outputs against the reference executor and NumPy."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402

from .native_harness import fault_report, on_both_executors  # noqa: E402

# an index over up to four dimensions, each step written out (as the framework's kernels unroll theirs): the
# blocks of the steps differ only in their registers and the shape and stride parameters they read
SRC = r"""
#define STEP(S, T) { off += (rem % S) * T; rem /= S; }
extern "C" __global__ void strided(int n, int ndim, long long s0, long long s1, long long s2, long long s3,
                                   long long t0, long long t1, long long t2, long long t3,
                                   const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long rem = i, off = 0;
  if (ndim > 3) STEP(s3, t3)
  if (ndim > 2) STEP(s2, t2)
  if (ndim > 1) STEP(s1, t1)
  off += rem * t0;
  y[i] = x[off] * 2.0f + 1.0f;
}
"""
BLOCK = 128


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC, name="native_shared_blocks.cu")


def _ir(mod: Any, kernel: str) -> tuple[str, Any]:
    from strata.hw.jit import Program
    from strata.hw.native import codegen as cg
    from strata.hw.ptx.parser import parse

    program = Program(parse(mod.ptx), {})
    gen = cg.KernelCodegen(program, program.functions[kernel])
    return gen.build(), gen


def _args(x: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...], y: Any) -> tuple[Any, ...]:
    """(n, ndim, s0..s3, t0..t3, x, y): dimension 0 varies fastest, as the kernel walks them."""
    s = list(shape) + [1] * (4 - len(shape))
    t = list(strides) + [0] * (4 - len(strides))
    return (np.int32(int(np.prod(shape))), np.int32(len(shape)), *map(np.int64, s), *map(np.int64, t), x, y)


def test_repeated_blocks_compile_once_and_call_through_glue(mod: Any) -> None:
    from strata.hw.native.compiler import MODULE_SPLIT, LoadedObject, compile_ir, objects

    text, gen = _ir(mod, "strided")
    main, glue = text.split(MODULE_SPLIT)
    bodies = re.findall(r'^define i32 @"(strata_shared_\d+)"', main, re.M)
    assert bodies  # the division steps: one body for all of them
    calls = re.findall(r'call i32 @"(strata_shared_\d+)"', glue)
    assert len(calls) > len(set(calls)) and set(calls) <= set(bodies)  # a body serves several blocks
    wrappers = re.findall(r'^define i32 @"b(\d+)"', glue, re.M)
    in_main = re.findall(r'^define i32 @"b(\d+)"', main, re.M)
    assert not set(wrappers) & set(in_main)
    assert sorted(map(int, wrappers + in_main)) == sorted(gen.native_blocks)
    blob = compile_ir(text)
    assert len(objects(blob)) == 2
    loaded = LoadedObject(blob)  # the glue resolves the bodies of the kernel's object when linked
    assert all(loaded.address(f"b{b}") for b in gen.native_blocks)


@pytest.mark.parametrize("shape", [(37,), (5, 7, 3), (4, 3, 5, 6)])
def test_strided_gather_matches_the_reference_and_numpy(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                                         shape: tuple[int, ...]) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    rng = np.random.default_rng(len(shape))
    src = rng.standard_normal(int(np.prod(shape))).astype(np.float32)
    # a transposed view: thread i reads element (i0, ..., ik) of `shape` in C order, at sum(i_d * stride_d)
    strides = tuple(st // 4 for st in src.reshape(tuple(reversed(shape))).transpose().strides)
    n = int(np.prod(shape))
    offsets = sum(c * t for c, t in zip(np.unravel_index(np.arange(n), shape), strides, strict=True))

    def make() -> Any:
        y = cuda.to_device(np.zeros(n, np.float32))
        return _args(cuda.to_device(src.ravel()), shape, strides, y), [y]

    fn = mod.get_function("strided")
    (y,), _counters, _rec = on_both_executors(monkeypatch, lambda args: fn(-(-n // BLOCK), BLOCK, args), make)
    want = src[offsets] * np.float32(2) + np.float32(1)
    np.testing.assert_array_equal(y, want)


def test_a_fault_behind_shared_blocks_reports_as_the_reference(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    shape = (6, 5, 4)
    fn = mod.get_function("strided")
    keep: list[Any] = []

    def launch() -> Any:  # (fresh arrays each time: the fault report resets the device)
        x = cuda.to_device(np.zeros(8, np.float32))  # the last stride leaves every allocation behind
        y = cuda.to_device(np.zeros(120, np.float32))
        keep[:] = [x, y]
        return fn(1, BLOCK, _args(x, shape, (1, 6, 1 << 40), y))

    assert fault_report(monkeypatch, "native", launch) == fault_report(monkeypatch, "reference", launch)
