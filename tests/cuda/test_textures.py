"""Texture objects and the texture instructions (tex, tld4, txq, istypep) against a NumPy sampler.

The oracle below is written from the CUDA programming guide's "Texture Fetching" appendix, one point at
a time: point sampling reads floor(x); linear filtering uses xB = x - 0.5, i = floor(xB) and
alpha = frac(xB) rounded to 8 fractional bits; address modes act on texel indices (wrap and mirror only
with normalized coordinates, else clamp); border reads the border colour; normalized-float reads map
8/16-bit integers to [0, 1] / [-1, 1]. The kernels are CUDA C++ compiled by NVRTC.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.cuda.arrays import ArrayFlags, create_channel_desc, malloc_3d_array, malloc_array

SRC = r"""
extern "C" __global__ void fetch1(cudaTextureObject_t t, const int* xs, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex1Dfetch<float>(t, xs[i]); }
extern "C" __global__ void fetch4(cudaTextureObject_t t, const int* xs, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex1Dfetch<float4>(t, xs[i]); }
extern "C" __global__ void fetch_u(cudaTextureObject_t t, const int* xs, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex1Dfetch<unsigned short>(t, xs[i]); }
extern "C" __global__ void s1d(cudaTextureObject_t t, const float* xs, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex1D<float>(t, xs[i]); }
extern "C" __global__ void s2d(cudaTextureObject_t t, const float* xs, const float* ys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]); }
extern "C" __global__ void s2d4(cudaTextureObject_t t, const float* xs, const float* ys, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex2D<float4>(t, xs[i], ys[i]); }
extern "C" __global__ void s2di(cudaTextureObject_t t, const float* xs, const float* ys, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex2D<signed char>(t, xs[i], ys[i]); }
extern "C" __global__ void s3d(cudaTextureObject_t t, const float* xs, const float* ys, const float* zs,
                               float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex3D<float>(t, xs[i], ys[i], zs[i]); }
extern "C" __global__ void l1d(cudaTextureObject_t t, const float* xs, const int* ls, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex1DLayered<float>(t, xs[i], ls[i]); }
extern "C" __global__ void l2d(cudaTextureObject_t t, const float* xs, const float* ys, const int* ls,
                               float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(t, xs[i], ys[i], ls[i]); }
extern "C" __global__ void cube(cudaTextureObject_t t, const float* xs, const float* ys, const float* zs,
                                float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = texCubemap<float>(t, xs[i], ys[i], zs[i]); }
extern "C" __global__ void gather(cudaTextureObject_t t, const float* xs, const float* ys, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[2 * i] = tex2Dgather<float4>(t, xs[i], ys[i], 0);
                 out[2 * i + 1] = tex2Dgather<float4>(t, xs[i], ys[i], 2); } }
extern "C" __global__ void lodgrad(cudaTextureObject_t t, const float* xs, const float* ys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[2 * i] = tex2DLod<float>(t, xs[i], ys[i], 2.5f);
                 out[2 * i + 1] = tex2DGrad<float>(t, xs[i], ys[i], make_float2(4, 0), make_float2(0, 4)); } }
extern "C" __global__ void lcube(cudaTextureObject_t t, const float* xs, const float* ys, const float* zs,
                                 const int* ls, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(t, xs[i], ys[i], zs[i], ls[i]); }
extern "C" __global__ void pick(cudaTextureObject_t a, cudaTextureObject_t b, const int* xs, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>((i % 3 == 0) ? a : b, xs[i]); }
extern "C" __global__ void icoord(cudaTextureObject_t t, const int* xs, const int* ys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float r, g, b, a;
        asm("tex.2d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
            : "=f"(r), "=f"(g), "=f"(b), "=f"(a) : "l"(t), "r"(xs[i]), "r"(ys[i]));
        out[i] = r; } }
extern "C" __global__ void resident(cudaTextureObject_t t, const float* xs, const float* ys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { bool r1 = false, r2 = false; out[3 * i] = tex2D<float>(t, xs[i], ys[i], &r1);
                 out[3 * i + 1] = tex2Dgather<float4>(t, xs[i], ys[i], &r2, 0).w; out[3 * i + 2] = r1 && r2; } }
extern "C" __global__ void igather(cudaTextureObject_t t, const float* xs, const float* ys, int4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = tex2Dgather<int4>(t, xs[i], ys[i], 1); }
extern "C" __global__ void query(cudaTextureObject_t t, unsigned* out) {
    unsigned w, h, d, f, a0, nc; int ok;
    asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
    asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t));
    asm("txq.depth.b32 %0, [%1];" : "=r"(d) : "l"(t));
    asm("txq.filter_mode.b32 %0, [%1];" : "=r"(f) : "l"(t));
    asm("txq.addr_mode_0.b32 %0, [%1];" : "=r"(a0) : "l"(t));
    asm("txq.normalized_coords.b32 %0, [%1];" : "=r"(nc) : "l"(t));
    asm("{ .reg .pred p; istypep.texref p, %1; selp.s32 %0, 1, 0, p; }" : "=r"(ok) : "l"(t));
    out[0] = w; out[1] = h; out[2] = d; out[3] = f; out[4] = a0; out[5] = nc; out[6] = ok; }
