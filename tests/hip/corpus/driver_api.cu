// The driver API end to end: context, module from a PTX image, function lookup, cuLaunchKernel with a
// kernelParams array, explicit host<->device copies.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda.h>

#define CU_CHECK(call)                                                          \
    do {                                                                        \
        CUresult r_ = (call);                                                   \
        if (r_ != CUDA_SUCCESS) {                                               \
            const char* msg;                                                    \
            cuGetErrorString(r_, &msg);                                         \
            fprintf(stderr, "driver error %d: %s\n", (int)r_, msg);             \
            return 1;                                                           \
        }                                                                       \
    } while (0)

extern const char* ptx_image;  // produced by NVRTC from this file's kernel
#endif

extern "C" __global__ void scale_add(float* y, const float* x, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}

#ifndef __CUDACC_RTC__
int main() {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CU_CHECK(cuInit(0));
    int ndev = 0;
    CU_CHECK(cuDeviceGetCount(&ndev));
    CU_CHECK(cuDeviceGet(&dev, 0));
    char name[128];
    cuDeviceGetName(name, sizeof(name), dev);
    int major = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    CU_CHECK(cuCtxCreate(&ctx, 0, dev));
    CU_CHECK(cuModuleLoadData(&mod, ptx_image));
    CU_CHECK(cuModuleGetFunction(&fn, mod, "scale_add"));
    const int n = 4096;
    float host[n];
    CUdeviceptr d_x, d_y;
    CU_CHECK(cuMemAlloc(&d_x, n * sizeof(float)));
    CU_CHECK(cuMemAlloc(&d_y, n * sizeof(float)));
    CU_CHECK(cuMemcpyHtoD(d_x, host, n * sizeof(float)));
    CU_CHECK(cuMemcpyHtoD(d_y, host, n * sizeof(float)));
    float alpha = 2.0f;
    int count = n;
    void* args[] = {&d_y, &d_x, &alpha, &count};
    CU_CHECK(cuLaunchKernel(fn, n / 128, 1, 1, 128, 1, 1, 0, 0, args, 0));
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuMemcpyDtoH(host, d_y, n * sizeof(float)));
    cuMemFree(d_x);
    cuMemFree(d_y);
    cuModuleUnload(mod);
    cuCtxDestroy(ctx);
    printf("%s (sm_%d0): y[1] = %f\n", name, major, host[1]);
    return 0;
}
#endif
