"""Occupancy of code-object kernels on a CDNA CU from their VGPRs (AGPRs included), SGPRs and LDS: each
limit on a kernel whose metadata is varied, checked against the rule worked by hand (512 VGPRs per SIMD lane
in granules of 8, 800 SGPRs per SIMD in granules of 16, 64 KiB LDS per CU in 512-byte granules, 8 waves per
SIMD, 4 SIMDs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.errors import InvalidLaunchConfig
from strata.hip.amd import CodeObjectModule
from strata.hw.amdgpu.codeobject import KernelInfo, parse
from strata.hw.amdgpu.occupancy import kernel_occupancy, vgprs_per_wave
from strata.hw.catalog import get_spec

HERE = Path(__file__).parent
MI300X = get_spec("mi300x")


def sgemm(**changes: int) -> KernelInfo:
    k = parse((HERE / "sgemm.co").read_bytes()).kernels["sgemm"]
    return dataclasses.replace(k, **changes)  # type: ignore[arg-type]


def test_few_registers_fill_the_wave_slots() -> None:
    occ = kernel_occupancy(sgemm(vgpr_count=16, sgpr_count=20, group_segment_fixed_size=0), MI300X, 256)
    # 4 waves per workgroup, 8 waves x 4 SIMDs = 32 slots -> 8 workgroups
    assert (occ.workgroups_per_cu, occ.waves_per_workgroup, occ.waves_per_simd) == (8, 4, 8)
    assert occ.occupancy == 1.0 and "waves" in occ.limiting_factors


def test_vgprs_sgprs_and_lds_each_limit() -> None:
    # 128 VGPRs: 512 // 128 = 4 waves per SIMD -> 16 per CU -> 4 workgroups of 4 waves
    occ = kernel_occupancy(sgemm(vgpr_count=128, sgpr_count=20, group_segment_fixed_size=0), MI300X, 256)
    assert (occ.workgroups_per_cu, occ.limiting_factors) == (4, ("vgprs",))
    # 170 VGPRs round up to 176: 512 // 176 = 2 waves per SIMD -> 8 per CU -> 2 workgroups
    assert kernel_occupancy(sgemm(vgpr_count=170, sgpr_count=20, group_segment_fixed_size=0), MI300X,
                            256).workgroups_per_cu == 2
    # 102 SGPRs round up to 112: 800 // 112 = 7 waves per SIMD -> 28 per CU -> 7 workgroups of 4 waves
    occ = kernel_occupancy(sgemm(vgpr_count=16, sgpr_count=102, group_segment_fixed_size=0), MI300X, 256)
    assert (occ.workgroups_per_cu, occ.sgprs_per_wave, occ.limiting_factors) == (7, 112, ("sgprs",))
    # 20,000 bytes of LDS round up to 20,480: 65,536 // 20,480 = 3 workgroups
    occ = kernel_occupancy(sgemm(vgpr_count=16, sgpr_count=20, group_segment_fixed_size=20_000), MI300X, 256)
    assert (occ.workgroups_per_cu, occ.lds_per_workgroup, occ.limiting_factors) == (3, 20_480, ("lds",))
    # dynamic LDS counts too
    assert kernel_occupancy(sgemm(vgpr_count=16, sgpr_count=20, group_segment_fixed_size=0), MI300X, 256,
                            dynamic_lds=40_000).workgroups_per_cu == 1


def test_agprs_share_the_vgpr_file() -> None:
    k = parse((HERE / "gfx90a" / "mfma90a.co").read_bytes()).kernels["mfma_f32_16_agpr"]
    assert k.agpr_count > 0 and vgprs_per_wave(k) == k.descriptor.accum_offset + k.agpr_count
    big = dataclasses.replace(k, vgpr_count=100, agpr_count=128)
    # the wave needs accum_offset + 128 VGPRs of the unified file
    need = -(-(k.descriptor.accum_offset + 128) // 8) * 8
    occ = kernel_occupancy(big, get_spec("mi250x"), 64)
    assert occ.vgprs_per_wave == need and occ.waves_per_simd == min(8, 512 // need)


def test_impossible_workgroups_are_rejected() -> None:
    with pytest.raises(InvalidLaunchConfig):
        kernel_occupancy(sgemm(vgpr_count=520), MI300X, 64)
    with pytest.raises(InvalidLaunchConfig):
        kernel_occupancy(sgemm(), MI300X, 2048)
    with pytest.raises(InvalidLaunchConfig):
        kernel_occupancy(sgemm(), get_spec("h100"), 64)


def test_hip_occupancy_api_uses_the_code_object() -> None:
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        k = CodeObjectModule.from_file(HERE / "sgemm.co").get_function("sgemm")
        want = kernel_occupancy(k.info, MI300X, 256).workgroups_per_cu
        assert hip.occupancy_max_active_blocks_per_multiprocessor(k, 256) == want > 0
        assert hip.occupancy_max_active_blocks_per_multiprocessor(k, 256, 1 << 20) == 0  # more LDS than a CU has
    finally:
        cuda.set_device(before)
