"""HIP's C API by its C names, for people reading (or porting) ROCm code: hipMalloc, hipMemcpy,
hipStreamCreate, hipModuleLaunchKernel, ...

Source of truth for how strata spells HIP's C calls in Python. The calls are Pythonic: what C returns
through an out-parameter is the return value (`ptr = hipMalloc(n)`, not `hipMalloc(&ptr, n)`), and a
failure raises `CudaError` (`strata.hip.HipError`) whose `.hip_name` is the hipError_t the C call
would have returned, instead of returning it. A null stream (`0` or `None`) is the default stream.
Each call is its Pythonic twin in `strata.hip.api` (so strata.cuda's behaviour).

Example:
    >>> import numpy as np
    >>> x = np.arange(8, dtype=np.float32)
    >>> d = hipMalloc(x.nbytes)
    >>> hipMemcpy(d, x, x.nbytes, hipMemcpyHostToDevice)
    >>> y = np.zeros_like(x); hipMemcpy(y, d, x.nbytes, hipMemcpyDeviceToHost); hipFree(d)
    >>> y.tolist() == x.tolist(), hipGetErrorName(hipGetLastError())
    (True, 'hipSuccess')
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from strata import cuda
from strata.errors import CUDA_ERRORS, CudaError
from strata.hip import api
from strata.hip.compiler import HIP_VERSION
from strata.runtime import Stream as RuntimeStream

if TYPE_CHECKING:
    from strata.hip.amd import CodeObjectKernel

# hipError_t: the codes strata raises, by their HIP names (hipSuccess = 0, hipErrorIllegalAddress = 700).
hipError_t = enum.IntEnum("hipError_t", {hip: code for code, hip in CUDA_ERRORS.values() if hip})  # type: ignore[misc]  # noqa: N816
hipError_t.__doc__ = "hipError_t values (the HIP twin of every cudaError_t strata raises)."
globals().update(hipError_t.__members__)  # hipSuccess, hipErrorInvalidValue, ... as module constants

# hipMemcpyKind
hipMemcpyHostToHost = cuda.MemcpyKind.HostToHost
hipMemcpyHostToDevice = cuda.MemcpyKind.HostToDevice
hipMemcpyDeviceToHost = cuda.MemcpyKind.DeviceToHost
hipMemcpyDeviceToDevice = cuda.MemcpyKind.DeviceToDevice
hipMemcpyDefault = cuda.MemcpyKind.Default
# stream, event and host-allocation flags (values as in hip_runtime_api.h)
hipStreamDefault = 0x0
hipStreamNonBlocking = 0x1
hipEventDefault = 0x0
hipEventBlockingSync = 0x1
hipEventDisableTiming = 0x2
hipEventInterprocess = 0x4
hipHostMallocDefault = 0x0
# hipFuncAttribute (for hipFuncSetAttribute)
hipFuncAttributeMaxDynamicSharedMemorySize = 8
# hipFunction_attribute (for hipFuncGetAttribute; cuFuncGetAttribute's CU_FUNC_ATTRIBUTE_* values)
HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
HIP_FUNC_ATTRIBUTE_NUM_REGS = 4
HIP_FUNC_ATTRIBUTE_PTX_VERSION = 5
HIP_FUNC_ATTRIBUTE_BINARY_VERSION = 6
HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_FUNC_ATTRIBUTES = {0: "max_threads_per_block", 1: "shared_size_bytes", 2: "const_size_bytes",
                    3: "local_size_bytes", 4: "num_regs", 5: "ptx_version", 6: "binary_version",
                    8: "max_dynamic_shared_size_bytes"}


class dim3(NamedTuple):  # noqa: N801 - HIP's type name
    """A grid or block shape, as HIP's dim3 (unspecified dimensions are 1).

    Example:
        >>> dim3(4), tuple(dim3(2, 3))
        (dim3(x=4, y=1, z=1), (2, 3, 1))
    """

    x: int = 1
    y: int = 1
    z: int = 1


# --- devices -------------------------------------------------------------------------------------------


def hipGetDeviceCount() -> int:  # noqa: N802 - HIP's C names throughout
    """hipGetDeviceCount(int* count) -> count."""
    return api.device_count()


def hipSetDevice(device_id: int) -> None:  # noqa: N802
    """hipSetDevice(int deviceId). Raises CudaError (hipErrorInvalidDevice) for a missing device."""
    api.set_device(device_id)


def hipGetDevice() -> int:  # noqa: N802
    """hipGetDevice(int* deviceId) -> deviceId."""
    return api.get_device()


def hipGetDeviceProperties(device_id: int | None = None) -> cuda.DeviceProperties:  # noqa: N802
    """hipGetDeviceProperties(hipDeviceProp_t* prop, int deviceId) -> prop (default: current device)."""
    return api.get_device_properties(device_id)


def hipDeviceSynchronize() -> None:  # noqa: N802
    """hipDeviceSynchronize(): wait for all work on the current device; raises a sticky fault."""
    api.synchronize()


def hipDeviceReset() -> None:  # noqa: N802
    """hipDeviceReset(): drop the current device's work, memory and modules; clear its sticky error."""
    api.current_device().reset()


