/* Device properties and kernel attributes as plain values, between amdhip.c (HIP's types) and amdhip_props.c
 * (CUDA's types, read through strata's libcudart): the two headers both define dim3, so no file includes both. */
#pragma once
#include <stdint.h>

struct strata_props {
    char name[256];
    char arch[256];
    int64_t totalGlobalMem, sharedMemPerBlock, regsPerBlock, warpSize, memPitch, maxThreadsPerBlock;
    int64_t maxThreadsDim[3], maxGridSize[3];
    int64_t clockRate, totalConstMem, major, minor, textureAlignment, multiProcessorCount, integrated;
    int64_t canMapHostMemory, computeMode, concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID;
    int64_t asyncEngineCount, unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize;
    int64_t maxThreadsPerMultiProcessor, sharedMemPerMultiprocessor, regsPerMultiprocessor, managedMemory;
    int64_t cooperativeLaunch, sharedMemPerBlockOptin, maxBlocksPerMultiProcessor;
};

/* both return a cudaError_t/hipError_t code */
int strata_props_get(int device, struct strata_props* p);
int strata_func_attrs(const void* func, int64_t out[8]);
