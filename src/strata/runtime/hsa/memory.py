"""Memory: the `MemoryPool` handle and each agent's pools, allocating and freeing from them, NumPy
views of host pool memory (`host_array`), and copies on the GPU's copy engines (async and sync)."""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from strata import trace
from strata.driver import HOST_MEMORY, opened_devices
from strata.errors import CudaError, OutOfMemoryError
from strata.hw import aql
from strata.hw.aql import AgentOp, CopyFlags
from strata.hw.cp import HwQueue
from strata.runtime.context import COPY_ENGINE
from strata.runtime.hsa._runtime import _rt, _Runtime
from strata.runtime.hsa.agent import Agent, _agent
from strata.runtime.hsa.signals import Signal, _user_signal, signal_create, signal_destroy, signal_wait_scacquire
from strata.runtime.hsa.status import (
    PAGE,
    QUEUE_MIN_SIZE,
    GlobalFlag,
    HsaError,
    MemoryPoolInfo,
    PoolLocation,
    Segment,
    Status,
    _enum,
    _iterate,
    _queue_error,
)
from strata.runtime.queue import UserQueue
from strata.runtime.signals import Condition


@dataclass(frozen=True, eq=False)
class MemoryPool:
    """hsa_amd_memory_pool_t: a partition of an agent's memory with its access model."""

    handle: int
    agent: Agent
    segment: Segment
    global_flags: GlobalFlag
    size: int
    alloc_allowed: bool
    accessible_by_all: bool
    location: PoolLocation

    def __repr__(self) -> str:
        return f"<hsa_amd_memory_pool {self.handle}: {self.segment.name} {self.global_flags!r} of {self.agent!r}>"


# --- memory pools ----------------------------------------------------------------------------------------


@overload
def amd_agent_iterate_memory_pools(agent: Agent, callback: None = None, data: Any = None) -> list[MemoryPool]: ...
@overload
def amd_agent_iterate_memory_pools(agent: Agent, callback: Callable[[MemoryPool, Any], Status | None],
                                   data: Any = None) -> Status: ...
def amd_agent_iterate_memory_pools(agent: Agent, callback: Callable[[MemoryPool, Any], Status | None] | None = None,
                                   data: Any = None) -> Any:
    """hsa_amd_agent_iterate_memory_pools: the agent's pools (a list without a callback).

    GPU: a coarse-grained GLOBAL pool (VRAM, allocated through the kernel driver) and its GROUP
    segment (LDS/shared memory, not allocatable). CPU: a fine-grained GLOBAL system pool and a
    fine-grained one flagged KERNARG_INIT for kernel arguments (both pinned host memory).
    """
    rt = _rt()
    a = _agent(agent, op="amd_agent_iterate_memory_pools")
    with rt.lock:
        pools = rt.pools.get(a.handle)
        if pools is None:
            pools = rt.pools[a.handle] = _make_pools(a)
    return _iterate(pools, callback, data)


def _make_pools(agent: Agent) -> list[MemoryPool]:
    base = agent.handle << 4
    if agent.node is None:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return [MemoryPool(base, agent, Segment.GLOBAL, GlobalFlag.FINE_GRAINED, ram, True, True, PoolLocation.CPU),
                MemoryPool(base + 1, agent, Segment.GLOBAL, GlobalFlag.KERNARG_INIT | GlobalFlag.FINE_GRAINED, ram,
                           True, True, PoolLocation.CPU)]
    spec = agent.node.spec
    return [MemoryPool(base, agent, Segment.GLOBAL, GlobalFlag.COARSE_GRAINED, spec.hbm_bytes, True, False,
                       PoolLocation.GPU),
            MemoryPool(base + 1, agent, Segment.GROUP, GlobalFlag(0), spec.shared_mem_per_block_optin, False, False,
                       PoolLocation.GPU)]


