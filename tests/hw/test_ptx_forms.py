# PTX forms the front end accepts beyond what NVRTC's common output uses (issue 12, item 3): vector
# registers and vector parameters, `.func` with `.reg` parameters and several return values,
# `cvt.pack.sat`, `%reserved_smem_*`, and the device call stack limit of recursion. Hand-written PTX for
# forms NVRTC does not emit; NVRTC kernels (with NumPy oracles) where it does.
"""Front-end forms: vector registers, register parameters, multiple returns, call stack limit."""

from __future__ import annotations

import signal

import numpy as np
import ptx_harness
import pytest

import strata.cuda as cuda
from strata.errors import DeviceFault, PTXSyntaxError
from strata.hw.ptx.parser import parse

HEAD = ptx_harness.PTX_HEAD


def _run_ptx(text: str, n: int, *arrays: np.ndarray) -> list[np.ndarray]:
    """Launch kernel `k(p0, p1, ...)` of `text` on one block of `n` threads; arrays copied back."""
    dev = [cuda.to_device(a) for a in arrays]
    cuda.Module.from_ptx(HEAD + text).get_function("k")((1,), (n,), tuple(dev))
    return [d.get() for d in dev]


PROLOGUE = """
    .reg .b32 %tid;
    .reg .b64 %a, %b, %off;
    mov.u32 %tid, %tid.x;
    mul.wide.u32 %off, %tid, 16;
    ld.param.u64 %a, [p0];
    cvta.to.global.u64 %a, %a;
    add.s64 %a, %a, %off;
    ld.param.u64 %b, [p1];
    cvta.to.global.u64 %b, %b;
    add.s64 %b, %b, %off;
"""


def test_vector_registers_load_store_and_elements() -> None:
    text = """.visible .entry k(.param .u64 p0, .param .u64 p1)
{
    .reg .v4 .u32 %v;
    .reg .v2 .b32 %w<2>;
    .reg .b32 %s;
""" + PROLOGUE + """
    ld.global.v4.u32 %v, [%a];
    add.s32 %v.x, %v.x, %v.w;
    mov.b32 %s, %v.g;
    xor.b32 %v.b, %v.b, %s;
    mov.b32 %w1.y, %v.r;
    st.global.v4.u32 [%b], {%v.y, %v.z, %v.x, %w1.y};
    ret;
}"""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2**32, size=(32, 4), dtype=np.uint32)
    _, out = _run_ptx(text, 32, x, np.zeros_like(x))
    s0 = x[:, 0] + x[:, 3]
    want = np.stack([x[:, 1], x[:, 2] ^ x[:, 1], s0, s0], axis=1)
    np.testing.assert_array_equal(out, want)


