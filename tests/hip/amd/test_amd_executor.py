"""The wave64 executor at L0 on the checked-in gfx942 code objects (compiled by clang-19 from the .hip
files here), against NumPy: no compiler needed. Memory is a standalone DeviceMemory; the kernarg
segment is laid out from the code object's metadata as the runtime does."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from strata.errors import DeviceFault
from strata.hw.amdgpu import kernarg
from strata.hw.amdgpu.codeobject import KernelInfo, parse
from strata.hw.amdgpu.executor import AmdLaunch, execute, load_program
from strata.hw.counters import Counters
from strata.hw.memory import GLOBAL_BASE, DeviceMemory

HERE = Path(__file__).parent


class Board:
    """A DeviceMemory with a bump allocator (guard page between allocations)."""

    def __init__(self) -> None:
        self.mem = DeviceMemory(1 << 26)
        self.next = GLOBAL_BASE

    def put(self, data: np.ndarray | bytes, tag: str = "buf") -> int:
        raw = np.frombuffer(bytes(data) if isinstance(data, bytes) else data.tobytes(), np.uint8)
        addr = self.next
        self.mem.map(addr, raw.size, tag)
        self.mem.write(addr, raw)
        self.next += -(-raw.size // 4096) * 4096 + 4096
        return addr

    def get(self, addr: int, n: int, dtype: type = np.float32) -> np.ndarray:
        return np.frombuffer(self.mem.read(addr, n * np.dtype(dtype).itemsize), dtype).copy()

    def run(self, kernel: KernelInfo, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[bytes],
            batch_lanes: int = 1 << 16) -> Counters:
        seg = kernarg.build(kernel, args, grid, block)
        addr = self.put(seg + bytes(-len(seg) % 256), "kernarg")
        return execute(load_program(kernel), AmdLaunch(grid, block, addr, kernel.group_segment_fixed_size), self.mem,
                       batch_lanes=batch_lanes)


_ARCH = {"dir": HERE}


@pytest.fixture(autouse=True, params=["gfx942", "gfx90a"])
def arch(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs on the gfx942 (MI300X) build of its kernels and on the gfx90a (MI250X) one, where
    clang uses MUBUF scratch, AGPRs and 32-bit address pairs; a kernel without a gfx90a build skips there."""
    _ARCH["dir"] = HERE if request.param == "gfx942" else HERE / "gfx90a"
    try:
        yield request.param
    finally:
        _ARCH["dir"] = HERE


def kernel(co: str, name: str) -> KernelInfo:
    path = _ARCH["dir"] / f"{co}.co"
    if not path.exists():
        target = "gfx90a" if path.parent.name == "gfx90a" else "gfx942"
        pytest.skip(f"{co}.hip has no {target} build (target-specific builtins)")
    return parse(path.read_bytes()).kernels[name]


def p64(a: int) -> bytes:
    return a.to_bytes(8, "little")


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


def f32(v: float) -> bytes:
    return struct.pack("<f", v)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(15)


def test_saxpy_partial_last_workgroup(rng: np.random.Generator) -> None:
    b = Board()
    n = 1000  # 4 workgroups of 256, the last one partly past n
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    xa, ya = b.put(x), b.put(y)
    c = b.run(kernel("saxpy", "saxpy"), (4, 1, 1), (256, 1, 1), [i32(n), f32(2.5), p64(xa), p64(ya)])
    ref = (np.float64(2.5) * x + y).astype(np.float32)  # v_fmac_f32: fused, so compare with a rounded fma
    np.testing.assert_allclose(b.get(ya, n), ref, rtol=1e-6)
    assert c.global_load_bytes >= 8 * n and c.global_store_bytes == 4 * n


def test_lds_tree_reduction(rng: np.random.Generator) -> None:
    b = Board()
    n, blocks = 5000, 20
    x = rng.random(n, np.float32)
    xa, oa = b.put(x), b.put(np.zeros(blocks, np.float32))
    b.run(kernel("reduce", "reduce_sum"), (blocks, 1, 1), (256, 1, 1), [p64(xa), p64(oa), i32(n)])
    ref = np.pad(x, (0, blocks * 256 - n)).reshape(blocks, 256).sum(1, dtype=np.float64)
    np.testing.assert_allclose(b.get(oa, blocks), ref, rtol=1e-5)


