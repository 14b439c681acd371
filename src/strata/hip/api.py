"""The Pythonic HIP face: every public name of `strata.cuda` under the same Pythonic name, documented
with the HIP C name it stands for (`malloc` is hipMalloc, `Stream` is hipStream_t).

Source of truth for the mapping between strata's Pythonic names and HIP's C names (`MAPPING`, which
docs/hip.md tabulates). Behaviour is strata.cuda's, by construction: functions call their CUDA twin,
and classes are *faces* of the CUDA class: a subclass that adds only HIP's documentation and for which
`isinstance` accepts the CUDA twin's instances, since both names denote one type (`hip.Device(0)` is
the very object `cuda.Device(0)` is). Exceptions are the same objects as strata.cuda's; each carries
its HIP error name in `.hip_name`.

Example:
    >>> import numpy as np, strata.hip as hip, strata.cuda as cuda
    >>> x = hip.to_device(np.arange(4, dtype=np.float32))
    >>> isinstance(x, hip.DeviceArray), isinstance(x, cuda.DeviceArray)
    (True, True)
    >>> s = hip.Stream(); start, end = hip.Event(), hip.Event()
    >>> start.record(s); y = hip.malloc(16); hip.memcpy_async(y, x, 16, "DeviceToDevice", stream=s)
    >>> end.record(s); end.synchronize(); start.elapsed_time(end) > 0
    True
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from strata import cuda
from strata.cuda import (
    CompileError,
    CudaError,
    DeviceFault,
    InvalidLaunchConfig,
    LaunchTimeout,
    MemcpyKind,
    OutOfMemoryError,
    PTXSyntaxError,
    UnsupportedInstruction,
)

if TYPE_CHECKING:  # amd.py imports this module's package, so only for the annotations
    from strata.hip.amd import CodeObjectKernel
from strata.cuda.memcpy import PointerAttributes
from strata.errors import CUDA_ERRORS
from strata.hip.compiler import compile

# Pythonic name -> (HIP C name(s), CUDA C name(s)). One row per public name of strata.cuda.
MAPPING: dict[str, tuple[str, str]] = {
    # devices
    "Device": ("hipDevice_t (hipDeviceGet)", "CUdevice (cuDeviceGet); a device ordinal in the runtime API"),
    "DeviceProperties": ("hipDeviceProp_t", "cudaDeviceProp"),
    "device_count": ("hipGetDeviceCount", "cudaGetDeviceCount"),
    "get_device": ("hipGetDevice", "cudaGetDevice"),
    "set_device": ("hipSetDevice", "cudaSetDevice"),
    "current_device": ("hipGetDevice (as a Device)", "cudaGetDevice (as a Device)"),
    "get_device_properties": ("hipGetDeviceProperties", "cudaGetDeviceProperties"),
    "synchronize": ("hipDeviceSynchronize", "cudaDeviceSynchronize"),
    "device_can_access_peer": ("hipDeviceCanAccessPeer", "cudaDeviceCanAccessPeer"),
    "device_enable_peer_access": ("hipDeviceEnablePeerAccess", "cudaDeviceEnablePeerAccess"),
    "device_disable_peer_access": ("hipDeviceDisablePeerAccess", "cudaDeviceDisablePeerAccess"),
    # memory
    "malloc": ("hipMalloc", "cudaMalloc"),
    "free": ("hipFree", "cudaFree"),
    "mem_get_info": ("hipMemGetInfo", "cudaMemGetInfo"),
    "MemcpyKind": ("hipMemcpyKind", "cudaMemcpyKind"),
    "memcpy": ("hipMemcpy", "cudaMemcpy"),
    "memcpy_async": ("hipMemcpyAsync", "cudaMemcpyAsync"),
    "memset": ("hipMemset", "cudaMemset"),
    "memset_async": ("hipMemsetAsync", "cudaMemsetAsync"),
    "memcpy_to_symbol": ("hipMemcpyToSymbol", "cudaMemcpyToSymbol"),
    "memcpy_from_symbol": ("hipMemcpyFromSymbol", "cudaMemcpyFromSymbol"),
    "memcpy_peer": ("hipMemcpyPeer", "cudaMemcpyPeer"),
    "memcpy_peer_async": ("hipMemcpyPeerAsync", "cudaMemcpyPeerAsync"),
    "pointer_get_attributes": ("hipPointerGetAttributes", "cudaPointerGetAttributes"),
    "pinned_empty": ("hipHostMalloc", "cudaMallocHost / cudaHostAlloc"),
    "DeviceArray": ("hipMalloc + hipMemcpy (a typed hipDeviceptr_t)", "cudaMalloc + cudaMemcpy"),
    "empty": ("hipMalloc", "cudaMalloc"),
    "zeros": ("hipMalloc + hipMemset", "cudaMalloc + cudaMemset"),
    "to_device": ("hipMalloc + hipMemcpy(hipMemcpyHostToDevice)", "cudaMalloc + cudaMemcpy(cudaMemcpyHostToDevice)"),
    # the caching allocator (PyTorch's c10 HIPCachingAllocator / CUDACachingAllocator)
    "memory_allocated": ("HIPCachingAllocator: bytes in use of its hipMalloc segments",
                         "CUDACachingAllocator: bytes in use of its cudaMalloc segments"),
    "memory_reserved": ("HIPCachingAllocator: bytes of hipMalloc segments held",
                        "CUDACachingAllocator: bytes of cudaMalloc segments held"),
    "max_memory_allocated": ("HIPCachingAllocator: peak bytes in use of its hipMalloc segments",
                             "CUDACachingAllocator: peak bytes in use of its cudaMalloc segments"),
    "reset_peak_memory_stats": ("HIPCachingAllocator::resetPeakStats (over hipMalloc segments)",
                                "CUDACachingAllocator::resetPeakStats (over cudaMalloc segments)"),
    "empty_cache": ("HIPCachingAllocator::emptyCache (hipFree of unused segments)",
                    "CUDACachingAllocator::emptyCache (cudaFree of unused segments)"),
    "is_available": ("hipGetDeviceCount > 0", "cudaGetDeviceCount > 0"),
    # modules and kernels
    "compile": ("hiprtcCompileProgram + hipModuleLoadData", "nvrtcCompileProgram + cuModuleLoadData"),
    "Module": ("hipModule_t (hipModuleLoadData, hipModuleGetFunction, hipModuleGetGlobal)",
               "CUmodule (cuModuleLoadData, cuModuleGetFunction, cuModuleGetGlobal)"),
    "Kernel": ("hipFunction_t (hipModuleLaunchKernel, hipFuncGetAttributes, hipFuncSetAttribute)",
               "CUfunction (cuLaunchKernel, cudaFuncGetAttributes, cudaFuncSetAttribute)"),
    "FuncAttributes": ("hipFuncAttributes", "cudaFuncAttributes"),
    "LaunchReport": ("hipModuleLaunchKernel's completion (no HIP type)", "cuLaunchKernel's completion (no CUDA type)"),
    "launch_cooperative_kernel": ("hipLaunchCooperativeKernel", "cudaLaunchCooperativeKernel"),
    "occupancy_max_active_blocks_per_multiprocessor": ("hipOccupancyMaxActiveBlocksPerMultiprocessor",
                                                       "cudaOccupancyMaxActiveBlocksPerMultiprocessor"),
    "occupancy_max_potential_block_size": ("hipOccupancyMaxPotentialBlockSize", "cudaOccupancyMaxPotentialBlockSize"),
    # CUDA arrays, pitched memory, 2-D/3-D copies and surface objects
    "ArrayFlags": ("hipArrayDefault, hipArrayLayered, hipArraySurfaceLoadStore, hipArrayCubemap, hipArrayTextureGather",
                   "cudaArrayDefault, cudaArrayLayered, cudaArraySurfaceLoadStore, cudaArrayCubemap, "
                   "cudaArrayTextureGather"),
    "ChannelFormatDesc": ("hipChannelFormatDesc", "cudaChannelFormatDesc"),
    "CudaArray": ("hipArray_t", "cudaArray_t"),
    "Memcpy3DParms": ("hipMemcpy3DParms", "cudaMemcpy3DParms"),
    "PitchedPtr": ("hipPitchedPtr (make_hipPitchedPtr)", "cudaPitchedPtr (make_cudaPitchedPtr)"),
    "create_channel_desc": ("hipCreateChannelDesc", "cudaCreateChannelDesc"),
    "malloc_array": ("hipMallocArray", "cudaMallocArray"),
    "malloc_3d_array": ("hipMalloc3DArray", "cudaMalloc3DArray"),
    "free_array": ("hipFreeArray", "cudaFreeArray"),
    "malloc_pitch": ("hipMallocPitch", "cudaMallocPitch"),
    "malloc_3d": ("hipMalloc3D", "cudaMalloc3D"),
    "array_get_info": ("hipArrayGetInfo", "cudaArrayGetInfo"),
    "memcpy_2d": ("hipMemcpy2D, hipMemcpy2DAsync", "cudaMemcpy2D, cudaMemcpy2DAsync"),
    "memcpy_2d_to_array": ("hipMemcpy2DToArray, hipMemcpy2DToArrayAsync",
                           "cudaMemcpy2DToArray, cudaMemcpy2DToArrayAsync"),
    "memcpy_2d_from_array": ("hipMemcpy2DFromArray, hipMemcpy2DFromArrayAsync",
                             "cudaMemcpy2DFromArray, cudaMemcpy2DFromArrayAsync"),
    "memcpy_to_array": ("hipMemcpyToArray", "cudaMemcpyToArray"),
    "memcpy_from_array": ("hipMemcpyFromArray", "cudaMemcpyFromArray"),
    "memcpy_3d": ("hipMemcpy3D, hipMemcpy3DAsync", "cudaMemcpy3D, cudaMemcpy3DAsync"),
    "create_surface_object": ("hipCreateSurfaceObject", "cudaCreateSurfaceObject"),
    "destroy_surface_object": ("hipDestroySurfaceObject", "cudaDestroySurfaceObject"),
    # texture objects
    "ResourceDesc": ("hipResourceDesc", "cudaResourceDesc"),
    "TextureDesc": ("hipTextureDesc", "cudaTextureDesc"),
    "create_texture_object": ("hipCreateTextureObject", "cudaCreateTextureObject"),
    "destroy_texture_object": ("hipDestroyTextureObject", "cudaDestroyTextureObject"),
    "get_texture_object_resource_desc": ("hipGetTextureObjectResourceDesc", "cudaGetTextureObjectResourceDesc"),
    "get_texture_object_texture_desc": ("hipGetTextureObjectTextureDesc", "cudaGetTextureObjectTextureDesc"),
    # streams and events
    "Stream": ("hipStream_t (hipStreamCreateWithFlags)", "cudaStream_t (cudaStreamCreateWithFlags)"),
    "Event": ("hipEvent_t (hipEventCreateWithFlags)", "cudaEvent_t (cudaEventCreateWithFlags)"),
    # errors
    "get_last_error": ("hipGetLastError", "cudaGetLastError"),
    "peek_at_last_error": ("hipPeekAtLastError", "cudaPeekAtLastError"),
    "get_error_name": ("hipGetErrorName", "cudaGetErrorName"),
    "get_error_string": ("hipGetErrorString", "cudaGetErrorString"),
    "CudaError": ("hipError_t", "cudaError_t"),
    "DeviceFault": ("hipErrorIllegalAddress", "cudaErrorIllegalAddress"),
    "InvalidLaunchConfig": ("hipErrorInvalidConfiguration", "cudaErrorInvalidConfiguration"),
    "LaunchTimeout": ("hipErrorLaunchTimeOut", "cudaErrorLaunchTimeout"),
    "OutOfMemoryError": ("hipErrorOutOfMemory", "cudaErrorMemoryAllocation"),
    "CompileError": ("HIPRTC_ERROR_COMPILATION", "NVRTC_ERROR_COMPILATION"),
    "PTXSyntaxError": ("hipErrorInvalidKernelFile", "cudaErrorInvalidPtx"),
    "UnsupportedInstruction": ("hipErrorInvalidKernelFile", "cudaErrorInvalidPtx"),
}

# The exceptions are strata.cuda's own classes (one error hierarchy for both faces).
SHARED = frozenset({"CompileError", "CudaError", "DeviceFault", "InvalidLaunchConfig", "LaunchTimeout",
                    "OutOfMemoryError", "PTXSyntaxError", "UnsupportedInstruction", "MemcpyKind"})

HipError = CudaError  # hipError_t as an exception: strata's CudaError, whose `.hip_name` is the HIP name

_HIP_NAME_BY_CODE = {code: hip for code, hip in CUDA_ERRORS.values() if hip}  # codes HIP lacks read as unknown


class _Face(type):
    """Metaclass of the HIP face classes: for a face (a class that names its `_cuda_twin`), instances and
    subclasses of the CUDA twin count as its own; a user's subclass of a face checks normally."""

    def __instancecheck__(cls, obj: object) -> bool:
        twin = cls.__dict__.get("_cuda_twin")
        return isinstance(obj, twin) if twin is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        twin = cls.__dict__.get("_cuda_twin")
        return issubclass(sub, twin) if twin is not None else type.__subclasscheck__(cls, sub)


