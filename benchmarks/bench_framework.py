# Framework (L5) benchmarks, issue 6:
# - The training step of an MLP (784-512-512-10, ReLU, cross-entropy, SGD with momentum, batch 256) on
#   "cpu": strata vs PyTorch CPU in the same run, the same code (the step takes the framework module)
#   from the same initial weights. Target: strata at least 0.8x PyTorch's speed (torch/strata time >= 0.8;
#   issue 16 raised it from issue 6's 0.5x).
#   Checked: the losses of the two agree step by step.
# - The training step of examples/char_transformer.py's model on "cuda" (the virtual H200): emulation
#   wall time per step, MODELED H200 device time per step (CUDA events on the modeled clock, first to
#   last kernel of the step), and host-device synchronizations per step (the runtime's count of times
#   the host blocked on the device). Target: no synchronization besides `.item()`. The same step on the
#   reference executor in the same run: the native executor at least 10x faster (issue 17).
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_framework.py [--repeat 5] [--steps 3] [--threads 1]
#
# --threads N limits both sides' BLAS / OpenMP pools to N threads (threadpoolctl, torch.set_num_threads), as
# bench_lstm.py does with 1: on a 2-core machine shared with other work, the libraries' default pools
# oversubscribe the cores and a side's median swings by 10x from run to run. The default (0) keeps the
# libraries' own thread counts, which is what run_all reports.

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
from harness import (
    NO_TARGET,
    REPO,
    BenchResult,
    StrataUnavailable,
    executor,
    format_table,
    judge,
    log,
    settle_native,
    strata_step,
)

MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 256
MLP_TARGET = 0.8


def _import_strata() -> ModuleType:
    sys.path.insert(0, str(REPO / "src"))
    try:
        import strata
    except Exception as e:  # noqa: BLE001 - reported as the row's error
        raise StrataUnavailable(f"import strata failed: {e!r}") from e
    return strata


def _mlp(fw: ModuleType) -> Any:
    nn = fw.nn
    d0, d1, d2, d3 = MLP_SIZES
    return nn.Sequential(nn.Linear(d0, d1), nn.ReLU(), nn.Linear(d1, d2), nn.ReLU(), nn.Linear(d2, d3))


