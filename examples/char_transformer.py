"""A small character-level transformer language model (GPT-style: causal self-attention, pre-norm
blocks, tied input/output embeddings), trained on Shakespeare's sonnets (examples/data/sonnets.txt),
then sampled. Written against strata's PyTorch API; runs on "cpu" or on the virtual GPU ("cuda").

    python examples/char_transformer.py                    # the virtual H200, 200 steps
    python examples/char_transformer.py --device cpu --steps 1000
    python examples/char_transformer.py --torch            # the same code on real PyTorch

Every matmul goes to strata.libs.blas, attention to strata.libs.dnn's fused kernel, layer norms,
softmax and cross-entropy to their dnn kernels, and the rest to the framework's own CUDA kernels; all
of them execute as PTX on the emulated GPU. Only `loss.item()` and sampling read values back.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

TEXT = Path(__file__).resolve().parent / "data" / "sonnets.txt"


@dataclass
class Config:
    """The model's shape; the defaults train in minutes on the emulated GPU."""

    block_size: int = 32
    n_embd: int = 64
    n_head: int = 4
    n_layer: int = 2
    dropout: float = 0.0
    vocab_size: int = 0


class Corpus:
    """The text as int64 character ids, with the vocabulary to encode and decode."""

    def __init__(self, path: Path = TEXT) -> None:
        self.text = path.read_text(encoding="utf-8")
        self.chars = sorted(set(self.text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.ids = np.array([self.index[c] for c in self.text], dtype=np.int64)

    def encode(self, s: str) -> list[int]:
        return [self.index[c] for c in s]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.chars[i] for i in ids)

    def batch(self, rng: np.random.Generator, batch_size: int, block_size: int) -> tuple[np.ndarray, np.ndarray]:
        """Random windows of the text: inputs and the same windows shifted by one (the targets)."""
        starts = rng.integers(0, len(self.ids) - block_size - 1, batch_size)
        x = np.stack([self.ids[s:s + block_size] for s in starts])
        y = np.stack([self.ids[s + 1:s + block_size + 1] for s in starts])
        return x, y


def build(torch: ModuleType, cfg: Config) -> Any:
    """The model class for framework `torch` (real PyTorch or strata: the code is the same)."""
    nn, F = torch.nn, torch.nn.functional

    class SelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
            self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)

        def forward(self, x: Any) -> Any:
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(cfg.n_embd, dim=2)
            heads = [z.view(b, t, cfg.n_head, c // cfg.n_head).transpose(1, 2) for z in (q, k, v)]
            y = F.scaled_dot_product_attention(*heads, is_causal=True,
                                               dropout_p=cfg.dropout if self.training else 0.0)
            return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(cfg.n_embd)
            self.attn = SelfAttention()
            self.ln2 = nn.LayerNorm(cfg.n_embd)
            self.mlp = nn.Sequential(nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(),
                                     nn.Linear(4 * cfg.n_embd, cfg.n_embd), nn.Dropout(cfg.dropout))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class CharTransformer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(cfg.vocab_size, cfg.n_embd)
            self.pos = nn.Embedding(cfg.block_size, cfg.n_embd)
            self.blocks = nn.ModuleList([Block() for _ in range(cfg.n_layer)])
            self.ln_f = nn.LayerNorm(cfg.n_embd)
            self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
            self.head.weight = self.tok.weight  # weight tying: one Parameter, two uses
            self.apply(self._init)

        @staticmethod
        def _init(m: Any) -> None:
            if isinstance(m, nn.Linear | nn.Embedding):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

        def forward(self, idx: Any, targets: Any = None) -> tuple[Any, Any]:
            t = idx.shape[1]
            pos = torch.arange(t, device=idx.device)
            x = self.tok(idx) + self.pos(pos)
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
            return logits, loss

        @torch.no_grad()
        def generate(self, idx: Any, new_tokens: int, temperature: float = 1.0) -> Any:
            for _ in range(new_tokens):
                logits, _ = self(idx[:, -cfg.block_size:])
                probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
                idx = torch.cat([idx, torch.multinomial(probs, num_samples=1)], dim=1)
            return idx

    return CharTransformer()


def train_step(torch: ModuleType, model: Any, opt: Any, x: Any, y: Any) -> Any:
    """One optimizer step; returns the loss tensor (still on the device: reading it is a sync)."""
    _, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sample", type=int, default=200, help="characters to generate after training")
    parser.add_argument("--torch", action="store_true", help="run on real PyTorch instead of strata")
    args = parser.parse_args()
    if args.torch:
        import torch
        device = args.device if torch.cuda.is_available() else "cpu"
    else:
        import strata as torch  # noqa: ICN001 - the point: strata answers to PyTorch's API
        device = args.device
    torch.manual_seed(0)
    corpus = Corpus()
    cfg = Config(vocab_size=len(corpus.chars))
    model = build(torch, cfg).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{torch.__name__} on {device}: {n_params} parameters, vocabulary {cfg.vocab_size}, "
          f"{len(corpus.ids)} characters")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        xb, yb = corpus.batch(rng, args.batch_size, cfg.block_size)
        loss = train_step(torch, model, opt, torch.tensor(xb, device=device), torch.tensor(yb, device=device))
        sched.step()
        if step % 20 == 0 or step == 1:
            print(f"step {step:4d}  loss {loss.item():.3f}  (uniform guess: {math.log(cfg.vocab_size):.3f})  "
                  f"{time.perf_counter() - start:.0f} s")
    model.eval()
    prompt = torch.tensor([corpus.encode("Shall I ")], device=device)
    out = model.generate(prompt, args.sample)
    print("\n--- sample ---\n" + corpus.decode(out[0].tolist()))


if __name__ == "__main__":
    main()
