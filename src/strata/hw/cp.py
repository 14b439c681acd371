"""The command processor: the virtual GPU's packet processor and its engines, each on its own thread.

Source of truth for how queued work runs and for the modeled device timeline. The kernel driver
registers queues (ring buffers of AQL packets in host memory) and binds each to an engine: the
compute engine runs kernel dispatches, the DMA engines `dma0` (host-to-device and device-to-device)
and `dma1` (device-to-host) run copies. A doorbell write wakes the engine; it fetches packets of
each of its queues in order, waits for barrier dependencies, runs the packet, stamps the modeled
start and end on the completion signal, decrements it, raises the signal's interrupt and retires the
slot (header back to INVALID, read index + 1).

Modeled timeline: each engine has a clock. A packet starts at the latest of: when the host submitted
it (the runtime's modeled host clock, kept beside the ring), when its engine is free, when the
previous packet of its queue ended (barrier bit), and when its dependencies completed. Kernels on
one device run one at a time on the compute engine; copies overlap with them on the DMA engines.
A packet that faults stops its queue and is reported through `on_queue_error`; other queues and
devices go on. The completion signals of the stopped packets are marked failed in signal memory, so a
barrier on another queue that depends on one stops its queue with the same error instead of waiting
forever, and a host waiting on one is told. A running kernel can be stopped from the host
(`cancel`, `stop_queue`): the engine checks the launch's cancel flag at every basic block.
"""

from __future__ import annotations

import ctypes
import dataclasses
import operator
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from strata import trace
from strata.errors import CudaError, LaunchCancelled
from strata.hw import aql
from strata.hw.aql import AgentDispatch, AgentOp, Barrier, CopyFlags, KernelDispatch, PacketType
from strata.hw.counters import Counters
from strata.hw.dma import copy_seconds
from strata.hw.engine import LaunchConfig, LaunchControl, LaunchResult
from strata.hw.memory import GLOBAL_BASE, DeviceMemory, memory_of
from strata.hw.perf import ModeledTime, model_launch
from strata.hw.signals import SIGNALS, HwSignal
from strata.hw.topology import peer_copy_seconds, spec_of_memory

ENGINES = ("compute", "dma0", "dma1")
# A launch's counters as a memo key for its modeled time: the scalar fields at once, the dict fields as items
_COUNTER_FIELDS = dataclasses.fields(Counters)
_COUNTER_SCALARS = operator.attrgetter(*(f.name for f in _COUNTER_FIELDS if f.default is not dataclasses.MISSING))
_COUNTER_DICTS = operator.attrgetter(*(f.name for f in _COUNTER_FIELDS if f.default is dataclasses.MISSING))
_MODELS_KEPT = 256  # modeled times memoized per processor (see CommandProcessor._model)
_IDLE_POLL_S = 0.5  # an idle engine re-checks its queues this often even without a doorbell


@dataclass(frozen=True)
class KernelObject:
    """What a code object's kernel descriptor tells the packet processor (kernel_object handle)."""

    program: Any  # hw.jit.Program
    name: str
    kernarg_size: int
    static_group_segment_size: int
    registers: int
    registers_source: str  # 'ptxas' | 'estimate'
    kind: str = "ptx"  # 'ptx' (program is a jit.Program) | 'amdgcn' (an amdgpu.AmdProgram: a code object's kernel)


@dataclass
class DispatchRecord:
    """What a completed packet leaves on its completion signal for profilers and LaunchReports."""

    kind: str  # 'kernel' | 'copy' | 'fill' | 'barrier'
    engine: str
    start: float  # modeled device seconds
    end: float
    wall_s: float = 0.0
    result: LaunchResult | None = None
    modeled: ModeledTime | None = None
    nbytes: int = 0
    detail: str = ""


