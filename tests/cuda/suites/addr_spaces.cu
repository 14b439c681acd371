// The address-space predicates and conversions: __isGlobal/__isShared/__isConstant/__isLocal on generic
// pointers, and __cvta_generic_to_shared/__cvta_shared_to_generic/__cvta_generic_to_global round trips.
__constant__ float cbias[4] = {0.5f, 1.5f, -2.0f, 4.0f};

extern "C" __global__ void addr_spaces(const float* x, int* spaces, const int* sel) {
    __shared__ int sh;
    int loc[2] = {(int)threadIdx.x, sel[threadIdx.x]};
    volatile int* lp = &loc[sel[threadIdx.x] & 1];  // keep the local array in memory
    *lp += 1;
    if (threadIdx.x == 0) {
        spaces[0] = __isGlobal(x) + 2 * __isShared(&sh) + 4 * __isConstant(cbias) + 8 * __isLocal((const void*)lp);
        spaces[1] = __isGlobal(&sh) + __isShared(x) + __isConstant(x) + __isLocal(x) + __isGlobal((const void*)lp);
        size_t s = __cvta_generic_to_shared(&sh);
        spaces[2] = __cvta_shared_to_generic(s) == (void*)&sh;
        spaces[3] = (const void*)__cvta_global_to_generic(__cvta_generic_to_global(x)) == (const void*)x;
        spaces[4] = loc[0] + loc[1];
    }
}
