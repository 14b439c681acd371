"""CUDA arrays, 2-D/3-D copies and surface objects: NVRTC kernels using surf*read/surf*write against
NumPy, copy round trips over every array shape with odd sizes and pitches, the out-of-range modes, the
API's error codes, memcheck over a freed array, and the HIP twins."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.cuda import ArrayFlags, Memcpy3DParms, PitchedPtr
from strata.hip import capi

SLS = ArrayFlags.SURFACE_LOAD_STORE
RNG = np.random.default_rng(13)

SRC = r"""
// 2-D: out = 2 * in + 1 at every texel (x in bytes, as surf2Dread/surf2Dwrite take it)
extern "C" __global__ void affine2d(cudaSurfaceObject_t in, cudaSurfaceObject_t out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w || y >= h) return;
    float v = surf2Dread<float>(in, x * 4, y);
    surf2Dwrite(2.f * v + 1.f, out, x * 4, y);
}
// 1-D uchar4: swap channels and add the index
extern "C" __global__ void swizzle1d(cudaSurfaceObject_t s, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    uchar4 c = surf1Dread<uchar4>(s, x * 4);
    surf1Dwrite(make_uchar4(c.w, c.z, c.y, (unsigned char)(c.x + x)), s, x * 4);
}
// 3-D short2 to a linear int buffer: a + 1000 * b at (x, y, z)
extern "C" __global__ void gather3d(cudaSurfaceObject_t s, int* out, int w, int h, int d) {
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    if (x >= w) return;
    short2 v = surf3Dread<short2>(s, x * 4, y, z);
    out[(z * h + y) * w + x] = v.x + 1000 * v.y;
    surf3Dwrite(make_short2(v.y, v.x), s, x * 4, y, z);
}
// layered: 1-D layers of int, 2-D layers of float2
extern "C" __global__ void layers(cudaSurfaceObject_t s1, cudaSurfaceObject_t s2, int w, int h) {
    int x = threadIdx.x, layer = blockIdx.x;
    if (x >= w) return;
    int a = surf1DLayeredread<int>(s1, x * 4, layer);
    surf1DLayeredwrite(a * 3 - layer, s1, x * 4, layer);
    for (int y = 0; y < h; ++y) {
        float2 f = surf2DLayeredread<float2>(s2, x * 8, y, layer);
        surf2DLayeredwrite(make_float2(f.y, f.x + layer), s2, x * 8, y, layer);
    }
}
// cubemaps: face index and layer * 6 + face
extern "C" __global__ void cube(cudaSurfaceObject_t c, cudaSurfaceObject_t cl, int w, int layers) {
    int x = threadIdx.x, y = blockIdx.x, face = blockIdx.y;
    if (x >= w) return;
    float v = surfCubemapread<float>(c, x * 4, y, face);
    surfCubemapwrite(v * 10.f + face, c, x * 4, y, face);
    for (int l = 0; l < layers; ++l) {
        unsigned short u = surfCubemapLayeredread<unsigned short>(cl, x * 2, y, l * 6 + face);
        surfCubemapLayeredwrite((unsigned short)(u ^ (l * 6 + face)), cl, x * 2, y, l * 6 + face);
    }
}
// out-of-range reads and writes shifted by `shift` texels, one kernel per boundary mode
#define SHIFTED(name, mode)                                                                        \
extern "C" __global__ void name(cudaSurfaceObject_t s, cudaSurfaceObject_t o, float* out, int w, int h, int shift) { \
    int x = threadIdx.x, y = blockIdx.x;                                                           \
    out[y * w + x] = surf2Dread<float>(s, (x + shift) * 4, y - shift, mode);                        \
    surf2Dwrite((float)(y * w + x), o, (x + shift) * 4, y + shift, mode);                           \
}
SHIFTED(shifted_trap, cudaBoundaryModeTrap)
SHIFTED(shifted_clamp, cudaBoundaryModeClamp)
SHIFTED(shifted_zero, cudaBoundaryModeZero)
extern "C" __global__ void query(cudaSurfaceObject_t s, unsigned* out) {
    unsigned w, h, d, n;
    asm("suq.width.b32 %0, [%1];" : "=r"(w) : "l"(s));
    asm("suq.height.b32 %0, [%1];" : "=r"(h) : "l"(s));
    asm("suq.depth.b32 %0, [%1];" : "=r"(d) : "l"(s));
    asm("suq.array_size.b32 %0, [%1];" : "=r"(n) : "l"(s));
    out[0] = w; out[1] = h; out[2] = d; out[3] = n;
}
// 8-bit and 64-bit accesses (suld.b.2d.b8.zero, suld.b.1d.b64, suld.b.1d.v2.b64.clamp, sust.b.1d.v2.b64)
extern "C" __global__ void widths(cudaSurfaceObject_t bytes, cudaSurfaceObject_t wide, int* out, long long* out64,
                                  int w, int n) {
    int x = threadIdx.x - 1, y = blockIdx.x;  // x = -1 .. w: one texel past each edge
    if (x <= w) out[y * (w + 2) + x + 1] = surf2Dread<signed char>(bytes, x, y, cudaBoundaryModeZero);
    if (y == 0 && x >= 0 && x < n) {
        long long a = surf1Dread<long long>(wide, x * 8);
        longlong2 b = surf1Dread<longlong2>(wide, (x + 1) * 16, cudaBoundaryModeClamp);
        out64[3 * x] = a; out64[3 * x + 1] = b.x; out64[3 * x + 2] = b.y;
    }
}
extern "C" __global__ void swap64(cudaSurfaceObject_t wide, int pairs) {
    int i = threadIdx.x;
    if (i >= pairs) return;
    longlong2 v = surf1Dread<longlong2>(wide, i * 16);
    surf1Dwrite(make_longlong2(v.y, v.x), wide, i * 16);
}
// formatted stores (sust.p: x in texels, 32-bit values converted to the texel format), by inline PTX
extern "C" __global__ void formatted(cudaSurfaceObject_t su8, cudaSurfaceObject_t sf16, cudaSurfaceObject_t ss16) {
    int x = threadIdx.x;
    unsigned v = x * 40;
    float f = x * 0.1f;
    int s = x * 20000 - 50000;
    asm volatile("sust.p.1d.v4.b32.trap [%0, {%1}], {%2, %3, %4, %5};"
                 :: "l"(su8), "r"(x), "r"(v), "r"(v + 1), "r"(v + 2), "r"(v + 3) : "memory");
    asm volatile("sust.p.1d.v2.b32.clamp [%0, {%1}], {%2, %3};" :: "l"(sf16), "r"(x), "f"(f), "f"(-f) : "memory");
    asm volatile("sust.p.2d.b32.zero [%0, {%1, %2}], {%3};" :: "l"(ss16), "r"(x), "r"(1), "r"(s) : "memory");
}
extern "C" __global__ void misaligned(cudaSurfaceObject_t s, float* out) {
    out[0] = surf1Dread<float>(s, 2);
}
"""


@pytest.fixture
def mod() -> cuda.Module:
    return cuda.compile(SRC)  # per test: a faulting test resets the device, which unloads modules


def _fdesc(dtype: Any = np.float32, n: int = 1) -> cuda.ChannelFormatDesc:
    return cuda.create_channel_desc(dtype, n)


# --- surfaces in kernels -------------------------------------------------------------------------------


def test_surf2d_read_write_odd_size(mod: cuda.Module) -> None:
    W, H = 37, 5
    img = RNG.standard_normal((H, W)).astype(np.float32)
    a, b = cuda.malloc_array(_fdesc(), W, H, SLS), cuda.malloc_array(_fdesc(), W, H, SLS)
    cuda.memcpy_2d_to_array(a, 0, 0, img, W * 4, W * 4, H, cuda.MemcpyKind.HostToDevice)
    sa, sb = cuda.create_surface_object(a), cuda.create_surface_object(b)
    mod.get_function("affine2d")((2, H), 32, (sa, sb, np.int32(W), np.int32(H))).wait()
    out = np.zeros((H, W), np.float32)
    cuda.memcpy_2d_from_array(out, W * 4, b, 0, 0, W * 4, H, "DeviceToHost")
    np.testing.assert_array_equal(out, 2 * img + 1)
    cuda.destroy_surface_object(sa)
    cuda.destroy_surface_object(sb)
    cuda.free_array(a)
    cuda.free_array(b)


def test_surf1d_uchar4_in_place(mod: cuda.Module) -> None:
    W = 29
    host = RNG.integers(0, 256, (W, 4), dtype=np.uint8)
    a = cuda.malloc_array(_fdesc(np.uint8, 4), W, 0, SLS)
    a.set(host)
    s = cuda.create_surface_object(a)
    mod.get_function("swizzle1d")(1, 32, (s, np.int32(W))).wait()
    want = np.stack([host[:, 3], host[:, 2], host[:, 1], (host[:, 0] + np.arange(W)).astype(np.uint8)], axis=1)
    np.testing.assert_array_equal(a.get(), want)


def test_surf3d_short2(mod: cuda.Module) -> None:
    W, H, D = 7, 3, 5
    host = RNG.integers(-300, 300, (D, H, W, 2), dtype=np.int16)
    a = cuda.malloc_3d_array(_fdesc(np.int16, 2), (W, H, D), SLS)
    assert a.kind == "3d" and a.shape == (D, H, W, 2)
    a.set(host)
    out = cuda.zeros(D * H * W, np.int32)
    mod.get_function("gather3d")((H, D), 32, (cuda.create_surface_object(a), out, np.int32(W), np.int32(H),
                                              np.int32(D))).wait()
    wide = host.astype(np.int32)
    np.testing.assert_array_equal(out.get().reshape(D, H, W), wide[..., 0] + 1000 * wide[..., 1])
    np.testing.assert_array_equal(a.get(), host[..., ::-1])


def test_layered_surfaces(mod: cuda.Module) -> None:
    W, H, L = 11, 3, 4
    h1 = RNG.integers(-1000, 1000, (L, W), dtype=np.int32)
    h2 = RNG.standard_normal((L, H, W, 2)).astype(np.float32)
    a1 = cuda.malloc_3d_array(_fdesc(np.int32), (W, 0, L), SLS | ArrayFlags.LAYERED)
    a2 = cuda.malloc_3d_array(_fdesc(np.float32, 2), (W, H, L), SLS | ArrayFlags.LAYERED)
    assert (a1.kind, a1.shape, a2.kind, a2.shape) == ("1d_layered", (L, W), "2d_layered", (L, H, W, 2))
    a1.set(h1)
    a2.set(h2)
    mod.get_function("layers")(L, 32, (cuda.create_surface_object(a1), cuda.create_surface_object(a2),
                                       np.int32(W), np.int32(H))).wait()
    np.testing.assert_array_equal(a1.get(), h1 * 3 - np.arange(L)[:, None])
    want = np.stack([h2[..., 1], h2[..., 0] + np.arange(L, dtype=np.float32)[:, None, None]], axis=-1)
    np.testing.assert_array_equal(a2.get(), want)


def test_cubemap_surfaces(mod: cuda.Module) -> None:
    W, L = 5, 2
    hc = RNG.standard_normal((6, W, W)).astype(np.float32)
    hl = RNG.integers(0, 65536, (6 * L, W, W), dtype=np.uint16)
    c = cuda.malloc_3d_array(_fdesc(), (W, W, 6), SLS | ArrayFlags.CUBEMAP)
    cl = cuda.malloc_3d_array(_fdesc(np.uint16), (W, W, 6 * L), SLS | ArrayFlags.CUBEMAP | ArrayFlags.LAYERED)
    assert (c.kind, cl.kind, cl.resource.layers, cl.shape) == ("cube", "cube_layered", L, (6 * L, W, W))
    c.set(hc)
    cl.set(hl)
    mod.get_function("cube")((W, 6), 32, (cuda.create_surface_object(c), cuda.create_surface_object(cl),
                                          np.int32(W), np.int32(L))).wait()
    faces = np.arange(6, dtype=np.float64)[:, None, None]  # NVRTC fuses v * 10 + face into one fma: round once
    np.testing.assert_array_equal(c.get(), (hc.astype(np.float64) * 10 + faces).astype(np.float32))
    np.testing.assert_array_equal(cl.get(), hl ^ np.arange(6 * L, dtype=np.uint16)[:, None, None])


@pytest.mark.parametrize("mode", ["clamp", "zero"])
def test_out_of_range_clamp_and_zero(mod: cuda.Module, mode: str) -> None:
    W, H, shift = 6, 4, 2
    img = RNG.standard_normal((H, W)).astype(np.float32)
    a, o = cuda.malloc_array(_fdesc(), W, H, SLS), cuda.malloc_array(_fdesc(), W, H, SLS)
    a.set(img)
    o.set(np.full((H, W), -1, np.float32))
    out = cuda.zeros(H * W, np.float32)
    mod.get_function(f"shifted_{mode}")(H, W, (cuda.create_surface_object(a), cuda.create_surface_object(o), out,
                                              np.int32(W), np.int32(H), np.int32(shift))).wait()
    ys, xs = np.mgrid[0:H, 0:W]
    rx, ry = xs + shift, ys - shift
    inside = (rx < W) & (ry >= 0)
    written = np.full((H, W), -1, np.float32)
    wx, wy = xs + shift, ys + shift
    if mode == "clamp":
        want = img[np.clip(ry, 0, H - 1), np.clip(rx, 0, W - 1)]
        # every thread writes its clamped texel; threads of a block land in lane order, blocks in order
        for y in range(H):
            for x in range(W):
                written[min(wy[y, x], H - 1), min(wx[y, x], W - 1)] = y * W + x
    else:
        want = np.where(inside, img[np.clip(ry, 0, H - 1), np.clip(rx, 0, W - 1)], 0)
        ok = (wx < W) & (wy < H)
        written[wy[ok], wx[ok]] = (ys * W + xs)[ok]
    np.testing.assert_array_equal(out.get().reshape(H, W), want)
    np.testing.assert_array_equal(o.get(), written)


def test_out_of_range_trap_faults(mod: cuda.Module) -> None:
    W, H = 6, 4
    a, o = cuda.malloc_array(_fdesc(), W, H, SLS), cuda.malloc_array(_fdesc(), W, H, SLS)
    out = cuda.zeros(H * W, np.float32)
    k = mod.get_function("shifted_trap")
    args = (cuda.create_surface_object(a), cuda.create_surface_object(o), out, np.int32(W), np.int32(H))
    k(H, W, (*args, np.int32(0))).wait()  # in range: no fault
    with pytest.raises(cuda.DeviceFault) as info:
        k(H, W, (*args, np.int32(1))).wait()
    e = info.value
    assert e.name == "cudaErrorIllegalAddress" and e.report["space"] == "surface"
    assert "out of range with .trap" in str(e) and "2d surface of 6x4 texels" in str(e)
    assert e.report["instruction"].startswith("suld.b.2d")
    cuda.current_device().reset()
    assert _code(cuda.destroy_surface_object, args[0]) == "cudaErrorInvalidValue"  # reset destroyed it


def test_8_and_64_bit_accesses(mod: cuda.Module) -> None:
    W, H, N = 7, 3, 9  # N int2 texels = N 8-byte values
    b8 = RNG.integers(-128, 128, (H, W), dtype=np.int8)
    wide = RNG.integers(-(1 << 62), 1 << 62, N, dtype=np.int64)
    ab = cuda.malloc_array(_fdesc(np.int8), W, H, SLS)
    aw = cuda.malloc_array(_fdesc(np.int32, 2), N, 0, SLS)
    ab.set(b8)
    aw.set(wide.view(np.int32).reshape(N, 2))
    out, out64 = cuda.zeros(H * (W + 2), np.int32), cuda.zeros(3 * N, np.int64)
    sb, sw = cuda.create_surface_object(ab), cuda.create_surface_object(aw)
    mod.get_function("widths")(H, 32, (sb, sw, out, out64, np.int32(W), np.int32(N))).wait()
    padded = np.zeros((H, W + 2), np.int32)
    padded[:, 1:-1] = b8
    np.testing.assert_array_equal(out.get().reshape(H, W + 2), padded)  # .zero: the edges read 0
    pairs = N // 2  # 16-byte elements of the 72-byte row: 4; x past the last is clamped to the last
    j = np.minimum(np.arange(N) + 1, pairs - 1)
    want = np.stack([wide, wide[2 * j], wide[2 * j + 1]], axis=1).reshape(-1)
    np.testing.assert_array_equal(out64.get(), want)
    mod.get_function("swap64")(1, 32, (sw, np.int32(pairs))).wait()
    swapped = wide.copy()
    swapped[0: 2 * pairs: 2], swapped[1: 2 * pairs: 2] = wide[1: 2 * pairs: 2], wide[0: 2 * pairs: 2]
    np.testing.assert_array_equal(aw.get().reshape(-1).view(np.int64), swapped)


def test_formatted_stores_convert_to_the_texel_format(mod: cuda.Module) -> None:
    n = 8  # threads; the half2 surface is 5 wide (clamp), the short one 6 wide (zero)
    a8 = cuda.malloc_array(_fdesc(np.uint8, 4), n, 0, SLS)
    a16 = cuda.malloc_array(_fdesc(np.float16, 2), 5, 0, SLS)
    s16 = cuda.malloc_array(_fdesc(np.int16), 6, 2, SLS)
    s16.set(np.full((2, 6), 7, np.int16))
    mod.get_function("formatted")(1, n, tuple(cuda.create_surface_object(a) for a in (a8, a16, s16))).wait()
    x = np.arange(n)
    np.testing.assert_array_equal(a8.get(), np.minimum(40 * x[:, None] + np.arange(4), 255))  # saturated
    f = x.astype(np.float32) * np.float32(0.1)
    want16 = np.stack([f[:5], -f[:5]], axis=1).astype(np.float16)
    want16[4] = np.array([f[7], -f[7]], np.float16)  # clamped lanes 4..7 all write texel 4; the last lane wins
    np.testing.assert_array_equal(a16.get(), want16)
    wants = np.full((2, 6), 7, np.int16)
    wants[1] = np.clip(20000 * x[:6] - 50000, -32768, 32767)  # lanes 6, 7 are out of range: dropped
    np.testing.assert_array_equal(s16.get(), wants)


def test_suq_and_misaligned_x(mod: cuda.Module) -> None:
    a = cuda.malloc_3d_array(_fdesc(np.uint8, 2), (9, 4, 3), SLS | ArrayFlags.LAYERED)
    out = cuda.zeros(4, np.uint32)
    mod.get_function("query")(1, 1, (cuda.create_surface_object(a), out)).wait()
    assert out.get().tolist() == [9, 4, 1, 3]
    b = cuda.malloc_array(_fdesc(), 8, 0, SLS)
    with pytest.raises(cuda.DeviceFault) as info:
        mod.get_function("misaligned")(1, 1, (cuda.create_surface_object(b), cuda.zeros(1, np.float32))).wait()
    assert info.value.name == "cudaErrorMisalignedAddress"
    cuda.current_device().reset()


def test_memcheck_catches_a_surface_over_a_freed_array(mod: cuda.Module) -> None:
    W, H = 8, 2
    a, b = cuda.malloc_array(_fdesc(), W, H, SLS), cuda.malloc_array(_fdesc(), W, H, SLS)
    sa, sb = cuda.create_surface_object(a), cuda.create_surface_object(b)
    ptr = a.ptr
    cuda.free_array(a)  # the surface object stays, as in CUDA; using it is a use after free
    with pytest.raises(cuda.DeviceFault) as info:
        mod.get_function("affine2d")((1, H), 32, (sa, sb, np.int32(W), np.int32(H))).wait()
    r = info.value.report
    assert info.value.name == "cudaErrorIllegalAddress" and r["access"] == "read"
    assert r["address"] == ptr and "freed allocation" in r["nearest"]
    cuda.current_device().reset()


def test_destroyed_surface_handle_faults(mod: cuda.Module) -> None:
    a = cuda.malloc_array(_fdesc(), 4, 1, SLS)
    s = cuda.create_surface_object(a)
    cuda.destroy_surface_object(s)
    with pytest.raises(cuda.CudaError, match="not a live surface"):
        cuda.destroy_surface_object(s)
    with pytest.raises(cuda.DeviceFault, match="not a live surface object") as info:
        mod.get_function("affine2d")(1, 32, (s, s, np.int32(4), np.int32(1))).wait()
    assert info.value.name == "cudaErrorIllegalInstruction"  # as for a destroyed texture object
    cuda.current_device().reset()


# --- copies --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("extent,flags", [
    ((17, 0, 0), ArrayFlags.DEFAULT), ((13, 5, 0), ArrayFlags.DEFAULT), ((7, 3, 5), ArrayFlags.DEFAULT),
    ((9, 0, 3), ArrayFlags.LAYERED), ((5, 3, 4), ArrayFlags.LAYERED), ((3, 3, 6), ArrayFlags.CUBEMAP),
    ((2, 2, 12), ArrayFlags.CUBEMAP | ArrayFlags.LAYERED)], ids=["1d", "2d", "3d", "1dl", "2dl", "cube", "cubel"])
def test_round_trip_through_pitched_host_and_device_memory(extent: tuple[int, int, int], flags: ArrayFlags) -> None:
    w, h, d = extent
    arr = cuda.malloc_3d_array(_fdesc(np.int16, 2), extent, flags)
    rows, slices = max(h, 1), max(d, 1)
    host_pitch = w * 4 + 12  # padded host rows
    host = RNG.integers(0, 255, (slices, rows, host_pitch), dtype=np.uint8)
    p = Memcpy3DParms(src_ptr=PitchedPtr(host, host_pitch, w, rows), dst_array=arr, extent=(w, rows, slices))
    cuda.memcpy_3d(p)
    dense = host[:, :, : w * 4].copy().view(np.int16).reshape(arr.shape if len(arr.shape) == 4 else
                                                               (slices, rows, w, 2))
    np.testing.assert_array_equal(arr.get().reshape(dense.shape), dense)
    # array -> pitched device memory (cudaMalloc3D-like) -> a second array -> host
    dev = cuda.malloc_3d((w * 4, rows, slices))
    assert dev.pitch % 512 == 0 and (dev.xsize, dev.ysize) == (w * 4, rows)
    cuda.memcpy_3d(Memcpy3DParms(src_array=arr, dst_ptr=dev, extent=(w, rows, slices)))
    arr2 = cuda.malloc_3d_array(_fdesc(np.int16, 2), extent, flags)
    cuda.memcpy_3d(Memcpy3DParms(src_ptr=dev, dst_array=arr2, extent=(w, rows, slices), kind="DeviceToDevice"))
    arr3 = cuda.malloc_3d_array(_fdesc(np.int16, 2), extent, flags)
    cuda.memcpy_3d(Memcpy3DParms(src_array=arr2, dst_array=arr3, extent=(w, rows, slices)))
    np.testing.assert_array_equal(arr3.get().reshape(dense.shape), dense)
    cuda.free(dev.ptr)
    assert cuda.array_get_info(arr3) == (_fdesc(np.int16, 2), extent, flags)


def test_sub_box_copies_with_offsets() -> None:
    W, H, D = 9, 7, 4
    vol = RNG.standard_normal((D, H, W)).astype(np.float32)
    arr = cuda.malloc_3d_array(_fdesc(), (W, H, D))
    arr.set(vol)
    out = np.zeros((2, 3, 4), np.float32)  # a 4x3x2 box from (x=2, y=3, z=1) of the array
    cuda.memcpy_3d(Memcpy3DParms(src_array=arr, src_pos=(2, 3, 1), dst_ptr=PitchedPtr(out, 16, 4, 3),
                                 extent=(4, 3, 2)))
    np.testing.assert_array_equal(out, vol[1:3, 3:6, 2:6])
    # into the middle of a pitched host buffer at byte x = 8, row 1, slice 1
    big = np.zeros((3, 5, 10), np.float32)
    cuda.memcpy_3d(Memcpy3DParms(src_array=arr, dst_ptr=PitchedPtr(big, 40, 10, 5), dst_pos=(8, 1, 1),
                                 extent=(3, 2, 2)))
    want = np.zeros_like(big)
    want[1:3, 1:3, 2:5] = vol[0:2, 0:2, 0:3]
    np.testing.assert_array_equal(big, want)
    # 2-D copies use byte offsets and widths
    arr2 = cuda.malloc_array(_fdesc(), W, H)
    arr2.set(vol[3])
    cuda.memcpy_2d_to_array(arr2, 8, 2, vol[0], W * 4, 12, 3, "HostToDevice")
    want2 = vol[3].copy()
    want2[2:5, 2:5] = vol[0, 0:3, 0:3]  # and nothing else of the array changed
    np.testing.assert_array_equal(arr2.get(), want2)


def test_memcpy_2d_pitched_device_memory_and_deprecated_linear_copies() -> None:
    W, H = 21, 6
    a = RNG.integers(0, 1 << 30, (H, W), dtype=np.int32)
    ptr, pitch = cuda.malloc_pitch(W * 4, H)
    assert pitch % 512 == 0 and pitch >= W * 4
    cuda.memcpy_2d(ptr, pitch, a, W * 4, W * 4, H, "HostToDevice")
    ptr2, pitch2 = cuda.malloc_pitch(W * 4, H)
    cuda.memcpy_2d(ptr2, pitch2, ptr, pitch, W * 4, H, "DeviceToDevice")
    out = np.zeros((H, W + 3), np.int32)  # padded host rows: the padding stays untouched
    cuda.memcpy_2d(out, (W + 3) * 4, ptr2, pitch2, W * 4, H)
    np.testing.assert_array_equal(out[:, :W], a)
    assert not out[:, W:].any()
    arr = cuda.malloc_array(_fdesc(np.int32), W, H)
    flat = a.reshape(-1)
    cuda.memcpy_to_array(arr, 12, 1, flat, 4 * 40, "HostToDevice")  # 40 ints from (3, 1) on, across rows
    back = np.zeros(40, np.int32)
    cuda.memcpy_from_array(back, arr, 12, 1, 4 * 40, "DeviceToHost")
    np.testing.assert_array_equal(back, flat[:40])
    np.testing.assert_array_equal(arr.get().reshape(-1)[W + 3: W + 43], flat[:40])
    cuda.free(ptr)
    cuda.free(ptr2)


def test_async_copies_on_a_stream() -> None:
    W, H = 10, 4
    img = RNG.standard_normal((H, W)).astype(np.float32)
    arr = cuda.malloc_array(_fdesc(), W, H)
    s = cuda.Stream()
    out = cuda.pinned_empty((H, W), np.float32)
    cuda.memcpy_2d_to_array(arr, 0, 0, img, W * 4, W * 4, H, stream=s)
    cuda.memcpy_2d_from_array(out, W * 4, arr, 0, 0, W * 4, H, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, img)


# --- API errors ------------------------------------------------------------------------------------------


def _code(fn: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(cuda.CudaError) as info:
        fn(*args, **kw)
    return info.value.name


def test_argument_errors_have_cudas_codes() -> None:
    f32 = _fdesc()
    assert _code(cuda.malloc_array, cuda.create_channel_desc(8, 8, 8, 0, "unsigned"), 4) == \
        "cudaErrorInvalidChannelDescriptor"  # three components
    assert _code(cuda.malloc_array, cuda.create_channel_desc(8, 0, 0, 0, "float"), 4) == \
        "cudaErrorInvalidChannelDescriptor"  # 8-bit floats
    assert _code(cuda.malloc_array, cuda.create_channel_desc(32, 16, 0, 0, "signed"), 4) == \
        "cudaErrorInvalidChannelDescriptor"  # mixed sizes
    assert _code(cuda.malloc_array, f32, 0) == "cudaErrorInvalidValue"
    assert _code(cuda.malloc_array, f32, 4, 4, ArrayFlags.LAYERED) == "cudaErrorInvalidValue"
    assert _code(cuda.malloc_3d_array, f32, (4, 5, 6), ArrayFlags.CUBEMAP) == "cudaErrorInvalidValue"
    assert _code(cuda.malloc_3d_array, f32, (4, 4, 7), ArrayFlags.CUBEMAP | ArrayFlags.LAYERED) == \
        "cudaErrorInvalidValue"
    assert _code(cuda.malloc_3d_array, f32, (4, 4, 0), ArrayFlags.LAYERED) == "cudaErrorInvalidValue"
    assert _code(cuda.malloc_3d_array, f32, (4, 0, 3)) == "cudaErrorInvalidValue"
    assert _code(cuda.malloc_3d_array, f32, (20000, 2, 2)) == "cudaErrorInvalidValue"
    arr = cuda.malloc_array(f32, 4, 3)
    host = np.zeros((3, 4), np.float32)
    assert _code(cuda.memcpy_2d_to_array, arr, 0, 0, host, 8, 16, 3) == "cudaErrorInvalidPitchValue"
    assert _code(cuda.memcpy_2d_to_array, arr, 4, 0, host, 16, 16, 3) == "cudaErrorInvalidValue"  # past the row
    assert _code(cuda.memcpy_2d_to_array, arr, 0, 1, host, 16, 16, 3) == "cudaErrorInvalidValue"  # past the rows
    assert _code(cuda.memcpy_2d_to_array, arr, 0, 0, host, 16, 16, 3, "DeviceToHost") == \
        "cudaErrorInvalidMemcpyDirection"
    assert _code(cuda.memcpy_2d_from_array, np.zeros(2, np.float32), 16, arr, 0, 0, 16, 3) == \
        "cudaErrorInvalidValue"  # host buffer too small
    assert _code(cuda.memcpy_2d, host, 8, host, 16, 12, 2) == "cudaErrorInvalidPitchValue"
    assert _code(cuda.memcpy_to_array, arr, 0, 2, host, 48) == "cudaErrorInvalidValue"
    assert _code(cuda.create_surface_object, arr) == "cudaErrorInvalidValue"  # no SURFACE_LOAD_STORE
    assert _code(cuda.memcpy_3d, Memcpy3DParms(src_array=arr, extent=(1, 1, 1))) == "cudaErrorInvalidValue"
    other = cuda.malloc_array(_fdesc(np.uint8), 4, 3)
    assert _code(cuda.memcpy_3d, Memcpy3DParms(src_array=arr, dst_array=other, extent=(1, 1, 1))) == \
        "cudaErrorInvalidValue"  # element sizes differ
    cuda.free_array(arr)
    assert _code(cuda.free_array, arr) == "cudaErrorInvalidValue"
    assert _code(cuda.memcpy_2d_to_array, arr, 0, 0, host, 16, 16, 3) == "cudaErrorInvalidValue"
    assert _code(cuda.create_surface_object, arr) == "cudaErrorInvalidValue"


# --- HIP -------------------------------------------------------------------------------------------------


def test_hip_twins_by_python_and_c_names() -> None:
    W, H = 6, 3
    img = RNG.standard_normal((H, W)).astype(np.float32)
    desc = capi.hipCreateChannelDesc(32, 0, 0, 0, "hipChannelFormatKindFloat")
    arr = capi.hipMallocArray(desc, W, H, capi.hipArraySurfaceLoadStore)
    assert isinstance(arr, hip.CudaArray) and isinstance(arr, cuda.CudaArray)
    capi.hipMemcpy2DToArray(arr, 0, 0, img, W * 4, W * 4, H, "hipMemcpyHostToDevice")
    ptr, pitch = capi.hipMallocPitch(W * 4, H)
    capi.hipMemcpy2DFromArray(ptr, pitch, arr, 0, 0, W * 4, H, "hipMemcpyDeviceToDevice")
    out = np.zeros_like(img)
    hip.memcpy_2d(out, W * 4, ptr, pitch, W * 4, H, "DeviceToHost")
    np.testing.assert_array_equal(out, img)
    vol = capi.hipMalloc3DArray(desc, (W, H, 2), 0)
    capi.hipMemcpy3D(hip.Memcpy3DParms(src_ptr=hip.PitchedPtr(np.stack([img, img + 1]), W * 4, W, H),
                                       dst_array=vol, extent=(W, H, 2)))
    np.testing.assert_array_equal(vol.get()[1], img + 1)
    desc_back, extent, flags = capi.hipArrayGetInfo(vol)
    assert (desc_back, extent, flags) == (desc, (W, H, 2), 0)
    p3 = capi.hipMalloc3D((W * 4, H, 2))
    capi.hipMemcpy3D(hip.Memcpy3DParms(src_array=vol, dst_ptr=p3, extent=(W, H, 2)))
    back = np.zeros((2, H, W), np.float32)
    capi.hipMemcpy3D(hip.Memcpy3DParms(src_ptr=p3, dst_ptr=hip.PitchedPtr(back, W * 4, W * 4, H), extent=(W * 4, H, 2)))
    np.testing.assert_array_equal(back[1], img + 1)  # between two pitched pointers the extent is in bytes
    s = capi.hipCreateSurfaceObject(hip.ResourceDesc.from_array(arr))
    capi.hipDestroySurfaceObject(s)
    capi.hipFreeArray(arr)
    capi.hipFreeArray(vol)
    capi.hipFree(ptr)


def test_hip_kernel_uses_surfaces_by_hip_names() -> None:
    mod = hip.compile(r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void bump(hipSurfaceObject_t s, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x >= w) return;
    float v;
    surf2Dread(&v, s, (x + 1) * 4, y, hipBoundaryModeZero);  // HIP's out-parameter form
    surf2Dwrite(v + 1.f, s, x * 4, y);
}""")
    W, H = 5, 3
    host = RNG.standard_normal((H, W)).astype(np.float32)
    arr = hip.malloc_array(hip.create_channel_desc(np.float32), W, H, hip.ArrayFlags.SURFACE_LOAD_STORE)
    arr.set(host)
    mod.get_function("bump")(H, 32, (hip.create_surface_object(arr), np.int32(W))).wait()
    # every lane reads its right neighbour (zero past the edge) before any writes: one instruction at a time
    want = np.concatenate([host[:, 1:], np.zeros((H, 1), np.float32)], axis=1) + np.float32(1)
    np.testing.assert_array_equal(arr.get(), want)


