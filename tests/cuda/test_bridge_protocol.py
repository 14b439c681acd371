"""The runtime process's side of the bridge (strata.cuda.bridge.server), driven over real pipes with the
wire format of protocol.py, without a native program: copies, pipelined launches and their errors, device
printf carried in replies, a fault reported once and sticky, and bad requests answered, never hung."""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Iterator

import numpy as np
import pytest

import strata.cuda as cuda
from strata.cuda import fatbin
from strata.cuda.bridge.protocol import LAUNCH, REPLY, REQUEST, Op
from strata.cuda.bridge.server import Server

SRC = r'''
extern "C" __global__ void add(int* p, int v, int n) { int i = threadIdx.x; if (i < n) p[i] += v; }
extern "C" __global__ void hello(int v) { printf("hello %d from %d\n", v, threadIdx.x); }
extern "C" __global__ void oob(int* p) { p[threadIdx.x + (1 << 24)] = 1; }
'''


class Client:
    """The library's side of the wire, in Python."""

    def __init__(self) -> None:
        self.to_server_r, self.to_server_w = os.pipe()
        self.to_client_r, self.to_client_w = os.pipe()
        self.server = Server(self.to_server_r, self.to_client_w)
        self.thread = threading.Thread(target=self.server.serve, daemon=True)

    def send(self, op: int, body: bytes = b"") -> None:
        if not self.thread.is_alive():  # started by the test itself: serve() takes over sys.stdout, which pytest
            self.thread.start()  # resets between a fixture's setup and the test
        os.write(self.to_server_w, REQUEST.pack(op, 1, len(body)) + body)

    def call(self, op: int, body: bytes = b"") -> tuple[int, bytes, str, str]:
        self.send(op, body)
        code, out_len, n, err_len, _ = REPLY.unpack(self._read(REPLY.size))
        payload = self._read(n)
        return code, payload, self._read(out_len).decode(), self._read(err_len).decode()

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = os.read(self.to_client_r, n - len(buf))
            assert chunk, "the server closed the pipe"
            buf += chunk
        return buf

    def close(self) -> None:
        os.close(self.to_server_w)
        if self.thread.ident is not None:
            self.thread.join(timeout=30)
            assert not self.thread.is_alive()
        for fd in (self.to_server_r, self.to_client_r, self.to_client_w):
            os.close(fd)


@pytest.fixture
def client() -> Iterator[Client]:
    c = Client()
    yield c
    c.close()


def _module(c: Client) -> int:
    ptx = cuda.compile(SRC).ptx.encode()
    blob = fatbin.container([fatbin.Entry(fatbin.KIND_PTX, 90, ptx)])
    code, payload, _, err = c.call(Op.REGISTER, struct.pack("<IQ", 1, len(blob)) + blob)
    assert code == 0, err
    return int(struct.unpack("<Q", payload)[0])


def _kernel(c: Client, module: int, name: str) -> tuple[int, list[int]]:
    code, payload, _, err = c.call(Op.FUNC_INFO, struct.pack("<Q", module) + name.encode())
    assert code == 0, err
    fid, n = struct.unpack_from("<QI", payload)
    return fid, list(struct.unpack_from(f"<{n}I", payload, 12))


def _launch(c: Client, fid: int, grid: int, block: int, args: bytes) -> None:
    c.send(Op.LAUNCH, LAUNCH.pack(fid, grid, 1, 1, block, 1, 1, 0, 0) + args)


def test_malloc_copies_and_free(client: Client) -> None:
    code, payload, _, _ = client.call(Op.MALLOC, struct.pack("<Q", 4096))
    assert code == 0
    (ptr,) = struct.unpack("<Q", payload)
    data = np.arange(1024, dtype=np.int32).tobytes()
    assert client.call(Op.HTOD, struct.pack("<QQ", ptr, 0) + data)[0] == 0
    code, back, _, _ = client.call(Op.DTOH, struct.pack("<QQQ", ptr, 4096, 0))
    assert (code, back) == (0, data)
    assert client.call(Op.FREE, struct.pack("<Q", ptr))[0] == 0
    code, _, _, err = client.call(Op.DTOH, struct.pack("<QQQ", ptr, 16, 0))  # freed: cudaErrorInvalidValue
    assert code == 1


