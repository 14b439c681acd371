"""Ranks on a Ray cluster: `STRATA_CLUSTER=ray` (a local or already running cluster) or
`STRATA_CLUSTER=ray://host:port` (Ray Client) makes `strata run --nproc N` run each rank as a Ray actor
placed on the cluster's nodes (spread over them) instead of a local process.

Each rank runs inside its actor's own process (`RankActor.run`: the program under `strata run`'s
`run_program`, with torchrun's environment), so the rank's virtual GPUs live in the actor, and its
collectives move their bytes between the actors through Ray (`ray_transport.py`): the actor is threaded,
one thread runs the program while the others take the peers' messages. Rank 0's actor picks MASTER_ADDR
(its node's address) and a free port for the rendezvous store, which init_process_group still uses as
with local processes. The actors ask Ray for no CPUs (`num_cpus=0`): the virtual GPUs are the resource,
and a small cluster must still fit N ranks.

The program file itself travels with the job (`Program`): a worker whose node has the same file at the same
path runs it there, any other (a node of a remote cluster, reached through Ray Client) writes the shipped
copy to a temporary folder and runs that. strata, and whatever the program imports besides, must be
installed on the cluster's nodes.

When a rank's program fails or its actor dies, the launcher tells the other ranks at once (their waits
on it end with an error naming it), gives them `GRACE_S` to fail on their own, then kills their actors.
Ctrl-C (or SIGTERM) kills every actor, and with it every rank. Each rank's output is printed in rank order at the end.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
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


GRACE_S = 10.0  # after a rank failed, how long the others have to fail on their own before being killed
CLIENT_TRIES = 3  # connections a Ray Client launcher attempts when the head fails to start its server


@dataclass(frozen=True)
class Program:
    """The rank program as the launcher read it: its absolute path there, its bytes and its mode bits
    (a native executable stays executable), shipped to every rank's actor."""

    path: str
    data: bytes
    mode: int

    @classmethod
    def read(cls, program: str) -> Program:
        """Read `program` on the launcher's machine (OSError if it cannot be read)."""
        path = os.path.abspath(program)
        with open(path, "rb") as f:
            data = f.read()
        return cls(path, data, os.stat(path).st_mode & 0o777)

    def place(self) -> tuple[str, str | None]:
        """Where this node runs the program: the launcher's own path when the same file is there (a local
        cluster: the program's neighbours stay importable), else a copy written to a new temporary folder.
        Returns the path and the folder to remove afterwards (None for the launcher's path)."""
        try:
            with open(self.path, "rb") as f:
                if f.read() == self.data:
                    return self.path, None
        except OSError:
            pass
        folder = tempfile.mkdtemp(prefix="strata-rank-")
        path = os.path.join(folder, os.path.basename(self.path))
        with open(path, "wb") as f:
            f.write(self.data)
        os.chmod(path, self.mode | 0o600)
        return path, folder


class RankActor:
    """One rank of a job on Ray, running in its actor's process (made a Ray actor by `launch_on_ray`)."""

    def __init__(self, rank: int, world_size: int) -> None:
        self.rank, self.world_size = rank, world_size

    def address(self) -> tuple[str, int]:
        """This node's address and a port free on it (rank 0's: the rendezvous store's)."""
        import ray  # type: ignore[import-not-found, unused-ignore]

        host = ray.util.get_node_ip_address()
        with socket.socket() as s:
            s.bind(("", 0))
            return host, int(s.getsockname()[1])

    def start(self, handles: list[Any]) -> None:
        """Every rank's actor handle, in rank order: where this rank's messages go."""
        from strata.framework.distributed import ray_transport

        ray_transport.install(ray_transport.Endpoint(self.rank, self.world_size, handles))

    def deliver(self, generation: int, src: int, tag: str, *parts: Any) -> None:
        """A message from rank `src`, in parts (runs on another thread of the actor while the program runs)."""
        from strata.framework.distributed import ray_transport

        ep = ray_transport.current()
        if ep is not None:
            ep.deliver(generation, src, tag, parts)

    def peer_failed(self, rank: int, reason: str) -> None:
        """The launcher says rank `rank` is gone: waits on it end with `reason`."""
        from strata.framework.distributed import ray_transport

        ep = ray_transport.current()
        if ep is not None:
            ep.peer_failed(rank, reason)

    def run(self, program: Program, argv: list[str], env: dict[str, str], as_torch: bool) -> tuple[int, str, str]:
        """Run the rank's program here; returns its exit status and what it printed."""
        from strata.cli import run_program
        from strata.framework.distributed import ray_transport

        os.environ.update(env)
        os.environ.pop("STRATA_GPU", None)
        out, err = io.StringIO(), io.StringIO()
        folder = None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                path, folder = program.place()
                code = run_program(path, argv, as_torch=as_torch)
            except BaseException:  # noqa: BLE001 - reported as the rank's failure, as a process's traceback is
                traceback.print_exc()
                code = 1
            finally:
                ep = ray_transport.current()
                if ep is not None:  # peers still waiting on this rank learn that it left
                    ep.close_all()
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)
        return code, out.getvalue(), err.getvalue()


