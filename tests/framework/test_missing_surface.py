"""What a PyTorch program meets where strata lacks something: PyTorch's name and that strata does not provide it
(a module attribute, a torch.linalg function, a Tensor method), under `strata run --as-torch`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import strata


def _run(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    prog = tmp_path / "prog.py"
    prog.write_text(code)
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", "--as-torch", str(prog)], capture_output=True,
                          text=True, timeout=120)


def test_a_missing_tensor_method_is_named_with_a_note(tmp_path: Path) -> None:
    out = _run(tmp_path, "import torch\ntorch.ones(3).stft(4)\n")
    assert out.returncode != 0
    assert "AttributeError: 'Tensor' object has no attribute 'stft'" in out.stderr
    assert "strata does not provide Tensor.stft" in out.stderr


def test_a_program_bug_gets_no_such_note(tmp_path: Path) -> None:
    out = _run(tmp_path, "import torch\nclass A: pass\nA().stft\n")
    assert "'A' object has no attribute 'stft'" in out.stderr and "strata does not provide" not in out.stderr


def test_missing_module_functions_say_strata_lacks_them() -> None:
    with pytest.raises(AttributeError, match="strata does not provide torch.linalg.lstsq"):
        strata.linalg.lstsq  # noqa: B018
    with pytest.raises(AttributeError, match="strata does not provide torch.nn.Fold"):
        strata.nn.Fold  # noqa: B018
