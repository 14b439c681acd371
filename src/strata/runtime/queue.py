"""User-mode queues: how the runtime writes AQL packets into a ring and rings the doorbell.

The submission protocol of ROCr, the HSA runtime: load the write index, wait while
the ring is full (write - read >= size), write the packet body with its header still INVALID,
publish the header and setup as one 32-bit store, store write index + 1, and write the packet's
index to the doorbell. Kernel arguments go into the queue's kernarg segment (one 512-byte slot per
ring slot in pinned memory; larger argument blocks get their own buffer). Everything a packet
points at (kernarg buffers, host arrays of async copies, signals) is kept alive until the packet
processor retires that slot (the hardware queue holds them, so they outlive this object if it is
dropped with work in flight).
"""

from __future__ import annotations

import collections
import time
from typing import Any

import numpy as np

from strata import trace
from strata.driver import DeviceFile
from strata.driver.device import QueueErrorHandler
from strata.hw import aql
from strata.hw.aql import AgentOp, PacketType
from strata.runtime.signals import Signal

DEFAULT_QUEUE_SIZE = 4096  # packets
_DISPATCH_HEADER = aql.header(PacketType.KERNEL_DISPATCH, barrier=True)  # (the same for every launch)
# bytes of kernel arguments per ring slot before a launch needs its own buffer: 512 holds the framework's
# kernels (three pointers and 32 shape/stride scalars: 280 bytes), which would otherwise each take a spill buffer
KERNARG_SLOT = 512
SPILL_BYTES = 4096  # the smallest such buffer: a page, which fits CUDA's classic 4 KiB of parameters


