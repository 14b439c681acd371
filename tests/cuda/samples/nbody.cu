// All-pairs gravitational acceleration with float4 bodies tiled through shared memory.
extern "C" __global__ void nbody_accel(const float4* pos, float4* acc, int n, float soft2) {
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? pos[i] : make_float4(0, 0, 0, 0);
    float3 a = {0, 0, 0};
    for (int base = 0; base < n; base += blockDim.x) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0);
        __syncthreads();
#pragma unroll 4
        for (int k = 0; k < blockDim.x; ++k) {
            float4 o = tile[k];
            float3 r = {o.x - me.x, o.y - me.y, o.z - me.z};
            float d2 = r.x * r.x + r.y * r.y + r.z * r.z + soft2;
            float inv = rsqrtf(d2);
            float s = o.w * inv * inv * inv;
            a.x += r.x * s; a.y += r.y * s; a.z += r.z * s;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(a.x, a.y, a.z, 0.0f);
}
