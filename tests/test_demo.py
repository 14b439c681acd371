"""`strata demo`: matmul of two random matrices on the virtual GPU, its walk down every layer, the NumPy
check, where the time went per layer, and the report files; on another GPU model with --gpu."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import strata.cuda as cuda
from strata import cli


def _sections(out: str) -> tuple[str, str]:
    walk = out.split("The walk:")[1].split("C matches NumPy")[0]
    table = out.split("Where the time went")[1]
    return walk, table


def test_demo_walks_every_layer_checks_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--size", "96", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "on a virtual NVIDIA H200" in out and "C matches NumPy" in out
    walk, table = _sections(out)
    for step in ("L5 aten::randn", "L5 aten::matmul", "L4 blas.gemm", "L3 cudaLaunchKernel", "L2 cuLaunchKernel",
                 "L2 aql_kernel_dispatch", "L1 doorbell", "L0 execute", "L0 kernel", "L1 interrupt",
                 "L3 cudaMemcpy", "L1 dma_DtoH"):
        assert step in walk, step
    assert "cublasSgemm" in walk and "rocblas_sgemm" in walk  # the L4 step's counterparts
    # the GEMM's launch sits under aten::matmul: deeper indentation, same call
    matmul_call = walk.split("L5 aten::matmul")[1].split("call #")[0]
    assert "L4 blas.gemm" in matmul_call and "L0 kernel(kernel=_Z10gemm" in matmul_call
    for layer in ("L5 framework", "L4 math libraries", "L3 programming interface", "L2 system runtime",
                  "L1 kernel driver", "L0 hardware", "total"):
        assert layer in table
    assert "[modeled]" in table
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "gemm" in report and "http://" not in report and "https://" not in report
    events = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any(e.get("name") == "aten::matmul" for e in events)


def test_demo_on_another_model_restores_the_current_device(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    before = cuda.current_device()
    assert cli.main(["demo", "--gpu", "a100", "--size", "64", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "on a virtual NVIDIA A100" in out and "device=a100" in out and "C matches NumPy" in out
    assert cuda.current_device() is before
