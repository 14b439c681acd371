"""NCCL's enums and status: data types, reduction operations, and the error a call raises.

RCCL (ROCm) keeps NCCL's names, so one set serves both vendors.

Example:
    >>> import numpy as np
    >>> DataType.of("float32") is DataType.ncclFloat32, DataType.of(np.int8).ctype
    (True, 'signed char')
    >>> RedOp.of("avg").name
    'ncclAvg'
"""

from __future__ import annotations

import enum
from typing import Any

import ml_dtypes
import numpy as np

from strata.libs.common import LibraryError


class NcclError(LibraryError):
    """A collective call failed; `.status` is NCCL's result name: ncclInvalidArgument (a bad argument),
    ncclInvalidUsage (a call the library's rules forbid: a mismatch between ranks, a destroyed
    communicator), ncclSystemError (no path between two devices), ncclRemoteError (another rank
    aborted or never joined within the timeout)."""


class NcclTimeoutError(NcclError):
    """A rank did not join a communicator or a collective within the communicator's timeout."""

    def __init__(self, message: str) -> None:
        super().__init__("ncclRemoteError", message)


class DataType(enum.IntEnum):
    """ncclDataType_t (values as in nccl.h)."""

    ncclInt8 = 0
    ncclUint8 = 1
    ncclInt32 = 2
    ncclUint32 = 3
    ncclInt64 = 4
    ncclUint64 = 5
    ncclFloat16 = 6
    ncclFloat32 = 7
    ncclFloat64 = 8
    ncclBfloat16 = 9

    @property
    def numpy(self) -> np.dtype:
        return _NUMPY[self]

    @property
    def ctype(self) -> str:
        """The CUDA C++ type the kernels are instantiated for."""
        return _CTYPE[self]

    @property
    def size(self) -> int:
        return int(self.numpy.itemsize)

    @classmethod
    def of(cls, value: Any) -> DataType:
        """A DataType from itself, its name ('ncclFloat32', 'float32') or a NumPy dtype."""
        if isinstance(value, DataType):
            return value
        if isinstance(value, str) and value in cls.__members__:
            return cls[value]
        try:
            dt = np.dtype(value)
        except TypeError:
            dt = None
        for k, v in _NUMPY.items():
            if dt is not None and v == dt:
                return k
        raise NcclError("ncclInvalidArgument", f"datatype {value!r} is not an NCCL data type (supported: "
                        f"{', '.join(str(v) for v in _NUMPY.values())})")


_NUMPY = {DataType.ncclInt8: np.dtype(np.int8), DataType.ncclUint8: np.dtype(np.uint8),
          DataType.ncclInt32: np.dtype(np.int32), DataType.ncclUint32: np.dtype(np.uint32),
          DataType.ncclInt64: np.dtype(np.int64), DataType.ncclUint64: np.dtype(np.uint64),
          DataType.ncclFloat16: np.dtype(np.float16), DataType.ncclFloat32: np.dtype(np.float32),
          DataType.ncclFloat64: np.dtype(np.float64), DataType.ncclBfloat16: np.dtype(ml_dtypes.bfloat16)}
_CTYPE = {DataType.ncclInt8: "signed char", DataType.ncclUint8: "unsigned char", DataType.ncclInt32: "int",
          DataType.ncclUint32: "unsigned int", DataType.ncclInt64: "long long",
          DataType.ncclUint64: "unsigned long long", DataType.ncclFloat16: "__half",
          DataType.ncclFloat32: "float", DataType.ncclFloat64: "double", DataType.ncclBfloat16: "__nv_bfloat16"}


class RedOp(enum.IntEnum):
    """ncclRedOp_t. The value is the `op` argument of the device kernels."""

    ncclSum = 0
    ncclProd = 1
    ncclMax = 2
    ncclMin = 3
    ncclAvg = 4

    @classmethod
    def of(cls, value: Any) -> RedOp:
        """A RedOp from itself or a name: 'ncclSum', 'sum', 'prod', 'max', 'min', 'avg'."""
        if isinstance(value, RedOp):
            return value
        if isinstance(value, str):
            key = value if value.startswith("nccl") else "nccl" + value.capitalize()
            if key in cls.__members__:
                return cls[key]
        raise NcclError("ncclInvalidArgument", f"op {value!r} is not a reduction (ncclSum, ncclProd, ncclMax, "
                        "ncclMin, ncclAvg)")
