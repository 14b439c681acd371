# Tests of the fast paths behind tensor-core emulation speed (src/strata/hw/isa/tensor.py, memory.py):
# shared-memory bank conflicts counted per warp by sorting, against the np.unique method they replaced
# (kept here as the oracle); wmma.load/store of whole warps from shared memory through one cached
# address pattern, against the general per-element path (same registers, same memory, same counters,
# same faults); and fragment decoding into reused buffers against the plain decode.
"""Fast paths of the tensor-core and shared-memory emulation against the general ones."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_harness import PTX_HEAD

import strata.cuda as cuda
from strata.hw.counters import Counters
from strata.hw.isa import memory, tensor
from strata.hw.isa.memory import Access

# ------------------------------------------------------------------------------------------------
# Bank conflicts: the vectorised count against the np.unique method it replaced
# ------------------------------------------------------------------------------------------------


def unique_conflicts(word: np.ndarray, sel: np.ndarray | None) -> tuple[int, int]:
    """(requests, extra wavefronts) by the former method: np.unique over (warp, word), then over banks."""
    if sel is None and word.size % 32 == 0:
        w = word.reshape(-1, 32)
        requests = w.shape[0]
        span = w.max(axis=1) - w.min(axis=1)
        if (span < 32).all():
            return requests, 0
        rows = w[span >= 32]
        wids = np.repeat(np.arange(rows.shape[0]), 32)
        flat = rows.reshape(-1)
    else:
        lanes = np.arange(word.size) if sel is None else sel
        wids = lanes >> 5
        requests = int(np.unique(wids).size)
        flat = word
    keys = np.unique(wids * (1 << 40) + flat)
    kw, kword = keys >> 40, keys & ((1 << 40) - 1)
    bank_keys = kw * 32 + (kword & 31)
    _, counts = np.unique(bank_keys, return_counts=True)
    ukw = np.unique(bank_keys) >> 5
    per_warp_max = np.zeros(int(ukw.max()) + 1, dtype=np.int64)
    np.maximum.at(per_warp_max, ukw, counts)
    return requests, int((per_warp_max[per_warp_max > 0] - 1).sum())


def counted(word: np.ndarray, sel: np.ndarray | None) -> tuple[int, int]:
    c = Counters()
    memory._count_conflicts(c, Access("shared", sel, None, word * 4))
    return c.shared_requests, c.shared_bank_conflicts


@st.composite
def address_patterns(draw: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """4-byte word indices of a shared access and the lanes issuing them (None: every lane, one word each).

    Lanes follow an affine pattern (stride, base per warp) or random words in a small window (many
    repeats and collisions); `sel` is every lane, a random subset, lanes repeated E times (wmma's
    elements), a ragged repetition, or shuffled."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    warps = draw(st.integers(1, 6))
    n = 32 * warps
    kind = draw(st.sampled_from(["affine", "random"]))
    if kind == "affine":
        stride = draw(st.sampled_from([0, 1, 2, 3, 4, 8, 16, 17, 31, 32, 33, 64, 80]))
        base = rng.integers(0, 4096, warps).repeat(32)
        word = base + (np.arange(n) % 32) * stride
    else:
        word = rng.integers(0, draw(st.sampled_from([4, 40, 100, 2000])), n)
    how = draw(st.sampled_from(["all", "subset", "elements", "ragged", "shuffled"]))
    if how == "all":
        return word.astype(np.int64), None
    lanes = np.arange(n)
    if how == "subset":
        lanes = lanes[rng.random(n) < draw(st.sampled_from([0.05, 0.5, 0.95]))]
        if lanes.size == 0:
            lanes = np.array([int(rng.integers(0, n))])
        return word[lanes].astype(np.int64), lanes
    if how == "shuffled":
        return word.astype(np.int64), rng.permutation(n)
    E = draw(st.sampled_from([1, 2, 4, 8, 16]))
    reps = np.full(n, E) if how == "elements" else rng.integers(1, E + 1, n)
    owner = np.repeat(lanes, reps)
    extra = rng.integers(0, draw(st.sampled_from([1, 8, 64])), owner.size)  # each element's own word
    return (word[owner] + extra).astype(np.int64), owner


