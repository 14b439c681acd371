"""Queues: the `Queue` handle (a ring of AQL packets and its doorbell signal), create/destroy, the
read/write index operations with every memory-order suffix, and writing and publishing packets by
hand (the bytes come from hw/aql.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from strata import trace
from strata.driver.device import MAX_QUEUE_SIZE
from strata.hw import aql
from strata.hw.aql import PacketType
from strata.hw.cp import HwQueue
from strata.runtime.hsa._runtime import _destroy_queue, _rt
from strata.runtime.hsa.agent import Agent, _agent
from strata.runtime.hsa.signals import Signal, _handle
from strata.runtime.hsa.status import (
    QUEUE_MIN_SIZE,
    UINT32_MAX,
    AgentFeature,
    HsaError,
    QueueType,
    Status,
    _enum,
    _queue_error,
)
from strata.runtime.queue import UserQueue
from strata.runtime.signals import Signal as CoreSignal


class Queue:
    """hsa_queue_t: a ring of `size` 64-byte AQL packets at `base_address` (`ring` is the same bytes
    as a NumPy uint8 array), its `doorbell_signal` and `id`. Read and write indices are reached
    through the `queue_*_index_*` functions, as in HSA."""

    def __init__(self, agent: Agent, core: UserQueue, type: QueueType, doorbell: Signal,
                 callback: Callable[[Status, Queue, Any], None] | None, data: Any) -> None:
        self.agent = agent
        self.type = type
        self.features = AgentFeature.KERNEL_DISPATCH | AgentFeature.AGENT_DISPATCH
        self.size = core.size
        self.id = core.id
        self.ring: np.ndarray = core.ring
        self.base_address = int(core.ring.ctypes.data)
        self.doorbell_signal = doorbell
        self.callback = callback
        self.data = data
        self.error: HsaError | None = None  # set when the packet processor stopped this queue
        self.core = core
        self.hw: HwQueue = core.hw
        self.destroyed = False
        self._index_lock = threading.Lock()

    def packet_type(self, index: int) -> PacketType:
        """The type in the header of the slot packet `index` uses (INVALID once retired)."""
        return PacketType(aql.packet_type(self.ring, (index & (self.size - 1)) * aql.PACKET_SIZE))

    def __repr__(self) -> str:
        return f"<hsa_queue {self.id}: {self.size} packets on {self.agent!r}>"


# --- creating and destroying queues ----------------------------------------------------------------------


def queue_create(agent: Agent, size: int, type: QueueType | int = QueueType.MULTI,
                 callback: Callable[[Status, Queue, Any], None] | None = None, data: Any = None,
                 private_segment_size: int = UINT32_MAX, group_segment_size: int = UINT32_MAX) -> Queue:
    """hsa_queue_create: a user-mode queue of AQL packets on a GPU agent's compute engine.

    Every slot starts INVALID; read and write index start at 0; the size is max(size, QUEUE_MIN_SIZE).
    If the packet processor meets a packet it cannot run (a bad format, a fault), the queue stops,
    `queue.error` holds the HsaError and `callback(status, queue, data)` runs on the engine thread;
    without a callback every later `signal_wait_*` raises that error (where ROCr would abort) until
    the queue is destroyed. `private_segment_size` and `group_segment_size` are accepted and ignored.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT (size not a power of two in 1..QUEUE_MAX_SIZE, or a bad type),
            ERROR_INVALID_QUEUE_CREATION (the CPU agent runs no queues), ERROR_INVALID_AGENT.
    """
    rt = _rt()
    a = _agent(agent, op="queue_create")
    if a.node is None:
        raise HsaError(Status.ERROR_INVALID_QUEUE_CREATION, "[queue_create] the CPU agent has no packet processor")
    if not isinstance(size, int) or size < 1 or size & (size - 1) or size > MAX_QUEUE_SIZE:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[queue_create] size must be a power of two in 1..{MAX_QUEUE_SIZE}, got {size}")
    kind = _enum(QueueType, type, "queue_create")
    holder: list[Queue] = []

    def on_error(_: HwQueue, exc: BaseException) -> None:  # runs on the engine thread
        q = holder[0]
        q.error = _queue_error(exc)
        if q.callback is not None:
            try:
                q.callback(q.error.status, q, q.data)
            except Exception as cb_exc:  # never let a user callback kill the engine thread
                trace.emit("L2", "hsa_queue_callback_error", queue=q.id, error=repr(cb_exc))

    with trace.span("L2", "hsa_queue_create", size=size):
        core = UserQueue(a.device, "compute", on_error, max(size, QUEUE_MIN_SIZE), kernarg=False)
        doorbell = Signal(CoreSignal(0))
        q = Queue(a, core, kind, doorbell, callback, data)
        doorbell.queue = q
        holder.append(q)
        with rt.lock:
            rt.queues[q.id] = q
            rt.signals[doorbell.handle] = doorbell
    return q


def queue_destroy(queue: Queue) -> None:
    """hsa_queue_destroy: stop the queue (packets not yet processed are dropped) and free its ring.

    Raises:
        HsaError: ERROR_INVALID_QUEUE if it was already destroyed.
    """
    _destroy_queue(_rt(), _queue(queue, "queue_destroy"))


def _queue(queue: Queue, op: str) -> Queue:
    if not isinstance(queue, Queue) or queue.destroyed:
        raise HsaError(Status.ERROR_INVALID_QUEUE, f"[{op}] {queue!r} is not a live queue")
    return queue


# --- read and write indices ------------------------------------------------------------------------------


def queue_load_read_index_scacquire(queue: Queue) -> int:
    """hsa_queue_load_read_index_*: the index of the next packet the packet processor will retire."""
    return _queue(queue, "queue_load_read_index").hw.read_index


def queue_load_write_index_scacquire(queue: Queue) -> int:
    """hsa_queue_load_write_index_*: the next free packet index."""
    return _queue(queue, "queue_load_write_index").hw.write_index


def queue_store_write_index_screlease(queue: Queue, value: int) -> None:
    """hsa_queue_store_write_index_*: set the write index (single-producer queues)."""
    _queue(queue, "queue_store_write_index").hw.write_index = value


def queue_add_write_index_scacq_screl(queue: Queue, value: int) -> int:
    """hsa_queue_add_write_index_*: atomically reserve `value` packets; returns the previous index."""
    q = _queue(queue, "queue_add_write_index")
    with q._index_lock:
        previous = q.hw.write_index
        q.hw.write_index = previous + value
    return previous


def queue_cas_write_index_scacq_screl(queue: Queue, expected: int, value: int) -> int:
    """hsa_queue_cas_write_index_*: set `value` if the write index is `expected`; returns the index seen."""
    q = _queue(queue, "queue_cas_write_index")
    with q._index_lock:
        previous = q.hw.write_index
        if previous == expected:
            q.hw.write_index = value
    return previous


queue_load_read_index_relaxed = queue_load_read_index_scacquire
queue_load_write_index_relaxed = queue_load_write_index_scacquire
queue_store_write_index_relaxed = queue_store_write_index_screlease
queue_add_write_index_scacquire = queue_add_write_index_screlease = queue_add_write_index_relaxed = \
    queue_add_write_index_scacq_screl
queue_cas_write_index_scacquire = queue_cas_write_index_screlease = queue_cas_write_index_relaxed = \
    queue_cas_write_index_scacq_screl


# --- writing packets by hand (the bytes come from hw/aql.py) ---------------------------------------------


def _slot(queue: Queue, index: int, op: str) -> int:
    return (_queue(queue, op).hw.mask & index) * aql.PACKET_SIZE


def _dims(v: int | Sequence[int], limit: int, what: str) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int | np.integer) else tuple(v)
    if not 1 <= len(t) <= 3 or any(not 1 <= int(x) <= limit for x in t):
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[write_kernel_dispatch_packet] {what} must be 1 to 3 sizes in 1..{limit}, got {v!r}")
    d = [int(x) for x in t] + [1] * (3 - len(t))
    return d[0], d[1], d[2]


def write_kernel_dispatch_packet(queue: Queue, index: int, *, kernel_object: int, kernarg_address: int,
                                 grid: int | Sequence[int], workgroup: int | Sequence[int],
                                 group_segment_size: int = 0, private_segment_size: int = 0,
                                 completion_signal: Signal | int = 0) -> None:
    """Write the body of an hsa_kernel_dispatch_packet_t into packet `index`'s slot, header left
    INVALID (publish it with `publish_header`). `grid` counts work-items, as HSA does (CUDA's
    gridDim x blockDim); `group_segment_size` must cover the kernel's static group memory.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT (bad sizes, or group memory below the kernel's static size).
    """
    off = _slot(queue, index, "write_kernel_dispatch_packet")
    ko = queue.agent.device.cp.kernel_objects.get(kernel_object)
    if ko is not None and group_segment_size < ko.static_group_segment_size:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[write_kernel_dispatch_packet] group_segment_size {group_segment_size} is below "
                       f"{ko.name}'s static group memory ({ko.static_group_segment_size} bytes)")
    aql.write_kernel_dispatch(queue.ring, off, grid=_dims(grid, UINT32_MAX, "grid"),
                              workgroup=_dims(workgroup, 0xFFFF, "workgroup"), kernel_object=kernel_object,
                              kernarg_address=kernarg_address, group_segment_size=group_segment_size,
                              private_segment_size=private_segment_size, completion_signal=_handle(completion_signal))


def write_barrier_and_packet(queue: Queue, index: int, dep_signals: Sequence[Signal | int] = (),
                             completion_signal: Signal | int = 0) -> None:
    """Write an hsa_barrier_and_packet_t body (up to 5 dependencies; it is satisfied when every
    non-zero one reads 0), header left INVALID."""
    _write_barrier(queue, index, dep_signals, completion_signal, "write_barrier_and_packet")


def write_barrier_or_packet(queue: Queue, index: int, dep_signals: Sequence[Signal | int] = (),
                            completion_signal: Signal | int = 0) -> None:
    """Write an hsa_barrier_or_packet_t body (satisfied when any dependency reads 0), header left INVALID."""
    _write_barrier(queue, index, dep_signals, completion_signal, "write_barrier_or_packet")


def _write_barrier(queue: Queue, index: int, deps: Sequence[Signal | int], completion: Signal | int, op: str) -> None:
    off = _slot(queue, index, op)
    if len(deps) > aql.MAX_DEP_SIGNALS:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[{op}] a barrier packet holds at most {aql.MAX_DEP_SIGNALS} signals, got {len(deps)}")
    aql.write_barrier(queue.ring, off, tuple(_handle(d) for d in deps), _handle(completion))


def publish_header(queue: Queue, index: int, header: int, setup: int = 0) -> None:
    """Make packet `index` visible: store its 16-bit header and the 16 bits after it (a dispatch's
    `setup`, i.e. its grid dimensions) as one 32-bit store, as ROCr's samples do. Then store the
    write index and ring the doorbell."""
    off = _slot(queue, index, "publish_header")
    # the packet processor reads the modeled submit time and trace correlation beside the ring
    queue.hw.meta[off // aql.PACKET_SIZE] = (0.0, trace.current_correlation(), trace.current_depth())
    aql.publish(queue.ring, off, header, setup)
