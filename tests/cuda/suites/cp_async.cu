// 16-byte cp.async copies as GEMM mainloops issue them: .cg (L2 only) with a zero-fill tail (src-size
// smaller than the copy), wait_group/wait_all through __pipeline_* and a libcu++ thread-scope
// cuda::pipeline with memcpy_async + cuda::aligned_size_t.
#include <cuda_pipeline.h>
#include <cuda/pipeline>

extern "C" __global__ void cp_async16(const float4* in, float* out, int nvalid) {
    __shared__ __align__(16) float4 tile[64];
    int t = threadIdx.x;
    unsigned dst = (unsigned)__cvta_generic_to_shared(&tile[t]);
    int bytes = max(0, min(16, (nvalid - 4 * t) * 4));  // past the end: zero-fill the rest of the 16 bytes
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(in + t), "r"(bytes) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    float4 v = tile[63 - t];
    out[4 * t + 0] = v.x; out[4 * t + 1] = v.y; out[4 * t + 2] = v.z; out[4 * t + 3] = v.w;
}

extern "C" __global__ void libcu_pipeline(const float4* in, float* out, int stages) {
    __shared__ __align__(16) float4 buf[2][64];
    auto pipe = cuda::make_pipeline();
    int t = threadIdx.x;
    float acc = 0.0f;
    pipe.producer_acquire();
    cuda::memcpy_async(&buf[0][t], &in[t], cuda::aligned_size_t<16>(sizeof(float4)), pipe);
    pipe.producer_commit();
    for (int s = 0; s < stages; s++) {
        if (s + 1 < stages) {
            pipe.producer_acquire();
            cuda::memcpy_async(&buf[(s + 1) & 1][t], &in[(s + 1) * 64 + t], cuda::aligned_size_t<16>(sizeof(float4)),
                               pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        float4 v = buf[s & 1][t];
        acc += v.x + v.y + v.z + v.w;
        pipe.consumer_release();
    }
    out[t] = acc;
}
