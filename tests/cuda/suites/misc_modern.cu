// Newer device-code features: a local array with a runtime trip count, cuda::std utilities
// (array, numeric_limits, bit_cast, complex), __match_all_sync, unsigned __reduce_*_sync, and
// cg::invoke_one (elect.sync on sm_90).
#include <cuda/std/array>
#include <cuda/std/limits>
#include <cuda/std/bit>
#include <cuda/std/complex>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void misc_modern(const float* v, int* ints, float* floats,
                                       int* elected) {
    int t = threadIdx.x;
    int k = 4 + (t & 3);
    int scratch[8];  // NVRTC has no alloca: a local array with a runtime trip count instead
    for (int j = 0; j < k; j++) scratch[j] = t * j;
    int s = 0;
    for (int j = 0; j < k; j++) s += scratch[j];
    cuda::std::array<int, 4> arr{t, 2 * t, 3 * t, 4 * t};
    int pred;
    unsigned all_mask = __match_all_sync(0xffffffffu, t >> 5, &pred);
    int* o = ints + 8 * t;
    o[0] = s;
    o[1] = arr[t & 3] + (int)arr.size();
    o[2] = cuda::std::numeric_limits<int>::max() - t;
    o[3] = (int)cuda::std::bit_cast<unsigned>(v[t]);
    o[4] = (int)all_mask;
    o[5] = pred;
    o[6] = (int)__reduce_or_sync(0xffffffffu, 1u << (t & 31));
    o[7] = (int)__reduce_min_sync(0xffffffffu, (unsigned)(100 - t));
    cuda::std::complex<float> z(v[t], 1.0f);
    cuda::std::complex<float> w = z * z + cuda::std::complex<float>(0.5f, -0.5f);
    floats[2 * t] = w.real();
    floats[2 * t + 1] = cuda::std::abs(z);
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    cg::invoke_one(warp, [&] { atomicAdd(elected, 1); });
}
