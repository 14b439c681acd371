// The device-function ABI beyond inlining: __noinline__ functions taking and returning structs by value
// (.param byte arrays), multiple inheritance with virtual functions (this-adjusting thunks), a
// statically initialised __device__ table, and kernel parameters of every small type (bool, char,
// short, __half, float4 and double2 by value).
#include <cuda_fp16.h>

struct Vec3 { float x, y, z; };
struct Pair { double a; int b; char c; };

__device__ __noinline__ Vec3 cross(Vec3 u, Vec3 v) {
    return Vec3{u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x};
}
__device__ __noinline__ Pair combine(Pair p, Pair q, int k) {
    return Pair{p.a * k + q.a, p.b ^ q.b, (char)(p.c + q.c)};
}

struct Named { __device__ virtual int id() const { return 1; } int tag = 7; };
struct Scaled { __device__ virtual float scale(float v) const { return v * 2.0f; } float bias = 0.5f; };
struct Both : Named, Scaled {
    __device__ int id() const override { return 3; }
    __device__ float scale(float v) const override { return v * 3.0f + bias; }
};
__device__ __noinline__ float use_scaled(const Scaled& s, float v) { return s.scale(v); }
__device__ __noinline__ int use_named(const Named& n) { return n.id() * 10 + n.tag; }

__device__ int primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
__device__ const char* words[3] = {"alpha", "beta", "gamma"};

extern "C" __global__ void abi(const float* v, float* fout, double* dout, int* iout, bool flag, char ch, short sh,
                               __half hv, float4 f4, double2 d2) {
    int t = threadIdx.x;
    Vec3 u{v[3 * t], v[3 * t + 1], v[3 * t + 2]}, w{f4.x, f4.y, f4.z};
    Vec3 c = cross(u, w);
    fout[4 * t] = c.x; fout[4 * t + 1] = c.y; fout[4 * t + 2] = c.z;
    Both b;
    fout[4 * t + 3] = use_scaled(b, v[t]);
    Pair p{d2.x * t, t, (char)t}, q{d2.y, 0x55, ch};
    Pair r = combine(p, q, sh);
    dout[t] = r.a;
    iout[4 * t] = r.b;
    iout[4 * t + 1] = r.c;
    iout[4 * t + 2] = use_named(b) + (flag ? primes[t & 7] : -1) + (int)__half2float(hv);
    iout[4 * t + 3] = words[t % 3][t % 4];
}
