"""The HSA face of the runtime: ROCr's C API (`hsa_*`, `hsa_amd_*`) under snake_case names, over
strata's queues, signals and command processor, for users who want to submit packets by hand.

Names drop the `hsa_` prefix (`hsa_queue_create` -> `queue_create`, `hsa_amd_memory_pool_allocate`
-> `amd_memory_pool_allocate`); out-parameters become return values and a non-SUCCESS status becomes
`HsaError` whose `.status` is the hsa_status_t. Handles are objects with a `.handle` (signals may
also be passed as their integer handle, which is what packets carry). The memory-order suffixes
(`_relaxed`, `_scacquire`, `_screlease`, `_scacq_screl`) all exist; under Python's GIL they behave
alike. Timeouts are in seconds, not HSA's system-timestamp ticks. Layouts and semantics follow
../shared/reference/apis.md §1; docs/hsa.md walks through a hand-submitted dispatch.

Example:
    >>> init()
    >>> gpu = next(a for a in agents() if agent_get_info(a, "device") == DEVICE_TYPE_GPU)
    >>> agent_get_info(gpu, "queue_max_size"), agent_get_info(gpu, "queue_min_size")
    (131072, 64)
    >>> s = signal_create(1)
    >>> signal_wait_scacquire(s, SIGNAL_CONDITION_LT, 1, timeout_hint=0.01)  # nobody completes it
    1
    >>> signal_subtract_screlease(s, 1); signal_wait_scacquire(s, SIGNAL_CONDITION_LT, 1)
    0
    >>> signal_destroy(s); shut_down()
"""

from __future__ import annotations

import bisect
import contextlib
import enum
import os
import platform
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from strata import trace
from strata.driver import EVENTS, HOST_MEMORY, DeviceFile, DeviceNode, list_devices, open_device, opened_devices
from strata.driver.device import MAX_QUEUE_SIZE
from strata.errors import CudaError, OutOfMemoryError, PTXSyntaxError, UnsupportedInstruction
from strata.hw import aql
from strata.hw.aql import AgentOp, CopyFlags, FenceScope, PacketFormatError, PacketType
from strata.hw.cp import HwQueue
from strata.hw.jit import register_pressure
from strata.hw.signals import SIGNALS
from strata.runtime.context import COPY_ENGINE
from strata.runtime.module import LoadedModule, kernarg_segment_size, load_module
from strata.runtime.queue import UserQueue
from strata.runtime.signals import Condition
from strata.runtime.signals import Signal as CoreSignal

UINT32_MAX = (1 << 32) - 1
UINT64_MAX = (1 << 64) - 1
QUEUE_MIN_SIZE = 64  # packets; what ROCr reports for its GPU agents (rocminfo "Queue Min Size")
QUEUES_MAX = 128
PAGE = 4096


# --- status codes and the error ---------------------------------------------------------------------


class Status(enum.IntEnum):
    """hsa_status_t (hsa.h); `HsaError.status` is one of these."""

    SUCCESS = 0x0
    INFO_BREAK = 0x1
    ERROR = 0x1000
    ERROR_INVALID_ARGUMENT = 0x1001
    ERROR_INVALID_QUEUE_CREATION = 0x1002
    ERROR_INVALID_ALLOCATION = 0x1003
    ERROR_INVALID_AGENT = 0x1004
    ERROR_INVALID_REGION = 0x1005
    ERROR_INVALID_SIGNAL = 0x1006
    ERROR_INVALID_QUEUE = 0x1007
    ERROR_OUT_OF_RESOURCES = 0x1008
    ERROR_INVALID_PACKET_FORMAT = 0x1009
    ERROR_RESOURCE_FREE = 0x100A
    ERROR_NOT_INITIALIZED = 0x100B
    ERROR_REFCOUNT_OVERFLOW = 0x100C
    ERROR_INCOMPATIBLE_ARGUMENTS = 0x100D
    ERROR_INVALID_INDEX = 0x100E
    ERROR_INVALID_ISA = 0x100F
    ERROR_INVALID_CODE_OBJECT = 0x1010
    ERROR_INVALID_EXECUTABLE = 0x1011
    ERROR_FROZEN_EXECUTABLE = 0x1012
    ERROR_INVALID_SYMBOL_NAME = 0x1013
    ERROR_VARIABLE_ALREADY_DEFINED = 0x1014
    ERROR_VARIABLE_UNDEFINED = 0x1015
    ERROR_EXCEPTION = 0x1016
    ERROR_INVALID_ISA_NAME = 0x1017
    ERROR_INVALID_CODE_SYMBOL = 0x1018
    ERROR_INVALID_EXECUTABLE_SYMBOL = 0x1019
    ERROR_INVALID_FILE = 0x1020
    ERROR_INVALID_CODE_OBJECT_READER = 0x1021
    ERROR_INVALID_CACHE = 0x1022
    ERROR_INVALID_WAVEFRONT = 0x1023
    ERROR_INVALID_SIGNAL_GROUP = 0x1024
    ERROR_INVALID_RUNTIME_STATE = 0x1025
    ERROR_FATAL = 0x1026

    @property
    def hsa_name(self) -> str:
        """The C name, e.g. 'HSA_STATUS_ERROR_INVALID_ARGUMENT'."""
        return f"HSA_STATUS_{self.name}"