class UserQueue:
    """A ring of AQL packets on one engine ('compute', 'dma0', 'dma1') of a device."""

    def __init__(self, device: DeviceFile, engine: str, on_error: QueueErrorHandler,
                 size: int = DEFAULT_QUEUE_SIZE, *, kernarg: bool = True) -> None:
        """`kernarg=False`: no kernarg segment (HSA users allocate kernel arguments themselves)."""
        self.device = device
        self.engine = engine
        self.hw = device.create_queue(size, engine, on_error)
        self.size = size
        self.mask = size - 1
        self.ring = self.hw.ring
        self.kernarg = device.pinned_host(size * KERNARG_SLOT) if engine == "compute" and kernarg else None
        self._kernarg_base = int(self.kernarg.ctypes.data) if self.kernarg is not None else 0
        self._kernarg_view = memoryview(self.kernarg.data) if self.kernarg is not None else memoryview(bytearray())
        if self.kernarg is not None:
            self.hw.resources.append(self.kernarg)  # the device may read it after this object is gone
        self._destroyed = False
        self._spilled: collections.deque[tuple[int, np.ndarray]] = collections.deque()  # (index, buffer): _spill
        self._spare: list[np.ndarray] = []

    def __del__(self) -> None:
        # Like cudaStreamDestroy with work pending: the queue goes away once the device drained it.
        if not self._destroyed:
            self.hw.orphaned = True

    @property
    def id(self) -> int:
        return self.hw.id

    @property
    def error(self) -> BaseException | None:
        return self.hw.error

    def destroy(self) -> None:
        self._destroyed = True
        self.device.destroy_queue(self.hw)

    # -- packets
    def dispatch(self, kernel_object: int, grid: tuple[int, int, int], block: tuple[int, int, int],
                 group_segment_size: int, params: bytes, signal: Signal | None, host_time: float, *,
                 grid_workspace: int = 0, cluster: tuple[int, int, int] = (0, 0, 0)) -> int:
        """Queue a kernel dispatch (`grid` in blocks, as CUDA counts; the packet counts work-items).
        `grid_workspace` (nonzero) makes it a cooperative dispatch: the address goes in the hidden
        kernarg after the parameters and the packet carries aql.DISPATCH_COOPERATIVE. `cluster` dims
        (thread-block clusters asked for at launch) ride in the packet's flags (aql.cluster_flags)."""
        flags = aql.cluster_flags(cluster)
        if grid_workspace:
            params = params.ljust(-(-len(params) // 8) * 8, b"\0") + grid_workspace.to_bytes(8, "little")
            flags |= aql.DISPATCH_COOPERATIVE
        index = self._reserve()
        slot = index & self.mask
        if len(params) <= KERNARG_SLOT and self.kernarg is not None:
            kernarg_address = self._kernarg_base + slot * KERNARG_SLOT
            self._kernarg_view[slot * KERNARG_SLOT: slot * KERNARG_SLOT + len(params)] = params
            keep: Any = signal
        else:
            own = self._spill(index, len(params))
            own[:] = memoryview(params)
            kernarg_address, keep = int(own.ctypes.data), (signal, own)
        dims = 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1
        aql.write_kernel_dispatch(
            self.ring, slot * aql.PACKET_SIZE, grid=(grid[0] * block[0], grid[1] * block[1], grid[2] * block[2]),
            workgroup=block, kernel_object=kernel_object, kernarg_address=kernarg_address,
            group_segment_size=group_segment_size, private_segment_size=0,
            completion_signal=signal.handle if signal is not None else 0, flags=flags)
        self._publish(index, _DISPATCH_HEADER, dims, host_time, keep)
        return index

    def barrier(self, deps: list[Signal], signal: Signal | None, host_time: float, *, is_or: bool = False) -> int:
        """Queue a barrier-AND (all deps reach 0) or barrier-OR (any does) packet."""
        index = self._reserve()
        slot = index & self.mask
        aql.write_barrier(self.ring, slot * aql.PACKET_SIZE, tuple(d.handle for d in deps),
                          signal.handle if signal is not None else 0)
        kind = PacketType.BARRIER_OR if is_or else PacketType.BARRIER_AND
        self._publish(index, aql.header(kind, barrier=True), 0, host_time, (signal, deps))
        return index

    def agent(self, op: AgentOp, args: tuple[int, int, int, int], signal: Signal | None, host_time: float,
              keep: Any = None) -> int:
        """Queue a DMA operation (copy or fill) for this queue's copy engine."""
        index = self._reserve()
        aql.write_agent_dispatch(self.ring, (index & self.mask) * aql.PACKET_SIZE, op, args,
                                 signal.handle if signal is not None else 0)
        # the 32-bit publish covers header and the agent packet's `type` field, as it does `setup`
        self._publish(index, aql.header(PacketType.AGENT_DISPATCH, barrier=True), int(op), host_time, (signal, keep))
        return index

    def _spill(self, index: int, nbytes: int) -> np.ndarray:
        """A pinned kernarg buffer for the launch at `index`, whose arguments outgrow its ring slot: one a
        completed launch used (the packet processor has passed its index), else a new one. Mapping and
        locking fresh pages costs milliseconds, as much as a small kernel's whole launch."""
        read = self.hw.read_index
        while self._spilled and self._spilled[0][0] < read:
            self._spare.append(self._spilled.popleft()[1])
        for k, buf in enumerate(self._spare):
            if len(buf) >= nbytes:
                del self._spare[k]
                break
        else:
            buf = self.device.pinned_host(max(nbytes, SPILL_BYTES))
        self._spilled.append((index, buf))
        return buf[:nbytes]

    # -- the protocol
    def _reserve(self) -> int:
        write = self.hw.write_index
        while write - self.hw.read_index >= self.size:  # ring full: wait for the packet processor
            if self.hw.error is not None:
                raise self.hw.error
            time.sleep(5e-5)
        return write

    def _publish(self, index: int, header: int, setup: int, host_time: float, keep: Any) -> None:
        slot = index & self.mask
        self.hw.keep[slot] = keep
        # (correlation 0 while nothing records: a recording begun later counts the packet as submitted before it)
        self.hw.meta[slot] = (host_time, trace.current_correlation(), trace.current_depth()) if trace.recording() \
            else (host_time, 0, 0)
        aql.publish(self.ring, slot * aql.PACKET_SIZE, header, setup)
        self.hw.write_index = index + 1
        self.device.ring_doorbell(self.hw, index)
