/* strata's replacement HIP runtime (libamdhip64.so.6) for whole HIP programs on AMD devices.
 *
 * A program built with `strata hipcc` links this library. Its static constructors hand over the device code
 * (__hipRegisterFatBinary: the 'HIPF' wrapper around a clang offload bundle holding the gfx942 code object)
 * and name its kernels and variables (__hipRegisterFunction/__hipRegisterVar); kernel<<<...>>> becomes
 * __hipPushCallConfiguration, the kernel's stub, __hipPopCallConfiguration and hipLaunchKernel.
 *
 * The calls travel over the same connection as strata's CUDA runtime (libcudart.so.13, which this library
 * links): both speak one wire protocol to the `strata run` process, which serves HIP modules with
 * strata.hip on the virtual AMD GPU (src/strata/hip/bridge/server.py). So this file is the HIP face of that
 * library: HIP's names and types over the same transport, pinned/managed memory arena and pipelined
 * launches. HIP's error codes are CUDA's numbers, so codes pass through unchanged. Exported HIP names this
 * file does not define are weak stubs (amdhip_stubs.c) that return hipErrorNotSupported and print their name
 * once.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strata's libcudart.so.13 (same ABI: cudaError_t is an int enum, dim3 three uint32) -------------- */
hipError_t cudaMalloc(void**, size_t);
hipError_t cudaFree(void*);
hipError_t cudaMallocHost(void**, size_t);
hipError_t cudaFreeHost(void*);
hipError_t cudaMallocManaged(void**, size_t, unsigned);
hipError_t cudaMemcpy(void*, const void*, size_t, int);
hipError_t cudaMemcpyAsync(void*, const void*, size_t, int, hipStream_t);
hipError_t cudaMemcpy2D(void*, size_t, const void*, size_t, size_t, size_t, int);
hipError_t cudaMemset(void*, int, size_t);
hipError_t cudaMemsetAsync(void*, int, size_t, hipStream_t);
hipError_t cudaMemGetInfo(size_t*, size_t*);
hipError_t cudaMemcpyToSymbol(const void*, const void*, size_t, size_t, int);
hipError_t cudaMemcpyFromSymbol(void*, const void*, size_t, size_t, int);
hipError_t cudaMemcpyToSymbolAsync(const void*, const void*, size_t, size_t, int, hipStream_t);
hipError_t cudaMemcpyFromSymbolAsync(void*, const void*, size_t, size_t, int, hipStream_t);
hipError_t cudaGetSymbolAddress(void**, const void*);
hipError_t cudaGetSymbolSize(size_t*, const void*);
hipError_t cudaGetDeviceCount(int*);
hipError_t cudaSetDevice(int);
hipError_t cudaGetDevice(int*);
hipError_t cudaDeviceSynchronize(void);
hipError_t cudaDeviceReset(void);
hipError_t cudaGetLastError(void);
hipError_t cudaPeekAtLastError(void);
hipError_t cudaStreamCreateWithFlags(hipStream_t*, unsigned);
hipError_t cudaStreamDestroy(hipStream_t);
hipError_t cudaStreamSynchronize(hipStream_t);
hipError_t cudaStreamQuery(hipStream_t);
hipError_t cudaStreamWaitEvent(hipStream_t, hipEvent_t, unsigned);
hipError_t cudaEventCreateWithFlags(hipEvent_t*, unsigned);
hipError_t cudaEventRecord(hipEvent_t, hipStream_t);
hipError_t cudaEventSynchronize(hipEvent_t);
hipError_t cudaEventQuery(hipEvent_t);
hipError_t cudaEventElapsedTime(float*, hipEvent_t, hipEvent_t);
hipError_t cudaEventDestroy(hipEvent_t);
hipError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, hipStream_t);
hipError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int*, const void*, int, size_t);
unsigned __cudaPushCallConfiguration(dim3, dim3, size_t, hipStream_t);
hipError_t __cudaPopCallConfiguration(dim3*, dim3*, size_t*, void*);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int);
hipError_t cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t, int, hipStream_t);
hipError_t cudaMallocPitch(void**, size_t*, size_t, size_t);
hipError_t cudaMemset2D(void*, size_t, int, size_t, size_t);
hipError_t cudaMallocAsync(void**, size_t, hipStream_t);
hipError_t cudaFreeAsync(void*, hipStream_t);
hipError_t cudaDeviceCanAccessPeer(int*, int, int);
hipError_t cudaDeviceEnablePeerAccess(int, unsigned);
hipError_t cudaDeviceDisablePeerAccess(int);
hipError_t cudaMemcpyPeer(void*, int, const void*, int, size_t);
hipError_t cudaMemcpyPeerAsync(void*, int, const void*, int, size_t, hipStream_t);
hipError_t cudaLaunchHostFunc(hipStream_t, hipHostFn_t, void*);
hipError_t cudaStreamAddCallback(hipStream_t, hipStreamCallback_t, void*, unsigned);
hipError_t cudaDeviceGetStreamPriorityRange(int*, int*);
hipError_t cudaDeviceSetLimit(int, size_t);
hipError_t cudaDeviceGetLimit(size_t*, int);
hipError_t cudaFuncSetAttribute(const void*, int, int);
hipError_t strata_call(uint32_t op, const void* a, size_t na, void* out, size_t cap);
hipError_t strata_module_global(void* mod, const char* name, uint64_t* addr, uint64_t* size);
void* strata_module_function(void* mod, const char* name, hipError_t* err);
hipError_t strata_launch(void* func, dim3 g, dim3 b, size_t shmem, hipStream_t s, void** params);
void strata_clear_local_error(void);
void** strata_register_image(uint32_t op, const void* image, size_t len);
#include "strata_props.h"  /* amdhip_props.c: the parts that need CUDA's own structure layouts */

