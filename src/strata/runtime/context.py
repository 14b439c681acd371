"""Contexts, streams and events: the CUDA-driver-style face of the runtime, over queues and signals.

Source of truth for stream semantics in strata:
- A stream is in order. Each stream owns a compute queue and, when it first copies, queues on the
  DMA engines (`dma0` host-to-device and device-to-device, `dma1` device-to-host). Every packet has
  the barrier bit set; when a stream's next operation goes to a different queue than its last one,
  the runtime first queues a barrier-AND packet on the new queue that waits for the last one's
  completion signal (skipped if it already completed).
- The legacy default stream synchronizes with every blocking stream of its context: its operations
  wait for their last work, and their operations wait for its last work. Streams created
  non-blocking don't. `STRATA_DEFAULT_STREAM=per-thread` gives each host thread its own ordinary
  default stream instead (nvcc --default-stream per-thread).
- An event record is a barrier-AND packet with a fresh completion signal; its modeled end is the
  event's timestamp. `Stream.wait_event` queues a barrier-AND on the waiting stream.
- A kernel or copy fault stops its queue and becomes the context's sticky error: every later call
  that synchronizes (and every launch) raises it, until `reset()`. The context's other queues stop
  with it (their queued work would never be waited for), so freeing memory or exiting after a fault
  never waits on work that cannot run.
- A KeyboardInterrupt while the host waits on the device stops the device's work (the running kernel
  at its next basic block) before it propagates, so Ctrl-C ends a program promptly.
- The modeled host clock: the host submits at `host_time`, which moves forward to a completion's
  modeled end whenever the host waits for it.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

from strata import config, trace
from strata.driver import DeviceFile
from strata.errors import CudaError, OutOfMemoryError
from strata.hw.aql import AgentOp, CopyFlags
from strata.hw.cp import DispatchRecord, HwQueue
from strata.runtime.queue import DEFAULT_QUEUE_SIZE, UserQueue
from strata.runtime.signals import Condition, Signal

COPY_ENGINE = {"HtoD": "dma0", "DtoD": "dma0", "fill": "dma0", "DtoH": "dma1"}
_ids = itertools.count(1)


class Context:
    """A device's primary context: its memory, streams, sticky error and modeled host clock.

    Example:
        >>> from strata.driver import open_device
        >>> ctx = primary_context(open_device(0))
        >>> s = Stream(ctx)
        >>> ptr = ctx.malloc(16)
        >>> _ = s.fill(ptr, 7, 16); s.synchronize()
        >>> out = np.zeros(16, np.uint8); _ = ctx.memcpy_dtoh(out, ptr); int(out.sum())
        112
        >>> ctx.free(ptr)
    """

    def __init__(self, device: DeviceFile) -> None:
        self.device = device
        self.id = next(_ids)
        self.error: BaseException | None = None
        self.host_time = 0.0
        self.host_syncs = 0  # times the host blocked on the device (synchronous copies, synchronize, waits)
        self.generation = 0
        self.event_id = device.create_event()
        self.streams: weakref.WeakSet[Stream] = weakref.WeakSet()
        self._lock = threading.RLock()
        self._per_thread = threading.local()
        # frees a finalizer handed over because the device was busy; SimpleQueue.put is safe in finalizers
        self._pending_frees: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
        self.null_stream = Stream(self, legacy=True)
        device.contexts[self.id] = f"pid {os.getpid()} context {self.id}"

    # -- errors
    def check(self) -> None:
        """Raise the sticky error, if a fault happened on this context."""
        if self.error is not None:
            raise self.error

    def _on_queue_error(self, queue: HwQueue, exc: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = exc
            error = self.error
            siblings = [uq.hw for s in list(self.streams) for uq in list(s.queues.values()) if uq.hw is not queue]
        for hq in siblings:  # a sticky error ends the context: its other queues stop too
            self.device.stop_queue(hq, error)

    def interrupted(self) -> None:
        """The host thread was interrupted (KeyboardInterrupt) while waiting: stop the device's work."""
        self.device.interrupt("KeyboardInterrupt")

    # -- memory
    def malloc(self, size: int, tag: str = "") -> int:
        """cudaMalloc: never waits for the device unless the memory that finalizers handed over is needed to
        satisfy the request (a kernel may be spinning on a flag this host thread sets after allocating)."""
        self.check()
        self.reclaim(wait=False)
        try:
            return self.device.alloc(size, tag)
        except OutOfMemoryError:
            if self._pending_frees.empty():
                raise
        self.reclaim()
        return self.device.alloc(size, tag)

    def free(self, address: int) -> None:
        """cudaFree: waits for the device to finish work that may still use the memory (after a
        fault only for a packet still running, as the stopped queues run nothing more). If the device is
        still busy when the wait gives up (a minute of queued work, or a thread that cannot wait for it),
        the memory is freed once the device is idle (as `release` does), never while work may use it."""
        try:
            idle = self.device.wait_idle()
        except KeyboardInterrupt:
            self.interrupted()
            raise
        if not idle:
            self._pending_frees.put((address, self.generation))
            return
        self.device.free(address)
        self.reclaim()

    def release(self, address: int) -> None:
        """cudaFree from a finalizer (a garbage-collected array): never waits. A finalizer can run at any
        point of any thread, even where that thread holds a lock the device's engine needs to finish
        its work (the interrupt table's, say), so waiting for the device there can deadlock. An idle
        device frees at once; a busy one gets the free handed to a later host call (`reclaim`: the next
        free or synchronize, which wait for the device as cudaFree does, or an allocation that finds the
        device idle or needs the memory)."""
        if self.device.idle():
            self.device.free(address)
        else:
            self._pending_frees.put((address, self.generation))

    def reclaim(self, *, wait: bool = True) -> None:
        """Carry out the frees finalizers handed over (see `release`), waiting for the device as cudaFree
        does (with `wait=False`: only if it is idle now). Called from host API calls, never from finalizers."""
        if not wait and not self._pending_frees.empty() and not self.device.idle():
            return
        while not self._pending_frees.empty():  # every malloc asks: the common answer must be cheap
            try:
                address, generation = self._pending_frees.get_nowait()
            except queue.Empty:  # another thread took it
                return
            if generation == self.generation:  # else a device reset already freed it
                if not self.device.wait_idle():  # still busy: the free waits for a later call
                    self._pending_frees.put((address, generation))
                    return
                self.device.free(address)

    def memcpy_htod(self, dst: int, host: np.ndarray, stream: Stream | None = None, *,
                    asynchronous: bool = False) -> Signal:
        src = _contiguous(host)
        return self._copy(stream, "HtoD", dst, int(src.ctypes.data), src.nbytes, src, asynchronous)

    def memcpy_dtoh(self, host: np.ndarray, src: int, stream: Stream | None = None, *,
                    asynchronous: bool = False) -> Signal:
        if not host.flags.c_contiguous or not host.flags.writeable:
            raise CudaError("cudaErrorInvalidValue", "[memcpy DtoH] destination must be a writeable C-contiguous array")
        return self._copy(stream, "DtoH", int(host.ctypes.data), src, host.nbytes, host, asynchronous)

    def memcpy_mapped(self, kind: str, device_address: int, nbytes: int, stream: Stream | None = None) -> Signal:
        """A synchronous copy ('HtoD' or 'DtoH') whose bytes the host moves itself through a mapping of device
        memory (a native program's pageable copy): the copy engine checks the range and times the transfer
        in stream order; when this returns, earlier work on the stream is done and the host may move them."""
        dst, src = (device_address, 0) if kind == "HtoD" else (0, device_address)
        sig = self.stream(stream).copy(kind, dst, src, nbytes, pinned=False, mapped=True)
        self.wait(sig)
        return sig

    def memcpy_dtod(self, dst: int, src: int, nbytes: int, stream: Stream | None = None, *,
                    asynchronous: bool = False, peer: bool = False) -> Signal:
        """A device-to-device copy; `peer=True`: one side is another device's memory (checked by the
        caller), and the copy engine moves it over the link between the two."""
        return self._copy(stream, "DtoD", dst, src, nbytes, None, asynchronous, peer=peer)

    def memset(self, dst: int, value: int, nbytes: int, stream: Stream | None = None, *,
               asynchronous: bool = False) -> Signal:
        s = self.stream(stream)
        sig = s.fill(dst, value, nbytes)
        if not asynchronous or config.settings().launch_blocking:
            self.wait(sig)
        return sig

    def _copy(self, stream: Stream | None, kind: str, dst: int, src: int, nbytes: int, host: Any,
              asynchronous: bool, peer: bool = False) -> Signal:
        s = self.stream(stream)
        pinned = kind == "DtoD" or self.device.is_pinned(dst if kind == "DtoH" else src, nbytes)
        sig = s.copy(kind, dst, src, nbytes, pinned=pinned, keep=host, peer=peer)
        # Pageable memory cannot be read by the DMA engine after the call returns, so CUDA waits.
        if not asynchronous or not pinned or config.settings().launch_blocking:
            self.wait(sig)
        return sig

    # -- streams and synchronization
    def stream(self, stream: Stream | None) -> Stream:
        """The stream an API call with `stream=None` uses: the legacy or per-thread default stream."""
        if stream is not None:
            if stream.context is not self:
                raise CudaError("cudaErrorInvalidResourceHandle",
                                "[stream] the stream belongs to another device's context")
            return stream
        if config.settings().default_stream == "per-thread":
            s = getattr(self._per_thread, "stream", None)
            if s is None:
                s = self._per_thread.stream = Stream(self)
            return s
        return self.null_stream

    def wait(self, signal: Signal, timeout: float | None = None) -> bool:
        """Block until a completion signal reaches 0; raise the sticky error if the context faulted.
        False if `timeout` passed first."""
        self.host_syncs += 1
        return self._await(signal, timeout)

    def _await(self, signal: Signal, timeout: float | None = None) -> bool:
        with trace.span("L2", "signal_wait"):  # the host blocked on the device (summaries count it apart)
            def check() -> None:
                self.check()
                failure = signal.failure  # its packet sits in a queue another context's fault stopped
                if failure is not None:
                    raise failure

            try:
                hw = signal.hw
                if timeout is None and hw.value and signal.queue is not None:  # run its queue's packets
                    # ourselves where the engine is free (no thread hand-offs; a timed wait only waits)
                    self.device.assist(signal.queue, lambda: hw.value == 0)
                # (done: what signal.wait would return at once)
                value = 0 if hw.value == 0 else signal.wait(Condition.EQ, 0, timeout, check=check)
            except KeyboardInterrupt:
                self.interrupted()
                raise
        if value != 0:
            self.check()
            return False
        self.host_time = max(self.host_time, signal.hw.end_ts)
        return True

    def synchronize(self) -> None:
        """cudaDeviceSynchronize / cuCtxSynchronize: wait for all streams, raise a sticky error."""
        with trace.span("L2", "ctx_synchronize", context=self.id):
            self.host_syncs += 1
            for s in list(self.streams):
                if s.last is not None:
                    self._await(s.last)
            self.reclaim()
            self.check()

    def reset(self) -> None:
        """cudaDeviceReset: drop all work, memory, modules and the sticky error."""
        with self._lock:
            for s in list(self.streams):
                s._drop_queues()
            self.device.reset()
            self.generation += 1
            self.error = None
            self.host_time = 0.0
            self.device.contexts[self.id] = f"pid {os.getpid()} context {self.id}"


