"""Polynomial regression, in the shape of PyTorch's official `regression` example: fit a degree-4
polynomial with a single nn.Linear on the features (x, x^2, x^3, x^4), batches drawn from a random target
polynomial, smooth L1 loss, and the update written by hand (`param.add_(-lr * param.grad)`) until the loss
falls below 1e-3.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/regression.py --device cpu
    strata run --as-torch examples/regression.py --device cuda --tiny

The target polynomial, the batches and the initial weights come from NumPy, so both frameworks print the
same losses.
"""

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4


def make_features(x):
    """A matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def poly_desc(w, b):
    result = "y = "
    for i, wi in enumerate(w):
        result += f"{wi:+.2f} x^{i + 1} "
    return result + f"{b[0]:+.2f}"


def main():
    parser = argparse.ArgumentParser(description="fit a random degree-4 polynomial")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a few steps")
    parser.add_argument("--max-steps", type=int, default=2000)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    if args.tiny:
        args.max_steps = 4
    torch.manual_seed(0)

    rng = np.random.default_rng(0)
    w_target = torch.from_numpy((rng.standard_normal((POLY_DEGREE, 1)) * 5).astype(np.float32)).to(device)
    b_target = torch.from_numpy((rng.standard_normal(1) * 5).astype(np.float32)).to(device)
    fc = torch.nn.Linear(w_target.size(0), 1).to(device)
    with torch.no_grad():
        fc.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, (1, POLY_DEGREE)).astype(np.float32)))
        fc.bias.zero_()

    for batch_idx in range(1, args.max_steps + 1):
        x = torch.from_numpy(rng.standard_normal(32).astype(np.float32)).to(device)
        batch_x = make_features(x)
        batch_y = batch_x.mm(w_target) + b_target.item()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        if args.tiny or batch_idx % 100 == 0 or loss < 1e-3:
            print(f"loss train {batch_idx} {loss:.6f}")
        if loss < 1e-3:
            break
    print(f"Loss: {loss:.6f} after {batch_idx} batches")
    print("==> Learned function:\t" + poly_desc(fc.weight.view(-1).tolist(), fc.bias.tolist()))
    print("==> Actual function:\t" + poly_desc(w_target.view(-1).tolist(), b_target.tolist()))


if __name__ == "__main__":
    main()