# --- devices -------------------------------------------------------------------------------------------


class Device(cuda.Device, metaclass=_Face):
    """A virtual GPU as HIP names it (hipDevice_t, from hipDeviceGet; `properties()` is
    hipGetDeviceProperties, `synchronize()` hipDeviceSynchronize, `reset()` hipDeviceReset).
    `Device(i)` returns the one object `strata.cuda.Device(i)` returns.

    Example:
        >>> import strata.cuda as cuda
        >>> Device(0) is cuda.Device(0), Device(0).warpSize
        (True, 32)
    """

    _cuda_twin = cuda.Device

    def __new__(cls, index: int | str | None = None, *, model: str | None = None) -> cuda.Device:  # type: ignore[misc]
        return cuda.Device(index, model=model)


class DeviceProperties(cuda.DeviceProperties, metaclass=_Face):
    """hipDeviceProp_t: the fields programs read (cudaDeviceProp's names, plus HIP's gcnArchName).

    Example:
        >>> isinstance(get_device_properties(0), DeviceProperties)
        True
    """

    _cuda_twin = cuda.DeviceProperties


def device_count() -> int:
    """hipGetDeviceCount: the virtual GPUs present (STRATA_DEVICES).

    Example:
        >>> device_count() >= 1
        True
    """
    return cuda.device_count()


