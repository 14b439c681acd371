"""Sampling and sliding-block ops, as torch.nn.functional's: `unfold` / `fold` (im2col and its adjoint, col2im),
and the spatial-transformer pair `affine_grid` (the sampling grid of a batch of
2-D affine transforms) and `grid_sample` (read an image at grid positions: modes 'bilinear' and
'nearest', padding 'zeros' and 'border', `align_corners` both ways) for 4-D input. Both are compositions
of differentiable framework ops (matmul; gather of the four neighbours with their bilinear weights), so
gradients reach the image and the grid (and through it the transform), on "cpu" and "cuda".

Example:
    >>> import strata
    >>> from strata.framework.nn.sampling import affine_grid, grid_sample
    >>> img = strata.arange(16.0).reshape(1, 1, 4, 4)
    >>> identity = strata.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> out = grid_sample(img, affine_grid(identity, [1, 1, 4, 4], align_corners=False), align_corners=False)
    >>> bool((out - img).abs().max() < 1e-5)
    True
"""

from __future__ import annotations

from typing import Any

from strata.framework import dtypes as dt
from strata.framework import joining, linalg
from strata.framework.creation import linspace, ones, zeros
from strata.framework.nn import functional as F
from strata.framework.tensor import Tensor


def _base(n: int, align_corners: bool, like: Tensor) -> Tensor:
    """The normalised coordinates of n pixel centres (or edges, with align_corners) in [-1, 1]."""
    if n <= 1:
        return linspace(0.0, 0.0, max(n, 1), dtype=like.dtype, device=like.device)
    steps = linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return steps if align_corners else steps * (n - 1) / n  # PyTorch's order of operations (same rounding)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """(N, H, W, 2) sampling grid (x, y) of the affine maps theta (N, 2, 3) over an output of size
    (N, C, H, W).

    Raises:
        ValueError: theta not (N, 2, 3) floating point, or size not 4-D (5-D grids are not implemented).
    """
    ac = bool(align_corners)
    if len(size) != 4:
        raise NotImplementedError("affine_grid: strata implements 4-D (2-D spatial) grids only")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    n, _, h, w = (int(s) for s in size)
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3) or theta.shape[0] != n:
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. Got "
                         f"{list(theta.shape)}.")
    xs = _base(w, ac, theta).reshape(1, w).expand(h, w)
    ys = _base(h, ac, theta).reshape(h, 1).expand(h, w)
    base = joining.stack([xs, ys, ones(h, w, dtype=theta.dtype, device=theta.device)], -1)  # (H, W, 3)
    grid = linalg.matmul(base.reshape(1, h * w, 3), theta.transpose(1, 2))  # (N, H*W, 2)
    return grid.reshape(n, h, w, 2)


def _unnormalise(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    # PyTorch's formulas, operation for operation: a sample landing exactly on a pixel takes the same
    # neighbour cell (and so the same one-sided gradient) as in PyTorch
    if align_corners:
        return ((coord + 1) / 2) * (size - 1)
    return ((coord + 1) * size - 1) / 2


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """Sample input (N, C, H, W) at grid (N, Ho, Wo, 2) positions (x, y in [-1, 1]): (N, C, Ho, Wo).

    Raises:
        NotImplementedError: a 5-D input, mode 'bicubic', or padding_mode 'reflection'.
        ValueError: an unknown mode / padding mode, or mismatched shapes.
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.dim() != 4 or mode == "bicubic" or padding_mode == "reflection":
        raise NotImplementedError(f"grid_sample: strata implements 4-D input with modes 'bilinear'/'nearest' and "
                                  f"padding 'zeros'/'border' (got {input.dim()}-D, {mode!r}, {padding_mode!r})")
    if grid.dim() != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise ValueError(f"grid_sample(): expected grid of shape (N, H_out, W_out, 2) with N={input.shape[0]}, "
                         f"got {list(grid.shape)}")
    ac = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    x = _unnormalise(grid[..., 0], w, ac)
    y = _unnormalise(grid[..., 1], h, ac)
    if padding_mode == "border":
        x, y = x.clamp(0, w - 1), y.clamp(0, h - 1)
    flat = input.reshape(n, c, h * w)

    def tap(ix: Tensor, iy: Tensor) -> Tensor:
        """input at integer positions (N, Ho, Wo), 0 outside the image: (N, C, Ho, Wo)."""
        inside = (ix >= 0).logical_and(ix <= w - 1).logical_and(iy >= 0).logical_and(iy <= h - 1)
        idx = (iy.clamp(0, h - 1) * w + ix.clamp(0, w - 1)).to(dt.int64).reshape(n, 1, ho * wo)
        vals = flat.gather(2, idx.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return vals * inside.to(input.dtype).unsqueeze(1)

    if mode == "nearest":
        # round half to even, as PyTorch's nearbyint
        return tap(x.detach().round(), y.detach().round())
    x0, y0 = x.detach().floor(), y.detach().floor()
    wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (tap(x0, y0) * wx0 * wy0 + tap(x0 + 1, y0) * wx1 * wy0 + tap(x0, y0 + 1) * wx0 * wy1
            + tap(x0 + 1, y0 + 1) * wx1 * wy1)


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:  # noqa: A002
    """im2col: the sliding blocks of (N, C, H, W) as columns, (N, C * kh * kw, L) (channel-major, then the
    kernel position, as PyTorch orders them).

    Raises:
        RuntimeError: not 3-D/4-D input, or no block fits.
    """
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    if x.dim() != 4:
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    x = F.pad(x, [pw, pw, ph, ph]) if ph or pw else x
    n, c, h, w = x.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({h - 2 * ph}, {w - 2 * pw}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of the array of sliding "
                           f"blocks as ({oh}, {ow}), but its components must be at least one.")
    blocks = [x[:, :, i * dh: i * dh + (oh - 1) * sh + 1: sh, j * dw: j * dw + (ow - 1) * sw + 1: sw]
              for i in range(kh) for j in range(kw)]
    out = joining.stack(blocks, 2).reshape(n, c * kh * kw, oh * ow)
    return out.squeeze(0) if unbatched else out


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
         stride: Any = 1) -> Tensor:
    """col2im, the adjoint of unfold: columns (N, C * kh * kw, L) summed back into (N, C, H, W) (overlaps add).

    Raises:
        RuntimeError: the column count or the block count does not match.
    """
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    oh_full, ow_full = _pair(output_size)
    unbatched = input.dim() == 2
    cols = input.unsqueeze(0) if unbatched else input
    n, ck, length = cols.shape
    if ck % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ck} and kernel_size=({kh}, {kw})")
    c = ck // (kh * kw)
    h, w = oh_full + 2 * ph, ow_full + 2 * pw
    bh, bw = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if bh * bw != length:
        raise RuntimeError(f"Given output_size=({oh_full}, {ow_full}), kernel_size=({kh}, {kw}), dilation=({dh}, "
                           f"{dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 "
                           f"to match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={length}.")
    blocks = cols.reshape(n, c, kh * kw, bh, bw)
    out = zeros(n, c, h, w, dtype=cols.dtype, device=cols.device)
    for i in range(kh):
        for j in range(kw):
            # each kernel position's block lands on a strided sub-grid; contributions sum where blocks overlap
            ys = slice(i * dh, i * dh + (bh - 1) * sh + 1, sh)
            xs = slice(j * dw, j * dw + (bw - 1) * sw + 1, sw)
            out[:, :, ys, xs] = out[:, :, ys, xs] + blocks[:, :, i * kw + j]
    out = out[:, :, ph: ph + oh_full, pw: pw + ow_full]
    return out.squeeze(0) if unbatched else out


FUNCTIONAL = {"affine_grid": affine_grid, "grid_sample": grid_sample, "unfold": unfold, "fold": fold}


__all__ = ["affine_grid", "fold", "grid_sample", "unfold"]
