"""The virtual GPU's device catalogue: what each modelled GPU is (resources, peaks, ids, links).

Source of truth for every hardware number the occupancy calculator and the timing model use.
Figures come from /work/shared/reference/numbers.md; each entry's `sources` maps a field to the
tags of that document ([P#]/[S#] sources, [D] derived by arithmetic, [G] a guess, [U] indicative).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TypeVar

_T = TypeVar("_T")

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
TERA = 1e12

# Precisions every entry lists in `peak_flops` (dense, no sparsity; FLOP/s, or OP/s for int8).
PRECISIONS: tuple[str, ...] = (
    "fp32", "fp64", "fp16", "tensor_fp16", "tensor_bf16", "tensor_tf32", "tensor_fp64", "tensor_fp8", "int8",
)


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model as the virtual hardware presents it.

    "SM" means an NVIDIA streaming multiprocessor or an AMD compute unit (CU); "warp" means a warp or
    a wavefront. Bytes are bytes, bandwidths are bytes/s, FLOP rates are FLOP/s (dense).

    Example:
        >>> spec = get_spec("H100")
        >>> spec.sm_count, spec.warp_size, spec.arch
        (132, 32, 'sm_90')
        >>> round(spec.hbm_bandwidth / 1e12, 2)
        3.35
    """

    name: str  # catalogue key, e.g. "h100"
    product: str  # the name a device query reports
    vendor: str  # 'nvidia' | 'amd'
    arch: str  # 'sm_90', 'sm_80', 'gfx942'
    compute_capability: tuple[int, int]
    sm_count: int
    warp_size: int
    clock_mhz: float  # the clock the vector peaks are quoted at; per-clock rates use it
    peak_flops: Mapping[str, float]  # keys: PRECISIONS
    hbm_bytes: int
    hbm_bandwidth: float  # peak, bytes/s
    l2_bytes: int
    llc_bytes: int  # last cache level before HBM (L2 on NVIDIA, Infinity Cache on MI300X)
    shared_mem_per_sm: int  # largest shared-memory carveout per SM (LDS per CU on AMD)
    shared_mem_per_block: int  # without opt-in
    shared_mem_per_block_optin: int
    regs_per_sm: int  # 32-bit registers (per lane for AMD VGPRs: 4 SIMDs x 512 x 64 lanes)
    max_regs_per_thread: int
    regs_per_block: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_blocks_per_sm: int
    max_block_dim: tuple[int, int, int]
    max_grid_dim: tuple[int, int, int]
    reg_alloc_unit: int  # NVIDIA: registers per warp allocation unit; AMD: VGPR granule per lane
    warp_alloc_granularity: int  # NVIDIA: SM sub-partitions; AMD: SIMDs (EUs) per CU
    smem_alloc_unit: int  # bytes
    smem_reserved_per_block: int  # bytes the runtime keeps per block (1 KiB on cc >= 8.0)
    host_link: tuple[str, float]  # (name, bytes/s per direction)
    gpu_link: tuple[str, float]  # (name, aggregate bytes/s, both directions)
    vendor_id: int
    device_id: int
    tdp_watts: float
    hbm_efficiency: float  # achievable fraction of peak HBM bandwidth (stream-like)
    mamf_flops: Mapping[str, float]  # measured max achievable matmul FLOP/s by precision
    launch_overhead_s: float  # host enqueue cost of one kernel launch
    # Per-SM (per-CU) pipe widths in lanes per clock for the classes not derived from peak FLOPs.
    # The timing model documents how each is used (docs/perf-model.md).
    issue_lanes_per_clk: int  # all schedulers together: NVIDIA 4 x 32, CDNA3 one wave64 VALU op/clk
    pipe_lanes_per_clk: Mapping[str, float]  # 'integer', 'sfu', 'lsu', 'branch'
    alu_latency_cycles: float  # dependent ALU instruction latency
    mem_latency_cycles: float  # average global load latency (L2/HBM mix)
    sources: Mapping[str, str] = field(default_factory=dict)

    def __hash__(self) -> int:  # the mapping fields are unhashable; the name identifies a model
        return hash(self.name)

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6

    @property
    def achievable_hbm_bandwidth(self) -> float:
        """Peak HBM bandwidth times the stream efficiency, the memory roof the model uses."""
        return self.hbm_bandwidth * self.hbm_efficiency

    def gemm_efficiency(self, precision: str = "tensor_bf16") -> float | None:
        """Measured large-GEMM FLOP/s over the spec peak for `precision`, or None if unmeasured."""
        measured = self.mamf_flops.get(precision)
        return measured / self.peak_flops[precision] if measured else None


