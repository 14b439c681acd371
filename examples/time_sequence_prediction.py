"""Time-sequence prediction, in the shape of PyTorch's official `time_sequence_prediction` example: two
stacked nn.LSTMCell layers and a Linear read-out learn sine waves of random phase, trained with the L-BFGS
optimizer (a closure that re-evaluates the loss), then predict the continuation of held-out waves
(`future` steps fed back from the model's own output). The waves are generated in the program, as the
example's generate_sine_wave.py does.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/time_sequence_prediction.py --device cpu
    strata run --as-torch examples/time_sequence_prediction.py --device cuda --tiny

Weights and waves come from NumPy, so both frameworks print the same losses.
"""

import argparse
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def init_weights(model, scale):
    """Seeded NumPy weights uniform in [-scale, scale] (the LSTM's default range, 1/sqrt(hidden))."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        with torch.no_grad():
            p.copy_(torch.from_numpy(rng.uniform(-scale, scale, tuple(p.shape)).astype(np.float32)))
    return model


class Sequence(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, inp, future=0):
        outputs = []
        h_t = torch.zeros(inp.size(0), self.hidden, dtype=inp.dtype, device=inp.device)
        c_t = torch.zeros(inp.size(0), self.hidden, dtype=inp.dtype, device=inp.device)
        h_t2 = torch.zeros(inp.size(0), self.hidden, dtype=inp.dtype, device=inp.device)
        c_t2 = torch.zeros(inp.size(0), self.hidden, dtype=inp.dtype, device=inp.device)
        output = None
        for input_t in inp.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):  # predict the future from the model's own output
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def main():
    parser = argparse.ArgumentParser(description="LSTMCell sine-wave predictor trained with L-BFGS")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: short waves, one L-BFGS step")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    waves, length, hidden, max_iter, future = 24, 60, 24, 10, 20
    if args.tiny:
        waves, length, hidden, max_iter, future, args.steps = 6, 8, 6, 2, 3, 1
    rng = np.random.default_rng(2)
    x = np.arange(length)[None, :] + rng.integers(-40, 40, (waves, 1))
    data = np.sin(x / 4.0).astype(np.float32)
    inp, target = torch.from_numpy(data[3:, :-1]).to(device), torch.from_numpy(data[3:, 1:]).to(device)
    test_input, test_target = torch.from_numpy(data[:3, :-1]).to(device), torch.from_numpy(data[:3, 1:]).to(device)
    seq = init_weights(Sequence(hidden), 1.0 / np.sqrt(hidden)).to(device)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=max_iter)
    for i in range(args.steps):
        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(inp), target)
            loss.backward()
            return loss
        loss = optimizer.step(closure)
        print(f"loss train {i} {loss.item():.6f}")
        with torch.no_grad():
            pred = seq(test_input, future=future)
            print(f"loss test {i} {criterion(pred[:, :-future], test_target).item():.6f}")


if __name__ == "__main__":
    main()
