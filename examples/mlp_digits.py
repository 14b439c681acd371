"""Train a small MLP on scikit-learn's handwritten digits (8x8 images, 10 classes) with strata's PyTorch
API, on "cpu" or on the virtual GPU ("cuda").

    python examples/mlp_digits.py                   # strata on the virtual H200
    python examples/mlp_digits.py --device cpu
    python examples/mlp_digits.py --torch           # the same code on real PyTorch, for comparison

The training code takes the framework module as an argument (`torch` or `strata`): strata's API is
PyTorch's, so one function trains with either, and tests/framework/test_examples.py checks that both
give the same losses from the same initial weights.
"""

from __future__ import annotations

import argparse
import time
from types import ModuleType
from typing import Any

import numpy as np

HIDDEN = 128
CLASSES = 10


def load_digits(test_fraction: float = 0.2, seed: int = 0) -> tuple[np.ndarray, ...]:
    """The digits as float32 features scaled to [0, 1] and int64 labels, split into train and test
    with a fixed shuffle (the same split for every framework)."""
    from sklearn.datasets import load_digits as sk_digits  # bundled with scikit-learn: no download
    data = sk_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def make_model(torch: ModuleType) -> Any:
    """64 -> 128 -> 128 -> 10 with ReLU, built with `torch.nn` (strata.nn when `torch` is strata)."""
    nn = torch.nn
    return nn.Sequential(
        nn.Linear(64, HIDDEN), nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
        nn.Linear(HIDDEN, CLASSES),
    )


def train(torch: ModuleType, device: str = "cuda", *, epochs: int = 5, batch_size: int = 64, lr: float = 0.05,
          init: dict[str, np.ndarray] | None = None, log: bool = False) -> tuple[Any, list[float]]:
    """Train with SGD (momentum 0.9) and cross-entropy; batches in a fixed order. `init` gives the initial
    weights as NumPy arrays by state-dict name. Returns the model and the loss of every step."""
    x_train, y_train, _, _ = load_digits()
    model = make_model(torch).to(device)
    if init is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x_all = torch.tensor(x_train, device=device)
    y_all = torch.tensor(y_train, device=device)
    order = np.random.default_rng(1)
    losses: list[float] = []
    for epoch in range(epochs):
        perm = order.permutation(len(x_train))
        model.train()
        for i in range(0, len(perm) - batch_size + 1, batch_size):
            idx = torch.tensor(perm[i:i + batch_size], device=device)
            loss = loss_fn(model(x_all[idx]), y_all[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        if log:
            print(f"epoch {epoch + 1}: loss {np.mean(losses[-(len(perm) // batch_size):]):.4f}")
    return model, losses


def accuracy(torch: ModuleType, model: Any, device: str) -> float:
    """Fraction of the held-out digits the model classifies correctly."""
    _, _, x_test, y_test = load_digits()
    model.eval()
    with torch.no_grad():
        pred = model(torch.tensor(x_test, device=device)).argmax(dim=1)
    return float((pred.cpu().numpy() == y_test).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda", help='"cuda" (the virtual GPU, default) or "cpu"')
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--torch", action="store_true", help="run on real PyTorch instead of strata")
    args = parser.parse_args()
    if args.torch:
        import torch as framework
        device = args.device if framework.cuda.is_available() else "cpu"
    else:
        import strata as framework
        device = args.device
    framework.manual_seed(0)
    start = time.perf_counter()
    model, losses = train(framework, device, epochs=args.epochs, log=True)
    wall = time.perf_counter() - start
    print(f"{framework.__name__} on {device}: {len(losses)} steps in {wall:.1f} s, final loss {losses[-1]:.4f}, "
          f"test accuracy {accuracy(framework, model, device):.3f}")


if __name__ == "__main__":
    main()
