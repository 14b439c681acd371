"""The device catalogue against /work/shared/reference/numbers.md, and the occupancy rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from strata import config
from strata.errors import InvalidLaunchConfig
from strata.hw.catalog import PRECISIONS, GiB, KiB, MiB, get_spec, models
from strata.hw.occupancy import estimate_registers, max_registers_per_thread, occupancy, ptxas_registers

# --- catalogue values (numbers.md section 1 and 2.1) ------------------------------------------------


def test_models_and_aliases() -> None:
    assert models() == ["a100", "h100", "h200", "mi250x", "mi300x"]
    for alias in ("H100", "h100", "h100-sxm", "H100_SXM5", " h100 "):
        assert get_spec(alias).name == "h100"
    assert get_spec("MI300X").name == "mi300x"
    assert get_spec("A100-SXM4-80GB").name == "a100"


def test_unknown_model_lists_known_models() -> None:
    with pytest.raises(ValueError, match="unknown GPU model 'v100'") as e:
        get_spec("v100")
    for m in models():
        assert m in str(e.value)


def test_h200() -> None:
    s = get_spec("h200")
    assert s.hbm_bytes == 141 * GiB
    assert s.hbm_bandwidth == pytest.approx(4.8e12)
    assert s.sm_count == 132
    assert s.l2_bytes == 50 * MiB
    assert s.peak_flops["tensor_bf16"] == pytest.approx(989.4e12, rel=1e-3)
    assert s.peak_flops["tensor_fp8"] == pytest.approx(1979e12, rel=1e-3)
    assert (s.vendor_id, s.device_id) == (0x10DE, 0x2335)
    assert s.tdp_watts == 700


def test_h100() -> None:
    s = get_spec("h100")
    assert (s.vendor, s.arch, s.compute_capability) == ("nvidia", "sm_90", (9, 0))
    assert s.hbm_bytes == 80 * GiB and s.hbm_bandwidth == pytest.approx(3.35e12)
    assert s.peak_flops["fp32"] == pytest.approx(66.9e12)
    assert s.peak_flops["fp64"] == pytest.approx(33.5e12)
    assert s.peak_flops["fp16"] == pytest.approx(133.8e12)
    assert s.peak_flops["tensor_tf32"] == pytest.approx(494.7e12)
    assert s.peak_flops["tensor_fp64"] == pytest.approx(66.9e12)
    assert s.peak_flops["int8"] == pytest.approx(1978.9e12)
    assert s.shared_mem_per_sm == 228 * KiB and s.shared_mem_per_block_optin == 227 * KiB
    assert s.shared_mem_per_block == 48 * KiB
    assert s.device_id == 0x2330
    assert s.host_link == ("PCIe Gen5 x16", 64e9)
    # MAMF: 794.5 of 989 TF -> 80.3 % [P4]
    assert s.gemm_efficiency("tensor_bf16") == pytest.approx(0.803, abs=0.002)
    assert s.gemm_efficiency("fp64") is None


def test_a100() -> None:
    s = get_spec("a100")
    assert (s.arch, s.compute_capability, s.sm_count, s.clock_mhz) == ("sm_80", (8, 0), 108, 1410)
    assert s.hbm_bandwidth == pytest.approx(2.039e12)
    assert s.peak_flops["fp32"] == pytest.approx(19.5e12)
    assert s.peak_flops["tensor_bf16"] == pytest.approx(312e12)
    assert s.peak_flops["tensor_fp8"] == 0.0  # no FP8 tensor cores on Ampere
    assert s.shared_mem_per_sm == 167936  # [P2]
    assert s.l2_bytes == 40 * MiB and s.tdp_watts == 400 and s.device_id == 0x20B2
    assert s.gemm_efficiency() == pytest.approx(0.869, abs=0.002)


def test_mi300x() -> None:
    s = get_spec("mi300x")
    assert (s.vendor, s.arch, s.warp_size, s.sm_count) == ("amd", "gfx942", 64, 304)
    assert s.hbm_bytes == 192 * GiB and s.hbm_bandwidth == pytest.approx(5.3e12)
    assert s.peak_flops["tensor_fp16"] == pytest.approx(1307.4e12)
    assert s.peak_flops["fp32"] == pytest.approx(163.4e12)
    assert s.peak_flops["tensor_fp8"] == pytest.approx(2614.9e12)
    assert s.l2_bytes == 32 * MiB and s.llc_bytes == 256 * MiB
    assert s.shared_mem_per_sm == 64 * KiB
    assert (s.vendor_id, s.device_id) == (0x1002, 0x74A1)
    assert s.hbm_efficiency == 0.75 and s.tdp_watts == 750
    # 1307.4 TF = 2.1 GHz x 304 CUs x 2048 FLOP/clk [D from P3]
    assert s.clock_hz * s.sm_count * 2048 == pytest.approx(s.peak_flops["tensor_fp16"], rel=1e-3)


@pytest.mark.parametrize("name", models())
def test_every_entry_is_complete(name: str) -> None:
    s = get_spec(name)
    assert set(s.peak_flops) == set(PRECISIONS)
    assert s.max_warps_per_sm * s.warp_size == s.max_threads_per_sm == 2048
    assert s.max_threads_per_block == 1024 and s.max_block_dim[0] == 1024
    assert s.hbm_efficiency == (0.88 if s.vendor == "nvidia" else 0.75)
    assert 1e-6 <= s.launch_overhead_s <= 5e-6
    for key in ("sm_count", "clock_mhz", "peak_flops", "hbm_bytes", "hbm_bandwidth", "device_id"):
        assert s.sources.get(key), f"{name}: no source for {key}"
    # Vector FP32 peak is what the model's clock and lane count reproduce.
    if s.vendor == "nvidia":
        lanes = s.peak_flops["fp32"] / (2 * s.sm_count * s.clock_hz)
        assert lanes == pytest.approx(128 if s.arch == "sm_90" else 64, rel=0.01)


def test_spec_is_frozen_and_hashable() -> None:
    s = get_spec("h100")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.sm_count = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.peak_flops["fp32"] = 0.0  # type: ignore[index]
    assert {s: 1}[get_spec("H100")] == 1


# --- occupancy: NVIDIA rules (hand-computed) ----------------------------------------------------------


def test_occupancy_limited_by_warps() -> None:
    # 8 warps/block; regs 32*32=1024/warp -> 16 warps per sub-partition -> 64 warps -> 8 blocks (tie).
    occ = occupancy(get_spec("h100"), 256, 32, 0)
    assert occ.blocks_per_sm == 8 and occ.active_warps == 64 and occ.occupancy == 1.0
    assert occ.limiting_factor == "warps"
    assert occ.limiting_factors == ("warps", "registers")


def test_occupancy_limited_by_registers() -> None:
    # 64 regs -> 2048/warp -> 8 warps per sub-partition -> 32 warps -> 4 blocks of 8 warps.
    occ = occupancy(get_spec("h100"), 256, 64, 0)
    assert (occ.blocks_per_sm, occ.occupancy, occ.limiting_factor) == (4, 0.5, "registers")
    # Allocation unit: 37 regs -> 1184 -> 1280/warp -> floor(16384/1280)=12 per sub-partition -> 48 warps.
    occ = occupancy(get_spec("h100"), 128, 37, 0)
    assert (occ.blocks_per_sm, occ.active_warps, occ.regs_per_warp) == (12, 48, 1280)
    # 3-warp blocks divide the 48 warps by 3 (numbers.md's [G] form, dividing by roundup(3, 4), gives 12).
    assert occupancy(get_spec("h100"), 96, 37, 0).blocks_per_sm == 16


def test_occupancy_limited_by_shared_memory_modal_example() -> None:
    # Modal glossary: 32 threads, 8 regs, 12 KB smem on H100 "-> 19 blocks". With the 1 KiB per-block
    # reservation: 233472 // (12288 + 1024) = 17; without it 233472 // 12288 = 19.
    occ = occupancy(get_spec("h100"), 32, 8, 12 * 1024)
    assert (occ.blocks_per_sm, occ.limiting_factor, occ.smem_per_block) == (17, "shared_memory", 13312)
    assert 228 * KiB // (12 * 1024) == 19
    # A100: 48 KiB + 1 KiB reserved per block -> 167936 // 50176 = 3.
    assert occupancy(get_spec("a100"), 128, 32, 48 * KiB).blocks_per_sm == 3


def test_occupancy_limited_by_blocks() -> None:
    # 1-warp blocks, 16 regs: warps allow 64 blocks, registers 128, smem 228 -> the 32-block cap binds.
    occ = occupancy(get_spec("h200"), 32, 16, 0)
    assert (occ.blocks_per_sm, occ.active_warps, occ.occupancy) == (32, 32, 0.5)
    assert occ.limiting_factor == "blocks"


def test_occupancy_rejects_impossible_blocks() -> None:
    h100 = get_spec("h100")
    with pytest.raises(InvalidLaunchConfig, match="threads_per_block"):
        occupancy(h100, 1025, 32, 0)
    with pytest.raises(InvalidLaunchConfig, match="regs_per_thread") as e:
        occupancy(h100, 32, 256, 0)
    assert e.value.name == "cudaErrorLaunchOutOfResources"
    with pytest.raises(InvalidLaunchConfig, match="registers per block"):
        occupancy(h100, 1024, 255, 0)  # 8192 regs/warp x 32 warps > 65536
    with pytest.raises(InvalidLaunchConfig, match="smem_per_block"):
        occupancy(h100, 128, 32, 228 * KiB)
    # 1024 threads x 64 regs is exactly the 65536-register block limit: one block fits.
    assert occupancy(h100, 1024, 64, 0).blocks_per_sm == 1


@pytest.mark.parametrize("name", models())
@pytest.mark.parametrize("threads", [32, 96, 256, 512, 768, 992, 1024])
def test_max_registers_per_thread_is_the_largest_that_fits(name: str, threads: int) -> None:
    spec = get_spec(name)
    r = max_registers_per_thread(spec, threads)
    assert occupancy(spec, threads, r, 0).blocks_per_sm >= 1
    if r < spec.max_regs_per_thread:
        with pytest.raises(InvalidLaunchConfig):
            occupancy(spec, threads, r + 1, 0)
    # H100 hand values: 1024 threads -> 65536 / 32 warps = 2048/warp -> 64; 768 -> 2730 -> 2560/warp -> 80.
    if name == "h100":
        assert r == {1024: 64, 992: 64, 768: 80, 512: 128}.get(threads, 255)


# --- occupancy: AMD rule ([P5] worked examples) ----------------------------------------------------------


def test_occupancy_mi300x() -> None:
    mi = get_spec("mi300x")
    # A: 176 VGPRs, 256 threads (4 waves), 32 KiB LDS -> occ_vgpr 2 -> 2 wg; LDS also 2.
    occ = occupancy(mi, 256, 176, 32 * KiB)
    assert (occ.blocks_per_sm, occ.active_warps, occ.max_warps) == (2, 8, 32)
    assert occ.limiting_factors == ("registers", "shared_memory")
    # 170 VGPRs round up to 176: same as A.
    assert occupancy(mi, 256, 170, 0).blocks_per_sm == 2
    # B: 64 VGPRs, 512 threads (8 waves), 48 KiB LDS -> LDS binds at 1 wg.
    occ = occupancy(mi, 512, 64, 48 * KiB)
    assert (occ.blocks_per_sm, occ.active_warps, occ.limiting_factor) == (1, 8, "shared_memory")
    # Few VGPRs: 8 waves per SIMD, 32 per CU.
    occ = occupancy(mi, 64, 0, 0)
    assert (occ.blocks_per_sm, occ.occupancy, occ.limiting_factor) == (32, 1.0, "warps")
    with pytest.raises(InvalidLaunchConfig):
        occupancy(mi, 1024, 256, 0)  # 16 waves but only 2 waves/SIMD x 4 SIMDs fit


# --- register counts ---------------------------------------------------------------------------------------


def test_estimate_registers() -> None:
    assert estimate_registers({}) == 16
    # saxpy as NVRTC declares it: 5 f32 + 6 b32 + 8 b64 (x2) + 2 pred = 27 words -> 28.
    regs = {f"%f{i}": "f32" for i in range(5)} | {f"%r{i}": "b32" for i in range(6)}
    regs |= {f"%rd{i}": "b64" for i in range(8)} | {"%p0": "pred", "%p1": "pred"}
    assert estimate_registers(regs) == 28
    assert estimate_registers({f"%h{i}": "f16x2" for i in range(17)}) == 18  # 17 words -> even
    assert estimate_registers({f"%q{i}": "b128" for i in range(5)}) == 20
    assert estimate_registers({f"%rd{i}": "u64" for i in range(500)}) == 255


_SAXPY_PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
    .reg .pred %p<2>;
    .reg .f32 %f<5>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    ld.param.u32 %r1, [n];
    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.f32 %f2, [%rd6];
    add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f4, %f2, %f1, %f3;
    st.global.f32 [%rd7], %f4;
DONE:
    ret;
}
"""


