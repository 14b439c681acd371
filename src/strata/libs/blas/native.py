"""cuBLAS's host API for whole CUDA programs: what strata's `libcublas.so.13` (strata/cuda/bridge/native/
cublas.c) asks the runtime process for, served by strata.libs.blas. Importing this module registers the
handlers with the bridge (`strata run` does).

A handle here is a strata.libs.blas Handle on the device current when the program called cublasCreate.
Each call carries the handle's stream (cublasSetStream lives in the C library) and one routine with its
arguments as cublas.c's `call_t` packs them: enum values as cuBLAS numbers them, device addresses,
alpha/beta already read on the program's side (as doubles). Replies are `reply_t`: the cublasStatus_t,
then a reduction's value and index.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from strata import config
from strata.cuda.bridge.protocol import Op
from strata.cuda.bridge.server import register_handler, stream_for
from strata.libs.blas.handle import Handle, create_handle, destroy_handle, set_stream
from strata.libs.blas.level3 import gemm, gemm_dispatch, gemm_ex, gemm_strided_batched, syrk, trsm
from strata.libs.blas.level12 import asum, axpy, dot, gemv, ger, iamax, nrm2, scal
from strata.libs.common import LibraryError

# cuBLAS's cublasStatus_t values
STATUS = {"CUBLAS_STATUS_SUCCESS": 0, "CUBLAS_STATUS_NOT_INITIALIZED": 1, "CUBLAS_STATUS_ALLOC_FAILED": 3,
          "CUBLAS_STATUS_INVALID_VALUE": 7, "CUBLAS_STATUS_ARCH_MISMATCH": 8, "CUBLAS_STATUS_MAPPING_ERROR": 11,
          "CUBLAS_STATUS_EXECUTION_FAILED": 13, "CUBLAS_STATUS_INTERNAL_ERROR": 14,
          "CUBLAS_STATUS_NOT_SUPPORTED": 15, "CUBLAS_STATUS_LICENSE_ERROR": 16}

CALL = struct.Struct("<QQII20qdd")  # cublas.c's call_t
REPLY = struct.Struct("<iidq")  # reply_t: status, pad, value, index

# cudaDataType -> dtype (CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF)
DATA_TYPES = {0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16),
              14: np.dtype(ml_dtypes.bfloat16)}
# cublasComputeType_t -> strata's compute type (16F and 32I compute are not implemented)
COMPUTE = {68: "f32", 69: "f32", 74: "f32", 75: "f32", 77: "tf32", 70: "f64", 71: "f64"}
# (A/B type, C type, compute) combinations strata's GEMM kernels serve (as strata.libs.blas.gemm_ex)
_F16, _BF16, _F32, _F64 = DATA_TYPES[2], DATA_TYPES[14], DATA_TYPES[0], DATA_TYPES[1]
GEMM_TYPES = {(_F16, _F16, "f32"), (_F16, _F32, "f32"), (_BF16, _BF16, "f32"), (_BF16, _F32, "f32"),
              (_F32, _F32, "f32"), (_F32, _F32, "tf32"), (_F64, _F64, "f64")}
TF32_MATH = 3  # CUBLAS_TF32_TENSOR_OP_MATH
OPS = {0: "N", 1: "T", 2: "C"}  # cublasOperation_t (CUBLAS_OP_CONJG, 3, has no real meaning here)
FILL = {0: "L", 1: "U"}  # cublasFillMode_t
SIDE = {0: "L", 1: "R"}  # cublasSideMode_t
DIAG = {0: "N", 1: "U"}  # cublasDiagType_t

_handles: dict[int, Handle] = {}
_next = [0x2000]


class _Status(Exception):
    """A cublasStatus_t to answer with, raised by the argument translation below."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(why)
        self.status = name


def _reply(name: str, value: float = 0.0, index: int = 0) -> bytes:
    return REPLY.pack(STATUS.get(name, STATUS["CUBLAS_STATUS_INTERNAL_ERROR"]), 0, value, index)


def _enum(table: dict[int, str], value: int, what: str) -> str:
    if value not in table:
        raise _Status("CUBLAS_STATUS_INVALID_VALUE", f"{what} {value} is not one of {sorted(table)}")
    return table[value]


