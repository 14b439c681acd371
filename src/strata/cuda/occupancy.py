"""The CUDA occupancy API: how many blocks of a kernel fit on one SM, and which block size fills it.

Both follow the CUDA occupancy calculator's rules (`strata.hw.occupancy.occupancy` documents them):
registers per thread (from ptxas when present, else the live-range estimate), static plus dynamic
shared memory, warps and blocks per SM.

Example:
    >>> import strata.cuda as cuda
    >>> k = cuda.compile('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }').get_function("k")
    >>> occupancy_max_active_blocks_per_multiprocessor(k, 256)   # 2048 threads/SM / 256
    8
"""

from __future__ import annotations

from strata.cuda.device import current_device
from strata.cuda.module import Kernel
from strata.errors import CudaError, InvalidLaunchConfig
from strata.hw.occupancy import occupancy


def occupancy_max_active_blocks_per_multiprocessor(kernel: Kernel, block_size: int, dynamic_smem: int = 0) -> int:
    """cudaOccupancyMaxActiveBlocksPerMultiprocessor: resident blocks per SM for `block_size` threads
    and `dynamic_smem` bytes of dynamic shared memory (0 if the block cannot run at all)."""
    if block_size < 1:
        raise CudaError("cudaErrorInvalidValue", f"[occupancy] block_size must be >= 1, got {block_size}")
    device = current_device()
    regs, _ = kernel.registers()
    smem = kernel._static_smem(device) + dynamic_smem
    try:
        return occupancy(device.spec, block_size, regs, smem).blocks_per_sm
    except InvalidLaunchConfig:
        return 0


def occupancy_max_potential_block_size(kernel: Kernel, dynamic_smem: int = 0,
                                       block_size_limit: int = 0) -> tuple[int, int]:
    """cudaOccupancyMaxPotentialBlockSize: (min_grid_size, block_size) — the block size (a multiple
    of the warp size, largest first) that maximizes resident threads per SM, and the grid that fills
    every SM with it. Ties go to the larger block, as CUDA's search from the top does."""
    device = current_device()
    limit = kernel.max_threads_per_block(device)
    if block_size_limit > 0:
        limit = min(limit, block_size_limit)
    warp = device.spec.warp_size
    best_threads, best_block, best_blocks = 0, 0, 0
    for block in range(limit - limit % warp or limit, 0, -warp):
        blocks = occupancy_max_active_blocks_per_multiprocessor(kernel, block, dynamic_smem)
        if blocks * block > best_threads:
            best_threads, best_block, best_blocks = blocks * block, block, blocks
        if best_threads == device.spec.max_threads_per_sm:
            break
    return best_blocks * device.spec.sm_count, best_block
