"""Errors every layer raises, with the CUDA and HIP names users search for.

A leaf module: any layer may import it. `strata.cuda` re-exports these names, which is where users
meet them; they live here so the virtual GPU (L0) can raise them without importing upward.
"""

from __future__ import annotations

# CUDA runtime error name -> (cudaError_t value, HIP twin). Values match the real enums.
CUDA_ERRORS: dict[str, tuple[int, str | None]] = {
    "cudaSuccess": (0, "hipSuccess"),
    "cudaErrorInvalidValue": (1, "hipErrorInvalidValue"),
    "cudaErrorMemoryAllocation": (2, "hipErrorOutOfMemory"),
    "cudaErrorInitializationError": (3, "hipErrorNotInitialized"),
    "cudaErrorCudartUnloading": (4, "hipErrorDeinitialized"),
    "cudaErrorInvalidConfiguration": (9, "hipErrorInvalidConfiguration"),
    "cudaErrorInvalidPitchValue": (12, "hipErrorInvalidPitchValue"),
    "cudaErrorInvalidSymbol": (13, "hipErrorInvalidSymbol"),
    "cudaErrorInvalidChannelDescriptor": (20, None),
    "cudaErrorInvalidMemcpyDirection": (21, "hipErrorInvalidMemcpyDirection"),
    "cudaErrorInvalidFilterSetting": (26, None),
    "cudaErrorInvalidNormSetting": (27, None),
    "cudaErrorInvalidDeviceFunction": (98, "hipErrorInvalidDeviceFunction"),
    "cudaErrorNoDevice": (100, "hipErrorNoDevice"),
    "cudaErrorInvalidDevice": (101, "hipErrorInvalidDevice"),
    "cudaErrorInvalidKernelImage": (200, "hipErrorInvalidImage"),
    "cudaErrorDeviceUninitialized": (201, "hipErrorInvalidContext"),
    "cudaErrorAlreadyMapped": (208, "hipErrorAlreadyMapped"),
    "cudaErrorNoKernelImageForDevice": (209, "hipErrorNoBinaryForGpu"),
    "cudaErrorDeviceAlreadyInUse": (216, "hipErrorContextAlreadyInUse"),
    "cudaErrorPeerAccessUnsupported": (217, "hipErrorPeerAccessUnsupported"),
    "cudaErrorInvalidPtx": (218, "hipErrorInvalidKernelFile"),
    "cudaErrorInvalidSource": (300, "hipErrorInvalidSource"),
    "cudaErrorFileNotFound": (301, "hipErrorFileNotFound"),
    "cudaErrorOperatingSystem": (304, "hipErrorOperatingSystem"),
    "cudaErrorInvalidResourceHandle": (400, "hipErrorInvalidHandle"),
    "cudaErrorSymbolNotFound": (500, "hipErrorNotFound"),
    "cudaErrorNotReady": (600, "hipErrorNotReady"),
    "cudaErrorIllegalAddress": (700, "hipErrorIllegalAddress"),
    "cudaErrorLaunchOutOfResources": (701, "hipErrorLaunchOutOfResources"),
    "cudaErrorLaunchTimeout": (702, "hipErrorLaunchTimeOut"),
    "cudaErrorPeerAccessAlreadyEnabled": (704, "hipErrorPeerAccessAlreadyEnabled"),
    "cudaErrorPeerAccessNotEnabled": (705, "hipErrorPeerAccessNotEnabled"),
    "cudaErrorAssert": (710, "hipErrorAssert"),
    "cudaErrorHardwareStackError": (714, None),
    "cudaErrorIllegalInstruction": (715, None),
    "cudaErrorMisalignedAddress": (716, None),
    "cudaErrorInvalidPc": (718, None),
    "cudaErrorLaunchFailure": (719, "hipErrorLaunchFailure"),
    "cudaErrorCooperativeLaunchTooLarge": (720, "hipErrorCooperativeLaunchTooLarge"),
    "cudaErrorNotPermitted": (800, None),
    "cudaErrorNotSupported": (801, "hipErrorNotSupported"),
    "cudaErrorInvalidClusterSize": (912, None),
    "cudaErrorUnknown": (999, "hipErrorUnknown"),
}


