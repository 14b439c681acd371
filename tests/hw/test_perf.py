"""Timing model v1: bounds, roofs, waves and tail, the L2 footprint rule, and the "modeled" label.

The oracle for each numeric check is the formula in docs/perf-model.md, written out again here
with the catalogue's numbers.
"""

from __future__ import annotations

from typing import Any

import pytest

from strata.hw.catalog import get_spec
from strata.hw.counters import Counters
from strata.hw.perf import ModeledTime, model_launch, pipe_lanes_per_clk


def _counters(warp_inst: dict[str, int], **fields: int) -> Counters:
    c = Counters(**fields)  # type: ignore[arg-type]
    c.warp_instructions.update(warp_inst)
    c.thread_instructions.update({k: 32 * v for k, v in warp_inst.items()})
    return c


def _streaming(n: int) -> Counters:
    """y = a*x + y over n floats: 12 B/element, ~12 warp instructions per warp."""
    w = n // 32
    c = _counters({"fp32": w, "integer": 6 * w, "memory": 3 * w, "control": 2 * w},
                  global_load_bytes=8 * n, global_load_sectors=n // 4, global_store_bytes=4 * n,
                  global_store_sectors=n // 8, global_load_requests=2 * w, global_store_requests=w,
                  threads_launched=n, blocks_launched=n // 256)
    c.flops["fp32"] = 2 * n
    return c


def _fma_heavy(threads: int, fmas_per_thread: int) -> Counters:
    w = threads // 32
    c = _counters({"fp32": w * fmas_per_thread, "memory": w}, global_store_bytes=4 * threads,
                  global_store_sectors=threads // 8, global_store_requests=w, threads_launched=threads)
    c.flops["fp32"] = 2 * threads * fmas_per_thread
    return c


def test_memory_bound_time_is_bytes_over_bandwidth() -> None:
    n = 1 << 26
    h100 = get_spec("h100")
    t = model_launch(h100, _streaming(n), grid_blocks=n // 256, threads_per_block=256, regs_per_thread=16,
                     smem_per_block=0)
    assert t.bound == "memory"
    expected = 12 * n / (3.35e12 * 0.88)
    assert t.memory_s == pytest.approx(expected, rel=1e-9)
    assert t.seconds == pytest.approx(expected + 4e-6, rel=1e-9)
    assert t.dram_bytes == 12 * n
    assert t.achieved_bytes_per_s == pytest.approx(3.35e12 * 0.88, rel=1e-9)
    assert t.compute_s < t.memory_s and t.latency_s < t.memory_s


@pytest.mark.parametrize("gpu", ["h100", "h200", "a100", "mi300x"])
def test_memory_bound_on_every_model(gpu: str) -> None:
    n = 1 << 26
    spec = get_spec(gpu)
    t = model_launch(gpu, _streaming(n), grid_blocks=n // 256, threads_per_block=256, regs_per_thread=16,
                     smem_per_block=0)
    assert t.bound == "memory"
    assert t.kernel_s == pytest.approx(12 * n / (spec.hbm_bandwidth * spec.hbm_efficiency), rel=1e-9)


def test_compute_bound_reaches_fp32_peak() -> None:
    h100 = get_spec("h100")
    blocks = h100.sm_count * 8 * 4  # whole waves: no tail
    threads = blocks * 256
    t = model_launch(h100, _fma_heavy(threads, 4096), grid_blocks=blocks, threads_per_block=256,
                     regs_per_thread=32, smem_per_block=0)
    assert t.bound == "compute"
    assert t.tail_efficiency == 1.0 and t.waves == 4
    # issue-bound: warp_inst * 32 lanes / (128 lanes/clk * 132 SMs * 1.98 GHz)
    warp_inst = threads // 32 * 4097
    assert t.compute_s == pytest.approx(warp_inst * 32 / (128 * 132 * 1.98e9), rel=1e-9)
    assert t.achieved_flops == pytest.approx(h100.peak_flops["fp32"] * 4096 / 4097, rel=2e-3)
    assert t.achieved_flops <= h100.peak_flops["fp32"]


def test_fp64_runs_at_half_rate_on_h100_and_quarter_on_a100_relative_to_issue() -> None:
    assert pipe_lanes_per_clk(get_spec("h100"))["fp64"] == pytest.approx(64, rel=0.01)
    assert pipe_lanes_per_clk(get_spec("a100"))["fp64"] == pytest.approx(32, rel=0.01)
    a100 = get_spec("a100")
    blocks, threads = a100.sm_count * 8, a100.sm_count * 8 * 256
    c = _counters({"fp64": threads // 32 * 1000})
    c.flops["fp64"] = 2 * threads * 1000
    t = model_launch(a100, c, grid_blocks=blocks, threads_per_block=256, regs_per_thread=32, smem_per_block=0)
    assert t.bound == "compute"
    assert t.achieved_flops == pytest.approx(a100.peak_flops["fp64"], rel=1e-9)


def test_tensor_flops_priced_at_requested_precision() -> None:
    h100 = get_spec("h100")
    blocks = h100.sm_count
    c = _counters({"tensor": 1000})
    c.flops["tensor"] = 10**15
    kw: dict[str, Any] = dict(grid_blocks=blocks, threads_per_block=128, regs_per_thread=128,
                              smem_per_block=0)
    fp16 = model_launch(h100, c, **kw)
    fp8 = model_launch(h100, c, tensor_precision="tensor_fp8", **kw)
    assert fp16.compute_s == pytest.approx(1e15 / 989.4e12, rel=1e-9)
    assert fp8.compute_s == pytest.approx(1e15 / 1978.9e12, rel=1e-9)


def test_waves_and_tail() -> None:
    h100 = get_spec("h100")
    smem = 200 * 1024  # one block per SM
    per_block = 100_000  # warp instructions per block, compute-bound

    def run(blocks: int) -> ModeledTime:
        c = _counters({"fp32": blocks * per_block})
        return model_launch(h100, c, grid_blocks=blocks, threads_per_block=1024, regs_per_thread=32,
                            smem_per_block=smem)

    full, tail = run(132), run(133)
    assert full.occupancy.blocks_per_sm == 1 and full.occupancy.limiting_factor == "shared_memory"
    assert (full.waves, tail.waves) == (1, 2)
    assert full.tail_efficiency == 1.0
    assert tail.tail_efficiency == pytest.approx(133 / 264)
    # 133 blocks take as long as 264: the 133rd block runs alone in a second wave.
    assert tail.compute_s == pytest.approx(full.compute_s * 2, rel=1e-9)
    # Several resident blocks per SM: 2113 blocks at 8/SM = 3 waves, but the busiest SM runs only
    # ceil(2113/132) = 17 blocks against 16 for a balanced grid.
    c = _counters({"fp32": 2113 * 1000})
    t = model_launch(h100, c, grid_blocks=2113, threads_per_block=256, regs_per_thread=32, smem_per_block=0)
    assert t.waves == 3 and t.tail_efficiency == pytest.approx(2113 / (132 * 17))


def test_latency_bound_with_too_few_warps() -> None:
    # One block of one warp running a long dependent chain: the throughput terms are tiny.
    h100 = get_spec("h100")
    c = _counters({"fp32": 10_000, "memory": 100}, global_load_requests=100, global_load_sectors=400,
                  global_load_bytes=12_800)
    t = model_launch(h100, c, grid_blocks=1, threads_per_block=32, regs_per_thread=32, smem_per_block=0)
    assert t.bound == "latency"
    assert t.latency_s == pytest.approx((10_000 * 4 + 100 * 500) / 1.98e9, rel=1e-9)


def test_l2_footprint_rule() -> None:
    h100 = get_spec("h100")
    bw = 3.35e12 * 0.88
    # 1 GiB of loads re-reading a 16 MiB array: fits the 50 MiB L2, so DRAM sees the array once.
    sectors = 2**30 // 32
    c = _counters({"memory": sectors // 4}, global_load_bytes=2**30, global_load_sectors=sectors)
    kw: dict[str, Any] = dict(grid_blocks=4096, threads_per_block=256, regs_per_thread=32, smem_per_block=0)
    t = model_launch(h100, c, unique_global_bytes=16 * 2**20, **kw)
    assert t.dram_bytes == 16 * 2**20
    assert t.memory_s == pytest.approx(16 * 2**20 / bw)
    # Without the hint: no reuse assumed, all 1 GiB from DRAM.
    assert model_launch(h100, c, **kw).dram_bytes == 2**30
    # Footprint 200 MiB > L2: re-reads hit with probability 50/200.
    t = model_launch(h100, c, unique_global_bytes=200 * 2**20, **kw)
    expected = 200 * 2**20 + (2**30 - 200 * 2**20) * (1 - 50 / 200)
    assert t.dram_bytes == pytest.approx(expected)


def test_explanation_and_label() -> None:
    n = 1 << 20
    t = model_launch("H100", _streaming(n), grid_blocks=n // 256, threads_per_block=256, regs_per_thread=16,
                     smem_per_block=0)
    assert t.label == "modeled"
    assert str(t).startswith("modeled ")
    assert "memory-bound" in str(t)
    assert len(t.explain()) >= 8
    text = "\n".join(t.explain())
    needles = ("occupancy", "waves = ceil", "issue:", "DRAM =", "memory =", "latency =", "launch overhead")
    for needle in needles:
        assert needle in text
    d = t.as_dict()
    assert d["label"] == "modeled" and d["bound"] == "memory"


def test_empty_kernel_costs_launch_overhead() -> None:
    t = model_launch("a100", Counters(), grid_blocks=1, threads_per_block=1, regs_per_thread=0,
                     smem_per_block=0)
    assert t.seconds == pytest.approx(4e-6)
    assert t.kernel_s == 0 and t.achieved_flops == 0


def test_register_over_estimate_is_clamped() -> None:
    # 255 estimated registers x 1024 threads cannot fit; the model uses 64 (the most that fits) and says so.
    t = model_launch("h100", _streaming(1 << 20), grid_blocks=4096, threads_per_block=1024,
                     regs_per_thread=255, smem_per_block=0)
    assert t.occupancy.blocks_per_sm == 1 and t.occupancy.regs_per_warp == 64 * 32
    assert any("modeled with 64" in line for line in t.explain())


def test_bad_grid_is_rejected() -> None:
    with pytest.raises(ValueError, match="grid_blocks"):
        model_launch("h100", Counters(), grid_blocks=0, threads_per_block=32, regs_per_thread=16,
                     smem_per_block=0)


def test_tensor_work_is_priced_at_its_own_precisions_peak() -> None:
    from strata.hw.catalog import get_spec
    from strata.hw.counters import Counters

    spec = get_spec("h100")
    flops = 2 * 10**12
    times = {}
    for prec in ("tensor_bf16", "tensor_tf32", "tensor_fp64"):
        c = Counters(threads_launched=2**20)
        c.flops["tensor"] = flops
        c.tensor_flops[prec] = flops
        t = model_launch(spec, c, grid_blocks=132 * 8, threads_per_block=128, regs_per_thread=32, smem_per_block=0)
        times[prec] = t.compute_s
        assert t.compute_s == pytest.approx(flops / spec.peak_flops[prec] / t.tail_efficiency, rel=1e-9)
    assert times["tensor_tf32"] / times["tensor_bf16"] == pytest.approx(
        spec.peak_flops["tensor_bf16"] / spec.peak_flops["tensor_tf32"])
