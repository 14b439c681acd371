"""strata.libs.sparse: the role of cuSPARSE / rocSPARSE. Sparse-times-dense products as CUDA C++ kernels run
by the virtual GPU, behind cuSPARSE's generic API: a handle bound to a stream, CSR and COO matrix descriptors
over device arrays (float32/float64 values, int32/int64 indices), `spmv` (cusparseSpMV) and `spmm`
(cusparseSpMM, row-major dense operands), each with op 'N' or 'T'. The kernel each call chose is in its L4
trace event and `handle.last_kernel`. The framework's `torch.sparse.mm` on "cuda" goes through `spmm`.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> h = create_handle()
    >>> a = create_coo(2, 2, cuda.to_device(np.array([0, 1, 1])), cuda.to_device(np.array([1, 0, 1])),
    ...                cuda.to_device(np.array([2.0, 3.0, 4.0], np.float32)))
    >>> c = cuda.zeros(4, np.float32)
    >>> spmm(h, "N", 1.0, a, cuda.to_device(np.array([1, 2, 3, 4], np.float32)), 0.0, c, 2)
    >>> c.get().reshape(2, 2).tolist(), h.last_kernel
    ([[6.0, 8.0], [15.0, 22.0]], 'scale_dense+coo_scatter')
"""

from strata.libs.sparse.handle import Handle, SpMat, create_coo, create_csr, create_handle, destroy_handle, set_stream
from strata.libs.sparse.products import spmm, spmv

__all__ = ["Handle", "SpMat", "create_coo", "create_csr", "create_handle", "destroy_handle", "set_stream", "spmm",
           "spmv"]
