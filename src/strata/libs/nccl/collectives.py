"""The collectives and point-to-point calls (ncclAllReduce, ncclBroadcast, ncclReduce, ncclAllGather,
ncclReduceScatter, ncclSend/ncclRecv, and all-to-all as NCCL users build it from grouped send/recv).

Every algorithm is a schedule of steps; in each step every rank's device runs at most a few launches of
the `nccl_apply` kernels (`kernels.py`: whole tiles, then a vector and a scalar kernel for the rest),
which combine or copy one chunk and read the neighbour's chunk from the neighbour's memory over the
link. A step that only copies a chunk of at least `CE_MIN_BYTES` from a peer's memory (the ring
all-reduce's all-gather half, the tree's copies down, all_gather, broadcast, all-to-all, send/recv) is
instead a peer copy on the receiving device's copy engine (what cudaMemcpyPeerAsync queues), as
copy-engine collectives do: no arithmetic, so no kernel needed; the modeled time is the same either
way. Between steps each rank's stream waits for the
previous step of the ranks it exchanges with (events, cross-device barrier packets), so no chunk is
read before it is written nor overwritten before it is read; and each operation of a communicator starts
after its previous one ended (`comm.IssueOrder`, NCCL's rule), whatever streams the two are on, so no two use
its scratch buffer at once. The ring all-reduce is a reduce-scatter
(n-1 steps: rank r adds its predecessor's partial of chunk r-s-1) followed by an all-gather (n-1
steps: rank r copies chunk r-s from its predecessor); the ring is rank order. NVLS (`_all_reduce_nvls`)
is two steps: each rank reduces its shard of every rank's buffer (a sum: one `sum_many` launch adding up
to 8 ranks' shards, as the switch reads them all at once), then copies the others' shards.

Every call returns a `Work`: after its device work is queued, `.model` holds the modeled time, algbw
and busbw (`model.py`). The trace shows the call (L4 `nccl.<api>`) and one `nccl_step` event per step
and rank, with its phase, chunk, bytes and modeled step time.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.nccl import comm_init_all, all_reduce, comm_destroy
    >>> [c] = comm_init_all([0])
    >>> x = cuda.to_device(np.arange(4, dtype=np.float32))
    >>> _ = all_reduce(x, x, 4, "float32", "sum", c)
    >>> x.get().tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> comm_destroy(c)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata import config, trace
from strata.cuda import DeviceArray, pointer_get_attributes
from strata.libs.common import library_call
from strata.libs.nccl import comm as comm_mod
from strata.libs.nccl.comm import Communicator, Op
from strata.libs.nccl.group import current_group, deferred_post, deferred_wait, group_end, group_start
from strata.libs.nccl.kernels import COPY, MAX_INPUTS, VECTOR_BYTES, apply, sum_many, sums_many
from strata.libs.nccl.model import (
    CollectiveModel,
    allowed_algorithms,
    choose_algorithm,
    model,
    nvls_supported,
    tree_depth,
)
from strata.libs.nccl.types import DataType, NcclError, RedOp
from strata.runtime import Event, Stream

# From this many bytes a copy from a peer's memory goes on the copy engine: one memory-to-memory transfer
# (the emulator moves it at memcpy speed, where a copy kernel interprets a load and a store per word, and
# the device timeline gets the link's rate from hw/topology.py). Below it the engine's setup (a few us)
# would dominate the transfer, so small copies stay kernels, as NCCL's are. One copy tile (1 MiB).
CE_MIN_BYTES = 1 << 20

_VENDOR = {"all_reduce": "ncclAllReduce", "broadcast": "ncclBroadcast", "reduce": "ncclReduce",
           "all_gather": "ncclAllGather", "reduce_scatter": "ncclReduceScatter", "all_to_all": "ncclSend/ncclRecv",
           "send_recv": "ncclSend/ncclRecv"}


@dataclass
class Call:
    """One rank's arguments to one call."""

    api: str
    comm: Communicator
    send: int
    recv: int
    count: int
    dtype: DataType
    op: RedOp | None
    root: int | None
    peer: int | None
    stream: Stream
    algorithm: str | None = None  # all_reduce: 'ring', 'tree' or None (the modeled faster one)
    unit: int = 0  # its unit of the communicator's issue order (comm.IssueOrder)

    def describe(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in (("op", self.op.name if self.op is not None else None),
                                                  ("root", self.root), ("peer", self.peer)) if v is not None)
        return f"rank {self.comm.rank} {self.api}(count={self.count}, datatype={self.dtype.name}{extra})"


