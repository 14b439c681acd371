"""The native executor on control flow: loops (uniform and divergent trip counts), divergent if/else,
bar.sync inside a loop, lanes in different allocations in one warp, and faults inside loops. Each
NVRTC kernel runs on both executors: outputs bit-identical, LaunchReport counters identical, fault
reports identical; NumPy is the oracle for the values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import fault_report, on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402
from strata import trace  # noqa: E402

HALF_SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void widen_halves(int n, const unsigned short* h, float* f, double* d, float* g) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half x = __ushort_as_half(h[i]);
    __nv_bfloat16 y = __ushort_as_bfloat16(h[i]);
    f[i] = __half2float(x); d[i] = (double)__half2float(x); g[i] = __bfloat162float(y);
  }
}
"""

SRC = r"""
extern "C" __global__ void ragged_loop(int n, const int* cnt, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.f;
  for (int k = 0; k < cnt[i]; ++k) acc += x[i + k] * (float)(k + 1);         // per-thread trip count
  y[i] = acc;
}
extern "C" __global__ void if_else(int n, const float* x, float* y, int* z) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    if (v > 0.5f) { y[i] = v * 2.0f; }
    else { y[i] = -v; z[i] = i; }                                   // only some lanes store z
  }
}
extern "C" __global__ void block_reduce(const float* x, float* out, int rounds) {
  __shared__ float s[256];
  int t = threadIdx.x;
  float total = 0.f;
  for (int r = 0; r < rounds; ++r) {                                 // bar.sync inside two loops
    s[t] = x[(blockIdx.x * rounds + r) * blockDim.x + t];
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (t < w) s[t] += s[t + w];                                   // divergent, then a barrier
      __syncthreads();
    }
    if (t == 0) total += s[0];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = total;
}
extern "C" __global__ void row_sums(int n, int m, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = 0.f;
    for (int k = 0; k < m; ++k) acc += x[i * m + k];                // faults inside the loop if x is short
    y[i] = acc;
  }
}
extern "C" __global__ void two_arrays(int n, const float* a, const float* b, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* p = (i & 1) ? a : b;                                 // one warp's lanes in two allocations
  if (i < n) y[i] = p[i] + 1.0f;
}
extern "C" __global__ void strided_shared(int n, const float* x, float* y) {
  __shared__ float s[1088];
  int t = threadIdx.x;
  for (int k = t; k < 1088; k += blockDim.x) s[k] = x[blockIdx.x * 1088 + k];
  __syncthreads();
  if (t < n)   // 2- and 4-way bank conflicts, accesses at constant offsets from one base, partial warps
    y[blockIdx.x * blockDim.x + t] = s[t * 2] + s[t * 2 + 64] + s[t * 4 + 1] + s[t * 4 + 33];
}
extern "C" __global__ void shift_inplace(int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) y[i + 1] = y[i] * 2.0f + 1.0f;   // lane i's store is lane i+1's load: all loads go first
}
extern "C" __global__ void reverse_inplace(int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[n - 1 - i] = y[n - 1 - i] + 1.0f;   // the same lanes, stores in decreasing order
}
extern "C" __global__ void bump(int n, const int* idx, float* a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[idx[i]] = a[idx[i]] + 1.0f;          // lanes collide: every load sees the old value
}
extern "C" __global__ void long_loop(unsigned limit, const float* x, float* y) {
  float acc = 0.f;
  for (unsigned k = 0; k < limit; ++k) acc += x[k & 15] * 0.5f;   // uniform: the driver runs it all
  y[threadIdx.x] = acc;
}
extern "C" __global__ void rotate_rounds(const float* x, float* y, int rounds) {
  __shared__ float s[128];
  int t = threadIdx.x, n = blockDim.x;
  float v = x[blockIdx.x * n + t];
  for (int r = 0; r < rounds; ++r) {   // a block of 100 threads: 28 padding lanes in its last warp
    s[t] = v;
    __syncthreads();
    v = s[(t + 1) % n];
    __syncthreads();
  }
  y[blockIdx.x * n + t] = v;
}
extern "C" __global__ void divmod(int n, const int* a, const int* b, int* q, int* r, unsigned* u, long long* w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    q[i] = a[i] / b[i];
    r[i] = a[i] % b[i];
    u[i] = (unsigned)a[i] / (unsigned)b[i] + (unsigned)a[i] % (unsigned)b[i];
    w[i] = ((long long)a[i] << 20) / (long long)b[i];
  }
}
extern "C" __global__ void fminmax(int n, const float* a, const float* b, float* hi, float* lo, double* dhi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { hi[i] = fmaxf(a[i], b[i]); lo[i] = fminf(a[i], b[i]); dhi[i] = fmax((double)a[i], (double)b[i]); }
}
extern "C" __global__ void shuffles(int n, const unsigned* x, unsigned* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = i < n ? x[i] : 0u, s = v;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);     // butterfly sum, in place
  unsigned d = __shfl_down_sync(0xffffffffu, v, 3);                             // past the top: its own
  unsigned u = __shfl_up_sync(0xffffffffu, v, 5, 16);                           // within 16-lane segments
  unsigned b = __shfl_sync(0xffffffffu, v, (threadIdx.x * 7) & 31);              // any lane
  if (i < n) y[i] = s * 3u + d * 5u + u * 7u + b * 11u;
}
extern "C" __global__ void shuffle_divergent(const unsigned* x, unsigned* y) {
  int t = threadIdx.x;
  unsigned v = x[t];
  if ((t & 31) < 20) v = __shfl_down_sync(0x000fffffu, v * 2u, 4);   // sources 20..23 are inactive lanes
  y[t] = v;
}
extern "C" __global__ void bit_insert(int n, const unsigned* a, const unsigned* b, const unsigned* pl,
                                      unsigned* r32, unsigned long long* r64) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {   // bfi itself (NVRTC forms it from shifts and masks only sometimes): the instruction under test
    unsigned p = pl[i] & 0xFFFF, l = pl[i] >> 16, r;
    unsigned long long r2, a2 = ((unsigned long long)a[i] << 32) | b[i], b2 = ~a2;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a[i]), "r"(b[i]), "r"(p), "r"(l));
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r2) : "l"(a2), "l"(b2), "r"(p), "r"(l));
    r32[i] = r; r64[i] = r2;
  }
}
extern "C" __global__ void high_products(int n, const long long* a, const long long* b, long long* hs,
                                         unsigned long long* hu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    volatile const long long* va = a;                      // a volatile load: an ordinary one here
    hs[i] = __mul64hi(va[i], b[i]);
    hu[i] = __umul64hi((unsigned long long)a[i], (unsigned long long)b[i]);
  }
}
extern "C" __global__ void halves(int n, const double* x, int* hi, int* lo, double* swapped) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {   // mov.b64 {lo, hi}, d and mov.b64 d, {lo, hi}
    int h = __double2hiint(x[i]), l = __double2loint(x[i]);
    hi[i] = h; lo[i] = l; swapped[i] = __hiloint2double(l, h);
  }
}
extern "C" __global__ void misaligned(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const char* c = (const char*)x;
  if (i < n) y[i] = *(const float*)(c + 4 * i + (i == 77 ? 2 : 0));   // thread 77 reads misaligned
}
"""


