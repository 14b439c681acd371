"""DWARF 5 line tables (`.debug_line`, from `-gline-tables-only`): code address -> source file and line,
so a fault names the HIP source line as well as the instruction. Malformed or older tables give no
lines (faults then report the instruction only); they never stop a code object from loading."""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

DW_FORM_STRING, DW_FORM_LINE_STRP, DW_FORM_STRP, DW_FORM_UDATA, DW_FORM_DATA16 = 0x08, 0x1F, 0x0E, 0x0F, 0x1E
_FIXED = {0x0B: 1, 0x05: 2, 0x06: 4, 0x07: 8, DW_FORM_DATA16: 16}


@dataclass
class LineTable:
    """Rows (address, file index, line), sorted by address, and the file paths."""

    files: list[str] = field(default_factory=list)
    addresses: list[int] = field(default_factory=list)
    rows: list[tuple[int, int]] = field(default_factory=list)  # (file, line) per address
    ends: set[int] = field(default_factory=set)  # addresses that end a sequence

    def lookup(self, address: int) -> tuple[str, int] | None:
        """The (file, line) of the instruction at `address`, or None outside the table.

        Example:
            >>> t = LineTable(["k.hip"], [0x100, 0x108], [(0, 3), (0, 4)])
            >>> t.lookup(0x104), t.lookup(0x10c), t.lookup(0x80)
            (('k.hip', 3), ('k.hip', 4), None)
        """
        i = bisect.bisect_right(self.addresses, address) - 1
        if i < 0 or self.addresses[i] in self.ends:
            return None
        f, line = self.rows[i]
        if not 0 <= f < len(self.files) or line == 0:
            return None
        return self.files[f], line


class _Reader:
    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data, self.at = data, at

    def u(self, n: int) -> int:
        v = int.from_bytes(self.data[self.at:self.at + n], "little")
        if self.at + n > len(self.data):
            raise ValueError("truncated")
        self.at += n
        return v

    def s8(self) -> int:
        v = self.u(1)
        return v - 256 if v > 127 else v

    def uleb(self) -> int:
        result = shift = 0
        while True:
            b = self.u(1)
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def sleb(self) -> int:
        result = shift = 0
        while True:
            b = self.u(1)
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result - (1 << shift) if b & 0x40 else result

    def cstr(self) -> str:
        end = self.data.index(b"\0", self.at)
        s = self.data[self.at:end].decode("utf-8", "replace")
        self.at = end + 1
        return s


def _strz(table: bytes, off: int) -> str:
    end = table.find(b"\0", off)
    return table[off:end if end >= 0 else len(table)].decode("utf-8", "replace")


def parse_line_table(debug_line: bytes, line_str: bytes = b"", debug_str: bytes = b"") -> LineTable | None:
    """Parse the first (DWARF 5) line-number program of `.debug_line`; None if absent or unsupported."""
    try:
        return _parse(debug_line, line_str, debug_str)
    except (ValueError, IndexError, struct.error):
        return None


def _parse(data: bytes, line_str: bytes, debug_str: bytes) -> LineTable | None:  # noqa: C901 - DWARF's opcodes
    r = _Reader(data)
    unit_length = r.u(4)
    if unit_length >= 0xFFFFFFF0:
        return None  # DWARF64: not emitted by clang for AMDGPU
    end = r.at + unit_length
    if r.u(2) != 5:
        return None
    r.u(1)  # address_size
    r.u(1)  # segment selector size
    header_length = r.u(4)
    program = r.at + header_length
    min_inst, _max_ops, default_is_stmt = r.u(1), r.u(1), r.u(1)
    line_base, line_range, opcode_base = r.s8(), r.u(1), r.u(1)
    std_lengths = [r.u(1) for _ in range(opcode_base - 1)]

    def entries() -> list[dict[int, object]]:
        formats = [(r.uleb(), r.uleb()) for _ in range(r.u(1))]
        out = []
        for _ in range(r.uleb()):
            entry: dict[int, object] = {}
            for content, form in formats:
                if form == DW_FORM_LINE_STRP:
                    entry[content] = _strz(line_str, r.u(4))
                elif form == DW_FORM_STRP:
                    entry[content] = _strz(debug_str, r.u(4))
                elif form == DW_FORM_STRING:
                    entry[content] = r.cstr()
                elif form == DW_FORM_UDATA:
                    entry[content] = r.uleb()
                elif form in _FIXED:
                    entry[content] = r.u(_FIXED[form])
                else:
                    raise ValueError(f"form {form:#x}")
            out.append(entry)
        return out

    dirs = [str(e.get(1, "")) for e in entries()]
    files = []
    for e in entries():
        name, d = str(e.get(1, "")), e.get(2, 0)
        directory = dirs[d] if isinstance(d, int) and d < len(dirs) else ""
        files.append(name if name.startswith("/") or directory in ("", ".") else f"{directory}/{name}")
    table = LineTable(files)
    r.at = program
    address, file, line = 0, 1, 1
    del default_is_stmt

    def emit() -> None:
        table.addresses.append(address)
        table.rows.append((file, line))

    while r.at < end:
        op = r.u(1)
        if op >= opcode_base:  # special opcode: advance address and line, append a row
            adj = op - opcode_base
            address += (adj // line_range) * min_inst
            line += line_base + adj % line_range
            emit()
        elif op == 0:  # extended
            length = r.uleb()
            sub_end = r.at + length
            sub = r.u(1)
            if sub == 1:  # end_sequence
                emit()
                table.ends.add(address)
                address, file, line = 0, 1, 1
            elif sub == 2:
                address = r.u(length - 1)
            r.at = sub_end
        elif op == 1:  # copy
            emit()
        elif op == 2:
            address += r.uleb() * min_inst
        elif op == 3:
            line += r.sleb()
        elif op == 4:
            file = r.uleb()
        elif op == 5:
            r.uleb()  # column
        elif op == 8:  # const_add_pc
            address += ((255 - opcode_base) // line_range) * min_inst
        elif op == 9:
            address += r.u(2)
        else:  # negate_stmt, basic_block, prologue_end, epilogue_begin, isa and unknown standard opcodes
            for _ in range(std_lengths[op - 1] if op - 1 < len(std_lengths) else 0):
                r.uleb()
    order = sorted(range(len(table.addresses)), key=lambda i: table.addresses[i])  # stable: last row wins ties
    table.addresses = [table.addresses[i] for i in order]
    table.rows = [table.rows[i] for i in order]
    return table
