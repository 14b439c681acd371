"""The bytes between ranks' processes: one TCP connection per pair of ranks (a full mesh), set up through
the store. Each process has its own virtual GPU(s), so a collective between processes moves each chunk
device -> host -> socket -> host -> device, as NCCL's network transport moves it through a NIC between
nodes; the combining itself stays on the device (`algorithms.py`).

Every message carries the tag of the call that sent it (`Mesh.call`: the collective, its sequence number
in its group, its sizes), and the receiver checks it against its own call, so ranks that call different
collectives (rank 0 all_reduce while rank 1 broadcasts) get an error naming both calls instead of
reading each other's bytes as their own (torch's TORCH_DISTRIBUTED_DEBUG=DETAIL check, always on here).

No failure hangs: a peer that dies closes its sockets, so the others fail at their next receive with an
error naming it; a peer that stalls is caught by the socket timeout. After any error the mesh aborts
(NCCL's ncclCommAbort on an async error): it sends every peer an abort message carrying the reason and
closes, so ranks still waiting on this one fail at once, and later calls fail immediately.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TypeVar

from strata.framework.distributed.store import TCPStore, recv_exact

_LEN = struct.Struct("!Q")
_FRAME = struct.Struct("!QI")  # payload bytes, tag bytes
_ABORT = "\0abort"  # the tag of an abort message; its payload is the reason
_P2P = "send/recv"
_Link = TypeVar("_Link")
MAX_TAG = 1 << 16  # a longer tag means the stream is not frames of this mesh any more
ACCEPT_POLL_S = 0.2  # how often a rank waiting for lower ranks to connect checks the store for a failed rank


class DistBackendError(RuntimeError):
    """A collective failed between processes: a peer crashed, closed its connection, timed out, called
    another collective, or aborted the group (torch.distributed.DistBackendError)."""


class Mesh:
    """Connections from this rank to every other rank of the job."""

    def __init__(self, store: TCPStore, rank: int, world_size: int, timeout: float, host: str = "127.0.0.1") -> None:
        self.rank, self.world_size, self.timeout = rank, world_size, timeout
        self.peers: dict[int, socket.socket] = {}
        self.tag = _P2P
        self.aborted: str | None = None
        self.bytes_sent = 0
        self._send_locks: dict[int, threading.Lock] = {}  # one frame at a time per socket (sends vs abort)
        listener = socket.create_server((host, 0), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        listener.settimeout(min(timeout, ACCEPT_POLL_S))
        try:
            store.set(f"strata/mesh/{rank}", f"{host}:{listener.getsockname()[1]}")
            for peer in range(rank + 1, world_size):  # connect up, accept from below: no pair twice
                addr, port = store.get(f"strata/mesh/{peer}").decode().rsplit(":", 1)
                s = socket.create_connection((addr, int(port)), timeout=timeout)
                s.sendall(_LEN.pack(rank))
                self.peers[peer] = s
            self._accept(listener, store)
        except BaseException:
            self.close()
            raise
        finally:
            listener.close()
        for peer, s in self.peers.items():
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.settimeout(timeout)
            self._send_locks[peer] = threading.Lock()

    def _accept(self, listener: socket.socket, store: TCPStore) -> None:
        """Accept the lower ranks' connections; a rank the launcher reported failed, or the timeout, ends
        the wait with an error naming the ranks missing."""
        deadline = time.monotonic() + self.timeout
        while len(self.peers) < self.world_size - 1:
            try:
                s, _ = listener.accept()
            except TimeoutError:
                missing = sorted(set(range(self.rank)) - set(self.peers))
                failure = store.failure()
                if failure is not None:
                    raise DistBackendError(f"rank {self.rank}: rank(s) {missing} never connected: {failure}") from None
                if time.monotonic() > deadline:
                    raise DistBackendError(f"rank {self.rank}: rank(s) {missing} never connected within "
                                           f"{self.timeout:g} s") from None
                continue
            s.settimeout(self.timeout)
            (peer,) = _LEN.unpack(recv_exact(s, _LEN.size))
            self.peers[int(peer)] = s

    @contextlib.contextmanager
    def call(self, tag: str) -> Iterator[None]:
        """Messages sent inside carry `tag`, and messages received must carry it too. A DistBackendError
        inside aborts the mesh (the peers learn the reason) before it propagates."""
        if self.aborted is not None:
            raise DistBackendError(f"rank {self.rank}: the process group was aborted by an earlier error "
                                   f"({self.aborted}); destroy it and initialize a new one")
        self.tag = tag
        try:
            yield
        except DistBackendError as exc:
            self.abort(str(exc))
            raise
        finally:
            self.tag = _P2P

    def _sock(self, peer: int) -> socket.socket:
        return self._live(self.peers, peer)

    def _live(self, links: Mapping[int, _Link], peer: int) -> _Link:
        """`peer`'s connection among `links`; DistBackendError if the group was aborted or has none (a
        transport's own table of connections: sockets here, actor handles on Ray)."""
        if self.aborted is not None:
            raise DistBackendError(f"rank {self.rank}: the process group was aborted ({self.aborted})")
        link = links.get(peer)
        if link is None:
            raise DistBackendError(f"rank {self.rank}: no connection to rank {peer} (the group was destroyed?)")
        return link

    def send(self, peer: int, data: bytes | memoryview, tag: str | None = None) -> None:
        t = (self.tag if tag is None else tag).encode()
        sock = self._sock(peer)
        try:
            with self._send_locks[peer]:
                sock.sendall(_FRAME.pack(len(data), len(t)) + t)
                sock.sendall(data)
        except OSError as exc:
            raise DistBackendError(f"rank {self.rank}: sending to rank {peer} failed ({exc}); did rank {peer} "
                                   "exit or crash?") from exc
        self.bytes_sent += len(data)

    def recv(self, peer: int) -> bytes:
        """The next message from `peer`; its tag must be this rank's current call's."""
        sock = self._sock(peer)
        try:
            n, k = _FRAME.unpack(recv_exact(sock, _FRAME.size))
            if k > MAX_TAG:
                raise DistBackendError(f"rank {self.rank}: the stream from rank {peer} is corrupt (a tag of {k} "
                                       f"bytes) during {self.tag}")
            tag = recv_exact(sock, k).decode(errors="replace")
            data = recv_exact(sock, n)
        except TimeoutError as exc:
            raise DistBackendError(f"rank {self.rank}: rank {peer} sent nothing within {self.timeout:g} s during "
                                   f"{self.tag} (the collective timed out: is every rank calling the same "
                                   "collectives?)") from exc
        except (ConnectionError, OSError) as exc:
            raise DistBackendError(f"rank {self.rank}: rank {peer} closed its connection during {self.tag} "
                                   "(it exited or crashed)") from exc
        if tag == _ABORT:
            raise DistBackendError(f"rank {self.rank}: rank {peer} aborted the process group during {self.tag}: "
                                   f"{data.decode(errors='replace')}")
        if tag != self.tag:
            raise DistBackendError(f"rank {self.rank}: collective mismatch with rank {peer}: this rank called "
                                   f"{self.tag}, rank {peer} called {tag}")
        return data

    def exchange(self, send_to: int, data: bytes | memoryview, recv_from: int) -> bytes:
        """Send to one peer while receiving from another (a ring step), so neither side blocks the other."""
        return self.exchange_all([recv_from], {send_to: data}, [send_to])[recv_from]

    def exchange_all(self, peers: Sequence[int], blocks: Mapping[int, bytes | memoryview],
                     send_to: Sequence[int] | None = None) -> dict[int, bytes]:
        """Send blocks[p] to every p in `send_to` (default `peers`) and receive one message from each of
        `peers` (all-to-all); the sends run on a helper thread so no pair waits on the other."""
        error: list[BaseException] = []
        tag = self.tag

        def push() -> None:
            try:
                for p in (peers if send_to is None else send_to):
                    self.send(p, blocks[p], tag)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
                error.append(exc)

        t = threading.Thread(target=push, name="strata-mesh-send", daemon=True)
        t.start()
        try:
            got = {p: self.recv(p) for p in peers}
        except DistBackendError as exc:
            self.abort(str(exc))  # closes the sockets, so a blocked send ends too
            t.join(self.timeout)
            raise
        t.join(self.timeout)
        if error:
            raise error[0]
        return got

    def abort(self, reason: str) -> None:
        """Tell every peer why this rank stops (best effort, briefly), then close every connection."""
        if self.aborted is not None:
            return
        self.aborted = reason
        payload = reason.encode()
        t = _ABORT.encode()
        for peer, s in self.peers.items():
            lock = self._send_locks.get(peer)
            if lock is None or not lock.acquire(timeout=0.1):  # a send is mid-frame: closing tells enough
                continue
            try:
                with contextlib.suppress(OSError):
                    s.settimeout(0.5)
                    s.sendall(_FRAME.pack(len(payload), len(t)) + t + payload)
            finally:
                lock.release()
        self.close()

    def close(self) -> None:
        for s in self.peers.values():
            with contextlib.suppress(OSError):
                s.close()
        self.peers.clear()
