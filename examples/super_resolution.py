"""Sub-pixel convolution super-resolution, in the shape of PyTorch's official `super_resolution` example
(a small convolutional net ending in nn.PixelShuffle, orthogonal init, MSE loss, Adam, PSNR reported):
it learns to upscale scikit-learn's bundled 8x8 digits from 4x4 (2x2 average-pooled) copies.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/super_resolution.py --device cpu
    strata run --as-torch examples/super_resolution.py --device cuda --tiny

Weights come from NumPy (orthogonal matrices from a seeded QR, as nn.init.orthogonal_ makes), so both
frameworks print the same losses.
"""

import argparse
import math
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from sklearn.datasets import load_digits  # ships with scikit-learn: nothing is downloaded


def init_weights(model):
    """Orthogonal conv weights (ReLU gain on all but the last layer) from seeded NumPy, zero biases."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            rows, cols = p.shape[0], int(np.prod(p.shape[1:]))
            q, r = np.linalg.qr(rng.standard_normal((max(rows, cols), min(rows, cols))))
            q = q * np.sign(np.diag(r))
            q = q if rows >= cols else q.T
            gain = 1.0 if name.startswith("conv4") else math.sqrt(2.0)
            value = gain * q[:rows, :cols].reshape(tuple(p.shape))
        else:
            value = np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


class Net(nn.Module):
    def __init__(self, upscale_factor, width):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, width, 5, 1, 2)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1)
        self.conv3 = nn.Conv2d(width, width // 2, 3, 1, 1)
        self.conv4 = nn.Conv2d(width // 2, upscale_factor ** 2, 3, 1, 1)
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))


def main():
    parser = argparse.ArgumentParser(description="PixelShuffle super-resolution on the 8x8 digits")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a few small batches")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    hr = (load_digits().images / 16.0).astype(np.float32)[:, None]          # (n, 1, 8, 8) targets
    width = 32
    if args.tiny:
        hr, args.epochs, args.batch_size, width = hr[:24], 1, 8, 8
    lr_images = hr.reshape(len(hr), 1, 4, 2, 4, 2).mean(axis=(3, 5))          # (n, 1, 4, 4) inputs
    model = init_weights(Net(2, width)).to(device)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        for i in range(0, len(hr) - args.batch_size + 1, args.batch_size):
            inp = torch.from_numpy(lr_images[i:i + args.batch_size]).to(device)
            target = torch.from_numpy(hr[i:i + args.batch_size]).to(device)
            optimizer.zero_grad()
            loss = criterion(model(inp), target)
            loss.backward()
            optimizer.step()
            print(f"loss train {step} {loss.item():.6f}")
            step += 1
        with torch.no_grad():
            mse = criterion(model(torch.from_numpy(lr_images).to(device)), torch.from_numpy(hr).to(device)).item()
        print(f"epoch {epoch}: PSNR {10 * math.log10(1 / mse):.2f} dB")


if __name__ == "__main__":
    main()
