"""Communicators: the ranks of one collective group, how they meet, and how a call waits for the others.

A `UniqueId` names a clique (ncclGetUniqueId); each rank joins it with `comm_init_rank` on its own
device, or `comm_init_all` makes every rank of a list of devices at once (ncclCommInitAll). Ranks are
in-process: each is a virtual GPU of this process, and every rank's kernels may read every other
rank's memory through unified addresses (the communicator enables peer access between all its
devices, as NCCL's P2P transport does). Several threads may each drive one rank, or one thread may
drive several inside `group_start()` / `group_end()`.

A call "posts" itself to the clique; when every rank has posted the same collective, the thread
that posted last launches the device work on every rank's stream (`collectives.py`) and wakes the
others. A call outside a group waits for that (a rank that never comes is a timeout error naming
it, never a hang); a call inside a group is posted at `group_end`, which waits for all of them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from strata import trace
from strata.cuda import Device, DeviceArray, current_device
from strata.libs.nccl.types import NcclError, NcclTimeoutError
from strata.runtime import Event, Stream

DEFAULT_TIMEOUT = 60.0  # seconds a rank waits for the others (torch.distributed's default is longer)
UNIQUE_ID_BYTES = 128  # sizeof(ncclUniqueId)


@dataclass(frozen=True)
class UniqueId:
    """ncclUniqueId: 128 opaque bytes naming one clique; pass it to every rank."""

    internal: bytes

    def __repr__(self) -> str:
        return f"UniqueId({self.internal[:8].hex()}...)"


def get_unique_id() -> UniqueId:
    """ncclGetUniqueId: a fresh id for a new communicator."""
    return UniqueId(os.urandom(UNIQUE_ID_BYTES))


@dataclass
class Op:
    """One collective (or one send/recv pair) as the ranks post it. `calls[rank]` is each rank's call;
    `error` is set for every rank if the calls disagree or the clique aborts; `done` once the device
    work of every rank is queued. After completion `model` holds the modeled figures."""

    kind: str
    key: Any
    needed: int
    calls: dict[int, Any] = field(default_factory=dict)
    error: BaseException | None = None
    done: bool = False
    model: Any = None
    launches: int = 0  # kernel launches queued over all ranks
    copies: int = 0  # peer copies queued on the copy engines over all ranks


class Clique:
    """The shared state of one communicator's ranks: who joined, the collectives in flight."""

    def __init__(self, uid: UniqueId, nranks: int, timeout: float) -> None:
        self.uid = uid
        self.nranks = nranks
        self.timeout = timeout
        self.cond = threading.Condition()
        self.comms: dict[int, Communicator] = {}
        self.ops: dict[Any, Op] = {}
        self.error: BaseException | None = None
        self.peers_enabled = False

    def check(self) -> None:
        if self.error is not None:
            raise self.error