def _frozen(d: Mapping[str, _T]) -> Mapping[str, _T]:
    return MappingProxyType(dict(d))


# --- NVIDIA constants shared by cc 8.0 and 9.0 (occupancy-calculator table [P2], Modal [S7]) ---
_NV_COMMON: dict[str, object] = dict(
    vendor="nvidia",
    warp_size=32,
    shared_mem_per_block=48 * KiB,
    regs_per_sm=65536,
    max_regs_per_thread=255,
    regs_per_block=65536,
    max_threads_per_sm=2048,
    max_threads_per_block=1024,
    max_blocks_per_sm=32,
    max_block_dim=(1024, 1024, 64),
    max_grid_dim=(2**31 - 1, 65535, 65535),
    reg_alloc_unit=256,
    warp_alloc_granularity=4,
    smem_alloc_unit=128,
    smem_reserved_per_block=1024,
    vendor_id=0x10DE,
    hbm_efficiency=0.88,
    launch_overhead_s=4e-6,
    issue_lanes_per_clk=128,
    # Volta..Hopper SM: 4 sub-partitions, each 16 INT32 lanes, 4 SFU (MUFU) lanes, 8 LD/ST lanes and
    # one branch per clock [G: architecture whitepapers from memory; not in numbers.md].
    pipe_lanes_per_clk=_frozen({"integer": 64, "sfu": 16, "lsu": 32, "branch": 32}),
    alu_latency_cycles=4.0,
    mem_latency_cycles=500.0,
)

_NV_COMMON_SOURCES = {
    "warp_size": "[P2] 32",
    "regs_per_sm": "[P2] 64K x 32-bit; [S7] 65536 on H100",
    "max_threads_per_sm": "[P2], [S7] 2048 (64 warps)",
    "max_blocks_per_sm": "[P2], [S7] 32",
    "reg_alloc_unit": "[P2] 256 regs per warp (cc 8.0); cc 9.0 same [G]",
    "warp_alloc_granularity": "[P2] 4 (cc 8.0); cc 9.0 same [G]",
    "smem_alloc_unit": "[P2] 128 B",
    "smem_reserved_per_block": "[G] 1 KiB per block on cc >= 8.0 (numbers.md section 4)",
    "max_regs_per_thread": "[P2] 255",
    "shared_mem_per_block": "[G] 48 KiB static/default limit (CUDA programming guide, from memory)",
    "max_block_dim": "[G] CUDA limits (1024, 1024, 64)",
    "max_grid_dim": "[G] CUDA limits (2^31-1, 65535, 65535)",
    "vendor_id": "PCI-SIG vendor id of NVIDIA, 0x10de",
    "hbm_efficiency": "[G] numbers.md section 2.2 model default 0.85-0.90; H100 NVL triad ~85% [U], "
    "H100 copy 90.6% [U]",
    "launch_overhead_s": "[G] numbers.md section 2.3 enqueue 2-5 us (CUDA)",
    "issue_lanes_per_clk": "[G] 4 schedulers x 1 warp instruction/clk",
    "pipe_lanes_per_clk": "[G] per-SM lanes/clk: INT 64, SFU 16, LSU 32, branch 32",
    "alu_latency_cycles": "[G] ~4 cycles dependent FMA/ALU latency",
    "mem_latency_cycles": "[G] ~500 cycles average global load latency",
}

_H100_PEAKS = {
    "fp32": 66.9 * TERA,  # [S1,S3,P4]
    "fp64": 33.5 * TERA,  # [S1]
    "fp16": 133.8 * TERA,  # [S1]
    "tensor_fp16": 989.4 * TERA,  # [S1,S3,P4]
    "tensor_bf16": 989.4 * TERA,  # [S1,S3,P4]
    "tensor_tf32": 494.7 * TERA,  # [S1]; P4 494.5
    "tensor_fp64": 66.9 * TERA,  # [S1]
    "tensor_fp8": 1978.9 * TERA,  # [S1,S3,P4]
    "int8": 1978.9 * TERA,  # [S1] dense INT8 tensor TOPS
}