def get_device() -> int:
    """hipGetDevice: the index of the current device.

    Example:
        >>> get_device()
        0
    """
    return cuda.get_device()


def set_device(device: cuda.Device | int | str) -> cuda.Device:
    """hipSetDevice: make `device` (a Device, an index or a model name) current.

    Raises:
        CudaError: hipErrorInvalidDevice for an index that names no present device.
    """
    return cuda.set_device(device)


def current_device() -> cuda.Device:
    """The current device as an object (hipGetDevice, then the Device of that index).

    Example:
        >>> current_device().index == get_device()
        True
    """
    return cuda.current_device()


def get_device_properties(device: int | cuda.Device | None = None) -> cuda.DeviceProperties:
    """hipGetDeviceProperties (default: the current device).

    Example:
        >>> get_device_properties(0).warpSize
        32
    """
    return cuda.get_device_properties(device)


def synchronize() -> None:
    """hipDeviceSynchronize on the current device; raises a sticky fault (DeviceFault, ...)."""
    cuda.synchronize()


# --- memory --------------------------------------------------------------------------------------------


def malloc(nbytes: int) -> int:
    """hipMalloc: `nbytes` of device memory on the current device; returns its device address.

    Raises:
        OutOfMemoryError: hipErrorOutOfMemory.
    """
    return cuda.malloc(nbytes)