class Work:
    """What a call returns: `op` once posted (inside a group: after group_end); `model` after its device
    work is queued on every rank."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.op: Op | None = None

    @property
    def model(self) -> CollectiveModel | None:
        return self.op.model if self.op is not None else None

    @property
    def done(self) -> bool:
        """Whether every rank's device work of this call is queued (it completes in stream order)."""
        return self.op is not None and self.op.done


@dataclass(frozen=True)
class _Launch:
    dst: int
    a: int
    b: int
    n: int
    op: int
    divisor: int = 0
    chunk: int = -1
    srcs: tuple[int, ...] = ()  # a many-input sum (kernels.sum_many): dst = srcs[0] + srcs[1] + ..., a and b unused


# --- argument checks ---------------------------------------------------------------------------------


def _count(value: Any, api: str, what: str = "count") -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise NcclError("ncclInvalidArgument", f"[{api}] {what} must be an int >= 0, got {value!r}")
    return int(value)


def _buffer(buf: Any, nbytes: int, comm: Communicator, api: str, what: str) -> int:
    """The device address of `buf`, checked: on the communicator's device, `nbytes` inside one allocation."""
    if isinstance(buf, DeviceArray):
        if buf.freed:
            raise NcclError("ncclInvalidArgument", f"[{api}] rank {comm.rank}: {what} was freed")
        if buf.device is not comm.device:
            raise NcclError("ncclInvalidArgument", f"[{api}] rank {comm.rank}: {what} is on device {buf.device.index}, "
                            f"the communicator's device is {comm.device.index}")
        if nbytes > buf.nbytes:
            raise NcclError("ncclInvalidArgument", f"[{api}] rank {comm.rank}: {what} holds {buf.nbytes} bytes, the "
                            f"call needs {nbytes}")
        return buf.ptr
    if isinstance(buf, bool) or not isinstance(buf, int | np.integer):
        raise NcclError("ncclInvalidArgument", f"[{api}] rank {comm.rank}: {what} must be a DeviceArray or a device "
                        f"address, got {type(buf).__name__}")
    address = int(buf)
    if nbytes == 0:  # NCCL checks a buffer only when the call moves bytes (an empty block may end its array)
        return address
    attrs = pointer_get_attributes(address)
    if attrs.type != "device" or attrs.device != comm.device.index:
        where = f"device {attrs.device}" if attrs.device >= 0 else "no device"
        raise NcclError("ncclInvalidArgument", f"[{api}] rank {comm.rank}: {what} {address:#x} is not a live "
                        f"allocation of the communicator's device {comm.device.index} ({where})")
    if attrs.start is not None and attrs.size is not None and address + nbytes > attrs.start + attrs.size:
        raise NcclError("ncclInvalidArgument", f"[{api}] rank {comm.rank}: {what} has "
                        f"{attrs.start + attrs.size - address} bytes from {address:#x}, the call needs {nbytes}")
    return address


def _collective(api: str, comm: Communicator, send: Any, recv: Any, count: Any, datatype: Any, *,
                op: Any = None, root: Any = None, send_elems: int, recv_elems: int, stream: Any,
                algorithm: str | None = None) -> Work:
    if not isinstance(comm, Communicator):
        raise NcclError("ncclInvalidArgument", f"[{api}] comm must be a Communicator, got {type(comm).__name__}")
    comm.check(api)
    n = _count(count, api)
    dt = DataType.of(datatype)
    red = RedOp.of(op) if op is not None else None
    if root is not None and (isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < comm.nranks):
        raise NcclError("ncclInvalidArgument", f"[{api}] root must be a rank in [0, {comm.nranks}), got {root!r}")
    s = comm.stream_of(stream, api)
    n_send, n_recv = send_elems * dt.size, recv_elems * dt.size
    send_ptr = _buffer(send, n_send, comm, api, "sendbuff") if n_send or send is not None else 0
    needs_recv = api != "reduce" or comm.rank == root  # reduce: significant at the root only
    recv_ptr = _buffer(recv, n_recv, comm, api, "recvbuff") if needs_recv else 0
    call = Call(api, comm, send_ptr, recv_ptr, n, dt, red, root, None, s, algorithm,
                comm.order.unit_of(current_group()))
    key = ("coll", comm.seq)
    comm.seq += 1
    return _submit(comm, key, api, comm.nranks, call, comm.rank, _agree_collective, _execute_collective)


