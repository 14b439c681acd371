"""The PyTorch surface programs reach for first (issue 16): torch.accelerator, the module aliases
(torch.utils.data.*, torch.cuda.amp, torch.backends.cudnn, torch.multiprocessing, torch.onnx,
torch.nn.parallel), legacy tensor types, torch.mm / spmm / sparse COO, range indexing, GradScaler and
lazy RandomSampler draws; checked against real PyTorch (CPU) where it has an answer."""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import strata
from strata.framework import accelerator, onnx_stub, sparse, torch_extras
from strata.framework.data import RandomSampler, WeightedRandomSampler
from strata.framework.grad_scaler import GradScaler

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "torch_surface_imports.py"


def _reference(script: Path) -> str:
    """The script's output under the real PyTorch, run in this process (torch is already imported here,
    so this saves a second slow `import torch`)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation notices (torch.cuda.amp) are not under test
        runpy.run_path(str(script), run_name="__main__")
    return out.getvalue()


def _run(args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_alias_modules_and_names_match_real_torch() -> None:
    ours = _run(["-m", "strata.cli", "run", "--as-torch", str(SCRIPT)]).splitlines()
    ref = _reference(SCRIPT).splitlines()  # the real PyTorch (CPU)
    assert ours[-1] == "done" and ref[-1] == "done"
    # the real torch here has no GPU: its accelerator, device and cudnn availability answer differently
    differ = {"device", "accelerator", "cudnn", "pin", "cuda_legacy"}
    mine = {line.split()[0]: line.replace("strata.", "torch.") for line in ours}
    theirs = {line.split()[0]: line for line in ref}
    assert set(theirs) <= set(mine)
    for key in set(theirs) - differ:
        assert mine[key] == theirs[key], (mine[key], theirs[key])
    assert {mine["device"], mine["accelerator"], mine["cudnn"], mine["pin"]} == {
        "device cuda", "accelerator True True 0", "cudnn True True", "pin 3.0 True"}
    assert mine["cuda_legacy"] == "cuda_legacy cuda torch.int64 True torch.cuda.LongTensor"


def test_accelerator_answers_for_the_virtual_gpus() -> None:
    assert accelerator.is_available() and accelerator.device_count() == strata.framework.cuda_api.device_count()
    assert accelerator.current_accelerator() == strata.device("cuda")
    with accelerator.device_index(0):
        assert accelerator.current_device_index() == 0
    accelerator.synchronize()
    x = strata.ones(256, device="cuda")
    assert accelerator.memory_allocated() >= x.numel() * 4
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        accelerator.synchronize("cpu")


def test_onnx_export_raises_typed_error() -> None:
    with pytest.raises(onnx_stub.OnnxExportUnsupported, match="torch.onnx.export"):
        onnx_stub.export(strata.nn.Linear(2, 2), (strata.ones(1, 2),), "x.onnx")
    assert issubclass(onnx_stub.OnnxExportUnsupported, NotImplementedError)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_sparse_mm_matches_torch_with_gradients(device: str) -> None:
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((5, 4)).astype(np.float32) * (rng.random((5, 4)) < 0.4)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    ts = torch.from_numpy(dense).to_sparse().requires_grad_(True)
    tx = torch.from_numpy(x).requires_grad_(True)
    ref = torch.sparse.mm(ts, tx)
    ref.sum().backward()
    sv = strata.tensor(ts._values().detach().numpy(), device=device, requires_grad=True)
    si = strata.tensor(ts._indices().numpy(), device=device)
    sx = strata.tensor(x, device=device, requires_grad=True)
    a = sparse.sparse_coo_tensor(si, sv, (5, 4))
    out = torch_extras.mm(a, sx)
    out.sum().backward()
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sx.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sv.grad.cpu().numpy(), ts.grad.coalesce()._values().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.to_dense().detach().cpu().numpy(), dense)


def test_sparse_coalesce_sums_duplicates_and_rejects_bad_indices() -> None:
    a = sparse.sparse_coo_tensor([[1, 0, 1], [2, 1, 2]], [1.0, 2.0, 3.0], (2, 3)).coalesce()
    t = torch.sparse_coo_tensor([[1, 0, 1], [2, 1, 2]], [1.0, 2.0, 3.0], (2, 3), check_invariants=True).coalesce()
    assert a.indices().tolist() == t.indices().tolist() and a.values().tolist() == t.values().tolist()
    with pytest.raises(ValueError, match="out of bounds"):
        sparse.sparse_coo_tensor([[0, 2], [0, 0]], [1.0, 1.0], (2, 2))
    with pytest.raises(RuntimeError, match="uncoalesced"):
        sparse.sparse_coo_tensor([[0], [0]], [1.0], (1, 1)).values()


def test_mm_mv_dot_errors_and_values_match_torch() -> None:
    a, b = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.arange(3.0, dtype=np.float32)
    assert torch_extras.mm(strata.tensor(a), strata.tensor(a.T.copy())).tolist() == \
        torch.mm(torch.tensor(a), torch.tensor(a.T.copy())).tolist()
    sa, sb, ta, tb = strata.tensor(a), strata.tensor(b), torch.tensor(a), torch.tensor(b)
    assert torch_extras.mv(sa, sb).tolist() == torch.mv(ta, tb).tolist()
    assert torch_extras.dot(sb, sb).item() == torch.dot(tb, tb).item()
    for ours, ref in ((lambda: torch_extras.mm(strata.tensor(b), strata.tensor(a)),
                       lambda: torch.mm(torch.tensor(b), torch.tensor(a))),
                      (lambda: torch_extras.dot(strata.tensor(b), strata.tensor(b[:2])),
                       lambda: torch.dot(torch.tensor(b), torch.tensor(b[:2])))):
        with pytest.raises(RuntimeError) as theirs:
            ref()
        with pytest.raises(RuntimeError, match=str(theirs.value).split(",")[0]):
            ours()


def test_legacy_constructors_and_size_keyword() -> None:
    ft, lt = torch_extras.lookup("FloatTensor"), torch_extras.lookup("LongTensor")
    assert ft([1, 2]).dtype == strata.float32 and lt(2, 3).shape == (2, 3) and lt(2, 3).dtype == strata.int64
    assert isinstance(strata.ones(2), ft) and not isinstance(strata.ones(2).long(), ft)
    assert torch_extras.OVERRIDES["empty"](size=(2, 5), pin_memory=False).shape == (2, 5)
    assert torch_extras.OVERRIDES["zeros"](size=[3]).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="multiple values"):
        torch_extras.OVERRIDES["ones"](2, size=(2,))
    assert torch_extras.lookup("flatten")(strata.ones(2, 3, 4), 1).shape == torch.flatten(torch.ones(2, 3, 4), 1).shape
    assert torch_extras.lookup("no_such_function_xyz") is None


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_indexing_with_a_range_matches_torch(device: str) -> None:
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    s, t = strata.tensor(x, device=device), torch.tensor(x)
    assert s[range(1, 4, 2)].tolist() == t[range(1, 4, 2)].tolist()
    assert s[range(2), 1:3].tolist() == t[range(2), 1:3].tolist()
    s[range(3)] = 0.0
    t[range(3)] = 0.0
    assert s.tolist() == t.tolist()


def test_random_sampler_with_replacement_draws_lazily() -> None:
    ds = list(range(7))
    sampler = RandomSampler(ds, replacement=True, num_samples=10 ** 10)
    it = iter(sampler)
    draws = [next(it) for _ in range(100)]
    assert len(sampler) == 10 ** 10 and all(0 <= d < 7 for d in draws) and len(set(draws)) > 1
    strata.manual_seed(3)
    first = list(RandomSampler(ds, replacement=True, num_samples=50))
    strata.manual_seed(3)
    assert list(RandomSampler(ds, replacement=True, num_samples=50)) == first and len(first) == 50


def test_weighted_sampler_follows_weights() -> None:
    strata.manual_seed(0)
    draws = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400))
    assert set(draws) <= {1, 3} and 0.6 < draws.count(3) / 400 < 0.9
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler([1.0], 0)


def _scaler_run(make_scaler, lib, grads: list[float]) -> tuple[list[float], list[float]]:
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = make_scaler()
    scales = []
    for g in grads:
        opt.zero_grad()
        loss = (w * lib.tensor([g, 1.0])).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return w.detach().tolist(), scales


def test_grad_scaler_matches_torch_including_skipped_steps() -> None:
    grads = [1.0, float("inf"), 0.5, 2.0, float("nan"), 1.0, 1.0]
    kw = {"init_scale": 256.0, "growth_interval": 2}
    ours = _scaler_run(lambda: GradScaler("cpu", **kw), strata, grads)
    ref = _scaler_run(lambda: torch.amp.GradScaler("cpu", **kw), torch, grads)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6)
    assert ours[1] == ref[1]
    s = GradScaler("cpu", **kw)
    s._scale = 8.0
    t = torch.amp.GradScaler("cpu", **kw)
    t.load_state_dict({**t.state_dict(), "scale": 8.0})
    assert s.state_dict() == {k: (v.item() if hasattr(v, "item") else v) for k, v in t.state_dict().items()}


def test_grad_scaler_stage_errors() -> None:
    w = strata.tensor([1.0], requires_grad=True)
    opt = strata.optim.SGD([w], lr=0.1)
    s = GradScaler("cpu")
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        s.step(opt)


MODELS = Path(__file__).parent / "scripts" / "torch_surface_models.py"


def test_example_programs_match_real_torch_losses() -> None:
    """Small versions of the public example programs (CNN + Adadelta + StepLR, LSTM and Transformer LMs,
    DCGAN, VAE, GCN with spmm, GRU + RMSprop + checkpoint) print the same losses under real PyTorch and
    under `strata run --as-torch` (on "cpu" here, to stay fast; the layers' "cuda" paths have their own tests)."""
    ref = _reference(MODELS)
    env_cpu = dict(os.environ, SURFACE_DEVICE="cpu")
    r = subprocess.run([sys.executable, "-m", "strata.cli", "run", "--as-torch", str(MODELS)], capture_output=True,
                       text=True, timeout=300, cwd=ROOT, env=dict(env_cpu, PYTHONPATH=str(ROOT / "src")))
    assert r.returncode == 0, r.stderr[-3000:]
    ours = r.stdout
    a = [line.split() for line in ours.splitlines() if line.strip()]
    b = [line.split() for line in ref.splitlines() if line.strip()]
    assert [x[:2] for x in a] == [x[:2] for x in b] and a[-1] == ["done"]
    for x, y in zip(a, b, strict=True):
        if x[0] in ("checkpoint", "done"):
            assert x == y
            continue
        assert float(x[2]) == pytest.approx(float(y[2]), rel=1e-4), (x, y)


def test_tensor_type_strings_and_casts() -> None:
    torch_extras.attach_tensor_methods()
    x = strata.ones(2)
    assert x.type() == torch.ones(2).type() == "torch.FloatTensor"  # type: ignore[attr-defined]
    assert x.long().type() == "torch.LongTensor" and x.cuda().type() == "torch.cuda.FloatTensor"  # type: ignore[attr-defined]
    assert x.type("torch.DoubleTensor").dtype == strata.float64  # type: ignore[attr-defined]
    assert x.type(torch_extras.lookup("ByteTensor")).dtype == strata.uint8  # type: ignore[attr-defined]
    assert x.type(strata.int32).dtype == strata.int32  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoSuchTensor")  # type: ignore[attr-defined]
    for missing in (lambda: strata.nn.LazyLinear, lambda: strata.optim.SparseAdam):
        with pytest.raises(AttributeError, match="strata does not provide torch"):
            missing()


@pytest.mark.parametrize(("n", "replicas", "drop_last"), [(10, 3, False), (10, 3, True), (2, 4, False)])
def test_distributed_sampler_splits_like_torch(n: int, replicas: int, drop_last: bool) -> None:
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from strata.framework.data import DistributedSampler

    ds = list(range(n))
    for rank in range(replicas):
        ours = DistributedSampler(ds, replicas, rank, shuffle=False, drop_last=drop_last)
        ref = TorchSampler(ds, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(ref) and len(ours) == len(ref)
    # shuffled: every rank agrees on one permutation per epoch, and together they cover the dataset
    shards = [DistributedSampler(ds, replicas, r, seed=5) for r in range(replicas)]
    for s in shards:
        s.set_epoch(2)
    seen = sorted(i for s in shards for i in s)
    assert set(seen) == set(ds) and len(seen) == shards[0].total_size
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(ds, 2, 2)
