"""MNIST-style convolutional classifier, in the shape of PyTorch's official `mnist` example (two convolutions,
max pooling, dropout, two linear layers, log-softmax + NLL, Adadelta with a StepLR schedule), trained on
scikit-learn's bundled 8x8 handwritten digits instead of the MNIST download.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/mnist_cnn.py --device cpu
    strata run --as-torch examples/mnist_cnn.py --device cuda --tiny

Initial weights come from NumPy, seeded by parameter name, so both frameworks start from the same numbers and
print the same losses (lines `loss <tag> <step> <value>`). Dropout defaults to 0 for the same reason.
"""

import argparse
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from sklearn.datasets import load_digits  # ships with scikit-learn: nothing is downloaded
from torch.optim.lr_scheduler import StepLR


def init_weights(model):
    """Seeded NumPy weights (std 1/sqrt(fan-in)), zero biases, unit norm scales."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            value = rng.standard_normal(tuple(p.shape)) / np.sqrt(np.prod(p.shape[1:]))
        else:
            value = np.ones(tuple(p.shape)) if name.endswith("weight") else np.zeros(tuple(p.shape))
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


class Net(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, 1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, 1)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.fc1 = nn.Linear(2 * width * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))      # 8x8 -> 6x6
        x = F.relu(self.conv2(x))      # -> 4x4
        x = F.max_pool2d(x, 2)         # -> 2x2
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    parser = argparse.ArgumentParser(description="MNIST-style CNN on the 8x8 digits")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a few small batches")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--dropout", type=float, default=0.0, help="0 keeps runs reproducible across frameworks")
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    digits = load_digits()
    x = torch.from_numpy((digits.images / 16.0).astype(np.float32)).unsqueeze(1)
    y = torch.from_numpy(digits.target.astype(np.int64))
    order = np.random.default_rng(0).permutation(len(x))
    n_test = len(x) // 5
    if args.tiny:
        n_test, args.epochs, args.batch_size = 64, 2, 32
        order = order[:n_test + 64]
    test_idx, train_idx = order[:n_test], order[n_test:]
    x_test, y_test = x[test_idx].to(device), y[test_idx].to(device)

    model = init_weights(Net(4 if args.tiny else 8, args.dropout)).to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    rng = np.random.default_rng(1)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        perm = train_idx[rng.permutation(len(train_idx))]
        for i in range(0, len(perm) - args.batch_size + 1, args.batch_size):
            data, target = x[perm[i:i + args.batch_size]].to(device), y[perm[i:i + args.batch_size]].to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            print(f"loss train {step} {loss.item():.6f}")
            step += 1
        scheduler.step()
        model.eval()
        with torch.no_grad():
            out = model(x_test)
            test_loss = F.nll_loss(out, y_test)
            correct = (out.argmax(dim=1) == y_test).sum().item()
        print(f"loss test {epoch} {test_loss.item():.6f}")
        print(f"epoch {epoch}: test accuracy {correct}/{len(y_test)}")


if __name__ == "__main__":
    main()