def hipRuntimeGetVersion() -> int:  # noqa: N802
    """hipRuntimeGetVersion(int* runtimeVersion) -> HIP_VERSION of strata's HIP headers."""
    return HIP_VERSION


def hipDriverGetVersion() -> int:  # noqa: N802
    """hipDriverGetVersion(int* driverVersion) -> HIP_VERSION (one version for strata's whole stack)."""
    return HIP_VERSION


def hipInit(flags: int = 0) -> None:  # noqa: N802
    """hipInit(unsigned flags) (cuInit's twin): nothing to do, strata initializes on first use; flags must be 0."""
    if flags != 0:
        raise CudaError("cudaErrorInvalidValue", f"[hipInit] flags must be 0, got {flags:#x}")


def hipDeviceGet(ordinal: int) -> int:  # noqa: N802
    """hipDeviceGet(hipDevice_t* device, int ordinal) -> device (cuDeviceGet's twin); a hipDevice_t is its
    ordinal. Raises CudaError (hipErrorInvalidDevice) for a device that is not present."""
    if not 0 <= ordinal < api.device_count():
        raise CudaError("cudaErrorInvalidDevice",
                        f"[hipDeviceGet] device {ordinal} does not exist: {api.device_count()} device(s) present")
    return ordinal


def hipDeviceGetName(device: int) -> str:  # noqa: N802
    """hipDeviceGetName(char* name, int len, hipDevice_t device) -> name."""
    return api.get_device_properties(hipDeviceGet(device)).name


def hipDeviceTotalMem(device: int) -> int:  # noqa: N802
    """hipDeviceTotalMem(size_t* bytes, hipDevice_t device) -> bytes of device memory."""
    return api.get_device_properties(hipDeviceGet(device)).totalGlobalMem


def hipDeviceComputeCapability(device: int) -> tuple[int, int]:  # noqa: N802
    """hipDeviceComputeCapability(int* major, int* minor, hipDevice_t device) -> (major, minor)."""
    props = api.get_device_properties(hipDeviceGet(device))
    return props.major, props.minor


# --- memory --------------------------------------------------------------------------------------------


def hipMalloc(size: int) -> int:  # noqa: N802
    """hipMalloc(void** ptr, size_t size) -> ptr, a device address. Raises OutOfMemoryError."""
    return api.malloc(size)


def hipFree(ptr: int | cuda.DeviceArray) -> None:  # noqa: N802
    """hipFree(void* ptr); hipFree(0) does nothing."""
    api.free(ptr)


def hipMemGetInfo() -> tuple[int, int]:  # noqa: N802
    """hipMemGetInfo(size_t* free, size_t* total) -> (free, total)."""
    return api.mem_get_info()


def hipHostMalloc(size: int, flags: int = hipHostMallocDefault) -> np.ndarray:  # noqa: N802
    """hipHostMalloc(void** ptr, size_t size, unsigned flags) -> `size` bytes of pinned host memory as a
    uint8 ndarray (view it as any dtype). Only hipHostMallocDefault is modeled."""
    if flags != hipHostMallocDefault:
        raise CudaError("cudaErrorNotSupported", f"[hipHostMalloc] flags {flags:#x} are not modeled; "
                        "only hipHostMallocDefault (0) is")
    return api.pinned_empty(size, np.uint8)


def hipMemcpy(dst: Any, src: Any, size_bytes: int, kind: cuda.MemcpyKind | str | int) -> None:  # noqa: N802
    """hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind)."""
    api.memcpy(dst, src, size_bytes, kind)