def amd_memory_pool_get_info(pool: MemoryPool, attribute: MemoryPoolInfo | int | str) -> Any:
    """hsa_amd_memory_pool_get_info: one attribute of `pool` (a `MemoryPoolInfo`, value or name).

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT for an unknown attribute.
    """
    key = _enum(MemoryPoolInfo, attribute, "amd_memory_pool_get_info")
    granule = PAGE if pool.alloc_allowed else 0
    return {MemoryPoolInfo.SEGMENT: pool.segment, MemoryPoolInfo.GLOBAL_FLAGS: pool.global_flags,
            MemoryPoolInfo.SIZE: pool.size, MemoryPoolInfo.RUNTIME_ALLOC_ALLOWED: pool.alloc_allowed,
            MemoryPoolInfo.RUNTIME_ALLOC_GRANULE: granule, MemoryPoolInfo.RUNTIME_ALLOC_ALIGNMENT: granule,
            MemoryPoolInfo.RUNTIME_ALLOC_REC_GRANULE: granule, MemoryPoolInfo.ACCESSIBLE_BY_ALL: pool.accessible_by_all,
            MemoryPoolInfo.ALLOC_MAX_SIZE: pool.size if pool.alloc_allowed else 0,
            MemoryPoolInfo.LOCATION: pool.location}[key]


pool_get_info = amd_memory_pool_get_info


def amd_memory_pool_allocate(pool: MemoryPool, size: int, flags: int = 0) -> int:
    """hsa_amd_memory_pool_allocate: `size` bytes from `pool`; returns the address.

    A GPU pool allocates VRAM through the kernel driver (a device address, reached by copies and
    kernels). A CPU pool allocates pinned host memory (a host address; `host_array` views it) and
    keeps the buffer alive until `amd_memory_pool_free`. Addresses are page aligned.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT (size 0), ERROR_INVALID_ALLOCATION (pool not allocatable,
            or size above ALLOC_MAX_SIZE), ERROR_OUT_OF_RESOURCES (VRAM exhausted).
    """
    rt = _rt()
    if not isinstance(pool, MemoryPool) or pool.agent not in rt.agents:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, f"[amd_memory_pool_allocate] {pool!r} is not a memory pool")
    if size <= 0:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, f"[amd_memory_pool_allocate] size must be > 0, got {size}")
    if not pool.alloc_allowed or size > pool.size:
        raise HsaError(Status.ERROR_INVALID_ALLOCATION,
                       f"[amd_memory_pool_allocate] {pool!r} cannot hold an allocation of {size} bytes "
                       f"(runtime allocation allowed: {pool.alloc_allowed}, max {pool.size})")
    with trace.span("L2", "hsa_amd_memory_pool_allocate", size=size, location=pool.location.name):
        if pool.location == PoolLocation.GPU:
            try:
                address = pool.agent.device.alloc(size, "hsa pool")
            except OutOfMemoryError as e:
                raise HsaError(Status.ERROR_OUT_OF_RESOURCES, f"[amd_memory_pool_allocate] {e.message}") from e
            with rt.lock:
                rt.gpu_allocs[address] = pool.agent
            return address
        buf = HOST_MEMORY.pinned(size)
        address = int(buf.ctypes.data)
        with rt.lock:
            rt.host_allocs[address] = buf
            bisect.insort(rt.host_starts, address)
        return address


def amd_memory_pool_free(address: int) -> None:
    """hsa_amd_memory_pool_free: release an allocation from `amd_memory_pool_allocate`. The caller
    makes sure no queued packet still uses it.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT if `address` is not the start of a live allocation.
    """
    rt = _rt()
    with rt.lock:
        if address in rt.host_allocs:
            del rt.host_allocs[address]
            rt.host_starts.remove(address)
            return
        agent = rt.gpu_allocs.pop(address, None)
    if agent is None:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[amd_memory_pool_free] {address:#x} is not the start of a pool allocation (double free?)")
    agent.device.free(address)


def host_array(address: int, dtype: Any = np.uint8, count: int = -1) -> np.ndarray:
    """strata's way to touch host pool memory from Python: a NumPy view of `count` items of `dtype`
    (all that fit if -1) starting at `address`, inside an allocation from a CPU pool.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT if `address` is not inside a CPU pool allocation.
    """
    rt = _rt()
    with rt.lock:
        i = bisect.bisect_right(rt.host_starts, address) - 1
        buf = rt.host_allocs[rt.host_starts[i]] if i >= 0 else None
    offset = address - rt.host_starts[i] if buf is not None else -1
    if buf is None or offset >= buf.nbytes:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, f"[host_array] {address:#x} is not inside a CPU pool allocation")
    if count < 0:
        count = (buf.nbytes - offset) // np.dtype(dtype).itemsize
    return np.frombuffer(buf, dtype=dtype, count=count, offset=offset)


