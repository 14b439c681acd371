// Edges of the runtime API the bridge library must get right: outputs left alone when a call fails, NULL
// output pointers refused, 2-D sizes whose byte count does not fit a size_t refused (not wrapped), and a
// kernel with more parameters than a fixed reply buffer once held, and a template kernel whose mangled name is
// longer than a fixed request buffer once held.
#include <cstdint>
#include "common.h"

#define A10(p) int p##0, int p##1, int p##2, int p##3, int p##4, int p##5, int p##6, int p##7, int p##8, int p##9
#define A100(p) A10(p##0), A10(p##1), A10(p##2), A10(p##3), A10(p##4), A10(p##5), A10(p##6), A10(p##7), A10(p##8), \
                A10(p##9)
#define S10(p) (p##0 + p##1 + p##2 + p##3 + p##4 + p##5 + p##6 + p##7 + p##8 + p##9)
#define S100(p) (S10(p##0) + S10(p##1) + S10(p##2) + S10(p##3) + S10(p##4) + S10(p##5) + S10(p##6) + S10(p##7) + \
                 S10(p##8) + S10(p##9))
#define NARGS 600

// 601 parameters: the output pointer and 600 ints, summed
__global__ void many(long long* out, A100(a0), A100(a1), A100(a2), A100(a3), A100(a4), A100(a5)) {
  *out = (long long)S100(a0) + S100(a1) + S100(a2) + S100(a3) + S100(a4) + S100(a5);
}

__device__ int symbol;

// six template arguments of ~200-character names: a mangled kernel name of over 1200 characters
#define LONG(x) x##_the_quick_brown_fox_jumps_over_the_lazy_dog_and_keeps_running_far_beyond_the_hills_\
0123456789_abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ_padding_padding_padding_padding_padding_padding
struct LONG(A) {}; struct LONG(B) {}; struct LONG(C) {}; struct LONG(D) {}; struct LONG(E) {}; struct LONG(F) {};
template <typename T1, typename T2, typename T3, typename T4, typename T5, typename T6>
__global__ void named(int* out) { *out = (int)(sizeof(T1) + sizeof(T2) + sizeof(T3) + sizeof(T4) + sizeof(T5) + sizeof(T6)); }

static void show(const char* what, cudaError_t e) { printf("%s: %s\n", what, cudaGetErrorName(e)); }

int main() {
  // an elapsed time between events never recorded: an error, and *ms as it was
  cudaEvent_t a, b;
  checkCudaErrors(cudaEventCreate(&a));
  checkCudaErrors(cudaEventCreate(&b));
  float ms = -1.5f;
  show("elapsed unrecorded", cudaEventElapsedTime(&ms, a, b));
  printf("ms kept %d\n", ms == -1.5f);
  cudaGetLastError();

  // a pitched allocation that cannot succeed leaves the pitch alone
  void* p = nullptr;
  size_t pitch = 12345;
  show("huge pitched malloc", cudaMallocPitch(&p, &pitch, (size_t)1 << 40, (size_t)1 << 20));
  printf("pitch kept %d\n", pitch == 12345);
  cudaGetLastError();

  // a pinned allocation of nearly 2^64 bytes fails (rounded up to pages it once wrapped to one page)
  void* pinned = nullptr;
  show("huge pinned malloc", cudaMallocHost(&pinned, SIZE_MAX - 100));
  cudaGetLastError();

  // NULL outputs
  show("device count NULL", cudaGetDeviceCount(nullptr));
  show("symbol address NULL", cudaGetSymbolAddress(nullptr, symbol));
  show("symbol size NULL", cudaGetSymbolSize(nullptr, symbol));
  cudaDeviceProp prop = {};
  show("choose device NULL", cudaChooseDevice(nullptr, &prop));
  show("func attributes NULL", cudaFuncGetAttributes(nullptr, many));
  cudaGetLastError();

  // 2-D sizes whose bytes (pitch * height) wrap around 2^64
  const size_t wide = (size_t)1 << 32, tall = (size_t)1 << 32;
  char* d = nullptr;
  checkCudaErrors(cudaMalloc(&d, 256));
  show("2-D copy wrapping", cudaMemcpy2D(d, wide, d, wide, wide, tall, cudaMemcpyDeviceToDevice));
  show("2-D memset wrapping", cudaMemset2D(d, wide, 0, wide, tall));
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<char>();
  cudaArray_t arr;
  checkCudaErrors(cudaMallocArray(&arr, &desc, 16, 16));
  char host[256] = {0};
  show("2-D copy to array wrapping", cudaMemcpy2DToArray(arr, 0, 0, host, wide, wide, tall, cudaMemcpyHostToDevice));
  show("2-D copy from array wrapping",
       cudaMemcpy2DFromArray(host, wide, arr, 0, 0, wide, tall, cudaMemcpyDeviceToHost));
  cudaGetLastError();

  // a kernel with 601 parameters
  static int vals[NARGS];
  void* args[NARGS + 1];
  long long* out;
  checkCudaErrors(cudaMalloc(&out, sizeof *out));
  args[0] = &out;
  for (int i = 0; i < NARGS; i++) { vals[i] = 3 * i + 1; args[i + 1] = &vals[i]; }
  checkCudaErrors(cudaLaunchKernel((const void*)many, dim3(1), dim3(1), args, 0, 0));
  checkCudaErrors(cudaGetLastError());
  long long sum = 0;
  checkCudaErrors(cudaMemcpy(&sum, out, sizeof sum, cudaMemcpyDeviceToHost));
  printf("sum of %d parameters %lld\n", NARGS, sum);

  int* o;
  checkCudaErrors(cudaMalloc(&o, sizeof *o));
  named<LONG(A), LONG(B), LONG(C), LONG(D), LONG(E), LONG(F)><<<1, 1>>>(o);
  show("long-named kernel", cudaGetLastError());
  int six = 0;
  checkCudaErrors(cudaMemcpy(&six, o, sizeof six, cudaMemcpyDeviceToHost));
  printf("long-named kernel wrote %d\n", six);
  return 0;
}
