"""The sparse library handle (cusparseHandle_t / rocsparse_handle) and the sparse-matrix descriptors of
cuSPARSE's generic API (cusparseCreateCsr / cusparseCreateCoo), with the library's status names.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> a = create_coo(2, 3, cuda.to_device(np.array([0, 1], np.int32)), cuda.to_device(np.array([2, 0], np.int32)),
    ...                cuda.to_device(np.array([1.5, 2.0], np.float32)))
    >>> a.format, a.nnz, a.value_dtype.name, a.index_dtype.name
    ('coo', 2, 'float32', 'int32')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata.cuda import Device, DeviceArray, Stream, current_device
from strata.libs.common import LibraryHandle, LibraryKernel, check_live_handle, check_stream, require

INVALID = "CUSPARSE_STATUS_INVALID_VALUE"
NOT_SUPPORTED = "CUSPARSE_STATUS_NOT_SUPPORTED"
NOT_INITIALIZED = "CUSPARSE_STATUS_NOT_INITIALIZED"

VALUE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


class Handle(LibraryHandle):
    """A sparse-library context: its device, its stream (None: the default stream), `last_kernel` (the
    kernels the last call launched, joined by '+') and `last_launches` (their LaunchReports)."""

    library = "sparse"

    def launch(self, kernel: LibraryKernel, threads: int, args: Sequence[Any]) -> None:
        """Queue `kernel` over `threads` threads (blocks of 256) on the handle's stream."""
        from strata.libs.sparse.kernels import BLOCK
        self.last_launches.append(kernel.launch((-(-threads // BLOCK),), (BLOCK,), args, stream=self.queue()))
        self.note(kernel.name.split("<", 1)[0])


def create_handle(stream: Stream | None = None) -> Handle:
    """cusparseCreate (+ cusparseSetStream): a handle on the current device.

    Raises:
        LibraryError: CUSPARSE_STATUS_INVALID_VALUE if `stream` belongs to another device.
    """
    device = current_device()
    check_stream("create_handle", stream, device, INVALID)
    return Handle(device, stream)


def destroy_handle(handle: Handle) -> None:
    """cusparseDestroy: later calls with the handle raise NOT_INITIALIZED."""
    check_handle(handle, "destroy_handle")
    handle.destroyed = True


def set_stream(handle: Handle, stream: Stream | None) -> None:
    """cusparseSetStream."""
    check_handle(handle, "set_stream")
    check_stream("set_stream", stream, handle.device, INVALID)
    handle.stream = stream


def check_handle(handle: Any, routine: str) -> None:
    """Raise CUSPARSE_STATUS_NOT_INITIALIZED unless `handle` is a live Handle."""
    check_live_handle(handle, Handle, routine, NOT_INITIALIZED)


@dataclass(frozen=True)
class SpMat:
    """A sparse matrix descriptor (cusparseSpMatDescr_t): `format` 'csr' or 'coo', its shape, and the device
    arrays holding it. For CSR, `rows_or_ptr` is row_ptr (rows + 1 offsets); for COO, the row index of each
    nonzero. The arrays stay the caller's: the descriptor only refers to them."""

    format: str
    rows: int
    cols: int
    nnz: int
    rows_or_ptr: DeviceArray
    col_ind: DeviceArray
    values: DeviceArray

    @property
    def value_dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def index_dtype(self) -> np.dtype:
        return self.col_ind.dtype

    @property
    def device(self) -> Device:
        return self.values.device


def _dims(routine: str, rows: Any, cols: Any) -> tuple[int, int]:
    for name, v in (("rows", rows), ("cols", cols)):
        require(bool(isinstance(v, int | np.integer) and not isinstance(v, bool) and 0 <= v < 1 << 31), INVALID,
                f"[{routine}] {name} must be an int in [0, 2^31), got {v!r}")
    return int(rows), int(cols)


def _array(routine: str, name: str, a: Any, length: int, dtypes: tuple[np.dtype, ...], device: Device | None) -> None:
    require(isinstance(a, DeviceArray) and not a.freed, INVALID,
            f"[{routine}] {name} must be a live DeviceArray, got {type(a).__name__}")
    require(bool(a.dtype in dtypes), NOT_SUPPORTED, f"[{routine}] {name} has data type {a.dtype.name}; supported: "
            f"{', '.join(d.name for d in dtypes)}")
    require(a.size >= length, INVALID, f"[{routine}] {name} holds {a.size} elements, needs {length}")
    require(device is None or a.device is device, INVALID,
            f"[{routine}] {name} is on device {a.device.index}, the other arrays on {device.index if device else '?'}")


def create_csr(rows: int, cols: int, row_ptr: DeviceArray, col_ind: DeviceArray, values: DeviceArray) -> SpMat:
    """cusparseCreateCsr: nnz is `values.size`; row_ptr and col_ind share one index type (int32 or int64).
    The offsets themselves are not read back (as in cuSPARSE): a malformed row_ptr is the caller's error.

    Raises:
        LibraryError: INVALID_VALUE for a bad size or arrays on different devices, NOT_SUPPORTED for a type.
    """
    rows, cols = _dims("create_csr", rows, cols)
    _array("create_csr", "values", values, 0, VALUE_DTYPES, None)
    nnz = values.size
    _array("create_csr", "row_ptr", row_ptr, rows + 1, INDEX_DTYPES, values.device)
    _array("create_csr", "col_ind", col_ind, nnz, (row_ptr.dtype,), values.device)
    return SpMat("csr", rows, cols, nnz, row_ptr, col_ind, values)


def create_coo(rows: int, cols: int, row_ind: DeviceArray, col_ind: DeviceArray, values: DeviceArray) -> SpMat:
    """cusparseCreateCoo: nnz is `values.size`; the coordinates need not be sorted and may repeat (repeats add).

    Raises:
        LibraryError: INVALID_VALUE for a bad size or arrays on different devices, NOT_SUPPORTED for a type.
    """
    rows, cols = _dims("create_coo", rows, cols)
    _array("create_coo", "values", values, 0, VALUE_DTYPES, None)
    nnz = values.size
    _array("create_coo", "row_ind", row_ind, nnz, INDEX_DTYPES, values.device)
    _array("create_coo", "col_ind", col_ind, nnz, (row_ind.dtype,), values.device)
    return SpMat("coo", rows, cols, nnz, row_ind, col_ind, values)