def test_vector_parameter_and_reg_parameters_with_two_returns() -> None:
    """`.func (.reg .b32 q, .reg .b32 r) divmod (.reg .b32 a, .reg .b32 b)` called with registers,
    and a `.param .v2 .u32` argument passed through a vector store."""
    text = """
.func (.reg .b32 q, .reg .b32 r) divmod(.reg .b32 a, .reg .b32 b)
{
    div.u32 q, a, b;
    rem.u32 r, a, b;
    ret;
}
.func (.param .b32 ret0) sum2(.param .v2 .u32 pv)
{
    .reg .b32 %x, %y;
    ld.param.v2.u32 {%x, %y}, [pv];
    add.s32 %x, %x, %y;
    st.param.b32 [ret0], %x;
    ret;
}
.visible .entry k(.param .u64 p0, .param .u64 p1)
{
    .reg .b32 %x<4>, %q, %r, %s;
""" + PROLOGUE + """
    ld.global.v4.u32 {%x0, %x1, %x2, %x3}, [%a];
    or.b32 %x1, %x1, 1;
    call (%q, %r), divmod, (%x0, %x1);
    {
    .param .align 8 .b8 arg[8];
    .param .b32 rv;
    st.param.v2.u32 [arg], {%x2, %x3};
    call (rv), sum2, (arg);
    ld.param.b32 %s, [rv];
    }
    st.global.v4.u32 [%b], {%q, %r, %s, 7};
    ret;
}"""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2**32, size=(32, 4), dtype=np.uint32)
    _, out = _run_ptx(text, 32, x, np.zeros_like(x))
    d = x[:, 1] | 1
    want = np.stack([x[:, 0] // d, x[:, 0] % d, x[:, 2] + x[:, 3], np.full(32, 7, np.uint32)], axis=1)
    np.testing.assert_array_equal(out, want)


def test_reg_parameter_keeps_float_bits_and_immediates() -> None:
    text = """
.func (.reg .f32 y) twice(.reg .f32 x, .reg .b32 k)
{
    .reg .f32 %kf;
    cvt.rn.f32.u32 %kf, k;
    mul.f32 y, x, %kf;
    ret;
}
.visible .entry k(.param .u64 p0, .param .u64 p1)
{
    .reg .f32 %f<4>;
""" + PROLOGUE + """
    ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%a];
    call (%f1), twice, (%f0, 3);
    call (%f2), twice, (0f3FC00000, 2);
    st.global.v4.f32 [%b], {%f0, %f1, %f2, %f3};
    ret;
}"""
    x = np.linspace(-3, 3, 128, dtype=np.float32).reshape(32, 4)
    _, out = _run_ptx(text, 32, x, np.zeros_like(x))
    want = np.stack([x[:, 0], x[:, 0] * np.float32(3), np.full(32, 3.0, np.float32), x[:, 3]], axis=1)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("bad", [
    ".visible .entry k(.reg .b32 a) { ret; }",  # kernels take .param only
    ".visible .entry k() { .reg .v4 .pred %p; ret; }",
    ".visible .entry k() { .reg .b32 %r<0>; ret; }",
    ".visible .entry k() { .reg .b32 %r<70000>; ret; }",
    ".visible .entry k() { .reg .b32 %r<40000>; .reg .b32 %s<40000>; ret; }",
    ".visible .entry k() { .reg .b32 %r<2000000000>; ret; }",
    ".visible .entry k() { .local .b8 big[1048576]; ret; }",
    ".global .u32 g[2] = {1, 2, 3};",
    ".visible .entry k(.param .b8 p[40000]) { ret; }",
    ".visible .entry k() { mov.u32 %r1, 18446744073709551616; ret; }",
    ".visible .entry k() { mov.u32 %r1, 09; ret; }",
    ".global .u32 g = " + "{" * 200 + "1" + "}" * 200 + ";",
    ".visible .entry k() { mov.b32 %r1, " + "{" * 3000 + "%r2" + "}" * 3000 + "; ret; }",
])
def test_rejected_declarations(bad: str) -> None:
    with pytest.raises(PTXSyntaxError):
        parse(HEAD + bad)


def _parse_within(text: str, seconds: float) -> None:
    """parse(text), failing the test (instead of hanging it) if it takes longer than `seconds`."""

    def alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"parse did not finish in {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        parse(text)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("text", [
    ".visible .entry k() {\n.loc 1 2 3, function_name",
    ".visible .entry k() {\n.loc 1 2 3, function_name $L__info_string0, inlined_at",
    ".visible .entry k() {\n.pragma \"nounroll\"",
    ".visible .entry k() .pragma \"nounroll\"",
    ".visible .func (.param .b32 r) .attribute(.unified",
    ".alias a, b",
    ".visible .entry k() { L1: .callprototype",
    ".visible .entry k() { ld.global.u32 %r1, [%rd1",
    ".global .u32 g[4] = {1, 2",
])
def test_truncated_input_is_a_syntax_error_not_a_hang(text: str) -> None:
    with pytest.raises(PTXSyntaxError, match="end of input|expected|unterminated"):
        _parse_within(HEAD + text, 5)


def test_large_register_declaration_is_fast() -> None:
    """The largest declaration accepted still parses quickly (NVRTC's largest are ~1000)."""
    fn = parse(HEAD + ".visible .entry k() { .reg .b32 %r<65536>; ret; }").functions["k"]
    assert len(fn.regs) == 65536


