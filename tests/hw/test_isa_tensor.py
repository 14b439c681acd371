# Tests of the tensor-core family (src/strata/hw/isa/tensor.py): mma.sync in every shape and type the
# virtual GPU models (fragments built in CUDA C++ from the PTX ISA's row/col formulas), ldmatrix/stmatrix
# (x1/x2/x4, .trans), movmatrix, WMMA kernels, a complete cp.async + ldmatrix + mma bf16 GEMM, memcheck
# on the new memory instructions and tensor FLOPs in the counters and the timing model. Oracles: NumPy
# (f32/f16 results within 1 ulp), exact rationals for the f64 fma chain, exact integers.
"""Tensor-core instructions from real NVRTC kernels against NumPy oracles."""

from __future__ import annotations

import functools
import time
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from ptx_harness import PTX_HEAD

import strata.cuda as cuda
from strata.cuda.compiler import cuda_include_dir
from strata.hw.isa import tensor

WARPS = 4  # two blocks of two warps: every warp multiplies its own matrices

# ------------------------------------------------------------------------------------------------
# mma.sync: kernels generated from the PTX ISA's fragment formulas (written here in C++)
# ------------------------------------------------------------------------------------------------

G_T = "int g = lane >> 2, t = lane & 3;"
# (shape, matrix, family) -> (row, col) as C++ expressions of g, t, lane and the element index i,
# transcribed from the manual's tables (9.7.14.5.2-9.7.14.5.10)
FORMULAS: dict[tuple[str, str, str], tuple[str, str]] = {
    ("m8n8k4", "a", "w"): ("lane >> 2", "lane % 4"),
    ("m8n8k4", "b", "w"): ("lane % 4", "lane >> 2"),
    ("m8n8k4", "c", "c"): ("g", "t * 2 + (i & 1)"),
    ("m8n8k16", "a", "b"): ("g", "t * 4 + i"),
    ("m8n8k16", "b", "b"): ("t * 4 + i", "g"),
    ("m8n8k16", "c", "c"): ("g", "t * 2 + i"),
    ("m16n8k4", "a", "w"): ("i == 0 ? g : g + 8", "t"),
    ("m16n8k4", "b", "w"): ("t", "g"),
    ("m16n8k8", "a", "h"): ("i < 2 ? g : g + 8", "t * 2 + (i & 1)"),
    ("m16n8k8", "a", "w"): ("(i == 0 || i == 2) ? g : g + 8", "i < 2 ? t : t + 4"),
    ("m16n8k8", "b", "h"): ("t * 2 + i", "g"),
    ("m16n8k8", "b", "w"): ("i == 0 ? t : t + 4", "g"),
    ("m16n8k16", "a", "h"): ("(i < 2 || (i >= 4 && i < 6)) ? g : g + 8", "t * 2 + (i & 1) + (i >= 4 ? 8 : 0)"),
    ("m16n8k16", "a", "d"): ("i % 2 == 0 ? g : g + 8", "i % 2 == 0 ? i * 2 + t : i * 2 - 2 + t"),
    ("m16n8k16", "a", "b"): ("i < 4 ? g : g + 8", "t * 4 + (i & 3)"),
    ("m16n8k16", "b", "h"): ("t * 2 + (i & 1) + (i >= 2 ? 8 : 0)", "g"),
    ("m16n8k16", "b", "d"): ("t + i * 4", "g"),
    ("m16n8k16", "b", "b"): ("t * 4 + i", "g"),
    ("m16n8k32", "a", "b"): ("(i < 4 || (i >= 8 && i < 12)) ? g : g + 8", "t * 4 + (i & 3) + (i >= 8 ? 16 : 0)"),
    ("m16n8k32", "b", "b"): ("t * 4 + (i & 3) + (i >= 4 ? 16 : 0)", "g"),
    ("m16", "c", "c"): ("i < 2 ? g : g + 8", "t * 2 + (i & 1)"),
}
ELEMS = {("m8n8k4", "a"): 1, ("m8n8k4", "b"): 1, ("m8n8k4", "c"): 2, ("m8n8k16", "a"): 4, ("m8n8k16", "b"): 4,
         ("m8n8k16", "c"): 2, ("m16n8k4", "a"): 2, ("m16n8k4", "b"): 1, ("m16n8k8", "a"): 4, ("m16n8k8", "b"): 2,
         ("m16n8k16", "a"): 8, ("m16n8k16", "b"): 4, ("m16n8k32", "a"): 16, ("m16n8k32", "b"): 8}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "s32": 32}
CTYPE = {8: "unsigned char", 16: "unsigned short", 32: "unsigned", 64: "double"}
NPTYPE = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.float64}

# (shape, atype, btype, ctype): every mma.sync form the virtual GPU models
MMA_CASES = [
    ("m16n8k8", "f16", "f16", "f32"), ("m16n8k8", "f16", "f16", "f16"),
    ("m16n8k16", "f16", "f16", "f32"), ("m16n8k16", "f16", "f16", "f16"),
    ("m16n8k8", "bf16", "bf16", "f32"), ("m16n8k16", "bf16", "bf16", "f32"),
    ("m16n8k4", "tf32", "tf32", "f32"), ("m16n8k8", "tf32", "tf32", "f32"),
    ("m8n8k4", "f64", "f64", "f64"), ("m16n8k4", "f64", "f64", "f64"),
    ("m16n8k8", "f64", "f64", "f64"), ("m16n8k16", "f64", "f64", "f64"),
    ("m8n8k16", "s8", "u8", "s32"), ("m16n8k16", "u8", "s8", "s32"), ("m16n8k32", "s8", "s8", "s32"),
    ("m16n8k32", "e4m3", "e5m2", "f32"), ("m16n8k16", "e5m2", "e5m2", "f16"),
]


