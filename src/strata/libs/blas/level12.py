"""BLAS levels 1 and 2 of strata.libs.blas: axpy, scal, dot, nrm2, asum, iamax, gemv, ger (float32 and float64).

Arguments come in cuBLAS's order; vectors are a DeviceArray (or device address) with an increment,
negative increments walking the vector backwards (axpy, dot, gemv, ger; BLAS's rule) and
non-positive ones making scal/nrm2/asum/iamax quick returns (reference BLAS). Results of dot, nrm2,
asum and iamax come back to the host (CUBLAS_POINTER_MODE_HOST): the call waits for its own stream.
nrm2 scales by max|x| first, so it neither overflows nor underflows where sqrt(sum x^2) would.
iamax is 1-based and returns the first index of the largest |x| (0 for n == 0; NaNs never win).

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.blas.handle import create_handle
    >>> h = create_handle()
    >>> x = cuda.to_device(np.array([3, -4, 1], np.float32))
    >>> y = cuda.to_device(np.ones(3, np.float32))
    >>> axpy(h, 3, 2.0, x, 1, y, 1); y.get().tolist()
    [7.0, -7.0, 3.0]
    >>> dot(h, 3, x, 1, y, 1), nrm2(h, 2, x, 1), asum(h, 3, x, 1), iamax(h, 3, x, 1)
    (52.0, 5.0, 8.0, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.libs.blas.checks import (
    F32,
    F64,
    INVALID,
    NOT_SUPPORTED,
    check_dtype,
    check_inc,
    check_ld,
    check_size,
    dtype_of,
    fail,
    matrix,
    op_char,
    scalar,
    vector,
)
from strata.libs.blas.handle import Handle, check_handle
from strata.libs.blas.kernels import AMAX, ASUM, DOT, KERNELS, REDUCE_BLOCK, REDUCE_MAX_BLOCKS, SUM, SUMSQ, vec_name
from strata.libs.common import library_call

BLOCK = 256
NAMES = {F32: ("S", "s"), F64: ("D", "d")}


def axpy(handle: Handle, n: int, alpha: float, x: Any, incx: int, y: Any, incy: int, *, dtype: Any = None) -> None:
    """y = alpha * x + y (cublasSaxpy / Daxpy). alpha == 0 or n == 0 returns at once."""
    routine = "axpy"
    dt, n, (px, py), (incx, incy) = _vectors(handle, routine, n, ((x, incx, "x"), (y, incy, "y")), dtype)
    al = scalar(routine, "alpha", alpha, dt)
    with _call(handle, routine, "axpy", dt, n) as ev:
        if n and al != 0:
            handle.launch(KERNELS.get(vec_name("axpy_kernel", dt)), (-(-n // BLOCK),), (BLOCK,),
                          (np.int32(n), al, px, np.int32(incx), py, np.int32(incy)))
            ev["kernel"] = handle.last_kernel = "axpy_kernel"


def scal(handle: Handle, n: int, alpha: float, x: Any, incx: int, *, dtype: Any = None) -> None:
    """x = alpha * x (cublasSscal / Dscal); incx <= 0 or n == 0 returns at once."""
    routine = "scal"
    dt, n, (px,), (incx,) = _vectors(handle, routine, n, ((x, incx, "x"),), dtype, positive=True)
    al = scalar(routine, "alpha", alpha, dt)
    with _call(handle, routine, "scal", dt, n) as ev:
        if n and incx > 0:
            handle.launch(KERNELS.get(vec_name("scal_kernel", dt)), (-(-n // BLOCK),), (BLOCK,),
                          (np.int32(n), al, px, np.int32(incx)))
            ev["kernel"] = handle.last_kernel = "scal_kernel"


def dot(handle: Handle, n: int, x: Any, incx: int, y: Any, incy: int, *, dtype: Any = None) -> float:
    """sum_i x_i * y_i (cublasSdot / Ddot), returned to the host (0.0 for n == 0)."""
    routine = "dot"
    dt, n, (px, py), (incx, incy) = _vectors(handle, routine, n, ((x, incx, "x"), (y, incy, "y")), dtype)
    with _call(handle, routine, "dot", dt, n) as ev:
        if n == 0:
            return 0.0
        value = _reduce(handle, DOT, dt, n, px, incx, py, incy)
        ev["kernel"] = handle.last_kernel
        return value


def asum(handle: Handle, n: int, x: Any, incx: int, *, dtype: Any = None) -> float:
    """sum_i |x_i| (cublasSasum / Dasum); 0.0 for n == 0 or incx <= 0."""
    routine = "asum"
    dt, n, (px,), (incx,) = _vectors(handle, routine, n, ((x, incx, "x"),), dtype, positive=True)
    with _call(handle, routine, "asum", dt, n) as ev:
        if n == 0 or incx <= 0:
            return 0.0
        value = _reduce(handle, ASUM, dt, n, px, incx)
        ev["kernel"] = handle.last_kernel
        return value


def nrm2(handle: Handle, n: int, x: Any, incx: int, *, dtype: Any = None) -> float:
    """sqrt(sum_i x_i^2) (cublasSnrm2 / Dnrm2), computed as max|x| * sqrt(sum (x_i / max|x|)^2);
    0.0 for n == 0 or incx <= 0."""
    routine = "nrm2"
    dt, n, (px,), (incx,) = _vectors(handle, routine, n, ((x, incx, "x"),), dtype, positive=True)
    with _call(handle, routine, "nrm2", dt, n) as ev:
        if n == 0 or incx <= 0:
            return 0.0
        big = _reduce(handle, AMAX, dt, n, px, incx)
        kernels = handle.last_kernel
        if big == 0 or not np.isfinite(big):
            value = big
        else:
            ssq = _reduce(handle, SUMSQ, dt, n, px, incx, scale=big)
            value = float(dt.type(np.sqrt(dt.type(ssq)) * dt.type(big)))
            kernels = f"{kernels}+{handle.last_kernel}"
        ev["kernel"] = handle.last_kernel = kernels
        return value


def iamax(handle: Handle, n: int, x: Any, incx: int, *, dtype: Any = None) -> int:
    """The 1-based index of the first largest |x_i| (cublasIsamax / Idamax); 0 for n == 0 or incx <= 0."""
    routine = "iamax"
    dt, n, (px,), (incx,) = _vectors(handle, routine, n, ((x, incx, "x"),), dtype, positive=True)
    s, r = NAMES[dt]
    handle.begin()
    with library_call("blas.iamax", cuda_name=f"cublasI{s.lower()}amax", rocm_name=f"rocblas_i{r}amax", n=n,
                      kernel=None) as ev:
        if n == 0 or incx <= 0:
            return 0
        kernel = KERNELS.get(vec_name("iamax_kernel", dt))
        blocks = min(REDUCE_MAX_BLOCKS, -(-n // REDUCE_BLOCK))
        vals, idx, out, out_i = _scratch(handle, dt)
        handle.launch(kernel, (blocks,), (REDUCE_BLOCK,), (np.int32(n), px, np.int32(incx), 0, vals, idx))
        handle.launch(kernel, (1,), (REDUCE_BLOCK,), (np.int32(blocks), vals, np.int32(1), idx, out, out_i))
        ev["kernel"] = handle.last_kernel = "iamax_kernel+iamax_kernel"
        at = int(handle.read(out_i, np.int32)[0])
        return at + 1 if at < n else 1  # every |x_i| NaN: BLAS's loop never moves off the first


def gemv(handle: Handle, trans: str, m: int, n: int, alpha: float, A: Any, lda: int, x: Any, incx: int, beta: float,
         y: Any, incy: int, *, dtype: Any = None) -> None:
    """y = alpha * op(A) @ x + beta * y (cublasSgemv / Dgemv); A is m x n column-major, x and y have
    n and m elements for 'N', m and n for 'T'/'C'. beta == 0 does not read y."""
    routine = "gemv"
    check_handle(handle, routine)
    t = op_char(routine, "trans", trans) != "N"
    m, n = check_size(routine, "m", m), check_size(routine, "n", n)
    lda = check_ld(routine, "lda", lda, m, "m")
    incx, incy = check_inc(routine, "incx", incx), check_inc(routine, "incy", incy)
    dt = _dtype(routine, (A, x, y), ("A", "x", "y"), dtype)
    al, be = scalar(routine, "alpha", alpha, dt), scalar(routine, "beta", beta, dt)
    lx, ly = (m, n) if t else (n, m)
    pa = matrix(routine, "A", A, m, n, lda, dt.itemsize, handle.device)
    px = vector(routine, "x", x, lx, incx, dt.itemsize, handle.device)
    py = vector(routine, "y", y, ly, incy, dt.itemsize, handle.device)
    with _call(handle, routine, "gemv", dt, n, m=m, trans=int(t)) as ev:
        if m == 0 or n == 0 or (al == 0 and be == 1):
            return
        args = (np.int32(m), np.int32(n), al, pa, np.int32(lda), px, np.int32(incx), be, py, np.int32(incy))
        if t:  # one warp per output
            handle.launch(KERNELS.get(vec_name("gemv_t", dt)), (-(-n // 8),), (BLOCK,), args)
            ev["kernel"] = handle.last_kernel = "gemv_t"
        else:
            handle.launch(KERNELS.get(vec_name("gemv_n", dt)), (-(-m // BLOCK),), (BLOCK,), args)
            ev["kernel"] = handle.last_kernel = "gemv_n"


def ger(handle: Handle, m: int, n: int, alpha: float, x: Any, incx: int, y: Any, incy: int, A: Any, lda: int, *,
        dtype: Any = None) -> None:
    """A = alpha * x @ y^T + A (cublasSger / Dger); x has m elements, y n, A is m x n column-major."""
    routine = "ger"
    check_handle(handle, routine)
    m, n = check_size(routine, "m", m), check_size(routine, "n", n)
    incx, incy = check_inc(routine, "incx", incx), check_inc(routine, "incy", incy)
    lda = check_ld(routine, "lda", lda, m, "m")
    dt = _dtype(routine, (x, y, A), ("x", "y", "A"), dtype)
    al = scalar(routine, "alpha", alpha, dt)
    px = vector(routine, "x", x, m, incx, dt.itemsize, handle.device)
    py = vector(routine, "y", y, n, incy, dt.itemsize, handle.device)
    pa = matrix(routine, "A", A, m, n, lda, dt.itemsize, handle.device)
    with _call(handle, routine, "ger", dt, n, m=m) as ev:
        if m == 0 or n == 0 or al == 0:
            return
        block = min(BLOCK, -(-m // 32) * 32)
        handle.launch(KERNELS.get(vec_name("ger_kernel", dt)), (-(-m // block), min(n, 65535)), (block,),
                      (np.int32(m), np.int32(n), al, px, np.int32(incx), py, np.int32(incy), pa, np.int32(lda)))
        ev["kernel"] = handle.last_kernel = "ger_kernel"


# -- helpers
def _call(handle: Handle, routine: str, base: str, dt: np.dtype, n: int, **args: Any) -> Any:
    s, r = NAMES[dt]
    handle.begin()
    return library_call(f"blas.{routine}", cuda_name=f"cublas{s}{base}", rocm_name=f"rocblas_{r}{base}", n=n,
                        kernel=None, **args)


def _dtype(routine: str, arrays: tuple[Any, ...], names: tuple[str, ...], dtype: Any) -> np.dtype:
    dt = dtype_of(*arrays, dtype=dtype)
    if dt is None:
        raise fail(INVALID, f"[{routine}] pass dtype= when every operand is a device address")
    if dt not in NAMES:
        raise fail(NOT_SUPPORTED, f"[{routine}] data type {dt.name} is not supported (float32, float64)")
    for arr, name in zip(arrays, names, strict=True):
        check_dtype(routine, name, arr, dt)
    return dt


def _vectors(handle: Handle, routine: str, n: int, vecs: tuple[tuple[Any, int, str], ...], dtype: Any,
             *, positive: bool = False) -> tuple[np.dtype, int, list[int], list[int]]:
    """Check a level-1 call's handle, n, increments, dtypes and vectors; non-positive increments
    are accepted for the `positive` routines (they return at once) without a size check."""
    check_handle(handle, routine)
    n = check_size(routine, "n", n)
    incs = []
    for _, inc, name in vecs:
        if positive:
            if isinstance(inc, bool) or not isinstance(inc, int | np.integer):
                raise fail(INVALID, f"[{routine}] inc{name} must be an int, got {type(inc).__name__}")
            incs.append(int(inc))
        else:
            incs.append(check_inc(routine, f"inc{name}", inc))
    dt = _dtype(routine, tuple(v[0] for v in vecs), tuple(v[2] for v in vecs), dtype)
    ptrs = [vector(routine, name, arr, n if inc > 0 or not positive else 0, inc or 1, dt.itemsize, handle.device)
            for (arr, _, name), inc in zip(vecs, incs, strict=True)]
    return dt, n, ptrs, incs


def _scratch(handle: Handle, dt: np.dtype) -> tuple[int, int, int, int]:
    """Addresses in the handle's scratch buffer: partial values, partial indices, result, result index."""
    base = handle.scratch().ptr
    return base, base + 1024, base + 2048, base + 2056


def _reduce(handle: Handle, op: int, dt: np.dtype, n: int, px: int, incx: int, py: int = 0, incy: int = 1,
            scale: float = 1.0) -> float:
    """Two-pass reduction (partials, then one block over them); the result read back to the host."""
    blocks = min(REDUCE_MAX_BLOCKS, -(-n // REDUCE_BLOCK))
    vals, _, out, _ = _scratch(handle, dt)
    first = KERNELS.get(vec_name("reduce_kernel", dt, op))
    handle.launch(first, (blocks,), (REDUCE_BLOCK,),
                  (np.int32(n), px, np.int32(incx), py, np.int32(incy), dt.type(scale), vals))
    second = KERNELS.get(vec_name("reduce_kernel", dt, AMAX if op == AMAX else SUM))
    handle.launch(second, (1,), (REDUCE_BLOCK,), (np.int32(blocks), vals, np.int32(1), 0, np.int32(1), dt.type(1), out))
    handle.last_kernel = "reduce_kernel+reduce_kernel"
    return float(handle.read(out, dt)[0])
