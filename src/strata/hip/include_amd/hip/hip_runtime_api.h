/* strata's HIP runtime API header (host side) for whole HIP programs on AMD devices.
 *
 * The declarations a HIP program's host code calls (hipMalloc, hipMemcpy, kernel<<<>>>, streams, events,
 * hipGetDeviceProperties, ...), written for strata; the definitions are in strata's libamdhip64.so.6
 * (src/strata/hip/bridge/native/amdhip.c), which forwards them to the `strata run` process. Valid C and C++:
 * the replacement library is built from C and includes this file, so both agree on every type.
 * Source-compatible with ROCm's HIP for the calls it declares; not binary-compatible (a program built
 * against ROCm's headers must be rebuilt with `strata hipcc`).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define HIP_VERSION_MAJOR 6
#define HIP_VERSION_MINOR 2
#define HIP_VERSION_PATCH 0
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif

#if defined(__HIP__)
#define __STRATA_HD __attribute__((host, device))
#else
#define __STRATA_HD
#endif

#ifdef __cplusplus
#define __STRATA_DEFAULT(x) = x
extern "C" {
#else
#define __STRATA_DEFAULT(x)
#endif

/* Error codes: HIP's names and numbers (which are CUDA's numbers for the same conditions). */
typedef enum hipError_t {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorMemoryAllocation = 2,
    hipErrorNotInitialized = 3,
    hipErrorInitializationError = 3,
    hipErrorDeinitialized = 4,
    hipErrorInvalidConfiguration = 9,
    hipErrorInvalidPitchValue = 12,
    hipErrorInvalidSymbol = 13,
    hipErrorInvalidDevicePointer = 17,
    hipErrorInvalidMemcpyDirection = 21,
    hipErrorInsufficientDriver = 35,
    hipErrorMissingConfiguration = 52,
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
    hipErrorInvalidResourceHandle = 400,
    hipErrorIllegalState = 401,
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
    hipErrorStreamCaptureUnsupported = 900,
    hipErrorUnknown = 999
} hipError_t;

typedef enum hipMemcpyKind {
    hipMemcpyHostToHost = 0,
    hipMemcpyHostToDevice = 1,
    hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3,
    hipMemcpyDefault = 4
} hipMemcpyKind;

typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
typedef void* hipDeviceptr_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
#define hipStreamLegacy ((hipStream_t)1)
#define hipStreamPerThread ((hipStream_t)2)

#define hipStreamDefault 0x0
#define hipStreamNonBlocking 0x1
#define hipEventDefault 0x0
#define hipEventBlockingSync 0x1
#define hipEventDisableTiming 0x2
#define hipEventInterprocess 0x4
#define hipHostMallocDefault 0x0
#define hipHostMallocPortable 0x1
#define hipHostMallocMapped 0x2
#define hipHostMallocWriteCombined 0x4
#define hipHostMallocCoherent 0x40000000
#define hipHostMallocNonCoherent 0x80000000
#define hipMemAttachGlobal 0x1
#define hipMemAttachHost 0x2
#define hipDeviceScheduleAuto 0x0

typedef struct dim3 {
    uint32_t x, y, z;
#ifdef __cplusplus
    constexpr __STRATA_HD dim3(uint32_t _x = 1, uint32_t _y = 1, uint32_t _z = 1) : x(_x), y(_y), z(_z) {}
#endif
} dim3;

/* What the device's instruction set has (all set on the CDNA devices strata models). */
typedef struct hipDeviceArch_t {
    unsigned hasGlobalInt32Atomics : 1;
    unsigned hasGlobalFloatAtomicExch : 1;
    unsigned hasSharedInt32Atomics : 1;
    unsigned hasSharedFloatAtomicExch : 1;
    unsigned hasFloatAtomicAdd : 1;
    unsigned hasGlobalInt64Atomics : 1;
    unsigned hasSharedInt64Atomics : 1;
    unsigned hasDoubles : 1;
    unsigned hasWarpVote : 1;
    unsigned hasWarpBallot : 1;
    unsigned hasWarpShuffle : 1;
    unsigned hasFunnelShift : 1;
    unsigned hasThreadFenceSystem : 1;
    unsigned hasSyncThreadsExt : 1;
    unsigned hasSurfaceFuncs : 1;
    unsigned has3dGrid : 1;
    unsigned hasDynamicParallelism : 1;
} hipDeviceArch_t;