class HsaError(RuntimeError):
    """A call that returned an hsa_status_t other than SUCCESS.

    Args:
        status: a `Status`, its value, or its name with or without the `HSA_STATUS_` prefix.
        message: what went wrong, naming the call.

    Example:
        >>> e = HsaError("HSA_STATUS_ERROR_INVALID_ARGUMENT", "[queue_create] size must be a power of two")
        >>> e.status, hex(e.status), e.status_name
        (<Status.ERROR_INVALID_ARGUMENT: 4097>, '0x1001', 'HSA_STATUS_ERROR_INVALID_ARGUMENT')
    """

    def __init__(self, status: Status | int | str, message: str = "") -> None:
        self.status = _status(status)
        self.status_name = self.status.hsa_name
        self.message = message
        super().__init__(f"{self.status_name}: {message}" if message else self.status_name)


def _status(status: Status | int | str) -> Status:
    if isinstance(status, str):
        name = status.upper().removeprefix("HSA_STATUS_")
        for candidate in (name, f"ERROR_{name}"):
            if candidate in Status.__members__:
                return Status[candidate]
        raise ValueError(f"[HsaError] unknown hsa_status_t name {status!r}")
    return Status(status)


def status_string(status: Status | int) -> str:
    """hsa_status_string: the status's C name (strata gives no prose beyond the name)."""
    return _status(status).hsa_name


# --- enumerations of hsa.h / hsa_ext_amd.h -------------------------------------------------------------


class DeviceType(enum.IntEnum):
    """hsa_device_type_t."""

    CPU = 0
    GPU = 1
    DSP = 2


class AgentInfo(enum.IntEnum):
    """hsa_agent_info_t, with the AMD extension attributes (hsa_amd_agent_info_t) strata answers."""

    NAME = 0
    VENDOR_NAME = 1
    FEATURE = 2
    MACHINE_MODEL = 3
    PROFILE = 4
    DEFAULT_FLOAT_ROUNDING_MODE = 5
    WAVEFRONT_SIZE = 6
    WORKGROUP_MAX_DIM = 7
    WORKGROUP_MAX_SIZE = 8
    GRID_MAX_DIM = 9
    GRID_MAX_SIZE = 10
    FBARRIER_MAX_SIZE = 11
    QUEUES_MAX = 12
    QUEUE_MIN_SIZE = 13
    QUEUE_MAX_SIZE = 14
    QUEUE_TYPE = 15
    NODE = 16
    DEVICE = 17
    ISA = 19
    VERSION_MAJOR = 21
    VERSION_MINOR = 22
    FAST_F16_OPERATION = 24
    CHIP_ID = 0xA000
    COMPUTE_UNIT_COUNT = 0xA002
    PRODUCT_NAME = 0xA009
    MAX_WAVES_PER_CU = 0xA00A
    NUM_SIMDS_PER_CU = 0xA00B
    UUID = 0xA011
    ASIC_REVISION = 0xA012


class AgentFeature(enum.IntFlag):
    """hsa_agent_feature_t."""

    KERNEL_DISPATCH = 1
    AGENT_DISPATCH = 2


class QueueType(enum.IntEnum):
    """hsa_queue_type_t."""

    MULTI = 0
    SINGLE = 1
    COOPERATIVE = 2


class Segment(enum.IntEnum):
    """hsa_amd_segment_t."""

    GLOBAL = 0
    READONLY = 1
    PRIVATE = 2
    GROUP = 3


class GlobalFlag(enum.IntFlag):
    """hsa_amd_memory_pool_global_flag_t."""

    KERNARG_INIT = 1
    FINE_GRAINED = 2
    COARSE_GRAINED = 4
    EXTENDED_SCOPE_FINE_GRAINED = 8


class PoolLocation(enum.IntEnum):
    """hsa_amd_memory_pool_location_t."""

    CPU = 0
    GPU = 1


class MemoryPoolInfo(enum.IntEnum):
    """hsa_amd_memory_pool_info_t."""

    SEGMENT = 0
    GLOBAL_FLAGS = 1
    SIZE = 2
    RUNTIME_ALLOC_ALLOWED = 5
    RUNTIME_ALLOC_GRANULE = 6
    RUNTIME_ALLOC_ALIGNMENT = 7
    ACCESSIBLE_BY_ALL = 15
    ALLOC_MAX_SIZE = 16
    LOCATION = 17
    RUNTIME_ALLOC_REC_GRANULE = 18


