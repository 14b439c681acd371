# The peers strata is measured against: the Numba CUDA simulator (SAXPY, run in a subprocess with
# NUMBA_ENABLE_CUDASIM=1) and NumPy on the host (SAXPY `a*x + y`, and `A @ B` for reference).
# Installs nothing: numba / numba-cuda must already be in the environment for the simulator peer.
#
#   .venv/bin/python benchmarks/peers.py            # measure all peers, print JSON
#   .venv/bin/python benchmarks/peers.py --quick    # simulator on n=8192, scaled linearly

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
from harness import BENCH_DIR, best_of, log

SIM_SCRIPT = BENCH_DIR / "numba_sim_saxpy.py"
QUICK_N = 8_192


class PeerUnavailable(RuntimeError):
    """A peer could not be measured (not installed, crashed, or computed a wrong answer)."""


def numba_sim_saxpy(
    n: int, *, quick: bool = False, quick_n: int = QUICK_N, repeats: int = 3, timeout_s: float = 3600.0
) -> dict[str, Any]:
    """Best-of-`repeats` wall time of SAXPY on the Numba CUDA simulator for `n` elements (a subprocess).

    The simulator's time swings by 1.5x or more run to run on a busy machine (it runs one Python
    thread per CUDA thread), so it gets best-of-N like strata does; best-of favours the peer.

    With `quick`, the simulator runs `quick_n` elements and the time is scaled by n / quick_n; the
    simulator's cost is linear in threads (one Python thread per CUDA thread, block by block), and the
    result says `"scaled": true` so no one mistakes it for a measurement at n.

    Raises:
        PeerUnavailable: numba is missing, the subprocess failed, or its SAXPY was wrong.
    """
    measured_n = min(n, quick_n) if quick else n
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    cmd = [sys.executable, str(SIM_SCRIPT), "--n", str(measured_n), "--repeats", str(repeats)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        raise PeerUnavailable(
            f"[numba_sim_saxpy] simulator ran past {timeout_s:.0f} s at n={measured_n}"
        ) from e
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        hint = " (install it: .venv/bin/pip install numba numba-cuda)" if "No module named" in tail else ""
        raise PeerUnavailable(f"[numba_sim_saxpy] subprocess exited {proc.returncode}{hint}:\n{tail}")
    try:
        res: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError) as e:
        raise PeerUnavailable(
            f"[numba_sim_saxpy] expected one JSON line on stdout, got {proc.stdout!r:.200}"
        ) from e
    if not res.get("correct"):
        raise PeerUnavailable(f"[numba_sim_saxpy] the simulator's SAXPY disagrees with NumPy: {res}")
    if not res.get("simulator"):
        raise PeerUnavailable(
            "[numba_sim_saxpy] numba did not run on the simulator (NUMBA_ENABLE_CUDASIM ignored?)"
        )
    res["measured_n"] = measured_n
    res["measured_wall_s"] = res["wall_s"]
    res["scaled"] = measured_n != n
    if res["scaled"]:
        res["wall_s"] = res["measured_wall_s"] * n / measured_n
        res["n"] = n
    return res


def numpy_saxpy(n: int, *, repeats: int = 5, seed: int = 0) -> dict[str, Any]:
    """Best-of-`repeats` wall time of NumPy `a * x + y` on float32 (allocates its output, as written)."""
    rng = np.random.default_rng(seed)
    a = np.float32(2.0)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    best, times = best_of(lambda: a * x + y, repeats, warmups=1)
    return {
        "peer": "numpy",
        "op": "a*x + y",
        "n": n,
        "dtype": "float32",
        "wall_s": best,
        "times_s": times,
        "elements_per_s": n / best,
        "repeats": repeats,
    }


def numpy_sgemm(size: int, *, repeats: int = 3, seed: int = 0) -> dict[str, Any]:
    """Best-of-`repeats` wall time of NumPy float32 `A @ B` (size^3), for reference only (no target)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float32)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float32)
    best, times = best_of(lambda: a @ b, repeats, warmups=1)
    return {
        "peer": "numpy",
        "op": "A @ B",
        "size": size,
        "dtype": "float32",
        "wall_s": best,
        "times_s": times,
        "gflops": 2 * size**3 / best / 1e9,
        "repeats": repeats,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Measure the benchmark peers and print JSON.")
    parser.add_argument("--quick", action="store_true", help=f"simulator on n={QUICK_N}, scaled linearly")
    parser.add_argument("--sim-n", type=int, default=65_536)
    parser.add_argument("--numpy-n", type=int, default=4_194_304)
    parser.add_argument("--sgemm-size", type=int, default=1024)
    parser.add_argument("--sim-repeat", type=int, default=3, help="timed simulator launches (best reported)")
    args = parser.parse_args()

    out: dict[str, Any] = {}
    log(f"numpy a*x+y, n={args.numpy_n} (best of 5)")
    out["numpy_saxpy"] = numpy_saxpy(args.numpy_n)
    log(f"numpy A@B, {args.sgemm_size}^3 (best of 3)")
    out["numpy_sgemm"] = numpy_sgemm(args.sgemm_size)
    log(f"numba simulator SAXPY, n={args.sim_n}{' (quick)' if args.quick else ''}, best of {args.sim_repeat}")
    try:
        out["numba_sim_saxpy"] = numba_sim_saxpy(args.sim_n, quick=args.quick, repeats=args.sim_repeat)
    except PeerUnavailable as e:
        out["numba_sim_saxpy"] = {"error": str(e)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
