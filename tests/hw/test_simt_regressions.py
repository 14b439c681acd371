# Regression tests of SIMT bugs fixed at their root (issue 12, item 2): per-lane membermasks of the .sync
# warp ops, 32-bit shared/local address wrap, subc borrow, ld into a wider register, memcheck of
# addresses near 2^64 and below a window, and coalescing efficiency within [0, 1]. Kernels come from
# NVRTC; a few targeted instruction forms are hand-written PTX. Oracles are NumPy.
"""Each test here failed before its fix (see the issue) and pins the corrected behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from ptx_harness import PTX_HEAD, launch

import strata.cuda as cuda
from strata.errors import DeviceFault

FULL = 0xFFFFFFFF


def groups_of(masks: np.ndarray) -> list[list[int]]:
    """Per lane of one warp, the lanes its own membermask names."""
    return [[j for j in range(32) if (int(mk) >> j) & 1] for mk in masks]


# -- 1. every .sync warp op honours each lane's own membermask ------------------------------------------
SYNC_MASKS = r'''
extern "C" __global__ void per_lane_masks(const int* in, const unsigned* masks, int* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    unsigned mask = masks[t];
    int v = in[t];
    out[0 * n + t] = __reduce_add_sync(mask, v);
    out[1 * n + t] = __reduce_max_sync(mask, v);
    out[2 * n + t] = __reduce_min_sync(mask, v);
    out[3 * n + t] = (int)__reduce_or_sync(mask, (unsigned)v);
    out[4 * n + t] = (int)__reduce_and_sync(mask, (unsigned)v | 0x100u);
    out[5 * n + t] = (int)__reduce_xor_sync(mask, (unsigned)v);
    out[6 * n + t] = (int)__ballot_sync(mask, v & 1);
    out[7 * n + t] = __any_sync(mask, v > 40);
    out[8 * n + t] = __all_sync(mask, v > 3);
    out[9 * n + t] = (int)__match_any_sync(mask, v & 3);
    int pred;
    out[10 * n + t] = (int)__match_all_sync(mask, v >> 6, &pred);
    out[11 * n + t] = pred;
    out[12 * n + t] = __shfl_sync(mask, v, __ffs(mask) - 1);   // the lowest lane of my own group
}
'''
NOUT = 13


def sync_oracle(vals: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The results of SYNC_MASKS, one lane at a time over the lanes of its own mask."""
    n = vals.size
    out = np.zeros((NOUT, n), dtype=np.int64)
    for w in range(n // 32):
        v = vals[32 * w: 32 * w + 32].astype(np.int64)
        for i, grp in enumerate(groups_of(masks[32 * w: 32 * w + 32])):
            g = v[grp]
            t = 32 * w + i
            bits = sum(1 << j for j in grp)
            out[0, t] = g.sum()
            out[1, t], out[2, t] = g.max(), g.min()
            out[3, t] = np.bitwise_or.reduce(g)
            out[4, t] = np.bitwise_and.reduce(g | 0x100)
            out[5, t] = np.bitwise_xor.reduce(g)
            out[6, t] = sum(1 << j for j in grp if v[j] & 1)
            out[7, t] = int((g > 40).any())
            out[8, t] = int((g > 3).all())
            out[9, t] = sum(1 << j for j in grp if (v[j] & 3) == (v[i] & 3))
            same = len({int(x) >> 6 for x in g}) == 1
            out[10, t], out[11, t] = (bits if same else 0), int(same)
            out[12, t] = v[grp[0]]
    return out


def _run_sync(vals: np.ndarray, masks: np.ndarray) -> None:
    n = vals.size
    (_, _, got), _ = launch(SYNC_MASKS, "per_lane_masks", n // 64, 64, vals.astype(np.int32),
                            masks.astype(np.uint32), np.zeros(NOUT * n, np.int32))
    want = sync_oracle(vals, masks)
    got64 = got.reshape(NOUT, n).view(np.uint32).astype(np.int64)
    want32 = want & 0xFFFFFFFF
    for row in range(NOUT):
        np.testing.assert_array_equal(got64[row], want32[row], err_msg=f"output row {row}")


def test_redux_over_even_and_odd_lanes_gives_each_group_its_own_result():
    # the case: values 0..31, masks 0x55555555 (even lanes) and 0xAAAAAAAA (odd lanes)
    vals = np.tile(np.arange(32), 2)
    masks = np.where(np.arange(64) % 2 == 0, 0x55555555, 0xAAAAAAAA).astype(np.uint32)
    (_, _, got), _ = launch(SYNC_MASKS, "per_lane_masks", 1, 64, vals.astype(np.int32), masks,
                            np.zeros(NOUT * 64, np.int32))
    got = got.reshape(NOUT, 64)
    np.testing.assert_array_equal(got[1], np.where(np.arange(64) % 2 == 0, 30, 31))  # max
    np.testing.assert_array_equal(got[0], np.where(np.arange(64) % 2 == 0, 240, 256))  # add
    _run_sync(vals, masks)


def test_labeled_partition_groups_each_reduce_over_their_own_lanes():
    """What cg::labeled_partition + cg::reduce emit: mask = __match_any_sync(label), then redux/vote/match."""
    rng = np.random.default_rng(12)
    vals = rng.integers(0, 128, 128)
    labels = rng.integers(0, 5, 128)
    masks = np.zeros(128, dtype=np.uint32)
    for w in range(4):
        lab = labels[32 * w: 32 * w + 32]
        for i in range(32):
            masks[32 * w + i] = sum(1 << j for j in range(32) if lab[j] == lab[i])
    _run_sync(vals, masks)


def test_tiled_masks_of_width_8_and_a_uniform_mask_per_warp():
    vals = np.random.default_rng(3).integers(0, 100, 128)
    lane = np.arange(128) % 32
    tiles = (np.uint32(0xFF) << (lane // 8 * 8).astype(np.uint32)).astype(np.uint32)
    _run_sync(vals, tiles)
    per_warp = np.repeat(np.array([FULL, 0x0000FFFF, 0xFFFF0000, 0x0F0F0F0F], dtype=np.uint32), 32)
    mine = (per_warp >> lane.astype(np.uint32)) & 1 == 1
    # a lane outside its warp's mask passes a mask naming only itself (a lane must be in its own mask)
    _run_sync(vals, np.where(mine, per_warp, np.uint32(1) << lane.astype(np.uint32)).astype(np.uint32))


LABELED_DIVERGENT = r'''
extern "C" __global__ void labeled(const int* in, const int* label, int* out) {
    int t = threadIdx.x;
    int v = in[t];
    if (v % 3 != 0) {                 // diverge first: only these lanes take part
        unsigned act = __activemask();
        unsigned mask = __match_any_sync(act, label[t]);
        out[t] = __reduce_add_sync(mask, v);
    }
}
'''


def test_labeled_groups_inside_divergent_code():
    rng = np.random.default_rng(7)
    vals = rng.integers(0, 1000, 32).astype(np.int32)
    labels = rng.integers(0, 3, 32).astype(np.int32)
    (_, _, got), _ = launch(LABELED_DIVERGENT, "labeled", 1, 32, vals, labels, np.full(32, -1, np.int32))
    want = np.full(32, -1)
    act = vals % 3 != 0
    for i in np.flatnonzero(act):
        want[i] = vals[act & (labels == labels[i])].sum()
    np.testing.assert_array_equal(got, want)


# -- 2. 32-bit shared and local addresses wrap mod 2^32 -----------------------------------------------
SHARED_WRAP = r'''
extern "C" __global__ void window_sum(const int* in, int* out, int d) {
    __shared__ int s[64];
    int t = threadIdx.x;
    for (int i = t; i < 64; i += blockDim.x) s[i] = in[i];
    __syncthreads();
    const int* p = &s[t - d];          // NVRTC: sub.s32 then ld.shared [%r+64], [%r+68], ...
    int acc = 0;
    #pragma unroll
    for (int k = 16; k < 20; ++k) acc += p[k];
    out[t] = acc;
}
'''


def test_shared_address_below_zero_plus_offset_wraps_to_a_valid_address():
    x = np.random.default_rng(2).integers(-1000, 1000, 64).astype(np.int32)
    d = 16
    mod = cuda.compile(SHARED_WRAP)
    assert "sub.s32" in mod.ptx and "+68]" in mod.ptx  # the folded form the issue reports
    (_, got), _ = launch(mod, "window_sum", 1, 44, x, np.zeros(44, np.int32), np.int32(d))
    t = np.arange(44)
    want = sum(x[t - d + k] for k in range(16, 20))
    np.testing.assert_array_equal(got, want)


def test_local_and_shared_32bit_registers_wrap_in_hand_written_ptx():
    # a 32-bit address register 64 bytes below the buffer, with +68: offset 4 of the buffer
    text = PTX_HEAD + r'''
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<3>;
    .local .align 4 .b8 buf[16];
    .shared .align 4 .b8 sh[16];
    mov.u32 %r1, buf;
    sub.s32 %r2, %r1, 64;
    st.local.u32 [%r2+68], 7;
    ld.local.u32 %r3, [%r1+4];
    mov.u32 %r4, sh;
    add.s32 %r5, %r4, -16;
    st.shared.u32 [%r5+24], 11;
    ld.shared.u32 %r6, [%r4+8];
    add.s32 %r7, %r3, %r6;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r7;
    ret;
}
'''
    out = cuda.zeros(1, np.int32)
    cuda.Module.from_ptx(text).get_function("k")((1,), (1,), (out,))
    assert int(out.get()[0]) == 18


# -- 5. bad addresses near 2^64 or below a window are DeviceFaults with the normal report -------------
FAR = r'''
extern "C" __global__ void load4(const float4* p, float4* out) { out[threadIdx.x] = p[threadIdx.x]; }
extern "C" __global__ void load1(const int* p, int* out, long long k) { out[threadIdx.x] = p[k]; }
extern "C" __global__ void store1(int* p, long long k) { p[k] = 1; }
extern "C" __global__ void atomic1(int* p, long long k) { atomicAdd(p + k, 1); }
'''

TOP = 0xFFFF_FFFF_FFFF_FFF0


def _fault(fn: object, *args: object, block: int = 1) -> DeviceFault:
    with pytest.raises(DeviceFault) as ei:
        fn((1,), (block,), args).wait()  # type: ignore[operator]
    cuda.current_device().reset()
    return ei.value


@pytest.mark.parametrize("case", ["load4", "load1", "store1", "atomic1"])
def test_global_addresses_near_2_to_the_64_fault(case):
    mod = cuda.compile(FAR)
    out = cuda.zeros(4, np.float32)
    fn = mod.get_function(case)
    if case == "load4":
        e = _fault(fn, np.uint64(TOP), out)
        want = TOP
    else:  # p = TOP, k = 3: the 4-byte access at 2^64 - 4 ends exactly at 2^64
        args = (np.uint64(TOP), out, np.int64(3)) if case == "load1" else (np.uint64(TOP), np.int64(3))
        e = _fault(fn, *args)
        want = TOP + 12
    assert e.name == "cudaErrorIllegalAddress"
    assert e.report["address"] == want and e.report["space"] == "global"
    assert e.report["kernel"] == case and e.report["thread"] == (0, 0, 0)


def _entry(body: str, params: str = "") -> cuda.Kernel:
    text = PTX_HEAD + f".visible .entry k({params})\n{{\n{body}\nret;\n}}\n"
    return cuda.Module.from_ptx(text).get_function("k")


@pytest.mark.parametrize("space", ["shared", "local"])
def test_64bit_window_offsets_below_zero_fault(space):
    decl = ".shared .align 4 .b8 buf[16];" if space == "shared" else ".local .align 4 .b8 buf[16];"
    body = f"""
    .reg .b32 %r1;
    .reg .b64 %rd<3>;
    {decl}
    mov.u64 %rd1, buf;
    sub.s64 %rd2, %rd1, 4;
    ld.{space}.u32 %r1, [%rd2];"""
    e = _fault(_entry(body))
    assert e.name == "cudaErrorIllegalAddress" and e.report["space"] == space
    assert e.report["address"] == 2**64 - 4


@pytest.mark.parametrize("addr", [TOP, 0x7F00_0000_0000 - 4, 0x7E00_0000_0000 + (1 << 32), 0])
def test_generic_addresses_outside_every_window_fault(addr):
    body = """
    .reg .b32 %r1;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.u32 %r1, [%rd1];"""
    e = _fault(_entry(body, ".param .u64 p"), np.uint64(addr))
    assert e.name == "cudaErrorIllegalAddress" and e.report["address"] == addr


# -- 4. the carry flag after subtraction; ld into a wider register ------------------------------------
def _one_lane(body: str, regs: str, n_out: int, *inputs: int) -> list[int]:
    """Run `body` on one thread: %i<k> loaded from the inputs (u32), %o<k> (b64) stored as outputs."""
    loads = "\n".join(f"ld.global.u32 %i{k}, [%rin+{4 * k}];" for k in range(len(inputs)))
    stores = "\n".join(f"st.global.b64 [%rout+{8 * k}], %o{k};" for k in range(n_out))
    text = PTX_HEAD + f""".visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b64 %rin, %rout;
    .reg .b32 %i<{max(len(inputs), 1)}>;
    .reg .b64 %o<{n_out}>;
    {regs}
    ld.param.u64 %rin, [pin];
    ld.param.u64 %rout, [pout];
    {loads}
    {body}
    {stores}
    ret;
}}
"""
    out = cuda.zeros(n_out, np.uint64)
    inp = cuda.to_device(np.array(inputs or [0], dtype=np.uint32))
    cuda.Module.from_ptx(text).get_function("k")((1,), (1,), (inp, out))
    return [int(v) for v in out.get()]


@pytest.mark.parametrize("a, b", [(0x627ADF75, 0x864CCEF5), (5, 3), (3, 3), (0, 1), (0xFFFFFFFF, 0)])
def test_sub_cc_leaves_not_borrow_in_the_carry_flag(a, b):
    # the hardware subtracts as a + ~b + 1: CC.CF is the carry of that sum, i.e. NOT borrow, so an addc
    # reading it after sub.cc.s32 gets 1 exactly when a >= b (unsigned); a subc chain still borrows
    regs = ".reg .b32 %d, %c, %e, %f;"
    body = """sub.cc.s32 %d, %i0, %i1;
    addc.u32 %c, 0, 0;
    sub.cc.s32 %e, %i0, %i1;
    subc.cc.s32 %f, 0, 0;
    cvt.u64.u32 %o0, %d;
    cvt.u64.u32 %o1, %c;
    cvt.u64.u32 %o2, %f;
    addc.u32 %c, 0, 0;
    cvt.u64.u32 %o3, %c;"""
    d, carry, borrowed, carry2 = _one_lane(body, regs, 4, a, b)
    assert d == (a - b) & 0xFFFFFFFF
    assert carry == int(a >= b)
    assert borrowed == (0xFFFFFFFF if a < b else 0)  # 0 - (0 + borrow)
    assert carry2 == int(a >= b)  # 0 - 0 - borrow borrows exactly when the first one did


def test_int128_subtraction_chain_from_nvrtc():
    src = r'''
    extern "C" __global__ void sub128(const unsigned long long* a, const unsigned long long* b,
                                      unsigned long long* out) {
        int t = threadIdx.x;
        unsigned __int128 x = ((unsigned __int128)a[2 * t + 1] << 64) | a[2 * t];
        unsigned __int128 y = ((unsigned __int128)b[2 * t + 1] << 64) | b[2 * t];
        unsigned __int128 d = x - y;
        out[2 * t] = (unsigned long long)d;
        out[2 * t + 1] = (unsigned long long)(d >> 64);
    }'''
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2**63, 64, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, 64).astype(np.uint64)
    b = rng.integers(0, 2**63, 64, dtype=np.uint64) * np.uint64(2)
    a[:4] = [0, 0, 1, 0]
    b[:4] = [1, 0, 0, 1]
    mod = cuda.compile(src, options=["--device-int128"])
    assert "sub.cc" in mod.ptx and "subc" in mod.ptx
    (_, _, got), _ = launch(mod, "sub128", 1, 32, a, b, np.zeros(64, np.uint64))
    for t in range(32):
        x = int(a[2 * t]) | int(a[2 * t + 1]) << 64
        y = int(b[2 * t]) | int(b[2 * t + 1]) << 64
        d = (x - y) % 2**128
        assert (int(got[2 * t]), int(got[2 * t + 1])) == (d & (2**64 - 1), d >> 64), t


@pytest.mark.parametrize("t, wide, value, bits", [
    ("f32", "b64", 1.5, np.float32(1.5).view(np.uint32)),
    ("f32", "u64", -0.25, np.float32(-0.25).view(np.uint32)),
    ("f64", "b64", 0.1, np.float64(0.1).view(np.uint64)),
    ("s32", "b64", -7, 2**64 - 7),  # signed types sign-extend
    ("u32", "s64", 0x80000000, 0x80000000),  # the rest zero-extend
])
def test_ld_into_a_wider_register_keeps_the_bits(t, wide, value, bits):
    dt = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "u32": np.uint32}[t]
    text = PTX_HEAD + f""".visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b64 %rin, %rout;
    .reg .{wide} %x;
    ld.param.u64 %rin, [pin];
    ld.param.u64 %rout, [pout];
    ld.global.{t} %x, [%rin];
    st.global.b64 [%rout], %x;
    ret;
}}
"""
    out = cuda.zeros(1, np.uint64)
    cuda.Module.from_ptx(text).get_function("k")((1,), (1,), (cuda.to_device(np.array([value], dt)), out))
    assert int(out.get()[0]) == int(bits)


# -- 6. coalescing efficiency stays within [0, 1] -------------------------------------------------------
COALESCE = r'''
extern "C" __global__ void bcast(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[0] + x[blockIdx.x];          // one address per warp (a broadcast), twice
}
extern "C" __global__ void vec4(const float4* x, float4* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 v = x[i]; v.x += 1.0f; y[i] = v; }
}
extern "C" __global__ void strided(const float* x, float* y, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(long long)i * s];
}
extern "C" __global__ void pairs(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i / 2] + x[i % 7];           // lanes share addresses
}
'''


def warp_sectors(addrs: np.ndarray, nbytes: int) -> tuple[int, int]:
    """(sectors touched, ideal sectors) of one warp request whose lanes access `addrs` (bytes)."""
    touched = {int(a) >> 5 for a in addrs} | {(int(a) + nbytes - 1) >> 5 for a in addrs}
    distinct = len({int(a) for a in addrs})
    return len(touched), -(-distinct * nbytes // 32)


def expect(requests: list[tuple[np.ndarray, int]]) -> tuple[int, int]:
    """Sum of warp_sectors over loads given as (addresses of all lanes, bytes per lane)."""
    total = ideal = 0
    for addrs, nbytes in requests:
        for w in range(0, addrs.size, 32):
            s, i = warp_sectors(addrs[w: w + 32], nbytes)
            total, ideal = total + s, ideal + i
    return total, ideal


@pytest.mark.parametrize("case", ["bcast", "vec4", "strided2", "strided8", "pairs"])
def test_coalescing_efficiency_counts_sectors_and_stays_at_most_one(case):
    n, block = 1024, 128
    x = cuda.to_device(np.arange(8 * n, dtype=np.float32))
    y = cuda.zeros(4 * n, np.float32)
    assert x.ptr % 32 == 0 and y.ptr % 32 == 0
    mod = cuda.compile(COALESCE)
    i = np.arange(n, dtype=np.int64)
    name, args, loads = {
        "bcast": ("bcast", (x, y, np.int32(n)), [(np.zeros(n, np.int64), 4), (i // block * 4, 4)]),
        "vec4": ("vec4", (x, y, np.int32(n)), [(i * 16, 16)]),
        "strided2": ("strided", (x, y, np.int32(n), np.int32(2)), [(i * 8, 4)]),
        "strided8": ("strided", (x, y, np.int32(n), np.int32(8)), [(i * 32, 4)]),
        "pairs": ("pairs", (x, y, np.int32(n)), [(i // 2 * 4, 4), (i % 7 * 4, 4)]),
    }[case]
    c = mod.get_function(name)((n // block,), (block,), args).counters
    store_bytes = 16 if case == "vec4" else 4
    assert (c.global_load_sectors, c.global_load_ideal_sectors) == expect(loads)
    assert (c.global_store_sectors, c.global_store_ideal_sectors) == expect([(i * store_bytes, store_bytes)])
    total, ideal = expect([*loads, (i * store_bytes, store_bytes)])
    assert 0.0 < c.coalescing_efficiency <= 1.0
    assert c.coalescing_efficiency == pytest.approx(ideal / total)
    if case in ("bcast", "vec4", "pairs"):
        assert c.coalescing_efficiency == 1.0  # broadcasts and shared addresses waste no sector


BAD_ADDRESSES = {
    "const": ("mov.u64 %rd1, -16; ld.const.u32 %r1, [%rd1];", "global"),
    "generic store": ("mov.u64 %rd1, -4; st.u32 [%rd1], 1;", "global"),
    "generic atomic": ("mov.u64 %rd1, -4; atom.add.u32 %r1, [%rd1], 1;", "global"),
    "shared atomic": ("mov.u64 %rd1, -4; atom.shared.add.u32 %r1, [%rd1], 1;", "shared"),
    "local 32-bit": ("mov.u32 %r2, -4; ld.local.u32 %r1, [%r2];", "local"),
    "absolute shared": ("ld.shared.u32 %r1, [-4];", "shared"),
    "absolute global": ("ld.global.u32 %r1, [0xFFFFFFFFFFFFFFFC];", "global"),
    "cvta.to.shared of a global address": (
        "mov.u64 %rd1, 0x700000001000; cvta.to.shared.u64 %rd2, %rd1; ld.shared.u32 %r1, [%rd2];", "shared"),
    "cp.async source": (
        "mov.u64 %rd1, -4; mov.u32 %r2, 0; cp.async.ca.shared.global [%r2], [%rd1], 4; cp.async.wait_all;", "global"),
    "wmma": ("mov.u64 %rd1, -512; wmma.load.a.sync.aligned.row.m16n16k16.global.f16 "
             "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], 16;", "global"),
    "ldmatrix": ("mov.u32 %r2, -16; ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r2];", "shared"),
}


@pytest.mark.parametrize("case", sorted(BAD_ADDRESSES))
def test_every_bad_address_is_a_device_fault(case):
    body, space = BAD_ADDRESSES[case]
    decl = ".reg .b32 %r<9>;\n.reg .b64 %rd<4>;\n.shared .align 16 .b8 s[64];"
    e = _fault(_entry(f"{decl}\n{body}"), block=32)
    assert e.name == "cudaErrorIllegalAddress" and e.report["space"] == space
    assert e.report["kernel"] == "k" and isinstance(e.report["ptx_line"], int)


def test_elect_sync_leads_each_lanes_own_group():
    # even lanes pass 0x55555555, odd lanes 0xAAAAAAAA: lane 0 leads the even group, lane 1 the odd one
    text = PTX_HEAD + r""".visible .entry k(.param .u64 out)
{
    .reg .b32 %lane, %odd, %mask, %leader, %me;
    .reg .b64 %o, %off;
    .reg .pred %isodd, %lead;
    mov.u32 %lane, %laneid;
    and.b32 %odd, %lane, 1;
    setp.ne.b32 %isodd, %odd, 0;
    selp.b32 %mask, 0xAAAAAAAA, 0x55555555, %isodd;
    elect.sync %leader|%lead, %mask;
    selp.b32 %me, 1, 0, %lead;
    ld.param.u64 %o, [out];
    cvta.to.global.u64 %o, %o;
    mul.wide.u32 %off, %lane, 8;
    add.s64 %o, %o, %off;
    st.global.u32 [%o], %leader;
    st.global.u32 [%o+4], %me;
    ret;
}
"""
    out = cuda.zeros(64, np.uint32)
    cuda.Module.from_ptx(text).get_function("k")((1,), (32,), (out,))
    got = out.get().reshape(32, 2)
    lane = np.arange(32)
    np.testing.assert_array_equal(got[:, 0], lane % 2)
    np.testing.assert_array_equal(got[:, 1], (lane < 2).astype(np.uint32))
