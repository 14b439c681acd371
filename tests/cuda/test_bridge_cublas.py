"""The runtime process's side of strata's libcublas.so.13 (strata.libs.blas.native), driven with the
requests cublas.c packs, without nvcc: results against NumPy, cuBLAS's status codes for bad arguments,
unsupported types and unknown handles. The whole-program tests (test_whole_programs.py) cover the C side."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import strata.cuda as cuda
from strata.libs.blas import native

CUDA_R_32F, CUDA_R_64F, CUDA_R_16F = 0, 1, 2
R_GEMM, R_AXPY, R_DOT, R_IAMAX = 1, 2, 4, 7


def call(handle: int, routine: int, dtype: int, ints: list[int], alpha: float = 0.0, beta: float = 0.0,
         stream: int = 0) -> tuple[int, float, int]:
    body = native.CALL.pack(handle, stream, routine, dtype, *(ints + [0] * (20 - len(ints))), alpha, beta)
    status, _, value, index = native.REPLY.unpack(native._call(body))
    return status, value, index


@pytest.fixture
def handle() -> Iterator[int]:
    status, _, _, h = native.REPLY.unpack(native._create(b"\0\0\0\0"))
    assert status == 0
    yield h
    native._destroy(h.to_bytes(8, "little"))


def gemm_ints(ta: int, tb: int, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int, c: int, ldc: int,
              at: int = CUDA_R_32F, ct: int = CUDA_R_32F, compute: int = -1, batch: int = 1,
              strides: tuple[int, int, int] = (0, 0, 0)) -> list[int]:
    return [ta, tb, m, n, k, a, lda, strides[0], b, ldb, strides[1], c, ldc, strides[2], batch, at, at, ct, compute, 0]


def test_sgemm_transposed_against_numpy(handle: int) -> None:
    rng = np.random.default_rng(1)
    m, n, k = 33, 17, 20
    a = rng.standard_normal((k, m)).astype(np.float32)  # op(A) = A^T is m x k
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    da, db, dc = (cuda.to_device(np.asfortranarray(x).ravel(order="F")) for x in (a, b, c))
    status, _, _ = call(handle, R_GEMM, CUDA_R_32F,
                        gemm_ints(1, 0, m, n, k, da.ptr, k, db.ptr, k, dc.ptr, m), alpha=0.5, beta=2.0)
    assert status == 0
    got = dc.get().reshape(n, m).T
    np.testing.assert_allclose(got, 0.5 * a.T @ b + 2.0 * c, rtol=1e-5, atol=1e-5)


def test_level1_results_come_back_in_the_reply(handle: int) -> None:
    x = np.arange(1, 101, dtype=np.float64)
    y = np.cos(x)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    status, _, _ = call(handle, R_AXPY, CUDA_R_64F, [100, dx.ptr, 1, dy.ptr, 1], alpha=-2.0)
    assert status == 0
    y2 = y - 2 * x
    np.testing.assert_allclose(dy.get(), y2)
    status, value, _ = call(handle, R_DOT, CUDA_R_64F, [100, dx.ptr, 1, dy.ptr, 1])
    assert status == 0 and value == pytest.approx(float(x @ y2))
    status, _, index = call(handle, R_IAMAX, CUDA_R_64F, [100, dy.ptr, 1])
    assert (status, index) == (0, int(np.argmax(np.abs(y2))) + 1)


def test_statuses_as_cublas_numbers_them(handle: int) -> None:
    d = cuda.zeros(64, np.float32)
    bad_lda = gemm_ints(0, 0, 8, 8, 8, d.ptr, 4, d.ptr, 8, d.ptr, 8)
    assert call(handle, R_GEMM, CUDA_R_32F, bad_lda, 1.0, 0.0)[0] == native.STATUS["CUBLAS_STATUS_INVALID_VALUE"]
    half_compute = gemm_ints(0, 0, 2, 2, 2, d.ptr, 2, d.ptr, 2, d.ptr, 2, at=CUDA_R_16F, ct=CUDA_R_16F, compute=64)
    assert call(handle, R_GEMM, CUDA_R_16F, half_compute, 1.0)[0] == native.STATUS["CUBLAS_STATUS_NOT_SUPPORTED"]
    bad_op = gemm_ints(7, 0, 2, 2, 2, d.ptr, 2, d.ptr, 2, d.ptr, 2)
    assert call(handle, R_GEMM, CUDA_R_32F, bad_op, 1.0)[0] == native.STATUS["CUBLAS_STATUS_INVALID_VALUE"]
    assert call(handle + 999, R_AXPY, CUDA_R_32F, [1, d.ptr, 1, d.ptr, 1], 1.0)[0] == \
        native.STATUS["CUBLAS_STATUS_NOT_INITIALIZED"]
    assert call(handle, 99, CUDA_R_32F, [])[0] == native.STATUS["CUBLAS_STATUS_NOT_SUPPORTED"]


def test_destroyed_handle_is_not_initialized() -> None:
    _, _, _, h = native.REPLY.unpack(native._create(b"\0\0\0\0"))
    assert native.REPLY.unpack(native._destroy(h.to_bytes(8, "little")))[0] == 0
    assert native.REPLY.unpack(native._destroy(h.to_bytes(8, "little")))[0] == \
        native.STATUS["CUBLAS_STATUS_NOT_INITIALIZED"]
