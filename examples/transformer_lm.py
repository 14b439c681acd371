"""Word-level Transformer language model, in the shape of PyTorch's official `word_language_model` example's
Transformer variant (sinusoidal PositionalEncoding buffer, causal mask from
`nn.Transformer.generate_square_subsequent_mask`, nn.TransformerEncoder, log-softmax + NLL), with AdamW,
trained on the sonnets in examples/data/sonnets.txt.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/transformer_lm.py --device cpu
    strata run --as-torch examples/transformer_lm.py --device cuda --tiny

Weights come from NumPy seeded by parameter name, so both frameworks print the same losses.
"""

import argparse
import math
import os
import re
import zlib
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = Path(__file__).resolve().parent / "data" / "sonnets.txt"


def init_weights(model):
    """Seeded NumPy weights (std 1/sqrt(fan-in)), zero biases, unit layer-norm scales."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            value = rng.standard_normal(tuple(p.shape)) / np.sqrt(p.shape[-1])
        else:
            value = np.ones(tuple(p.shape)) if name.endswith("weight") else np.zeros(tuple(p.shape))
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


def load_words(path):
    """The sonnets as word ids (a line break is `<eos>`): (vocabulary, ids)."""
    words = []
    for line in path.read_text().splitlines():
        if line.strip():
            words += re.findall(r"[a-z']+", line.lower()) + ["<eos>"]
    vocab = sorted(set(words))
    index = {w: i for i, w in enumerate(vocab)}
    return vocab, torch.tensor([index[w] for w in words], dtype=torch.long)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=256):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return x + self.pe[: x.size(0), :]


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp)
        self.encoder = nn.Embedding(ntoken, ninp)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.decoder = nn.Linear(ninp, ntoken)
        self.ninp = ninp

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(src.device)
        src = self.pos_encoder(self.encoder(src) * math.sqrt(self.ninp))
        return F.log_softmax(self.decoder(self.transformer_encoder(src, mask)), dim=-1)


def main():
    parser = argparse.ArgumentParser(description="word-level Transformer language model on the sonnets")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a small model, a few chunks")
    parser.add_argument("--emsize", type=int, default=64)
    parser.add_argument("--nhead", type=int, default=2)
    parser.add_argument("--nhid", type=int, default=128)
    parser.add_argument("--nlayers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--steps", type=int, default=60, help="the corpus is small: more steps memorise it")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--bptt", type=int, default=24)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    if args.tiny:
        args.emsize, args.nhid, args.nlayers, args.steps, args.batch_size, args.bptt = 16, 32, 1, 3, 4, 8
    torch.manual_seed(0)

    vocab, ids = load_words(TEXT)
    ntokens = len(vocab)
    cut = len(ids) * 9 // 10  # the last tenth is held out
    nbatch = cut // args.batch_size
    data = ids[: nbatch * args.batch_size].view(args.batch_size, -1).t().contiguous().to(device)
    valid = ids[cut:].unsqueeze(1).to(device)  # one long column
    model = init_weights(TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    starts = range(0, data.size(0) - 1 - args.bptt, args.bptt)
    for step in range(args.steps):
        i = starts[step % len(starts)]
        src, target = data[i:i + args.bptt], data[i + 1:i + 1 + args.bptt].reshape(-1)
        optimizer.zero_grad()
        loss = F.nll_loss(model(src).view(-1, ntokens), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        print(f"loss train {step} {loss.item():.6f}")
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, min(len(valid) - 1, 2 * args.bptt if args.tiny else len(valid) - 1), args.bptt):
            src, target = valid[i:i + args.bptt], valid[i + 1:i + 1 + args.bptt].reshape(-1)
            src = src[: len(target)]
            total += len(target) * F.nll_loss(model(src).view(-1, ntokens), target).item()
            count += len(target)
    print(f"loss valid 0 {total / count:.6f}")
    print(f"train perplexity {math.exp(loss.item()):.2f}, valid perplexity {math.exp(total / count):.2f}")


if __name__ == "__main__":
    main()