def free(ptr: int | cuda.DeviceArray) -> None:
    """hipFree (waits for the device first); `free(0)` does nothing."""
    cuda.free(ptr)


def mem_get_info() -> tuple[int, int]:
    """hipMemGetInfo: (free, total) bytes of the current device.

    Example:
        >>> free_bytes, total = mem_get_info(); 0 < free_bytes <= total
        True
    """
    return cuda.mem_get_info()


def memory_allocated(device: Any = None) -> int:
    """Bytes held by "cuda" tensors on `device` (default: the current device): the HIPCachingAllocator's
    count of bytes in use within its hipMalloc segments (torch.cuda.memory_allocated on ROCm).

    Example:
        >>> memory_allocated() >= 0
        True
    """
    return cuda.memory_allocated(device)


def memory_reserved(device: Any = None) -> int:
    """Bytes of hipMalloc segments the HIPCachingAllocator holds on `device`, in use or cached."""
    return cuda.memory_reserved(device)


def max_memory_allocated(device: Any = None) -> int:
    """Peak of memory_allocated on `device` (HIPCachingAllocator statistics over hipMalloc segments)."""
    return cuda.max_memory_allocated(device)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Reset the peak behind max_memory_allocated (HIPCachingAllocator over hipMalloc segments)."""
    cuda.reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Return the HIPCachingAllocator's unused cached segments to the driver (hipFree each)."""
    cuda.empty_cache()


def is_available() -> bool:
    """True when hipGetDeviceCount finds a device (always: the virtual GPUs are always present)."""
    return cuda.is_available()


def memcpy(dst: Any, src: Any, count: int, kind: MemcpyKind | str | int = MemcpyKind.Default) -> None:
    """hipMemcpy: copy `count` bytes; `kind` is a MemcpyKind (hipMemcpyKind), its name, with or without
    the "hipMemcpy" prefix, or its value. Device pointers are ints or DeviceArrays, host memory NumPy.

    Raises:
        CudaError: hipErrorInvalidMemcpyDirection, hipErrorInvalidValue.
    """
    cuda.memcpy(dst, src, count, kind)


def memcpy_async(dst: Any, src: Any, count: int, kind: MemcpyKind | str | int = MemcpyKind.Default,
                 stream: cuda.Stream | None = None) -> None:
    """hipMemcpyAsync: queue the copy on `stream` (returns at once with pinned host memory)."""
    cuda.memcpy_async(dst, src, count, kind, stream)


def memset(ptr: int | cuda.DeviceArray, value: int, count: int) -> None:
    """hipMemset: set `count` bytes at `ptr` to the byte `value`."""
    cuda.memset(ptr, value, count)


def memset_async(ptr: int | cuda.DeviceArray, value: int, count: int, stream: cuda.Stream | None = None) -> None:
    """hipMemsetAsync."""
    cuda.memset_async(ptr, value, count, stream)


def memcpy_peer(dst: int | cuda.DeviceArray, dst_device: cuda.Device | int, src: int | cuda.DeviceArray,
                src_device: cuda.Device | int, count: int) -> None:
    """hipMemcpyPeer: copy `count` bytes from `src` on `src_device` to `dst` on `dst_device`."""
    cuda.memcpy_peer(dst, dst_device, src, src_device, count)


