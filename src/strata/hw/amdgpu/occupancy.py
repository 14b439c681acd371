"""Occupancy of a code object's kernel on a CDNA compute unit, from the resources its metadata declares.

A CU has 4 SIMDs; each SIMD holds up to 8 wavefronts (CDNA2/CDNA3), limited by its register files and the
CU's LDS:
- VGPRs: 512 per SIMD lane, granted in granules of 8. On gfx90a+ the accumulation registers share the file:
  a wave needs `accum_offset + agpr_count` when it uses AGPRs, else `vgpr_count`.
- SGPRs: 800 per SIMD (GFX9), granted in granules of 16; the metadata's `.sgpr_count` already counts VCC,
  FLAT_SCRATCH and XNACK_MASK.
- LDS: 64 KiB per CU, granted in 512-byte granules (static `group_segment_fixed_size` + dynamic LDS).
Workgroups per CU follow the same rule as the catalogue's AMD occupancy ([P5]): waves_per_simd * 4 //
waves_per_workgroup, with the LDS and the per-CU workgroup cap beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from strata.errors import InvalidLaunchConfig
from strata.hw.amdgpu.codeobject import KernelInfo
from strata.hw.catalog import GPUSpec

WAVE = 64
SIMDS_PER_CU = 4
MAX_WAVES_PER_SIMD = 8
SGPRS_PER_SIMD = 800
SGPR_GRANULE = 16


@dataclass(frozen=True)
class AmdOccupancy:
    """Resident workgroups and waves per CU for one kernel and workgroup size, and what limits them."""

    workgroups_per_cu: int
    waves_per_workgroup: int
    waves_per_simd: int  # the register-file limit (VGPRs, SGPRs, the 8-wave cap)
    vgprs_per_wave: int  # granted (rounded to the granule), AGPRs included
    sgprs_per_wave: int  # granted
    lds_per_workgroup: int  # granted bytes
    limits: dict[str, int]  # workgroups per CU each resource allows
    limiting_factors: tuple[str, ...]

    @property
    def active_waves(self) -> int:
        return self.workgroups_per_cu * self.waves_per_workgroup

    @property
    def occupancy(self) -> float:
        """Active waves over the CU's 32 wave slots."""
        return self.active_waves / (SIMDS_PER_CU * MAX_WAVES_PER_SIMD)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def vgprs_per_wave(kernel: KernelInfo) -> int:
    """VGPRs a wave of the kernel occupies: arch VGPRs, plus the AGPRs after `accum_offset` (gfx90a+)."""
    if kernel.agpr_count:
        return max(kernel.vgpr_count, kernel.descriptor.accum_offset + kernel.agpr_count)
    return kernel.vgpr_count


def kernel_occupancy(kernel: KernelInfo, spec: GPUSpec, threads_per_workgroup: int,
                     dynamic_lds: int = 0) -> AmdOccupancy:
    """Workgroups of `threads_per_workgroup` work-items one CU of `spec` holds at once.

    Raises:
        InvalidLaunchConfig: the workgroup cannot run at all (too many work-items, VGPRs or LDS).
    """
    if spec.vendor != "amd":
        raise InvalidLaunchConfig(message=f"[occupancy {kernel.name}] {spec.product} is not an AMD device")
    if not 1 <= threads_per_workgroup <= min(spec.max_threads_per_block, kernel.max_flat_workgroup_size):
        raise InvalidLaunchConfig(message=f"[occupancy {kernel.name}] {threads_per_workgroup} work-items per "
                                  f"workgroup; the kernel allows 1..{kernel.max_flat_workgroup_size}")
    simd_vgprs = spec.regs_per_sm // SIMDS_PER_CU // WAVE  # 512 per lane on CDNA2/3
    vgprs = _round_up(max(vgprs_per_wave(kernel), 1), spec.reg_alloc_unit)
    sgprs = _round_up(max(kernel.sgpr_count, 1), SGPR_GRANULE)
    lds = kernel.group_segment_fixed_size + dynamic_lds
    lds_granted = _round_up(lds, spec.smem_alloc_unit) if lds else 0
    if vgprs > simd_vgprs or lds_granted > spec.shared_mem_per_sm:
        raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources", f"[occupancy {kernel.name}] {vgprs} VGPRs per "
                                  f"wave (max {simd_vgprs}) and {lds} bytes of LDS (max {spec.shared_mem_per_sm})")
    waves_wg = -(-threads_per_workgroup // WAVE)
    by_vgpr = min(MAX_WAVES_PER_SIMD, simd_vgprs // vgprs)
    by_sgpr = min(MAX_WAVES_PER_SIMD, SGPRS_PER_SIMD // sgprs)
    waves_simd = min(by_vgpr, by_sgpr)
    limits = {
        "waves": MAX_WAVES_PER_SIMD * SIMDS_PER_CU // waves_wg,
        "vgprs": by_vgpr * SIMDS_PER_CU // waves_wg,
        "sgprs": by_sgpr * SIMDS_PER_CU // waves_wg,
        "lds": spec.shared_mem_per_sm // lds_granted if lds_granted else spec.max_blocks_per_sm,
        "workgroups": spec.max_blocks_per_sm,
    }
    wgs = min(limits.values())
    binding = tuple(k for k, v in limits.items() if v == wgs)
    return AmdOccupancy(wgs, waves_wg, waves_simd, vgprs, sgprs, lds_granted, limits, binding)
