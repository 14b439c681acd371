"""Error queries of the CUDA runtime: cudaGetLastError, cudaPeekAtLastError, cudaGetErrorName/String.

strata raises errors as exceptions at the call that found them (each a `CudaError` with `.name`,
`.code` and `.hip_name`), so the only error left for these queries to report is a sticky one: a
kernel fault recorded on the current device's context, which stays until `Device.reset()`.

Example:
    >>> get_error_name(700), get_error_string(2)
    ('cudaErrorIllegalAddress', 'out of memory')
    >>> get_last_error()   # nothing faulted on the current device
    0
"""

from __future__ import annotations

from strata.cuda.device import current_device
from strata.errors import CUDA_ERRORS, CudaError

# cudaGetErrorString's texts for the codes strata raises.
_DESCRIPTIONS = {
    "cudaSuccess": "no error",
    "cudaErrorInvalidValue": "invalid argument",
    "cudaErrorMemoryAllocation": "out of memory",
    "cudaErrorInitializationError": "initialization error",
    "cudaErrorInvalidConfiguration": "invalid configuration argument",
    "cudaErrorInvalidSymbol": "invalid device symbol",
    "cudaErrorInvalidMemcpyDirection": "invalid copy direction for memcpy",
    "cudaErrorInvalidDeviceFunction": "invalid device function",
    "cudaErrorNoDevice": "no CUDA-capable device is detected",
    "cudaErrorInvalidDevice": "invalid device ordinal",
    "cudaErrorInvalidKernelImage": "device kernel image is invalid",
    "cudaErrorInvalidPtx": "a PTX JIT compilation failed",
    "cudaErrorInvalidSource": "device kernel image is invalid",
    "cudaErrorInvalidResourceHandle": "invalid resource handle",
    "cudaErrorSymbolNotFound": "named symbol not found",
    "cudaErrorNotReady": "device not ready",
    "cudaErrorIllegalAddress": "an illegal memory access was encountered",
    "cudaErrorLaunchOutOfResources": "too many resources requested for launch",
    "cudaErrorLaunchTimeout": "the launch timed out and was terminated",
    "cudaErrorAssert": "device-side assert triggered",
    "cudaErrorIllegalInstruction": "an illegal instruction was encountered",
    "cudaErrorMisalignedAddress": "misaligned address",
    "cudaErrorInvalidPc": "invalid program counter",
    "cudaErrorLaunchFailure": "unspecified launch failure",
    "cudaErrorNotSupported": "operation not supported",
    "cudaErrorUnknown": "unknown error",
}
_BY_CODE = {code: name for name, (code, _) in CUDA_ERRORS.items()}


def get_last_error() -> int:
    """cudaGetLastError: the sticky error code of the current device (0 = cudaSuccess)."""
    err = current_device().context.error
    return err.code if isinstance(err, CudaError) else (999 if err is not None else 0)


peek_at_last_error = get_last_error  # sticky errors are not cleared by reading them


def get_error_name(code: int) -> str:
    """cudaGetErrorName: 'cudaErrorIllegalAddress' for 700 ('cudaErrorUnknown' if strata lacks it)."""
    return _BY_CODE.get(int(code), "cudaErrorUnknown")


def get_error_string(code: int) -> str:
    """cudaGetErrorString: the description CUDA prints for `code`."""
    return _DESCRIPTIONS.get(get_error_name(code), "unrecognized error code")
