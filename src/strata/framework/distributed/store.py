"""The rendezvous store (torch.distributed's TCPStore role): a small key-value server that rank 0 runs at
MASTER_ADDR:MASTER_PORT; every rank connects to it to publish its data address, to count barrier
arrivals, and to wait for keys the others set.

Messages are length-prefixed pickles of (command, key, value) between the processes of one job.

Example:
    >>> server = TCPStore("127.0.0.1", 0, is_master=True)
    >>> client = TCPStore("127.0.0.1", server.port)
    >>> client.set("a", b"1"); server.get("a"), client.add("n", 2), server.add("n", 1)
    (b'1', 2, 3)
    >>> client.close(); server.close()
"""

from __future__ import annotations

import contextlib
import pickle
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

_HEADER = struct.Struct("!Q")
FAILED_KEY = "strata/failed"  # set by the launcher when a rank exits with an error: waits end at once


class DistStoreError(RuntimeError):
    """The store could not be reached, or a key did not appear within the timeout (torch's DistStoreError)."""


def send_msg(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj)
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """`n` bytes from `sock`; ConnectionError if the peer closed the connection first."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("the peer closed the connection")
        got += k
    return bytes(buf)


MAX_MSG = 1 << 26  # store messages are small: a longer one means the peer is not a strata store


def recv_msg(sock: socket.socket) -> Any:
    """One message; ConnectionError if the peer closed, or sent something that is not a store message."""
    (n,) = _HEADER.unpack(recv_exact(sock, _HEADER.size))
    if n > MAX_MSG:
        raise ConnectionError(f"not a strata store message ({n} bytes announced)")
    try:
        return pickle.loads(recv_exact(sock, n))  # noqa: S301 - our own processes of one job
    except Exception as exc:  # noqa: BLE001 - unpickling foreign bytes can raise almost anything
        raise ConnectionError(f"not a strata store message ({exc})") from exc


class _Server:
    def __init__(self, host: str, port: int) -> None:
        try:
            self.sock = socket.create_server((host, port), reuse_port=False)
        except OSError as exc:
            raise DistStoreError(f"rank 0 could not serve the rendezvous store at {host}:{port}: {exc.strerror} "
                                 "(MASTER_PORT taken by another process?)") from exc
        self.port = self.sock.getsockname()[1]
        self.data: dict[str, Any] = {}
        self.cond = threading.Condition()
        self.closed = False
        self.active = 0  # client connections open
        self.parked: set[socket.socket] = set()  # connections of ranks that left and wait for the server to stop
        threading.Thread(target=self._accept, name="strata-store", daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="strata-store-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with self.cond:
            self.active += 1
        try:
            self._loop(conn)
        finally:
            with self.cond:
                self.active -= 1
                self.parked.discard(conn)
                self.cond.notify_all()

    def _loop(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    cmd, key, value = recv_msg(conn)
                except (ConnectionError, OSError, EOFError):
                    return
                with self.cond:
                    if cmd == "park":  # no reply: the client waits until shutdown() closes the connection
                        self.parked.add(conn)
                        self.cond.notify_all()
                        continue
                    if cmd == "set":
                        self.data[key] = value
                        reply: Any = None
                    elif cmd == "add":
                        self.data[key] = int(self.data.get(key, 0)) + int(value)
                        reply = self.data[key]
                    elif cmd == "get":
                        reply = self.data.get(key)
                    else:
                        reply = None
                    self.cond.notify_all()
                try:
                    send_msg(conn, reply)
                except OSError:
                    return

    def stop_accepting(self) -> None:
        """Stop listening (shutdown wakes the accepting thread; a bare close would leave it listening)."""
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()

    def close(self) -> None:
        self.stop_accepting()

    def shutdown(self, linger: float) -> None:
        """Stop accepting, wait up to `linger` seconds until every remaining connection is parked (its rank
        left the group) or gone, then close them all, which releases the parked ranks."""
        self.stop_accepting()
        deadline = time.monotonic() + linger
        with self.cond:
            while self.active > len(self.parked) and time.monotonic() < deadline:
                self.cond.wait(0.05)
            parked, self.parked = list(self.parked), set()
        for conn in parked:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class TCPStore:
    """torch.distributed.TCPStore: `is_master=True` also serves the store in this process.

    Args:
        host, port: where the server listens (port 0 with is_master: any free port, see `.port`).
        world_size: accepted as torch accepts it.
        is_master: run the server here.
        timeout: seconds to wait for the server at start and for keys in `get`/`wait`.
        gone: while waiting for the server: why rank 0 will never serve it (as its launcher reported), or None.
    """

    def __init__(self, host: str, port: int, world_size: int | None = None, is_master: bool = False,
                 timeout: float = 300.0, gone: Callable[[], str | None] | None = None) -> None:
        self.timeout = timeout
        self._server = _Server(host, port) if is_master else None
        self.port = self._server.port if self._server is not None else port
        self.host = host
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, self.port), timeout=timeout)
                break
            except OSError as exc:
                why = gone() if gone is not None else None
                if why is not None:  # the launcher reported rank 0 gone: it will never serve the store
                    raise DistStoreError(f"could not reach the rendezvous store at {host}:{self.port}: {why}") from exc
                if time.monotonic() > deadline:
                    if self._server is not None:
                        self._server.close()
                    raise DistStoreError(f"could not reach the rendezvous store at {host}:{self.port} within "
                                         f"{timeout:g} s (is rank 0 running? MASTER_ADDR/MASTER_PORT)") from exc
                time.sleep(0.05)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._lock = threading.Lock()

    def _call(self, cmd: str, key: str, value: Any = None) -> Any:
        with self._lock:
            try:
                send_msg(self.sock, (cmd, key, value))
                return recv_msg(self.sock)
            except (OSError, ConnectionError) as exc:
                raise DistStoreError(f"the rendezvous store at {self.host}:{self.port} went away during {cmd} "
                                     f"{key!r}, or never answered as a store (did rank 0 exit? is MASTER_PORT its "
                                     "port?)") from exc

    def set(self, key: str, value: bytes | str) -> None:
        self._call("set", key, value.encode() if isinstance(value, str) else value)

    def add(self, key: str, amount: int) -> int:
        return int(self._call("add", key, amount))

    def get(self, key: str) -> bytes:
        """The value of `key`, waiting until some rank sets it (DistStoreError after the timeout)."""
        self.wait([key])
        return self._call("get", key)

    def check(self, keys: list[str]) -> bool:
        return all(self._call("get", k) is not None for k in keys)

    def failure(self) -> str | None:
        """What the launcher reported when a rank of the job failed (None while all run)."""
        value = self._call("get", FAILED_KEY)
        return None if value is None else bytes(value).decode(errors="replace")

    def wait(self, keys: list[str], timeout: float | None = None) -> None:
        """Wait until every key is set; DistStoreError after the timeout, or at once when the launcher
        reported a failed rank (which may never set them)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        delay = 0.001
        while not self.check(keys):
            failure = self.failure()
            if failure is not None:
                raise DistStoreError(f"keys {keys} will not appear in the store: {failure}")
            if time.monotonic() > deadline:
                raise DistStoreError(f"keys {keys} did not appear in the store within "
                                     f"{self.timeout if timeout is None else timeout:g} s")
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def close(self, linger: float = 30.0, park: bool = False) -> None:
        """Disconnect. The server (rank 0's) first stops accepting, then waits up to `linger` seconds for
        the other ranks to disconnect or park, so a rank that finishes first does not pull the store from
        under the others.

        With `park` (a rank leaving its process group), a client waits, up to `linger`, until the server
        has stopped: a rank that then initializes a new group meets the others in the new store, never in
        the closing one."""
        if park and self._server is None:
            with contextlib.suppress(OSError, ConnectionError):
                self.sock.settimeout(linger)
                send_msg(self.sock, ("park", "", None))
                recv_msg(self.sock)  # returns only when the server closes the connection (or the timeout)
        self.sock.close()
        if self._server is not None:
            self._server.shutdown(linger)
