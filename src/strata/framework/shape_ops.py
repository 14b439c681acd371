"""Shape ops with PyTorch's names and semantics: views (`narrow`, `split`, `chunk`, `unbind`, `movedim`,
`swapaxes`, `broadcast_to`, `unflatten`, `diagonal`), copies (`repeat`, `tile`, `repeat_interleave`,
`flip`, `roll`, `diag`) and products built from matmul (`outer`, `bmm`, `einsum`); with gradients.

Views share storage and only change shape/strides/offset (host-side metadata). Copies go through the
strided copy kernel on "cuda" (`ops.copy_into`: a flip is a copy from a negative-stride view, a roll two
copies between slices); products reach strata.libs.blas through `linalg.matmul`. `einsum` reduces any
contraction to diagonals, sums, permutes, reshapes and one batched matmul per pair of operands, so its
gradient comes from those ops.

Example:
    >>> import strata
    >>> x = strata.arange(6).reshape(2, 3)
    >>> [t.tolist() for t in x.split([1, 2], dim=1)], x.flip(0).tolist(), x.roll(1, 1).tolist()
    ([[[0], [3]], [[1, 2], [4, 5]]], [[3, 4, 5], [0, 1, 2]], [[2, 0, 1], [5, 3, 4]])
    >>> a = strata.ones(2, 3)
    >>> strata.einsum("ij,kj->ik", a, a).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from strata.framework import autograd, linalg, reductions
from strata.framework.ops import _check_same_device, _fit, copy_into, empty, full, record, record_view
from strata.framework.tensor import Tensor, _shape_arg, _wrap_dim


# ----------------------------------------------------------------------------------------- views
def _raw_narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """x[..., start:start+length, ...] along dim as a plain view (no autograd)."""
    shape = list(x.shape)
    shape[dim] = length
    return x._view(shape, x.stride(), x.storage_offset() + start * x.stride(dim))


def _slice_node(x: Tensor, out: Tensor, dim: int, start: int, name: str) -> Tensor:
    """Record a view that is x's slice [start, start + out.shape[dim]) along dim (size-1 dim dropped when
    out has one dim less): its gradient is g written into zeros of x's shape."""
    orig = x.shape
    keeps = out.dim() == x.dim()

    def bw(g: Tensor) -> tuple:
        n = g.shape[dim] if keeps else 1
        z = full(orig, 0, g.dtype, g.device)
        copy_into(_raw_narrow(z, dim, start, n), g if keeps else g.unsqueeze(dim))

        def bw2(gg: Tensor) -> tuple:  # under create_graph the scatter is differentiable: its gradient is the slice
            s = narrow(gg, dim, start, n)
            return (s if keeps else s.squeeze(dim),)
        return (record(z, [g], "SliceBackwardBackward0", bw2),)
    return record_view(x, out, name, bw)


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:  # noqa: A002
    """The view input[..., start:start+length, ...] along `dim` (start may be negative).

    Raises:
        IndexError: dim out of range. RuntimeError: the range leaves the dim.
    """
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    start = int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice_node(input, _raw_narrow(input, d, start, length), d, start, "SliceBackward0")


def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Views of consecutive pieces along `dim`: of size `split_size_or_sections` (the last may be
    smaller), or of the listed sizes (which must add up to the dim's size)."""
    d = _wrap_dim(dim, tensor.dim())
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and size != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sizes = [min(step, size - s) for s in range(0, size, step)] if step else [0]
        name = "SplitBackward0"
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
        name = "SplitWithSizesBackward0"
    out, start = [], 0
    for s in sizes:
        out.append(_slice_node(tensor, _raw_narrow(tensor, d, start, s), d, start, name))
        start += s
    return tuple(out)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """At most `chunks` views along `dim`, each of ceil(size / chunks) elements (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if size == 0:
        return tuple(_slice_node(input, _raw_narrow(input, d, 0, 0), d, 0, "SplitBackward0") for _ in range(chunks))
    return split(input, (size + chunks - 1) // chunks, d)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """The slices along `dim`, each without that dim (views)."""
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, input.dim())
    shape = [s for i, s in enumerate(input.shape) if i != d]
    st = [s for i, s in enumerate(input.stride()) if i != d]
    return tuple(_slice_node(input, input._view(shape, st, input.storage_offset() + i * input.stride(d)), d, i,
                             "UnbindBackward0") for i in range(input.shape[d]))


def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:  # noqa: A002
    """input with dims `source` moved to positions `destination`, the others keeping their order (a view)."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    n = input.dim()
    s = [_wrap_dim(x, n) for x in src]
    t = [_wrap_dim(x, n) for x in dst]
    if len(set(s)) != len(s):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(t)) != len(t):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order: list[int | None] = [None] * n
    for a, b in zip(s, t, strict=True):
        order[b] = a
    rest = iter(i for i in range(n) if i not in s)
    return input.permute([o if o is not None else next(rest) for o in order])


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:  # noqa: A002
    """input.transpose(axis0, axis1)."""
    return input.transpose(axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """input.transpose(dim0, dim1)."""
    return input.transpose(dim0, dim1)


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:  # noqa: A002
    """input.expand(size): a view with stride 0 on broadcast dims."""
    return input.expand(*size)


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:  # noqa: A002
    """Split dim `dim` into `sizes` (one may be -1)."""
    d = _wrap_dim(dim, input.dim())
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in sizes:
        if known == 0 or n % known:
            raise RuntimeError(f"shape '{sizes}' is invalid for input of size {n}")
        sizes[sizes.index(-1)] = n // known
    elif known != n:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({n}) in "
                           "the input tensor")
    return input.view(list(input.shape[:d]) + sizes + list(input.shape[d + 1:]))


