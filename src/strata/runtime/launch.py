"""Kernel launch (cuLaunchKernel / hipModuleLaunchKernel): an AQL dispatch packet on a stream."""

from __future__ import annotations

from strata import config, trace
from strata.hw.engine import LaunchConfig
from strata.runtime.context import Stream
from strata.runtime.module import LoadedModule
from strata.runtime.signals import Signal


def launch_kernel(stream: Stream, module: LoadedModule, kernel: str, launch: LaunchConfig, *,
                  registers: int, registers_source: str, blocking: bool | None = None) -> Signal:
    """Queue `kernel` with its packed parameters (the kernarg block) in `launch.params`; returns the
    completion signal. With STRATA_LAUNCH_BLOCKING=1 it also waits, raising any fault at once."""
    with trace.span("L2", "cuLaunchKernel", kernel=kernel, grid=launch.grid, block=launch.block):
        handle = module.kernel_object(kernel, registers, registers_source)
        group = module.program.shared_bytes(kernel, 0) + launch.shared_mem
        signal = stream.launch(handle, launch.grid, launch.block, group, launch.params)
    if config.settings().launch_blocking if blocking is None else blocking:
        stream.context.wait(signal)
    return signal
