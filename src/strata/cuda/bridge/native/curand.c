/* strata's replacement cuRAND host library (libcurand.so.10): generators live in the strata runtime process
 * (strata.libs.rand.native) and write their numbers straight into device memory there; the requests go over
 * libcudart's connection. Names this file does not define are weak stubs (build.py). */
#include <cuda_runtime_api.h>
#include <curand.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

cudaError_t strata_call(uint32_t op, const void* a, size_t na, void* out, size_t cap);
enum { OP_CURAND_CREATE = 50, OP_CURAND_SET = 51, OP_CURAND_GENERATE = 52, OP_CURAND_DESTROY = 53 };

struct curandGenerator_st { uint64_t id; cudaStream_t stream; };

static curandStatus_t call(uint32_t op, const void* a, size_t na, void* out, size_t cap) {
    char buf[16] = {0};
    if (cap > sizeof buf - 4) cap = sizeof buf - 4;
    cudaError_t e = strata_call(op, a, na, buf, 4 + cap);
    if (e != cudaSuccess) return CURAND_STATUS_PREEXISTING_FAILURE;
    int32_t status;
    __builtin_memcpy(&status, buf, 4);
    if (out) __builtin_memcpy(out, buf + 4, cap);
    return (curandStatus_t)status;
}

curandStatus_t curandGetVersion(int* version) {
    if (!version) return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandCreateGenerator(curandGenerator_t* gen, curandRngType_t type) {
    if (!gen) return CURAND_STATUS_NOT_INITIALIZED;
    int32_t t = (int32_t)type;
    uint64_t id = 0;
    curandStatus_t s = call(OP_CURAND_CREATE, &t, 4, &id, 8);
    if (s != CURAND_STATUS_SUCCESS) return s;
    *gen = calloc(1, sizeof **gen);
    if (!*gen) return CURAND_STATUS_ALLOCATION_FAILED;
    (*gen)->id = id;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandDestroyGenerator(curandGenerator_t gen) {
    if (!gen) return CURAND_STATUS_NOT_INITIALIZED;
    curandStatus_t s = call(OP_CURAND_DESTROY, &gen->id, 8, NULL, 0);
    free(gen);
    return s;
}

static curandStatus_t set(curandGenerator_t gen, uint64_t what, unsigned long long value) {
    if (!gen) return CURAND_STATUS_NOT_INITIALIZED;
    uint64_t req[3] = {gen->id, what, value};
    return call(OP_CURAND_SET, req, sizeof req, NULL, 0);
}
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t gen, unsigned long long seed) { return set(gen, 0, seed); }
curandStatus_t curandSetGeneratorOffset(curandGenerator_t gen, unsigned long long offset) { return set(gen, 1, offset); }

/* The generator's work is ordered after the stream's earlier work, as cuRAND's kernels are. */
curandStatus_t curandSetStream(curandGenerator_t gen, cudaStream_t stream) {
    if (!gen) return CURAND_STATUS_NOT_INITIALIZED;
    gen->stream = stream;
    return CURAND_STATUS_SUCCESS;
}

static curandStatus_t gen_into(curandGenerator_t gen, uint64_t kind, void* out, size_t n, double mean, double std) {
    if (!gen) return CURAND_STATUS_NOT_INITIALIZED;
    if (gen->stream && cudaStreamSynchronize(gen->stream) != cudaSuccess) return CURAND_STATUS_PREEXISTING_FAILURE;
    struct { uint64_t id, kind, ptr, n; double mean, std; } req = {gen->id, kind, (uint64_t)(uintptr_t)out, n, mean, std};
    return call(OP_CURAND_GENERATE, &req, sizeof req, NULL, 0);
}
curandStatus_t curandGenerate(curandGenerator_t gen, unsigned int* out, size_t n) { return gen_into(gen, 0, out, n, 0, 0); }
curandStatus_t curandGenerateUniform(curandGenerator_t gen, float* out, size_t n) { return gen_into(gen, 1, out, n, 0, 0); }
curandStatus_t curandGenerateUniformDouble(curandGenerator_t gen, double* out, size_t n) {
    return gen_into(gen, 2, out, n, 0, 0);
}
curandStatus_t curandGenerateNormal(curandGenerator_t gen, float* out, size_t n, float mean, float stddev) {
    return gen_into(gen, 3, out, n, mean, stddev);
}
