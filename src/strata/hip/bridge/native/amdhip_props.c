/* The parts of strata's libamdhip64 that read CUDA's structures (cudaDeviceProp, cudaFuncAttributes) from
 * strata's libcudart.so.13 and hand them to amdhip.c as plain values (strata_props.h); the AMD target name
 * (gcnArchName) comes from the runtime process (protocol.Op.HIP_ARCH). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include "strata_props.h"

cudaError_t strata_call(uint32_t op, const void* a, size_t na, void* out, size_t cap);
enum { OP_HIP_ARCH = 71 };  /* protocol.Op.HIP_ARCH */

int strata_props_get(int device, struct strata_props* p) {
    struct cudaDeviceProp c;
    memset(p, 0, sizeof *p);
    if (device < 0) return cudaErrorInvalidDevice;
    cudaError_t e = cudaGetDeviceProperties(&c, device);
    if (e != cudaSuccess) return e;
    int32_t d = device;
    e = strata_call(OP_HIP_ARCH, &d, 4, p->arch, sizeof p->arch - 1);
    if (e != cudaSuccess) return e;
    snprintf(p->name, sizeof p->name, "%s", c.name);
    p->totalGlobalMem = (int64_t)c.totalGlobalMem; p->sharedMemPerBlock = (int64_t)c.sharedMemPerBlock;
    p->regsPerBlock = c.regsPerBlock; p->warpSize = c.warpSize; p->memPitch = (int64_t)c.memPitch;
    p->maxThreadsPerBlock = c.maxThreadsPerBlock;
    for (int i = 0; i < 3; i++) { p->maxThreadsDim[i] = c.maxThreadsDim[i]; p->maxGridSize[i] = c.maxGridSize[i]; }
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device);
    p->clockRate = khz;
    cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device);
    p->memoryClockRate = khz;
    p->totalConstMem = (int64_t)c.totalConstMem; p->major = c.major; p->minor = c.minor;
    p->textureAlignment = (int64_t)c.textureAlignment; p->multiProcessorCount = c.multiProcessorCount;
    p->integrated = c.integrated; p->canMapHostMemory = c.canMapHostMemory; p->computeMode = 0;
    p->concurrentKernels = c.concurrentKernels; p->ECCEnabled = c.ECCEnabled; p->pciBusID = c.pciBusID;
    p->pciDeviceID = c.pciDeviceID; p->pciDomainID = c.pciDomainID; p->asyncEngineCount = c.asyncEngineCount;
    p->unifiedAddressing = c.unifiedAddressing; p->memoryBusWidth = c.memoryBusWidth; p->l2CacheSize = c.l2CacheSize;
    p->maxThreadsPerMultiProcessor = c.maxThreadsPerMultiProcessor;
    p->sharedMemPerMultiprocessor = (int64_t)c.sharedMemPerMultiprocessor;
    p->regsPerMultiprocessor = c.regsPerMultiprocessor; p->managedMemory = c.managedMemory;
    p->cooperativeLaunch = c.cooperativeLaunch; p->sharedMemPerBlockOptin = (int64_t)c.sharedMemPerBlockOptin;
    p->maxBlocksPerMultiProcessor = c.maxBlocksPerMultiProcessor;
    return cudaSuccess;
}

int strata_func_attrs(const void* func, int64_t out[8]) {
    struct cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, func);
    if (e != cudaSuccess) return e;
    out[0] = a.numRegs; out[1] = (int64_t)a.sharedSizeBytes; out[2] = (int64_t)a.constSizeBytes;
    out[3] = (int64_t)a.localSizeBytes; out[4] = a.maxThreadsPerBlock; out[5] = a.maxDynamicSharedSizeBytes;
    out[6] = a.ptxVersion; out[7] = a.binaryVersion;
    return cudaSuccess;
}
