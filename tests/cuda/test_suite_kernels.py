"""Kernels in the style of the public GPU benchmark suites (Rodinia, Parboil, PolyBench-GPU, SHOC) and the
everyday idioms of public CUDA code, compiled by NVRTC with default options and run on the virtual GPU,
each against a NumPy / SciPy / math-module oracle.

The kernels are our own, written with the constructs the suites use (shared tiles with halos, wavefronts,
warp-per-row reductions, constant-memory tables, volatile warp-synchronous tails, templates, doubles,
function pointers, recursion...). Sources live in `suites/`. Where float results are compared with a
tolerance, the comment says why; integer and exactly-representable results are compared exactly.
"""

from __future__ import annotations

import functools
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


# ----------------------------------------------------------------------------------------------- Parboil


def _random_csr(rng: np.random.Generator, nrows: int, ncols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lens = rng.integers(0, 60, nrows)
    cols = [np.sort(rng.choice(ncols, int(n), replace=False)) for n in lens]
    row_ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    return row_ptr, np.concatenate(cols).astype(np.int32), rng.uniform(-1, 1, int(lens.sum())).astype(np.float32)


def test_parboil_spmv_jds() -> None:
    rng = np.random.default_rng(200)
    dim = 150
    row_ptr, cols, vals = _random_csr(rng, dim, dim)
    x = rng.uniform(-1, 1, dim).astype(np.float32)
    lens = np.diff(row_ptr)
    perm = np.argsort(-lens, kind="stable").astype(np.int32)  # rows by decreasing length
    slens = lens[perm]
    ndiag = int(slens[0])
    diag_len = np.array([(slens > k).sum() for k in range(ndiag)])
    jds_ptr = np.concatenate([[0], np.cumsum(diag_len)[:-1]]).astype(np.int32)
    data = np.zeros(int(diag_len.sum()), np.float32)
    idx = np.zeros(int(diag_len.sum()), np.int32)
    for r_sorted, r in enumerate(perm):
        for k in range(lens[r]):
            data[jds_ptr[k] + r_sorted] = vals[row_ptr[r] + k]
            idx[jds_ptr[k] + r_sorted] = cols[row_ptr[r] + k]
    mod = _module("spmv")
    addr, _ = mod.get_global("jds_ptr")
    cuda.memcpy(addr, jds_ptr, jds_ptr.nbytes, "HostToDevice")
    (y, *_) = _run(mod, "spmv_jds", (_cdiv(dim, 64),), (64,), np.zeros(dim, np.float32), data, idx, perm, x,
                   slens.astype(np.int32), np.int32(dim))
    # the row's products are summed in column order with fma: float64 reference, tolerance ~ nnz ulps
    ref = np.array([vals[row_ptr[r]:row_ptr[r + 1]].astype(np.float64) @ x[cols[row_ptr[r]:row_ptr[r + 1]]]
                    for r in range(dim)])
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_parboil_spmv_csr_warp_per_row() -> None:
    rng = np.random.default_rng(201)
    nrows, ncols = 100, 120
    row_ptr, cols, vals = _random_csr(rng, nrows, ncols)
    x = rng.uniform(-1, 1, ncols).astype(np.float32)
    *_, y = _run(_module("spmv"), "spmv_csr_warp", (_cdiv(nrows * 32, 128),), (128,), row_ptr, cols, vals, x,
                 np.zeros(nrows, np.float32), np.int32(nrows))
    ref = np.array([vals[row_ptr[r]:row_ptr[r + 1]].astype(np.float64) @ x[cols[row_ptr[r]:row_ptr[r + 1]]]
                    for r in range(nrows)])
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)  # lane-strided partial sums, then a tree


def test_parboil_stencil_7point() -> None:
    rng = np.random.default_rng(202)
    nx, ny, nz = 20, 18, 12
    a0 = rng.uniform(-1, 1, (nz, ny, nx)).astype(np.float32)
    c0, c1 = np.float32(1 / 6), np.float32(1 / 6 / 6)
    _, out = _run(_module("stencil7"), "stencil7", (_cdiv(nx - 2, 8), _cdiv(ny - 2, 8)), (8, 8), c0, c1, a0,
                  np.zeros_like(a0), np.int32(nx), np.int32(ny), np.int32(nz))
    a = a0.astype(np.float64)
    ref = (a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1] + a[1:-1, 2:, 1:-1] + a[1:-1, :-2, 1:-1] + a[1:-1, 1:-1, 2:]
           + a[1:-1, 1:-1, :-2]) * float(c1) - a[1:-1, 1:-1, 1:-1] * float(c0)
    np.testing.assert_allclose(out[1:-1, 1:-1, 1:-1], ref, rtol=0, atol=1e-6)  # six float32 adds of |x| <= 1
    assert not out[0].any() and not out[:, 0].any() and not out[:, :, 0].any()


def test_parboil_mri_q_constant_kspace() -> None:
    rng = np.random.default_rng(203)
    num_k, num_x = 300, 256
    kx, ky, kz = (rng.uniform(-0.5, 0.5, num_k).astype(np.float32) for _ in range(3))
    phi_r, phi_i = (rng.uniform(-1, 1, num_k).astype(np.float32) for _ in range(2))
    x, y, z = (rng.uniform(-4, 4, num_x).astype(np.float32) for _ in range(3))
    mod = _module("mriq")
    *_, phi_mag = _run(mod, "compute_phi_mag", (_cdiv(num_k, 128),), (128,), phi_r, phi_i,
                       np.zeros(num_k, np.float32), np.int32(num_k))
    np.testing.assert_allclose(phi_mag, phi_r.astype(np.float64) ** 2 + phi_i.astype(np.float64) ** 2, rtol=1e-6)
    addr, _ = mod.get_global("ck")
    d_x, d_y, d_z = cuda.to_device(x), cuda.to_device(y), cuda.to_device(z)
    d_qr, d_qi = cuda.to_device(np.zeros(num_x, np.float32)), cuda.to_device(np.zeros(num_x, np.float32))
    for base in range(0, num_k, 256):
        chunk = np.zeros((256, 4), np.float32)
        m = min(256, num_k - base)
        chunk[:m] = np.stack([kx, ky, kz, phi_mag], 1)[base:base + m]
        cuda.memcpy(addr, chunk, chunk.nbytes, "HostToDevice")
        _launch(mod, "compute_q", (_cdiv(num_x, 64),), (64,), np.int32(num_k), np.int32(base), d_x, d_y, d_z, d_qr,
                d_qi, np.int32(num_x))
    arg = 2 * np.pi * (np.outer(x, kx).astype(np.float64) + np.outer(y, ky) + np.outer(z, kz))
    # the float32 argument (|arg| up to ~40) carries ~4e-6 absolute error; 300 terms of |phi| <= 2
    np.testing.assert_allclose(d_qr.get(), (phi_mag * np.cos(arg)).sum(1), rtol=0, atol=2e-3)
    np.testing.assert_allclose(d_qi.get(), (phi_mag * np.sin(arg)).sum(1), rtol=0, atol=2e-3)


def test_parboil_tpacf_binary_search_histogram() -> None:
    rng = np.random.default_rng(204)
    n, nbins = 300, 20
    v = rng.standard_normal((n, 3))
    pts = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    iu = np.triu_indices(n, 1)
    dots = (pts.astype(np.float64) @ pts.T.astype(np.float64))[iu]
    # boundaries in the middle of gaps between neighbouring dot products, so float32 rounding of the
    # dot cannot move a pair across one
    s = np.sort(dots)
    gaps = np.diff(s)
    picks = [p - 50 + int(gaps[p - 50:p + 50].argmax()) for p in np.linspace(100, s.size - 100, nbins + 1).astype(int)]
    bounds = ((s[picks] + s[np.array(picks) + 1]) / 2)[::-1].astype(np.float32)
    assert (np.abs(dots[:, None] - bounds[None].astype(np.float64)).min(1) > 1e-6).all()
    mod = _module("tpacf")
    addr, _ = mod.get_global("binb")
    cuda.memcpy(addr, bounds, bounds.nbytes, "HostToDevice")
    *_, hist = _run(mod, "tpacf_hist", (16,), (128,), pts, np.int32(n), np.zeros(nbins + 2, np.uint64))
    ref = np.bincount((bounds[None, :].astype(np.float64) >= dots[:, None]).sum(1), minlength=nbins + 2)
    np.testing.assert_array_equal(hist, ref)


def test_parboil_cutcp_cutoff_sum() -> None:
    rng = np.random.default_rng(205)
    nx, ny, nz, h, cutoff = 24, 6, 5, 0.5, 3.0
    natoms = 150
    atoms = np.concatenate([rng.uniform(0, [nx * h, ny * h, nz * h], (natoms, 3)), rng.uniform(-1, 1, (natoms, 1))],
                           1).astype(np.float32)
    *_, lat = _run(_module("cutcp"), "cutcp", (1, ny, nz), (32,), atoms, np.int32(natoms),
                   np.zeros((nz, ny, nx), np.float32), np.int32(nx), np.int32(ny), np.int32(nz), np.float32(h),
                   np.float32(cutoff**2))
    g = np.stack(np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij"), -1)[..., ::-1] * h
    r2 = ((atoms[None, None, None, :, :3].astype(np.float64) - g[..., None, :]) ** 2).sum(-1)
    inside = r2 < cutoff**2
    s = 1 - r2 / cutoff**2
    ref = np.where(inside, atoms[:, 3] / np.sqrt(np.where(inside, r2, 1)) * s * s, 0).sum(-1)
    # rsqrtf is good to 2 ulps; atoms right at the cutoff contribute ~0 so the float32 test is harmless
    np.testing.assert_allclose(lat, ref, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------------------ PolyBench-GPU


def test_polybench_2mm() -> None:
    rng = np.random.default_rng(300)
    ni, nj, nk, nl = 32, 24, 20, 28
    A, B = rng.uniform(0, 1, (ni, nk)).astype(np.float32), rng.uniform(0, 1, (nk, nj)).astype(np.float32)
    C, D = rng.uniform(0, 1, (nj, nl)).astype(np.float32), rng.uniform(0, 1, (ni, nl)).astype(np.float32)
    alpha, beta = np.float32(1.5), np.float32(1.2)
    mod = _module("mm2")
    *_, tmp = _run(mod, "mm2_kernel1", (_cdiv(nj, 8), _cdiv(ni, 8)), (8, 8), np.int32(ni), np.int32(nj),
                   np.int32(nk), alpha, A, B, np.zeros((ni, nj), np.float32))
    *_, d = _run(mod, "mm2_kernel2", (_cdiv(nl, 8), _cdiv(ni, 8)), (8, 8), np.int32(ni), np.int32(nl),
                 np.int32(nj), beta, tmp, C, D.copy())
    ref_tmp = float(alpha) * A.astype(np.float64) @ B
    np.testing.assert_allclose(tmp, ref_tmp, rtol=1e-5)  # positive terms: relative error ~ k ulps
    np.testing.assert_allclose(d, ref_tmp @ C + float(beta) * D, rtol=1e-5)


def test_polybench_3mm_double() -> None:
    rng = np.random.default_rng(301)
    A, B, C, D = (rng.standard_normal(s) for s in ((20, 16), (16, 18), (18, 22), (22, 14)))
    mod = _module("mm3")

    def mm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        (*_, out) = _run(mod, "mm3_kernel", (_cdiv(y.shape[1], 8), _cdiv(x.shape[0], 8)), (8, 8),
                         np.int32(x.shape[0]), np.int32(y.shape[1]), np.int32(x.shape[1]), x, y,
                         np.zeros((x.shape[0], y.shape[1])))
        return out

    E, F = mm(A, B), mm(C, D)
    np.testing.assert_allclose(mm(E, F), (A @ B) @ (C @ D), rtol=1e-12, atol=1e-12)


def test_polybench_atax() -> None:
    rng = np.random.default_rng(302)
    nx, ny = 40, 50
    A = rng.uniform(-1, 1, (nx, ny)).astype(np.float32)
    x = rng.uniform(-1, 1, ny).astype(np.float32)
    mod = _module("atax")
    *_, tmp = _run(mod, "atax_kernel1", (1,), (64,), A, x, np.zeros(nx, np.float32), np.int32(nx), np.int32(ny))
    _, y, _ = _run(mod, "atax_kernel2", (1,), (64,), A, np.zeros(ny, np.float32), tmp, np.int32(nx), np.int32(ny))
    a = A.astype(np.float64)
    np.testing.assert_allclose(tmp, a @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, a.T @ (a @ x), rtol=1e-4, atol=1e-4)


def test_polybench_bicg() -> None:
    rng = np.random.default_rng(303)
    nx, ny = 45, 35
    A = rng.uniform(-1, 1, (nx, ny)).astype(np.float32)
    r, p = rng.uniform(-1, 1, nx).astype(np.float32), rng.uniform(-1, 1, ny).astype(np.float32)
    mod = _module("bicg")
    _, _, s, = _run(mod, "bicg_kernel1", (1,), (64,), A, r, np.full(ny, 7, np.float32), np.int32(nx), np.int32(ny))
    _, _, q = _run(mod, "bicg_kernel2", (1,), (64,), A, p, np.full(nx, 7, np.float32), np.int32(nx), np.int32(ny))
    np.testing.assert_allclose(s, A.T.astype(np.float64) @ r, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q, A.astype(np.float64) @ p, rtol=1e-5, atol=1e-5)


def test_polybench_gesummv_double() -> None:
    rng = np.random.default_rng(304)
    n = 50
    A, B, x = rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal(n)
    *_, y, _ = _run(_module("gesummv"), "gesummv", (1,), (64,), A, B, x, np.zeros(n), np.zeros(n), np.int32(n),
                    np.float64(1.5), np.float64(1.2))
    np.testing.assert_allclose(y, 1.5 * A @ x + 1.2 * B @ x, rtol=1e-12, atol=1e-12)


def test_polybench_mvt() -> None:
    rng = np.random.default_rng(305)
    n = 60
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    x1, x2, y1, y2 = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(4))
    mod = _module("mvt")
    _, o1, _ = _run(mod, "mvt_kernel1", (1,), (64,), a, x1.copy(), y1, np.int32(n))
    _, o2, _ = _run(mod, "mvt_kernel2", (1,), (64,), a, x2.copy(), y2, np.int32(n))
    np.testing.assert_allclose(o1, x1 + a.astype(np.float64) @ y1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o2, x2 + a.T.astype(np.float64) @ y2, rtol=1e-5, atol=1e-5)


def test_polybench_syrk() -> None:
    rng = np.random.default_rng(306)
    n, m = 30, 20
    a = rng.uniform(0, 1, (n, m)).astype(np.float32)
    c = rng.uniform(0, 1, (n, n)).astype(np.float32)
    _, out = _run(_module("syrk"), "syrk", (_cdiv(n, 8), _cdiv(n, 8)), (8, 8), a, c.copy(), np.float32(1.25),
                  np.float32(0.75), np.int32(n), np.int32(m))
    np.testing.assert_allclose(out, 0.75 * c + 1.25 * a.astype(np.float64) @ a.T, rtol=1e-5)


def test_polybench_correlation() -> None:
    rng = np.random.default_rng(307)
    m, n = 12, 40
    data = rng.uniform(0, 10, (n, m)).astype(np.float32)
    data[:, 5] = 3.0  # a constant column takes the eps path (stddev -> 1)
    mod = _module("correlation")
    d_data, d_mean, d_std = cuda.to_device(data), cuda.to_device(np.zeros(m, np.float32)), cuda.to_device(
        np.zeros(m, np.float32))
    d_sym = cuda.to_device(np.zeros((m, m), np.float32))
    _launch(mod, "corr_mean", (1,), (32,), d_mean, d_data, np.int32(m), np.int32(n))
    _launch(mod, "corr_std", (1,), (32,), d_mean, d_std, d_data, np.int32(m), np.int32(n))
    _launch(mod, "corr_reduce", (_cdiv(m, 8), _cdiv(n, 8)), (8, 8), d_mean, d_std, d_data, np.int32(m), np.int32(n))
    _launch(mod, "corr_corr", (1,), (32,), d_sym, d_data, np.int32(m), np.int32(n))
    d = data.astype(np.float64)
    std = d.std(0)
    std[std <= 0.005] = 1
    ref = np.corrcoef(np.delete(d, 5, 1), rowvar=False)
    got = np.delete(np.delete(d_sym.get(), 5, 0), 5, 1)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5)  # float32 sums of ~40 centred terms
    np.testing.assert_allclose(d_std.get(), std, rtol=1e-5)
    assert d_sym.get()[5, 5] == 1 and not d_sym.get()[5, :5].any()