def _submit(comm: Communicator, key: Any, kind: str, needed: int, call: Call, slot: int,
            agree: Callable[[Any, Any], str | None], execute: Callable[[Op], None]) -> Work:
    work = Work(kind)

    def do_post() -> None:
        work.op = comm_mod.post(comm, key, kind, needed, call, slot, agree, execute)

    def do_wait() -> None:
        if work.op is not None:
            comm_mod.wait(comm, work.op, comm.rank)

    deferred_post(do_post)
    deferred_wait(do_wait)
    return work


def _agree_collective(first: Call, call: Call) -> str | None:
    if first.api != call.api:
        return f"one rank called {first.api}, another {call.api}"
    for name in ("count", "dtype", "op", "root", "algorithm"):
        if getattr(first, name) != getattr(call, name):
            return f"{name} differs"
    return None


# --- the public calls ----------------------------------------------------------------------------------


def all_reduce(sendbuff: Any, recvbuff: Any, count: int, datatype: Any, op: Any, comm: Communicator,
               stream: Any = None, *, algorithm: str | None = None) -> Work:
    """ncclAllReduce: every rank's `recvbuff` gets op over all ranks' `sendbuff` (`count` elements;
    in place when they are the same). op: sum, prod, max, min, avg. `algorithm`: 'ring', 'tree', 'nvls'
    (NVLink SHARP: HGX H100/H200, more than 2 ranks), or None for the one with the smallest modeled time
    among those NCCL_ALGO allows (the tree for small sizes, the ring, then NVLS from about 11 MB on 8 H200s)."""
    if algorithm not in (None, "ring", "tree", "nvls"):
        raise NcclError("ncclInvalidArgument", f"[all_reduce] algorithm must be 'ring', 'tree', 'nvls' or None, got "
                        f"{algorithm!r}")
    return _collective("all_reduce", comm, sendbuff, recvbuff, count, datatype, op=op, send_elems=count,
                       recv_elems=count, stream=stream, algorithm=algorithm)


def broadcast(sendbuff: Any, recvbuff: Any, count: int, datatype: Any, root: int, comm: Communicator,
              stream: Any = None) -> Work:
    """ncclBroadcast: every rank's `recvbuff` gets the root's `sendbuff` (sendbuff matters at the root only)."""
    comm_root = comm.rank == root if isinstance(comm, Communicator) else False
    return _collective("broadcast", comm, sendbuff if comm_root else None, recvbuff, count, datatype, root=root,
                       send_elems=count if comm_root else 0, recv_elems=count, stream=stream)


def reduce(sendbuff: Any, recvbuff: Any, count: int, datatype: Any, op: Any, root: int, comm: Communicator,
           stream: Any = None) -> Work:
    """ncclReduce: the root's `recvbuff` gets op over all ranks' `sendbuff`."""
    return _collective("reduce", comm, sendbuff, recvbuff, count, datatype, op=op, root=root, send_elems=count,
                       recv_elems=count, stream=stream)


def all_gather(sendbuff: Any, recvbuff: Any, sendcount: int, datatype: Any, comm: Communicator,
               stream: Any = None) -> Work:
    """ncclAllGather: `recvbuff` (nranks x sendcount) gets rank i's `sendbuff` at offset i x sendcount."""
    n = _count(sendcount, "all_gather", "sendcount")
    nranks = comm.nranks if isinstance(comm, Communicator) else 1
    return _collective("all_gather", comm, sendbuff, recvbuff, n, datatype, send_elems=n, recv_elems=n * nranks,
                       stream=stream)


def reduce_scatter(sendbuff: Any, recvbuff: Any, recvcount: int, datatype: Any, op: Any, comm: Communicator,
                   stream: Any = None) -> Work:
    """ncclReduceScatter: rank i's `recvbuff` (recvcount) gets op over all ranks' block i of `sendbuff`."""
    n = _count(recvcount, "reduce_scatter", "recvcount")
    nranks = comm.nranks if isinstance(comm, Communicator) else 1
    return _collective("reduce_scatter", comm, sendbuff, recvbuff, n, datatype, op=op, send_elems=n * nranks,
                       recv_elems=n, stream=stream)


def all_to_all(sendbuff: Any, recvbuff: Any, count: int, datatype: Any, comm: Communicator,
               stream: Any = None) -> Work:
    """All-to-all (what torch.distributed.all_to_all_single does with grouped ncclSend/ncclRecv): block j
    of rank i's `sendbuff` (count elements each) lands in block i of rank j's `recvbuff`."""
    n = _count(count, "all_to_all")
    nranks = comm.nranks if isinstance(comm, Communicator) else 1
    return _collective("all_to_all", comm, sendbuff, recvbuff, n, datatype, send_elems=n * nranks,
                       recv_elems=n * nranks, stream=stream)