def _spread(nproc: int) -> list[Any]:
    """Where each rank's actor goes: the cluster's alive nodes in turn (rank r on node r mod nodes). Ray's
    SPREAD strategy does not spread actors that ask for no resources, and a soft node affinity falls back
    to the head while a new node's resources are still being reported, so each rank is pinned to its node."""
    import ray  # type: ignore[import-not-found, unused-ignore]
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # type: ignore[import-not-found, unused-ignore]

    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
    if not nodes:
        return ["DEFAULT"] * nproc
    return [NodeAffinitySchedulingStrategy(nodes[r % len(nodes)], soft=False) for r in range(nproc)]


class _Stop(Exception):
    """The launcher was asked to stop (SIGTERM); handled as Ctrl-C is."""


def _status(rank: int, ref: Any) -> tuple[int, str, str]:
    import ray  # type: ignore[import-not-found, unused-ignore]

    try:
        code, out, err = ray.get(ref)
        return int(code), out, err
    except ray.exceptions.RayError as exc:  # the actor died (killed, or its process crashed)
        return 1, "", f"strata run: rank {rank}'s Ray actor died: {type(exc).__name__}: {exc}\n"


def _kill_all(ray: Any, ranks: list[Any]) -> None:
    """Kill every rank's actor, while connected: after a Ray Client lost its cluster, `ray.kill` would start
    a new local Ray instance (Ray's automatic `ray.init`) and leave it running."""
    if not ray.is_initialized():
        return
    for a in ranks:
        with contextlib.suppress(Exception):
            ray.kill(a)


def _connect(ray: Any, address: str) -> None:
    """`ray.init` for the launcher: '' joins a local or running cluster; 'ray://host:port' connects as a Ray
    Client, whose notice of the arguments it forwards to the cluster's driver is silenced."""
    if not address.startswith("ray://"):
        ray.init(address=address or None, ignore_reinit_error=True, log_to_driver=False)
        return
    quiet = logging.getLogger("ray.client_builder")
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    try:
        for attempt in range(1, CLIENT_TRIES + 1):
            try:
                ray.init(address=address, log_to_driver=False)
                return
            except ConnectionAbortedError:
                # the head's client proxy could not start this client's own server process (seen on a
                # loaded head: it exits before it logs anything); a new connection gets a new one
                if attempt == CLIENT_TRIES:
                    raise
                time.sleep(1.0)
    finally:
        quiet.setLevel(level)


