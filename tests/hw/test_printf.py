"""Device printf (vprintf): each thread's line, with its own arguments."""

import numpy as np

import strata.cuda as cuda

SRC = r"""
extern "C" __global__ void hello(const float* x) {
    int t = threadIdx.x;
    if (t % 2 == 0) printf("thread %d of %d: x=%.2f hex=%x long=%lld\n", t, blockDim.x, x[t], 255 + t, -5LL * t);
}
"""


def test_printf_formats_each_threads_arguments(capsys):
    mod = cuda.compile(SRC, name="printf.cu")
    x = cuda.to_device(np.arange(4, dtype=np.float32) * 1.5)
    mod.get_function("hello")(1, 4, (x,))
    cuda.synchronize()  # like CUDA, printf output is complete once the kernel is
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "thread 0 of 4: x=0.00 hex=ff long=0",
        "thread 2 of 4: x=3.00 hex=101 long=-10",
    ]
