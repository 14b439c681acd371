#include <hip/hip_runtime.h>
// DPP: cross-lane moves inside rows of 16 lanes (row_shr, row_bcast, quad_perm...), as wave reductions use.
extern "C" __global__ void dpp_ops(const int* x, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[i];
  int s = v;
  s += __builtin_amdgcn_update_dpp(0, s, 0x111, 0xf, 0xf, false);  // row_shr:1
  s += __builtin_amdgcn_update_dpp(0, s, 0x112, 0xf, 0xf, false);  // row_shr:2
  s += __builtin_amdgcn_update_dpp(0, s, 0x114, 0xf, 0xe, false);  // row_shr:4, bank_mask 0xe
  s += __builtin_amdgcn_update_dpp(0, s, 0x118, 0xf, 0xc, false);  // row_shr:8, bank_mask 0xc
  s += __builtin_amdgcn_update_dpp(0, s, 0x142, 0xa, 0xf, false);  // row_bcast:15, row_mask 0xa
  s += __builtin_amdgcn_update_dpp(0, s, 0x143, 0xc, 0xf, false);  // row_bcast:31, row_mask 0xc
  out[4 * i] = s;
  out[4 * i + 1] = __builtin_amdgcn_update_dpp(-1, v, 0x1B, 0xf, 0xf, false);  // quad_perm:[3,2,1,0]
  out[4 * i + 2] = __builtin_amdgcn_update_dpp(-1, v, 0x140, 0xf, 0xf, true);  // row_mirror, bound_ctrl
  out[4 * i + 3] = __builtin_amdgcn_update_dpp(-1, v, 0x101, 0xf, 0xf, true);  // row_shl:1, bound_ctrl:0
}