/* hipDeviceProp_t: the fields of ROCm 6's structure that strata models (the rest are absent). */
typedef struct hipDeviceProp_t {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int concurrentManagedAccess;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    size_t maxSharedMemoryPerMultiProcessor;
    int clockInstructionRate;
    int gcnArch;
    char gcnArchName[256];
    hipDeviceArch_t arch;
} hipDeviceProp_t;

typedef enum hipDeviceAttribute_t {
    hipDeviceAttributeMaxThreadsPerBlock,
    hipDeviceAttributeMaxBlockDimX,
    hipDeviceAttributeMaxBlockDimY,
    hipDeviceAttributeMaxBlockDimZ,
    hipDeviceAttributeMaxGridDimX,
    hipDeviceAttributeMaxGridDimY,
    hipDeviceAttributeMaxGridDimZ,
    hipDeviceAttributeMaxSharedMemoryPerBlock,
    hipDeviceAttributeTotalConstantMemory,
    hipDeviceAttributeWarpSize,
    hipDeviceAttributeMaxRegistersPerBlock,
    hipDeviceAttributeClockRate,
    hipDeviceAttributeMemoryClockRate,
    hipDeviceAttributeMemoryBusWidth,
    hipDeviceAttributeMultiprocessorCount,
    hipDeviceAttributeComputeCapabilityMajor,
    hipDeviceAttributeComputeCapabilityMinor,
    hipDeviceAttributeL2CacheSize,
    hipDeviceAttributeMaxThreadsPerMultiProcessor,
    hipDeviceAttributeMaxSharedMemoryPerMultiprocessor,
    hipDeviceAttributeConcurrentKernels,
    hipDeviceAttributePciBusId,
    hipDeviceAttributePciDeviceId,
    hipDeviceAttributeEccEnabled,
    hipDeviceAttributeIntegrated,
    hipDeviceAttributeCooperativeLaunch,
    hipDeviceAttributeManagedMemory,
    hipDeviceAttributeConcurrentManagedAccess,
    hipDeviceAttributeUnifiedAddressing,
    hipDeviceAttributeCanMapHostMemory,
    hipDeviceAttributeComputeMode,
    hipDeviceAttributeAsyncEngineCount
} hipDeviceAttribute_t;

typedef struct hipFuncAttributes {
    int binaryVersion;
    int cacheModeCA;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxDynamicSharedSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int preferredShmemCarveout;
    int ptxVersion;
    size_t sharedSizeBytes;
} hipFuncAttributes;

/* ---- devices ---- */
hipError_t hipGetDeviceCount(int* count);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int* deviceId);
hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int deviceId);
hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId);
hipError_t hipDeviceGetName(char* name, int len, int deviceId);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceReset(void);
hipError_t hipSetDeviceFlags(unsigned flags);
hipError_t hipDriverGetVersion(int* driverVersion);
hipError_t hipRuntimeGetVersion(int* runtimeVersion);
hipError_t hipInit(unsigned int flags);

/* ---- errors ---- */
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
const char* hipGetErrorName(hipError_t hip_error);
const char* hipGetErrorString(hipError_t hipError);

/* ---- memory ---- */
hipError_t hipMalloc(void** ptr, size_t size);
hipError_t hipFree(void* ptr);
hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags __STRATA_DEFAULT(0));
hipError_t hipHostFree(void* ptr);
hipError_t hipMallocHost(void** ptr, size_t size);
hipError_t hipFreeHost(void* ptr);
hipError_t hipHostAlloc(void** ptr, size_t size, unsigned int flags);
hipError_t hipMallocManaged(void** dev_ptr, size_t size, unsigned int flags __STRATA_DEFAULT(hipMemAttachGlobal));
hipError_t hipMemPrefetchAsync(const void* dev_ptr, size_t count, int device, hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t sizeBytes);
hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t sizeBytes);
hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes);
hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       hipMemcpyKind kind);
hipError_t hipMemset(void* dst, int value, size_t sizeBytes);
hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count);
hipError_t hipMemGetInfo(size_t* free, size_t* total);
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes, size_t offset __STRATA_DEFAULT(0),
                             hipMemcpyKind kind __STRATA_DEFAULT(hipMemcpyHostToDevice));
hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes, size_t offset __STRATA_DEFAULT(0),
                               hipMemcpyKind kind __STRATA_DEFAULT(hipMemcpyDeviceToHost));
hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t sizeBytes, size_t offset,
                                  hipMemcpyKind kind, hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t sizeBytes, size_t offset,
                                    hipMemcpyKind kind, hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol);
hipError_t hipGetSymbolSize(size_t* size, const void* symbol);

/* ---- more memory, peers, host callbacks ---- */
typedef enum hipLimit_t { hipLimitStackSize = 0, hipLimitPrintfFifoSize = 1, hipLimitMallocHeapSize = 2 } hipLimit_t;
typedef void (*hipHostFn_t)(void* userData);
typedef void (*hipStreamCallback_t)(hipStream_t stream, hipError_t status, void* userData);
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            hipMemcpyKind kind, hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height);
hipError_t hipMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height);
hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count);
hipError_t hipMallocAsync(void** dev_ptr, size_t size, hipStream_t stream);
hipError_t hipFreeAsync(void* dev_ptr, hipStream_t stream);
hipError_t hipDeviceCanAccessPeer(int* canAccessPeer, int deviceId, int peerDeviceId);
hipError_t hipDeviceEnablePeerAccess(int peerDeviceId, unsigned int flags);
hipError_t hipDeviceDisablePeerAccess(int peerDeviceId);
hipError_t hipMemcpyPeer(void* dst, int dstDeviceId, const void* src, int srcDeviceId, size_t sizeBytes);
hipError_t hipMemcpyPeerAsync(void* dst, int dstDeviceId, const void* src, int srcDevice, size_t sizeBytes,
                              hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* userData);
hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void* userData,
                                unsigned int flags);
hipError_t hipDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority);

/* ---- graphs: stream capture and node-built graphs ---- */
typedef struct ihipGraph* hipGraph_t;
typedef struct hipGraphNode* hipGraphNode_t;
typedef struct hipGraphExec* hipGraphExec_t;
typedef enum hipStreamCaptureMode {
    hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal = 1, hipStreamCaptureModeRelaxed = 2
} hipStreamCaptureMode;
typedef enum hipStreamCaptureStatus {
    hipStreamCaptureStatusNone = 0, hipStreamCaptureStatusActive = 1, hipStreamCaptureStatusInvalidated = 2
} hipStreamCaptureStatus;
typedef struct hipKernelNodeParams {
    dim3 blockDim;
    void** extra;
    void* func;
    dim3 gridDim;
    void** kernelParams;
    unsigned int sharedMemBytes;
} hipKernelNodeParams;
hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* pGraph);
hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus* pCaptureStatus);
hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus* pCaptureStatus,
                                   unsigned long long* pId);
hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int flags);
hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipGraphClone(hipGraph_t* pGraphClone, hipGraph_t originalGraph);
hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* numNodes);
hipError_t hipGraphAddKernelNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const hipGraphNode_t* pDependencies,
                                 size_t numDependencies, const hipKernelNodeParams* pNodeParams);
hipError_t hipGraphAddEmptyNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const hipGraphNode_t* pDependencies,
                                size_t numDependencies);
hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                   size_t numDependencies);
hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph, hipGraphNode_t* pErrorNode,
                               char* pLogBuffer, size_t bufferSize);
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* pGraphExec, hipGraph_t graph, unsigned long long flags);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value);
hipError_t hipDeviceGetLimit(size_t* pValue, hipLimit_t limit);

/* ---- streams and events ---- */
hipError_t hipStreamCreate(hipStream_t* stream);
hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned int flags);
hipError_t hipStreamCreateWithPriority(hipStream_t* stream, unsigned int flags, int priority);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamQuery(hipStream_t stream);
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags __STRATA_DEFAULT(0));
hipError_t hipEventCreate(hipEvent_t* event);
hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipEventDestroy(hipEvent_t event);

/* ---- kernels ---- */
hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                           size_t sharedMemBytes __STRATA_DEFAULT(0), hipStream_t stream __STRATA_DEFAULT(0));
hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void* func);
typedef enum hipFuncAttribute {
    hipFuncAttributeMaxDynamicSharedMemorySize = 8,
    hipFuncAttributePreferredSharedMemoryCarveout = 9
} hipFuncAttribute;
typedef enum hipFuncCache_t {
    hipFuncCachePreferNone, hipFuncCachePreferShared, hipFuncCachePreferL1, hipFuncCachePreferEqual
} hipFuncCache_t;
hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value);
hipError_t hipFuncSetCacheConfig(const void* func, hipFuncCache_t config);
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f, int blockSize,
                                                        size_t dynSharedMemPerBlk);