UNIFORM_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry uni(.param .u64 s, .param .u64 out, .param .u64 lanes, .param .u32 x, .param .u32 y,
                    .param .u32 v, .param .u64 t)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<16>;
    ld.param.u64 %rd1, [s];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd3, [lanes];
    ld.param.u32 %r1, [x];
    ld.param.u32 %r2, [y];
    ld.param.u32 %r10, [v];
    ld.param.u64 %rd10, [t];
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r3, 16;
    add.s64 %rd5, %rd3, %rd4;
    ld.global.u32 %r6, [%rd5];
    ld.global.u32 %r7, [%rd5+4];
    ld.global.u64 %rd6, [%rd5+8];
    suld.b.2d.b32.clamp {%r4}, [%rd1, {%r1, %r2}];
    suld.b.2d.b32.zero {%r5}, [%rd1, {8, 1}];
    suld.b.2d.b32.clamp {%r8}, [%rd6, {%r6, %r7}];
    suq.width.b32 %r9, [%rd1];
    suq.width.b32 %r11, [%rd6];
    sust.b.2d.b32.trap [%rd10, {%r1, %r2}], {%r10};
    sust.p.2d.b32.trap [%rd10, {0, 0}], {%r10};
    mul.wide.u32 %rd7, %r3, 20;
    add.s64 %rd8, %rd2, %rd7;
    st.global.u32 [%rd8], %r4;
    st.global.u32 [%rd8+4], %r5;
    st.global.u32 [%rd8+8], %r8;
    st.global.u32 [%rd8+12], %r9;
    st.global.u32 [%rd8+16], %r11;
    ret;
}
"""


def test_uniform_handles_and_coordinates_match_per_lane_ones() -> None:
    """suld/sust/suq with the handle and coordinates as kernel parameters and immediates (scalars in the
    JIT) against the same accesses with per-lane registers loaded from memory (tests/hw/
    test_uniform_families.py's rule for every registered opcode)."""
    W, H, lanes = 5, 3, 40
    img = RNG.integers(0, 1 << 31, (H, W), dtype=np.uint32)
    a = cuda.malloc_array(_fdesc(np.uint32), W, H, SLS)
    t = cuda.malloc_array(_fdesc(np.uint32), W, H, SLS)
    a.set(img)
    t.set(np.zeros((H, W), np.uint32))
    s, st = cuda.create_surface_object(a), cuda.create_surface_object(t)
    x, y = 12, 2  # bytes: texel 3 of row 2
    per_lane = np.zeros((lanes, 4), np.uint32)
    per_lane[:, 0], per_lane[:, 1] = x, y
    per_lane[:, 2:] = np.array([s], np.uint64).view(np.uint32)
    out = cuda.zeros(lanes * 5, np.uint32)
    k = cuda.Module.from_ptx(UNIFORM_PTX).get_function("uni")
    k(1, lanes, (s, out, cuda.to_device(per_lane), np.uint32(x), np.uint32(y), np.uint32(77), st)).wait()
    got = out.get().reshape(lanes, 5)
    assert (got == [img[2, 3], img[1, 2], img[2, 3], W, W]).all()  # immediates {8, 1}: byte 8 = texel 2, row 1
    want_t = np.zeros((H, W), np.uint32)
    want_t[2, 3] = want_t[0, 0] = 77
    np.testing.assert_array_equal(t.get(), want_t)