enum { OP_HIP_REGISTER = 70 };  /* protocol.Op.HIP_REGISTER */

/* ---- registration ------------------------------------------------------------------------------------- */
#define HIPF_MAGIC 0x48495046u  /* "HIPF" */
#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
typedef struct { uint32_t magic, version; const void* binary; const void* unused; } hipf_wrapper_t;

/* The size of an offload bundle: the end of its furthest entry (the header names offset and size of each). */
static size_t bundle_size(const char* b) {
    if (memcmp(b, BUNDLE_MAGIC, 24) != 0) return 0;
    uint64_t n, end = 32;
    memcpy(&n, b + 24, 8);
    size_t pos = 32;
    for (uint64_t i = 0; i < n && i < 64; i++) {
        uint64_t off, size, idlen;
        memcpy(&off, b + pos, 8); memcpy(&size, b + pos + 8, 8); memcpy(&idlen, b + pos + 16, 8);
        /* a target id is a short string ("hipv4-amdgcn-amd-amdhsa--gfx942:..."); a huge length is not a bundle
         * (hipModuleLoadData of bad bytes: the next entry would be read far past the image) */
        if (idlen > 4096 || off > (1ull << 40) || size > (1ull << 40)) return 0;
        pos += 24 + idlen;
        if (pos > end) end = pos;
        if (off + size > end) end = off + size;
    }
    return end;
}

void** __hipRegisterFatBinary(const void* data) {
    const hipf_wrapper_t* w = data;
    const char* bundle = w && w->magic == HIPF_MAGIC ? w->binary : NULL;
    size_t n = bundle ? bundle_size(bundle) : 0;
    if (!n) {
        /* the runtime process says why at first use (hipErrorInvalidImage / NoBinaryForGpu) */
        const char* none = "";
        return strata_register_image(OP_HIP_REGISTER, none, 0);
    }
    return strata_register_image(OP_HIP_REGISTER, bundle, n);
}

void __hipUnregisterFatBinary(void** handle) {
    (void)handle;  /* modules live until the runtime process ends; nothing to send at exit */
}

void __hipRegisterFunction(void** handle, const void* hostFunction, char* deviceFunction, const char* deviceName,
                           unsigned int threadLimit, void* tid, void* bid, dim3* blockDim, dim3* gridDim, int* wSize) {
    __cudaRegisterFunction(handle, hostFunction, deviceFunction, deviceName, (int)threadLimit, tid, bid, blockDim,
                           gridDim, wSize);
}

void __hipRegisterVar(void** handle, char* hostVar, char* deviceVar, const char* deviceName, int ext, size_t size,
                      int constant, int global) {
    __cudaRegisterVar(handle, hostVar, deviceVar, deviceName, ext, size, constant, global);
}

/* A __managed__ variable: clang gives the host a pointer variable (`hostPtrVar`, null) and the initial value
 * (`init`); the device side has a pointer variable of the same name. One managed allocation holds the value:
 * the host's pointer and the device's pointer variable both get its address, so host code and kernels share
 * it as they share hipMallocManaged memory. Done at registration (before main), as HIP's runtime does. */