class IssueOrder:
    """One rank's issue order (NCCL's rule: the operations of a communicator run one after another, whatever
    streams they are on, so the communicator's scratch buffer and connections are never used by two at once).

    Calls are numbered in units: a call outside a group is a unit of its own, the calls of one group are one
    unit (`unit_of`, at call time). On the device, the first work of each unit waits for the end of every
    operation of the previous unit (`waits`: events, so barrier packets on the call's stream, never a host
    wait), and a collective also for the previous collective of its own unit (collectives of one group on two
    streams would share the scratch too; sends and receives of a group run side by side, as NCCL runs them in
    one launch). `done` records where each operation ended. A rank posts a unit's calls only after the previous
    unit's have all been queued (group_end and a lone call wait for that), so the events `waits` returns are
    always recorded ones.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()  # ranks' operations may be queued by several threads at once
        self.issued = 0  # units numbered at call time
        self.group: int | None = None  # the group of the last unit numbered, if it was a group
        self.unit = 0  # the unit whose operations are being queued now
        self.before: list[Event] = []  # where the operations of the unit before it ended
        self.current: list[Event] = []  # where this unit's operations queued so far end
        self.last_collective: Event | None = None  # ... and where its last collective ends

    def unit_of(self, group: int | None) -> int:
        """The unit of a call made now, inside `group` (current_group()) or outside any."""
        with self.lock:
            if group is None or group != self.group:
                self.issued += 1
            self.group = group
            return self.issued

    def waits(self, unit: int, collective: bool) -> list[Event]:
        """The events an operation of `unit` waits for before it starts."""
        with self.lock:
            if unit != self.unit:
                self.before = self.current or self.before
                self.current, self.last_collective, self.unit = [], None, unit
            out = list(self.before)
            if collective and self.last_collective is not None:
                out.append(self.last_collective)
            return out

    def done(self, unit: int, end: Event, collective: bool) -> None:
        """An operation of `unit` ends at `end` (an event recorded after it on its stream)."""
        with self.lock:
            if unit == self.unit:
                self.current.append(end)
                if collective:
                    self.last_collective = end


_CLIQUES: dict[bytes, Clique] = {}
_CLIQUES_LOCK = threading.Lock()


class Communicator:
    """ncclComm_t: one rank of a clique, on one device, with its default stream.

    Attributes:
        rank, nranks: this rank and how many there are (ncclCommUserRank / ncclCommCount).
        device: the strata.cuda.Device this rank runs on (ncclCommCuDevice).
    """

    def __init__(self, clique: Clique, rank: int, device: Device) -> None:
        self.clique = clique
        self.rank = rank
        self.nranks = clique.nranks
        self.device = device
        self.seq = 0  # collectives this rank has posted
        self.p2p_seq: dict[tuple[str, int], int] = {}  # ('send'|'recv', peer) -> count posted
        self.destroyed = False
        self._scratch: DeviceArray | None = None
        self.order = IssueOrder()

    def count(self) -> int:
        """ncclCommCount."""
        return self.nranks

    def user_rank(self) -> int:
        """ncclCommUserRank."""
        return self.rank

    def cu_device(self) -> int:
        """ncclCommCuDevice."""
        return self.device.index

    def scratch(self, nbytes: int) -> int:
        """A device buffer of at least `nbytes` on this rank's device (reduce's partial sums)."""
        if self._scratch is None or self._scratch.nbytes < nbytes:
            # the old buffer is dropped, not freed: queued collectives may still use it, and cudaFree would
            # wait for the whole device here (where a kernel may be waiting on this host thread); a dropped
            # array is freed once the device is idle
            self._scratch = DeviceArray((max(nbytes, 256),), "uint8", self.device)
        return self._scratch.ptr

    def check(self, api: str) -> None:
        if self.destroyed:
            raise NcclError("ncclInvalidArgument", f"[{api}] rank {self.rank}: the communicator was destroyed")
        self.clique.check()

    def stream_of(self, stream: Any, api: str) -> Stream:
        """The stream a call runs on: `stream`, which must be of this rank's device, or its default."""
        if stream is None:
            return self.device.context.stream(None)
        if not isinstance(stream, Stream):
            raise NcclError("ncclInvalidArgument", f"[{api}] stream must be a strata.cuda.Stream or None, got "
                            f"{type(stream).__name__}")
        if stream.context is not self.device.context:
            raise NcclError("ncclInvalidUsage", f"[{api}] rank {self.rank}: the stream belongs to another device "
                            f"than the communicator's (device {self.device.index})")
        return stream

    def __repr__(self) -> str:
        return f"<strata.libs.nccl.Communicator rank {self.rank}/{self.nranks} on device {self.device.index}>"


def _as_device(device: Device | int | None) -> Device:
    if device is None:
        return current_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, bool) or not isinstance(device, int):
        raise NcclError("ncclInvalidArgument", f"device must be a strata.cuda.Device or an index, got {device!r}")
    return Device(device)


