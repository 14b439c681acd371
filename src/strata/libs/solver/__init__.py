"""strata.libs.solver: the role of cuSOLVER (dense) / rocSOLVER. LU, Cholesky and QR factorizations and
solves as CUDA C++ kernels run by the virtual GPU, behind cuSOLVER's Dn argument lists: column-major
matrices with leading dimensions, a handle bound to a stream, LAPACK's `ipiv` and `info` on the device.

getrf/getrs (LU with partial pivoting), potrf/potrs (Cholesky), geqrf/orgqr (Householder QR), for
float32 and float64, plus `*_buffer_size` queries. See docs/solver.md.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> h = create_handle()
    >>> a = np.array([[0.0, 2.0], [1.0, 1.0]])                  # needs a row interchange
    >>> d_a = cuda.to_device(a.T.copy())                         # column-major storage
    >>> ipiv, info = cuda.zeros(2, np.int32), cuda.zeros(1, np.int32)
    >>> getrf(h, 2, 2, d_a, 2, ipiv, info)
    >>> ipiv.get().tolist(), int(info.get()[0])
    ([2, 2], 0)
    >>> b = cuda.to_device(np.array([4.0, 3.0]))                # solve a x = [4, 3]
    >>> getrs(h, 'N', 2, 1, d_a, 2, ipiv, b, 2, info)
    >>> b.get().tolist()
    [1.0, 2.0]
"""

from strata.libs.solver.dense import (
    geqrf,
    geqrf_buffer_size,
    getrf,
    getrf_buffer_size,
    getrs,
    orgqr,
    orgqr_buffer_size,
    potrf,
    potrf_buffer_size,
    potrs,
)
from strata.libs.solver.handle import Handle, create_handle, destroy_handle, set_stream

__all__ = ["Handle", "create_handle", "destroy_handle", "geqrf", "geqrf_buffer_size", "getrf", "getrf_buffer_size",
           "getrs", "orgqr", "orgqr_buffer_size", "potrf", "potrf_buffer_size", "potrs", "set_stream"]
