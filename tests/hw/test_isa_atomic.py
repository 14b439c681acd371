# Tests of the atomic instruction family (src/strata/hw/isa/atomic.py): atom/red on global, shared and
# generic addresses under heavy contention, every operation and type CUDA exposes, CAS spin loops, the
# f32 flush-to-zero rule of global float atomics, memcheck, and the vectorised grouping kernels against
# a one-lane-at-a-time Python oracle (property tests).
"""Atomics from real NVRTC kernels (and targeted hand-written PTX) against NumPy oracles."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_harness import PTX_HEAD, launch

import strata.cuda as cuda
from strata.hw.isa import atomic

BF16 = ml_dtypes.bfloat16


# -- histograms: contention on shared and global memory -----------------------------------------
HIST = r'''
extern "C" __global__ void hist(int n, const int* keys, unsigned* gbins, unsigned* sbins_out) {
    __shared__ unsigned sbins[16];
    if (threadIdx.x < 16) sbins[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int k = keys[i];
        atomicAdd(&gbins[k], 1u);          // global, result unused (red)
        atomicAdd(&sbins[k & 15], 1u);     // shared
    }
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&sbins_out[threadIdx.x], sbins[threadIdx.x]);
}
'''


@pytest.mark.parametrize("block", [256, 100])
def test_histogram_global_and_shared(block: int) -> None:
    n = 5000
    keys = np.random.default_rng(block).integers(0, 40, n).astype(np.int32)
    keys[::3] = 7  # one hot bin
    (_, g, s), rep = launch(HIST, "hist", 6, block, np.int32(n), keys, np.zeros(40, np.uint32),
                            np.zeros(16, np.uint32))
    np.testing.assert_array_equal(g, np.bincount(keys, minlength=40).astype(np.uint32))
    np.testing.assert_array_equal(s, np.bincount(keys & 15, minlength=16).astype(np.uint32))
    assert rep.counters.atomic_ops == 2 * n + 6 * 16
    assert rep.counters.thread_instructions["atomic"] == 2 * n + 6 * 16


# -- sums: int exact, float within tolerance and in lane order ----------------------------------
SUM = r'''
extern "C" __global__ void sum(int n, const int* xi, const float* xf, const double* xd,
                               int* si, unsigned long long* su, float* sf, double* sd, int* tickets) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(si, xi[i]);
    atomicAdd(su, (unsigned long long)(long long)xi[i] << 20);
    atomicAdd(sf, xf[i]);
    atomicAdd(sd, xd[i]);
    tickets[i] = atomicAdd(si + 1, 1);
}
'''


def test_atomic_add_sums() -> None:
    n = 3000
    rng = np.random.default_rng(3)
    xi = rng.integers(-(2**31), 2**31, n).astype(np.int32)
    xf = rng.uniform(0, 1, n).astype(np.float32)
    xd = rng.uniform(-1, 1, n)
    (_, _, _, si, su, sf, sd, tickets), _ = launch(
        SUM, "sum", 12, 256, np.int32(n), xi, xf, xd, np.zeros(2, np.int32), np.zeros(1, np.uint64),
        np.zeros(1, np.float32), np.zeros(1), np.full(n, -1, np.int32))
    wrap = int(xi.astype(np.int64).sum()) % 2**32
    np.testing.assert_array_equal(si, np.array([wrap - 2**32 if wrap >= 2**31 else wrap, n], np.int32))
    np.testing.assert_array_equal(su, np.array([sum(int(x) << 20 for x in xi) % 2**64], np.uint64))
    np.testing.assert_allclose(sf, [xf.astype(np.float64).sum()], rtol=n * 2**-24)
    np.testing.assert_allclose(sd, [xd.sum()], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.sort(tickets), np.arange(n, dtype=np.int32))


FSUM_ONE_BLOCK = r'''
extern "C" __global__ void fsum(const float* x, float* out, float* old) {
    int t = threadIdx.x;
    old[t] = atomicAdd(out, x[t]);
}
'''


def test_float_atomic_add_is_one_serial_order() -> None:
    """Each lane sees the running sum before its own add, rounded at every step (lane order)."""
    x = np.random.default_rng(4).uniform(-1e4, 1e4, 512).astype(np.float32)
    x[::17] = 1e-3  # small addends that a reassociated sum would round differently
    (_, out, old), _ = launch(FSUM_ONE_BLOCK, "fsum", 1, 512, x, np.array([0.5], np.float32),
                              np.zeros(512, np.float32))
    running = np.add.accumulate(np.concatenate([[np.float32(0.5)], x]).astype(np.float32))
    np.testing.assert_array_equal(old, running[:-1])
    np.testing.assert_array_equal(out, running[-1:])


# -- CAS loops -----------------------------------------------------------------------------------
CAS_MAX = r'''
__device__ float atomic_max_float(float* addr, float v) {
    int* p = (int*)addr;
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(p, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}
extern "C" __global__ void fmax_cas(int n, const float* x, float* out, float* bucket_max) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomic_max_float(out, x[i]);
    atomic_max_float(&bucket_max[i % 5], x[i]);
}
'''


def test_atomic_cas_float_max() -> None:
    n = 2000
    x = np.random.default_rng(6).normal(0, 100, n).astype(np.float32)
    (_, out, bm), _ = launch(CAS_MAX, "fmax_cas", 8, 256, np.int32(n), x, np.array([-np.inf], np.float32),
                             np.full(5, -np.inf, np.float32))
    np.testing.assert_array_equal(out, [x.max()])
    np.testing.assert_array_equal(bm, [x[k::5].max() for k in range(5)])


CAS_TICKETS = r'''
extern "C" __global__ void cas_chain(unsigned* slot, unsigned* got) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    got[t] = atomicCAS(slot, t, t + 1);   // lane t succeeds only when slot == t at its turn
    unsigned long long* s64 = (unsigned long long*)(slot + 2);
    atomicCAS(s64, 0ull, 0x100000000ull + t);   // exactly one winner writes the 64-bit slot
}
'''


def test_atomic_cas_serial_chain_and_64bit() -> None:
    (slot, got), _ = launch(CAS_TICKETS, "cas_chain", 1, 160, np.zeros(4, np.uint32),
                            np.zeros(160, np.uint32))
    # in lane order every lane finds its own index: the chain runs to the end
    np.testing.assert_array_equal(got, np.arange(160, dtype=np.uint32))
    assert slot[0] == 160
    assert slot[2:].view(np.uint64)[0] == 0x100000000  # lane 0 won, the rest saw a non-zero value


# -- inc / dec / exch / min / max / bitwise ---------------------------------------------------------
MISC = r'''
extern "C" __global__ void misc(int n, const long long* v, unsigned* inc, unsigned* inc_old, unsigned* dec,
                                unsigned* dec_mixed, unsigned* exch, unsigned* exch_old,
                                long long* s64, unsigned long long* u64, int* s32, unsigned* u32,
                                unsigned long long* bits64) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = v[i];
    inc_old[i] = atomicInc(inc, 6u);
    atomicDec(dec, 9u);
    atomicDec(dec_mixed, (unsigned)(i % 4) + 3u);
    exch_old[i] = atomicExch(exch, (unsigned)i + 1u);
    atomicMin(&s64[0], x); atomicMax(&s64[1], x);
    atomicMin(&u64[0], (unsigned long long)x); atomicMax(&u64[1], (unsigned long long)x);
    atomicMin(&s32[0], (int)x); atomicMax(&s32[1], (int)x);
    atomicMin(&u32[0], (unsigned)x); atomicMax(&u32[1], (unsigned)x);
    atomicOr(&bits64[0], 1ull << (i % 64));
    atomicAnd(&bits64[1], ~(1ull << ((3 * i) % 64)));
    atomicXor(&bits64[2], (unsigned long long)x);
}
'''


def _serial_incdec(start: int, wraps: list[int], inc: bool) -> tuple[list[int], int]:
    olds, r = [], start
    for s in wraps:
        olds.append(r)
        if inc:
            r = 0 if r >= s else r + 1
        else:
            r = s if (r == 0 or r > s) else r - 1
    return olds, r


def test_inc_dec_exch_min_max_bitwise() -> None:
    n = 700
    v = np.random.default_rng(7).integers(-(2**63), 2**63, n, dtype=np.int64)
    outs, _ = launch(
        MISC, "misc", 3, 256, np.int32(n), v, np.array([2], np.uint32), np.zeros(n, np.uint32),
        np.array([4], np.uint32), np.array([100], np.uint32), np.zeros(1, np.uint32), np.zeros(n, np.uint32),
        np.array([2**63 - 1, -(2**63)], np.int64), np.array([2**64 - 1, 0], np.uint64),
        np.array([2**31 - 1, -(2**31)], np.int32), np.array([2**32 - 1, 0], np.uint32),
        np.array([0, 2**64 - 1, 0x0123456789ABCDEF], np.uint64))
    (_, inc, inc_old, dec, dec_mixed, exch, exch_old, s64, u64, s32, u32, bits64) = outs
    # inc from 2 with wrap 6: 2,3,4,5,6,0,1,...; olds handed out are that sequence in some order
    olds, final = _serial_incdec(2, [6] * n, True)
    np.testing.assert_array_equal(np.sort(inc_old), np.sort(np.array(olds, np.uint32)))
    assert inc[0] == final
    assert dec[0] == _serial_incdec(4, [9] * n, False)[1]
    # mixed wrap values: the engine's order is lane order (i = 0..n-1)
    assert dec_mixed[0] == _serial_incdec(100, [i % 4 + 3 for i in range(n)], False)[1]
    chain = np.sort(np.concatenate([exch_old, exch]))  # olds + final = initial 0 + every value written
    np.testing.assert_array_equal(chain, np.arange(n + 1, dtype=np.uint32))
    np.testing.assert_array_equal(s64, [v.min(), v.max()])
    np.testing.assert_array_equal(u64, [v.view(np.uint64).min(), v.view(np.uint64).max()])
    np.testing.assert_array_equal(s32, [v.astype(np.int32).min(), v.astype(np.int32).max()])
    np.testing.assert_array_equal(u32, [v.astype(np.uint32).min(), v.astype(np.uint32).max()])
    i = np.arange(n)
    exp_and = 2**64 - 1
    for k in i:
        exp_and &= ~(1 << int(3 * k % 64))
    np.testing.assert_array_equal(bits64, np.array([
        sum(1 << b for b in set(i % 64)), exp_and & (2**64 - 1),
        int(np.bitwise_xor.reduce(v.view(np.uint64))) ^ 0x0123456789ABCDEF], np.uint64))


# -- half precision -------------------------------------------------------------------------------
HALF = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halves(int n, const float* x, __half2* h2, __half* h, __nv_bfloat16* b,
                                  __nv_bfloat162* b2, __half2* h2_old) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    h2_old[i] = atomicAdd(h2, __floats2half2_rn(1.0f, x[i]));
    atomicAdd(h, __float2half(x[i]));
    atomicAdd(b, __float2bfloat16(x[i]));
    atomicAdd(b2, __floats2bfloat162_rn(x[i], 2.0f));
}
'''


def _serial(start: Any, vals: np.ndarray, dtype: Any) -> tuple[np.ndarray, Any]:
    acc = np.add.accumulate(np.concatenate([np.array([start], dtype), vals.astype(dtype)]))
    return acc[:-1], acc[-1]


def test_half_and_bfloat16_atomic_add() -> None:
    n = 200
    x = np.random.default_rng(8).uniform(-2, 2, n).astype(np.float32)
    (_, h2, h, b, b2, h2_old), _ = launch(
        HALF, "halves", 1, 256, np.int32(n), x, np.zeros(2, np.float16), np.zeros(1, np.float16),
        np.zeros(1, BF16), np.zeros(2, BF16), np.zeros(2 * n, np.float16))
    # one block: lane order is the serial order, each step rounded to the 16-bit type
    lo_old, lo = _serial(0, np.ones(n, np.float16), np.float16)
    hi_old, hi = _serial(0, x.astype(np.float16), np.float16)
    np.testing.assert_array_equal(h2, np.array([lo, hi], np.float16))
    np.testing.assert_array_equal(h2_old.reshape(n, 2), np.stack([lo_old, hi_old], axis=1))
    np.testing.assert_array_equal(h, np.array([hi], np.float16))
    bx = x.astype(BF16)
    exp_b = np.array([_serial(0, bx, BF16)[1]], BF16)
    np.testing.assert_array_equal(b.view(np.uint16), exp_b.view(np.uint16))
    exp_b2 = np.array([exp_b[0], _serial(0, np.full(n, 2.0, BF16), BF16)[1]], BF16)
    np.testing.assert_array_equal(b2.view(np.uint16), exp_b2.view(np.uint16))


# -- f32 subnormals: flushed on global memory, kept on shared memory ------------------------------
FTZ = r'''
extern "C" __global__ void ftz(float* g, float* from_shared, float* ret) {
    __shared__ float s;
    if (threadIdx.x == 0) s = 0.0f;
    __syncthreads();
    float tiny = 1e-40f;                 // subnormal
    ret[threadIdx.x] = atomicAdd(g, tiny);
    atomicAdd(&s, tiny);
    atomicAdd(g + 1, 2e-38f);
    __syncthreads();
    if (threadIdx.x == 0) *from_shared = s;
}
'''


def test_global_f32_atomic_add_flushes_subnormals_shared_keeps_them() -> None:
    g0 = np.array([0.0, 0.0], np.float32)
    (g, sh, ret), _ = launch(FTZ, "ftz", 1, 64, g0, np.zeros(1, np.float32), np.zeros(64, np.float32))
    assert g[0] == 0 and not np.signbit(g[0])
    np.testing.assert_array_equal(ret, np.zeros(64, np.float32))
    exp_s = np.add.accumulate(np.full(64, np.float32(1e-40)))[-1]
    np.testing.assert_array_equal(sh, [exp_s])
    # 2e-38 is normal; sums of normals stay exact to the serial oracle
    np.testing.assert_array_equal(g[1:], [np.add.accumulate(np.full(64, np.float32(2e-38)))[-1]])


# -- hand-written PTX: generic addresses, red, qualifiers, memcheck, unsupported forms --------------
GENERIC = PTX_HEAD + r'''
.visible .entry k(.param .u64 pout, .param .u64 pg)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    .shared .align 8 .b8 sh[16];
    ld.param.u64 %rd1, [pout];
    ld.param.u64 %rd2, [pg];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.shared.u32 [sh], 0;
    @%p1 st.shared.u32 [sh+4], 0;
    bar.sync 0;
    mov.u64 %rd3, sh;
    cvta.shared.u64 %rd4, %rd3;
    atom.add.u32 %r2, [%rd4], 2;
    atom.relaxed.gpu.global.add.u32 %r3, [%rd2], %r1;
    red.acq_rel.cta.shared::cta.add.u32 [sh+4], 1;
    atom.acquire.sys.or.b32 %r4, [%rd2+4], %r1;
    red.global.add.f64 [%rd2+8], 0d3FE0000000000000;
    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;
    red.global.add.L2::cache_hint.u32 [%rd2+16], 3, %rd5;
    bar.sync 0;
    @%p1 ld.shared.u32 %r5, [sh];
    @%p1 st.global.u32 [%rd1], %r5;
    @%p1 ld.shared.u32 %r5, [sh+4];
    @%p1 st.global.u32 [%rd1+4], %r5;
    ret;
}
'''


def test_generic_shared_red_and_qualifiers() -> None:
    mod = cuda.Module.from_ptx(GENERIC)
    g0 = np.zeros(6, np.uint32)
    (out, g), rep = launch(mod, "k", 2, 64, np.zeros(2, np.uint32), g0)
    np.testing.assert_array_equal(out, [2 * 64, 64])  # the second block's shared memory (fresh)
    assert g[0] == 2 * sum(range(64))
    assert g[1] == 63
    assert g[2:4].view(np.float64)[0] == 0.5 * 128
    assert g[4] == 3 * 128
    assert rep.counters.atomic_ops == 6 * 128


OOB = PTX_HEAD + r'''
.visible .entry k(.param .u64 pg)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [pg];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    atom.global.add.u32 %r2, [%rd3], 1;
    ret;
}
'''


def _fault(ptx: str, buf: cuda.DeviceArray) -> cuda.DeviceFault:
    """The DeviceFault that one 32-thread block of `ptx`'s kernel k raises on `buf`."""
    with pytest.raises(cuda.DeviceFault) as e:
        cuda.Module.from_ptx(ptx).get_function("k")((1,), (32,), (buf,)).wait()
    return e.value


