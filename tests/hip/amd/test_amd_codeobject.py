"""The code object loader: real gfx942 code objects (built by clang-19 from the .hip files beside this
test, checked in) and hand-broken copies of them, which must fail with CodeObjectError."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from strata.hw.amdgpu.codeobject import parse
from strata.hw.amdgpu.errors import CodeObjectError
from strata.hw.amdgpu.msgpack import unpack

HERE = Path(__file__).parent


def image(name: str) -> bytes:
    return (HERE / f"{name}.co").read_bytes()


def test_saxpy_metadata_descriptor_and_hidden_arguments() -> None:
    co = parse(image("saxpy"))
    assert co.processor == "gfx942" and co.target.startswith("amdgcn-amd-amdhsa--gfx942")
    k = co.kernels["saxpy"]
    explicit = [(a.offset, a.size, a.value_kind) for a in k.explicit_args]
    assert explicit == [(0, 4, "by_value"), (4, 4, "by_value"), (8, 8, "global_buffer"), (16, 8, "global_buffer")]
    hidden = {a.value_kind: (a.offset, a.size) for a in k.args if a.value_kind.startswith("hidden_")}
    assert hidden["hidden_block_count_x"] == (24, 4)
    assert hidden["hidden_group_size_x"] == (36, 2)
    assert hidden["hidden_remainder_x"] == (42, 2)
    assert hidden["hidden_grid_dims"] == (88, 2)
    assert k.kernarg_segment_size == 280 and k.wavefront_size == 64
    kd = k.descriptor
    assert kd.kernarg_size == 280
    assert kd.user_sgprs() == [("kernarg_segment_ptr", 2)] and kd.user_sgpr_count == 2
    assert kd.workgroup_id_enabled == (True, False, False)
    assert k.code[:4] == bytes.fromhex("C00200C0")[::-1]  # s_load_dword s3, s[0:1], 0x24


def test_sgemm_uses_lds_and_two_workgroup_ids() -> None:
    k = parse(image("sgemm")).kernels["sgemm"]
    assert k.group_segment_fixed_size == 2 * 16 * 16 * 4
    assert k.descriptor.workgroup_id_enabled[:2] == (True, True)
    assert k.descriptor.workitem_id_dims == 1  # x and y packed in v0


def test_msgpack_reader() -> None:
    assert unpack(bytes([0x93, 0x01, 0xCD, 0x01, 0x00, 0xA2, 0x68, 0x69])) == [1, 256, "hi"]
    with pytest.raises(CodeObjectError, match="truncated"):
        unpack(bytes([0x92, 0x01]))
    with pytest.raises(CodeObjectError, match="unsupported msgpack type"):
        unpack(bytes([0xC1]))


def test_not_elf_wrong_machine_and_truncated() -> None:
    good = image("saxpy")
    with pytest.raises(CodeObjectError, match="not an ELF"):
        parse(b"PK\x03\x04" + good[4:])
    wrong = bytearray(good)
    struct.pack_into("<H", wrong, 18, 62)  # EM_X86_64
    with pytest.raises(CodeObjectError, match="EM_AMDGPU"):
        parse(bytes(wrong))
    with pytest.raises(CodeObjectError, match="past the end|outside|does not fit"):
        parse(good[:1000])


def test_missing_metadata_note() -> None:
    broken = bytearray(image("saxpy"))
    at = broken.find(b"AMDGPU\0")
    broken[at:at + 6] = b"XXXXXX"  # the note's owner no longer says AMDGPU
    with pytest.raises(CodeObjectError, match="NT_AMDGPU_METADATA"):
        parse(bytes(broken))


def test_kernel_descriptor_symbol_missing() -> None:
    broken = bytearray(image("saxpy"))
    at = broken.find(b"saxpy.kd")
    while at >= 0:  # rename every occurrence of the descriptor's symbol name (string tables, metadata)
        broken[at:at + 8] = b"saxpy.xx"
        at = broken.find(b"saxpy.kd", at + 1)
    # the metadata's .symbol now names saxpy.xx, which does exist: break the metadata's copy only
    meta = broken.find(b".symbol")
    sym = broken.find(b"saxpy.xx", meta)
    broken[sym:sym + 8] = b"saxpy.zz"
    with pytest.raises(CodeObjectError, match="no symbol 'saxpy.zz'"):
        parse(bytes(broken))


def test_line_table_garbage_gives_no_lines_not_an_error() -> None:
    from strata.hw.amdgpu.lines import parse_line_table

    assert parse_line_table(b"") is None
    assert parse_line_table(b"\x10\x00\x00\x00\x05\x00" + b"\xff" * 4) is None  # truncated header
    assert parse_line_table(b"\x08\x00\x00\x00\x04\x00" + b"\x00" * 8) is None  # DWARF 4: not read
