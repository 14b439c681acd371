"""The bytes between ranks' processes: one TCP connection per pair of ranks (a full mesh), set up through
the store. Each process has its own virtual GPU(s), so a collective between processes moves each chunk
device -> host -> socket -> host -> device, as NCCL's network transport moves it through a NIC between
nodes; the combining itself stays on the device (`algorithms.py`).

A peer that dies closes its sockets, so the others fail at their next receive with an error naming it
(never a hang); a peer that stalls is caught by the socket timeout.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Sequence

from strata.framework.distributed.store import TCPStore, recv_exact

_LEN = struct.Struct("!Q")


class DistBackendError(RuntimeError):
    """A collective failed between processes: a peer crashed, closed its connection or timed out
    (torch.distributed.DistBackendError)."""


class Mesh:
    """Connections from this rank to every other rank of the job."""

    def __init__(self, store: TCPStore, rank: int, world_size: int, timeout: float, host: str = "127.0.0.1") -> None:
        self.rank, self.world_size, self.timeout = rank, world_size, timeout
        self.peers: dict[int, socket.socket] = {}
        listener = socket.create_server((host, 0))
        listener.settimeout(timeout)
        store.set(f"strata/mesh/{rank}", f"{host}:{listener.getsockname()[1]}")
        for peer in range(rank + 1, world_size):  # connect up, accept from below: no pair twice
            addr, port = store.get(f"strata/mesh/{peer}").decode().rsplit(":", 1)
            s = socket.create_connection((addr, int(port)), timeout=timeout)
            s.sendall(_LEN.pack(rank))
            self.peers[peer] = s
        for _ in range(rank):
            try:
                s, _ = listener.accept()
            except TimeoutError as exc:
                missing = sorted(set(range(rank)) - set(self.peers))
                raise DistBackendError(f"rank {rank}: rank(s) {missing} never connected within {timeout:g} s") from exc
            s.settimeout(timeout)
            (peer,) = _LEN.unpack(recv_exact(s, _LEN.size))
            self.peers[int(peer)] = s
        listener.close()
        for s in self.peers.values():
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.settimeout(timeout)
        self.bytes_sent = 0

    def send(self, peer: int, data: bytes | memoryview) -> None:
        try:
            self.peers[peer].sendall(_LEN.pack(len(data)))
            self.peers[peer].sendall(data)
        except OSError as exc:
            raise DistBackendError(f"rank {self.rank}: sending to rank {peer} failed ({exc}); did rank {peer} "
                                   "exit or crash?") from exc
        self.bytes_sent += len(data)

    def recv(self, peer: int) -> bytes:
        try:
            (n,) = _LEN.unpack(recv_exact(self.peers[peer], _LEN.size))
            return recv_exact(self.peers[peer], n)
        except TimeoutError as exc:
            raise DistBackendError(f"rank {self.rank}: rank {peer} sent nothing within {self.timeout:g} s "
                                   "(the collective timed out: is every rank calling the same collectives?)") from exc
        except (ConnectionError, OSError) as exc:
            raise DistBackendError(f"rank {self.rank}: rank {peer} closed its connection during a collective "
                                   "(it exited or crashed)") from exc

    def exchange(self, send_to: int, data: bytes | memoryview, recv_from: int) -> bytes:
        """Send to one peer while receiving from another (a ring step), so neither side blocks the other."""
        error: list[BaseException] = []

        def push() -> None:
            try:
                self.send(send_to, data)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
                error.append(exc)

        t = threading.Thread(target=push, name="strata-mesh-send", daemon=True)
        t.start()
        try:
            got = self.recv(recv_from)
        finally:
            t.join(self.timeout)
        if error:
            raise error[0]
        return got

    def exchange_all(self, peers: Sequence[int], blocks: dict[int, bytes]) -> dict[int, bytes]:
        """Send blocks[p] to every p in `peers` and receive one block from each (all-to-all)."""
        error: list[BaseException] = []

        def push() -> None:
            try:
                for p in peers:
                    self.send(p, blocks[p])
            except BaseException as exc:  # noqa: BLE001
                error.append(exc)

        t = threading.Thread(target=push, name="strata-mesh-send", daemon=True)
        t.start()
        try:
            got = {p: self.recv(p) for p in peers}
        finally:
            t.join(self.timeout)
        if error:
            raise error[0]
        return got

    def close(self) -> None:
        for s in self.peers.values():
            with contextlib.suppress(OSError):
                s.close()
        self.peers.clear()