def all_to_allv(sendbuff: Any, sendcounts: Any, sdispls: Any, recvbuff: Any, recvcounts: Any, rdispls: Any,
                datatype: Any, comm: Communicator, stream: Any = None) -> list[Work]:
    """Uneven all-to-all, as torch.distributed's NCCL backend runs all_to_all_single with split sizes: one
    group of ncclSend/ncclRecv, rank i sending `sendcounts[j]` elements from `sendbuff` + `sdispls[j]` to
    rank j and receiving `recvcounts[j]` elements from rank j at `recvbuff` + `rdispls[j]` (counts and
    displacements in elements, MPI_Alltoallv's convention). Rank i's sendcounts[j] must equal rank j's
    recvcounts[i]: a mismatch is ncclInvalidUsage showing both ranks' calls. Returns the 2 x nranks
    send/recv works, in call order (inside an open group they complete at its group_end).

    Raises:
        NcclError: ncclInvalidArgument (a list not of nranks ints >= 0, a block past its buffer's end),
            ncclInvalidUsage (counts that disagree between ranks).
    """
    if not isinstance(comm, Communicator):
        raise NcclError("ncclInvalidArgument", f"[all_to_allv] comm must be a Communicator, got {type(comm).__name__}")
    comm.check("all_to_allv")
    dt = DataType.of(datatype)
    lists = {name: _counts(value, comm.nranks, name) for name, value in
             (("sendcounts", sendcounts), ("sdispls", sdispls), ("recvcounts", recvcounts), ("rdispls", rdispls))}
    ends = {what: max((d + c for c, d in zip(lists[cs], lists[ds], strict=True) if c), default=0)
            for what, cs, ds in (("sendbuff", "sendcounts", "sdispls"), ("recvbuff", "recvcounts", "rdispls"))}
    send_base = _buffer(sendbuff, ends["sendbuff"] * dt.size, comm, "all_to_allv", "sendbuff")
    recv_base = _buffer(recvbuff, ends["recvbuff"] * dt.size, comm, "all_to_allv", "recvbuff")
    works: list[Work] = []
    group_start()  # every pair's send and recv at once, so no rank waits for a peer still sending elsewhere
    try:
        for j in range(comm.nranks):
            works.append(send(send_base + lists["sdispls"][j] * dt.size, lists["sendcounts"][j], dt, j, comm,
                              stream))
            works.append(recv(recv_base + lists["rdispls"][j] * dt.size, lists["recvcounts"][j], dt, j, comm,
                              stream))
    finally:
        group_end()
    return works


def _counts(value: Any, nranks: int, name: str) -> list[int]:
    """A list of `nranks` element counts or displacements (ints >= 0)."""
    try:
        items = list(value)
    except TypeError:
        items = None
    if items is None or len(items) != nranks:
        raise NcclError("ncclInvalidArgument", f"[all_to_allv] {name} must hold one int >= 0 per rank ({nranks}), "
                        f"got {value!r}")
    return [_count(v, "all_to_allv", f"{name}[{i}]") for i, v in enumerate(items)]


def send(sendbuff: Any, count: int, datatype: Any, peer: int, comm: Communicator, stream: Any = None) -> Work:
    """ncclSend: `count` elements to rank `peer`, matched with that rank's recv from this one (in order)."""
    return _p2p("send", sendbuff, count, datatype, peer, comm, stream)


def recv(recvbuff: Any, count: int, datatype: Any, peer: int, comm: Communicator, stream: Any = None) -> Work:
    """ncclRecv: `count` elements from rank `peer` into `recvbuff`."""
    return _p2p("recv", recvbuff, count, datatype, peer, comm, stream)