def _raw(buf: cuda.DeviceArray) -> np.ndarray:
    """`buf`'s bytes read from HBM directly: after a fault the context is sticky-faulted, so no copy."""
    hbm = cuda.current_device().file.gpu.memory
    return np.frombuffer(hbm.read(buf.ptr, buf.nbytes), buf.dtype)


def test_out_of_bounds_atomic_faults_before_any_update() -> None:
    buf = cuda.to_device(np.zeros(16, np.uint32))
    fault = _fault(OOB, buf)
    assert fault.name == "cudaErrorIllegalAddress"
    assert fault.report["access"] == "atomic"
    assert fault.report["thread"] == (16, 0, 0)
    np.testing.assert_array_equal(_raw(buf), np.zeros(16, np.uint32))  # checked before it happened


def test_misaligned_atomic_faults() -> None:
    ptx = OOB.replace("mul.wide.u32 %rd2, %r1, 4;", "mul.wide.u32 %rd2, %r1, 2;")
    assert _fault(ptx, cuda.to_device(np.zeros(64, np.uint32))).name == "cudaErrorMisalignedAddress"


@pytest.mark.parametrize("line", [
    "atom.global.min.f32 %f2, [%rd1], %f1;",
    "atom.global.max.v2.f32 {%f2, %f3}, [%rd1], {%f1, %f1};",  # vector f32 atomics only add
    "atom.global.inc.u64 %rd2, [%rd1], %rd1;",
    "red.global.cas.b32 [%rd1], %r1, %r1;",
    "atom.global.add.v2.u32 {%r2, %r3}, [%rd1], {%r1, %r1};",  # vector atomics are floating point
])
def test_unsupported_forms_fail_at_load(line: str) -> None:
    ptx = PTX_HEAD + (".visible .entry k(.param .u64 p)\n{\n .reg .b32 %r<4>;\n .reg .f32 %f<4>;\n"
                      " .reg .b64 %rd<4>;\n ld.param.u64 %rd1, [p];\n mov.u32 %r1, 1;\n"
                      " mov.f32 %f1, 0f3F800000;\n " + line + "\n ret;\n}\n")
    with pytest.raises(cuda.UnsupportedInstruction):
        cuda.Module.from_ptx(ptx).get_function("k")((1,), (32,), (cuda.zeros(4, np.uint32),))


