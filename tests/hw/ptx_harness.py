# Shared plumbing of the tests/hw ISA property tests: a tiny PTX kernel built around the instruction
# under test (operands loaded per lane from global memory, results stored back), launched through
# strata.cuda, plus NVRTC kernels run with NumPy arrays copied in and out. Oracles stay in the tests.
"""One-instruction PTX kernels and NumPy-in/NumPy-out launches for the ISA tests.

Importable from test modules because tests/hw/conftest.py puts this folder on sys.path (pytest runs
in importlib mode, where test modules cannot import each other).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda

PTX_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
BLOCK = 128  # threads a block in lane kernels; lanes past n exit at once

# Bits each PTX type occupies in memory (x2: two packed 16-bit halves; pred travels as one byte).
BITS = {
    "pred": 1, "u8": 8, "s8": 8, "u16": 16, "s16": 16, "b16": 16, "f16": 16, "bf16": 16, "u32": 32,
    "s32": 32, "b32": 32, "f32": 32, "tf32": 32, "f16x2": 32, "bf16x2": 32, "u16x2": 32, "s16x2": 32,
    "u64": 64, "s64": 64, "b64": 64, "f64": 64,
}

# ------------------------------------------------------------------------------------------------
# Lane kernels: one instruction (or a few) between per-lane loads and stores
# ------------------------------------------------------------------------------------------------


@functools.cache
def lane_kernel(body: str, ins: tuple[str, ...], outs: tuple[str, ...]) -> cuda.Kernel:
    """`.entry k(p0, ..., n)` running `body` on lanes < n, inputs %i0.. from p0.., outputs %o0.. after.

    Each register is loaded from its buffer first, outputs before inputs, so lanes a guard skips keep
    the output's initial value. Scratch registers `%t<4>`, `%a`, `%off`, `%h`, `%pt` are free for
    `body` to use once the operands are loaded.
    """
    types = (*ins, *outs)
    names = [f"%i{k}" for k in range(len(ins))] + [f"%o{j}" for j in range(len(outs))]
    params = [f".param .u64 p{k}" for k in range(len(types))] + [".param .u32 n"]
    decl = [".reg .pred %pt;", ".reg .b32 %t<4>;", ".reg .b64 %a;", ".reg .b64 %off;", ".reg .b16 %h;"]
    code = ["mov.u32 %t0, %tid.x;", "mov.u32 %t1, %ctaid.x;", "mov.u32 %t2, %ntid.x;",
            "mad.lo.s32 %t3, %t1, %t2, %t0;", "ld.param.u32 %t0, [n];", "setp.ge.u32 %pt, %t3, %t0;",
            "@%pt bra DONE;"]

    def addr(k: int) -> list[str]:
        size = max(BITS[types[k]] // 8, 1)
        return [f"ld.param.u64 %a, [p{k}];", "cvta.to.global.u64 %a, %a;",
                f"mul.wide.u32 %off, %t3, {size};", "add.s64 %a, %a, %off;"]

    for k in [*range(len(ins), len(types)), *range(len(ins))]:  # outputs first
        t, name = types[k], names[k]
        decl.append(f".reg .{_reg(t)} {name};")
        if t == "pred":
            code += [*addr(k), "ld.global.u8 %h, [%a];", f"setp.ne.b16 {name}, %h, 0;"]
        else:
            code += [*addr(k), f"ld.global.{_ldst(t)} {name}, [%a];"]
    store = []
    for k in range(len(ins), len(types)):
        t, name = types[k], names[k]
        if t == "pred":
            store += [*addr(k), f"selp.b16 %h, 1, 0, {name};", "st.global.u8 [%a], %h;"]
        else:
            store += [*addr(k), f"st.global.{_ldst(t)} [%a], {name};"]
    text = PTX_HEAD + "\n".join([f".visible .entry k({', '.join(params)})", "{", *decl, *code, body, *store,
                                 "DONE:", "ret;", "}"])
    return cuda.Module.from_ptx(text).get_function("k")


def launch_lanes(body: str, ins: Sequence[tuple[str, Any]], outs: Sequence[tuple[str, Any]],
                 dtypes: Mapping[str, Any]) -> tuple[list[np.ndarray], cuda.LaunchReport]:
    """Run `body` over one lane per input element (see lane_kernel).

    Args:
        body: PTX reading %i0, %i1, ... and writing %o0, %o1, ...
        ins: (PTX type, array) per input.
        outs: (PTX type, initial array, or None for zeros) per output.
        dtypes: the host NumPy dtype of each PTX type (the test module's own table).
    Returns:
        Each output copied back (predicates as bool arrays), and the launch report.
    """
    n = len(ins[0][1])
    k = lane_kernel(body, tuple(t for t, _ in ins), tuple(t for t, _ in outs))
    bufs = []
    for t, arr in [*ins, *outs]:
        assert t == "pred" or np.dtype(dtypes[t]).itemsize * 8 == BITS[t], (t, dtypes[t])
        a = np.zeros(n, dtypes[t]) if arr is None else np.asarray(arr).astype(dtypes[t])
        bufs.append(cuda.to_device(a.astype(np.uint8) if t == "pred" else a))
    report = k(((n + BLOCK - 1) // BLOCK,), (BLOCK,), (*bufs, np.uint32(n)))
    got = [buf.get() for buf in bufs[len(ins):]]
    return [g.astype(bool) if t == "pred" else g for (t, _), g in zip(outs, got)], report


def run_lanes(body: str, ins: Sequence[tuple[str, Any]], outs: Sequence[tuple[str, Any]],
              dtypes: Mapping[str, Any]) -> list[np.ndarray]:
    """launch_lanes without the report: each output per lane."""
    return launch_lanes(body, ins, outs, dtypes)[0]


def launch_entry(*lines: str, block: int = 1) -> cuda.LaunchReport:
    """Load `.entry k()` made of `lines` (declarations, then code) and launch one block of it.

    Modules lower at their first launch, so malformed or unsupported forms raise here.
    """
    text = PTX_HEAD + "\n".join([".visible .entry k()", "{", *lines, "ret;", "}"])
    return cuda.Module.from_ptx(text).get_function("k")((1,), (block,), ())


def assert_load_fails(error: type[Exception], decls: Sequence[str], forms: Iterable[str]) -> None:
    """Each of `forms`, alone after `decls` in an entry (see launch_entry), raises `error`."""
    for form in forms:
        with pytest.raises(error):
            launch_entry(*decls, form)


# ------------------------------------------------------------------------------------------------
# Whole kernels (NVRTC or hand-written PTX) with NumPy arrays in and out
# ------------------------------------------------------------------------------------------------


@functools.cache
def compiled(src: str) -> cuda.Module:
    """NVRTC-compiled CUDA C++, once per source."""
    return cuda.compile(src)


def launch(src: str | cuda.Module, name: str, grid: int, block: int, *args: Any,
           shared: int = 0) -> tuple[list[np.ndarray], cuda.LaunchReport]:
    """Run `name` with NumPy arrays copied in; returns every array argument copied back, and the report."""
    mod = compiled(src) if isinstance(src, str) else src
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    report = mod.get_function(name).launch((grid,), (block,), tuple(dev), shared_mem=shared)
    return [d.get() for d in dev if isinstance(d, cuda.DeviceArray)], report


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


def _reg(t: str) -> str:
    """Register type: floats and predicates as themselves, everything else as untyped bits (>= 16)."""
    return t if t in ("f32", "f64", "pred") else f"b{max(BITS[t], 16)}"


def _ldst(t: str) -> str:
    """Memory access type: 8-bit integers keep their signedness (cvt widens them into b16 registers)."""
    return t if t in ("u8", "s8", "f32", "f64") else f"b{BITS[t]}"