_HOPPER_SOURCES = {
    **_NV_COMMON_SOURCES,
    "sm_count": "[S1,S3,P4] 132 SMs (H200: same GH100 die [S5,S6])",
    "clock_mhz": "[S1] 1980 MHz boost; the vector peaks need it: 67 TF = 128 lanes x 2 x 132 x 1.98 GHz [D]. "
    "NVIDIA's official compute clock is 1830 MHz [P4 note 12], which the tensor peaks use [D]",
    "peak_flops": "[S1,S3,P4] dense; fp16 non-tensor 133.8 TF [S1]",
    "l2_bytes": "[S3,P4] 50 MB (taken as MiB)",
    "shared_mem_per_sm": "[S3,S7] 228 KB per SM",
    "shared_mem_per_block_optin": "[G] 227 KB (228 - 1 KB reserved), Hopper tuning guide from memory",
    "host_link": "[S3] PCIe Gen5 128 GB/s bidirectional -> 64 GB/s per direction [D]",
    "gpu_link": "[S1,S3,S6] NVLink4 900 GB/s (18 x 50 GB/s)",
    "tdp_watts": "[P4,S3] 700 W max TDP",
    "mamf_flops": "[P4] MAMF table (torch.matmul shape sweep)",
}

_H100 = GPUSpec(
    name="h100",
    product="NVIDIA H100 80GB HBM3 (SXM5)",
    arch="sm_90",
    compute_capability=(9, 0),
    sm_count=132,
    clock_mhz=1980.0,
    peak_flops=_frozen(_H100_PEAKS),
    hbm_bytes=80 * GiB,
    hbm_bandwidth=3.35e12,
    l2_bytes=50 * MiB,
    llc_bytes=50 * MiB,
    shared_mem_per_sm=228 * KiB,
    shared_mem_per_block_optin=227 * KiB,
    host_link=("PCIe Gen5 x16", 64e9),
    gpu_link=("NVLink4", 900e9),
    device_id=0x2330,
    tdp_watts=700.0,
    mamf_flops=_frozen({"tensor_bf16": 794.5 * TERA, "tensor_fp8": 1402.6 * TERA}),
    sources=_frozen({
        **_HOPPER_SOURCES,
        "hbm_bytes": "[S3] 80 GB HBM3; taken as 80 GiB (5 stacks x 16 GiB) [G]",
        "hbm_bandwidth": "[S3,P4] 3.35 TB/s",
        "device_id": "0x2330 H100 SXM5 (from the brief; PCI id database)",
    }),
    **_NV_COMMON,  # type: ignore[arg-type]
)

_H200 = GPUSpec(
    name="h200",
    product="NVIDIA H200 (SXM)",
    arch="sm_90",
    compute_capability=(9, 0),
    sm_count=132,
    clock_mhz=1980.0,
    peak_flops=_frozen(_H100_PEAKS),  # [P4, S6] same compute as H100
    hbm_bytes=141 * GiB,
    hbm_bandwidth=4.8e12,
    l2_bytes=50 * MiB,
    llc_bytes=50 * MiB,
    shared_mem_per_sm=228 * KiB,
    shared_mem_per_block_optin=227 * KiB,
    host_link=("PCIe Gen5 x16", 64e9),
    gpu_link=("NVLink4", 900e9),
    device_id=0x2335,
    tdp_watts=700.0,
    # [P4]: H100 BF16 row says "H200 is the same"; FP8 measured on H200 itself.
    mamf_flops=_frozen({"tensor_bf16": 794.5 * TERA, "tensor_fp8": 1453.4 * TERA}),
    sources=_frozen({
        **_HOPPER_SOURCES,
        "peak_flops": "[P4] 67 TF FP32, 494.5 TF32, 989 BF16, 1979 FP8/INT8; rest same as H100 [S6,D]",
        "hbm_bytes": "[P4,S5] 141 GB HBM3e; taken as GiB [G]",
        "hbm_bandwidth": "[P4,S5] 4.8 TB/s",
        "host_link": "[S5] PCIe Gen5 128 GB/s -> 64 GB/s per direction [D]",
        "gpu_link": "[S5,S6] NVLink 900 GB/s",
        "tdp_watts": "[P4] 700 W max TDP",
        "device_id": "0x2335 H200 (from the brief; PCI id database)",
    }),
    **_NV_COMMON,  # type: ignore[arg-type]
)

