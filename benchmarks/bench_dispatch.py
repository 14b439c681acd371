# Per-op dispatch overhead of the framework (issue 16): small ops on tiny "cpu" tensors, where the time is
# almost all Python between the call and the NumPy kernel (argument parsing, type promotion, the op
# table lookup, the autograd record). strata vs PyTorch CPU in the same run; target: strata's per-op
# time at most 3x PyTorch's for a small elementwise op.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_dispatch.py [--n 20000]

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET = 3.0
JUDGED = "x + y"  # the "small elementwise op"; the other cases are reported beside it


def _per_op(fn: Callable[[], Any], n: int) -> float:
    """Best of 5 runs of n calls, seconds per call."""
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _cases(fw: Any) -> dict[str, Callable[[], Any]]:
    x = fw.ones(8)
    y = fw.ones(8)
    w = fw.ones(8, requires_grad=True)
    return {
        "x + y": lambda: x + y,
        "x * 2.0": lambda: x * 2.0,
        "x.exp()": lambda: x.exp(),
        "x.sin()": lambda: x.sin(),
        "x.sum()": lambda: x.sum(),
        "w * y (records grad)": lambda: w * y,
        "x.add_(y)": lambda: x.add_(y),
    }


def bench_dispatch(n: int = 20000) -> list[Any]:
    """run_all's rows: the per-op time of each case, strata over PyTorch; `x + y` is judged against
    TARGET, the others are reported. Both sides' results are compared, so a wrong sum FAILs."""
    import numpy as np
    from harness import NO_TARGET, BenchResult, judge

    sys.path.insert(0, str(REPO / "src"))
    import torch

    import strata

    s_cases, t_cases = _cases(strata), _cases(torch)
    rows = []
    for name, fn in s_cases.items():
        judged = name == JUDGED
        row = BenchResult(name=f"dispatch_cpu ({name}, 8 elements)",
                          description=f"per-op time of `{name}` on 8-element cpu tensors (best of 5 runs of {n} "
                                      "calls), strata vs PyTorch in the same process",
                          target=f"<= {TARGET:g}x PyTorch" if judged else NO_TARGET, strata_unit="s",
                          peer_name=f"torch {torch.__version__}", ratio_def="strata/peer")
        row.strata_value = _per_op(fn, n)
        row.peer_value = _per_op(t_cases[name], n)
        row.ratio = row.strata_value / row.peer_value
        row.correct = bool(np.allclose(np.asarray(fn().tolist()), np.asarray(t_cases[name]().tolist())))
        rows.append(judge(row, row.ratio <= TARGET if judged else True))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description="strata per-op dispatch overhead vs PyTorch CPU")
    parser.add_argument("--n", type=int, default=20000, help="calls per timed run")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    import strata

    try:
        import torch
    except ImportError:
        torch = None
    s_cases = _cases(strata)
    t_cases = _cases(torch) if torch is not None else {}
    print(f"{'op (8 elements, cpu)':28s} {'strata us':>10s} {'torch us':>10s} {'ratio':>7s}  target <= {TARGET}x")
    for name, fn in s_cases.items():
        s = _per_op(fn, args.n) * 1e6
        if name in t_cases:
            t = _per_op(t_cases[name], args.n) * 1e6
            ratio = s / t
            verdict = "PASS" if ratio <= TARGET else "FAIL"
            print(f"{name:28s} {s:10.2f} {t:10.2f} {ratio:7.2f}  {verdict}")
        else:
            print(f"{name:28s} {s:10.2f} {'-':>10s}")


if __name__ == "__main__":
    main()
