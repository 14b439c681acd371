// Texture objects: a CUDA array sampled with bilinear filtering and clamping, and a linear buffer fetched
// with tex1Dfetch, in the style of the simpleTexture sample; a surface object writing into the array, read
// back with cudaMemcpy2DFromArray.
#include "common.h"

__global__ void sample2d(cudaTextureObject_t tex, float* out, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.75f, y + 0.5f);  // between texels x and x+1
}

__global__ void fetch1d(cudaTextureObject_t tex, int* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(tex, n - 1 - i);
}

__global__ void negate(cudaSurfaceObject_t surf, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) surf2Dwrite(-surf2Dread<float>(surf, x * 4, y), surf, x * 4, y);
}

int main() {
  const int w = 8, h = 4;
  float img[h][w];
  for (int y = 0; y < h; ++y) for (int x = 0; x < w; ++x) img[y][x] = (float)(y * 100 + x * 10);
  cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaArray_t arr;
  checkCudaErrors(cudaMallocArray(&arr, &desc, w, h, cudaArraySurfaceLoadStore));
  checkCudaErrors(cudaMemcpy2DToArray(arr, 0, 0, img, sizeof img[0], w * sizeof(float), h, cudaMemcpyHostToDevice));
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex;
  checkCudaErrors(cudaCreateTextureObject(&tex, &res, &td, NULL));
  float* d;
  checkCudaErrors(cudaMalloc(&d, sizeof img));
  sample2d<<<h, w>>>(tex, d, w, h);
  float out[h][w];
  checkCudaErrors(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
  printf("2-D linear: out[1][2] %.2f out[3][7] %.2f\n", out[1][2], out[3][7]);

  const int n = 16;
  int lin[n], back[n];
  for (int i = 0; i < n; ++i) lin[i] = i * i;
  int *dl, *dout;
  checkCudaErrors(cudaMalloc(&dl, sizeof lin));
  checkCudaErrors(cudaMalloc(&dout, sizeof back));
  checkCudaErrors(cudaMemcpy(dl, lin, sizeof lin, cudaMemcpyHostToDevice));
  cudaResourceDesc lres = {};
  lres.resType = cudaResourceTypeLinear;
  lres.res.linear.devPtr = dl;
  lres.res.linear.desc = cudaCreateChannelDesc<int>();
  lres.res.linear.sizeInBytes = sizeof lin;
  cudaTextureDesc ltd = {};
  ltd.readMode = cudaReadModeElementType;
  cudaTextureObject_t ltex;
  checkCudaErrors(cudaCreateTextureObject(&ltex, &lres, &ltd, NULL));
  fetch1d<<<1, n>>>(ltex, dout, n);
  checkCudaErrors(cudaMemcpy(back, dout, sizeof back, cudaMemcpyDeviceToHost));
  printf("1-D fetch: back[0] %d back[15] %d\n", back[0], back[15]);
  cudaSurfaceObject_t surf;
  checkCudaErrors(cudaCreateSurfaceObject(&surf, &res));
  negate<<<h, w>>>(surf, w, h);
  float neg[h][w];
  checkCudaErrors(cudaMemcpy2DFromArray(neg, sizeof neg[0], arr, 0, 0, w * sizeof(float), h, cudaMemcpyDeviceToHost));
  printf("surface: neg[2][5] %.1f neg[0][0] %.1f\n", neg[2][5], neg[0][0]);
  checkCudaErrors(cudaDestroySurfaceObject(surf));
  checkCudaErrors(cudaDestroyTextureObject(tex));
  checkCudaErrors(cudaDestroyTextureObject(ltex));
  checkCudaErrors(cudaFreeArray(arr));
  return 0;
}
