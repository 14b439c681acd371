"""L3: the CUDA programming interface of strata (CUDA C++ via NVRTC, and the runtime API in Python).

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> mod = cuda.compile('''extern "C" __global__ void scale(float* x, float a, int n) {
    ...     int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }''')
    >>> x = cuda.to_device(np.ones(100, dtype=np.float32))
    >>> report = mod.get_function("scale")(1, 128, (x, np.float32(3), np.int32(100)))
    >>> float(x.get().sum())
    300.0
"""

from strata.cuda.compiler import CompileError
from strata.cuda.device import Device, current_device, set_device, synchronize
from strata.cuda.memory import DeviceArray, empty, pinned_empty, to_device, zeros
from strata.cuda.module import Kernel, LaunchReport, Module, compile
from strata.cuda.stream import Event, Stream
from strata.errors import (
    CudaError,
    DeviceFault,
    InvalidLaunchConfig,
    LaunchTimeout,
    OutOfMemoryError,
    PTXSyntaxError,
    UnsupportedInstruction,
)

__all__ = [
    "CompileError", "CudaError", "Device", "DeviceArray", "DeviceFault", "Event", "InvalidLaunchConfig", "Kernel",
    "LaunchReport", "LaunchTimeout", "Module", "OutOfMemoryError", "PTXSyntaxError", "Stream",
    "UnsupportedInstruction", "compile", "current_device", "empty", "pinned_empty", "set_device", "synchronize",
    "to_device", "zeros",
]