"""

RNG = np.random.default_rng(13)


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC)


# --- the oracle ----------------------------------------------------------------------------------------


def q8(a: float) -> float:
    """A filter weight in 9-bit fixed point with 8 fractional bits."""
    return float(np.float32(round(float(a) * 256) / 256))


def index(i: int, n: int, mode: str) -> int | None:
    """Texel index after the address mode, None for a border tap."""
    if mode == "wrap":
        return i % n
    if mode == "mirror":
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    if mode == "clamp":
        return min(max(i, 0), n - 1)
    return i if 0 <= i < n else None


def sample(tex: np.ndarray, point: tuple[float, ...], *, filt: str = "point", modes: tuple[str, ...] = ("clamp",) * 3,
           normalized: bool = False, border: float = 0.0) -> float:
    """One texel fetch of a 1-channel texture `tex` (shape (D, H, W), (H, W) or (W,)) at `point` (x[, y[, z]])."""
    dims = tex.shape[::-1]
    if not normalized:
        modes = tuple("clamp" if m in ("wrap", "mirror") else m for m in modes)
    taps: list[list[tuple[int, float]]] = []
    for axis, c in enumerate(point):
        u = np.float32(c) * np.float32(dims[axis]) if normalized else np.float32(c)
        if filt == "point":
            taps.append([(math.floor(u), 1.0)])
        else:
            ub = np.float32(u - np.float32(0.5))
            i = math.floor(ub)
            a = q8(float(ub - np.float32(i)))
            taps.append([(i, 1 - a), (i + 1, a)])
    total = np.float32(0)
    for combo in itertools.product(*reversed(taps)):  # x fastest
        combo = combo[::-1]
        w = np.float32(1)
        idx = []
        for axis, (i, wa) in enumerate(combo):
            w = np.float32(w * np.float32(wa))
            idx.append(index(i, dims[axis], modes[axis]))
        v = np.float32(border) if any(j is None for j in idx) else np.float32(tex[tuple(idx[::-1])])
        total = np.float32(total + np.float32(w * v))
    return float(total)


def launch(mod: cuda.Module, name: str, tex: int, inputs: list[np.ndarray], out_shape: tuple[int, ...],
           out_dtype: Any = np.float32) -> np.ndarray:
    n = inputs[0].size
    out = cuda.zeros(out_shape, out_dtype)
    args = [tex, *[cuda.to_device(a) for a in inputs], out, np.int32(n)]
    mod.get_function(name)(-(-n // 64), 64, args)
    return out.get()


def pitched(img: np.ndarray, channels: int = 1) -> tuple[cuda.DeviceArray, int]:
    """`img` (H, W[, C]) copied into rows of a 32-byte-multiple pitch; (buffer, pitch)."""
    h, w = img.shape[:2]
    row = w * img.dtype.itemsize * channels
    pitch = -(-row // 64) * 64 + 64  # a pitch wider than a row, so a wrong pitch shows
    host = np.zeros((h, pitch), dtype=np.uint8)
    host[:, :row] = img.reshape(h, -1).view(np.uint8)
    return cuda.to_device(host), pitch


def edge_points(n: int, normalized: bool, count: int = 96) -> np.ndarray:
    """Coordinates covering the inside, the edges and beyond both ends, plus texel centres and corners."""
    lo, hi = (-1.3, 2.3) if normalized else (-2.7, n + 2.7)
    scale = 1.0 / n if normalized else 1.0
    special = np.array([0.0, 0.5, 1.0, n - 0.5, n, n + 0.25, -0.25, 0.75]) * scale
    return np.concatenate([RNG.uniform(lo, hi, count - special.size), special]).astype(np.float32)


# --- linear memory (tex1Dfetch) -------------------------------------------------------------------------


def test_tex1dfetch_linear_float_reads_texels_and_zero_out_of_range(mod: cuda.Module) -> None:
    data = RNG.standard_normal(37).astype(np.float32)
    buf = cuda.to_device(data)
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(buf, np.float32), cuda.TextureDesc())
    xs = np.arange(-5, 42, dtype=np.int32)
    got = launch(mod, "fetch1", tex, [xs], (xs.size,))
    want = np.array([data[x] if 0 <= x < data.size else 0.0 for x in xs], dtype=np.float32)
    np.testing.assert_array_equal(got, want)
    cuda.destroy_texture_object(tex)


def test_tex1dfetch_uchar4_normalized_float(mod: cuda.Module) -> None:
    data = RNG.integers(0, 256, (20, 4), dtype=np.uint8)
    buf = cuda.to_device(data)
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(buf, np.uint8, channels=4),
                                     cuda.TextureDesc(read_mode="cudaReadModeNormalizedFloat"))
    xs = np.arange(20, dtype=np.int32)
    got = launch(mod, "fetch4", tex, [xs], (20, 4))
    np.testing.assert_array_equal(got, data.astype(np.float32) / np.float32(255))
    assert got.max() <= 1.0


def test_tex1dfetch_ushort_element_type_keeps_the_integer(mod: cuda.Module) -> None:
    data = RNG.integers(0, 65536, 50, dtype=np.uint16)
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(cuda.to_device(data), np.uint16), cuda.TextureDesc())
    xs = np.arange(50, dtype=np.int32)[::-1].copy()
    got = launch(mod, "fetch_u", tex, [xs], (50,), np.uint32)
    np.testing.assert_array_equal(got, data[xs].astype(np.uint32))


# --- pitch2D: every filter, address mode and coordinate kind --------------------------------------------


@pytest.mark.parametrize("filt", ["point", "linear"])
@pytest.mark.parametrize("mode", ["clamp", "border", "wrap", "mirror"])
@pytest.mark.parametrize("normalized", [False, True], ids=["unnorm", "norm"])
def test_tex2d_pitch2d_float(mod: cuda.Module, filt: str, mode: str, normalized: bool) -> None:
    h, w = 5, 7
    img = RNG.uniform(-4, 4, (h, w)).astype(np.float32)
    buf, pitch = pitched(img)
    border = 2.5
    tex = cuda.create_texture_object(
        cuda.ResourceDesc.pitch2d(buf, np.float32, w, h, pitch),
        cuda.TextureDesc(address_mode=mode, filter_mode=filt, normalized_coords=normalized,
                         border_color=(border, 0, 0, 0)))
    xs, ys = edge_points(w, normalized), edge_points(h, normalized)
    got = launch(mod, "s2d", tex, [xs, ys], (xs.size,))
    want = [sample(img, (x, y), filt=filt, modes=(mode, mode), normalized=normalized, border=border)
            for x, y in zip(xs, ys, strict=True)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    cuda.destroy_texture_object(tex)


def test_linear_filter_weights_have_8_fractional_bits(mod: cuda.Module) -> None:
    """Between two texels 0 and 256, tex1D returns 256 * alpha: a multiple of 1 exactly (8-bit alpha)."""
    buf = cuda.to_device(np.array([[0.0, 256.0]], dtype=np.float32))
    arr = malloc_array(create_channel_desc(np.float32), 2)
    arr.set(np.array([0.0, 256.0], dtype=np.float32))
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc(filter_mode="linear"))
    xs = (0.5 + np.linspace(0, 1, 301)).astype(np.float32)
    got = launch(mod, "s1d", tex, [xs], (xs.size,))
    np.testing.assert_array_equal(got, np.rint((xs - np.float32(0.5)) * 256).astype(np.float32))
    assert np.unique(got).size == 257  # 0/256 .. 256/256: nine bits of weight
    del buf


def test_mixed_address_modes_per_axis(mod: cuda.Module) -> None:
    h, w = 4, 6
    img = RNG.uniform(0, 9, (h, w)).astype(np.float32)
    buf, pitch = pitched(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.float32, w, h, pitch),
                                     cuda.TextureDesc(address_mode=("wrap", "mirror"), filter_mode="linear",
                                                      normalized_coords=True))
    xs, ys = edge_points(w, True), edge_points(h, True)
    got = launch(mod, "s2d", tex, [xs, ys], (xs.size,))
    want = [sample(img, (x, y), filt="linear", modes=("wrap", "mirror"), normalized=True) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dtype,div", [(np.uint8, 255), (np.int8, 127), (np.uint16, 65535), (np.int16, 32767)])
def test_normalized_float_read_mode_with_linear_filter(mod: cuda.Module, dtype: Any, div: int) -> None:
    h, w = 3, 5
    info = np.iinfo(dtype)
    img = RNG.integers(info.min, info.max, (h, w), dtype=dtype, endpoint=True)
    img[0, 0] = info.min  # -128 / -32768 reads as -1, not below
    buf, pitch = pitched(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, dtype, w, h, pitch),
                                     cuda.TextureDesc(filter_mode="linear", read_mode="normalized_float"))
    conv = np.maximum(img.astype(np.float32) / np.float32(div), np.float32(-1))
    xs, ys = edge_points(w, False, 40), edge_points(h, False, 40)
    got = launch(mod, "s2d", tex, [xs, ys], (xs.size,))
    want = [sample(conv, (x, y), filt="linear") for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    assert got.min() >= -1.0 and got.max() <= 1.0


def test_element_read_of_signed_chars_sign_extends_and_point_samples(mod: cuda.Module) -> None:
    h, w = 4, 4
    img = RNG.integers(-128, 128, (h, w), dtype=np.int8)
    buf, pitch = pitched(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.int8, w, h, pitch),
                                     cuda.TextureDesc(address_mode="border", border_color=(0, 0, 0, 0)))
    xs, ys = edge_points(w, False, 40), edge_points(h, False, 40)
    got = launch(mod, "s2di", tex, [xs, ys], (xs.size,), np.int32)
    want = [sample(img.astype(np.float32), (x, y), modes=("border",) * 2) for x, y in zip(xs, ys)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.int32))


def test_float2_texture_reads_missing_components_as_0_0_1(mod: cuda.Module) -> None:
    h, w = 2, 3
    img = RNG.standard_normal((h, w, 2)).astype(np.float32)
    buf, pitch = pitched(img, 2)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.float32, w, h, pitch, channels=2),
                                     cuda.TextureDesc())
    xs = np.array([0.5, 1.5, 2.5, 0.2], dtype=np.float32)
    ys = np.array([0.5, 1.5, 0.5, 1.9], dtype=np.float32)
    got = launch(mod, "s2d4", tex, [xs, ys], (4, 4))
    np.testing.assert_array_equal(got[:, :2], img[ys.astype(int), xs.astype(int)])
    np.testing.assert_array_equal(got[:, 2:], [[0, 1]] * 4)


# --- CUDA arrays: 1-D, 3-D, layered, cubemap, gather, LOD ----------------------------------------------


def test_tex1d_array_linear_normalized_wrap(mod: cuda.Module) -> None:
    data = RNG.uniform(-1, 1, 9).astype(np.float32)
    arr = malloc_array(create_channel_desc(np.float32), 9)
    arr.set(data)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr),
                                     cuda.TextureDesc(address_mode="wrap", filter_mode="linear",
                                                      normalized_coords=True))
    xs = edge_points(9, True)
    got = launch(mod, "s1d", tex, [xs], (xs.size,))
    want = [sample(data, (x,), filt="linear", modes=("wrap",), normalized=True) for x in xs]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("mode", ["clamp", "border"])
def test_tex3d_array_trilinear(mod: cuda.Module, mode: str) -> None:
    d, h, w = 3, 4, 5
    vol = RNG.uniform(0, 10, (d, h, w)).astype(np.float32)
    arr = malloc_3d_array(create_channel_desc(np.float32), (w, h, d))
    arr.set(vol)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr),
                                     cuda.TextureDesc(address_mode=mode, filter_mode="linear",
                                                      border_color=(-1, 0, 0, 0)))
    xs, ys, zs = edge_points(w, False, 64), edge_points(h, False, 64), edge_points(d, False, 64)
    got = launch(mod, "s3d", tex, [xs, ys, zs], (xs.size,))
    want = [sample(vol, (x, y, z), filt="linear", modes=(mode,) * 3, border=-1) for x, y, z in zip(xs, ys, zs)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_layered_1d_and_2d_arrays_clamp_the_layer(mod: cuda.Module) -> None:
    layers, h, w = 3, 4, 6
    stack = RNG.uniform(0, 5, (layers, h, w)).astype(np.float32)
    arr = malloc_3d_array(create_channel_desc(np.float32), (w, h, layers), ArrayFlags.LAYERED)
    arr.set(stack)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc(filter_mode="linear"))
    xs, ys = edge_points(w, False, 48), edge_points(h, False, 48)
    ls = RNG.integers(-2, layers + 2, xs.size).astype(np.int32)
    got = launch(mod, "l2d", tex, [xs, ys, ls], (xs.size,))
    want = [sample(stack[min(max(layer, 0), layers - 1)], (x, y), filt="linear") for x, y, layer in zip(xs, ys, ls)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)

    rows = RNG.uniform(0, 5, (layers, w)).astype(np.float32)
    arr1 = malloc_3d_array(create_channel_desc(np.float32), (w, 0, layers), ArrayFlags.LAYERED)
    arr1.set(rows)
    tex1 = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr1), cuda.TextureDesc())
    got1 = launch(mod, "l1d", tex1, [xs, ls], (xs.size,))
    want1 = [sample(rows[min(max(layer, 0), layers - 1)], (x,)) for x, layer in zip(xs, ls)]
    np.testing.assert_array_equal(got1, np.array(want1, dtype=np.float32))


def cube_ref(faces: np.ndarray, x: float, y: float, z: float) -> float:
    """The programming guide's cubemap table, then point sampling in the face."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, m, s, t = (0, ax, -z, -y) if x >= 0 else (1, ax, z, -y)
    elif ay >= az:
        face, m, s, t = (2, ay, x, z) if y >= 0 else (3, ay, x, -z)
    else:
        face, m, s, t = (4, az, x, -y) if z >= 0 else (5, az, -x, -y)
    sn = np.float32((np.float32(s) / np.float32(m) + np.float32(1)) * np.float32(0.5))
    tn = np.float32((np.float32(t) / np.float32(m) + np.float32(1)) * np.float32(0.5))
    return sample(faces[face], (float(sn), float(tn)), normalized=True)


