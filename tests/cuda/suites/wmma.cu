// Tensor-core matrix multiply through the wmma API: one warp computes a 16x16 tile of C = A * B with
// half inputs and float accumulation (the cudaTensorCoreGemm sample's inner step).
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const half* a, const half* b, float* c, int K) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + k, K);
        wmma::load_matrix_sync(fb, b + k, K);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}
