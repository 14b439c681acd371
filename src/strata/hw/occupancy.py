"""Occupancy of the virtual GPU: how many blocks of a kernel one SM (or CU) holds at once.

Source of truth for the residency rules the timing model uses: the CUDA occupancy-calculator rules
for NVIDIA models and the ROCm VGPR/LDS rule for MI300X (numbers.md section 4), plus the kernel's
register count, estimated from PTX declarations or read from `ptxas -v` when ptxas is installed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from strata import config
from strata.errors import InvalidLaunchConfig
from strata.hw.catalog import GPUSpec

# Order in which ties are reported (the order the CUDA calculator checks its limits).
LIMITING_FACTORS: tuple[str, ...] = ("warps", "registers", "shared_memory", "blocks")

_AMD_MAX_WAVES_PER_SIMD = 8  # [P5] / numbers.md section 1: 8 waves per SIMD on CDNA3


@dataclass(frozen=True)
class Occupancy:
    """Residency of one kernel configuration on one SM (CU).

    `active_warps` and `max_warps` count the device's own warps (wave64 on MI300X). `limits` holds
    the blocks-per-SM each resource alone would allow; `limiting_factor` is the first of
    LIMITING_FACTORS whose limit equals `blocks_per_sm`, and `limiting_factors` lists every tie.
    """

    blocks_per_sm: int
    warps_per_block: int
    active_warps: int
    max_warps: int
    occupancy: float  # active_warps / max_warps
    limiting_factor: str
    limiting_factors: tuple[str, ...]
    limits: Mapping[str, int] = field(default_factory=dict)
    regs_per_warp: int = 0  # registers allocated per warp (per wave: VGPRs after granule rounding)
    smem_per_block: int = 0  # shared memory allocated per block, reservation and rounding included

    def __str__(self) -> str:
        return (f"{self.blocks_per_sm} blocks/SM, {self.active_warps}/{self.max_warps} warps "
                f"({self.occupancy:.0%}), limited by {self.limiting_factor}")


def occupancy(spec: GPUSpec, threads_per_block: int, regs_per_thread: int, smem_per_block: int) -> Occupancy:
    """Blocks of one kernel resident per SM, by the occupancy-calculator rules of `spec`'s vendor.

    NVIDIA (cudaOccupancyMaxActiveBlocksPerMultiprocessor's rules):
        warps_per_block = ceil(threads / 32)
        regs_per_warp   = roundup(regs * 32, 256)
        by_registers    = floor(regs_per_sm / 4 / regs_per_warp) * 4 // warps_per_block   (4 sub-partitions)
        by_smem         = smem_per_sm // roundup(smem + 1 KiB reserved, 128)
        by_warps        = 64 // warps_per_block ;  by_blocks = 32
    AMD MI300X (ROCm workload guide [P5]):
        waves_per_wg = ceil(threads / 64) ; occ_vgpr = min(8, 512 // roundup(vgprs, 8))
        by_registers = occ_vgpr * 4 // waves_per_wg ; by_smem = 65536 // roundup(lds, 512)
        by_warps     = 32 // waves_per_wg

    Args:
        spec: the device.
        threads_per_block: threads in one block (product of the block dims).
        regs_per_thread: registers (VGPRs on AMD) per thread; 0 means "unknown, do not limit".
        smem_per_block: static plus dynamic shared memory (LDS) per block, in bytes.
    Returns:
        An `Occupancy`.
    Raises:
        InvalidLaunchConfig: the block cannot run at all (too many threads, registers or shared memory).

    Example:
        >>> from strata.hw.catalog import get_spec
        >>> occ = occupancy(get_spec("h100"), 256, 64, 0)
        >>> occ.blocks_per_sm, occ.occupancy, occ.limiting_factor
        (4, 0.5, 'registers')
    """
    if not 0 < threads_per_block <= spec.max_threads_per_block:
        raise InvalidLaunchConfig(message=(
            f"[occupancy] threads_per_block must be in [1, {spec.max_threads_per_block}] on {spec.name}, "
            f"got {threads_per_block}"))
    if regs_per_thread < 0 or smem_per_block < 0:
        raise ValueError(f"[occupancy] regs_per_thread and smem_per_block must be >= 0, "
                         f"got {regs_per_thread} and {smem_per_block}")
    if regs_per_thread > spec.max_regs_per_thread:
        raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources", (
            f"[occupancy] regs_per_thread must be <= {spec.max_regs_per_thread} on {spec.name}, "
            f"got {regs_per_thread}"))
    if smem_per_block > spec.shared_mem_per_block_optin:
        raise InvalidLaunchConfig(message=(
            f"[occupancy] smem_per_block must be <= {spec.shared_mem_per_block_optin} bytes on {spec.name}, "
            f"got {smem_per_block}"))
    if spec.vendor == "amd":
        return _occupancy_amd(spec, threads_per_block, regs_per_thread, smem_per_block)
    return _occupancy_nvidia(spec, threads_per_block, regs_per_thread, smem_per_block)


def _occupancy_nvidia(spec: GPUSpec, threads: int, regs: int, smem: int) -> Occupancy:
    warps = -(-threads // spec.warp_size)
    subpartitions = spec.warp_alloc_granularity
    regs_per_warp = _round_up(regs * spec.warp_size, spec.reg_alloc_unit)
    # The hardware's per-block check assumes the block's warps are spread over all sub-partitions.
    if regs_per_warp * _round_up(warps, subpartitions) > spec.regs_per_block:
        raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources", (
            f"[occupancy] {threads} threads x {regs} registers need "
            f"{regs_per_warp * _round_up(warps, subpartitions)} registers per block, "
            f"more than {spec.regs_per_block} on {spec.name}"))
    if regs_per_warp:
        # Each sub-partition has its own quarter of the register file; a warp lives in one of them.
        warps_by_regs = (spec.regs_per_sm // subpartitions // regs_per_warp) * subpartitions
        by_regs = warps_by_regs // warps
    else:
        by_regs = spec.max_blocks_per_sm
    smem_alloc = _round_up(smem + spec.smem_reserved_per_block, spec.smem_alloc_unit)
    by_smem = spec.shared_mem_per_sm // smem_alloc if smem_alloc else spec.max_blocks_per_sm
    limits = {
        "warps": spec.max_warps_per_sm // warps,
        "registers": by_regs,
        "shared_memory": by_smem,
        "blocks": spec.max_blocks_per_sm,
    }
    return _finish(spec, warps, limits, regs_per_warp, smem_alloc)


def _occupancy_amd(spec: GPUSpec, threads: int, vgprs: int, lds: int) -> Occupancy:
    waves = -(-threads // spec.warp_size)
    simds = spec.warp_alloc_granularity
    vgprs_per_simd = spec.regs_per_sm // simds // spec.warp_size  # 512 on CDNA3
    granted = _round_up(vgprs, spec.reg_alloc_unit)
    waves_per_simd = _AMD_MAX_WAVES_PER_SIMD
    if granted:
        waves_per_simd = min(waves_per_simd, vgprs_per_simd // granted)
    by_regs = waves_per_simd * simds // waves
    if by_regs == 0:
        raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources", (
            f"[occupancy] a workgroup of {waves} waves x {granted} VGPRs does not fit one CU of {spec.name} "
            f"({waves_per_simd} waves per SIMD x {simds} SIMDs)"))
    lds_alloc = _round_up(lds, spec.smem_alloc_unit)
    limits = {
        "warps": spec.max_warps_per_sm // waves,
        "registers": by_regs,
        "shared_memory": spec.shared_mem_per_sm // lds_alloc if lds_alloc else spec.max_blocks_per_sm,
        "blocks": spec.max_blocks_per_sm,
    }
    return _finish(spec, waves, limits, granted, lds_alloc)


def _finish(
    spec: GPUSpec, warps: int, limits: dict[str, int], regs_per_warp: int, smem_alloc: int
) -> Occupancy:
    blocks = min(limits.values())
    ties = tuple(f for f in LIMITING_FACTORS if limits[f] == blocks)
    return Occupancy(
        blocks_per_sm=blocks,
        warps_per_block=warps,
        active_warps=blocks * warps,
        max_warps=spec.max_warps_per_sm,
        occupancy=blocks * warps / spec.max_warps_per_sm,
        limiting_factor=ties[0],
        limiting_factors=ties,
        limits=limits,
        regs_per_warp=regs_per_warp,
        smem_per_block=smem_alloc,
    )


def max_registers_per_thread(spec: GPUSpec, threads_per_block: int) -> int:
    """The most registers per thread with which one block of `threads_per_block` still fits an SM.

    Example:
        >>> from strata.hw.catalog import get_spec
        >>> max_registers_per_thread(get_spec("h100"), 1024), max_registers_per_thread(get_spec("h100"), 128)
        (64, 255)
        >>> max_registers_per_thread(get_spec("mi300x"), 1024)
        128
    """
    warps = -(-threads_per_block // spec.warp_size)
    units = spec.warp_alloc_granularity
    if spec.vendor == "amd":
        # The workgroup's waves share the 4 SIMDs; each SIMD has 512 VGPRs per lane.
        per_lane = spec.regs_per_sm // units // spec.warp_size // -(-warps // units)
        regs = per_lane // spec.reg_alloc_unit * spec.reg_alloc_unit
    else:
        # The per-block hardware check: warps rounded up to the sub-partitions, whole allocation units.
        per_warp = spec.regs_per_block // _round_up(warps, units)
        regs = per_warp // spec.reg_alloc_unit * spec.reg_alloc_unit // spec.warp_size
    return max(0, min(spec.max_regs_per_thread, regs))


# --- register counts ---------------------------------------------------------------------------

def estimate_registers(ptx_function_regs: Mapping[str, str]) -> int:
    """Estimate registers per thread from a PTX function's register declarations.

    An estimate, usually an over-estimate: NVRTC declares one virtual register per value and
    ptxas packs them into far fewer (saxpy declares 27 32-bit equivalents; ptxas uses 10). Each
    declared register counts its width in 32-bit units (`.b64`/`.f64` count 2, `.b128` 4, 8- and
    16-bit types 1); predicates live in their own file and are not counted. The sum is rounded up
    to even and clamped to [16, 255]. Prefer `ptxas_registers` when ptxas is installed.

    Args:
        ptx_function_regs: register name -> PTX type without the dot, as `strata.hw.ptx.ir.Function.regs`.
    Returns:
        Registers per thread, in [16, 255].

    Example:
        >>> estimate_registers({"%r1": "b32", "%rd1": "b64", "%p1": "pred"})
        16
        >>> estimate_registers({f"%rd{i}": "u64" for i in range(20)})
        40
    """
    words = 0
    for ptx_type in ptx_function_regs.values():
        words += _register_words(ptx_type)
    words += words % 2
    return max(16, min(255, words))


def _register_words(ptx_type: str) -> int:
    t = ptx_type.lstrip(".").lower()
    if t == "pred":
        return 0
    m = re.search(r"(\d+)(?:x(\d+))?$", t)
    if not m:
        return 1  # unknown spelling: assume one 32-bit register
    bits = int(m.group(1)) * int(m.group(2) or 1)  # f16x2 -> 32 bits
    return max(1, -(-bits // 32))


def ptxas_registers(ptx_text: str, kernel_name: str, arch: str = "sm_90") -> int | None:
    """Registers per thread that `ptxas -v` reports for `kernel_name`, or None when unavailable.

    ptxas belongs to the nvcc toolchain, so it is used only when `strata.config` resolves nvcc
    (env `STRATA_NVCC`: a path to nvcc, or "0" to disable; default nvcc on PATH). ptxas is taken
    from nvcc's directory, else from PATH. Returns None if the toolchain is absent or disabled, or
    ptxas rejects the PTX (e.g. a newer PTX ISA than it knows) or does not name the kernel.
    Results are cached per (PTX text, arch) in the process and on disk beside the PTX cache (keyed also
    by the ptxas binary), so a new process (a `strata run` rank, a native program's runtime process)
    does not run ptxas again for a kernel it has seen.

    Example:
        >>> ptxas_registers(".version 8.0", "k", arch="sm_90") is None  # no such kernel
        True
    """
    nvcc = config.settings().nvcc
    if nvcc is None:
        return None
    beside = nvcc.with_name("ptxas")
    exe = str(beside) if os.access(beside, os.X_OK) else shutil.which("ptxas")
    if exe is None:
        return None
    return _ptxas_report(exe, ptx_text, arch).get(kernel_name)


_TOO_NEW = re.compile(r"Unsupported \.version (\d+\.\d+); current version is '(\d+\.\d+)'")
_VERSION_LINE = re.compile(r"^\.version \d+\.\d+", re.MULTILINE)
_COMPILING = re.compile(r"Compiling (?:entry )?function '([^']+)'")
_USED = re.compile(r"Used (\d+) registers")


@functools.lru_cache(maxsize=128)
def _ptxas_report(exe: str, ptx_text: str, arch: str) -> dict[str, int]:
    path = _report_path(exe, ptx_text, arch)
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            cached = json.loads(path.read_text())
            if isinstance(cached, dict) and all(isinstance(v, int) for v in cached.values()):
                return cached
    regs = _run_ptxas(exe, ptx_text, arch)
    if regs is not None and path is not None:
        with contextlib.suppress(OSError):  # a read-only or full cache only costs the next process a run
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(regs))
            os.replace(tmp, path)  # atomic: a concurrent reader sees the whole report or none
    return regs or {}


def _report_path(exe: str, ptx_text: str, arch: str) -> Path | None:
    try:
        st = os.stat(exe)
    except OSError:
        return None
    key = hashlib.sha256(f"{exe}\0{st.st_size}\0{st.st_mtime_ns}\0{arch}\0".encode() + ptx_text.encode())
    return config.settings().cache_dir / "ptxas" / f"{key.hexdigest()}.json"


def _run_ptxas(exe: str, ptx_text: str, arch: str) -> dict[str, int] | None:
    """ptxas's register counts per kernel; {} when ptxas refuses the PTX, None when it could not run
    (not worth remembering: the next process may succeed)."""
    with tempfile.TemporaryDirectory(prefix="strata-ptxas-") as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as f:
            f.write(ptx_text)
        try:
            proc = subprocess.run(
                [exe, f"-arch={arch}", "-v", src, "-o", os.path.join(tmp, "kernel.cubin")],
                capture_output=True, text=True, timeout=120, check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if proc.returncode != 0:
        # An older ptxas than NVRTC (CUDA 13.0 beside NVRTC 13.5) refuses the newer `.version` line
        # only; the same code at the version it knows gives the same register allocation.
        m = _TOO_NEW.search(proc.stderr)
        if m and m.group(2) != m.group(1):
            older = _VERSION_LINE.sub(f".version {m.group(2)}", ptx_text, count=1)
            return _ptxas_report(exe, older, arch)
        return {}
    regs: dict[str, int] = {}
    current: str | None = None
    for line in (proc.stdout + proc.stderr).splitlines():
        if m := _COMPILING.search(line):
            current = m.group(1)
        elif (m := _USED.search(line)) and current is not None:
            regs[current] = int(m.group(1))
    return regs


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit if unit > 1 else x