def test_cubemap_picks_the_face_of_the_major_axis(mod: cuda.Module) -> None:
    w = 4
    faces = RNG.uniform(0, 10, (6, w, w)).astype(np.float32)
    arr = malloc_3d_array(create_channel_desc(np.float32), (w, w, 6), ArrayFlags.CUBEMAP)
    arr.set(faces)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc(normalized_coords=True))
    dirs = RNG.uniform(-1, 1, (120, 3)).astype(np.float32)
    dirs[:6] = [[1, 0.2, 0.1], [-1, 0.3, -0.2], [0.1, 1, 0.4], [0.2, -1, 0.3], [0.3, 0.1, 1], [-0.4, 0.2, -1]]
    got = launch(mod, "cube", tex, [dirs[:, 0].copy(), dirs[:, 1].copy(), dirs[:, 2].copy()], (120,))
    want = [cube_ref(faces, *d) for d in dirs]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))
    assert set(np.round(got[:6], 6)) <= set(np.round(faces.reshape(-1), 6))


def test_tex2dgather_returns_the_footprint_counter_clockwise_from_lower_left(mod: cuda.Module) -> None:
    h, w = 4, 5
    img = RNG.uniform(0, 100, (h, w, 4)).astype(np.float32)
    arr = malloc_array(create_channel_desc(np.float32, 4), w, h, ArrayFlags.TEXTURE_GATHER)
    arr.set(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc(address_mode="clamp"))
    xs, ys = edge_points(w, False, 40), edge_points(h, False, 40)
    got = launch(mod, "gather", tex, [xs, ys], (2 * xs.size, 4)).reshape(xs.size, 2, 4)
    for k, (x, y) in enumerate(zip(xs, ys)):
        i, j = math.floor(np.float32(x - np.float32(0.5))), math.floor(np.float32(y - np.float32(0.5)))
        ci = [min(max(v, 0), w - 1) for v in (i, i + 1)]
        cj = [min(max(v, 0), h - 1) for v in (j, j + 1)]
        order = [(ci[0], cj[1]), (ci[1], cj[1]), (ci[1], cj[0]), (ci[0], cj[0])]
        for slot, comp in enumerate((0, 2)):
            np.testing.assert_array_equal(got[k, slot], [img[b, a, comp] for a, b in order])


