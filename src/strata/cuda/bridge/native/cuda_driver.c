/* strata's replacement CUDA driver library (libcuda.so.1): the driver API programs call directly.
 *
 * It rides on strata's libcudart.so.13 (a DT_NEEDED of this library): one connection to the strata runtime
 * process per program, whichever API a call comes through. Modules come from PTX text, fat binaries or
 * files (cuModuleLoad*), kernels launch with kernelParams as with `<<<>>>`; device memory, streams and
 * events are the runtime's. One context per device (the primary one). Names this file does not define are
 * weak stubs returning CUDA_ERROR_NOT_SUPPORTED (see build.py).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void* strata_module_load(const void* image, cudaError_t* err);
void* strata_module_function(void* mod, const char* name, cudaError_t* err);
cudaError_t strata_module_global(void* mod, const char* name, uint64_t* addr, uint64_t* size);
cudaError_t strata_launch(void* func, dim3 g, dim3 b, size_t shmem, cudaStream_t s, void** params);
void strata_clear_local_error(void);

static __thread int current = -1;  /* the device of the current context; -1: none */

/* CUresult shares cudaError_t's numbers for what both have; these differ. */
static CUresult R(cudaError_t e) {
    switch (e) {
    case cudaErrorInvalidDeviceFunction: case cudaErrorInvalidSymbol: return CUDA_ERROR_NOT_FOUND;
    case cudaErrorInvalidConfiguration: case cudaErrorInvalidPitchValue: case cudaErrorInvalidMemcpyDirection:
        return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;
    default: return (CUresult)e;
    }
}

CUresult cuInit(unsigned int flags) {
    int n = 0;
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    return R(cudaGetDeviceCount(&n));
}

CUresult cuDriverGetVersion(int* v) { if (!v) return CUDA_ERROR_INVALID_VALUE; *v = CUDA_VERSION; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int* n) { return R(cudaGetDeviceCount(n)); }

CUresult cuDeviceGet(CUdevice* d, int ordinal) {
    int n = 0;
    CUresult r = R(cudaGetDeviceCount(&n));
    if (r != CUDA_SUCCESS) return r;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= n) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    struct cudaDeviceProp p;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = R(cudaGetDeviceProperties(&p, dev));
    if (r == CUDA_SUCCESS) { strncpy(name, p.name, (size_t)len - 1); name[len - 1] = 0; }
    return r;
}

CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
    struct cudaDeviceProp p;
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = R(cudaGetDeviceProperties(&p, dev));
    if (r == CUDA_SUCCESS) *bytes = p.totalGlobalMem;
    return r;
}

/* CUdevice_attribute and cudaDeviceAttr share their values. */
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice dev) {
    return R(cudaDeviceGetAttribute(v, (enum cudaDeviceAttr)a, dev));
}

CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
    CUresult r = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    return r != CUDA_SUCCESS ? r : cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

/* Contexts: the device's primary context; a handle is the device index + 1. */
static CUresult use(CUdevice dev, CUcontext* ctx) {
    CUresult r = R(cudaSetDevice(dev));
    if (r != CUDA_SUCCESS) return r;
    current = dev;
    if (ctx) *ctx = (CUcontext)(uintptr_t)(dev + 1);
    return CUDA_SUCCESS;
}
CUresult cuCtxCreate(CUcontext* ctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
    (void)params; (void)flags;
    return use(dev, ctx);
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) { return use(dev, ctx); }
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { (void)dev; return CUDA_SUCCESS; }
CUresult cuCtxDestroy(CUcontext ctx) { (void)ctx; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext ctx) { return ctx ? use((CUdevice)((uintptr_t)ctx - 1), NULL) : CUDA_SUCCESS; }
CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxSetCurrent(ctx); }
CUresult cuCtxPopCurrent(CUcontext* ctx) { if (ctx) *ctx = (CUcontext)(uintptr_t)(current + 1); return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext* ctx) {
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    *ctx = current < 0 ? NULL : (CUcontext)(uintptr_t)(current + 1);
    return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice* dev) {
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    if (current < 0) return CUDA_ERROR_INVALID_CONTEXT;
    *dev = current;
    return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) { return R(cudaDeviceSynchronize()); }