def _p2p(api: str, buf: Any, count: Any, datatype: Any, peer: Any, comm: Communicator, stream: Any) -> Work:
    if not isinstance(comm, Communicator):
        raise NcclError("ncclInvalidArgument", f"[{api}] comm must be a Communicator, got {type(comm).__name__}")
    comm.check(api)
    n = _count(count, api)
    dt = DataType.of(datatype)
    if isinstance(peer, bool) or not isinstance(peer, int) or not 0 <= peer < comm.nranks:
        raise NcclError("ncclInvalidArgument", f"[{api}] peer must be a rank in [0, {comm.nranks}), got {peer!r}")
    s = comm.stream_of(stream, api)
    ptr = _buffer(buf, n * dt.size, comm, api, "sendbuff" if api == "send" else "recvbuff")
    src, dst = (comm.rank, peer) if api == "send" else (peer, comm.rank)
    nth = comm.p2p_seq.get((api, peer), 0)
    comm.p2p_seq[(api, peer)] = nth + 1
    call = Call(api, comm, ptr if api == "send" else 0, ptr if api == "recv" else 0, n, dt, None, None, peer, s,
                None, comm.order.unit_of(current_group()))
    return _submit(comm, ("p2p", src, dst, nth), "send_recv", 2, call, 0 if api == "send" else 1, _agree_p2p,
                   _execute_p2p)


def _agree_p2p(first: Call, call: Call) -> str | None:
    if first.api == call.api:
        return f"two {call.api} calls matched each other"
    if first.count != call.count or first.dtype != call.dtype:
        return "count or datatype differs between send and recv"
    return None


# --- execution -----------------------------------------------------------------------------------------