def test_tex2dgather_of_short2_texels_returns_sign_extended_integers(mod: cuda.Module) -> None:
    h, w = 3, 3
    img = RNG.integers(-32768, 32768, (h, w, 2), dtype=np.int16)
    buf, pitch = pitched(img, 2)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.int16, w, h, pitch, channels=2),
                                     cuda.TextureDesc(address_mode="border", border_color=(0, 0, 0, 0)))
    xs, ys = edge_points(w, False, 30), edge_points(h, False, 30)
    got = launch(mod, "igather", tex, [xs, ys], (xs.size, 4), np.int32)
    for k, (x, y) in enumerate(zip(xs.tolist(), ys.tolist())):
        i, j = math.floor(x - 0.5), math.floor(y - 0.5)
        taps = [(i, j + 1), (i + 1, j + 1), (i + 1, j), (i, j)]
        want = [int(img[b, a, 1]) if 0 <= a < w and 0 <= b < h else 0 for a, b in taps]
        assert got[k].tolist() == want, (x, y)


def test_is_resident_forms_sample_and_report_resident(mod: cuda.Module) -> None:
    h, w = 3, 4
    img = RNG.uniform(0, 1, (h, w)).astype(np.float32)
    arr = malloc_array(create_channel_desc(np.float32), w, h)
    arr.set(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc())
    xs, ys = edge_points(w, False, 20), edge_points(h, False, 20)
    got = launch(mod, "resident", tex, [xs, ys], (3 * xs.size,)).reshape(-1, 3)
    np.testing.assert_array_equal(got[:, 0], [sample(img, (x, y)) for x, y in zip(xs, ys)])
    upper_left = [img[min(max(math.floor(y - 0.5), 0), h - 1), min(max(math.floor(x - 0.5), 0), w - 1)]
                  for x, y in zip(xs.tolist(), ys.tolist())]
    np.testing.assert_array_equal(got[:, 1], upper_left)
    assert (got[:, 2] == 1).all()


