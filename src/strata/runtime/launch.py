"""Kernel launch (cuLaunchKernel / hipModuleLaunchKernel): an AQL dispatch packet on a stream."""

from __future__ import annotations

import weakref

from strata import config, trace
from strata.hw.engine import GRID_WORKSPACE_BYTES, LaunchConfig
from strata.runtime.context import Context, Stream
from strata.runtime.module import LoadedModule
from strata.runtime.signals import Signal

# context -> (generation, address) of its grid workspace. One per context is enough: the device's compute
# engine runs one kernel at a time and the engine zeroes the workspace as each cooperative grid starts.
_WORKSPACES: weakref.WeakKeyDictionary[Context, tuple[int, int]] = weakref.WeakKeyDictionary()


def grid_workspace(context: Context) -> int:
    """The device address of `context`'s grid workspace (cooperative groups' grid barrier), allocated on
    first use and again after a device reset (which frees all device memory)."""
    have = _WORKSPACES.get(context)
    if have is None or have[0] != context.generation:
        have = (context.generation, context.malloc(GRID_WORKSPACE_BYTES, "grid workspace"))
        _WORKSPACES[context] = have
    return have[1]


def launch_kernel(stream: Stream, module: LoadedModule, kernel: str, launch: LaunchConfig, *,
                  registers: int, registers_source: str, blocking: bool | None = None,
                  cooperative: bool = False) -> Signal:
    """Queue `kernel` with its packed parameters (the kernarg block) in `launch.params`; returns the
    completion signal. With STRATA_LAUNCH_BLOCKING=1 it also waits, raising any fault at once.
    `cooperative` (cuLaunchCooperativeKernel; the caller checked co-residency) passes the context's grid
    workspace to the kernel, so cooperative groups' this_grid().sync() works."""
    name = "cuLaunchCooperativeKernel" if cooperative else "cuLaunchKernel"
    with trace.span("L2", name, kernel=kernel, grid=launch.grid, block=launch.block):
        handle = module.kernel_object(kernel, registers, registers_source)
        group = module.program.shared_bytes(kernel, 0) + launch.shared_mem
        workspace = grid_workspace(stream.context) if cooperative else 0
        signal = stream.launch(handle, launch.grid, launch.block, group, launch.params, grid_workspace=workspace,
                               cluster=launch.cluster)
    if config.settings().launch_blocking if blocking is None else blocking:
        stream.context.wait(signal)
    return signal
