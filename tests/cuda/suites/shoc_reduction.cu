// SHOC reduction: templated on type and block size; the shared-memory tree stops at 64 and the last warp
// finishes with the classic volatile warp-synchronous unrolled tail (plus __syncwarp, as CUDA 9+ requires).
template <class T, int blockSize>
__device__ void warp_reduce(volatile T* sdata, int tid) {
    if (blockSize >= 64) { sdata[tid] += sdata[tid + 32]; __syncwarp(); }
    if (blockSize >= 32) { sdata[tid] += sdata[tid + 16]; __syncwarp(); }
    if (blockSize >= 16) { sdata[tid] += sdata[tid + 8]; __syncwarp(); }
    if (blockSize >= 8) { sdata[tid] += sdata[tid + 4]; __syncwarp(); }
    if (blockSize >= 4) { sdata[tid] += sdata[tid + 2]; __syncwarp(); }
    if (blockSize >= 2) { sdata[tid] += sdata[tid + 1]; __syncwarp(); }
}

template <class T, int blockSize>
__global__ void reduce(const T* __restrict__ g_idata, T* __restrict__ g_odata, unsigned int n) {
    extern __shared__ __align__(sizeof(double)) unsigned char smem_raw[];
    T* sdata = reinterpret_cast<T*>(smem_raw);
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    T sum = 0;
    while (i < n) {
        sum += g_idata[i];
        if (i + blockSize < n) sum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = sum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) warp_reduce<T, blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
template __global__ void reduce<float, 256>(const float*, float*, unsigned int);
template __global__ void reduce<double, 128>(const double*, double*, unsigned int);
template __global__ void reduce<int, 64>(const int*, int*, unsigned int);
