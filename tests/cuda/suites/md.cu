// SHOC md: Lennard-Jones forces from a column-major neighbour list (neighList[j * inum + i]), positions
// as float4 read through __ldg, cutoff test on r^2.
// __ldg has no double4 overload: read those as two double2 loads through the read-only path
__device__ __forceinline__ float4 load_pos(const float4* p) { return __ldg(p); }
__device__ __forceinline__ double4 load_pos(const double4* p) {
    double2 lo = __ldg(reinterpret_cast<const double2*>(p)), hi = __ldg(reinterpret_cast<const double2*>(p) + 1);
    return make_double4(lo.x, lo.y, hi.x, hi.y);
}

template <class T, class T4>
__global__ void compute_lj_force(T4* force, const T4* __restrict__ position, int neighCount,
                                 const int* __restrict__ neighList, T cutsq, T lj1, T lj2, int inum) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= inum) return;
    T4 ipos = load_pos(&position[idx]);
    T4 f = {0, 0, 0, 0};
    for (int j = 0; j < neighCount; j++) {
        int jidx = neighList[j * inum + idx];
        T4 jpos = load_pos(&position[jidx]);
        T delx = ipos.x - jpos.x, dely = ipos.y - jpos.y, delz = ipos.z - jpos.z;
        T r2inv = delx * delx + dely * dely + delz * delz;
        if (r2inv < cutsq) {
            r2inv = (T)1 / r2inv;
            T r6inv = r2inv * r2inv * r2inv;
            T force_mag = r2inv * r6inv * (lj1 * r6inv - lj2);
            f.x += delx * force_mag;
            f.y += dely * force_mag;
            f.z += delz * force_mag;
        }
    }
    force[idx] = f;
}
template __global__ void compute_lj_force<float, float4>(float4*, const float4*, int, const int*, float, float,
                                                         float, int);
template __global__ void compute_lj_force<double, double4>(double4*, const double4*, int, const int*, double,
                                                           double, double, int);