def _chunks(count: int, n: int, size: int = 1) -> list[tuple[int, int]]:
    """(offset, length) in elements of n chunks of `count` elements of `size` bytes: equal multiples of
    16 bytes (so the vector kernel takes them whole), the last one what remains."""
    align = max(1, VECTOR_BYTES // size)
    per = -(-count // n)
    per = -(-per // align) * align
    out, off = [], 0
    for _ in range(n):
        length = max(0, min(per, count - off))
        out.append((off, length))
        off += length
    return out


def _execute_collective(op: Op) -> None:
    calls: list[Call] = [op.calls[r] for r in range(len(op.calls))]
    api, n, c0 = calls[0].api, len(calls), calls[0]
    size, count = c0.dtype.size, c0.count
    total = count * size * (n if api in ("all_gather", "reduce_scatter", "all_to_all") else 1)
    algorithm = "ring"
    if api == "all_reduce":
        specs = [c.comm.device.spec for c in calls]
        algorithm = c0.algorithm or choose_algorithm(api, total, specs,
                                                         allowed_algorithms(config.settings().nccl_algo))
        if algorithm == "nvls" and not nvls_supported(specs):  # asked for by name
            raise NcclError("ncclInvalidUsage", f"[all_reduce] algorithm='nvls' (NVLink SHARP) needs more than 2 "
                            f"GPUs on a third-generation NVSwitch (HGX H100/H200); the ranks run on {n} x "
                            f"{specs[0].name}")
    build = {"tree": _all_reduce_tree, "nvls": _all_reduce_nvls}.get(algorithm, _SCHEDULES[api]) if n > 1 \
        else _SCHEDULES[api]
    steps, phases, links = build(calls, count, size)
    _run(op, api, calls, steps, phases, total, links, algorithm)


def _execute_p2p(op: Op) -> None:
    snd, rcv = op.calls[0], op.calls[1]
    steps = [[[], [_Launch(rcv.recv, 0, snd.send, snd.count, COPY)]]]
    _run(op, "send_recv", [snd, rcv], steps, ["p2p"], snd.count * snd.dtype.size, "all")


def _run(op: Op, api: str, calls: list[Call], steps: list[list[list[_Launch]]], phases: list[str], nbytes: int,
         links: str, algorithm: str = "ring") -> None:
    """Queue the schedule on every rank's stream, each step after the previous step of the ranks it
    exchanges with (`links`: 'ring' neighbours, 'tree' parent and children, or 'all')."""
    n = len(calls)
    specs = [c.comm.device.spec for c in calls]
    m = model(api, nbytes, specs, algorithm)
    dt = calls[0].dtype

    def deps(r: int) -> list[int]:
        if links == "all":
            return [q for q in range(n) if q != r]
        if links == "tree":
            return [q for q in ((r - 1) // 2, 2 * r + 1, 2 * r + 2) if 0 <= q < n and q != r]
        return sorted({(r - 1) % n, (r + 1) % n} - {r})

    def mark(r: int) -> Event:
        ev = Event(calls[r].stream.context, timing=False)
        calls[r].stream.record(ev)
        return ev

    ranks = [c.comm.rank for c in calls]
    collective = api != "send_recv"  # (sends and receives use no scratch: those of one group run side by side)
    with library_call(f"nccl.{api}", cuda_name=_VENDOR[api], rocm_name=f"{_VENDOR[api]} (RCCL)", nranks=n,
                      bytes=nbytes, datatype=dt.name, ranks=ranks) as ev:
        for c in calls:  # the communicator's issue order: after its previous operation, whatever its stream
            for before in c.comm.order.waits(c.unit, collective):
                if before.stream is not c.stream:  # (one stream orders its own work)
                    c.stream.wait_event(before)
        prev = [mark(r) for r in range(n)]  # the data each rank queued before the call
        launches = copies = 0
        for t, step in enumerate(steps):
            for r in range(n):
                s = calls[r].stream
                for q in deps(r):
                    s.wait_event(prev[q])
                for la in step[r]:
                    engine = "copy" if la.n and _on_copy_engine(la, dt, calls[r].comm.device.index) else "compute"
                    if engine == "copy":
                        s.context.memcpy_dtod(la.dst, la.b, la.n * dt.size, s, asynchronous=True, peer=True)
                        copies += 1
                    elif la.n and la.srcs:
                        launches += sum_many(dt, la.dst, la.srcs, la.n, s)
                    elif la.n:
                        launches += apply(dt, la.dst, la.a, la.b, la.n, la.op, la.divisor, s)
                    trace.emit("L4", "nccl_step", rank=ranks[r], device=calls[r].comm.device.index, step=t,
                               phase=phases[t] if t < len(phases) else phases[-1], chunk=la.chunk,
                               bytes=la.n * dt.size, engine=engine, model_start_s=t * m.step_seconds,
                               model_end_s=(t + 1) * m.step_seconds)
            prev = [mark(r) for r in range(n)]
        for r in range(n):  # nobody reuses a buffer a neighbour may still read
            for q in deps(r):
                calls[r].stream.wait_event(prev[q])
        for r, c in enumerate(calls):  # where the operation ends on each rank, for the rank's next one
            c.comm.order.done(c.unit, mark(r), collective)
        op.model, op.launches, op.copies = m, launches, copies
        ev.update(kernel="nccl_apply", algorithm=algorithm, launches=launches, peer_copies=copies, modeled_s=m.seconds,
                  algbw=m.algbw, busbw=m.busbw)


def _on_copy_engine(la: _Launch, dt: DataType, device: int) -> bool:
    """Whether `la` is a copy of at least CE_MIN_BYTES from another device's memory (a peer copy)."""
    return la.op == COPY and la.n * dt.size >= CE_MIN_BYTES and pointer_get_attributes(la.b).device != device


_Schedule = tuple[list[list[list[_Launch]]], list[str], str]


def _copy_if(dst: int, src: int, n: int) -> list[_Launch]:
    return [] if dst == src else [_Launch(dst, 0, src, n, COPY)]


def _all_reduce(calls: list[Call], count: int, size: int) -> _Schedule:
    n = len(calls)
    red = calls[0].op
    assert red is not None
    if n == 1:
        c = calls[0]
        return [[_copy_if(c.recv, c.send, count)]], ["copy"], "ring"
    code = RedOp.ncclSum if red == RedOp.ncclAvg else red
    chunks = _chunks(count, n, size)
    steps: list[list[list[_Launch]]] = []
    for s in range(n - 1):  # reduce-scatter: rank r adds its predecessor's partial of chunk r-s-1
        step = []
        for r, c in enumerate(calls):
            p = calls[(r - 1) % n]
            k = (r - s - 1) % n
            off, length = chunks[k]
            b = (p.send if s == 0 else p.recv) + off * size
            div = n if red == RedOp.ncclAvg and s == n - 2 else 0
            step.append([_Launch(c.recv + off * size, c.send + off * size, b, length, int(code), div, k)])
        steps.append(step)
    for s in range(n - 1):  # all-gather: rank r copies the finished chunk r-s from its predecessor
        step = []
        for r, c in enumerate(calls):
            p = calls[(r - 1) % n]
            k = (r - s) % n
            off, length = chunks[k]
            step.append([_Launch(c.recv + off * size, 0, p.recv + off * size, length, COPY, 0, k)])
        steps.append(step)
    return steps, ["reduce-scatter"] * (n - 1) + ["all-gather"] * (n - 1), "ring"


def _all_reduce_tree(calls: list[Call], count: int, size: int) -> _Schedule:
    """Reduce up the binary tree (rank r's parent is (r-1)//2), deepest level first, then copy the
    result down it, one level per step."""
    n = len(calls)
    red = calls[0].op
    assert red is not None
    code = RedOp.ncclSum if red == RedOp.ncclAvg else red
    depth = tree_depth(n)

    def level(r: int) -> int:
        return (r + 1).bit_length() - 1

    steps: list[list[list[_Launch]]] = [[_copy_if(c.recv, c.send, count) for c in calls]]
    for d in range(depth - 1, -1, -1):  # reduce: ranks at level d add their children's partial results
        step: list[list[_Launch]] = [[] for _ in range(n)]
        for r, c in enumerate(calls):
            kids = [k for k in (2 * r + 1, 2 * r + 2) if k < n]
            if level(r) != d or not kids:
                continue
            for i, k in enumerate(kids):
                last = r == 0 and i == len(kids) - 1
                step[r].append(_Launch(c.recv, c.recv, calls[k].recv, count, int(code),
                                       n if red == RedOp.ncclAvg and last else 0))
        steps.append(step)
    for d in range(1, depth + 1):  # broadcast: ranks at level d copy their parent's result
        step = [[] for _ in range(n)]
        for r, c in enumerate(calls):
            if level(r) == d:
                step[r] = [_Launch(c.recv, 0, calls[(r - 1) // 2].recv, count, COPY)]
        steps.append(step)
    return steps, ["copy-in"] + ["tree-reduce"] * depth + ["tree-broadcast"] * depth, "tree"


def _all_reduce_nvls(calls: list[Call], count: int, size: int) -> _Schedule:
    """NVLink SHARP's two steps, on the device kernels: rank r reduces shard r of every rank's sendbuff
    (what the switch sums as rank r reads the shard through the multicast address: multimem.ld_reduce),
    then copies every other rank's finished shard (what the switch copies to every GPU as its owner
    writes it once: multimem.st). The emulation's reduction order, the same for every shard: rank 0's
    element, then + rank 1's, + rank 2's, ... in rank order (the switch's own order is not documented);
    AVG divides in the last addition. Sums (and an average's sum before its last addition) of the types
    `sums_many` takes add up to MAX_INPUTS ranks' shards in one launch, as the switch reads every rank's
    element at once; other operations and types chain two-input launches."""
    n = len(calls)
    red = calls[0].op
    assert red is not None
    code = RedOp.ncclSum if red == RedOp.ncclAvg else red
    many = code == RedOp.ncclSum and sums_many(calls[0].dtype) and n > 2  # (NVLS needs 3 ranks or more anyway)
    chunks = _chunks(count, n, size)
    reduce_step: list[list[_Launch]] = []
    for r, c in enumerate(calls):
        off, length = chunks[r]
        at = off * size
        srcs = [q.send + at for q in calls]
        div = n if red == RedOp.ncclAvg else 0
        # partial results in scratch: in place, writing recv's shard before the last launch would overwrite
        # the rank's own contribution before its turn in the order
        acc = c.comm.scratch(max(1, length) * size) if not many or div or n > MAX_INPUTS else 0
        if many:
            reduce_step.append(_sum_launches(c.recv + at, acc, srcs, length, div, r))
            continue
        launches = []
        for k in range(1, n):
            a = srcs[0] if k == 1 else acc
            last = k == n - 1
            launches.append(_Launch(c.recv + at if last else acc, a, srcs[k], length, int(code),
                                    div if last else 0, r))
        reduce_step.append(launches)
    gather_step = [[_Launch(c.recv + chunks[k][0] * size, 0, calls[k].recv + chunks[k][0] * size, chunks[k][1], COPY,
                            0, k) for k in range(n) if k != r] for r, c in enumerate(calls)]
    return [reduce_step, gather_step], ["nvls-reduce-scatter", "nvls-all-gather"], "all"


def _sum_launches(dst: int, acc: int, srcs: list[int], length: int, div: int, chunk: int) -> list[_Launch]:
    """dst = srcs[0] + srcs[1] + ... (left to right) as many-input sums of up to MAX_INPUTS sources, each
    after the first continuing from `acc` (scratch; 0 when one launch does); with `div`, the last source is
    added and the sum divided by `div` in a two-input launch of its own (ncclAvg)."""
    rest, last = (srcs[:-1], srcs[-1]) if div else (srcs, 0)
    out: list[_Launch] = []
    while rest:
        group = ([acc] if out else []) + rest[:MAX_INPUTS - bool(out)]
        rest = rest[MAX_INPUTS - bool(out):]
        out.append(_Launch(dst if not rest and not div else acc, 0, 0, length, int(RedOp.ncclSum), 0, chunk,
                           tuple(group)))
    if div:
        out.append(_Launch(dst, acc, last, length, int(RedOp.ncclSum), div, chunk))
    return out


def _broadcast(calls: list[Call], count: int, size: int) -> _Schedule:
    n = len(calls)
    root = calls[0].root
    assert root is not None
    rc = calls[root]
    if n == 1:
        return [[_copy_if(rc.recv, rc.send, count)]], ["copy"], "ring"
    steps: list[list[list[_Launch]]] = []
    for s in range(n - 1):  # a chain along the ring from the root
        step: list[list[_Launch]] = [[] for _ in range(n)]
        k = (root + s + 1) % n
        src = rc.send if s == 0 else calls[(k - 1) % n].recv
        step[k] = [_Launch(calls[k].recv, 0, src, count, COPY)]
        if s == 0:
            step[root] = _copy_if(rc.recv, rc.send, count)
        steps.append(step)
    return steps, ["broadcast"], "ring"


def _reduce(calls: list[Call], count: int, size: int) -> _Schedule:
    n = len(calls)
    root, red = calls[0].root, calls[0].op
    assert root is not None and red is not None
    code = RedOp.ncclSum if red == RedOp.ncclAvg else red
    if n == 1:
        c = calls[0]
        return [[_copy_if(c.recv, c.send, count)]], ["copy"], "ring"
    scratch = [c.comm.scratch(count * size) for c in calls]
    steps: list[list[list[_Launch]]] = []
    for s in range(n):  # partial sums travel along the ring and end at the root
        step: list[list[_Launch]] = [[] for _ in range(n)]
        k = (root + 1 + s) % n
        p = (k - 1) % n
        if s == 0:
            step[k] = [_Launch(scratch[k], 0, calls[k].send, count, COPY)]
        elif s < n - 1:
            step[k] = [_Launch(scratch[k], calls[k].send, scratch[p], count, int(code))]
        else:
            step[k] = [_Launch(calls[k].recv, calls[k].send, scratch[p], count, int(code),
                               n if red == RedOp.ncclAvg else 0)]
        steps.append(step)
    return steps, ["reduce"], "ring"


def _all_gather(calls: list[Call], count: int, size: int) -> _Schedule:
    n = len(calls)
    first = [_copy_if(c.recv + r * count * size, c.send, count) for r, c in enumerate(calls)]
    steps: list[list[list[_Launch]]] = [first]
    for s in range(1, n):
        step = []
        for r, c in enumerate(calls):
            p = calls[(r - 1) % n]
            k = (r - s) % n
            off = k * count * size
            step.append([_Launch(c.recv + off, 0, p.recv + off, count, COPY, 0, k)])
        steps.append(step)
    return steps, ["copy-in"] + ["all-gather"] * (n - 1), "ring"


def _reduce_scatter(calls: list[Call], count: int, size: int) -> _Schedule:
    n = len(calls)
    red = calls[0].op
    assert red is not None
    if n == 1:
        c = calls[0]
        return [[_copy_if(c.recv, c.send, count)]], ["copy"], "ring"
    code = RedOp.ncclSum if red == RedOp.ncclAvg else red
    scratch = [c.comm.scratch(n * count * size) for c in calls]
    steps: list[list[list[_Launch]]] = []
    for s in range(n - 1):  # as all_reduce's first half, shifted so rank r finishes block r
        step = []
        last = s == n - 2
        for r, c in enumerate(calls):
            p = (r - 1) % n
            k = (r - s - 2) % n
            off = k * count * size
            b = (calls[p].send + off) if s == 0 else scratch[p] + off
            dst = c.recv if last else scratch[r] + off
            div = n if red == RedOp.ncclAvg and last else 0
            step.append([_Launch(dst, c.send + off, b, count, int(code), div, k)])
        steps.append(step)
    return steps, ["reduce-scatter"], "ring"


def _all_to_all(calls: list[Call], count: int, size: int) -> _Schedule:
    step = [[_Launch(c.recv + j * count * size, 0, calls[j].send + r * count * size, count, COPY, 0, j)
             for j in range(len(calls))] for r, c in enumerate(calls)]
    return [step], ["all-to-all"], "all"


_SCHEDULES: dict[str, Callable[[list[Call], int, int], _Schedule]] = {
    "all_reduce": _all_reduce, "broadcast": _broadcast, "reduce": _reduce, "all_gather": _all_gather,
    "reduce_scatter": _reduce_scatter, "all_to_all": _all_to_all,
}