def test_polybench_covariance_double() -> None:
    rng = np.random.default_rng(308)
    m, n = 10, 30
    data = rng.standard_normal((n, m))
    mod = _module("covariance")
    d_data, d_mean, d_sym = cuda.to_device(data), cuda.to_device(np.zeros(m)), cuda.to_device(np.zeros((m, m)))
    _launch(mod, "cov_mean", (1,), (32,), d_mean, d_data, np.float64(n), np.int32(m), np.int32(n))
    _launch(mod, "cov_reduce", (_cdiv(m, 8), _cdiv(n, 8)), (8, 8), d_mean, d_data, np.int32(m), np.int32(n))
    _launch(mod, "cov_covar", (1,), (32,), d_sym, d_data, np.int32(m), np.int32(n))
    np.testing.assert_allclose(d_sym.get(), np.cov(data, rowvar=False), rtol=1e-12, atol=1e-13)


def test_polybench_conv2d_conv3d() -> None:
    rng = np.random.default_rng(309)
    ni, nj = 30, 40
    A = rng.uniform(0, 1, (ni, nj)).astype(np.float32)
    mod = _module("conv")
    _, B = _run(mod, "conv2d", (_cdiv(nj, 16), _cdiv(ni, 8)), (16, 8), np.int32(ni), np.int32(nj), A,
                np.zeros_like(A))
    c = np.array([[0.2, -0.3, 0.4], [0.5, 0.6, 0.7], [-0.8, -0.9, 0.10]], np.float32).T  # c[di][dj]
    a = A.astype(np.float64)
    ref = sum(float(c[di, dj]) * a[di:ni - 2 + di, dj:nj - 2 + dj] for di in range(3) for dj in range(3))
    np.testing.assert_allclose(B[1:-1, 1:-1], ref, rtol=0, atol=2e-6)  # nine float32 terms of |x| < 1
    assert not B[0].any() and not B[:, -1].any()
    n3 = (8, 9, 10)
    A3 = rng.uniform(0, 1, n3).astype(np.float32)
    d_a, d_b = cuda.to_device(A3), cuda.to_device(np.zeros_like(A3))
    for i in range(1, n3[0] - 1):
        _launch(mod, "conv3d", (_cdiv(n3[2], 8), _cdiv(n3[1], 8)), (8, 8), *map(np.int32, n3), d_a, d_b, np.int32(i))
    a = A3.astype(np.float64)

    def s(di: int, dj: int, dk: int) -> np.ndarray:
        return a[1 + di:n3[0] - 1 + di, 1 + dj:n3[1] - 1 + dj, 1 + dk:n3[2] - 1 + dk]

    ref3 = (2 * s(-1, -1, -1) + 4 * s(1, -1, -1) + 5 * s(-1, -1, -1) + 7 * s(1, -1, -1) - 8 * s(-1, -1, -1)
            + 10 * s(1, -1, -1) - 3 * s(0, -1, 0) + 6 * s(0, 0, 0) - 9 * s(0, 1, 0) + 2 * s(-1, -1, 1)
            + 4 * s(1, -1, 1) + 5 * s(-1, 0, 1) + 7 * s(1, 0, 1) - 8 * s(-1, 1, 1) + 10 * s(1, 1, 1))
    np.testing.assert_allclose(d_b.get()[1:-1, 1:-1, 1:-1], ref3, rtol=0, atol=2e-5)  # 15 terms up to 10


def test_polybench_fdtd2d() -> None:
    rng = np.random.default_rng(310)
    nx, ny, tmax = 20, 24, 4
    ex, ey, hz = (rng.uniform(0, 1, (nx, ny)).astype(np.float32) for _ in range(3))
    fict = np.arange(tmax, dtype=np.float32)
    mod = _module("fdtd2d")
    d_f, d_ex, d_ey, d_hz = map(cuda.to_device, (fict, ex, ey, hz))
    grid = (_cdiv(ny, 8), _cdiv(nx, 8))
    for t in range(tmax):
        _launch(mod, "fdtd_step1", grid, (8, 8), d_f, d_ex, d_ey, d_hz, np.int32(t), np.int32(nx), np.int32(ny))
        _launch(mod, "fdtd_step2", grid, (8, 8), d_ex, d_ey, d_hz, np.int32(nx), np.int32(ny))
        _launch(mod, "fdtd_step3", grid, (8, 8), d_ex, d_ey, d_hz, np.int32(nx), np.int32(ny))
    x, y, h = (v.astype(np.float64) for v in (ex, ey, hz))
    for t in range(tmax):
        y[0, :] = t
        y[1:, :] -= 0.5 * (h[1:, :] - h[:-1, :])
        x[:, 1:] -= 0.5 * (h[:, 1:] - h[:, :-1])
        h[:-1, :-1] -= 0.7 * (x[:-1, 1:] - x[:-1, :-1] + y[1:, :-1] - y[:-1, :-1])
    for got, ref in ((d_ex, x), (d_ey, y), (d_hz, h)):
        np.testing.assert_allclose(got.get(), ref, rtol=0, atol=1e-5)  # a few float32 steps on O(1) fields


def test_polybench_jacobi_1d_2d() -> None:
    rng = np.random.default_rng(311)
    n, steps = 100, 5
    A = rng.uniform(0, 1, n).astype(np.float32)
    mod = _module("jacobi")
    d_a, d_b = cuda.to_device(A), cuda.to_device(np.zeros_like(A))
    for _ in range(steps):
        _launch(mod, "jacobi1d_k1", (1,), (128,), np.int32(n), d_a, d_b)
        _launch(mod, "jacobi1d_k2", (1,), (128,), np.int32(n), d_a, d_b)
    a = A.copy()
    for _ in range(steps):  # same float32 association: (A[i-1] + A[i]) + A[i+1], then the product
        a[1:-1] = np.float32(0.33333) * ((a[:-2] + a[1:-1]) + a[2:])
    np.testing.assert_array_equal(d_a.get(), a)
    m = 20
    A2 = rng.uniform(0, 1, (m, m))
    d_a, d_b = cuda.to_device(A2), cuda.to_device(np.zeros_like(A2))
    for _ in range(steps):
        _launch(mod, "jacobi2d_k1", (_cdiv(m, 8), _cdiv(m, 8)), (8, 8), np.int32(m), d_a, d_b)
        _launch(mod, "jacobi2d_k2", (_cdiv(m, 8), _cdiv(m, 8)), (8, 8), np.int32(m), d_a, d_b)
    a2 = A2.copy()
    for _ in range(steps):
        a2[1:-1, 1:-1] = 0.2 * ((((a2[1:-1, 1:-1] + a2[1:-1, :-2]) + a2[1:-1, 2:]) + a2[2:, 1:-1]) + a2[:-2, 1:-1])
    np.testing.assert_array_equal(d_a.get(), a2)


def test_polybench_adi() -> None:
    rng = np.random.default_rng(312)
    n = 16
    A = rng.uniform(0, 1, (n, n)).astype(np.float32)
    B = rng.uniform(2, 3, (n, n)).astype(np.float32)
    X = rng.uniform(0, 1, (n, n)).astype(np.float32)
    mod = _module("adi")
    d_a, d_b, d_x = map(cuda.to_device, (A, B, X))
    _launch(mod, "adi_rows", (1,), (32,), d_a, d_b, d_x, np.int32(n))
    _launch(mod, "adi_cols", (1,), (32,), d_a, d_b, d_x, np.int32(n))
    a, b, x = (v.astype(np.float64) for v in (A, B, X))
    for i2 in range(1, n):
        x[:, i2] -= x[:, i2 - 1] * a[:, i2] / b[:, i2 - 1]
        b[:, i2] -= a[:, i2] * a[:, i2] / b[:, i2 - 1]
    x[:, n - 1] /= b[:, n - 1]
    for i2 in range(n - 2):
        x[:, n - i2 - 2] = (x[:, n - 2 - i2] - x[:, n - 3 - i2] * a[:, n - i2 - 3]) / b[:, n - 3 - i2]
    for i1 in range(1, n):
        x[i1] -= x[i1 - 1] * a[i1] / b[i1 - 1]
        b[i1] -= a[i1] * a[i1] / b[i1 - 1]
    x[n - 1] /= b[n - 1]
    np.testing.assert_allclose(d_b.get(), b, rtol=1e-5)  # well-conditioned (b >= 2 > a) float32 recurrences
    np.testing.assert_allclose(d_x.get(), x, rtol=1e-4, atol=1e-5)


def test_polybench_gramschmidt() -> None:
    rng = np.random.default_rng(313)
    m, n = 24, 12
    A = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    mod = _module("gramschmidt")
    d_a, d_r, d_q = cuda.to_device(A), cuda.to_device(np.zeros((n, n), np.float32)), cuda.to_device(
        np.zeros((m, n), np.float32))
    for k in range(n):
        _launch(mod, "gs_kernel1", (1,), (32,), d_a, d_r, np.int32(k), np.int32(m), np.int32(n))
        _launch(mod, "gs_kernel2", (1,), (32,), d_a, d_r, d_q, np.int32(k), np.int32(m), np.int32(n))
        _launch(mod, "gs_kernel3", (1,), (32,), d_a, d_r, d_q, np.int32(k), np.int32(m), np.int32(n))
    q, r = np.linalg.qr(A.astype(np.float64))
    sign = np.sign(np.diag(r))  # QR is unique up to column signs; MGS has a positive diagonal
    np.testing.assert_allclose(d_q.get(), q * sign, rtol=0, atol=1e-4)  # well-conditioned random 24x12
    np.testing.assert_allclose(d_r.get(), r * sign[:, None], rtol=0, atol=1e-4)