@dataclass
class HwQueue:
    """A queue as the packet processor sees it (the memory queue descriptor the driver sets up)."""

    id: int
    ring: Any  # writable buffer of size * 64 bytes
    size: int
    engine: str
    read_index: int = 0
    write_index: int = 0  # the producer's published write index
    doorbell: int = -1
    meta: list[tuple[float, int, int]] = field(default_factory=list)  # per slot: (modeled submit time,
    # correlation id and trace depth of the call that queued it)
    last_end: float = 0.0
    error: BaseException | None = None
    active: bool = True
    orphaned: bool = False  # its owner let go: remove it once drained
    resources: list[Any] = field(default_factory=list)  # memory packets point into (a kernarg segment)

    def __post_init__(self) -> None:
        self.mask = self.size - 1
        if not self.meta:
            self.meta = [(0.0, 0, 0)] * self.size
        # what each in-flight packet points at (signals, host buffers), released when it retires
        self.keep: list[Any] = [None] * self.size

    @property
    def idle(self) -> bool:
        return self.read_index >= self.write_index


class _Engine:
    def __init__(self, name: str) -> None:
        self.name = name
        self.clock = 0.0
        self.queues: list[HwQueue] = []
        self.wake = threading.Condition()
        self.kicked = False
        self.sleeping = False  # waiting on `wake`: only then does a doorbell need to notify
        self.blocked = False  # some queue's next packet waits on a signal: signal changes must wake us
        self.thread: threading.Thread | None = None
        # held by whichever thread runs this engine's packets: its own, or a host thread about to block on one
        # of them (CommandProcessor.assist); `runner` is that thread
        self.run_lock = threading.Lock()
        self.runner: threading.Thread | None = None
        self.busy_packet = False
        self.busy_queue: HwQueue | None = None  # the queue whose packet runs now
        self.control: LaunchControl | None = None  # the running kernel's cancel handle