def hipMemcpyAsync(dst: Any, src: Any, size_bytes: int, kind: cuda.MemcpyKind | str | int,  # noqa: N802
                   stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream)."""
    api.memcpy_async(dst, src, size_bytes, kind, _stream(stream))


def hipMemcpyHtoD(dst: int | cuda.DeviceArray, src: np.ndarray, size_bytes: int) -> None:  # noqa: N802
    """hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t sizeBytes) (cuMemcpyHtoD's twin)."""
    api.memcpy(dst, src, size_bytes, hipMemcpyHostToDevice)


def hipMemcpyDtoH(dst: np.ndarray, src: int | cuda.DeviceArray, size_bytes: int) -> None:  # noqa: N802
    """hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t sizeBytes) (cuMemcpyDtoH's twin)."""
    api.memcpy(dst, src, size_bytes, hipMemcpyDeviceToHost)


def hipMemcpyDtoD(dst: int | cuda.DeviceArray, src: int | cuda.DeviceArray, size_bytes: int) -> None:  # noqa: N802
    """hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes) (cuMemcpyDtoD's twin)."""
    api.memcpy(dst, src, size_bytes, hipMemcpyDeviceToDevice)


def hipMemcpyHtoDAsync(dst: int | cuda.DeviceArray, src: np.ndarray, size_bytes: int,  # noqa: N802
                       stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t sizeBytes, hipStream_t stream)."""
    api.memcpy_async(dst, src, size_bytes, hipMemcpyHostToDevice, _stream(stream))


def hipMemcpyDtoHAsync(dst: np.ndarray, src: int | cuda.DeviceArray, size_bytes: int,  # noqa: N802
                       stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream)."""
    api.memcpy_async(dst, src, size_bytes, hipMemcpyDeviceToHost, _stream(stream))


def hipMemcpyDtoDAsync(dst: int | cuda.DeviceArray, src: int | cuda.DeviceArray, size_bytes: int,  # noqa: N802
                       stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream)."""
    api.memcpy_async(dst, src, size_bytes, hipMemcpyDeviceToDevice, _stream(stream))


def hipHostFree(ptr: np.ndarray) -> None:  # noqa: N802
    """hipHostFree(void* ptr): nothing happens at once; pinned memory goes back to the driver when its
    array is garbage-collected (drop every reference to it)."""


def hipMemset(dst: int | cuda.DeviceArray, value: int, size_bytes: int) -> None:  # noqa: N802
    """hipMemset(void* dst, int value, size_t sizeBytes): every byte becomes `value & 0xFF`."""
    api.memset(dst, value, size_bytes)


def hipMemsetAsync(dst: int | cuda.DeviceArray, value: int, size_bytes: int,  # noqa: N802
                   stream: cuda.Stream | int | None = None) -> None:
    """hipMemsetAsync(void* dst, int value, size_t sizeBytes, hipStream_t stream)."""
    api.memset_async(dst, value, size_bytes, _stream(stream))


def hipMemcpyPeer(dst: int | cuda.DeviceArray, dst_device: int, src: int | cuda.DeviceArray,  # noqa: N802
                  src_device: int, size_bytes: int) -> None:
    """hipMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t sizeBytes)."""
    api.memcpy_peer(dst, dst_device, src, src_device, size_bytes)


def hipMemcpyPeerAsync(dst: int | cuda.DeviceArray, dst_device: int, src: int | cuda.DeviceArray,  # noqa: N802
                       src_device: int, size_bytes: int, stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpyPeerAsync(dst, dstDevice, src, srcDevice, sizeBytes, hipStream_t stream)."""
    api.memcpy_peer_async(dst, dst_device, src, src_device, size_bytes, _stream(stream))


def hipPointerGetAttributes(ptr: Any) -> api.PointerAttributes:  # noqa: N802
    """hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* ptr) -> attributes:
    `.type` ("device", "host", "unregistered") and `.device`, the device whose range holds the address."""
    return api.pointer_get_attributes(ptr)


def hipDeviceCanAccessPeer(device_id: int, peer_device_id: int) -> int:  # noqa: N802
    """hipDeviceCanAccessPeer(int* canAccessPeer, int deviceId, int peerDeviceId) -> canAccessPeer (0 or 1)."""
    return int(api.device_can_access_peer(device_id, peer_device_id))


def hipDeviceEnablePeerAccess(peer_device_id: int, flags: int = 0) -> None:  # noqa: N802
    """hipDeviceEnablePeerAccess(int peerDeviceId, unsigned int flags): the current device may access the
    peer's memory. Raises hipErrorPeerAccessAlreadyEnabled, hipErrorInvalidDevice, hipErrorInvalidValue."""
    api.device_enable_peer_access(peer_device_id, flags)


def hipDeviceDisablePeerAccess(peer_device_id: int) -> None:  # noqa: N802
    """hipDeviceDisablePeerAccess(int peerDeviceId); hipErrorPeerAccessNotEnabled if it was not enabled."""
    api.device_disable_peer_access(peer_device_id)


