"""CUDA's own messages for its error codes (what cudaGetErrorString returns), by name. The replacement
runtime library's table is generated from these and strata.errors.CUDA_ERRORS (build.py); a code without a
message here gets its name as message."""

from __future__ import annotations

# Codes strata.errors does not list but the library returns (set by the C side itself).
EXTRA_CODES = {"cudaErrorInsufficientDriver": 35, "cudaErrorMissingConfiguration": 52}

ERROR_TEXTS: dict[str, str] = {
    "cudaSuccess": "no error",
    "cudaErrorInvalidValue": "invalid argument",
    "cudaErrorMemoryAllocation": "out of memory",
    "cudaErrorInitializationError": "initialization error",
    "cudaErrorCudartUnloading": "driver shutting down",
    "cudaErrorInvalidConfiguration": "invalid configuration argument",
    "cudaErrorInvalidPitchValue": "invalid pitch argument",
    "cudaErrorInvalidSymbol": "invalid device symbol",
    "cudaErrorInvalidChannelDescriptor": "invalid channel descriptor",
    "cudaErrorInvalidMemcpyDirection": "invalid copy direction for memcpy",
    "cudaErrorInvalidFilterSetting": "invalid filter setting",
    "cudaErrorInvalidNormSetting": "invalid norm setting",
    "cudaErrorInsufficientDriver": "CUDA driver version is insufficient for CUDA runtime version",
    "cudaErrorMissingConfiguration": "__global__ function call is not configured",
    "cudaErrorInvalidDeviceFunction": "invalid device function",
    "cudaErrorNoDevice": "no CUDA-capable device is detected",
    "cudaErrorInvalidDevice": "invalid device ordinal",
    "cudaErrorInvalidKernelImage": "device kernel image is invalid",
    "cudaErrorDeviceUninitialized": "invalid device context",
    "cudaErrorAlreadyMapped": "resource already mapped",
    "cudaErrorNoKernelImageForDevice": "no kernel image is available for execution on the device",
    "cudaErrorDeviceAlreadyInUse": "CUDA-capable device(s) is/are busy or unavailable",
    "cudaErrorPeerAccessUnsupported": "peer access is not supported between these two devices",
    "cudaErrorInvalidPtx": "a PTX JIT compilation failed",
    "cudaErrorInvalidSource": "device kernel image is invalid",
    "cudaErrorFileNotFound": "file not found",
    "cudaErrorOperatingSystem": "OS call failed or operation not supported on this OS",
    "cudaErrorInvalidResourceHandle": "invalid resource handle",
    "cudaErrorSymbolNotFound": "named symbol not found",
    "cudaErrorNotReady": "device not ready",
    "cudaErrorIllegalAddress": "an illegal memory access was encountered",
    "cudaErrorLaunchOutOfResources": "too many resources requested for launch",
    "cudaErrorLaunchTimeout": "the launch timed out and was terminated",
    "cudaErrorPeerAccessAlreadyEnabled": "peer access is already enabled",
    "cudaErrorPeerAccessNotEnabled": "peer access has not been enabled",
    "cudaErrorAssert": "device-side assert triggered",
    "cudaErrorHardwareStackError": "hardware stack error",
    "cudaErrorIllegalInstruction": "an illegal instruction was encountered",
    "cudaErrorMisalignedAddress": "misaligned address",
    "cudaErrorInvalidPc": "invalid program counter",
    "cudaErrorLaunchFailure": "unspecified launch failure",
    "cudaErrorCooperativeLaunchTooLarge": "too many blocks in cooperative launch",
    "cudaErrorNotPermitted": "operation not permitted",
    "cudaErrorNotSupported": "operation not supported",
    "cudaErrorUnknown": "unknown error",
    "cudaErrorInvalidClusterSize": "invalid cluster size",
}
