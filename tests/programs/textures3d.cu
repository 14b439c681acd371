// Volume and layered textures over CUDA arrays from cudaMalloc3DArray, filled and read back with
// cudaMemcpy3D (host <-> array with padded host rows and offsets, array -> array), sampled with tex3D and
// tex2DLayered; cudaArrayGetInfo.
#include "common.h"

__global__ void sample3d(cudaTextureObject_t t, float* out, int nx, int ny, int nz) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = 2.0f * tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}
__global__ void midpoint(cudaTextureObject_t t, float* out) { *out = tex3D<float>(t, 1.0f, 0.5f, 0.5f); }
__global__ void sample_layers(cudaTextureObject_t t, float* out, int n, int layers) {
  int x = threadIdx.x, layer = blockIdx.x;
  if (x < n * n && layer < layers) out[layer * n * n + x] = tex2DLayered<float>(t, x % n + 0.5f, x / n + 0.5f, layer);
}

static cudaTextureObject_t texture_of(cudaArray_t a, cudaTextureFilterMode filter) {
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaTextureDesc td = {};
  td.filterMode = filter;
  td.readMode = cudaReadModeElementType;
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
  cudaTextureObject_t t;
  checkCudaErrors(cudaCreateTextureObject(&t, &res, &td, NULL));
  return t;
}

int main() {
  const int nx = 8, ny = 6, nz = 4, hpitch = 10;  // host rows padded to 10 floats
  float host[nz][ny][hpitch];
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < hpitch; ++x) host[z][y][x] = x < nx ? (float)(z * 100 + y * 10 + x) : -1.0f;
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t vol, copy;
  checkCudaErrors(cudaMalloc3DArray(&vol, &f, make_cudaExtent(nx, ny, nz)));
  checkCudaErrors(cudaMalloc3DArray(&copy, &f, make_cudaExtent(nx, ny, nz)));
  cudaMemcpy3DParms up = {0};
  up.srcPtr = make_cudaPitchedPtr(host, hpitch * sizeof(float), nx, ny);
  up.dstArray = vol;
  up.extent = make_cudaExtent(nx, ny, nz);
  up.kind = cudaMemcpyHostToDevice;
  checkCudaErrors(cudaMemcpy3D(&up));

  cudaExtent ext;
  unsigned flags = 99;
  checkCudaErrors(cudaArrayGetInfo(NULL, &ext, &flags, vol));
  printf("array %zu x %zu x %zu flags %u\n", ext.width, ext.height, ext.depth, flags);

  // array -> array, then sample the copy
  cudaMemcpy3DParms aa = {0};
  aa.srcArray = vol;
  aa.dstArray = copy;
  aa.extent = make_cudaExtent(nx, ny, nz);
  aa.kind = cudaMemcpyDeviceToDevice;
  checkCudaErrors(cudaMemcpy3D(&aa));
  cudaTextureObject_t t = texture_of(copy, cudaFilterModePoint);
  float* d;
  checkCudaErrors(cudaMalloc(&d, nx * ny * nz * sizeof(float)));
  sample3d<<<dim3(ny, nz), nx>>>(t, d, nx, ny, nz);
  float out[nz][ny][nx];
  checkCudaErrors(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        if (out[z][y][x] != 2.0f * host[z][y][x]) ++bad;
  cudaTextureObject_t lin = texture_of(vol, cudaFilterModeLinear);
  midpoint<<<1, 1>>>(lin, d);
  float mid = 0;
  checkCudaErrors(cudaMemcpy(&mid, d, 4, cudaMemcpyDeviceToHost));
  printf("tex3D mismatches %d out[3][5][7] %.1f midpoint %.2f\n", bad, out[3][5][7], mid);

  // a 3 x 2 x 2 box at (x=4, y=1, z=2) of the array into the middle of a zeroed host volume
  float back[3][4][5] = {};
  cudaMemcpy3DParms down = {0};
  down.srcArray = vol;
  down.srcPos = make_cudaPos(4, 1, 2);
  down.dstPtr = make_cudaPitchedPtr(back, 5 * sizeof(float), 5, 4);
  down.dstPos = make_cudaPos(1 * sizeof(float), 1, 1);
  down.extent = make_cudaExtent(3, 2, 2);
  down.kind = cudaMemcpyDeviceToHost;
  checkCudaErrors(cudaMemcpy3D(&down));
  printf("box back[1][1][1] %.1f back[2][2][3] %.1f back[0][0][0] %.1f\n", back[1][1][1], back[2][2][3], back[0][0][0]);

  // three 4 x 4 layers
  const int n = 4, layers = 3;
  float lay[layers][n][n];
  for (int l = 0; l < layers; ++l)
    for (int i = 0; i < n * n; ++i) lay[l][i / n][i % n] = (float)(l * 1000 + i);
  cudaArray_t la;
  checkCudaErrors(cudaMalloc3DArray(&la, &f, make_cudaExtent(n, n, layers), cudaArrayLayered));
  cudaMemcpy3DParms lp = {0};
  lp.srcPtr = make_cudaPitchedPtr(lay, n * sizeof(float), n, n);
  lp.dstArray = la;
  lp.extent = make_cudaExtent(n, n, layers);
  lp.kind = cudaMemcpyHostToDevice;
  checkCudaErrors(cudaMemcpy3D(&lp));
  cudaTextureObject_t lt = texture_of(la, cudaFilterModePoint);
  sample_layers<<<layers, n * n>>>(lt, d, n, layers);
  float lout[layers * n * n];
  checkCudaErrors(cudaMemcpy(lout, d, sizeof lout, cudaMemcpyDeviceToHost));
  int lbad = 0;
  for (int l = 0; l < layers; ++l)
    for (int i = 0; i < n * n; ++i)
      if (lout[l * n * n + i] != lay[l][i / n][i % n]) ++lbad;
  checkCudaErrors(cudaArrayGetInfo(NULL, &ext, &flags, la));
  printf("layered %zu layers flags %u mismatches %d last %.1f\n", ext.depth, flags, lbad, lout[layers * n * n - 1]);

  cudaDestroyTextureObject(t);
  cudaDestroyTextureObject(lin);
  cudaDestroyTextureObject(lt);
  cudaFreeArray(vol);
  cudaFreeArray(copy);
  cudaFreeArray(la);
  printf("freed array info: %s\n", cudaGetErrorName(cudaArrayGetInfo(NULL, &ext, &flags, vol)));
  cudaFree(d);
  return 0;
}
