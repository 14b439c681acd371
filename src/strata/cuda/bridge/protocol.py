"""The wire format between the replacement CUDA runtime library (native/cudart.c) and the runtime process.

Every request is `{u32 op; u32 device; u64 len}` and `len` bytes of payload (`device`: in its low 16 bits the
calling thread's current device plus 1, as each host thread has its own in CUDA; in its high 16 bits a tag
naming the calling host thread, whose launch errors its own cudaGetLastError returns); every reply (LAUNCH has none: it
is pipelined) is `{i32 cudaError_t; u32 stdout_len; u64 len; u32 stderr_len; u32 pad}`, then `len` bytes of
payload, then text the library writes to the program's stdout (device printf) and stderr (fault reports).
Little-endian, native sizes: both ends run on the same machine. Opcodes and the order of the device
property values must match the C enums.
"""

from __future__ import annotations

import enum
import struct

REQUEST = struct.Struct("<IIQ")
REPLY = struct.Struct("<iIQII")
LAUNCH = struct.Struct("<Q6IQQ")  # function id, grid xyz, block xyz, dynamic shared bytes, stream handle


class Op(enum.IntEnum):
    REGISTER = 1
    FUNC_INFO = 2
    LAUNCH = 3
    MALLOC = 4
    FREE = 5
    HTOD = 6
    DTOH = 7
    DTOD = 8
    MEMSET = 9
    SYNC = 10
    LAST_ERROR = 11
    SYMBOL = 12
    STREAM_CREATE = 13
    STREAM_DESTROY = 14
    STREAM_SYNC = 15
    STREAM_QUERY = 16
    STREAM_WAIT_EVENT = 17
    EVENT_CREATE = 18
    EVENT_DESTROY = 19
    EVENT_RECORD = 20
    EVENT_SYNC = 21
    EVENT_QUERY = 22
    EVENT_ELAPSED = 23
    PROPS = 24
    MEM_INFO = 25
    SET_DEVICE = 26
    RESET = 27
    FUNC_ATTRS = 28
    FUNC_SET_ATTR = 29
    POINTER_KIND = 30
    UNREGISTER = 31
    HTOD_SHM = 32  # a copy from the shared host arena (pinned memory, or the staging area)
    DTOH_SHM = 33  # a copy into it
    MANAGED = 34  # managed memory: device address, arena offset, size, initial bytes on the device? (the
    # program maps the arena there)
    LAUNCH_COOP = 35  # cudaLaunchCooperativeKernel (pipelined, as LAUNCH)
    LIMIT = 36  # cudaDeviceSetLimit/GetLimit
    OCCUPANCY = 37  # cudaOccupancyMaxActiveBlocksPerMultiprocessor
    REGISTER_PTX = 38  # cuModuleLoadData with PTX text
    ARRAY_CREATE = 39  # cudaMallocArray
    ARRAY_FREE = 40
    ARRAY_COPY = 41  # cudaMemcpy2DToArray (rows packed, or from a device pointer)
    TEX_CREATE = 42  # cudaCreateTextureObject (array, linear or pitch2D resources)
    TEX_DESTROY = 43
    MALLOC_PITCH = 44
    PEER = 45  # cudaDeviceEnablePeerAccess / DisablePeerAccess
    MEMCPY_PEER = 46
    ARRAY_COPY_OUT = 47  # cudaMemcpy2DFromArray (rows packed in the reply, or to a device pointer)
    SURF_CREATE = 48  # cudaCreateSurfaceObject over a CUDA array
    SURF_DESTROY = 49
    # 50..: host libraries, served by handlers the libraries register (strata.libs.rand.native)
    CURAND_CREATE = 50
    CURAND_SET = 51  # seed or offset
    CURAND_GENERATE = 52
    CURAND_DESTROY = 53
    CUBLAS_CREATE = 54  # strata.libs.blas.native
    CUBLAS_DESTROY = 55
    CUBLAS_CALL = 56  # one routine: cublas.c's call_t
    ARRAY3D_CREATE = 57  # cudaMalloc3DArray
    MEMCPY_3D = 58  # cudaMemcpy3D with a CUDA array on either side (a host side packed in body or reply)
    HTOD_MAPPED = 59  # a pageable copy the program makes itself through its mapping of device memory
    DTOH_MAPPED = 60  # (STRATA_CUDART_VRAM): queued for the copy engine to time; the reply says go
    # 70..: strata.hip.bridge's requests (HipOp)


# The host arena shared with the program (a memfd; STRATA_CUDART_SHM="fd,size"): staging area, then the
# heap of cudaMallocHost. Sparse: only pages the program touches use memory.
ARENA_BYTES = 16 << 30
STAGING_BYTES = 64 << 20  # cudart.c's STAGING


# DeviceProperties fields in the order cudart.c's P_* enum reads them; (name, index) picks a tuple element;
# "count" is the number of devices.
PROP_FIELDS: list[tuple[str, int | None]] = [
    ("totalGlobalMem", None), ("sharedMemPerBlock", None), ("regsPerBlock", None), ("warpSize", None),
    ("maxThreadsPerBlock", None), ("maxThreadsDim", 0), ("maxThreadsDim", 1), ("maxThreadsDim", 2),
    ("maxGridSize", 0), ("maxGridSize", 1), ("maxGridSize", 2), ("totalConstMem", None), ("major", None),
    ("minor", None), ("multiProcessorCount", None), ("memoryBusWidth", None), ("l2CacheSize", None),
    ("maxThreadsPerMultiProcessor", None), ("sharedMemPerMultiprocessor", None), ("regsPerMultiprocessor", None),
    ("sharedMemPerBlockOptin", None), ("maxBlocksPerMultiProcessor", None), ("reservedSharedMemPerBlock", None),
    ("pciBusID", None), ("pciDeviceID", None), ("pciDomainID", None), ("asyncEngineCount", None),
    ("concurrentKernels", None), ("cooperativeLaunch", None), ("unifiedAddressing", None), ("managedMemory", None),
    ("ECCEnabled", None), ("clockRate", None), ("memoryClockRate", None), ("count", None),
]
