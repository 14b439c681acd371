"""torch.distributed's surface: the process group of this job, its rank and size, and the collectives on
tensors.

One process per rank (`strata run --nproc N`, or any launcher setting RANK/WORLD_SIZE/MASTER_ADDR/
MASTER_PORT): `init_process_group` meets the others through the store at MASTER_ADDR:MASTER_PORT
(`env://`, the default) or the address of a `tcp://host:port` init method, then connects to every
other rank (`transport.py`). Backend `nccl` takes cuda tensors and combines on the virtual GPU; `gloo`
takes cpu tensors; the default ("cuda:nccl,cpu:gloo", as PyTorch's) picks by the tensor's device.
Every call is synchronous; `async_op=True` returns a completed `Work`, so code that waits on it runs.
"""

from __future__ import annotations

import datetime
import os
import threading
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata import trace
from strata.framework import creation
from strata.framework.distributed import algorithms as alg
from strata.framework.distributed import ray_transport
from strata.framework.distributed.algorithms import Buffer, DeviceBuffer, HostBuffer
from strata.framework.distributed.store import TCPStore
from strata.framework.distributed.transport import DistBackendError, Mesh
from strata.framework.tensor import Tensor
from strata.libs.nccl.model import choose_algorithm, model

DEFAULT_TIMEOUT = datetime.timedelta(minutes=5)


class ReduceOp:
    """torch.distributed.ReduceOp: SUM, PRODUCT, MIN, MAX, AVG."""

    SUM = "SUM"
    PRODUCT = "PRODUCT"
    MIN = "MIN"
    MAX = "MAX"
    AVG = "AVG"


class Backend:
    """torch.distributed.Backend names."""

    NCCL = "nccl"
    GLOO = "gloo"


class Work:
    """What `async_op=True` returns: the call already ran, so `wait()` returns True at once."""

    def wait(self, timeout: Any = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


@dataclass
class ProcessGroup:
    """A set of ranks (global rank numbers, in order) that collectives run over."""

    ranks: list[int]
    backend: str
    gid: int = 0  # the group's number: the world is 0, then new_group's calls in order (the same on every rank)
    seq: int = 0  # collectives called on the group so far

    def rank(self) -> int:
        return self.ranks.index(_world().rank)

    def size(self) -> int:
        return len(self.ranks)


class _NonMember:
    """What `new_group` returns on a rank that is not in the group (torch's GroupMember.NON_GROUP_MEMBER)."""

    def __repr__(self) -> str:
        return "<non-group member>"


class GroupMember:
    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = _NonMember()


@dataclass
class _World:
    rank: int
    world_size: int
    backend: str
    store: TCPStore
    mesh: Mesh
    timeout: float
    group: ProcessGroup
    barriers: int = 0
    groups: int = 0


_state: _World | None = None
_lock = threading.Lock()


def _world() -> _World:
    if _state is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return _state


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return _state is not None


def is_nccl_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return True


def _seconds(timeout: Any) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, store: TCPStore | None = None,
                       group_name: str = "", pg_options: Any = None, device_id: Any = None) -> None:
    """Join the job's default process group.

    Args:
        backend: "nccl" (cuda tensors), "gloo" (cpu tensors), or None for both by device.
        init_method: "env://" (default: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment)
            or "tcp://host:port" (rank and world_size from the arguments or the environment).
        timeout: how long a rank waits for the others (timedelta or seconds; default 5 minutes).
        world_size, rank: override the environment.
        store: an existing TCPStore to meet through instead of the init method's.
    Raises:
        ValueError: an unknown backend or init method, or missing rank/world size.
        RuntimeError: called twice.
    """
    global _state
    with _lock:
        if _state is not None:
            raise RuntimeError("trying to initialize the default process group twice!")
        name = (backend or "cuda:nccl,cpu:gloo").lower()
        if name not in ("nccl", "gloo", "cuda:nccl,cpu:gloo", "cpu:gloo,cuda:nccl"):
            raise ValueError(f"Invalid backend: '{backend}' (strata provides nccl and gloo)")
        seconds = _seconds(timeout)
        rank = rank if rank >= 0 else _env_int("RANK")
        world_size = world_size if world_size > 0 else _env_int("WORLD_SIZE")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in [0, world_size={world_size})")
        own_store = store is None
        endpoint = ray_transport.current()  # a rank running inside its Ray actor: messages go through Ray
        if store is None:
            host, port = _address(init_method or "env://")
            gone = None if endpoint is None else (lambda: endpoint.failed.get(0))  # rank 0 serves the store
            store = TCPStore(host, port, world_size, is_master=rank == 0, timeout=seconds, gone=gone)
        try:
            with trace.span("L5", "c10d::init_process_group", backend=name, rank=rank, world_size=world_size):
                # listen where this host reaches the store: loopback on one machine, the node's address
                # on a cluster (a loopback address published to another node could not be reached)
                mesh = (ray_transport.RayMesh(endpoint, rank, world_size, seconds) if endpoint is not None
                        else Mesh(store, rank, world_size, seconds, host=store.sock.getsockname()[0]))
        except BaseException:
            if own_store:
                store.close(linger=0)
            raise
        group = ProcessGroup(list(range(world_size)), name)
        _state = _World(rank, world_size, name, store, mesh, seconds, group)
        GroupMember.WORLD = group


