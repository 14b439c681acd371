# Launch-overhead benchmarks: the host cost of launching an empty kernel through the whole strata stack
# (L3 Kernel.launch -> L2 stream and AQL queue -> L1 doorbell -> L0 command processor), pipelined (no
# sync between launches; target <= 50 us of wall per launch) and synchronous (launch + stream sync each
# time), with the sustained throughput (launches completed per second) of the pipelined run. The peer
# is the Numba CUDA simulator launching the same empty kernel, measured in a subprocess of this file.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_launch.py [--repeat 3] [--n 2000] [--profile]

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time
from typing import Any

import numpy as np
import peers
from harness import (
    NO_TARGET,
    BenchResult,
    StrataUnavailable,
    format_table,
    import_strata_cuda,
    judge,
    log,
    strata_step,
)

N_PIPELINED = 2_000  # below the stream's queue size (runtime DEFAULT_QUEUE_SIZE = 4096), so no ring-full waits
N_SYNC = 500
N_WARMUP = 50
PIPELINED_TARGET_S = 50e-6  # the target: host wall per pipelined launch

EMPTY_SRC = r'extern "C" __global__ void empty() {}'


# --- strata -----------------------------------------------------------------------------------------


def run_strata_launch(*, n: int = N_PIPELINED, sync_n: int = N_SYNC, repeats: int = 3) -> dict[str, Any]:
    """Time empty-kernel launches on one strata stream, pipelined and synchronous; check they all ran.

    Timing: compile and `N_WARMUP` warm launches are excluded. Pipelined: `repeats` rounds of `n`
    launches with no sync in between; the enqueue loop is timed (wall and host-thread CPU time), then
    the stream is synchronized and launches/s is `n` over the time from the first launch to the end of
    the sync. Synchronous: `repeats` rounds of `sync_n` x (launch + stream.synchronize()). Best round
    reported for each.

    Check (the oracle is the stream contract): after each pipelined round every LaunchReport is done,
    each ran exactly one block of one thread, and the modeled device timeline is in launch order
    (each kernel starts no earlier than the previous one ended).

    Raises:
        StrataUnavailable: strata is missing or a step (compile, launch, synchronize) raised.
    """
    if n < 2 or n >= 4096:
        raise ValueError(f"[launch] n must be in 2..4095 (below the queue size), got {n}")
    bench = "launch"
    cuda = import_strata_cuda()
    with strata_step(bench, "compile"):
        t0 = time.perf_counter()
        kernel = cuda.compile(EMPTY_SRC).get_function("empty")
        compile_s = time.perf_counter() - t0
    with strata_step(bench, "stream"):
        stream = cuda.Stream()
    with strata_step(bench, "warm-up launch"):
        for _ in range(N_WARMUP):
            kernel.launch(1, 1, (), stream=stream)
        stream.synchronize()

    enqueue_s, enqueue_cpu_s, drain_s, total_s = [], [], [], []
    problems: list[str] = []
    modeled_per_launch = None
    for _ in range(repeats):
        with strata_step(bench, "pipelined launch"):
            t0, c0 = time.perf_counter(), time.thread_time()
            reports = [kernel.launch(1, 1, (), stream=stream) for _ in range(n)]
            t1, c1 = time.perf_counter(), time.thread_time()
            stream.synchronize()
            t2 = time.perf_counter()
        enqueue_s.append(t1 - t0)
        enqueue_cpu_s.append(c1 - c0)
        drain_s.append(t2 - t1)
        total_s.append(t2 - t0)
        with strata_step(bench, "read launch reports"):
            problems += _check_reports(reports)
            modeled_per_launch = (reports[-1].device_end - reports[0].device_start) / n
        del reports

    sync_s = []
    for _ in range(repeats):
        with strata_step(bench, "synchronous launch"):
            t0 = time.perf_counter()
            for _ in range(sync_n):
                kernel.launch(1, 1, (), stream=stream)
                stream.synchronize()
            sync_s.append(time.perf_counter() - t0)

    best = int(np.argmin(enqueue_s))
    return {
        "n": n,
        "sync_n": sync_n,
        "repeats": repeats,
        "warmup_launches": N_WARMUP,
        "compile_s": compile_s,
        "pipelined_wall_per_launch_s": enqueue_s[best] / n,
        "pipelined_cpu_per_launch_s": enqueue_cpu_s[best] / n,
        "pipelined_enqueue_s": enqueue_s,
        "pipelined_enqueue_cpu_s": enqueue_cpu_s,
        "pipelined_drain_s": drain_s,
        "pipelined_total_s": total_s,
        "throughput_launches_per_s": n / min(total_s),
        "sync_per_launch_s": min(sync_s) / sync_n,
        "sync_s": sync_s,
        "modeled_device_s_per_launch": modeled_per_launch,
        "correct": not problems,
        "problems": problems[:5],
    }


