"""Clang offload bundles: the container clang embeds in a HIP program's `.hip_fatbin` section, holding one
code object per offload target beside an empty host entry.

Layout (uncompressed, little-endian): the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a u64 entry count, then per
entry a u64 offset, a u64 size, a u64 id length and the id (`hipv4-amdgcn-amd-amdhsa--gfx942`, with target
features after colons when given, `host-x86_64-unknown-linux--` for the host); the entries' bytes follow at
their offsets. The program's `.hipFatBinSegment` holds a 24-byte wrapper pointing at it (magic "HIPF",
version 1), which is what `__hipRegisterFatBinary` receives.
"""

from __future__ import annotations

import struct

from strata.errors import CudaError

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
HOST_ID = "host-x86_64-unknown-linux--"
_ALIGN = 4096  # clang-offload-bundler places entries at page offsets; so do we


def device_id(arch: str) -> str:
    """The bundle entry id of a HIP code object for `arch` (e.g. gfx942 or gfx942:sramecc+:xnack-)."""
    return f"hipv4-amdgcn-amd-amdhsa--{arch}"


def build(code_objects: dict[str, bytes]) -> bytes:
    """An offload bundle holding `code_objects` (target id -> code object) after an empty host entry, as
    clang-offload-bundler writes it (so a host compile can embed it with `-fcuda-include-gpubinary`)."""
    entries = [(HOST_ID, b""), *((device_id(a), co) for a, co in code_objects.items())]
    head = len(MAGIC) + 8 + sum(24 + len(i) for i, _ in entries)
    offset = -(-head // _ALIGN) * _ALIGN
    out = bytearray(MAGIC + struct.pack("<Q", len(entries)))
    data = bytearray()
    for ident, blob in entries:
        out += struct.pack("<QQQ", offset + len(data), len(blob), len(ident)) + ident.encode()
        data += blob
    return bytes(out) + bytes(offset - len(out)) + bytes(data)


def parse(data: bytes) -> dict[str, bytes]:
    """The entries of an offload bundle: id -> bytes.

    Raises:
        CudaError: cudaErrorInvalidKernelImage (hipErrorInvalidImage) for a truncated or malformed bundle,
            a compressed one (clang's `--offload-compress`) or no bundle at all.
    """
    if data[:4] == COMPRESSED_MAGIC:
        raise CudaError("cudaErrorInvalidKernelImage", "[hip bundle] a compressed offload bundle (--offload-compress) "
                        "is not supported by strata; rebuild without it (strata hipcc never compresses)")
    if data[:len(MAGIC)] != MAGIC:
        raise CudaError("cudaErrorInvalidKernelImage", f"[hip bundle] expected the magic {MAGIC.decode()!r} at the "
                        f"start of the program's device code, found {bytes(data[:24])!r}")
    try:
        (count,) = struct.unpack_from("<Q", data, len(MAGIC))
        pos, entries = len(MAGIC) + 8, {}
        for i in range(count):
            offset, size, n = struct.unpack_from("<QQQ", data, pos)
            ident = bytes(data[pos + 24: pos + 24 + n]).decode()
            pos += 24 + n
            if offset + size > len(data) or len(ident) != n:
                raise CudaError("cudaErrorInvalidKernelImage", f"[hip bundle] entry {i} ({ident!r}) at {offset}+{size} "
                                f"lies outside the {len(data)}-byte bundle")
            entries[ident] = bytes(data[offset: offset + size])
    except (struct.error, UnicodeDecodeError) as e:
        raise CudaError("cudaErrorInvalidKernelImage", f"[hip bundle] truncated or malformed header: {e}") from None
    return entries


def pick(entries: dict[str, bytes], arch: str) -> bytes:
    """The code object for the device's `arch` (gfx942): an entry whose target's processor matches, with any
    target features.

    Raises:
        CudaError: cudaErrorNoKernelImageForDevice (hipErrorNoBinaryForGpu) naming the targets present.
    """
    for ident, blob in entries.items():
        if ident.startswith("hip") and ident.rsplit("--", 1)[-1].split(":")[0] == arch and blob:
            return blob
    targets = [i.rsplit("--", 1)[-1] for i in entries if i.startswith("hip")]
    raise CudaError("cudaErrorNoKernelImageForDevice", f"[hip bundle] the program has device code for "
                    f"{targets or 'no AMD target'}, none for {arch}; rebuild with strata hipcc --offload-arch={arch}")