def _env_int(name: str) -> int:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment variable "
                         f"{name} expected, but not set")
    return int(value)


def _address(init_method: str) -> tuple[str, int]:
    if init_method == "env://":
        addr = os.environ.get("MASTER_ADDR")
        port = os.environ.get("MASTER_PORT")
        if addr is None or port is None:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment variable "
                             f"{'MASTER_ADDR' if addr is None else 'MASTER_PORT'} expected, but not set")
        return addr, int(port)
    url = urllib.parse.urlparse(init_method)
    if url.scheme != "tcp" or url.hostname is None or url.port is None:
        raise ValueError(f"init_method must be 'env://' or 'tcp://host:port', got {init_method!r}")
    return url.hostname, url.port


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default group: close the connections (and the store, on rank 0)."""
    global _state
    with _lock:
        if _state is None:
            return
        if group is not None and group is not _state.group:
            return
        _state.mesh.close()
        _state.store.close(park=True)
        _state = None
        GroupMember.WORLD = None


def get_rank(group: ProcessGroup | None = None) -> int:
    w = _world()
    if group is None:
        return w.rank
    return group.ranks.index(w.rank) if w.rank in group.ranks else -1


def get_world_size(group: ProcessGroup | None = None) -> int:
    w = _world()
    return w.world_size if group is None else len(group.ranks)


def get_backend(group: ProcessGroup | None = None) -> str:
    return _world().backend


def new_group(ranks: Sequence[int] | None = None, timeout: Any = None, backend: str | None = None,
              pg_options: Any = None, use_local_synchronization: bool = False) -> Any:
    """A group of `ranks` (all ranks when None). Every rank of the job calls it, as in PyTorch; ranks
    outside get GroupMember.NON_GROUP_MEMBER."""
    w = _world()
    members = sorted(set(range(w.world_size) if ranks is None else ranks))
    if any(not 0 <= r < w.world_size for r in members):
        raise ValueError(f"new_group: ranks {list(ranks or [])} must be in [0, {w.world_size})")
    w.groups += 1
    if w.rank not in members:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(members, backend or w.backend, w.groups)


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Wait until every rank of the group reached its barrier (through the store)."""
    w = _world()
    g = _group(group)
    with trace.span("L5", "c10d::barrier", rank=w.rank), w.mesh.call(_tag(g, "barrier")):
        # a one-byte ring all-reduce: nobody leaves before everyone arrived (Gloo's barrier is one too)
        alg.all_reduce(w.mesh, g.ranks, HostBuffer(np.zeros(max(1, len(g.ranks)), np.uint8)), "SUM")
    return Work() if async_op else None


def _group(group: Any) -> ProcessGroup:
    w = _world()
    if group is None:
        return w.group
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("this rank is not a member of the group it passed")
    return group


def _tag(g: ProcessGroup, name: str, t: Tensor | None = None, **args: Any) -> str:
    """The call as every rank of the group must make it (checked on each message between ranks): the
    collective, its number in the group, the tensor's size and dtype and the arguments that must agree."""
    g.seq += 1
    what = "" if t is None else f"{t.numel()} x {t.dtype}"
    extra = "".join(f", {k}={v}" for k, v in args.items())
    return f"{name} #{g.seq} of group {g.gid} ({what}{extra if what else extra[2:]})"