# HIP has no twin for these (HIPIFY: HIP_UNSUPPORTED); what a HIP program sees for the same event instead.
HIP_FALLBACK = {"cudaErrorInvalidChannelDescriptor": "hipErrorInvalidValue",
                "cudaErrorInvalidFilterSetting": "hipErrorInvalidValue",
                "cudaErrorInvalidNormSetting": "hipErrorInvalidValue",
                "cudaErrorHardwareStackError": "hipErrorLaunchFailure",
                "cudaErrorIllegalInstruction": "hipErrorLaunchFailure",
                "cudaErrorMisalignedAddress": "hipErrorLaunchFailure", "cudaErrorInvalidPc": "hipErrorLaunchFailure",
                "cudaErrorNotPermitted": "hipErrorNotSupported"}


class CudaError(RuntimeError):
    """A CUDA runtime error; `.name` is the cudaError_t name, `.hip_name` its HIP twin.

    Example:
        >>> e = CudaError("cudaErrorIllegalAddress", "bad access")
        >>> (e.name, e.code, e.hip_name)
        ('cudaErrorIllegalAddress', 700, 'hipErrorIllegalAddress')
    """

    default_name = "cudaErrorUnknown"

    def __init__(self, name: str | None = None, message: str = "") -> None:
        self.name = name or self.default_name
        self.code, twin = CUDA_ERRORS.get(self.name, (999, "hipErrorUnknown"))
        self.hip_name: str = twin or HIP_FALLBACK.get(self.name, "hipErrorUnknown")
        self.message = message
        super().__init__(f"{self.name}: {message}" if message else self.name)


class DeviceFault(CudaError):
    """A kernel touched memory it may not (memcheck), trapped, or failed an assertion.

    `.report` holds the structured fields compute-sanitizer prints: kernel, ptx_line, source_line,
    block, thread, address, size, access ('read'/'write'/'atomic'), space, and nearest allocation.
    """

    default_name = "cudaErrorIllegalAddress"

    def __init__(self, name: str | None = None, message: str = "", report: dict | None = None) -> None:
        super().__init__(name, message)
        self.report = dict(report or {})


class LaunchTimeout(CudaError):
    """A kernel ran past the kernel watchdog (`STRATA_KERNEL_TIMEOUT` seconds) or the optional
    instruction cap (`STRATA_LAUNCH_BUDGET`) and was stopped."""

    default_name = "cudaErrorLaunchTimeout"


class LaunchCancelled(CudaError):
    """A running kernel was stopped from the host: a device reset or a KeyboardInterrupt (Ctrl-C).

    The engine raises it at the next basic block; the command processor stops the kernel's queue
    with it, so it becomes the context's sticky error (`cudaErrorLaunchFailure`) until a reset.
    """

    default_name = "cudaErrorLaunchFailure"


class InvalidLaunchConfig(CudaError):
    """Grid, block or shared-memory request outside the device's limits."""

    default_name = "cudaErrorInvalidConfiguration"


class OutOfMemoryError(CudaError, MemoryError):
    """Device memory is exhausted (`cudaErrorMemoryAllocation`)."""

    default_name = "cudaErrorMemoryAllocation"


class PTXSyntaxError(ValueError):
    """Malformed PTX text; the message names line and column."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_line: str = "") -> None:
        self.line, self.column, self.source_line = line, column, source_line
        where = f"line {line}, column {column}: " if line else ""
        text = f"{where}{message}"
        if source_line:
            text += f"\n    {source_line.rstrip()}\n    {' ' * max(column - 1, 0)}^"
        super().__init__(text)


class UnsupportedInstruction(NotImplementedError):
    """A PTX instruction the virtual GPU does not implement, found when the module is loaded."""

    def __init__(self, opcode: str, kernel: str = "", line: int = 0) -> None:
        self.opcode, self.kernel, self.line = opcode, kernel, line
        super().__init__(
            f"the virtual GPU does not implement PTX instruction '{opcode}'"
            + (f" (in {kernel}, PTX line {line})" if kernel else "")
        )
