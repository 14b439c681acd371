# LSTM language-model training step on "cpu" (issue 16): strata vs PyTorch CPU in the same run, the same
# code (the step takes the framework module) from the same initial weights: Embedding(V, E) -> 2-layer
# LSTM(E, H) -> Linear(H, V), cross-entropy, clip_grad_norm_, SGD, sequence 35 x batch 20 (the shape of the
# public word_language_model example, smaller vocabulary). No target: reported, with the loss check.
# Both sides run with one BLAS / OpenMP thread (OPENBLAS_NUM_THREADS=1 and the equivalent runtime limit
# through threadpoolctl, torch.set_num_threads(1)): on a 2-core machine BLAS threads oversubscribe the cores
# and the figures become noise.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_lstm.py [--repeat 5]

from __future__ import annotations

import argparse
import os
import sys
import time
from types import ModuleType
from typing import Any

import numpy as np
from harness import REPO, BenchResult, StrataUnavailable, format_table, judge, strata_step

VOCAB, EMB, HID, LAYERS, SEQ, BATCH = 200, 64, 128, 2, 35, 20
# for BLAS libraries loaded after this point (the runtime limit below covers those already loaded)
os.environ["OPENBLAS_NUM_THREADS"] = "1"


def _import_strata() -> ModuleType:
    sys.path.insert(0, str(REPO / "src"))
    try:
        import strata
    except Exception as e:  # noqa: BLE001 - reported as the row's error
        raise StrataUnavailable(f"import strata failed: {e!r}") from e
    return strata


class _Model:
    """The model built from framework `fw`'s modules (the same code for both frameworks)."""

    def __init__(self, fw: ModuleType) -> None:
        nn = fw.nn
        self.net = nn.ModuleDict({"emb": nn.Embedding(VOCAB, EMB), "rnn": nn.LSTM(EMB, HID, LAYERS),
                                  "out": nn.Linear(HID, VOCAB)})

    def __call__(self, x: Any) -> Any:
        out, _ = self.net["rnn"](self.net["emb"](x))
        return self.net["out"](out)


def run(fw: ModuleType, init: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, steps: int,
        warmups: int = 1) -> tuple[list[float], list[float]]:
    """`warmups` + `steps` training steps; (step times, losses)."""
    model = _Model(fw)
    model.net.load_state_dict({k: fw.tensor(v) for k, v in init.items()})
    opt = fw.optim.SGD(model.net.parameters(), lr=0.5)
    loss_fn = fw.nn.CrossEntropyLoss()
    xt, yt = fw.tensor(x), fw.tensor(y)
    times, losses = [], []
    for i in range(warmups + steps):
        t0 = time.perf_counter()
        loss = loss_fn(model(xt).reshape(-1, VOCAB), yt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        fw.nn.utils.clip_grad_norm_(model.net.parameters(), 0.25)
        opt.step()
        value = loss.item()
        if i >= warmups:
            times.append(time.perf_counter() - t0)
        losses.append(value)
    return times, losses


def bench_lstm(repeats: int = 5) -> list[BenchResult]:
    import torch
    from threadpoolctl import threadpool_limits
    res = BenchResult(name="lstm_lm_step_cpu", description=f"LSTM LM step ({LAYERS}x{HID}, seq {SEQ} x batch "
                      f"{BATCH}, vocab {VOCAB}), cpu, 1 BLAS thread both sides (OPENBLAS_NUM_THREADS=1)",
                      target="none (reported)", peer_name="torch " + torch.__version__,
                      ratio_def="torch/strata")
    try:
        strata = _import_strata()
        torch.manual_seed(0)
        init = {k: v.detach().numpy().copy() for k, v in _Model(torch).net.state_dict().items()}
        rng = np.random.default_rng(0)
        x = rng.integers(0, VOCAB, (SEQ, BATCH))
        y = rng.integers(0, VOCAB, (SEQ, BATCH))
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with threadpool_limits(limits=1):
                t_torch, l_torch = run(torch, init, x, y, repeats)
                with strata_step("lstm_lm_step_cpu", "train"):
                    t_strata, l_strata = run(strata, init, x, y, repeats)
        finally:
            torch.set_num_threads(torch_threads)
    except StrataUnavailable as e:
        res.note = str(e)
        return [res]
    res.strata_value = float(np.median(t_strata))
    res.peer_value = float(np.median(t_torch))
    res.ratio = res.peer_value / res.strata_value
    res.correct = bool(np.allclose(l_strata, l_torch, rtol=1e-4, atol=1e-5))
    res.note = f"losses agree over {len(l_torch)} steps" if res.correct else \
        f"losses differ: strata {l_strata[:3]} torch {l_torch[:3]}"
    return [judge(res, True)]


def main() -> None:
    parser = argparse.ArgumentParser(description="LSTM language-model step, strata vs PyTorch CPU (issue 16)")
    parser.add_argument("--repeat", type=int, default=5, help="timed steps per framework")
    args = parser.parse_args()
    print(format_table(bench_lstm(args.repeat)))


if __name__ == "__main__":
    main()
