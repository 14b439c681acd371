"""The main job, `strata demo`: `C = matmul(A, B)` of two random 1024 x 1024 float32 matrices on a virtual
H200, as PyTorch would write it, recorded on the way down: the walk of each call through the layers (with
CUDA's and ROCm's names for each step), C checked against NumPy, where the time went per layer (host wall,
the engine threads' emulation, the modeled device time), the GEMM kernel down to the instructions it
ran, and the HTML report and Perfetto trace.

With `--gpu mi300x` the same program runs as PyTorch on ROCm does: `device="cuda"` is the HIP device,
the GEMM is rocBLAS's role (gfx942 machine code from clang-19, on the matrix cores: `v_mfma`), and the
walk ends at the MFMA and `v_fmac` instructions the 64-lane wavefronts executed.

Example:
    >>> import io, contextlib, tempfile
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = main(size=64, out_dir=tempfile.mkdtemp())
    >>> status, "C matches NumPy" in out.getvalue()
    (0, True)
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

import strata
import strata.cuda as cuda
from strata import trace
from strata.libs.common import launched_kernel
from strata.trace.summary import format_layer_times, layer_times
from strata.trace_run import ceilings

# float32 GEMM against a float64 reference: each of the K products and sums rounds once; relative to
# max|C| the error stays far below 1e-5 for K <= 4096 (observed ~1e-7 at K = 1024)
TOLERANCE = 1e-5


def main(gpu: str | None = None, size: int = 1024, out_dir: str | Path = "strata-demo") -> int:
    """Run the demo on device model `gpu` (default: the configured device 0, an H200); returns a process
    exit code (0 when C matches NumPy)."""
    previous = cuda.current_device()
    if gpu:
        cuda.set_device(gpu)
    try:
        return _run(gpu, size, Path(out_dir))
    finally:
        cuda.set_device(previous)


def _run(gpu: str | None, size: int, out: Path) -> int:
    dev = cuda.current_device()
    print(f"strata demo: C = matmul(A, B), {size} x {size} float32, on a virtual {dev.name} "
          f"({dev.multiProcessorCount} {'CUs' if 'AMD' in dev.name else 'SMs'}, "
          f"{dev.totalGlobalMem / 2**30:.0f} GiB HBM).")
    amd = dev.spec.vendor == "amd"
    if amd:
        print(f"PyTorch on ROCm: device=\"cuda\" is the HIP device; strata.version.hip = {strata.version.hip}, "
              f"strata.version.cuda = {strata.version.cuda}.")
    print("Times marked 'modeled' come from strata's timing model (docs/perf-model.md), not from a GPU.\n")
    print("    A = strata.randn(n, n, device=\"cuda\")\n    B = strata.randn(n, n, device=\"cuda\")\n"
          "    C = strata.matmul(A, B)\n")
    strata.manual_seed(0)
    t0 = time.perf_counter()
    with trace.record() as rec:
        A = strata.randn(size, size, device="cuda")
        B = strata.randn(size, size, device="cuda")
        C = strata.matmul(A, B)
        got = C.cpu().numpy()  # reading C waits for the GEMM: the walk ends with the copy back
        cuda.synchronize()
    wall = time.perf_counter() - t0
    print("The walk: each call down the layers, with its CUDA and ROCm counterparts")
    print(rec.walk())

    ref = A.cpu().numpy().astype(np.float64) @ B.cpu().numpy().astype(np.float64)
    err = float(np.abs(got - ref).max() / np.abs(ref).max())
    ok = err < TOLERANCE
    print(f"\nC matches NumPy (float64 A @ B): max error {err:.1e} relative to max|C|" if ok else
          f"\nC DOES NOT MATCH NumPy: max error {err:.1e} relative to max|C| (tolerance {TOLERANCE:g})")

    matmul = {e.correlation for e in rec.events if e.name == "aten::matmul"}
    gemm = next((e for e in rec.events if e.layer == "L0" and e.name == "kernel" and e.correlation in matmul), None)
    print(f"\nWhere the time went ({wall:.1f} s wall in all)")
    print(format_layer_times(layer_times(rec)))
    print("  host wall: each layer's own code on the calling thread, (waiting) the part of it blocked on the "
          "device;\n  engine wall: the device's engine threads emulating the work; device: the modeled time of "
          "the kernels and copies.")
    if gemm is not None:
        a = gemm.args
        print(f"  the GEMM kernel: {a.get('bound')}-bound, occupancy {a.get('occupancy', 0):.0%}, "
              f"{a.get('flops_per_s', 0) / 1e12:.1f} TFLOP/s, {a.get('bytes_per_s', 0) / 1e9:.0f} GB/s "
              f"on the modeled {dev.name}  [modeled]")

    if gemm is not None:
        _instructions(rec, gemm, amd)

    out.mkdir(parents=True, exist_ok=True)
    roof = ceilings(gpu)
    rec.save_perfetto(out / "trace.json", roof["name"])
    rec.save_html(out / "report.html", roof, title=f"strata demo: matmul {size}x{size} on {dev.name}")
    print(f"\nWrote {out / 'report.html'} (open it in a browser) and {out / 'trace.json'} "
          "(ui.perfetto.dev or chrome://tracing).")
    return 0 if ok else 1


# the instructions worth showing: matrix-core and fused multiply-add ones
_MATH = ("v_mfma", "v_fmac", "v_fma_", "v_pk_fma", "fma.", "mma.", "wmma.")


def _instructions(rec: trace.Recording, gemm: trace.Event, amd: bool) -> None:
    """The GEMM kernel down to its instructions: what the wavefronts (warps) executed, from the L0
    execute event's counters, and the matrix-core / FMA instructions of its code."""
    name = gemm.args.get("kernel", "")
    found = launched_kernel(name)
    execute = next((e for e in rec.events if e.layer == "L0" and e.name == "execute" and
                    e.args.get("kernel") == name), None)
    if found is None or execute is None:
        return
    kernel, device = found
    code = kernel.machine_code(device)
    a = execute.args
    if amd:
        print(f"\nThe GEMM kernel down to the instructions: {kernel.name} (rocBLAS's role), gfx942 machine code, "
              f"{len(code)} instructions in its code object")
        print(f"  executed by {a.get('waves', 0):,} wavefronts of {a.get('wavefront_size', 64)} lanes: "
              + ", ".join(f"{a[k]:,} {k.upper()}" for k in ("mfma", "valu", "salu", "lds", "vmem", "smem", "branch")
                          if a.get(k)) + f" wave-instructions; EXEC efficiency {a.get('exec_efficiency', 0):.0%}")
        mfma = next((t.split()[0] for t in code if t.startswith("v_mfma")), None)
        shape = re.search(r"_(\d+)x(\d+)x(\d+)", mfma or "")
        if mfma and shape and a.get("mfma"):
            m, n, k = (int(x) for x in shape.groups())
            print(f"  each {mfma} is a {m}x{n}x{k} matrix multiply-accumulate on one wavefront: "
                  f"{a['mfma']:,} of them are {a['mfma'] * m * n * k:,} multiply-adds")
    else:
        print(f"\nThe GEMM kernel down to the instructions: {kernel.name} (cuBLAS's role), PTX, {len(code)} "
              f"instructions; {a.get('thread_instructions', 0):,} executed by {a.get('threads', 0):,} threads "
              "in 32-lane warps")
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for t in code:
        op = t.split()[0]
        if op.startswith(_MATH):
            counts[op] = counts.get(op, 0) + 1
            first.setdefault(op, t)
    if counts:
        print("  its matrix-core and fused multiply-add instructions (times in the code: the first of them)")
        for op, c in sorted(counts.items(), key=lambda kv: -kv[1]):
            print(f"    {c:5d} x  {first[op]}")