def test_ptxas_registers_disabled_by_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NVCC", "0")
    assert ptxas_registers(_SAXPY_PTX, "saxpy") is None


@pytest.mark.nvcc
@pytest.mark.skipif(config.settings().nvcc is None, reason="nvcc/ptxas toolchain not installed or disabled")
def test_ptxas_registers() -> None:
    regs = ptxas_registers(_SAXPY_PTX, "saxpy")
    assert regs is not None and 4 <= regs <= 32
    assert ptxas_registers(_SAXPY_PTX, "no_such_kernel") is None
    assert ptxas_registers("this is not ptx", "saxpy") is None


@pytest.mark.nvcc
@pytest.mark.skipif(config.settings().nvcc is None, reason="nvcc/ptxas toolchain not installed or disabled")
def test_ptxas_report_is_kept_on_disk_for_the_next_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import subprocess

    from strata.hw import occupancy as occ

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path))
    occ._ptxas_report.cache_clear()
    regs = ptxas_registers(_SAXPY_PTX, "saxpy")
    assert regs is not None
    assert list((tmp_path / "ptxas").glob("*.json"))
    # a "new process": the in-memory cache is gone and ptxas must not run again
    occ._ptxas_report.cache_clear()

    def no_ptxas(*a: Any, **k: Any) -> Any:
        raise AssertionError("ptxas ran although its report was cached on disk")

    monkeypatch.setattr(subprocess, "run", no_ptxas)
    assert ptxas_registers(_SAXPY_PTX, "saxpy") == regs
    occ._ptxas_report.cache_clear()