void __hipRegisterManagedVar(void** handle, void** hostPtrVar, void* init, const char* name, size_t size,
                             unsigned align) {
    (void)align;
    void* p = NULL;
    uint64_t addr = 0, n = 0;
    if (cudaMallocManaged(&p, size, hipMemAttachGlobal) != hipSuccess ||
        strata_module_global(handle, name, &addr, &n) != hipSuccess || n != sizeof p) {
        fprintf(stderr, "strata: cannot set up the __managed__ variable %s\n", name);
        cudaGetLastError();  /* not the program's error: its first use of the variable shows the problem */
        return;
    }
    memcpy(p, init, size);
    *hostPtrVar = p;
    cudaMemcpy((void*)(uintptr_t)addr, &p, sizeof p, hipMemcpyHostToDevice);
}

hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, hipStream_t stream) {
    return __cudaPushCallConfiguration(gridDim, blockDim, sharedMem, stream) ? hipErrorInvalidConfiguration
                                                                             : hipSuccess;
}

hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, hipStream_t* stream) {
    return __cudaPopCallConfiguration(gridDim, blockDim, sharedMem, stream);
}

hipError_t hipLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shmem, hipStream_t s) {
    return cudaLaunchKernel(f, g, b, args, shmem, s);
}

/* ---- graphs: libcudart records captures and node-built graphs (HIP launches are its launches), so these
 * are its calls under HIP's names; only hipKernelNodeParams orders its fields differently. */
struct strata_kernel_node_params { void* func; dim3 gridDim; dim3 blockDim; unsigned sharedMemBytes; void** kernelParams;
                                   void** extra; };  /* cudaKernelNodeParams */
hipError_t cudaStreamBeginCapture(hipStream_t, int);
hipError_t cudaStreamEndCapture(hipStream_t, hipGraph_t*);
hipError_t cudaStreamIsCapturing(hipStream_t, int*);
hipError_t cudaStreamGetCaptureInfo(hipStream_t, int*, unsigned long long*, hipGraph_t*, const hipGraphNode_t**,
                                    const void**, size_t*);
hipError_t cudaGraphCreate(hipGraph_t*, unsigned);
hipError_t cudaGraphDestroy(hipGraph_t);
hipError_t cudaGraphClone(hipGraph_t*, hipGraph_t);
hipError_t cudaGraphGetNodes(hipGraph_t, hipGraphNode_t*, size_t*);
hipError_t cudaGraphAddKernelNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                  const struct strata_kernel_node_params*);
hipError_t cudaGraphAddEmptyNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t);
hipError_t cudaGraphAddDependencies(hipGraph_t, const hipGraphNode_t*, const hipGraphNode_t*, size_t);
hipError_t cudaGraphInstantiateWithFlags(hipGraphExec_t*, hipGraph_t, unsigned long long);
hipError_t cudaGraphLaunch(hipGraphExec_t, hipStream_t);
hipError_t cudaGraphExecDestroy(hipGraphExec_t);

hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode) { return cudaStreamBeginCapture(s, (int)mode); }
hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* g) { return cudaStreamEndCapture(s, g); }
hipError_t hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus* status) {
    return cudaStreamIsCapturing(s, (int*)status);
}
hipError_t hipStreamGetCaptureInfo(hipStream_t s, hipStreamCaptureStatus* status, unsigned long long* id) {
    return cudaStreamGetCaptureInfo(s, (int*)status, id, NULL, NULL, NULL, NULL);
}
hipError_t hipGraphCreate(hipGraph_t* g, unsigned flags) { return cudaGraphCreate(g, flags); }
hipError_t hipGraphDestroy(hipGraph_t g) { return cudaGraphDestroy(g); }
hipError_t hipGraphClone(hipGraph_t* clone, hipGraph_t g) { return cudaGraphClone(clone, g); }
hipError_t hipGraphGetNodes(hipGraph_t g, hipGraphNode_t* nodes, size_t* n) { return cudaGraphGetNodes(g, nodes, n); }
hipError_t hipGraphAddKernelNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* deps, size_t n,
                                 const hipKernelNodeParams* p) {
    if (!p) return hipErrorInvalidValue;
    struct strata_kernel_node_params c = {p->func, p->gridDim, p->blockDim, p->sharedMemBytes, p->kernelParams,
                                          p->extra};
    return cudaGraphAddKernelNode(out, g, deps, n, &c);
}
hipError_t hipGraphAddEmptyNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* deps, size_t n) {
    return cudaGraphAddEmptyNode(out, g, deps, n);
}
hipError_t hipGraphAddDependencies(hipGraph_t g, const hipGraphNode_t* from, const hipGraphNode_t* to, size_t n) {
    return cudaGraphAddDependencies(g, from, to, n);
}
hipError_t hipGraphInstantiate(hipGraphExec_t* x, hipGraph_t g, hipGraphNode_t* error_node, char* log, size_t size) {
    if (error_node) *error_node = NULL;
    if (log && size) log[0] = 0;
    return cudaGraphInstantiateWithFlags(x, g, 0);
}
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* x, hipGraph_t g, unsigned long long flags) {
    return cudaGraphInstantiateWithFlags(x, g, flags);
}
hipError_t hipGraphLaunch(hipGraphExec_t x, hipStream_t s) { return cudaGraphLaunch(x, s); }
hipError_t hipGraphExecDestroy(hipGraphExec_t x) { return cudaGraphExecDestroy(x); }

hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void* func) {
    int64_t r[8];
    if (!attr) return hipErrorInvalidValue;
    hipError_t e = (hipError_t)strata_func_attrs(func, r);
    if (e != hipSuccess) return e;
    memset(attr, 0, sizeof *attr);
    attr->numRegs = (int)r[0]; attr->sharedSizeBytes = (size_t)r[1]; attr->constSizeBytes = (size_t)r[2];
    attr->localSizeBytes = (size_t)r[3]; attr->maxThreadsPerBlock = (int)r[4];
    attr->maxDynamicSharedSizeBytes = (int)r[5]; attr->ptxVersion = (int)r[6]; attr->binaryVersion = (int)r[7];
    return hipSuccess;
}

/* hipFuncAttribute's values are cudaFuncAttribute's for the same attributes */
hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value) {
    return cudaFuncSetAttribute(func, (int)attr, value);
}
hipError_t hipFuncSetCacheConfig(const void* func, hipFuncCache_t config) {
    (void)func; (void)config;
    return hipSuccess;  /* a hint: LDS and L1 are separate on CDNA */
}

hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f, int blockSize, size_t smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, f, blockSize, smem);
}

/* ---- devices -------------------------------------------------------------------------------------------- */
static hipError_t strata_hip_props(int device, hipDeviceProp_t* p) {
    struct strata_props v;
    hipError_t e = (hipError_t)strata_props_get(device, &v);
    if (e != hipSuccess) return e;
    memset(p, 0, sizeof *p);
    memcpy(p->name, v.name, sizeof p->name);
    memcpy(p->gcnArchName, v.arch, sizeof p->gcnArchName);
    p->totalGlobalMem = (size_t)v.totalGlobalMem; p->sharedMemPerBlock = (size_t)v.sharedMemPerBlock;
    p->regsPerBlock = (int)v.regsPerBlock; p->warpSize = (int)v.warpSize; p->memPitch = (size_t)v.memPitch;
    p->maxThreadsPerBlock = (int)v.maxThreadsPerBlock;
    for (int i = 0; i < 3; i++) { p->maxThreadsDim[i] = (int)v.maxThreadsDim[i]; p->maxGridSize[i] = (int)v.maxGridSize[i]; }
    p->clockRate = (int)v.clockRate; p->totalConstMem = (size_t)v.totalConstMem; p->major = (int)v.major;
    p->minor = (int)v.minor; p->textureAlignment = (size_t)v.textureAlignment;
    p->multiProcessorCount = (int)v.multiProcessorCount; p->integrated = (int)v.integrated;
    p->canMapHostMemory = (int)v.canMapHostMemory; p->computeMode = (int)v.computeMode;
    p->concurrentKernels = (int)v.concurrentKernels; p->ECCEnabled = (int)v.ECCEnabled; p->pciBusID = (int)v.pciBusID;
    p->pciDeviceID = (int)v.pciDeviceID; p->pciDomainID = (int)v.pciDomainID;
    p->asyncEngineCount = (int)v.asyncEngineCount; p->unifiedAddressing = (int)v.unifiedAddressing;
    p->memoryClockRate = (int)v.memoryClockRate; p->memoryBusWidth = (int)v.memoryBusWidth;
    p->l2CacheSize = (int)v.l2CacheSize; p->maxThreadsPerMultiProcessor = (int)v.maxThreadsPerMultiProcessor;
    p->sharedMemPerMultiprocessor = (size_t)v.sharedMemPerMultiprocessor;
    p->maxSharedMemoryPerMultiProcessor = (size_t)v.sharedMemPerMultiprocessor;
    p->regsPerMultiprocessor = (int)v.regsPerMultiprocessor; p->managedMemory = (int)v.managedMemory;
    p->cooperativeLaunch = (int)v.cooperativeLaunch; p->sharedMemPerBlockOptin = (size_t)v.sharedMemPerBlockOptin;
    p->maxBlocksPerMultiProcessor = (int)v.maxBlocksPerMultiProcessor;
    p->clockInstructionRate = p->clockRate;
    if (!strncmp(p->gcnArchName, "gfx", 3)) {  /* CDNA: everything but surfaces and device-side launches */
        hipDeviceArch_t a = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0};
        p->arch = a;
    }
    /* gcnArch: the number in "gfx942" (942), as HIP's deprecated field has it */
    p->gcnArch = (int)strtol(p->gcnArchName + (strncmp(p->gcnArchName, "gfx", 3) ? 0 : 3), NULL, 10);
    return hipSuccess;
}

