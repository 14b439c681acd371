"""The GFX9 decoder, instruction by instruction against llvm-objdump-19's disassembly of the checked-in
code objects (the listings in *.s were made by `llvm-objdump-19 -d --mcpu=gfx942`; when llvm-objdump-19
is installed the test also disassembles afresh)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from strata.hw.amdgpu.codeobject import parse
from strata.hw.amdgpu.decoder import decode, decode_one
from strata.hw.amdgpu.errors import UnsupportedAmdInstruction
from strata.hw.amdgpu.executor import load_program

HERE = Path(__file__).parent
KERNELS = sorted(p.stem for p in HERE.glob("*.co")) + sorted(f"gfx90a/{p.stem}" for p in HERE.glob("gfx90a/*.co")) + \
    sorted(f"d16/{p.stem}" for p in HERE.glob("d16/*.co"))


def mcpu(name: str) -> str:
    return "gfx90a" if name.startswith("gfx90a/") else "gfx942"


def listing(text: str) -> dict[int, str]:
    out = {}
    for line in text.splitlines():
        addr, _, ins = line.partition(" ")
        out[int(addr, 16)] = ins.strip()
    return out


def check(name: str, expected: dict[int, str]) -> int:
    co = parse((HERE / f"{name}.co").read_bytes())
    assert co.processor == mcpu(name)
    n = 0
    for k in co.kernels.values():
        for ins in decode(k.code, k.name, co.processor):
            assert ins.text == expected[k.code_offset + ins.offset], (k.name, hex(ins.offset))
            n += 1
    return n


@pytest.mark.parametrize("name", KERNELS)
def test_decoder_matches_checked_in_objdump_listing(name: str) -> None:
    assert check(name, listing((HERE / f"{name}.s").read_text())) > 20


@pytest.mark.skipif(shutil.which("llvm-objdump-19") is None, reason="llvm-objdump-19 not installed (make amd)")
@pytest.mark.parametrize("name", KERNELS)
def test_decoder_matches_live_objdump(name: str) -> None:
    out = subprocess.run(["llvm-objdump-19", "-d", f"--mcpu={mcpu(name)}", str(HERE / f"{name}.co")],
                         capture_output=True, text=True, check=True).stdout
    expected = {int(m.group(2), 16): m.group(1).strip()
                for m in (re.match(r"\t(.*?)\s*// ([0-9A-F]+):", ln) for ln in out.splitlines()) if m}
    assert check(name, expected) > 20


def test_literal_and_vop3_encodings() -> None:
    # s_and_b32 s3, s3, 0xffff: SOP2 with a trailing 32-bit literal
    ins = decode_one((0x8603FF03).to_bytes(4, "little") + (0xFFFF).to_bytes(4, "little"), 0)
    assert (ins.size, ins.text) == (8, "s_and_b32 s3, s3, 0xffff")
    # v_fma_f32 v9, v3, s17, -v8 (VOP3 with a negated source)
    raw = (0xD1CB0009).to_bytes(4, "little") + (0x84202303).to_bytes(4, "little")
    assert decode_one(raw, 0).text == "v_fma_f32 v9, v3, s17, -v8"


def test_unknown_encoding_is_unsupported_at_decode() -> None:
    with pytest.raises(UnsupportedAmdInstruction, match="opcode 127"):
        decode((0xBFFF0000).to_bytes(4, "little"), "k")  # SOPP opcode 127 does not exist


def test_unimplemented_instruction_is_rejected_at_load_with_its_disassembly() -> None:
    k = parse((HERE / "saxpy.co").read_bytes()).kernels["saxpy"]
    # replace the first instruction with v_sin_f16_e32 v0, v2: real gfx942 code the engine does not execute
    bad = (0x7E009302).to_bytes(4, "little")
    text = decode_one(bad, 0).text
    assert text == "v_sin_f16_e32 v0, v2"
    k.code = bad + k.code[4:]
    with pytest.raises(UnsupportedAmdInstruction) as e:
        load_program(k)
    assert text in str(e.value) and "saxpy" in str(e.value)
