// Shuffles of 64-bit types (double, long long: the headers split them into two 32-bit shuffles), also
// through a templated broadcast helper, plus the cache-hint loads and stores (__ldcs/__ldcg/__ldlu/...).
template <class T> __device__ T broadcast(T v, int src) { return __shfl_sync(0xffffffffu, v, src); }

extern "C" __global__ void shfl64(const double* d, const long long* l, double* od, long long* ol, float* hints,
                                  const float* src) {
    int t = threadIdx.x;
    double x = d[t];
    long long y = l[t];
    od[2 * t] = __shfl_xor_sync(0xffffffffu, x, 1);
    od[2 * t + 1] = broadcast(x, 31 - (t & 31));
    ol[2 * t] = __shfl_down_sync(0xffffffffu, y, 2);
    ol[2 * t + 1] = broadcast(y, 3);
    float v = __ldcs(src + t) + __ldcg(src + t) + __ldlu(src + t) + __ldcv(src + t) + __ldca(src + t);
    __stcs(hints + t, v);
    __stwt(hints + 64 + t, v * 2.0f);
}