class WaitState(enum.IntEnum):
    """hsa_wait_state_t (a hint: strata's waits always sleep on the signal's interrupt)."""

    BLOCKED = 0
    ACTIVE = 1


class SymbolKind(enum.IntEnum):
    """hsa_symbol_kind_t."""

    VARIABLE = 0
    KERNEL = 1


class ExecutableSymbolInfo(enum.IntEnum):
    """hsa_executable_symbol_info_t (the attributes strata answers)."""

    TYPE = 0
    NAME_LENGTH = 1
    NAME = 2
    VARIABLE_SIZE = 9
    KERNEL_KERNARG_SEGMENT_SIZE = 11
    KERNEL_KERNARG_SEGMENT_ALIGNMENT = 12
    KERNEL_GROUP_SEGMENT_SIZE = 13
    KERNEL_PRIVATE_SEGMENT_SIZE = 14
    AGENT = 20
    VARIABLE_ADDRESS = 21
    KERNEL_OBJECT = 22


SignalCondition = Condition  # hsa_signal_condition_t: EQ, NE, LT, GTE

# The C constants users of hsa.h write, under their names without the HSA_ prefix.
SIGNAL_CONDITION_EQ, SIGNAL_CONDITION_NE = Condition.EQ, Condition.NE
SIGNAL_CONDITION_LT, SIGNAL_CONDITION_GTE = Condition.LT, Condition.GTE
WAIT_STATE_BLOCKED, WAIT_STATE_ACTIVE = WaitState.BLOCKED, WaitState.ACTIVE
PACKET_TYPE_VENDOR_SPECIFIC, PACKET_TYPE_INVALID = PacketType.VENDOR_SPECIFIC, PacketType.INVALID
PACKET_TYPE_KERNEL_DISPATCH, PACKET_TYPE_AGENT_DISPATCH = PacketType.KERNEL_DISPATCH, PacketType.AGENT_DISPATCH
PACKET_TYPE_BARRIER_AND, PACKET_TYPE_BARRIER_OR = PacketType.BARRIER_AND, PacketType.BARRIER_OR
FENCE_SCOPE_NONE, FENCE_SCOPE_AGENT, FENCE_SCOPE_SYSTEM = FenceScope.NONE, FenceScope.AGENT, FenceScope.SYSTEM
PACKET_HEADER_TYPE, PACKET_HEADER_BARRIER = aql.HEADER_TYPE, aql.HEADER_BARRIER
PACKET_HEADER_SCACQUIRE_FENCE_SCOPE = aql.HEADER_SCACQUIRE_FENCE_SCOPE
PACKET_HEADER_SCRELEASE_FENCE_SCOPE = aql.HEADER_SCRELEASE_FENCE_SCOPE
KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS = 0
QUEUE_TYPE_MULTI, QUEUE_TYPE_SINGLE, QUEUE_TYPE_COOPERATIVE = QueueType.MULTI, QueueType.SINGLE, QueueType.COOPERATIVE
DEVICE_TYPE_CPU, DEVICE_TYPE_GPU = DeviceType.CPU, DeviceType.GPU
packet_header = aql.header  # (type, *, barrier, acquire, release) -> the 16-bit header


# --- handles ------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Agent:
    """hsa_agent_t: the host CPU, or one virtual GPU (`node` is its identity from the kernel driver)."""

    handle: int
    device_type: DeviceType
    node: DeviceNode | None = None

    @property
    def device(self) -> DeviceFile:
        """The opened GPU behind a GPU agent."""
        if self.node is None:
            raise HsaError(Status.ERROR_INVALID_AGENT, "[agent.device] the CPU agent has no GPU device")
        return open_device(self.node.index)

    def __repr__(self) -> str:
        what = "CPU" if self.node is None else f"GPU {self.node.arch} ({self.node.product})"
        return f"<hsa_agent {self.handle}: {what}>"


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


class Signal:
    """hsa_signal_t: `handle` is what packets carry (never 0). A queue's doorbell is a Signal too;
    storing to it rings the doorbell."""

    __slots__ = ("core", "handle", "queue")

    def __init__(self, core: CoreSignal, queue: Queue | None = None) -> None:
        self.core = core
        self.handle = core.handle
        self.queue = queue  # set for a doorbell signal

    def __repr__(self) -> str:
        kind = "doorbell" if self.queue is not None else "user"
        return f"<hsa_signal {self.handle} ({kind}) value={self.core.value}>"


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


# --- runtime state: what init() sets up and shut_down() tears down ------------------------------------


