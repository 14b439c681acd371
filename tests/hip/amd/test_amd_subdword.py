"""Sub-dword instructions on the checked-in builds of subdword.hip (clang-19, gfx942, gfx90a, and gfx942 without
SRAM ECC in d16/, where clang keeps half-register loads): SDWA compares and ALU ops on bytes and words, packed
16-bit integer ops, v_cvt_f32_f16 of a high half, d16 loads and stores (LDS and global), v_frexp_*, and LDS
accesses at addresses that are not multiples of 4 (served in unaligned mode, as on the hardware); against NumPy."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from strata.hw.amdgpu import kernarg
from strata.hw.amdgpu.codeobject import KernelInfo, parse
from strata.hw.amdgpu.executor import AmdLaunch, execute, load_program
from strata.hw.memory import GLOBAL_BASE, DeviceMemory

HERE = Path(__file__).parent
_DIR = {"d": HERE}


@pytest.fixture(autouse=True, params=[".", "gfx90a", "d16"])
def build(request: pytest.FixtureRequest) -> Iterator[str]:
    _DIR["d"] = HERE / request.param
    yield request.param


def kernel(name: str) -> KernelInfo:
    return parse((_DIR["d"] / "subdword.co").read_bytes()).kernels[name]


def listing() -> str:
    return (_DIR["d"] / "subdword.s").read_text()


class Board:
    """Device memory with a bump allocator; runs a kernel with its kernarg segment laid out from metadata."""

    def __init__(self) -> None:
        self.mem = DeviceMemory(1 << 24)
        self.next = GLOBAL_BASE

    def put(self, data: np.ndarray) -> int:
        raw = np.frombuffer(data.tobytes(), np.uint8)
        addr = self.next
        self.mem.map(addr, raw.size, "buf")
        self.mem.write(addr, raw)
        self.next += -(-raw.size // 4096) * 4096 + 4096
        return addr

    def get(self, addr: int, n: int, dtype: type = np.float32) -> np.ndarray:
        return np.frombuffer(self.mem.read(addr, n * np.dtype(dtype).itemsize), dtype).copy()

    def run(self, k: KernelInfo, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[bytes]) -> None:
        seg = kernarg.build(k, args, grid, block)
        addr = self.put(np.frombuffer(seg + bytes(-len(seg) % 256), np.uint8))
        execute(load_program(k), AmdLaunch(grid, block, addr, k.group_segment_fixed_size), self.mem)


def p64(a: int) -> bytes:
    return a.to_bytes(8, "little")


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(42)


def test_sdwa_compares_on_bytes_and_packed_16_bit_integer_ops(rng: np.random.Generator) -> None:
    assert "v_cmp_ne_u16_sdwa" in listing() and "v_pk_mad_u16" in listing() and "v_pk_sub_i16" in listing()
    b = Board()
    n = 1000
    a, bb = (rng.integers(0, 256, (n, 4), np.uint8) for _ in range(2))
    c, d = (rng.integers(-128, 128, (n, 4), np.int8) for _ in range(2))
    c[:50] = d[:50]  # equal bytes: the != select
    addrs = [b.put(x) for x in (a, bb, c, d)]
    outs = [b.put(np.zeros((n, 4), np.uint8)) for _ in range(3)]
    b.run(kernel("bytes4"), (4, 1, 1), (256, 1, 1), [*map(p64, addrs), *map(p64, outs), i32(n)])
    np.testing.assert_array_equal(b.get(outs[0], 4 * n, np.uint8).reshape(n, 4), np.maximum(a, bb))
    np.testing.assert_array_equal(b.get(outs[1], 4 * n, np.uint8).reshape(n, 4), (a.astype(int) * bb) & 0xFF)
    want = (np.minimum(c, d).astype(int) + (c != d)).astype(np.int8)
    np.testing.assert_array_equal(b.get(outs[2], 4 * n, np.int8).reshape(n, 4), want)

    m = 2000  # packed u16: r = x*y + (x>>1) - y; r < x ? r : x^y
    x, y = (rng.integers(0, 65536, m, np.uint16) for _ in range(2))
    xa, ya, oa = b.put(x), b.put(y), b.put(np.zeros(m, np.uint16))
    b.run(kernel("pk_u16"), (4, 1, 1), (256, 1, 1), [p64(xa), p64(ya), p64(oa), i32(m)])
    r = (x.astype(np.int64) * y + (x >> 1) - y) & 0xFFFF
    np.testing.assert_array_equal(b.get(oa, m, np.uint16), np.where(r < x, r, x ^ y).astype(np.uint16))


def test_sdwa_word_compares_and_byte_multiply(rng: np.random.Generator) -> None:
    assert "v_cmp_lt_u16_sdwa" in listing()
    b = Board()
    n = 700
    a, bb = (rng.integers(-32768, 32768, n, np.int16) for _ in range(2))
    c, d = (rng.integers(0, 65536, n, np.uint16) for _ in range(2))
    a[:40], c[:40] = bb[:40], d[:40]
    out = b.put(np.zeros(n, np.int32))
    b.run(kernel("cmp_shorts"), (3, 1, 1), (256, 1, 1), [*(p64(b.put(x)) for x in (a, bb, c, d)), p64(out), i32(n)])
    want = (a > bb) | ((c < d) << 1) | ((c != d) << 2) | ((a >= bb) << 3)
    np.testing.assert_array_equal(b.get(out, n, np.int32), want)
    a8, b8 = rng.integers(-128, 128, n, np.int8), rng.integers(-128, 128, n, np.int8)
    u8, v8 = rng.integers(0, 256, n, np.uint8), rng.integers(0, 256, n, np.uint8)
    b.run(kernel("cmp_bytes"), (3, 1, 1), (256, 1, 1), [*(p64(b.put(x)) for x in (a8, b8, u8, v8)), p64(out), i32(n)])
    want = (a8 > b8) | ((u8 < v8) << 1) | ((u8 != v8) << 2) | ((a8 <= b8) << 3)
    np.testing.assert_array_equal(b.get(out, n, np.int32), want)
    prod = b.put(np.zeros(n, np.int16))
    b.run(kernel("mul_u8"), (3, 1, 1), (256, 1, 1), [p64(b.put(u8)), p64(b.put(a8)), p64(prod), i32(n)])
    np.testing.assert_array_equal(b.get(prod, n, np.int16), (u8.astype(np.int64) * a8).astype(np.int16))


def test_half_high_word_converts_and_d16_halves(rng: np.random.Generator) -> None:
    assert "v_cvt_f32_f16_sdwa" in listing() and "ds_write_b16_d16_hi" in listing()
    b = Board()
    n = 1024
    h = rng.standard_normal(n).astype(np.float16)
    oa = b.put(np.zeros(n, np.float32))
    b.run(kernel("half_to_float"), (2, 1, 1), (256, 1, 1), [p64(b.put(h)), p64(oa), i32(n)])
    f = h.astype(np.float32)
    np.testing.assert_array_equal(b.get(oa, n), np.where(np.arange(n) % 2 == 0, f * 2, f + 1))

    words = rng.integers(0, 1 << 32, 512, np.uint32)
    out = b.put(np.zeros(1024, np.uint16))
    b.run(kernel("lds_halves"), (2, 1, 1), (256, 1, 1), [p64(b.put(words)), p64(out), i32(0)])
    s = np.concatenate([np.stack([w & 0xFFFF, w >> 16]).reshape(512) for w in words.reshape(2, 256)]).reshape(2, 512)
    np.testing.assert_array_equal(b.get(out, 1024, np.uint16).reshape(2, 512), s[:, ::-1])

    src = rng.integers(0, 65536, 1024, np.uint16)
    o32 = b.put(np.zeros(512, np.uint32))
    b.run(kernel("lds_read_halves"), (2, 1, 1), (256, 1, 1), [p64(b.put(src)), p64(o32)])
    blk, t = src.reshape(2, 512).astype(np.uint32), np.arange(256)
    want = blk[:, 2 * t + 1] | blk[:, 511 - 2 * t] << 16
    np.testing.assert_array_equal(b.get(o32, 512, np.uint32).reshape(2, 256), want)

    n2 = 600
    ha, hb = rng.standard_normal(n2).astype(np.float16), rng.standard_normal(n2).astype(np.float16)
    o2 = b.put(np.zeros(2 * n2, np.float16))
    b.run(kernel("pack_halves"), (3, 1, 1), (256, 1, 1), [p64(b.put(ha)), p64(b.put(hb)), p64(o2), i32(n2)])
    np.testing.assert_array_equal(b.get(o2, 2 * n2, np.float16).reshape(n2, 2), np.stack([ha, hb[::-1]], 1))


def test_frexp_f32_f64(rng: np.random.Generator) -> None:
    assert "v_frexp_mant_f64" in listing() and "v_frexp_exp_i32_f32" in listing()
    b = Board()
    x = (rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300)).astype(np.float32)
    y = rng.standard_normal(300) * 10.0 ** rng.integers(-300, 300, 300)
    x[:6] = [0, -0.0, np.inf, -np.inf, 1e-42, -3e-45]  # zeros, infinities, denormals
    y[:6] = [0, -0.0, np.inf, -np.inf, 5e-320, 1.0]
    n = x.size
    outs = [b.put(np.zeros(n, t)) for t in (np.float32, np.int32, np.float64, np.int32)]
    b.run(kernel("frexps"), (2, 1, 1), (256, 1, 1), [p64(b.put(x)), p64(b.put(y)), *map(p64, outs), i32(n)])
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    np.testing.assert_array_equal(b.get(outs[0], n), np.where(np.isfinite(x), mx, x))
    np.testing.assert_array_equal(b.get(outs[1], n, np.int32), np.where(np.isfinite(x), ex, 0))
    np.testing.assert_array_equal(b.get(outs[2], n, np.float64), np.where(np.isfinite(y), my, y))
    np.testing.assert_array_equal(b.get(outs[3], n, np.int32), np.where(np.isfinite(y), ey, 0))


@pytest.mark.parametrize("shift", [0, 1, 2, 3, 6])
def test_lds_unaligned_dword_and_qword_accesses(rng: np.random.Generator, shift: int) -> None:
    b = Board()
    raw = rng.integers(0, 256, 2 * 2064, np.uint8)
    o32, o64 = b.put(np.zeros(512, np.uint32)), b.put(np.zeros(512, np.uint64))
    b.run(kernel("lds_unaligned"), (2, 1, 1), (256, 1, 1), [p64(b.put(raw)), p64(o32), p64(o64), i32(shift)])
    blk, t = raw.reshape(2, 2064), np.arange(256)
    w32 = np.stack([blk[:, 4 * t + shift + k].astype(np.uint64) << (8 * k) for k in range(4)]).sum(0)
    w64 = np.stack([blk[:, 8 * t + shift + k].astype(np.uint64) << (8 * k) for k in range(8)]).sum(0)
    np.testing.assert_array_equal(b.get(o64, 512, np.uint64).reshape(2, 256), w64)
    np.testing.assert_array_equal(b.get(o32, 512, np.uint32).reshape(2, 256), (w32 * 3) & 0xFFFFFFFF)
