"""The bytes between ranks that run as Ray actors (`STRATA_CLUSTER=ray`): `RayMesh` has `Mesh`'s interface
(send/recv with the call's tag checked, exchange/exchange_all, abort, close, the same errors and timeouts),
but every message is a Ray actor call instead of a TCP frame.

Each rank runs inside its actor's process (`ray_cluster.RankActor`); the actor is threaded, so while one
thread runs the rank's program, others take `deliver(generation, src, tag, payload)` calls from the peers
and put each message on the inbox of its (group generation, sender) pair here (`Endpoint`). Sending is
`peer.deliver.remote(...)`: Ray carries the payload inside the call, cut in parts under its inline limit,
up to `INLINE_MAX`, and through the object store (pulled by the receiver's node from the sender's) above. A send is
acknowledged by the call's completion; the next send to the same peer first waits for that, which keeps
one pair's messages in order (a threaded actor may run calls out of order) and turns a dead peer into an
error at the sender too.

No failure hangs: the launcher tells every rank when one exits with an error or its actor dies
(`Endpoint.peer_failed`), a receive waiting on that rank then fails naming it; a dead peer also fails the
acknowledgement of a send to it; and a peer that stalls is caught by the timeout. As with `Mesh`, any error
aborts: the peers get an abort message with the reason, and later calls fail at once.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from strata.framework.distributed.transport import _ABORT, _P2P, DistBackendError, Mesh

_CLOSED = "\0closed"  # the tag of the message a rank's mesh sends its peers when it closes
_HELLO = "\0hello"  # the tag of the meeting message every rank sends every other when its group starts
POLL_S = 0.1  # how often a waiting receive checks for a failed peer
PART_BYTES = 96 << 10  # below Ray's 100 KiB limit for an argument carried inside the call itself
INLINE_MAX = 8 << 20  # below Ray's 10 MiB limit for the arguments carried inside one call
CLOSE_WAIT_S = 5.0  # how long closing waits for the last messages to be taken, so the close comes after them


def _wire(data: bytes | memoryview) -> list[Any]:
    """A payload as the arguments of one `deliver` call, cut so Ray moves it the cheaper way: up to
    INLINE_MAX, parts of PART_BYTES that Ray carries inside the call (one message, no object store round
    trips); above, one NumPy array, which Ray puts in the object store out of band (one copy in, read in
    place by the receiver) and the receiver's node pulls from the sender's."""
    import numpy as np

    view = memoryview(data).cast("B")
    if len(view) > INLINE_MAX:
        return [np.frombuffer(view, np.uint8)]
    return [bytes(view[i:i + PART_BYTES]) for i in range(0, max(len(view), 1), PART_BYTES)]


class Endpoint:
    """This process's inboxes as rank `rank` of a job on Ray: the actor's `deliver` calls feed them.

    Args:
        rank, world_size: this rank and the job's size.
        handles: every rank's actor handle, in rank order.
    """

    def __init__(self, rank: int, world_size: int, handles: Sequence[Any]) -> None:
        self.rank, self.world_size, self.handles = rank, world_size, list(handles)
        self.failed: dict[int, str] = {}  # rank -> why the launcher reported it gone
        self.meshes: list[RayMesh] = []  # open ones, closed when the rank's program ends
        self._inboxes: dict[tuple[int, int], queue.SimpleQueue[tuple[str, Sequence[Any]]]] = {}
        self._lock = threading.Lock()
        self._generations = 0

    def inbox(self, generation: int, src: int) -> queue.SimpleQueue[tuple[str, Sequence[Any]]]:
        with self._lock:  # a peer's message may arrive before this rank made its group: created on first use
            q = self._inboxes.get((generation, src))
            if q is None:
                q = self._inboxes[(generation, src)] = queue.SimpleQueue()
            return q

    def deliver(self, generation: int, src: int, tag: str, parts: Sequence[Any]) -> None:
        self.inbox(generation, src).put((tag, parts))

    def peer_failed(self, rank: int, reason: str) -> None:
        self.failed.setdefault(rank, reason)

    def next_generation(self) -> int:
        """The number of the next group this process makes; every rank makes its groups in the same order
        (init_process_group, destroy, init again), so the numbers match across ranks."""
        with self._lock:
            self._generations += 1
            return self._generations

    def close_all(self) -> None:
        """The program ended: close what it left open, so peers waiting on it learn that it left."""
        for m in list(self.meshes):
            m.close()


_endpoint: Endpoint | None = None


def install(endpoint: Endpoint | None) -> None:
    """Make `endpoint` this process's (the rank actor does, before it runs the rank's program)."""
    global _endpoint
    _endpoint = endpoint


def current() -> Endpoint | None:
    """This process's endpoint when it runs a rank on Ray, else None (local processes use TCP)."""
    return _endpoint