RECURSE = r"""
__device__ __noinline__ int depth(int n) { if (n == 0) return 1; int a = depth(n - 1); return a * a + n; }
extern "C" __global__ void k(int n, int* out) { out[threadIdx.x] = depth(n + threadIdx.x); }
"""


def _depth_oracle(n: int) -> int:
    a = 1
    for k in range(1, n + 1):
        a = (a * a + k) & 0xFFFFFFFF
    return a - (1 << 32) if a >= 1 << 31 else a


def test_recursion_within_the_stack_limit_runs() -> None:
    (out,), _ = ptx_harness.launch(RECURSE, "k", 1, 4, np.int32(60), np.zeros(4, np.int32))
    np.testing.assert_array_equal(out, [_depth_oracle(60 + t) for t in range(4)])


def test_recursion_past_the_stack_limit_is_a_stack_overflow_fault() -> None:
    """CUDA's default stack (cudaLimitStackSize, 1024 bytes) holds ~128 frames of this function; deeper
    recursion stops the launch with a launch failure, not a Python RecursionError."""
    with pytest.raises(DeviceFault, match="stack overflow") as exc:
        ptx_harness.launch(RECURSE, "k", 1, 4, np.int32(5000), np.zeros(4, np.int32))
    assert exc.value.name == "cudaErrorLaunchFailure"
    assert exc.value.report["reason"] == "stack overflow"


@pytest.mark.parametrize("ctype", ["u16", "s16", "u8", "s8", "u4", "s4", "u2", "s2"])
def test_cvt_pack_sat(ctype: str) -> None:
    """d = sat(b) | sat(a) << n | c << 2n (PTX ISA 9.7.9.22), against NumPy clip and shifts."""
    n = {"u16": 16, "s16": 16, "u8": 8, "s8": 8, "u4": 4, "s4": 4, "u2": 2, "s2": 2}[ctype]
    rng = np.random.default_rng(n)
    edges = np.array([0, 1, -1, 2, -2, 7, 8, -8, -9, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768,
                      -32769, 65535, 65536, 2**31 - 1, -(2**31)], dtype=np.int64)
    a = np.concatenate([edges, rng.integers(-(2**31), 2**31, 41)]).astype(np.int32)
    b = np.roll(a, 7)
    c = rng.integers(0, 2**32, a.size, dtype=np.uint64).astype(np.uint32)
    body = f"cvt.pack.sat.{ctype}.s32 %o0, %i0, %i1;" if n == 16 else \
        f"cvt.pack.sat.{ctype}.s32.b32 %o0, %i0, %i1, %i2;"
    (got,) = ptx_harness.run_lanes(body, [("s32", a), ("s32", b), ("u32", c)], [("u32", None)],
                                   {"s32": np.int32, "u32": np.uint32})
    lo, hi = (-(2 ** (n - 1)), 2 ** (n - 1) - 1) if ctype[0] == "s" else (0, 2**n - 1)
    m = 2**n - 1
    want = (np.clip(b.astype(np.int64), lo, hi) & m) | ((np.clip(a.astype(np.int64), lo, hi) & m) << n)
    if n < 16:
        want |= (c.astype(np.int64) << (2 * n)) & 0xFFFFFFFF
    np.testing.assert_array_equal(got, want.astype(np.uint32))


@pytest.mark.parametrize("bad", ["cvt.pack.sat.u8.s32 %o0, %i0, %i1;", "cvt.pack.sat.u16.s32.b32 %o0, %i0, %i1, %i2;",
                                 "cvt.pack.u8.s32.b32 %o0, %i0, %i1, %i2;",
                                 "cvt.pack.sat.u8.u32.b32 %o0, %i0, %i1, %i2;"])
def test_cvt_pack_malformed(bad: str) -> None:
    with pytest.raises(PTXSyntaxError):
        ptx_harness.run_lanes(bad, [("s32", np.zeros(4, np.int32)), ("s32", np.zeros(4, np.int32)),
                                    ("u32", np.zeros(4, np.uint32))], [("u32", None)],
                              {"s32": np.int32, "u32": np.uint32})


