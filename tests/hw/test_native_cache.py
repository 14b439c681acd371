"""The native executor's object cache across module loads: a kernel that reads and writes module variables
(`__device__`, `__constant__`) is cached once, whatever addresses the variables get in a later load (another
module loaded first, other allocations in between, another process), and each load's code uses its own
variables."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata import trace  # noqa: E402

SRC = r"""
__constant__ float coef[2] = {2.0f, 0.5f};
__device__ float bias[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ float last;
extern "C" __global__ void affine(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * coef[0] + coef[1] + bias[i & 3];  // ld.const [coef]; bias's address as a value
    y[i] = v;
    if (i == n - 1) last = v;                          // st.global [last]
  }
}
"""
N = 1000


def _oracle(x: np.ndarray, coef: np.ndarray, bias: np.ndarray) -> np.ndarray:
    # x * 2 is exact in float32, so a fused multiply-add rounds like the separate operations
    return (x * coef[0] + coef[1]) + bias[np.arange(len(x)) & 3]


def _run(mod: Any, x: np.ndarray) -> tuple[np.ndarray, float, list[Any], str]:
    """Launch `affine` on x natively: (y, the variable `last`, native_compile events, executor)."""
    y = cuda.to_device(np.zeros_like(x))
    with trace.record() as rec:
        r = mod.get_function("affine")(-(-len(x) // 128), 128, (np.int32(len(x)), cuda.to_device(x), y))
        r.wait()
    last = np.zeros(1, np.float32)
    cuda.memcpy_from_symbol(last, mod, "last")
    return y.get(), float(last[0]), [e for e in rec.events if e.name == "native_compile"], r.executor


def test_module_variables_hit_the_cache_at_other_addresses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    x = np.random.default_rng(7).standard_normal(N).astype(np.float32)
    coef = np.array([2.0, 0.5], np.float32)

    first = cuda.compile(SRC)
    y1, last1, ev1, ex1 = _run(first, x)
    assert ex1 == "native"
    assert [e.args["cached"] for e in ev1] == [False]
    bias1 = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(y1, _oracle(x, coef, bias1))
    assert last1 == y1[-1]

    pad = cuda.to_device(np.zeros(1 << 16, np.uint8))  # something allocated between the two loads
    second = cuda.Module.from_ptx(first.ptx)  # a second load of the same PTX: its own variables
    assert second.get_global("bias")[0] != first.get_global("bias")[0]
    assert second.get_global("coef")[0] != first.get_global("coef")[0]
    bias2 = np.array([10, 20, 30, 40], np.float32)  # so that reading the first load's variables shows
    cuda.memcpy_to_symbol(second, "bias", bias2)
    y2, last2, ev2, ex2 = _run(second, x)
    assert ex2 == "native"
    assert [e.args["cached"] for e in ev2] == [True]
    np.testing.assert_array_equal(y2, _oracle(x, coef, bias2))
    assert last2 == y2[-1]
    # the first load's variables are untouched by the second's launch, and its code still uses them
    y1b, last1b, ev1b, _ = _run(first, x[::-1].copy())
    assert ev1b == []  # (compiled once per load)
    np.testing.assert_array_equal(y1b, _oracle(x[::-1], coef, bias1))
    assert last1b == y1b[-1]
    del pad


_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import strata.cuda as cuda
    from strata import trace
    pad = cuda.to_device(np.zeros(3 << 16, np.uint8))  # variables land elsewhere than in the parent
    mod = cuda.Module.from_ptx(sys.stdin.read())
    x = np.arange(256, dtype=np.float32)
    y = cuda.to_device(np.zeros_like(x))
    with trace.record() as rec:
        r = mod.get_function("affine")(2, 128, (np.int32(256), cuda.to_device(x), y))
        r.wait()
    print(json.dumps({"cached": [e.args["cached"] for e in rec.events if e.name == "native_compile"],
                      "executor": r.executor, "y": y.get().tolist(), "bias": mod.get_global("bias")[0]}))
""")


def test_another_process_hits_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import json

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    mod = cuda.compile(SRC)
    x = np.arange(256, dtype=np.float32)
    _y, _last, ev, _ex = _run(mod, x)
    assert [e.args["cached"] for e in ev] == [False]
    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path), "STRATA_EXECUTOR": "native"}
    out = subprocess.run([sys.executable, "-c", _CHILD], input=mod.ptx, env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["executor"] == "native" and got["cached"] == [True]
    assert got["bias"] != mod.get_global("bias")[0]
    np.testing.assert_array_equal(np.array(got["y"], np.float32),
                                  _oracle(x, np.array([2.0, 0.5], np.float32), np.array([1, 2, 3, 4], np.float32)))


WIDE = r"""
extern "C" __global__ void wide(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a[24];
#pragma unroll
  for (int k = 0; k < 24; ++k) a[k] = x[(i * 24 + k) % n] * (float)(k + 1);
  float s = 0.f;
  if (a[0] > 0.f) {
#pragma unroll
    for (int k = 0; k < 24; ++k) s += a[k] * a[23 - k];
  } else {
#pragma unroll
    for (int k = 0; k < 24; ++k) s -= a[k];
  }
  y[i] = s;
}
"""


def test_alias_scopes_are_per_function() -> None:
    """Each block function's `noalias` lists name only scopes its own accesses use (codegen._finish_tags): lists
    naming every register of the kernel made the metadata grow with the square of the registers (most of a big
    GEMM's IR text, and every alias query walked them)."""
    import re

    from strata.hw.jit import Program
    from strata.hw.native import codegen as cg
    from strata.hw.ptx.parser import parse

    program = Program(parse(cuda.compile(WIDE).ptx), {})
    jf = program.functions["wide"]
    text = cg.KernelCodegen(program, jf).build()
    nodes = {m[1]: re.findall(r"!(\d+)", m[2]) for m in re.finditer(r"^!(\d+) = !\{(.*)\}$", text, re.M)}
    bodies = re.findall(r"^define [^\n]*\n\{\n(.*?)^\}", text, re.M | re.S)
    assert len(bodies) >= 3  # (several block functions)
    longest = 0
    for body in bodies:
        own = {s for ref in re.findall(r"!alias.scope !(\d+)", body) for s in nodes[ref]}
        for ref in set(re.findall(r"!noalias !(\d+)", body)):
            assert set(nodes[ref]) <= own  # only scopes of this function's accesses
            longest = max(longest, len(nodes[ref]))
    assert 0 < longest < len(jf.reg_storage)