def test_lod_and_grad_read_level_zero(mod: cuda.Module) -> None:
    h, w = 3, 3
    img = RNG.uniform(0, 1, (h, w)).astype(np.float32)
    arr = malloc_array(create_channel_desc(np.float32), w, h)
    arr.set(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc(filter_mode="linear"))
    xs, ys = edge_points(w, False, 30), edge_points(h, False, 30)
    got = launch(mod, "lodgrad", tex, [xs, ys], (2 * xs.size,)).reshape(-1, 2)
    want = np.array([sample(img, (x, y), filt="linear") for x, y in zip(xs, ys)], dtype=np.float32)
    np.testing.assert_allclose(got[:, 0], want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(got[:, 1], want, rtol=2e-6, atol=2e-6)


def test_txq_and_istypep(mod: cuda.Module) -> None:
    arr = malloc_3d_array(create_channel_desc(np.float32), (7, 5, 3))
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr),
                                     cuda.TextureDesc(address_mode="mirror", filter_mode="linear",
                                                      normalized_coords=True))
    out = cuda.zeros(7, np.uint32)
    mod.get_function("query")(1, 1, (tex, out))
    assert out.get().tolist() == [7, 5, 3, 1, 2, 1, 1]


def test_layered_cubemap(mod: cuda.Module) -> None:
    w, layers = 3, 2
    faces = RNG.uniform(0, 10, (6 * layers, w, w)).astype(np.float32)
    arr = malloc_3d_array(create_channel_desc(np.float32), (w, w, 6 * layers), ArrayFlags.CUBEMAP | ArrayFlags.LAYERED)
    arr.set(faces)
    tex = cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc(normalized_coords=True))
    dirs = RNG.uniform(-1, 1, (60, 3)).astype(np.float32)
    ls = RNG.integers(0, layers, 60).astype(np.int32)
    got = launch(mod, "lcube", tex, [dirs[:, 0].copy(), dirs[:, 1].copy(), dirs[:, 2].copy(), ls], (60,))
    want = [cube_ref(faces[6 * layer: 6 * layer + 6], *d) for d, layer in zip(dirs, ls)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


def test_threads_of_a_warp_sampling_different_textures(mod: cuda.Module) -> None:
    a, b = RNG.standard_normal(10).astype(np.float32), RNG.standard_normal(20).astype(np.float32)
    ta = cuda.create_texture_object(cuda.ResourceDesc.linear(cuda.to_device(a), np.float32), cuda.TextureDesc())
    tb = cuda.create_texture_object(cuda.ResourceDesc.linear(cuda.to_device(b), np.float32), cuda.TextureDesc())
    xs = RNG.integers(-2, 22, 100).astype(np.int32)
    out = cuda.zeros(100)
    mod.get_function("pick")(2, 64, (ta, tb, cuda.to_device(xs), out, np.int32(100)))
    want = [(a if i % 3 == 0 else b)[x] if 0 <= x < (10 if i % 3 == 0 else 20) else 0.0 for i, x in enumerate(xs)]
    np.testing.assert_array_equal(out.get(), np.array(want, dtype=np.float32))


@pytest.mark.parametrize("mode", ["clamp", "border"])
def test_integer_coordinates_address_texels_without_filtering(mod: cuda.Module, mode: str) -> None:
    h, w = 3, 4
    img = RNG.uniform(0, 1, (h, w)).astype(np.float32)
    buf, pitch = pitched(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.float32, w, h, pitch),
                                     cuda.TextureDesc(address_mode=mode, filter_mode="linear",
                                                      border_color=(7, 0, 0, 0)))
    xs, ys = RNG.integers(-2, w + 2, 50).astype(np.int32), RNG.integers(-2, h + 2, 50).astype(np.int32)
    got = launch(mod, "icoord", tex, [xs, ys], (50,))
    want = [sample(img, (x + 0.5, y + 0.5), modes=(mode, mode), border=7) for x, y in zip(xs, ys)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


def test_half_float_texture_filters_as_float(mod: cuda.Module) -> None:
    h, w = 4, 6
    img = RNG.uniform(-2, 2, (h, w)).astype(np.float16)
    buf, pitch = pitched(img)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.float16, w, h, pitch),
                                     cuda.TextureDesc(filter_mode="linear", read_mode="normalized_float"))
    xs, ys = edge_points(w, False, 40), edge_points(h, False, 40)
    got = launch(mod, "s2d", tex, [xs, ys], (xs.size,))
    want = [sample(img.astype(np.float32), (x, y), filt="linear") for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


# --- descriptors, errors and memcheck ------------------------------------------------------------------


def test_device_reset_destroys_texture_objects() -> None:
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(cuda.zeros(8), np.float32), cuda.TextureDesc())
    cuda.current_device().reset()
    with pytest.raises(cuda.CudaError, match="not a live texture object"):
        cuda.get_texture_object_resource_desc(tex)


