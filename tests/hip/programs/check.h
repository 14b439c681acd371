// Error checking for the HIP test programs: print the call, HIP's error name and message, exit 1.
#pragma once
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

#define HIP_CHECK(call)                                                                             \
  do {                                                                                              \
    hipError_t err_ = (call);                                                                       \
    if (err_ != hipSuccess) {                                                                       \
      fprintf(stderr, "HIP error %d (%s: %s) at %s:%d\n", (int)err_, hipGetErrorName(err_),         \
              hipGetErrorString(err_), __FILE__, __LINE__);                                         \
      exit(EXIT_FAILURE);                                                                           \
    }                                                                                               \
  } while (0)