# -------------------------------------------------------------------------------------------------- SHOC


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shoc_md_lennard_jones(dtype: type) -> None:
    rng = np.random.default_rng(400)
    inum, neigh = 200, 16
    pos: np.ndarray = np.zeros((inum, 4), dtype)
    pos[:, :3] = rng.uniform(0, 6, (inum, 3))
    d2 = ((pos[:, None, :3].astype(np.float64) - pos[None, :, :3]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    nl = np.argsort(d2, 1)[:, :neigh].astype(np.int32)  # nearest neighbours, some beyond the cutoff
    cutsq, lj1, lj2 = 4.0, 1.5, 2.0
    vec = "float4" if dtype == np.float32 else "double4"
    name = f"compute_lj_force<{'float' if dtype == np.float32 else 'double'}, {vec}>"
    mod = _module("md", (name,))
    force, *_ = _run(mod, name, (_cdiv(inum, 64),), (64,), np.zeros((inum, 4), dtype), pos, np.int32(neigh),
                     np.ascontiguousarray(nl.T), dtype(cutsq), dtype(lj1), dtype(lj2), np.int32(inum))
    p = pos[:, :3].astype(np.float64)
    dl = p[:, None, :] - p[nl]
    r2 = (dl**2).sum(-1)
    inv = np.where(r2 < cutsq, 1 / r2, 0)
    mag = inv * inv**3 * (lj1 * inv**3 - lj2)
    ref = (dl * mag[..., None]).sum(1)
    # float: r^-14 amplifies the float32 rounding of r^2 (close pairs dominate); double: a few ulps
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(force[:, :3], ref, rtol=rtol, atol=rtol * np.abs(ref).max())
    assert not force[:, 3].any()


@pytest.mark.parametrize(("ctype", "dtype", "block"), [("float", np.float32, 256), ("double", np.float64, 128),
                                                       ("int", np.int32, 64)])
def test_shoc_reduction_templates_volatile_warp(ctype: str, dtype: type, block: int) -> None:
    rng = np.random.default_rng(401)
    n = 20_000
    x: np.ndarray = (rng.integers(-1000, 1000, n) if dtype == np.int32 else rng.standard_normal(n)).astype(dtype)
    name = f"reduce<{ctype}, {block}>"
    grid = 12
    _, partial = _run(_module("shoc_reduction", (name,)), name, (grid,), (block,), x, np.zeros(grid, dtype),
                      np.uint32(n), shared=block * x.itemsize)
    if dtype == np.int32:
        assert int(partial.sum()) == int(x.sum(dtype=np.int64))
    else:  # 20k terms summed in a different order than NumPy's pairwise sum
        assert partial.sum(dtype=np.float64) == pytest.approx(x.sum(dtype=np.float64), abs=1e-2 if dtype == np.float32
                                                              else 1e-9)
    # each block's partial is its own elements' sum
    stride = 2 * block * grid
    idx = np.arange(n)
    for b in range(grid):
        mine = x[((idx % stride) // (2 * block)) == b].astype(np.float64).sum()
        assert float(partial[b]) == pytest.approx(mine, abs=1e-3 if dtype == np.float32 else 1e-9)


def test_shoc_scan_three_phase() -> None:
    rng = np.random.default_rng(402)
    n = 5000
    x = rng.integers(-100, 100, n).astype(np.int32)
    nb = _cdiv(n, 256)
    mod = _module("shoc_scan")
    d_x, d_sums, d_out = cuda.to_device(x), cuda.to_device(np.zeros(nb, np.int32)), cuda.to_device(
        np.zeros(n, np.int32))
    _launch(mod, "scan_reduce", (nb,), (256,), d_x, d_sums, np.int32(n))
    _launch(mod, "scan_top", (1,), (256,), d_sums, np.int32(nb))
    _launch(mod, "scan_bottom", (nb,), (256,), d_x, d_out, d_sums, np.int32(n))
    np.testing.assert_array_equal(d_out.get(), np.cumsum(x) - x)


def test_shoc_sort_radix_histogram() -> None:
    keys = np.random.default_rng(403).integers(0, 2**32, 7000, dtype=np.uint32)
    mod = _module("radix_hist")
    nb = 9
    for shift in (0, 12, 28):
        _, counts = _run(mod, "radix_histogram", (nb,), (128,), keys, np.zeros(16 * nb, np.uint32),
                         np.int32(keys.size), np.int32(shift))
        per = _cdiv(keys.size, nb)
        ref = np.stack([np.bincount((keys[b * per:(b + 1) * per] >> shift) & 15, minlength=16) for b in range(nb)], 1)
        np.testing.assert_array_equal(counts.reshape(16, nb), ref)


def test_shoc_triad_float4() -> None:
    rng = np.random.default_rng(404)
    n4 = 1000
    A, B = rng.standard_normal((n4, 4)).astype(np.float32), rng.standard_normal((n4, 4)).astype(np.float32)
    s = np.float32(1.75)
    *_, C = _run(_module("triad"), "triad", (_cdiv(n4, 128),), (128,), A, B, np.zeros_like(A), s, np.int32(n4))
    # a + s*b contracts to one fma: exactly the float64 value rounded once to float32
    np.testing.assert_array_equal(C, (A.astype(np.float64) + float(s) * B.astype(np.float64)).astype(np.float32))


def test_shoc_stencil2d_double() -> None:
    rng = np.random.default_rng(405)
    rows, cols = 30, 37
    data = rng.standard_normal((rows, cols))
    wc, wn, wd = 0.25, 0.15, 0.0375
    _, out = _run(_module("stencil2d"), "stencil2d", (_cdiv(cols - 2, 16), _cdiv(rows - 2, 8)), (16, 8), data,
                  np.zeros_like(data), np.int32(rows), np.int32(cols), np.float64(wc), np.float64(wn),
                  np.float64(wd))
    d = data
    card = d[:-2, 1:-1] + d[2:, 1:-1] + d[1:-1, :-2] + d[1:-1, 2:]
    diag = d[:-2, :-2] + d[:-2, 2:] + d[2:, :-2] + d[2:, 2:]
    np.testing.assert_allclose(out[1:-1, 1:-1], wc * d[1:-1, 1:-1] + wn * card + wd * diag, rtol=0, atol=1e-14)
    assert not out[0].any() and not out[:, -1].any()


def test_shoc_s3d_double_exp_log_pow() -> None:
    rng = np.random.default_rng(406)
    n = 500
    T = rng.uniform(300, 2500, n)
    A = rng.uniform(1e5, 1e13, 8)
    beta = rng.uniform(-2, 2, 8)
    Ea = rng.uniform(0, 2e5, 8)
    mod = _module("s3d")
    for name, v in (("cA", A), ("cBeta", beta), ("cEa", Ea)):
        addr, _ = mod.get_global(name)
        cuda.memcpy(addr, v, v.nbytes, "HostToDevice")
    _, rf, eqk = _run(mod, "ratt", (_cdiv(n, 128),), (128,), T, np.zeros((8, n)), np.zeros((8, n)), np.int32(n))
    R = 8.31446261815324
    t = T[None, :]
    ref_rf = np.exp(np.log(A[:, None]) + beta[:, None] * np.log(t) - Ea[:, None] * (1 / t) / R)
    ref_eqk = t ** beta[:, None] * np.exp(-Ea[:, None] / (R * t)) / np.sqrt(t) + 1 / np.sqrt(t)
    # exp of an argument up to ~40 magnifies its last-ulp differences (CUDA's log is 1 ulp) ~40x
    np.testing.assert_allclose(rf, ref_rf, rtol=2e-14)
    np.testing.assert_allclose(eqk, ref_eqk, rtol=2e-14)


# ------------------------------------------------------------------------------------------ common idioms


def _assert_ulps(got: np.ndarray, ref: np.typing.ArrayLike, ulps: float | np.ndarray, dtype: type = np.float32) -> None:
    """|got - ref| <= ulps units in the last place of `dtype` at ref (ref computed in higher precision)."""
    ref = np.asarray(ref, np.float64)
    spacing = np.spacing(np.abs(ref).astype(dtype)).astype(np.float64)
    err = np.abs(np.asarray(got, np.float64) - ref)
    bad = ~(err <= ulps * spacing)
    assert not bad.any(), f"{bad.sum()} values off by more than {ulps} ulps, e.g. got {got[bad][:4]} ref {ref[bad][:4]}"


def test_grid_stride_ldg_restrict() -> None:
    rng = np.random.default_rng(500)
    n = 10_000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    _, out = _run(_module("grid_stride"), "saxpy_gs", (4,), (128,), np.int32(n), a, x, y.copy())
    # one fma: the exact value rounded once
    np.testing.assert_array_equal(out, (float(a) * x.astype(np.float64) + y).astype(np.float32))


def test_unified_warp_intrinsics() -> None:
    rng = np.random.default_rng(501)
    v = rng.integers(-50, 50, 64).astype(np.int32)
    v[[3, 40]] = 42
    v[32:] = np.abs(v[32:])  # the second warp: no lane <= 0 except zeros
    _, out = _run(_module("warp_intrinsics"), "warp_ops", (1,), (64,), v, np.zeros((64, 12), np.int32))
    for w in range(2):
        vw = v[32 * w:32 * w + 32].astype(np.int64)
        o = out[32 * w:32 * w + 32]
        lane = np.arange(32)
        np.testing.assert_array_equal(o[:, 0], vw[5])
        np.testing.assert_array_equal(o[:, 1], np.where(lane >= 3, vw[np.maximum(lane - 3, 0)], vw))
        np.testing.assert_array_equal(o[:, 2], np.where(lane + 7 < 32, vw[np.minimum(lane + 7, 31)], vw))
        np.testing.assert_array_equal(o[:, 3], vw[lane ^ 9])
        ballot = int(sum(1 << i for i in range(32) if vw[i] > 0))
        np.testing.assert_array_equal(o[:, 4].view(np.uint32), ballot)
        np.testing.assert_array_equal(o[:, 5], int((vw == 42).any()))
        np.testing.assert_array_equal(o[:, 6], 1)
        match = [sum(1 << j for j in range(32) if (vw[j] & 3) == (vw[i] & 3)) for i in range(32)]
        np.testing.assert_array_equal(o[:, 7].view(np.uint32), match)
        np.testing.assert_array_equal(o[:, 8], vw.sum())
        np.testing.assert_array_equal(o[:, 9], vw.max())
        np.testing.assert_array_equal(o[:20, 10].view(np.uint32), 0xFFFFF)
        np.testing.assert_array_equal(o[20:, 10], -1)
        np.testing.assert_array_equal(o[:20, 11], vw[19 - lane[:20]])
        np.testing.assert_array_equal(o[20:, 11], vw[lane[20:] ^ 1])


def test_threadfence_last_block_reduction() -> None:
    rng = np.random.default_rng(502)
    n, grid = 30_000, 24
    x = rng.standard_normal(n).astype(np.float32)
    mod = _module("threadfence")
    for _ in range(2):  # the last block resets the ticket counter, so a second launch works too
        _, partial, result = _run(mod, "sum_last_block", (grid,), (128,), x, np.zeros(grid, np.float32),
                                  np.zeros(1, np.float32), np.int32(n))
        # the result is the partials summed in block order, in float32
        expect = np.float32(0)
        for p in partial:
            expect = np.float32(expect + p)
        assert result[0] == expect
        assert float(result[0]) == pytest.approx(float(x.sum(dtype=np.float64)), abs=1e-2)
    addr, _ = mod.get_global("retirement_count")
    counter = np.zeros(1, np.uint32)
    cuda.memcpy(counter, addr, 4, "DeviceToHost")
    assert counter[0] == 0


def test_atomic_add_double_half2_bf16_and_cas_max() -> None:
    import ml_dtypes

    rng = np.random.default_rng(503)
    n = 256
    xd = rng.standard_normal(n)
    xh = (rng.integers(-8, 9, 2 * n) / 8).astype(np.float16)  # multiples of 1/8: every partial sum is exact
    xf = rng.standard_normal(n).astype(np.float32)
    *_, sd, sh, sb, mf = _run(_module("atomics_fp"), "fp_atomics", (4,), (64,), xd, xh, xf, np.zeros(1),
                              np.zeros(8, np.float16), np.zeros(1, np.uint16), np.full(1, -np.inf, np.float32),
                              np.int32(n))
    assert sd[0] == pytest.approx(xd.sum(), rel=1e-12)  # order of the double additions is unspecified
    np.testing.assert_array_equal(sh.reshape(4, 2), xh.reshape(n, 2).astype(np.float64).reshape(n // 4, 4, 2).sum(0))
    assert float(sb.view(ml_dtypes.bfloat16)[0]) == n
    assert mf[0] == xf.max()


def _bf16(x: np.ndarray) -> np.ndarray:
    import ml_dtypes

    return np.asarray(x, np.float64).astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)


def test_half_and_bfloat16_math() -> None:
    rng = np.random.default_rng(504)
    n = 256
    a = rng.uniform(-4, 4, n).astype(np.float16)
    b = rng.uniform(0.25, 4, n).astype(np.float16)
    mod = _module("half_math")
    *_, out = _run(mod, "half_ops", (2,), (128,), a, b, np.zeros((n, 8), np.float16), np.int32(n))
    x, y = a.astype(np.float64), b.astype(np.float64)
    h = np.float16
    # +, *, fma, max, neg are correctly rounded: float64 holds the exact value, one rounding to half
    np.testing.assert_array_equal(out[:, 0], (x + y).astype(h))
    np.testing.assert_array_equal(out[:, 1], (x * y).astype(h))
    np.testing.assert_array_equal(out[:, 2], (x * y + 0.5).astype(h))
    np.testing.assert_array_equal(out[:, 6], np.maximum(x, y).astype(h))
    np.testing.assert_array_equal(out[:, 7][x < y], (-x[x < y]).astype(h))
    # hsqrt / hexp / hlog / division go through float approximations: within one half ulp step
    _assert_ulps(out[:, 3], np.sqrt(np.abs(x)), 1, np.float16)
    _assert_ulps(out[:, 4], np.exp(y), 1, np.float16)
    _assert_ulps(out[:, 5], np.log((np.abs(a) + h(1)).astype(np.float64)), 1, np.float16)
    _assert_ulps(out[:, 7][x >= y], (x / y)[x >= y], 1, np.float16)
    fa = rng.uniform(-4, 4, n).astype(np.float32)
    fb = rng.uniform(-4, 4, n).astype(np.float32)
    *_, bo = _run(mod, "bf16_ops", (2,), (128,), fa, fb, np.zeros((n, 5), np.float32), np.int32(n))
    bx, by = _bf16(fa), _bf16(fb)
    np.testing.assert_array_equal(bo[:, 0], _bf16(bx + by))
    np.testing.assert_array_equal(bo[:, 1], _bf16(bx * by + bx))
    np.testing.assert_array_equal(bo[:, 2], (_bf16(bx * bx).astype(np.float32) + _bf16(by * by).astype(np.float32)))
    np.testing.assert_array_equal(bo[:, 3], (fa.view(np.uint32) & 0xFFFF0000).view(np.float32))
    np.testing.assert_array_equal(bo[:, 4], np.maximum(bx, by))


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _wrap(v: int, bits: int = 64) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def test_int64_math() -> None:
    rng = np.random.default_rng(505)
    n = 64
    a = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    b = rng.integers(-(2**40), 2**40, n, dtype=np.int64)
    b[:8] = rng.integers(-1000, 1000, 8)
    b[b == 0] = 7
    *_, out = _run(_module("int64"), "int64_ops", (1,), (64,), a, b, np.zeros((n, 10), np.int64), np.int32(n))
    for i in range(n):
        x, y = int(a[i]), int(b[i])
        ux, uy = x & (2**64 - 1), y & (2**64 - 1)
        q = _c_div(x, y)
        ref = [_wrap(x * y), q, x - q * y, _wrap(ux // uy), _wrap(ux % uy), _wrap(ux >> (y & 63)), x >> (y & 63),
               (x * y) >> 64, _wrap((ux * uy) >> 64), max(x, y) - min(x, y)]
        assert out[i].tolist() == ref, i


def test_bit_intrinsics() -> None:
    rng = np.random.default_rng(506)
    n = 64
    a = rng.integers(0, 2**32, n, dtype=np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint32)
    c = rng.integers(0, 2**64, n, dtype=np.uint64)
    a[0], c[0], a[1] = 0, 0, 1  # zero and one inputs: __clz = 32, __ffs = 0
    c[1] = 1 << 40
    *_, out = _run(_module("bits"), "bit_ops", (1,), (64,), a, b, c, np.zeros((n, 12), np.int32), np.int32(n))

    def ffs(v: int) -> int:
        return (v & -v).bit_length()

    for i in range(n):
        x, y, z = int(a[i]), int(b[i]), int(c[i])
        sel = y & 0x7777
        pool = (y << 32 | x).to_bytes(8, "little")
        perm = int.from_bytes(bytes(pool[(sel >> (4 * k)) & 7] for k in range(4)), "little")
        wide = y << 32 | x
        ref = [bin(x).count("1"), bin(z).count("1"), 32 - x.bit_length(), 64 - z.bit_length(), ffs(x), ffs(z),
               int(f"{x:032b}"[::-1], 2), int(f"{z:064b}"[::-1], 2) >> 32, perm,
               ((wide << (y & 31)) >> 32) & 0xFFFFFFFF, (wide >> (x & 31)) & 0xFFFFFFFF,
               ((wide << min(y, 32)) >> 32) & 0xFFFFFFFF]
        assert out[i].tolist() == [_wrap(r, 32) for r in ref], i


def test_int32_mul_intrinsics_and_division() -> None:
    rng = np.random.default_rng(507)
    n = 64
    a = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    b[:16] = rng.integers(-300, 300, 16)
    b[b == 0] = 3
    a[a == -(2**31)] = 5
    *_, out = _run(_module("intmul"), "int_ops", (1,), (64,), a, b, np.zeros((n, 10), np.int32), np.int32(n))

    def s24(v: int) -> int:
        return _wrap(v & 0xFFFFFF, 24)

    for i in range(n):
        x, y = int(a[i]), int(b[i])
        ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
        q = _c_div(x, y)
        ref = [(ux * uy) >> 32, (x * y) >> 32, s24(x) * s24(y), (ux & 0xFFFFFF) * (uy & 0xFFFFFF),
               (abs(x - y) + 7), abs(ux - uy) + 3, q, x - q * y, ux // uy, ux % uy]
        assert out[i].tolist() == [_wrap(r, 32) for r in ref], i


def test_single_precision_libm() -> None:
    rng = np.random.default_rng(508)
    n = 256
    a = rng.uniform(-20, 20, n).astype(np.float32)
    b = rng.uniform(0.3, 6, n).astype(np.float32)
    out, exps = _run(_module("mathf"), "mathf", (2,), (128,), a, b, np.zeros((n, 16), np.float32),
                     np.zeros(n, np.int32), np.int32(n))[2:]
    x, y = a.astype(np.float64), b.astype(np.float64)
    # exact operations (CUDA: 0 ulps): fmod, remainder, frexp, ldexp, modf
    np.testing.assert_array_equal(out[:, 0], np.fmod(x, y))
    np.testing.assert_array_equal(out[:, 1], [math.remainder(p, q) for p, q in zip(x, y)])
    fr = [math.frexp(p) for p in x]
    np.testing.assert_array_equal(out[:, 2], [m for m, _ in fr])
    np.testing.assert_array_equal(exps, [e for _, e in fr])
    np.testing.assert_array_equal(out[:, 3], np.ldexp(x, y.astype(np.int32)))
    np.testing.assert_array_equal(out[:, 4], np.modf(x)[0])
    np.testing.assert_array_equal(out[:, 5], np.modf(x)[1])
    # CUDA's documented maximum errors (Programming Guide, Mathematical Functions), +1 for the oracle's
    from scipy import special  # type: ignore[import-untyped]

    lg_arg = (np.abs(a) + np.float32(0.1)).astype(np.float64)
    _assert_ulps(out[:, 6], special.erfc(y), 5)
    _assert_ulps(out[:, 7], special.gammaln(lg_arg), 7)
    _assert_ulps(out[:, 8], special.gamma(y), 6)
    _assert_ulps(out[:, 9], np.cbrt(x), 2)
    _assert_ulps(out[:, 10], np.hypot(x, y), 4)
    _assert_ulps(out[:, 11], np.arctan2(x, y), 4)
    _assert_ulps(out[:, 12], np.sin(np.pi * y), 2)
    _assert_ulps(out[:, 13], np.cos(np.pi * y), 2)
    log_arg = (np.abs(a) + np.float32(1)).astype(np.float64)  # the float32 sum the kernel takes the log of
    _assert_ulps(out[:, 14], np.exp(y) * np.log(log_arg), 5)
    _assert_ulps(out[:, 15], np.abs(x) ** y, 5)


def test_double_precision_math() -> None:
    from fractions import Fraction

    rng = np.random.default_rng(509)
    n = 128
    x = rng.uniform(0.01, 50, n)
    y = rng.uniform(-3, 3, n)
    *_, out = _run(_module("mathd"), "mathd", (1,), (128,), x, y, np.zeros((n, 12)), np.int32(n))
    # IEEE-exact: sqrt, fma, division
    np.testing.assert_array_equal(out[:, 3], np.sqrt(x))
    np.testing.assert_array_equal(out[:, 10], [float(Fraction(p) * Fraction(q) - Fraction(p)) for p, q in zip(x, y)])
    np.testing.assert_array_equal(out[:, 11], x / y)
    # documented: pow 2, exp/log/rsqrt/exp2/log2/log1p/expm1 1, sin/cos/tanh 2 ulps; +1 for the oracle
    f64 = np.float64
    _assert_ulps(out[:, 0], x**y, 3, f64)
    _assert_ulps(out[:, 1], np.exp(y), 2, f64)
    _assert_ulps(out[:, 2], np.log(x), 2, f64)
    _assert_ulps(out[:, 4], 1 / np.sqrt(x), 2, f64)
    ex2, lg2 = np.exp2(y), np.log2(x)
    assert (np.abs(out[:, 5] - (ex2 + lg2)) <= 4e-16 * (np.abs(ex2) + np.abs(lg2))).all()  # 1 ulp each + the add
    _assert_ulps(out[:, 6], np.log1p(x), 2, f64)
    _assert_ulps(out[:, 7], np.expm1(y), 2, f64)
    _assert_ulps(out[:, 8], np.sin(y) * np.cos(x), 6, f64)
    _assert_ulps(out[:, 9], np.tanh(y), 3, f64)


def test_structs_by_value() -> None:
    params = np.dtype({"names": ["n", "scale", "offset", "flag", "coeffs", "shift"],
                       "formats": [np.int32, np.float32, np.float64, np.int8, (np.int16, 3), (np.float32, 2)],
                       "offsets": [0, 4, 8, 16, 18, 24], "itemsize": 32})
    p = np.zeros((), params)
    p["n"], p["scale"], p["offset"], p["flag"] = 100, 1.5, -0.25, 1
    p["coeffs"], p["shift"] = [3, -2, 5], [0.75, 0.125]
    x = np.random.default_rng(510).standard_normal(128).astype(np.float32)
    _, out, counts = _run(_module("structs"), "struct_params", (1,), (128,), p[()], x, np.zeros(128),
                          np.zeros(128, np.int32))
    terms = [(x[:100] * np.float32(1.5) * np.float32(c)).astype(np.float64) - 0.25 for c in (3, -2, 5)]
    np.testing.assert_array_equal(out[:100], (terms[0] + terms[1]) + terms[2] + (0.75 - 0.125))
    np.testing.assert_array_equal(counts[:100], sum((t > 0).astype(np.int32) for t in terms))
    assert not out[100:].any()


def test_recursive_device_functions() -> None:
    rng = np.random.default_rng(511)
    n = 64
    a = rng.integers(1, 10**6, n).astype(np.uint32)
    b = rng.integers(0, 10**6, n).astype(np.uint32)
    arrays = rng.integers(-100, 100, (n, 16)).astype(np.int32)
    _, _, fibs, gcds, arrs = _run(_module("recursion"), "recursion", (2,), (32,), a, b, np.zeros(n, np.int32),
                                  np.zeros(n, np.uint32), arrays.copy(), np.int32(n))
    fib = [0, 1]
    while len(fib) < 16:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(fibs, [fib[i % 16] for i in range(n)])
    np.testing.assert_array_equal(gcds, [math.gcd(int(p), int(q)) for p, q in zip(a, b)])
    np.testing.assert_array_equal(arrs, np.sort(arrays, 1))


def test_device_function_pointers() -> None:
    rng = np.random.default_rng(512)
    n = 200
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    sel = rng.integers(0, 4, n).astype(np.int32)
    *_, out = _run(_module("funcptr"), "funcptr", (2,), (128,), a, b, sel, np.zeros(n, np.float32), np.int32(n))
    ops = [np.add, np.multiply, np.fmax, np.subtract]  # float32 in, float32 out: the same roundings
    ref = np.array([ops[s](ops[s](p, q), q) for p, q, s in zip(a, b, sel)], np.float32)
    np.testing.assert_array_equal(out, ref)


def test_device_printf(capsys: pytest.CaptureFixture[str]) -> None:
    n = 10
    x = (np.arange(n) * 1.25).astype(np.float32)
    y = np.arange(n) * -3.5e-7
    mod = _module("printf_kernel")
    mod.get_function("report").launch((2,), (5,), (cuda.to_device(x), cuda.to_device(y), np.int32(n)))
    cuda.synchronize()
    lines = sorted(capsys.readouterr().out.splitlines())
    expect = sorted(f"blk {i // 5} thr {i % 5}: x={x[i]:.3f} y={y[i]:.5e} i64={i * -1000000007} "
                    f"u={(i * 2654435761) & 0xFFFFFFFF} c={chr(65 + i % 26)} s={'odd' if i % 2 else 'even'}"
                    for i in range(0, n, 3))
    assert lines == expect


def test_launch_bounds() -> None:
    mod = _module("launch_bounds")
    assert ".maxntid 128" in mod.ptx and ".minnctapersm 4" in mod.ptx
    x = np.random.default_rng(513).uniform(-1, 1, 1000).astype(np.float32)
    _, y = _run(mod, "poly_eval", (8,), (128,), x, np.zeros_like(x), np.int32(1000))
    c = 1 / np.arange(1, 9)
    ref = np.zeros_like(x, dtype=np.float64)
    for k in range(7, -1, -1):
        ref = ref * x + c[k]
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-6)  # eight float32 fma steps of a value below 3
    with pytest.raises(cuda.InvalidLaunchConfig):
        mod.get_function("poly_eval").launch((1,), (256,), (cuda.to_device(x), cuda.to_device(y), np.int32(1000)))


# ------------------------------------------------- less common intrinsics and constructs of public code


def _round_dir(exact: object, mode: str, dtype: type = np.float32) -> float:
    """`exact` (a Fraction) rounded to `dtype` toward zero ('rz'), up ('ru'), down ('rd') or nearest ('rn')."""
    from fractions import Fraction

    assert isinstance(exact, Fraction)
    c = dtype(float(exact))  # nearest or one step off (double rounding); fixed up below
    while Fraction(float(c)) > exact and (mode == "rd" or (mode == "rz" and exact > 0)):
        c = np.nextafter(c, dtype(-np.inf))
    while Fraction(float(c)) < exact and (mode == "ru" or (mode == "rz" and exact < 0)):
        c = np.nextafter(c, dtype(np.inf))
    return float(c)


def _isqrt_frac(v: object, mode: str, dtype: type) -> float:
    """sqrt of a non-negative Fraction, directed-rounded: bracket with the nearest value's neighbours."""
    from fractions import Fraction

    assert isinstance(v, Fraction)
    c = dtype(math.sqrt(float(v)))
    lo, hi = np.nextafter(c, dtype(-np.inf)), np.nextafter(c, dtype(np.inf))
    cands = [lo, c, hi]
    if mode == "ru":
        return float(min(x for x in cands if Fraction(float(x)) ** 2 >= v))
    return float(max(x for x in cands if Fraction(float(x)) ** 2 <= v))


def test_directed_rounding_intrinsics() -> None:
    from fractions import Fraction as F

    rng = np.random.default_rng(600)
    n = 64
    a = rng.uniform(-4, 4, n).astype(np.float32)
    b = rng.uniform(0.5, 4, n).astype(np.float32)
    mod = _module("rounding")
    *_, out = _run(mod, "rounding_f", (1,), (64,), a, b, np.zeros((n, 12), np.float32), np.int32(n))
    for i in range(n):
        x, y = F(float(a[i])), F(float(b[i]))
        ref = [_round_dir(x + y, "rz"), _round_dir(x + y, "ru"), _round_dir(x * y, "rd"), _round_dir(x * y, "ru"),
               _round_dir(x / y, "rz"), _round_dir(x / y, "ru"), _round_dir(1 / y, "rd"),
               _isqrt_frac(abs(x), "ru", np.float32), _isqrt_frac(abs(x), "rd", np.float32),
               _round_dir(x * y + 1, "rz"), _round_dir(x - y, "rd"), min(max(float(a[i]), 0.0), 1.0)]
        assert out[i].tolist() == ref, i
    ad, bd = rng.uniform(-4, 4, n), rng.uniform(0.5, 4, n)
    *_, outd = _run(mod, "rounding_d", (1,), (64,), ad, bd, np.zeros((n, 6)), np.int32(n))
    f64 = np.float64
    for i in range(n):
        x, y = F(ad[i]), F(bd[i])
        ref = [_round_dir(x + y, "ru", f64), _round_dir(x * y, "rz", f64), _round_dir(x / y, "rd", f64),
               _isqrt_frac(abs(x), "ru", f64), _round_dir(x * y + 1, "rd", f64), _round_dir(1 / y, "rz", f64)]
        assert outd[i].tolist() == ref, i


def test_rounding_conversions() -> None:
    from fractions import Fraction as F

    rng = np.random.default_rng(601)
    n = 64
    a = rng.uniform(-1000, 1000, n).astype(np.float32)
    a[:4] = [2.5, -2.5, 3.5, -0.5]  # ties: _rn goes to even
    d = rng.uniform(-1000, 1000, n)
    ll = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    _, _, _, oi, ol, of, od = _run(_module("rounding"), "conversions", (1,), (64,), a, d, ll,
                                   np.zeros((n, 6), np.int32), np.zeros((n, 2), np.int64),
                                   np.zeros((n, 4), np.float32), np.zeros((n, 2)), np.int32(n))
    for i in range(n):
        x, y, z = float(a[i]), float(d[i]), int(ll[i])
        assert oi[i].tolist() == [math.floor(x), math.ceil(x), round(x), math.trunc(x), math.ceil(abs(x)),
                                  math.floor(y)], i
        x6 = float(np.float32(a[i] * np.float32(1e6)))  # the float product the kernel converts
        assert ol[i].tolist() == [math.ceil(x6), math.floor(y * 1e12)], i
        assert of[i].tolist() == [_round_dir(F(z), "rd"), _round_dir(F(z), "ru"), _round_dir(F(y), "rz"),
                                  _round_dir(F(_wrap(z >> 20, 32)), "ru")], i
        z1001 = _wrap(z * 1001)
        assert od[i].tolist() == [_round_dir(F(z1001), "rz", np.float64),
                                  _round_dir(F((z * 3) & (2**64 - 1)), "ru", np.float64)], i


def test_simd_video_and_dp4a() -> None:
    rng = np.random.default_rng(602)
    n = 64
    a = rng.integers(0, 2**32, n, dtype=np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint32)
    *_, out = _run(_module("simd_video"), "simd", (1,), (64,), a, b, np.zeros((n, 12), np.uint32), np.int32(n))

    def lanes(v: int, k: int, signed: bool) -> list[int]:
        w = 32 // k
        return [(_wrap((v >> (w * j)) & ((1 << w) - 1), w) if signed else (v >> (w * j)) & ((1 << w) - 1))
                for j in range(k)]

    def pack(vals: list[int], k: int) -> int:
        w = 32 // k
        return sum((x & ((1 << w) - 1)) << (w * j) for j, x in enumerate(vals))

    for i in range(n):
        x, y = int(a[i]), int(b[i])
        xb, yb = lanes(x, 4, False), lanes(y, 4, False)
        xh, yh = lanes(x, 2, True), lanes(y, 2, True)
        xs, ys = lanes(x, 4, True), lanes(y, 4, True)
        ref = [pack([p + q for p, q in zip(xb, yb)], 4),
               pack([p - q for p, q in zip(lanes(x, 2, False), lanes(y, 2, False))], 2),
               pack([abs(p - q) for p, q in zip(xb, yb)], 4),
               pack([0xFF if p >= q else 0 for p, q in zip(xb, yb)], 4),
               pack([max(p, q) for p, q in zip(xh, yh)], 2),
               pack([(p + q + 1) >> 1 for p, q in zip(xb, yb)], 4),
               sum(abs(p - q) for p, q in zip(xb, yb)),
               pack([min(max(p + q, -32768), 32767) for p, q in zip(xh, yh)], 2),
               pack([min(p, q) for p, q in zip(xb, yb)], 4),
               _wrap(sum(p * q for p, q in zip(xs, ys)) + 17, 32) & 0xFFFFFFFF,
               (sum(p * q for p, q in zip(xb, yb)) + 5) & 0xFFFFFFFF,
               _wrap(sum(p * q for p, q in zip(xh, ys[:2])) - 3, 32) & 0xFFFFFFFF]
        assert out[i].tolist() == ref, i


def test_hopper_dpx_intrinsics() -> None:
    rng = np.random.default_rng(603)
    n = 64
    a, b, c = (rng.integers(-1000, 1000, n).astype(np.int32) for _ in range(3))
    *_, out = _run(_module("dpx"), "dpx", (1,), (64,), a, b, c, np.zeros((n, 7), np.int32), np.int32(n))
    for i in range(n):
        x, y, z = int(a[i]), int(b[i]), int(c[i])
        u = [v & 0xFFFFFFFF for v in (x, y, z)]
        ref = [max(x, y, z), min(x, y, z), max(x + y, z), max(x, y, 0), _wrap(max(u), 32), max(x, y), int(x >= y)]
        assert out[i].tolist() == ref, i


def test_inline_ptx_asm() -> None:
    rng = np.random.default_rng(604)
    a = rng.integers(0, 2**32, 64, dtype=np.uint32)
    b = rng.integers(0, 2**32, 64, dtype=np.uint32)
    *_, out = _run(_module("inline_asm"), "inline_asm", (1,), (64,), a, b, np.zeros((64, 9), np.uint32))
    for t in range(64):
        x, y = int(a[t]), int(b[t])
        pool = (y << 32 | x).to_bytes(8, "little")
        prmt = int.from_bytes(bytes(pool[(0x5140 >> (4 * k)) & 7] for k in range(4)), "little")
        maj = (x & y) | (x & (x ^ y)) | (y & (x ^ y))
        shf = ((y << 32 | x) >> (t & 31)) & 0xFFFFFFFF
        bfi = (x & 0xFFF) << 8 | (y & ~(0xFFF << 8) & 0xFFFFFFFF)
        wide = x * y + t
        ref = [t & 31, (x >> 4) & 0xFF, bfi, prmt, maj, shf, max(x, y), wide & 0xFFFFFFFF, wide >> 32]
        assert out[t].tolist() == ref, t


def test_switch_virtual_functions_syncthreads_vote() -> None:
    rng = np.random.default_rng(605)
    sel = rng.integers(0, 9, 64).astype(np.int32)
    v = rng.uniform(0.5, 2, 64).astype(np.float32)
    _, _, sw, areas, sides, votes = _run(_module("control"), "control", (1,), (64,), sel, v, np.zeros(64, np.int32),
                                         np.zeros(64, np.float32), np.zeros(64, np.int32), np.zeros(3, np.int32))
    t = np.arange(64)
    table = [np.full(64, 11), t * 3, -t, t ^ 0x55, 1 << (t & 15), np.full(64, 99), t * t, np.full(64, 7)]
    ref = np.array([table[k][i] if k < 8 else -1 for i, k in enumerate(sel)])
    np.testing.assert_array_equal(sw, ref)
    odd = (sel & 1).astype(bool)
    np.testing.assert_array_equal(areas, np.where(odd, v * v, np.float32(3) * v * v))
    np.testing.assert_array_equal(sides, np.where(odd, 4, 0))
    np.testing.assert_array_equal(votes, [(sel > 3).sum(), 1, int((sel == 9).any())])


def test_wmma_tensor_core_tile() -> None:
    rng = np.random.default_rng(606)
    K = 48
    a = rng.uniform(-1, 1, (16, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, K)).astype(np.float16)  # column-major B: row j of this is column j
    *_, c = _run(_module("wmma"), "wmma_gemm", (1,), (32,), a, b, np.zeros((16, 16), np.float32), np.int32(K))
    # products of halves are exact in float; only the float accumulation order differs
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.T.astype(np.float64), rtol=0, atol=1e-5)


def test_async_copy_pipeline() -> None:
    x = np.random.default_rng(607).standard_normal(128 * 6).astype(np.float32)
    _, out = _run(_module("async_copy"), "async_sum", (1,), (128,), x, np.zeros(128, np.float32), np.int32(6))
    tiles = x.reshape(6, 128)
    ref = np.zeros(128, np.float32)
    for k in range(6):  # the same float32 additions in the same order
        ref = ref + tiles[k][(np.arange(128) + k) % 128]
    np.testing.assert_array_equal(out, ref)


def test_libcudacxx_and_wide_atomics() -> None:
    rng = np.random.default_rng(608)
    v = rng.integers(0, 100, 128).astype(np.int32)
    u64 = np.array([2**64 - 1, 0, 2**64 - 1, 1], np.uint64)
    counters, u, u16, fx, s64, _ = _run(_module("libcu_atomics"), "atomics2", (2,), (64,), np.zeros(16, np.int32),
                                        u64, np.zeros(1, np.uint16), np.zeros(128, np.float32),
                                        np.full(1, -(2**62), np.int64), v)
    assert counters[0] == v.sum() and counters[1] == v.max()
    np.testing.assert_array_equal(counters[2:4], [64, 64])
    np.testing.assert_array_equal(counters[10:12], [v[:64].sum(), v[64:].sum()])
    assert u[0] == 1000 + int(v.min()) * 7919
    assert u[1] == (2**64 - 1)  # t & 63 covers every bit over 128 threads
    assert u[2] == (2**64 - 1) & ~((1 << 50) - 1)
    p = 1
    for _ in range(128):
        p = (p * 3 + 1) & (2**64 - 1)
    assert u[3] == p
    assert u16[0] == 128
    assert s64[0] == max(-(2**62), -3 * int(v.min()))
    np.testing.assert_array_equal(fx, v * np.float32(0.5))


def test_64bit_shuffles_and_cache_hints() -> None:
    rng = np.random.default_rng(609)
    d = rng.standard_normal(64)
    ll = rng.integers(-(2**62), 2**62, 64, dtype=np.int64)
    src = rng.standard_normal(64).astype(np.float32)
    _, _, od, ol, hints, _ = _run(_module("shfl64"), "shfl64", (1,), (64,), d, ll, np.zeros((64, 2)),
                                  np.zeros((64, 2), np.int64), np.zeros(128, np.float32), src)
    t = np.arange(64)
    base = t & ~31
    np.testing.assert_array_equal(od[:, 0], d[t ^ 1])
    np.testing.assert_array_equal(od[:, 1], d[base + 31 - (t & 31)])
    np.testing.assert_array_equal(ol[:, 0], ll[np.where((t & 31) + 2 < 32, t + 2, t)])
    np.testing.assert_array_equal(ol[:, 1], ll[base + 3])
    v = (((src + src) + src) + src) + src
    np.testing.assert_array_equal(hints[:64], v)
    np.testing.assert_array_equal(hints[64:], v * np.float32(2))


def test_clock64_timing_idiom() -> None:
    x = np.random.default_rng(615).standard_normal(4 * 128).astype(np.float32)
    _, out, timer = _run(_module("clock"), "timed_reduction", (4,), (128,), x, np.zeros(4, np.float32),
                         np.zeros(8, np.int64), shared=128 * 4)
    np.testing.assert_allclose(out, x.reshape(4, 128).sum(1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    assert (timer[4:] > timer[:4]).all()  # a block's work takes at least one cycle


def test_clock64_straight_line_latency() -> None:
    chain = np.arange(32, dtype=np.int32)[::-1].copy()
    _, sink, cycles = _run(_module("clock"), "load_latency", (1,), (32,), chain, np.zeros(32, np.int32),
                           np.zeros(32, np.int64))
    np.testing.assert_array_equal(sink, chain)
    assert (cycles > 0).all()


def test_single_precision_libm_more() -> None:
    from scipy import special

    rng = np.random.default_rng(610)
    n = 128
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(0.5, 8, n).astype(np.float32)
    *_, out = _run(_module("mathf2"), "mathf2", (1,), (128,), a, b, np.zeros((n, 25), np.float32), np.int32(n))
    x, y = a.astype(np.float64), b.astype(np.float64)
    f32 = np.float32

    def arg(v: np.ndarray) -> np.ndarray:  # a float32 argument expression, as the kernel rounds it
        return v.astype(f32).astype(np.float64)

    # documented maximum ulps (+1 for the float64 oracle); Bessel functions are bounded absolutely
    _assert_ulps(out[:, 0], special.erfinv(x), 3)
    _assert_ulps(out[:, 1], special.ndtr(arg(x * f32(3))), 6)
    # |x| * 0.98f + 0.01f contracts to one fma: the float64 value (exact product) rounded once
    _assert_ulps(out[:, 2], special.ndtri(arg(np.abs(x) * np.float64(f32(0.98)) + np.float64(f32(0.01)))), 6)
    np.testing.assert_allclose(out[:, 3], special.j0(y), rtol=0, atol=1e-6)
    np.testing.assert_allclose(out[:, 4], special.y1(y), rtol=0, atol=1.5e-6)
    _assert_ulps(out[:, 5], 1 / np.hypot(x, y), 3)
    _assert_ulps(out[:, 6], np.sqrt(x * x + y * y + arg(x + y) ** 2), 4)
    _assert_ulps(out[:, 7], 1 / np.sqrt(x * x + y * y + 1), 3)
    _assert_ulps(out[:, 8], np.sinh(y), 4)
    _assert_ulps(out[:, 9], np.arcsinh(arg(x * 10)), 4)
    np.testing.assert_array_equal(out[:, 10], np.nextafter(a, b))
    np.testing.assert_array_equal(out[:, 11], np.maximum(b - f32(3), 0))
    np.testing.assert_array_equal(out[:, 12], np.copysign(b, a))
    np.testing.assert_array_equal(out[:, 13], np.ldexp(a, b.astype(np.int32)))
    np.testing.assert_array_equal(out[:, 14], np.floor(np.log2(arg(y * 100))))
    np.testing.assert_array_equal(out[:, 15], np.floor(np.log2(arg(y * f32(0.01)))))
    np.testing.assert_array_equal(out[:, 16], np.rint(b * f32(2)))
    np.testing.assert_array_equal(out[:, 17], np.rint(b * f32(3)))
    np.testing.assert_array_equal(out[:, 18], np.trunc(a * f32(10) + np.copysign(f32(0.5), a)))
    np.testing.assert_array_equal(out[:, 19], np.trunc(b * f32(-1.5)))
    _assert_ulps(out[:, 20], 10.0**x, 3)
    _assert_ulps(out[:, 21], np.log10(y), 3)
    _assert_ulps(out[:, 22], y ** (-1 / 3), 2)
    _assert_ulps(out[:, 23], np.sin(np.pi * x), 2)
    np.testing.assert_array_equal(out[:, 24], b)  # fmaxf ignores a NaN operand


def test_double_precision_libm_more() -> None:
    from scipy import special

    rng = np.random.default_rng(611)
    n = 128
    x = rng.uniform(-1, 1, n)
    y = rng.uniform(0.5, 8, n)
    _, _, out, quo = _run(_module("mathd2"), "mathd2", (1,), (128,), x, y, np.zeros((n, 15)), np.zeros(n, np.int32),
                          np.int32(n))
    f64 = np.float64
    _assert_ulps(out[:, 0], special.erfinv(x), 6, f64)
    _assert_ulps(out[:, 1], special.erfcx(y), 5, f64)
    _assert_ulps(out[:, 2], special.i0(y), 7, f64)
    _assert_ulps(out[:, 3], np.arctan2(x, y), 3, f64)
    _assert_ulps(out[:, 4], np.hypot(x, y), 3, f64)
    np.testing.assert_array_equal(out[:, 5], np.fmod(y * 1e15, x + 2.0))  # fmod is exact
    rq = [math.remainder(p, q) for p, q in zip(y * 7.0, x + 2.0)]
    np.testing.assert_array_equal(out[:, 6], rq)
    q = np.rint((y * 7.0 - np.array(rq)) / (x + 2.0)).astype(np.int64)
    np.testing.assert_array_equal(quo & 7, q & 7)  # remquo guarantees the low 3 bits of the quotient
    import mpmath  # type: ignore[import-untyped]  # SciPy's gammaln is itself several ulps off near its roots 1 and 2

    _assert_ulps(out[:, 7], [float(mpmath.loggamma(v)) for v in y], 5, f64)
    _assert_ulps(out[:, 8], [float(mpmath.gamma(v)) for v in y], 11, f64)
    _assert_ulps(out[:, 9], np.cbrt(x), 2, f64)
    _assert_ulps(out[:, 10], np.arcsinh(x * 10), 4, f64)
    _assert_ulps(out[:, 11], np.arccosh(y + 1), 4, f64)
    _assert_ulps(out[:, 12], np.arctanh(x * 0.9), 4, f64)
    _assert_ulps(out[:, 13], [float(mpmath.sinpi(v)) for v in y], 2, f64)  # float64 pi * y would lose bits
    _assert_ulps(out[:, 14], np.sqrt(x * x + y * y + (x * y) ** 2), 4, f64)


def test_half2_extras() -> None:
    rng = np.random.default_rng(612)
    n = 64
    a = rng.uniform(-4, 4, (n, 2)).astype(np.float16)
    b = rng.uniform(0.25, 4, (n, 2)).astype(np.float16)
    f = rng.uniform(-100, 100, n).astype(np.float32)
    *_, out, hs, ints = _run(_module("half2_extra"), "half2_extra", (1,), (64,), a, b, f,
                             np.zeros((n, 6, 2), np.float16), np.zeros((n, 3), np.float16),
                             np.zeros((n, 3), np.int32), np.int32(n))
    x, y = a.astype(np.float64), b.astype(np.float64)
    h = np.float16
    np.testing.assert_array_equal(out[:, 0], np.clip(x + y, 0, 1).astype(h))
    _assert_ulps(out[:, 1], x / y, 1, h)
    np.testing.assert_array_equal(out[:, 2], (x <= y).astype(h))
    _assert_ulps(out[:, 3], np.exp((x * 0.5).astype(h).astype(np.float64)), 1, h)
    np.testing.assert_array_equal(out[:, 4], np.minimum(x, y).astype(h))
    np.testing.assert_array_equal(out[:, 5], np.maximum(x * y + x, 0).astype(h))
    big = (f * np.float32(1000)).astype(np.float64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(hs[:, 0], big.astype(h))  # round to nearest, inf past 65520
    rz = f.astype(h)
    rz = np.where(np.abs(rz.astype(np.float64)) > np.abs(f), np.nextafter(rz, h(0)), rz)
    np.testing.assert_array_equal(hs[:, 1], rz)
    np.testing.assert_array_equal(hs[:, 2].view(np.uint16), 0x3C00 + np.arange(n))
    tenx = (x[:, 0] * 10).astype(h).astype(np.float64)
    np.testing.assert_array_equal(ints[:, 0], np.floor(tenx))
    np.testing.assert_array_equal(ints[:, 1], 1)  # 0 / 0
    np.testing.assert_array_equal(ints[:, 2], 1)


def test_cooperative_groups_tiles_and_partitions() -> None:
    v = np.random.default_rng(613).integers(0, 50, 64).astype(np.int32)
    _, sums, scans, labeled, coal = _run(_module("cg_tiles"), "cg_tiles", (1,), (64,), v,
                                         *[np.zeros(64, np.int32) for _ in range(4)])
    tiles = v.reshape(4, 16)
    np.testing.assert_array_equal(sums, np.repeat(tiles.sum(1), 16))
    np.testing.assert_array_equal(scans, np.cumsum(tiles, 1).ravel())
    for w in range(2):
        vw = v[32 * w:32 * (w + 1)]
        for i in range(32):
            grp = vw[(vw & 3) == (vw[i] & 3)]
            assert labeled[32 * w + i] == grp.max() * 100 + grp.size
            if vw[i] % 2 == 0:
                ev = np.flatnonzero(vw % 2 == 0)
                assert coal[32 * w + i] == int(np.searchsorted(ev, i)) * 1000 + ev.size
            else:
                assert coal[32 * w + i] == -1


def test_narrow_vectors_and_bitfields() -> None:
    rng = np.random.default_rng(614)
    n = 64
    px = rng.integers(0, 256, (n, 4)).astype(np.uint8)
    sx = rng.integers(-128, 128, (n, 4)).astype(np.int8)
    hx = rng.integers(-30000, 30000, (n, 2)).astype(np.int16)
    fa, fb, fc, fd = (rng.integers(0, 1 << w, n) for w in (5, 11, 9, 7))
    words = (fa | fb << 5 | fc << 16 | fd << 25).astype(np.uint32)
    *_, out, inv = _run(_module("vectors"), "vectors", (1,), (64,), px, sx, hx, words, np.zeros((n, 8), np.int32),
                        np.zeros((n, 4), np.uint8), np.int32(n))
    p = px.astype(np.int64)
    s = sx.astype(np.int64)
    np.testing.assert_array_equal(out[:, 0], p[:, 0] + 2 * p[:, 1] + 3 * p[:, 2] + 4 * p[:, 3])
    np.testing.assert_array_equal(out[:, 1], s[:, 0] - s[:, 1] + s[:, 2] - s[:, 3])
    np.testing.assert_array_equal(out[:, 2], hx[:, 0].astype(np.int64) * hx[:, 1])
    np.testing.assert_array_equal(out[:, 3:7], np.stack([fa, fb, np.where(fc >= 256, fc - 512, fc), fd], 1))
    np.testing.assert_array_equal(out[:, 7], px.ravel()[3 * np.arange(n) + 1])
    np.testing.assert_array_equal(inv, 255 - px)


# ---------------------------------------------------------- scheduling, clusters, tensor cores, ranges


def test_intra_warp_spin_lock_independent_scheduling() -> None:
    v = np.random.default_rng(700).standard_normal(256).astype(np.float32)
    locks, buckets, counts, _ = _run(_module("spinlock"), "locked_accumulate", (2,), (128,), np.zeros(8, np.int32),
                                     np.zeros(8, np.float32), np.zeros(8, np.int32), v, np.int32(8))
    np.testing.assert_array_equal(counts, 32)
    assert not locks.any()
    # the lock serialises the adds in some order: compare with a float64 sum at float32 tolerance
    np.testing.assert_allclose(buckets, v.reshape(32, 8).sum(0, dtype=np.float64), rtol=1e-5, atol=1e-5)


def test_decoupled_lookback_single_pass_scan() -> None:
    n, tiles = 256 * 20 - 17, 20
    x = np.random.default_rng(701).integers(-100, 100, n).astype(np.int32)
    _, out, ticket, flags, *_ = _run(_module("lookback"), "lookback_scan", (tiles,), (256,), x, np.zeros(n, np.int32),
                                     np.zeros(1, np.uint32), np.zeros(tiles, np.int32), np.zeros(tiles, np.int32),
                                     np.zeros(tiles, np.int32), np.int32(n))
    np.testing.assert_array_equal(out, np.cumsum(x) - x)
    assert ticket[0] == tiles and (flags == 2).all()


def test_thread_block_cluster_distributed_shared_memory() -> None:
    v = np.arange(4 * 64, dtype=np.int32)
    _, out, ranks = _run(_module("cluster"), "cluster_swap", (4,), (64,), v, np.zeros(4 * 64, np.int32),
                         np.zeros(4, np.int32))
    blocks = v.reshape(4, 64)
    partner = np.array([1, 0, 3, 2])
    np.testing.assert_array_equal(out.reshape(4, 64), (blocks[partner] * 10 + (partner % 2)[:, None])[:, ::-1])
    np.testing.assert_array_equal(ranks, [20, 21, 20, 21])


def test_float_subnormals_without_ftz() -> None:
    rng = np.random.default_rng(702)
    n = 64
    a = (rng.uniform(1, 2, n) * 1e-20).astype(np.float32)
    b = (rng.uniform(1, 2, n) * 1e-20).astype(np.float32)  # a * b ~ 1e-40: subnormal in float32
    *_, out, cls = _run(_module("subnormal"), "subnormal", (1,), (64,), a, b, np.zeros((n, 8), np.float32),
                        np.zeros((n, 4), np.int32), np.int32(n))
    x, y = a.astype(np.float64), b.astype(np.float64)
    p = (x * y).astype(np.float32)  # float64 holds the exact product: one rounding, into the subnormals
    p64 = p.astype(np.float64)
    assert (p != 0).all() and (np.abs(p) < np.finfo(np.float32).tiny).all()
    np.testing.assert_array_equal(out[:, 0], p)
    np.testing.assert_array_equal(out[:, 1], np.sqrt(p64).astype(np.float32))
    np.testing.assert_array_equal(out[:, 2], (p64 / y).astype(np.float32))
    np.testing.assert_array_equal(out[:, 3], (x * y * 0.5).astype(np.float32))
    np.testing.assert_array_equal(out[:, 4], (x * y - p64).astype(np.float32))
    np.testing.assert_array_equal(out[:, 5], p + np.float32(1e-45))
    np.testing.assert_array_equal(out[:, 6], (p64 * 2.0**20).astype(np.float32))
    np.testing.assert_array_equal(np.signbit(out[:, 7]), True)
    np.testing.assert_array_equal(cls, np.stack([np.ones(n), p.view(np.uint32) & 0x7FFFFF, np.ones(n),
                                                 np.full(n, 1 + 2 + 4)], 1))


def _tf32(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32: keep 10 mantissa bits, rounding to nearest with ties away from zero."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def test_wmma_double_tf32_bf16_int8() -> None:
    import ml_dtypes

    rng = np.random.default_rng(703)
    mod = _module("wmma_types")
    A, B = rng.standard_normal((8, 16)), rng.standard_normal((16, 8))
    *_, C = _run(mod, "wmma_f64", (1,), (32,), A, B, np.zeros((8, 8)))
    np.testing.assert_allclose(C, A @ B, rtol=0, atol=1e-14)  # DMMA: double fmas in k order
    a, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    *_, c = _run(mod, "wmma_tf32", (1,), (32,), a, b, np.zeros((16, 16), np.float32))
    ref = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=0, atol=1e-5)  # tf32 products are exact in float; 8 float adds
    assert np.abs(c - a.astype(np.float64) @ b).max() > 1e-4  # and the inputs really were rounded to tf32
    ab = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    bb = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    *_, cb = _run(mod, "wmma_bf16", (1,), (32,), ab, bb, np.zeros((16, 16), np.float32))
    np.testing.assert_allclose(cb.T, ab.astype(np.float64) @ bb.astype(np.float64) + 1, rtol=0, atol=1e-5)
    a8 = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    b8 = rng.integers(-128, 128, (16, 16)).astype(np.int8)  # column-major B: row j holds column j
    *_, c8 = _run(mod, "wmma_s8", (1,), (32,), a8, b8, np.zeros((16, 16), np.int32))
    np.testing.assert_array_equal(c8, a8.astype(np.int64) @ b8.T.astype(np.int64))


def test_cucomplex_radix2_fft() -> None:
    rng = np.random.default_rng(704)
    x = (rng.standard_normal((3, 256)) + 1j * rng.standard_normal((3, 256))).astype(np.complex64)
    _, out = _run(_module("fft"), "fft256", (3,), (128,), x, np.zeros_like(x))
    # float32 radix-2 FFT: error ~ eps * log2(n) * ||x|| (about 1e-5 here)
    np.testing.assert_allclose(out, np.fft.fft(x.astype(np.complex128), axis=1), rtol=0, atol=1e-4)


def test_large_struct_parameter() -> None:
    coeffs = np.dtype([("c", np.float32, 1024), ("n", np.int32)])
    k = np.zeros((), coeffs)
    rng = np.random.default_rng(705)
    k["c"] = rng.standard_normal(1024)
    k["n"] = 500
    idx = rng.integers(0, 1024, 512).astype(np.int32)
    _, out = _run(_module("bigparams"), "big_params", (4,), (128,), k[()], idx, np.zeros(512, np.float32))
    c = k["c"]
    np.testing.assert_array_equal(out[:500], (c[idx] * np.float32(2) + c[1023 - idx])[:500])
    assert not out[500:].any()


def test_shared_memory_atomics_all_widths_and_large_dynamic_smem() -> None:
    v = np.random.default_rng(706).integers(0, 1000, 128).astype(np.int32)
    mod = _module("shared_atomics")
    fn = mod.get_function("shared_atomics")
    fn.set_attribute("max_dynamic_shared_size_bytes", 64 * 1024)
    _, o64, of, od, o32 = _run(mod, "shared_atomics", (1,), (128,), v, np.zeros(3, np.uint64), np.zeros(1, np.float32),
                               np.zeros(1), np.zeros(9, np.uint32), shared=64 * 1024)
    x = v.astype(np.uint64) << np.uint64(33)
    assert o64[0] == int(x.sum()) % 2**64
    assert o64[1] == int((x + np.uint64(5)).min()) and o64[2] == int((x ^ np.uint64(0xFFFF)).max())
    assert of[0] == (v * 0.25).sum()  # quarters of small integers: every partial sum is exact
    assert od[0] == pytest.approx((v * 0.1).sum(), rel=1e-13)
    inc = 0
    for _ in range(128):
        inc = 0 if inc >= 50 else inc + 1
    assert o32[0] == inc and o32[1] == v.sum()
    nwords = 64 * 1024 // 4
    np.testing.assert_array_equal(o32[2:], [nwords - 1 - k + len(range(k, 128, 7)) for k in range(7)])


def test_inline_ptx_ldmatrix_mma_sync() -> None:
    rng = np.random.default_rng(707)
    A = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    B = rng.uniform(-1, 1, (16, 8)).astype(np.float16)
    *_, C = _run(_module("mma_ptx"), "mma_m16n8k16", (1,), (32,), A, B, np.zeros((16, 8), np.float32))
    # half products are exact in float; 16 float additions in the tensor core's order
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=0, atol=1e-5)


def test_fp8_conversions() -> None:
    import ml_dtypes

    rng = np.random.default_rng(708)
    n = 128
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 12, n))).astype(np.float32)
    x[:4] = [1000.0, -1e6, 3e-3, 0.0]  # beyond e4m3's 448: saturates (satfinite); e5m2 keeps up to 57344
    *_, out, raw = _run(_module("fp8"), "fp8", (1,), (128,), x, np.zeros((n, 4), np.float32),
                        np.zeros((n, 2), np.uint8), np.int32(n))

    def sat(v: np.ndarray, dt: type, mx: float) -> np.ndarray:
        return np.clip(v.astype(np.float64), -mx, mx).astype(np.float32).astype(dt)

    e4 = sat(x, ml_dtypes.float8_e4m3fn, 448.0)
    e5 = sat(x, ml_dtypes.float8_e5m2, 57344.0)
    np.testing.assert_array_equal(out[:, 0], e4.astype(np.float32))
    np.testing.assert_array_equal(out[:, 1], e5.astype(np.float32))
    np.testing.assert_array_equal(raw[:, 0], e4.view(np.uint8))
    np.testing.assert_array_equal(raw[:, 1], e5.view(np.uint8))
    np.testing.assert_array_equal(out[:, 2], e4.astype(np.float32))
    np.testing.assert_array_equal(out[:, 3], sat(-x * np.float32(0.5), ml_dtypes.float8_e4m3fn, 448.0)
                                  .astype(np.float32))


def test_libcudacxx_utilities_match_all_redux_invoke_one() -> None:
    v = np.random.default_rng(709).standard_normal(64).astype(np.float32)
    _, ints, floats, elected = _run(_module("misc_modern"), "misc_modern", (1,), (64,), v,
                                    np.zeros((64, 8), np.int32), np.zeros((64, 2), np.float32),
                                    np.zeros(1, np.int32))
    t = np.arange(64)
    k = 4 + (t & 3)
    np.testing.assert_array_equal(ints[:, 0], t * k * (k - 1) // 2)
    np.testing.assert_array_equal(ints[:, 1], ((t & 3) + 1) * t + 4)
    np.testing.assert_array_equal(ints[:, 2], 2**31 - 1 - t)
    np.testing.assert_array_equal(ints[:, 3], v.view(np.int32))
    np.testing.assert_array_equal(ints[:, 4], -1)  # every lane of a warp agrees on t >> 5
    np.testing.assert_array_equal(ints[:, 5], 1)
    np.testing.assert_array_equal(ints[:, 6], -1)
    np.testing.assert_array_equal(ints[:, 7], 100 - (t | 31))
    z = v.astype(np.complex64) + np.complex64(1j)
    w = z * z + np.complex64(0.5 - 0.5j)
    np.testing.assert_allclose(floats[:, 0], w.real, rtol=1e-6, atol=1e-6)  # fma contraction vs NumPy
    np.testing.assert_allclose(floats[:, 1], np.abs(z.astype(np.complex128)), rtol=3e-7)
    assert elected[0] == 2  # one lane per warp


def test_vector_atomic_add_float2_float4() -> None:
    v = np.random.default_rng(710).integers(-8, 8, 64).astype(np.float32)
    a2, a4, _ = _run(_module("vector_atomics"), "vector_atomics", (1,), (64,), np.zeros(2, np.float32),
                     np.zeros((2, 4), np.float32), v)
    np.testing.assert_array_equal(a2, [v.sum(), 64])  # small integers: every order sums exactly
    np.testing.assert_array_equal(a4, [[32, v[0::2].sum(), 64, -v[0::2].sum()],
                                       [32, v[1::2].sum(), 64, -v[1::2].sum()]])


def test_inline_ptx_carry_chains_bigint() -> None:
    rng = np.random.default_rng(711)
    n = 32
    a = rng.integers(0, 2**32, (n, 8), dtype=np.uint32)
    b = rng.integers(0, 2**32, (n, 8), dtype=np.uint32)
    a[0], b[0] = 0xFFFFFFFF, 1  # a carry through every limb, and a borrow out
    _, _, s, d, br, p = _run(_module("multiprecision"), "bigint", (1,), (32,), a, b, np.zeros_like(a), np.zeros_like(a),
                             np.zeros(n, np.uint32), np.zeros_like(a), np.int32(n))

    def big(limbs: np.ndarray) -> int:
        return sum(int(x) << (32 * k) for k, x in enumerate(limbs))

    for i in range(n):
        x, y = big(a[i]), big(b[i])
        assert big(s[i]) == (x + y) % 2**256
        assert big(d[i]) == (x - y) % 2**256 and br[i] == (0xFFFFFFFF if x < y else 0)
        assert big(p[i]) == big(a[i, :4]) * big(b[i, :4])


def test_named_barriers_warp_specialisation() -> None:
    x = np.random.default_rng(712).standard_normal(32 * 5).astype(np.float32)
    _, out = _run(_module("named_barriers"), "producer_consumer", (1,), (96,), x, np.zeros(2 * 32 * 5, np.float32),
                  np.int32(5))
    d = x * np.float32(2)
    np.testing.assert_array_equal(out[:160], d + np.float32(1))
    np.testing.assert_array_equal(out[160:], d * d)


def test_device_assert_is_cuda_error_assert() -> None:
    v = np.arange(64, dtype=np.int32)
    mod = _module("device_assert")
    _, out = _run(mod, "checked", (1,), (64,), v, np.zeros(64, np.int32), np.int32(64))
    np.testing.assert_array_equal(out, 2 * v)  # a passing assert changes nothing
    v[37] = -1
    try:
        with pytest.raises(cuda.CudaError, match="cudaErrorAssert"):
            _run(mod, "checked", (1,), (64,), v, np.zeros(64, np.int32), np.int32(64))
            cuda.synchronize()
    finally:
        cuda.current_device().reset()  # the assert is sticky on the context, as in CUDA


def test_half_bf16_atomics_and_rounded_rsqrt() -> None:
    from fractions import Fraction as F

    import ml_dtypes

    rng = np.random.default_rng(713)
    n = 64
    f = rng.uniform(-8, 8, n).astype(np.float32)
    hsum, bsum, _, ho, bo, fo = _run(_module("half_extra2"), "half_extra2", (1,), (64,), np.zeros(1, np.float16),
                                     np.zeros(2, ml_dtypes.bfloat16), f, np.zeros((n, 4), np.float16),
                                     np.zeros((n, 2), ml_dtypes.bfloat16), np.zeros(n, np.float32), np.int32(n))
    assert hsum[0] == n and bsum.astype(np.float32).tolist() == [n, 2 * n]  # small integers: exact in any order
    h = f.astype(np.float16)
    hx = h.astype(np.float64)
    np.testing.assert_array_equal(ho[:, 0], np.maximum(hx, 0.25).astype(np.float16))
    _assert_ulps(ho[:, 1], 1 / np.sqrt(np.abs(hx)), 1, np.float16)
    _assert_ulps(ho[:, 2], 1 / hx, 1, np.float16)
    np.testing.assert_array_equal(ho[:, 3], np.abs(h))
    bx = f.astype(ml_dtypes.bfloat16).astype(np.float64)
    ref = np.maximum(np.stack([bx * bx + bx, bx * bx - bx], 1), 0)  # one fma rounding, then relu
    np.testing.assert_array_equal(bo.astype(np.float64), ref.astype(np.float32).astype(ml_dtypes.bfloat16)
                                  .astype(np.float64))
    for x, r in zip(np.abs(f), fo):  # correctly rounded: 1/sqrt(x) lies between r's neighbouring midpoints
        lo = (F(float(r)) + F(float(np.nextafter(r, np.float32(0))))) / 2
        hi = (F(float(r)) + F(float(np.nextafter(r, np.float32(np.inf))))) / 2
        assert lo * lo * F(float(x)) <= 1 <= hi * hi * F(float(x)), (x, r)


def test_inline_ptx_less_common_instructions() -> None:
    import ml_dtypes

    rng = np.random.default_rng(714)
    fa = rng.standard_normal(64).astype(np.float32) * np.float32(1e3)
    fb = rng.standard_normal(64).astype(np.float32) * np.float32(1e3)
    fa[5], fb[9], fa[12], fb[12] = np.nan, np.nan, np.inf, -np.inf
    a, b = fa.view(np.uint32), fb.view(np.uint32)
    a[40:48] = rng.integers(0, 2**32, 8, dtype=np.uint32) | 0x80000000  # big and negative integer patterns
    b[40:48] = rng.integers(0, 2**32, 8, dtype=np.uint32) & 0x7FFFFFFF
    *_, out = _run(_module("ptx_ops"), "ptx_ops", (1,), (64,), a, b, np.zeros((64, 20), np.uint32))
    m32 = 0xFFFFFFFF

    def s32(v: int) -> int:
        return _wrap(v, 32)

    def sat(v: int) -> int:
        return min(max(v, -(2**31)), 2**31 - 1) & m32

    def f32(u: int) -> float:
        return float(np.uint32(u).view(np.float32))

    def bits(v: float) -> int:
        return int(np.float32(v).view(np.uint32))

    def f16(v: float) -> int:
        return int(np.float16(v).view(np.uint16))

    def bf16_relu(v: float) -> int:
        return int(np.float32(max(v, 0.0)).astype(ml_dtypes.bfloat16).view(np.uint16))

    def e4m3(v: float) -> int:
        return int(np.float32(min(max(v, -448.0), 448.0)).astype(ml_dtypes.float8_e4m3fn).view(np.uint8))

    for t in range(64):
        x, y, s = int(a[t]), int(b[t]), t
        sx, sy = s32(x), s32(y)
        o = [int(v) for v in out[t]]
        assert o[0] == sat(sx + sy) and o[1] == sat(sx - sy), t
        assert o[2] == sat(((sx * sy) >> 32) + sx), t
        v = x >> (s & 31)
        assert o[3] == (v.bit_length() - 1 if v else m32), t
        iv = sx >> (s & 31)
        pos = (~iv if iv < 0 else iv).bit_length() - 1
        assert o[4] == (31 - pos if iv not in (0, -1) else m32), t
        assert o[5] == (((1 << min(y & 63, 32)) - 1) << (x & 31)) & m32, t
        n = min(y & 63, 32)
        assert o[6] == (0 if n == 0 else _wrap(x & ((1 << n) - 1), n) & m32), t
        pool = (y << 32 | x).to_bytes(8, "little")
        assert o[7] == int.from_bytes(bytes(pool[(s & 3) + k] for k in range(4)), "little"), t
        fx, fy = f32(x), f32(y)
        if not math.isnan(fy):
            assert o[8] == (y & 0x7FFFFFFF) | (x & 0x80000000), t  # copysign: a's sign on b
        nan = math.isnan(fx) or math.isnan(fy)
        assert o[9] == (0x7FFFFFFF if nan else bits(max(fx, fy))), t
        # without .NaN, min ignores one NaN operand; .xorsign still takes both operands' sign bits
        mag = min(abs(v) for v in (fx, fy) if not math.isnan(v)) if not (math.isnan(fx) and math.isnan(fy)) else None
        assert mag is not None and o[10] == (bits(mag) | ((x ^ y) & 0x80000000)), t
        m1, m2 = f32(x & 0x43FFFFFF), f32(y & 0xC3FFFFFF)
        assert o[11] == int(_tf32(np.array([m1], np.float32)).view(np.uint32)[0]), t
        assert o[12] == f16(m1) << 16 | f16(m2), t
        assert o[13] == bf16_relu(m1) << 16 | bf16_relu(m2), t
        assert o[14] == e4m3(m1) << 8 | e4m3(m2), t
        assert o[15] == int(t % 32 == 0), t
        lane, base = t % 32, t - t % 32
        r, c0 = lane // 4, 2 * (lane % 4)

        def elem(i: int, j: int, base: int = base) -> int:  # the warp's 8x8 matrix: row i, column j
            return (int(a[base + 4 * i + j // 2]) >> (16 * (j % 2))) & 0xFFFF

        assert o[16] == elem(c0, r) | elem(c0 + 1, r) << 16, t
        assert o[17] == (1 << lane) - 1 and o[18] == m32 & ~((1 << lane) - 1), t
        assert o[19] == 1, t


def test_cluster_special_registers_in_a_plain_launch() -> None:
    try:
        (out,) = _run(_module("cluster_regs"), "cluster_regs", (3,), (32,), np.zeros(12, np.uint32))
        cuda.synchronize()
    finally:
        cuda.current_device().reset()  # the fault is sticky on the context
    np.testing.assert_array_equal(out.reshape(3, 4), [[0, 1, 0, 0], [0, 1, 1, 0], [0, 1, 2, 0]])


def test_device_abi_structs_thunks_tables_small_params() -> None:
    rng = np.random.default_rng(715)
    v = rng.standard_normal(3 * 32).astype(np.float32)
    f4 = np.array([0.5, -1.25, 2.0, 9.0], np.float32)
    d2 = np.array([1.5, -0.25])
    _, fout, dout, iout = _run(_module("abi"), "abi", (1,), (32,), v, np.zeros((32, 4), np.float32), np.zeros(32),
                               np.zeros((32, 4), np.int32), np.uint8(1), np.int8(-3), np.int16(5),
                               np.float16(4.0), f4.tobytes(), d2.tobytes())  # a C++ bool parameter is a .u8
    u = v.reshape(32, 3).astype(np.float64)
    np.testing.assert_allclose(fout[:, :3], np.cross(u, f4[:3].astype(np.float64)), rtol=0, atol=1e-5)  # fma
    # v * 3 + bias contracts to one fma: the exact value rounded once
    np.testing.assert_array_equal(fout[:, 3], (v[:32].astype(np.float64) * 3 + 0.5).astype(np.float32))
    t = np.arange(32)
    np.testing.assert_array_equal(dout, d2[0] * t * 5 + d2[1])
    np.testing.assert_array_equal(iout[:, 0], t ^ 0x55)
    np.testing.assert_array_equal(iout[:, 1], ((t - 3 + 128) % 256) - 128)
    np.testing.assert_array_equal(iout[:, 2], 37 + np.array([2, 3, 5, 7, 11, 13, 17, 19])[t & 7] + 4)
    words = ["alpha", "beta", "gamma"]
    np.testing.assert_array_equal(iout[:, 3], [ord((words[i % 3] + "\0")[i % 4]) for i in t])


def test_managed_variables() -> None:
    mod = _module("managed")
    v = np.random.default_rng(716).standard_normal(1000).astype(np.float32)
    _run(mod, "managed_count", (8,), (128,), v, np.int32(1000))
    cuda.synchronize()
    hits, total = np.zeros(1, np.int32), np.zeros(4, np.float32)
    cuda.memcpy(hits, mod.get_global("hits")[0], 4, "DeviceToHost")
    cuda.memcpy(total, mod.get_global("total")[0], 16, "DeviceToHost")
    assert hits[0] == (v > 0).sum()
    np.testing.assert_array_equal(total, [250, 250, 250, 250])


def test_device_printf_conversions(capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(717)
    n = 8
    d = rng.standard_normal(n) * np.array([1, 1e-5, 1e5, 3, 0.5, 1e12, -2, 7])
    ll = rng.integers(-(2**40), 2**40, n, dtype=np.int64)
    mod = _module("printf_formats")
    mod.get_function("formats").launch((1,), (n,), (cuda.to_device(d), cuda.to_device(ll), np.int32(n)))
    cuda.synchronize()
    lines = sorted(capsys.readouterr().out.splitlines())
    # Python's % follows C's printf for these conversions once the C length modifiers are dropped
    fmt = "[%2d] %+d|%-6s|%08.3f|%g|%e|%.3g|%o|%#x|%X|%u|%d|%x|%c|%%|%5.1f|%-8.2e|%i|%d"
    expect = []
    for i in range(n):
        x, y = float(d[i]), int(ll[i])
        inf = math.copysign(math.inf, x) * (1 if i % 3 else -1)
        expect.append(fmt % (i, _wrap(y, 32), "ab" if i % 2 else "xyz", x, x, x, x * 1e10, y & 0o777, y & 0xFFFFFFFF,
                             (y >> 8) & 0xFFFFFFFF, y & (2**64 - 1), y, (y * 3) & (2**64 - 1), 97 + i, inf, x * 1e-7,
                             int(math.fmod(y, 1000)), _wrap(y, 16)))
    assert lines == sorted(expect)


def test_early_return_before_syncthreads_and_divergent_loops() -> None:
    mod = _module("early_exit")
    x = np.random.default_rng(718).integers(-50, 50, 1000).astype(np.float32)
    _, out = _run(mod, "early_exit_sum", (4,), (256,), x, np.zeros(4, np.float32), np.int32(1000))
    np.testing.assert_array_equal(out, [x[k:k + 256].sum() for k in range(0, 1000, 256)])  # small integers: exact
    trips = np.random.default_rng(719).integers(0, 20, 64).astype(np.int32)
    _, got = _run(mod, "divergent_loops", (1,), (64,), trips, np.zeros(192, np.int32))
    t = np.arange(64)
    acc = (t + 1) * trips * (trips - 1) // 2
    np.testing.assert_array_equal(got[0:128:2], acc)
    np.testing.assert_array_equal(got[1:128:2], np.repeat(acc.reshape(2, 32).sum(1), 32))
    for w in range(2):
        lanes = t[32 * w:32 * w + 32]
        odd = lanes[trips[lanes] & 1 == 1]
        expect = np.where(trips[lanes] & 1 == 1, odd.size * 100 + (odd.min() if odd.size else 0), -1)
        np.testing.assert_array_equal(got[128 + 32 * w:128 + 32 * w + 32], expect)


def test_parboil_sgemm_register_tiling() -> None:
    rng = np.random.default_rng(720)
    m, n, k = 128, 32, 24  # column-major: A is m x k (lda = m), B is n x k (ldb = n), C is m x n
    A = rng.uniform(-1, 1, (k, m)).astype(np.float32)  # A[col][row]
    B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    C = rng.uniform(-1, 1, (n, m)).astype(np.float32)
    alpha, beta = np.float32(1.5), np.float32(0.5)
    *_, c = _run(_module("sgemm_regtile"), "sgemm_nt", (m // 128, n // 16), (16, 8), A, np.int32(m), B,
                  np.int32(n), C.copy(), np.int32(m), np.int32(k), alpha, beta)
    ref = float(alpha) * (A.T.astype(np.float64) @ B) + float(beta) * C.T
    np.testing.assert_allclose(c.T, ref, rtol=0, atol=1e-5)  # 24-term float32 dot products of |x| < 1


def test_parboil_lbm_d2q9() -> None:
    rng = np.random.default_rng(721)
    nx, ny, omega, steps = 24, 16, 1.2, 3
    cx = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1])
    cy = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1])
    w = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
    opp = np.array([0, 3, 4, 1, 2, 7, 8, 5, 6])
    f0 = (w[:, None, None] * (1 + 0.05 * rng.standard_normal((9, ny, nx)))).astype(np.float32)
    obstacle = np.zeros((ny, nx), np.uint8)
    obstacle[6:9, 10:13] = 1
    mod = _module("lbm")
    d_a, d_b, d_o = cuda.to_device(f0), cuda.to_device(np.zeros_like(f0)), cuda.to_device(obstacle)
    for _ in range(steps):
        _launch(mod, "lbm_step", (_cdiv(nx, 8), _cdiv(ny, 8)), (8, 8), d_a, d_b, d_o, np.int32(nx), np.int32(ny),
                np.float32(omega))
        d_a, d_b = d_b, d_a
    f = f0.astype(np.float64)
    for _ in range(steps):
        g = np.stack([np.roll(f[q], (cy[q], cx[q]), axis=(0, 1)) for q in range(9)])
        rho = g.sum(0)
        ux, uy = (cx[:, None, None] * g).sum(0) / rho, (cy[:, None, None] * g).sum(0) / rho
        cu = 3 * (cx[:, None, None] * ux + cy[:, None, None] * uy)
        feq = w[:, None, None] * rho * (1 + cu + 0.5 * cu * cu - 1.5 * (ux * ux + uy * uy))
        f = np.where(obstacle.astype(bool), g[opp], g + omega * (feq - g))
    np.testing.assert_allclose(d_a.get(), f, rtol=0, atol=2e-6)  # O(0.1) populations, a few float32 steps


def test_parboil_bfs_shared_queue() -> None:
    rng = np.random.default_rng(722)
    n = 3000
    adj = [np.unique(rng.integers(0, n, rng.integers(1, 6))) for _ in range(n)]
    row_ptr = np.concatenate([[0], np.cumsum([a.size for a in adj])]).astype(np.int32)
    cols = np.concatenate(adj).astype(np.int32)
    mod = _module("parboil_bfs")
    color, cost = np.zeros(n, np.int32), np.full(n, -1, np.int32)
    color[0], cost[0] = 1, 0
    d_rp, d_cols, d_color, d_cost = map(cuda.to_device, (row_ptr, cols, color, cost))
    d_front, d_next = cuda.to_device(np.zeros(n, np.int32)), cuda.to_device(np.zeros(n, np.int32))
    d_size = cuda.to_device(np.zeros(1, np.int32))
    size, level = 1, 0
    while size:
        d_size.set(np.zeros(1, np.int32))
        _launch(mod, "bfs_level", (4,), (256,), d_rp, d_cols, d_front, np.int32(size), d_next, d_size, d_color, d_cost,
                np.int32(level))
        size = int(d_size.get()[0])
        d_front, d_next = d_next, d_front
        level += 1
    ref = np.full(n, -1)
    ref[0], frontier = 0, [0]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if ref[v] < 0:
                    ref[v] = ref[u] + 1
                    nxt.append(int(v))
        frontier = nxt
    np.testing.assert_array_equal(d_cost.get(), ref)
    assert level > 5  # several levels of frontier expansion


def test_polybench_gemver_syr2k_doitgen_lu() -> None:
    rng = np.random.default_rng(723)
    mod = _module("polybench2")
    n = 40
    a = rng.uniform(0, 1, (n, n)).astype(np.float32)
    u1, v1, u2, v2, y, z = (rng.uniform(0, 1, n).astype(np.float32) for _ in range(6))
    alpha, beta = np.float32(1.5), np.float32(1.2)
    d_a, d_x, d_w = cuda.to_device(a), cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.zeros(n, np.float32))
    d_u1, d_v1, d_u2, d_v2, d_y, d_z = map(cuda.to_device, (u1, v1, u2, v2, y, z))
    _launch(mod, "gemver_k1", (_cdiv(n, 8), _cdiv(n, 8)), (8, 8), d_a, d_u1, d_v1, d_u2, d_v2, np.int32(n))
    _launch(mod, "gemver_k2", (1,), (64,), d_a, d_x, d_y, beta, np.int32(n))
    _launch(mod, "gemver_k3", (1,), (64,), d_x, d_z, np.int32(n))
    _launch(mod, "gemver_k4", (1,), (64,), d_a, d_x, d_w, alpha, np.int32(n))
    A = a.astype(np.float64) + np.outer(u1, v1) + np.outer(u2, v2)
    x = float(beta) * A.T @ y + z
    np.testing.assert_allclose(d_a.get(), A, rtol=1e-6)
    np.testing.assert_allclose(d_x.get(), x, rtol=1e-5)  # positive terms: relative error ~ n ulps
    np.testing.assert_allclose(d_w.get(), float(alpha) * A @ x, rtol=1e-5)
    m = 12
    ad, bd, cd = rng.standard_normal((n, m)), rng.standard_normal((n, m)), rng.standard_normal((n, n))
    *_, c = _run(mod, "syr2k", (_cdiv(n, 8), _cdiv(n, 8)), (8, 8), ad, bd, cd.copy(), np.float64(0.7), np.float64(1.3),
                 np.int32(n), np.int32(m))
    np.testing.assert_allclose(c, 1.3 * cd + 0.7 * (ad @ bd.T + bd @ ad.T), rtol=1e-12, atol=1e-12)
    nr, nq, npp = 3, 10, 12
    A3 = rng.uniform(-1, 1, (nr, nq, npp)).astype(np.float32)
    C4 = rng.uniform(-1, 1, (npp, npp)).astype(np.float32)
    d_s = cuda.to_device(np.zeros_like(A3))
    d_A3, d_C4 = cuda.to_device(A3), cuda.to_device(C4)
    for r in range(nr):
        _launch(mod, "doitgen", (_cdiv(npp, 8), _cdiv(nq, 8)), (8, 8), d_A3, d_C4, d_s, np.int32(nr), np.int32(nq),
                np.int32(npp), np.int32(r))
    np.testing.assert_allclose(d_s.get(), A3.astype(np.float64) @ C4, rtol=0, atol=1e-5)
    L = rng.uniform(0, 1, (n, n)) + np.eye(n) * n
    d_l = cuda.to_device(L)
    for k in range(n):
        _launch(mod, "lu_scale", (1,), (64,), d_l, np.int32(n), np.int32(k))
        _launch(mod, "lu_update", (_cdiv(n, 8), _cdiv(n, 8)), (8, 8), d_l, np.int32(n), np.int32(k))
    ref = L.copy()
    for k in range(n):
        ref[k, k + 1:] /= ref[k, k]
        ref[k + 1:, k + 1:] -= np.outer(ref[k + 1:, k], ref[k, k + 1:])
    np.testing.assert_allclose(d_l.get(), ref, rtol=1e-12, atol=1e-13)


def test_cub_radix_sort_load_store_transpose() -> None:
    rng = np.random.default_rng(724)
    keys = rng.integers(0, 2**32, 3 * 512, dtype=np.uint32)
    keys[:40] = keys[40:80]  # duplicate keys: the radix sort is stable
    vals = np.arange(keys.size, dtype=np.int32)
    *_, ko, vo = _run(_module("cub_more"), "cub_sort", (3,), (128,), keys, vals, np.zeros_like(keys),
                      np.zeros_like(vals))
    for b in range(3):
        sl = slice(512 * b, 512 * (b + 1))
        order = np.argsort(keys[sl], kind="stable")
        np.testing.assert_array_equal(ko[sl], keys[sl][order])
        np.testing.assert_array_equal(vo[sl], vals[sl][order])


def test_cub_histogram_discontinuity_warp_primitives() -> None:
    rng = np.random.default_rng(725)
    by = rng.integers(0, 256, 512).astype(np.uint8)
    vals = np.repeat(rng.integers(0, 5, 300), rng.integers(2, 5, 300))[:512].astype(np.int32)
    fx = rng.integers(-100, 100, 128).astype(np.float32)
    _, _, _, hist, heads, wmax, wscan, bsum = _run(_module("cub_more"), "cub_misc", (1,), (128,), by, vals, fx,
                                                   np.zeros(256, np.uint32), np.zeros(512, np.int32),
                                                   np.zeros(4, np.int32), np.zeros(128, np.int32),
                                                   np.zeros(1, np.float32))
    np.testing.assert_array_equal(hist, np.bincount(by, minlength=256))
    np.testing.assert_array_equal(heads, np.concatenate([[1], vals[1:] != vals[:-1]]))
    items = vals.reshape(128, 4)
    np.testing.assert_array_equal(wmax, items[:, 0].reshape(4, 32).max(1))
    np.testing.assert_array_equal(wscan, np.cumsum(items[:, 1].reshape(4, 32), 1).ravel())
    assert bsum[0] == fx.sum()  # small integers: exact in any order


def test_big_switch_and_irreducible_goto_loop() -> None:
    rng = np.random.default_rng(726)
    sel = rng.integers(0, 18, 64).astype(np.int32)
    v = rng.integers(-1000, 1000, 64).astype(np.int32)
    _, _, out = _run(_module("jumps"), "jumps", (1,), (64,), sel, v, np.zeros(192, np.int32))

    def case(k: int, x: int) -> tuple[int, int]:
        u = x & 0xFFFFFFFF
        table = {0: x + 1, 1: 3 * x, 2: x ^ 0x1234, 3: x << 3, 4: bin(u).count("1") + 40, 5: 3 * x + 1,
                 6: int(math.fmod(x, 7)), 7: -x, 8: x * x, 9: 3 * x - (x + 1), 10: _c_div(x, 3),
                 11: int(f"{u:032b}"[::-1], 2), 12: x | 0xF0, 13: (x + 1) * 2, 14: max(x, 100), 15: min(x, -100)}
        marks = {2: 2, 3: 3, 6: 6, 8: 8, 11: 11, 14: 14}
        return _wrap(table.get(k, 999), 32), marks.get(k, 0)

    def machine(x: int) -> int:
        steps, acc, state = 0, x & 1023, "B" if x & 1 else "A"
        while True:
            if state == "A":
                acc, steps = acc * 3 + 1, steps + 1
                if acc % 5 == 0 or steps > 40:
                    break
                state = "B"
            else:
                acc, steps = acc // 2 + 7, steps + 1
                if steps >= 30:
                    break
                state = "A"
        return _wrap(acc * 100 + steps, 32)

    for t in range(64):
        r, mark = case(int(sel[t]), int(v[t]))
        assert (out[t], out[64 + t], out[128 + t]) == (r, mark, machine(int(v[t]))), t


def test_brx_idx_jump_table() -> None:
    sel = np.random.default_rng(727).integers(0, 4, 64).astype(np.uint32)
    _, out = _run(_module("brx"), "brx", (1,), (64,), sel, np.zeros(64, np.uint32))
    np.testing.assert_array_equal(out, np.array([100, 211, 322, 433])[sel] + np.arange(64))


def test_long_unrolled_straight_line_kernel() -> None:
    x = np.random.default_rng(728).standard_normal((256, 3))
    _, out = _run(_module("big_kernel"), "big_kernel", (2,), (128,), x, np.zeros_like(x), np.int32(256))
    a, b, c = x[:, 0].copy(), x[:, 1].copy(), x[:, 2].copy()
    for k in range(1024):
        a = a * 0.999 + b * 1e-3
        b = b - a * 1e-4 + c * 1e-5
        c = c * 0.9995 + (k & 7) * 1e-6
    # a contracting recurrence: the kernel's fma contractions differ from NumPy's by a few ulps in total
    np.testing.assert_allclose(out, np.stack([a, b, c], 1), rtol=1e-12, atol=1e-14)


def test_legacy_warp_synchronous_code_without_syncwarp() -> None:
    x = np.random.default_rng(729).integers(-1000, 1000, 4 * 128).astype(np.int32)
    mod = _module("legacy_warp_sync")
    _, out = _run(mod, "legacy_reduce", (4,), (128,), x, np.zeros(4, np.int32))
    np.testing.assert_array_equal(out, x.reshape(4, 128).sum(1))
    _, scan = _run(mod, "legacy_warp_scan", (4,), (128,), x, np.zeros_like(x))
    np.testing.assert_array_equal(scan, np.cumsum(x.reshape(-1, 32), 1).ravel())


def test_fast_math_intrinsics_and_half_rounding() -> None:
    rng = np.random.default_rng(730)
    n = 128
    a = rng.uniform(-np.pi, np.pi, n).astype(np.float32)
    b = rng.uniform(0.5, 4, n).astype(np.float32)
    h = rng.uniform(-6, 6, (n, 2)).astype(np.float16)
    h[0] = [2.5, -2.5]  # rint ties to even
    *_, out, _, ho = _run(_module("fast_intrinsics"), "fast_intrinsics", (1,), (128,), a, b,
                          np.zeros((n, 11), np.float32), h, np.zeros((n, 7, 2), np.float16), np.int32(n))
    x, y = a.astype(np.float64), b.astype(np.float64)
    # the Programming Guide's bounds for the hardware approximations (SFU ex2/lg2/sin/cos, rcp)
    ex = np.exp(x)
    _assert_ulps(out[:, 0], ex, 2 + np.floor(np.abs(1.173 * x)))  # the guide's 2 + floor(|1.173 x|) ulps
    np.testing.assert_allclose(out[:, 1], np.log(y), rtol=0, atol=2**-21.41 + 1e-7)
    np.testing.assert_allclose(out[:, 2], np.sin(x), rtol=0, atol=2**-21.41)
    np.testing.assert_allclose(out[:, 3], np.cos(x), rtol=0, atol=2**-21.41)
    np.testing.assert_allclose(out[:, 4], np.tan((a * np.float32(0.4)).astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[:, 5], y**x, rtol=1e-5)  # ex2(y * lg2(x)): lg2's 2^-22 error times |y lg2 x|
    _assert_ulps(out[:, 6], x / y, 2)
    np.testing.assert_allclose(out[:, 7], 10 ** (a * np.float32(0.5)).astype(np.float64), rtol=1e-5)
    np.testing.assert_allclose(out[:, 8], np.log2(y), rtol=0, atol=2**-22 + 1e-7)
    np.testing.assert_allclose(out[:, 9], np.sin(x), rtol=0, atol=2**-21.41)
    np.testing.assert_allclose(out[:, 10], np.cos(x), rtol=0, atol=2**-21.41)
    hx = h.astype(np.float64)
    np.testing.assert_array_equal(ho[:, 0], np.ceil(hx).astype(np.float16))
    np.testing.assert_array_equal(ho[:, 1], np.floor(hx).astype(np.float16))
    np.testing.assert_array_equal(ho[:, 2], np.rint(hx).astype(np.float16))
    np.testing.assert_array_equal(ho[:, 3], np.trunc(hx).astype(np.float16))
    np.testing.assert_allclose(ho[:, 4].astype(np.float64), np.sin(hx), rtol=0, atol=2e-3)  # half ulp at 1 is 1e-3
    np.testing.assert_allclose(ho[:, 5].astype(np.float64), np.cos(hx), rtol=0, atol=2e-3)
    _assert_ulps(ho[:, 6], np.log2((np.abs(h) + np.float16(1)).astype(np.float64)), 1, np.float16)  # half sum


def test_address_space_predicates_and_conversions() -> None:
    sel = np.arange(32, dtype=np.int32) * 3
    _, spaces, _ = _run(_module("addr_spaces"), "addr_spaces", (1,), (32,), np.zeros(4, np.float32),
                        np.zeros(5, np.int32), sel)
    np.testing.assert_array_equal(spaces, [1 + 2 + 4 + 8, 0, 1, 1, 0 + 0 + 1])  # thread 0: loc = {0, 0} then +1


def test_grid_constant_parameter_address() -> None:
    table = np.zeros((), np.dtype([("w", np.float32, 64), ("n", np.int32)]))
    rng = np.random.default_rng(731)
    table["w"][:16] = rng.integers(-4, 4, 16)
    table["n"] = 16
    x = rng.integers(-4, 4, (64, 16)).astype(np.float32)
    _, out = _run(_module("grid_constant"), "grid_constant", (2,), (32,), table[()], x, np.zeros(64, np.float32))
    np.testing.assert_array_equal(out, x @ table["w"][:16] + np.tile([0.5, 1.5, -2.0, 4.0], 16))  # exact ints


def test_trap_aborts_the_launch() -> None:
    v = np.arange(32, dtype=np.int32)
    mod = _module("trap")
    _, out = _run(mod, "trap_if_negative", (1,), (32,), v, np.zeros(32, np.int32))
    np.testing.assert_array_equal(out, v)
    v[5] = -1
    try:
        with pytest.raises(cuda.DeviceFault, match="cudaErrorLaunchFailure"):
            _run(mod, "trap_if_negative", (1,), (32,), v, np.zeros(32, np.int32))
            cuda.synchronize()
    finally:
        cuda.current_device().reset()  # a trap is sticky on the context, as in CUDA


def test_cp_async_16_byte_zero_fill_and_libcudacxx_pipeline() -> None:
    rng = np.random.default_rng(732)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    mod = _module("cp_async")
    _, out = _run(mod, "cp_async16", (1,), (64,), x, np.full(256, 7, np.float32), np.int32(201))
    staged = x.ravel().copy()
    staged[201:] = 0  # bytes past src-size are zero-filled
    np.testing.assert_array_equal(out.reshape(64, 4), staged.reshape(64, 4)[::-1])
    y = rng.standard_normal((5, 64, 4)).astype(np.float32)
    _, acc = _run(mod, "libcu_pipeline", (1,), (64,), y, np.zeros(64, np.float32), np.int32(5))
    ref = np.zeros(64, np.float32)
    for s in range(5):  # the kernel's float32 association: acc + (((x + y) + z) + w)
        v = y[s]
        ref = ref + (((v[:, 0] + v[:, 1]) + v[:, 2]) + v[:, 3])
    np.testing.assert_array_equal(acc, ref)


def test_shoc_md5_hash() -> None:
    import hashlib

    rng = np.random.default_rng(733)
    n, stride = 96, 64
    lens = rng.integers(0, 56, n).astype(np.int32)
    msgs = rng.integers(0, 256, (n, stride)).astype(np.uint8)
    mod = _module("md5")
    k = np.array([int(abs(math.sin(i + 1)) * 2**32) & 0xFFFFFFFF for i in range(64)], np.uint32)
    r = np.array([7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4, np.uint8)
    for name, arr in (("K", k), ("R", r)):
        cuda.memcpy(mod.get_global(name)[0], arr, arr.nbytes, "HostToDevice")
    *_, dig = _run(mod, "md5", (1,), (128,), msgs, lens, np.int32(stride), np.zeros((n, 4), np.uint32), np.int32(n))
    for i in range(n):
        assert dig[i].tobytes().hex() == hashlib.md5(msgs[i, :lens[i]].tobytes()).hexdigest(), i


def test_shoc_spmv_ellpack_r_double() -> None:
    rng = np.random.default_rng(734)
    dim = 200
    lens = rng.integers(0, 12, dim).astype(np.int32)
    width = int(lens.max())
    cols = np.zeros((width, dim), np.int32)
    val = np.zeros((width, dim))
    for r in range(dim):
        cols[:lens[r], r] = np.sort(rng.choice(dim, lens[r], replace=False))
        val[:lens[r], r] = rng.standard_normal(lens[r])
    vec = rng.standard_normal(dim)
    *_, out = _run(_module("ellpack"), "spmv_ellpackr", (_cdiv(dim, 64),), (64,), val, cols, lens, vec, np.int32(dim),
                   np.zeros(dim))
    ref = np.array([sum(val[i, r] * vec[cols[i, r]] for i in range(lens[r])) for r in range(dim)])
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-14)  # the same order; fma contraction only


def test_pitched_2d_image_blur() -> None:
    rng = np.random.default_rng(735)
    h, w = 37, 70
    img = rng.integers(0, 255, (h, w)).astype(np.float32)
    src, spitch = cuda.malloc_pitch(w * 4, h)
    dst, dpitch = cuda.malloc_pitch(w * 4, h)
    try:
        cuda.memcpy_2d(src, spitch, img, w * 4, w * 4, h, "HostToDevice")
        _launch(_module("pitched"), "box_blur", (_cdiv(w, 16), _cdiv(h, 8)), (16, 8), src, np.uint64(spitch), dst,
                np.uint64(dpitch), np.int32(w), np.int32(h))
        out = np.zeros_like(img)
        cuda.memcpy_2d(out, w * 4, dst, dpitch, w * 4, h, "DeviceToHost")
    finally:
        cuda.free(src)
        cuda.free(dst)
    p = np.pad(img, 1, mode="edge")
    sums = sum(p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    # integer pixel sums are exact in float32; one rounding of the product by 1/9 (as a float constant)
    np.testing.assert_array_equal(out, sums * np.float32(1 / 9))
    assert spitch % 512 == 0 and spitch >= w * 4


@functools.cache
def _grid16(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Every finite float16 ('h') or bfloat16 ('b') value in increasing order (one zero), with its bits."""
    import ml_dtypes

    dt = np.float16 if kind == "h" else ml_dtypes.bfloat16
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        vals = bits.view(dt).astype(np.float64)
    keep = np.isfinite(vals) & ~((vals == 0) & np.signbit(vals))
    order = np.argsort(vals[keep])
    return vals[keep][order], bits[keep][order]


def _round16(v: float, mode: str, kind: str) -> int:
    """The bits of v rounded onto the float16 ('h') or bfloat16 ('b') grid: 'rn' (ties to even), 'rz',
    'ru', 'rd'. Grid values and their midpoints are exact in float64, so every comparison is exact."""
    grid, gbits = _grid16(kind)
    j = int(np.searchsorted(grid, v))
    if j < grid.size and grid[j] == v:
        return int(gbits[j]) if v != 0 else 0
    lo, hi = j - 1, j
    pick = {"rd": lo, "ru": hi, "rz": lo if v > 0 else hi}.get(mode)
    if pick is None:
        mid = (grid[lo] + grid[hi]) / 2
        pick = lo if v < mid else hi if v > mid else (lo if gbits[lo] % 2 == 0 else hi)
    return int(gbits[pick])


def test_half_and_bf16_conversions_with_rounding_modes() -> None:
    rng = np.random.default_rng(736)
    n = 64
    d = rng.standard_normal(n) * np.exp2(rng.integers(-12, 10, n))
    f = (rng.standard_normal(n) * 100).astype(np.float32)
    f[:3] = [2.5, -3.5, 0.5]  # ties for the integer conversions
    ll = rng.integers(-60000, 60000, n, dtype=np.int64)
    *_, h, ints = _run(_module("half_conv"), "half_conv", (1,), (64,), d, f, ll, np.zeros((n, 9), np.uint16),
                       np.zeros((n, 3), np.int64), np.int32(n))
    for i in range(n):
        x, y, z = float(d[i]), float(f[i]), int(ll[i])
        ref = [_round16(x, "rn", "h"), _round16(x, "rn", "b"), _round16(y, "ru", "h"), _round16(y, "rd", "h"),
               _round16(y, "rz", "h"), _round16(y, "ru", "b"), _round16(y, "rd", "b"), _round16(float(z), "rn", "h"),
               _round16(float(z & 0xFFFF), "rd", "h")]
        assert h[i].tolist() == ref, i
        hv = float(np.float16(y))
        assert ints[i].tolist() == [round(hv), math.trunc(hv), math.ceil(abs(hv))], i


def test_syncwarp_from_divergent_branches() -> None:
    x = np.random.default_rng(737).integers(-500, 500, 64).astype(np.int32)
    _, out = _run(_module("divergent_syncwarp"), "divergent_syncwarp", (1,), (64,), x, np.zeros(64, np.int32))
    t = np.arange(64)
    lower = t % 32 < 16
    ref = np.where(lower, x[np.where(lower, t + 16, 0)] * 3 + 1000, x[np.where(lower, 0, t - 16)] * 2 - 1000)
    np.testing.assert_array_equal(out, ref)


def test_shared_memory_16_bit_atomics() -> None:
    (out,) = _run(_module("shared_atomics16"), "shared_atomics16", (1,), (64,), np.zeros(7, np.float32))
    np.testing.assert_array_equal(out, [64, 64, 128, 64, 128, 64, 192])  # small integers: exact in 16 bits