# -- the grouping kernels against a one-lane-at-a-time oracle ----------------------------------------
def _oracle(mem: np.ndarray, idx: np.ndarray, step: Any, *vals: np.ndarray) -> np.ndarray:
    old = np.empty(idx.size, dtype=mem.dtype)
    for k in range(idx.size):  # lane order
        old[k] = mem[idx[k]]
        mem[idx[k]] = step(mem[idx[k]], *(v[k] for v in vals))
    return old


lanes = st.integers(1, 300)


@settings(max_examples=60, deadline=None)
@given(n=lanes, slots=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       op=st.sampled_from(["add", "min", "max", "and", "or", "xor"]),
       dt=st.sampled_from(["u32", "s32", "u64", "s64"]))
def test_assoc_matches_serial_oracle(n: int, slots: int, seed: int, op: str, dt: str) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.dtype({"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64}[dt])
    info = np.iinfo(dtype)
    mem = rng.integers(info.min, info.max, slots, dtype=dtype, endpoint=True)
    idx = (rng.zipf(1.5, n) % slots).astype(np.int64)
    b = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    ufunc = atomic._ASSOC[op]
    ref = mem.copy()
    exp_old = _oracle(ref, idx, lambda m, x: ufunc(m, x), b)
    got_old = atomic._assoc(mem, idx, b, ufunc, False)
    np.testing.assert_array_equal(got_old, exp_old)
    np.testing.assert_array_equal(mem, ref)


@settings(max_examples=60, deadline=None)
@given(n=lanes, slots=st.integers(1, 20), seed=st.integers(0, 2**32 - 1),
       dt=st.sampled_from([np.float32, np.float64, np.float16, BF16]))
def test_float_add_matches_serial_oracle(n: int, slots: int, seed: int, dt: Any) -> None:
    rng = np.random.default_rng(seed)
    mem = (rng.standard_normal(slots) * 1e3).astype(dt)
    idx = (rng.zipf(1.3, n) % slots).astype(np.int64)
    b = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e4], n)).astype(dt)
    ref = mem.copy()
    canon_bits = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}[mem.itemsize]
    canon = np.array(canon_bits, f"u{mem.itemsize}").view(dt)

    def add(m: Any, x: Any) -> Any:  # one rounded add; NaN results are the GPU's canonical NaN
        r = (np.array([m], dt) + np.array([x], dt))[0]
        return canon if np.isnan(np.float32(r)) else r

    with np.errstate(all="ignore"):  # large addends overflow f16 to inf, then inf - inf is NaN
        exp_old = _oracle(ref, idx, add, b)
        got_old = atomic._assoc(mem, idx, b, np.add, False)
    np.testing.assert_array_equal(got_old.view(f"u{mem.itemsize}"), exp_old.view(f"u{mem.itemsize}"))
    np.testing.assert_array_equal(mem.view(f"u{mem.itemsize}"), ref.view(f"u{mem.itemsize}"))


