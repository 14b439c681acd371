// Rodinia streamcluster pgain: the cost of opening a candidate centre x. Each point compares its current
// cost with its weighted distance to x (x's coordinates cached in dynamic shared memory) and records the
// switch flag or the saving against its current centre.
struct Point { float weight; int assign; float cost; };

extern "C" __global__ void pgain(const float* coord, const Point* p, float* work_mem, const int* center_table,
                                 char* switch_membership, int num, int dim, int x, int kcenters) {
    extern __shared__ float coord_x[];
    for (int d = threadIdx.x; d < dim; d += blockDim.x) coord_x[d] = coord[d * num + x];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num) return;
    float dist = 0.0f;
    for (int d = 0; d < dim; d++) {
        float t = coord[d * num + i] - coord_x[d];
        dist += t * t;
    }
    float x_cost = dist * p[i].weight;
    float current = p[i].cost;
    float* lower = work_mem + i * (kcenters + 1);
    if (x_cost < current) {
        switch_membership[i] = 1;
        lower[kcenters] = x_cost - current;
    } else {
        lower[center_table[p[i].assign]] = current - x_cost;
    }
}