@pytest.mark.parametrize("batch_lanes", [1 << 16, 256])  # all workgroups in one batch, or one per batch
def test_tiled_sgemm_2d_grid(rng: np.random.Generator, batch_lanes: int) -> None:
    b = Board()
    m, n, k = 40, 50, 70
    a, bm = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
    aa, ba, ca = b.put(a), b.put(bm), b.put(np.zeros((m, n), np.float32))
    b.run(kernel("sgemm", "sgemm"), (4, 3, 1), (16, 16, 1), [p64(aa), p64(ba), p64(ca), i32(m), i32(n), i32(k)],
          batch_lanes=batch_lanes)
    np.testing.assert_allclose(b.get(ca, m * n).reshape(m, n), a.astype(np.float64) @ bm, rtol=1e-5)


def test_softmax_expf_and_division(rng: np.random.Generator) -> None:
    b = Board()
    rows, cols = 5, 777
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    xa, ya = b.put(x), b.put(np.zeros_like(x))
    b.run(kernel("softmax", "softmax"), (rows, 1, 1), (256, 1, 1), [p64(xa), p64(ya), i32(cols)])
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(b.get(ya, rows * cols).reshape(rows, cols), e / e.sum(1, keepdims=True), rtol=2e-6,
                               atol=1e-12)


def test_porting_bug_32_lane_reduction_is_wrong_on_wave64(rng: np.random.Generator) -> None:
    b = Board()
    x = rng.random(4 * 256, np.float32)
    results = {}
    for name in ("warp_sum32", "warp_sum"):
        xa, oa = b.put(x), b.put(np.zeros(1, np.float32))
        b.run(kernel("warp_reduce", name), (4, 1, 1), (256, 1, 1), [p64(xa), p64(oa)])
        results[name] = float(b.get(oa, 1)[0])
    assert results["warp_sum"] == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-5)
    # written for 32-lane warps: only lanes 0..31 of the first wave of each block reach the atomicAdd
    assert results["warp_sum32"] == pytest.approx(float(x.reshape(4, 256)[:, :32].sum(dtype=np.float64)), rel=1e-5)


def test_load_without_waitcnt_reads_stale_registers(rng: np.random.Generator, arch: str) -> None:
    if arch != "gfx942":
        pytest.skip("patches gfx942 machine code by its bytes")
    k = kernel("saxpy", "saxpy")
    wait = (0xBF8C0F70).to_bytes(4, "little")  # s_waitcnt vmcnt(0) before v_fmac_f32
    nop = (0xBF800000).to_bytes(4, "little")  # s_nop 0
    assert k.code.count(wait) == 1
    k.code = k.code.replace(wait, nop)
    b = Board()
    n = 64
    x, y = rng.random(n, np.float32) + 1, rng.random(n, np.float32) + 1
    xa, ya = b.put(x), b.put(y)
    b.run(k, (1, 1, 1), (64, 1, 1), [i32(n), f32(2.0), p64(xa), p64(ya)])
    # the loads had not landed when v_fmac read v4/v5: it used their old contents (0), so y = 2 * 0 + 0
    assert np.all(b.get(ya, n) == 0)


def test_out_of_bounds_store_is_a_device_fault_with_the_instruction(rng: np.random.Generator) -> None:
    b = Board()
    n = 100
    xa, ya = b.put(rng.random(n, np.float32)), b.put(np.zeros(n - 10, np.float32), "y")
    with pytest.raises(DeviceFault) as e:
        b.run(kernel("saxpy", "saxpy"), (1, 1, 1), (128, 1, 1), [i32(n), f32(1.0), p64(xa), p64(ya)])
    r = e.value.report
    assert r["kernel"] == "saxpy" and r["space"] == "global"
    assert r["instruction"].startswith("global_load_dword v")  # y[i] is read before it is written
    assert r["work_item"] == (90, 0, 0) and r["workgroup"] == (0, 0, 0)
    assert r["address"] == ya + 4 * 90 and "after the end of allocation" in r["nearest"]
    assert "offset 0x" in str(e.value)


