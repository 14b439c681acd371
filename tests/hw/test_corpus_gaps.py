# Hand-written PTX for the edges of the corpus gaps closed together (tests/cuda/test_suite_kernels.py
# holds the NVRTC kernels): sm_90 vector atomics beyond atomicAdd(float2/float4), the implicit 1x1x1
# cluster's special registers, cvta.param, .attribute(.managed) variables, brx.idx jump tables and the
# clock inside one basic block.
"""Vector atomics, cluster registers, cvta.param, managed variables, brx.idx and clock edges."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from ptx_harness import PTX_HEAD

import strata.cuda as cuda
from strata.errors import DeviceFault, PTXSyntaxError


def _launch(text: str, grid: int | tuple[int, ...], block: int, *arrays: np.ndarray,
            scalars: tuple = ()) -> list[np.ndarray]:
    """Launch `k(p0, p1, ..)` of `text`; the arrays are copied in and back out."""
    dev = [cuda.to_device(a) for a in arrays]
    g = grid if isinstance(grid, tuple) else (grid,)
    cuda.Module.from_ptx(PTX_HEAD + text).get_function("k")(g, (block,), (*dev, *scalars))
    return [d.get() for d in dev]


def _faulting(text: str, *arrays: np.ndarray) -> None:
    try:
        _launch(text, 1, 32, *arrays)
        cuda.synchronize()
    finally:
        cuda.current_device().reset()  # the fault is sticky on the context


# -- sm_90 vector atomics ---------------------------------------------------------------------------
VEC16 = """
.visible .entry k(.param .u64 p0, .param .u64 p1, .param .u64 p2)
{
    .reg .b16 %h<8>, %o<8>;
    .reg .b32 %tid, %q<4>, %x<4>;
    .reg .b64 %m, %v, %old, %off;
    mov.u32 %tid, %tid.x;
    ld.param.u64 %m, [p0];
    ld.param.u64 %v, [p1];
    ld.param.u64 %old, [p2];
    mul.wide.u32 %off, %tid, 16;
    add.s64 %v, %v, %off;
    add.s64 %old, %old, %off;
    ld.global.v4.b16 {%h0, %h1, %h2, %h3}, [%v];
    ld.global.v4.b16 {%h4, %h5, %h6, %h7}, [%v+8];
    atom.global.add.noftz.v8.f16 {%o0, %o1, %o2, %o3, %o4, %o5, %o6, %o7}, [%m],
        {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7};
    st.global.v4.b16 [%old], {%o0, %o1, %o2, %o3};
    st.global.v4.b16 [%old+8], {%o4, %o5, %o6, %o7};
    ld.global.v4.b32 {%q0, %q1, %q2, %q3}, [%v];
    atom.max.noftz.v4.bf16x2 {%x0, %x1, %x2, %x3}, [%m+16], {%q0, %q1, %q2, %q3};
    atom.global.min.noftz.v2.f16x2 {%x0, _}, [%m+32], {%q0, %q1};
    red.global.add.noftz.v4.bf16 [%m+48], {%h0, %h1, %h2, %h3};
    ret;
}"""


def test_vector_atomics_f16_bf16_add_min_max_one_serial_order() -> None:
    """32 lanes hit one address: v8.f16 add returns running sums in lane order; bf16x2 max, f16x2 min
    and red.v4.bf16 land element by element (each element is its own atomic)."""
    rng = np.random.default_rng(1)
    v = rng.integers(-8, 9, (32, 8)).astype(np.float16)  # small integers: every f16 sum is exact
    mem = np.zeros(32, np.uint16)
    mem[:8] = np.float16(0.5).view(np.uint16)
    mem[8:16] = np.array([-100] * 8, ml_dtypes.bfloat16).view(np.uint16)
    mem[16:20] = np.float16(100).view(np.uint16)
    m, _, old = _launch(VEC16, 1, 32, mem, v, np.zeros((32, 8), np.float16))
    running = np.float16(0.5) + np.concatenate([np.zeros((1, 8)), np.cumsum(v.astype(np.float64), 0)])
    np.testing.assert_array_equal(old, running[:32].astype(np.float16))
    np.testing.assert_array_equal(m[:8].view(np.float16), running[32].astype(np.float16))
    # the same bits read as bf16 pairs: max over lanes of each of the 8 bf16 elements
    vb = v.view(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_array_equal(m[8:16].view(ml_dtypes.bfloat16).astype(np.float64),
                                  np.maximum(vb.max(0), -100))
    np.testing.assert_array_equal(m[16:20].view(np.float16), np.minimum(v[:, :4].min(0), np.float16(100)))
    np.testing.assert_array_equal(m[20:24], 0)  # a v2.f16x2 atomic touches 8 bytes only
    acc = np.zeros(4, ml_dtypes.bfloat16)
    for lane in range(32):  # bf16 adds round at every step, in lane order
        acc = (acc.astype(np.float64) + vb[lane, :4]).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(m[24:28].view(ml_dtypes.bfloat16), acc)


def test_vector_atomic_on_shared_memory_is_rejected() -> None:
    text = """.visible .entry k(.param .u64 p0)
{
    .shared .align 16 .b8 s[16];
    .reg .f32 %f<2>;
    mov.f32 %f0, 0f3F800000;
    atom.shared.add.v2.f32 {%f0, %f1}, [s], {%f0, %f0};
    ret;
}"""
    with pytest.raises(PTXSyntaxError, match="global memory only"):
        cuda.Module.from_ptx(PTX_HEAD + text)


def test_vector_atomic_generic_address_of_shared_memory_faults() -> None:
    text = """.visible .entry k(.param .u64 p0)
{
    .shared .align 16 .b8 s[16];
    .reg .f32 %f<2>;
    .reg .b64 %a;
    mov.u64 %a, s;
    cvta.shared.u64 %a, %a;
    mov.f32 %f0, 0f3F800000;
    atom.add.v2.f32 {%f0, %f1}, [%a], {%f0, %f0};
    ret;
}"""
    with pytest.raises(DeviceFault, match="global addresses only"):
        _faulting(text, np.zeros(4, np.float32))


def test_vector_atomic_needs_the_vector_alignment() -> None:
    text = """.visible .entry k(.param .u64 p0)
{
    .reg .f32 %f<4>;
    .reg .b64 %a;
    ld.param.u64 %a, [p0];
    mov.f32 %f0, 0f3F800000;
    red.global.add.v4.f32 [%a+8], {%f0, %f0, %f0, %f0};
    ret;
}"""
    with pytest.raises(DeviceFault, match="isaligned"):
        _faulting(text, np.zeros(16, np.float32))


# -- the implicit 1x1x1 cluster of a plain launch ----------------------------------------------------
CLUSTER_REGS = ["%clusterid.x", "%clusterid.y", "%clusterid.z", "%nclusterid.x", "%nclusterid.y", "%nclusterid.z",
                "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z", "%cluster_nctaid.x",
                "%cluster_nctaid.y", "%cluster_nctaid.z", "%cluster_ctarank", "%cluster_nctarank"]


def test_cluster_registers_of_a_plain_3d_launch() -> None:
    """Each block is its own cluster: cluster ids are the block ids, the cluster grid is the grid."""
    n = len(CLUSTER_REGS) + 1
    reads = "\n".join(f"    mov.u32 %r{k}, {r};\n    st.global.u32 [%a+{4 * k}], %r{k};"
                       for k, r in enumerate(CLUSTER_REGS))
    text = f""".visible .entry k(.param .u64 p0)
{{
    .reg .b32 %r<{n}>, %b, %tid;
    .reg .b64 %a, %off;
    .reg .pred %p;
    mov.u32 %tid, %tid.x;
    setp.ne.u32 %p, %tid, 0;
    @%p ret;
    mov.u32 %b, %nctaid.x;
    mov.u32 %r0, %ctaid.y;
    mad.lo.u32 %b, %r0, %b, %ctaid.x;
    mov.u32 %r0, %nctaid.y;
    mov.u32 %r1, %nctaid.x;
    mul.lo.u32 %r0, %r0, %r1;
    mov.u32 %r1, %ctaid.z;
    mad.lo.u32 %b, %r1, %r0, %b;
    mul.wide.u32 %off, %b, {4 * n};
    ld.param.u64 %a, [p0];
    add.s64 %a, %a, %off;
{reads}
    mov.pred %p, %is_explicit_cluster;
    selp.u32 %r0, 1, 0, %p;
    st.global.u32 [%a+{4 * (n - 1)}], %r0;
    ret;
}}"""
    grid = (3, 2, 2)
    (out,) = _launch(text, grid, 64, np.full((12, n), 99, np.uint32))
    for b in range(12):
        x, y, z = b % 3, (b // 3) % 2, b // 6
        assert out[b].tolist() == [x, y, z, *grid, 0, 0, 0, 1, 1, 1, 0, 1, 0], b


# -- cvta.param: generic addresses of kernel parameters ---------------------------------------------
CVTA_PARAM = """.visible .entry k(.param .align 16 .b8 tbl[20], .param .u64 p1)
{
    .reg .b32 %r<6>;
    .reg .b64 %g, %o, %back;
    .reg .pred %p;
    mov.b64 %g, tbl;
    cvta.param.u64 %g, %g;
    ld.v4.u32 {%r0, %r1, %r2, %r3}, [%g];
    ld.u32 %r4, [%g+16];
    isspacep.param %p, %g;
    selp.u32 %r5, 1, 0, %p;
    ld.param.u64 %o, [p1];
    st.global.v4.u32 [%o], {%r0, %r1, %r2, %r3};
    st.global.v2.u32 [%o+16], {%r4, %r5};
    isspacep.global %p, %g;
    selp.u32 %r5, 1, 0, %p;
    cvta.to.param.u64 %back, %g;
    ld.param.u32 %r4, [%back+8];
    st.global.v2.u32 [%o+24], {%r5, %r4};
    {STORE}
    ret;
}"""


def test_cvta_param_generic_loads_read_the_parameter_buffer() -> None:
    tbl = np.random.default_rng(5).integers(0, 2**32, 5, dtype=np.uint64).astype(np.uint32)
    out = _run_cvta(tbl, "")
    np.testing.assert_array_equal(out, [*tbl, 1, 0, tbl[2]])  # isspacep.param yes, .global no


def _run_cvta(tbl: np.ndarray, store: str) -> np.ndarray:
    out = cuda.to_device(np.zeros(8, np.uint32))
    k = cuda.Module.from_ptx(PTX_HEAD + CVTA_PARAM.replace("{STORE}", store)).get_function("k")
    k((1,), (32,), (tbl.tobytes(), out))
    return out.get()


@pytest.mark.parametrize("store, match", [
    ("st.u32 [%g+4], %r0;", "read-only"),  # grid constants cannot be written
    ("ld.u32 %r0, [%g+32];", "parameter buffer is 32 bytes"),  # tbl, padding, p1: 32 bytes
])
def test_cvta_param_store_and_overread_fault(store: str, match: str) -> None:
    try:
        with pytest.raises(DeviceFault, match=match):
            _run_cvta(np.zeros(5, np.uint32), store + " st.global.u32 [%o], %r0;")
            cuda.synchronize()
    finally:
        cuda.current_device().reset()


# -- .attribute(.managed) variables ------------------------------------------------------------------
def test_managed_attribute_parses_and_is_checked() -> None:
    from strata.hw.ptx.parser import parse

    mod = parse(PTX_HEAD + ".global .attribute(.managed) .align 8 .u64 m[2];\n"
                ".global .attribute(.unified(19, 95)) .f32 u;\n.global .u32 plain;\n")
    assert [(v.name, v.managed, v.size, v.align) for v in mod.variables] == \
        [("m", True, 16, 8), ("u", False, 4, 4), ("plain", False, 4, 4)]
    with pytest.raises(PTXSyntaxError, match="applies to .global"):
        parse(PTX_HEAD + ".shared .attribute(.managed) .u32 s;\n")
    with pytest.raises(PTXSyntaxError, match="unknown variable attribute"):
        parse(PTX_HEAD + ".global .attribute(.pinned) .u32 s;\n")


# -- brx.idx jump tables ------------------------------------------------------------------------------
BRX_LOOP = """.visible .entry k(.param .u64 p0)
{
    .reg .b32 %t, %i, %acc, %n, %nb, %sa;
    .reg .b64 %a, %off;
    .reg .pred %p, %q;
    .shared .align 4 .b32 sh[64];
    mov.u32 %t, %tid.x;
    mov.u32 %acc, 0;
    mov.u32 %n, 0;
    and.b32 %i, %t, 3;
    setp.lt.u32 %p, %t, 48;
    ts: .branchtargets A, B, C, A;
LOOP:
    @%p brx.idx.uni %i, ts;
    add.u32 %acc, %acc, 1000;
    bra.uni JOIN;
A:  add.u32 %acc, %acc, 1;
    bra.uni JOIN;
B:  add.u32 %acc, %acc, 20;
    bra.uni JOIN;
C:  add.u32 %acc, %acc, 300;
JOIN:
    add.u32 %n, %n, 1;
    add.u32 %i, %i, 1;
    and.b32 %i, %i, 3;
    setp.lt.u32 %q, %n, 3;
    @%q bra LOOP;
    mov.u32 %sa, sh;
    shl.b32 %nb, %t, 2;
    add.u32 %sa, %sa, %nb;
    st.shared.u32 [%sa], %acc;
    bar.sync 0;
    mov.u32 %sa, sh;
    xor.b32 %nb, %t, 1;
    shl.b32 %nb, %nb, 2;
    add.u32 %sa, %sa, %nb;
    ld.shared.u32 %nb, [%sa];
    ld.param.u64 %a, [p0];
    mul.wide.u32 %off, %t, 8;
    add.s64 %a, %a, %off;
    st.global.v2.u32 [%a], {%acc, %nb};
    ret;
}"""


def _brx_oracle(t: int) -> int:
    acc = 0
    for n in range(3):
        acc += {0: 1, 1: 20, 2: 300, 3: 1}[((t & 3) + n) & 3] if t < 48 else 1000
    return acc


def test_brx_idx_divergent_lanes_in_a_loop_reconverge_before_a_barrier() -> None:
    """Per-lane targets (one label twice in the table), guard-false lanes falling through, three trips
    round a loop; all lanes meet again at the join and pass bar.sync together."""
    (out,) = _launch(BRX_LOOP, 1, 64, np.zeros((64, 2), np.uint32))
    want = np.array([_brx_oracle(t) for t in range(64)])
    np.testing.assert_array_equal(out[:, 0], want)
    np.testing.assert_array_equal(out[:, 1], want[np.arange(64) ^ 1])


BRX_EXIT = """.visible .entry k(.param .u64 p0)
{
    .reg .b32 %t, %i, %v;
    .reg .b64 %a, %off;
    mov.u32 %t, %tid.x;
    rem.u32 %i, %t, 3;
    ld.param.u64 %a, [p0];
    mul.wide.u32 %off, %t, 4;
    add.s64 %a, %a, %off;
    tbl: .branchtargets L0, OUT, L2;
    brx.idx %i, tbl;
L0: mov.u32 %v, 7;
    bra.uni J;
L2: mov.u32 %v, 9;
J:  bar.sync 0;
    st.global.u32 [%a], %v;
OUT:
    ret;
}"""


def test_brx_idx_to_a_return_leaves_and_the_rest_pass_a_barrier() -> None:
    (out,) = _launch(BRX_EXIT, 1, 96, np.full(96, 5, np.uint32))
    np.testing.assert_array_equal(out, np.array([7, 5, 9])[np.arange(96) % 3])


def test_brx_idx_out_of_range_faults() -> None:
    text = BRX_EXIT.replace("rem.u32 %i, %t, 3;", "rem.u32 %i, %t, 5;")
    with pytest.raises(DeviceFault, match="cudaErrorIllegalInstruction") as info:
        _faulting(text, np.zeros(32, np.uint32))
    assert "index 3 is outside the 3-entry jump table tbl" in str(info.value)
    assert info.value.report["thread"] == (3, 0, 0)


@pytest.mark.parametrize("edit, match", [
    (("brx.idx %i, tbl;", "brx.idx %i, nope;"), "needs a `.branchtargets` label"),
    (("L0, OUT, L2;", "L0, OUT, L9;"), "undefined label 'L9'"),
])
def test_brx_idx_bad_tables_fail_at_load(edit: tuple[str, str], match: str) -> None:
    with pytest.raises(PTXSyntaxError, match=match):
        cuda.Module.from_ptx(PTX_HEAD + BRX_EXIT.replace(*edit))


# -- %clock64 inside one basic block, and __nanosleep ------------------------------------------------
CLOCK = """.visible .entry k(.param .u64 p0)
{
    .reg .b32 %t, %x, %ns;
    .reg .b64 %c<4>, %a, %off;
    mov.u32 %t, %tid.x;
    shl.b32 %ns, %t, 4;
    mov.u64 %c0, %clock64;
    add.u32 %x, %t, 1;
    mul.lo.u32 %x, %x, 3;
    mov.u64 %c1, %clock64;
    nanosleep.u32 %ns;
    mov.u64 %c2, %clock64;
    nanosleep.u32 1000;
    mov.u64 %c3, %clock64;
    ld.param.u64 %a, [p0];
    mul.wide.u32 %off, %t, 32;
    add.s64 %a, %a, %off;
    st.global.v2.u64 [%a], {%c0, %c1};
    st.global.v2.u64 [%a+16], {%c2, %c3};
    ret;
}"""


@pytest.mark.parametrize("threads", [32, 64])
def test_clock64_advances_within_a_basic_block_and_over_nanosleep(threads: int) -> None:
    """Modeled cycles: each warp-instruction issued before the read (the reads sit in one basic block),
    and nanosleep's ns (the longest of the warp's lanes) at the catalogue's clock."""
    (c,) = _launch(CLOCK, 1, threads, np.zeros((threads, 4), np.int64))
    mhz = cuda.current_device().file.gpu.spec.clock_mhz
    warps = threads // 32
    assert (c == c[0]).all()  # the block's lanes run in lockstep here
    c0, c1, c2, c3 = (int(v) for v in c[0])
    assert c0 > 0
    assert c1 - c0 == 3 * warps  # mov, add, mul issued in between
    assert c2 - c1 == 2 * warps + int(16 * (threads - 1) * mhz) // 1000  # mov, nanosleep; the longest sleep
    assert c3 - c2 == 2 * warps + int(1000 * mhz) // 1000


