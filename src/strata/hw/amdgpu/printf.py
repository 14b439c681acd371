"""Device printf of AMD kernels: the buffer behind the hidden argument `hidden_printf_buffer`, and the host
side that formats its records after the kernel (what HIP's runtime does for buffered printf).

clang compiles HIP `printf` with `-mprintf-kind=buffered` into a call of `__printf_alloc(bytes)` (strata's
device header implements it over this buffer) and stores, at the pointer it returns, one record:

- a control dword: bit 0 the stream (1: stderr), bit 1 set when the format is a constant, bits 2..31 the
  record's size in bytes;
- a constant format's id, the low 64 bits of its MD5 (the code object's `amdhsa.printf` metadata maps it
  to the text), or else the format's bytes, NUL-terminated, padded to 8 bytes;
- each argument in 8 bytes (integers zero-extended, floats widened to double, pointers), and each `%s`
  argument's characters, NUL-terminated, padded to 8 bytes.

The buffer is a header {uint32 used; uint32 size} and the records; a record that would pass the end is not
written (that printf returns -1), as CUDA drops output past its FIFO.
"""

from __future__ import annotations

import re
import struct
import sys
import threading

from strata.hw.amdgpu.codeobject import KernelInfo
from strata.hw.memory import DeviceMemory

BUFFER_BYTES = 1 << 20  # as CUDA's default cudaLimitPrintfFifoSize
_HEADER = 8
_GUARD = 1 << 16
_LOCK = threading.Lock()  # one printf kernel at a time uses a memory's buffer (records are drained after it)
_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcsp%])")


def buffer_offset(kernel: KernelInfo) -> int | None:
    """The kernarg offset of the kernel's hidden_printf_buffer argument, or None when it prints nothing."""
    return next((a.offset for a in kernel.args if a.value_kind == "hidden_printf_buffer"), None)


def buffer_address(mem: DeviceMemory) -> int:
    """The printf buffer of this memory: mapped (once) at the top of the device's address range, above
    what the VRAM allocator hands out, like the runtime's own allocations."""
    addr = mem.end - _GUARD - BUFFER_BYTES
    alloc = mem.allocation_at(addr)
    if alloc is None or alloc.address != addr:
        mem.map(addr, BUFFER_BYTES, "printf buffer")
    return addr


class PrintfBuffer:
    """The printf buffer of one launch: `attach` patches the kernarg segment with its address and empties
    it; `drain` formats the records the kernel wrote and writes them to stdout/stderr."""

    def __init__(self, kernel: KernelInfo, mem: DeviceMemory, kernarg_address: int, offset: int) -> None:
        self.kernel, self.mem = kernel, mem
        _LOCK.acquire()
        try:
            self.addr = buffer_address(mem)
            mem.write(self.addr, struct.pack("<II", 0, BUFFER_BYTES))
            mem.write(kernarg_address + offset, struct.pack("<Q", self.addr))
        except BaseException:
            _LOCK.release()
            raise

    def records(self) -> list[tuple[int, str]]:
        """(stream, text) of what the kernel has printed so far."""
        used = struct.unpack("<I", self.mem.read(self.addr, 4))[0]
        raw = self.mem.read(self.addr + _HEADER, min(used, BUFFER_BYTES - _HEADER))
        return format_records(raw, self.kernel.printf_formats)

    def drain(self) -> None:
        try:
            records = self.records()
        finally:
            _LOCK.release()
        for stream, text in records:
            (sys.stderr if stream else sys.stdout).write(text)


_ASSERTION = re.compile(r"(?P<file>.*):(?P<line>\d+): (?P<func>.*): Device-side assertion `(?P<expr>.*)' failed\.$")


def assertion(records: list[tuple[int, str]]) -> dict[str, str | int] | None:
    """The first failed assertion among printed records (the line strata's device header prints before it
    traps, as ROCm's does): expr, file, line, func; None if there is none."""
    for _, text in records:
        m = _ASSERTION.match(text.rstrip("\n"))
        if m:
            return {"assertion": m["expr"], "file": m["file"], "line": int(m["line"]), "function": m["func"]}
    return None


def format_records(raw: bytes, formats: dict[int, str]) -> list[tuple[int, str]]:
    """(stream, text) of each record in `raw`, in buffer order. A record whose format id is not in the code
    object's metadata prints a note instead of its arguments."""
    out = []
    pos = 0
    while pos + 4 <= len(raw):
        ctrl = struct.unpack_from("<I", raw, pos)[0]
        size = ctrl >> 2
        if size < 4 or pos + size > len(raw):
            break  # the end of what was written (or a record cut off by the buffer's end)
        rec = raw[pos + 4:pos + size]
        pos += size
        if ctrl & 2:
            key = struct.unpack_from("<Q", rec, 0)[0]
            fmt = formats.get(key)
            if fmt is None:
                out.append((ctrl & 1, f"<printf format {key:x} is not in the code object's metadata>\n"))
                continue
            at = 8
        else:
            fmt, at = _string(rec, 0)
        out.append((ctrl & 1, _format(fmt, rec, at)))
    return out


def _string(rec: bytes, at: int) -> tuple[str, int]:
    """A NUL-terminated string at `at` and the offset after it, padded to 8 bytes."""
    end = rec.find(b"\0", at)
    end = len(rec) if end < 0 else end
    return rec[at:end].decode("utf-8", "replace"), at + -(-(end - at + 1) // 8) * 8


def _format(fmt: str, rec: bytes, at: int) -> str:
    pos = at

    def word() -> int:
        nonlocal pos
        v = int.from_bytes(rec[pos:pos + 8].ljust(8, b"\0"), "little")
        pos += 8
        return v

    def signed(v: int, bits: int) -> int:
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >> (bits - 1) else v

    def sub(m: re.Match[str]) -> str:
        nonlocal pos
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            return "%"
        if width == "*":
            width = str(signed(word(), 32))
        if prec == "*":
            prec = str(max(signed(word(), 32), 0))
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec is not None else "")
        if conv == "s":
            text, pos = _string(rec, pos)
            return (spec + "s") % text
        if conv in "eEfFgGaA":
            value = struct.unpack("<d", word().to_bytes(8, "little"))[0]
            return (spec + conv) % value if conv not in "aA" else value.hex()
        if conv == "p":
            return f"{word():#x}"
        bits = 64 if length in ("l", "ll", "z", "j", "t") else 16 if length == "h" else 8 if length == "hh" else 32
        v = word()
        if conv == "c":
            return (spec + "c") % chr(v & 0xFF)
        if conv in "di":
            return (spec + "d") % signed(v, bits)
        return (spec + ("d" if conv == "u" else conv)) % (v & ((1 << bits) - 1))

    return _SPEC.sub(sub, fmt)
