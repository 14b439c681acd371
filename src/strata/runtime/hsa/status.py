"""hsa_status_t and `HsaError`, plus the enumerations and C constants of hsa.h / hsa_ext_amd.h that the
other `strata.runtime.hsa` modules share (agent and pool attributes, queue types, packet and fence
constants), and the small argument helpers every call uses."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from strata.errors import CudaError
from strata.hw import aql
from strata.hw.aql import FenceScope, PacketFormatError, PacketType
from strata.runtime.signals import Condition

UINT32_MAX = (1 << 32) - 1
UINT64_MAX = (1 << 64) - 1
QUEUE_MIN_SIZE = 64  # packets; what ROCr reports for its GPU agents (rocminfo "Queue Min Size")
QUEUES_MAX = 128
PAGE = 4096


# --- status codes and the error --------------------------------------------------------------------------


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


def _queue_error(exc: BaseException) -> HsaError:
    """The status a packet processor fault reports (ROCr passes it to the queue's callback)."""
    bad_packet = isinstance(exc, PacketFormatError) or (isinstance(exc, CudaError) and exc.name in (
        "cudaErrorInvalidResourceHandle", "cudaErrorInvalidConfiguration", "cudaErrorNotSupported"))
    status = Status.ERROR_INVALID_PACKET_FORMAT if bad_packet else Status.ERROR_EXCEPTION
    err = HsaError(status, f"[packet processor] {exc}")
    err.__cause__ = exc
    return err


# --- enumerations of hsa.h / hsa_ext_amd.h ---------------------------------------------------------------


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


# --- argument helpers ------------------------------------------------------------------------------------


def _iterate(items: list[Any], callback: Callable[[Any, Any], Status | None] | None, data: Any) -> Any:
    if callback is None:
        return items
    for item in items:
        status = callback(item, data)
        if status is not None and status != Status.SUCCESS:
            return Status(status)
    return Status.SUCCESS


def _enum(kind: Any, value: Any, op: str) -> Any:
    try:
        return kind[value.upper()] if isinstance(value, str) else kind(value)
    except (KeyError, ValueError):
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[{op}] unknown {kind.__name__} {value!r}") from None