@dataclass
class _Runtime:
    agents: list[Agent]
    pools: dict[int, list[MemoryPool]] = field(default_factory=dict)  # agent handle -> pools
    signals: dict[int, Signal] = field(default_factory=dict)  # live user and doorbell signals by handle
    queues: dict[int, Queue] = field(default_factory=dict)
    host_allocs: dict[int, np.ndarray] = field(default_factory=dict)  # address -> pinned buffer
    host_starts: list[int] = field(default_factory=list)
    gpu_allocs: dict[int, Agent] = field(default_factory=dict)
    executables: list[Executable] = field(default_factory=list)
    copy_queues: dict[tuple[int, str], UserQueue] = field(default_factory=dict)
    copy_errors: list[HsaError] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def unhandled(self) -> HsaError | None:
        """A queue error nobody registered a callback for (ROCr's default handler would abort)."""
        for q in list(self.queues.values()):
            if q.error is not None and q.callback is None:
                return q.error
        return self.copy_errors[0] if self.copy_errors else None

    def check(self) -> None:
        err = self.unhandled()
        if err is not None:
            raise HsaError(err.status, err.message) from err.__cause__


_state: _Runtime | None = None
_refcount = 0
_init_lock = threading.Lock()


def _rt() -> _Runtime:
    state = _state
    if state is None:
        raise HsaError(Status.ERROR_NOT_INITIALIZED, "[hsa] the runtime is not initialized: call init() first")
    return state


def init() -> None:
    """hsa_init: start the runtime (reference counted: each call needs a matching shut_down).

    Enumerates the agents: the host CPU and one GPU per present device (`STRATA_DEVICES`).
    """
    global _state, _refcount
    with _init_lock:
        if _refcount == 0:
            nodes = list_devices()
            cpu = Agent(1, DeviceType.CPU)
            _state = _Runtime([cpu, *(Agent(n.index + 2, DeviceType.GPU, n) for n in nodes)])
        _refcount += 1


def shut_down() -> None:
    """hsa_shut_down: drop one reference; the last one destroys every queue, signal, executable and
    allocation the runtime made.

    Raises:
        HsaError: ERROR_NOT_INITIALIZED if the runtime is not initialized.
    """
    global _state, _refcount
    with _init_lock:
        rt = _rt()
        _refcount -= 1
        if _refcount:
            return
        _state = None
    for q in list(rt.queues.values()):
        _destroy_queue(rt, q)
    for cq in rt.copy_queues.values():
        cq.destroy()
    for s in list(rt.signals.values()):
        if s.queue is None:
            _destroy_signal(s)
    for exe in list(rt.executables):
        _unload(exe)
    for address, agent in rt.gpu_allocs.items():
        with contextlib.suppress(CudaError):  # a device reset already freed it
            agent.device.free(address)
    rt.host_allocs.clear()


# --- agents ---------------------------------------------------------------------------------------------


def agents() -> list[Agent]:
    """Every agent: the CPU first, then the GPUs by device index."""
    return list(_rt().agents)


@overload
def iterate_agents(callback: None = None, data: Any = None) -> list[Agent]: ...
@overload
def iterate_agents(callback: Callable[[Agent, Any], Status | None], data: Any = None) -> Status: ...
def iterate_agents(callback: Callable[[Agent, Any], Status | None] | None = None, data: Any = None) -> Any:
    """hsa_iterate_agents: without a callback, the list of agents; with one, call `callback(agent,
    data)` for each until it returns something other than SUCCESS/None, and return that status."""
    return _iterate(agents(), callback, data)


def _iterate(items: list[Any], callback: Callable[[Any, Any], Status | None] | None, data: Any) -> Any:
    if callback is None:
        return items
    for item in items:
        status = callback(item, data)
        if status is not None and status != Status.SUCCESS:
            return Status(status)
    return Status.SUCCESS


def agent_get_info(agent: Agent, attribute: AgentInfo | int | str) -> Any:
    """hsa_agent_get_info: one attribute of `agent`.

    Args:
        agent: from `agents()`.
        attribute: an `AgentInfo`, its value, or its name in any case ("name", "queue_max_size",
            "compute_unit_count", ...).

    Returns:
        Strings for NAME/VENDOR_NAME/PRODUCT_NAME/ISA/UUID, ints or tuples of ints otherwise; GPU values
        come from the device catalogue (`wavefront_size` is the warp size, `compute_unit_count` the SMs).

    Raises:
        HsaError: ERROR_INVALID_AGENT for a foreign agent, ERROR_INVALID_ARGUMENT for an attribute the
            agent does not have (a CPU has no wavefront size).
    """
    key = _enum(AgentInfo, attribute, "agent_get_info")
    info = _agent_info(_agent(agent))
    if key not in info:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, f"[agent_get_info] {agent!r} has no attribute {key.name}")
    return info[key]


