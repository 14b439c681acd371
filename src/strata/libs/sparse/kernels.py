"""The kernels of strata.libs.sparse (CUDA C++), for float/double values and int32/int64 indices.

Dense operands are row-major with a leading dimension (elements between rows), as cuSPARSE's
CUSPARSE_ORDER_ROW dense descriptors. Two strategies, chosen by format and operation:

- gather (CSR, op 'N'): one thread per output element C[row, col] walks its row's nonzeros; no atomics,
  and C is written once (beta applied in the same pass), so results are deterministic.
- scatter (COO either way, CSR op 'T'): C is first scaled by beta, then one thread per (nonzero, column)
  adds alpha * a_ij * B[j, col] into its output row with atomicAdd; COO needs no sorting and A^T needs no
  transposed copy (rows and columns swap roles). The CSR scatter finds each nonzero's row by binary
  search over row_ptr.

Example:
    >>> kernel_name("csr_gather", np.dtype(np.float32), np.dtype(np.int64))
    'csr_gather<float, long long>'
"""

from __future__ import annotations

import numpy as np

from strata.libs.common import KernelSet

BLOCK = 256

SOURCE = r"""
template <typename T, typename I>
__global__ void csr_gather(int m, int n, const I* __restrict__ row_ptr, const I* __restrict__ col_ind,
                           const T* __restrict__ val, T alpha, const T* __restrict__ B, long long ldb, T beta,
                           T* C, long long ldc) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)m * n) return;
    int row = (int)(t / n), col = (int)(t % n);
    T acc = (T)0;
    for (I j = row_ptr[row]; j < row_ptr[row + 1]; ++j) acc += val[j] * B[(long long)col_ind[j] * ldb + col];
    T* c = C + (long long)row * ldc + col;
    *c = beta == (T)0 ? alpha * acc : alpha * acc + beta * *c;   // beta == 0: C may hold NaN garbage
}

template <typename T>
__global__ void scale_dense(int m, int n, T beta, T* C, long long ldc) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)m * n) return;
    T* c = C + (t / n) * ldc + t % n;
    *c = beta == (T)0 ? (T)0 : beta * *c;
}

// one thread per (nonzero, column): C[out_ind[j], col] += alpha * val[j] * B[in_ind[j], col]
template <typename T, typename I>
__global__ void coo_scatter(long long nnz, int n, const I* __restrict__ out_ind, const I* __restrict__ in_ind,
                            const T* __restrict__ val, T alpha, const T* __restrict__ B, long long ldb,
                            T* C, long long ldc) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nnz * n) return;
    long long j = t / n;
    int col = (int)(t % n);
    atomicAdd(C + (long long)out_ind[j] * ldc + col, alpha * val[j] * B[(long long)in_ind[j] * ldb + col]);
}

// A^T B for CSR A (m rows): nonzero j of row r adds alpha * val[j] * B[r, col] into C[col_ind[j], col]
template <typename T, typename I>
__global__ void csr_scatter_t(int m, long long nnz, int n, const I* __restrict__ row_ptr,
                              const I* __restrict__ col_ind, const T* __restrict__ val, T alpha,
                              const T* __restrict__ B, long long ldb, T* C, long long ldc) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nnz * n) return;
    long long j = t / n;
    int col = (int)(t % n);
    int lo = 0, hi = m;                       // the row r with row_ptr[r] <= j < row_ptr[r + 1]
    while (hi - lo > 1) { int mid = (lo + hi) / 2; if ((long long)row_ptr[mid] <= j) lo = mid; else hi = mid; }
    atomicAdd(C + (long long)col_ind[j] * ldc + col, alpha * val[j] * B[(long long)lo * ldb + col]);
}
"""

VALUE_TYPES: dict[np.dtype, str] = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
INDEX_TYPES: dict[np.dtype, str] = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}


def kernel_name(base: str, value: np.dtype, index: np.dtype | None = None) -> str:
    """The name expression of kernel `base` for a value (and index) type."""
    if index is None:
        return f"{base}<{VALUE_TYPES[value]}>"
    return f"{base}<{VALUE_TYPES[value]}, {INDEX_TYPES[index]}>"


_EXPRESSIONS = [kernel_name(b, v, i) for b in ("csr_gather", "coo_scatter", "csr_scatter_t")
                for v in VALUE_TYPES for i in INDEX_TYPES] + [kernel_name("scale_dense", v) for v in VALUE_TYPES]

KERNELS = KernelSet("sparse", SOURCE, name_expressions=_EXPRESSIONS)
