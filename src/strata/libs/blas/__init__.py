"""strata.libs.blas: the role of cuBLAS / rocBLAS. Dense linear algebra as CUDA C++ kernels run by the
virtual GPU, behind cuBLAS's argument lists: column-major matrices with leading dimensions, 'N'/'T'/'C'
transposes, a handle bound to a stream, results of reductions returned to the host.

Level 3: gemm (float32/float64/float16), gemm_ex (f16/bf16/f32/f64 with f32/tf32/f64 compute),
gemm_strided_batched, syrk, trsm. Levels 1-2: axpy, scal, dot, nrm2, asum, iamax, gemv, ger. Several
GEMM kernels (register-tiled SIMT, small-shape, split-K, tensor cores) are chosen per shape; the
choice is in each call's L4 trace event and `handle.last_kernel`. See docs/blas.md.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> h = create_handle()
    >>> m, n, k = 3, 2, 4
    >>> a = np.arange(m * k, dtype=np.float32).reshape(m, k)
    >>> b = np.ones((k, n), np.float32)
    >>> d_a, d_b = cuda.to_device(a.T.copy()), cuda.to_device(b.T.copy())  # column-major storage
    >>> d_c = cuda.zeros(m * n, np.float32)
    >>> gemm(h, 'N', 'N', m, n, k, 1.0, d_a, m, d_b, k, 0.0, d_c, m)
    >>> d_c.get().reshape(n, m).T.tolist()  # = a @ b
    [[6.0, 6.0], [22.0, 22.0], [38.0, 38.0]]
"""

from strata.libs.blas.handle import Handle, create_handle, destroy_handle, set_stream
from strata.libs.blas.level3 import gemm, gemm_ex, gemm_strided_batched, syrk, trsm
from strata.libs.blas.level12 import asum, axpy, dot, gemv, ger, iamax, nrm2, scal

__all__ = ["Handle", "asum", "axpy", "create_handle", "destroy_handle", "dot", "gemm", "gemm_ex",
           "gemm_strided_batched", "gemv", "ger", "iamax", "nrm2", "scal", "set_stream", "syrk", "trsm"]