def comm_init_rank(nranks: int, unique_id: UniqueId, rank: int, device: Device | int | None = None, *,
                   timeout: float = DEFAULT_TIMEOUT) -> Communicator:
    """ncclCommInitRank: join clique `unique_id` as `rank` of `nranks` on `device` (default: current).

    Outside a group, waits until all `nranks` ranks joined (NcclTimeoutError after `timeout` seconds,
    naming the ranks missing); inside `group_start()`/`group_end()` the wait happens at `group_end`.

    Raises:
        NcclError: ncclInvalidArgument (nranks < 1, rank out of range, a bad id, ranks disagreeing on
            nranks), ncclInvalidUsage (a rank or a device joined twice), ncclSystemError (two devices
            with no peer path between them).
    """
    if not isinstance(unique_id, UniqueId):
        raise NcclError("ncclInvalidArgument", f"[comm_init_rank] unique_id must come from get_unique_id(), "
                        f"got {type(unique_id).__name__}")
    if isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1:
        raise NcclError("ncclInvalidArgument", f"[comm_init_rank] nranks must be an int >= 1, got {nranks!r}")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < nranks:
        raise NcclError("ncclInvalidArgument", f"[comm_init_rank] rank must be in [0, {nranks}), got {rank!r}")
    dev = _as_device(device)
    with _CLIQUES_LOCK:
        clique = _CLIQUES.get(unique_id.internal)
        if clique is None:
            clique = _CLIQUES[unique_id.internal] = Clique(unique_id, nranks, timeout)
    with clique.cond:
        problem: NcclError | None = None
        if clique.nranks != nranks:
            first = min(clique.comms) if clique.comms else "an earlier rank"
            problem = NcclError("ncclInvalidArgument", f"[comm_init_rank] rank {rank} passed nranks={nranks} but "
                                f"rank {first} passed nranks={clique.nranks}")
        elif rank in clique.comms:
            problem = NcclError("ncclInvalidUsage", f"[comm_init_rank] rank {rank} joined this communicator twice")
        for other in clique.comms.values():
            if problem is None and other.device is dev:
                problem = NcclError("ncclInvalidUsage", f"[comm_init_rank] duplicate GPU: ranks {other.rank} and "
                                    f"{rank} both use device {dev.index}")
        if problem is not None:  # the communicator cannot form: the ranks already waiting learn it too
            clique.error = problem
            clique.cond.notify_all()
            raise problem
        comm = Communicator(clique, rank, dev)
        clique.comms[rank] = comm
        with trace.span("L4", "ncclCommInitRank", rank=rank, nranks=nranks, device=dev.index):
            if len(clique.comms) == nranks:
                _connect(clique)
                clique.cond.notify_all()
    from strata.libs.nccl.group import deferred_wait  # one package; group.py imports this module

    deferred_wait(lambda: _wait_joined(clique, rank))
    return comm


def _wait_joined(clique: Clique, rank: int) -> None:
    deadline = time.monotonic() + clique.timeout
    with clique.cond:
        while len(clique.comms) < clique.nranks and clique.error is None:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(range(clique.nranks)) - set(clique.comms))
                raise NcclTimeoutError(f"[comm_init_rank] rank {rank}: rank(s) {missing} of {clique.nranks} never "
                                       f"joined the communicator within {clique.timeout:g} s")
            clique.cond.wait(min(left, 0.5))
        clique.check()


def _connect(clique: Clique) -> None:
    """Every device may read every other's memory (NCCL's P2P transport), if the topology allows."""
    comms = list(clique.comms.values())
    for a in comms:
        for b in comms:
            if a is b:
                continue
            if not a.device.can_access_peer(b.device):
                clique.error = NcclError(
                    "ncclSystemError", f"[comm_init] no peer path between device {a.device.index} "
                    f"({a.device.spec.name}, rank {a.rank}) and device {b.device.index} ({b.device.spec.name}, "
                    f"rank {b.rank}): they share no NVLink/xGMI fabric")
                raise clique.error
            mem, peer = a.device.file.gpu.memory, b.device.file.gpu.memory
            if peer.slot not in mem.peers:
                a.device.enable_peer_access(b.device)
    clique.peers_enabled = True


def comm_init_all(devices: Sequence[Device | int] | int, *, timeout: float = DEFAULT_TIMEOUT) -> list[Communicator]:
    """ncclCommInitAll: one communicator per device of `devices` (or of the first `devices` devices),
    rank i on devices[i], from this one thread.

    Example:
        >>> comms = comm_init_all([0])
        >>> comms[0].rank, comms[0].nranks
        (0, 1)
        >>> comm_destroy(comms[0])
    """
    listed: Sequence[Device | int] = list(range(devices)) if isinstance(devices, int) else devices
    devs = [_as_device(d) for d in listed]
    if not devs:
        raise NcclError("ncclInvalidArgument", "[comm_init_all] needs at least one device")
    uid = get_unique_id()
    from strata.libs.nccl.group import group_end, group_start

    group_start()
    try:
        comms = [comm_init_rank(len(devs), uid, r, d, timeout=timeout) for r, d in enumerate(devs)]
    except BaseException:
        group_end()  # the clique carries the error: the ranks already posted fail at once
        raise
    group_end()
    return comms


