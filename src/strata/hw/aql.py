"""AQL packets: the 64-byte command format the virtual GPU's packet processor reads from a queue.

Source of truth for the byte layout, which follows `hsa.h` for the 64-bit little-endian model
(the packet layouts of the HSA platform system architecture specification). It lives at L0 because it is the hardware's
contract: the runtime (L2) writes these bytes into a ring buffer and the command processor here
decodes them. A producer writes the body first and the 32-bit header+setup word last, so the
packet processor never sees a half-written packet (its header still reads INVALID).

Copies use AGENT_DISPATCH packets whose `type` field names a DMA operation (strata's choice; ROCr
drives its SDMA engines with a different, vendor packet format).

Example:
    >>> ring = bytearray(PACKET_SIZE)
    >>> write_kernel_dispatch(ring, 0, grid=(256, 1, 1), workgroup=(128, 1, 1), kernel_object=7,
    ...                       kernarg_address=0x1000, group_segment_size=0, private_segment_size=0,
    ...                       completion_signal=3)
    >>> packet_type(ring, 0) == PacketType.INVALID  # body written, header not yet
    True
    >>> publish(ring, 0, header(PacketType.KERNEL_DISPATCH, barrier=True), setup=1)
    >>> p = decode(ring, 0); (type(p).__name__, p.grid, p.workgroup, p.completion_signal)
    ('KernelDispatch', (256, 1, 1), (128, 1, 1), 3)
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any

PACKET_SIZE = 64
MAX_DEP_SIGNALS = 5  # dep_signal[5] in the barrier packets

# hsa_packet_header_t bit offsets
HEADER_TYPE = 0
HEADER_BARRIER = 8
HEADER_SCACQUIRE_FENCE_SCOPE = 9
HEADER_SCRELEASE_FENCE_SCOPE = 11


class PacketType(enum.IntEnum):
    """hsa_packet_type_t."""

    VENDOR_SPECIFIC = 0
    INVALID = 1
    KERNEL_DISPATCH = 2
    BARRIER_AND = 3
    AGENT_DISPATCH = 4
    BARRIER_OR = 5


class FenceScope(enum.IntEnum):
    """hsa_fence_scope_t."""

    NONE = 0
    AGENT = 1
    SYSTEM = 2


class AgentOp(enum.IntEnum):
    """The `type` of an AGENT_DISPATCH packet sent to a DMA engine (strata's function ids)."""

    COPY = 1  # arg0 dst, arg1 src, arg2 bytes, arg3 CopyFlags
    FILL = 2  # arg0 dst, arg1 byte value, arg2 bytes


class CopyFlags(enum.IntFlag):
    """arg3 of a COPY packet: which side is host memory, and whether that host memory is pinned.
    MAPPED: the host CPU moves the bytes itself through its mapping of device memory (a native program's
    pageable copy, hw/memory.share_device_memory); the engine checks the device range and times it."""

    SRC_HOST = 1
    DST_HOST = 2
    PINNED = 4
    MAPPED = 8


_DISPATCH = struct.Struct("<HHHHHHIIIIIQQQQ")  # header, setup, wg xyz, reserved0, grid xyz, private, group, ...
_BARRIER = struct.Struct("<HHI5QQQ")  # header, reserved0, reserved1, dep_signal[5], reserved2, completion
_AGENT = struct.Struct("<HHIQ4QQQ")  # header, type, reserved0, return_address, arg[4], reserved2, completion
_HEADER_SETUP = struct.Struct("<I")
# strata's extension: the dispatch packet's reserved2 (64 bits) carries bits 32.. of each grid size,
# 21 bits per dimension. HSA's grid sizes are 32-bit work-item counts, but CUDA allows (2^31-1) x 1024
# threads in x; packets whose grid fits in 32 bits (all HSA-written ones) leave reserved2 zero.
_GRID_HI_BITS = 21
_GRID_HI_MASK = (1 << _GRID_HI_BITS) - 1
MAX_GRID_SIZE = (1 << (32 + _GRID_HI_BITS)) - 1  # work-items per dimension
# strata's extension: the dispatch packet's reserved0 (16 bits) carries launch flags. COOPERATIVE: all
# workgroups must be resident together, and the kernarg block carries one hidden 8-byte argument after the
# kernel's own (at the kernel's kernarg size rounded up to 8): the grid workspace address (AMD passes its
# grid-sync state the same way, as the hidden multigrid-sync kernarg).
DISPATCH_COOPERATIVE = 1
# CLUSTER: launched with thread-block cluster dims (cudaLaunchAttributeClusterDimension); bits 4..15 hold
# each dimension minus one, 4 bits apiece (a cluster has at most 16 blocks).
DISPATCH_CLUSTER = 2
_CLUSTER_SHIFT = 4


def cluster_flags(cluster: tuple[int, int, int]) -> int:
    """The dispatch flags that carry `cluster` dims ((0, 0, 0): none asked for at launch)."""
    if not any(cluster):
        return 0
    if any(not 1 <= c <= 16 for c in cluster):
        raise ValueError(f"cluster dims {cluster} do not fit the dispatch packet (1..16 each)")
    x, y, z = (c - 1 for c in cluster)
    return DISPATCH_CLUSTER | (x | y << 4 | z << 8) << _CLUSTER_SHIFT


def cluster_of(flags: int) -> tuple[int, int, int]:
    """The cluster dims a dispatch's flags carry, or (0, 0, 0)."""
    if not flags & DISPATCH_CLUSTER:
        return (0, 0, 0)
    v = flags >> _CLUSTER_SHIFT
    return (v & 15) + 1, (v >> 4 & 15) + 1, (v >> 8 & 15) + 1
assert _DISPATCH.size == _BARRIER.size == _AGENT.size == PACKET_SIZE


def header(kind: PacketType, *, barrier: bool = False, acquire: FenceScope = FenceScope.SYSTEM,
           release: FenceScope = FenceScope.SYSTEM) -> int:
    """The 16-bit packet header (type, barrier bit, acquire and release fence scopes)."""
    return (int(kind) << HEADER_TYPE) | (int(barrier) << HEADER_BARRIER) | \
        (int(acquire) << HEADER_SCACQUIRE_FENCE_SCOPE) | (int(release) << HEADER_SCRELEASE_FENCE_SCOPE)


_INVALID_HEADER = header(PacketType.INVALID)


def write_kernel_dispatch(buf: Any, offset: int, *, grid: tuple[int, int, int], workgroup: tuple[int, int, int],
                          kernel_object: int, kernarg_address: int, group_segment_size: int,
                          private_segment_size: int, completion_signal: int, flags: int = 0) -> None:
    """Write an hsa_kernel_dispatch_packet_t body (grid in work-items, as HSA counts), header INVALID.
    Grid sizes past 32 bits keep their high bits in reserved2 (strata's extension, see _GRID_HI_BITS);
    `flags` go in reserved0 (DISPATCH_COOPERATIVE)."""
    gx, gy, gz = grid  # (unrolled: every launch writes one)
    if not (0 <= gx <= MAX_GRID_SIZE and 0 <= gy <= MAX_GRID_SIZE and 0 <= gz <= MAX_GRID_SIZE) or \
            not 0 <= group_segment_size < 1 << 32:
        raise PacketFormatError(f"dispatch grid {grid} work-items (each at most {MAX_GRID_SIZE}) or group segment "
                                f"{group_segment_size} bytes (at most 2^32-1) does not fit the packet")
    hi = (gx >> 32) | (gy >> 32) << _GRID_HI_BITS | (gz >> 32) << (2 * _GRID_HI_BITS)
    _DISPATCH.pack_into(buf, offset, _INVALID_HEADER, 0, *workgroup, flags, gx & 0xFFFFFFFF, gy & 0xFFFFFFFF,
                        gz & 0xFFFFFFFF, private_segment_size, group_segment_size, kernel_object, kernarg_address, hi,
                        completion_signal)


def write_barrier(buf: Any, offset: int, deps: tuple[int, ...], completion_signal: int) -> None:
    """Write an hsa_barrier_and/or_packet_t body (up to 5 dependent signal handles), header INVALID."""
    if len(deps) > MAX_DEP_SIGNALS:
        raise ValueError(f"a barrier packet holds at most {MAX_DEP_SIGNALS} dependent signals, got {len(deps)}")
    padded = (*deps, *(0,) * (MAX_DEP_SIGNALS - len(deps)))
    _BARRIER.pack_into(buf, offset, header(PacketType.INVALID), 0, 0, *padded, 0, completion_signal)


def write_agent_dispatch(buf: Any, offset: int, op: AgentOp, args: tuple[int, int, int, int],
                         completion_signal: int) -> None:
    """Write an hsa_agent_dispatch_packet_t body whose `type` is a DMA operation, header INVALID."""
    _AGENT.pack_into(buf, offset, header(PacketType.INVALID), int(op), 0, 0, *args, 0, completion_signal)


def publish(buf: Any, offset: int, hdr: int, setup: int = 0) -> None:
    """Write header and the next 16 bits (`setup` of a dispatch, `type` of an agent dispatch) as one
    32-bit store: the moment the packet becomes visible."""
    _HEADER_SETUP.pack_into(buf, offset, hdr | (setup << 16))


def retire(buf: Any, offset: int) -> None:
    """The packet processor's last write to a slot: header back to INVALID."""
    _HEADER_SETUP.pack_into(buf, offset, _INVALID_HEADER)


def packet_type(buf: Any, offset: int) -> int:
    return int(buf[offset])


# --- decoding (the packet processor's side) ----------------------------------------------------------


@dataclass(frozen=True)
class KernelDispatch:
    barrier: bool
    dimensions: int
    workgroup: tuple[int, int, int]
    grid: tuple[int, int, int]
    private_segment_size: int
    group_segment_size: int
    kernel_object: int
    kernarg_address: int
    completion_signal: int
    flags: int = 0  # reserved0: DISPATCH_COOPERATIVE


@dataclass(frozen=True)
class Barrier:
    barrier: bool
    is_or: bool
    deps: tuple[int, ...]  # nonzero handles only
    completion_signal: int


@dataclass(frozen=True)
class AgentDispatch:
    barrier: bool
    op: int
    args: tuple[int, int, int, int]
    completion_signal: int


Packet = KernelDispatch | Barrier | AgentDispatch


class PacketFormatError(ValueError):
    """A slot holds a packet the processor cannot run (HSA_STATUS_ERROR_INVALID_PACKET_FORMAT)."""


def decode(buf: Any, offset: int) -> Packet:
    """Decode the packet at `offset` (its header must already be published)."""
    hdr = int.from_bytes(bytes(buf[offset:offset + 2]), "little")
    kind, barrier = hdr & 0xFF, bool(hdr >> HEADER_BARRIER & 1)
    if kind == PacketType.KERNEL_DISPATCH:
        (_, setup, wx, wy, wz, flags, gx, gy, gz, private, group, kobj, kernarg, hi,
         signal) = _DISPATCH.unpack_from(buf, offset)
        grid = (gx | (hi & _GRID_HI_MASK) << 32, gy | (hi >> _GRID_HI_BITS & _GRID_HI_MASK) << 32,
                gz | (hi >> 2 * _GRID_HI_BITS & _GRID_HI_MASK) << 32)
        return KernelDispatch(barrier, setup & 3, (wx, wy, wz), grid, private, group,
                              kobj, kernarg, signal, flags)
    if kind in (PacketType.BARRIER_AND, PacketType.BARRIER_OR):
        fields = _BARRIER.unpack_from(buf, offset)
        deps = tuple(h for h in fields[3:3 + MAX_DEP_SIGNALS] if h)
        return Barrier(barrier, kind == PacketType.BARRIER_OR, deps, fields[-1])
    if kind == PacketType.AGENT_DISPATCH:
        fields = _AGENT.unpack_from(buf, offset)
        return AgentDispatch(barrier, fields[1], (fields[4], fields[5], fields[6], fields[7]), fields[-1])
    raise PacketFormatError(f"packet type {kind} at ring offset {offset} is not one the packet processor runs "
                            f"(expected KERNEL_DISPATCH=2, BARRIER_AND=3, AGENT_DISPATCH=4 or BARRIER_OR=5)")