/* ---- modules and launches ------------------------------------------------------------------------------- */
CUresult cuModuleLoadData(CUmodule* mod, const void* image) {
    cudaError_t e;
    if (!mod) return CUDA_ERROR_INVALID_VALUE;
    void* m = strata_module_load(image, &e);
    if (e == cudaSuccess) *mod = (CUmodule)m;  /* untouched on an error */
    return R(e);
}

CUresult cuModuleLoadDataEx(CUmodule* mod, const void* image, unsigned int n, CUjit_option* options, void** values) {
    (void)n; (void)options; (void)values;  /* JIT options: the virtual GPU's JIT takes none */
    return cuModuleLoadData(mod, image);
}

CUresult cuModuleLoad(CUmodule* mod, const char* fname) {
    FILE* f = fname ? fopen(fname, "rb") : NULL;
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* ftell is -1 for what cannot seek (a pipe): malloc(0) and a read of SIZE_MAX bytes into it otherwise */
    char* buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf) { fclose(f); return n >= 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_IMAGE; }
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = 0;
    CUresult r = cuModuleLoadData(mod, buf);
    free(buf);
    return r;
}

CUresult cuModuleUnload(CUmodule mod) { (void)mod; return CUDA_SUCCESS; }

CUresult cuModuleGetFunction(CUfunction* fn, CUmodule mod, const char* name) {
    cudaError_t e;
    if (!fn || !mod || !name) return CUDA_ERROR_INVALID_VALUE;
    void* f = strata_module_function(mod, name, &e);
    if (e == cudaSuccess) *fn = (CUfunction)f;  /* untouched on an error */
    return R(e);
}

CUresult cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule mod, const char* name) {
    uint64_t a = 0, n = 0;
    if (!mod || !name) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = R(strata_module_global(mod, name, &a, &n));
    if (r != CUDA_SUCCESS) return r;  /* outputs untouched on an error */
    if (dptr) *dptr = (CUdeviceptr)a;
    if (bytes) *bytes = (size_t)n;
    return r;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void** params, void** extra) {
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!params && extra) {
        fprintf(stderr, "strata: cuLaunchKernel with `extra` (a packed parameter buffer) is not supported; pass "
                        "kernelParams\n");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    strata_clear_local_error();
    CUresult r = R(strata_launch(f, g, b, smem, (cudaStream_t)s, params));
    /* the driver API reports a bad configuration from the launch itself */
    return r != CUDA_SUCCESS ? r : R(cudaGetLastError());
}