_A100 = GPUSpec(
    name="a100",
    product="NVIDIA A100-SXM4-80GB",
    arch="sm_80",
    compute_capability=(8, 0),
    sm_count=108,
    clock_mhz=1410.0,
    peak_flops=_frozen({
        "fp32": 19.5 * TERA,  # [S1,P4]
        "fp64": 9.7 * TERA,  # [S1]
        "fp16": 78.0 * TERA,  # [S2b] 4x FP32
        "tensor_fp16": 312.0 * TERA,  # [S1,P4]
        "tensor_bf16": 312.0 * TERA,  # [S1,P4]
        "tensor_tf32": 156.0 * TERA,  # [S1,P4]
        "tensor_fp64": 19.5 * TERA,  # [S1]
        "tensor_fp8": 0.0,  # [P4] no FP8 tensor cores on Ampere
        "int8": 624.0 * TERA,  # [S1]
    }),
    hbm_bytes=80 * GiB,
    hbm_bandwidth=2.039e12,
    l2_bytes=40 * MiB,
    llc_bytes=40 * MiB,
    shared_mem_per_sm=164 * KiB,
    shared_mem_per_block_optin=163 * KiB,
    host_link=("PCIe Gen4 x16", 32e9),
    gpu_link=("NVLink3", 600e9),
    device_id=0x20B2,
    tdp_watts=400.0,
    mamf_flops=_frozen({"tensor_bf16": 271.2 * TERA}),
    sources=_frozen({
        **_NV_COMMON_SOURCES,
        "sm_count": "[S1,S2] 108 SMs",
        "clock_mhz": "[S2,P4] 1410 MHz boost (19.5 TF = 64 lanes x 2 x 108 x 1.41 GHz [D])",
        "peak_flops": "[S1,P4] dense; fp16 non-tensor 78 TF [S2b]; no FP8 [P4]",
        "hbm_bytes": "[S1,S2] 80 GB HBM2e; taken as GiB [G]",
        "hbm_bandwidth": "[S1,S2] 2039 GB/s (P4 gives 2.00 TB/s)",
        "l2_bytes": "[S2,P4] 40 MB (taken as MiB)",
        "shared_mem_per_sm": "[P2] 167936 B (164 KiB) smem per SM",
        "shared_mem_per_block_optin": "[G] 163 KB per block (164 - 1 KB reserved), CUDA guide from memory",
        "host_link": "[S1] PCIe Gen4 x16 32+32 GB/s",
        "gpu_link": "[S1,S2] NVLink3 600 GB/s",
        "tdp_watts": "[P4,S2] 400 W (SXM)",
        "mamf_flops": "[P4] MAMF BF16 271.2 TF",
        "device_id": "0x20b2 A100 SXM4 80GB (from the brief; PCI id database)",
    }),
    **_NV_COMMON,  # type: ignore[arg-type]
)

