"""Word-level recurrent language model, in the shape of PyTorch's official `word_language_model` example
(Embedding -> LSTM/GRU/RNN -> Linear, batchified corpus, truncated back-propagation through time with the
hidden state detached between chunks, gradient clipping, plain SGD written as `p.data.add_`), trained on the
sonnets in examples/data/sonnets.txt.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/word_language_model.py --model GRU --device cpu
    strata run --as-torch examples/word_language_model.py --device cuda --tiny

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


def init_weights(model, scale=0.1):
    """Seeded NumPy weights, uniform in [-scale, scale] like the example's init_weights."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        with torch.no_grad():
            p.copy_(torch.from_numpy(rng.uniform(-scale, scale, tuple(p.shape)).astype(np.float32)))
    return model


class Corpus:
    """The sonnets as word ids; a line break is the `<eos>` token. The last tenth is the validation text."""

    def __init__(self, path):
        words = []
        for line in path.read_text().splitlines():
            if line.strip():
                words += re.findall(r"[a-z']+", line.lower()) + ["<eos>"]
        self.vocab = sorted(set(words))
        index = {w: i for i, w in enumerate(self.vocab)}
        ids = torch.tensor([index[w] for w in words], dtype=torch.long)
        cut = len(ids) * 9 // 10
        self.train, self.valid = ids[:cut], ids[cut:]


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    return data[: nbatch * bsz].view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ("RNN_TANH", "RNN_RELU"):
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=rnn_type[4:].lower(), dropout=dropout)
        else:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, x, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return F.log_softmax(self.decoder(self.drop(output)), dim=-1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def repackage_hidden(h):
    """Detach the hidden state from the graph of the previous chunk."""
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)


def main():
    parser = argparse.ArgumentParser(description="word-level RNN language model on the sonnets")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a small model, a few chunks")
    parser.add_argument("--model", default="LSTM", choices=["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
    parser.add_argument("--emsize", type=int, default=64)
    parser.add_argument("--nhid", type=int, default=64)
    parser.add_argument("--nlayers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=20.0)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--bptt", type=int, default=20)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    max_chunks = None
    if args.tiny:
        args.emsize, args.nhid, args.nlayers, args.epochs, args.batch_size, args.bptt = 16, 16, 2, 1, 4, 6
        max_chunks = 3
    torch.manual_seed(0)

    corpus = Corpus(TEXT)
    ntokens = len(corpus.vocab)
    train_data = batchify(corpus.train, args.batch_size, device)
    val_data = batchify(corpus.valid, args.batch_size, device)
    model = init_weights(RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers)).to(device)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        hidden = model.init_hidden(args.batch_size)
        for chunk, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            if max_chunks is not None and chunk >= max_chunks:
                break
            data, targets = get_batch(train_data, i, args.bptt)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = F.nll_loss(output.view(-1, ntokens), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-args.lr)
            print(f"loss train {step} {loss.item():.6f}")
            step += 1
        model.eval()
        total, count = 0.0, 0
        hidden = model.init_hidden(args.batch_size)
        with torch.no_grad():
            for i in range(0, min(val_data.size(0) - 1, args.bptt * (2 if args.tiny else 10**9)), args.bptt):
                data, targets = get_batch(val_data, i, args.bptt)
                output, hidden = model(data, hidden)
                total += len(data) * F.nll_loss(output.view(-1, ntokens), targets).item()
                count += len(data)
        print(f"loss valid {epoch} {total / count:.6f}")
        print(f"epoch {epoch}: valid perplexity {math.exp(total / count):.2f}")


if __name__ == "__main__":
    main()
