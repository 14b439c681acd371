// An old CUDA program: thread-management calls, texture references and array copies that CUDA deprecated or
// removed, plus calls HIP has no twin for. hipify translates what it can and warns about the rest.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#endif

extern "C" __global__ void add_one(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

#ifndef __CUDACC_RTC__
texture<float, 1, cudaReadModeElementType> tex_ref;

int main() {
    const int n = 256;
    int* d;
    cudaMalloc((void**)&d, n * sizeof(int));
    cudaThreadSetLimit(cudaLimitStackSize, 4096);
    add_one<<<1, n>>>(d, n);
    cudaThreadSynchronize();
    float* d_f;
    cudaMalloc(&d_f, n * sizeof(float));
    cudaBindTexture(0, tex_ref, d_f, n * sizeof(float));
    cudaArray_t arr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaMallocArray(&arr, &desc, n, 1);
    cudaMemcpyToArray(arr, 0, 0, d_f, n * sizeof(float), cudaMemcpyDeviceToDevice);
    cudaUnbindTexture(tex_ref);
    cudaStreamAttrValue attr;  // access-policy windows have no HIP twin
    cudaGraphExecGetFlagsEx(0, 0);  // a newer CUDA call this translator's table does not know
    printf("cudaThreadSynchronize() is deprecated\n");
    cudaProfilerStart();
    cudaProfilerStop();
    cudaFreeArray(arr);
    cudaFree(d_f);
    cudaFree(d);
    cudaThreadExit();
    return 0;
}
#endif