_MI300X = GPUSpec(
    name="mi300x",
    product="AMD Instinct MI300X",
    vendor="amd",
    arch="gfx942",
    compute_capability=(9, 4),
    sm_count=304,
    warp_size=64,
    clock_mhz=2100.0,
    peak_flops=_frozen({
        "fp32": 163.4 * TERA,  # [P3] vector FP32 (packed), 256 FLOP/clk/CU
        "fp64": 81.7 * TERA,  # [P3] vector FP64
        "fp16": 163.4 * TERA,  # [G] no separate figure in [P3]; assumed = packed FP32 rate
        "tensor_fp16": 1307.4 * TERA,  # [P3] matrix FP16
        "tensor_bf16": 1307.4 * TERA,  # [P3] matrix BF16
        "tensor_tf32": 653.7 * TERA,  # [P3] (ROCm labels it "Vector TF32")
        "tensor_fp64": 163.4 * TERA,  # [P3] matrix FP64
        "tensor_fp8": 2614.9 * TERA,  # [P3]
        "int8": 2614.9 * TERA,  # [P3]
    }),
    hbm_bytes=192 * GiB,
    hbm_bandwidth=5.3e12,
    l2_bytes=32 * MiB,
    llc_bytes=256 * MiB,
    shared_mem_per_sm=64 * KiB,
    shared_mem_per_block=64 * KiB,
    shared_mem_per_block_optin=64 * KiB,
    regs_per_sm=4 * 512 * 64,  # 4 SIMDs x 512 VGPRs x 64 lanes = 512 KiB [P1,P5]
    max_regs_per_thread=512,
    regs_per_block=4 * 512 * 64,
    max_threads_per_sm=2048,
    max_threads_per_block=1024,
    max_blocks_per_sm=32,
    max_block_dim=(1024, 1024, 1024),
    max_grid_dim=(2**31 - 1, 2**31 - 1, 2**31 - 1),
    reg_alloc_unit=8,
    warp_alloc_granularity=4,
    smem_alloc_unit=512,
    smem_reserved_per_block=0,
    host_link=("PCIe Gen5 x16", 64e9),
    gpu_link=("Infinity Fabric (xGMI) x7", 896e9),
    vendor_id=0x1002,
    device_id=0x74A1,
    tdp_watts=750.0,
    hbm_efficiency=0.75,
    mamf_flops=_frozen({"tensor_bf16": 668.4 * TERA}),
    launch_overhead_s=3e-6,
    # CDNA3 CU: 4 SIMD16 units; a wave64 VALU op takes 4 cycles, so one wave64 op per clock per CU.
    issue_lanes_per_clk=64,
    pipe_lanes_per_clk=_frozen({"integer": 64, "sfu": 16, "lsu": 64, "branch": 64}),
    alu_latency_cycles=8.0,
    mem_latency_cycles=700.0,
    sources=_frozen({
        "sm_count": "[P1] 304 CUs (38 per XCD x 8 XCDs)",
        "warp_size": "[P1] wave64",
        "compute_capability": "[G] gfx942 reported as 9.4 by HIP",
        "clock_mhz": "[P4] 2100 MHz peak engine clock; 1307.4 TF = 2.1 GHz x 304 x 2048 [D from P3]",
        "peak_flops": "[P3] ROCm MI300 peak table; fp16 non-tensor [G] (not found in sources)",
        "hbm_bytes": "[P1,P3] 192 GiB HBM3",
        "hbm_bandwidth": "[P3,P4] 5.3 TB/s (5.6 target missed [S8])",
        "l2_bytes": "[P1] 4 MB per XCD, 32 MB total",
        "llc_bytes": "[P1,P4] Infinity Cache 256 MiB (17 TB/s peak [S9])",
        "shared_mem_per_sm": "[P1] LDS 64 KiB per CU",
        "shared_mem_per_block": "[P5] whole LDS, occ_lds = floor(65536 / L)",
        "shared_mem_per_block_optin": "[P5] 64 KiB",
        "regs_per_sm": "[P1] VGPR file 512 KiB per CU; [P5] 512 VGPRs per EU, 4 EUs per CU",
        "max_regs_per_thread": "[P5] up to 512 VGPRs per wave (256 arch + 256 AGPR)",
        "regs_per_block": "[G] whole CU VGPR file",
        "max_threads_per_sm": "[U] device-query dump 2048; 8 waves/SIMD; not confirmed in an AMD doc [G]",
        "max_threads_per_block": "[G] HIP limit 1024",
        "max_blocks_per_sm": "[G] not found in sources (a [U] dump's value 2 looks wrong)",
        "max_block_dim": "[G] HIP limits (1024, 1024, 1024)",
        "max_grid_dim": "[G] HIP limits",
        "reg_alloc_unit": "[G] 8 VGPRs per granule (CDNA3 ISA section 3.6.4 text seen in the corpus [U]); "
        "numbers.md [P5] says blocks of 16 -- both give 176 for 170",
        "warp_alloc_granularity": "[P5] 4 SIMDs (EUs) per CU",
        "smem_alloc_unit": "[G] 128 dwords (512 B) LDS granule on gfx9, from memory; [P5] does not round",
        "smem_reserved_per_block": "[G] none on AMD",
        "host_link": "[P3] PCIe Gen5 x16; 128 GB/s bidirectional [D] -> 64 GB/s per direction",
        "gpu_link": "[P3] 7 xGMI links; 896 GB/s aggregate [S11, G] (conflicting 448 [S12])",
        "vendor_id": "PCI-SIG vendor id of AMD/ATI, 0x1002",
        "device_id": "0x74a1 MI300X (from the brief; PCI id database)",
        "tdp_watts": "[P4,S13] 750 W typical board power (peak)",
        "hbm_efficiency": "[G] numbers.md section 2.2 model default 0.65-0.80; MI300A triad ~67% [U]",
        "mamf_flops": "[P4] MAMF BF16 668.4 TF (ROCm 6.3, TunableOp)",
        "launch_overhead_s": "[G] numbers.md section 2.3 HIP enqueue 1.5-4 us",
        "issue_lanes_per_clk": "[G] one wave64 VALU op per clock per CU (4 x SIMD16 x 4 cycles)",
        "pipe_lanes_per_clk": "[G] INT 64, transcendental 16, memory 64, branch 64 lanes/clk/CU",
        "alu_latency_cycles": "[G] ~8 cycles",
        "mem_latency_cycles": "[G] ~700 cycles",
    }),
)

