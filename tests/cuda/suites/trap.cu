// __trap() from one thread aborts the kernel: the launch reports an error (cudaErrorLaunchFailure on
// current GPUs) rather than completing.
extern "C" __global__ void trap_if_negative(const int* v, int* out) {
    int i = threadIdx.x;
    if (v[i] < 0) __trap();
    out[i] = v[i];
}