def test_pipelined_launch_and_its_configuration_error(client: Client) -> None:
    module = _module(client)
    fid, sizes = _kernel(client, module, "add")
    assert sizes == [8, 4, 4]
    ptr = struct.unpack("<Q", client.call(Op.MALLOC, struct.pack("<Q", 64))[1])[0]
    assert client.call(Op.MEMSET, struct.pack("<QQQQ", ptr, 0, 64, 0))[0] == 0
    _launch(client, fid, 1, 16, struct.pack("<Qii", ptr, 5, 16))  # no reply: pipelined
    _launch(client, fid, 1, 4096, struct.pack("<Qii", ptr, 1, 16))  # too many threads
    assert client.call(Op.LAST_ERROR, struct.pack("<I", 1))[0] == 9  # peek: stays
    assert client.call(Op.LAST_ERROR, struct.pack("<I", 0))[0] == 9  # get: cleared
    assert client.call(Op.LAST_ERROR, struct.pack("<I", 0))[0] == 0
    code, back, _, _ = client.call(Op.DTOH, struct.pack("<QQQ", ptr, 64, 0))
    np.testing.assert_array_equal(np.frombuffer(back, np.int32), np.full(16, 5))


def test_device_printf_rides_in_the_reply(client: Client) -> None:
    fid, _ = _kernel(client, _module(client), "hello")
    _launch(client, fid, 1, 3, struct.pack("<i", 7))
    code, _, out, _ = client.call(Op.SYNC)
    assert code == 0
    assert out.splitlines() == [f"hello 7 from {t}" for t in range(3)]


def test_fault_reported_once_and_sticky(client: Client) -> None:
    fid, _ = _kernel(client, _module(client), "oob")
    ptr = struct.unpack("<Q", client.call(Op.MALLOC, struct.pack("<Q", 64))[1])[0]
    _launch(client, fid, 1, 32, struct.pack("<Q", ptr))
    code, _, _, err = client.call(Op.SYNC)
    assert code == 700 and "Invalid global write of size 4" in err and "oob" in err
    code, _, _, err = client.call(Op.MALLOC, struct.pack("<Q", 16))
    assert (code, err) == (700, "")  # sticky, reported once


def test_bad_requests_get_answers(client: Client) -> None:
    code, _, _, err = client.call(999)
    assert code == 1 and "unknown runtime request 999" in err
    code, _, _, err = client.call(Op.FUNC_INFO, struct.pack("<Q", 12345) + b"k")
    assert code == 400  # no such module: cudaErrorInvalidResourceHandle
    code, _, _, err = client.call(Op.REGISTER, struct.pack("<IQ", 1, 16) + b"\0" * 16)
    assert code == 0 and "magic" in err  # a bad image is reported, then fails at first use
    (module,) = struct.unpack("<Q", client.call(Op.REGISTER, struct.pack("<IQ", 1, 16) + b"\0" * 16)[1])
    assert client.call(Op.FUNC_INFO, struct.pack("<Q", module) + b"k")[0] == 209  # NoKernelImageForDevice
    assert client.call(Op.STREAM_SYNC, struct.pack("<Q", 0xDEAD0))[0] == 400


def test_a_launch_that_goes_wrong_unexpectedly_sends_no_reply(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # A launch is pipelined: a reply to it would be read as the answer to the next call (one call late ever
    # after). A launch request shorter than its header, and an error no launch handler expects, become the
    # next cudaGetLastError's error instead.
    client.send(Op.LAUNCH, b"\0" * 10)
    code, payload, _, err = client.call(Op.MEM_INFO)
    assert (code, len(payload)) == (0, 16)  # MEM_INFO's own answer, not a stray one
    assert "malformed" in err  # the reason rides in the next reply's stderr text
    assert client.call(Op.LAST_ERROR, struct.pack("<I", 0))[0] == 1  # cudaErrorInvalidValue
    fid, _ = _kernel(client, _module(client), "hello")
    kernel = client.server.kernels[fid]

    def broken(*args: object, **kwargs: object) -> None:
        raise IndexError("a bug in the launch path")

    monkeypatch.setattr(kernel, "launch", broken)
    _launch(client, fid, 1, 1, struct.pack("<i", 1))
    code, payload, _, err = client.call(Op.MEM_INFO)
    assert (code, len(payload)) == (0, 16)
    assert "a bug in the launch path" in err  # the traceback
    assert client.call(Op.LAST_ERROR, struct.pack("<I", 0))[0] == 999  # cudaErrorUnknown
    assert client.call(Op.LAST_ERROR, struct.pack("<I", 0))[0] == 0