/* ---- the module API: code objects loaded at run time (a file written by `strata hipcc --genco`, or bytes) ---- */
hipError_t hipModuleLoad(hipModule_t* module, const char* fname);
hipError_t hipModuleLoadData(hipModule_t* module, const void* image);
hipError_t hipModuleUnload(hipModule_t module);
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname);
hipError_t hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t hmod, const char* name);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                 unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
                                 void** kernelParams, void** extra);

/* what clang's lowering of kernel<<<grid, block, shmem, stream>>>(...) calls */
hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem __STRATA_DEFAULT(0),
                                      hipStream_t stream __STRATA_DEFAULT(0));
hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, hipStream_t* stream);

#ifdef __cplusplus
}  /* extern "C" */

/* C++ conveniences HIP has: typed pointers, symbols by reference, hipLaunchKernelGGL. */
template <typename T> static inline hipError_t hipMalloc(T** ptr, size_t size) {
    return hipMalloc((void**)ptr, size);
}
template <typename T> static inline hipError_t hipHostMalloc(T** ptr, size_t size, unsigned int flags = 0) {
    return hipHostMalloc((void**)ptr, size, flags);
}
template <typename T> static inline hipError_t hipHostAlloc(T** ptr, size_t size, unsigned int flags) {
    return hipHostAlloc((void**)ptr, size, flags);
}
template <typename T> static inline hipError_t hipMallocHost(T** ptr, size_t size) {
    return hipMallocHost((void**)ptr, size);
}
template <typename T> static inline hipError_t hipMallocPitch(T** ptr, size_t* pitch, size_t width, size_t height) {
    return hipMallocPitch((void**)ptr, pitch, width, height);
}
template <typename T> static inline hipError_t hipMallocAsync(T** ptr, size_t size, hipStream_t stream) {
    return hipMallocAsync((void**)ptr, size, stream);
}
template <typename T> static inline hipError_t hipFuncSetAttribute(T* func, hipFuncAttribute attr, int value) {
    return hipFuncSetAttribute((const void*)func, attr, value);
}
template <typename T> static inline hipError_t hipFuncSetCacheConfig(T* func, hipFuncCache_t config) {
    return hipFuncSetCacheConfig((const void*)func, config);
}
template <typename T> static inline hipError_t hipMallocManaged(T** ptr, size_t size,
                                                                unsigned int flags = hipMemAttachGlobal) {
    return hipMallocManaged((void**)ptr, size, flags);
}
/* A symbol is a __device__/__constant__ variable named by reference (`c`) or by address (`&c`,
 * HIP_SYMBOL(c)); a pointer argument is taken as the symbol's address. */
template <typename T> static inline const void* __strata_symbol(const T& s) { return (const void*)&s; }
template <typename T> static inline const void* __strata_symbol(T* const& s) { return (const void*)s; }
template <typename T> static inline hipError_t hipMemcpyToSymbol(const T& symbol, const void* src, size_t sizeBytes,
                                                                 size_t offset = 0,
                                                                 hipMemcpyKind kind = hipMemcpyHostToDevice) {
    return hipMemcpyToSymbol(__strata_symbol(symbol), src, sizeBytes, offset, kind);
}
template <typename T> static inline hipError_t hipMemcpyFromSymbol(void* dst, const T& symbol, size_t sizeBytes,
                                                                   size_t offset = 0,
                                                                   hipMemcpyKind kind = hipMemcpyDeviceToHost) {
    return hipMemcpyFromSymbol(dst, __strata_symbol(symbol), sizeBytes, offset, kind);
}
template <typename T> static inline hipError_t hipGetSymbolAddress(void** devPtr, const T& symbol) {
    return hipGetSymbolAddress(devPtr, __strata_symbol(symbol));
}
template <typename T> static inline hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, T* func) {
    return hipFuncGetAttributes(attr, (const void*)func);
}
template <typename T> static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(
        int* numBlocks, T* f, int blockSize, size_t dynSharedMemPerBlk) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, (const void*)f, blockSize, dynSharedMemPerBlk);
}

#define HIP_SYMBOL(X) (&(X))
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define hipLaunchKernelGGL(kernel, numBlocks, numThreads, memPerBlock, streamId, ...) \
    do { kernel<<<(numBlocks), (numThreads), (memPerBlock), (streamId)>>>(__VA_ARGS__); } while (0)
#endif  /* __cplusplus */

#undef __STRATA_DEFAULT