hipError_t hipInit(unsigned int flags) { return flags ? hipErrorInvalidValue : hipSuccess; }
hipError_t hipGetDeviceCount(int* count) { return count ? cudaGetDeviceCount(count) : hipErrorInvalidValue; }
hipError_t hipSetDevice(int d) { return cudaSetDevice(d); }
hipError_t hipGetDevice(int* d) { return cudaGetDevice(d); }
hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int d) { return p ? strata_hip_props(d, p) : hipErrorInvalidValue; }
hipError_t hipDeviceSynchronize(void) { return cudaDeviceSynchronize(); }
hipError_t hipDeviceReset(void) { return cudaDeviceReset(); }
hipError_t hipSetDeviceFlags(unsigned flags) { (void)flags; return hipSuccess; }
hipError_t hipDriverGetVersion(int* v) { if (!v) return hipErrorInvalidValue; *v = HIP_VERSION; return hipSuccess; }
hipError_t hipRuntimeGetVersion(int* v) { if (!v) return hipErrorInvalidValue; *v = HIP_VERSION; return hipSuccess; }

hipError_t hipDeviceGetName(char* name, int len, int d) {
    hipDeviceProp_t p;
    if (!name || len <= 0) return hipErrorInvalidValue;
    hipError_t e = strata_hip_props(d, &p);
    if (e != hipSuccess) return e;
    snprintf(name, (size_t)len, "%s", p.name);
    return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int d) {
    hipDeviceProp_t p;
    if (!value) return hipErrorInvalidValue;
    hipError_t e = strata_hip_props(d, &p);
    if (e != hipSuccess) return e;
    switch (attr) {
    case hipDeviceAttributeMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case hipDeviceAttributeMaxGridDimX: *value = p.maxGridSize[0]; break;
    case hipDeviceAttributeMaxGridDimY: *value = p.maxGridSize[1]; break;
    case hipDeviceAttributeMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case hipDeviceAttributeWarpSize: *value = p.warpSize; break;
    case hipDeviceAttributeMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case hipDeviceAttributeClockRate: *value = p.clockRate; break;
    case hipDeviceAttributeMemoryClockRate: *value = p.memoryClockRate; break;
    case hipDeviceAttributeMemoryBusWidth: *value = p.memoryBusWidth; break;
    case hipDeviceAttributeMultiprocessorCount: *value = p.multiProcessorCount; break;
    case hipDeviceAttributeComputeCapabilityMajor: *value = p.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: *value = p.minor; break;
    case hipDeviceAttributeL2CacheSize: *value = p.l2CacheSize; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case hipDeviceAttributeConcurrentKernels: *value = p.concurrentKernels; break;
    case hipDeviceAttributePciBusId: *value = p.pciBusID; break;
    case hipDeviceAttributePciDeviceId: *value = p.pciDeviceID; break;
    case hipDeviceAttributeEccEnabled: *value = p.ECCEnabled; break;
    case hipDeviceAttributeIntegrated: *value = p.integrated; break;
    case hipDeviceAttributeCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case hipDeviceAttributeManagedMemory: *value = p.managedMemory; break;
    case hipDeviceAttributeConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
    case hipDeviceAttributeUnifiedAddressing: *value = p.unifiedAddressing; break;
    case hipDeviceAttributeCanMapHostMemory: *value = p.canMapHostMemory; break;
    case hipDeviceAttributeComputeMode: *value = p.computeMode; break;
    case hipDeviceAttributeAsyncEngineCount: *value = p.asyncEngineCount; break;
    default:
        fprintf(stderr, "strata: hipDeviceGetAttribute: attribute %d is not modeled\n", (int)attr);
        return hipErrorInvalidValue;
    }
    return hipSuccess;
}

