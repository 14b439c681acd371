// 3-D pitched memory in the style of the CUDA samples' volume codes: cudaMalloc3D, cudaMemcpy3D host ->
// device and back (whole volumes and a sub-box at an offset), a kernel walking the pitched volume,
// cudaMemset3D, and cudaMemcpy3DAsync device -> device.
#include <cstring>
#include "common.h"

__global__ void scale_volume(cudaPitchedPtr vol, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  char* slice = (char*)vol.ptr + (size_t)z * vol.pitch * vol.ysize;
  float* row = (float*)(slice + (size_t)y * vol.pitch);
  row[x] = row[x] * 2.0f + (float)z;
}

int main() {
  const int nx = 37, ny = 9, nz = 5;
  const size_t n = (size_t)nx * ny * nz;
  float* h = (float*)malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) h[i] = (float)(i % 101);
  cudaExtent extent = make_cudaExtent(nx * sizeof(float), ny, nz);
  cudaPitchedPtr d;
  checkCudaErrors(cudaMalloc3D(&d, extent));
  printf("pitch >= row %d, aligned %d, xsize %zu ysize %zu\n", d.pitch >= nx * sizeof(float), d.pitch % 256 == 0,
         d.xsize, d.ysize);

  cudaMemcpy3DParms up = {0};
  up.srcPtr = make_cudaPitchedPtr(h, nx * sizeof(float), nx, ny);
  up.dstPtr = d;
  up.extent = extent;
  up.kind = cudaMemcpyHostToDevice;
  checkCudaErrors(cudaMemcpy3D(&up));
  scale_volume<<<dim3(1, ny, nz), 64>>>(d, nx, ny, nz);
  checkCudaErrors(cudaGetLastError());

  float* back = (float*)malloc(n * sizeof(float));
  cudaMemcpy3DParms down = {0};
  down.srcPtr = d;
  down.dstPtr = make_cudaPitchedPtr(back, nx * sizeof(float), nx, ny);
  down.extent = extent;
  down.kind = cudaMemcpyDeviceToHost;
  checkCudaErrors(cudaMemcpy3D(&down));
  int bad = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        size_t i = ((size_t)z * ny + y) * nx + x;
        if (back[i] != h[i] * 2.0f + z) ++bad;
      }
  printf("volume mismatches %d back[last] %.1f\n", bad, back[n - 1]);

  // a 4 x 3 x 2 box at (x=5, y=2, z=1) into a packed host box
  const int bx = 4, by = 3, bz = 2;
  float box[bz][by][bx];
  cudaMemcpy3DParms part = {0};
  part.srcPtr = d;
  part.srcPos = make_cudaPos(5 * sizeof(float), 2, 1);
  part.dstPtr = make_cudaPitchedPtr(box, bx * sizeof(float), bx, by);
  part.extent = make_cudaExtent(bx * sizeof(float), by, bz);
  part.kind = cudaMemcpyDeviceToHost;
  checkCudaErrors(cudaMemcpy3D(&part));
  int badbox = 0;
  for (int z = 0; z < bz; ++z)
    for (int y = 0; y < by; ++y)
      for (int x = 0; x < bx; ++x)
        if (box[z][y][x] != back[((size_t)(z + 1) * ny + y + 2) * nx + x + 5]) ++badbox;
  printf("box[1][2][3] %.1f mismatches %d\n", box[1][2][3], badbox);

  // device -> device into a second volume, on a stream; then memset a slab of the first
  cudaPitchedPtr d2;
  checkCudaErrors(cudaMalloc3D(&d2, extent));
  cudaStream_t s;
  checkCudaErrors(cudaStreamCreate(&s));
  cudaMemcpy3DParms dd = {0};
  dd.srcPtr = d;
  dd.dstPtr = d2;
  dd.extent = extent;
  dd.kind = cudaMemcpyDeviceToDevice;
  checkCudaErrors(cudaMemcpy3DAsync(&dd, s));
  checkCudaErrors(cudaStreamSynchronize(s));
  checkCudaErrors(cudaMemset3D(d, 0, make_cudaExtent(nx * sizeof(float), ny, 2)));
  float first = -1, copied = -1, kept = -1;
  checkCudaErrors(cudaMemcpy(&first, (char*)d.ptr + d.pitch * ny + 4 * sizeof(float), 4, cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(&kept, (char*)d.ptr + 2 * d.pitch * ny, 4, cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(&copied, (char*)d2.ptr + d2.pitch * ny + 4 * sizeof(float), 4, cudaMemcpyDeviceToHost));
  printf("memset slab %.1f kept %.1f copy %.1f\n", first, kept, copied);

  // a pitched 2-D copy writes the rows and leaves the padding between them alone
  float* img;
  size_t ipitch;
  const int iw = 13, ih = 7;
  checkCudaErrors(cudaMallocPitch((void**)&img, &ipitch, iw * sizeof(float), ih));
  checkCudaErrors(cudaMemset(img, 0x7F, ipitch * ih));
  float rows[ih][iw];
  for (int y = 0; y < ih; ++y)
    for (int x = 0; x < iw; ++x) rows[y][x] = (float)(y * 100 + x);
  checkCudaErrors(cudaMemcpy2D(img, ipitch, rows, iw * sizeof(float), iw * sizeof(float), ih, cudaMemcpyHostToDevice));
  unsigned char* raw = (unsigned char*)malloc(ipitch * ih);
  checkCudaErrors(cudaMemcpy(raw, img, ipitch * ih, cudaMemcpyDeviceToHost));
  int rows_ok = 1, pad_ok = 1;
  for (int y = 0; y < ih; ++y) {
    rows_ok &= memcmp(raw + y * ipitch, rows[y], iw * sizeof(float)) == 0;
    for (size_t b = iw * sizeof(float); b < ipitch; ++b) pad_ok &= raw[y * ipitch + b] == 0x7F;
  }
  printf("2-D copy rows ok %d padding kept %d\n", rows_ok, pad_ok);
  free(raw);
  cudaFree(img);

  cudaArray_t arr = NULL;
  cudaMemcpy3DParms toarr = {0};
  toarr.srcPtr = d;
  toarr.dstArray = (cudaArray_t)&arr;  // not an array of this program
  toarr.extent = make_cudaExtent(1, 1, 1);
  toarr.kind = cudaMemcpyDeviceToDevice;
  printf("to a bogus array: %s\n", cudaGetErrorName(cudaMemcpy3D(&toarr)));
  cudaGetLastError();
  cudaFree(d.ptr);
  cudaFree(d2.ptr);
  cudaStreamDestroy(s);
  free(h);
  free(back);
  return 0;
}
