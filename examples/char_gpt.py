"""Character-level GPT, in the shape of minGPT / nanoGPT's character model (token and learned position
embeddings, pre-norm blocks of causal self-attention through F.scaled_dot_product_attention and a GELU MLP,
a final LayerNorm and a linear head, AdamW with gradient clipping, then sampling with torch.multinomial),
trained on the sonnets in examples/data/sonnets.txt.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/char_gpt.py --device cpu
    strata run --as-torch examples/char_gpt.py --device cuda --tiny

Weights and batches come from NumPy, so both frameworks print the same losses (the sampled text is drawn
from each framework's own generator and is not compared).
"""

import argparse
import os
import zlib
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = Path(__file__).resolve().parent / "data" / "sonnets.txt"


def init_weights(model):
    """Seeded NumPy weights N(0, 0.02) as GPT-2 does, zero biases, unit layer-norm scales."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            value = rng.normal(0.0, 0.02, tuple(p.shape))
        else:
            value = np.ones(p.shape) if name.endswith("weight") else np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd, n_head, n_layer):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def main():
    parser = argparse.ArgumentParser(description="character-level GPT on the sonnets")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a small model, a few steps")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--n-embd", type=int, default=64)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--n-layer", type=int, default=2)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    if args.tiny:
        args.steps, args.batch_size, args.block_size, args.n_embd, args.n_head, args.n_layer = 3, 4, 8, 16, 2, 1
    torch.manual_seed(0)

    text = TEXT.read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    model = init_weights(GPT(len(chars), args.block_size, args.n_embd, args.n_head, args.n_layer)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(1)
    model.train()
    for step in range(args.steps):
        starts = rng.integers(0, len(data) - args.block_size - 1, args.batch_size)
        x = torch.from_numpy(np.stack([data[s:s + args.block_size] for s in starts])).to(device)
        y = torch.from_numpy(np.stack([data[s + 1:s + 1 + args.block_size] for s in starts])).to(device)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print(f"loss train {step} {loss.item():.6f}")
    model.eval()
    start = torch.tensor([[stoi[c] for c in "Shall I"]], dtype=torch.long, device=device)
    out = model.generate(start, 4 if args.tiny else 100)
    print("sample:", repr("".join(chars[i] for i in out[0].tolist())))


if __name__ == "__main__":
    main()
