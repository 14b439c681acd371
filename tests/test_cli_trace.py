"""`strata trace program.py`: the program runs with recording on; its walk goes down every layer with
CUDA and ROCm names, and trace.json (the Chrome trace-event format) and a self-contained report.html are
written, also when the program fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from strata import cli

NATIVE = '''
import strata
strata.manual_seed(0)
model = strata.nn.Linear(16, 4).cuda()
opt = strata.optim.SGD(model.parameters(), lr=0.1)
x, y = strata.randn(8, 16, device="cuda"), strata.randint(0, 4, (8,), device="cuda")
for _ in range(3):
    loss = strata.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 4))
'''

TORCH = '''
import torch
import torch.nn as nn
a = torch.ones(4, 4, device="cuda")
print("sum", (a @ a).sum().item(), torch.cuda.is_available())
'''


def _trace_events(path: Path) -> list[dict]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    assert isinstance(events, list) and events
    return events


def _check_trace_format(events: list[dict]) -> None:
    """The trace-event format: every event has a phase and a pid, a tid (but process metadata) and a
    timestamp (but metadata); complete events a duration; begin/end pairs balance per thread."""
    open_: dict[tuple, int] = {}
    for e in events:
        assert {"ph", "pid"} <= e.keys() and ("tid" in e or e.get("name", "").startswith("process_")), e
        if e["ph"] != "M":
            assert isinstance(e["ts"], int | float) and "name" in e, e
        if e["ph"] == "X":
            assert e["dur"] >= 0
        if e["ph"] in "BE":
            k = (e["pid"], e["tid"])
            open_[k] = open_.get(k, 0) + (1 if e["ph"] == "B" else -1)
            assert open_[k] >= 0
    assert all(v == 0 for v in open_.values())


def test_trace_of_a_training_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "train.py"
    script.write_text(NATIVE, encoding="utf-8")
    out = tmp_path / "out"
    assert cli.main(["trace", "--out", str(out), str(script)]) == 0
    text = capsys.readouterr().out
    assert "loss" in text
    for step in ("L5 aten::linear", "L5 aten::cross_entropy_loss", "autograd::engine::evaluate_function",
                 "Optimizer.step#SGD.step", "L4 blas.gemm", "L3 cudaLaunchKernel", "L2 aql_kernel_dispatch",
                 "L1 doorbell", "L0 kernel", "cublasSgemm", "hipLaunchKernel"):
        assert step in text, step
    assert "same path as call #" in text or "repeat" in text  # the loop's later steps collapse
    events = _trace_events(out / "trace.json")
    _check_trace_format(events)
    assert any(e.get("name") == "aten::linear" for e in events)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<html" in html.lower() and "http://" not in html and "https://" not in html


def test_a_failing_program_still_gets_its_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import strata\nx = strata.ones(3, device='cuda') * 2\nraise ValueError('boom')\n",
                      encoding="utf-8")
    out = tmp_path / "out"
    assert cli.main(["trace", "--out", str(out), str(script)]) == 1
    captured = capsys.readouterr()
    assert "ValueError: boom" in captured.err and "L5 aten::mul" in captured.out
    assert (out / "trace.json").is_file() and (out / "report.html").is_file()


def test_pytorch_program_as_torch_on_another_gpu(tmp_path: Path) -> None:
    """The real command, in its own process (--gpu sets the process's device model)."""
    script = tmp_path / "torch_prog.py"
    script.write_text(TORCH, encoding="utf-8")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "strata.cli", "trace", "--as-torch", "--gpu", "a100", "--out", str(out),
                        str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    assert "sum 64.0 True" in r.stdout and "L5 aten::matmul" in r.stdout and "device=a100" in r.stdout
    _check_trace_format(_trace_events(out / "trace.json"))
    assert "A100" in (out / "report.html").read_text(encoding="utf-8")