# MI250X as ROCm presents it: each of the package's two GCDs is a device (gfx90a, CDNA2), so the entry is one
# GCD: half the package's CUs, HBM and peaks. Figures from AMD's MI250X data sheet, from memory [G].
_MI250X = replace(
    _MI300X,
    name="mi250x",
    product="AMD Instinct MI250X",
    arch="gfx90a",
    compute_capability=(9, 0),
    sm_count=110,
    clock_mhz=1700.0,
    peak_flops=_frozen({
        "fp32": 47.9 * TERA,  # packed FP32, per GCD (95.7 per package)
        "fp64": 23.9 * TERA,
        "fp16": 47.9 * TERA,  # [G] assumed = packed FP32 rate, as for the MI300X entry
        "tensor_fp16": 191.5 * TERA,  # 1700 MHz x 110 CUs x 1024 FLOP/clk
        "tensor_bf16": 191.5 * TERA,
        "tensor_tf32": 47.9 * TERA,  # CDNA2 has no TF32: the FP32 matrix rate
        "tensor_fp64": 47.9 * TERA,
        "tensor_fp8": 191.5 * TERA,  # CDNA2 has no FP8: priced at the FP16 matrix rate
        "int8": 191.5 * TERA,
    }),
    hbm_bytes=64 * GiB,
    hbm_bandwidth=1.6384e12,
    l2_bytes=8 * MiB,
    llc_bytes=8 * MiB,  # no Infinity Cache on CDNA2: the L2 is the last level
    host_link=("PCIe Gen4 x16", 32e9),
    gpu_link=("Infinity Fabric", 400e9),
    device_id=0x740C,
    tdp_watts=500.0,
    mamf_flops=_frozen({}),
    sources=_frozen({
        "sm_count": "[G] 220 CUs per MI250X package, 110 per GCD; ROCm lists each GCD as a device",
        "clock_mhz": "[G] 1700 MHz peak engine clock (MI250X data sheet)",
        "peak_flops": "[G] MI250X data sheet package peaks halved per GCD (FP64 vector 47.9, matrix 95.7; FP32 "
        "packed 95.7; FP16/BF16/INT8 matrix 383); no TF32/FP8 on CDNA2",
        "hbm_bytes": "[G] 128 GB HBM2e per package, 64 GiB per GCD",
        "hbm_bandwidth": "[G] 3.2768 TB/s per package, half per GCD",
        "l2_bytes": "[G] 8 MB L2 per GCD",
        "device_id": "[G] 0x740c MI250X (PCI id database, from memory)",
        "tdp_watts": "[G] 500 W per OAM package (both GCDs)",
        "launch_overhead_s": "numbers.md: Crusher (MI250X) HIP async launch 1.34-3.74 us",
    }),
)

_CATALOG: dict[str, GPUSpec] = {s.name: s for s in (_H100, _H200, _A100, _MI250X, _MI300X)}

# Spellings users and tools write, lower-cased and with '_'/' ' folded to '-'.
_ALIASES: dict[str, str] = {
    "h100-sxm": "h100", "h100-sxm5": "h100", "h100sxm": "h100", "h100-80gb": "h100",
    "h200-sxm": "h200", "h200sxm": "h200",
    "a100-sxm": "a100", "a100-sxm4": "a100", "a100-80gb": "a100", "a100-sxm4-80gb": "a100",
    "mi300": "mi300x", "mi-300x": "mi300x", "instinct-mi300x": "mi300x", "gfx942": "mi300x",
    "mi250": "mi250x", "mi-250x": "mi250x", "instinct-mi250x": "mi250x", "gfx90a": "mi250x",
}


def models() -> list[str]:
    """The catalogue's model names, sorted.

    Example:
        >>> models()
        ['a100', 'h100', 'h200', 'mi250x', 'mi300x']
    """
    return sorted(_CATALOG)


def get_spec(name: str) -> GPUSpec:
    """Look up a GPU model by name, case-insensitively, accepting common aliases ('H100', 'h100-sxm').

    Args:
        name: model name or alias.
    Returns:
        The frozen `GPUSpec`.
    Raises:
        ValueError: the name is not in the catalogue; the message lists the known models.

    Example:
        >>> get_spec("H200").hbm_bandwidth
        4800000000000.0
        >>> get_spec("h100-sxm").name
        'h100'
    """
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key, key)
    if key not in _CATALOG:
        raise ValueError(f"[get_spec] unknown GPU model {name!r}; known models: {', '.join(models())}")
    return _CATALOG[key]
