// Error checking in the style of the CUDA samples' helper_cuda.h.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define checkCudaErrors(call)                                                                       \
  do {                                                                                              \
    cudaError_t err_ = (call);                                                                      \
    if (err_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "CUDA error %d (%s: %s) at %s:%d\n", (int)err_, cudaGetErrorName(err_),       \
              cudaGetErrorString(err_), __FILE__, __LINE__);                                        \
      exit(EXIT_FAILURE);                                                                           \
    }                                                                                               \
  } while (0)