def test_global_atomics(rng: np.random.Generator) -> None:
    b = Board()
    blocks, n = 3, 3 * 128
    bufs = {name: b.put(np.array(init, np.int32)) for name, init in
            [("ci", [0, 0]), ("cu", [0, 0]), ("cf", [0]), ("mx", [-5]), ("mn", [5000]), ("cas", [7]), ("ex", [0]),
             ("out", [0] * n)]}
    b.run(kernel("breadth", "atomics"), (blocks, 1, 1), (128, 1, 1), [p64(a) for a in bufs.values()])
    t = np.arange(n)
    assert b.get(bufs["ci"], 1, np.int32)[0] == t.sum()
    assert list(b.get(bufs["cu"], 2, np.uint32)) == [n, 0xFFFFFFFF]  # atomicAdd count; atomicOr of 1 << (t % 32)
    assert b.get(bufs["cf"], 1)[0] == 0.5 * n
    assert b.get(bufs["mx"], 1, np.int32)[0] == (t * 7 % 1000).max()
    assert b.get(bufs["mn"], 1, np.int32)[0] == (1000 - t).min()
    # atomicCAS(cas, t, t + 1) from 7: work-item 7 succeeds, then 8 may (if it runs later), ... a chain whose
    # length depends on the order the lanes' atomics reach memory; at least work-item 7's must land
    assert 8 <= b.get(bufs["cas"], 1, np.int32)[0] <= n
    assert b.get(bufs["ex"], 1, np.int32)[0] == 5
    assert sorted(b.get(bufs["out"], n, np.int32)) == list(range(n))  # returning atomicAdd: each old value once


def test_cross_lane_shuffles_ballot_any_all(rng: np.random.Generator) -> None:
    b = Board()
    x = rng.integers(0, 100, 256).astype(np.int32)
    xa, oa, ba = b.put(x), b.put(np.zeros(4 * 256, np.int32)), b.put(np.zeros(4, np.uint64))
    b.run(kernel("breadth", "lanes"), (1, 1, 1), (256, 1, 1), [p64(xa), p64(oa), p64(ba)])
    out = b.get(oa, 4 * 256, np.int32).reshape(256, 4)
    waves = x.reshape(4, 64)
    np.testing.assert_array_equal(out[:, 0], np.repeat(waves.sum(1), 64))  # __shfl_xor butterfly over 64 lanes
    up = np.concatenate([[w[0]] + list(w[:-1]) for w in waves])
    np.testing.assert_array_equal(out[:, 1], up)  # __shfl_up by 1 (lane 0 keeps its own)
    np.testing.assert_array_equal(out[:, 2], np.repeat(waves[:, 0], 64))
    np.testing.assert_array_equal(out[:, 3], np.repeat((waves > 90).any(1) * 2 + 1, 64))
    bits = (waves & 1).astype(np.uint64) << np.arange(64, dtype=np.uint64)
    np.testing.assert_array_equal(b.get(ba, 4, np.uint64), np.bitwise_or.reduce(bits, axis=1))


