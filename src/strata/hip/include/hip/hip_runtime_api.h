/* strata HIP headers: the parts of the HIP runtime API that device code can see.
 * NVRTC compiles device code only, so the host functions (hipMalloc, hipMemcpy, ...) are not declared
 * here; in strata they are Python functions (strata.hip). What remains are the enums and flag values that
 * kernels and shared headers sometimes name. Values match HIP's (which match CUDA's where both exist).
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_RUNTIME_API_H
#define STRATA_HIP_RUNTIME_API_H

#include <hip/hip_common.h>
#include <hip/hip_version.h>

typedef enum hipError_t {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorNotInitialized = 3,
    hipErrorDeinitialized = 4,
    hipErrorInvalidConfiguration = 9,
    hipErrorInvalidPitchValue = 12,
    hipErrorInvalidSymbol = 13,
    hipErrorInvalidMemcpyDirection = 21,
    hipErrorInvalidDeviceFunction = 98,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidImage = 200,
    hipErrorInvalidContext = 201,
    hipErrorAlreadyMapped = 208,
    hipErrorNoBinaryForGpu = 209,
    hipErrorContextAlreadyInUse = 216,
    hipErrorPeerAccessUnsupported = 217,
    hipErrorInvalidKernelFile = 218,
    hipErrorInvalidSource = 300,
    hipErrorFileNotFound = 301,
    hipErrorOperatingSystem = 304,
    hipErrorInvalidHandle = 400,
    hipErrorNotFound = 500,
    hipErrorNotReady = 600,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchOutOfResources = 701,
    hipErrorLaunchTimeOut = 702,
    hipErrorPeerAccessAlreadyEnabled = 704,
    hipErrorPeerAccessNotEnabled = 705,
    hipErrorAssert = 710,
    hipErrorLaunchFailure = 719,
    hipErrorCooperativeLaunchTooLarge = 720,
    hipErrorNotSupported = 801,
    hipErrorUnknown = 999
} hipError_t;

typedef enum hipMemcpyKind {
    hipMemcpyHostToHost = 0,
    hipMemcpyHostToDevice = 1,
    hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3,
    hipMemcpyDefault = 4
} hipMemcpyKind;

/* Stream and event creation flags (hipStreamCreateWithFlags, hipEventCreateWithFlags). */
#define hipStreamDefault 0x00
#define hipStreamNonBlocking 0x01
#define hipEventDefault 0x0
#define hipEventBlockingSync 0x1
#define hipEventDisableTiming 0x2
#define hipEventInterprocess 0x4

/* Opaque handles, for signatures in headers shared between host and device code. */
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef void* hipDeviceptr_t;
typedef int hipDevice_t;

/* Surface objects are CUDA's 64-bit handles; HIP's surf2Dread(&v, s, x, y) forms are CUDA's own overloads. */
typedef cudaSurfaceObject_t hipSurfaceObject_t;
typedef cudaTextureObject_t hipTextureObject_t;  // tex1Dfetch, tex2D, ... take it as CUDA's
#define hipBoundaryModeZero cudaBoundaryModeZero
#define hipBoundaryModeTrap cudaBoundaryModeTrap
#define hipBoundaryModeClamp cudaBoundaryModeClamp

#endif /* STRATA_HIP_RUNTIME_API_H */