@settings(max_examples=300, deadline=None)
@given(address_patterns())
def test_conflicts_match_the_unique_method(pattern: tuple[np.ndarray, np.ndarray | None]) -> None:
    word, sel = pattern
    assert counted(word, sel) == unique_conflicts(word, sel)


def test_conflicts_of_known_patterns() -> None:
    lanes = np.arange(32)
    assert counted(lanes, None) == (1, 0)  # consecutive words: one wavefront
    assert counted(lanes * 2, None) == (1, 1)  # stride 2: two words per bank
    assert counted(lanes * 32, None) == (1, 31)  # one bank, 32 words
    assert counted(np.zeros(32, np.int64), None) == (1, 0)  # broadcast
    assert counted(np.concatenate([lanes * 32, lanes]), None) == (2, 31)  # two warps, one conflicted
    owner = np.repeat(lanes, 8)  # 8 words per lane, a row of 16 words per lane pair, rows 40 words apart
    word = (owner // 2) * 40 + (owner % 2) * 8 + np.tile(np.arange(8), 32)
    assert counted(word, owner) == unique_conflicts(word, owner)


def test_warp_bank_conflicts_rows() -> None:
    rows = np.array([np.arange(32), np.arange(32) * 32, np.full(32, 7), np.arange(32) * 2])
    assert memory.warp_bank_conflicts(rows).tolist() == [0, 31, 0, 1]
    assert memory.warp_bank_conflicts(np.zeros((0, 32), np.int64)).shape == (0,)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-5, 2**41), max_size=300))
def test_distinct_counts_like_unique(values: list[int]) -> None:
    a = np.array(values, dtype=np.int64)
    assert memory._distinct(a) == np.unique(a).size


# ------------------------------------------------------------------------------------------------
# Fragment decoding: reused buffers against the plain decode, bit for bit
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("et", ["f16", "bf16", "tf32", "f32"])
def test_values_decode_like_the_plain_path(et: str) -> None:
    rng = np.random.default_rng(3)
    regs = rng.integers(0, 2**32, (96, 4), dtype=np.uint64).astype(np.uint32)
    regs[0] = 0x7F80FFFF if et == "bf16" else 0x7FC00000  # inf and NaN patterns
    with np.errstate(invalid="ignore"):  # signalling NaN patterns widen with the invalid flag
        got = tensor._values(regs, et, "test").copy()
        want = tensor._decode(tensor._unpack(regs, et), et)
    assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("shape,matrix,et", [("m16n16k16", "a", "f16"), ("m16n16k16", "b", "bf16"),
                                             ("m8n32k16", "c", "f32"), ("m16n16k8", "a", "tf32")])
def test_row_major_fragments_are_reshapes(shape: str, matrix: str, et: str) -> None:
    frag = tensor._fragment("wmma", shape, matrix, et)
    vals = np.arange(64 * frag.per_lane, dtype=np.float64).reshape(64, -1)
    want = vals.reshape(-1, frag.lin.size)[:, frag.inv].reshape(-1, *frag.shape)
    got = frag.to_matrix(vals)
    assert frag.row_major and np.array_equal(got, want)
    back = frag.from_matrix(got)
    assert np.array_equal(back, got.reshape(got.shape[0], -1)[:, frag.lin].reshape(-1, frag.per_lane))


# ------------------------------------------------------------------------------------------------
# wmma.load / wmma.store from shared memory: the cached-pattern path against the per-element path
# ------------------------------------------------------------------------------------------------

FRAGS = {  # name -> (matrix, layout, type, registers, element bytes)
    "a_row_bf16": ("a", "row", "bf16", 4, 2),
    "b_col_f16": ("b", "col", "f16", 8, 2),
    "a_col_bf16": ("a", "col", "bf16", 4, 2),
    "c_row_f32": ("c", "row", "f32", 8, 4),
}


