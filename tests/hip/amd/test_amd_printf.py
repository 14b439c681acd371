"""Device printf in HIP kernels on the CDNA engine: clang's buffered printf writes records to the hidden
printf buffer; the host formats them after the kernel with the code object's `amdhsa.printf` formats and
writes them to stdout, as the PTX engine's printf does. The expected text is Python's own %-formatting of
the same values (printf semantics)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hw.amdgpu.printf import format_records

HERE = Path(__file__).parent
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 is not installed (make amd)")


@needs_clang
def test_printf_ints_floats_strings(capsys: pytest.CaptureFixture[str]) -> None:
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        mod = hip.compile((HERE / "printf.hip").read_text())
        name = hip.to_device(np.frombuffer(b"device-string\0", np.uint8))
        n, x, y, big = 70, np.float32(1.25), 3.5, -(1 << 40)
        mod.get_function("show")(2, 64, (np.int32(n), x, np.float64(y), name, np.int64(big)))
        cuda.synchronize()
    finally:
        cuda.set_device(before)
    lines = capsys.readouterr().out.split("\n")[:-1]
    want = [f"lane {i} of {n}: {float(np.float32(x * np.float32(i))):f} {y / (i + 1):.3e} {i / 4:g} [{-i:5d}] "
            f"[{'ab':<4s}] {chr(65 + i % 26)} {255 + i:x} {big - i} device-string {i:3d} %" for i in range(n)]
    assert sorted(lines) == sorted([*want, "done"])  # lanes print in no particular order on a GPU


def _record(fmt_id: int | None, payload: bytes, stream: int = 0) -> bytes:
    body = (struct.pack("<Q", fmt_id) if fmt_id is not None else b"") + payload
    return struct.pack("<I", (4 + len(body)) << 2 | (2 if fmt_id is not None else 0) | stream) + body


def test_format_records_layout() -> None:
    """The record layout clang emits: control dword, format id (or inline format), 8-byte arguments and
    inline strings padded to 8; a record cut off by the buffer's end ends the output."""
    formats = {0xABC: "%hhd %hd %d %s|%u\n"}
    args = struct.pack("<QQQ", 0xFF, 0xFFFF, 0xFFFFFFFF) + b"hi\0\0\0\0\0\0" + struct.pack("<Q", 0xFFFFFFFF)
    inline = b"x=%ld\n\0\0" + struct.pack("<q", -5)
    raw = _record(0xABC, args) + _record(None, inline, stream=1) + _record(0xDEF, b"")
    raw += _record(0xABC, args)[:-8]  # cut off
    assert format_records(raw, formats) == [(0, "-1 -1 -1 hi|4294967295\n"), (1, "x=-5\n"),
                                            (0, "<printf format def is not in the code object's metadata>\n")]


_NO_CC = not any(shutil.which(c) for c in ("cc", "gcc", "clang"))


@needs_clang
@pytest.mark.skipif(_NO_CC, reason="no C compiler to build strata's libamdhip64 (apt-get install gcc)")
def test_hip_program_device_printf_reaches_its_stdout() -> None:
    """`strata run` of a HIP program on an MI300X: the kernel's printf text arrives on the program's stdout,
    after what the host printed before the launch and before what it prints after synchronizing."""
    env = {k: v for k, v in os.environ.items() if k not in ("STRATA_GPU", "STRATA_DEVICES", "STRATA_CUDART_FDS")}
    r = subprocess.run([sys.executable, "-c", "import sys; from strata.cli import main; sys.exit(main(sys.argv[1:]))",
                        "run", "--gpu", "mi300x", str(HERE / "printf_program.hip")], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["host before", "dev 3 0", "dev 3 1", "host after"]
