"""The wave64 executor at L0 on the checked-in gfx942 code objects (compiled by clang-19 from the .hip
files here), against NumPy: no compiler needed. Memory is a standalone DeviceMemory; the kernarg
segment is laid out from the code object's metadata as the runtime does."""

from __future__ import annotations

import struct
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


def kernel(co: str, name: str) -> KernelInfo:
    return parse((HERE / f"{co}.co").read_bytes()).kernels[name]


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


def test_load_without_waitcnt_reads_stale_registers(rng: np.random.Generator) -> None:
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
    assert r["instruction"].startswith("global_load_dword v5")  # y[i] is read before it is written
    assert r["work_item"] == (90, 0, 0) and r["workgroup"] == (0, 0, 0)
    assert r["address"] == ya + 4 * 90 and "after the end of allocation" in r["nearest"]
    assert "offset 0x" in str(e.value)