def hipMemcpyToSymbol(module: cuda.Module, symbol: str, src: np.ndarray, size_bytes: int | None = None,  # noqa: N802
                      offset: int = 0) -> None:
    """hipMemcpyToSymbol(symbol, src, sizeBytes, offset, hipMemcpyHostToDevice); the module that holds
    the symbol comes first, since Python has no address for it."""
    api.memcpy_to_symbol(module, symbol, src, size_bytes, offset)


def hipMemcpyFromSymbol(dst: np.ndarray, module: cuda.Module, symbol: str, size_bytes: int | None = None,  # noqa: N802
                        offset: int = 0) -> None:
    """hipMemcpyFromSymbol(dst, symbol, sizeBytes, offset, hipMemcpyDeviceToHost), with the module."""
    api.memcpy_from_symbol(dst, module, symbol, size_bytes, offset)


# --- HIP arrays, pitched memory, 2-D/3-D copies, surface objects -----------------------------------------

# hipArray flags (hipMallocArray / hipMalloc3DArray), values as in hip_runtime_api.h
hipArrayDefault = 0x00
hipArrayLayered = 0x01
hipArraySurfaceLoadStore = 0x02
hipArrayCubemap = 0x04
hipArrayTextureGather = 0x08
# hipChannelFormatKind
hipChannelFormatKindSigned = 0
hipChannelFormatKindUnsigned = 1
hipChannelFormatKindFloat = 2


def hipCreateChannelDesc(x: int, y: int, z: int, w: int, f: int | str) -> cuda.ChannelFormatDesc:  # noqa: N802
    """hipCreateChannelDesc(int x, int y, int z, int w, hipChannelFormatKind f)."""
    return api.create_channel_desc(x, y, z, w, f)


def hipMallocArray(desc: cuda.ChannelFormatDesc, width: int, height: int = 0, flags: int = 0) -> cuda.CudaArray:  # noqa: N802
    """hipMallocArray(hipArray_t* array, const hipChannelFormatDesc* desc, size_t width, size_t height,
    unsigned int flags) -> array."""
    return api.malloc_array(desc, width, height, flags)


def hipMalloc3DArray(desc: cuda.ChannelFormatDesc, extent: tuple[int, int, int],  # noqa: N802
                     flags: int = 0) -> cuda.CudaArray:
    """hipMalloc3DArray(hipArray_t* array, const hipChannelFormatDesc* desc, hipExtent extent, unsigned int flags)
    -> array; `extent` is (width, height, depth) (make_hipExtent)."""
    return api.malloc_3d_array(desc, extent, flags)


def hipFreeArray(array: cuda.CudaArray | None) -> None:  # noqa: N802
    """hipFreeArray(hipArray_t array)."""
    api.free_array(array)


def hipMallocPitch(width: int, height: int) -> tuple[int, int]:  # noqa: N802
    """hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) -> (ptr, pitch)."""
    return api.malloc_pitch(width, height)


def hipMalloc3D(extent: tuple[int, int, int]) -> cuda.PitchedPtr:  # noqa: N802
    """hipMalloc3D(hipPitchedPtr* pitchedDevPtr, hipExtent extent) -> pitchedDevPtr; width in bytes."""
    return api.malloc_3d(extent)


def hipArrayGetInfo(array: cuda.CudaArray) -> tuple[cuda.ChannelFormatDesc, tuple[int, int, int], int]:  # noqa: N802
    """hipArrayGetInfo(hipChannelFormatDesc* desc, hipExtent* extent, unsigned int* flags, hipArray_t array)
    -> (desc, extent, flags)."""
    return api.array_get_info(array)


def hipMemcpy2D(dst: Any, dpitch: int, src: Any, spitch: int, width: int, height: int,  # noqa: N802
                kind: cuda.MemcpyKind | str | int) -> None:
    """hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, kind)."""
    api.memcpy_2d(dst, dpitch, src, spitch, width, height, kind)


def hipMemcpy2DAsync(dst: Any, dpitch: int, src: Any, spitch: int, width: int, height: int,  # noqa: N802
                     kind: cuda.MemcpyKind | str | int, stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, hipStream_t stream)."""
    api.memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream=_stream(stream))


def hipMemcpy2DToArray(dst: cuda.CudaArray, w_offset: int, h_offset: int, src: Any, spitch: int,  # noqa: N802
                       width: int, height: int, kind: cuda.MemcpyKind | str | int) -> None:
    """hipMemcpy2DToArray(hipArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
    size_t width, size_t height, hipMemcpyKind kind); wOffset and width in bytes."""
    api.memcpy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind)


def hipMemcpy2DToArrayAsync(dst: cuda.CudaArray, w_offset: int, h_offset: int, src: Any, spitch: int,  # noqa: N802
                            width: int, height: int, kind: cuda.MemcpyKind | str | int,
                            stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpy2DToArrayAsync(dst, wOffset, hOffset, src, spitch, width, height, kind, hipStream_t stream)."""
    api.memcpy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind, stream=_stream(stream))