/* ---- errors --------------------------------------------------------------------------------------------- */
hipError_t hipGetLastError(void) { return cudaGetLastError(); }
hipError_t hipPeekAtLastError(void) { return cudaPeekAtLastError(); }

#include "hip_errors.inc"

const char* hipGetErrorName(hipError_t e) {
    for (size_t i = 0; i < sizeof hip_error_table / sizeof hip_error_table[0]; i++)
        if (hip_error_table[i].code == (int)e) return hip_error_table[i].name;
    return "hipErrorUnknown";
}

const char* hipGetErrorString(hipError_t e) {
    for (size_t i = 0; i < sizeof hip_error_table / sizeof hip_error_table[0]; i++)
        if (hip_error_table[i].code == (int)e) return hip_error_table[i].text;
    return "unknown error";
}

/* ---- memory --------------------------------------------------------------------------------------------- */
hipError_t hipMalloc(void** p, size_t n) { return cudaMalloc(p, n); }
hipError_t hipFree(void* p) { return cudaFree(p); }
/* Host memory from the arena shared with the runtime process (copies from and to it move no bytes between
 * the processes). Kernels cannot read it directly: copy it to device memory (hipHostMallocMapped pointers
 * are host pointers here). */
hipError_t hipHostMalloc(void** p, size_t n, unsigned flags) { (void)flags; return cudaMallocHost(p, n); }
hipError_t hipHostAlloc(void** p, size_t n, unsigned flags) { (void)flags; return cudaMallocHost(p, n); }
hipError_t hipMallocHost(void** p, size_t n) { return cudaMallocHost(p, n); }
hipError_t hipHostFree(void* p) { return cudaFreeHost(p); }
hipError_t hipFreeHost(void* p) { return cudaFreeHost(p); }
hipError_t hipMallocManaged(void** p, size_t n, unsigned flags) { return cudaMallocManaged(p, n, flags); }
hipError_t hipMemPrefetchAsync(const void* p, size_t n, int device, hipStream_t s) {
    (void)p; (void)n; (void)device; (void)s;
    return hipSuccess;  /* a hint: the runtime process moves managed memory when kernels need it */
}
hipError_t hipMemcpy(void* dst, const void* src, size_t n, hipMemcpyKind k) { return cudaMemcpy(dst, src, n, k); }
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, hipMemcpyKind k, hipStream_t s) {
    return cudaMemcpyAsync(dst, src, n, k, s);
}
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t n) { return cudaMemcpy(dst, src, n, hipMemcpyHostToDevice); }
hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t n) { return cudaMemcpy(dst, src, n, hipMemcpyDeviceToHost); }
hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n) {
    return cudaMemcpy(dst, src, n, hipMemcpyDeviceToDevice);
}
hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       hipMemcpyKind k) {
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, k);
}
hipError_t hipMemset(void* p, int v, size_t n) { return cudaMemset(p, v, n); }
hipError_t hipMemsetAsync(void* p, int v, size_t n, hipStream_t s) { return cudaMemsetAsync(p, v, n, s); }
hipError_t hipMemsetD32(hipDeviceptr_t p, int v, size_t count) {
    /* one memset per distinct byte pattern would be wrong for most values: fill a host buffer and copy it */
    if (count > SIZE_MAX / 4) return hipErrorInvalidValue;  /* count * 4 would wrap: a small buffer, overrun */
    uint32_t* h = malloc(count ? count * 4 : 4);
    if (!h) return hipErrorOutOfMemory;
    for (size_t i = 0; i < count; i++) h[i] = (uint32_t)v;
    hipError_t e = cudaMemcpy(p, h, count * 4, hipMemcpyHostToDevice);
    free(h);
    return e;
}
hipError_t hipMemGetInfo(size_t* free_, size_t* total) { return cudaMemGetInfo(free_, total); }
hipError_t hipMemcpyToSymbol(const void* sym, const void* src, size_t n, size_t off, hipMemcpyKind k) {
    return cudaMemcpyToSymbol(sym, src, n, off, k);
}
hipError_t hipMemcpyFromSymbol(void* dst, const void* sym, size_t n, size_t off, hipMemcpyKind k) {
    return cudaMemcpyFromSymbol(dst, sym, n, off, k);
}
hipError_t hipMemcpyToSymbolAsync(const void* sym, const void* src, size_t n, size_t off, hipMemcpyKind k,
                                  hipStream_t s) {
    return cudaMemcpyToSymbolAsync(sym, src, n, off, k, s);
}
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* sym, size_t n, size_t off, hipMemcpyKind k,
                                    hipStream_t s) {
    return cudaMemcpyFromSymbolAsync(dst, sym, n, off, k, s);
}
hipError_t hipGetSymbolAddress(void** p, const void* sym) { return cudaGetSymbolAddress(p, sym); }
hipError_t hipGetSymbolSize(size_t* n, const void* sym) { return cudaGetSymbolSize(n, sym); }

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t n, hipStream_t s) {
    return cudaMemcpyAsync(dst, src, n, hipMemcpyHostToDevice, s);
}
hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t n, hipStream_t s) {
    return cudaMemcpyAsync(dst, src, n, hipMemcpyDeviceToHost, s);
}
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s) {
    return cudaMemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, s);
}
hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t n, hipMemcpyKind k, hipStream_t s) {
    hipError_t e = cudaMemcpyAsync(dst, src, n, k, s);
    return e != hipSuccess ? e : cudaStreamSynchronize(s);
}
hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            hipMemcpyKind k, hipStream_t s) {
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, k, s);
}
hipError_t hipMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
    return cudaMallocPitch(p, pitch, width, height);
}
hipError_t hipMemset2D(void* p, size_t pitch, int v, size_t width, size_t height) {
    return cudaMemset2D(p, pitch, v, width, height);
}
hipError_t hipMemsetD8(hipDeviceptr_t p, unsigned char v, size_t n) { return cudaMemset(p, v, n); }
hipError_t hipMallocAsync(void** p, size_t n, hipStream_t s) { return cudaMallocAsync(p, n, s); }
hipError_t hipFreeAsync(void* p, hipStream_t s) { return cudaFreeAsync(p, s); }
hipError_t hipDeviceCanAccessPeer(int* can, int d, int peer) { return cudaDeviceCanAccessPeer(can, d, peer); }
hipError_t hipDeviceEnablePeerAccess(int peer, unsigned flags) { return cudaDeviceEnablePeerAccess(peer, flags); }
hipError_t hipDeviceDisablePeerAccess(int peer) { return cudaDeviceDisablePeerAccess(peer); }
hipError_t hipMemcpyPeer(void* dst, int dd, const void* src, int sd, size_t n) {
    return cudaMemcpyPeer(dst, dd, src, sd, n);
}
hipError_t hipMemcpyPeerAsync(void* dst, int dd, const void* src, int sd, size_t n, hipStream_t s) {
    return cudaMemcpyPeerAsync(dst, dd, src, sd, n, s);
}
hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void* data) { return cudaLaunchHostFunc(s, fn, data); }
hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t cb, void* data, unsigned flags) {
    return cudaStreamAddCallback(s, cb, data, flags);
}
hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest) {
    return cudaDeviceGetStreamPriorityRange(least, greatest);
}
/* hipLimit_t's values are cudaLimit's for the same limits */
hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value) { return cudaDeviceSetLimit((int)limit, value); }
hipError_t hipDeviceGetLimit(size_t* value, hipLimit_t limit) { return cudaDeviceGetLimit(value, (int)limit); }

