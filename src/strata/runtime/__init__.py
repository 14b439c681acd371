"""L2: the system runtime. Loads modules into a device and launches kernels on it.

Thin in this issue (the CUDA driver API's cuModuleLoadData and cuLaunchKernel, done directly); the
issue 'Kernel driver and system runtime' puts HSA-style queues, AQL packets and signals here.
"""

from strata.runtime.launch import launch_kernel
from strata.runtime.module import LoadedModule, load_module

__all__ = ["LoadedModule", "launch_kernel", "load_module"]