def memcpy_peer_async(dst: int | cuda.DeviceArray, dst_device: cuda.Device | int, src: int | cuda.DeviceArray,
                      src_device: cuda.Device | int, count: int, stream: cuda.Stream | None = None) -> None:
    """hipMemcpyPeerAsync: `memcpy_peer` queued on `stream` (a stream of the destination device)."""
    cuda.memcpy_peer_async(dst, dst_device, src, src_device, count, stream)


def pointer_get_attributes(ptr: Any) -> PointerAttributes:
    """hipPointerGetAttributes: the memory type and the device of a pointer (unified addressing)."""
    return cuda.pointer_get_attributes(ptr)


def device_can_access_peer(device: cuda.Device | int, peer: cuda.Device | int) -> bool:
    """hipDeviceCanAccessPeer: whether kernels on `device` could access `peer`'s memory."""
    return cuda.device_can_access_peer(device, peer)


def device_enable_peer_access(peer: cuda.Device | int, flags: int = 0) -> None:
    """hipDeviceEnablePeerAccess: kernels on the current device may access `peer`'s memory.

    Raises:
        CudaError: hipErrorPeerAccessAlreadyEnabled, hipErrorInvalidDevice, hipErrorPeerAccessUnsupported.
    """
    cuda.device_enable_peer_access(peer, flags)


def device_disable_peer_access(peer: cuda.Device | int) -> None:
    """hipDeviceDisablePeerAccess (hipErrorPeerAccessNotEnabled if it was not enabled)."""
    cuda.device_disable_peer_access(peer)


def memcpy_to_symbol(module: cuda.Module, symbol: str, src: np.ndarray, count: int | None = None, offset: int = 0,
                     stream: cuda.Stream | None = None) -> None:
    """hipMemcpyToSymbol: copy host `src` into the `__device__`/`__constant__` variable `symbol`."""
    cuda.memcpy_to_symbol(module, symbol, src, count, offset, stream)


def memcpy_from_symbol(dst: np.ndarray, module: cuda.Module, symbol: str, count: int | None = None,
                       offset: int = 0, stream: cuda.Stream | None = None) -> None:
    """hipMemcpyFromSymbol: copy the variable `symbol` (from byte `offset`) into host `dst`."""
    cuda.memcpy_from_symbol(dst, module, symbol, count, offset, stream)