def test_v8_and_v4_b64_vector_loads_and_stores() -> None:
    """256-bit accesses of PTX 8.8+: `ld.global.v8.b32` (with a sink element) and `.v4.u64`."""
    text = """.visible .entry k(.param .u64 p0, .param .u64 p1)
{
    .reg .b32 %x<8>;
    .reg .b64 %q<4>;
""" + PROLOGUE + """
    mul.wide.u32 %off, %tid, 48;  // rows of 64 bytes: the prologue added 16 per thread
    add.s64 %a, %a, %off;
    add.s64 %b, %b, %off;
    ld.global.v8.b32 {%x0, %x1, _, %x3, %x4, %x5, %x6, %x7}, [%a];
    mov.b32 %x2, 99;
    st.global.v8.b32 [%b], {%x7, %x6, %x5, %x4, %x3, %x2, %x1, %x0};
    ld.global.v4.u64 {%q0, %q1, %q2, %q3}, [%a];
    st.global.v4.u64 [%b+32], {%q3, %q2, %q1, %q0};
    ret;
}"""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**32, size=(32, 16), dtype=np.uint64).astype(np.uint32)
    _, out = _run_ptx(text, 32, x, np.zeros_like(x))
    want8 = x[:, 7::-1].copy()
    want8[:, 5] = 99
    np.testing.assert_array_equal(out[:, :8], want8)
    q = x[:, :8].copy().view(np.uint64)
    np.testing.assert_array_equal(out[:, 8:].copy().view(np.uint64), q[:, ::-1])


def test_b128_registers_are_a_typed_unsupported_error() -> None:
    with pytest.raises(cuda.UnsupportedInstruction, match="b128"):
        ptx_harness.launch_entry(".reg .b128 %q;", ".reg .b64 %d<2>;", "mov.b128 %q, {%d0, %d1};")


MULTI_WARP_TILES = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tiles(const int* x, int* sums, int* info) {
    cg::thread_block_tile<64> t = cg::tiled_partition<64>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    t.sync();
    sums[i] = cg::reduce(t, v, cg::plus<int>());
    info[i] = t.thread_rank() * 1000 + t.meta_group_rank() * 10 + (t.num_threads() == 64) + 2 * t.any(v == 77);
}
"""


def test_multi_warp_tiles_use_reserved_shared_memory() -> None:
    """cg::tiled_partition<64> keeps its barriers and collective scratch at %reserved_smem_offset_1."""
    mod = ptx_harness.compiled(MULTI_WARP_TILES)
    assert "%reserved_smem_offset_1" in mod.ptx
    x = np.random.default_rng(5).integers(-1000, 1000, 512).astype(np.int32)
    x[70] = 77
    (_, sums, info), _ = ptx_harness.launch(mod, "tiles", 2, 256, x, np.zeros_like(x), np.zeros_like(x))
    tile = x.reshape(-1, 64)
    np.testing.assert_array_equal(sums, np.repeat(tile.sum(axis=1), 64))
    t = np.arange(512) % 256
    has77 = np.repeat((tile == 77).any(axis=1), 64)
    np.testing.assert_array_equal(info, (t % 64) * 1000 + (t // 64) * 10 + 1 + 2 * has77)


def test_reserved_smem_registers_describe_a_region_apart_from_user_shared_memory() -> None:
    """begin/end/cap/_0/_1 describe one 1 KB region (the Programming Guide's reserved shared memory per
    block on sm_80+); writing it leaves the kernel's own shared variable intact."""
    text = """.visible .entry k(.param .u64 p0, .param .u64 p1)
{
    .shared .align 4 .b32 user[4];
    .reg .b32 %v<6>;
""" + PROLOGUE + """
    mov.b32 %v0, %reserved_smem_offset_begin;
    mov.b32 %v1, %reserved_smem_offset_end;
    mov.b32 %v2, %reserved_smem_offset_cap;
    mov.b32 %v3, %reserved_smem_offset_0;
    mov.b32 %v4, %reserved_smem_offset_1;
    mov.b32 %v5, 1234;
    st.shared.b32 [user], %v5;
    mov.b32 %v5, -1;
    st.shared.b32 [%v3], %v5;
    st.shared.b32 [%v4], %v5;
    add.s32 %v5, %v1, -4;
    st.shared.b32 [%v5], %v5;
    ld.shared.b32 %v5, [user];
    st.global.v4.b32 [%b], {%v0, %v1, %v2, %v5};
    mov.u32 %v5, user;
    st.global.v2.b32 [%b+16], {%v4, %v5};
    ret;
}"""
    x = np.zeros((1, 8), np.uint32)
    _, out = _run_ptx(text, 1, x, np.zeros((1, 8), np.uint32))
    begin, end, cap, user_value, off1, user_addr = (int(v) for v in out[0, :6])
    assert (end - begin, cap, user_value) == (1024, 1024, 1234)
    assert begin <= off1 and off1 + 288 <= end  # cooperative groups need 288 bytes there
    assert not begin <= user_addr < end