def _same_kind(a: Tensor, b: Tensor, api: str, names: tuple[str, str]) -> None:
    """Collectives that move bytes between two tensors need both of one dtype on one device."""
    for t, name in zip((a, b), names, strict=True):
        if not isinstance(t, Tensor):
            raise TypeError(f"{api}: {name} must be a Tensor, got {type(t).__name__}")
    if a.dtype is not b.dtype:
        raise TypeError(f"{api}: {names[0]} has dtype {a.dtype}, {names[1]} has {b.dtype}; they must match")
    if a.device != b.device:
        raise ValueError(f"{api}: {names[0]} is on {a.device}, {names[1]} on {b.device}; they must be on one device")


def _buffer(t: Tensor, backend: str, what: str = "tensor") -> Buffer:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a Tensor, got {type(t).__name__}")
    if not t.is_contiguous():
        raise ValueError(f"{what} must be contiguous")
    dev = t.device
    if dev.type == "cuda":
        if backend == "gloo":
            raise RuntimeError("No backend type associated with device type cuda (the group's backend is gloo)")
        return DeviceBuffer(t.data_ptr(), t.numel(), t.dtype.np, dev.index if dev.index is not None else 0)
    if backend == "nccl":
        raise RuntimeError("No backend type associated with device type cpu (the group's backend is nccl; use "
                           "gloo or move the tensor to cuda)")
    return HostBuffer(t.detach().numpy())


def _span(name: str, t: Tensor, **args: Any) -> Any:
    return trace.span("L5", f"c10d::{name}", rank=_world().rank, bytes=t.numel() * t.dtype.itemsize, **args)


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Combine `tensor` over the group's ranks, in place on every rank."""
    g = _group(group)
    if op not in alg.OPS:
        raise ValueError(f"unsupported ReduceOp {op!r} (supported: {', '.join(alg.OPS)})")
    buf = _buffer(tensor, g.backend)  # checked before the call counts: a rejected call leaves no trace
    with _span("allreduce_", tensor, op=op) as ev, _world().mesh.call(_tag(g, "all_reduce", tensor, op=op)):
        alg.all_reduce(_world().mesh, g.ranks, buf, op)
        if isinstance(buf, DeviceBuffer):  # what the same call would take on the modeled platform's fabric,
            nbytes, specs = tensor.numel() * tensor.dtype.itemsize, [buf.device.spec] * len(g.ranks)
            algorithm = choose_algorithm("all_reduce", nbytes, specs)  # with the algorithm NCCL's tuner picks
            m = model("all_reduce", nbytes, specs, algorithm)
            ev.update(modeled_s=m.seconds, algbw=m.algbw, busbw=m.busbw, algorithm=algorithm)
    return Work() if async_op else None