def _agent_info(agent: Agent) -> dict[AgentInfo, Any]:
    common = {AgentInfo.MACHINE_MODEL: 1, AgentInfo.DEFAULT_FLOAT_ROUNDING_MODE: 2,  # LARGE, NEAR
              AgentInfo.QUEUE_TYPE: QueueType.MULTI, AgentInfo.VERSION_MAJOR: 1, AgentInfo.VERSION_MINOR: 1,
              AgentInfo.DEVICE: agent.device_type, AgentInfo.ASIC_REVISION: 0}
    node = agent.node
    if node is None:
        return {**common, AgentInfo.NAME: f"host CPU ({platform.machine()})", AgentInfo.VENDOR_NAME: "CPU",
                AgentInfo.FEATURE: AgentFeature(0), AgentInfo.PROFILE: 1, AgentInfo.QUEUES_MAX: 0,
                AgentInfo.QUEUE_MIN_SIZE: 0, AgentInfo.QUEUE_MAX_SIZE: 0, AgentInfo.NODE: 0, AgentInfo.CHIP_ID: 0,
                AgentInfo.COMPUTE_UNIT_COUNT: os.cpu_count() or 1, AgentInfo.UUID: "CPU-XX",
                AgentInfo.PRODUCT_NAME: f"host CPU ({platform.machine()})"}
    spec = node.spec
    triple = "amdgcn-amd-amdhsa" if spec.vendor == "amd" else "nvptx64-nvidia-cuda"
    return {**common, AgentInfo.NAME: spec.arch, AgentInfo.VENDOR_NAME: "AMD" if spec.vendor == "amd" else "NVIDIA",
            AgentInfo.FEATURE: AgentFeature.KERNEL_DISPATCH, AgentInfo.PROFILE: 0,  # BASE
            AgentInfo.WAVEFRONT_SIZE: spec.warp_size, AgentInfo.WORKGROUP_MAX_DIM: spec.max_block_dim,
            AgentInfo.WORKGROUP_MAX_SIZE: spec.max_threads_per_block,
            # HSA counts the grid in work-items, CUDA in blocks
            AgentInfo.GRID_MAX_DIM: tuple(min(UINT32_MAX, g * b) for g, b in zip(spec.max_grid_dim,
                                                                               spec.max_block_dim)),
            AgentInfo.GRID_MAX_SIZE: UINT32_MAX, AgentInfo.FBARRIER_MAX_SIZE: 32, AgentInfo.QUEUES_MAX: QUEUES_MAX,
            AgentInfo.QUEUE_MIN_SIZE: QUEUE_MIN_SIZE, AgentInfo.QUEUE_MAX_SIZE: MAX_QUEUE_SIZE,
            AgentInfo.NODE: node.index + 1, AgentInfo.ISA: f"{triple}--{spec.arch}",
            AgentInfo.FAST_F16_OPERATION: True, AgentInfo.CHIP_ID: node.device_id,
            AgentInfo.COMPUTE_UNIT_COUNT: spec.sm_count, AgentInfo.PRODUCT_NAME: spec.product,
            AgentInfo.MAX_WAVES_PER_CU: spec.max_threads_per_sm // spec.warp_size,
            AgentInfo.NUM_SIMDS_PER_CU: spec.warp_alloc_granularity, AgentInfo.UUID: f"GPU-{node.pci_bus_id}"}


def _agent(agent: Any, *, gpu: bool = False, op: str = "") -> Agent:
    rt = _rt()
    if not isinstance(agent, Agent) or agent not in rt.agents:
        raise HsaError(Status.ERROR_INVALID_AGENT, f"[{op or 'agent'}] {agent!r} is not an agent of this runtime")
    if gpu and agent.node is None:
        raise HsaError(Status.ERROR_INVALID_AGENT, f"[{op}] needs a GPU agent, got the CPU agent")
    return agent


def _enum(kind: Any, value: Any, op: str) -> Any:
    try:
        return kind[value.upper()] if isinstance(value, str) else kind(value)
    except (KeyError, ValueError):
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[{op}] unknown {kind.__name__} {value!r}") from None


# --- memory pools ---------------------------------------------------------------------------------------


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


# --- signals --------------------------------------------------------------------------------------------


def signal_create(initial_value: int, num_consumers: int = 0, consumers: Iterable[Agent] = ()) -> Signal:
    """hsa_signal_create: a signal holding `initial_value`; its changes raise an interrupt that
    wakes waiters (`num_consumers`/`consumers` are accepted and ignored: every agent may use every
    signal)."""
    rt = _rt()
    sig = Signal(CoreSignal(int(initial_value), EVENTS.create()))
    with rt.lock:
        rt.signals[sig.handle] = sig
    return sig


def signal_destroy(signal: Signal | int) -> None:
    """hsa_signal_destroy. Raises HsaError ERROR_INVALID_SIGNAL for an unknown, destroyed or doorbell signal."""
    sig = _user_signal(signal, "signal_destroy")
    _destroy_signal(sig)


def _destroy_signal(sig: Signal) -> None:
    if _state is not None:
        _state.signals.pop(sig.handle, None)
    SIGNALS.destroy(sig.handle)
    EVENTS.destroy(sig.core.event_id)