# --- copies ----------------------------------------------------------------------------------------------


def amd_memory_async_copy(dst: int, dst_agent: Agent, src: int, src_agent: Agent, size: int,
                          dep_signals: Sequence[Signal | int], completion_signal: Signal | int) -> None:
    """hsa_amd_memory_async_copy: copy `size` bytes on the GPU's copy engine once every dependent
    signal reached 0; `completion_signal` is decremented when the copy is done.

    The agent owning each side says whether it is host or device memory. Host-to-device and
    device-to-device copies go to the `dma0` engine, device-to-host to `dma1` (strata's split). A
    copy that faults later (its memory was freed in between) makes every later `signal_wait_*`
    raise until `shut_down`, as no callback can take it.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT (no completion signal, a device range outside any allocation,
            a host-to-host or cross-GPU copy), ERROR_INVALID_SIGNAL, ERROR_INVALID_AGENT.
    """
    rt = _rt()
    done = _user_signal(completion_signal, "amd_memory_async_copy")
    deps = [_user_signal(d, "amd_memory_async_copy").core for d in dep_signals if d != 0]
    dst_a = _agent(dst_agent, op="amd_memory_async_copy")
    src_a = _agent(src_agent, op="amd_memory_async_copy")
    gpus = {a.handle: a for a in (dst_a, src_a) if a.node is not None}
    if len(gpus) != 1:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       "[amd_memory_async_copy] one GPU agent must own the copy (host-to-host and GPU-to-GPU "
                       f"copies are not modelled); got {src_a!r} -> {dst_a!r}")
    device = next(iter(gpus.values())).device
    kind = "DtoD" if dst_a is src_a else "HtoD" if dst_a.node is not None else "DtoH"
    try:
        if kind != "HtoD":
            device.check_range(src, size, f"amd_memory_async_copy {kind}")
        if kind != "DtoH":
            device.check_range(dst, size, f"amd_memory_async_copy {kind}")
    except CudaError as e:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, e.message) from e
    host = src if kind == "HtoD" else dst
    flags = (CopyFlags.SRC_HOST if kind == "HtoD" else CopyFlags.DST_HOST if kind == "DtoH" else CopyFlags(0)) | \
        (CopyFlags.PINNED if kind == "DtoD" or HOST_MEMORY.is_pinned(host, size) else CopyFlags(0))
    with rt.lock:
        q = rt.copy_queues.get((device.index, COPY_ENGINE[kind]))
        if q is None:
            q = UserQueue(device, COPY_ENGINE[kind], _copy_error_handler(rt), size=QUEUE_MIN_SIZE * 16)
            rt.copy_queues[(device.index, COPY_ENGINE[kind])] = q
        with trace.span("L2", "hsa_amd_memory_async_copy", kind=kind, bytes=size, deps=len(deps)):
            for i in range(0, len(deps), aql.MAX_DEP_SIGNALS):
                q.barrier(deps[i:i + aql.MAX_DEP_SIGNALS], None, 0.0)
            q.agent(AgentOp.COPY, (dst, src, size, int(flags)), done.core, 0.0)


def memory_copy(dst: int, src: int, size: int) -> None:
    """hsa_memory_copy: a synchronous copy; whichever side lies in a GPU allocation is device memory
    (the other is a host address, e.g. `array.ctypes.data`).

    Raises:
        HsaError: as `amd_memory_async_copy`, and any queue error it meets.
    """
    rt = _rt()
    opened = {d.index for d in opened_devices()}
    owner = {addr: rt.agents[0] for addr in (dst, src)}
    for addr in (dst, src):
        for a in rt.agents[1:]:
            if a.node is not None and a.node.index in opened and \
                    a.device.gpu.memory.allocation_at(addr) is not None:
                owner[addr] = a
                break
    done = signal_create(1)
    try:
        amd_memory_async_copy(dst, owner[dst], src, owner[src], size, (), done)
        signal_wait_scacquire(done, Condition.EQ, 0)
    finally:
        signal_destroy(done)


def _copy_error_handler(rt: _Runtime) -> Callable[[HwQueue, BaseException], None]:
    def handler(_: HwQueue, exc: BaseException) -> None:
        rt.copy_errors.append(_queue_error(exc))
    return handler
