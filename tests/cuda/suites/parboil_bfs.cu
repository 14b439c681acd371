// Parboil bfs: a level-synchronous BFS with a block-local frontier queue in shared memory (atomicAdd on
// a shared tail), flushed to the global next-frontier queue with one global atomicAdd per block, and
// per-node colours claimed with atomicExch.
#define LOCAL_Q 512

extern "C" __global__ void bfs_level(const int* row_ptr, const int* cols, const int* frontier, int frontier_size,
                                     int* next, int* next_size, int* color, int* cost, int level) {
    __shared__ int q[LOCAL_Q];
    __shared__ int q_tail, q_base;
    if (threadIdx.x == 0) q_tail = 0;
    __syncthreads();
    for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < frontier_size; f += blockDim.x * gridDim.x) {
        int u = frontier[f];
        for (int e = row_ptr[u]; e < row_ptr[u + 1]; e++) {
            int v = cols[e];
            if (atomicExch(&color[v], 1) == 0) {  // first to reach v claims it
                cost[v] = level + 1;
                int slot = atomicAdd(&q_tail, 1);
                if (slot < LOCAL_Q) q[slot] = v;
                else next[atomicAdd(next_size, 1)] = v;  // local queue overflow goes straight to global
            }
        }
    }
    __syncthreads();
    int count = min(q_tail, LOCAL_Q);
    if (threadIdx.x == 0) q_base = atomicAdd(next_size, count);
    __syncthreads();
    for (int i = threadIdx.x; i < count; i += blockDim.x) next[q_base + i] = q[i];
}