def hipMemcpy2DFromArray(dst: Any, dpitch: int, src: cuda.CudaArray, w_offset: int, h_offset: int,  # noqa: N802
                         width: int, height: int, kind: cuda.MemcpyKind | str | int) -> None:
    """hipMemcpy2DFromArray(void* dst, size_t dpitch, hipArray_const_t src, size_t wOffset, size_t hOffset,
    size_t width, size_t height, hipMemcpyKind kind); wOffset and width in bytes."""
    api.memcpy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind)


def hipMemcpy2DFromArrayAsync(dst: Any, dpitch: int, src: cuda.CudaArray, w_offset: int, h_offset: int,  # noqa: N802
                              width: int, height: int, kind: cuda.MemcpyKind | str | int,
                              stream: cuda.Stream | int | None = None) -> None:
    """hipMemcpy2DFromArrayAsync(dst, dpitch, src, wOffset, hOffset, width, height, kind, hipStream_t stream)."""
    api.memcpy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind, stream=_stream(stream))


def hipMemcpyToArray(dst: cuda.CudaArray, w_offset: int, h_offset: int, src: Any, count: int,  # noqa: N802
                     kind: cuda.MemcpyKind | str | int) -> None:
    """hipMemcpyToArray(hipArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count, kind)."""
    api.memcpy_to_array(dst, w_offset, h_offset, src, count, kind)


def hipMemcpyFromArray(dst: Any, src: cuda.CudaArray, w_offset: int, h_offset: int, count: int,  # noqa: N802
                       kind: cuda.MemcpyKind | str | int) -> None:
    """hipMemcpyFromArray(void* dst, hipArray_const_t src, size_t wOffset, size_t hOffset, size_t count, kind)."""
    api.memcpy_from_array(dst, src, w_offset, h_offset, count, kind)


def hipMemcpy3D(p: cuda.Memcpy3DParms) -> None:  # noqa: N802
    """hipMemcpy3D(const hipMemcpy3DParms* p)."""
    api.memcpy_3d(p)


def hipMemcpy3DAsync(p: cuda.Memcpy3DParms, stream: cuda.Stream | int | None = None) -> None:  # noqa: N802
    """hipMemcpy3DAsync(const hipMemcpy3DParms* p, hipStream_t stream)."""
    api.memcpy_3d(p, stream=_stream(stream))


def hipCreateSurfaceObject(res_desc: Any) -> int:  # noqa: N802
    """hipCreateSurfaceObject(hipSurfaceObject_t* pSurfObject, const hipResourceDesc* pResDesc) -> pSurfObject;
    `res_desc` is a hipResourceDesc of a hipArray (ResourceDesc.from_array) or the array itself."""
    return api.create_surface_object(res_desc)


def hipDestroySurfaceObject(surface_object: int) -> None:  # noqa: N802
    """hipDestroySurfaceObject(hipSurfaceObject_t surfaceObject)."""
    api.destroy_surface_object(surface_object)


# --- texture objects -----------------------------------------------------------------------------------


def hipCreateTextureObject(res_desc: cuda.ResourceDesc, tex_desc: cuda.TextureDesc | None = None,  # noqa: N802
                           res_view_desc: Any = None) -> int:
    """hipCreateTextureObject(hipTextureObject_t* texObject, const hipResourceDesc* pResDesc,
    const hipTextureDesc* pTexDesc, const hipResourceViewDesc* pResViewDesc) -> texObject."""
    return api.create_texture_object(res_desc, tex_desc, res_view_desc)


def hipDestroyTextureObject(texture_object: int) -> None:  # noqa: N802
    """hipDestroyTextureObject(hipTextureObject_t textureObject)."""
    api.destroy_texture_object(texture_object)


def hipGetTextureObjectResourceDesc(texture_object: int) -> cuda.ResourceDesc:  # noqa: N802
    """hipGetTextureObjectResourceDesc(hipResourceDesc* pResDesc, hipTextureObject_t textureObject) -> pResDesc."""
    return api.get_texture_object_resource_desc(texture_object)


def hipGetTextureObjectTextureDesc(texture_object: int) -> cuda.TextureDesc:  # noqa: N802
    """hipGetTextureObjectTextureDesc(hipTextureDesc* pTexDesc, hipTextureObject_t textureObject) -> pTexDesc."""
    return api.get_texture_object_texture_desc(texture_object)