def wmma_kernel(frag: str, generic: bool, skew: bool, store: bool) -> str:
    """Fill 16 KiB of shared memory with per-block data, point each warp at `s + warp * wstep`
    (+16 bytes on odd lanes when `skew`), wmma.load a fragment with stride `ld` (and, if `store`,
    wmma.store it back as D at the same place), then copy the registers and all of shared out."""
    matrix, layout, et, nregs, _ = FRAGS[frag]
    regs = ", ".join(f"%v{j}" for j in range(nregs))
    if generic:
        addr = ["cvt.u64.u32 %rd3, %r10;", "cvta.shared.u64 %rd3, %rd3;"]
        ref, space = "[%rd3]", ""
    else:
        addr, ref, space = [], "[%r10]", ".shared"
    op = [f"wmma.load.{matrix}.sync.aligned.{layout}.m16n16k16{space}.{et} {{{regs}}}, {ref}, %r7;"]
    if store:
        op.append(f"wmma.store.d.sync.aligned.{layout}.m16n16k16{space}.f32 {ref}, {{{regs}}}, %r7;")
        op.append("bar.sync 0;")
    outs = [f"st.global.u32 [%rd0+{4 * j}], %v{j};" for j in range(nregs)]
    return PTX_HEAD + "\n".join([
        ".visible .entry k(.param .u64 out, .param .u64 smem, .param .u32 ld, .param .u32 wstep)", "{",
        ".reg .pred %p;", ".reg .b16 %h;", ".reg .b32 %r<16>;", f".reg .b32 %v<{nregs}>;", ".reg .b64 %rd<8>;",
        ".shared .align 32 .b8 s[16384];",
        "mov.u32 %r0, %tid.x;", "mov.u32 %r1, %ntid.x;", "mov.u32 %r2, %ctaid.x;", "mov.u32 %r3, %r0;",
        "FILL:", "setp.ge.u32 %p, %r3, 8192;", "@%p bra FILLED;",
        "mad.lo.u32 %r4, %r3, 40503, %r2;", "shr.u32 %r5, %r4, 3;", "cvt.u16.u32 %h, %r5;",
        "shl.b32 %r5, %r3, 1;", "mov.u32 %r6, s;", "add.u32 %r5, %r5, %r6;", "st.shared.u16 [%r5], %h;",
        "add.u32 %r3, %r3, %r1;", "bra FILL;",
        "FILLED:", "bar.sync 0;",
        "ld.param.u32 %r7, [ld];", "ld.param.u32 %r8, [wstep];", "shr.u32 %r9, %r0, 5;", "mov.u32 %r6, s;",
        "mad.lo.u32 %r10, %r9, %r8, %r6;",
        *(["and.b32 %r11, %r0, 1;", "shl.b32 %r11, %r11, 4;", "add.u32 %r10, %r10, %r11;"] if skew else []),
        *addr, *op,
        "mad.lo.u32 %r11, %r2, %r1, %r0;", "ld.param.u64 %rd0, [out];", "cvta.to.global.u64 %rd0, %rd0;",
        f"mul.wide.u32 %rd1, %r11, {4 * nregs};", "add.s64 %rd0, %rd0, %rd1;", *outs,
        # shared memory out: block b's 16 KiB at smem + b * 16384, 4 bytes per thread per step
        "ld.param.u64 %rd4, [smem];", "cvta.to.global.u64 %rd4, %rd4;", "mul.wide.u32 %rd5, %r2, 16384;",
        "add.s64 %rd4, %rd4, %rd5;", "shl.b32 %r3, %r0, 2;",
        "COPY:", "setp.ge.u32 %p, %r3, 16384;", "@%p bra DONE;",
        "mov.u32 %r6, s;", "add.u32 %r5, %r3, %r6;", "ld.shared.u32 %r12, [%r5];",
        "cvt.u64.u32 %rd6, %r3;", "add.s64 %rd7, %rd4, %rd6;", "st.global.u32 [%rd7], %r12;",
        "shl.b32 %r13, %r1, 2;", "add.u32 %r3, %r3, %r13;", "bra COPY;",
        "DONE:", "ret;", "}",
    ])


