"""Variational autoencoder, in the shape of PyTorch's official `vae` example (fc encoder to mean and
log-variance, the reparameterisation trick, fc decoder with a sigmoid, binary cross-entropy + KL divergence,
Adam), trained on scikit-learn's bundled 8x8 digits instead of the MNIST download.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/vae.py --device cpu
    strata run --as-torch examples/vae.py --device cuda --tiny

Weights and the reparameterisation noise come from NumPy (the official example draws the noise with
`torch.randn_like`), so both frameworks print the same losses.
"""

import argparse
import os
import zlib

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits  # ships with scikit-learn: nothing is downloaded
from torch import nn, optim


def init_weights(model):
    """Seeded NumPy weights (std 1/sqrt(fan-in)), zero biases."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        value = rng.standard_normal(tuple(p.shape)) / np.sqrt(p.shape[-1]) if p.dim() > 1 else np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


class VAE(nn.Module):
    def __init__(self, hidden, latent):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 64))
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction + KL divergence, summed over the batch (as in the official example)."""
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def main():
    parser = argparse.ArgumentParser(description="VAE on the 8x8 digits")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a few small batches")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--latent", type=int, default=4)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    x_all = (load_digits().data / 16.0).astype(np.float32)
    hidden = 64
    if args.tiny:
        x_all, args.epochs, args.batch_size, hidden = x_all[:64], 1, 16, 16
    model = init_weights(VAE(hidden, args.latent)).to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(1)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for i in range(0, len(x_all) - args.batch_size + 1, args.batch_size):
            data = torch.from_numpy(x_all[i:i + args.batch_size]).to(device)
            eps = torch.from_numpy(rng.standard_normal((args.batch_size, args.latent)).astype(np.float32)).to(device)
            optimizer.zero_grad()
            recon, mu, logvar = model(data, eps)
            loss = loss_function(recon, data, mu, logvar)
            loss.backward()
            optimizer.step()
            total += loss.item()
            print(f"loss train {step} {loss.item() / len(data):.6f}")
            step += 1
        print(f"epoch {epoch}: average loss {total / len(x_all):.4f}")
    with torch.no_grad():  # decode a few points of the latent space, as the example saves samples
        sample = model.decode(torch.zeros(4, args.latent, device=device))
    print(f"loss sample_mean 0 {sample.mean().item():.6f}")


if __name__ == "__main__":
    main()
