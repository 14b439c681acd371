# Source of truth for "which PTX instruction variants does the conformance corpus make NVRTC (and
# nvcc) emit": compiles every registered kernel source and counts full opcodes
# (e.g. `ld.global.nc.v4.f32`, `shfl.sync.bfly.b32`). Run: python tests/hw/conformance/opcode_census.py
"""Opcode census of the conformance corpus.

Usage:
    python tests/hw/conformance/opcode_census.py [--compiler nvrtc|nvcc|both] [--per-kernel] [-o FILE]

Example:
    >>> sorted(ptx_opcodes("@%p1 bra $L__BB0_2;\\n\\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];"))
    ['bra', 'ld.global.nc.v4.f32']
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import conformance_lib  # noqa: E402
from conformance_lib import REGISTRY, KernelSource, nvcc_ptx  # noqa: E402

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LABEL = re.compile(r"^[$%\w]+\s*:\s*")
_PRED = re.compile(r"^@!?%\w+\s+")
_OPCODE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*")  # max.NaN.f16 keeps its case
# Directives written without a trailing ';' (they would otherwise swallow the next instruction).
_BARE_DIRECTIVES = (
    ".loc",
    ".file",
    ".section",
    ".b8",
    ".b16",
    ".b32",
    ".b64",
    ".visible",
    ".entry",
    ".func",
    ".param",
    ".weak",
    ".extern",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnreg",
)


def ptx_opcodes(ptx: str) -> Counter[str]:
    """Count every instruction opcode (with all its modifiers) in a PTX module."""
    text = _COMMENT.sub("", ptx)
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(_BARE_DIRECTIVES) and not s.endswith(";"):
            continue
        lines.append(line)
    counts: Counter[str] = Counter()
    for stmt in "\n".join(lines).split(";"):
        s = stmt.strip()
        while True:  # peel braces, parentheses, labels and guards off the front
            before = s
            s = s.lstrip("{}() \t\n")
            s = _LABEL.sub("", s)
            s = _PRED.sub("", s)
            if s == before:
                break
        if not s or s.startswith("."):
            continue
        m = _OPCODE.match(s)
        if m:
            counts[m.group(0)] += 1
    return counts


def _include_dir() -> str:
    import nvidia

    for base in nvidia.__path__:
        inc = os.path.join(base, "cu13", "include")
        if os.path.isdir(inc):
            return inc
    raise FileNotFoundError("[census] nvidia/cu13/include not found; is nvidia-cuda-runtime installed?")


def nvrtc_ptx(ks: KernelSource) -> str:
    """PTX from NVRTC through strata's compiler (same options the tests use); bare NVRTC without strata."""
    try:
        from strata.cuda.compiler import compile_to_ptx
    except ImportError:  # strata not importable (e.g. PYTHONPATH unset): same NVRTC, same flags
        return _nvrtc_direct(ks)
    return compile_to_ptx(ks.source, options=ks.options, name=f"{ks.name}.cu").ptx


def _nvrtc_direct(ks: KernelSource) -> str:
    from cuda.bindings import nvrtc

    def check(res: object, what: str, prog: object = None) -> None:
        if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = ""
            if prog is not None:
                _, size = nvrtc.nvrtcGetProgramLogSize(prog)
                buf = b" " * size
                nvrtc.nvrtcGetProgramLog(prog, buf)
                log = buf.decode(errors="replace")
            raise RuntimeError(f"[nvrtc] {ks.name}: {what} failed ({res})\n{log}")

    err, prog = nvrtc.nvrtcCreateProgram(ks.source.encode(), f"{ks.name}.cu".encode(), 0, [], [])
    check(err, "nvrtcCreateProgram")
    opts = [b"--gpu-architecture=compute_90", b"--std=c++17", b"-lineinfo", f"-I{_include_dir()}".encode()]
    opts += [o.encode() for o in ks.options]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    check(err, "nvrtcCompileProgram", prog)
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    check(err, "nvrtcGetPTXSize")
    buf = b" " * size
    (err,) = nvrtc.nvrtcGetPTX(prog, buf)
    check(err, "nvrtcGetPTX")
    nvrtc.nvrtcDestroyProgram(prog)
    return buf.rstrip(b"\x00").decode()


def load_corpus() -> dict[str, KernelSource]:
    """Import every test_conf_*.py next to this script so their kernels register themselves."""
    for path in sorted(HERE.glob("test_conf_*.py")):
        name = f"_census_{path.stem}"
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return dict(sorted(REGISTRY.items()))


def census(
    compiler: str, corpus: dict[str, KernelSource]
) -> tuple[Counter[str], dict[str, Counter[str]], list[str]]:
    total: Counter[str] = Counter()
    per: dict[str, Counter[str]] = {}
    failures: list[str] = []
    for name, ks in corpus.items():
        try:
            ptx = nvrtc_ptx(ks) if compiler == "nvrtc" else nvcc_ptx(ks)
        except Exception as e:  # noqa: BLE001 - report every failing kernel, then exit non-zero
            failures.append(f"{name}: {e}")
            continue
        c = ptx_opcodes(ptx)
        per[name] = c
        total += c
    return total, per, failures


def render(
    compiler: str,
    corpus: dict[str, KernelSource],
    total: Counter[str],
    per: dict[str, Counter[str]],
    failures: list[str],
    per_kernel: bool,
) -> str:
    n_entries = sum(len(ks.kernels) for ks in corpus.values())
    out = [
        f"# {compiler} opcode census: {len(corpus)} translation units, {n_entries} kernels, "
        f"{len(total)} distinct opcodes, {sum(total.values())} instructions",
        "",
        f"{'opcode':<40} {'count':>6} {'units':>5}  first units",
    ]
    users: dict[str, list[str]] = {}
    for name, c in per.items():
        for op in c:
            users.setdefault(op, []).append(name)
    for op in sorted(total):
        u = users[op]
        out.append(f"{op:<40} {total[op]:>6} {len(u):>5}  {', '.join(u[:3])}{' ...' if len(u) > 3 else ''}")
    roots: Counter[str] = Counter()
    for op, k in total.items():
        roots[op.split(".")[0]] += k
    out += ["", "# by root opcode", "  ".join(f"{r}:{k}" for r, k in sorted(roots.items()))]
    out += ["", "# distinct opcodes (compact)", " ".join(sorted(total))]
    if per_kernel:
        out += ["", "# per translation unit"]
        for name, c in per.items():
            out.append(f"{name}: {' '.join(sorted(c))}")
    if failures:
        out += ["", f"# {len(failures)} FAILED TO COMPILE"] + failures
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", choices=("nvrtc", "nvcc", "both"), default="nvrtc")
    ap.add_argument("--per-kernel", action="store_true", help="also list opcodes per translation unit")
    ap.add_argument("-o", "--output", help="write the report here as well as to stdout")
    args = ap.parse_args(argv)
    corpus = load_corpus()
    compilers = ["nvrtc", "nvcc"] if args.compiler == "both" else [args.compiler]
    if "nvcc" in compilers and conformance_lib.NVCC is None:
        print("# nvcc not on PATH: skipping the nvcc census", file=sys.stderr)
        compilers.remove("nvcc")
    report, failed = [], False
    for comp in compilers:
        total, per, failures = census(comp, corpus)
        failed |= bool(failures)
        report.append(render(comp, corpus, total, per, failures, args.per_kernel))
    text = "\n".join(report)
    sys.stdout.write(text)
    if args.output:
        Path(args.output).write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
