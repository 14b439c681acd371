"""The native executor's eight-lanes-at-a-time real run (hw/native/lanegroups.py) against the reference.

-O3 code runs a segment's lanes in groups of eight when the dry run saw every planned access follow its
predicted pattern (one address for the group, or consecutive ones). These kernels run where the pattern
holds (16x16 and 8x8 tiles, rows of 16), where it does not (rows of 4: a group spans two rows; rows of 12:
padding lanes), and with NaNs of every kind in a dot product whose chain keeps no canonical NaN between its
fmas: outputs bit for bit, every counter and every fault report identical to the reference's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import fault_report, on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402

GEMM = r"""
extern "C" __global__ void sgemm(int n, const float* A, const float* B, float* C) {
  __shared__ float As[T][T], Bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += T) {
    As[ty][tx] = A[row * n + k0 + tx]; Bs[ty][tx] = B[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
"""

ROWS = r"""
extern "C" __global__ void rowmix(const float* x, float* y) {
  __shared__ float s[1024];
  int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x;
  int i = (blockIdx.x * blockDim.y + ty) * bx + tx;      // consecutive along x
  s[ty * bx + tx] = x[i];
  __syncthreads();
  float acc = 0.f;
  for (int k = 0; k < bx; ++k) acc += s[ty * bx + k] * (float)(k + 1);   // one address per row
  y[i] = acc;
}
extern "C" __global__ void before(float* y) {
  __shared__ float s[64];
  int i = threadIdx.x;
  s[i] = (float)i;
  __syncthreads();
  y[i] = s[i] + s[i - 1];                                // thread 0 reads below the block's shared memory
}
"""


@pytest.fixture(scope="module")
def gemm16() -> Any:
    return cuda.compile("#define T 16\n" + GEMM)


@pytest.fixture(scope="module")
def rows() -> Any:
    return cuda.compile(ROWS)


def _gemm(monkeypatch: pytest.MonkeyPatch, mod: Any, tile: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = a.shape[0]

    def make() -> Any:
        c = cuda.to_device(np.zeros((n, n), np.float32))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), c), [c]

    (c,), counters, _ = on_both_executors(
        monkeypatch, lambda args: mod.get_function("sgemm")((n // tile, n // tile), (tile, tile), args), make)
    assert counters["shared_bank_conflicts"] >= 0 and counters["shared_requests"] > 0
    return c


@pytest.mark.parametrize("tile", [8, 16])
def test_tiled_gemm_is_the_references(monkeypatch: pytest.MonkeyPatch, gemm16: Any, tile: int) -> None:
    mod = gemm16 if tile == 16 else cuda.compile(f"#define T {tile}\n" + GEMM)
    rng = np.random.default_rng(tile)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    c = _gemm(monkeypatch, mod, tile, a, b)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_nans_of_every_kind_leave_the_chain_canonical(monkeypatch: pytest.MonkeyPatch, gemm16: Any) -> None:
    """The inner product keeps no canonical NaN between its fmas (codegen._nan_feeds_arith): quiet and
    signalling NaNs of both signs and any payload, infinities (inf * 0), -0 and subnormals still give the
    reference's bits, NaN results all 0x7fffffff."""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((32, 32), dtype=np.float32), rng.standard_normal((32, 32), dtype=np.float32)
    specials = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0xFFA5A5A5, 0x7F800000, 0xFF800000, 0x80000000,
                         0x00000001, 0x807FFFFF], np.uint32).view(np.float32)
    for k, v in enumerate(specials):
        a[3 * k % 32, (5 * k) % 32] = v
        b[(7 * k) % 32, (11 * k + 1) % 32] = v
    b[4, :] = 0.0  # inf * 0 in some rows: an invalid operation's NaN
    c = _gemm(monkeypatch, gemm16, 16, a, b)
    bits = c.view(np.uint32)
    assert np.isnan(c).any() and np.all(bits[np.isnan(c)] == 0x7FFFFFFF)


@pytest.mark.parametrize("block", [(16, 4), (4, 16), (12, 4), (32, 2)], ids=["rows-of-16", "rows-of-4",
                                                                            "rows-of-12", "rows-of-32"])
def test_rows_whether_or_not_the_groups_hold(monkeypatch: pytest.MonkeyPatch, rows: Any,
                                             block: tuple[int, int]) -> None:
    """Rows of 16 or 32 follow the predicted patterns; in rows of 4 a group of eight lanes spans two rows (the
    row's one address is two), in rows of 12 a block ends in padding lanes: both run lane by lane."""
    bx, by = block
    blocks = 6
    x = np.random.default_rng(bx).standard_normal(blocks * bx * by).astype(np.float32)

    def make() -> Any:
        y = cuda.to_device(np.zeros_like(x))
        return (cuda.to_device(x), y), [y]

    (y,), _, _ = on_both_executors(monkeypatch, lambda args: rows.get_function("rowmix")(blocks, block, args), make)
    want = (x.reshape(-1, bx).astype(np.float64) @ np.arange(1, bx + 1)).repeat(bx)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_a_follower_below_its_leaders_first_byte_is_a_fault(monkeypatch: pytest.MonkeyPatch, rows: Any) -> None:
    """`s[i - 1]` counts from `s[i]`'s warp summary; for thread 0 its address wraps below 0. The native check
    of the group's lowest address catches it (it once checked only the highest) and the reference reports."""
    def launch() -> Any:
        return rows.get_function("before")(1, 64, (cuda.to_device(np.zeros(64, np.float32)),))

    ref = fault_report(monkeypatch, "reference", launch)
    assert fault_report(monkeypatch, "native", launch) == ref
    assert ref["thread"] == (0, 0, 0)


def test_planned_accesses_follow_the_thread_index(gemm16: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The static prediction (lanegroups.strides) on NVRTC's SGEMM: `As[ty][k]` is one address along x, `Bs[k][tx]`
    and the tile loads move 4 bytes per lane; -O3 code plans the group loop for all of them and -O0 code
    for none."""
    from strata.hw.jit import Program
    from strata.hw.native import codegen as cg
    from strata.hw.native import lanegroups
    from strata.hw.ptx.ir import Mem
    from strata.hw.ptx.parser import parse

    program = Program(parse(gemm16.ptx), {})
    fn = program.functions["sgemm"].fn
    strides = lanegroups.strides(fn.body, fn.regs)
    shared_loads = [(ins.operands[1].base.name, ins.operands[1].offset) for ins in fn.body
                    if ins.opcode == "ld" and "shared" in ins.mods]
    assert len(shared_loads) == 32
    by_step = {off: strides.get(base) for base, off in shared_loads}
    assert {by_step[4 * k] for k in range(1, 16)} == {0}  # As[ty][k]: the row's one address
    assert {by_step[64 * k] for k in range(1, 16)} == {4}  # Bs[k][tx]: consecutive words
    bases = {op.base.name for ins in fn.body if ins.opcode in ("ld", "st") and "param" not in ins.mods
             for op in ins.operands if isinstance(op, Mem)}
    assert all(strides.get(r) in (0, 4) for r in bases)

    seen: list[int] = []
    real = lanegroups.address

    def spy(g: Any, d: Any, i: Any) -> Any:
        got = real(g, d, i)
        if got is not None:
            seen.append(id(d))
        return got

    monkeypatch.setattr(lanegroups, "address", spy)
    cg.KernelCodegen(program, program.functions["sgemm"]).build()
    assert seen == []
    cg.KernelCodegen(program, program.functions["sgemm"], lane_groups=True).build()
    assert len(seen) == 2 + 2 + 32  # the tile loads and stores, and the inner loop's 32 shared loads