def _check_reports(reports: list[Any]) -> list[str]:
    """What is wrong with a completed pipelined round (empty list if nothing)."""
    problems = []
    if not all(r.done for r in reports):
        problems.append(f"{sum(not r.done for r in reports)} of {len(reports)} launches not done after sync")
        return problems
    prev_end = -1.0
    for i, r in enumerate(reports):
        c = r.counters
        if (c.blocks_launched, c.threads_launched) != (1, 1):
            problems.append(f"launch {i} ran {c.blocks_launched} blocks / {c.threads_launched} threads, expected 1/1")
        if r.device_start < prev_end:
            problems.append(f"launch {i} started at {r.device_start:.3e} s before launch {i - 1} ended "
                            f"({prev_end:.3e} s): stream order broken")
        prev_end = r.device_end
    return problems


def profile_pipelined(*, n: int = N_PIPELINED, top: int = 25) -> str:
    """cProfile of one pipelined round of `n` launches on the host thread (engine threads not included)."""
    cuda = import_strata_cuda()
    kernel = cuda.compile(EMPTY_SRC).get_function("empty")
    stream = cuda.Stream()
    for _ in range(N_WARMUP):
        kernel.launch(1, 1, (), stream=stream)
    stream.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        kernel.launch(1, 1, (), stream=stream)
    prof.disable()
    stream.synchronize()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# --- the Numba CUDA simulator (a subprocess running this file with --numba-sim-peer) ------------------


def numba_sim_launch(*, n: int = N_PIPELINED, sync_n: int = N_SYNC, repeats: int = 3,
                     timeout_s: float = 600.0) -> dict[str, Any]:
    """Per-launch wall time of an empty kernel on the Numba CUDA simulator (a subprocess).

    Raises:
        peers.PeerUnavailable: numba is missing, the subprocess failed, or it did not run the simulator.
    """
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--numba-sim-peer", "--n", str(n), "--sync-n", str(sync_n),
           "--repeat", str(repeats)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        raise peers.PeerUnavailable(f"[numba_sim_launch] simulator ran past {timeout_s:.0f} s") from e
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        hint = " (install it: .venv/bin/pip install numba numba-cuda)" if "No module named" in tail else ""
        raise peers.PeerUnavailable(f"[numba_sim_launch] subprocess exited {proc.returncode}{hint}:\n{tail}")
    try:
        res: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError) as e:
        raise peers.PeerUnavailable(
            f"[numba_sim_launch] expected one JSON line on stdout, got {proc.stdout!r:.200}"
        ) from e
    if not res.get("simulator"):
        raise peers.PeerUnavailable(
            "[numba_sim_launch] numba did not run on the simulator (NUMBA_ENABLE_CUDASIM ignored?)"
        )
    if not res.get("correct"):
        raise peers.PeerUnavailable(f"[numba_sim_launch] the simulator's launches did not all run: {res}")
    return res


def _numba_sim_child(n: int, sync_n: int, repeats: int) -> None:
    """Runs in the subprocess: time empty launches on the simulator, print one JSON line."""
    # NOTE: must precede the numba import; numba reads it once, at import time.
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba import cuda

    @cuda.jit
    def empty():
        pass

    @cuda.jit
    def count(counter):
        counter[0] += 1

    # Warm-up, untimed (the dispatcher's first call), as strata's compile and warm launches are.
    for _ in range(N_WARMUP):
        empty[1, 1]()
    cuda.synchronize()

    enqueue_s, enqueue_cpu_s, total_s, sync_s = [], [], [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n):
            empty[1, 1]()
        t1, c1 = time.perf_counter(), time.thread_time()
        cuda.synchronize()
        enqueue_s.append(t1 - t0)
        enqueue_cpu_s.append(c1 - c0)
        total_s.append(time.perf_counter() - t0)
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(sync_n):
            empty[1, 1]()
            cuda.synchronize()
        sync_s.append(time.perf_counter() - t0)

    # Proof every launch ran: the same launch count with a kernel that counts itself.
    counter = cuda.to_device(np.zeros(1, np.int64))
    for _ in range(n):
        count[1, 1](counter)
    ran = int(counter.copy_to_host()[0])
    best = int(np.argmin(enqueue_s))
    print(json.dumps({
        "peer": "numba-cuda-simulator",
        "n": n,
        "sync_n": sync_n,
        "repeats": repeats,
        "pipelined_wall_per_launch_s": enqueue_s[best] / n,
        "pipelined_cpu_per_launch_s": enqueue_cpu_s[best] / n,
        "pipelined_enqueue_s": enqueue_s,
        "pipelined_total_s": total_s,
        "throughput_launches_per_s": n / min(total_s),
        "sync_per_launch_s": min(sync_s) / sync_n,
        "sync_s": sync_s,
        "correct": ran == n,
        "simulator": type(counter).__module__.startswith("numba.cuda.simulator"),
    }))