class CommandProcessor:
    """Runs the packets of registered queues for one GPU. Threads start with the first queue.

    `run_kernel(kernel_object, config, control)` executes a kernel on the SIMT engine (`control` cancels
    it); `memory` is the HBM; the callbacks are the driver's: interrupt(event_id),
    on_queue_error(queue, exception), on_busy(engine, start, end).
    """

    def __init__(self, spec: Any, memory: Any,
                 run_kernel: Callable[[KernelObject, LaunchConfig, LaunchControl], LaunchResult],
                 *, interrupt: Callable[[int], None], on_queue_error: Callable[[HwQueue, BaseException], None],
                 on_busy: Callable[[str, float, float], None]) -> None:
        self.spec = spec
        self.memory = memory
        self.run_kernel = run_kernel
        self.interrupt = interrupt
        self.on_queue_error = on_queue_error
        self.on_busy = on_busy
        self.kernel_objects: dict[int, KernelObject] = {}
        self.engines = {name: _Engine(name) for name in ENGINES}
        self._running = True
        self._next_object = 1
        self._lock = threading.Lock()
        self._models: dict[tuple[Any, ...], ModeledTime] = {}  # see _model
        SIGNALS.add_listener(self.kick_all)

    # -- what the driver calls
    def register_kernel_object(self, ko: KernelObject) -> int:
        with self._lock:
            handle = self._next_object
            self._next_object += 1
        self.kernel_objects[handle] = ko
        return handle

    def unregister_kernel_object(self, handle: int) -> None:
        self.kernel_objects.pop(handle, None)

    def add_queue(self, queue: HwQueue) -> None:
        if queue.engine not in self.engines:
            raise ValueError(f"engine must be one of {ENGINES}, got {queue.engine!r}")
        eng = self.engines[queue.engine]
        with eng.wake:
            eng.queues = [*eng.queues, queue]
        if eng.thread is None:
            eng.thread = threading.Thread(target=self._run, args=(eng,), name=f"strata-{eng.name}", daemon=True)
            eng.thread.start()

    def remove_queue(self, queue: HwQueue) -> None:
        eng = self.engines[queue.engine]
        with eng.wake:
            eng.queues = [q for q in eng.queues if q is not queue]
        queue.active = False

    def stop_queue(self, queue: HwQueue, error: BaseException, *, notify: bool = True) -> None:
        """Stop `queue` with `error` as if its next packet had faulted: nothing more of it runs, a
        kernel of it that is running now is cancelled, its pending packets' signals fail. `notify`
        reports it through on_queue_error (the owner's sticky error)."""
        if queue.error is not None:
            return
        queue.error = error
        for eng in self.engines.values():
            if eng.busy_queue is queue and eng.control is not None:
                eng.control.cancel(str(error))
        self._fail_pending(queue, error)
        if notify:
            self.on_queue_error(queue, error)
        self.kick(self.engines[queue.engine])

    def cancel(self, reason: str) -> None:
        """Stop every kernel running now (device reset, interpreter exit); their queues stop with
        LaunchCancelled once the engine sees the flag, at its next basic block."""
        for eng in self.engines.values():
            if eng.control is not None:
                eng.control.cancel(reason)

    def queues(self) -> list[HwQueue]:
        return [q for e in self.engines.values() for q in e.queues]

    def ring_doorbell(self, queue: HwQueue, value: int) -> None:
        queue.doorbell = value
        self.kick(self.engines[queue.engine])

    def kick(self, eng: _Engine) -> None:
        # A busy engine will look at its queues again anyway; waking only a sleeping one keeps the
        # host thread from handing the interpreter lock to the engine on every doorbell.
        eng.kicked = True
        if eng.sleeping:
            with eng.wake:
                eng.wake.notify()

    def kick_all(self) -> None:
        """A signal changed: wake engines whose queues wait on one."""
        for eng in self.engines.values():
            if eng.blocked or not self._running:
                self.kick(eng)

    def on_engine_thread(self) -> bool:
        """True when called from one of this processor's engine threads, or from a host thread while it runs
        an engine's packets (`assist`): either way, waiting for the device there would wait for itself."""
        me = threading.current_thread()
        for e in self.engines.values():  # noqa: SIM110 (a loop: no generator on every wait)
            if e.thread is me or e.runner is me:
                return True
        return False

    def assist(self, queue: HwQueue, done: Callable[[], bool]) -> bool:
        """Run `queue`'s ready packets on the calling host thread until `done()` (a host about to block on the
        completion of a packet in `queue`).

        The host would sleep until an engine thread ran the packets it waits for; running them itself saves
        two thread hand-offs per synchronous launch (the doorbell's wake-up and the completion's), each of
        which costs tens of microseconds in CPython. It changes nothing else: an engine's packets still run
        one at a time, in queue order, through the same code (`_service`), so results, counters, faults and
        the modeled timeline are the engine thread's. Only the awaited packet's queue is run: its packets
        must run before the awaited one anyway, whereas a packet of another queue or engine may be one the
        host itself has yet to unblock (a kernel spinning on a flag the host sets after this wait would spin
        on the host thread until the watchdog). An engine that is running a packet now is left alone (its
        thread goes on; the caller then sleeps as before), and a packet that is not ready (a barrier's
        dependency) stops the assist. Packets left behind are handed back to the engine's thread.
        Returns `done()`."""
        if done():
            return True
        if not self._running or self.on_engine_thread():
            return False
        eng = self.engines.get(queue.engine)
        if eng is None or not queue.active or queue.error is not None or not eng.run_lock.acquire(blocking=False):
            return done()  # its own thread (or another host thread) is running the engine's packets
        eng.runner = threading.current_thread()
        try:
            self._service(eng, queue, done)
        finally:
            eng.runner = None
            eng.run_lock.release()
            # work published while we ran, or after what we waited for: its doorbell may have found the
            # engine thread awake and unable to run it (we held the lock), so wake it again
            if self._running and _pending(eng):
                self.kick(eng)
        return done()

    def idle(self) -> bool:
        return all(q.idle or q.error is not None for e in self.engines.values() for q in e.queues) and \
            not any(e.busy_packet for e in self.engines.values())

    def now(self) -> float:
        """The latest modeled time any engine has reached."""
        return max(e.clock for e in self.engines.values())

    def reset_clocks(self) -> None:
        for e in self.engines.values():
            e.clock = 0.0

    @property
    def running(self) -> bool:
        """False once shut down: no packet runs any more, so nobody needs to wait for this device."""
        return self._running

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the engines: the packet running now (a kernel is cancelled) is the last."""
        self._running = False
        SIGNALS.remove_listener(self.kick_all)
        self.cancel("the process is exiting")
        for eng in self.engines.values():
            eng.kicked = True
            with eng.wake:
                eng.wake.notify()
            if eng.thread is not None and eng.thread is not threading.current_thread():
                eng.thread.join(timeout)

    # -- the engine threads
    def _run(self, eng: _Engine) -> None:
        me = threading.current_thread()
        while self._running:
            progressed = False
            # A host thread that waits may be running our packets (assist): then we sleep, and it kicks us if
            # it leaves any behind. (Blocking on the lock instead would cost a wake-up after every assist.)
            if eng.run_lock.acquire(blocking=False):
                eng.runner = me
                try:
                    eng.blocked = False
                    for q in eng.queues:
                        if q.active and q.error is None:
                            progressed |= self._service(eng, q)
                        if q.orphaned and (q.idle or q.error is not None):
                            self.remove_queue(q)
                finally:
                    eng.runner = None
                    eng.run_lock.release()
            if not progressed:
                with eng.wake:
                    eng.sleeping = True  # set before testing `kicked`, so a kick in between notifies
                    if not eng.kicked and self._running:
                        eng.wake.wait(_IDLE_POLL_S)
                    eng.sleeping = False
                    eng.kicked = False

    def _service(self, eng: _Engine, q: HwQueue, until: Callable[[], bool] | None = None) -> bool:
        """Run every packet of `q` that is ready (on a host thread that assists: until `until()`); True if
        any ran."""
        ran = False
        while q.read_index < q.write_index and q.active and q.error is None and self._running:
            slot = q.read_index & q.mask
            off = slot * aql.PACKET_SIZE
            if aql.packet_type(q.ring, off) == PacketType.INVALID:
                break  # reserved but not yet published
            try:
                packet = aql.decode(q.ring, off)
                if isinstance(packet, Barrier):  # (only barriers wait on signals; kicks for nothing wake us)
                    eng.blocked = True  # before reading signals: a change from here on must kick us
                ready, deps_end = _dependencies(packet)
                if not ready:
                    break
                submitted, correlation, depth = q.meta[slot]
                start = max(submitted, deps_end, q.last_end if packet.barrier else 0.0)
                eng.busy_queue = q
                eng.busy_packet = True
                with trace.correlated(correlation, depth, (q.id, q.read_index)):
                    record = self._execute(eng, packet, start)
            except BaseException as exc:  # a fault: the queue stops, the error goes to the driver
                # (Ctrl-C reaches a host thread that runs the packet itself (assist): the packet is cancelled,
                # as the engine thread's would be, and the KeyboardInterrupt goes on up)
                error = exc if isinstance(exc, Exception) else LaunchCancelled(
                    message=f"work on queue {q.id} was stopped: {type(exc).__name__}")
                try:
                    if q.error is None:  # else stopped from outside (stop_queue), which reported it
                        q.error = error
                        trace.emit("L0", "queue_error", correlation=q.meta[slot][1], queue=q.id,
                                   error=type(error).__name__)
                        self._fail_pending(q, error)
                        self.on_queue_error(q, error)
                finally:  # busy until reported: a host waiting for idle then sees the error
                    eng.busy_packet = False
                    eng.busy_queue = None
                if error is not exc:
                    raise
                return ran
            q.last_end = record.end
            correlation = q.meta[slot][1]
            signal = SIGNALS.get(packet.completion_signal) if packet.completion_signal else None
            # Retire first, so a host woken by the completion already sees the slot free.
            aql.retire(q.ring, off)
            q.keep[slot] = None
            index, q.read_index = q.read_index, q.read_index + 1
            if signal is not None:
                with trace.correlated(correlation, depth, (q.id, index)):
                    self._complete(signal, record, correlation)
            eng.busy_packet = False
            eng.busy_queue = None
            ran = True
            if until is not None:  # a host thread: stop once what it waits for is done
                if until():
                    break
            else:
                # Hand the interpreter lock to a host thread that wants it: a real GPU never takes CPU
                # time from the program feeding it, so the emulated one should not starve it either. The
                # engine lets go of its packets meanwhile: a host that now waits for one runs it itself
                # (assist) instead of sleeping until this thread gets the interpreter lock back.
                runner, eng.runner = eng.runner, None
                eng.run_lock.release()
                time.sleep(0)
                eng.run_lock.acquire()
                eng.runner = runner
        return ran

    def _execute(self, eng: _Engine, packet: aql.Packet, start: float) -> DispatchRecord:
        if isinstance(packet, Barrier):
            trace.emit("L0", "barrier_or" if packet.is_or else "barrier_and", device_start=start, device_end=start,
                       deps=len(packet.deps))
            return DispatchRecord("barrier", eng.name, start, start)
        t0 = time.perf_counter()
        if isinstance(packet, KernelDispatch):
            if eng.name != "compute":
                raise CudaError("cudaErrorNotSupported", f"[{eng.name}] a DMA engine cannot run a kernel dispatch")
            record = self._dispatch(packet, max(start, eng.clock))
        elif isinstance(packet, AgentDispatch):
            record = self._dma(eng, packet, max(start, eng.clock))
        else:  # pragma: no cover - decode() returns only these
            raise TypeError(packet)
        record.wall_s = time.perf_counter() - t0
        eng.clock = record.end
        self.on_busy(eng.name, record.start, record.end)
        return record

    def _dispatch(self, p: KernelDispatch, start: float) -> DispatchRecord:
        ko = self.kernel_objects.get(p.kernel_object)
        if ko is None:
            raise CudaError("cudaErrorInvalidResourceHandle",
                            f"[dispatch] kernel_object {p.kernel_object:#x} is not loaded on this device")
        (nx, ny, nz), (wx, wy, wz) = p.grid, p.workgroup
        grid = (nx // wx, ny // wy, nz // wz)
        if nx % wx or ny % wy or nz % wz:
            raise CudaError("cudaErrorInvalidConfiguration", f"[dispatch {ko.name}] grid {p.grid} work-items is "
                            f"not a multiple of workgroup {p.workgroup}")
        params = ctypes.string_at(p.kernarg_address, ko.kernarg_size) if ko.kernarg_size else b""
        dynamic_shared = p.group_segment_size - ko.static_group_segment_size
        if p.group_segment_size > self.spec.shared_mem_per_block_optin:
            raise CudaError("cudaErrorLaunchOutOfResources",
                            f"[dispatch {ko.name}] group segment (shared memory) of {p.group_segment_size:,} bytes per "
                            f"workgroup exceeds the device's {self.spec.shared_mem_per_block_optin:,} "
                            "(sharedMemPerBlockOptin)")
        if dynamic_shared < 0:
            raise aql.PacketFormatError(
                f"[dispatch {ko.name}] group_segment_size {p.group_segment_size} is smaller than the kernel's "
                f"static group (shared) memory of {ko.static_group_segment_size} bytes")
        workspace = 0
        if p.flags & aql.DISPATCH_COOPERATIVE:  # the hidden kernarg after the kernel's own (see aql.py)
            at = -(-ko.kernarg_size // 8) * 8
            workspace = int.from_bytes(ctypes.string_at(p.kernarg_address + at, 8), "little")
        config = LaunchConfig(grid, p.workgroup, dynamic_shared, params,
                              grid_workspace=workspace, cluster=aql.cluster_of(p.flags))
        eng = self.engines["compute"]
        eng.control = control = LaunchControl()
        try:
            q = eng.busy_queue  # stopped or reset between fetching the packet and here: cancel at once
            if not self._running or (q is not None and (q.error is not None or not q.active)):
                control.cancel("the process is exiting" if not self._running else "its queue was stopped")
            result = self.run_kernel(ko, config, control)
        finally:
            eng.control = None
        modeled = self._model(ko, config, result)
        end = start + modeled.seconds
        if trace.recording():  # the kernel table and roofline of a trace report read these
            c = result.counters
            trace.emit("L0", "kernel", device_start=start, device_end=end, kernel=ko.name, bound=modeled.bound,
                       grid=config.num_blocks, block=config.threads_per_block,
                       occupancy=round(modeled.occupancy.occupancy, 4), flops_per_s=modeled.achieved_flops,
                       dram_bytes=modeled.dram_bytes, bytes_per_s=modeled.achieved_bytes_per_s,
                       kernel_s=modeled.kernel_s, simt_efficiency=round(c.simt_efficiency, 4),
                       coalescing_efficiency=round(c.coalescing_efficiency, 4), device=self.spec.name)
        return DispatchRecord("kernel", "compute", start, end, result=result, modeled=modeled, detail=ko.name)

    def _model(self, ko: KernelObject, config: LaunchConfig, result: LaunchResult) -> ModeledTime:
        """The launch's modeled time (perf.model_launch), memoized: a kernel launched again with the same shape
        and the same counters (the common case: a loop's launches) gets the same time without modeling it anew,
        which costs about as much as a small launch's run. The ModeledTime is a copy naming this launch's
        counters among its inputs (explain() rebuilds from them)."""
        c = result.counters
        key = (ko.registers, config.num_blocks, config.threads_per_block, result.shared_bytes_per_block,
               _COUNTER_SCALARS(c), *map(tuple, map(dict.items, _COUNTER_DICTS(c))))
        hit = self._models.get(key)
        if hit is None:
            hit = model_launch(self.spec, c, grid_blocks=config.num_blocks, threads_per_block=config.threads_per_block,
                               regs_per_thread=ko.registers, smem_per_block=result.shared_bytes_per_block)
            if len(self._models) >= _MODELS_KEPT:
                self._models.clear()
            self._models[key] = hit
            return hit
        twin: ModeledTime = object.__new__(ModeledTime)  # (frozen: a copy with its own inputs and explanation)
        twin.__dict__.update(hit.__dict__, inputs={**hit.inputs, "counters": c}, explanation=[])
        return twin

    def _dma(self, eng: _Engine, p: AgentDispatch, start: float) -> DispatchRecord:
        dst, src, nbytes, flags = p.args
        if p.op == AgentOp.COPY:
            flags = CopyFlags(flags)
            kind = "HtoD" if CopyFlags.SRC_HOST in flags else "DtoH" if CopyFlags.DST_HOST in flags else "DtoD"
            src_ptr = src if CopyFlags.SRC_HOST in flags else self._device_pointer(src, nbytes, kind)
            dst_ptr = dst if CopyFlags.DST_HOST in flags else self._device_pointer(dst, nbytes, kind)
            if nbytes and CopyFlags.MAPPED not in flags:  # MAPPED: the host moves them through its mapping
                if CopyFlags.DST_HOST in flags:
                    ctypes.memmove(dst_ptr, src_ptr, nbytes)
                else:  # never inside a kernel's emulated atomic on these bytes (memory._RMW_LOCKS)
                    off = dst - GLOBAL_BASE
                    with (self._peer_of(dst) or self.memory).rmw_guard(off, off + nbytes - 1):
                        ctypes.memmove(dst_ptr, src_ptr, nbytes)
            seconds = copy_seconds(self.spec, kind, nbytes, pinned=CopyFlags.PINNED in flags or kind == "DtoD")
            if kind == "DtoD" and (self._peer_of(src) or self._peer_of(dst)):  # over NVLink / xGMI (topology.py)
                a, b = self._peer_of(src) or self.memory, self._peer_of(dst) or self.memory
                src_spec, dst_spec = spec_of_memory(a) or self.spec, spec_of_memory(b) or self.spec
                kind, seconds = "PtoP", peer_copy_seconds(src_spec, dst_spec, nbytes)
                for far in (a, b):  # interconnect bytes, counted as a kernel's peer reads and writes are
                    if far is not self.memory and far.slot is not None and nbytes:
                        self.memory.add_peer_bytes(far.slot, nbytes)
        elif p.op == AgentOp.FILL:
            self._device_pointer(dst, nbytes, "memset")
            self.memory.fill(dst, nbytes, src)
            kind, seconds = "fill", copy_seconds(self.spec, "fill", nbytes)
        else:
            raise aql.PacketFormatError(f"[{eng.name}] agent dispatch type {p.op} is not a DMA operation "
                                        f"(expected COPY=1 or FILL=2)")
        end = start + seconds
        trace.emit("L1", f"dma_{kind}", device_start=start, device_end=end, engine=eng.name, bytes=nbytes)
        return DispatchRecord("copy" if kind != "fill" else "fill", eng.name, start, end, nbytes=nbytes, detail=kind)

    def _peer_of(self, address: int) -> DeviceMemory | None:
        """The other device's memory `address` lies in (a peer copy's far side), or None if it is ours."""
        if self.memory.base <= address < self.memory.end:
            return None
        return memory_of(address)

    def _device_pointer(self, address: int, nbytes: int, what: str) -> int:
        """A device range's host pointer; an unmapped range faults like a DMA page fault would."""
        memory = self._peer_of(address) or self.memory
        a = memory.allocation_at(address)
        if nbytes and (a is None or address + nbytes > a.end):
            raise CudaError("cudaErrorIllegalAddress",
                            f"[{what}] DMA to device range {address:#x}+{nbytes} outside any allocation; "
                            f"{memory.describe_nearest(address)}")
        return memory.host_pointer(address)

    def _fail_pending(self, q: HwQueue, error: BaseException) -> None:
        """The packets left in a stopped queue (the faulting one included) will never complete: mark
        their completion signals failed, so nothing waits on them forever."""
        for index in range(q.read_index, q.write_index):
            off = (index & q.mask) * aql.PACKET_SIZE
            if aql.packet_type(q.ring, off) == PacketType.INVALID:
                continue
            try:
                handle = aql.decode(q.ring, off).completion_signal
            except Exception:  # noqa: BLE001 - a malformed packet completes nothing anyway
                continue
            SIGNALS.fail(handle, error)

    def _complete(self, sig: HwSignal, record: DispatchRecord, correlation: int) -> None:
        sig.start_ts, sig.end_ts, sig.profile = record.start, record.end, record
        SIGNALS.add(sig.handle, -1)
        if sig.event_id:
            trace.emit("L1", "interrupt", correlation=correlation, event=sig.event_id)
            self.interrupt(sig.event_id)


