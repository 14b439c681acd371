"""Deep convolutional GAN, in the shape of PyTorch's official `dcgan` example (a ConvTranspose2d +
BatchNorm2d + ReLU generator ending in Tanh, a Conv2d + LeakyReLU discriminator ending in Sigmoid, BCELoss,
Adam with betas (0.5, 0.999), the D step on real then fake, the G step with real labels), trained on
scikit-learn's bundled 8x8 digits scaled to [-1, 1].

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/dcgan.py --device cpu
    strata run --as-torch examples/dcgan.py --device cuda --tiny

Weights (DCGAN's N(0, 0.02) init) and the noise come from NumPy, so both frameworks print the same losses.
"""

import argparse
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from sklearn.datasets import load_digits  # ships with scikit-learn: nothing is downloaded


def weights_init(model):
    """DCGAN's init from seeded NumPy draws: conv weights N(0, 0.02), batch-norm scales N(1, 0.02), zero biases."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            value = rng.normal(0.0, 0.02, tuple(p.shape))
        else:
            value = rng.normal(1.0, 0.02, tuple(p.shape)) if name.endswith("weight") else np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


class Generator(nn.Module):
    def __init__(self, nz, ngf):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),   # 1x1 -> 4x4
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False),    # -> 8x8
            nn.Tanh(),
        )

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self, ndf):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False),                 # 8x8 -> 4x4
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 3, 1, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),             # -> 1x1
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def main():
    parser = argparse.ArgumentParser(description="DCGAN on the 8x8 digits")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a few small batches")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--nz", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    images = (load_digits().images / 8.0 - 1.0).astype(np.float32)[:, None]
    ngf = ndf = 16
    if args.tiny:
        images, args.epochs, args.batch_size, ngf, ndf, args.nz = images[:16], 1, 8, 4, 4, 4
    netG = weights_init(Generator(args.nz, ngf)).to(device)
    netD = weights_init(Discriminator(ndf)).to(device)
    criterion = nn.BCELoss()
    optimizerD = optim.Adam(netD.parameters(), lr=args.lr, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=args.lr, betas=(0.5, 0.999))
    rng = np.random.default_rng(1)
    step = 0
    for _epoch in range(args.epochs):
        for i in range(0, len(images) - args.batch_size + 1, args.batch_size):
            # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            real = torch.from_numpy(images[i:i + args.batch_size]).to(device)
            label = torch.full((args.batch_size,), 1.0, dtype=torch.float, device=device)
            errD_real = criterion(netD(real), label)
            errD_real.backward()
            noise = torch.from_numpy(rng.standard_normal((args.batch_size, args.nz, 1, 1)).astype(np.float32))
            fake = netG(noise.to(device))
            label.fill_(0.0)
            errD_fake = criterion(netD(fake.detach()), label)
            errD_fake.backward()
            optimizerD.step()
            # (2) update G: maximize log(D(G(z)))
            netG.zero_grad()
            label.fill_(1.0)
            errG = criterion(netD(fake), label)
            errG.backward()
            optimizerG.step()
            print(f"loss D {step} {(errD_real + errD_fake).item():.6f}")
            print(f"loss G {step} {errG.item():.6f}")
            step += 1


if __name__ == "__main__":
    main()
