// Kernels the driver-API program (driver_api.cu) loads as PTX (`strata nvcc -ptx`).
extern "C" __device__ float bias;
__device__ float bias = 0.5f;
extern "C" __global__ void axpb(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + bias;
}
