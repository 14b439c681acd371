// strata: <cuda_fp16.h> for library kernels compiled for an AMD device (clang-19, gfx942).
#pragma once
#include "strata_cuda_on_amd.h"