# -- thread-block clusters: launch-time cluster dims, DSMEM atomics, 2-D clusters --------------------
CLUSTER_SUM = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cluster_sum(const int* in, int* out, unsigned* info) {
    __shared__ int part;
    cg::cluster_group cl = cg::this_cluster();
    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0) part = 0;
    cl.sync();
    int* root = cl.map_shared_rank(&part, 0);      // rank 0's counter, through distributed shared memory
    atomicAdd(root, in[b * blockDim.x + threadIdx.x]);
    cl.sync();
    if (threadIdx.x == 0) {
        dim3 bi = cl.block_index(), nb = cl.dim_blocks();
        unsigned cid;
        asm("mov.u32 %0, %%clusterid.y;" : "=r"(cid));
        info[6 * b + 0] = cl.block_rank();
        info[6 * b + 1] = cl.num_blocks();
        info[6 * b + 2] = bi.x + 10 * bi.y;
        info[6 * b + 3] = nb.x + 10 * nb.y;
        info[6 * b + 4] = cid;
        info[6 * b + 5] = cl.block_rank() == 0 ? part : -1;
    }
    cl.sync();  // rank 0's shared memory outlives the others' reads
}
"""


def test_cluster_dims_at_launch_dsmem_atomics_and_2d_clusters() -> None:
    """cluster_dims=(2, 2) on a (4, 4) grid: ranks x + 2y, 2-D cluster indices, and every thread's
    atomicAdd lands in its cluster's rank-0 block through map_shared_rank."""
    k = cuda.compile(CLUSTER_SUM).get_function("cluster_sum")
    x = np.random.default_rng(9).integers(-100, 100, (16, 32)).astype(np.int32)
    dx, out, info = cuda.to_device(x), cuda.zeros(1, np.int32), cuda.zeros((16, 6), np.uint32)
    k.launch((4, 4), 32, (dx, out, info), cluster_dims=(2, 2))
    got = info.get().view(np.int32)
    for b in range(16):
        bx, by = b % 4, b // 4
        members = [(bx - bx % 2 + i) + 4 * (by - by % 2 + j) for j in range(2) for i in range(2)]
        rank = bx % 2 + 2 * (by % 2)
        total = int(x[members].sum()) if rank == 0 else -1
        assert got[b].tolist() == [rank, 4, bx % 2 + 10 * (by % 2), 2 + 20, by // 2, total], b


def test_cluster_dims_must_tile_the_grid_and_match_the_kernel() -> None:
    k = cuda.compile(CLUSTER_SUM).get_function("cluster_sum")
    args = (cuda.zeros(96, np.int32), cuda.zeros(1, np.int32), cuda.zeros(18, np.uint32))
    with pytest.raises(cuda.InvalidLaunchConfig, match="cudaErrorInvalidClusterSize.*not a whole number"):
        k.launch(3, 32, args, cluster_dims=2)
    with pytest.raises(cuda.InvalidLaunchConfig, match="at most 8 blocks"):
        k.launch(16, 32, args, cluster_dims=16)
    fixed = cuda.Module.from_ptx(PTX_HEAD + """.visible .entry k(.param .u64 p0)
.explicitcluster
.reqnctapercluster 2, 1, 1
{
    ret;
}""").get_function("k")
    with pytest.raises(cuda.InvalidLaunchConfig, match="compiled with __cluster_dims__"):
        fixed.launch(4, 32, (0,), cluster_dims=4)
    with pytest.raises(cuda.InvalidLaunchConfig, match="not a whole number"):
        fixed.launch(3, 32, (0,))


def test_mapa_to_a_rank_outside_the_cluster_faults() -> None:
    text = """.visible .entry k(.param .u64 p0)
.explicitcluster
.reqnctapercluster 2, 1, 1
{
    .shared .align 4 .b32 s[32];
    .reg .b32 %a, %r;
    mov.u32 %a, s;
    mov.u32 %r, %tid.x;
    mapa.shared::cluster.u32 %a, %a, %r;
    st.shared::cluster.u32 [%a], %r;
    ret;
}"""
    try:
        with pytest.raises(DeviceFault, match="mapa to cluster rank 2 of a 2-block cluster") as info:
            cuda.Module.from_ptx(PTX_HEAD + text).get_function("k")((2,), (32,), (0,))
            cuda.synchronize()
        assert info.value.report["thread"] == (2, 0, 0)
    finally:
        cuda.current_device().reset()


TWICE = r"""
__device__ __forceinline__ unsigned pick(unsigned i) {   // its jump table and labels are inlined twice
    unsigned r;
    asm volatile("{\n\tts: .branchtargets L0, L1, L2;\n\tbrx.idx %1, ts;\n\t"
                 "L0: mov.u32 %0, 10; bra.uni LEND;\n\tL1: mov.u32 %0, 20; bra.uni LEND;\n\t"
                 "L2: mov.u32 %0, 30;\n\tLEND:\n\t}" : "=r"(r) : "r"(i));
    return r;
}
extern "C" __global__ void twice(unsigned* out) {
    unsigned t = threadIdx.x;
    out[t] = pick(t % 3) * 100 + pick((t + 1) % 3);
}
"""


def test_brx_jump_table_in_inline_asm_inlined_twice() -> None:
    """Each inlined copy's `{ }` block has its own jump table and labels (scoped like labels)."""
    out = cuda.zeros(64, np.uint32)
    cuda.compile(TWICE).get_function("twice")(1, 64, (out,))
    t = np.arange(64)
    np.testing.assert_array_equal(out.get(), (t % 3 + 1) * 1000 + ((t + 1) % 3 + 1) * 10)