def _signal(signal: Signal | int, op: str) -> Signal:
    handle = signal.handle if isinstance(signal, Signal) else int(signal)
    found = _rt().signals.get(handle)
    if found is None:
        raise HsaError(Status.ERROR_INVALID_SIGNAL, f"[{op}] signal {handle} does not exist (destroyed, or 0)")
    return found


def _user_signal(signal: Signal | int, op: str) -> Signal:
    sig = _signal(signal, op)
    if sig.queue is not None:
        raise HsaError(Status.ERROR_INVALID_SIGNAL, f"[{op}] a doorbell signal only supports load and store")
    return sig


def signal_load_scacquire(signal: Signal | int) -> int:
    """hsa_signal_load_scacquire: the current value."""
    return _signal(signal, "signal_load").core.value


def signal_store_screlease(signal: Signal | int, value: int) -> None:
    """hsa_signal_store_screlease: set the value and wake waiters. On a queue's doorbell signal,
    `value` is the index of the last packet made ready: it rings the doorbell of that queue."""
    sig = _signal(signal, "signal_store")
    if sig.queue is not None:
        sig.core.hw.value = value
        sig.queue.agent.device.ring_doorbell(sig.queue.hw, value)
    else:
        sig.core.store(value)


def signal_silent_store_screlease(signal: Signal | int, value: int) -> None:
    """hsa_signal_silent_store_screlease: set the value without waking host waiters."""
    sig = _user_signal(signal, "signal_silent_store")
    SIGNALS.store(sig.handle, value)


def signal_add_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_add_*: atomically add `value`."""
    _user_signal(signal, "signal_add").core.add(value)


def signal_subtract_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_subtract_*: atomically subtract `value`."""
    _user_signal(signal, "signal_subtract").core.add(-value)


def signal_cas_scacq_screl(signal: Signal | int, expected: int, value: int) -> int:
    """hsa_signal_cas_*: set `value` if the signal holds `expected`; returns the value observed."""
    sig = _user_signal(signal, "signal_cas")
    seen = SIGNALS.cas(sig.handle, expected, value)
    if seen == expected:
        EVENTS.set(sig.core.event_id)
    return seen


def _rmw(signal: Signal | int, op: str, fn: Callable[[int], int]) -> int:
    sig = _user_signal(signal, op)
    while True:
        seen = sig.core.value
        if SIGNALS.cas(sig.handle, seen, fn(seen)) == seen:
            EVENTS.set(sig.core.event_id)
            return seen


def signal_exchange_scacq_screl(signal: Signal | int, value: int) -> int:
    """hsa_signal_exchange_*: set `value`; returns the previous value."""
    return _rmw(signal, "signal_exchange", lambda _: value)


def signal_and_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_and_*: atomically AND `value` in."""
    _rmw(signal, "signal_and", lambda v: v & value)


def signal_or_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_or_*: atomically OR `value` in."""
    _rmw(signal, "signal_or", lambda v: v | value)


