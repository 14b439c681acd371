// Every sm_90 launch runs in clusters (1x1x1 when none is asked for), so the cluster special registers
// are readable in a plain launch: rank 0 of 1, cluster id = block id, not an explicit cluster.
extern "C" __global__ void cluster_regs(unsigned* out) {
    unsigned rank, n, id, expl;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(id));
    asm volatile("{.reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p;}" : "=r"(expl));
    if (threadIdx.x == 0) {
        out[4 * blockIdx.x + 0] = rank;
        out[4 * blockIdx.x + 1] = n;
        out[4 * blockIdx.x + 2] = id;
        out[4 * blockIdx.x + 3] = expl;
    }
}
