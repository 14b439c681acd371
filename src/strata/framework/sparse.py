"""Sparse COO matrices (`torch.sparse_coo_tensor`, `Tensor.to_sparse`, `torch.sparse.mm`, `torch.spmm`):
a 2-D matrix held as `indices` (2 x nnz, int64) and `values` (nnz), with the sparse-times-dense product
that graph networks use (`adj @ features`).

On "cuda" (float32/float64) the product is one `strata.libs.sparse.spmm` call (the cusparseSpMM role: a
COO scatter kernel), wrapped in an autograd Function: the dense operand's gradient is the transposed
product (the same library call with rows and columns swapped), the values' gradient a gather of
grad_out[row] . dense[col] per nonzero. Elsewhere ("cpu", other dtypes) it is composed from the framework's
differentiable ops (gather the dense rows named by the column indices, scale them by the values,
`index_add` them into the output rows). Gradients reach both `values` and the dense operand either way.

Example:
    >>> import strata
    >>> from strata.framework import sparse
    >>> a = sparse.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> sparse.mm(a, strata.ones(3, 2)).tolist(), a.to_dense().tolist()
    ([[3.0, 3.0], [9.0, 9.0]], [[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import joining, linalg
from strata.framework.autograd import Function
from strata.framework.creation import as_tensor, tensor, zeros
from strata.framework.device import device as _device
from strata.framework.tensor import Size, Tensor


class SparseCOOTensor:
    """A 2-D sparse matrix in coordinate format (PyTorch's `torch.sparse_coo` layout).

    Raises:
        ValueError: indices not of shape (2, nnz), values not of shape (nnz,), an index outside `size`.
    """

    is_sparse = True
    layout = "torch.sparse_coo"

    def __init__(self, indices: Tensor, values: Tensor, size: tuple[int, int], coalesced: bool = False) -> None:
        if indices.dim() != 2 or indices.shape[0] != 2:
            raise ValueError(f"sparse_coo_tensor: strata supports 2-D sparse matrices; indices must have shape "
                             f"(2, nnz), got {tuple(indices.shape)}")
        if values.dim() != 1 or values.shape[0] != indices.shape[1]:
            raise ValueError(f"sparse_coo_tensor: values must have shape (nnz,) = ({indices.shape[1]},), got "
                             f"{tuple(values.shape)}")
        if len(size) != 2:
            raise ValueError(f"sparse_coo_tensor: size must have 2 dimensions, got {tuple(size)}")
        if indices.shape[1]:
            # indices are host metadata in PyTorch's checks too (it validates them on construction)
            ix = indices.cpu().numpy()
            for d in range(2):
                lo, hi = int(ix[d].min()), int(ix[d].max())
                if lo < 0 or hi >= size[d]:
                    raise ValueError(f"sparse_coo_tensor: index {hi if hi >= size[d] else lo} in dimension {d} is "
                                     f"out of bounds for size {tuple(size)}")
        self._ix, self._v = indices.long(), values
        self._size = Size(size)
        self._coalesced = coalesced

    # ---- attributes
    @property
    def shape(self) -> Size:
        return self._size

    def size(self, dim: int | None = None) -> Any:
        return self._size if dim is None else self._size[dim]

    def dim(self) -> int:
        return 2

    @property
    def dtype(self) -> dt.dtype:
        return self._v.dtype

    @property
    def device(self) -> _device:
        return self._v.device

    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    def _indices(self) -> Tensor:
        return self._ix

    def _values(self) -> Tensor:
        return self._v

    def indices(self) -> Tensor:
        """The (2, nnz) coordinates (PyTorch asks for a coalesced tensor here)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._ix

    def values(self) -> Tensor:
        """The nnz values (PyTorch asks for a coalesced tensor here)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._v

    def _nnz(self) -> int:
        return int(self._ix.shape[1])

    def is_coalesced(self) -> bool:
        return self._coalesced

    def __repr__(self) -> str:
        return (f"tensor(indices={self._ix!r},\n       values={self._v!r},\n       size={tuple(self._size)}, "
                f"nnz={self._nnz()}, layout=torch.sparse_coo)")

    # ---- conversions
    def coalesce(self) -> SparseCOOTensor:
        """Indices sorted row-major and duplicates summed (the sum is an index_add, so it is differentiable)."""
        if self._coalesced:
            return self
        ix = self._ix.cpu().numpy()
        lin = ix[0] * self._size[1] + ix[1]
        uniq, inverse = np.unique(lin, return_inverse=True)
        vals = zeros(len(uniq), dtype=self._v.dtype, device=self._v.device)
        vals = vals.index_add(0, as_tensor(inverse.astype(np.int64)).to(self._v.device), self._v)
        new_ix = np.stack([uniq // self._size[1], uniq % self._size[1]]).astype(np.int64)
        return SparseCOOTensor(as_tensor(new_ix).to(self._v.device), vals, tuple(self._size), coalesced=True)

    def to_dense(self) -> Tensor:
        """The dense matrix (duplicates summed)."""
        lin = self._ix[0] * self._size[1] + self._ix[1]
        flat = zeros(self._size[0] * self._size[1], dtype=self._v.dtype, device=self._v.device)
        return flat.index_add(0, lin, self._v).reshape(tuple(self._size))

    def to(self, *args: Any, **kwargs: Any) -> SparseCOOTensor:
        """Moves or casts the values (indices follow the device)."""
        v = self._v.to(*args, **kwargs)
        return SparseCOOTensor(self._ix.to(v.device), v, tuple(self._size), self._coalesced)

    def cuda(self, device: Any = None) -> SparseCOOTensor:
        return self.to(device if device is not None else "cuda")

    def cpu(self) -> SparseCOOTensor:
        return self.to("cpu")

    def float(self) -> SparseCOOTensor:
        return self.to(dt.float32)

    def double(self) -> SparseCOOTensor:
        return self.to(dt.float64)

    def t(self) -> SparseCOOTensor:
        """The transpose (rows and columns swapped)."""
        return SparseCOOTensor(joining.stack([self._ix[1], self._ix[0]]), self._v, (self._size[1], self._size[0]))

    def mm(self, other: Tensor) -> Tensor:
        return mm(self, other)

    def __matmul__(self, other: Tensor) -> Tensor:
        return mm(self, other)

    def __mul__(self, other: Any) -> SparseCOOTensor:
        if isinstance(other, Tensor) and other.dim() > 0:
            raise NotImplementedError("strata's sparse COO tensors multiply by scalars only")
        return SparseCOOTensor(self._ix, self._v * other, tuple(self._size), self._coalesced)

    __rmul__ = __mul__


def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, *, dtype: Any = None, device: Any = None,
                      requires_grad: bool = False, check_invariants: Any = None,
                      is_coalesced: bool | None = None) -> SparseCOOTensor:
    """torch.sparse_coo_tensor for 2-D matrices: `size` defaults to one past the largest index per dim."""
    ix = indices if isinstance(indices, Tensor) else tensor(indices, dtype=dt.int64)
    v = values if isinstance(values, Tensor) else tensor(values, dtype=dtype)
    if dtype is not None:
        v = v.to(dt.as_dtype(dtype))
    if device is not None:
        ix, v = ix.to(device), v.to(device)
    if size is None:
        host = ix.cpu().numpy()
        size = (int(host[0].max()) + 1, int(host[1].max()) + 1) if host.shape[1] else (0, 0)
    if requires_grad:
        v = v.detach().requires_grad_(True)
    rows, cols = (int(s) for s in size)
    return SparseCOOTensor(ix.to(v.device), v, (rows, cols), coalesced=bool(is_coalesced))


def to_sparse(t: Tensor, sparse_dim: int | None = None) -> SparseCOOTensor:
    """`Tensor.to_sparse()`: the nonzero entries of a 2-D tensor, coalesced (values keep the gradient path)."""
    if t.dim() != 2 or (sparse_dim is not None and sparse_dim != 2):
        raise NotImplementedError(f"to_sparse: strata's sparse COO tensors are 2-D matrices (got a {t.dim()}-D "
                                  f"tensor, sparse_dim={sparse_dim})")
    nz = t.nonzero()
    rows, cols = nz[:, 0], nz[:, 1]
    return SparseCOOTensor(joining.stack([rows, cols]), t[rows, cols], (t.shape[0], t.shape[1]), coalesced=True)


def mm(mat1: Any, mat2: Any) -> Any:
    """sparse @ dense -> dense (gradients to the sparse values and the dense matrix); dense @ dense is
    matmul; dense @ sparse is the transpose of sparse^T @ dense^T."""
    if isinstance(mat1, SparseCOOTensor):
        if not isinstance(mat2, Tensor) or mat2.dim() not in (1, 2):
            raise RuntimeError("sparse.mm: the second operand must be a dense 1-D or 2-D tensor")
        if mat2.shape[0] != mat1.shape[1]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                               f"{'x'.join(str(s) for s in mat2.shape)})")
        vec = mat2.dim() == 1
        dense = mat2.unsqueeze(1) if vec else mat2
        rows, cols = mat1._ix[0], mat1._ix[1]
        if _library_path(mat1._v, dense):
            out = _SpMM.apply(mat1._v, dense, rows, cols, mat1.shape[0])
        else:
            contrib = dense.index_select(0, cols) * mat1._v.unsqueeze(1)
            out = zeros(mat1.shape[0], dense.shape[1], dtype=contrib.dtype,
                        device=dense.device).index_add(0, rows, contrib)
        return out.squeeze(1) if vec else out
    if isinstance(mat2, SparseCOOTensor):
        return mm(mat2.t(), mat1.t()).t()
    return linalg.matmul(mat1, mat2)


def _library_path(values: Tensor, dense: Tensor) -> bool:
    """Whether sparse @ dense goes to strata.libs.sparse: both on one "cuda" device, float32 or float64."""
    return (values.device.type == "cuda" and dense.device == values.device and values.dtype == dense.dtype
            and values.dtype in (dt.float32, dt.float64))


class _SpMM(Function):
    """out[m, n] = sum over nonzeros j with rows[j] = m of values[j] * dense[cols[j], :], through
    strata.libs.sparse (a COO descriptor over the tensors' own device memory; indices stay int64)."""

    @staticmethod
    def forward(ctx: Any, values: Tensor, dense: Tensor, rows: Tensor, cols: Tensor, m: int) -> Tensor:
        from strata.framework.handles import library, library_handle
        from strata.framework.ops import device_array

        values, dense = values.contiguous(), dense.contiguous()
        rows, cols = rows.contiguous(), cols.contiguous()
        n = dense.shape[1]
        out = zeros(m, n, dtype=values.dtype, device=values.device)
        lib = library("sparse")
        a = lib.create_coo(m, dense.shape[0], device_array(rows), device_array(cols), device_array(values))
        lib.spmm(library_handle("sparse", values.device), "N", 1.0, a, device_array(dense), 0.0, device_array(out), n)
        ctx.save_for_backward(values, dense, rows, cols)
        ctx.k = dense.shape[0]
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        values, dense, rows, cols = ctx.saved_tensors
        grad_values = grad_dense = None
        if ctx.needs_input_grad[0]:  # d out[r, :] / d values[j] = dense[c, :]  (r, c = rows[j], cols[j])
            grad_values = (grad.index_select(0, rows) * dense.index_select(0, cols)).sum(1)
        if ctx.needs_input_grad[1]:  # A^T @ grad: the same product with rows and columns swapped
            grad_dense = _SpMM.apply(values, grad, cols, rows, ctx.k)
        return grad_values, grad_dense, None, None, None


def addmm(input: Tensor, mat1: Any, mat2: Any, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), mat1 sparse or dense."""
    return input * beta + mm(mat1, mat2) * alpha


def FloatTensor(indices: Any, values: Any, size: Any = None) -> SparseCOOTensor:  # noqa: N802 - PyTorch's name
    """The legacy `torch.sparse.FloatTensor(indices, values, size)`."""
    return sparse_coo_tensor(indices, values, size, dtype=dt.float32)


spmm = mm

__all__ = ["FloatTensor", "SparseCOOTensor", "addmm", "mm", "sparse_coo_tensor", "spmm", "to_sparse"]
