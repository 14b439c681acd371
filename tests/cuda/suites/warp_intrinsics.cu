// The unified (_sync) warp intrinsics: shuffles of every flavour, votes, match, reduce, activemask and
// __syncwarp, on a partially active warp too.
extern "C" __global__ void warp_ops(const int* in, int* out) {
    int t = threadIdx.x, lane = t & 31;
    int v = in[t];
    unsigned full = 0xffffffffu;
    int* o = out + t * 12;
    o[0] = __shfl_sync(full, v, 5);
    o[1] = __shfl_up_sync(full, v, 3);
    o[2] = __shfl_down_sync(full, v, 7);
    o[3] = __shfl_xor_sync(full, v, 9);
    o[4] = (int)__ballot_sync(full, v > 0);
    o[5] = __any_sync(full, v == 42);
    o[6] = __all_sync(full, v > -1000);
    o[7] = (int)__match_any_sync(full, v & 3);
    o[8] = __reduce_add_sync(full, v);
    o[9] = __reduce_max_sync(full, v);
    __syncwarp();
    if (lane < 20) {  // a partial warp
        o[10] = (int)__activemask();
        o[11] = __shfl_sync(0xfffffu, v, 19 - lane, 32);
    } else {
        o[10] = -1;
        o[11] = __shfl_sync(full & ~0xfffffu, v, lane ^ 1, 8);  // width-8 segments
    }
}