# --- rows --------------------------------------------------------------------------------------------


def bench_launch(*, n: int = N_PIPELINED, sync_n: int = N_SYNC, repeats: int = 3,
                 sim_repeats: int = 3) -> list[BenchResult]:
    """Three rows: pipelined wall per launch (target), synchronous per launch, pipelined throughput."""
    pipe = BenchResult(
        name=f"launch_pipelined (empty, n={n})",
        description="host wall per empty-kernel launch, no sync between launches (enqueue loop)",
        target=f"<= {PIPELINED_TARGET_S * 1e6:g} us",
        peer_name="numba sim",
        ratio_def="peer/strata",
    )
    sync = BenchResult(
        name=f"launch_sync (empty, n={sync_n})",
        description="host wall per empty-kernel launch + stream synchronize",
        target=NO_TARGET,
        peer_name="numba sim",
        ratio_def="peer/strata",
    )
    thru = BenchResult(
        name=f"launch_throughput (empty, n={n})",
        description="pipelined launches completed per second (first launch to end of the sync)",
        target=NO_TARGET,
        strata_unit="launch/s",
    )
    rows = [pipe, sync, thru]
    strata: dict[str, Any] | None = None
    try:
        log(f"[launch] strata, {n} pipelined + {sync_n} synchronous empty launches, best of {repeats}")
        strata = run_strata_launch(n=n, sync_n=sync_n, repeats=repeats)
    except StrataUnavailable as e:
        for r in rows:
            r.add_note(str(e))
    peer: dict[str, Any] | None = None
    try:
        log(f"[launch] numba simulator, same counts, best of {sim_repeats}")
        peer = numba_sim_launch(n=n, sync_n=sync_n, repeats=sim_repeats)
    except peers.PeerUnavailable as e:
        pipe.add_note(str(e))
        sync.add_note(str(e))
    if peer is not None:
        pipe.peer_value, sync.peer_value = peer["pipelined_wall_per_launch_s"], peer["sync_per_launch_s"]
        pipe.details["peer"] = sync.details["peer"] = peer
    if strata is None:
        return rows
    for r in rows:
        r.details["strata"] = strata
        r.correct = strata["correct"]
        if not strata["correct"]:
            r.add_note("; ".join(strata["problems"]))
    pipe.strata_value = strata["pipelined_wall_per_launch_s"]
    pipe.add_note(f"host-thread CPU {strata['pipelined_cpu_per_launch_s'] * 1e6:.1f} us/launch; "
                  f"modeled device {strata['modeled_device_s_per_launch'] * 1e6:.2f} us/launch")
    sync.strata_value = strata["sync_per_launch_s"]
    thru.strata_value = strata["throughput_launches_per_s"]
    if peer is not None:
        pipe.ratio = peer["pipelined_wall_per_launch_s"] / strata["pipelined_wall_per_launch_s"]
        sync.ratio = peer["sync_per_launch_s"] / strata["sync_per_launch_s"]
        thru.add_note(f"numba sim: {peer['throughput_launches_per_s']:.3g} launch/s")
    judge(pipe, strata["pipelined_wall_per_launch_s"] <= PIPELINED_TARGET_S)
    judge(sync, True)  # no target: PASS means a figure was produced and the launches checked out
    judge(thru, True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description="Empty-kernel launch overhead, strata vs the Numba simulator.")
    parser.add_argument("--n", type=int, default=N_PIPELINED, help="pipelined launches per round (< 4096)")
    parser.add_argument("--sync-n", type=int, default=N_SYNC, help="synchronous launches per round")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (best reported)")
    parser.add_argument("--sim-repeat", type=int, default=3, help="timed simulator rounds (best reported)")
    parser.add_argument("--profile", action="store_true", help="cProfile one pipelined round (host thread)")
    parser.add_argument("--numba-sim-peer", action="store_true", help=argparse.SUPPRESS)  # the subprocess
    args = parser.parse_args()
    if args.numba_sim_peer:
        _numba_sim_child(args.n, args.sync_n, args.repeat)
        return 0
    if args.profile:
        print(profile_pipelined(n=args.n))
        return 0
    results = bench_launch(n=args.n, sync_n=args.sync_n, repeats=args.repeat, sim_repeats=args.sim_repeat)
    print(format_table(results))
    return 0 if all(r.status == "PASS" for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