/* ---- memory --------------------------------------------------------------------------------------------- */
CUresult cuMemAlloc(CUdeviceptr* p, size_t n) {
    void* d = NULL;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = R(cudaMalloc(&d, n));
    if (r == CUDA_SUCCESS) *p = (CUdeviceptr)(uintptr_t)d;  /* untouched on an error */
    return r;
}
CUresult cuMemFree(CUdeviceptr p) { return R(cudaFree((void*)(uintptr_t)p)); }
CUresult cuMemAllocHost(void** p, size_t n) { return R(cudaMallocHost(p, n)); }
CUresult cuMemFreeHost(void* p) { return R(cudaFreeHost(p)); }
CUresult cuMemGetInfo(size_t* free_, size_t* total) { return R(cudaMemGetInfo(free_, total)); }
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
    return R(cudaMemcpy((void*)(uintptr_t)dst, src, n, cudaMemcpyHostToDevice));
}
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
    return R(cudaMemcpy(dst, (void*)(uintptr_t)src, n, cudaMemcpyDeviceToHost));
}
CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return R(cudaMemcpy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, cudaMemcpyDeviceToDevice));
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    return R(cudaMemcpyAsync((void*)(uintptr_t)dst, src, n, cudaMemcpyHostToDevice, (cudaStream_t)s));
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream s) {
    return R(cudaMemcpyAsync(dst, (void*)(uintptr_t)src, n, cudaMemcpyDeviceToHost, (cudaStream_t)s));
}
CUresult cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) { return R(cudaMemset((void*)(uintptr_t)p, v, n)); }
CUresult cuMemsetD32(CUdeviceptr p, unsigned int v, size_t n) {
    if (v == 0 || v == 0x01010101u * (v & 0xFF)) return R(cudaMemset((void*)(uintptr_t)p, (int)(v & 0xFF), 4 * n));
    if (n > SIZE_MAX / 4) return CUDA_ERROR_INVALID_VALUE;  /* 4 * n would wrap: a small buffer, overrun */
    unsigned int* h = malloc(4 * (n ? n : 1));
    if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) h[i] = v;
    CUresult r = R(cudaMemcpy((void*)(uintptr_t)p, h, 4 * n, cudaMemcpyHostToDevice));
    free(h);
    return r;
}

/* ---- streams and events --------------------------------------------------------------------------------- */
CUresult cuStreamCreate(CUstream* s, unsigned int flags) { return R(cudaStreamCreateWithFlags((cudaStream_t*)s, flags)); }
CUresult cuStreamDestroy(CUstream s) { return R(cudaStreamDestroy((cudaStream_t)s)); }
CUresult cuStreamSynchronize(CUstream s) { return R(cudaStreamSynchronize((cudaStream_t)s)); }
CUresult cuStreamQuery(CUstream s) { return R(cudaStreamQuery((cudaStream_t)s)); }
CUresult cuEventCreate(CUevent* e, unsigned int flags) { return R(cudaEventCreateWithFlags((cudaEvent_t*)e, flags)); }
CUresult cuEventDestroy(CUevent e) { return R(cudaEventDestroy((cudaEvent_t)e)); }
CUresult cuEventRecord(CUevent e, CUstream s) { return R(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s)); }
CUresult cuEventSynchronize(CUevent e) { return R(cudaEventSynchronize((cudaEvent_t)e)); }
CUresult cuEventQuery(CUevent e) { return R(cudaEventQuery((cudaEvent_t)e)); }
CUresult cuEventElapsedTime(float* ms, CUevent a, CUevent b) {
    return R(cudaEventElapsedTime(ms, (cudaEvent_t)a, (cudaEvent_t)b));
}

/* ---- errors --------------------------------------------------------------------------------------------- */
CUresult cuGetErrorString(CUresult e, const char** s) {
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    *s = e == CUDA_ERROR_NOT_FOUND ? "named symbol not found" : cudaGetErrorString((cudaError_t)e);
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult e, const char** s) {
    static __thread char buf[96];
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    static const struct { CUresult code; const char* name; } own[] = {  /* where the driver's names differ */
        {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"}, {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
        {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"}, {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
        {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
        {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"}, {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
    };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (own[i].code == e) { *s = own[i].name; return CUDA_SUCCESS; }
    const char* n = cudaGetErrorName((cudaError_t)e);
    /* cudaErrorIllegalAddress -> CUDA_ERROR_ILLEGAL_ADDRESS */
    size_t k = 0;
    const char* body = strncmp(n, "cudaError", 9) == 0 ? n + 9 : n;
    k += (size_t)snprintf(buf, sizeof buf, "%s", e == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR");
    for (const char* c = e == CUDA_SUCCESS ? "" : body; *c && k + 2 < sizeof buf; c++) {
        if (*c >= 'A' && *c <= 'Z') buf[k++] = '_';
        buf[k++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    }
    buf[k] = 0;
    *s = buf;
    return CUDA_SUCCESS;
}
