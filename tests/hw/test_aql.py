"""AQL packets byte for byte, against the field offsets of hsa.h (../shared/reference/apis.md §1.2-1.4).

The oracle writes each field with int.to_bytes at its documented offset, independently of the struct
formats in hw/aql.py.
"""

from __future__ import annotations

import pytest

from strata.hw import aql
from strata.hw.aql import AgentOp, FenceScope, PacketType


def field_bytes(fields: list[tuple[int, int, int]]) -> bytes:
    """64 bytes with each (offset, size, value) written little-endian; everything else zero."""
    out = bytearray(64)
    for off, size, value in fields:
        out[off:off + size] = value.to_bytes(size, "little")
    return bytes(out)


def test_header_bits() -> None:
    h = aql.header(PacketType.KERNEL_DISPATCH, barrier=True, acquire=FenceScope.AGENT, release=FenceScope.SYSTEM)
    assert h == 2 | (1 << 8) | (1 << 9) | (2 << 11)
    assert aql.header(PacketType.BARRIER_OR, acquire=FenceScope.NONE, release=FenceScope.NONE) == 5


def test_kernel_dispatch_layout() -> None:
    ring = bytearray(128)
    aql.write_kernel_dispatch(ring, 64, grid=(1024, 6, 1), workgroup=(256, 2, 1), kernel_object=0x1122334455667788,
                              kernarg_address=0x7F00DEADBEEF, group_segment_size=4096, private_segment_size=48,
                              completion_signal=0xABCDEF)
    hdr = aql.header(PacketType.KERNEL_DISPATCH, barrier=True)
    aql.publish(ring, 64, hdr, setup=2)
    want = field_bytes([(0, 2, hdr), (2, 2, 2), (4, 2, 256), (6, 2, 2), (8, 2, 1), (10, 2, 0), (12, 4, 1024),
                        (16, 4, 6), (20, 4, 1), (24, 4, 48), (28, 4, 4096), (32, 8, 0x1122334455667788),
                        (40, 8, 0x7F00DEADBEEF), (48, 8, 0), (56, 8, 0xABCDEF)])
    assert bytes(ring[64:]) == want and bytes(ring[:64]) == bytes(64)
    p = aql.decode(ring, 64)
    assert isinstance(p, aql.KernelDispatch)
    assert (p.dimensions, p.grid, p.workgroup, p.kernel_object, p.completion_signal) == \
        (2, (1024, 6, 1), (256, 2, 1), 0x1122334455667788, 0xABCDEF)


@pytest.mark.parametrize("kind", [PacketType.BARRIER_AND, PacketType.BARRIER_OR])
def test_barrier_layout(kind: PacketType) -> None:
    ring = bytearray(64)
    aql.write_barrier(ring, 0, (11, 22, 33), completion_signal=99)
    assert aql.packet_type(ring, 0) == PacketType.INVALID  # not visible until published
    hdr = aql.header(kind, barrier=True)
    aql.publish(ring, 0, hdr)
    want = field_bytes([(0, 2, hdr), (8, 8, 11), (16, 8, 22), (24, 8, 33), (56, 8, 99)])
    assert bytes(ring) == want
    p = aql.decode(ring, 0)
    assert isinstance(p, aql.Barrier) and p.deps == (11, 22, 33) and p.is_or == (kind == PacketType.BARRIER_OR)


def test_agent_dispatch_layout_and_publish_keeps_the_type_field() -> None:
    ring = bytearray(64)
    aql.write_agent_dispatch(ring, 0, AgentOp.COPY, (0x1000, 0x2000, 4096, 5), completion_signal=7)
    hdr = aql.header(PacketType.AGENT_DISPATCH)
    aql.publish(ring, 0, hdr, int(AgentOp.COPY))
    want = field_bytes([(0, 2, hdr), (2, 2, int(AgentOp.COPY)), (16, 8, 0x1000), (24, 8, 0x2000), (32, 8, 4096),
                        (40, 8, 5), (56, 8, 7)])
    assert bytes(ring) == want


def test_retire_sets_invalid_and_decode_refuses_it() -> None:
    ring = bytearray(64)
    aql.write_barrier(ring, 0, (), 0)
    aql.publish(ring, 0, aql.header(PacketType.BARRIER_AND))
    aql.retire(ring, 0)
    assert aql.packet_type(ring, 0) == PacketType.INVALID
    with pytest.raises(aql.PacketFormatError, match="packet type 1"):
        aql.decode(ring, 0)


def test_too_many_barrier_dependencies() -> None:
    with pytest.raises(ValueError, match="at most 5"):
        aql.write_barrier(bytearray(64), 0, (1, 2, 3, 4, 5, 6), 0)