def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Every rank's `tensor` gets global rank `src`'s."""
    g = _group(group)
    if src not in g.ranks:
        raise ValueError(f"broadcast: src rank {src} is not in the group {g.ranks}")
    buf = _buffer(tensor, g.backend)
    with _span("broadcast_", tensor, src=src), _world().mesh.call(_tag(g, "broadcast", tensor, src=src)):
        alg.broadcast(_world().mesh, g.ranks, buf, src)
    return Work() if async_op else None


def reduce(tensor: Tensor, dst: int, op: str = ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False) -> Work | None:
    """`tensor` on rank `dst` gets the combination (the others' tensors may change too, as with NCCL)."""
    all_reduce(tensor, op, group)
    return Work() if async_op else None


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """`output_tensor` (world x input numel) gets every rank's `input_tensor`, in rank order."""
    g = _group(group)
    n = len(g.ranks)
    _same_kind(output_tensor, input_tensor, "all_gather_into_tensor", ("output_tensor", "input_tensor"))
    if output_tensor.numel() != n * input_tensor.numel():
        raise ValueError(f"output tensor must have {n} x {input_tensor.numel()} elements, has {output_tensor.numel()}")
    out = _buffer(output_tensor, g.backend, "output_tensor")
    inp = _buffer(input_tensor, g.backend, "input_tensor")
    with _span("_allgather_base_", input_tensor), _world().mesh.call(_tag(g, "all_gather", input_tensor)):
        i = g.ranks.index(_world().rank)
        out.put(i * input_tensor.numel(), inp.get(0, input_tensor.numel()))
        alg.all_gather(_world().mesh, g.ranks, out)
    return Work() if async_op else None


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """tensor_list[i] gets rank i's `tensor`."""
    g = _group(group)
    if len(tensor_list) != len(g.ranks):
        raise ValueError(f"tensor_list must hold {len(g.ranks)} tensors, has {len(tensor_list)}")
    for i, t in enumerate(tensor_list):
        _same_kind(t, tensor, "all_gather", (f"tensor_list[{i}]", "tensor"))
        if t.numel() != tensor.numel():
            raise ValueError(f"all_gather: tensor_list[{i}] has {t.numel()} elements, tensor has {tensor.numel()}; "
                             "each must have as many")
    flat = creation.empty(len(g.ranks) * tensor.numel(), dtype=tensor.dtype, device=tensor.device)
    all_gather_into_tensor(flat, tensor.contiguous().reshape(-1), group)
    k = tensor.numel()
    for i, t in enumerate(tensor_list):
        t.copy_(flat[i * k:(i + 1) * k].reshape(t.shape))
    return Work() if async_op else None


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: str = ReduceOp.SUM,  # noqa: A002 - torch's name
                          group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """`output` on rank i gets block i of the combination of every rank's `input`."""
    g = _group(group)
    n = len(g.ranks)
    if op not in alg.OPS:
        raise ValueError(f"unsupported ReduceOp {op!r} (supported: {', '.join(alg.OPS)})")
    _same_kind(output, input, "reduce_scatter_tensor", ("output", "input"))
    if input.numel() != n * output.numel():
        raise ValueError(f"input tensor must have {n} x {output.numel()} elements, has {input.numel()}")
    out = _buffer(output, g.backend, "output")
    _buffer(input, g.backend, "input")
    with _span("_reduce_scatter_base_", input, op=op), _world().mesh.call(_tag(g, "reduce_scatter", output, op=op)):
        work = input.detach().contiguous().clone()  # the ring combines in place: the caller's input stays
        buf = _buffer(work, g.backend, "input")
        off, k = alg.reduce_scatter(_world().mesh, g.ranks, buf, op)
        out.put(0, buf.get(off, k))
    return Work() if async_op else None


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: Sequence[int] | None = None,  # noqa: A002
                      input_split_sizes: Sequence[int] | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Split `input` along dim 0 and send split j to the group's rank j; `output`'s split i (along dim 0)
    receives rank i's split for this rank. The splits are equal (dim 0 divided by the group size) unless
    `input_split_sizes` / `output_split_sizes` give each one's rows; rank i's input_split_sizes[j] must
    equal rank j's output_split_sizes[i] (checked when the blocks arrive: DistBackendError).

    Raises:
        RuntimeError: as torch words it: "Tensor's dim 0 does not divide equally across group size",
            "Number of tensor splits not equal to group size", "Split sizes doesn't match total dim 0 size".
        TypeError / ValueError: tensors of two dtypes or devices, rows (elements per dim-0 index) that differ.
    """
    g = _group(group)
    n = len(g.ranks)
    _same_kind(output, input, "all_to_all_single", ("output", "input"))
    rows_out, rows_in = _splits(output_split_sizes, output, n), _splits(input_split_sizes, input, n)
    row_out, row_in = _row(output), _row(input)
    if row_out != row_in and output.numel() and input.numel():
        raise ValueError(f"all_to_all_single: a dim-0 index of output holds {row_out} elements, of input {row_in}; "
                         "the rows must match")
    out, inp = _buffer(output, g.backend, "output"), _buffer(input, g.backend, "input")
    sends, recvs = _blocks(inp, rows_in, row_in), _blocks(out, rows_out, row_out)
    with _span("alltoall_base_", input), _world().mesh.call(_tag(g, "all_to_all", None, dtype=input.dtype)):
        alg.all_to_all(_world().mesh, g.ranks, sends, recvs, "all_to_all_single")
    return Work() if async_op else None


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor], group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Send input_tensor_list[j] to the group's rank j; output_tensor_list[i] receives rank i's tensor for
    this rank. Sizes may differ from rank to rank; rank i's input_tensor_list[j] must have as many elements
    as rank j's output_tensor_list[i] (checked when the tensors arrive: DistBackendError).

    Raises:
        TypeError: a list argument that is not a list of Tensors (torch's message).
        ValueError: tensors of different dtypes (torch's message), lists not of the group's size, tensors
            on different devices, non-contiguous tensors.
    """
    g = _group(group)
    n = len(g.ranks)
    for lst, name in ((output_tensor_list, "output_tensor_list"), (input_tensor_list, "input_tensor_list")):
        if not isinstance(lst, list) or not all(isinstance(t, Tensor) for t in lst):
            raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor] but "
                            f"got {type(lst)} instead.")
        if len(lst) != n:
            raise ValueError(f"all_to_all: {name} must hold one tensor per rank of the group ({n}), has {len(lst)}")
    first = input_tensor_list[0]
    for t in output_tensor_list + input_tensor_list:
        if t.dtype is not first.dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes Found {first.dtype} and  {t.dtype}")
        if t.device != first.device:
            raise ValueError(f"all_to_all: tensors on {first.device} and {t.device}; they must be on one device")
    sends = [(_buffer(t, g.backend, f"input_tensor_list[{j}]"), 0, t.numel()) for j, t in enumerate(input_tensor_list)]
    recvs = [(_buffer(t, g.backend, f"output_tensor_list[{j}]"), 0, t.numel())
             for j, t in enumerate(output_tensor_list)]
    with _span("alltoall_", first), _world().mesh.call(_tag(g, "all_to_all", None, dtype=first.dtype)):
        alg.all_to_all(_world().mesh, g.ranks, sends, recvs, "all_to_all")
    return Work() if async_op else None