def test_deep_recursion_within_a_raised_stack_limit_runs() -> None:
    """cudaDeviceSetLimit(cudaLimitStackSize) lets recursion go deeper than Python's default stack would."""
    dev = cuda.Device(0)
    old = dev.get_limit("stack_size")
    dev.set_limit("stack_size", 32 * 1024)
    try:
        (out,), _ = ptx_harness.launch(RECURSE, "k", 1, 2, np.int32(1500), np.zeros(2, np.int32))
    finally:
        dev.set_limit("stack_size", old)
    np.testing.assert_array_equal(out, [_depth_oracle(1500 + t) for t in range(2)])


@pytest.mark.parametrize("bad", [
    ".visible .entry k() {" + "{" * 100 + "}" * 100 + " ret; }",  # inline-asm scopes nest 2-3 deep
    ".global .align 3 .b8 g[4];",
    ".global .align 0 .b8 g[4];",
    ".global .b8 g[-4];",
])
def test_rejected_nesting_and_alignment(bad: str) -> None:
    with pytest.raises(PTXSyntaxError):
        parse(HEAD + bad)


# --- labels local to `{ }` blocks -----------------------------------------------------------------------

SCOPED_LABEL_SRC = r"""
// An inline-asm loop with its own label (the CUTLASS wait-loop shape), inlined at two call sites: the
// PTX then holds two `{ ... L: ... bra L; }` blocks defining the same label, which ptxas accepts.
__device__ __forceinline__ unsigned count_down(unsigned n) {
    unsigned steps;
    asm volatile("{\n\t.reg .pred p;\n\tmov.u32 %0, 0;\n"
                 "LOOP:\n\tadd.u32 %0, %0, 1;\n\tsub.u32 %1, %1, 1;\n\tsetp.ne.u32 p, %1, 0;\n"
                 "\t@p bra LOOP;\n}" : "=r"(steps), "+r"(n));
    return steps;
}
extern "C" __global__ void twice(const unsigned* n, unsigned* out) {
    unsigned i = threadIdx.x;
    out[2 * i] = count_down(n[i]);
    out[2 * i + 1] = count_down(n[i] + 3);
}
"""


def test_labels_inside_inline_asm_blocks_are_local_to_the_block() -> None:
    mod = cuda.compile(SCOPED_LABEL_SRC, name="scoped_label.cu")
    assert mod.ptx.count("LOOP:") == 2  # the form under test really is in the PTX
    n = np.arange(1, 33, dtype=np.uint32)
    out = cuda.zeros(64, np.uint32)
    mod.get_function("twice")(1, 32, (cuda.to_device(n), out))
    np.testing.assert_array_equal(out.get().reshape(32, 2), np.stack([n, n + 3], axis=1))


def test_a_label_twice_in_one_block_is_still_an_error() -> None:
    text = HEAD + ".visible .entry k()\n{\n{\nA:\nA:\nret;\n}\n}\n"
    with pytest.raises(cuda.PTXSyntaxError, match="defined twice"):
        cuda.Module.from_ptx(text)
