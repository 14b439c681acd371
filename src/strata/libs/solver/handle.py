"""The solver handle (cusolverDnHandle_t / rocblas_handle for rocSOLVER) and the argument checks of
strata.libs.solver, in LAPACK's order and cuSOLVER's status names.

A handle is bound to the device current at creation and to one stream of it (`None`: the default
stream); every kernel of every call on the handle is queued on that stream, in order. A rejected
argument raises `LibraryError('CUSOLVER_STATUS_INVALID_VALUE', ...)` naming the routine and the
argument, and, as LAPACK's xerbla convention has it, also stores `-i` (i = the argument's position,
not counting the handle) in the call's `info` when `info` itself is usable.

Example:
    >>> import strata.cuda as cuda
    >>> s = cuda.Stream()
    >>> h = create_handle(s)
    >>> h.stream is s, h.last_kernel
    (True, None)
    >>> set_stream(h, None); h.stream is None
    True
    >>> destroy_handle(h)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.cuda import DeviceArray, Stream, current_device
from strata.libs.common import LibraryError, LibraryHandle, LibraryKernel, check_live_handle, check_stream, pointer
from strata.libs.solver.kernels import KERNELS

INVALID = "CUSOLVER_STATUS_INVALID_VALUE"
NOT_SUPPORTED = "CUSOLVER_STATUS_NOT_SUPPORTED"
NOT_INITIALIZED = "CUSOLVER_STATUS_NOT_INITIALIZED"
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
INT32 = np.dtype(np.int32)


class Handle(LibraryHandle):
    """A dense-solver context: device, stream, `last_kernel` (the kernels the last call launched, joined
    by '+'; None before any call) and `last_launches` (their LaunchReports)."""

    library = "solver"

    def launch(self, name: str, kernel: LibraryKernel, grid: int, block: int, args: Sequence[Any]) -> None:
        """Queue one kernel on the handle's stream and note it in `last_kernel`."""
        self.last_launches.append(kernel.launch(grid, block, args, stream=self.queue()))
        self.note(name)


def create_handle(stream: Stream | None = None) -> Handle:
    """cusolverDnCreate + cusolverDnSetStream: a handle on the current device, kernels queued on `stream`.

    Args:
        stream: a strata.cuda Stream of the current device, or None for the default stream.
    Returns:
        Handle.
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE if `stream` is not a stream of the current device.
    """
    device = current_device()
    check_stream("create_handle", stream, device, INVALID)
    return Handle(device, stream)


def destroy_handle(handle: Handle) -> None:
    """cusolverDnDestroy: later calls with the handle raise CUSOLVER_STATUS_NOT_INITIALIZED."""
    check_handle(handle, "destroy_handle")
    handle.destroyed = True


def set_stream(handle: Handle, stream: Stream | None) -> None:
    """cusolverDnSetStream: later calls queue their kernels on `stream` (None: the default stream).

    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a stream of another device.
    """
    check_handle(handle, "set_stream")
    check_stream("set_stream", stream, handle.device, INVALID)
    handle.stream = stream


def check_handle(handle: Any, routine: str) -> None:
    """Raise CUSOLVER_STATUS_NOT_INITIALIZED unless `handle` is a live solver Handle."""
    check_live_handle(handle, Handle, routine, NOT_INITIALIZED)


