// Parboil cutcp: electrostatic potential on a lattice from atoms within a cutoff radius, smoothed by
// (1 - r^2/c^2)^2 / r; atoms are staged through shared memory in chunks.
#define CHUNK 64

extern "C" __global__ void cutcp(const float4* __restrict__ atoms, int natoms, float* lattice, int nx, int ny,
                                 int nz, float h, float cutoff2) {
    __shared__ float4 sa[CHUNK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y, k = blockIdx.z;
    float px = i * h, py = j * h, pz = k * h;
    float inv_c2 = 1.0f / cutoff2;
    float e = 0.0f;
    for (int base = 0; base < natoms; base += CHUNK) {
        __syncthreads();
        for (int a = threadIdx.x; a < CHUNK && base + a < natoms; a += blockDim.x) sa[a] = atoms[base + a];
        __syncthreads();
        int m = min(CHUNK, natoms - base);
        for (int a = 0; a < m; a++) {
            float dx = sa[a].x - px, dy = sa[a].y - py, dz = sa[a].z - pz;
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < cutoff2) {
                float s = 1.0f - r2 * inv_c2;
                e += sa[a].w * rsqrtf(r2) * s * s;
            }
        }
    }
    if (i < nx) lattice[(k * ny + j) * nx + i] += e;
}