LAST: dict[str, Any] = {}  # the last _both run's counters (identical on both executors)


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


def _both(monkeypatch: pytest.MonkeyPatch, fn: Any, grid: Any, block: Any, make: Any) -> list[np.ndarray]:
    """Run on both executors from the same inputs (native_harness); the native counters kept in LAST."""
    outs, counters, _ = on_both_executors(monkeypatch, lambda args: fn(grid, block, args), make)
    LAST["counters"] = counters
    return outs


_fault = fault_report


def test_loop_with_per_thread_trip_counts(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 1000
    rng = np.random.default_rng(11)
    cnt = rng.integers(0, 9, n).astype(np.int32)
    cnt[:64] = 3  # the first two warps agree: their loop is uniform
    x = rng.random(n + 8, dtype=np.float32)

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(n), cuda.to_device(cnt), cuda.to_device(x), dy), [dy]

    (y,) = _both(monkeypatch, mod.get_function("ragged_loop"), 4, 256, make)
    want = np.zeros(n, np.float32)
    for k in range(int(cnt.max())):  # NVRTC contracts to fma: x * (k + 1) + acc, rounded once (exact in f64)
        live = cnt > k
        exact = want[live].astype(np.float64) + x[np.arange(n)[live] + k].astype(np.float64) * (k + 1)
        want[live] = exact.astype(np.float32)
    np.testing.assert_array_equal(y, want)