def run_wmma(text: str, ld: int, wstep: int, nregs: int, general: bool, monkeypatch: pytest.MonkeyPatch,
             blocks: int = 3, threads: int = 128) -> tuple[np.ndarray, np.ndarray, dict[str, Any], int]:
    """(registers, shared memory, counters, fast-path hits) of one launch, through the general path if asked."""
    hits = [0]
    fast = tensor._shared_fast

    def spy(*args: Any) -> bool:
        ok = False if general else fast(*args)
        hits[0] += ok
        return ok

    monkeypatch.setattr(tensor, "_shared_fast", spy)
    out = cuda.zeros(blocks * threads * nregs, np.uint32)
    smem = cuda.zeros(blocks * 16384, np.uint8)
    report = cuda.Module.from_ptx(text).get_function("k").launch(
        (blocks,), (threads,), (out, smem, np.uint32(ld), np.uint32(wstep)))
    try:
        counters = dataclasses.asdict(report.counters)  # waits for the launch
    finally:
        monkeypatch.setattr(tensor, "_shared_fast", fast)
    return out.get(), smem.get(), counters, hits[0]


@pytest.mark.parametrize("frag", list(FRAGS))
@pytest.mark.parametrize("generic,ld,wstep", [(True, 24, 1024), (False, 40, 48), (True, 16, 0), (False, 72, 2048)])
def test_wmma_load_from_shared_matches_the_general_path(frag: str, generic: bool, ld: int, wstep: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, et, nregs, size = FRAGS[frag]
    ld = ld * 2 // size if size == 4 else ld  # keep rows 16-byte aligned and inside 16 KiB
    text = wmma_kernel(frag, generic, skew=False, store=False)
    regs, smem, ctr, hits = run_wmma(text, ld, wstep, nregs, False, monkeypatch)
    regs0, smem0, ctr0, hits0 = run_wmma(text, ld, wstep, nregs, True, monkeypatch)
    assert hits > 0 and hits0 == 0
    assert np.array_equal(regs, regs0) and np.array_equal(smem, smem0)
    assert ctr == ctr0
    assert regs.any()


@pytest.mark.parametrize("frag", ["c_row_f32"])
def test_wmma_store_to_shared_matches_the_general_path(frag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nregs = FRAGS[frag][3]
    text = wmma_kernel(frag, True, skew=False, store=True)
    regs, smem, ctr, hits = run_wmma(text, 20, 2048, nregs, False, monkeypatch)
    regs0, smem0, ctr0, hits0 = run_wmma(text, 20, 2048, nregs, True, monkeypatch)
    assert hits > 0 and hits0 == 0
    assert np.array_equal(regs, regs0) and np.array_equal(smem, smem0) and ctr == ctr0
    assert ctr["shared_store_bytes"] > 0


def test_wmma_load_with_lane_dependent_bases_takes_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    text = wmma_kernel("a_row_bf16", True, skew=True, store=False)
    regs, smem, ctr, hits = run_wmma(text, 24, 1024, 4, False, monkeypatch)
    regs0, smem0, ctr0, _ = run_wmma(text, 24, 1024, 4, True, monkeypatch)
    assert hits == 0
    assert np.array_equal(regs, regs0) and ctr == ctr0


def test_wmma_load_past_shared_memory_is_reported_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Warp 2's tile starts at the end of the 16 KiB array: both paths report the same fault."""
    text = wmma_kernel("a_row_bf16", True, skew=False, store=False)
    reports = []
    for general in (False, True):
        with pytest.raises(cuda.DeviceFault) as ei:
            run_wmma(text, 24, 8192, 4, general, monkeypatch, blocks=1)
        cuda.current_device().reset()
        reports.append(ei.value.report)
    fast, slow = reports
    assert fast["space"] == "shared" and fast["instruction"].startswith("wmma.load.a")
    assert fast["thread"] == slow["thread"] and fast["address"] == slow["address"]
    assert fast["reason"] == slow["reason"]
