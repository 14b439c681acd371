"""Kernels in the style of the public GPU benchmark suites (Rodinia, Parboil, PolyBench-GPU, SHOC) and the
everyday idioms of public CUDA code, compiled by NVRTC with default options and run on the virtual GPU,
each against a NumPy / SciPy / math-module oracle.

The kernels are our own, written with the constructs the suites use (shared tiles with halos, wavefronts,
warp-per-row reductions, constant-memory tables, volatile warp-synchronous tails, templates, doubles,
function pointers, recursion...). Sources live in `suites/`. Where float results are compared with a
tolerance, the comment says why; integer and exactly-representable results are compared exactly.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda

SUITES = Path(__file__).with_name("suites")


def _module(name: str, exprs: tuple[str, ...] = ()) -> cuda.Module:
    path = SUITES / f"{name}.cu"
    return cuda.compile(path.read_text(), name=str(path), name_expressions=exprs)


def _run(mod: cuda.Module, kernel: str, grid: tuple[int, ...], block: tuple[int, ...], *args: object,
         shared: int = 0) -> list[np.ndarray]:
    """Launch once with host arrays copied in; return every array argument copied back, in order."""
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    mod.get_function(kernel).launch(grid, block, tuple(dev), shared_mem=shared)
    return [d.get() for d in dev if isinstance(d, cuda.DeviceArray)]


def _launch(mod: cuda.Module, kernel: str, grid: tuple[int, ...], block: tuple[int, ...], *args: object,
            shared: int = 0) -> None:
    """Launch on arguments already on the device (for multi-kernel pipelines)."""
    mod.get_function(kernel).launch(grid, block, tuple(args), shared_mem=shared)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _f32(x: np.ndarray | float) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


# ----------------------------------------------------------------------------------------------- Rodinia


def test_rodinia_backprop_layer_forward() -> None:
    rng = np.random.default_rng(100)
    n_in, hid = 64, 16
    inp = rng.uniform(0, 1, n_in + 1).astype(np.float32)
    w = rng.uniform(-1, 1, (n_in + 1, hid + 1)).astype(np.float32)
    *_, partial = _run(_module("backprop"), "layer_forward", (1, n_in // 16), (16, 16), inp, w,
                       np.zeros((n_in // 16, hid), np.float32), np.int32(hid))
    prod = (w[1:, 1:] * inp[1:, None]).reshape(n_in // 16, 16, hid)
    # the tree adds pairs at distance 1, 2, 4, 8: do the same pairwise float32 sums for a bit-exact match
    for _ in range(4):
        prod = prod[:, 0::2] + prod[:, 1::2]
    np.testing.assert_array_equal(partial, prod[:, 0])


def test_rodinia_backprop_adjust_weights() -> None:
    rng = np.random.default_rng(101)
    n_in, hid = 32, 16
    delta = rng.uniform(-1, 1, hid + 1).astype(np.float32)
    ly = rng.uniform(0, 1, n_in + 1).astype(np.float32)
    w = rng.uniform(-1, 1, (n_in + 1, hid + 1)).astype(np.float32)
    oldw = rng.uniform(-0.1, 0.1, (n_in + 1, hid + 1)).astype(np.float32)
    _, _, w_out, old_out = _run(_module("backprop"), "adjust_weights", (1, n_in // 16), (16, 16), delta,
                                np.int32(hid), ly, w.copy(), oldw.copy())
    d = np.float32(0.3) * delta[None, 1:] * ly[1:, None] + np.float32(0.3) * oldw[1:, 1:]
    b = np.float32(0.3) * delta[1:] + np.float32(0.3) * oldw[0, 1:]
    # fma contraction in the kernel: compare to the float64 evaluation within a few float32 ulps
    np.testing.assert_allclose(old_out[1:, 1:], d, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(w_out[1:, 1:], w[1:, 1:] + d, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(w_out[0, 1:], w[0, 1:] + b, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(w_out[:, 0], w[:, 0])


def test_rodinia_bfs_frontier() -> None:
    rng = np.random.default_rng(102)
    n = 600
    adj = [sorted(set(rng.integers(0, n, rng.integers(1, 5)).tolist())) for _ in range(n)]
    starts = np.cumsum([0] + [len(a) for a in adj[:-1]]).astype(np.int32)
    nodes = np.stack([starts, np.array([len(a) for a in adj], np.int32)], 1).astype(np.int32)
    edges = np.array([e for a in adj for e in a], np.int32)
    mask = np.zeros(n, np.bool_)
    visited = np.zeros(n, np.bool_)
    cost = np.full(n, -1, np.int32)
    mask[0] = visited[0] = True
    cost[0] = 0
    d_nodes, d_edges = cuda.to_device(nodes), cuda.to_device(edges)
    d_mask, d_upd, d_vis = cuda.to_device(mask), cuda.to_device(np.zeros(n, np.bool_)), cuda.to_device(visited)
    d_cost, d_over = cuda.to_device(cost), cuda.to_device(np.zeros(1, np.bool_))
    mod = _module("bfs")
    grid = (_cdiv(n, 128),)
    for _ in range(n):
        d_over.set(np.zeros(1, np.bool_))
        _launch(mod, "bfs_expand", grid, (128,), d_nodes, d_edges, d_mask, d_upd, d_vis, d_cost, np.int32(n))
        _launch(mod, "bfs_update", grid, (128,), d_mask, d_upd, d_vis, d_over, np.int32(n))
        if not d_over.get()[0]:
            break
    ref = np.full(n, -1)
    ref[0] = 0
    frontier = [0]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if ref[v] < 0:
                    ref[v] = ref[u] + 1
                    nxt.append(v)
        frontier = nxt
    np.testing.assert_array_equal(d_cost.get(), ref)


def test_rodinia_gaussian_elimination() -> None:
    rng = np.random.default_rng(103)
    size = 24
    a = rng.uniform(-1, 1, (size, size)).astype(np.float32) + np.eye(size, dtype=np.float32) * size
    b = rng.uniform(-1, 1, size).astype(np.float32)
    mod = _module("gaussian")
    d_m, d_a, d_b = cuda.to_device(np.zeros((size, size), np.float32)), cuda.to_device(a), cuda.to_device(b)
    for t in range(size - 1):
        _launch(mod, "fan1", (1,), (32,), d_m, d_a, np.int32(size), np.int32(t))
        _launch(mod, "fan2", (_cdiv(size, 8), _cdiv(size, 8)), (8, 8), d_m, d_a, d_b, np.int32(size), np.int32(t))
    upper, rhs = d_a.get().astype(np.float64), d_b.get().astype(np.float64)
    x = np.zeros(size)
    for i in range(size - 1, -1, -1):  # back substitution on the host, as Rodinia does
        x[i] = (rhs[i] - upper[i, i + 1:] @ x[i + 1:]) / upper[i, i]
    np.testing.assert_allclose(np.tril(upper, -1), 0, atol=1e-5)
    # diagonally dominant, so float32 elimination is accurate to ~1e-6 relative
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-5)


def test_rodinia_hotspot_shared_halo() -> None:
    rng = np.random.default_rng(104)
    rows, cols = 37, 45
    temp = rng.uniform(320, 340, (rows, cols)).astype(np.float32)
    power = rng.uniform(0, 1, (rows, cols)).astype(np.float32)
    cap_inv, rx, ry, rz, amb = 0.5, 0.1, 0.2, 0.05, 80.0
    mod = _module("hotspot")
    d_p, d_src, d_dst = cuda.to_device(power), cuda.to_device(temp), cuda.to_device(np.zeros_like(temp))
    steps = 3
    for _ in range(steps):
        _launch(mod, "hotspot_step", (_cdiv(cols, 16), _cdiv(rows, 16)), (16, 16), d_p, d_src, d_dst,
                np.int32(cols), np.int32(rows), *map(np.float32, (cap_inv, rx, ry, rz, amb)))
        d_src, d_dst = d_dst, d_src
    t = temp.astype(np.float64)
    for _ in range(steps):
        p = np.pad(t, 1, mode="edge")
        c = p[1:-1, 1:-1]
        t = c + cap_inv * (power + (p[2:, 1:-1] + p[:-2, 1:-1] - 2 * c) * ry + (p[1:-1, 2:] + p[1:-1, :-2] - 2 * c) * rx
                           + (amb - c) * rz)
    # float32 temperatures around 330 carry ~3e-5 absolute rounding per step
    np.testing.assert_allclose(d_src.get(), t, rtol=0, atol=5e-4)


def test_rodinia_kmeans_assign() -> None:
    rng = np.random.default_rng(105)
    npoints, nclusters, nfeat = 1000, 5, 8
    centres = rng.uniform(-5, 5, (nclusters, nfeat)).astype(np.float32)
    pts = (centres[rng.integers(0, nclusters, npoints)] + rng.standard_normal((npoints, nfeat))).astype(np.float32)
    membership = rng.integers(0, nclusters, npoints).astype(np.int32)
    _, _, memb, changed = _run(_module("kmeans"), "kmeans_assign", (_cdiv(npoints, 128),), (128,),
                               np.ascontiguousarray(pts.T), centres, membership.copy(), np.zeros(1, np.int32),
                               np.int32(npoints), np.int32(nclusters), np.int32(nfeat))
    d = ((pts[:, None, :].astype(np.float64) - centres[None]) ** 2).sum(-1)
    ref = d.argmin(1)
    srt = np.sort(d, 1)
    clear = srt[:, 1] - srt[:, 0] > 1e-3  # float32 distance rounding can only flip near-ties
    assert clear.mean() > 0.99
    np.testing.assert_array_equal(memb[clear], ref[clear])
    assert changed[0] == int((memb != membership).sum())


def _lu_nopivot(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64).copy()
    n = a.shape[0]
    for k in range(n - 1):
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


def test_rodinia_lud_blocked() -> None:
    rng = np.random.default_rng(106)
    dim = 48
    m = rng.uniform(0, 1, (dim, dim)).astype(np.float32) + np.eye(dim, dtype=np.float32) * dim
    mod = _module("lud")
    d_m = cuda.to_device(m)
    offset = 0
    while offset < dim - 16:
        _launch(mod, "lud_diagonal", (1,), (16,), d_m, np.int32(dim), np.int32(offset))
        nb = (dim - offset) // 16 - 1
        _launch(mod, "lud_perimeter", (nb,), (32,), d_m, np.int32(dim), np.int32(offset))
        _launch(mod, "lud_internal", (nb, nb), (16, 16), d_m, np.int32(dim), np.int32(offset))
        offset += 16
    _launch(mod, "lud_diagonal", (1,), (16,), d_m, np.int32(dim), np.int32(offset))
    # diagonally dominant: float32 LU agrees with the float64 one to a few ulps times dim
    np.testing.assert_allclose(d_m.get(), _lu_nopivot(m), rtol=1e-4, atol=1e-5)


def test_rodinia_nn_distances() -> None:
    rng = np.random.default_rng(107)
    n = 5000
    loc = np.stack([rng.uniform(-90, 90, n), rng.uniform(-180, 180, n)], 1).astype(np.float32)
    lat, lng = np.float32(30.5), np.float32(-90.25)
    _, dist = _run(_module("nn"), "euclid", (8, 5), (128,), loc, np.zeros(n, np.float32), np.int32(n), lat, lng)
    # (lat - p)^2 + (lng - q)^2 with one fma contraction and IEEE sqrtf: within 2 ulps of the exact value
    ref = np.sqrt((np.float64(lat) - loc[:, 0]) ** 2 + (np.float64(lng) - loc[:, 1]) ** 2)
    np.testing.assert_allclose(dist, ref, rtol=3e-7)


def test_rodinia_needleman_wunsch() -> None:
    rng = np.random.default_rng(108)
    n, penalty, bs = 64, 10, 16
    cols = n + 1
    ref = np.zeros((cols, cols), np.int32)
    ref[1:, 1:] = rng.integers(-10, 11, (n, n))
    item = np.zeros((cols, cols), np.int32)
    item[0, :] = -penalty * np.arange(cols)
    item[:, 0] = -penalty * np.arange(cols)
    expect = item.copy()
    for i in range(1, cols):
        for j in range(1, cols):
            expect[i, j] = max(expect[i - 1, j - 1] + ref[i, j], expect[i, j - 1] - penalty,
                               expect[i - 1, j] - penalty)
    mod = _module("nw")
    d_ref, d_item = cuda.to_device(ref), cuda.to_device(item)
    nb = n // bs
    for diag in range(2 * nb - 1):
        first = max(0, diag - nb + 1)
        count = min(diag, nb - 1) - first + 1
        _launch(mod, "nw_diagonal", (count,), (bs,), d_ref, d_item, np.int32(cols), np.int32(penalty),
                np.int32(diag), np.int32(first))
    np.testing.assert_array_equal(d_item.get(), expect)


def test_rodinia_pathfinder_pyramid() -> None:
    rng = np.random.default_rng(109)
    rows, cols, pyramid = 20, 300, 4
    wall = rng.integers(0, 10, (rows, cols)).astype(np.int32)
    mod = _module("pathfinder")
    bs = 64
    border = pyramid
    small = bs - 2 * pyramid
    d_wall = cuda.to_device(wall)
    d_a, d_b = cuda.to_device(wall[0].copy()), cuda.to_device(np.zeros(cols, np.int32))
    for t in range(0, rows - 1, pyramid):
        it = min(pyramid, rows - 1 - t)
        _launch(mod, "dynproc", (_cdiv(cols, small),), (bs,), np.int32(it), d_wall, d_a, d_b, np.int32(cols),
                np.int32(t + 1), np.int32(border))
        d_a, d_b = d_b, d_a
    ref = wall[0].astype(np.int64)
    for r in range(1, rows):
        p = np.pad(ref, 1, mode="edge")
        ref = wall[r] + np.minimum(np.minimum(p[:-2], p[1:-1]), p[2:])
    np.testing.assert_array_equal(d_a.get(), ref)


def test_rodinia_srad_diffusion() -> None:
    rng = np.random.default_rng(110)
    rows, cols, lam = 24, 40, 0.5
    J = np.exp(rng.uniform(0, 1, (rows, cols))).astype(np.float32)
    roi = J[:8, :8].astype(np.float64)
    q0sqr = np.float32(roi.var() / roi.mean() ** 2)
    mod = _module("srad")
    z = np.zeros_like(J)
    d_J, d_C = cuda.to_device(J), cuda.to_device(z)
    d_n, d_s, d_w, d_e = (cuda.to_device(z) for _ in range(4))
    grid = (_cdiv(cols, 16), _cdiv(rows, 16))
    _launch(mod, "srad1", grid, (16, 16), d_J, d_C, d_n, d_s, d_w, d_e, np.int32(cols), np.int32(rows), q0sqr)
    _launch(mod, "srad2", grid, (16, 16), d_J, d_C, d_n, d_s, d_w, d_e, np.int32(cols), np.int32(rows),
            np.float32(lam))
    j = J.astype(np.float64)
    p = np.pad(j, 1, mode="edge")
    n, s, w, e = p[:-2, 1:-1] - j, p[2:, 1:-1] - j, p[1:-1, :-2] - j, p[1:-1, 2:] - j
    g2 = (n * n + s * s + w * w + e * e) / (j * j)
    lap = (n + s + w + e) / j
    num = 0.5 * g2 - lap * lap / 16
    den = 1 + 0.25 * lap
    q = num / (den * den)
    den = (q - q0sqr) / (q0sqr * (1 + q0sqr))
    c = np.clip(1 / (1 + den), 0, 1)
    cp = np.pad(c, ((0, 1), (0, 1)), mode="edge")
    d = c * n + cp[1:, :-1] * s + c * w + cp[:-1, 1:] * e
    np.testing.assert_allclose(d_C.get(), c, rtol=1e-4, atol=1e-5)  # float32 quotients of small differences
    np.testing.assert_allclose(d_J.get(), j + 0.25 * lam * d, rtol=1e-5, atol=1e-5)


def test_rodinia_streamcluster_pgain() -> None:
    rng = np.random.default_rng(111)
    num, dim, k = 500, 6, 4
    coord = rng.uniform(0, 1, (dim, num)).astype(np.float32)
    point_dt = np.dtype([("weight", np.float32), ("assign", np.int32), ("cost", np.float32)])
    pts = np.zeros(num, point_dt)
    pts["weight"] = rng.uniform(0.5, 2, num)
    pts["assign"] = rng.integers(0, k, num)
    pts["cost"] = rng.uniform(0, 1.5, num)
    table = np.array([3, 0, 2, 1], np.int32)
    x = 17
    _, _, work, _, sw = _run(_module("streamcluster"), "pgain", (_cdiv(num, 128),), (128,), coord, pts.view(np.uint8),
                             np.zeros((num, k + 1), np.float32), table, np.zeros(num, np.int8), np.int32(num),
                             np.int32(dim), np.int32(x), np.int32(k), shared=dim * 4)
    dist = ((coord.astype(np.float64) - coord[:, x:x + 1]) ** 2).sum(0)
    x_cost = dist * pts["weight"]
    switch = x_cost < pts["cost"]
    clear = np.abs(x_cost - pts["cost"]) > 1e-4  # float32 distance rounding can only flip near-ties
    np.testing.assert_array_equal(sw[clear].astype(bool), switch[clear])
    ref = np.zeros((num, k + 1))
    ref[switch, k] = (x_cost - pts["cost"])[switch]
    ref[~switch, table[pts["assign"][~switch]]] = (pts["cost"] - x_cost)[~switch]
    np.testing.assert_allclose(work[clear], ref[clear], rtol=1e-5, atol=1e-5)
