"""The `strata` command: `strata demo` runs the main job, `strata info` describes this stack, `strata smi`
shows the devices (like nvidia-smi), `strata run program.py` runs a program on the virtual GPUs (`--as-torch`:
a PyTorch program, its `import torch` served by strata), `strata hipify FILE.cu` translates CUDA source to HIP,
`strata hipcc k.hip -o k.co` compiles HIP to an AMD code object."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["nvcc"]:  # every flag after it is nvcc's, so argparse must not see them
        from strata.cuda.nvcc import nvcc

        return nvcc(argv[1:])
    if argv[:1] == ["hipcc"]:  # likewise: clang's flags pass through
        from strata.hip.hipcc import main as hipcc_main

        return hipcc_main(argv[1:])
    parser = argparse.ArgumentParser(prog="strata", description="A GPU software stack in Python, on a virtual GPU.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="C = matmul(A, B) on the virtual GPU: its walk down the layers, a NumPy "
                                       "check, where the time went, and an HTML report")
    demo.add_argument("--gpu", help="virtual GPU model: h200 (default), h100, a100, mi300x")
    demo.add_argument("--size", type=int, default=1024, help="matrix size n of the n x n matrices (default 1024)")
    demo.add_argument("--out", default="strata-demo", help="where report.html and trace.json go (./strata-demo)")
    info_parser = sub.add_parser("info", help="what this machine's stack is, layer by layer (and any real GPU)")
    info_parser.add_argument("--json", action="store_true", help="the facts as one JSON object")
    smi_parser = sub.add_parser("smi", help="devices, memory, utilization, power, temperature, clocks and contexts")
    smi_parser.add_argument("--json", action="store_true", help="one JSON object per device instead of the table")
    smi_parser.add_argument("view", nargs="?", choices=["topo"], help="topo: the GPU connection matrix "
                                                                      "(as nvidia-smi topo -m)")
    smi_parser.add_argument("-m", "--matrix", action="store_true", help="with topo: the matrix (the default)")
    sub.add_parser("nvcc", help="NVIDIA's nvcc (pip) building programs for the virtual GPU; flags pass through",
                   add_help=False)
    sub.add_parser("hipcc", help="build a HIP program for the virtual AMD GPU (clang-19 + strata's HIP headers and "
                                 "libamdhip64): strata hipcc prog.hip -o prog; a code object with -o k.co or "
                                 "--genco [--offload-arch=gfx942]; clang flags pass through",
                   add_help=False)
    run = sub.add_parser("run", help="run a program with strata's stack as its GPU: a Python file, a CUDA "
                                     "executable (built with `strata nvcc`) or a .cu file (built, cached, run), a "
                                     "HIP executable (`strata hipcc`) or a .hip file (on an MI300X by default)")
    run.add_argument("--gpu", help="virtual GPU model of device 0: h200 (default), h100, a100, mi300x")
    run.add_argument("--devices", help="the virtual GPUs present, e.g. 'h200,h100' or '4xh200' (STRATA_DEVICES)")
    run.add_argument("--launch-blocking", action="store_true", help="synchronous launches (STRATA_LAUNCH_BLOCKING=1)")
    run.add_argument("--nproc", "--nproc-per-node", dest="nproc", type=int,
                     help="run a Python program as N ranks, one process each, with torchrun's environment "
                          "(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), for torch.distributed")
    run.add_argument("--as-torch", action="store_true",
                     help="serve `import torch` (torch.nn, torch.optim, torch.cuda, ...) from strata, so a PyTorch "
                          "program runs unchanged")
    run.add_argument("program", help="the Python file, CUDA or HIP executable, or .cu/.hip file to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")
    tr = sub.add_parser("trace", help="run a Python program with recording on: its walk down the layers, a "
                                      "Perfetto trace and an HTML report")
    tr.add_argument("--gpu", help="virtual GPU model of device 0 (and the report's roofline): h200 (default), h100, "
                                  "a100, mi300x")
    tr.add_argument("--out", default="strata-trace", help="where trace.json and report.html go (./strata-trace)")
    tr.add_argument("--as-torch", action="store_true", help="serve `import torch` from strata (a PyTorch program)")
    tr.add_argument("--no-collapse", action="store_true", help="print every call in full (no repeat collapsing)")
    tr.add_argument("program", help="the Python file to run")
    tr.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")
    hip = sub.add_parser("hipify", help="translate CUDA source to HIP (like hipify-perl)")
    hip.add_argument("files", nargs="+", metavar="FILE", help="CUDA source file(s)")
    hip.add_argument("-o", dest="output", metavar="OUT", help="where to write the HIP source (default stdout)")
    hip.add_argument("--print-stats", action="store_true", help="the statistics report, on stderr")
    hip.add_argument("--examine", action="store_true", help="warnings and statistics only, no HIP source")
    hip.add_argument("--quiet-warnings", action="store_true", help="do not print warnings")
    hip.add_argument("--cuda-kernel-execution-syntax", action="store_true",
                     help="keep kernel<<<...>>> launches instead of writing hipLaunchKernelGGL(...)")
    args = parser.parse_args(argv)
    if args.command == "run" and args.nproc is not None:
        from strata.framework.distributed.launch import launch

        return launch(args.nproc, args.program, args.args, as_torch=args.as_torch, gpu=args.gpu, devices=args.devices)
    if args.command == "run":
        return run_program(args.program, args.args, gpu=args.gpu, devices=args.devices,
                           launch_blocking=args.launch_blocking, as_torch=args.as_torch)
    if args.command == "trace":
        return trace_program(args.program, args.args, gpu=args.gpu, out=args.out, as_torch=args.as_torch,
                             collapse=not args.no_collapse)
    if args.command == "demo":
        from strata.demo import main as demo_main

        return demo_main(args.gpu, args.size, args.out)
    if args.command == "smi":
        if args.view == "topo":
            from strata.smi import smi_topo

            print(smi_topo())
            return 0
        return smi(as_json=args.json)
    if args.command == "hipify":
        return hipify(args)
    return info(as_json=args.json)


def trace_program(program: str, argv: list[str], *, gpu: str | None = None, out: str = "strata-trace",
                  as_torch: bool = False, collapse: bool = True) -> int:
    """`strata trace`: `run_program` with recording on; then the walk on stdout and trace.json and
    report.html in `out`, written also when the program fails. Returns the program's exit status (1 if it
    raised)."""
    import traceback

    from strata.errors import CudaError
    from strata.trace_run import trace_call

    native = program.endswith((".cu", ".hip")) or (Path(program).is_file() and _is_executable(program))

    status = [1]

    def run() -> None:
        status[0] = run_program(program, argv, gpu=gpu, as_torch=as_torch)

    try:
        trace_call(run, out, model=gpu, title=f"strata trace {Path(program).name}", collapse=collapse)
    except CudaError:
        if not native:
            raise
        return status[0] or 1  # a CUDA program's fault: `strata run` already reported it
    except Exception:  # noqa: BLE001 - the program's own error: shown, and the trace is already written
        traceback.print_exc()
        return 1
    return status[0]


def run_program(program: str, argv: list[str], *, gpu: str | None = None, devices: str | None = None,
                launch_blocking: bool = False, as_torch: bool = False) -> int:
    """`strata run`: execute `program` as __main__ (its sys.argv is [program, *argv]) with the virtual
    GPUs chosen by the options, then wait for the devices so a fault of the program's last kernels is
    reported (like a CUDA program's final synchronize; exit status 1). With `as_torch`, the program's `import torch`
    is answered by strata (`strata.install_torch_alias`). Returns the program's exit status."""
    import os
    import runpy

    if not Path(program).is_file():
        print(f"strata run: no such file: {program}", file=sys.stderr)
        return 2
    if program.endswith((".cu", ".hip")) or _is_executable(program):
        for name, value in (("STRATA_GPU", gpu), ("STRATA_DEVICES", devices),
                            ("STRATA_LAUNCH_BLOCKING", "1" if launch_blocking else None)):
            if value is not None:
                os.environ[name] = value
        return run_native(program, argv)
    for name, value in (("STRATA_GPU", gpu), ("STRATA_DEVICES", devices),
                        ("STRATA_LAUNCH_BLOCKING", "1" if launch_blocking else None)):
        if value is not None:
            os.environ[name] = value
    from strata import config

    config.settings()  # a bad --gpu/--devices fails here with the variable's message
    if as_torch:
        from strata.framework.torch_alias import install_torch_alias

        try:
            install_torch_alias()
        except RuntimeError as e:
            print(f"strata run --as-torch: {e}", file=sys.stderr)
            return 2
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [program, *argv]
    sys.path.insert(0, str(Path(program).resolve().parent))
    status = 0
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except AttributeError as e:
        _note_missing_tensor_method(e)
        raise
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    from strata.errors import CudaError
    from strata.runtime import contexts

    for ctx in contexts():
        try:
            ctx.synchronize()  # a sticky fault the program never synchronized to see; never waits on one
        except CudaError as e:
            print(f"strata run: a kernel or copy of the program failed after its last synchronization:\n"
                  f"{type(e).__name__}: {e}", file=sys.stderr)
            return status or 1
    return status


def _note_missing_tensor_method(e: AttributeError) -> None:
    """A program that stops on a Tensor method strata lacks (`x.stft(...)`) is told so beside Python's message
    (a note on the exception; Tensor itself has no __getattr__, which would slow every attribute read)."""
    tensor_mod = sys.modules.get("strata.framework.tensor")
    name = getattr(e, "name", None)
    if tensor_mod is None or not isinstance(name, str) or name.startswith("_"):
        return
    if isinstance(getattr(e, "obj", None), tensor_mod.Tensor):
        e.add_note(f"strata does not provide Tensor.{name} (PyTorch's); docs/torch-surface.md lists what it covers")


def _is_executable(program: str) -> bool:
    """An ELF file (a compiled program), as opposed to a Python script."""
    with open(program, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _static_cudart(exe: Path) -> bool:
    """True if `exe` embeds device code (a .nv_fatbin section) but does not load libcudart.so.13: nvcc's
    default `-cudart static`."""
    import mmap

    with open(exe, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(b".nv_fatbin") >= 0 and m.find(b"libcudart.so.13") < 0


def _is_hip_executable(program: str) -> bool:
    """True if `program` is an ELF file that loads libamdhip64 (built by `strata hipcc`)."""
    import mmap

    if not _is_executable(program):
        return False
    with open(program, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(b"libamdhip64.so") >= 0


def run_native(program: str, argv: list[str]) -> int:
    """`strata run` of a CUDA program: a .cu file is built with `strata nvcc` into a cache first; the
    executable runs with strata's CUDA runtime library, served by this process (strata.cuda.bridge)."""
    if program.endswith(".hip") or _is_hip_executable(program):  # a HIP program: on an AMD device
        from strata.hip.bridge.server import run_program as run_hip_program

        return run_hip_program(program, argv)
    from strata.cuda.bridge.build import BuildError, library_dir
    from strata.cuda.nvcc import NvccNotFound, compile_program

    try:
        lib = library_dir()
        exe = compile_program(Path(program)) if program.endswith(".cu") else Path(program)
    except (NvccNotFound, BuildError, RuntimeError) as e:
        print(f"strata run: {e}", file=sys.stderr)
        return 2
    if not program.endswith(".cu") and _static_cudart(exe):
        print(f"strata run: {program} was linked with the static CUDA runtime (nvcc's default), which talks to a "
              "real GPU driver and bypasses strata; rebuild it with `strata nvcc` (it adds -cudart shared)",
              file=sys.stderr)
        return 2
    # the cuBLAS and cuRAND host APIs' handlers register themselves with the bridge when imported
    import strata.libs.blas.native  # noqa: F401
    import strata.libs.rand.native  # noqa: F401
    from strata.cuda.bridge.server import run

    return run([str(exe) if "/" in str(exe) else f"./{exe}", *argv], str(lib))


def info(as_json: bool = False) -> int:
    """Print `strata info` (strata.info.format_info), or with `as_json` its facts as JSON."""
    import json

    from strata.info import collect, format_info

    facts = collect()
    print(json.dumps(facts, indent=2) if as_json else format_info(facts))
    return 0


def smi(as_json: bool = False) -> int:
    """Print the `strata smi` table (or, with `as_json`, `smi_json()` as a JSON list) for every device."""
    import json

    from strata.smi import smi_json, smi_table

    print(json.dumps(smi_json(), indent=2) if as_json else smi_table())
    return 0


def hipify(args: argparse.Namespace) -> int:
    """Run `strata hipify` (strata.hip.hipify.main) with the parsed command-line arguments."""
    from strata.hip.hipify import main as hipify_main

    if args.output is not None and len(args.files) != 1:
        print("strata hipify: -o takes exactly one FILE", file=sys.stderr)
        return 2
    return hipify_main(args.files, output=args.output, print_stats=args.print_stats or args.examine,
                       no_output=args.examine, quiet_warnings=args.quiet_warnings,
                       launch_syntax="cuda" if args.cuda_kernel_execution_syntax else "hip")


if __name__ == "__main__":
    sys.exit(main())