# --- streams and events --------------------------------------------------------------------------------


def hipStreamCreate() -> cuda.Stream:  # noqa: N802
    """hipStreamCreate(hipStream_t* stream) -> stream (blocking: it synchronizes with the null stream)."""
    return api.Stream()


def hipStreamCreateWithFlags(flags: int) -> cuda.Stream:  # noqa: N802
    """hipStreamCreateWithFlags(hipStream_t* stream, unsigned flags) -> stream; flags hipStreamDefault
    or hipStreamNonBlocking."""
    if flags not in (hipStreamDefault, hipStreamNonBlocking):
        raise CudaError("cudaErrorInvalidValue", f"[hipStreamCreateWithFlags] flags must be hipStreamDefault (0) "
                        f"or hipStreamNonBlocking (1), got {flags:#x}")
    return api.Stream(non_blocking=flags == hipStreamNonBlocking)


def hipStreamSynchronize(stream: cuda.Stream | int | None) -> None:  # noqa: N802
    """hipStreamSynchronize(hipStream_t stream): wait for the stream's work; raises a sticky fault."""
    _resolve(stream).synchronize()


def hipStreamQuery(stream: cuda.Stream) -> bool:  # noqa: N802
    """hipStreamQuery(hipStream_t stream): True for hipSuccess (all work done), False for hipErrorNotReady."""
    return stream.query()


def hipStreamWaitEvent(stream: cuda.Stream | int | None, event: cuda.Event, flags: int = 0) -> None:  # noqa: N802
    """hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned flags): later work on `stream`
    waits for the event's last record."""
    if flags != 0:
        raise CudaError("cudaErrorInvalidValue", f"[hipStreamWaitEvent] flags must be 0, got {flags:#x}")
    _resolve(stream).wait_event(event)


def hipStreamDestroy(stream: cuda.Stream) -> None:  # noqa: N802
    """hipStreamDestroy(hipStream_t stream): waits for the stream's queued work to finish (strata
    releases a stream's queues when the Stream object is collected)."""
    stream.synchronize()


def hipEventCreate() -> cuda.Event:  # noqa: N802
    """hipEventCreate(hipEvent_t* event) -> a timing event."""
    return api.Event()


def hipEventCreateWithFlags(flags: int) -> cuda.Event:  # noqa: N802
    """hipEventCreateWithFlags(hipEvent_t* event, unsigned flags) -> event; flags combine hipEventDefault,
    hipEventBlockingSync and hipEventDisableTiming (hipEventInterprocess is not modeled)."""
    known = hipEventBlockingSync | hipEventDisableTiming
    if flags & ~known:
        raise CudaError("cudaErrorInvalidValue", f"[hipEventCreateWithFlags] unsupported flags {flags:#x} "
                        "(supported: hipEventDefault, hipEventBlockingSync, hipEventDisableTiming)")
    return api.Event(timing=not flags & hipEventDisableTiming, blocking_sync=bool(flags & hipEventBlockingSync))


def hipEventRecord(event: cuda.Event, stream: cuda.Stream | int | None = None) -> None:  # noqa: N802
    """hipEventRecord(hipEvent_t event, hipStream_t stream = 0)."""
    event.record(_stream(stream))


def hipEventSynchronize(event: cuda.Event) -> None:  # noqa: N802
    """hipEventSynchronize(hipEvent_t event): wait until the recorded work completed."""
    event.synchronize()


def hipEventQuery(event: cuda.Event) -> bool:  # noqa: N802
    """hipEventQuery(hipEvent_t event): True for hipSuccess, False for hipErrorNotReady."""
    return event.query()


def hipEventElapsedTime(start: cuda.Event, stop: cuda.Event) -> float:  # noqa: N802
    """hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) -> ms of modeled device time.

    Raises:
        CudaError: hipErrorInvalidHandle (never recorded, or timing disabled), hipErrorNotReady.
    """
    return start.elapsed_time(stop)


def hipEventDestroy(event: cuda.Event) -> None:  # noqa: N802
    """hipEventDestroy(hipEvent_t event): nothing to release (an event is a Python object)."""


# --- modules and kernels -------------------------------------------------------------------------------


def hipModuleLoadData(image: str | bytes) -> cuda.Module:  # noqa: N802
    """hipModuleLoadData(hipModule_t* module, const void* image) -> module. The image is a code object
    for the device: PTX text on this platform (HIP source goes through `strata.hip.compile`).

    Raises:
        PTXSyntaxError: the image is not valid PTX; UnsupportedInstruction: the device lacks an instruction.
    """
    text = image.decode("utf-8").rstrip("\0") if isinstance(image, bytes | bytearray) else image
    return api.Module.from_ptx(text)


