// Error checking in the style of the CUDA samples' helper_cuda.h.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <hip/hip_runtime.h>

#define checkCudaErrors(call)                                                                       \
  do {                                                                                              \
    hipError_t err_ = (call);                                                                      \
    if (err_ != hipSuccess) {                                                                      \
      fprintf(stderr, "CUDA error %d (%s: %s) at %s:%d\n", (int)err_, hipGetErrorName(err_),       \
              hipGetErrorString(err_), __FILE__, __LINE__);                                        \
      exit(EXIT_FAILURE);                                                                           \
    }                                                                                               \
  } while (0)