class RayMesh(Mesh):
    """Mesh's interface over Ray actor calls; made by `init_process_group` in a rank running on Ray."""

    def __init__(self, endpoint: Endpoint, rank: int, world_size: int, timeout: float) -> None:  # noqa: D107
        if (rank, world_size) != (endpoint.rank, endpoint.world_size):
            raise ValueError(f"init_process_group: rank {rank} of {world_size} was asked, but this Ray actor runs "
                             f"rank {endpoint.rank} of {endpoint.world_size} (leave RANK/WORLD_SIZE as the "
                             "launcher set them)")
        import ray  # type: ignore[import-not-found, unused-ignore]

        self._ray = ray
        self.ep = endpoint
        self.rank, self.world_size, self.timeout = rank, world_size, timeout
        self.generation = endpoint.next_generation()
        self.handles = {p: h for p, h in enumerate(endpoint.handles) if p != rank}
        self.peers = {}  # Mesh's sockets: none here
        self.links = dict(self.handles)  # the peers still connected: emptied by close
        self.tag = _P2P
        self.aborted: str | None = None
        self.bytes_sent = 0
        self._unacked: dict[int, Any] = {}  # peer -> the ObjectRef of the last deliver call not yet confirmed
        self._send_locks = {p: threading.Lock() for p in self.handles}
        endpoint.meshes.append(self)
        try:
            self._meet()
        except BaseException:
            self.close()
            raise

    def _meet(self) -> None:
        """Every rank says hello to every other and waits for theirs: a rank that never joins is reported
        (by the launcher, or by the timeout) here, as Mesh reports a rank that never connects."""
        for p in self.handles:
            self.send(p, b"", _HELLO)
        missing = sorted(self.handles)
        deadline = time.monotonic() + self.timeout
        for p in list(missing):
            got = self._take(p, deadline)
            if got is None:
                failure = next((self.ep.failed[r] for r in missing if r in self.ep.failed), None)
                if failure is not None:
                    raise DistBackendError(f"rank {self.rank}: rank(s) {missing} never connected: {failure}")
                raise DistBackendError(f"rank {self.rank}: rank(s) {missing} never connected within "
                                       f"{self.timeout:g} s")
            if got[0] != _HELLO:
                raise DistBackendError(f"rank {self.rank}: rank {p} sent {got[0]!r} before meeting")
            missing.remove(p)
        # Our hellos were taken, unless a peer died: one that meets and exits (or crashes) at once may die
        # before Ray returns our delivery's result. Its hello came, so it met us; its death is a failure of
        # the work after the meeting and is reported there (the next message to or from it).
        self._confirm_taken()

    def _take(self, peer: int, deadline: float) -> tuple[str, Sequence[Any]] | None:
        """The next message from `peer`, or None at the deadline or once the launcher reported it gone
        (its messages sent before that are still taken first)."""
        q = self.ep.inbox(self.generation, peer)
        while True:
            try:
                return q.get(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
            except queue.Empty:
                if peer in self.ep.failed or time.monotonic() >= deadline:
                    return None
                self._check_sent(peer)

    def _handle(self, peer: int) -> Any:
        return self._live(self.links, peer)

    def _confirm(self, peer: int, timeout: float, *, died_ok: bool = False) -> None:
        """Wait until `peer` took the last message sent to it; an error if its actor died (unless `died_ok`)."""
        ref = self._unacked.pop(peer, None)
        if ref is None:
            return
        try:
            self._ray.get(ref, timeout=timeout)
        except self._ray.exceptions.GetTimeoutError as exc:
            raise DistBackendError(f"rank {self.rank}: rank {peer} took no message within {timeout:g} s during "
                                   f"{self.tag}") from exc
        except self._ray.exceptions.RayError as exc:
            if died_ok and isinstance(exc, self._ray.exceptions.RayActorError):
                return
            raise DistBackendError(f"rank {self.rank}: sending to rank {peer} failed ({type(exc).__name__}); did "
                                   f"rank {peer} exit or crash?") from exc

    def _confirm_taken(self) -> None:
        """Wait until every peer took our last message to it; a peer that died meanwhile is not an error here
        (see `_meet` and `call`)."""
        for p in list(self._unacked):
            self._confirm(p, self.timeout, died_ok=True)

    def _check_sent(self, peer: int) -> None:
        """While waiting on `peer`: if a message sent to it failed (its actor died), say so now."""
        ref = self._unacked.get(peer)
        if ref is not None and self._ray.wait([ref], timeout=0)[0]:
            self._confirm(peer, 0)

    @contextlib.contextmanager
    def call(self, tag: str) -> Iterator[None]:
        """Mesh.call, and a collective returns only once its last messages were taken: a Ray call still in
        flight dies with its process, so a rank that returns from a collective and exits at once (or
        crashes) would otherwise take with it the messages its peers still need to finish theirs. A peer
        that died meanwhile took them or never will; either way that is its failure, reported at the next
        message to or from it, not this collective's."""
        with super().call(tag):
            yield
            self._confirm_taken()

    def send(self, peer: int, data: bytes | memoryview, tag: str | None = None) -> None:
        t = self.tag if tag is None else tag
        h = self._handle(peer)
        with self._send_locks[peer]:
            self._confirm(peer, self.timeout)  # one pair's messages in order: the last one was taken
            self._unacked[peer] = h.deliver.remote(self.generation, self.rank, t, *_wire(data))
        self.bytes_sent += len(data)

    def recv(self, peer: int) -> bytes:
        """The next message from `peer`; its tag must be this rank's current call's."""
        self._handle(peer)
        got = self._take(peer, time.monotonic() + self.timeout)
        if got is None:
            reason = self.ep.failed.get(peer)
            if reason is not None:
                raise DistBackendError(f"rank {self.rank}: rank {peer} closed its connection during {self.tag} "
                                       f"(it exited or crashed: {reason})")
            raise DistBackendError(f"rank {self.rank}: rank {peer} sent nothing within {self.timeout:g} s during "
                                   f"{self.tag} (the collective timed out: is every rank calling the same "
                                   "collectives?)")
        tag, parts = got
        data = parts[0] if len(parts) == 1 and isinstance(parts[0], bytes) else b"".join(parts)  # one copy out
        if tag == _ABORT:
            raise DistBackendError(f"rank {self.rank}: rank {peer} aborted the process group during {self.tag}: "
                                   f"{data.decode(errors='replace')}")
        if tag == _CLOSED:
            raise DistBackendError(f"rank {self.rank}: rank {peer} closed its connection during {self.tag} "
                                   "(it destroyed its process group, exited or crashed)")
        if tag != self.tag:
            raise DistBackendError(f"rank {self.rank}: collective mismatch with rank {peer}: this rank called "
                                   f"{self.tag}, rank {peer} called {tag}")
        return data

    def exchange_all(self, peers: Sequence[int], blocks: Mapping[int, bytes | memoryview],
                     send_to: Sequence[int] | None = None) -> dict[int, bytes]:
        """Send blocks[p] to every p in `send_to` (default `peers`) and receive one message from each of
        `peers`. Sends do not block on the receiver, so no helper thread is needed."""
        try:
            for p in (peers if send_to is None else send_to):
                self.send(p, blocks[p])
            got = {p: self.recv(p) for p in peers}  # the sends are confirmed before the next ones to their peers
        except DistBackendError as exc:
            self.abort(str(exc))
            raise
        return got

    def _notify(self, tag: str, payload: bytes) -> None:
        """Best effort: tell every peer still there, after its last message was taken (briefly)."""
        for p, h in self.links.items():
            if p in self.ep.failed:
                continue
            with contextlib.suppress(DistBackendError, self._ray.exceptions.RayError):
                self._confirm(p, CLOSE_WAIT_S)
            with contextlib.suppress(Exception):
                h.deliver.remote(self.generation, self.rank, tag, payload)  # one part

    def abort(self, reason: str) -> None:
        """Tell every peer why this rank stops, then close."""
        if self.aborted is not None:
            return
        self.aborted = reason
        self._unacked.clear()  # an abort need not wait for earlier messages
        self._notify(_ABORT, reason.encode())
        self._forget()

    def close(self) -> None:
        if self.links and self.aborted is None:
            self._notify(_CLOSED, b"")
        self._forget()

    def _forget(self) -> None:
        self.links.clear()
        self._unacked.clear()
        with contextlib.suppress(ValueError):
            self.ep.meshes.remove(self)
