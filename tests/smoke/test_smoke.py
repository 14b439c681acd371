"""Fast end-to-end checks: the package imports, a kernel runs through every layer, the CLI works."""

import numpy as np

import strata.cuda as cuda
from strata import cli

SAXPY = r"""
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
"""


def test_saxpy_through_every_layer():
    mod = cuda.compile(SAXPY, name="saxpy.cu")
    n = 5000
    x = np.linspace(-3, 3, n, dtype=np.float32)
    y = np.arange(n, dtype=np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    report = mod.get_function("saxpy")(8, 128, (np.int32(n), np.float32(0.5), dx, dy))
    got = dy.get()
    assert got.shape == (n,) and got.dtype == np.float32
    np.testing.assert_array_equal(got, (np.float64(0.5) * x + y).astype(np.float32))
    c = report.counters
    assert c.global_load_bytes == 2 * 4 * n and c.global_store_bytes == 4 * n
    assert c.threads_launched == 8 * 128 and c.thread_instructions["fp32"] == n
    assert report.modeled.label == "modeled" and report.modeled.seconds > 0
    assert report.wall_time_s > 0 and "modeled" in str(report)


def test_cli_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "NVRTC" in out and "virtual GPU" in out