class Stream:
    """An in-order stream of work on one context (cuStream / hipStream).

    Example:
        >>> from strata.driver import open_device
        >>> ctx = primary_context(open_device(0))
        >>> a, b = Stream(ctx), Stream(ctx, non_blocking=True)
        >>> ev = Event(ctx); ev.record(a); b.wait_event(ev); b.synchronize(); ev.query()
        True
    """

    def __init__(self, context: Context, *, non_blocking: bool = False, legacy: bool = False,
                 queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self.context = context
        self.non_blocking = non_blocking
        self.legacy = legacy
        self.queue_size = queue_size
        self.queues: dict[str, UserQueue] = {}
        self.last: Signal | None = None  # completion signal of the stream's last operation
        self.last_engine = "compute"
        self._generation = context.generation
        self._lock = threading.Lock()
        context.streams.add(self)

    def __repr__(self) -> str:
        kind = "legacy default" if self.legacy else "non-blocking" if self.non_blocking else "blocking"
        return f"<strata.runtime.Stream {kind} on context {self.context.id}>"

    # -- operations
    def launch(self, kernel_object: int, grid: tuple[int, int, int], block: tuple[int, int, int],
               group_segment_size: int, params: bytes, *, grid_workspace: int = 0,
               cluster: tuple[int, int, int] = (0, 0, 0)) -> Signal:
        """Queue a kernel dispatch; returns its completion signal. A nonzero `grid_workspace` makes it a
        cooperative dispatch; `cluster` gives thread-block cluster dims (see HwQueue.dispatch)."""
        with self._lock:
            q, not_before = self._prepare("compute")
            sig = Signal(1, self.context.event_id)
            sig.queue = q.hw
            with trace.span("L2", "aql_kernel_dispatch", queue=q.id, grid=grid, block=block):
                q.dispatch(kernel_object, grid, block, group_segment_size, params, sig, not_before,
                           grid_workspace=grid_workspace, cluster=cluster)
            self.last = sig
            return sig

    def copy(self, kind: str, dst: int, src: int, nbytes: int, *, pinned: bool, keep: Any = None,
             peer: bool = False, mapped: bool = False) -> Signal:
        """Queue a DMA copy ('HtoD', 'DtoH', 'DtoD'); host sides are host pointers. `peer`: a DtoD copy
        with one side in another device's memory (the caller checked both ranges; the engine routes it).
        `mapped`: the host moves the bytes itself through a mapping of device memory (CopyFlags.MAPPED)."""
        flags = (CopyFlags.SRC_HOST if kind == "HtoD" else CopyFlags.DST_HOST if kind == "DtoH" else 0) | \
            (CopyFlags.PINNED if pinned else 0) | (CopyFlags.MAPPED if mapped else 0)
        if kind != "HtoD" and not peer:
            self.context.device.check_range(src, nbytes, f"memcpy {kind}")
        if kind != "DtoH" and not peer:
            self.context.device.check_range(dst, nbytes, f"memcpy {kind}")
        return self._agent(COPY_ENGINE[kind], AgentOp.COPY, (dst, src, nbytes, int(flags)), keep,
                           f"aql_copy_{kind}", nbytes)

    def fill(self, dst: int, value: int, nbytes: int) -> Signal:
        """Queue a memset of `nbytes` bytes to `value` on the copy engine."""
        self.context.device.check_range(dst, nbytes, "memset")
        return self._agent(COPY_ENGINE["fill"], AgentOp.FILL, (dst, value & 0xFF, nbytes, 0), None, "aql_fill", nbytes)

    def _agent(self, engine: str, op: AgentOp, args: tuple[int, int, int, int], keep: Any, name: str,
               nbytes: int) -> Signal:
        with self._lock:
            q, not_before = self._prepare(engine)
            sig = Signal(1, self.context.event_id)
            sig.queue = q.hw
            with trace.span("L2", name, queue=q.id, engine=engine, bytes=nbytes):
                q.agent(op, args, sig, not_before, keep)
            self.last = sig
            return sig

    def record(self, event: Event) -> None:
        """cuEventRecord: a barrier-AND marker after everything queued so far."""
        with self._lock:
            q, not_before = self._prepare(self.last_engine)
            sig = Signal(1, self.context.event_id)
            sig.queue = q.hw
            with trace.span("L2", "aql_barrier_and", queue=q.id, purpose="event record"):
                q.barrier([], sig, not_before)
            self.last = sig
        event.signal, event.stream = sig, self

    def wait_event(self, event: Event) -> None:
        """cuStreamWaitEvent: later work waits for the event's last record (no-op if never recorded)."""
        if event.signal is None:
            return
        with self._lock:
            q, not_before = self._prepare(self.last_engine, extra=[event.signal])
            self.last = Signal(1, self.context.event_id)
            self.last.queue = q.hw
            with trace.span("L2", "aql_barrier_and", queue=q.id, purpose="wait event"):
                q.barrier([], self.last, not_before)

    def query(self) -> bool:
        """True when all work queued so far has completed (cudaStreamQuery)."""
        self.context.check()
        return self.last is None or self.last.done

    def synchronize(self) -> None:
        """Block until all queued work completed; raise the context's sticky error."""
        with trace.span("L2", "stream_synchronize"):
            if self.last is not None:
                self.context.wait(self.last)
            self.context.check()

    # -- internals
    def _queue(self, engine: str) -> UserQueue:
        if self._generation != self.context.generation:
            self._drop_queues()
            self._generation = self.context.generation
        q = self.queues.get(engine)
        if q is None:
            q = UserQueue(self.context.device, engine, self.context._on_queue_error, self.queue_size)
            self.queues[engine] = q
        return q

    def _prepare(self, engine: str, extra: Iterable[Signal] = ()) -> tuple[UserQueue, float]:
        """The queue for the next operation, after barrier packets for what it must wait for, and
        the modeled time it may start at (dependencies that already completed need no packet, but
        their modeled end still bounds the start)."""
        self.context.check()
        q = self._queue(engine)
        deps = [*extra]
        if self.last is not None and engine != self.last_engine:
            deps.append(self.last)
        deps += self._implicit_deps()
        not_before = self.context.host_time
        pending = []
        for d in deps:
            if d.done:
                not_before = max(not_before, d.hw.end_ts)
            else:
                pending.append(d)
        for i in range(0, len(pending), 5):
            chunk = pending[i:i + 5]
            with trace.span("L2", "aql_barrier_and", queue=q.id, deps=len(chunk), purpose="stream order"):
                q.barrier(chunk, None, not_before)
        self.last_engine = engine
        return q, not_before

    def _implicit_deps(self) -> list[Signal]:
        """Legacy default stream semantics."""
        if self.non_blocking:
            return []
        ctx = self.context
        if self.legacy:
            if len(ctx.streams) == 1:  # only itself (the common case; iterating the weak set costs)
                return []
            return [s.last for s in list(ctx.streams) if s is not self and not s.non_blocking and s.last is not None]
        null = ctx.null_stream.last
        return [null] if null is not None else []

    def _drop_queues(self) -> None:
        for q in self.queues.values():
            q.destroy()
        self.queues.clear()
        self.last = None


class Event:
    """A marker in a stream (cuEvent): query, synchronize, and modeled elapsed time between two.

    Example:
        >>> from strata.driver import open_device
        >>> ctx = primary_context(open_device(0))
        >>> start, end = Event(ctx), Event(ctx)
        >>> start.record(ctx.null_stream); end.record(ctx.null_stream); end.synchronize()
        >>> start.elapsed_time(end)
        0.0
    """

    def __init__(self, context: Context, *, timing: bool = True, blocking_sync: bool = False) -> None:
        self.context = context
        self.timing = timing
        self.blocking_sync = blocking_sync
        self.signal: Signal | None = None
        self.stream: Stream | None = None

    def record(self, stream: Stream | None = None) -> None:
        self.context.stream(stream).record(self)

    def query(self) -> bool:
        """True if the last record completed (or the event was never recorded)."""
        self.context.check()
        return self.signal is None or self.signal.done

    def synchronize(self) -> None:
        if self.signal is not None:
            self.context.wait(self.signal)

    @property
    def timestamp(self) -> float:
        """Modeled device time (s) at which the recorded point was reached."""
        self._require_complete("timestamp")
        assert self.signal is not None
        return self.signal.hw.end_ts

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds of modeled device time from this event to `end` (cudaEventElapsedTime)."""
        for ev in (self, end):
            if not ev.timing:
                raise CudaError("cudaErrorInvalidResourceHandle",
                                "[elapsed_time] an event created with timing disabled has no timestamp")
            ev._require_complete("elapsed_time")
        return (end.timestamp - self.timestamp) * 1e3

    def _require_complete(self, op: str) -> None:
        if self.signal is None:
            raise CudaError("cudaErrorInvalidResourceHandle", f"[{op}] the event was never recorded")
        self.context.check()
        if not self.signal.done:
            raise CudaError("cudaErrorNotReady", f"[{op}] the event's work has not completed yet")


def completion_record(signal: Signal) -> DispatchRecord | None:
    """What the packet that completed `signal` left for profilers (None until it completes)."""
    rec = signal.hw.profile
    return rec if isinstance(rec, DispatchRecord) else None


_primary: dict[int, Context] = {}
_primary_lock = threading.Lock()


def primary_context(device: DeviceFile) -> Context:
    """The device's primary context (created on first use, as the CUDA runtime does)."""
    with _primary_lock:
        ctx = _primary.get(device.index)
        if ctx is None or ctx.device is not device:
            ctx = _primary[device.index] = Context(device)
        return ctx


def contexts() -> list[Context]:
    """The primary contexts created so far (never creates one)."""
    with _primary_lock:
        return list(_primary.values())


def _contiguous(host: Any) -> np.ndarray:
    arr = np.ascontiguousarray(host)
    if arr.dtype == object:
        raise TypeError("[memcpy] object arrays cannot be copied to device memory")
    return arr