def test_divergent_if_else(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 777
    x = np.random.default_rng(12).random(n, dtype=np.float32)

    def make() -> Any:
        dy, dz = cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.full(n, -1, np.int32))
        return (np.int32(n), cuda.to_device(x), dy, dz), [dy, dz]

    y, z = _both(monkeypatch, mod.get_function("if_else"), 4, 256, make)
    np.testing.assert_array_equal(y, np.where(x > 0.5, x * np.float32(2), -x))
    np.testing.assert_array_equal(z, np.where(x > 0.5, -1, np.arange(n)))


def test_barriers_inside_loops(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    blocks, threads, rounds = 6, 256, 3
    x = np.random.default_rng(13).integers(0, 100, blocks * rounds * threads).astype(np.float32)

    def make() -> Any:
        out = cuda.to_device(np.zeros(blocks, np.float32))
        return (cuda.to_device(x), out, np.int32(rounds)), [out]

    (out,) = _both(monkeypatch, mod.get_function("block_reduce"), blocks, threads, make)
    # small integers: every f32 sum is exact, whatever the order
    np.testing.assert_array_equal(out, x.reshape(blocks, rounds * threads).sum(axis=1).astype(np.float32))


def test_barriers_in_a_loop_with_padding_lanes(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    blocks, threads, rounds = 3, 100, 5
    x = np.random.default_rng(19).random(blocks * threads, dtype=np.float32)

    def make() -> Any:
        y = cuda.to_device(np.zeros(blocks * threads, np.float32))
        return (cuda.to_device(x), y, np.int32(rounds)), [y]

    (y,) = _both(monkeypatch, mod.get_function("rotate_rounds"), blocks, threads, make)
    np.testing.assert_array_equal(y, np.roll(x.reshape(blocks, threads), -rounds, axis=1).ravel())
    assert LAST["counters"]["barriers"] == blocks * rounds * 2


def _trunc_div(a: int, b: int, bits: int, signed: bool) -> tuple[int, int]:
    """PTX div/rem as strata defines them: truncating; by zero all ones; INT_MIN / -1 wraps."""
    mask = (1 << bits) - 1
    if b == 0:
        return mask, mask
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q & mask, (a - q * b) & mask


def test_integer_division_edge_cases(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    rng = np.random.default_rng(20)
    n = 300
    a = rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-1000, 1000, n).astype(np.int32)
    a[:8] = [-(1 << 31), -(1 << 31), 7, -7, 7, -7, 0, 5]
    b[:8] = [-1, 0, 2, 2, -2, -2, 0, 0]

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, dt)) for dt in (np.int32, np.int32, np.uint32, np.int64)]
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), *outs), outs

    q, r, u, w = _both(monkeypatch, mod.get_function("divmod"), 2, 256, make)
    for k in range(n):
        ak, bk = int(a[k]), int(b[k])
        qk, rk = _trunc_div(ak, bk, 32, True)
        assert (int(q[k]) & 0xFFFFFFFF, int(r[k]) & 0xFFFFFFFF) == (qk, rk), k
        if bk:  # by zero, C++ leaves these open and NVRTC's code shows it (a - q * b; a 32-bit fast path)
            uq, ur = _trunc_div(ak & 0xFFFFFFFF, bk & 0xFFFFFFFF, 32, False)
            assert int(u[k]) == (uq + ur) & 0xFFFFFFFF, k
            assert int(w[k]) & (2**64 - 1) == _trunc_div(ak << 20, bk, 64, True)[0], k


def _min_max_bits(a: np.ndarray, b: np.ndarray, is_max: bool, canon: int) -> np.ndarray:
    """PTX min/max: a NaN loses to a number, two NaNs give `canon`, -0 < +0."""
    u = np.dtype(f"u{a.dtype.itemsize}")
    r = (np.fmax if is_max else np.fmin)(a, b).view(u).copy()
    eq = a == b
    ab, bb = a.view(u), b.view(u)
    r[eq] = (ab & bb)[eq] if is_max else (ab | bb)[eq]
    r[np.isnan(a) & np.isnan(b)] = canon
    return r