def test_float_math_and_doubles(rng: np.random.Generator) -> None:
    b = Board()
    n = 200
    x = (rng.random(n) * 5 + 0.01).astype(np.float32)
    xd = rng.random(n) * 100
    ya, yda = b.put(np.zeros(8 * n, np.float32)), b.put(np.zeros(2 * n))
    b.run(kernel("breadth", "mathk"), (1, 1, 1), (256, 1, 1), [p64(b.put(x)), p64(ya), p64(b.put(xd)), p64(yda),
                                                                  i32(n)])
    y = b.get(ya, 8 * n).reshape(n, 8)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(y[:, 0], np.sqrt(x64), rtol=2e-7)
    np.testing.assert_allclose(y[:, 1], np.log(x64), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(y[:, 2], 1 / np.sqrt(x64), rtol=2e-7)
    np.testing.assert_array_equal(y[:, 3], np.floor(x * np.float32(3.3)))
    np.testing.assert_array_equal(y[:, 4], np.minimum(x, 0.5))
    np.testing.assert_array_equal(y[:, 5], np.trunc(x * np.float32(100)))
    np.testing.assert_array_equal(y[:, 6], np.abs(x - np.float32(1)))
    np.testing.assert_array_equal(y[:, 7], x / (x + np.float32(1)))  # correctly rounded division
    yd = b.get(yda, 2 * n, np.float64).reshape(n, 2)
    np.testing.assert_allclose(yd[:, 0], xd * xd + 1.0, rtol=1e-15)
    np.testing.assert_allclose(yd[:, 1], np.sqrt(xd), rtol=1e-15)


def test_lds_out_of_bounds_is_a_fault_in_shared_space(rng: np.random.Generator) -> None:
    b = Board()
    xa, oa = b.put(rng.random(512, np.float32)), b.put(np.zeros(1, np.float32))
    # reduce_sum has 256 floats of LDS; a workgroup of 512 writes s[256..511] past it
    with pytest.raises(DeviceFault) as e:
        b.run(kernel("reduce", "reduce_sum"), (1, 1, 1), (512, 1, 1), [p64(xa), p64(oa), i32(512)])
    r = e.value.report
    assert r["space"] == "shared" and r["access"] == "write" and r["instruction"].startswith("ds_write_b32")
    assert r["work_item"] == (256, 0, 0) and r["address"] == 1024


def test_dpp_row_shifts_broadcasts_and_permutes(rng: np.random.Generator) -> None:
    """DPP semantics per the CDNA3 ISA guide, modeled independently here with NumPy per 64-lane wave."""
    b = Board()
    x = rng.integers(-50, 50, 128).astype(np.int32)
    xa, oa = b.put(x), b.put(np.zeros(4 * 128, np.int32))
    b.run(kernel("dpp", "dpp_ops"), (2, 1, 1), (64, 1, 1), [p64(xa), p64(oa)])
    out = b.get(oa, 4 * 128, np.int32).reshape(128, 4)
    lane = np.arange(64)
    in_row = lane % 16

    def step(s: np.ndarray, src: np.ndarray, valid: np.ndarray, rows: int = 0xF, banks: int = 0xF) -> np.ndarray:
        enabled = ((rows >> (lane // 16)) & 1).astype(bool) & ((banks >> (in_row // 4)) & 1).astype(bool)
        return np.where(enabled, s + np.where(valid, s[np.clip(src, 0, 63)], 0), s)

    for w in range(2):
        v = x[64 * w: 64 * (w + 1)]
        s = v.copy()
        for n, banks in ((1, 0xF), (2, 0xF), (4, 0xE), (8, 0xC)):  # row_shr:n
            s = step(s, lane - n, in_row >= n, banks=banks)
        s = step(s, (lane & ~15) - 1, lane >= 16, rows=0xA)  # row_bcast:15
        s = step(s, np.full(64, 31), lane >= 32, rows=0xC)  # row_bcast:31
        got = out[64 * w: 64 * (w + 1)]
        np.testing.assert_array_equal(got[:, 0], s)
        np.testing.assert_array_equal(got[:, 1], v[(lane & ~3) + 3 - (lane & 3)])  # quad_perm:[3,2,1,0]
        np.testing.assert_array_equal(got[:, 2], v[(lane & ~15) + 15 - in_row])  # row_mirror
        np.testing.assert_array_equal(got[:, 3], np.where(in_row < 15, v[np.minimum(lane + 1, 63)], 0))  # row_shl:1
    # the row sums of the reduction: lane 63 holds the sum of the whole wave (the rocPRIM/Triton pattern)
    assert out[63, 0] == x[:64].sum() and out[127, 0] == x[64:].sum()


def test_mfma_f32_16x16x4_and_32x32x2(rng: np.random.Generator) -> None:
    b = Board()
    k = 12
    a, bm = rng.standard_normal((16, k)).astype(np.float32), rng.standard_normal((k, 16)).astype(np.float32)
    ca = b.put(np.zeros((16, 16), np.float32))
    c = b.run(kernel("mfma", "mfma_f32_16"), (1, 1, 1), (64, 1, 1), [p64(b.put(a)), p64(b.put(bm)), p64(ca), i32(k)])
    np.testing.assert_allclose(b.get(ca, 256).reshape(16, 16), a.astype(np.float64) @ bm, rtol=1e-5, atol=1e-5)
    assert c.flops["tensor"] == 2 * 16 * 16 * k
    a2, b2 = rng.standard_normal((32, 2)).astype(np.float32), rng.standard_normal((2, 32)).astype(np.float32)
    c2 = b.put(np.zeros((32, 32), np.float32))
    b.run(kernel("mfma", "mfma_f32_32"), (1, 1, 1), (64, 1, 1), [p64(b.put(a2)), p64(b.put(b2)), p64(c2)])
    np.testing.assert_allclose(b.get(c2, 1024).reshape(32, 32), a2.astype(np.float64) @ b2, rtol=1e-5, atol=1e-6)


def test_mfma_f16_bf16_i8(rng: np.random.Generator) -> None:
    b = Board()
    a, bm = rng.standard_normal((16, 16)).astype(np.float16), rng.standard_normal((16, 16)).astype(np.float16)
    ca = b.put(np.zeros((16, 16), np.float32))
    b.run(kernel("mfma", "mfma_f16"), (1, 1, 1), (64, 1, 1), [p64(b.put(a)), p64(b.put(bm)), p64(ca)])
    np.testing.assert_allclose(b.get(ca, 256).reshape(16, 16), a.astype(np.float64) @ bm + 1.0, rtol=1e-5, atol=1e-5)

    af, bf = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    a16, b16 = (af.view(np.uint32) >> 16).astype(np.uint16), (bf.view(np.uint32) >> 16).astype(np.uint16)  # bf16
    a_val = (a16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    b_val = (b16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    cb = b.put(np.zeros((16, 16), np.float32))
    b.run(kernel("mfma", "mfma_bf16"), (1, 1, 1), (64, 1, 1), [p64(b.put(a16)), p64(b.put(b16)), p64(cb)])
    np.testing.assert_allclose(b.get(cb, 256).reshape(16, 16), a_val @ b_val, rtol=1e-5, atol=1e-5)

    ai, bi = rng.integers(-128, 128, (16, 32)).astype(np.int8), rng.integers(-128, 128, (32, 16)).astype(np.int8)
    ci = b.put(np.zeros((16, 16), np.int32))
    b.run(kernel("mfma", "mfma_i8"), (1, 1, 1), (64, 1, 1), [p64(b.put(ai)), p64(b.put(bi)), p64(ci)])
    np.testing.assert_array_equal(b.get(ci, 256, np.int32).reshape(16, 16), ai.astype(np.int64) @ bi)


def test_half_and_bfloat16(rng: np.random.Generator) -> None:
    b = Board()
    n = 100
    x, y = (rng.standard_normal(n) * 4).astype(np.float16), (rng.standard_normal(n) * 4).astype(np.float16)
    out, outf = b.put(np.zeros(4 * n, np.float16)), b.put(np.zeros(n, np.float32))
    b.run(kernel("half", "half_ops"), (1, 1, 1), (128, 1, 1), [p64(b.put(x)), p64(b.put(y)), p64(out), p64(outf),
                                                                 i32(n)])
    got = b.get(out, 4 * n, np.float16).reshape(n, 4)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_array_equal(got[:, 0], (x64 + y64).astype(np.float16))  # rounded once to half
    np.testing.assert_array_equal(got[:, 1], (x64 * y64).astype(np.float16))
    np.testing.assert_array_equal(got[:, 2], (x64 * y64 + 0.5).astype(np.float16))
    np.testing.assert_array_equal(got[:, 3], np.maximum(x, y))
    np.testing.assert_array_equal(b.get(outf, n), x.astype(np.float32) * 2)

    pa, pb = (rng.standard_normal(2 * n)).astype(np.float16), (rng.standard_normal(2 * n)).astype(np.float16)
    o2 = b.put(np.zeros(2 * n, np.float16))
    b.run(kernel("half", "half2_ops"), (1, 1, 1), (128, 1, 1), [p64(b.put(pa)), p64(b.put(pb)), p64(o2), i32(n)])
    ref = (pa.astype(np.float64) * pb + 1.0).astype(np.float16)
    np.testing.assert_array_equal(b.get(o2, 2 * n, np.float16), ref)

    af = rng.standard_normal(n).astype(np.float32)
    a16 = (af.view(np.uint32) >> 16).astype(np.uint16)  # bfloat16 bit patterns (truncated floats)
    bf = rng.standard_normal(n).astype(np.float32)
    ob, obf = b.put(np.zeros(n, np.uint16)), b.put(np.zeros(n, np.float32))
    b.run(kernel("half", "bf16_ops"), (1, 1, 1), (128, 1, 1), [p64(b.put(a16)), p64(b.put(bf)), p64(ob), p64(obf),
                                                                 i32(n)])
    a_val = (a16.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(b.get(obf, n), a_val + bf)
    want = bf * np.float32(3)
    rounded = ((want.view(np.uint32) + 0x7FFF + ((want.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(b.get(ob, n, np.uint16), rounded)  # round to nearest even


def test_private_array_in_scratch(rng: np.random.Generator) -> None:
    b = Board()
    n = 150
    idx = rng.integers(0, 1000, n).astype(np.int32)
    k = kernel("scratch", "local_array")
    assert k.private_segment_fixed_size >= 37 * 4  # the array is in the private segment
    oa = b.put(np.zeros(n, np.int32))
    b.run(k, (2, 1, 1), (128, 1, 1), [p64(b.put(idx)), p64(oa), i32(n)])
    t = np.arange(n)
    i1, i2 = idx % 37, (idx * 7) % 37
    np.testing.assert_array_equal(b.get(oa, n, np.int32), i1 * i1 + t + i2 * i2 + t)


def test_lds_atomics_and_bytes(rng: np.random.Generator) -> None:
    b = Board()
    x = rng.integers(0, 1 << 20, 256).astype(np.uint32)
    oa = b.put(np.zeros(8 + 256, np.uint32))
    b.run(kernel("misc", "lds_atomics"), (1, 1, 1), (256, 1, 1), [p64(b.put(x)), p64(oa)])
    out = b.get(oa, 8 + 256, np.uint32)
    t = np.arange(256, dtype=np.uint64)
    assert out[0] == x.astype(np.uint64).sum() % 2**32
    assert out[1] == np.bitwise_or.reduce((np.uint64(1) << (x % 32).astype(np.uint64)).astype(np.uint32))
    assert out[2] == np.bitwise_xor.reduce(x)
    assert out[3] == np.bitwise_and.reduce((~(np.uint64(1) << (t % 32)) | (x & 1)).astype(np.uint32) & 0xFFFFFFFF)
    assert out[4] == x.max() and out[7] == x.min() + 1000
    assert 100 <= out[5] < 356  # exactly one work-item's CAS found 7 there
    assert out[6] == 256 % 10  # atomicInc wraps to 0 after reaching 9
    np.testing.assert_array_equal(out[8:], ((x * 3) & 0xFF)[::-1])


def test_float4_loads_and_stores(rng: np.random.Generator) -> None:
    b = Board()
    a = rng.standard_normal((100, 4)).astype(np.float32)
    ob = b.put(np.zeros((100, 4), np.float32))
    b.run(kernel("misc", "vec4"), (1, 1, 1), (128, 1, 1), [p64(b.put(a)), p64(ob), i32(100)])
    got = b.get(ob, 400).reshape(100, 4)
    np.testing.assert_array_equal(got, np.stack([a[:, 3], a[:, 2] * 2, a[:, 1] + 1, a[:, 0]], axis=1))


def test_integer_and_float_intrinsics(rng: np.random.Generator) -> None:
    b = Board()
    n = 64
    u = rng.integers(1, 2**32, 2 * n, dtype=np.uint64).astype(np.uint32)
    f = (rng.standard_normal(n) * 100).astype(np.float32)
    f[:4] = [np.nan, np.inf, -np.inf, 2.5]
    oa = b.put(np.zeros(8 * n, np.uint32))
    b.run(kernel("misc", "intrinsics"), (1, 1, 1), (64, 1, 1), [p64(b.put(u)), p64(b.put(f)), p64(oa), i32(n)])
    out = b.get(oa, 8 * n, np.uint32).reshape(n, 8)
    a, bb = u[:n].astype(np.uint64), u[n:].astype(np.uint64)
    i = np.arange(n, dtype=np.uint64)
    brev = np.array([int(f"{int(v):032b}"[::-1], 2) for v in a], np.uint64)
    np.testing.assert_array_equal(out[:, 0], brev)
    np.testing.assert_array_equal(out[:, 1], (((bb << np.uint64(32)) | a) << (i & np.uint64(31))) >> np.uint64(32)
                                  & np.uint64(0xFFFFFFFF))
    np.testing.assert_array_equal(out[:, 2], (a * bb) >> np.uint64(32))
    finite = np.isfinite(f)
    np.testing.assert_array_equal(out[finite, 3].view(np.int32), np.rint(f[finite]).astype(np.int32))
    np.testing.assert_array_equal(out[:, 4], f.view(np.uint32))
    np.testing.assert_array_equal(out[:, 5], np.isnan(f) * 2 + np.isinf(f))
    ffs = np.array([(int(v) & -int(v)).bit_length() for v in bb])
    np.testing.assert_array_equal(out[:, 6], [bin(int(v)).count("1") for v in a] + 100 * ffs)
    np.testing.assert_array_equal(out[finite, 7].view(np.int32), np.floor(f[finite]).astype(np.int32))
    assert out[3, 3] == 2  # rint(2.5) = 2: round half to even


def test_failed_assert_traps(rng: np.random.Generator) -> None:
    b = Board()
    x = np.arange(64, dtype=np.int32)
    oa = b.put(np.zeros(64, np.int32))
    b.run(kernel("misc", "checked"), (1, 1, 1), (64, 1, 1), [p64(b.put(x)), p64(oa)])
    np.testing.assert_array_equal(b.get(oa, 64, np.int32), 2 * x)
    x[17] = -1
    with pytest.raises(DeviceFault) as e:
        b.run(kernel("misc", "checked"), (1, 1, 1), (64, 1, 1), [p64(b.put(x)), p64(oa)])
    assert e.value.report["reason"] == "assert" and e.value.report["work_item"] == (17, 0, 0)
    assert e.value.name == "cudaErrorAssert" and e.value.hip_name == "hipErrorAssert"
    # the line the header's assert printed names the expression, this file's line and the kernel
    r = e.value.report
    assert (r["assertion"], r["file"], r["line"], r["function"]) == ("x[t] >= 0", "misc.hip", 42, "checked")


def test_lds_atomics_64_bit(rng: np.random.Generator) -> None:
    b = Board()
    x = rng.integers(0, 2**62, 128, dtype=np.uint64)
    oa = b.put(np.zeros(3, np.uint64))
    b.run(kernel("misc", "lds_atomics64"), (1, 1, 1), (128, 1, 1), [p64(b.put(x)), p64(oa)])
    out = b.get(oa, 3, np.uint64)
    t = np.arange(128, dtype=np.uint64)
    assert out[0] == int(x.astype(object).sum()) % 2**64 and out[1] == x.max()
    assert out[2] == np.bitwise_and.reduce(x | (np.uint64(1) << (t % np.uint64(64))))


def test_two_loads_into_one_register_land_in_order(rng: np.random.Generator, arch: str) -> None:
    """Loads return in order: when two pending loads write the same VGPR, the register ends with the
    newer one's value after the wait."""
    if arch != "gfx942":
        pytest.skip("patches gfx942 machine code by its bytes")
    k = kernel("saxpy", "saxpy")
    second = (0xDC508000).to_bytes(4, "little") + (0x057F0000).to_bytes(4, "little")  # global_load_dword v5, v[0:1]
    assert k.code.count(second) == 1
    k.code = k.code.replace(second, (0xDC508000).to_bytes(4, "little") + (0x047F0000).to_bytes(4, "little"))  # -> v4
    b = Board()
    x, y = rng.random(64, np.float32) + 1, rng.random(64, np.float32) + 1
    xa, ya = b.put(x), b.put(y)
    b.run(k, (1, 1, 1), (64, 1, 1), [i32(64), f32(2.0), p64(xa), p64(ya)])
    # v4 holds y (the newer load), v5 was never loaded (0): the kernel stores 2 * y + 0
    np.testing.assert_array_equal(b.get(ya, 64), 2 * y)


def _blocks(rng: np.random.Generator, kind: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(the array the kernel reads, its values as float64 / int64) for an MFMA operand of `kind`."""
    if kind == "i8":
        x = rng.integers(-128, 128, shape).astype(np.int8)
        return x, x.astype(np.int64)
    if kind == "bf16":
        bits = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[kind]
    x = rng.standard_normal(shape).astype(dtype)
    return x, x.astype(np.float64)


@pytest.mark.parametrize(("name", "kind", "m", "n", "k", "blocks"), [
    ("f32_32x32x1_2b", "f32", 32, 32, 1, 2), ("f32_16x16x1_4b", "f32", 16, 16, 1, 4),
    ("f32_4x4x1_16b", "f32", 4, 4, 1, 16), ("f16_4x4x4_16b", "f16", 4, 4, 4, 16),
    ("f16_32x32x4_2b", "f16", 32, 32, 4, 2), ("bf16_16x16x4_4b", "bf16", 16, 16, 4, 4),
    ("i8_32x32x4_2b", "i8", 32, 32, 4, 2), ("f64_4x4x4_4b", "f64", 4, 4, 4, 4)])
def test_multi_block_mfma(rng: np.random.Generator, name: str, kind: str, m: int, n: int, k: int,
                          blocks: int) -> None:
    """Multi-block MFMA shapes (independent products per block of lanes, the operand and result layouts of
    AMD's matrix instruction calculator) against NumPy matmul per block; f32 4x4x1 and f64 accumulate onto
    what D held."""
    b = Board()
    a_in, a = _blocks(rng, kind, (blocks, m, k))
    b_in, bm = _blocks(rng, kind, (blocks, k, n))
    out = np.int32 if kind == "i8" else np.float64 if kind == "f64" else np.float32
    d0 = rng.standard_normal((blocks, m, n)).astype(out) if name == "f32_4x4x1_16b" else np.zeros((blocks, m, n), out)
    d = b.put(d0)
    b.run(kernel("mfma_blocks", name), (1, 1, 1), (64, 1, 1), [p64(b.put(a_in)), p64(b.put(b_in)), p64(d)])
    got = b.get(d, blocks * m * n, out).reshape(blocks, m, n)
    want = np.matmul(a, bm) + (0.5 if kind == "f64" else d0)
    if kind == "i8":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5 if kind != "f64" else 1e-14, atol=1e-5)


def test_gfx90a_mfma_agprs_f64_i8_bf16(rng: np.random.Generator, arch: str) -> None:
    """gfx90a's MFMA shapes (f64 16x16x4, i8 16x16x16, bf16 32x32x8 accumulated over K), an accumulator in
    AGPRs (global loads and stores of a[...] and v_mfma on a[0:3]), against NumPy matmul."""
    b = Board()
    k = 12
    a, bm = rng.standard_normal((16, k), np.float32), rng.standard_normal((k, 16), np.float32)
    ca = b.put(np.zeros(256, np.float32))
    b.run(kernel("mfma90a", "mfma_f32_16"), (1, 1, 1), (64, 1, 1), [p64(b.put(a)), p64(b.put(bm)), p64(ca), i32(k)])
    np.testing.assert_allclose(b.get(ca, 256).reshape(16, 16), a.astype(np.float64) @ bm, rtol=1e-5, atol=1e-5)
    a4, b4, c0 = (rng.standard_normal(s, np.float32) for s in ((16, 4), (4, 16), (16, 16)))
    cc = b.put(c0)
    b.run(kernel("mfma90a", "mfma_f32_16_agpr"), (1, 1, 1), (64, 1, 1), [p64(b.put(a4)), p64(b.put(b4)), p64(cc)])
    np.testing.assert_allclose(b.get(cc, 256).reshape(16, 16), a4.astype(np.float64) @ b4 + c0, rtol=1e-5,
                               atol=1e-5)
    kb = 16
    a16 = (rng.standard_normal((32, kb)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    b16 = (rng.standard_normal((kb, 32)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    cb = b.put(np.zeros(1024, np.float32))
    b.run(kernel("mfma90a", "mfma_bf16_32"), (1, 1, 1), (64, 1, 1), [p64(b.put(a16)), p64(b.put(b16)), p64(cb),
                                                                     i32(kb)])
    af, bf = ((x.astype(np.uint32) << 16).view(np.float32).astype(np.float64) for x in (a16, b16))
    np.testing.assert_allclose(b.get(cb, 1024).reshape(32, 32), af @ bf, rtol=1e-5, atol=1e-5)
    ad, bd = rng.standard_normal((16, 4)), rng.standard_normal((4, 16))
    cd = b.put(np.zeros(256, np.float64))
    b.run(kernel("mfma90a", "mfma_f64"), (1, 1, 1), (64, 1, 1), [p64(b.put(ad)), p64(b.put(bd)), p64(cd)])
    np.testing.assert_allclose(b.get(cd, 256, np.float64).reshape(16, 16), ad @ bd + 1.0, rtol=1e-14)
    ai, bi = rng.integers(-128, 128, (16, 16)).astype(np.int8), rng.integers(-128, 128, (16, 16)).astype(np.int8)
    ci = b.put(np.zeros(256, np.int32))
    b.run(kernel("mfma90a", "mfma_i8"), (1, 1, 1), (64, 1, 1), [p64(b.put(ai)), p64(b.put(bi)), p64(ci)])
    np.testing.assert_array_equal(b.get(ci, 256, np.int32).reshape(16, 16), ai.astype(np.int64) @ bi)