def pinned_empty(shape: int | tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """hipHostMalloc: a host ndarray in pinned (page-locked) memory, for fast and asynchronous copies.

    Example:
        >>> pinned_empty((2, 3), np.int16).shape
        (2, 3)
    """
    return cuda.pinned_empty(shape, dtype)


class DeviceArray(cuda.DeviceArray, metaclass=_Face):
    """An n-dimensional array in device memory: hipMalloc'd memory with its shape and dtype
    (`.ptr` is the hipDeviceptr_t), copied with hipMemcpy by `.get()`/`.set()`, freed by hipFree.

    Example:
        >>> DeviceArray((2,), np.int32).nbytes
        8
    """

    _cuda_twin = cuda.DeviceArray


def empty(shape: int | tuple[int, ...], dtype: Any = np.float32) -> cuda.DeviceArray:
    """An uninitialised device array (hipMalloc)."""
    return cuda.empty(shape, dtype)


def zeros(shape: int | tuple[int, ...], dtype: Any = np.float32) -> cuda.DeviceArray:
    """A device array of zeros (hipMalloc + hipMemset).

    Example:
        >>> zeros(3, np.int32).get().tolist()
        [0, 0, 0]
    """
    return cuda.zeros(shape, dtype)


def to_device(host: Any) -> cuda.DeviceArray:
    """Copy a host array to a new device array (hipMalloc + hipMemcpy with hipMemcpyHostToDevice).

    Example:
        >>> to_device(np.ones(2, np.float32)).get().tolist()
        [1.0, 1.0]
    """
    return cuda.to_device(host)


# --- modules and kernels -------------------------------------------------------------------------------


class Module(cuda.Module, metaclass=_Face):
    """A loaded module (hipModule_t). `Module.from_ptx(ptx)` is hipModuleLoadData with a code object
    (PTX on this platform); `get_function` is hipModuleGetFunction; `get_global` is hipModuleGetGlobal.
    `strata.hip.compile` (hipRTC + hipModuleLoadData) returns one.

    Example:
        >>> m = compile('extern "C" __global__ void k(int* p) { *p = 1; }')
        >>> isinstance(m, Module), m.get_function("k").name
        (True, 'k')
    """

    _cuda_twin = cuda.Module


class Kernel(cuda.Kernel, metaclass=_Face):
    """A kernel of a module (hipFunction_t): `launch`/call is hipModuleLaunchKernel, `attributes` is
    hipFuncGetAttributes, `set_attribute("max_dynamic_shared_size_bytes", n)` is hipFuncSetAttribute
    with hipFuncAttributeMaxDynamicSharedMemorySize."""

    _cuda_twin = cuda.Kernel


class FuncAttributes(cuda.FuncAttributes, metaclass=_Face):
    """hipFuncAttributes: registers, static/const/local memory and limits of a kernel."""

    _cuda_twin = cuda.FuncAttributes


class LaunchReport(cuda.LaunchReport, metaclass=_Face):
    """What one launch (hipModuleLaunchKernel) did: counters, modeled time, wall time. HIP has no such
    type; reading a field waits for the kernel as hipStreamSynchronize would."""

    _cuda_twin = cuda.LaunchReport


def launch_cooperative_kernel(kernel: cuda.Kernel, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0,
                              stream: cuda.Stream | None = None) -> cuda.LaunchReport:
    """hipLaunchCooperativeKernel: launch with every block resident at once, so `this_grid().sync()` works
    (hipErrorCooperativeLaunchTooLarge when the grid does not fit); see `cuda.launch_cooperative_kernel`."""
    return cuda.launch_cooperative_kernel(kernel, grid, block, args, shared_mem, stream)


def occupancy_max_active_blocks_per_multiprocessor(kernel: cuda.Kernel | CodeObjectKernel, block_size: int,
                                                   dynamic_smem: int = 0) -> int:
    """hipOccupancyMaxActiveBlocksPerMultiprocessor: resident blocks per SM for `block_size` threads (for a
    code object's kernel, workgroups per CU from its VGPRs, SGPRs and LDS)."""
    from strata.hip.amd import CodeObjectKernel  # NOTE: late, amd.py imports this module's package

    if isinstance(kernel, CodeObjectKernel):
        try:
            return kernel.occupancy(block_size, dynamic_smem).workgroups_per_cu
        except cuda.InvalidLaunchConfig:
            return 0
    return cuda.occupancy_max_active_blocks_per_multiprocessor(kernel, block_size, dynamic_smem)


def occupancy_max_potential_block_size(kernel: cuda.Kernel, dynamic_smem: int = 0,
                                       block_size_limit: int = 0) -> tuple[int, int]:
    """hipOccupancyMaxPotentialBlockSize: (min_grid_size, block_size) that fills every SM."""
    return cuda.occupancy_max_potential_block_size(kernel, dynamic_smem, block_size_limit)


# --- CUDA arrays, 2-D/3-D copies, surface objects --------------------------------------------------------


class ArrayFlags(enum.IntFlag):
    """hipMallocArray / hipMalloc3DArray flags: hipArrayDefault, hipArrayLayered, hipArraySurfaceLoadStore,
    hipArrayCubemap, hipArrayTextureGather (the same values as strata.cuda.ArrayFlags, which both accept).

    Example:
        >>> int(ArrayFlags.LAYERED | ArrayFlags.CUBEMAP) == int(cuda.ArrayFlags.LAYERED | cuda.ArrayFlags.CUBEMAP)
        True
    """

    DEFAULT = 0x00
    LAYERED = 0x01
    SURFACE_LOAD_STORE = 0x02
    CUBEMAP = 0x04
    TEXTURE_GATHER = 0x08


class ChannelFormatDesc(cuda.ChannelFormatDesc, metaclass=_Face):
    """hipChannelFormatDesc: bits of the x, y, z, w components and their kind.

    Example:
        >>> ChannelFormatDesc(32).format().texel_bytes
        4
    """

    _cuda_twin = cuda.ChannelFormatDesc


class CudaArray(cuda.CudaArray, metaclass=_Face):
    """hipArray_t: a HIP array (hipMallocArray, hipMalloc3DArray), read by copies, textures and surfaces."""

    _cuda_twin = cuda.CudaArray


class Memcpy3DParms(cuda.Memcpy3DParms, metaclass=_Face):
    """hipMemcpy3DParms: a box copied between HIP arrays and pitched memory (hipMemcpy3D).

    Example:
        >>> Memcpy3DParms(extent=(2, 2, 1)).extent
        (2, 2, 1)
    """

    _cuda_twin = cuda.Memcpy3DParms


class PitchedPtr(cuda.PitchedPtr, metaclass=_Face):
    """hipPitchedPtr (make_hipPitchedPtr): memory with rows `pitch` bytes apart.

    Example:
        >>> PitchedPtr(np.zeros(4, np.uint8), 4, 4, 1).pitch
        4
    """

    _cuda_twin = cuda.PitchedPtr


def create_channel_desc(x: Any, y: int = 0, z: int = 0, w: int = 0,
                        kind: str | int = "float") -> cuda.ChannelFormatDesc:
    """hipCreateChannelDesc: a channel format descriptor (or, with a NumPy dtype, hipCreateChannelDesc<T>()).

    Example:
        >>> create_channel_desc(np.uint8, 4).format().texel_bytes
        4
    """
    return cuda.create_channel_desc(x, y, z, w, kind)


def malloc_array(desc: Any, width: int, height: int = 0,
                 flags: cuda.ArrayFlags | int = cuda.ArrayFlags.DEFAULT) -> cuda.CudaArray:
    """hipMallocArray: a 1-D (height 0) or 2-D HIP array."""
    return cuda.malloc_array(desc, width, height, flags)


def malloc_3d_array(desc: Any, extent: tuple[int, int, int],
                    flags: cuda.ArrayFlags | int = cuda.ArrayFlags.DEFAULT) -> cuda.CudaArray:
    """hipMalloc3DArray: a 1-D/2-D/3-D, layered or cubemap HIP array of `extent` (width, height, depth)."""
    return cuda.malloc_3d_array(desc, extent, flags)


def free_array(array: cuda.CudaArray | None) -> None:
    """hipFreeArray."""
    cuda.free_array(array)


def malloc_pitch(width: int, height: int) -> tuple[int, int]:
    """hipMallocPitch: (device pointer, pitch) of `height` rows of `width` bytes."""
    return cuda.malloc_pitch(width, height)


def malloc_3d(extent: tuple[int, int, int]) -> cuda.PitchedPtr:
    """hipMalloc3D: pitched device memory for (width in bytes, height, depth), as a hipPitchedPtr."""
    return cuda.malloc_3d(extent)


def array_get_info(array: cuda.CudaArray) -> tuple[cuda.ChannelFormatDesc, tuple[int, int, int], cuda.ArrayFlags]:
    """hipArrayGetInfo: (channel format, extent, flags) of a HIP array."""
    return cuda.array_get_info(array)


def memcpy_2d(dst: Any, dpitch: int, src: Any, spitch: int, width: int, height: int,
              kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: cuda.Stream | None = None) -> None:
    """hipMemcpy2D (hipMemcpy2DAsync with `stream`): `height` rows of `width` bytes between pitched memories."""
    cuda.memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream=stream)