def _splits(sizes: Sequence[int] | None, t: Tensor, n: int) -> list[int]:
    """The rows (dim-0 indices) of each of the n splits of `t`, checked as torch's checkSplitSizes does."""
    if t.dim() == 0:
        raise ValueError("all_to_all_single: the tensors need at least one dimension (they are split along dim 0)")
    dim0 = t.shape[0]
    if sizes is None or len(sizes) == 0:
        if dim0 % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        return [dim0 // n] * n
    rows = [int(k) for k in sizes]
    if len(rows) != n:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if any(k < 0 for k in rows):
        raise RuntimeError(f"Split sizes must be >= 0, got {rows}")
    if sum(rows) != dim0:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return rows


def _row(t: Tensor) -> int:
    """Elements per dim-0 index of `t`."""
    return t.numel() // t.shape[0] if t.shape[0] else 1


def _blocks(buf: Buffer, rows: list[int], row: int) -> list[alg.Block]:
    out, off = [], 0
    for k in rows:
        out.append((buf, off * row, k * row))
        off += k
    return out


def send(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0) -> None:
    """Send `tensor` to global rank `dst` (matched by its `recv` from this rank, in order)."""
    w = _world()
    if dst == w.rank or not 0 <= dst < w.world_size:
        raise ValueError(f"send: invalid destination rank {dst} (this is rank {w.rank} of {w.world_size})")
    g = _group(group)
    buf = _buffer(tensor, g.backend)
    with _span("send", tensor, dst=dst), w.mesh.call("send/recv"):
        w.mesh.send(dst, buf.get(0, tensor.numel()))


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0) -> int:
    """Receive into `tensor` from global rank `src`; returns `src`."""
    w = _world()
    if src is None:
        raise NotImplementedError("recv from any source is not supported by strata; pass src")
    if src == w.rank or not 0 <= src < w.world_size:
        raise ValueError(f"recv: invalid source rank {src} (this is rank {w.rank} of {w.world_size})")
    g = _group(group)
    buf = _buffer(tensor, g.backend)
    with _span("recv_", tensor, src=src), w.mesh.call("send/recv"):
        data = w.mesh.recv(src)
        if len(data) != tensor.numel() * buf.itemsize:
            raise DistBackendError(f"rank {w.rank}: recv expected {tensor.numel() * buf.itemsize} bytes from rank "
                                   f"{src}, got {len(data)} (the sender's tensor has another size or dtype)")
        buf.put(0, data)
    return src
