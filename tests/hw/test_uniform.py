"""Uniform registers: parameter-derived values live as scalars and still mean the same thing."""

import numpy as np

import strata.cuda as cuda
from strata.hw.uniform import uniform_registers

SRC = r"""
extern "C" __global__ void stencil(int n, int stride, float w, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int span = stride * 2 + 1;                 // uniform: from parameters only
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < span; ++k) {           // uniform trip count inside divergent code
        int j = i + k - stride;
        if (j >= 0 && j < n) acc += w * x[j];
    }
    y[i] = acc;
}
"""


def test_parameter_values_are_uniform_and_results_exact():
    mod = cuda.compile(SRC, name="uniform.cu")
    fn = mod.ir.functions["stencil"]
    uni = uniform_registers(fn)
    params = {ins.operands[0].name for ins in fn.body if ins.opcode == "ld" and "param" in ins.mods}
    assert params and params <= uni  # every parameter load is uniform
    tid = {ins.operands[0].name for ins in fn.body
           if ins.opcode == "mov" and any(getattr(o, "name", "").startswith("%tid") for o in ins.operands)}
    assert tid and not (tid & uni)  # thread indices never are

    n, stride, w = 1000, 3, np.float32(0.5)
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = cuda.zeros(n, np.float32)
    mod.get_function("stencil")(8, 128, (np.int32(n), np.int32(stride), w, cuda.to_device(x), y))
    want = np.zeros(n, np.float32)
    for i in range(n):
        acc = np.float32(0)
        for k in range(2 * stride + 1):
            j = i + k - stride
            if 0 <= j < n:
                acc = np.float32(np.float64(w) * np.float64(x[j]) + np.float64(acc))  # fma: one rounding
        want[i] = acc
    np.testing.assert_array_equal(y.get(), want)
