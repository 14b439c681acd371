"""`strata run --nproc N script.py`: torchrun's role for one machine. Starts N processes, one per rank,
each running the script under `strata run` with the environment torchrun sets: RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR (127.0.0.1), MASTER_PORT (a free port), TORCHELASTIC_RUN_ID.

Each process has its own virtual GPUs: STRATA_DEVICES lists N devices of the chosen model, so device
LOCAL_RANK exists in every process (`torch.cuda.set_device(local_rank)` works) and each rank uses its
own. When a rank fails, the launcher records it in the job's store (so ranks still waiting there to meet
it fail at once, naming it) and gives the others `GRACE_S` to fail on their own (their next collective
sees the closed connection and raises), then terminates them; it returns the first failure's exit
status. Ctrl-C (SIGINT) or SIGTERM of the launcher stops every rank: SIGINT to each, then SIGTERM and
SIGKILL for ranks still running after `STOP_S`; ranks also get SIGTERM if the launcher itself dies
(Linux), so no rank outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

from strata.framework.distributed.ray_cluster import cluster_address, die_with_parent, launch_on_ray

GRACE_S = 10.0
STOP_S = 3.0  # how long a rank may take to exit after each signal of a stop


class _Stop(Exception):
    """The launcher was asked to stop (SIGTERM); handled as Ctrl-C is."""


def _report_failure(port: int, message: str) -> bool:
    """Tell the ranks waiting in the store (rank 0's) that one failed, so they stop waiting for it.
    False when the store is not there (not serving yet: try again; or gone with rank 0, whose closed
    connection the others see anyway)."""
    from strata.framework.distributed.store import FAILED_KEY, DistStoreError, TCPStore

    try:
        store = TCPStore("127.0.0.1", port, timeout=0.2)
    except DistStoreError:
        return False
    try:
        store.set(FAILED_KEY, message)
        return True
    except DistStoreError:
        return False
    finally:
        store.sock.close()


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGINT every running rank, then SIGTERM, then SIGKILL, `STOP_S` apart; returns when all exited."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        running = [p for p in procs if p.poll() is None]
        if not running:
            return
        for p in running:
            p.send_signal(sig)
        deadline = time.monotonic() + STOP_S
        for p in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=max(0.0, deadline - time.monotonic()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_model(devices: str) -> str:
    """The first model of a device list: 'h200,h100' -> 'h200', '4xh200' -> 'h200'."""
    first = devices.split(",")[0].strip()
    count, sep, rest = first.partition("x")
    return rest if sep and count.isdigit() else first


def launch(nproc: int, program: str, argv: list[str], *, as_torch: bool = False, gpu: str | None = None,
           devices: str | None = None) -> int:
    """Run `program` in `nproc` rank processes; returns 0 if all succeeded, else the first failure's status."""
    if nproc < 1:
        print(f"strata run: --nproc must be >= 1, got {nproc}", file=sys.stderr)
        return 2
    model = gpu or _first_model(devices or os.environ.get("STRATA_DEVICES") or os.environ.get("STRATA_GPU") or "h200")
    address = cluster_address()
    if address is not None:  # STRATA_CLUSTER=ray: each rank a Ray actor on the cluster's nodes
        return launch_on_ray(nproc, program, argv, model=model, as_torch=as_torch, address=address)
    port = free_port()
    run_id = uuid.uuid4().hex[:12]
    procs: list[subprocess.Popen[bytes]] = []

    def on_term(signum: int, frame: object) -> None:
        raise _Stop

    old_term = signal.signal(signal.SIGTERM, on_term)
    status = 0
    failure = ""
    try:
        for rank in range(nproc):
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                       LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       TORCHELASTIC_RUN_ID=run_id, STRATA_DEVICES=",".join([model] * nproc))
            env.pop("STRATA_GPU", None)
            cmd = [sys.executable, "-m", "strata.cli", "run", *(["--as-torch"] if as_torch else []), program, *argv]
            procs.append(subprocess.Popen(cmd, env=env, preexec_fn=die_with_parent if sys.platform == "linux"
                                          else None))
        failed_at: float | None = None
        reported = False
        while any(p.poll() is None for p in procs):
            for r, p in enumerate(procs):
                code = p.poll()
                if code not in (None, 0) and status == 0:
                    status = code if code > 0 else 128 - code
                    failed_at = time.monotonic()
                    failure = f"rank {r} exited with status {code}"
                    print(f"strata run: {failure}; stopping the others", file=sys.stderr)
            if failure and not reported:
                reported = _report_failure(port, failure)
            if failed_at is not None and time.monotonic() - failed_at > GRACE_S:
                for p in procs:
                    if p.poll() is None:
                        p.send_signal(signal.SIGTERM)
                break
            time.sleep(0.05)
        for p in procs:
            try:
                p.wait(timeout=GRACE_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    except (KeyboardInterrupt, _Stop) as exc:
        _stop(procs)
        print(f"strata run: {'interrupted' if isinstance(exc, KeyboardInterrupt) else 'terminated'}; stopped "
              f"{len(procs)} rank(s)", file=sys.stderr)
        return 130 if isinstance(exc, KeyboardInterrupt) else 143
    finally:
        signal.signal(signal.SIGTERM, old_term)
    for r, p in enumerate(procs):  # every failed rank, so the cause shows when several fail at once
        if p.returncode and f"rank {r} exited" not in failure:
            print(f"strata run: rank {r} exited with status {p.returncode}", file=sys.stderr)
            if status == 0:
                status = p.returncode if p.returncode > 0 else 128 - p.returncode
    return status