def memcpy_2d_to_array(dst: cuda.CudaArray, w_offset: int, h_offset: int, src: Any, spitch: int, width: int,
                       height: int, kind: MemcpyKind | str | int = MemcpyKind.Default, *,
                       stream: cuda.Stream | None = None) -> None:
    """hipMemcpy2DToArray (hipMemcpy2DToArrayAsync with `stream`); `w_offset` and `width` in bytes."""
    cuda.memcpy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind, stream=stream)


def memcpy_2d_from_array(dst: Any, dpitch: int, src: cuda.CudaArray, w_offset: int, h_offset: int, width: int,
                         height: int, kind: MemcpyKind | str | int = MemcpyKind.Default, *,
                         stream: cuda.Stream | None = None) -> None:
    """hipMemcpy2DFromArray (hipMemcpy2DFromArrayAsync with `stream`); `w_offset` and `width` in bytes."""
    cuda.memcpy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind, stream=stream)


def memcpy_to_array(dst: cuda.CudaArray, w_offset: int, h_offset: int, src: Any, count: int,
                    kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: cuda.Stream | None = None) -> None:
    """hipMemcpyToArray: `count` bytes into `dst` from byte `w_offset` of row `h_offset` on."""
    cuda.memcpy_to_array(dst, w_offset, h_offset, src, count, kind, stream=stream)


def memcpy_from_array(dst: Any, src: cuda.CudaArray, w_offset: int, h_offset: int, count: int,
                      kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: cuda.Stream | None = None) -> None:
    """hipMemcpyFromArray: `count` bytes of `src` from byte `w_offset` of row `h_offset` on."""
    cuda.memcpy_from_array(dst, src, w_offset, h_offset, count, kind, stream=stream)


def memcpy_3d(p: cuda.Memcpy3DParms, *, stream: cuda.Stream | None = None) -> None:
    """hipMemcpy3D (hipMemcpy3DAsync with `stream`): copy the box a Memcpy3DParms describes."""
    cuda.memcpy_3d(p, stream=stream)


def create_surface_object(array: Any) -> int:
    """hipCreateSurfaceObject: a surface object (an int handle) over a HIP array (or a hipResourceDesc of one)."""
    return cuda.create_surface_object(array)


def destroy_surface_object(handle: int) -> None:
    """hipDestroySurfaceObject."""
    cuda.destroy_surface_object(handle)


# --- texture objects -----------------------------------------------------------------------------------


class ResourceDesc(cuda.ResourceDesc, metaclass=_Face):
    """hipResourceDesc: what a texture object samples (a hipArray, linear or pitched 2-D memory).

    Example:
        >>> ResourceDesc.pitch2d(0x7000_0000_0000, np.float32, 16, 4, 64).type
        'pitch2d'
    """

    _cuda_twin = cuda.ResourceDesc


class TextureDesc(cuda.TextureDesc, metaclass=_Face):
    """hipTextureDesc: how a texture object is sampled (address modes, filter, read mode, coordinates).

    Example:
        >>> TextureDesc(address_mode="wrap").address_mode
        ('wrap', 'wrap', 'wrap')
    """

    _cuda_twin = cuda.TextureDesc


