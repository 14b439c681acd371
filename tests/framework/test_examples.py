"""End to end: the examples train on strata as they do on PyTorch.

The plain-PyTorch example programs (PROGRAMS: MNIST-style CNN, word-level RNN and Transformer LMs, VAE, DCGAN,
super-resolution, GCN with sparse matmul, char-level GPT, time-sequence LSTM, siamese network, REINFORCE,
regression) run in their `--tiny` configuration under the real PyTorch (CPU, in this process: the oracle) and
under `strata run --as-torch` on "cpu" and on "cuda" (the virtual GPU); every `loss <tag> <step> <value>`
line they print must agree. One strata process runs all programs of a device (see DRIVER), to pay the
interpreter start-up once.

The MLP example's `train` takes the framework module, so the same code runs on real PyTorch (CPU, the
oracle) and on strata ("cpu" and the virtual GPU) from the same initial weights; the losses of every
step must agree. The char transformer runs a few steps on "cuda" and samples.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

import strata

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PROGRAMS = ["mnist_cnn", "word_language_model", "transformer_lm", "vae", "dcgan", "super_resolution", "gcn",
            "char_gpt", "time_sequence_prediction", "siamese_network", "reinforce", "regression"]
SLOW_ON_CUDA = {"mnist_cnn", "word_language_model"}  # the two slowest on the emulated GPU (~5-8 s each)
# runs each program named in argv[1] (comma-separated) as __main__ with the rest of argv, between markers
DRIVER = """
import runpy, sys, traceback
names, extra = sys.argv[1].split(","), sys.argv[2:]
for name in names:
    print("=== " + name, flush=True)
    path = EXAMPLES + "/" + name + ".py"
    sys.argv = [path, *extra]
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException:
        traceback.print_exc(file=sys.stdout)
"""


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


def _under_strata(names: list[str], device: str, tmp: Path) -> dict[str, str]:
    """Each program's output under `strata run --as-torch ... --device <device> --tiny`, by name."""
    driver = tmp / "run_examples.py"
    driver.write_text(f"EXAMPLES = {str(EXAMPLES)!r}\n" + DRIVER)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), STRATA_KERNEL_TIMEOUT="300")
    r = subprocess.run([sys.executable, "-m", "strata.cli", "run", "--as-torch", str(driver), ",".join(names),
                        "--device", device, "--tiny"], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    sections = r.stdout.split("=== ")[1:]
    return {sec.split("\n", 1)[0]: sec.split("\n", 1)[1] for sec in sections}


def _under_torch(name: str) -> str:
    """The program's output under the real PyTorch on "cpu" (in this process: torch is imported already)."""
    path = str(EXAMPLES / f"{name}.py")
    out, argv = io.StringIO(), sys.argv
    sys.argv = [path, "--device", "cpu", "--tiny"]
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = argv
    return out.getvalue()


def _assert_same_losses(ours: str, ref: str) -> None:
    a = [line.split() for line in ours.splitlines() if line.startswith("loss ")]
    b = [line.split() for line in ref.splitlines() if line.startswith("loss ")]
    assert len(b) >= 2 and [x[:3] for x in a] == [x[:3] for x in b], ours[-3000:]
    for x, y in zip(a, b, strict=True):
        assert float(x[3]) == pytest.approx(float(y[3]), rel=1e-4, abs=1e-6), (x, y)


@pytest.fixture(scope="module")
def torch_outputs() -> dict[str, str]:
    return {name: _under_torch(name) for name in PROGRAMS}


@pytest.fixture(scope="module")
def strata_cpu(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _under_strata(PROGRAMS, "cpu", tmp_path_factory.mktemp("cpu"))


@pytest.fixture(scope="module")
def strata_cuda(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _under_strata([n for n in PROGRAMS if n not in SLOW_ON_CUDA], "cuda", tmp_path_factory.mktemp("cuda"))


@pytest.mark.parametrize("name", PROGRAMS)
def test_example_program_matches_real_torch_on_cpu(name: str, torch_outputs: dict[str, str],
                                                   strata_cpu: dict[str, str]) -> None:
    _assert_same_losses(strata_cpu[name], torch_outputs[name])


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in SLOW_ON_CUDA])
def test_example_program_tiny_on_cuda_matches_real_torch(name: str, torch_outputs: dict[str, str],
                                                         strata_cuda: dict[str, str]) -> None:
    _assert_same_losses(strata_cuda[name], torch_outputs[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_ON_CUDA))
def test_slow_example_program_tiny_on_cuda_matches_real_torch(name: str, torch_outputs: dict[str, str],
                                                              tmp_path: Path) -> None:
    _assert_same_losses(_under_strata([name], "cuda", tmp_path)[name], torch_outputs[name])


def test_every_example_program_is_tested() -> None:
    programs = {p.stem for p in EXAMPLES.glob("*.py")} - {"mlp_digits", "char_transformer"}
    assert programs == set(PROGRAMS)