def launch_on_ray(nproc: int, program: str, argv: list[str], *, model: str, as_torch: bool = False,
                  address: str = "", timeout: float | None = None) -> int:
    """Run `program` as `nproc` ranks, each in a Ray actor; print each rank's output in rank order; return
    0 or the first failing rank's status (130 on Ctrl-C, 143 on SIGTERM)."""
    import ray  # type: ignore[import-not-found, unused-ignore]

    try:
        shipped = Program.read(program)
    except OSError as exc:
        print(f"strata run: cannot read {program}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    started_here = not ray.is_initialized()
    if started_here:
        try:
            _connect(ray, address)
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, ValueError, RuntimeError, ...
            where = address or "the local or running cluster (ray.init())"
            print(f"strata run: could not connect to Ray at {where}: {type(exc).__name__}: {exc}", file=sys.stderr)
            if address.startswith("ray://"):
                print("strata run: Ray Client needs `pip install 'ray[client]'`, the cluster's Ray and Python "
                      "versions, and, on a cluster with token authentication, RAY_AUTH_MODE=token and its token "
                      "(RAY_AUTH_TOKEN or ~/.ray/auth_token)", file=sys.stderr)
            return 1
    ranks: list[Any] = []
    results: dict[int, tuple[int, str, str]] = {}
    status, failure = 0, ""

    terminated: list[int] = []

    def on_term(signum: int, frame: object) -> None:  # noted, not raised: Ray's calls must not be cut short
        terminated.append(signum)

    main_thread = threading.current_thread() is threading.main_thread()
    old_term = signal.signal(signal.SIGTERM, on_term) if main_thread else None
    try:
        # threaded: one thread runs the program, the others take the peers' messages
        actor = ray.remote(num_cpus=0, max_concurrency=nproc + 3)(RankActor)  # type: ignore[call-overload]
        ranks = [actor.options(scheduling_strategy=where).remote(r, nproc) for r, where in enumerate(_spread(nproc))]
        master, port = ray.get(ranks[0].address.remote())
        ray.get([a.start.remote(ranks) for a in ranks])
        run_id = uuid.uuid4().hex[:12]
        pending = {}
        # the launcher's strata settings (kernel timeout, trace, ...) reach the ranks, as a local launch's
        # environment does; the actors' own environment is their node's Ray worker's
        settings = {k: v for k, v in os.environ.items()
                    if k.startswith("STRATA_") and k not in ("STRATA_GPU", "STRATA_DEVICES", "STRATA_CLUSTER")}
        for rank, a in enumerate(ranks):
            env = {**settings, "RANK": str(rank), "LOCAL_RANK": "0", "WORLD_SIZE": str(nproc), "LOCAL_WORLD_SIZE": "1",
                   "GROUP_RANK": str(rank), "MASTER_ADDR": master, "MASTER_PORT": str(port),
                   "TORCHELASTIC_RUN_ID": run_id, "STRATA_DEVICES": model, "STRATA_CLUSTER": "local"}
            pending[a.run.remote(shipped, list(argv), env, as_torch)] = rank
        start = time.monotonic()
        failed_at: float | None = None
        while pending:
            if terminated:
                raise _Stop
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
            for ref in done:
                rank = pending.pop(ref)
                results[rank] = _status(rank, ref)
                code = results[rank][0]
                if not code:
                    continue
                why = f"rank {rank} exited with status {code}"
                for other in pending.values():  # their waits on this rank end now, naming it
                    ranks[other].peer_failed.remote(rank, why)
                if not status:
                    status, failure, failed_at = (code if code > 0 else 128 - code), why, time.monotonic()
            now = time.monotonic()
            if pending and ((failed_at is not None and now - failed_at > GRACE_S)
                            or (timeout is not None and now - start > timeout)):
                for rank in pending.values():
                    ray.kill(ranks[rank])
                    results[rank] = (-int(signal.SIGKILL), "", "")
                status = status or 1
                break
    except (KeyboardInterrupt, _Stop) as exc:  # Ctrl-C or SIGTERM: every rank stops with its actor
        _kill_all(ray, ranks)
        interrupted = isinstance(exc, KeyboardInterrupt)
        print(f"strata run: {'interrupted' if interrupted else 'terminated'}; stopped {len(ranks)} rank(s)",
              file=sys.stderr)
        return 130 if interrupted else 143
    except ConnectionError as exc:  # a Ray Client that lost the cluster (the head died, the network broke)
        why, where = str(exc).rstrip("."), address or "ray.init()"
        print(f"strata run: lost the connection to the Ray cluster at {where}: {why}; the ranks' actors end with "
              "this job when the cluster notices the client is gone", file=sys.stderr)
        return 1
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, old_term)
        _kill_all(ray, ranks)  # each job's actors go with it: a rank's process never outlives its job
        if started_here and ray.is_initialized():
            ray.shutdown()
    for rank in sorted(results):
        code, out, err = results[rank]
        sys.stdout.write(out)
        sys.stderr.write(err)
        if code:
            print(f"strata run: rank {rank} (Ray actor) exited with status {code}", file=sys.stderr)
    if failure:
        print(f"strata run: {failure}", file=sys.stderr)
    return status
