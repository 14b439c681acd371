"""Kernel launch (cuLaunchKernel / hipModuleLaunchKernel): hand a configured launch to the driver."""

from __future__ import annotations

from strata import trace
from strata.hw.engine import LaunchConfig, LaunchResult
from strata.runtime.module import LoadedModule


def launch_kernel(module: LoadedModule, kernel: str, config: LaunchConfig) -> LaunchResult:
    """Launch `kernel` with a packed parameter buffer (the kernarg segment) in `config.params`."""
    with trace.span("L2", "dispatch", kernel=kernel, grid=config.grid, block=config.block):
        return module.device.submit(module.program, kernel, config)
