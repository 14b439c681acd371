"""Ranks on a Ray cluster: `STRATA_CLUSTER=ray` (a local or already running cluster) or
`STRATA_CLUSTER=ray://host:port` (Ray Client) makes `strata run --nproc N` place each rank on the
cluster as a Ray actor instead of a local process.

Each actor is a handle on one node: it runs its rank as a child process there (`strata run script.py`
with torchrun's environment), so the rank has its own virtual GPUs on that node, and returns the
exit status and output. Rank 0's actor picks MASTER_ADDR (its node's address) and a free port, and
the ranks meet there as with local processes; the collectives' bytes then travel between the nodes
over the same TCP mesh (`transport.py`), as NCCL's socket transport moves them between hosts. The
actors ask Ray for no CPUs (`num_cpus=0`): the virtual GPUs are the resource, and a small cluster
must still fit N ranks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import uuid
from typing import Any

from strata import config


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: a rank process gets SIGTERM when its parent (the launcher, or a Ray actor) dies, however it
    dies (prctl PR_SET_PDEATHSIG), so no rank outlives what started it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def cluster_address() -> str | None:
    """The Ray address STRATA_CLUSTER asks for: None (local processes), 'auto'/'' (local or running
    cluster: `ray.init()`), or a `ray://host:port` client address."""
    return config.settings().cluster


def _rank_actor() -> Any:
    import ray  # type: ignore[import-not-found, unused-ignore]

    @ray.remote(num_cpus=0)
    class Rank:
        """One rank's placement on a node of the cluster."""

        def address(self) -> tuple[str, int]:
            host = ray.util.get_node_ip_address()
            with socket.socket() as s:
                s.bind(("", 0))
                return host, int(s.getsockname()[1])

        def run(self, cmd: list[str], env: dict[str, str], timeout: float | None) -> tuple[int, str, str]:
            # the rank dies with its actor (ray.kill, Ctrl-C of the driver), never outlives it
            p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout,
                               preexec_fn=die_with_parent if sys.platform == "linux" else None)
            return p.returncode, p.stdout, p.stderr

    return Rank


def launch_on_ray(nproc: int, program: str, argv: list[str], *, model: str, as_torch: bool = False,
                  address: str = "", timeout: float | None = None) -> int:
    """Run `program` as `nproc` ranks, each a Ray actor's child process; print each rank's output in
    rank order; return 0 or the first failing rank's status."""
    import ray  # type: ignore[import-not-found, unused-ignore]

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address or None, ignore_reinit_error=True, log_to_driver=False)
    ranks: list[Any] = []
    try:
        actor = _rank_actor()
        ranks = [actor.remote() for _ in range(nproc)]
        master, port = ray.get(ranks[0].address.remote())
        run_id = uuid.uuid4().hex[:12]
        cmd = [sys.executable, "-m", "strata.cli", "run", *(["--as-torch"] if as_torch else []),
               os.path.abspath(program), *argv]
        pending = []
        for rank, a in enumerate(ranks):
            env = {"RANK": str(rank), "LOCAL_RANK": "0", "WORLD_SIZE": str(nproc), "LOCAL_WORLD_SIZE": "1",
                   "GROUP_RANK": str(rank), "MASTER_ADDR": master, "MASTER_PORT": str(port),
                   "TORCHELASTIC_RUN_ID": run_id, "STRATA_DEVICES": model, "STRATA_CLUSTER": "local"}
            pending.append(a.run.remote(cmd, env, timeout))
        results = ray.get(pending)
    except BaseException:  # Ctrl-C or a Ray error: stop every rank's actor (its rank process dies with it)
        for a in ranks:
            with contextlib.suppress(Exception):
                ray.kill(a)
        raise
    finally:
        if started_here:
            ray.shutdown()
    status = 0
    for rank, (code, out, err) in enumerate(results):
        sys.stdout.write(out)
        sys.stderr.write(err)
        if code and not status:
            status = code if code > 0 else 128 - code
            print(f"strata run: rank {rank} (Ray actor) exited with status {code}", file=sys.stderr)
    return status
