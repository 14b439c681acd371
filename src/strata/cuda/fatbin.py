"""Fat binaries: the block of device code nvcc embeds in a program (what the CUDA runtime hands the driver).

Layout (nvcc 12/13, little-endian):

- the wrapper the host object passes to `__cudaRegisterFatBinary`: `{u32 magic 0x466243b1; u32 version;
  u64 data; u64 prelinked}`; version 2 (`-rdc=true`, and CUDA 13's link stub) has a NULL-terminated list
  of prelinked fat binaries at `prelinked`, one per translation unit. The wrapper is read by the native
  runtime library (it holds pointers); this module parses what they point to.
- the container at `data`: `{u32 magic 0xBA55ED50; u16 version 1; u16 header_size 16; u64 fat_size}`,
  then `fat_size` bytes of entries.
- each entry: `{u16 kind (1 PTX, 2 ELF/cubin); u16; u32 header_size; u64 payload_size; u32 compressed_size;
  u32; u16 minor; u16 major; u32 arch; u32 name_offset; u32 name_size; u64 flags; u64; u64 decompressed_size}`
  and its payload at `header_size`. Flag 0x8000: the payload is zstd-compressed (nvcc 13); 0x2000: LZ4
  (older toolkits; not supported here, reported as such).

Example:
    >>> blob = container([Entry(KIND_PTX, 90, b".version 8.0\\n.target sm_90\\n")])
    >>> [e.arch for e in parse(blob)]
    [90]
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

FATBIN_MAGIC = 0xBA55ED50
WRAPPER_MAGIC = 0x466243B1
KIND_PTX = 1
KIND_ELF = 2
FLAG_ZSTD = 0x8000
FLAG_LZ4 = 0x2000
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # 64 bytes of the 0x50-byte entry header that matter


class FatbinError(ValueError):
    """A fat binary strata cannot use: malformed, truncated, compressed in an unknown way, or carrying no
    PTX the virtual GPU can run. The message names what, where (byte offset) and what was expected."""


@dataclass(frozen=True)
class Entry:
    """One entry of a fat binary: PTX text or a cubin (SASS) for one architecture."""

    kind: int  # KIND_PTX or KIND_ELF
    arch: int  # e.g. 90 for compute_90 / sm_90
    payload: bytes  # PTX: decompressed; ELF: as stored (see `flags`)
    flags: int = 0

    @property
    def is_ptx(self) -> bool:
        return self.kind == KIND_PTX

    def text(self) -> str:
        """The PTX text (NUL-terminated in the binary)."""
        return self.payload.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def fat_size(data: bytes) -> int:
    """Total bytes (header included) of the container at the start of `data`."""
    if len(data) < _HEADER.size:
        raise FatbinError(f"fat binary header: {len(data)} bytes, expected at least {_HEADER.size}")
    magic, _version, header_size, size = _HEADER.unpack_from(data)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"fat binary at offset 0: magic {magic:#010x}, expected {FATBIN_MAGIC:#010x}")
    return header_size + size


def parse(data: bytes) -> list[Entry]:
    """The entries of one or more concatenated fat binary containers (payloads decompressed).

    Raises:
        FatbinError: bad magic, truncated header or payload, unknown compression, zstd failure.
    """
    entries: list[Entry] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < _HEADER.size:
            raise FatbinError(f"fat binary at offset {pos}: {len(data) - pos} trailing bytes, expected a "
                              f"{_HEADER.size}-byte header")
        magic, version, header_size, size = _HEADER.unpack_from(data, pos)
        if magic != FATBIN_MAGIC:
            raise FatbinError(f"fat binary at offset {pos}: magic {magic:#010x}, expected {FATBIN_MAGIC:#010x}")
        if version != 1 or header_size < _HEADER.size:
            raise FatbinError(f"fat binary at offset {pos}: version {version}, header size {header_size}; expected "
                              f"version 1 with a header of at least {_HEADER.size} bytes")
        start, end = pos + header_size, pos + header_size + size
        if end > len(data):
            raise FatbinError(f"fat binary at offset {pos}: says {size} bytes of entries, only {len(data) - start} "
                              "present (truncated)")
        entries += _entries(data, start, end)
        pos = end
    return entries


def _entries(data: bytes, pos: int, end: int) -> list[Entry]:
    out = []
    while pos < end:
        if end - pos < _ENTRY.size:
            raise FatbinError(f"fat binary entry at offset {pos}: {end - pos} bytes, expected a header of at least "
                              f"{_ENTRY.size}")
        (kind, _u, header_size, payload_size, compressed_size, _u2, _minor, _major, arch, _name_off, _name_size,
         flags, _u3, decompressed_size) = _ENTRY.unpack_from(data, pos)
        if kind not in (KIND_PTX, KIND_ELF, 4, 8, 16):  # 4/8/16: other payload kinds nvcc may add; skipped
            raise FatbinError(f"fat binary entry at offset {pos}: kind {kind}, expected 1 (PTX) or 2 (ELF)")
        if header_size < _ENTRY.size or pos + header_size + payload_size > end:
            raise FatbinError(f"fat binary entry at offset {pos}: header {header_size} + payload {payload_size} "
                              f"bytes run past the container's end ({end - pos} bytes left)")
        raw = data[pos + header_size: pos + header_size + payload_size]
        if kind == KIND_PTX:
            out.append(Entry(kind, arch, _decompress(raw, flags, compressed_size, decompressed_size, pos), flags))
        elif kind == KIND_ELF:  # SASS the virtual GPU cannot run: kept as stored (compressed if flags say so)
            out.append(Entry(kind, arch, raw, flags))
        pos += header_size + payload_size
    return out


def _decompress(raw: bytes, flags: int, compressed_size: int, decompressed_size: int, where: int) -> bytes:
    if flags & FLAG_ZSTD:
        if compressed_size > len(raw):
            raise FatbinError(f"fat binary entry at offset {where}: compressed size {compressed_size} exceeds the "
                              f"payload's {len(raw)} bytes")
        try:
            import zstandard
        except ImportError:  # pragma: no cover - a declared dependency
            raise FatbinError("fat binary entry is zstd-compressed and the `zstandard` package is not installed "
                              "(pip install zstandard)") from None
        try:
            out = zstandard.ZstdDecompressor().decompress(raw[:compressed_size],
                                                          max_output_size=max(decompressed_size, 1))
        except zstandard.ZstdError as e:
            raise FatbinError(f"fat binary entry at offset {where}: zstd decompression failed: {e}") from None
        if decompressed_size and len(out) != decompressed_size:
            raise FatbinError(f"fat binary entry at offset {where}: decompressed to {len(out)} bytes, header says "
                              f"{decompressed_size}")
        return out
    if flags & FLAG_LZ4:
        raise FatbinError(f"fat binary entry at offset {where} is LZ4-compressed (a CUDA 12-or-older nvcc); strata "
                          "reads zstd or uncompressed entries: rebuild with `strata nvcc`")
    return raw


def pick_ptx(entries: list[Entry], arch: int = 90) -> Entry:
    """The PTX entry to JIT for a device of compute capability `arch` (e.g. 90): the newest PTX not newer
    than the device.

    Raises:
        FatbinError: no PTX at all (a SASS-only build), or only PTX for newer architectures.
    """
    ptx = [e for e in entries if e.is_ptx]
    if not ptx:
        sass = sorted({f"sm_{e.arch}" for e in entries if e.kind == KIND_ELF})
        raise FatbinError(f"the program's fat binary carries no PTX, only SASS for {', '.join(sass) or 'nothing'}; "
                          f"the virtual GPU runs PTX: rebuild with `strata nvcc` (it adds "
                          f"-gencode arch=compute_{arch},code=compute_{arch})")
    usable = [e for e in ptx if e.arch <= arch]
    if not usable:
        raise FatbinError(f"the fat binary's PTX is for {sorted(f'compute_{e.arch}' for e in ptx)}, newer than the "
                          f"device (compute_{arch}); rebuild with `strata nvcc`")
    return max(usable, key=lambda e: e.arch)


def container(entries: list[Entry]) -> bytes:
    """Build an uncompressed fat binary holding `entries` (for tests and tools)."""
    body = bytearray()
    for e in entries:
        payload = e.payload + b"\0" * (-len(e.payload) % 8)
        head = _ENTRY.pack(e.kind, 0x0101, 0x50, len(payload), len(e.payload), 0, 0, 0, e.arch, 0, 0, 0, 0,
                           len(e.payload))
        body += head + bytes(0x50 - len(head)) + payload
    return _HEADER.pack(FATBIN_MAGIC, 1, 16, len(body)) + bytes(body)