def _create(body: bytes) -> bytes:
    _next[0] += 1
    _handles[_next[0]] = create_handle(None)
    return _reply("CUBLAS_STATUS_SUCCESS", index=_next[0])


def _destroy(body: bytes) -> bytes:
    (hid,) = struct.unpack("<Q", body)
    handle = _handles.pop(hid, None)
    if handle is None:
        return _reply("CUBLAS_STATUS_NOT_INITIALIZED")
    destroy_handle(handle)
    return _reply("CUBLAS_STATUS_SUCCESS")


def _gemm(h: Handle, dt: int, i: tuple[int, ...], alpha: float, beta: float, *,
          pointers: bool = False) -> tuple[float, int]:
    """One GEMM call; `pointers`: A, B and C are device arrays of `batch` matrix pointers (cublas*gemmBatched)."""
    ta, tb, m, n, k, a, lda, sa, b, ldb, sb, c, ldc, sc, batch, at, bt, ct, compute, math = i[:20]
    types = []
    for name, code in (("Atype", at), ("Btype", bt), ("Ctype", ct)):
        if code not in DATA_TYPES:
            raise _Status("CUBLAS_STATUS_NOT_SUPPORTED", f"{name} cudaDataType {code} is not supported")
        types.append(DATA_TYPES[code])
    a_t, b_t, c_t = types
    if compute < 0:  # Sgemm/Dgemm: the type's own compute, TF32 for float under CUBLAS_TF32_TENSOR_OP_MATH
        kind = "f64" if a_t == _F64 else ("tf32" if (math & 0xF) == TF32_MATH else "f32")
    elif compute in COMPUTE:
        kind = COMPUTE[compute]
    else:
        raise _Status("CUBLAS_STATUS_NOT_SUPPORTED", f"cublasComputeType_t {compute} is not supported")
    if a_t != b_t or (a_t, c_t, kind) not in GEMM_TYPES:
        raise _Status("CUBLAS_STATUS_NOT_SUPPORTED", f"Atype {a_t.name}, Btype {b_t.name}, Ctype {c_t.name} with "
                                                     f"{kind} compute is not supported")
    ops = _enum(OPS, ta, "transa"), _enum(OPS, tb, "transb")
    if pointers:
        if batch < 0:
            raise _Status("CUBLAS_STATUS_INVALID_VALUE", f"batchCount must be >= 0, got {batch}")
        if batch == 0:
            return 0.0, 0
        arrays = [h.read(p, np.uint64, batch).astype(np.int64) for p in (a, b, c)]  # on the handle's stream
        steps = [np.diff(x) for x in arrays]
        if all(len(set(d.tolist())) <= 1 for d in steps):  # evenly spaced: one strided-batched GEMM
            a, b, c = (int(x[0]) for x in arrays)
            strides = [int(d[0]) if len(d) else 0 for d in steps]
            items = (a_t.itemsize, a_t.itemsize, c_t.itemsize)
            if all(st >= 0 and st % size == 0 for st, size in zip(strides, items, strict=True)):
                sa, sb, sc = (st // size for st, size in zip(strides, items, strict=True))
                gemm_dispatch(h, "gemm_strided_batched", *ops, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                              stride_a=sa, stride_b=sb, stride_c=sc, batch=batch, dtype=a_t, c_type=c_t,
                              tf32=kind == "tf32")
                return 0.0, 0
        for pa, pb, pc in zip(*(x.tolist() for x in arrays), strict=True):  # scattered matrices: one GEMM each
            gemm_dispatch(h, "gemm", *ops, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc, dtype=a_t, c_type=c_t,
                          tf32=kind == "tf32")
        return 0.0, 0
    batched = batch != 1 or sa or sb or sc
    # through the entry point the program called, so traces name it (cublasSgemm, ...StridedBatched, GemmEx)
    if compute < 0 and kind != "tf32":
        if batched:
            gemm_strided_batched(h, *ops, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch, dtype=a_t)
        else:
            gemm(h, *ops, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, dtype=a_t)
    elif not batched:
        gemm_ex(h, *ops, m, n, k, alpha, a, a_t, lda, b, b_t, ldb, beta, c, c_t, ldc, kind)
    else:
        gemm_dispatch(h, "gemm_strided_batched", *ops, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stride_a=sa,
                      stride_b=sb, stride_c=sc, batch=batch, dtype=a_t, c_type=c_t, tf32=kind == "tf32")
    return 0.0, 0


def _axpy(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    axpy(h, i[0], alpha, i[1], i[2], i[3], i[4], dtype=dt)
    return 0.0, 0


def _scal(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    scal(h, i[0], alpha, i[1], i[2], dtype=dt)
    return 0.0, 0


def _dot(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    return float(dot(h, i[0], i[1], i[2], i[3], i[4], dtype=dt)), 0


def _nrm2(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    return float(nrm2(h, i[0], i[1], i[2], dtype=dt)), 0


def _asum(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    return float(asum(h, i[0], i[1], i[2], dtype=dt)), 0


def _iamax(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    return 0.0, int(iamax(h, i[0], i[1], i[2], dtype=dt))


def _gemv(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    gemv(h, _enum(OPS, i[0], "trans"), i[1], i[2], alpha, i[3], i[4], i[5], i[6], beta, i[7], i[8], dtype=dt)
    return 0.0, 0


def _ger(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    ger(h, i[0], i[1], alpha, i[2], i[3], i[4], i[5], i[6], i[7], dtype=dt)
    return 0.0, 0


def _syrk(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    syrk(h, _enum(FILL, i[0], "uplo"), _enum(OPS, i[1], "trans"), i[2], i[3], alpha, i[4], i[5], beta, i[6], i[7],
         dtype=dt)
    return 0.0, 0


def _trsm(h: Handle, dt: np.dtype, i: tuple[int, ...], alpha: float, beta: float) -> tuple[float, int]:
    trsm(h, _enum(SIDE, i[0], "side"), _enum(FILL, i[1], "uplo"), _enum(OPS, i[2], "trans"),
         _enum(DIAG, i[3], "diag"), i[4], i[5], alpha, i[6], i[7], i[8], i[9], dtype=dt)
    return 0.0, 0


# cublas.c's R_* routine numbers
_ROUTINES: dict[int, Callable[..., tuple[float, int]]] = {
    2: _axpy, 3: _scal, 4: _dot, 5: _nrm2, 6: _asum, 7: _iamax, 8: _gemv, 9: _ger, 10: _syrk, 11: _trsm}
_NAMES = {1: "gemm", 2: "axpy", 3: "scal", 4: "dot", 5: "nrm2", 6: "asum", 7: "iamax", 8: "gemv", 9: "ger",
          10: "syrk", 11: "trsm", 12: "gemm_batched"}


def _call(body: bytes) -> bytes:
    hid, stream, routine, dtype, *rest = CALL.unpack_from(body)
    ints, (alpha, beta) = tuple(rest[:20]), rest[20:]
    handle = _handles.get(hid)
    name = _NAMES.get(routine, str(routine))
    try:
        if handle is None:
            raise _Status("CUBLAS_STATUS_NOT_INITIALIZED", f"no cuBLAS handle {hid:#x} (destroyed, or never created)")
        set_stream(handle, stream_for(stream))
        result: Any
        if routine in (1, 12):
            result = _gemm(handle, dtype, ints, alpha, beta, pointers=routine == 12)
        elif routine in _ROUTINES:
            if dtype not in (0, 1):
                raise _Status("CUBLAS_STATUS_NOT_SUPPORTED", f"cudaDataType {dtype}")
            result = _ROUTINES[routine](handle, DATA_TYPES[dtype], ints, alpha, beta)
        else:
            raise _Status("CUBLAS_STATUS_NOT_SUPPORTED", f"routine {routine}")
    except (_Status, LibraryError) as e:
        if config.settings().debug >= 1:  # cuBLAS says only the status; STRATA_DEBUG says why
            print(f"strata: cuBLAS {name}: {e.status}: {e}", file=sys.stderr)
        return _reply(e.status)
    return _reply("CUBLAS_STATUS_SUCCESS", *result)


register_handler(Op.CUBLAS_CREATE, _create)
register_handler(Op.CUBLAS_DESTROY, _destroy)
register_handler(Op.CUBLAS_CALL, _call)
