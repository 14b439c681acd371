// Rodinia nn: Euclidean distance from every record (lat, lng) to a query point, 2-D grid of 1-D blocks.
struct LatLong { float lat; float lng; };

extern "C" __global__ void euclid(const LatLong* d_locations, float* d_distances, int n, float lat, float lng) {
    int gid = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    if (gid < n) {
        const LatLong* p = d_locations + gid;
        d_distances[gid] = sqrtf((lat - p->lat) * (lat - p->lat) + (lng - p->lng) * (lng - p->lng));
    }
}