def signal_xor_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_xor_*: atomically XOR `value` in."""
    _rmw(signal, "signal_xor", lambda v: v ^ value)


def signal_wait_scacquire(signal: Signal | int, condition: Condition | int, compare_value: int,
                          timeout_hint: float | None = None,
                          wait_state_hint: WaitState | int = WaitState.BLOCKED) -> int:
    """hsa_signal_wait_scacquire: block until `value <condition> compare_value` or the timeout.

    As in HSA, it returns the value it observed, which the caller must re-check: the condition held
    at some moment during the wait, or the timeout passed (then the value is whatever it was).

    Args:
        signal: the signal (or its handle).
        condition: SIGNAL_CONDITION_EQ / NE / LT / GTE.
        compare_value: the value to compare with.
        timeout_hint: seconds (HSA counts system-timestamp ticks); None or UINT64_MAX waits forever.
        wait_state_hint: WAIT_STATE_BLOCKED or WAIT_STATE_ACTIVE; both sleep on the signal's interrupt.

    Returns:
        The observed value.

    Raises:
        HsaError: ERROR_INVALID_SIGNAL, ERROR_INVALID_ARGUMENT (bad condition), or the error of a queue
            the packet processor stopped and that has no error callback (ROCr would abort).
    """
    rt = _rt()
    sig = _user_signal(signal, "signal_wait")
    cond = _enum(Condition, condition, "signal_wait")
    _enum(WaitState, wait_state_hint, "signal_wait")
    timeout = None if timeout_hint is None or timeout_hint >= UINT64_MAX else max(0.0, float(timeout_hint))
    return sig.core.wait(cond, compare_value, timeout, check=rt.check)


signal_load_relaxed = signal_load_scacquire
signal_store_relaxed = signal_store_screlease
signal_silent_store_relaxed = signal_silent_store_screlease
signal_wait_relaxed = signal_wait_scacquire
signal_add_scacquire = signal_add_screlease = signal_add_relaxed = signal_add_scacq_screl
signal_subtract_scacquire = signal_subtract_screlease = signal_subtract_relaxed = signal_subtract_scacq_screl
signal_cas_scacquire = signal_cas_screlease = signal_cas_relaxed = signal_cas_scacq_screl
signal_exchange_scacquire = signal_exchange_screlease = signal_exchange_relaxed = signal_exchange_scacq_screl
signal_and_scacquire = signal_and_screlease = signal_and_relaxed = signal_and_scacq_screl
signal_or_scacquire = signal_or_screlease = signal_or_relaxed = signal_or_scacq_screl
signal_xor_scacquire = signal_xor_screlease = signal_xor_relaxed = signal_xor_scacq_screl


def amd_profiling_get_dispatch_time(agent: Agent, signal: Signal | int) -> tuple[float, float]:
    """hsa_amd_profiling_get_dispatch_time: (start, end) of the packet that completed `signal`, in
    modeled device seconds (HSA: system-clock ticks)."""
    _agent(agent, gpu=True, op="amd_profiling_get_dispatch_time")
    hw = _user_signal(signal, "amd_profiling_get_dispatch_time").core.hw
    return hw.start_ts, hw.end_ts


# --- queues ---------------------------------------------------------------------------------------------


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


def _destroy_queue(rt: _Runtime, q: Queue) -> None:
    q.destroyed = True
    q.core.destroy()
    SIGNALS.destroy(q.doorbell_signal.handle)
    with rt.lock:
        rt.queues.pop(q.id, None)
        rt.signals.pop(q.doorbell_signal.handle, None)


def _queue(queue: Queue, op: str) -> Queue:
    if not isinstance(queue, Queue) or queue.destroyed:
        raise HsaError(Status.ERROR_INVALID_QUEUE, f"[{op}] {queue!r} is not a live queue")
    return queue


def _queue_error(exc: BaseException) -> HsaError:
    """The status a packet processor fault reports (ROCr passes it to the queue's callback)."""
    bad_packet = isinstance(exc, PacketFormatError) or (isinstance(exc, CudaError) and exc.name in (
        "cudaErrorInvalidResourceHandle", "cudaErrorInvalidConfiguration", "cudaErrorNotSupported"))
    status = Status.ERROR_INVALID_PACKET_FORMAT if bad_packet else Status.ERROR_EXCEPTION
    err = HsaError(status, f"[packet processor] {exc}")
    err.__cause__ = exc
    return err


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


# --- writing packets by hand (the bytes come from hw/aql.py) --------------------------------------------


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


def _handle(signal: Signal | int) -> int:
    return signal.handle if isinstance(signal, Signal) else int(signal)


# --- code objects and executables -----------------------------------------------------------------------


class Executable:
    """hsa_executable_t: code objects loaded for agents, then frozen."""

    def __init__(self) -> None:
        self.frozen = False
        self.modules: list[tuple[Agent, LoadedModule]] = []

    def __repr__(self) -> str:
        return f"<hsa_executable {'frozen' if self.frozen else 'unfrozen'}, {len(self.modules)} code object(s)>"


@dataclass(frozen=True, eq=False)
class ExecutableSymbol:
    """hsa_executable_symbol_t: a kernel or a module variable of a loaded code object."""

    executable: Executable
    agent: Agent
    name: str
    kind: SymbolKind
    module: LoadedModule


def executable_create() -> Executable:
    """hsa_executable_create_alt: an empty, unfrozen executable."""
    rt = _rt()
    exe = Executable()
    with rt.lock:
        rt.executables.append(exe)
    return exe


def executable_load_code_object(executable: Executable, agent: Agent, code_object: str) -> None:
    """hsa_executable_load_agent_code_object: load a code object (PTX text, strata's front end) for
    `agent`: its variables are placed in the agent's memory and the device JITs its kernels.

    Raises:
        HsaError: ERROR_FROZEN_EXECUTABLE, ERROR_INVALID_EXECUTABLE, ERROR_INVALID_AGENT (not a GPU),
            ERROR_INVALID_CODE_OBJECT (malformed PTX, or an instruction the virtual GPU lacks).
    """
    exe = _executable(executable, "executable_load_code_object")
    a = _agent(agent, gpu=True, op="executable_load_code_object")
    if exe.frozen:
        raise HsaError(Status.ERROR_FROZEN_EXECUTABLE, "[executable_load_code_object] the executable is frozen")
    try:
        loaded = load_module(a.device, code_object)
    except (PTXSyntaxError, UnsupportedInstruction) as e:
        raise HsaError(Status.ERROR_INVALID_CODE_OBJECT, f"[executable_load_code_object] {e}") from e
    except OutOfMemoryError as e:
        raise HsaError(Status.ERROR_OUT_OF_RESOURCES, f"[executable_load_code_object] {e.message}") from e
    exe.modules.append((a, loaded))


def executable_freeze(executable: Executable, options: str = "") -> None:
    """hsa_executable_freeze: no more code objects may be loaded."""
    _executable(executable, "executable_freeze").frozen = True


def executable_destroy(executable: Executable) -> None:
    """hsa_executable_destroy: unload its code objects (their kernel objects stop being dispatchable)."""
    rt = _rt()
    exe = _executable(executable, "executable_destroy")
    _unload(exe)
    with rt.lock:
        rt.executables.remove(exe)


def _unload(exe: Executable) -> None:
    for _, loaded in exe.modules:
        with contextlib.suppress(CudaError):  # a device reset already freed its variables
            loaded.unload()
    exe.modules.clear()


def _executable(executable: Executable, op: str) -> Executable:
    if not isinstance(executable, Executable) or executable not in _rt().executables:
        raise HsaError(Status.ERROR_INVALID_EXECUTABLE, f"[{op}] {executable!r} is not a live executable")
    return executable


def load_code_object(agent: Agent, code_object: str) -> Executable:
    """create + load_code_object + freeze in one call: the frozen executable of `code_object` on `agent`."""
    exe = executable_create()
    executable_load_code_object(exe, agent, code_object)
    executable_freeze(exe)
    return exe


def executable_get_symbol_by_name(executable: Executable, symbol_name: str, agent: Agent | None = None
                                  ) -> ExecutableSymbol:
    """hsa_executable_get_symbol_by_name: a kernel (`name` or ROCm's `name.kd`) or module variable.

    Raises:
        HsaError: ERROR_INVALID_SYMBOL_NAME if no code object loaded for `agent` defines it.
    """
    exe = _executable(executable, "executable_get_symbol_by_name")
    name = symbol_name.removesuffix(".kd")
    for a, loaded in exe.modules:
        if agent is not None and a is not agent:
            continue
        fn = loaded.module.functions.get(name)
        if fn is not None and fn.is_entry:
            return ExecutableSymbol(exe, a, name, SymbolKind.KERNEL, loaded)
        if symbol_name in loaded.variables:
            return ExecutableSymbol(exe, a, symbol_name, SymbolKind.VARIABLE, loaded)
    raise HsaError(Status.ERROR_INVALID_SYMBOL_NAME,
                   f"[executable_get_symbol_by_name] no kernel or variable {symbol_name!r} in {exe!r}")


def executable_symbol_get_info(symbol: ExecutableSymbol, attribute: ExecutableSymbolInfo | int | str) -> Any:
    """hsa_executable_symbol_get_info: what a dispatch needs from a kernel's descriptor.

    KERNEL_OBJECT is the handle dispatch packets carry (registering the kernel with the device on
    first use, with a live-range register estimate); KERNARG_SEGMENT_SIZE/_ALIGNMENT describe the
    argument block (PTX parameters in order, each at its alignment); GROUP_SEGMENT_SIZE is static
    shared memory; PRIVATE_SEGMENT_SIZE the per-work-item local depot. Names may drop `KERNEL_`.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT for an attribute the symbol's kind does not have.
    """
    if isinstance(attribute, str) and f"KERNEL_{attribute.upper()}" in ExecutableSymbolInfo.__members__:
        attribute = f"KERNEL_{attribute}"
    key = _enum(ExecutableSymbolInfo, attribute, "executable_symbol_get_info")
    common = {ExecutableSymbolInfo.TYPE: symbol.kind, ExecutableSymbolInfo.NAME: symbol.name,
              ExecutableSymbolInfo.NAME_LENGTH: len(symbol.name), ExecutableSymbolInfo.AGENT: symbol.agent}
    if key in common:
        return common[key]
    loaded = symbol.module
    if symbol.kind == SymbolKind.VARIABLE and key in (ExecutableSymbolInfo.VARIABLE_ADDRESS,
                                                      ExecutableSymbolInfo.VARIABLE_SIZE):
        address, size = loaded.variables[symbol.name]
        return address if key == ExecutableSymbolInfo.VARIABLE_ADDRESS else size
    if symbol.kind != SymbolKind.KERNEL or key in (ExecutableSymbolInfo.VARIABLE_ADDRESS,
                                                   ExecutableSymbolInfo.VARIABLE_SIZE):
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[executable_symbol_get_info] a {symbol.kind.name.lower()} symbol has no {key.name}")
    fn = loaded.module.functions[symbol.name]
    if key == ExecutableSymbolInfo.KERNEL_OBJECT:
        return loaded.kernel_object(symbol.name, register_pressure(fn), "estimate")
    if key == ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_SIZE:
        return kernarg_segment_size(fn.params)
    if key == ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_ALIGNMENT:
        return max([16, *(p.align for p in fn.params)])  # HSA: at least 16
    if key == ExecutableSymbolInfo.KERNEL_GROUP_SEGMENT_SIZE:
        return loaded.program.shared_bytes(symbol.name, 0)
    return loaded.program.functions[symbol.name].local_size  # KERNEL_PRIVATE_SEGMENT_SIZE