def hipModuleLoad(fname: str | Path) -> cuda.Module:  # noqa: N802
    """hipModuleLoad(hipModule_t* module, const char* fname) -> module, from a code-object file (PTX here)."""
    try:
        image = Path(fname).read_text(encoding="utf-8")
    except OSError as e:
        raise CudaError("cudaErrorFileNotFound", f"[hipModuleLoad] cannot read {fname}: {e.strerror}") from e
    return hipModuleLoadData(image)


def hipModuleUnload(module: cuda.Module) -> None:  # noqa: N802
    """hipModuleUnload(hipModule_t module): free the module's variables and kernel objects now; its
    kernels raise hipErrorInvalidHandle afterwards (a module is also unloaded with its last reference).

    Raises:
        CudaError: hipErrorInvalidHandle if the module was already unloaded.
    """
    module.unload()


def hipModuleGetFunction(module: cuda.Module, name: str) -> cuda.Kernel:  # noqa: N802
    """hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname) -> function.

    Raises:
        CudaError: hipErrorInvalidDeviceFunction when the module has no such kernel.
    """
    return module.get_function(name)


def hipModuleGetGlobal(module: cuda.Module, name: str) -> tuple[int, int]:  # noqa: N802
    """hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t hmod, const char* name)
    -> (dptr, bytes)."""
    return module.get_global(name)


def hipModuleLaunchKernel(f: cuda.Kernel, grid_dim_x: int, grid_dim_y: int, grid_dim_z: int,  # noqa: N802
                          block_dim_x: int, block_dim_y: int, block_dim_z: int, shared_mem_bytes: int,
                          stream: cuda.Stream | int | None, kernel_params: Sequence[Any]) -> cuda.LaunchReport:
    """hipModuleLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
    sharedMemBytes, stream, kernelParams, extra): queue `f` with one argument per kernel parameter
    (DeviceArrays or ints for pointers, NumPy scalars for values). Returns the launch's report.

    Raises:
        InvalidLaunchConfig: hipErrorInvalidConfiguration / hipErrorInvalidValue / hipErrorLaunchOutOfResources.
        TypeError: wrong argument count or types.
    """
    return f.launch((grid_dim_x, grid_dim_y, grid_dim_z), (block_dim_x, block_dim_y, block_dim_z),
                    kernel_params, shared_mem=shared_mem_bytes, stream=_stream(stream))


def hipLaunchKernelGGL(kernel: cuda.Kernel, grid: int | Sequence[int], block: int | Sequence[int],  # noqa: N802
                       shared_mem_bytes: int, stream: cuda.Stream | int | None, *args: Any) -> cuda.LaunchReport:
    """hipLaunchKernelGGL(kernel, grid, block, sharedMemBytes, stream, args...): HIP's spelling of
    `kernel<<<grid, block, sharedMemBytes, stream>>>(args...)`; grid and block are ints or dim3."""
    return kernel.launch(_dim(grid), _dim(block), args, shared_mem=shared_mem_bytes, stream=_stream(stream))


def hipLaunchCooperativeKernel(f: cuda.Kernel, grid_dim: int | Sequence[int], block_dim: int | Sequence[int],  # noqa: N802
                               kernel_params: Sequence[Any], shared_mem_bytes: int = 0,
                               stream: cuda.Stream | int | None = None) -> cuda.LaunchReport:
    """hipLaunchCooperativeKernel(f, gridDim, blockDim, kernelParams, sharedMemBytes, stream): launch with
    every block resident at once, so cooperative groups' grid sync works.

    Raises:
        CudaError: hipErrorCooperativeLaunchTooLarge when the grid has more blocks than fit at once.
    """
    return f.launch_cooperative(_dim(grid_dim), _dim(block_dim), kernel_params, shared_mem=shared_mem_bytes,
                                stream=_stream(stream))


def hipFuncGetAttributes(func: cuda.Kernel | CodeObjectKernel) -> cuda.FuncAttributes:  # noqa: N802
    """hipFuncGetAttributes(hipFuncAttributes* attr, const void* func) -> attr (for a code object's kernel:
    VGPRs as numRegs, static LDS as sharedSizeBytes, from its metadata)."""
    return func.attributes