def create_texture_object(res: cuda.ResourceDesc, tex_desc: cuda.TextureDesc | None = None,
                          view: Any = None) -> int:
    """hipCreateTextureObject: a texture object (an int handle) over `res`, sampled as `tex_desc` says."""
    return cuda.create_texture_object(res, tex_desc, view)


def destroy_texture_object(tex: int) -> None:
    """hipDestroyTextureObject."""
    cuda.destroy_texture_object(tex)


def get_texture_object_resource_desc(tex: int) -> cuda.ResourceDesc:
    """hipGetTextureObjectResourceDesc: the ResourceDesc the texture object was created from."""
    return cuda.get_texture_object_resource_desc(tex)


def get_texture_object_texture_desc(tex: int) -> cuda.TextureDesc:
    """hipGetTextureObjectTextureDesc: the TextureDesc the texture object was created with."""
    return cuda.get_texture_object_texture_desc(tex)


# --- streams and events --------------------------------------------------------------------------------


class Stream(cuda.Stream, metaclass=_Face):
    """A stream (hipStream_t): `Stream()` is hipStreamCreate, `Stream(non_blocking=True)` is
    hipStreamCreateWithFlags(hipStreamNonBlocking); `synchronize` is hipStreamSynchronize,
    `wait_event` hipStreamWaitEvent, `query` hipStreamQuery."""

    _cuda_twin = cuda.Stream


class Event(cuda.Event, metaclass=_Face):
    """An event (hipEvent_t): `Event()` is hipEventCreate, `Event(timing=False)` is
    hipEventCreateWithFlags(hipEventDisableTiming); `record` is hipEventRecord, `synchronize`
    hipEventSynchronize, `query` hipEventQuery, `elapsed_time` hipEventElapsedTime (ms of modeled
    device time)."""

    _cuda_twin = cuda.Event


# --- errors --------------------------------------------------------------------------------------------


def get_last_error() -> int:
    """hipGetLastError: the sticky error code of the current device (0 = hipSuccess).

    Example:
        >>> get_last_error()
        0
    """
    return cuda.get_last_error()


def peek_at_last_error() -> int:
    """hipPeekAtLastError: as get_last_error (sticky errors stay until Device.reset())."""
    return cuda.peek_at_last_error()


def get_error_name(code: int) -> str:
    """hipGetErrorName: HIP's name for an error code ('hipErrorUnknown' if strata lacks the code).

    Example:
        >>> get_error_name(700), get_error_name(2)
        ('hipErrorIllegalAddress', 'hipErrorOutOfMemory')
    """
    return _HIP_NAME_BY_CODE.get(int(code), "hipErrorUnknown")


def get_error_string(code: int) -> str:
    """hipGetErrorString: the description of an error code.

    Example:
        >>> get_error_string(700)
        'an illegal memory access was encountered'
    """
    return cuda.get_error_string(code)


__all__ = [
    "ArrayFlags", "ChannelFormatDesc", "CudaArray", "Memcpy3DParms", "PitchedPtr", "array_get_info", "malloc_3d",
    "create_channel_desc",
    "create_surface_object", "destroy_surface_object", "free_array", "malloc_3d_array", "malloc_array", "malloc_pitch",
    "memcpy_2d", "memcpy_2d_from_array", "memcpy_2d_to_array", "memcpy_3d", "memcpy_from_array", "memcpy_to_array",
    "MAPPING", "SHARED", "CompileError", "CudaError", "Device", "DeviceArray", "DeviceFault", "DeviceProperties",
    "Event", "FuncAttributes", "HipError", "InvalidLaunchConfig", "Kernel", "LaunchReport", "LaunchTimeout",
    "MemcpyKind", "Module", "OutOfMemoryError", "PTXSyntaxError", "Stream", "UnsupportedInstruction", "compile",
    "current_device", "device_can_access_peer", "device_count", "device_disable_peer_access",
    "device_enable_peer_access", "empty", "empty_cache", "free", "get_device", "get_device_properties",
    "get_error_name", "get_error_string", "get_last_error", "is_available", "launch_cooperative_kernel", "malloc",
    "max_memory_allocated",
    "mem_get_info", "memory_allocated", "memory_reserved", "memcpy", "memcpy_async", "memcpy_from_symbol",
    "memcpy_peer", "memcpy_peer_async", "memcpy_to_symbol", "memset", "memset_async",
    "occupancy_max_active_blocks_per_multiprocessor", "occupancy_max_potential_block_size", "peek_at_last_error",
    "pinned_empty", "pointer_get_attributes", "reset_peak_memory_stats", "set_device", "synchronize", "to_device",
    "zeros",
    "ResourceDesc", "TextureDesc", "create_texture_object", "destroy_texture_object",
    "get_texture_object_resource_desc", "get_texture_object_texture_desc",
]