def _diag_view(x: Tensor, offset: int, d1: int, d2: int) -> Tensor:
    """The plain view of x's diagonal `offset` over dims d1, d2, appended as the last dim."""
    s1, s2 = x.shape[d1], x.shape[d2]
    st1, st2 = x.stride(d1), x.stride(d2)
    start = x.storage_offset()
    if offset >= 0:
        n = max(0, min(s1, s2 - offset))
        start += offset * st2 if n else 0
    else:
        n = max(0, min(s1 + offset, s2))
        start -= offset * st1 if n else 0
    keep = [i for i in range(x.dim()) if i not in (d1, d2)]
    return x._view([x.shape[i] for i in keep] + [n], [x.stride(i) for i in keep] + [st1 + st2], start)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal `offset` (above the main one if > 0) of the planes over dim1, dim2, as the last dim
    (a view)."""
    n = input.dim()
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = _diag_view(input, offset, d1, d2)
    orig = input.shape

    def bw(g: Tensor) -> tuple:
        z = full(orig, 0, g.dtype, g.device)
        copy_into(_diag_view(z, offset, d1, d2), g)
        return (z,)
    return record_view(input, out, "DiagonalBackward0", bw)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """1-D input: a square matrix with input on diagonal `diagonal`; 2-D input: a copy of that diagonal."""
    if input.dim() == 1:
        n = input.shape[0] + abs(diagonal)
        out = full((n, n), 0, input.dtype, input.device)
        copy_into(_diag_view(out, diagonal, 0, 1), input)
        return record(out, [input], "DiagEmbedBackward0", lambda g: (_diag_view(g, diagonal, 0, 1),))
    if input.dim() != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    view = _diag_view(input, diagonal, 0, 1)
    out = copy_into(empty(view.shape, input.dtype, input.device), view)
    orig = input.shape

    def bw(g: Tensor) -> tuple:
        z = full(orig, 0, g.dtype, g.device)
        copy_into(_diag_view(z, diagonal, 0, 1), g)
        return (z,)
    return record(out, [input], "DiagonalBackward0", bw)


# ----------------------------------------------------------------------------------------- copies
def _repeat(x: Tensor, reps: Sequence[int], name: str) -> Tensor:
    """x tiled reps times along each dim (reps at least as long as x's dims; extra leading dims new)."""
    lead = len(reps) - x.dim()
    shape = [1] * lead + list(x.shape)
    # (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...) and copied: out[r * s + j] = x[j] per dim
    inter = [v for s in shape for v in (1, s)]
    big = [v for r, s in zip(reps, shape, strict=True) for v in (r, s)]
    with autograd.no_grad():
        src = x.reshape(inter).expand(*big)
        out = copy_into(empty(big, x.dtype, x.device), src).view([r * s for r, s in zip(reps, shape, strict=True)])
    orig = x.shape

    def bw(g: Tensor) -> tuple:
        g2 = g.reshape(big)
        g2 = reductions.sum(g2, list(range(0, 2 * len(shape), 2))) if big else g2
        return (_fit(g2.reshape(orig), x),)
    return record(out, [x], name, bw)


def repeat(input: Tensor, *sizes: Any) -> Tensor:  # noqa: A002
    """input tiled `sizes[i]` times along dim i (Tensor.repeat); sizes may add leading dims."""
    reps = _shape_arg(sizes)
    if len(reps) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: {list(reps)}")
    return _repeat(input, reps, "RepeatBackward0")


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:  # noqa: A002
    """repeat with `dims` padded by leading ones to input's number of dims."""
    reps = tuple(dims)
    reps = (1,) * (input.dim() - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(input: Tensor, repeats: Any, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """Each element repeated `repeats` times (an int, or a one-element tensor) along `dim` (of the
    flattened input when None)."""
    if isinstance(repeats, Tensor):
        if repeats.numel() != 1:
            raise NotImplementedError("repeat_interleave with a tensor of per-element repeats is not implemented")
        repeats = int(repeats.item())
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, x.dim())
    if x.dim() == 0:
        x = x.reshape(1)
    shape = list(x.shape)
    big = shape[:d + 1] + [repeats] + shape[d + 1:]
    out = x.unsqueeze(d + 1).expand(*big)
    shape[d] *= repeats
    return out.reshape(shape)


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:  # noqa: A002
    """A copy of input reversed along `dims`."""
    ds = [dims] if isinstance(dims, int) else list(dims)
    n = input.dim()
    wrapped = [_wrap_dim(d, max(n, 1)) for d in ds]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    st = list(input.stride())
    offset = input.storage_offset()
    for d in wrapped:
        if d < n and input.shape[d] > 1:
            offset += (input.shape[d] - 1) * st[d]
            st[d] = -st[d]
    view = input._view(input.shape, st, offset)  # negative strides: read backwards by the copy
    out = copy_into(empty(input.shape, input.dtype, input.device), view)
    return record(out, [input], "FlipBackward0", lambda g: (flip(g, wrapped),))


def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:  # noqa: A002
    """A copy of input with elements shifted by `shifts` along `dims` (wrapping around); without dims,
    the flattened input is rolled and the shape restored."""
    sh = [shifts] if isinstance(shifts, int) else list(shifts)
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        with autograd.no_grad():
            out = _roll(input.reshape(-1), sh, [0]).view(input.shape)
        return record(out, [input], "RollBackward0", lambda g: (roll(g, [-s for s in sh]),))
    ds = [dims] if isinstance(dims, int) else list(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    ds = [_wrap_dim(d, input.dim()) for d in ds]
    out = _roll(input, sh, ds)
    return record(out, [input], "RollBackward0", lambda g: (roll(g, [-s for s in sh], ds),))


def _roll(x: Tensor, shifts: list[int], dims: list[int]) -> Tensor:
    """Two slice copies per rolled dim (no autograd)."""
    cur = x
    for s, d in zip(shifts, dims, strict=True):
        n = cur.shape[d]
        out = empty(cur.shape, cur.dtype, cur.device)
        k = s % n if n else 0
        if k == 0:
            copy_into(out, cur)
        else:
            copy_into(_raw_narrow(out, d, k, n - k), _raw_narrow(cur, d, 0, n - k))
            copy_into(_raw_narrow(out, d, 0, k), _raw_narrow(cur, d, n - k, k))
        cur = out
    if cur is x:
        cur = copy_into(empty(x.shape, x.dtype, x.device), x)
    return cur


# ----------------------------------------------------------------------------------------- products
def outer(input: Tensor, vec2: Tensor) -> Tensor:  # noqa: A002
    """The outer product input[i] * vec2[j] of two 1-D tensors."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.dim()}-D")
    return input.unsqueeze(1) * vec2


ger = outer


def bmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    """Batched matrix product of (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, _, m = input.shape
    if mat2.shape[0] != b or mat2.shape[1] != m:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {m}] but got: "
                           f"[{mat2.shape[0]}, {mat2.shape[1]}].")
    return linalg.matmul(input, mat2)


def _parse_einsum(equation: str, operands: Sequence[Tensor]) -> tuple[list[list[str]], list[str]]:
    """Subscripts per operand and of the output, with '...' expanded to letters of its own."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for ch in eq:
        if not (ch.isalpha() or ch in ",.->"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(ch)} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
    used = {c for c in eq if c.isalpha()}
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    n_ell = 0
    subs: list[list[str]] = []
    for k, (term, op) in enumerate(zip(terms, operands, strict=True)):
        letters = term.replace("...", "")
        if "..." in term:
            e = op.dim() - len(letters)
            if e < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) is more than "
                                   f"the number of dimensions ({op.dim()}) for operand {k}")
            n_ell = max(n_ell, e)
            i = term.index("...")
            subs.append(list(term[:i]) + ["\0" + str(j) for j in range(e)] + list(term[i + 3:]))
        else:
            if len(letters) != op.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not "
                                   f"match the number of dimensions ({op.dim()}) for operand {k} and no ellipsis "
                                   "was given")
            subs.append(list(letters))
    # ellipsis dims align from the right: operand with e of them uses the last e placeholder letters
    ell = spare[:n_ell]
    for s in subs:
        e = sum(1 for c in s if c.startswith("\0"))
        it = iter(ell[n_ell - e:])
        s[:] = [next(it) if c.startswith("\0") else c for c in s]
    if arrow:
        out = list(rhs.replace("...", "\0")) if "..." in rhs else list(rhs)
        out = [c for x in out for c in (ell if x == "\0" else [x])]
        for c in out:
            if c not in ell and not any(c in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
        if len(set(out)) != len(out):
            raise RuntimeError(f"einsum(): output subscript {next(c for c in out if out.count(c) > 1)} appears more "
                               "than once in the output")
    else:
        counts: dict[str, int] = {}
        for s in subs:
            for c in s:
                if c not in ell:
                    counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, v in counts.items() if v == 1)
    return subs, out


def _prepare(x: Tensor, sub: list[str], keep: set[str]) -> tuple[Tensor, list[str]]:
    """Take diagonals of repeated subscripts, then sum out subscripts not in `keep`."""
    sub = list(sub)
    while True:
        rep = next((c for c in sub if sub.count(c) > 1), None)
        if rep is None:
            break
        i = sub.index(rep)
        j = sub.index(rep, i + 1)
        x = diagonal(x, 0, i, j)
        sub = [c for k, c in enumerate(sub) if k not in (i, j)] + [rep]
    drop = [i for i, c in enumerate(sub) if c not in keep]
    if drop:
        x = reductions.sum(x, drop)
        sub = [c for i, c in enumerate(sub) if i not in drop]
    return x, sub


def _contract(a: Tensor, sa: list[str], b: Tensor, sb: list[str], keep: set[str]) -> tuple[Tensor, list[str]]:
    """a, b -> their product over the subscripts they share and `keep` does not, as one batched matmul:
    a as (batch, free_a, contracted), b as (batch, contracted, free_b)."""
    a, sa = _prepare(a, sa, keep | set(sb))
    b, sb = _prepare(b, sb, keep | set(sa))
    size: dict[str, int] = {}
    for t, s in ((a, sa), (b, sb)):
        for c, n in zip(s, t.shape, strict=True):
            if size.get(c, 1) != 1 and n != 1 and size[c] != n:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                                   f"subscript {c} has size {size[c]} and {n}")
            size[c] = max(size.get(c, 1), n)
    batch = [c for c in sa if c in sb and c in keep]
    contracted = [c for c in sa if c in sb and c not in keep]
    free_a = [c for c in sa if c not in sb]
    free_b = [c for c in sb if c not in sa]
    a = a.permute([sa.index(c) for c in batch + free_a + contracted])
    b = b.permute([sb.index(c) for c in batch + contracted + free_b])
    a = a.expand(*[size[c] for c in batch + free_a + contracted])
    b = b.expand(*[size[c] for c in batch + contracted + free_b])
    nb, nfa, nc, nfb = (math.prod(size[c] for c in g) for g in (batch, free_a, contracted, free_b))
    r = linalg.matmul(a.reshape(nb, nfa, nc), b.reshape(nb, nc, nfb))
    return r.reshape([size[c] for c in batch + free_a + free_b]), batch + free_a + free_b


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over `operands` (a list of them is accepted too), e.g. "bij,bjk->bik",
    "i,j->ij", "ii->i", "bhqd,bhkd->bhqk", "..." for leading dims.

    Repeated subscripts in one operand take a diagonal; subscripts missing from the output are summed
    (inside one operand first, then between two operands by one batched matmul); operands are folded
    left to right.
    """
    ops_: list[Tensor] = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], list | tuple) \
        else list(operands)
    if not ops_:
        raise RuntimeError("einsum(): must provide at least one operand")
    _check_same_device(*ops_)
    subs, out = _parse_einsum(equation, ops_)
    x, sx = ops_[0], subs[0]
    for k in range(1, len(ops_)):
        later = set(out).union(*[set(s) for s in subs[k + 1:]])
        x, sx = _contract(x, sx, ops_[k], subs[k], later)
    x, sx = _prepare(x, sx, set(out))
    return x.permute([sx.index(c) for c in out]) if sx != out else x
