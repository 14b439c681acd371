"""AMDGPU code objects (ELF64, code object v5): what ROCr's loader reads from one.

Source of truth for how strata parses a code object: the ELF header (EM_AMDGPU, OS/ABI AMDGPU_HSA), the
program's loadable bytes, the dynamic symbols (`k` the code, `k.kd` the 64-byte kernel descriptor),
and the NT_AMDGPU_METADATA note (msgpack: kernels, their arguments at offsets with value kinds
including the hidden ones, kernarg size, LDS, register counts). Anything malformed raises
CodeObjectError with what, where and what was expected.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from strata.hw.amdgpu.errors import CodeObjectError
from strata.hw.amdgpu.lines import LineTable, parse_line_table
from strata.hw.amdgpu.msgpack import unpack

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
NT_AMDGPU_METADATA = 32
# e_flags machine field (EF_AMDGPU_MACH) -> processor
MACHINES = {0x4C: "gfx942", 0x3F: "gfx90a", 0x4B: "gfx941", 0x40: "gfx940"}


@dataclass(frozen=True)
class KernelArg:
    """One kernel argument from the metadata: `.offset`, `.size`, `.value_kind` (e.g. by_value,
    global_buffer, hidden_block_count_x), and the source name when given."""

    offset: int
    size: int
    value_kind: str
    name: str = ""


@dataclass(frozen=True)
class KernelDescriptor:
    """The 64-byte kernel descriptor (amd_kernel_code_t's successor) the dispatch packet points at."""

    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    entry_offset: int  # kernel_code_entry_byte_offset, relative to the descriptor
    rsrc3: int
    rsrc1: int
    rsrc2: int
    properties: int  # kernel_code_properties
    kernarg_preload: int

    @classmethod
    def parse(cls, raw: bytes, where: str) -> KernelDescriptor:
        if len(raw) != 64:
            raise CodeObjectError(f"{where}: kernel descriptor is {len(raw)} bytes, expected 64")
        g, p, k = struct.unpack_from("<III", raw, 0)
        entry = struct.unpack_from("<q", raw, 16)[0]
        rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", raw, 44)
        props, preload = struct.unpack_from("<HH", raw, 56)
        return cls(g, p, k, entry, rsrc3, rsrc1, rsrc2, props, preload)

    # -- what the command processor initializes (AMDGPUUsage "Initial Kernel Execution State")
    @property
    def user_sgpr_count(self) -> int:
        return (self.rsrc2 >> 1) & 0x1F

    @property
    def workgroup_id_enabled(self) -> tuple[bool, bool, bool]:
        return bool(self.rsrc2 >> 7 & 1), bool(self.rsrc2 >> 8 & 1), bool(self.rsrc2 >> 9 & 1)

    @property
    def workitem_id_dims(self) -> int:
        """VGPR_WORKITEM_ID: 0 = x only, 1 = x,y, 2 = x,y,z (packed in v0 on gfx90a+)."""
        return self.rsrc2 >> 11 & 3

    @property
    def wave32(self) -> bool:
        return bool(self.properties >> 10 & 1)

    @property
    def vgpr_granules(self) -> int:
        return (self.rsrc1 & 0x3F) + 1

    @property
    def accum_offset(self) -> int:
        """gfx90a+ (unified VGPR file): the first AGPR's index among the wave's VGPRs (rsrc3 ACCUM_OFFSET,
        in units of 4). a[i] is v[accum_offset + i]."""
        return ((self.rsrc3 & 0x3F) + 1) * 4

    @property
    def float_denorm_mode_32(self) -> int:
        return self.rsrc1 >> 16 & 3

    def user_sgprs(self) -> list[tuple[str, int]]:
        """The user SGPRs preloaded, in order, as (name, number of SGPRs)."""
        layout = [(0, "private_segment_buffer", 4), (1, "dispatch_ptr", 2), (2, "queue_ptr", 2),
                  (3, "kernarg_segment_ptr", 2), (4, "dispatch_id", 2), (5, "flat_scratch_init", 2),
                  (6, "private_segment_size", 1)]
        return [(name, n) for bit, name, n in layout if self.properties >> bit & 1]


@dataclass
class KernelInfo:
    """One kernel of a code object: metadata, descriptor and its machine code."""

    name: str
    symbol: str
    args: list[KernelArg]
    kernarg_segment_size: int
    kernarg_segment_align: int
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    sgpr_count: int
    vgpr_count: int
    agpr_count: int
    wavefront_size: int
    max_flat_workgroup_size: int
    descriptor: KernelDescriptor
    code_offset: int  # virtual address of the entry in the code object
    code: bytes  # the kernel's machine code (its symbol's extent)
    metadata: dict[str, Any] = field(default_factory=dict)
    lines: LineTable | None = None  # the code object's line table (-gline-tables-only), if any
    functions: list[tuple[str, int, bytes]] = field(default_factory=list)  # device functions: name, vaddr, code
    arch: str = "gfx942"  # the code object's processor (gfx942 or gfx90a): which decoder tables apply
    printf_formats: dict[int, str] = field(default_factory=dict)  # buffered printf: format hash -> format

    def source_line(self, offset: int) -> str | None:
        """'file:line' of the instruction at byte `offset` of this kernel's code, if the line table has it."""
        found = self.lines.lookup(self.code_offset + offset) if self.lines is not None else None
        return f"{found[0]}:{found[1]}" if found else None

    @property
    def explicit_args(self) -> list[KernelArg]:
        return [a for a in self.args if not a.value_kind.startswith("hidden_")]


@dataclass
class CodeObject:
    """A parsed code object: target, kernels by name, and the raw image."""

    image: bytes
    target: str  # e.g. "amdgcn-amd-amdhsa--gfx942"
    processor: str  # e.g. "gfx942"
    kernels: dict[str, KernelInfo]
    metadata: dict[str, Any]
    segments: list[tuple[int, int, int, int]] = field(default_factory=list)  # PT_LOAD: vaddr, offset, filesz, memsz
    variables: dict[str, tuple[int, int]] = field(default_factory=dict)  # global variable -> (vaddr, size)
    relocations: list[tuple[int, int, int, int]] = field(default_factory=list)  # (vaddr, type, symbol value, addend)

    def relocated(self, base: int) -> list[tuple[int, bytes]]:
        """The dynamic relocations as (vaddr, bytes) patches for an image loaded at device address `base`:
        R_AMDGPU_ABS32_LO/HI (1, 2), ABS64 (3) and RELATIVE64 (13), as ROCr's loader applies them.

        Raises:
            CodeObjectError: a relocation type the loader does not know."""
        out = []
        for where, rtype, sym, addend in self.relocations:
            if rtype == 13:
                value, size = base + addend, 8
            elif rtype == 3:
                value, size = base + sym + addend, 8
            elif rtype in (1, 2):
                full = base + sym + addend
                value, size = (full & 0xFFFFFFFF) if rtype == 1 else (full >> 32), 4
            else:
                raise CodeObjectError(f"relocation type {rtype} at {where:#x} is not supported (expected "
                                      "R_AMDGPU_ABS32_LO/HI, ABS64 or RELATIVE64)")
            out.append((where, (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")))
        return out

    @property
    def image_size(self) -> int:
        """Bytes of device memory the loaded image spans (its PT_LOAD segments, .bss included)."""
        return max((v + m for v, _, _, m in self.segments), default=len(self.image))


def _u(data: bytes, fmt: str, off: int, what: str) -> tuple[Any, ...]:
    if off < 0 or off + struct.calcsize(fmt) > len(data):
        raise CodeObjectError(f"{what}: offset {off:#x} is outside the {len(data)}-byte image")
    return struct.unpack_from(fmt, data, off)


def parse(image: bytes) -> CodeObject:
    """Parse an AMDGPU code object.

    Raises:
        CodeObjectError: not ELF64 little-endian, not EM_AMDGPU, no metadata note, a kernel without
            its descriptor or code, truncated tables; the message names the part and the offset.
    """
    data = bytes(image)
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise CodeObjectError(f"not an ELF file (first bytes {data[:4]!r}, expected b'\\x7fELF')")
    if data[4] != 2 or data[5] != 1:
        raise CodeObjectError(f"ELF class {data[4]} / data {data[5]}: expected ELF64 (2) little-endian (1)")
    osabi = data[7]
    e_type, e_machine = _u(data, "<HH", 16, "ELF header")
    if e_machine != EM_AMDGPU:
        raise CodeObjectError(f"ELF e_machine is {e_machine}, expected EM_AMDGPU ({EM_AMDGPU})")
    if osabi != ELFOSABI_AMDGPU_HSA:
        raise CodeObjectError(f"ELF OS/ABI is {osabi}, expected AMDGPU_HSA ({ELFOSABI_AMDGPU_HSA})")
    e_flags = _u(data, "<I", 48, "ELF header")[0]
    phoff = _u(data, "<Q", 32, "ELF header")[0]
    phentsize, phnum = _u(data, "<HH", 54, "ELF header")
    segments = []
    for i in range(phnum):
        ptype, _pflags, poff, pvaddr, _paddr, pfilesz, pmemsz, _palign = _u(data, "<IIQQQQQQ", phoff + i * phentsize,
                                                                            f"program header {i}")
        if ptype == 1:  # PT_LOAD
            if poff + pfilesz > len(data) or pmemsz < pfilesz:
                raise CodeObjectError(f"PT_LOAD segment {i} at {poff:#x}+{pfilesz} (memsz {pmemsz}) does not fit the "
                                      f"{len(data)}-byte image")
            segments.append((pvaddr, poff, pfilesz, pmemsz))
    shoff = _u(data, "<Q", 40, "ELF header")[0]
    shentsize, shnum, shstrndx = _u(data, "<HHH", 58, "ELF header")
    if shentsize != 64:
        raise CodeObjectError(f"section header entry size {shentsize}, expected 64")
    sections = []
    for i in range(shnum):
        name, stype, _flags, addr, off, size, link, _info, _align, entsize = _u(
            data, "<IIQQQQIIQQ", shoff + i * 64, f"section header {i}")
        if stype != 8 and off + size > len(data):  # 8 = NOBITS
            raise CodeObjectError(f"section {i} [{off:#x}, {off + size:#x}) runs past the end of the image "
                                  f"({len(data)} bytes)")
        sections.append((name, stype, addr, off, size, link, entsize))
    if not sections or shstrndx >= len(sections):
        raise CodeObjectError(f"section name table index {shstrndx} out of range ({len(sections)} sections)")

    def cstr(table_off: int, at: int) -> str:
        end = data.find(b"\0", table_off + at)
        if end < 0:
            raise CodeObjectError(f"unterminated string at {table_off + at:#x}")
        return data[table_off + at:end].decode("utf-8", "replace")

    metadata: dict[str, Any] | None = None
    for _name, stype, _addr, off, size, _link, _ent in sections:
        if stype == 7:  # NOTE
            metadata = _notes(data, off, size) or metadata
    if metadata is None:
        raise CodeObjectError("no NT_AMDGPU_METADATA note (owner 'AMDGPU', type 32): not a code object v3+")

    # symbols (.dynsym or .symtab): name -> (value, size)
    symbols: dict[str, tuple[int, int]] = {}
    objects: dict[str, tuple[int, int]] = {}
    funcs: dict[str, tuple[int, int]] = {}
    for _name, stype, _addr, off, size, link, ent in sections:
        if stype in (2, 11):  # SYMTAB, DYNSYM
            if ent != 24 or link >= len(sections):
                raise CodeObjectError(f"symbol table at {off:#x}: entry size {ent} (expected 24) or link {link}")
            stroff = sections[link][3]
            for k in range(size // 24):
                st_name, info, _other, _shndx, value, ssize = _u(data, "<IBBHQQ", off + k * 24, "symbol table")
                if st_name:
                    sym_name = cstr(stroff, st_name)
                    symbols.setdefault(sym_name, (value, ssize))
                    if info & 0xF == 1 and not sym_name.endswith(".kd") and not sym_name.startswith("__hip_cuid"):
                        objects.setdefault(sym_name, (value, ssize))  # STT_OBJECT: a __device__/__constant__
                    elif info & 0xF == 2 and ssize:
                        funcs.setdefault(sym_name, (value, ssize))  # STT_FUNC: kernels and device functions

    def bytes_at(vaddr: int, n: int, what: str) -> bytes:
        for _name, stype, addr, off, size, _link, _ent in sections:
            if stype != 8 and addr and addr <= vaddr and vaddr + n <= addr + size:
                return data[off + vaddr - addr: off + vaddr - addr + n]
        raise CodeObjectError(f"{what}: address {vaddr:#x}+{n} is in no section of the code object")

    target = str(metadata.get("amdhsa.target", ""))
    # "amdgcn-amd-amdhsa--gfx942:sramecc-:xnack+": features may end in '-', so cut them off first
    processor = target.split(":")[0].rsplit("-", 1)[-1] if target else MACHINES.get(e_flags & 0xFF, "")
    kernels: dict[str, KernelInfo] = {}
    raw_kernels = metadata.get("amdhsa.kernels")
    if not isinstance(raw_kernels, list):
        raise CodeObjectError("metadata: 'amdhsa.kernels' is missing or not a list")
    names = {cstr(sections[shstrndx][3], sec[0]): sec for sec in sections}

    def section(name: str) -> bytes:
        sec = names.get(name)
        return data[sec[3]:sec[3] + sec[4]] if sec is not None and sec[1] != 8 else b""

    lines = parse_line_table(section(".debug_line"), section(".debug_line_str"), section(".debug_str")) \
        if ".debug_line" in names else None
    formats = printf_formats(metadata.get("amdhsa.printf"))
    for i, k in enumerate(raw_kernels):
        kernels_entry = _kernel(k, i, symbols, bytes_at)
        kernels_entry.lines = lines
        kernels_entry.printf_formats = formats
        kernels_entry.arch = processor or "gfx942"
        kernels[kernels_entry.name] = kernels_entry
    entries = {k.code_offset for k in kernels.values()}
    callable_code = [(n, v, bytes_at(v, size, f"code of {n}"))
                     for n, (v, size) in sorted(funcs.items(), key=lambda x: x[1]) if v not in entries]
    for kinfo in kernels.values():
        kinfo.functions = callable_code
    relocations = []
    for _name, stype, _addr, off, size, link, ent in sections:
        if stype == 4 and ent == 24:  # SHT_RELA (.rela.dyn): the loader patches these with the load address
            dynsym = sections[link] if link < len(sections) else None
            for k in range(size // 24):
                r_offset, r_info, r_addend = _u(data, "<QQq", off + k * 24, "relocation")
                sym_value = 0
                if r_info >> 32 and dynsym is not None:
                    sym_value = _u(data, "<Q", dynsym[3] + (r_info >> 32) * 24 + 8, "relocation symbol")[0]
                relocations.append((r_offset, r_info & 0xFFFFFFFF, sym_value, r_addend))
    return CodeObject(data, target, processor, kernels, metadata, segments, objects, relocations)


def printf_formats(entries: Any) -> dict[int, str]:
    """The `amdhsa.printf` metadata of buffered printf (clang's -mprintf-kind=buffered): entries
    "0:0:<hash in hex>,<format>", where the hash is the low 64 bits of the format's MD5, which each printf
    record in the buffer carries instead of the text. Malformed entries raise CodeObjectError."""
    out: dict[int, str] = {}
    for e in entries or []:
        head, sep, fmt = str(e).partition(",")
        parts = head.split(":")
        try:
            key = int(parts[2], 16) if sep and len(parts) == 3 else None
        except ValueError:
            key = None
        if key is None:
            raise CodeObjectError(f"metadata: amdhsa.printf entry {str(e)[:60]!r} is not '0:0:<hash>,<format>'")
        out[key] = fmt
    return out


def _notes(data: bytes, off: int, size: int) -> dict[str, Any] | None:
    at, end = off, off + size
    while at + 12 <= end:
        namesz, descsz, ntype = _u(data, "<III", at, "note")
        name_at = at + 12
        desc_at = name_at + (-(-namesz // 4) * 4)
        nxt = desc_at + (-(-descsz // 4) * 4)
        if desc_at + descsz > end:
            raise CodeObjectError(f"note at {at:#x}: descriptor of {descsz} bytes runs past its section")
        owner = data[name_at:name_at + namesz].rstrip(b"\0")
        if owner == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
            meta = unpack(data[desc_at:desc_at + descsz])
            if not isinstance(meta, dict):
                raise CodeObjectError(f"note at {at:#x}: metadata is a {type(meta).__name__}, expected a map")
            return meta
        at = nxt
    return None


def _kernel(k: Any, i: int, symbols: dict[str, tuple[int, int]], bytes_at: Any) -> KernelInfo:
    if not isinstance(k, dict):
        raise CodeObjectError(f"metadata: amdhsa.kernels[{i}] is not a map")

    def need(key: str, typ: type | tuple[type, ...] = int) -> Any:
        v = k.get(key)
        if not isinstance(v, typ):
            raise CodeObjectError(f"metadata: kernel {k.get('.name', i)!r} lacks {key!r} "
                                  f"(expected {getattr(typ, '__name__', typ)}, got {v!r})")
        return v

    name = need(".name", str)
    symbol = need(".symbol", str)
    args = []
    for j, a in enumerate(k.get(".args", []) or []):
        if not isinstance(a, dict) or not isinstance(a.get(".offset"), int) or not isinstance(a.get(".size"), int):
            raise CodeObjectError(f"metadata: kernel {name!r} argument {j} lacks .offset/.size")
        args.append(KernelArg(a[".offset"], a[".size"], str(a.get(".value_kind", "")), str(a.get(".name", ""))))
    kernarg_size = need(".kernarg_segment_size")
    for a in args:
        if a.offset + a.size > kernarg_size:
            raise CodeObjectError(f"metadata: kernel {name!r} argument {a.name or a.value_kind} at {a.offset}+{a.size} "
                                  f"lies outside the {kernarg_size}-byte kernarg segment")
    if symbol not in symbols:
        raise CodeObjectError(f"kernel {name!r}: no symbol {symbol!r} (its kernel descriptor)")
    kd_addr, _ = symbols[symbol]
    kd = KernelDescriptor.parse(bytes_at(kd_addr, 64, f"kernel descriptor {symbol}"), f"kernel {name!r}")
    entry = kd_addr + kd.entry_offset
    code_sym = symbols.get(symbol[:-3] if symbol.endswith(".kd") else name)
    code_size = code_sym[1] if code_sym and code_sym[0] == entry and code_sym[1] else 0
    if code_size <= 0:
        raise CodeObjectError(f"kernel {name!r}: no code symbol at the descriptor's entry {entry:#x}")
    code = bytes_at(entry, code_size, f"code of {name}")
    if kd.wave32:
        raise CodeObjectError(f"kernel {name!r} is compiled for wave32; the CDNA virtual GPU runs wave64 only")
    return KernelInfo(
        name=name, symbol=symbol, args=args, kernarg_segment_size=kernarg_size,
        kernarg_segment_align=int(k.get(".kernarg_segment_align", 8)),
        group_segment_fixed_size=need(".group_segment_fixed_size"),
        private_segment_fixed_size=need(".private_segment_fixed_size"),
        sgpr_count=need(".sgpr_count"), vgpr_count=need(".vgpr_count"), agpr_count=int(k.get(".agpr_count", 0)),
        wavefront_size=need(".wavefront_size"), max_flat_workgroup_size=need(".max_flat_workgroup_size"),
        descriptor=kd, code_offset=entry, code=code, metadata=k)
