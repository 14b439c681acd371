"""End to end: the examples train on strata as they do on PyTorch.

The MLP example's `train` takes the framework module, so the same code runs on real PyTorch (CPU, the
oracle) and on strata ("cpu" and the virtual GPU) from the same initial weights; the losses of every
step must agree. The char transformer runs a few steps on "cuda" and samples.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

import strata

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def mlp() -> ModuleType:
    return _example("mlp_digits")


@pytest.fixture(scope="module")
def reference(mlp: ModuleType) -> tuple[dict[str, np.ndarray], list[float]]:
    """PyTorch's losses for two epochs from seeded initial weights."""
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in mlp.make_model(torch).state_dict().items()}
    _, losses = mlp.train(torch, "cpu", epochs=1, init=init)
    return init, losses


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_mlp_losses_match_pytorch(mlp: ModuleType, reference: tuple[dict[str, np.ndarray], list[float]],
                                  device: str) -> None:
    init, ref = reference
    model, losses = mlp.train(strata, device, epochs=1, init=init)
    assert len(losses) == len(ref)
    np.testing.assert_allclose(losses, ref, rtol=2e-3, atol=2e-4)
    assert losses[-1] < 0.95 * losses[0]  # it learned (one epoch: about 2.30 -> 2.14)
    assert next(model.parameters()).device.type == device


def test_mlp_accuracy_on_held_out_digits(mlp: ModuleType) -> None:
    strata.manual_seed(0)
    model, _ = mlp.train(strata, "cpu", epochs=3)
    assert mlp.accuracy(strata, model, "cpu") > 0.85


def test_char_transformer_trains_and_samples_on_cuda() -> None:
    ex = _example("char_transformer")
    strata.manual_seed(0)
    corpus = ex.Corpus()
    cfg = ex.Config(vocab_size=len(corpus.chars), block_size=16, n_embd=32, n_head=2, n_layer=1)
    model = ex.build(strata, cfg).to("cuda")
    opt = strata.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    xb, yb = corpus.batch(rng, 4, cfg.block_size)
    x, y = strata.tensor(xb, device="cuda"), strata.tensor(yb, device="cuda")
    losses = [ex.train_step(strata, model, opt, x, y).item() for _ in range(4)]
    assert losses[-1] < losses[0]  # the same batch four times: the loss must fall
    assert abs(losses[0] - np.log(cfg.vocab_size)) < 0.5  # small init: close to a uniform guess
    model.eval()
    out = model.generate(strata.tensor([corpus.encode("Shall")], device="cuda"), 5)
    text = corpus.decode(out[0].tolist())
    assert text.startswith("Shall") and len(text) == 10
