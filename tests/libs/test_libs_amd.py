"""The library suites on both kinds of device: a representative subset of the BLAS, DNN, solver and
random tests, run on a virtual H200 (NVRTC, the PTX engine) and a virtual MI300X (the same CUDA C++
compiled by clang-19 for gfx942, the CDNA engine), with the suites' own NumPy oracles. Also: MFMA
`gemm_ex` on gfx942, the ROCm names in the trace, and the error without clang."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.libs import amd as libs_amd
from strata.libs import blas, solver

HERE = Path(__file__).resolve().parent
HAVE_CLANG = shutil.which("clang-19") is not None
GPUS = ["h200", pytest.param("mi300x", marks=pytest.mark.skipif(not HAVE_CLANG,
                                                                 reason="clang-19 not installed (make amd)"))]


def suite(name: str) -> ModuleType:
    """One of the library test modules beside this file (their oracles and test bodies are reused)."""
    key = f"_strata_libs_suite_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, HERE / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return sys.modules[key]


@pytest.fixture(params=GPUS)
def gpu(request: pytest.FixtureRequest) -> Iterator[cuda.Device]:
    before = cuda.current_device()
    dev = cuda.Device(model=request.param)
    cuda.set_device(dev)
    try:
        yield dev
    finally:
        cuda.set_device(before)


@pytest.fixture
def h(gpu: cuda.Device) -> Iterator[Any]:
    handle = blas.create_handle()
    yield handle
    blas.destroy_handle(handle)


@pytest.fixture
def sh(gpu: cuda.Device) -> Iterator[Any]:
    handle = solver.create_handle()
    yield handle
    solver.destroy_handle(handle)


# -- BLAS (rocBLAS on mi300x)
@pytest.mark.parametrize("kernel", ["gemm_tiled", "gemm_small", "gemm_splitk"])
def test_gemm_kernels(h: Any, kernel: str) -> None:
    suite("test_blas").test_gemm_each_kernel_and_transpose(h, kernel, "N", "T")


def test_dgemm_and_trsm(h: Any) -> None:
    t = suite("test_blas")
    t.test_dgemm(h, "gemm_tiled")
    t.test_trsm(h, "L", "U", "N", "N")


def test_level12(h: Any) -> None:
    t = suite("test_blas_level12")
    t.test_axpy_dot(h, np.float64, 1000, 1, -2)
    t.test_scal_asum_nrm2_iamax(h, np.float32, 700, 2)
    t.test_gemv(h, np.float32, "T", 70, 45, 1, 1)  # one 32-lane group per column inside 64-lane waves


def test_hgemm_and_gemm_ex_on_simt(h: Any) -> None:
    t = suite("test_blas_mixed")
    t.test_hgemm_accumulates_in_f32_rounds_once(h, "gemm_tiled")
    t.test_gemm_ex_half_types_on_simt(h, np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), "N", "N")


# -- DNN (MIOpen on mi300x)
@pytest.mark.usefixtures("gpu")
def test_dnn_pointwise_and_softmax() -> None:
    t = suite("test_dnn_pointwise")
    for mode in ("gelu", "tanh", "silu"):
        t.test_activation_forward_and_backward(mode)
    t.test_softmax_forward_backward((3, 70), True)
    t.test_dropout_matches_rand_bernoulli_and_scales()


@pytest.mark.usefixtures("gpu")
def test_dnn_norm_conv_loss_attention() -> None:
    suite("test_dnn_norm").test_layer_and_rms_norm((2, 3, 65), True, False)
    suite("test_dnn_norm").test_batch_norm((7, 5))
    suite("test_dnn_conv").test_conv2d_forward_and_backward((2, 3, 7, 6), (4, 3, 3, 2), (1, 2), (1, 0), (1, 1), 1)
    suite("test_dnn_loss").test_cross_entropy(5, 7, 0.1, np.int64, "mean")
    suite("test_dnn_attention").test_attention_forward_matches_naive((2,), 9, 11, 8, True)


# -- solver (rocSOLVER on mi300x)
def test_solver(sh: Any) -> None:
    t = suite("test_solver")
    # 33 rows: a column's reduction spans two 32-lane groups (in one 64-lane wavefront on mi300x)
    t.test_getrf_square_matches_lapack_pivots_and_reconstructs(sh, 33, np.dtype(np.float64))
    t.test_potrf_matches_cholesky_and_keeps_other_triangle(sh, "L", 33, np.dtype(np.float32))
    t.test_geqrf_matches_lapack_reflectors_and_tau(sh, 33, 20, np.dtype(np.float64))


# -- random numbers (rocRAND on mi300x)
@pytest.mark.usefixtures("gpu")
def test_rand() -> None:
    t = suite("test_rand")
    t.test_raw_stream_matches_the_reference_and_continues_across_calls()
    t.test_uniform_float32_and_float64()
    t.test_normal_moments_and_pairs()


# -- AMD specifics
@pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 not installed (make amd)")
def test_trace_names_rocm_library_and_gfx942_code_object() -> None:
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        h = blas.create_handle()
        a = np.arange(12, dtype=np.float32)
        with trace.record() as rec:
            blas.gemm(h, "N", "N", 3, 3, 4, 1.0, cuda.to_device(a), 3, cuda.to_device(a), 4, 0.0,
                      cuda.zeros(9, np.float32), 3)
            cuda.synchronize()
        call = next(e for e in rec.events if e.layer == "L4" and e.name.startswith("blas."))
        assert call.args["rocm"] == "rocblas_sgemm" and call.args["platform"] == "rocm"
        assert call.args["library"] == "rocBLAS"
        execs = [e for e in rec.events if e.layer == "L0" and e.args.get("isa") == "gfx9"]
        assert execs and execs[0].args["wavefront_size"] == 64
    finally:
        cuda.set_device(before)


def test_name_expressions_map_to_mangled_kernels() -> None:
    kernels = ["_Z10gemm_smallIffLi0EEviiiiT0_PKT_", "_Z10gemm_smallIddLi0EEviiiiT0_PKT_",
               "_Z6reduceI6__halffLj3EEvv", "fill"]
    assert libs_amd.find_kernel("gemm_small<double, double, 0>", kernels) == kernels[1]
    assert libs_amd.find_kernel("reduce<__half, float, 3>", kernels) == kernels[2]  # unsigned template argument
    assert libs_amd.find_kernel("fill", kernels) == "fill"
    with pytest.raises(libs_amd.AmdNameError, match="matches 0 kernels"):
        libs_amd.find_kernel("gemm_small<float, double, 0>", kernels)


def test_amd_device_without_clang_names_make_amd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libs_amd, "clang_path", lambda: None)
    with pytest.raises(Exception, match="make amd"):
        libs_amd.compile_kernels("demo", 'extern "C" __global__ void k() {}')


@pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 not installed (make amd)")
@pytest.mark.parametrize(("ab", "ct", "ta", "tb"), [(np.float16, np.float32, "N", "N"),
                                                    (ml_dtypes.bfloat16, ml_dtypes.bfloat16, "T", "N"),
                                                    (np.float16, np.float16, "N", "T")])
def test_gemm_ex_uses_mfma_on_gfx942(ab: Any, ct: Any, ta: str, tb: str) -> None:
    """f16/bf16 gemm_ex on mi300x runs the MFMA kernel: v_mfma instructions in the trace, C within the
    f32-accumulation error bound of float64 NumPy, edges (m, n, k not multiples of 16/64) handled."""
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        h = blas.create_handle()
        rng = np.random.default_rng(7)
        m, n, k = 70, 45, 50
        a = rng.uniform(-1, 1, (m, k) if ta == "N" else (k, m)).astype(ab)
        b = rng.uniform(-1, 1, (k, n) if tb == "N" else (n, k)).astype(ab)
        c = rng.uniform(-1, 1, (m, n)).astype(ct)
        dc = cuda.to_device(np.asfortranarray(c).ravel(order="F"))
        with trace.record() as rec:
            blas.gemm_ex(h, ta, tb, m, n, k, 1.5, cuda.to_device(a.ravel(order="F")), np.dtype(ab), a.shape[0],
                         cuda.to_device(b.ravel(order="F")), np.dtype(ab), b.shape[0], -0.5, dc, np.dtype(ct), m, "f32")
            got = dc.get().reshape(n, m).T.astype(np.float64)
        assert h.last_kernel == "gemm_mfma"
        execs = [e for e in rec.events if e.layer == "L0" and e.args.get("isa") == "gfx9"]
        assert execs and execs[0].args["mfma"] > 0
        a64 = (a if ta == "N" else a.T).astype(np.float64)
        b64 = (b if tb == "N" else b.T).astype(np.float64)
        want = 1.5 * a64 @ b64 - 0.5 * c.astype(np.float64)
        bound = 2 * (k + 2) * np.finfo(np.float32).eps * (1.5 * np.abs(a64) @ np.abs(b64) + 0.5 * np.abs(c.astype(
            np.float64))) + np.abs(want) * (float(ml_dtypes.finfo(ct).eps) if np.dtype(ct).itemsize == 2 else 0)
        assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) / bound)
    finally:
        cuda.set_device(before)


# -- the framework on an AMD device (PyTorch on ROCm)
@pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 not installed (make amd)")
def test_framework_cuda_device_runs_on_the_cdna_engine() -> None:
    import strata

    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="h200"))
    assert strata.version.cuda is not None and strata.version.hip is None
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        assert strata.version.hip is not None and strata.version.cuda is None
        from strata.framework import cuda_api

        assert cuda_api.get_device_name() == "AMD Instinct MI300X"
        rng = np.random.default_rng(3)
        a, b = rng.standard_normal((70, 40)).astype(np.float32), rng.standard_normal((40, 30)).astype(np.float32)
        with trace.record() as rec:
            x, y = strata.tensor(a, device="cuda"), strata.tensor(b, device="cuda")
            got = (x @ y).relu().exp().sum(1).cpu().numpy()
        want = np.exp(np.maximum(a.astype(np.float64) @ b, 0)).sum(1)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        l0 = [e for e in rec.events if e.layer == "L0" and e.name == "execute"]
        assert l0 and all(e.args.get("isa") == "gfx9" for e in l0)  # every kernel ran as gfx942 machine code
        call = next(e for e in rec.events if e.layer == "L4" and e.name.startswith("blas."))
        assert call.args["library"] == "rocBLAS"
    finally:
        cuda.set_device(before)


@pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 not installed (make amd)")
def test_sgemm_on_mi300x_runs_on_the_matrix_cores() -> None:
    """rocBLAS's SGEMM on an MI300X: v_mfma_f32_16x16x4_f32, within the f32 dot-product bound; every
    transpose pair, odd sizes and a padded leading dimension."""
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        h = blas.create_handle()
        t = suite("test_blas")
        for ta, tb in (("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")):
            t.test_gemm_each_kernel_and_transpose(h, "gemm_mfma", ta, tb)
        a, b = t.rand(130, 70), t.rand(70, 66)
        dc = t.put(np.zeros((130, 66), np.float32))
        blas.gemm(h, "N", "N", 130, 66, 70, 1.0, t.put(a), 130, t.put(b), 70, 0.0, dc, 130)
        assert h.last_kernel == "gemm_mfma"
        t.check_gemm(t.get(dc, 130, 66), 1.0, a, b, 0.0, np.zeros((130, 66), np.float32), np.dtype(np.float32))
    finally:
        cuda.set_device(before)


@pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 not installed (make amd)")
def test_demo_on_mi300x_walks_down_to_mfma_and_fmac(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from strata import cli

    before = cuda.current_device()
    assert cli.main(["demo", "--gpu", "mi300x", "--size", "64", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert cuda.current_device() is before
    assert "on a virtual AMD Instinct MI300X" in out and "C matches NumPy" in out and "strata.version.hip = " in out
    walk = out.split("The walk:")[1].split("C matches NumPy")[0]
    for step in ("L4 blas.gemm", "library=rocBLAS", "rocblas_sgemm", "L3 hipModuleLaunchKernel", "L2 code_object_load",
                 "L2 hsa_kernel_dispatch", "L0 execute", "isa=gfx9", "wavefront_size=64"):
        assert step in walk, step
    inst = out.split("The GEMM kernel down to the instructions:")[1]
    assert "gfx942 machine code" in inst and "wavefronts of 64 lanes" in inst
    assert "v_mfma_f32_16x16x4_f32" in inst and "v_fmac_f32" in inst
    assert f"are {64 ** 3:,} multiply-adds" in inst  # every multiply-add of the product ran on the matrix cores
