"""Running a code object's kernel on an opened device (the part of KFD + the CP firmware that sets a
wave's initial state up): the kernarg block the packet points at is placed in device memory, where the
kernel's scalar loads read it, and the CDNA engine (hw/amdgpu) runs the dispatch."""

from __future__ import annotations

import struct
import time
from typing import TYPE_CHECKING

from strata import config, trace
from strata.hw.amdgpu.executor import AmdLaunch, AmdProgram, execute
from strata.hw.cp import KernelObject
from strata.hw.engine import LaunchConfig, LaunchControl, LaunchResult

if TYPE_CHECKING:
    from strata.driver.device import DeviceFile

# Scalar loads fetch up to 64 bytes at once past the last argument a kernel uses; ROCr's kernarg pool
# hands out blocks this size-aligned, so reading the tail of the block is legal.
KERNARG_ALIGN = 256


def dispatch_packet(launch: LaunchConfig, group_segment: int, kernarg: int) -> bytes:
    """The 64-byte AQL kernel dispatch packet as the kernel sees it through dispatch_ptr (the workgroup and
    grid sizes clang reads from it in device functions)."""
    wg = launch.block
    grid = tuple(g * b for g, b in zip(launch.grid, launch.block, strict=True))
    dims = 3 if wg[2] > 1 or grid[2] > 1 else 2 if wg[1] > 1 or grid[1] > 1 else 1
    # header, setup, workgroup x/y/z, reserved, grid x/y/z, private and group segment sizes, kernel_object,
    # kernarg_address, reserved, completion_signal
    return struct.pack("<HHHHHHIIIIIQQQQ", 2, dims, *wg, 0, *grid, 0, group_segment, 0, kernarg, 0, 0)


def run_code_object_kernel(device: DeviceFile, ko: KernelObject, launch: LaunchConfig,
                           control: LaunchControl) -> LaunchResult:
    """Run one dispatch of `ko` (kind 'amdgcn'); `launch.params` is the kernarg segment's bytes."""
    prog: AmdProgram = ko.program
    s = config.settings()
    size = max(KERNARG_ALIGN, -(-len(launch.params) // KERNARG_ALIGN) * KERNARG_ALIGN)
    addr = device.alloc(size + 64, f"kernarg segment of {ko.name}")  # + the dispatch packet, for dispatch_ptr
    lds = ko.static_group_segment_size + launch.shared_mem
    try:
        device.fill(addr, 0, size + 64)
        device.write(addr, launch.params)
        device.write(addr + size, dispatch_packet(launch, lds, addr))
        t0 = time.perf_counter()
        with trace.span("L0", "execute", kernel=ko.name, threads=launch.num_blocks * launch.threads_per_block,
                        isa="gfx9") as ev:
            isa: dict[str, int] = {}
            dispatch = AmdLaunch(launch.grid, launch.block, addr, lds, dispatch_address=addr + size)
            counters = execute(prog, dispatch, device.gpu.memory, batch_lanes=s.chunk_lanes,
                               timeout_s=s.kernel_timeout, control=control, isa_counts=isa)
            ev["executor"] = dispatch.executor
            ev["thread_instructions"] = counters.total_thread_instructions
            ev.update(isa)  # wavefront_size, waves, salu/valu/smem/vmem/lds/mfma/branch/sync wave-instructions
            if isa.get("valu"):
                ev["exec_efficiency"] = round(isa.get("valu_lanes", 0) / (64 * isa["valu"]), 4)
    finally:
        device.free(addr)
    result = LaunchResult(counters, time.perf_counter() - t0, lds, prog.kernel.private_segment_fixed_size)
    result.executor = dispatch.executor  # the native executor (hw/native/amd_executor.py) or the reference
    return result