class Call:
    """The argument checks of one call: each failure raises LibraryError and, once `info` is known to
    be a usable int32 device pointer, stores -(argument index) in it first (LAPACK's xerbla)."""

    def __init__(self, handle: Handle, routine: str) -> None:
        check_handle(handle, routine)
        self.handle = handle
        self.routine = routine
        self.info_ptr: int | None = None

    def fail(self, index: int, message: str, status: str = INVALID) -> LibraryError:
        """The error for argument `index` (1-based, handle not counted), after writing -index to info."""
        if self.info_ptr is not None:
            self.handle.launch("set_info", KERNELS.get("set_info"), 1, 1, (self.info_ptr, np.int32(-index)))
        return LibraryError(status, f"[{self.routine}] {message}")

    def info(self, info: Any) -> int:
        """The device address of `info`, a one-element int32 array (or an address)."""
        ptr = self._array_ptr(info, "info", 1, INT32, None)
        self.info_ptr = ptr
        return ptr

    def size(self, index: int, name: str, value: Any, *, low: int = 0, high: int | None = None,
             high_name: str = "") -> int:
        """A dimension: an int in [low, high]."""
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise self.fail(index, f"{name} must be an int, got {type(value).__name__}")
        if value < low:
            raise self.fail(index, f"{name} must be >= {low}, got {value}")
        if high is not None and value > high:
            raise self.fail(index, f"{name} must be <= {high_name}={high}, got {value}")
        if value >= 1 << 31:
            raise self.fail(index, f"{name} must be < 2^31, got {value}")
        return int(value)

    def ld(self, index: int, name: str, value: Any, rows: int, rows_name: str) -> int:
        """A leading dimension: ld >= max(1, rows)."""
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise self.fail(index, f"{name} must be an int, got {type(value).__name__}")
        need = max(1, rows)
        if value < need or value >= 1 << 31:
            raise self.fail(index, f"{name} must be >= max(1, {rows_name})={need}, got {value}")
        return int(value)

    def option(self, index: int, name: str, value: Any, allowed: str) -> str:
        """An option character ('N'/'T'/'C', 'U'/'L'), case-insensitive as LAPACK's LSAME."""
        if isinstance(value, str) and len(value) == 1 and value.upper() in allowed:
            return value.upper()
        choices = ", ".join(f"'{c}'" for c in allowed)
        raise self.fail(index, f"{name} must be one of {choices}, got {value!r}")

    def dtype(self, arrays: Sequence[Any], dtype: Any) -> np.dtype:
        """The call's data type: `dtype` if given, else the first DeviceArray's; float32 or float64."""
        want = np.dtype(dtype) if dtype is not None else next(
            (a.dtype for a in arrays if isinstance(a, DeviceArray)), np.dtype(np.float32))
        if want not in DTYPES:
            raise LibraryError(NOT_SUPPORTED, f"[{self.routine}] data type must be float32 or float64, got {want}")
        return want

    def matrix(self, index: int, name: str, array: Any, rows: int, cols: int, ld: int, dtype: np.dtype) -> int:
        """The address of a column-major rows x cols matrix with leading dimension ld."""
        need = (cols - 1) * ld + rows if rows and cols else 0
        return self._array_ptr(array, name, need, dtype, index, f"a {rows}x{cols} matrix with ld={ld}")

    def vector(self, index: int, name: str, array: Any, n: int, dtype: np.dtype) -> int:
        """The address of an n-element vector of `dtype`."""
        return self._array_ptr(array, name, n, dtype, index, f"{n} elements")

    def _array_ptr(self, array: Any, name: str, count: int, dtype: np.dtype, index: int | None,
                   what: str = "") -> int:
        def bad(message: str) -> LibraryError:
            if index is None:
                return LibraryError(INVALID, f"[{self.routine}] {message}")
            return self.fail(index, message)

        try:
            ptr = pointer(array, f"[{self.routine}] {name}", INVALID)
        except LibraryError as e:
            raise bad(str(e).removeprefix(f"[{self.routine}] ")) from e
        if isinstance(array, DeviceArray):
            if array.device.index != self.handle.device.index:
                raise bad(f"{name} is on device {array.device.index}, the handle on {self.handle.device.index}")
            if array.dtype != dtype:
                raise bad(f"{name} must be {dtype.name}, got {array.dtype.name}")
            if array.nbytes < count * dtype.itemsize:
                raise bad(f"{name} is too small for {what or f'{count} elements'}: needs "
                          f"{count * dtype.itemsize} bytes, has {array.nbytes}")
        elif ptr == 0 and count:
            raise bad(f"{name} is a null pointer")
        return ptr
