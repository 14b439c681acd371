"""Siamese network, in the shape of PyTorch's official `siamese_network` example: one shared feature
extractor applied to both images of a pair, the two embeddings concatenated and classified by a small head
ending in a sigmoid ("same class or not"), nn.BCELoss, Adadelta with StepLR. The official example uses a
ResNet-18 on MNIST and concatenates the two embeddings; here a small CNN on scikit-learn's bundled 8x8
digits, the pairs drawn in the program (half same-class, half different), and the head sees the embeddings'
product and absolute difference (symmetric in the pair, which this small tower needs to learn at all).

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/siamese_network.py --device cpu
    strata run --as-torch examples/siamese_network.py --device cuda --tiny

Weights and pairs come from NumPy, so both frameworks print the same losses.
"""

import argparse
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits  # ships with scikit-learn: nothing is downloaded
from torch.optim.lr_scheduler import StepLR


def init_weights(model):
    """Seeded NumPy weights (std 1/sqrt(fan-in)), zero biases, unit norm scales."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            value = rng.standard_normal(tuple(p.shape)) / np.sqrt(np.prod(p.shape[1:]))
        else:
            value = np.ones(p.shape) if name.endswith("weight") else np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


class SiameseNetwork(nn.Module):
    def __init__(self, width, embed):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),                                          # 8x8 -> 4x4
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), nn.Linear(8 * width, embed),
        )
        self.fc = nn.Sequential(nn.Linear(2 * embed, embed), nn.ReLU(inplace=True), nn.Linear(embed, 1))
        self.sigmoid = nn.Sigmoid()

    def forward_once(self, x):
        return self.features(x)

    def forward(self, input1, input2):
        e1, e2 = self.forward_once(input1), self.forward_once(input2)
        output = torch.cat((e1 * e2, (e1 - e2).abs()), 1)
        return self.sigmoid(self.fc(output))


def make_pairs(labels, count, rng):
    """`count` index pairs, alternating same-class and different-class, and their targets (1: same)."""
    by_class = [np.flatnonzero(labels == c) for c in range(10)]
    first, second, target = [], [], []
    for k in range(count):
        i = int(rng.integers(len(labels)))
        same = k % 2 == 0
        pool = by_class[labels[i]] if same else np.flatnonzero(labels != labels[i])
        first.append(i)
        second.append(int(rng.choice(pool)))
        target.append(1.0 if same else 0.0)
    return np.array(first), np.array(second), np.array(target, dtype=np.float32)


def main():
    parser = argparse.ArgumentParser(description="siamese network on pairs of 8x8 digits")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a few small batches")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    width, embed = 8, 16
    if args.tiny:
        args.epochs, args.pairs, args.batch_size, width, embed = 1, 24, 8, 4, 8
    model = init_weights(SiameseNetwork(width, embed)).to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    criterion = nn.BCELoss()
    rng = np.random.default_rng(1)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        a, b, t = make_pairs(digits.target, args.pairs, rng)
        for i in range(0, args.pairs - args.batch_size + 1, args.batch_size):
            s = slice(i, i + args.batch_size)
            x1, x2 = torch.from_numpy(images[a[s]]).to(device), torch.from_numpy(images[b[s]]).to(device)
            target = torch.from_numpy(t[s]).to(device)
            optimizer.zero_grad()
            loss = criterion(model(x1, x2).squeeze(1), target)
            loss.backward()
            optimizer.step()
            print(f"loss train {step} {loss.item():.6f}")
            step += 1
        scheduler.step()
        model.eval()
        a, b, t = make_pairs(digits.target, 200, np.random.default_rng(99))
        with torch.no_grad():
            out = model(torch.from_numpy(images[a]).to(device), torch.from_numpy(images[b]).to(device)).squeeze(1)
            test_loss = F.binary_cross_entropy(out, torch.from_numpy(t).to(device))
            correct = ((out > 0.5).float() == torch.from_numpy(t).to(device)).sum().item()
        print(f"loss test {epoch} {test_loss.item():.6f}")
        print(f"epoch {epoch}: test pairs right {int(correct)}/{len(t)}")


if __name__ == "__main__":
    main()
