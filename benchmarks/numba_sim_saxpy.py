# The peer for the SAXPY-vs-simulator benchmark: the same SAXPY kernel written for Numba, run on the
# Numba CUDA simulator. Run as a subprocess by benchmarks/peers.py so NUMBA_ENABLE_CUDASIM is set
# before numba is first imported and never leaks into the parent. Prints one JSON object on stdout.
#
#   .venv/bin/python benchmarks/numba_sim_saxpy.py --n 65536

from __future__ import annotations

import os

# NOTE: must precede any numba import; numba reads it once, at import time.
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import argparse
import json
import time
from importlib.metadata import PackageNotFoundError, version

import numpy as np
from numba import cuda


@cuda.jit
def saxpy(a, x, y, out):  # type: ignore[no-untyped-def]
    """out[i] = a * x[i] + y[i], one thread per element (simple index, like the strata kernel)."""
    i = cuda.grid(1)  # type: ignore[attr-defined]
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=65_536, help="elements (threads)")
    parser.add_argument("--block", type=int, default=256, help="threads per block")
    parser.add_argument("--repeats", type=int, default=1, help="timed launches; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    a = np.float32(2.0)
    x = rng.uniform(-1, 1, args.n).astype(np.float32)
    y = rng.uniform(-1, 1, args.n).astype(np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array(args.n, dtype=np.float32)
    grid = (args.n + args.block - 1) // args.block

    # Warm-up on one block, untimed: the dispatcher's first call (type inference, setup) is excluded,
    # as strata's compile and first launch are.
    w = min(args.n, args.block)
    saxpy[1, args.block](a, cuda.to_device(x[:w]), cuda.to_device(y[:w]), cuda.device_array(w, np.float32))
    cuda.synchronize()  # type: ignore[no-untyped-call]

    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        saxpy[grid, args.block](a, d_x, d_y, d_out)
        cuda.synchronize()  # type: ignore[no-untyped-call]
        times.append(time.perf_counter() - t0)
    out = d_out.copy_to_host()

    ref = a.astype(np.float64) * x + y.astype(np.float64)
    err = float(np.max(np.abs(out - ref))) if args.n else 0.0
    best = min(times)
    print(
        json.dumps(
            {
                "peer": "numba-cuda-simulator",
                "n": args.n,
                "block": args.block,
                "grid": grid,
                "wall_s": best,
                "times_s": times,
                "threads_per_s": args.n / best if best > 0 else None,
                "correct": bool(np.allclose(out, ref, rtol=1e-6, atol=1e-6)),
                "max_abs_err": err,
                # Proof the simulator, not a real GPU, ran: its device arrays live in numba.cuda.simulator.
                "simulator": type(d_out).__module__.startswith("numba.cuda.simulator"),
                "cuda_module": cuda.__file__,
                "numba": _version("numba"),
                "numba_cuda": _version("numba-cuda"),
            }
        )
    )


if __name__ == "__main__":
    main()
