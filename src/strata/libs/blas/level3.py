"""BLAS level 3 of strata.libs.blas: gemm (S/D/H), gemm_ex, gemm_strided_batched, syrk, trsm, and the
heuristic that picks a GEMM kernel per shape.

All matrices are column-major with leading dimensions, as in cuBLAS; arguments come in cuBLAS's
order. `gemm` dispatches on A's dtype: float32 (cublasSgemm), float64 (cublasDgemm) or float16
(cublasHgemm; strata accumulates in f32 and rounds once to f16 at the store, where cuBLAS's Hgemm
may accumulate in f16, so strata's result is the more accurate one).

The heuristic (`choose_kernel`), in order:
1. 'gemm_wmma' (tensor cores) for f16/bf16 inputs or tf32 compute, when `tensor.ENABLED` is set
   and the device runs the kernel (`tensor.available()`);
2. 'gemm_splitk' for tall-skinny products: m*n <= 128*128, k >= 512 and k >= 4*max(m, n); k is cut
   into 2..16 chunks of >= 256, partial products go to the handle's workspace and
   'gemm_splitk_reduce' sums them in a fixed order and applies alpha and beta;
3. 'gemm_small' (one thread per output) for tiny products: m*n <= 32*32 or m*n*k <= 32^3;
4. 'gemm_tiled' (64x64 register-tiled SIMT kernel) otherwise.
On an AMD device (rocBLAS's role) f16/bf16 always, and f32 where step 4 would pick 'gemm_tiled', run
'gemm_mfma' (the matrix cores, `mfma.py`); f64 and tf32 take steps 2-4 (no f64/xf32 MFMA here).
Quick returns as BLAS: m == 0 or n == 0 does nothing; k == 0 or alpha == 0 runs 'scale_matrix'
(C = beta*C; nothing at all when beta == 1). beta == 0 never reads C. The choice is the `kernel`
argument of the call's L4 trace event and `handle.last_kernel`.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.blas.handle import create_handle
    >>> h = create_handle()
    >>> a = cuda.to_device(np.arange(6, dtype=np.float32))  # the 2x3 column-major [[0, 2, 4], [1, 3, 5]]
    >>> c = cuda.zeros(4, np.float32)
    >>> gemm(h, 'N', 'T', 2, 2, 3, 1.0, a, 2, a, 2, 0.0, c, 2)  # C = A A^T
    >>> c.get().reshape(2, 2).T.tolist(), h.last_kernel
    ([[20.0, 26.0], [26.0, 35.0]], 'gemm_small')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from strata.libs.blas import mfma, tensor
from strata.libs.blas.checks import (
    BF16,
    F16,
    F32,
    F64,
    INVALID,
    NOT_SUPPORTED,
    check_dtype,
    check_ld,
    check_size,
    check_stride,
    dtype_of,
    fail,
    matrix,
    op_char,
    scalar,
)
from strata.libs.blas.gemm_kernels import KERNELS, MAX_GRID_Z, acc_type, kernel_name
from strata.libs.blas.handle import Handle, check_handle
from strata.libs.blas.kernels import KERNELS as SOLVE_KERNELS
from strata.libs.blas.kernels import vec_name
from strata.libs.common import library_call

KERNEL_CHOICES = ("gemm_tiled", "gemm_small", "gemm_splitk", "gemm_wmma", "gemm_mfma")
PREFIX = {F32: ("S", "s"), F64: ("D", "d"), F16: ("H", "h")}
FILL = {"U": 1, "L": 2}
SPLITK_MAX_MN, SPLITK_MIN_K, SPLITK_CHUNK, SPLITK_MAX = 128 * 128, 512, 256, 16
SMALL_MAX_MN, SMALL_MAX_MNK = 32 * 32, 32 ** 3
# gemm_tiled's 16-byte staging (f32/f64, aligned columns): halves the modeled time of a large SGEMM
# (fewer global loads on the latency path) but makes it ~1.7x slower to emulate, because the
# emulator counts bank conflicts of the strided shared stores it leaves through a slow path. Off
# until that accounting is fast; the tests force it on.
TILED_VECTOR_LOADS = False


@dataclass(frozen=True)
class GemmProblem:
    """One GEMM as the kernels see it: C = alpha op(A) op(B) + beta C on `batch` matrices, restricted to
    the `fill` triangle of C (0 all, 1 upper, 2 lower)."""

    routine: str
    transa: int
    transb: int
    m: int
    n: int
    k: int
    alpha: float
    a: int
    lda: int
    stride_a: int
    b: int
    ldb: int
    stride_b: int
    beta: float
    c: int
    ldc: int
    stride_c: int
    batch: int
    ab: np.dtype  # A and B element type
    ct: np.dtype  # C element type
    tf32: bool = False
    fill: int = 0


def gemm(handle: Handle, transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: Any, lda: int, B: Any,
         ldb: int, beta: float, C: Any, ldc: int, *, dtype: Any = None) -> None:
    """C = alpha * op(A) @ op(B) + beta * C (cublasSgemm / Dgemm / Hgemm, by A's dtype).

    Args:
        handle: from create_handle.
        transa, transb: 'N', 'T' or 'C' (op(X) = X, X^T, X^T for real X).
        m, n, k: op(A) is m x k, op(B) k x n, C m x n.
        alpha, beta: host scalars (f32 compute for float32/float16, f64 for float64).
        A, B, C: DeviceArrays (or device addresses) holding column-major matrices.
        lda, ldb, ldc: leading dimensions (lda >= max(1, m) for 'N', max(1, k) otherwise, ...).
        dtype: the data type when every matrix is given as an address.
    Raises:
        LibraryError: CUBLAS_STATUS_INVALID_VALUE (bad option, size, leading dimension, array too
            small, dtype mismatch), CUBLAS_STATUS_NOT_SUPPORTED (another dtype).
    """
    _gemm_api(handle, "gemm", transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, dtype)


def gemm_strided_batched(handle: Handle, transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: Any,
                         lda: int, stride_a: int, B: Any, ldb: int, stride_b: int, beta: float, C: Any, ldc: int,
                         stride_c: int, batch: int, *, dtype: Any = None) -> None:
    """C_i = alpha * op(A_i) @ op(B_i) + beta * C_i for i < batch, matrix i at base + i * stride elements
    (cublasSgemmStridedBatched / Dgemm... / Hgemm...). Arguments as `gemm`, plus the strides (>= 0;
    0 reuses one matrix) and `batch` (>= 0)."""
    _gemm_api(handle, "gemm_strided_batched", transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b,
              beta, C, ldc, stride_c, batch, dtype)


def gemm_ex(handle: Handle, transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: Any, a_type: Any,
            lda: int, B: Any, b_type: Any, ldb: int, beta: float, C: Any, c_type: Any, ldc: int,
            compute_type: str) -> None:
    """C = alpha * op(A) @ op(B) + beta * C with explicit types (cublasGemmEx / rocblas_gemm_ex).

    Supported (a_type = b_type, c_type, compute_type): (f16, f16 or f32, 'f32'), (bf16, bf16 or f32,
    'f32'), (f32, f32, 'f32' or 'tf32'), (f64, f64, 'f64'); types are NumPy/ml_dtypes dtypes. 'tf32'
    rounds A and B to TF32 (10 mantissa bits) and accumulates in f32 (CUBLAS_COMPUTE_32F_FAST_TF32).

    Raises:
        LibraryError: CUBLAS_STATUS_NOT_SUPPORTED for another combination; INVALID_VALUE as `gemm`,
            and when an array's dtype differs from its declared type.
    """
    routine = "gemm_ex"
    check_handle(handle, routine)
    types = []
    for name, t in (("a_type", a_type), ("b_type", b_type), ("c_type", c_type)):
        try:
            types.append(np.dtype(t))
        except TypeError as e:
            raise fail(INVALID, f"[{routine}] {name} must be a dtype, got {t!r}") from e
    at, bt, ct = types
    ok = {(F16, F16, "f32"), (F16, F32, "f32"), (BF16, BF16, "f32"), (BF16, F32, "f32"), (F32, F32, "f32"),
          (F32, F32, "tf32"), (F64, F64, "f64")}
    if at != bt or (at, ct, compute_type) not in ok:
        raise fail(NOT_SUPPORTED, f"[{routine}] a_type={at.name}, b_type={bt.name}, c_type={ct.name}, "
                                  f"compute_type={compute_type!r} is not supported (supported: f16/bf16 in with "
                                  "f16/bf16 or f32 out and 'f32' compute; f32 with 'f32' or 'tf32'; f64 with 'f64')")
    for name, arr, t in (("A", A, at), ("B", B, bt), ("C", C, ct)):
        check_dtype(routine, name, arr, t)
    p = _gemm_problem(handle, routine, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1,
                      at, ct, tf32=compute_type == "tf32")
    _run(handle, p, "cublasGemmEx", "rocblas_gemm_ex")


def syrk(handle: Handle, uplo: str, trans: str, n: int, k: int, alpha: float, A: Any, lda: int, beta: float, C: Any,
         ldc: int, *, dtype: Any = None) -> None:
    """C = alpha * op(A) @ op(A)^T + beta * C on the `uplo` triangle of C only (cublasSsyrk / Dsyrk).

    op(A) = A (n x k) for trans 'N', A^T (A is k x n) for 'T'/'C'. The other triangle is not touched.
    """
    routine = "syrk"
    check_handle(handle, routine)
    fill = FILL[op_char(routine, "uplo", uplo, "UL")]
    t = op_char(routine, "trans", trans) != "N"
    n, k = check_size(routine, "n", n), check_size(routine, "k", k)
    lda = check_ld(routine, "lda", lda, k if t else n, "k" if t else "n")
    ldc = check_ld(routine, "ldc", ldc, n, "n")
    dt = _real_dtype(routine, A, C, dtype=dtype)
    acc = acc_type(dt)
    a = matrix(routine, "A", A, k if t else n, n if t else k, lda, dt.itemsize, handle.device)
    c = matrix(routine, "C", C, n, n, ldc, dt.itemsize, handle.device)
    p = GemmProblem(routine, int(t), int(not t), n, n, k, float(scalar(routine, "alpha", alpha, acc)), a, lda, 0, a,
                    lda, 0, float(scalar(routine, "beta", beta, acc)), c, ldc, 0, 1, dt, dt, fill=fill)
    s, r = PREFIX[dt]
    _run(handle, p, f"cublas{s}syrk", f"rocblas_{r}syrk")


def trsm(handle: Handle, side: str, uplo: str, transa: str, diag: str, m: int, n: int, alpha: float, A: Any,
         lda: int, B: Any, ldb: int, *, dtype: Any = None) -> None:
    """Solve op(A) X = alpha B (side 'L') or X op(A) = alpha B (side 'R') for X, overwriting B
    (cublasStrsm / Dtrsm).

    A is triangular (uplo 'U'/'L'), m x m for 'L' and n x n for 'R'; diag 'U' takes its diagonal as
    ones (not read). B is m x n. alpha == 0 sets B to zero without reading A.
    """
    routine = "trsm"
    check_handle(handle, routine)
    left = op_char(routine, "side", side, "LR") == "L"
    upper = op_char(routine, "uplo", uplo, "UL") == "U"
    ta = op_char(routine, "transa", transa) != "N"
    unit = op_char(routine, "diag", diag, "NU") == "U"
    m, n = check_size(routine, "m", m), check_size(routine, "n", n)
    na = m if left else n
    lda = check_ld(routine, "lda", lda, na, "m" if left else "n")
    ldb = check_ld(routine, "ldb", ldb, m, "m")
    dt = _real_dtype(routine, A, B, dtype=dtype)
    a = matrix(routine, "A", A, na, na, lda, dt.itemsize, handle.device)
    b = matrix(routine, "B", B, m, n, ldb, dt.itemsize, handle.device)
    al = scalar(routine, "alpha", alpha, dt)
    s, r = PREFIX[dt]
    handle.begin()
    with library_call("blas.trsm", cuda_name=f"cublas{s}trsm", rocm_name=f"rocblas_{r}trsm", m=m, n=n,
                      side="L" if left else "R", uplo="U" if upper else "L", transa=int(ta), diag=int(unit),
                      kernel=None) as ev:
        if m == 0 or n == 0:
            return
        if al == 0:
            _scale(handle, GemmProblem(routine, 0, 0, m, n, 0, 0.0, 0, 1, 0, 0, 1, 0, 0.0, b, ldb, 0, 1, dt, dt))
            ev["kernel"] = handle.last_kernel = "scale_matrix"
            return
        # The system T x = alpha b for each right-hand side: T(i, p) = A[i*s1 + p*s2]
        size, rhs = (m, n) if left else (n, m)
        s_row, s_rhs = (1, ldb) if left else (ldb, 1)
        plain = left != ta  # T(i, p) = A(i, p) (else A(p, i))
        s1, s2 = (1, lda) if plain else (lda, 1)
        forward = plain != upper  # T lower triangular: solve rows in ascending order
        block = min(256, max(32, -(-size // 32) * 32))
        handle.launch(SOLVE_KERNELS.get(vec_name("trsm_kernel", dt)), (min(rhs, 65535),), (block,),
                      (np.int32(size), np.int32(rhs), al, np.uint64(a), np.int64(s1), np.int64(s2), np.uint64(b),
                       np.int64(s_row), np.int64(s_rhs), np.int32(forward), np.int32(unit)))
        ev["kernel"] = handle.last_kernel = "trsm_kernel"


# -- the dispatcher
def choose_kernel(p: GemmProblem, *, tensor_ok: bool | None = None) -> str:
    """The kernel the heuristic picks for a problem (see the module docstring); `tensor_ok`
    overrides whether the tensor-core kernel may be used (default: tensor.ENABLED and available)."""
    if p.ab in (F16, BF16) or p.tf32:
        if tensor_ok is None:
            tensor_ok = tensor.ENABLED and tensor.available()[0]
        if tensor_ok:
            return "gemm_wmma"
    if p.m * p.n <= SPLITK_MAX_MN and p.k >= SPLITK_MIN_K and p.k >= 4 * max(p.m, p.n):
        return "gemm_splitk"
    if p.m * p.n <= SMALL_MAX_MN or p.m * p.n * p.k <= SMALL_MAX_MNK:
        return "gemm_small"
    return "gemm_tiled"


def run_gemm(handle: Handle, p: GemmProblem, kernel: str | None = None) -> str:
    """Launch the kernels of one GEMM on the handle's stream: the heuristic's choice, or `kernel`
    (one of KERNEL_CHOICES; for tests and tuning). Returns what ran ('' for a quick return)."""
    if p.m == 0 or p.n == 0 or p.batch == 0:
        return ""
    if p.k == 0 or p.alpha == 0:
        if p.beta == 1:
            return ""
        _scale(handle, p)
        return "scale_matrix"
    amd_device = handle.device.spec.vendor == "amd"
    if kernel is None and amd_device:
        # rocBLAS's role: f16/bf16, and f32 GEMMs the SIMT heuristic would tile, on the matrix cores (MFMA);
        # f64 and tf32 stay on the SIMT kernels (the CDNA engine has no f64 or xf32 MFMA)
        kernel = choose_kernel(p, tensor_ok=False)
        if p.ab in (F16, BF16) or (p.ab == F32 and not p.tf32 and kernel == "gemm_tiled"):
            kernel = "gemm_mfma"
    choice = kernel or choose_kernel(p)
    if choice not in KERNEL_CHOICES:
        raise fail(INVALID, f"[{p.routine}] kernel must be one of {KERNEL_CHOICES}, got {choice!r}")
    mfma_ok = amd_device and (p.ab in (F16, BF16) or (p.ab == F32 and not p.tf32))
    if (choice == "gemm_wmma" and amd_device) or (choice == "gemm_mfma" and not mfma_ok):
        raise fail(NOT_SUPPORTED, f"[{p.routine}] kernel {choice!r} does not run on {handle.device.spec.product} "
                                  f"with {p.ab.name} inputs (WMMA: NVIDIA devices; MFMA: AMD devices, f16/bf16/f32)")
    acc = acc_type(p.ab)
    alpha, beta = acc.type(p.alpha), acc.type(p.beta)
    i32, i64 = np.int32, np.int64
    z = min(p.batch, MAX_GRID_Z)
    common = (i32(p.m), i32(p.n), i32(p.k), alpha, p.a, i32(p.lda), i64(p.stride_a), p.b, i32(p.ldb),
              i64(p.stride_b), beta, p.c, i32(p.ldc), i64(p.stride_c), i32(p.batch), i32(p.fill))
    if choice == "gemm_wmma":
        if p.ab not in (F16, BF16, F32) or (p.ab == F32 and not p.tf32):
            raise fail(NOT_SUPPORTED, f"[{p.routine}] the tensor-core kernel takes f16/bf16 or tf32, not {p.ab.name}")
        vec = tensor.vector_flags(p.ab, p.a, p.lda, p.stride_a, p.b, p.ldb, p.stride_b)
        handle.launch(tensor.KERNELS.get(tensor.kernel_name(p.ab, p.ct, (p.transa, p.transb))),
                      (_cdiv(p.m, 64), _cdiv(p.n, 64), z), (128,), (*common, i32(vec)))
        return choice
    if choice == "gemm_mfma":
        vec = tensor.vector_flags(p.ab, p.a, p.lda, p.stride_a, p.b, p.ldb, p.stride_b)
        handle.launch(mfma.KERNELS.get(mfma.kernel_name(p.ab, p.ct, (p.transa, p.transb))),
                      (_cdiv(p.m, 64), _cdiv(p.n, 64), z), (256,), (*common, i32(vec)))
        return choice
    if choice == "gemm_tiled":
        name = kernel_name("gemm_tiled", p.ab, p.ct, tf32=p.tf32, trans=(p.transa, p.transb))
        vec = tensor.vector_flags(p.ab, p.a, p.lda, p.stride_a, p.b, p.ldb, p.stride_b) \
            if TILED_VECTOR_LOADS and p.ab in (F32, F64) else 0
        handle.launch(KERNELS.get(name), (_cdiv(p.m, 64), _cdiv(p.n, 64), z), (256,), (*common, i32(vec)))
        return choice
    if choice == "gemm_small":
        name = kernel_name("gemm_small", p.ab, p.ct, tf32=p.tf32)
        handle.launch(KERNELS.get(name), (_cdiv(p.m, 16), _cdiv(p.n, 16), z), (16, 16),
                      (i32(p.transa), i32(p.transb), *common))
        return choice
    # split-K: chunks of a multiple of 16, at most SPLITK_MAX of them, the grid's z within limits
    splits = max(2, min(SPLITK_MAX, _cdiv(p.k, SPLITK_CHUNK), MAX_GRID_Z // p.batch))
    chunk = _cdiv(_cdiv(p.k, splits), 16) * 16
    splits = _cdiv(p.k, chunk)
    if p.batch * splits > MAX_GRID_Z:
        raise fail(INVALID, f"[{p.routine}] split-K needs batch * splits <= {MAX_GRID_Z}, got {p.batch} * {splits}")
    work = handle.workspace(p.batch * splits * p.m * p.n * acc.itemsize)
    handle.launch(KERNELS.get(kernel_name("gemm_splitk", p.ab, p.ct, tf32=p.tf32)),
                  (_cdiv(p.m, 16), _cdiv(p.n, 16), p.batch * splits), (16, 16),
                  (i32(p.transa), i32(p.transb), i32(p.m), i32(p.n), i32(p.k), p.a, i32(p.lda), i64(p.stride_a), p.b,
                   i32(p.ldb), i64(p.stride_b), work, i32(splits), i32(chunk), i32(p.fill)))
    handle.launch(KERNELS.get(kernel_name("gemm_splitk_reduce", p.ab, p.ct, tf32=p.tf32)), _rows_grid(p),
                  (_rows_block(p),), (i32(p.m), i32(p.n), work, i32(splits), alpha, beta, p.c, i32(p.ldc),
                                      i64(p.stride_c), i32(p.batch), i32(p.fill)))
    return "gemm_splitk+gemm_splitk_reduce"


def gemm_dispatch(handle: Handle, routine: str, transa: str, transb: str, m: int, n: int, k: int, alpha: float,
                  A: Any, lda: int, B: Any, ldb: int, beta: float, C: Any, ldc: int, *, stride_a: int = 0,
                  stride_b: int = 0, stride_c: int = 0, batch: int = 1, dtype: Any = None, c_type: Any = None,
                  tf32: bool = False, kernel: str | None = None) -> str:
    """The GEMM path of every public entry point with a `kernel=` override (one of KERNEL_CHOICES):
    validate, then run. Returns the kernel(s) that ran."""
    check_handle(handle, routine)
    dt = dtype_of(A, B, C, dtype=dtype)
    if dt is None:
        raise fail(INVALID, f"[{routine}] pass dtype= when A, B and C are all device addresses")
    ct = np.dtype(c_type) if c_type is not None else dt
    p = _gemm_problem(handle, routine, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C,
                      ldc, stride_c, batch, dt, ct, tf32=tf32)
    return _run(handle, p, "cublasGemmEx", "rocblas_gemm_ex", kernel)


# -- helpers
def _gemm_api(handle: Handle, routine: str, transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: Any,
              lda: int, stride_a: int, B: Any, ldb: int, stride_b: int, beta: float, C: Any, ldc: int, stride_c: int,
              batch: int, dtype: Any) -> None:
    check_handle(handle, routine)
    dt = dtype_of(A, B, C, dtype=dtype)
    if dt is None:
        raise fail(INVALID, f"[{routine}] pass dtype= when A, B and C are all device addresses")
    if dt not in PREFIX:
        raise fail(NOT_SUPPORTED, f"[{routine}] data type {dt.name} is not supported (float32, float64, float16; "
                                  "bfloat16 through gemm_ex)")
    for name, arr in (("A", A), ("B", B), ("C", C)):
        check_dtype(routine, name, arr, dt)
    p = _gemm_problem(handle, routine, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C,
                      ldc, stride_c, batch, dt, dt)
    s, r = PREFIX[dt]
    suffix = ("StridedBatched", "_strided_batched") if routine == "gemm_strided_batched" else ("", "")
    _run(handle, p, f"cublas{s}gemm{suffix[0]}", f"rocblas_{r}gemm{suffix[1]}")


def _gemm_problem(handle: Handle, routine: str, transa: str, transb: str, m: int, n: int, k: int, alpha: float,
                  A: Any, lda: int, stride_a: int, B: Any, ldb: int, stride_b: int, beta: float, C: Any, ldc: int,
                  stride_c: int, batch: int, ab: np.dtype, ct: np.dtype, *, tf32: bool = False) -> GemmProblem:
    """Check a GEMM's arguments in reference BLAS's order and describe it."""
    ta = op_char(routine, "transa", transa) != "N"
    tb = op_char(routine, "transb", transb) != "N"
    m, n, k = check_size(routine, "m", m), check_size(routine, "n", n), check_size(routine, "k", k)
    lda = check_ld(routine, "lda", lda, k if ta else m, "k" if ta else "m")
    ldb = check_ld(routine, "ldb", ldb, n if tb else k, "n" if tb else "k")
    ldc = check_ld(routine, "ldc", ldc, m, "m")
    stride_a, stride_b = check_stride(routine, "stride_a", stride_a), check_stride(routine, "stride_b", stride_b)
    stride_c = check_stride(routine, "stride_c", stride_c)
    batch = check_size(routine, "batch", batch)
    acc = acc_type(ab)
    al, be = scalar(routine, "alpha", alpha, acc), scalar(routine, "beta", beta, acc)
    dev = handle.device
    reads = k > 0 and al != 0  # A and B are not referenced otherwise (BLAS)
    a = matrix(routine, "A", A, (k if ta else m) if reads else 0, (m if ta else k), lda, ab.itemsize, dev,
               batch=batch, stride=stride_a)
    b = matrix(routine, "B", B, (n if tb else k) if reads else 0, (k if tb else n), ldb, ab.itemsize, dev,
               batch=batch, stride=stride_b)
    c = matrix(routine, "C", C, m, n, ldc, ct.itemsize, dev, batch=batch, stride=stride_c)
    return GemmProblem(routine, int(ta), int(tb), m, n, k, float(al), a, lda, stride_a, b, ldb, stride_b, float(be), c,
                       ldc, stride_c, batch, ab, ct, tf32=tf32)


def _run(handle: Handle, p: GemmProblem, cuda_name: str, rocm_name: str, kernel: str | None = None) -> str:
    handle.begin()
    with library_call(f"blas.{p.routine}", cuda_name=cuda_name, rocm_name=rocm_name, m=p.m, n=p.n, k=p.k,
                      batch=p.batch, transa=p.transa, transb=p.transb, dtype=p.ab.name, kernel=None) as ev:
        ran = run_gemm(handle, p, kernel)
        ev["kernel"] = handle.last_kernel = ran or None
    return ran


def _scale(handle: Handle, p: GemmProblem) -> None:
    """C = beta * C over the problem's batch and triangle (beta == 0 writes zeros)."""
    acc = acc_type(p.ab)
    handle.launch(KERNELS.get(kernel_name("scale_matrix", p.ab, p.ct, tf32=False)), _rows_grid(p),
                  (_rows_block(p),), (np.int32(p.m), np.int32(p.n), acc.type(p.beta), p.c, np.int32(p.ldc),
                                      np.int64(p.stride_c), np.int32(p.batch), np.int32(p.fill)))


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _rows_block(p: GemmProblem) -> int:
    return min(256, -(-p.m // 32) * 32)


def _rows_grid(p: GemmProblem) -> tuple[int, int, int]:
    return -(-p.m // _rows_block(p)), min(p.n, MAX_GRID_Z), min(p.batch, MAX_GRID_Z)


def _real_dtype(routine: str, *arrays: Any, dtype: Any = None) -> np.dtype:
    dt = dtype_of(*arrays, dtype=dtype)
    if dt is None:
        raise fail(INVALID, f"[{routine}] pass dtype= when the matrices are all device addresses")
    if dt not in (F32, F64):
        raise fail(NOT_SUPPORTED, f"[{routine}] data type {dt.name} is not supported (float32, float64)")
    for i, arr in enumerate(arrays):
        check_dtype(routine, "AB"[i] if routine == "trsm" else "AC"[i], arr, dt)
    return dt


__all__ = ["KERNEL_CHOICES", "GemmProblem", "choose_kernel", "gemm", "gemm_dispatch", "gemm_ex", "gemm_strided_batched",
           "run_gemm", "syrk", "trsm"]
