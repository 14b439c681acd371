"""L3: the HIP face of strata: HIP C++ kernels (HIP headers + NVRTC) and the HIP runtime API in Python.

`strata.hip` mirrors `strata.cuda` one to one under the same Pythonic names (`hip.malloc` is
hipMalloc, `hip.Stream` is hipStream_t; `api.MAPPING` lists every pair), and also spells HIP's C API by
its C names (`hipMalloc`, `hipModuleLaunchKernel`, ... in `capi`). Both run on the same runtime as
strata.cuda, so HIP and CUDA code share devices, memory, streams and results. HIP kernel source
compiles the way HIP does on NVIDIA platforms: `hip/hip_runtime.h` maps HIP's device API onto CUDA's,
then NVRTC compiles it (`compile`). `hipify` ports CUDA source to HIP. See docs/hip.md.

Example:
    >>> import numpy as np, strata.hip as hip
    >>> mod = hip.compile('''#include <hip/hip_runtime.h>
    ... extern "C" __global__ void scale(float* x, float a, int n) {
    ...     int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; if (i < n) x[i] *= a; }''')
    >>> x = hip.to_device(np.ones(100, dtype=np.float32))
    >>> f = hip.hipModuleGetFunction(mod, "scale")
    >>> _ = hip.hipModuleLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, 0, (x, np.float32(3), np.int32(100)))
    >>> hip.hipDeviceSynchronize(); float(x.get().sum())
    300.0
"""

from strata.hip import api, capi
from strata.hip.api import *  # noqa: F403 - the Pythonic mirror of strata.cuda, listed in api.__all__
from strata.hip.capi import *  # noqa: F403 - HIP's C names, listed in capi.__all__
from strata.hip.compiler import include_dir
from strata.hip.hipify import hipify

# api.__all__ has compile; capi.__all__ has HIP_VERSION
__all__ = ["api", "capi", "hipify", "include_dir", *api.__all__, *capi.__all__]
