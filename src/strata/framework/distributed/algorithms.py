"""Collectives between processes: ring schedules over the mesh (`transport.py`) on a rank's buffer.

A buffer is where a rank's data lives and where it is combined:

- `DeviceBuffer` (backend nccl, a cuda tensor): chunks leave the device by DtoH copies and arrive by
  HtoD copies into a device scratch buffer; the combining runs on the virtual GPU as the same
  `nccl_apply` kernel the in-process collectives use (strata.libs.nccl), never on the host.
- `HostBuffer` (backend gloo, a cpu tensor): Gloo is a CPU library, so its combining is NumPy on the
  tensor's host memory, as Gloo's is C++ on the CPU.

The ring all-reduce: n-1 reduce-scatter steps (send chunk i-s to the successor, combine chunk i-s-1
from the predecessor), then n-1 all-gather steps (send chunk i+1-s, store chunk i-s), so each rank
sends 2(n-1)/n of the buffer, NCCL's bus factor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

import strata.cuda as cuda
from strata.framework.distributed.transport import DistBackendError, Mesh
from strata.libs.nccl.kernels import apply
from strata.libs.nccl.types import DataType, RedOp

# torch.distributed.ReduceOp names -> (NCCL op, NumPy combine)
OPS = ("SUM", "PRODUCT", "MIN", "MAX", "AVG")
_NCCL_OP = {"SUM": RedOp.ncclSum, "PRODUCT": RedOp.ncclProd, "MIN": RedOp.ncclMin, "MAX": RedOp.ncclMax,
            "AVG": RedOp.ncclSum}


class Buffer(Protocol):
    count: int
    itemsize: int

    def get(self, off: int, n: int) -> bytes: ...

    def put(self, off: int, data: bytes) -> None: ...

    def combine(self, off: int, data: bytes, op: str, divisor: int) -> None: ...


class HostBuffer:
    """A contiguous cpu tensor's elements as a 1-D NumPy view (combined in place with NumPy)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array.reshape(-1)
        self.count = self.array.size
        self.itemsize = self.array.dtype.itemsize

    def get(self, off: int, n: int) -> bytes:
        return self.array[off:off + n].tobytes()

    def put(self, off: int, data: bytes) -> None:
        self.array[off:off + len(data) // self.itemsize] = np.frombuffer(data, self.array.dtype)

    def combine(self, off: int, data: bytes, op: str, divisor: int) -> None:
        a = self.array[off:off + len(data) // self.itemsize]
        b = np.frombuffer(data, self.array.dtype)
        if a.dtype == np.bool_:
            op = {"SUM": "MAX", "PRODUCT": "MIN", "AVG": "MAX"}.get(op, op)
        floating = a.dtype.kind == "f" or a.dtype.name == "bfloat16"
        if op == "AVG" and divisor > 1 and floating:
            # the last step's sum and division in the working type, rounded once, as the device kernel does
            w = np.float64 if a.dtype == np.float64 else np.float32
            a[...] = ((a.astype(w) + b.astype(w)) / w(divisor)).astype(a.dtype)
            return
        if op in ("SUM", "AVG"):
            np.add(a, b, out=a)
        elif op == "PRODUCT":
            np.multiply(a, b, out=a)
        elif op == "MAX":
            np.maximum(a, b, out=a)
        else:
            np.minimum(a, b, out=a)
        if divisor > 1:
            if floating:
                a[...] = (a.astype(np.float64) / divisor).astype(a.dtype)
            else:  # integers: NCCL's (and C's) division, which truncates toward zero; NumPy's // floors
                q = a // divisor
                q += ((a % divisor) != 0) & (a < 0)
                a[...] = q


class DeviceBuffer:
    """A contiguous cuda tensor's memory on its virtual GPU; combined on the device by `nccl_apply`."""

    def __init__(self, ptr: int, count: int, np_dtype: np.dtype, device_index: int) -> None:
        self.ptr, self.count = ptr, count
        self.device = cuda.Device(device_index)
        if np_dtype == np.bool_:
            self.dtype, self.bool = DataType.ncclUint8, True
        else:
            self.dtype, self.bool = DataType.of(np_dtype), False
        self.itemsize = self.dtype.size
        self._scratch: cuda.DeviceArray | None = None

    def get(self, off: int, n: int) -> bytes:
        host = np.empty(n * self.itemsize, np.uint8)
        if n:
            cuda.memcpy(host, self.ptr + off * self.itemsize, host.nbytes, cuda.MemcpyKind.DeviceToHost)
        return host.tobytes()

    def put(self, off: int, data: bytes) -> None:
        if data:
            cuda.memcpy(self.ptr + off * self.itemsize, np.frombuffer(data, np.uint8), len(data),
                        cuda.MemcpyKind.HostToDevice)

    def combine(self, off: int, data: bytes, op: str, divisor: int) -> None:
        n = len(data) // self.itemsize
        if not n:
            return
        if self._scratch is None or self._scratch.nbytes < len(data):
            self._scratch = cuda.DeviceArray((len(data),), np.uint8, self.device)
        cuda.memcpy(self._scratch.ptr, np.frombuffer(data, np.uint8), len(data), cuda.MemcpyKind.HostToDevice)
        code = _NCCL_OP[op]
        if self.bool:
            code = {RedOp.ncclSum: RedOp.ncclMax, RedOp.ncclProd: RedOp.ncclMin}.get(code, code)
        dst = self.ptr + off * self.itemsize
        apply(self.dtype, dst, dst, self._scratch.ptr, n, int(code), divisor, self.device.context.stream(None))


def chunks(count: int, n: int) -> list[tuple[int, int]]:
    base, extra = divmod(count, n)
    out, off = [], 0
    for c in range(n):
        length = base + (1 if c < extra else 0)
        out.append((off, length))
        off += length
    return out


def all_reduce(mesh: Mesh, ranks: Sequence[int], buf: Buffer, op: str) -> None:
    n = len(ranks)
    i = ranks.index(mesh.rank)
    if n == 1:
        return
    parts = chunks(buf.count, n)
    succ, pred = ranks[(i + 1) % n], ranks[(i - 1) % n]
    for s in range(n - 1):  # reduce-scatter
        off, k = parts[(i - s) % n]
        data = mesh.exchange(succ, buf.get(off, k), pred)
        buf.combine(parts[(i - s - 1) % n][0], data, op, n if op == "AVG" and s == n - 2 else 0)
    for s in range(n - 1):  # all-gather
        off, k = parts[(i + 1 - s) % n]
        data = mesh.exchange(succ, buf.get(off, k), pred)
        buf.put(parts[(i - s) % n][0], data)


def reduce_scatter(mesh: Mesh, ranks: Sequence[int], work: Buffer, op: str) -> tuple[int, int]:
    """Ring reduce-scatter on `work` (n blocks); returns (offset, count) of this rank's finished block."""
    n = len(ranks)
    i = ranks.index(mesh.rank)
    parts = chunks(work.count, n)
    if n == 1:
        return parts[0]
    succ, pred = ranks[(i + 1) % n], ranks[(i - 1) % n]
    for s in range(n - 1):  # shifted by one from all_reduce's so rank i finishes block i
        off, k = parts[(i - s - 1) % n]
        data = mesh.exchange(succ, work.get(off, k), pred)
        work.combine(parts[(i - s - 2) % n][0], data, op, n if op == "AVG" and s == n - 2 else 0)
    return parts[i]


def all_gather(mesh: Mesh, ranks: Sequence[int], out: Buffer) -> None:
    """`out` holds n blocks; this rank's block i is already in place."""
    n = len(ranks)
    i = ranks.index(mesh.rank)
    parts = chunks(out.count, n)
    succ, pred = ranks[(i + 1) % n], ranks[(i - 1) % n]
    for s in range(n - 1):
        off, k = parts[(i - s) % n]
        data = mesh.exchange(succ, out.get(off, k), pred)
        out.put(parts[(i - s - 1) % n][0], data)


def broadcast(mesh: Mesh, ranks: Sequence[int], buf: Buffer, src: int) -> None:
    if mesh.rank == src:
        data = buf.get(0, buf.count)
        for r in ranks:
            if r != src:
                mesh.send(r, data)
    else:
        buf.put(0, mesh.recv(src))


Block = tuple[Buffer, int, int]  # a buffer, and the offset and count (elements) of one rank's block in it


def all_to_all(mesh: Mesh, ranks: Sequence[int], sends: Sequence[Block], recvs: Sequence[Block], api: str) -> None:
    """Send block `sends[j]` to the group's rank j and receive rank j's block for this rank into `recvs[j]`,
    every pair at once (NCCL runs it as one group of send/recv). Blocks may differ in size (uneven splits);
    a block that arrives with another size than its `recvs` entry expects is a DistBackendError naming both
    ranks' counts, raised after every block moved (so no peer waits for this rank)."""
    i = ranks.index(mesh.rank)
    others = [r for r in ranks if r != mesh.rank]
    blocks = {r: sends[j][0].get(sends[j][1], sends[j][2]) for j, r in enumerate(ranks) if r != mesh.rank}
    got = mesh.exchange_all(others, blocks)
    got[mesh.rank] = sends[i][0].get(sends[i][1], sends[i][2])
    wrong = []
    for j, r in enumerate(ranks):
        buf, off, k = recvs[j]
        n = len(got[r]) // buf.itemsize
        if n != k:
            wrong.append(f"{k} elements from rank {r}, which sent {n}")
    if wrong:
        raise DistBackendError(f"rank {mesh.rank}: {api}: the split sizes disagree between ranks (this rank's output "
                               f"split for a rank must equal that rank's input split for this one): expected "
                               f"{'; '.join(wrong)}")
    for j, r in enumerate(ranks):
        buf, off, _ = recvs[j]
        buf.put(off, got[r])


def describe(buf: Any) -> str:
    return f"{type(buf).__name__}({buf.count} elements)"
