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

from strata.cuda.arrays import (
    ArrayFlags,
    ChannelFormatDesc,
    CudaArray,
    Memcpy3DParms,
    PitchedPtr,
    array_get_info,
    create_channel_desc,
    create_surface_object,
    destroy_surface_object,
    free_array,
    malloc_3d,
    malloc_3d_array,
    malloc_array,
    malloc_pitch,
    memcpy_2d,
    memcpy_2d_from_array,
    memcpy_2d_to_array,
    memcpy_3d,
    memcpy_from_array,
    memcpy_to_array,
)
from strata.cuda.caching_allocator import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
)
from strata.cuda.compiler import CompileError
from strata.cuda.device import (
    Device,
    DeviceProperties,
    current_device,
    device_can_access_peer,
    device_count,
    device_disable_peer_access,
    device_enable_peer_access,
    get_device,
    get_device_properties,
    is_available,
    set_device,
    synchronize,
)
from strata.cuda.errors import get_error_name, get_error_string, get_last_error, peek_at_last_error
from strata.cuda.memcpy import (
    MemcpyKind,
    free,
    malloc,
    mem_get_info,
    memcpy,
    memcpy_async,
    memcpy_from_symbol,
    memcpy_peer,
    memcpy_peer_async,
    memcpy_to_symbol,
    memset,
    memset_async,
    pointer_get_attributes,
)
from strata.cuda.memory import DeviceArray, empty, pinned_empty, to_device, zeros
from strata.cuda.module import FuncAttributes, Kernel, LaunchReport, Module, compile, launch_cooperative_kernel
from strata.cuda.occupancy import occupancy_max_active_blocks_per_multiprocessor, occupancy_max_potential_block_size
from strata.cuda.stream import Event, Stream
from strata.cuda.textures import (
    ResourceDesc,
    TextureDesc,
    create_texture_object,
    destroy_texture_object,
    get_texture_object_resource_desc,
    get_texture_object_texture_desc,
)
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
    "ArrayFlags", "ChannelFormatDesc", "CudaArray", "Memcpy3DParms", "PitchedPtr", "array_get_info", "malloc_3d",
    "create_channel_desc",
    "create_surface_object", "destroy_surface_object", "free_array", "malloc_3d_array", "malloc_array", "malloc_pitch",
    "memcpy_2d", "memcpy_2d_from_array", "memcpy_2d_to_array", "memcpy_3d", "memcpy_from_array", "memcpy_to_array",
    "CompileError", "CudaError", "Device", "DeviceArray", "DeviceFault", "DeviceProperties", "Event",
    "FuncAttributes", "InvalidLaunchConfig", "Kernel", "LaunchReport", "LaunchTimeout", "MemcpyKind", "Module",
    "OutOfMemoryError", "PTXSyntaxError", "Stream", "UnsupportedInstruction", "compile", "current_device",
    "device_can_access_peer", "device_count", "device_disable_peer_access", "device_enable_peer_access", "empty",
    "empty_cache", "free", "get_device", "get_device_properties", "get_error_name", "get_error_string",
    "get_last_error", "is_available", "launch_cooperative_kernel", "malloc", "max_memory_allocated",
    "mem_get_info", "memcpy", "memcpy_async",
    "memcpy_from_symbol", "memcpy_peer", "memcpy_peer_async", "memcpy_to_symbol", "memory_allocated",
    "memory_reserved", "memset", "memset_async", "occupancy_max_active_blocks_per_multiprocessor",
    "occupancy_max_potential_block_size", "peek_at_last_error", "pinned_empty", "pointer_get_attributes",
    "reset_peak_memory_stats", "set_device", "synchronize", "to_device", "zeros",
    "ResourceDesc", "TextureDesc", "create_texture_object", "destroy_texture_object",
    "get_texture_object_resource_desc", "get_texture_object_texture_desc",
]
