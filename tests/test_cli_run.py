"""`strata run program.py`: a host program written against strata.cuda runs from the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROGRAM = """
import sys
import numpy as np
import strata.cuda as cuda
m = cuda.compile('extern "C" __global__ void k(float* x, int off) { x[threadIdx.x + off] *= 2; }')
x = cuda.to_device(np.arange(4, dtype=np.float32))
off = int(sys.argv[1])
m.get_function("k")(1, 4, (x, np.int32(off)))
if off == 0:
    print(cuda.current_device().name, cuda.device_count(), x.get().tolist())
sys.exit(int(sys.argv[2]))
"""


def strata_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", *args[:-2], str(prog), *args[-2:]],
                          capture_output=True, text=True, timeout=180)


def test_runs_the_program_on_the_chosen_gpu(tmp_path: Path) -> None:
    out = strata_run(tmp_path, "--gpu", "h100", "--devices", "2xh100", "0", "0")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "NVIDIA H100 80GB HBM3 (SXM5) 2 [0.0, 2.0, 4.0, 6.0]"


def test_exit_status_and_unsynchronized_faults_are_reported(tmp_path: Path) -> None:
    assert strata_run(tmp_path, "0", "3").returncode == 3
    out = strata_run(tmp_path, "1000000", "0")  # the kernel writes far out of bounds; the program never syncs
    assert out.returncode != 0 and "cudaErrorIllegalAddress" in out.stderr


def test_missing_program(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "strata.cli", "run", str(tmp_path / "nope.py")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such file" in out.stderr
