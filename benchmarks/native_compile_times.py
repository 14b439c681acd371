# First-launch compile time of the native executor's kernels, one row per framework kernel (issue 17: <= 200 ms per
# kernel, reported). Step 1 collects the kernels the char transformer's training step launches (plus a few more
# framework ops: matmul, reductions, softmax, a transposed copy) by running them once on the native executor and
# recording each (module PTX, kernel) the executor compiles; `--save FILE` keeps that list, `--load FILE` reuses it.
# Step 2 compiles each from an empty object cache, timing the IR generation (Python: codegen.KernelCodegen.build)
# and LLVM (parse, passes, object emission: compiler.compile_ir) apart, in CPU time of this process (the machine's
# other load changes wall time more than CPU time), at -O0 (the first tier, the default here) or -O3 (`--opt 3`, what a
# hot kernel is recompiled to in the background). The runtime library every kernel links is built first, untimed.
# Not part of run_all.py: a diagnostic for work on hw/native's code generator.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/native_compile_times.py [--save F | --load F] [--only SUBSTRING]
#                                                                       [--opt 0|3]

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def collect() -> list[dict[str, Any]]:
    """(PTX text, kernel, module variable addresses) of every kernel the native executor compiles in the workload."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_framework
    from harness import executor

    from strata.hw.native import executor as native

    seen: dict[tuple[str, str], dict[str, Any]] = {}
    real = native._compile

    def record(program: Any, kernel: str, *args: Any) -> Any:
        seen.setdefault((program.module.text, kernel), {"ptx": program.module.text, "kernel": kernel,
                                                        "globals": dict(program.global_addresses)})
        return real(program, kernel, *args)

    native._compile = record  # type: ignore[assignment]
    try:
        with executor("native"):
            bench_framework.run_transformer(steps=1, batch_size=4)
            import strata

            rng = np.random.default_rng(0)
            a = strata.tensor(rng.random((37, 53), dtype=np.float32), device="cuda")
            b = strata.tensor(rng.random((53, 29), dtype=np.float32), device="cuda")
            for op in (lambda: a @ b, lambda: a.sum(), lambda: a.t().contiguous(), lambda: a.max(dim=1),
                       lambda: a.softmax(dim=-1), lambda: (a * 2 + 1).exp(), lambda: a.mean(dim=0)):
                op()
            strata.cuda.synchronize()
    finally:
        native._compile = real  # type: ignore[assignment]
    return list(seen.values())


def measure(kernels: list[dict[str, Any]], only: str | None, opt: int = 0) -> list[tuple[str, float, float, int]]:
    """(kernel, IR generation s, LLVM s, IR characters) per kernel, each compiled from scratch."""
    from strata.hw.jit import Program
    from strata.hw.native import codegen, runtime
    from strata.hw.native.compiler import compile_ir
    from strata.hw.ptx.parser import parse

    runtime.runtime_object()  # (built once per process: not a kernel's cost)
    rows = []
    for k in kernels:
        if only and only not in k["kernel"]:
            continue
        program = Program(parse(k["ptx"]), k["globals"])
        t0 = time.process_time()
        try:
            text = codegen.KernelCodegen(program, program.functions[k["kernel"]]).build()
        except codegen.NativeUnsupported as e:
            print(f"{k['kernel']}: not compiled natively ({e})")
            continue
        t1 = time.process_time()
        compile_ir(text, optimize=opt == 3)
        rows.append((k["kernel"], t1 - t0, time.process_time() - t1, len(text)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--save", help="write the collected kernels to this JSON file")
    ap.add_argument("--load", help="read the kernels from this JSON file instead of collecting them")
    ap.add_argument("--only", help="measure only kernels whose name contains this")
    ap.add_argument("--opt", type=int, choices=(0, 3), default=0, help="LLVM level: 0 (first tier) or 3")
    args = ap.parse_args()
    os.environ["STRATA_CACHE_DIR"] = tempfile.mkdtemp(prefix="strata-compile-times-")  # cold PTX and object caches
    os.environ.setdefault("STRATA_KERNEL_TIMEOUT", "600")
    kernels = json.loads(Path(args.load).read_text()) if args.load else collect()
    if args.save:
        Path(args.save).write_text(json.dumps(kernels))
    rows = measure(kernels, args.only, args.opt)
    if not rows:
        print("no kernels")
        return
    print(f"{'total ms':>9} {'IR ms':>7} {'LLVM ms':>8} {'IR kB':>7}  kernel")
    for name, ir_s, llvm_s, size in sorted(rows, key=lambda r: r[1] + r[2]):
        print(f"{(ir_s + llvm_s) * 1e3:9.0f} {ir_s * 1e3:7.0f} {llvm_s * 1e3:8.0f} {size / 1e3:7.0f}  {name[:80]}")
    totals = sorted(r[1] + r[2] for r in rows)
    p90 = totals[min(len(totals) - 1, int(0.9 * len(totals)))]
    print(f"{len(rows)} kernels: median {statistics.median(totals) * 1e3:.0f} ms, p90 {p90 * 1e3:.0f} ms, "
          f"max {totals[-1] * 1e3:.0f} ms; IR generation {sum(r[1] for r in rows):.2f} s, "
          f"LLVM {sum(r[2] for r in rows):.2f} s in all")


if __name__ == "__main__":
    main()
