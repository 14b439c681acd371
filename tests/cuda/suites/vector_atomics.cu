// sm_90 vector atomics: atomicAdd on float2 and float4 (one atom.global.add.v2.f32 / .v4.f32 each), as
// scatter-add kernels use for 2-D/4-D accumulators.
extern "C" __global__ void vector_atomics(float2* acc2, float4* acc4, const float* v) {
    int t = threadIdx.x;
    atomicAdd(acc2, make_float2(v[t], 1.0f));
    atomicAdd(acc4 + (t & 1), make_float4(1.0f, v[t], 2.0f, -v[t]));
}