def test_descriptors_round_trip_and_destroy() -> None:
    buf = cuda.zeros(64, np.float32)
    res = cuda.ResourceDesc.linear(buf, np.float32)
    td = cuda.TextureDesc(address_mode=("border", "clamp"), filter_mode=1, read_mode="element",
                          border_color=(1, 2, 3, 4))
    tex = cuda.create_texture_object(res, td)
    assert cuda.get_texture_object_resource_desc(tex) == res
    got = cuda.get_texture_object_texture_desc(tex)
    assert got.address_mode == ("border", "clamp", "clamp") and got.filter_mode == "linear"
    assert got.border_color == (1.0, 2.0, 3.0, 4.0)
    cuda.destroy_texture_object(tex)
    with pytest.raises(cuda.CudaError, match="not a live texture object"):
        cuda.get_texture_object_texture_desc(tex)
    with pytest.raises(cuda.CudaError):
        cuda.destroy_texture_object(tex)


def test_creation_errors() -> None:
    buf = cuda.zeros(1024, np.uint8)
    ok = cuda.ResourceDesc.linear(buf, np.uint8)
    cases = [
        (ok, cuda.TextureDesc(srgb=True), None, "cudaErrorNotSupported", "sRGB"),
        (ok, cuda.TextureDesc(), object(), "cudaErrorNotSupported", "resource views"),
        (cuda.ResourceDesc("mipmapped_array"), cuda.TextureDesc(), None, "cudaErrorNotSupported", "mipmapped"),
        (ok, cuda.TextureDesc(filter_mode="linear"), None, "cudaErrorInvalidFilterSetting", "needs read_mode"),
        (cuda.ResourceDesc.linear(buf, np.int32), cuda.TextureDesc(read_mode="normalized_float"), None,
         "cudaErrorInvalidNormSetting", "8- or 16-bit integer"),
        (cuda.ResourceDesc.linear(buf.ptr + 4, np.uint8, 64), cuda.TextureDesc(), None, "cudaErrorInvalidValue",
         "textureAlignment"),
        (cuda.ResourceDesc.linear(buf.ptr, np.uint8, 4096), cuda.TextureDesc(), None, "cudaErrorInvalidValue",
         "past the end"),
        (cuda.ResourceDesc.pitch2d(buf, np.uint8, 16, 4, 40), cuda.TextureDesc(), None,
         "cudaErrorInvalidPitchValue", "texturePitchAlignment"),
        (cuda.ResourceDesc.from_array(buf), cuda.TextureDesc(), None, "cudaErrorInvalidResourceHandle", "CudaArray"),
    ]
    for res, td, view, name, text in cases:
        with pytest.raises(cuda.CudaError, match=text) as e:
            cuda.create_texture_object(res, td, view)
        assert e.value.name == name, (text, e.value)
    with pytest.raises(cuda.CudaError, match="address_mode"):
        cuda.TextureDesc(address_mode="repeat")
    arr = malloc_array(create_channel_desc(np.float32), 4)
    arr.free()
    with pytest.raises(cuda.CudaError, match="freed"):
        cuda.create_texture_object(cuda.ResourceDesc.from_array(arr), cuda.TextureDesc())