def test_float_min_max_nan_and_signed_zero(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    special = np.array([0x7FC00001, 0x3F800000, 0xFFC00002, 0x00000000, 0x80000000, 0x00000001, 0xFF800000,
                        0x40400000, 0x80000000, 0x00000000], np.uint32).view(np.float32)
    rng = np.random.default_rng(21)
    a = np.concatenate([special, rng.standard_normal(90).astype(np.float32)])
    b = np.concatenate([special[::-1], rng.standard_normal(90).astype(np.float32)])
    a[10:20], b[10:20] = special, special  # equal pairs, NaN with NaN
    n = a.size

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, dt)) for dt in (np.float32, np.float32, np.float64)]
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), *outs), outs

    hi, lo, dhi = _both(monkeypatch, mod.get_function("fminmax"), 1, 128, make)
    np.testing.assert_array_equal(hi.view(np.uint32), _min_max_bits(a, b, True, 0x7FFFFFFF))
    np.testing.assert_array_equal(lo.view(np.uint32), _min_max_bits(a, b, False, 0x7FFFFFFF))
    da, db = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(dhi.view(np.uint64), _min_max_bits(da, db, True, (1 << 63) - 1))


def test_warp_shuffles(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 250  # the last warp's lanes past n shuffle zeros
    x = np.random.default_rng(22).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)

    def make() -> Any:
        y = cuda.to_device(np.zeros(n, np.uint32))
        return (np.int32(n), cuda.to_device(x), y), [y]

    (y,) = _both(monkeypatch, mod.get_function("shuffles"), 1, 256, make)
    v = np.zeros(256, np.uint64)
    v[:n] = x
    w = v.reshape(8, 32)
    lane = np.arange(32)
    s = np.repeat(w.sum(axis=1, keepdims=True), 32, axis=1)
    d = w[:, np.where(lane + 3 <= 31, lane + 3, lane)]
    u = w[:, np.where(lane - 5 >= (lane & 16), lane - 5, lane)]
    b = w[:, (lane * 7) & 31]
    want = ((s * 3 + d * 5 + u * 7 + b * 11) & 0xFFFFFFFF).astype(np.uint32).ravel()[:n]
    np.testing.assert_array_equal(y, want)


def test_shuffle_from_inactive_lanes_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    x = np.arange(64, dtype=np.uint32) * 3 + 1

    def make() -> Any:
        y = cuda.to_device(np.zeros(64, np.uint32))
        return (cuda.to_device(x), y), [y]

    (y,) = _both(monkeypatch, mod.get_function("shuffle_divergent"), 1, 64, make)
    lane = np.arange(64) % 32
    live = (lane < 16)  # sources that are active lanes: their doubled value
    np.testing.assert_array_equal(y[live], x[np.arange(64)[live] + 4] * 2)
    np.testing.assert_array_equal(y[lane >= 20], x[lane >= 20])


def _bfi(a: int, b: int, pos: int, ln: int, w: int) -> int:
    """PTX bfi as the reference defines it: low 8 bits of pos and len, the field clipped to the width."""
    pos, ln = pos & 0xFF, ln & 0xFF
    k = min(ln, w - min(pos, w))
    field = (((1 << k) - 1) << pos) & ((1 << w) - 1) if pos < w else 0
    return (b & ~field | (a << pos) & field) & ((1 << w) - 1)


def test_bit_field_insert(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    rng = np.random.default_rng(23)
    n = 200
    a, b = (rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    pos, ln = rng.integers(0, 80, n), rng.integers(0, 80, n)
    pos[:6], ln[:6] = [0, 31, 32, 63, 64, 300], [32, 5, 1, 1, 0, 300]  # edges: whole width, past it, 8-bit wrap
    pl = (pos.astype(np.uint32) | (ln.astype(np.uint32) << 16)).astype(np.uint32)

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, np.uint32)), cuda.to_device(np.zeros(n, np.uint64))]
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), cuda.to_device(pl), *outs), outs

    r32, r64 = _both(monkeypatch, mod.get_function("bit_insert"), 1, 256, make)
    for k in range(n):
        p, ln_k = int(pl[k]) & 0xFFFF, int(pl[k]) >> 16
        assert int(r32[k]) == _bfi(int(a[k]), int(b[k]), p, ln_k, 32), k
        a2 = (int(a[k]) << 32) | int(b[k])
        assert int(r64[k]) == _bfi(a2, ~a2 & (2**64 - 1), p, ln_k, 64), k


