"""An opened virtual GPU: the kernel driver's calls a user-mode runtime makes on a device node.

Source of truth for what the driver owns per device: its VRAM manager, its command processor (queues
bound to the compute and DMA engines), doorbells, the interrupt handler, telemetry, and which
runtime contexts have it open. A device that faulted keeps running other queues; `reset()` stops
its queues (cancelling a running kernel first), frees its memory and starts it clean. `interrupt()`
(Ctrl-C) stops every queue and the running kernel. Waiting for the device never outlasts a fault:
stopped queues count as idle, and after `close()` (interpreter exit) there is nothing to wait for.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable

import numpy as np

from strata import config, trace
from strata.driver.discovery import DeviceNode, device_node
from strata.driver.hostmem import HOST_MEMORY
from strata.driver.interrupts import EVENTS
from strata.driver.telemetry import Telemetry, TelemetrySample
from strata.driver.vram import VramManager
from strata.errors import CudaError, LaunchCancelled
from strata.hw import aql
from strata.hw.catalog import get_spec
from strata.hw.cp import CommandProcessor, HwQueue, KernelObject
from strata.hw.engine import DEFAULT_STACK_BYTES, MAX_LOCAL_BYTES, LaunchConfig, LaunchControl, LaunchResult
from strata.hw.gpu import VirtualGPU
from strata.hw.jit import Program
from strata.hw.ptx.ir import Module

MAX_QUEUE_SIZE = 1 << 17  # packets (HSA_AGENT_INFO_QUEUE_MAX_SIZE on MI300X)
_WAIT_POLL_S = 0.0002
QueueErrorHandler = Callable[[HwQueue, BaseException], None]


class DeviceFile:
    """An opened virtual GPU.

    Example:
        >>> dev = open_device(0)
        >>> dev.node.model, dev.node.pci_bus_id
        ('h200', '0000:18:00.0')
    """

    def __init__(self, node: DeviceNode) -> None:
        self.node = node
        self.index = node.index
        self.gpu = VirtualGPU(node.model)
        self.vram = VramManager(self.gpu.memory)
        # the device heap and the device-launch pool are reserved from VRAM when first needed
        self.gpu.runtime.set_reserve(lambda n: self.vram.alloc(n, "device runtime (heap / launch pool)"))
        self.pci_bus_id = node.pci_bus_id
        self.telemetry = Telemetry(self.gpu.spec)
        self.cp = CommandProcessor(self.gpu.spec, self.gpu.memory, self._run_kernel, interrupt=self._interrupt,
                                   on_queue_error=self._queue_error, on_busy=self.telemetry.record_busy)
        self.contexts: dict[int, str] = {}  # context id -> description, for `strata smi`
        self._queue_handlers: dict[int, QueueErrorHandler] = {}
        self._queue_ids = 0
        self._lock = threading.Lock()
        self.doorbells = 0
        self.stack_bytes = DEFAULT_STACK_BYTES  # cudaLimitStackSize: call stack per thread
        self.faulted = False  # a queue stopped on an error since the last reset
        self.interrupted = False  # its work was stopped by a KeyboardInterrupt

    # -- memory
    def alloc(self, size: int, tag: str = "", alignment: int = 4096) -> int:
        with trace.span("L1", "vram_alloc", size=size):
            return self.vram.alloc(size, tag, alignment)

    def free(self, address: int) -> None:
        with trace.span("L1", "vram_free", address=hex(address)):
            self.vram.free(address)

    def check_range(self, address: int, size: int, op: str) -> None:
        """cudaErrorInvalidValue unless [address, address + size) lies inside one allocation."""
        a = self.gpu.memory.allocation_at(address)
        if size and (a is None or address + size > a.end):
            raise CudaError("cudaErrorInvalidValue",
                            f"[{op}] device range {address:#x}+{size} is not inside one allocation")

    def write(self, address: int, data: bytes | np.ndarray) -> None:
        """A CPU write through the BAR aperture (the loader writes module initializers this way)."""
        self.gpu.memory.write(address, data)

    def fill(self, address: int, value: int, size: int) -> None:
        self.gpu.memory.fill(address, size, value)

    @staticmethod
    def pinned_host(nbytes: int) -> np.ndarray:
        """Page-locked host memory (cudaHostAlloc / hsaKmtAllocMemory of system memory)."""
        return HOST_MEMORY.pinned(nbytes)

    @staticmethod
    def is_pinned(address: int, nbytes: int) -> bool:
        return HOST_MEMORY.is_pinned(address, nbytes)

    # -- code objects
    def load_program(self, module: Module, addresses: dict[str, int]) -> Program:
        return self.gpu.load(module, addresses)

    def register_kernel(self, ko: KernelObject) -> int:
        """Make a kernel dispatchable; returns its kernel_object handle for AQL packets."""
        return self.cp.register_kernel_object(ko)

    def unregister_kernel(self, handle: int) -> None:
        self.cp.unregister_kernel_object(handle)

    def set_stack_size(self, nbytes: int) -> None:
        """cudaDeviceSetLimit(cudaLimitStackSize): bytes of call stack per thread for later launches."""
        if not 0 < nbytes <= MAX_LOCAL_BYTES:
            raise CudaError("cudaErrorInvalidValue", f"[set_limit] stack size must be in 1..{MAX_LOCAL_BYTES} bytes "
                            f"per thread (the local memory limit), got {nbytes}")
        self.stack_bytes = -(-nbytes // 16) * 16

    def _run_kernel(self, ko: KernelObject, launch: LaunchConfig, control: LaunchControl) -> LaunchResult:
        if ko.kind == "amdgcn":  # a code object's kernel runs on the CDNA engine (hw/amdgpu)
            from strata.driver.amdgpu import run_code_object_kernel  # NOTE: late, keeps PTX-only imports lean
            return run_code_object_kernel(self, ko, launch, control)
        return self.gpu.launch(ko.program, ko.name, launch, control=control, stack_bytes=self.stack_bytes)

    # -- queues, doorbells, interrupts (hsaKmtCreateQueue, the doorbell page, KFD events)
    def create_queue(self, size: int, engine: str, on_error: QueueErrorHandler) -> HwQueue:
        """A ring of `size` AQL packets in pinned host memory, bound to `engine`."""
        if size < 1 or size & (size - 1) or size > MAX_QUEUE_SIZE:
            raise CudaError("cudaErrorInvalidValue",
                            f"[create_queue] size must be a power of two in 1..{MAX_QUEUE_SIZE}, got {size}")
        with self._lock:
            self._queue_ids += 1
            qid = self._queue_ids
        ring = self.pinned_host(size * aql.PACKET_SIZE)
        for slot in range(size):  # every slot starts INVALID, as hsa_queue_create promises
            aql.retire(ring, slot * aql.PACKET_SIZE)
        queue = HwQueue(qid, ring, size, engine)
        self._queue_handlers[qid] = on_error
        self.cp.add_queue(queue)
        trace.emit("L1", "create_queue", queue=qid, engine=engine, size=size)
        return queue

    def destroy_queue(self, queue: HwQueue) -> None:
        self.cp.remove_queue(queue)
        self._queue_handlers.pop(queue.id, None)

    def ring_doorbell(self, queue: HwQueue, index: int) -> None:
        """The doorbell write: wakes the engine that serves `queue`."""
        self.doorbells += 1
        trace.emit("L1", "doorbell", queue=queue.id, engine=queue.engine, index=index)
        self.cp.ring_doorbell(queue, index)

    @staticmethod
    def create_event() -> int:
        return EVENTS.create()

    def _interrupt(self, event_id: int) -> None:
        EVENTS.set(event_id)

    def _queue_error(self, queue: HwQueue, exc: BaseException) -> None:
        handler = self._queue_handlers.get(queue.id)
        if handler is not None:  # none: a queue destroyed by reset, whose cancelled kernel just stopped
            self.faulted = True
            handler(queue, exc)
        EVENTS.broadcast()  # waiters re-check and find the error

    # -- state
    def idle(self) -> bool:
        return self.cp.idle()

    def stop_queue(self, queue: HwQueue, error: BaseException, *, notify: bool = False) -> None:
        """Stop a queue as if it had faulted with `error` (a context's sticky error stops all of its
        queues): nothing more of it runs and a kernel of it running now is cancelled."""
        self.cp.stop_queue(queue, error, notify=notify)

    def interrupt(self, reason: str = "KeyboardInterrupt") -> None:
        """The host was interrupted (Ctrl-C): stop every queue and the running kernel, so the
        process can exit at once. Each queue's owner gets the LaunchCancelled as its sticky error."""
        self.interrupted = True
        error = LaunchCancelled(message=f"work on device {self.index} was stopped: {reason}")
        for q in self.cp.queues():
            self.cp.stop_queue(q, error)
        self.cp.cancel(reason)  # a kernel of an orphaned queue, too
        EVENTS.broadcast()

    def assist(self, queue: HwQueue, done: Callable[[], bool]) -> bool:
        """Run `queue`'s ready packets on the calling thread, which is about to wait until `done()` for one of
        them (see CommandProcessor.assist: saves the hand-offs to and from the engine threads). Returns
        `done()`."""
        return self.cp.assist(queue, done)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until every queue is drained or stopped by an error. Returns at once from an engine
        thread (a garbage-collected array freed there: the engine cannot wait for itself) and after
        `close()` (interpreter exit: no packet runs any more). False if `timeout` passed first."""
        if self.cp.on_engine_thread() or not self.cp.running:
            return self.cp.idle()
        if _exiting():  # device arrays freed at exit (weakref finalizers run before our atexit hook)
            _shutdown()
            return self.cp.idle()
        deadline = time.monotonic() + timeout
        while not self.cp.idle():
            if time.monotonic() > deadline or not self.cp.running:
                return False
            time.sleep(_WAIT_POLL_S)  # a short sleep: Ctrl-C raises KeyboardInterrupt here promptly
        return True

    def telemetry_sample(self) -> TelemetrySample:
        return self.telemetry.sample(memory_used=self.vram.stats().used, now=self.cp.now())

    def reset(self) -> None:
        """Stop every queue and the running kernel (it stops at its next basic block, before this
        returns, so nothing writes to memory allocated afterwards), free all device memory and code
        objects, zero the clocks."""
        with trace.span("L1", "device_reset", device=self.index):
            for eng in self.cp.engines.values():
                for q in list(eng.queues):
                    self.destroy_queue(q)
            self.cp.cancel(f"device {self.index} was reset")
            self.wait_idle(timeout=10.0)
            self.faulted = self.interrupted = False
            self.stack_bytes = DEFAULT_STACK_BYTES  # limits return to their defaults, as in cudaDeviceReset
            self.gpu.runtime.reset()  # heap blocks unmapped, heap and pending-launch limits back to defaults
            self.vram.free_all()
            self.gpu.memory.descriptors.clear()  # texture and surface objects die with the context
            self.cp.kernel_objects.clear()
            self.cp.reset_clocks()
            self.telemetry.reset()
            self.contexts.clear()

    def close(self) -> None:
        self.cp.shutdown()


_open: dict[int, DeviceFile] = {}
_open_lock = threading.Lock()


def open_device(index: int = 0, model: str | None = None) -> DeviceFile:
    """Open virtual GPU `index` (present devices from STRATA_DEVICES; reopening returns the same).

    `model` names the model a device beyond the present ones gets when first opened (strata can add
    virtual devices on demand, e.g. `strata demo --gpu a100`)."""
    if index < 0:
        raise CudaError("cudaErrorInvalidDevice", f"device index must be >= 0, got {index}")
    with _open_lock:
        dev = _open.get(index)
        if dev is None:
            present = config.settings().devices
            if index < len(present):
                chosen = present[index]
            elif model is not None:
                chosen = get_spec(model).name
            else:
                raise CudaError("cudaErrorInvalidDevice",
                                f"device {index} does not exist: {len(present)} device(s) present "
                                f"(STRATA_DEVICES={','.join(present)})")
            dev = DeviceFile(device_node(index, chosen))
            _open[index] = dev
        return dev


def opened_devices() -> list[DeviceFile]:
    return [d for _, d in sorted(_open.items())]


def _exiting() -> bool:
    """True once the interpreter exits: the main thread has finished (atexit handlers and the
    finalizers of live device arrays run now). Like a CUDA process at exit, pending work is dropped."""
    return not threading.main_thread().is_alive()


def _shutdown() -> None:
    """At exit: stop every device (a running kernel is cancelled at its next basic block)."""
    for dev in list(_open.values()):
        dev.close()


atexit.register(_shutdown)
