"""Spatial-transformer sampling, as torch.nn.functional's: `affine_grid` (the sampling grid of a batch of
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
from strata.framework.creation import linspace, ones
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


FUNCTIONAL = {"affine_grid": affine_grid, "grid_sample": grid_sample}


__all__ = ["affine_grid", "grid_sample"]