def test_64_bit_high_products(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    rng = np.random.default_rng(24)
    n = 100
    a = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64)
    b = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64)
    a[:3], b[:3] = [-(1 << 63), -1, (1 << 63) - 1], [-(1 << 63), -1, (1 << 63) - 1]

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, np.int64)), cuda.to_device(np.zeros(n, np.uint64))]
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), *outs), outs

    hs, hu = _both(monkeypatch, mod.get_function("high_products"), 1, 128, make)
    for k in range(n):
        ak, bk = int(a[k]), int(b[k])
        assert int(hs[k]) == (ak * bk) >> 64, k
        assert int(hu[k]) == ((ak & (2**64 - 1)) * (bk & (2**64 - 1))) >> 64, k


def test_pack_and_unpack_64_bit_registers(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 100
    x = np.random.default_rng(25).standard_normal(n)

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, np.int32)), cuda.to_device(np.zeros(n, np.int32)),
                cuda.to_device(np.zeros(n, np.float64))]
        return (np.int32(n), cuda.to_device(x), *outs), outs

    hi, lo, sw = _both(monkeypatch, mod.get_function("halves"), 1, 128, make)
    bits = x.view(np.uint64)
    np.testing.assert_array_equal(hi.view(np.uint32), (bits >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(lo.view(np.uint32), (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    want = ((bits & np.uint64(0xFFFFFFFF)) << np.uint64(32)) | (bits >> np.uint64(32))
    np.testing.assert_array_equal(sw.view(np.uint64), want)


def test_half_to_float_keeps_every_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = cuda.compile(HALF_SRC).get_function("widen_halves")
    special = [0x7C01, 0x7E00, 0xFC00, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0x3C00, 0xFE01, 0x7D55]
    h = np.array(special + list(np.random.default_rng(26).integers(0, 1 << 16, 90)), np.uint16)
    n = h.size

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.zeros(n, np.float64)),
                cuda.to_device(np.zeros(n, np.float32))]
        return (np.int32(n), cuda.to_device(h), *outs), outs

    f, d, g = _both(monkeypatch, fn, 1, 128, make)
    h32 = h.astype(np.uint32)
    top = (h32 & 0x7C00) == 0x7C00  # infinities and NaNs
    want = h.view(np.float16).astype(np.float32).view(np.uint32)
    want[top] = ((h32 & 0x8000) << 16 | 0x7F800000 | (h32 & 0x3FF) << 13)[top]  # payload kept, not quieted
    np.testing.assert_array_equal(f.view(np.uint32), want)
    np.testing.assert_array_equal(g.view(np.uint32), h32 << 16)
    nan = top & ((h32 & 0x3FF) != 0)
    assert np.array_equal(d[~nan], f[~nan].astype(np.float64)) and np.isnan(d[nan]).all()


def test_lanes_of_one_warp_in_two_allocations(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 300
    rng = np.random.default_rng(14)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), dy), [dy]

    (y,) = _both(monkeypatch, mod.get_function("two_arrays"), 2, 256, make)
    np.testing.assert_array_equal(y, np.where(np.arange(n) & 1, a, b) + np.float32(1))


def test_row_sums_counters(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n, m = 200, 7
    x = np.random.default_rng(15).random(n * m, dtype=np.float32)

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(n), np.int32(m), cuda.to_device(x), dy), [dy]

    (y,) = _both(monkeypatch, mod.get_function("row_sums"), 2, 128, make)
    want = np.zeros(n, np.float32)
    for k in range(m):
        want += x.reshape(n, m)[:, k]
    np.testing.assert_array_equal(y, want)


def test_shared_bank_conflicts_in_access_groups(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    blocks, threads, n = 3, 256, 200
    x = np.random.default_rng(16).integers(0, 1000, blocks * 1088).astype(np.float32)

    def make() -> Any:
        dy = cuda.to_device(np.zeros(blocks * threads, np.float32))
        return (np.int32(n), cuda.to_device(x), dy), [dy]

    (y,) = _both(monkeypatch, mod.get_function("strided_shared"), blocks, threads, make)
    s = x.reshape(blocks, 1088)
    t = np.arange(threads)
    want = np.zeros((blocks, threads), np.float32)
    live = t < n
    tl = t[live]
    want[:, live] = ((s[:, tl * 2] + s[:, tl * 2 + 64]) + s[:, tl * 4 + 1]) + s[:, tl * 4 + 33]  # small integers: exact
    np.testing.assert_array_equal(y, want.ravel())
    assert LAST["counters"]["shared_bank_conflicts"] > 0


def test_loads_then_store_keep_the_references_order(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 1000  # one chunk: every load of an instruction happens before any store of the next
    y0 = np.random.default_rng(17).integers(0, 1000, n).astype(np.float32)

    def make() -> Any:
        dy = cuda.to_device(y0)
        return (np.int32(n), dy), [dy]

    (y,) = _both(monkeypatch, mod.get_function("shift_inplace"), 4, 256, make)
    want = y0.copy()
    want[1:] = y0[:-1] * np.float32(2) + np.float32(1)
    np.testing.assert_array_equal(y, want)
    (y,) = _both(monkeypatch, mod.get_function("reverse_inplace"), 4, 256, make)
    np.testing.assert_array_equal(y, y0 + np.float32(1))
    idx = np.random.default_rng(18).integers(0, 50, n).astype(np.int32)  # many lanes per element

    def make_bump() -> Any:
        da = cuda.to_device(np.zeros(64, np.float32))
        return (np.int32(n), cuda.to_device(idx), da), [da]

    (a,) = _both(monkeypatch, mod.get_function("bump"), 4, 256, make_bump)
    want_a = np.zeros(64, np.float32)
    want_a[np.unique(idx)] = 1
    np.testing.assert_array_equal(a, want_a)


def _stopped(monkeypatch: pytest.MonkeyPatch, executor: str, mod: Any, limit: int) -> str:
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    try:
        with trace.record() as rec, pytest.raises(cuda.LaunchTimeout) as info:
            mod.get_function("long_loop")(2, 64, (np.uint32(limit), cuda.to_device(np.ones(16, np.float32)),
                                                  cuda.to_device(np.zeros(64, np.float32)))).wait()
    finally:
        cuda.current_device().reset()
    assert not [e for e in rec.events if e.name == "native_fallback"]
    return str(info.value)


def test_launch_budget_stops_at_the_references_block(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_LAUNCH_BUDGET", "100000")  # counted per basic block: the same stop on both

    def where(msg: str) -> str:
        return msg.split(" s; ")[-1]  # after the elapsed time: where it stopped

    ref, nat = _stopped(monkeypatch, "reference", mod, 1 << 30), _stopped(monkeypatch, "native", mod, 1 << 30)
    assert "launch budget of 100,000" in ref and "stopped in long_loop at PTX line" in ref
    assert where(nat) == where(ref)


def test_watchdog_stops_a_native_loop(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.5")
    msg = _stopped(monkeypatch, "native", mod, 1 << 31)
    assert "past the kernel watchdog of 0.5 s" in msg


def test_fault_inside_a_loop_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n, m = 200, 5
    short = n * m - 13  # the last rows run past x, a few iterations into their loop

    def launch() -> Any:
        x, y = cuda.to_device(np.ones(short, np.float32)), cuda.to_device(np.zeros(n, np.float32))
        return mod.get_function("row_sums")(2, 128, (np.int32(n), np.int32(m), x, y))

    ref, nat = _fault(monkeypatch, "reference", launch), _fault(monkeypatch, "native", launch)
    assert ref["block"] == (1, 0, 0) and ref["thread"][0] >= 60
    assert nat == ref


def test_misaligned_fault_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 256

    def launch() -> Any:
        return mod.get_function("misaligned")(2, 128, (np.int32(n), cuda.to_device(np.ones(n + 1, np.float32)),
                                                        cuda.to_device(np.zeros(n, np.float32))))

    ref, nat = _fault(monkeypatch, "reference", launch), _fault(monkeypatch, "native", launch)
    assert ref["thread"] == (77, 0, 0)
    assert nat == ref