def comm_destroy(comm: Communicator) -> None:
    """ncclCommDestroy: free this rank's resources; later calls on it raise ncclInvalidArgument."""
    if comm.destroyed:
        raise NcclError("ncclInvalidArgument", f"[comm_destroy] rank {comm.rank}: already destroyed")
    comm.destroyed = True
    if comm._scratch is not None:
        comm._scratch.free()
        comm._scratch = None
    clique = comm.clique
    with clique.cond:
        clique.comms.pop(comm.rank, None)
        if not clique.comms:
            with _CLIQUES_LOCK:
                _CLIQUES.pop(clique.uid.internal, None)


def comm_abort(comm: Communicator) -> None:
    """ncclCommAbort: stop this communicator at once; every rank waiting in (or later calling) a
    collective on it gets ncclRemoteError instead of hanging."""
    clique = comm.clique
    with clique.cond:
        if clique.error is None:
            clique.error = NcclError("ncclRemoteError", f"rank {comm.rank} aborted the communicator")
        for op in clique.ops.values():
            if op.error is None and not op.done:
                op.error = clique.error
        clique.cond.notify_all()
    comm.destroyed = True


def post(comm: Communicator, key: Any, kind: str, needed: int, call: Any, rank_key: int,
         agree: Callable[[Any, Any], str | None], execute: Callable[[Op], None]) -> Op:
    """Post `call` of `comm` into the op `key` of its clique. `agree(first, call)` returns a message when
    the two calls disagree (then the op fails for every rank); the poster that completes the op runs
    `execute(op)` (launching all ranks' work). Returns the op; `wait(op)` waits for it."""
    clique = comm.clique
    with clique.cond:
        clique.check()
        op = clique.ops.get(key)
        if op is None:
            op = clique.ops[key] = Op(kind, key, needed)
        if op.error is None:
            for other in op.calls.values():
                problem = agree(other, call)
                if problem is not None:
                    op.error = NcclError("ncclInvalidUsage", f"[{kind}] mismatch between ranks: {problem} "
                                         f"({describe(other)}; {describe(call)})")
                    clique.cond.notify_all()
                    break
        op.calls[rank_key] = call
        if op.error is not None:
            if len(op.calls) >= needed:
                clique.ops.pop(key, None)
            raise op.error
        ready = len(op.calls) == needed
        if ready:
            clique.ops.pop(key, None)
    if ready:
        try:
            execute(op)
        except BaseException as exc:
            op.error = exc
            raise
        finally:
            with clique.cond:
                op.done = True
                clique.cond.notify_all()
    return op


def wait(comm: Communicator, op: Op, rank: int) -> None:
    """Wait until `op`'s device work is queued on every rank, or raise its error / a timeout naming the
    ranks that never posted."""
    clique = comm.clique
    deadline = time.monotonic() + clique.timeout
    with clique.cond:
        while not op.done and op.error is None and clique.error is None:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(_ranks_expected(op, clique)) - set(op.calls))
                op.error = NcclTimeoutError(
                    f"[{op.kind}] rank {rank}: rank(s) {missing} never called {op.kind} (call #{_seq_of(op)}) "
                    f"within {clique.timeout:g} s; one thread driving several ranks must put the calls between "
                    "group_start() and group_end()")
                clique.ops.pop(op.key, None)
                clique.cond.notify_all()
                break
            clique.cond.wait(min(left, 0.5))
        err = op.error or (clique.error if not op.done else None)
    if err is not None:
        raise err


def _ranks_expected(op: Op, clique: Clique) -> list[int]:
    if op.kind in ("send", "recv", "send_recv"):
        return list(op.key[1:3])
    return list(range(clique.nranks))


def _seq_of(op: Op) -> Any:
    return op.key[-1] if isinstance(op.key, tuple) else op.key


def describe(call: Any) -> str:
    """A call's arguments as an error message shows them."""
    fields = getattr(call, "describe", None)
    return fields() if callable(fields) else repr(call)