def family(et: str, shape: str) -> str:
    if et in ("f16", "bf16"):
        return "h"
    if et == "f64" and shape == "m16n8k16":
        return "d"
    return "w" if et in ("tf32", "f64") else "b"


def dims(shape: str) -> tuple[int, int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def formula(shape: str, matrix: str, et: str) -> tuple[str, str]:
    if matrix == "c":
        return FORMULAS[(shape, "c", "c")] if shape.startswith("m8") else FORMULAS[("m16", "c", "c")]
    return FORMULAS[(shape, matrix, family(et, shape))]


def case_name(case: tuple[str, ...]) -> str:
    return "mma_" + "_".join(case)


def mma_kernel(case: tuple[str, str, str, str], sat: bool = False) -> str:
    """A kernel where each warp loads its A, B, C by the manual's formulas, runs one mma and stores D."""
    shape, at, bt, ct = case
    M, N, K = dims(shape)
    lines = [f'extern "C" __global__ void {case_name(case)}{"_sat" if sat else ""}('
             f"const {CTYPE[BITS[at]]}* A, const {CTYPE[BITS[bt]]}* B, const {CTYPE[BITS[ct]]}* C, "
             f"{CTYPE[BITS[ct]]}* D) {{",
             "int lane = threadIdx.x & 31, w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;", G_T,
             f"A += w * {M * K}; B += w * {K * N}; C += w * {M * N}; D += w * {M * N};"]
    ins: list[str] = []  # asm input operands in order a, b, c
    groups: list[int] = []
    for name, et, ld in (("a", at, K), ("b", bt, N), ("c", ct, N)):
        E = ELEMS.get((shape, name), 4)
        bits = BITS[et]
        row, col = formula(shape, name, et)
        load = f"{name.upper()}[({row}) * {ld} + ({col})]"
        if bits == 64:
            lines.append(f"double {name}[{E}]; for (int i = 0; i < {E}; i++) {name}[i] = {load};")
            ins += [f'"d"({name}[{j}])' for j in range(E)]
            groups.append(E)
            continue
        per = 32 // bits
        lines.append(f"unsigned {name}[{E // per}] = {{0}};")
        lines.append(f"for (int i = 0; i < {E}; i++) {name}[i / {per}] |= (unsigned){load} << ((i % {per}) * {bits});")
        wrap = "__uint_as_float({})" if et == "f32" else "{}"
        ins += [f'"{"f" if et == "f32" else "r"}"({wrap.format(f"{name}[{j}]")})' for j in range(E // per)]
        groups.append(E // per)
    E = ELEMS.get((shape, "c"), 4)
    R = groups[2]
    dtype, con = {"f64": ("double", "d"), "f32": ("float", "f")}.get(ct, ("unsigned", "r"))
    lines.append(f"{dtype} d[{R}];")
    k = R
    regs = ["{" + ",".join(f"%{j}" for j in range(R)) + "}"]
    for cnt in groups:
        regs.append("{" + ",".join(f"%{k + j}" for j in range(cnt)) + "}")
        k += cnt
    ptx = f"mma.sync.aligned.{shape}.row.col{'.satfinite' if sat else ''}.{ct}.{at}.{bt}.{ct} " + ", ".join(regs)
    outs = ", ".join(f'"={con}"(d[{j}])' for j in range(R))
    lines.append(f'asm volatile("{ptx};" : {outs} : {", ".join(ins)});')
    row, col = formula(shape, "c", ct)
    value = {"f64": "d[i]", "f32": "__float_as_uint(d[i])", "s32": "d[i]"}.get(
        ct, "(unsigned short)(d[i / 2] >> ((i % 2) * 16))")
    lines.append(f"for (int i = 0; i < {E}; i++) D[({row}) * {N} + ({col})] = {value};")
    lines.append("}")
    return "\n".join(lines)


@functools.cache
def mma_module() -> cuda.Module:
    kernels = [mma_kernel(c) for c in MMA_CASES] + [mma_kernel(("m16n8k32", "s8", "s8", "s32"), sat=True)]
    return cuda.compile("\n".join(kernels), name="mma_cases.cu")


def random_bits(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Raw bits of random finite values of type et (the memory image the kernel reads)."""
    if et == "f16":
        return (rng.standard_normal(shape) * 4).astype(np.float16).view(np.uint16)
    if et == "bf16":
        return (rng.standard_normal(shape) * 4).astype(ml_dtypes.bfloat16).view(np.uint16)
    if et == "tf32":  # an f32 with the low 13 mantissa bits clear, as cvt.rna.tf32.f32 makes
        return (rng.standard_normal(shape).astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000))
    if et == "f32":
        return (rng.standard_normal(shape) * 8).astype(np.float32).view(np.uint32)
    if et == "f64":  # a wide exponent range, so that the order of roundings shows
        return rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))
    if et in ("e4m3", "e5m2"):
        f8 = ml_dtypes.float8_e4m3fn if et == "e4m3" else ml_dtypes.float8_e5m2
        return (rng.standard_normal(shape) * 2).astype(f8).view(np.uint8)
    if et == "s32":
        return rng.integers(-(2**20), 2**20, shape).astype(np.int32).view(np.uint32)
    return rng.integers(0, 256, shape).astype(np.uint8)  # s8 / u8


def values(et: str, b: np.ndarray) -> np.ndarray:
    """The exact values of raw bits (f64 for floats, Python-int-safe int64 for integers)."""
    if et == "f16":
        return b.view(np.float16).astype(np.float64)
    if et == "bf16":
        return b.view(ml_dtypes.bfloat16).astype(np.float64)
    if et in ("tf32", "f32"):
        return b.view(np.float32).astype(np.float64)
    if et == "f64":
        return np.asarray(b, dtype=np.float64)
    if et == "e4m3":
        return b.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    if et == "e5m2":
        return b.view(ml_dtypes.float8_e5m2).astype(np.float64)
    if et == "s8":
        return b.view(np.int8).astype(np.int64)
    if et == "s32":
        return b.view(np.int32).astype(np.int64)
    return b.astype(np.int64)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between two float arrays of the same type."""
    bits = {2: np.int16, 4: np.int32}[got.dtype.itemsize]
    a, b = got.view(bits).astype(np.int64), want.view(bits).astype(np.int64)
    # map the sign-magnitude bit patterns onto a monotonic integer line
    a = np.where(a < 0, np.iinfo(bits).min - a, a)
    b = np.where(b < 0, np.iinfo(bits).min - b, b)
    return np.abs(a - b)


def fma_chain(a: np.ndarray, b: np.ndarray, c: float, mode: str = "rn") -> float:
    """c, then fma(a[k], b[k], acc) for k = 0.., each exact product-plus-sum rounded once (mode)."""
    acc = c
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        q = Fraction(x) * Fraction(y) + Fraction(acc)
        r = float(q)  # CPython rounds a Fraction to the nearest double, ties to even
        if mode == "rz" and abs(Fraction(r)) > abs(q):
            r = float(np.nextafter(r, 0.0))
        acc = r
    return acc


@pytest.mark.parametrize("case", MMA_CASES, ids=case_name)
def test_mma_sync_fragments_and_arithmetic(case: tuple[str, str, str, str]) -> None:
    shape, at, bt, ct = case
    M, N, K = dims(shape)
    rng = np.random.default_rng(sum(map(ord, case_name(case))))
    A = random_bits(at, (WARPS, M, K), rng)
    B = random_bits(bt, (WARPS, K, N), rng)
    C = random_bits(ct, (WARPS, M, N), rng)
    (_, _, _, D), report = launch(mma_module(), case_name(case), A, B, C, np.zeros_like(C))
    assert D.dtype == C.dtype and D.shape == (WARPS, M, N)
    a, b, c = values(at, A), values(bt, B), values(ct, C)
    if ct == "s32":
        np.testing.assert_array_equal(values("s32", D), (a @ b + c).astype(np.int64))
    elif ct == "f64":
        want = np.array([[[fma_chain(a[w, i], b[w, :, j], c[w, i, j]) for j in range(N)] for i in range(M)]
                         for w in range(WARPS)])
        np.testing.assert_array_equal(D, want)  # bit-exact: the documented fma precision, k ascending
    else:
        exact = a @ b + c
        got = D.view(np.float32 if ct == "f32" else np.float16)
        want = exact.astype(np.float32 if ct == "f32" else np.float16)
        assert ulps(got, want).max() <= 1, case
    assert report.counters.flops["tensor"] == 2 * M * N * K * WARPS
    assert report.counters.warp_instructions["tensor"] == WARPS


def launch(mod: cuda.Module, name: str, *args: np.ndarray | np.generic, grid: int = 2, block: int = 64,
           shared: int = 0) -> tuple[list[np.ndarray], cuda.LaunchReport]:
    """Run kernel `name` with arrays copied in (scalars passed by value); returns the arrays copied back."""
    dev = [cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
    report = mod.get_function(name).launch((grid,), (block,), tuple(dev), shared_mem=shared)
    return [d.get() for d in dev if isinstance(d, cuda.DeviceArray)], report


def test_mma_f64_rounding_modes_follow_the_fma_chain() -> None:
    """.rz rounds each of the K fmas toward zero (and differs from .rn on these inputs)."""
    src = r'''
extern "C" __global__ void mma_rz(const double* A, const double* B, const double* C, double* D, int rz) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    double a = A[g * 4 + t], b = B[t * 8 + g], c0 = C[g * 8 + t * 2], c1 = C[g * 8 + t * 2 + 1], d0, d1;
    if (rz) asm volatile("mma.sync.aligned.m8n8k4.row.col.rz.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                         : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(c0), "d"(c1));
    else asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                      : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(c0), "d"(c1));
    D[g * 8 + t * 2] = d0; D[g * 8 + t * 2 + 1] = d1;
}'''
    rng = np.random.default_rng(7)
    A = rng.standard_normal((8, 4)) / 3
    B = rng.standard_normal((4, 8)) / 7
    C = rng.standard_normal((8, 8))
    mod = cuda.compile(src)
    out = {}
    for mode, flag in (("rn", 0), ("rz", 1)):
        (_, _, _, D), _ = launch(mod, "mma_rz", A, B, C, np.zeros((8, 8)), np.int32(flag), grid=1, block=32)
        want = np.array([[fma_chain(A[i], B[:, j], C[i, j], mode) for j in range(8)] for i in range(8)])
        np.testing.assert_array_equal(D, want)
        out[mode] = D
    assert (out["rn"] != out["rz"]).any()


def test_mma_satfinite_clamps_and_plain_wraps() -> None:
    rng = np.random.default_rng(3)
    A = np.full((WARPS, 16, 32), 127, np.int8).view(np.uint8)
    B = rng.integers(100, 128, (WARPS, 32, 8)).astype(np.int8).view(np.uint8)
    C = np.full((WARPS, 16, 8), 2**31 - 1000, np.int32).view(np.uint32)
    C[:, ::2] = np.uint32(2**31)  # INT_MIN rows: adding a positive sum does not overflow
    exact = values("s8", A) @ values("s8", B) + values("s32", C)
    for name, want in (("mma_m16n8k32_s8_s8_s32", (exact + 2**31) % 2**32 - 2**31),
                       ("mma_m16n8k32_s8_s8_s32_sat", np.clip(exact, -(2**31), 2**31 - 1))):
        (_, _, _, D), _ = launch(mma_module(), name, A, B, C, np.zeros_like(C))
        np.testing.assert_array_equal(values("s32", D), want)


def test_every_layout_covers_its_matrix_once() -> None:
    """The mma layouts place each matrix element in exactly one (lane, element) slot."""
    for shape, at, bt, ct in MMA_CASES:
        M, N, K = dims(shape)
        for matrix, et, (R, C) in (("a", at, (M, K)), ("b", bt, (K, N)), ("c", ct, (M, N))):
            rows, cols = tensor.mma_layout(shape, matrix, et)
            flat = np.sort((rows * C + cols).reshape(-1))
            np.testing.assert_array_equal(flat, np.arange(R * C), err_msg=f"{shape} {matrix} {et}")


def test_unsupported_tensor_forms_fail_at_load() -> None:
    """Forms outside the model raise UnsupportedInstruction when the module loads, not wrong answers."""
    decl = [".reg .b32 %r<8>;", ".reg .f32 %f<8>;", ".reg .b64 %rd<2>;"]
    forms = [
        "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, {%r0,%r1}, {%r2,%r3}, "
        "{%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};",  # Volta quad-pair shape
        "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%r0,%r1}, {%r2}, {%r3}, {%r4,%r5};",
        "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0,%r1}, [%rd0];",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd0], [%rd1, {%r0, %r1}], "
        "[%rd0];",  # TMA: tensor maps are not modeled
    ]
    for form in forms:
        text = PTX_HEAD + "\n".join([".visible .entry k()", "{", *decl, form, "ret;", "}"])
        with pytest.raises(cuda.UnsupportedInstruction):
            cuda.Module.from_ptx(text).get_function("k")((1,), (32,), ())


# ------------------------------------------------------------------------------------------------
# ldmatrix / stmatrix / movmatrix
# ------------------------------------------------------------------------------------------------

MATRIX_SRC = r'''
#define LDM(NAME, NUM, TRANS)                                                                              \
extern "C" __global__ void NAME(const unsigned short* src, const int* rows, unsigned* out) {               \
    __shared__ __align__(16) unsigned short s[64 * 8];                                                     \
    for (int i = threadIdx.x; i < 64 * 8; i += blockDim.x) s[i] = src[i];                                 \
    __syncthreads();                                                                                       \
    unsigned addr = (unsigned)__cvta_generic_to_shared(s) + rows[threadIdx.x] * 16;                        \
    unsigned r[4] = {0, 0, 0, 0};                                                                          \
    if (NUM == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x1" TRANS ".shared.b16 {%0}, [%1];"               \
                               : "=r"(r[0]) : "r"(addr));                                                  \
    if (NUM == 2) asm volatile("ldmatrix.sync.aligned.m8n8.x2" TRANS ".shared.b16 {%0,%1}, [%2];"            \
                               : "=r"(r[0]), "=r"(r[1]) : "r"(addr));                                      \
    if (NUM == 4) asm volatile("ldmatrix.sync.aligned.m8n8.x4" TRANS ".shared.b16 {%0,%1,%2,%3}, [%4];"      \
                               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));              \
    for (int j = 0; j < 4; j++) out[threadIdx.x * 4 + j] = r[j];                                           \
}
LDM(ldm_x1, 1, "") LDM(ldm_x2, 2, "") LDM(ldm_x4, 4, "")
LDM(ldm_x1_t, 1, ".trans") LDM(ldm_x2_t, 2, ".trans") LDM(ldm_x4_t, 4, ".trans")

extern "C" __global__ void stm_x4(const unsigned* regs, const int* rows, unsigned short* out, int trans) {
    __shared__ __align__(16) unsigned short s[64 * 8];
    for (int i = threadIdx.x; i < 64 * 8; i += blockDim.x) s[i] = 0xFFFF;
    __syncthreads();
    unsigned addr = (unsigned)__cvta_generic_to_shared(s) + rows[threadIdx.x] * 16;
    const unsigned* r = regs + threadIdx.x * 4;
    if (trans) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
                            :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    else asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};"
                      :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    __syncthreads();
    for (int i = threadIdx.x; i < 64 * 8; i += blockDim.x) out[i] = s[i];
}

extern "C" __global__ void movm(const unsigned* a, unsigned* d) {
    unsigned x = a[blockIdx.x * blockDim.x + threadIdx.x], y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    d[blockIdx.x * blockDim.x + threadIdx.x] = y;
}
'''


@functools.cache
def matrix_module() -> cuda.Module:
    return cuda.compile(MATRIX_SRC, name="matrix_moves.cu")


def fragments(M: np.ndarray, trans: bool) -> np.ndarray:
    """(32,) registers of one 8x8 matrix as the manual distributes it (row t/4, columns 2(t%4)+{0,1})."""
    t = np.arange(32)
    r, c = t // 4, 2 * (t % 4)
    lo, hi = (M[c, r], M[c + 1, r]) if trans else (M[r, c], M[r, c + 1])
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


@pytest.mark.parametrize("trans", [False, True], ids=["rows", "trans"])
@pytest.mark.parametrize("num", [1, 2, 4])
def test_ldmatrix(num: int, trans: bool) -> None:
    rng = np.random.default_rng(num * 2 + trans)
    S = rng.integers(0, 2**16, (64, 8)).astype(np.uint16)  # 64 rows of 16 bytes in shared memory
    rows = rng.permutation(64)[:64].astype(np.int32)  # rows need not be contiguous: a scatter
    rows[32:] = rows[:32]  # the second warp loads the same matrices
    rows[np.arange(64) % 32 >= 8 * num] = 10**6  # lanes that supply no address: never dereferenced
    name = f"ldm_x{num}" + ("_t" if trans else "")
    (_, _, out), report = launch(matrix_module(), name, S.reshape(-1), rows, np.zeros(64 * 4, np.uint32),
                                 grid=1, block=64)
    out = out.reshape(64, 4)
    for j in range(4):
        want = fragments(S[rows[8 * j: 8 * j + 8]], trans) if j < num else np.zeros(32, np.uint32)
        np.testing.assert_array_equal(out[:32, j], want, err_msg=f"matrix {j}")
        np.testing.assert_array_equal(out[32:, j], want)
    assert report.counters.shared_load_bytes >= 2 * 8 * num * 16


@pytest.mark.parametrize("trans", [False, True], ids=["rows", "trans"])
def test_stmatrix_inverts_ldmatrix(trans: bool) -> None:
    rng = np.random.default_rng(11 + trans)
    regs = rng.integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    rows = rng.permutation(64)[:32].astype(np.int32)
    (_, _, out), _ = launch(matrix_module(), "stm_x4", regs, rows, np.zeros(64 * 8, np.uint16), np.int32(trans),
                            grid=1, block=32)
    S = out.reshape(64, 8)
    for j in range(4):
        np.testing.assert_array_equal(fragments(S[rows[8 * j: 8 * j + 8]], trans), regs[:, j])
    untouched = np.setdiff1d(np.arange(64), rows)
    assert (S[untouched] == 0xFFFF).all()


def test_movmatrix_transposes_across_the_warp() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**32, 96, dtype=np.uint64).astype(np.uint32)
    (_, d), _ = launch(matrix_module(), "movm", a, np.zeros(96, np.uint32), grid=1, block=96)
    for w in range(3):
        halves = np.stack([a[32 * w: 32 * w + 32] & 0xFFFF, a[32 * w: 32 * w + 32] >> 16], axis=1)
        M = halves.reshape(8, 8)  # lane t holds row t/4, columns 2(t%4), 2(t%4)+1
        np.testing.assert_array_equal(d[32 * w: 32 * w + 32], fragments(M, trans=True))


# ------------------------------------------------------------------------------------------------
# WMMA (nvcuda::wmma) kernels
# ------------------------------------------------------------------------------------------------


def needs_mma_h() -> None:
    inc = cuda_include_dir()
    if inc is None or not (inc / "crt" / "mma.h").is_file():
        pytest.skip("<mma.h> needs crt/mma.h from the nvidia-cuda-crt wheel (pip install nvidia-cuda-crt)")


WMMA_GEMM = r'''
#include <mma.h>
using namespace nvcuda;
// C (M x N, f32, row-major) = A (M x K, f16, row-major) @ B (K x N, f16, column-major); one warp per 16x16 tile
extern "C" __global__ void wmma_gemm(const half* A, const half* B, float* C, int M, int N, int K) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tm = warp / (N / 16), tn = warp % (N / 16);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + tm * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + tn * 16 * K + k, K);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + tm * 16 * N + tn * 16, c, N, wmma::mem_row_major);
}
'''


def test_wmma_16x16x16_gemm_tiles() -> None:
    needs_mma_h()
    M, N, K = 64, 48, 32
    rng = np.random.default_rng(1)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    mod = cuda.compile(WMMA_GEMM, name="wmma_gemm.cu")
    (_, _, C, *_), report = launch(mod, "wmma_gemm", A, np.ascontiguousarray(B.T), np.zeros((M, N), np.float32),
                                   np.int32(M), np.int32(N), np.int32(K), grid=(M // 16) * (N // 16) // 2,
                                   block=64)
    acc = np.zeros((M, N), np.float32)  # one rounding to f32 per wmma.mma (per 16-wide k step)
    for k in range(0, K, 16):
        acc = (A[:, k:k + 16].astype(np.float64) @ B[k:k + 16].astype(np.float64) + acc).astype(np.float32)
    assert C.dtype == np.float32 and C.shape == (M, N)
    assert ulps(C, acc).max() <= 2
    assert report.counters.flops["tensor"] == 2 * M * N * K


WMMA_TYPES = r'''
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
#define COMMA ,
#define WMMA(NAME, M_, N_, K_, AT, AL, BL, CT, CL, SAT)                                                  \
extern "C" __global__ void NAME(const AT* A, const AT* B, const CT* C, CT* D, int lda, int ldb, int ldc) { \
    wmma::fragment<wmma::matrix_a, M_, N_, K_, AT, wmma::AL> a;                                           \
    wmma::fragment<wmma::matrix_b, M_, N_, K_, AT, wmma::BL> b;                                           \
    wmma::fragment<wmma::accumulator, M_, N_, K_, CT> c;                                                  \
    wmma::load_matrix_sync(a, A, lda);                                                                    \
    wmma::load_matrix_sync(b, B, ldb);                                                                    \
    wmma::load_matrix_sync(c, C, ldc, wmma::CL);                                                          \
    for (int i = 0; i < c.num_elements; i++) c.x[i] = c.x[i] * (CT)2;                                     \
    wmma::mma_sync(c, a, b, c SAT);                                                                       \
    wmma::store_matrix_sync(D, c, ldc, wmma::CL);                                                         \
}
WMMA(w_f16_32x8, 32, 8, 16, half, col_major, row_major, half, mem_col_major, )
WMMA(w_bf16_8x32, 8, 32, 16, __nv_bfloat16, row_major, col_major, float, mem_row_major, )
WMMA(w_f64, 8, 8, 4, double, row_major, col_major, double, mem_col_major, )
WMMA(w_s8_32x8, 32, 8, 16, signed char, row_major, col_major, int, mem_row_major, COMMA true)
WMMA(w_u8_16x16, 16, 16, 16, unsigned char, col_major, row_major, int, mem_row_major, )

// A and C staged in shared memory: wmma.load/store on the .shared space
extern "C" __global__ void w_f16_shared(const half* A, const half* B, const float* C, float* D, int lda, int ldb,
                                        int ldc) {
    __shared__ __align__(32) half sa[16 * 32];
    __shared__ __align__(32) float sc[16 * 24];
    for (int i = threadIdx.x; i < 16 * lda; i += 32) sa[i] = A[i];
    for (int i = threadIdx.x; i < 16 * ldc; i += 32) sc[i] = C[i];
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::load_matrix_sync(a, sa, lda);
    wmma::load_matrix_sync(b, B, ldb);
    wmma::load_matrix_sync(c, sc, ldc, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; i++) c.x[i] = c.x[i] * 2.0f;
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(sc, c, ldc, wmma::mem_row_major);
    __syncwarp();
    for (int i = threadIdx.x; i < 16 * ldc; i += 32) D[i] = sc[i];
}

extern "C" __global__ void w_tf32(const float* A, const float* B, const float* C, float* D, int lda, int ldb,
                                  int ldc) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
    wmma::load_matrix_sync(a, A, lda);
    wmma::load_matrix_sync(b, B, ldb);
    wmma::load_matrix_sync(c, C, ldc, wmma::mem_row_major);
    for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
    for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
    for (int i = 0; i < c.num_elements; i++) c.x[i] = c.x[i] * 2.0f;
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(D, c, ldc, wmma::mem_row_major);
}
'''

# name -> (M, N, K, element type, A column-major, B column-major, accumulator type, C/D column-major)
WMMA_CASES = {
    "w_f16_32x8": (32, 8, 16, "f16", True, False, "f16", True),
    "w_f16_shared": (16, 16, 16, "f16", False, True, "f32", False),
    "w_bf16_8x32": (8, 32, 16, "bf16", False, True, "f32", False),
    "w_tf32": (16, 16, 8, "f32", False, False, "f32", False),
    "w_f64": (8, 8, 4, "f64", False, True, "f64", True),
    "w_s8_32x8": (32, 8, 16, "s8", False, True, "s32", False),
    "w_u8_16x16": (16, 16, 16, "u8", True, False, "s32", False),
}


def to_tf32(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32: round to 10 mantissa bits, ties away from zero."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("name", list(WMMA_CASES))
def test_wmma_types_layouts_and_fragment_scaling(name: str) -> None:
    """load (row/col, ldm larger than the tile), elementwise fragment math, mma, store, for each type."""
    needs_mma_h()
    M, N, K, et, a_col, b_col, ct, c_col = WMMA_CASES[name]
    rng = np.random.default_rng(len(name))
    A, B, C = random_bits(et, (M, K), rng), random_bits(et, (K, N), rng), random_bits(ct, (M, N), rng)
    if ct == "s32":  # s8 overflow check: C near INT_MAX, then doubled in the kernel (wraps), then .satfinite
        C = rng.integers(2**29, 2**30, (M, N)).astype(np.int32).view(np.uint32)
    mats = []
    for X, col in ((A, a_col), (B, b_col), (C, c_col)):
        pad = 32 // X.dtype.itemsize  # leading dimensions 32 bytes wider than the tile: a sub-matrix
        Y = X.T if col else X
        big = np.zeros((Y.shape[0], Y.shape[1] + pad), Y.dtype)
        big[:, :Y.shape[1]] = Y
        mats.append(big)
    mod = cuda.compile(WMMA_TYPES, name="wmma_types.cu")
    lds = [np.int32(m.shape[1]) for m in mats]
    (_, _, _, Dbig, *_), _ = launch(mod, name, *mats, np.zeros_like(mats[2]), *lds, grid=1, block=32)
    D = Dbig[:, :C.shape[1 - c_col]]
    D = D.T if c_col else D
    a, b, c = values(et, A), values(et, B), 2 * values(ct, C)
    if et == "f32":
        a, b = to_tf32(a).astype(np.float64), to_tf32(b).astype(np.float64)
    if ct == "s32":
        c = (c + 2**31) % 2**32 - 2**31  # the elementwise doubling wrapped in int32
        want = a @ b + c
        if name == "w_s8_32x8":
            want = np.clip(want, -(2**31), 2**31 - 1)
        else:
            want = (want + 2**31) % 2**32 - 2**31
        np.testing.assert_array_equal(values("s32", D), want)
    elif ct == "f64":
        want = np.array([[fma_chain(a[i], b[:, j], c[i, j]) for j in range(N)] for i in range(M)])
        np.testing.assert_array_equal(D, want)
    else:
        if ct == "f16":
            c = c.astype(np.float16).astype(np.float64)  # the doubling happened in f16
        got = D.view(np.float32 if ct == "f32" else np.float16)
        want = (a @ b + c).astype(got.dtype)
        assert ulps(got, want).max() <= 1


# ------------------------------------------------------------------------------------------------
# A complete tensor-core GEMM: cp.async double buffering, ldmatrix, mma.sync m16n8k16 bf16
# ------------------------------------------------------------------------------------------------

GEMM = r'''
#include <cuda_bf16.h>
#define BM 64
#define BN 64
#define BK 16
// C (M x N, f32) = A (M x K, bf16, row-major) @ B (K x N, bf16, row-major); 4 warps per 64x64 block tile,
// each computing 32x32 as 2x4 mma.m16n8k16 per 16-wide k step; tiles double-buffered with cp.async.
extern "C" __global__ void gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N,
                                     int K) {
    __shared__ __align__(16) __nv_bfloat16 sA[2][BM * BK];
    __shared__ __align__(16) __nv_bfloat16 sB[2][BK * BN];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
    const __nv_bfloat16* Ab = A + blockIdx.y * BM * K;
    const __nv_bfloat16* Bb = B + blockIdx.x * BN;
    float acc[2][4][4] = {};
    int ntiles = K / BK;
    for (int kt = -1; kt < ntiles; kt++) {
        if (kt + 1 < ntiles) {  // prefetch the next tile into the other buffer
            int s = (kt + 1) & 1, k0 = (kt + 1) * BK;
            int ra = tid / 2, ca = (tid % 2) * 8, rb = tid / 8, cb = (tid % 8) * 8;
            unsigned da = (unsigned)__cvta_generic_to_shared(&sA[s][ra * BK + ca]);
            unsigned db = (unsigned)__cvta_generic_to_shared(&sB[s][rb * BN + cb]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(da), "l"(Ab + ra * K + k0 + ca));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(db), "l"(Bb + (k0 + rb) * N + cb));
            asm volatile("cp.async.commit_group;");
        }
        if (kt < 0) continue;
        if (kt + 1 < ntiles) asm volatile("cp.async.wait_group 1;" ::: "memory");
        else asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
        int s = kt & 1;
        unsigned a[2][4], b[4][2];
        for (int mi = 0; mi < 2; mi++) {
            int row = wm + mi * 16 + (lane % 16), col = (lane / 16) * 8;
            unsigned p = (unsigned)__cvta_generic_to_shared(&sA[s][row * BK + col]);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(a[mi][0]), "=r"(a[mi][1]), "=r"(a[mi][2]), "=r"(a[mi][3]) : "r"(p));
        }
        for (int ni = 0; ni < 4; ni += 2) {
            int j = lane / 8, k = lane % 8 + 8 * (j % 2), n = wn + ni * 8 + 8 * (j / 2);
            unsigned p = (unsigned)__cvta_generic_to_shared(&sB[s][k * BN + n]);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(b[ni][0]), "=r"(b[ni][1]), "=r"(b[ni + 1][0]), "=r"(b[ni + 1][1]) : "r"(p));
        }
        for (int mi = 0; mi < 2; mi++)
            for (int ni = 0; ni < 4; ni++)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                             "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                             : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]),
                               "+f"(acc[mi][ni][3])
                             : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]),
                               "r"(b[ni][0]), "r"(b[ni][1]));
        __syncthreads();
    }
    int g = lane / 4, t = lane % 4;
    for (int mi = 0; mi < 2; mi++)
        for (int ni = 0; ni < 4; ni++)
            for (int i = 0; i < 4; i++) {
                int r = blockIdx.y * BM + wm + mi * 16 + g + (i >= 2 ? 8 : 0);
                int c = blockIdx.x * BN + wn + ni * 8 + t * 2 + (i & 1);
                C[r * N + c] = acc[mi][ni][i];
            }
}
'''


@pytest.mark.parametrize("size", [64, 128])
def test_tensor_core_gemm_bf16(size: int) -> None:
    M = N = K = size
    rng = np.random.default_rng(size)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    mod = cuda.compile(GEMM, name="gemm_bf16.cu")
    dev = [cuda.to_device(A.view(np.uint16)), cuda.to_device(B.view(np.uint16)), cuda.zeros((M, N), np.float32)]
    t0 = time.perf_counter()
    report = mod.get_function("gemm_bf16")((N // 64, M // 64), (128,), (*dev, np.int32(M), np.int32(N), np.int32(K)))
    C = dev[2].get()
    wall = time.perf_counter() - t0
    a, b = A.astype(np.float64), B.astype(np.float64)
    acc = np.zeros((M, N), np.float32)  # one f32 rounding per mma (per 16-wide k step)
    for k in range(0, K, 16):
        acc = (a[:, k:k + 16] @ b[k:k + 16] + acc).astype(np.float32)
    assert C.dtype == np.float32 and C.shape == (M, N)
    assert ulps(C, acc).max() <= 2
    assert (np.abs(C - a @ b) <= (K // 16) * 2.0**-23 * (np.abs(a) @ np.abs(b))).all()  # the f32 error bound
    c = report.counters
    assert c.flops["tensor"] == 2 * M * N * K
    assert c.warp_instructions["tensor"] == (M // 32) * (N // 32) * 8 * (K // 16)
    assert c.global_load_bytes == (M // 64) * (N // 64) * (64 * K * 2) * 2  # each block reads its A and B panels
    print(f"\n[gemm_bf16 {M}x{N}x{K}] wall {wall * 1e3:.0f} ms, emulator {report.wall_time_s * 1e3:.0f} ms")


def test_tensor_flops_are_priced_at_the_tensor_peak() -> None:
    """The timing model's tensor pipe = flops['tensor'] / the catalogue's tensor peak (fp16/bf16)."""
    case = ("m16n8k16", "f16", "f16", "f32")
    M, N, K = dims(case[0])
    rng = np.random.default_rng(0)
    _, report = launch(mma_module(), case_name(case), random_bits("f16", (WARPS, M, K), rng),
                       random_bits("f16", (WARPS, K, N), rng), np.zeros((WARPS, M, N), np.uint32),
                       np.zeros((WARPS, M, N), np.uint32))
    flops = report.counters.flops["tensor"]
    assert flops == 2 * M * N * K * WARPS
    lines = "\n".join(report.modeled.explain())
    assert f"pipe tensor: {flops:,} FLOP" in lines and "tensor_fp16" in lines
    assert report.modeled.achieved_flops > 0


# ------------------------------------------------------------------------------------------------
# memcheck on the new memory instructions
# ------------------------------------------------------------------------------------------------


def test_ldmatrix_out_of_bounds_row_is_reported() -> None:
    rows = np.zeros(64, np.int32)
    rows[13] = 64  # one row past the 1 KiB shared array (lane 13 supplies row 5 of matrix 1)
    with pytest.raises(cuda.DeviceFault) as ei:
        launch(matrix_module(), "ldm_x2", np.zeros(512, np.uint16), rows, np.zeros(256, np.uint32), grid=1, block=64)
    r = ei.value.report
    assert r["space"] == "shared" and r["access"] == "read" and r["thread"] == (13, 0, 0)
    assert r["instruction"].startswith("ldmatrix") and r["size"] == 16


def test_ldmatrix_misaligned_row_is_reported() -> None:
    text = PTX_HEAD + r"""
.visible .entry k() {
    .reg .b32 %r<5>;
    .shared .align 16 .b8 s[1024];
    mov.u32 %r0, %tid.x;
    shl.b32 %r0, %r0, 4;
    add.u32 %r0, %r0, 8;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r0];
    ret;
}"""
    with pytest.raises(cuda.DeviceFault) as ei:
        cuda.Module.from_ptx(text).get_function("k")((1,), (32,), ()).wait()
    assert ei.value.name == "cudaErrorMisalignedAddress"


def test_wmma_load_past_the_allocation_is_reported() -> None:
    needs_mma_h()
    mod = cuda.compile(WMMA_GEMM, name="wmma_gemm.cu")
    A = cuda.to_device(np.zeros((16, 16), np.float16))
    B = cuda.to_device(np.zeros((16, 8), np.float16))  # half of the 16x16 tile B needs
    C = cuda.zeros((16, 16), np.float32)
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("wmma_gemm")((1,), (32,), (A, B, C, np.int32(16), np.int32(16), np.int32(16))).wait()
    r = ei.value.report
    assert r["space"] == "global" and r["access"] == "read" and r["instruction"].startswith("wmma.load.b")
    assert B.ptr + 256 <= r["address"] < B.ptr + 512 and "after the end of allocation" in r["nearest"]


def test_wmma_store_needs_aligned_rows() -> None:
    needs_mma_h()
    mod = cuda.compile(WMMA_GEMM, name="wmma_gemm.cu")
    A = cuda.to_device(np.zeros((16, 16), np.float16))
    B = cuda.to_device(np.zeros((16, 16), np.float16))
    C = cuda.zeros((16, 20), np.float32)
    with pytest.raises(cuda.DeviceFault) as ei:  # N = 18 floats: rows 72 bytes apart
        mod.get_function("wmma_gemm")((1,), (32,), (A, B, C, np.int32(16), np.int32(18), np.int32(16))).wait()
    assert ei.value.name == "cudaErrorMisalignedAddress" and ei.value.report["instruction"].startswith("wmma.store")


def test_device_reset_after_a_tensor_fault_runs_mma_again() -> None:
    """A fault in ldmatrix is sticky until the device is reset; then tensor kernels run as before."""
    rows = np.full(64, 10**4, np.int32)
    with pytest.raises(cuda.DeviceFault):
        launch(matrix_module(), "ldm_x4", np.zeros(512, np.uint16), rows, np.zeros(256, np.uint32), grid=1, block=64)
    cuda.current_device().reset()
    case = ("m16n8k8", "bf16", "bf16", "f32")
    M, N, K = dims(case[0])
    rng = np.random.default_rng(2)
    A, B = random_bits("bf16", (WARPS, M, K), rng), random_bits("bf16", (WARPS, K, N), rng)
    (_, _, _, D), _ = launch(mma_module(), case_name(case), A, B, np.zeros((WARPS, M, N), np.uint32),
                             np.zeros((WARPS, M, N), np.uint32))
    want = (values("bf16", A) @ values("bf16", B)).astype(np.float32)
    assert ulps(D.view(np.float32), want).max() <= 1