def run_mlp(fw: ModuleType, init: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, *, steps: int,
            warmups: int = 2) -> tuple[list[float], list[float]]:
    """`warmups` + `steps` training steps of the MLP in framework `fw` on "cpu"; (step times, losses)."""
    model = _mlp(fw)
    model.load_state_dict({k: fw.tensor(v) for k, v in init.items()})
    opt = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = fw.nn.CrossEntropyLoss()
    xt, yt = fw.tensor(x), fw.tensor(y)
    times, losses = [], []
    for i in range(warmups + steps):
        t0 = time.perf_counter()
        loss = loss_fn(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        value = loss.item()
        if i >= warmups:
            times.append(time.perf_counter() - t0)
        losses.append(value)
    return times, losses


def bench_mlp(repeats: int = 20, threads: int = 0) -> list[BenchResult]:
    """strata vs PyTorch CPU on the MLP training step (median of `repeats` steps after 2 warm-ups each);
    `threads` > 0 limits both sides' BLAS / OpenMP threads to that many."""
    import torch
    if threads > 0:
        from threadpoolctl import threadpool_limits
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            with threadpool_limits(limits=threads):
                rows = bench_mlp(repeats)
        finally:
            torch.set_num_threads(torch_threads)
        rows[0].description += f", {threads} BLAS thread(s) both sides"
        return rows
    res = BenchResult(name="mlp_step_cpu", description="MLP 784-512-512-10 training step, batch 256, cpu",
                      target=f">= {MLP_TARGET}x PyTorch CPU speed", peer_name="torch " + torch.__version__,
                      ratio_def="torch/strata")
    try:
        strata = _import_strata()
        torch.manual_seed(0)
        init = {k: v.detach().numpy().copy() for k, v in _mlp(torch).state_dict().items()}
        rng = np.random.default_rng(0)
        x = rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
        y = rng.integers(0, MLP_SIZES[-1], MLP_BATCH)
        t_torch, l_torch = run_mlp(torch, init, x, y, steps=repeats)
        with strata_step("mlp_step_cpu", "train"):
            t_strata, l_strata = run_mlp(strata, init, x, y, steps=repeats)
    except StrataUnavailable as e:
        res.note = str(e)
        return [res]
    res.strata_value = float(np.median(t_strata))
    res.peer_value = float(np.median(t_torch))
    res.ratio = res.peer_value / res.strata_value
    res.correct = bool(np.allclose(l_strata, l_torch, rtol=1e-4, atol=1e-5))
    res.note = f"losses agree over {len(l_torch)} steps" if res.correct else \
        f"losses differ: strata {l_strata[:3]} torch {l_torch[:3]}"
    return [judge(res, res.ratio >= MLP_TARGET)]


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("char_transformer", REPO / "examples" / "char_transformer.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["char_transformer"] = mod
    spec.loader.exec_module(mod)
    return mod


def run_transformer(steps: int = 3, batch_size: int = 16) -> dict[str, Any]:
    """Train the example's model on "cuda" for one warm-up step and `steps` timed ones (no `.item()`
    inside them); per step: wall time, modeled device time, host syncs. Then one `.item()`."""
    strata = _import_strata()
    ex = _load_example()
    cuda = strata.cuda
    strata.manual_seed(0)
    corpus = ex.Corpus()
    cfg = ex.Config(vocab_size=len(corpus.chars))
    model = ex.build(strata, cfg).to("cuda")
    opt = strata.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    rng = np.random.default_rng(0)
    batches = [corpus.batch(rng, batch_size, cfg.block_size) for _ in range(steps + 1)]
    ctx = cuda.Device(0).context
    walls, modeled, syncs = [], [], []
    loss = None
    for i, (xb, yb) in enumerate(batches):
        x, y = strata.tensor(xb, device="cuda"), strata.tensor(yb, device="cuda")
        cuda.synchronize()
        start, end = cuda.Event(), cuda.Event()
        s0 = ctx.host_syncs
        t0 = time.perf_counter()
        start.record()
        loss = ex.train_step(strata, model, opt, x, y)
        end.record()
        s1 = ctx.host_syncs
        end.synchronize()
        t1 = time.perf_counter()
        if i > 0:  # the first step compiles (or loads) every kernel
            walls.append(t1 - t0)
            modeled.append(start.elapsed_time(end) / 1e3)
            syncs.append(s1 - s0)
    assert loss is not None
    s0 = ctx.host_syncs
    value = loss.item()
    return {"wall_s": walls, "modeled_s": modeled, "syncs": syncs, "item_syncs": ctx.host_syncs - s0,
            "loss": value, "params": sum(p.numel() for p in model.parameters()), "batch": batch_size,
            "block": cfg.block_size}


NATIVE_SPEEDUP_TARGET = 10.0  # issue 17: the native executor's step at least 10x the reference executor's


COMPILE_TARGET_S = 0.2  # issue 17: first-launch compile time per kernel


@contextlib.contextmanager
def cold_compiles() -> Iterator[list[float]]:
    """Inside the block, the native object cache is an empty directory and each kernel compile's wall time
    (PTX lowering, IR, LLVM, link: `native.executor.compiled` on a kernel not compiled yet, or recompiled at -O3)
    is appended to the list yielded. The runtime library every kernel links is built before, not counted
    (bench_native's row)."""
    import tempfile

    from strata.hw.native import available

    times: list[float] = []
    if not available():  # (no llvmlite: the native run falls back to the reference; nothing compiles)
        yield times
        return
    from strata.hw.native import executor as native_executor
    from strata.hw.native import runtime

    runtime.runtime_object()
    real = native_executor.compiled

    def timed(program: Any, kernel: str, **kw: Any) -> Any:
        before = (program.__dict__.get("_native") or {}).get(kernel)
        t0 = time.perf_counter()
        ck = real(program, kernel, **kw)
        if ck is not before:  # (compiled, or recompiled at -O3 under STRATA_NATIVE_OPT=3)
            times.append(time.perf_counter() - t0)
        return ck

    old = os.environ.get("STRATA_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["STRATA_CACHE_DIR"] = cache
        native_executor.compiled = timed
        try:
            yield times
        finally:
            native_executor.compiled = real
            if old is None:
                os.environ.pop("STRATA_CACHE_DIR", None)
            else:
                os.environ["STRATA_CACHE_DIR"] = old


def compile_row(times: list[float], o3_times: list[float]) -> BenchResult:
    """The framework kernels' cold first-launch compiles (-O0): the median against the target, the spread and
    the -O3 recompiles' median in the note."""
    t = np.sort(np.asarray(times)) if times else np.asarray([np.nan])
    med = float(np.median(t))
    within = int((t <= COMPILE_TARGET_S).sum())
    row = BenchResult(name="native_compile_framework_kernels",
                      description="native executor: first-launch compile of the transformer step's kernels, cold "
                                  "(median)", target=f"<= {COMPILE_TARGET_S * 1e3:.0f} ms", strata_value=med,
                      correct=bool(times),
                      note=f"{len(times)} kernels: {within} within {COMPILE_TARGET_S * 1e3:.0f} ms, median "
                           f"{med * 1e3:.0f} ms, 90th percentile {float(np.percentile(t, 90)) * 1e3:.0f} ms, largest "
                           f"{float(t[-1]) * 1e3:.0f} ms (the PASS/FAIL judges the median); at -O3, the code a "
                           f"hot kernel is recompiled to in the background, median "
                           f"{float(np.median(o3_times or [np.nan])) * 1e3:.0f} ms")
    return judge(row, med <= COMPILE_TARGET_S)


def bench_transformer(steps: int = 3) -> list[BenchResult]:
    """The char transformer's training step on the virtual H200: wall, modeled, syncs on the native executor
    (its warm-up step compiles every kernel: STRATA_NATIVE_AFTER_MS=0), and the same step on the reference
    executor in the same run (issue 17: native >= 10x faster)."""
    rows = []
    try:
        with strata_step("transformer_step_cuda", "train (reference executor)"), executor("reference"):
            ref = run_transformer(steps)
        # first the compiles a process's first step makes by default (the -O0 tier); then the timed steps, on the
        # -O3 code hot kernels run once the background optimizer has recompiled them
        with strata_step("transformer_step_cuda", "first step (native executor, default tiers)"), \
                cold_compiles() as compiles:
            t0 = time.perf_counter()
            with executor("native", opt="auto"):
                run_transformer(0)  # (its one step is the warm-up: it compiles every kernel)
            first = time.perf_counter() - t0
            settle_native()  # (-O3 recompiles that step queued: not beside the timed steps)
        with strata_step("transformer_step_cuda", "train (native executor)"), cold_compiles() as o3_compiles:
            t0 = time.perf_counter()
            with executor("native"):
                r = run_transformer(steps)
            first_o3 = time.perf_counter() - t0 - sum(r["wall_s"])
    except StrataUnavailable as e:
        return [BenchResult(name="transformer_step_cuda", description="char transformer step", target=NO_TARGET,
                            note=str(e))]
    t_ref, t_nat = float(np.median(ref["wall_s"])), float(np.median(r["wall_s"]))
    same = bool(np.isclose(ref["loss"], r["loss"], rtol=0, atol=0))
    speed = BenchResult(name="transformer_step_native_vs_reference",
                        description="char transformer step on cuda: reference executor / native executor wall",
                        target=f">= {NATIVE_SPEEDUP_TARGET:g}x", strata_value=t_nat, peer_name="reference executor",
                        peer_value=t_ref, ratio=t_ref / t_nat, ratio_def="reference/native", correct=same,
                        note=f"native's first step from an empty object cache {first:.1f} s (its kernels "
                             f"compiled at -O0, the default first tier; {first_o3:.1f} s compiling them at -O3); "
                             f"the timed steps ran -O3 code; the losses agree bit for bit: {same}")
    rows.append(judge(speed, t_ref / t_nat >= NATIVE_SPEEDUP_TARGET))
    rows.append(compile_row(compiles, o3_compiles))
    shape = f"{r['params']} params, batch {r['batch']}x{r['block']}"
    finite = bool(np.isfinite(r["loss"]))
    wall = BenchResult(name="transformer_step_wall", description=f"char transformer step on cuda ({shape}), "
                       "emulation wall", target=NO_TARGET, strata_value=float(np.median(r["wall_s"])), correct=finite)
    rows.append(judge(wall, True))
    mod = BenchResult(name="transformer_step_modeled", description="same step, modeled H200 device time",
                      target=NO_TARGET, strata_value=float(np.median(r["modeled_s"])), correct=finite,
                      note="MODELED (perf model), not measured")
    rows.append(judge(mod, True))
    sync = BenchResult(name="transformer_step_syncs", description="host-device syncs per step (no .item())",
                       target="0 (besides .item())", strata_value=float(max(r["syncs"])), strata_unit="syncs",
                       correct=finite, note=f".item() afterwards: {r['item_syncs']} sync(s)")
    rows.append(judge(sync, max(r["syncs"]) == 0))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description="strata framework benchmarks (issue 6)")
    parser.add_argument("--repeat", type=int, default=20, help="timed MLP steps per framework")
    parser.add_argument("--steps", type=int, default=3, help="timed transformer steps")
    parser.add_argument("--skip-transformer", action="store_true")
    parser.add_argument("--threads", type=int, default=0,
                        help="BLAS / OpenMP threads for both sides of the MLP row (0: the libraries' defaults)")
    args = parser.parse_args()
    rows = bench_mlp(args.repeat, args.threads)
    if not args.skip_transformer:
        log("transformer step on cuda (emulated; minutes)")
        rows += bench_transformer(args.steps)
    print(format_table(rows))


if __name__ == "__main__":
    main()
