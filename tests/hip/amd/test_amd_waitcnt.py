"""Loads that write their registers at issue (hw/amdgpu/waitcnt.py): which ones qualify, and that kernels give
the same results and counters with and without it (the checked-in code objects, both targets)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from strata.hw.amdgpu import kernarg
from strata.hw.amdgpu.codeobject import KernelInfo
from strata.hw.amdgpu.decoder import Inst
from strata.hw.amdgpu.executor import AmdLaunch, execute, load_program
from strata.hw.amdgpu.waitcnt import loads_completing_at_issue
from strata.hw.counters import Counters

from .test_amd_executor import Board, arch, f32, i32, kernel, p64

__all__ = ["arch"]  # the autouse fixture: every test here runs on the gfx942 and the gfx90a builds

WAIT_VM0 = 0x0F70  # s_waitcnt vmcnt(0)
WAIT_VM1 = 0x0F71  # s_waitcnt vmcnt(1)


def _load(at: int, vdst: int) -> Inst:
    return Inst(at, 8, "GLOBAL", 0, "global_load_dword", {"vdst": vdst, "addr": 0, "data": 0, "saddr": 0x7F})


def _wait(at: int, simm: int) -> Inst:
    return Inst(at, 4, "SOPP", 0, "s_waitcnt", {"simm16": simm})


def _use(at: int, reg: int) -> Inst:
    return Inst(at, 4, "VOP1", 0, "v_mov_b32", {"src0": 256 + reg, "vdst": 20})


def test_the_saxpy_loads_write_at_issue(arch: str) -> None:
    prog = load_program(kernel("saxpy", "saxpy"))
    early = [i.text for i in prog.insts if i.offset in prog.early_loads]
    loads = [i.text for i in prog.insts if "_load_" in i.name and i.fmt in ("GLOBAL", "FLAT")]
    assert loads and early == loads


def test_a_read_before_the_wait_keeps_the_load_queued(arch: str) -> None:
    if arch != "gfx942":
        pytest.skip("patches gfx942 machine code by its bytes")
    k = kernel("saxpy", "saxpy")
    k.code = k.code.replace((0xBF8C0F70).to_bytes(4, "little"), (0xBF800000).to_bytes(4, "little"))
    assert load_program(k).early_loads == frozenset()  # v_fmac reads both loads' registers with no wait before it


def test_retirement_follows_vmcnt_in_order() -> None:
    a, b = _load(0, 4), _load(8, 8)
    # vmcnt(1) retires a (one load issued after it) but not b; b's register is read only after vmcnt(0)
    prog = [a, b, _wait(16, WAIT_VM1), _use(20, 4), _wait(24, WAIT_VM0), _use(28, 8)]
    assert loads_completing_at_issue(prog) == {0, 8}
    # b's register read after vmcnt(1): b had not landed there
    prog = [a, b, _wait(16, WAIT_VM1), _use(20, 8), _wait(24, WAIT_VM0)]
    assert loads_completing_at_issue(prog) == {0}


def test_a_branch_away_keeps_the_load_queued_and_a_join_does_not() -> None:
    prog = [_load(0, 4), Inst(8, 4, "SOPP", 0, "s_cbranch_scc1", {"simm16": 1}), _use(12, 9), _wait(16, WAIT_VM0)]
    assert loads_completing_at_issue(prog) == frozenset()  # the waves that branch meet no wait on this path
    call = Inst(8, 4, "SOP1", 0, "s_swappc_b64", {"sdst": 30, "ssrc0": 4})
    assert loads_completing_at_issue([_load(0, 4), call, _wait(12, WAIT_VM0)]) == frozenset()
    # a branch from further on lands inside the window (the join after an `if` block holding the load): the
    # waves that issued the load still run the straight line to the wait, and the others have no load to see
    back = Inst(16, 4, "SOPP", 0, "s_cbranch_scc1", {"simm16": 0xFFFD})  # to offset 8
    prog = [_load(0, 4), _use(8, 9), _wait(12, WAIT_VM0), back]
    assert loads_completing_at_issue(prog) == {0}


def test_an_unretired_load_at_the_end_of_the_code_is_not_early() -> None:
    assert loads_completing_at_issue([_load(0, 4), _use(8, 9)]) == frozenset()


def _run(k: KernelInfo, early: bool, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[bytes],
         board: Board) -> Counters:
    prog = load_program(k)
    assert prog.early_loads  # the kernel has loads this is about
    if not early:
        prog = dataclasses.replace(prog, early_loads=frozenset())
    seg = kernarg.build(k, args, grid, block)
    addr = board.put(seg + bytes(-len(seg) % 256), "kernarg")
    return execute(prog, AmdLaunch(grid, block, addr, k.group_segment_fixed_size), board.mem, batch_lanes=1 << 12)


@pytest.mark.parametrize("case", ["saxpy", "sgemm", "softmax", "reduce"])
def test_results_and_counters_are_the_same_without_it(case: str) -> None:
    out: list[tuple[np.ndarray, Counters]] = []
    for early in (True, False):
        rng = np.random.default_rng(7)  # the same inputs for both runs
        b = Board()
        if case == "saxpy":
            n = 1000
            x, y = b.put(rng.random(n, np.float32)), b.put(rng.random(n, np.float32))
            c = _run(kernel("saxpy", "saxpy"), early, (4, 1, 1), (256, 1, 1), [i32(n), f32(1.5), p64(x), p64(y)], b)
            res = b.get(y, n)
        elif case == "sgemm":
            m, n, kk = 24, 40, 33
            a, bm = b.put(rng.random((m, kk), np.float32)), b.put(rng.random((kk, n), np.float32))
            cc = b.put(np.zeros((m, n), np.float32))
            c = _run(kernel("sgemm", "sgemm"), early, (3, 2, 1), (16, 16, 1),
                     [p64(a), p64(bm), p64(cc), i32(m), i32(n), i32(kk)], b)
            res = b.get(cc, m * n)
        elif case == "softmax":
            rows, cols = 3, 300
            x, y = b.put(rng.standard_normal((rows, cols)).astype(np.float32)), b.put(np.zeros(rows * cols, np.float32))
            c = _run(kernel("softmax", "softmax"), early, (rows, 1, 1), (256, 1, 1), [p64(x), p64(y), i32(cols)], b)
            res = b.get(y, rows * cols)
        else:
            n, blocks = 3000, 12
            x, o = b.put(rng.random(n, np.float32)), b.put(np.zeros(blocks, np.float32))
            c = _run(kernel("reduce", "reduce_sum"), early, (blocks, 1, 1), (256, 1, 1), [p64(x), p64(o), i32(n)], b)
            res = b.get(o, blocks)
        out.append((res, c))
    (r1, c1), (r2, c2) = out
    assert r1.tobytes() == r2.tobytes()
    assert dataclasses.asdict(c1) == dataclasses.asdict(c2)