def test_texture_over_freed_memory_is_a_memcheck_fault(mod: cuda.Module) -> None:
    buf = cuda.malloc(256)
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(buf, np.float32, 256), cuda.TextureDesc())
    out, xs = cuda.zeros(4), cuda.to_device(np.arange(4, dtype=np.int32))  # before the free: no reuse of buf
    cuda.free(buf)
    mod.get_function("fetch1")(1, 4, (tex, xs, out, np.int32(4)))
    with pytest.raises(cuda.DeviceFault, match="texture read") as e:
        cuda.synchronize()
    assert e.value.name == "cudaErrorIllegalAddress"
    report = e.value.report
    assert report["kernel"] == "fetch1" and report["access"] == "texture read" and report["address"] == buf
    assert "tex.1d" in report["instruction"] and report["thread"] == (0, 0, 0)
    cuda.current_device().reset()


def test_destroyed_texture_in_a_kernel_is_a_fault(mod: cuda.Module) -> None:
    buf = cuda.zeros(8)
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(buf, np.float32), cuda.TextureDesc())
    cuda.destroy_texture_object(tex)
    mod.get_function("fetch1")(1, 1, (tex, cuda.to_device(np.zeros(1, np.int32)), cuda.zeros(1), np.int32(1)))
    with pytest.raises(cuda.DeviceFault, match="not a live texture object") as e:
        cuda.synchronize()
    assert e.value.name == "cudaErrorIllegalInstruction"
    cuda.current_device().reset()