/* ---- streams and events --------------------------------------------------------------------------------- */
hipError_t hipStreamCreate(hipStream_t* s) { return cudaStreamCreateWithFlags(s, 0); }
hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned flags) { return cudaStreamCreateWithFlags(s, flags); }
hipError_t hipStreamCreateWithPriority(hipStream_t* s, unsigned flags, int priority) {
    (void)priority;
    return cudaStreamCreateWithFlags(s, flags);
}
hipError_t hipStreamDestroy(hipStream_t s) { return cudaStreamDestroy(s); }
hipError_t hipStreamSynchronize(hipStream_t s) { return cudaStreamSynchronize(s); }
hipError_t hipStreamQuery(hipStream_t s) { return cudaStreamQuery(s); }
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) { return cudaStreamWaitEvent(s, e, flags); }
hipError_t hipEventCreate(hipEvent_t* e) { return cudaEventCreateWithFlags(e, 0); }
hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags) { return cudaEventCreateWithFlags(e, flags); }
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return cudaEventRecord(e, s); }
hipError_t hipEventSynchronize(hipEvent_t e) { return cudaEventSynchronize(e); }
hipError_t hipEventQuery(hipEvent_t e) { return cudaEventQuery(e); }
hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) { return cudaEventElapsedTime(ms, a, b); }
hipError_t hipEventDestroy(hipEvent_t e) { return cudaEventDestroy(e); }

