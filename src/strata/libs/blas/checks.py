"""Argument checks of strata.libs.blas, in the order and wording reference BLAS (xerbla) and cuBLAS use.

Every failed check raises `LibraryError(status, message)`: 'CUBLAS_STATUS_INVALID_VALUE' for a bad
size, leading dimension, increment, option character or an array too small for the matrix it is said
to hold; 'CUBLAS_STATUS_NOT_SUPPORTED' for a data type (or combination) strata does not implement.
Messages name the routine and the argument and say what was expected: the leading-dimension rule is
`"[gemm] lda must be >= max(1, m)=64, got 32"`.

Example:
    >>> try:
    ...     check_ld("gemm", "lda", 32, 64, "m")
    ... except LibraryError as e:
    ...     print(e.status, str(e))
    CUBLAS_STATUS_INVALID_VALUE [gemm] lda must be >= max(1, m)=64, got 32
    >>> op_char("gemm", "transa", "t")
    'T'
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import LibraryError, pointer

INVALID = "CUBLAS_STATUS_INVALID_VALUE"
NOT_SUPPORTED = "CUBLAS_STATUS_NOT_SUPPORTED"
NOT_INITIALIZED = "CUBLAS_STATUS_NOT_INITIALIZED"

F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


def fail(status: str, message: str) -> LibraryError:
    """The error to raise (a helper so call sites read `raise fail(...)`)."""
    return LibraryError(status, message)


def op_char(routine: str, name: str, value: Any, allowed: str = "NTC") -> str:
    """A BLAS option character ('N'/'T'/'C', 'U'/'L', 'L'/'R', 'N'/'U'), case-insensitive as LSAME is."""
    if isinstance(value, str) and len(value) == 1 and value.upper() in allowed:
        return value.upper()
    choices = ", ".join(f"'{c}'" for c in allowed)
    raise fail(INVALID, f"[{routine}] {name} must be one of {choices}, got {value!r}")


def check_size(routine: str, name: str, value: Any) -> int:
    """A dimension: an int >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise fail(INVALID, f"[{routine}] {name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise fail(INVALID, f"[{routine}] {name} must be >= 0, got {value}")
    if value >= 1 << 31:
        raise fail(INVALID, f"[{routine}] {name} must be < 2^31, got {value}")
    return int(value)


def check_ld(routine: str, name: str, ld: Any, rows: int, rows_name: str) -> int:
    """A leading dimension: ld >= max(1, rows), with the rule spelled out in the message."""
    if isinstance(ld, bool) or not isinstance(ld, int | np.integer):
        raise fail(INVALID, f"[{routine}] {name} must be an int, got {type(ld).__name__}")
    need = max(1, rows)
    if ld < need or ld >= 1 << 31:
        raise fail(INVALID, f"[{routine}] {name} must be >= max(1, {rows_name})={need}, got {ld}")
    return int(ld)


def check_inc(routine: str, name: str, inc: Any, *, positive: bool = False) -> int:
    """A vector increment: nonzero (negative walks the vector backwards), or > 0 when `positive`."""
    if isinstance(inc, bool) or not isinstance(inc, int | np.integer):
        raise fail(INVALID, f"[{routine}] {name} must be an int, got {type(inc).__name__}")
    if positive and inc <= 0:
        raise fail(INVALID, f"[{routine}] {name} must be > 0, got {inc}")
    if inc == 0:
        raise fail(INVALID, f"[{routine}] {name} must be != 0, got 0")
    return int(inc)


def check_stride(routine: str, name: str, stride: Any) -> int:
    """A batch stride in elements: >= 0 (0 reuses one matrix for every batch entry)."""
    if isinstance(stride, bool) or not isinstance(stride, int | np.integer):
        raise fail(INVALID, f"[{routine}] {name} must be an int, got {type(stride).__name__}")
    if stride < 0:
        raise fail(INVALID, f"[{routine}] {name} must be >= 0, got {stride}")
    return int(stride)


def dtype_of(*arrays: Any, dtype: Any = None) -> np.dtype | None:
    """The data type of a call: `dtype` if given, else that of the first DeviceArray among `arrays`."""
    if dtype is not None:
        return np.dtype(dtype)
    for a in arrays:
        if isinstance(a, DeviceArray):
            return a.dtype
    return None


def check_dtype(routine: str, name: str, array: Any, want: np.dtype) -> None:
    """A DeviceArray must hold `want` (a device address carries no type and is taken as `want`)."""
    if isinstance(array, DeviceArray) and array.dtype != want:
        raise fail(INVALID, f"[{routine}] {name} must be {want.name}, got {array.dtype.name}")


def matrix(routine: str, name: str, array: Any, rows: int, cols: int, ld: int, itemsize: int, device: Any,
           *, batch: int = 1, stride: int = 0) -> int:
    """The device address of a column-major rows x cols matrix (batch of them `stride` elements apart);
    a DeviceArray must be on the handle's device and its bytes must reach the last element."""
    ptr = pointer(array, f"[{routine}] {name}", INVALID)
    if isinstance(array, DeviceArray):
        if array.device is not device:
            raise fail(INVALID, f"[{routine}] {name} is on device {array.device.index}, the handle on {device.index}")
        if rows and cols and batch:
            last = (batch - 1) * stride + (cols - 1) * ld + rows - 1
            need = (last + 1) * itemsize
            if array.nbytes < need:
                what = f"{rows}x{cols} matrix with ld={ld}" + (f", {batch} of them {stride} apart" if batch > 1 else "")
                raise fail(INVALID, f"[{routine}] {name} is too small for a {what}: needs {need} bytes, "
                                    f"has {array.nbytes}")
    return ptr


def vector(routine: str, name: str, array: Any, n: int, inc: int, itemsize: int, device: Any) -> int:
    """The device address of an n-vector with increment `inc`; a DeviceArray must hold its last element."""
    ptr = pointer(array, f"[{routine}] {name}", INVALID)
    if isinstance(array, DeviceArray):
        if array.device is not device:
            raise fail(INVALID, f"[{routine}] {name} is on device {array.device.index}, the handle on {device.index}")
        if n:
            need = ((n - 1) * abs(inc) + 1) * itemsize
            if array.nbytes < need:
                raise fail(INVALID, f"[{routine}] {name} is too small for {n} elements with inc={inc}: needs "
                                    f"{need} bytes, has {array.nbytes}")
    return ptr


def scalar(routine: str, name: str, value: Any, dtype: np.dtype) -> np.generic:
    """alpha/beta as a NumPy scalar of the compute type (host pointer mode)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise fail(INVALID, f"[{routine}] {name} must be a real number, got {type(value).__name__}")
    return dtype.type(value)