def test_wrong_geometry_is_a_fault(mod: cuda.Module) -> None:
    tex = cuda.create_texture_object(cuda.ResourceDesc.linear(cuda.zeros(8), np.float32), cuda.TextureDesc())
    xs = np.zeros(1, np.float32)
    mod.get_function("s2d")(1, 1, (tex, cuda.to_device(xs), cuda.to_device(xs), cuda.zeros(1), np.int32(1)))
    with pytest.raises(cuda.DeviceFault, match="tex.2d on a texture whose resource is '1d'"):
        cuda.synchronize()
    cuda.current_device().reset()


def test_hip_twins_sample_the_same(mod: cuda.Module) -> None:
    from strata.hip import capi

    data = RNG.standard_normal(16).astype(np.float32)
    buf = hip.to_device(data)
    tex = capi.hipCreateTextureObject(hip.ResourceDesc.linear(buf, np.float32), hip.TextureDesc())
    assert isinstance(capi.hipGetTextureObjectResourceDesc(tex), hip.ResourceDesc)
    assert capi.hipGetTextureObjectTextureDesc(tex).address_mode == ("clamp",) * 3
    got = launch(mod, "fetch1", tex, [np.arange(16, dtype=np.int32)], (16,))
    np.testing.assert_array_equal(got, data)
    hmod = hip.compile('#include <hip/hip_runtime.h>\nextern "C" __global__ void k(hipTextureObject_t t, float* o) '
                       '{ o[threadIdx.x] = tex1Dfetch<float>(t, 15 - (int)threadIdx.x); }')
    out = hip.zeros(16)
    hmod.get_function("k")(1, 16, (tex, out))
    np.testing.assert_array_equal(out.get(), data[::-1])
    capi.hipDestroyTextureObject(tex)


# --- uniform operands: the same sample whether coordinates are constants, parameters or per lane ---------

UNIFORM_SRC = r"""
extern "C" __global__ void uniform_coords(cudaTextureObject_t t, float x, float y, float* out) {
    int i = threadIdx.x;
    float4 g = tex2Dgather<float4>(t, x, y, 1);
    out[5 * i] = tex2D<float>(t, x, y);            // parameters: one value for every thread
    out[5 * i + 1] = tex2D<float>(t, 2.25f, 1.75f);  // immediates
    out[5 * i + 2] = g.x + g.y + g.z + g.w;
    int w, h;
    asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
    asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t));
    out[5 * i + 3] = (float)w;
    out[5 * i + 4] = (float)(h + __isGlobal(out));  // istypep is not reachable from C++; keep 5 outputs
}
extern "C" __global__ void per_lane_coords(cudaTextureObject_t t, const float* xs, const float* ys, float* out) {
    int i = threadIdx.x;
    float4 g = tex2Dgather<float4>(t, xs[i], ys[i], 1);
    out[3 * i] = tex2D<float>(t, xs[i], ys[i]);
    out[3 * i + 1] = tex2D<float>(t, xs[32 + i], ys[32 + i]);
    out[3 * i + 2] = g.x + g.y + g.z + g.w;
}
"""


def test_uniform_texture_operands_sample_as_per_lane_ones() -> None:
    # tests/hw/test_uniform_families.py points tex, tld4 and txq here: the texture handle and coordinates
    # held once for all threads (kernel parameters, immediates) must sample exactly as per-lane values do.
    mod = cuda.compile(UNIFORM_SRC, name="uniform_coords.cu")
    h, w = 6, 9
    img = RNG.uniform(-4, 4, (h, w, 2)).astype(np.float32)
    buf, pitch = pitched(img, channels=2)
    tex = cuda.create_texture_object(cuda.ResourceDesc.pitch2d(buf, np.float32, w, h, pitch, channels=2),
                                     cuda.TextureDesc(filter_mode="linear", address_mode="border"))
    x, y = np.float32(3.6), np.float32(-0.3)
    uni = cuda.zeros(5 * 32, np.float32)
    mod.get_function("uniform_coords")(1, 32, (tex, x, y, uni))
    xs = np.concatenate([np.full(32, x), np.full(32, 2.25)]).astype(np.float32)
    ys = np.concatenate([np.full(32, y), np.full(32, 1.75)]).astype(np.float32)
    lane = cuda.zeros(3 * 32, np.float32)
    mod.get_function("per_lane_coords")(1, 32, (tex, cuda.to_device(xs), cuda.to_device(ys), lane))
    u, p = uni.get().reshape(32, 5), lane.get().reshape(32, 3)
    np.testing.assert_array_equal(u[:, :3], p)
    assert (u[:, 3] == w).all() and (u[:, 4] == h + 1).all()
    cuda.destroy_texture_object(tex)