/* ---- the module API ------------------------------------------------------------------------------------- */
/* The size of an ELF image in memory: its section headers come last in what clang and lld write. */
static size_t elf_size(const unsigned char* p) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8); memcpy(&shentsize, p + 0x3A, 2); memcpy(&shnum, p + 0x3C, 2);
    return (size_t)(shoff + (uint64_t)shentsize * shnum);
}

/* A code object (ELF) or an offload bundle, registered as __hipRegisterFatBinary registers a program's; the
 * runtime process reports a bad image at the first hipModuleGetFunction/GetGlobal, with its reason. */
static hipError_t load_image(hipModule_t* module, const void* image, size_t n) {
    void** m = strata_register_image(OP_HIP_REGISTER, image, n);
    if (!m || !*(const uint64_t*)m) { free(m); return hipErrorInvalidImage; }
    *module = (hipModule_t)m;
    return hipSuccess;
}

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
    const unsigned char* p = image;
    if (!module || !p) return hipErrorInvalidValue;
    size_t n = !memcmp(p, "\x7f" "ELF", 4) ? elf_size(p) : bundle_size(image);
    if (!n) return hipErrorInvalidImage;
    return load_image(module, image, n);
}

hipError_t hipModuleLoad(hipModule_t* module, const char* fname) {
    if (!module || !fname) return hipErrorInvalidValue;
    FILE* f = fopen(fname, "rb");
    if (!f) return hipErrorFileNotFound;
    char* buf = NULL;
    size_t n = 0, cap = 0, k;
    do {
        if (n == cap) { cap = cap ? 2 * cap : 1 << 16; buf = realloc(buf, cap); }
        k = fread(buf + n, 1, cap - n, f);
        n += k;
    } while (k);
    fclose(f);
    hipError_t e = n ? load_image(module, buf, n) : hipErrorInvalidImage;
    free(buf);
    return e;
}

hipError_t hipModuleUnload(hipModule_t module) {
    return module ? hipSuccess : hipErrorInvalidHandle;  /* code objects live until the runtime process ends */
}

hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname) {
    hipError_t e = hipSuccess;
    if (!function || !module || !kname) return hipErrorInvalidValue;
    void* f = strata_module_function(module, kname, &e);
    if (e == hipErrorInvalidDeviceFunction) cudaGetLastError();  /* HIP's answer for a missing name: */
    if (e == hipErrorInvalidDeviceFunction) return hipErrorNotFound;  /* not the program's last error */
    if (e != hipSuccess) return e;
    *function = (hipFunction_t)f;
    return hipSuccess;
}

hipError_t hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t module, const char* name) {
    uint64_t addr = 0, size = 0;
    if (!module || !name) return hipErrorInvalidValue;
    hipError_t e = strata_module_global(module, name, &addr, &size);
    if (e != hipSuccess) return e;
    if (dptr) *dptr = (hipDeviceptr_t)(uintptr_t)addr;
    if (bytes) *bytes = (size_t)size;
    return hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shmem, hipStream_t stream,
                                 void** kernelParams, void** extra) {
    if (!f) return hipErrorInvalidResourceHandle;
    if (!kernelParams && extra) {
        static int said;
        if (!said++) fprintf(stderr, "strata: hipModuleLaunchKernel: arguments through `extra` "
                                     "(HIP_LAUNCH_PARAM_BUFFER_POINTER) are not supported; pass kernelParams\n");
        return hipErrorNotSupported;
    }
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    strata_clear_local_error();
    hipError_t e = strata_launch(f, g, b, shmem, stream, kernelParams);
    /* as HIP does, the module API reports a bad configuration from the launch itself */
    return e != hipSuccess ? e : cudaGetLastError();
}
