// Control-flow shapes: a dense switch (a jump table: brx.idx), a device class hierarchy with virtual
// functions on stack objects, __syncthreads_count/_and/_or, and goto-based early exits.
struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual int sides() const { return 0; }
};
struct Square : Shape {
    float s;
    __device__ explicit Square(float v) : s(v) {}
    __device__ float area() const override { return s * s; }
    __device__ int sides() const override { return 4; }
};
struct Circle : Shape {
    float r;
    __device__ explicit Circle(float v) : r(v) {}
    __device__ float area() const override { return 3.0f * r * r; }
};

__device__ __noinline__ float measure(const Shape& s, int* sides) { *sides = s.sides(); return s.area(); }

extern "C" __global__ void control(const int* sel, const float* v, int* sw, float* areas, int* sides, int* votes) {
    int t = threadIdx.x;
    int k = sel[t];
    int r;
    switch (k) {
        case 0: r = 11; break;
        case 1: r = t * 3; break;
        case 2: r = -t; break;
        case 3: r = t ^ 0x55; break;
        case 4: r = 1 << (t & 15); break;
        case 5: r = 99; break;
        case 6: r = t * t; break;
        case 7: r = 7; break;
        default: r = -1;
    }
    sw[t] = r;
    Square sq(v[t]);
    Circle ci(v[t]);
    const Shape* s = (k & 1) ? (const Shape*)&sq : (const Shape*)&ci;
    areas[t] = measure(*s, &sides[t]);
    int c = __syncthreads_count(k > 3);
    int all = __syncthreads_and(k >= 0);
    int any = __syncthreads_or(k == 9);
    if (t == 0) { votes[0] = c; votes[1] = all; votes[2] = any; }
}
