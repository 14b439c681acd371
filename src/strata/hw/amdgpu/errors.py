"""Typed errors of the CDNA virtual GPU (code object loading, decoding)."""

from __future__ import annotations

from strata.errors import UnsupportedInstruction


class CodeObjectError(ValueError):
    """A malformed or unsupported AMDGPU code object (ELF, metadata note or kernel descriptor).

    The message says what was wrong, where (offset, section, kernel) and what was expected."""


class UnsupportedAmdInstruction(UnsupportedInstruction):
    """A machine instruction the CDNA virtual GPU cannot decode or execute, found at load time.

    `.opcode` is its disassembly (or raw encoding), `.kernel` the kernel and `.offset` its byte offset."""

    def __init__(self, disassembly: str, kernel: str = "", offset: int = 0) -> None:
        self.offset = offset
        super().__init__(disassembly, kernel, 0)
        self.args = (f"the virtual CDNA GPU does not implement instruction '{disassembly}'"
                     + (f" (in {kernel} at offset {offset:#x})" if kernel else ""),)

    def __str__(self) -> str:
        return str(self.args[0])
