# Trace overhead (issue 'See the stack'): the training step of examples/char_transformer.py on "cuda"
# (the virtual H200), with `strata.trace.record()` on vs off, in the same run. Two identical models from
# the same seed train on the same batches, one step each in turn (off, on, off, on, ...), so drift in the
# machine's speed hits both alike; each step ends with the devices synchronized. Reported: the median
# step wall time of each and their ratio (on/off). Target: <= 1.5x. Checked: the two models' losses are
# identical step by step (recording must not change what runs) and the recorded steps hold events from
# every layer.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_trace.py [--steps 6] [--full-size]

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from bench_framework import _import_strata, _load_example
from harness import BenchResult, StrataUnavailable, format_table, judge, log, strata_step

TARGET = 1.5


def run(steps: int, full_size: bool) -> dict[str, Any]:
    """`steps` timed steps with recording off and on (after one warm-up step each)."""
    strata = _import_strata()
    ex = _load_example()
    corpus = ex.Corpus()
    cfg = ex.Config(vocab_size=len(corpus.chars)) if full_size else \
        ex.Config(vocab_size=len(corpus.chars), block_size=16, n_embd=32, n_head=2, n_layer=1)
    models, opts = [], []
    for _ in range(2):
        strata.manual_seed(0)
        m = ex.build(strata, cfg).to("cuda")
        models.append(m)
        opts.append(strata.optim.AdamW(m.parameters(), lr=3e-3))
    rng = np.random.default_rng(0)
    batches = [corpus.batch(rng, 8, cfg.block_size) for _ in range(steps + 1)]
    times: dict[str, list[float]] = {"off": [], "on": []}
    losses: dict[str, list[float]] = {"off": [], "on": []}
    layers: set[str] = set()
    for i, (xb, yb) in enumerate(batches):
        for mode, model, opt in (("off", models[0], opts[0]), ("on", models[1], opts[1])):
            x, y = strata.tensor(xb, device="cuda"), strata.tensor(yb, device="cuda")
            strata.cuda.synchronize()
            t0 = time.perf_counter()
            if mode == "on":
                with strata.trace.record() as rec:
                    loss = ex.train_step(strata, model, opt, x, y)
                    strata.cuda.synchronize()
                layers |= {e.layer for e in rec.events}
            else:
                loss = ex.train_step(strata, model, opt, x, y)
                strata.cuda.synchronize()
            elapsed = time.perf_counter() - t0
            losses[mode].append(loss.item())
            if i > 0:  # the first step compiles or loads every kernel
                times[mode].append(elapsed)
    return {"times": times, "losses": losses, "layers": layers,
            "params": sum(p.numel() for p in models[0].parameters())}


def bench_trace(steps: int = 6, full_size: bool = False) -> list[BenchResult]:
    res = BenchResult(name="trace_overhead", description="char transformer training step on cuda, recording on "
                      "vs off", target=f"<= {TARGET}x", peer_name="recording off", ratio_def="on/off")
    try:
        with strata_step("trace_overhead", "train"):
            r = run(steps, full_size)
    except StrataUnavailable as e:
        res.note = str(e)
        return [res]
    on, off = float(np.median(r["times"]["on"])), float(np.median(r["times"]["off"]))
    res.strata_value, res.peer_value, res.ratio = on, off, on / off
    res.correct = r["losses"]["on"] == r["losses"]["off"] and {"L5", "L4", "L3", "L2", "L1", "L0"} <= r["layers"]
    res.note = (f"{r['params']} params; losses identical on/off over {len(r['losses']['on'])} steps"
                if res.correct else f"losses or layers differ: {r['losses']} {sorted(r['layers'])}")
    res.details = {"on_s": r["times"]["on"], "off_s": r["times"]["off"]}
    return [judge(res, res.ratio <= TARGET)]


def main() -> None:
    parser = argparse.ArgumentParser(description="trace overhead: a training step with recording on vs off")
    parser.add_argument("--steps", type=int, default=6, help="timed steps in each mode")
    parser.add_argument("--full-size", action="store_true", help="the example's default model (slower)")
    args = parser.parse_args()
    log("trace overhead: training steps on cuda, recording off and on in turn")
    rows = bench_trace(args.steps, args.full_size)
    print(format_table(rows))
    for row in rows:
        if row.details:
            for mode in ("on", "off"):
                print(f"  {mode}: {[round(t, 3) for t in row.details[mode + '_s']]}")


if __name__ == "__main__":
    main()
