"""The DNN handle (cudnnHandle_t / miopenHandle_t) and what every DNN routine shares: argument checks in
cuDNN's style, the launch on the handle's stream, and the CUDA C++ reduction helpers the kernels use.

A handle is bound to the device current at creation and to one stream of it (None: the default
stream). Every kernel of every call on the handle is queued on that stream, in call order.

Example:
    >>> import strata.cuda as cuda
    >>> s = cuda.Stream()
    >>> h = create_handle(s)
    >>> h.stream is s, h.last_kernel
    (True, None)
    >>> set_stream(h, None); h.stream is None
    True
    >>> destroy_handle(h)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from strata.cuda import DeviceArray, Stream, current_device
from strata.libs.common import LibraryError, LibraryHandle, LibraryKernel, check_live_handle, check_stream, library_call

BAD_PARAM = "CUDNN_STATUS_BAD_PARAM"
NOT_SUPPORTED = "CUDNN_STATUS_NOT_SUPPORTED"
NOT_INITIALIZED = "CUDNN_STATUS_NOT_INITIALIZED"
F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = (F32, F16, BF16)
C_TYPES = {F32: "float", F16: "__half", BF16: "__nv_bfloat16"}

# Loads and stores that widen half and bfloat16 to float (the kernels compute in float) and round back.
TYPES_CU = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ __forceinline__ float ld(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ float ld(const __half* p, long long i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float* p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half* p, long long i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16(v); }
"""

# Block-wide reductions shared by the row kernels (softmax, norms, cross-entropy): a warp reduces with
# shuffles, warps meet in shared memory. Every thread of the block gets the result. The groups are 32
# lanes on every device (shuffle width 32): a 64-lane AMD wavefront holds two of them.
REDUCE_CU = r"""
#define NEG_INF __int_as_float(0xff800000)
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, 32);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, 32));
    return v;
}
__device__ float block_sum(float v) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();              // part[] may still be read by a previous reduction
    if (lane == 0) part[w] = v;
    __syncthreads();
    return warp_sum(lane < nw ? part[lane] : 0.0f);
}
__device__ float block_max(float v) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) part[w] = v;
    __syncthreads();
    return warp_max(lane < nw ? part[lane] : NEG_INF);
}
"""


class Handle(LibraryHandle):
    """A DNN library context: device, stream, `last_kernel` (the kernels the last call launched, joined
    by '+'; None before any call) and `last_launches` (their LaunchReports)."""

    library = "dnn"

    def launch(self, kernel: LibraryKernel, grid: Sequence[int] | int, block: Sequence[int] | int, args: Sequence[Any],
               shared_mem: int = 0) -> None:
        """Queue one kernel on the handle's stream and remember it for `last_kernel`.

        Raises:
            LibraryError: CUDNN_STATUS_BAD_PARAM if an array argument lives on another device.
        """
        for a in args:
            if isinstance(a, DeviceArray) and a.device.index != self.device.index:
                raise LibraryError(BAD_PARAM, f"[{kernel.name}] an array lives on device {a.device.index}, "
                                              f"the handle on device {self.device.index}")
        g = tuple(grid) if not isinstance(grid, int) else grid
        b = tuple(block) if not isinstance(block, int) else block
        self.last_launches.append(kernel.launch(g, b, args, shared_mem=shared_mem, stream=self.queue()))
        self.note(kernel.name)


def create_handle(stream: Stream | None = None) -> Handle:
    """cudnnCreate + cudnnSetStream (miopenCreateWithStream): a handle on the current device.

    Args:
        stream: a strata.cuda Stream of the current device, or None for the default stream.
    Returns:
        Handle.
    Raises:
        LibraryError: CUDNN_STATUS_BAD_PARAM if `stream` is not a stream of the current device.
    """
    device = current_device()
    check_stream("create_handle", stream, device, BAD_PARAM)
    return Handle(device, stream)


def destroy_handle(handle: Handle) -> None:
    """cudnnDestroy / miopenDestroy: free the workspace; later calls with the handle raise NOT_INITIALIZED."""
    check_handle(handle, "destroy_handle")
    if handle._workspace is not None and not handle._workspace.freed:
        handle._workspace.free()
    handle._workspace = None
    handle.destroyed = True


def set_stream(handle: Handle, stream: Stream | None) -> None:
    """cudnnSetStream / miopenSetStream: later calls queue their kernels on `stream` (None: default)."""
    check_handle(handle, "set_stream")
    check_stream("set_stream", stream, handle.device, BAD_PARAM)
    handle.stream = stream


def check_handle(handle: Any, op: str) -> None:
    """Raise CUDNN_STATUS_NOT_INITIALIZED unless `handle` is a live dnn Handle."""
    check_live_handle(handle, Handle, op, NOT_INITIALIZED)


def tensor(x: Any, what: str, op: str, shape: tuple[int, ...] | None = None, *,
           dtypes: Sequence[Any] = (np.float32,), min_ndim: int = 0) -> DeviceArray:
    """Check that `x` is a live DeviceArray of one of `dtypes` (and of `shape`, if given); return it."""
    if not isinstance(x, DeviceArray):
        raise LibraryError(BAD_PARAM, f"[{op}] {what} must be a DeviceArray, got {type(x).__name__}")
    if x.freed:
        raise LibraryError(BAD_PARAM, f"[{op}] {what} was freed")
    allowed = [np.dtype(d) for d in dtypes]
    if x.dtype not in allowed:
        raise LibraryError(NOT_SUPPORTED, f"[{op}] {what} must be {' or '.join(d.name for d in allowed)}, "
                                          f"got {x.dtype}")
    if x.ndim < min_ndim:
        raise LibraryError(BAD_PARAM, f"[{op}] {what} must have at least {min_ndim} dimension(s), got shape {x.shape}")
    if shape is not None and x.shape != tuple(shape):
        raise LibraryError(BAD_PARAM, f"[{op}] {what} must have shape {tuple(shape)}, got {x.shape}")
    return x


def typed(kernel: str, dtype: np.dtype) -> str:
    """The name expression of a kernel template instantiated for `dtype`: 'softmax_fwd<__half>'."""
    return f"{kernel}<{C_TYPES[dtype]}>"


def instances(*kernels: str) -> list[str]:
    """Name expressions of `kernels` for float, half and bfloat16 (what a KernelSet compiles)."""
    return [typed(k, d) for k in kernels for d in FLOATS]


def row_block(cols: int) -> int:
    """Threads per block for a kernel that gives one block to each row of `cols` values."""
    return int(min(256, max(32, 1 << max(0, (cols - 1).bit_length()))))


@contextlib.contextmanager
def dnn_call(handle: Handle, api: str, cuda_name: str, rocm_name: str, **args: Any) -> Iterator[None]:
    """The L4 trace span of one DNN call; the kernels launched inside are recorded as `kernel`."""
    handle.last_kernel = None
    handle.last_launches = []
    with library_call(f"dnn.{api}", cuda_name=cuda_name, rocm_name=rocm_name, **args) as ev:
        yield
        ev["kernel"] = handle.last_kernel