def _pending(eng: _Engine) -> bool:
    """Whether a queue of the engine has packets that may run (published and not stopped)."""
    for q in eng.queues:  # noqa: SIM110 (a loop: no generator, twice per engine on every wait)
        if q.read_index < q.write_index and q.error is None:
            return True
    return False


def _dependencies(packet: aql.Packet) -> tuple[bool, float]:
    """Whether a barrier packet's dependencies are met, and when (modeled) they were. Null handles
    count as met in a barrier-AND and as never met in a barrier-OR (hsa.h)."""
    if not isinstance(packet, Barrier):
        return True, 0.0
    if not packet.deps:
        return not packet.is_or, 0.0
    ends = []
    failed = [e for e in (SIGNALS.failure(h) for h in packet.deps) if e is not None]
    if failed and (not packet.is_or or len(failed) == len(packet.deps)):
        # the packet it waits for sits in a stopped queue: this queue stops with the same error
        raise failed[0]
    for h in packet.deps:
        sig = SIGNALS.get(h)
        # A destroyed signal can never complete: AND treats it as met (else it would hang), OR not.
        done = sig.value == 0 if sig is not None else not packet.is_or
        if done:
            ends.append(sig.end_ts if sig is not None else 0.0)
        elif not packet.is_or:
            return False, 0.0
    if not ends:
        return False, 0.0
    return True, (min(ends) if packet.is_or else max(ends))
