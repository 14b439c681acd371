"""`strata run --as-torch` and `strata.install_torch_alias()`: a PyTorch-written program
(tests/framework/scripts/torch_program.py) prints the same numbers under real PyTorch (CPU) and under
strata (on "cuda"), run in subprocesses; the module mapping, the refusal next to the real torch, and
`torch.cuda`'s face (strata.framework.cuda_api) checked in process."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import strata
from strata.framework import cuda_api
from strata.framework.torch_alias import install_torch_alias, is_installed, resolve

SCRIPTS = Path(__file__).parent / "scripts"
ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _parse(out: str) -> list[tuple[str, list[str]]]:
    return [(line.split()[0], line.split()[1:]) for line in out.splitlines() if line.strip()]


def _assert_same_output(ours: str, ref: str) -> None:
    a, b = _parse(ours), _parse(ref)
    assert [k for k, _ in a] == [k for k, _ in b], (ours, ref)
    for (key, va), (_, vb) in zip(a, b, strict=True):
        assert len(va) == len(vb), key
        for x, y in zip(va, vb, strict=True):
            try:
                fx, fy = float(x), float(y)
            except ValueError:
                assert x == y, key
                continue
            assert fx == pytest.approx(fy, rel=1e-4, abs=1e-5), (key, va, vb)


def test_pytorch_program_runs_unchanged_with_as_torch() -> None:
    script = str(SCRIPTS / "torch_program.py")
    ref = _run([script])  # real PyTorch on CPU
    ours = _run(["-m", "strata.cli", "run", "--as-torch", script])  # strata, on the virtual GPU
    _assert_same_output(ours, ref)
    assert ours.rstrip().endswith("done") and "optim3" in ours


_IMPORTS = r'''
import importlib.util, sys
import strata
strata.install_torch_alias()
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional as F2
import torch.cuda, torch.autograd
import torch.utils.data
from torch.utils.data import DataLoader
import strata.framework.nn, strata.framework.autograd, strata.framework.cuda_api, strata.framework.data
assert torch.nn is strata.framework.nn and nn is strata.framework.nn
assert F is F2 is strata.framework.nn.functional
assert torch.autograd is strata.framework.autograd and torch.autograd.grad is strata.autograd.grad
assert torch.cuda is strata.framework.cuda_api and isinstance(torch.cuda.current_device(), int)
assert torch.utils.data is strata.framework.data and DataLoader is strata.framework.data.DataLoader
assert torch.Tensor is strata.Tensor and torch.float32 is strata.float32 and torch.tensor is strata.tensor
assert "strata" in torch.__version__ and torch.__version__.startswith("2.13.0")
assert torch.compile(len) is len
assert torch.backends.cudnn.enabled
if importlib.util.find_spec("strata.framework.optim") is not None:
    import torch.optim
    assert torch.optim is importlib.import_module("strata.framework.optim")
    from torch.optim.lr_scheduler import StepLR
import torch.distributed
assert torch.distributed is importlib.import_module("strata.framework.distributed")
from torch.nn.parallel import DistributedDataParallel
assert DistributedDataParallel is torch.distributed.DistributedDataParallel
for name in ("torch._dynamo",):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        assert "strata's torch alias" in str(e), e
    else:
        raise AssertionError(name)
strata.install_torch_alias()  # idempotent
print("ok")
'''


def test_alias_imports_resolve_to_strata() -> None:
    assert _run(["-c", _IMPORTS]).strip() == "ok"


def test_refuses_when_real_torch_is_imported() -> None:
    import torch  # the oracle, imported by conftest anyway

    assert not getattr(torch, "__strata__", False)
    with pytest.raises(RuntimeError, match="real PyTorch .* is already imported"):
        install_torch_alias()
    assert not is_installed()


def test_cli_refuses_when_torch_was_imported_first(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("print('ran')\n")
    # a stand-in for an already imported real torch (importing the real one costs seconds)
    code = ("import sys, types\nsys.modules['torch'] = types.ModuleType('torch')\nfrom strata.cli import main\n"
            f"sys.exit(main(['run', '--as-torch', {str(prog)!r}]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 2 and "already imported" in r.stderr and "ran" not in r.stdout


@pytest.mark.parametrize(("name", "target"), [
    ("torch.nn", "strata.framework.nn"),
    ("torch.nn.functional", "strata.framework.nn.functional"),
    ("torch.nn.init", "strata.framework.nn.init"),
    ("torch.optim", "strata.framework.optim"),
    ("torch.optim.lr_scheduler", "strata.framework.optim.lr_scheduler"),
    ("torch.autograd", "strata.framework.autograd"),
    ("torch.cuda", "strata.framework.cuda_api"),
    ("torch.utils.data", "strata.framework.data"),
    ("torch.nnx", None),
    ("torch.utils", None),
    ("torch", None),
])
def test_resolve(name: str, target: str | None) -> None:
    assert resolve(name) == target


def test_cuda_api_matches_torch_conventions() -> None:
    assert cuda_api.is_available() and cuda_api.device_count() >= 1
    idx = cuda_api.current_device()
    assert isinstance(idx, int) and idx == 0
    assert cuda_api.get_device_name() == cuda_api.get_device_name("cuda:0") == cuda_api.get_device_name(0)
    amd = strata.cuda.get_device_properties(0).warpSize == 64  # an MI300X (gfx942) reports 9.4, as on ROCm
    assert cuda_api.get_device_capability(strata.device("cuda", 0)) == ((9, 4) if amd else (9, 0))
    free, total = cuda_api.mem_get_info()
    assert 0 < free <= total
    before = cuda_api.memory_allocated()
    t = strata.zeros(1024, device="cuda")
    assert cuda_api.memory_allocated(0) >= before + 4096
    assert cuda_api.max_memory_allocated() >= cuda_api.memory_allocated()
    assert cuda_api.memory_reserved() >= cuda_api.memory_allocated()
    del t
    cuda_api.synchronize()
    cuda_api.empty_cache()
    with cuda_api.device(0):
        assert cuda_api.current_device() == 0
    cuda_api.set_device("cuda:0")
    cuda_api.manual_seed(1234)
    assert cuda_api.initial_seed() == 1234
    a = strata.rand(4, device="cuda").tolist()
    state = cuda_api.get_rng_state()
    b = strata.rand(4, device="cuda").tolist()
    cuda_api.manual_seed_all(1234)
    assert strata.rand(4, device="cuda").tolist() == a
    cuda_api.set_rng_state(state)
    assert strata.rand(4, device="cuda").tolist() == b
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda_api.memory_allocated("cpu")
    assert importlib.util.find_spec("strata.framework.cuda_api") is not None