@settings(max_examples=60, deadline=None)
@given(n=lanes, slots=st.integers(1, 10), seed=st.integers(0, 2**32 - 1), values=st.integers(1, 6))
def test_cas_matches_serial_oracle(n: int, slots: int, seed: int, values: int) -> None:
    rng = np.random.default_rng(seed)
    mem = rng.integers(0, values, slots).astype(np.uint32)
    idx = rng.integers(0, slots, n).astype(np.int64)
    cmp = rng.integers(0, values, n).astype(np.uint32)
    new = rng.integers(0, values, n).astype(np.uint32)
    ref = mem.copy()
    exp_old = _oracle(ref, idx, lambda m, c, v: v if m == c else m, cmp, new)
    got_old = atomic._cas(mem, idx, [cmp, new], "cas")
    np.testing.assert_array_equal(got_old, exp_old)
    np.testing.assert_array_equal(mem, ref)


@settings(max_examples=60, deadline=None)
@given(n=lanes, slots=st.integers(1, 10), seed=st.integers(0, 2**32 - 1), op=st.sampled_from(["inc", "dec"]),
       uniform=st.booleans(), big=st.booleans())
def test_inc_dec_exch_match_serial_oracle(n: int, slots: int, seed: int, op: str, uniform: bool,
                                          big: bool) -> None:
    rng = np.random.default_rng(seed)
    hi = 2**32 - 1 if big else 12
    mem = rng.integers(0, hi, slots, endpoint=True).astype(np.uint32)
    idx = rng.integers(0, slots, n).astype(np.int64)
    wraps = rng.integers(0, hi, n, endpoint=True).astype(np.uint32)
    if uniform:
        wraps = rng.integers(0, hi, slots, endpoint=True).astype(np.uint32)[idx]
    ref = mem.copy()

    def step(m: Any, s: Any) -> Any:
        m, s = int(m), int(s)
        if op == "inc":
            return 0 if m >= s else m + 1
        return s if (m == 0 or m > s) else m - 1

    exp_old = _oracle(ref, idx, step, wraps)
    got_old = atomic._incdec(mem, idx, [wraps], op)
    np.testing.assert_array_equal(got_old, exp_old)
    np.testing.assert_array_equal(mem, ref)
    mem2, ref2 = mem.copy(), mem.copy()
    exp_exch = _oracle(ref2, idx, lambda m, x: x, wraps)
    np.testing.assert_array_equal(atomic._exch(mem2, idx, [wraps], "exch"), exp_exch)
    np.testing.assert_array_equal(mem2, ref2)


LOCAL = PTX_HEAD + r'''
.visible .entry k(.param .u64 pg)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    .local .align 4 .b8 depot[16];
    ld.param.u64 %rd1, [pg];
    mov.u64 %rd2, depot;
    cvta.local.u64 %rd3, %rd2;
    atom.add.u32 %r1, [%rd1], 1;
    atom.add.u32 %r2, [%rd3], 1;
    ret;
}
'''


def test_generic_atomic_on_local_memory_faults() -> None:
    buf = cuda.to_device(np.zeros(4, np.uint32))
    fault = _fault(LOCAL, buf)
    assert fault.name == "cudaErrorIllegalAddress"
    assert fault.report["space"] == "local"
    assert _raw(buf)[0] == 32  # the global atomic before it ran; the faulting one changed nothing
