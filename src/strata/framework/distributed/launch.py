"""`strata run --nproc N script.py`: torchrun's role for one machine. Starts N processes, one per rank,
each running the script under `strata run` with the environment torchrun sets: RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR (127.0.0.1), MASTER_PORT (a free port), TORCHELASTIC_RUN_ID.

Each process has its own virtual GPUs: STRATA_DEVICES lists N devices of the chosen model, so device
LOCAL_RANK exists in every process (`torch.cuda.set_device(local_rank)` works) and each rank uses its
own. When a rank fails, the others are given `GRACE_S` to fail on their own (their next collective sees
the closed connection and raises), then are terminated; the launcher returns the first failure's
exit status.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

GRACE_S = 10.0


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
    from strata.framework.distributed.ray_cluster import cluster_address, launch_on_ray

    address = cluster_address()
    if address is not None:  # STRATA_CLUSTER=ray: each rank a Ray actor on the cluster's nodes
        return launch_on_ray(nproc, program, argv, model=model, as_torch=as_torch, address=address)
    port = free_port()
    run_id = uuid.uuid4().hex[:12]
    procs: list[subprocess.Popen[bytes]] = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   TORCHELASTIC_RUN_ID=run_id, STRATA_DEVICES=",".join([model] * nproc))
        env.pop("STRATA_GPU", None)
        cmd = [sys.executable, "-m", "strata.cli", "run", *(["--as-torch"] if as_torch else []), program, *argv]
        procs.append(subprocess.Popen(cmd, env=env))
    status = 0
    failed_at: float | None = None
    try:
        while any(p.poll() is None for p in procs):
            for r, p in enumerate(procs):
                code = p.poll()
                if code not in (None, 0) and status == 0:
                    status = code if code > 0 else 128 - code
                    failed_at = time.monotonic()
                    print(f"strata run: rank {r} exited with status {code}; stopping the others", file=sys.stderr)
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
    except KeyboardInterrupt:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait()
        return 130
    if status == 0:
        for r, p in enumerate(procs):
            if p.returncode:
                print(f"strata run: rank {r} exited with status {p.returncode}", file=sys.stderr)
                return p.returncode if p.returncode > 0 else 128 - p.returncode
    return status