def hipFuncGetAttribute(attrib: int, func: cuda.Kernel | CodeObjectKernel) -> int:  # noqa: N802
    """hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t hfunc) -> value
    (cuFuncGetAttribute's twin), for the HIP_FUNC_ATTRIBUTE_* constants this module defines."""
    field = _FUNC_ATTRIBUTES.get(attrib)
    if field is None:
        raise CudaError("cudaErrorInvalidValue", f"[hipFuncGetAttribute] unsupported attribute {attrib} "
                        f"(supported: {sorted(_FUNC_ATTRIBUTES)})")
    return int(getattr(func.attributes, field))


def hipFuncSetAttribute(func: cuda.Kernel, attr: int, value: int) -> None:  # noqa: N802
    """hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value); supported attribute:
    hipFuncAttributeMaxDynamicSharedMemorySize."""
    if attr != hipFuncAttributeMaxDynamicSharedMemorySize:
        raise CudaError("cudaErrorInvalidValue", f"[hipFuncSetAttribute] unsupported attribute {attr} (supported: "
                        f"hipFuncAttributeMaxDynamicSharedMemorySize = {hipFuncAttributeMaxDynamicSharedMemorySize})")
    func.set_attribute("max_dynamic_shared_size_bytes", value)


def hipOccupancyMaxActiveBlocksPerMultiprocessor(func: cuda.Kernel, block_size: int,  # noqa: N802
                                                 dyn_shared_mem_per_blk: int = 0) -> int:
    """hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f, int blockSize,
    size_t dynSharedMemPerBlk) -> numBlocks."""
    return api.occupancy_max_active_blocks_per_multiprocessor(func, block_size, dyn_shared_mem_per_blk)


def hipOccupancyMaxPotentialBlockSize(func: cuda.Kernel, dyn_shared_mem_per_blk: int = 0,  # noqa: N802
                                      block_size_limit: int = 0) -> tuple[int, int]:
    """hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, const void* f,
    size_t dynSharedMemPerBlk, int blockSizeLimit) -> (gridSize, blockSize)."""
    return api.occupancy_max_potential_block_size(func, dyn_shared_mem_per_blk, block_size_limit)


# The driver-API spellings (hipModuleOccupancy*, cuOccupancy*'s twins) are the same calls.
hipModuleOccupancyMaxActiveBlocksPerMultiprocessor = hipOccupancyMaxActiveBlocksPerMultiprocessor  # noqa: N816
hipModuleOccupancyMaxPotentialBlockSize = hipOccupancyMaxPotentialBlockSize  # noqa: N816


# --- errors --------------------------------------------------------------------------------------------


def hipGetLastError() -> int:  # noqa: N802
    """hipGetLastError() -> the current device's sticky error code (hipSuccess = 0)."""
    return api.get_last_error()


def hipPeekAtLastError() -> int:  # noqa: N802
    """hipPeekAtLastError() -> as hipGetLastError (a sticky error stays until hipDeviceReset)."""
    return api.peek_at_last_error()


def hipGetErrorName(error: int) -> str:  # noqa: N802
    """hipGetErrorName(hipError_t hip_error) -> e.g. 'hipErrorIllegalAddress'."""
    return api.get_error_name(error)


def hipGetErrorString(error: int) -> str:  # noqa: N802
    """hipGetErrorString(hipError_t hipError) -> its description."""
    return api.get_error_string(error)


def hipDrvGetErrorName(error: int) -> str:  # noqa: N802
    """hipDrvGetErrorName(hipError_t hipError, const char** errorString) (cuGetErrorName's twin) -> name."""
    return api.get_error_name(error)


def hipDrvGetErrorString(error: int) -> str:  # noqa: N802
    """hipDrvGetErrorString(hipError_t hipError, const char** errorString) (cuGetErrorString's twin)."""
    return api.get_error_string(error)


# --- helpers -------------------------------------------------------------------------------------------


def _stream(stream: cuda.Stream | int | None) -> cuda.Stream | None:
    """HIP's null stream (0) is the default stream."""
    if stream is None or (isinstance(stream, int) and stream == 0):
        return None
    if not isinstance(stream, cuda.Stream):
        raise CudaError("cudaErrorInvalidResourceHandle", f"[hip] expected a Stream or 0, got {stream!r}")
    return stream


def _resolve(stream: cuda.Stream | int | None) -> RuntimeStream:
    """The stream a call names; the null stream is the current device's default stream."""
    s = _stream(stream)
    return s if s is not None else api.current_device().context.stream(None)


def _dim(v: int | Sequence[int]) -> int | tuple[int, ...]:
    return v if isinstance(v, int | np.integer) else tuple(v)


__all__ = sorted(name for name in globals() if name.startswith(("hip", "HIP_")) or name == "dim3")
