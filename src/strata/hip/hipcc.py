"""`strata hipcc`: build HIP programs (host and device code) or AMD code objects from the shell, with clang-19
and strata's own HIP headers (`strata.hip.amd.clang_command`; no ROCm install).

Whole programs, as ROCm's hipcc builds them: `strata hipcc [flags] prog.hip [more.hip a.o -lm] -o prog`
compiles each HIP source twice, for the device (a code object per `--offload-arch`, default gfx942) and for the
host (with the code objects embedded as a clang offload bundle), then links with the system linker against
strata's `libamdhip64.so.6`, so `strata run ./prog` runs it on a virtual AMD GPU. `-c` stops at the object
file; without `-o` the program is `a.out`.

Code objects: with `--genco` (hipcc's flag) or `--cuda-device-only`, or an output ending in `.co`/`.hsaco`,
only the device code is compiled: `strata hipcc k.hip -o k.co` writes a code object that
`strata.hip.amd.CodeObjectModule.from_file` loads.

The offload arch may carry target features (`gfx942:sramecc+:xnack-`); every other flag passes through to
clang unchanged.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from strata import config
from strata.hip.amd import ARCHS, CLANG, ClangNotFound, clang_command, clang_path, clang_version, include_dir
from strata.hip.bridge import bundle

INSTALL_HINT = "run `make amd` (or `apt-get install clang-19 lld-19 llvm-19`)"
_SOURCE_SUFFIXES = (".hip", ".cpp", ".cc", ".cxx", ".cu", ".c")
_HIP_SUFFIXES = (".hip", ".cpp", ".cc", ".cxx", ".cu")
_CODE_OBJECT_SUFFIXES = (".co", ".hsaco")
_DEVICE_ONLY_FLAGS = ("--genco", "--cuda-device-only")
_LINK_INPUT_SUFFIXES = (".o", ".a", ".so")
_PROGRAM_FORMAT = 1  # part of the program cache key: bump when the way programs are built changes


class HipccError(RuntimeError):
    """A HIP program could not be built: clang's or the linker's output is in the message."""


def _split_arch(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(offload archs, the other arguments); raises ValueError for a bad or missing `--offload-arch` value."""
    archs: list[str] = []
    rest: list[str] = []
    it = iter(argv)
    for a in it:
        if a == "--offload-arch":
            nxt = next(it, None)
            if nxt is None:
                raise ValueError("strata hipcc: --offload-arch needs a value, e.g. --offload-arch=gfx942")
            archs.append(nxt)
        elif a.startswith("--offload-arch="):
            archs.append(a.split("=", 1)[1])
        else:
            rest.append(a)
    for arch in archs:
        if arch.split(":")[0] not in ARCHS:  # the target id may carry features: gfx942:sramecc+:xnack-
            raise ValueError(f"strata hipcc: --offload-arch={arch} is not supported; expected one of {ARCHS} "
                             "(optionally with :sramecc+/-, :xnack+/-)")
    return archs or ["gfx942"], rest


def hipcc_command(argv: Sequence[str]) -> list[str]:
    """The clang command `strata hipcc --genco argv` runs (a code object): strata's command line for the
    chosen arch, then `argv` without its `--offload-arch` (and with `-o <stem>.co` added when no output is named).

    Raises:
        ValueError: an unsupported `--offload-arch`, `--offload-arch` without a value, or no input file.

    Example:
        >>> hipcc_command(["k.hip", "-o", "k.co"])[:4]
        ['clang-19', '-x', 'hip', '--offload-arch=gfx942']
    """
    archs, rest = _split_arch(argv)
    rest = [a for a in rest if a not in _DEVICE_ONLY_FLAGS]
    sources = [a for a in rest if not a.startswith("-") and a.endswith(_SOURCE_SUFFIXES)]
    if not sources:
        raise ValueError(f"strata hipcc: no input file (expected a {'/'.join(_SOURCE_SUFFIXES)} file); "
                         "usage: strata hipcc [clang flags] prog.hip -o prog [--offload-arch=gfx942]")
    if "-o" not in rest and not any(a.startswith("-o") and len(a) > 2 for a in rest):
        rest += ["-o", str(Path(sources[0]).with_suffix(".co"))]
    return clang_command(archs[0], rest)


def _output(args: Sequence[str]) -> str | None:
    for i, a in enumerate(args):
        if a == "-o" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("-o") and len(a) > 2:
            return a[2:]
    return None


def device_only(argv: Sequence[str]) -> bool:
    """True if `argv` asks for a code object (`--genco`, `--cuda-device-only`, or an output `*.co`/`*.hsaco`)."""
    out = _output(argv)
    return any(a in _DEVICE_ONLY_FLAGS for a in argv) or (out is not None and out.endswith(_CODE_OBJECT_SUFFIXES))


def _run(cmd: list[str], what: str) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise HipccError(f"strata hipcc: {what} failed:\n{res.stderr}{res.stdout}")
    if res.stderr:  # clang's warnings, as the user would see them
        print(res.stderr, end="", file=sys.stderr)


def build_program(argv: Sequence[str]) -> Path:
    """`strata hipcc argv` for a whole program (or objects with `-c`): the output's path.

    Raises:
        ValueError: usage errors (bad arch, no input). ClangNotFound: clang-19 is absent.
        HipccError: clang or the linker failed. BuildError: strata's HIP runtime library could not be built.
    """
    from strata.hip.bridge.build import library_dir

    archs, rest = _split_arch(argv)
    out = _output(rest)
    compile_only = "-c" in rest
    sources, link_inputs, compile_flags, link_flags = [], [], [], []
    it = iter(rest)
    for a in it:
        if a == "-o":
            next(it, None)
        elif a.startswith("-o") and len(a) > 2 or a == "-c":
            continue
        elif a in ("-I", "-D", "-U", "-include", "-isystem", "-x", "-std"):  # flags with a separate value
            compile_flags += [a, next(it, "")]
        elif a in ("-L", "-l"):
            link_flags += [a, next(it, "")]
        elif a.startswith(("-l", "-L", "-Wl,", "-rdynamic", "-static", "-fuse-ld")):
            link_flags.append(a)
        elif a.startswith("-"):
            compile_flags.append(a)
            if a in ("-pthread", "-fopenmp", "-g") or a.startswith("-fsanitize"):
                link_flags.append(a)
        elif a.endswith(_SOURCE_SUFFIXES):
            sources.append(a)
        elif a.endswith(_LINK_INPUT_SUFFIXES) or ".so." in a:
            link_inputs.append(a)
        else:
            raise ValueError(f"strata hipcc: do not know what to do with {a!r} (expected a {'/'.join(_SOURCE_SUFFIXES)}"
                             f" source, an object or library, or a flag)")
    unsupported = [a for a in compile_flags if a in ("-fgpu-rdc", "--offload-compress", "--offload-new-driver")]
    if unsupported:
        raise ValueError(f"strata hipcc: {unsupported[0]} is not supported: strata links each source's device code "
                         "on its own (no relocatable device code) into an uncompressed offload bundle")
    if not sources and not link_inputs:
        raise ValueError(f"strata hipcc: no input file (expected a {'/'.join(_SOURCE_SUFFIXES)} file); "
                         "usage: strata hipcc [clang flags] prog.hip -o prog [--offload-arch=gfx942]")
    if compile_only and out is not None and len(sources) > 1:
        raise ValueError("strata hipcc: -c with -o takes one source file")
    path = clang_path()
    if path is None:
        raise ClangNotFound(f"strata hipcc: {CLANG} is not installed; {INSTALL_HINT}")
    with tempfile.TemporaryDirectory(prefix="strata-hipcc-") as tmp:
        objects = []
        for i, src in enumerate(sources):
            obj = (out if compile_only and out else str(Path(src).with_suffix(".o").name) if compile_only
                   else os.path.join(tmp, f"{i}-{Path(src).stem}.o"))
            if src.endswith(".c"):  # plain C: host code only
                _run([path, *compile_flags, "-c", src, "-o", obj], f"compiling {src}")
            else:
                _compile_hip(path, src, obj, archs, compile_flags, tmp, i)
            objects.append(obj)
        if compile_only:
            return Path(objects[0])
        exe = out or "a.out"
        lib = library_dir()
        _run([path, "--driver-mode=g++", *objects, *link_inputs, "-o", exe, f"-L{lib}", "-lamdhip64",
              f"-Wl,-rpath,{lib}", *link_flags], "linking")
        return Path(exe)


def _compile_hip(clang: str, src: str, obj: str, archs: list[str], flags: list[str], tmp: str, i: int) -> None:
    """One HIP source: a code object per arch, bundled, embedded in the host object `obj`. Both compiles get
    the same compilation-unit id (clang's driver derives one per source when it runs both itself), which
    names the unit's `__hip_cuid_*` symbol: objects of different sources must not share it."""
    cuid = "-cuid=" + hashlib.sha256(f"{os.path.abspath(src)}\0{flags}".encode()).hexdigest()[:16]
    code_objects = {}
    for arch in archs:
        co = os.path.join(tmp, f"{i}-{arch.replace(':', '_')}.co")
        _run([clang, *clang_command(arch, [*flags, cuid])[1:], src, "-o", co], f"compiling {src} for {arch}")
        code_objects[arch] = Path(co).read_bytes()
    fatbin = os.path.join(tmp, f"{i}.hipfb")
    Path(fatbin).write_bytes(bundle.build(code_objects))
    # with --cuda-host-only the driver hands clang itself no cuid: -Xclang does (the same value as the device's)
    host = [clang, "-x", "hip", *(f"--offload-arch={a}" for a in archs), "--cuda-host-only", "-nogpuinc",
            "-nogpulib", f"-I{include_dir()}", "-Xclang", "-fcuda-include-gpubinary", "-Xclang", fatbin,
            "-Xclang", cuid, *flags, "-c", src, "-o", obj]
    _run(host, f"compiling {src} for the host")


def compile_program(source: Path, extra: Sequence[str] = ()) -> Path:
    """Build `source` (a .hip file) with `strata hipcc` into the cache (what `strata run prog.hip` does); the
    executable's path. Rebuilt when the source, the headers beside it, strata's HIP headers, the flags or clang
    change.

    Raises:
        ClangNotFound, HipccError, BuildError: as `build_program`.
    """
    h = hashlib.sha256(f"{_PROGRAM_FORMAT}\0".encode() + source.read_bytes() + "\0".join(extra).encode()
                       + clang_version().encode())
    for header in sorted(p for ext in ("*.h", "*.hpp", "*.cuh") for p in source.parent.glob(ext)):
        h.update(header.name.encode() + header.read_bytes())
    for header in sorted((include_dir() / "hip").glob("*.h")):
        h.update(header.read_bytes())
    out_dir = config.settings().cache_dir.parent / "programs"
    exe = out_dir / f"{source.stem}-hip-{h.hexdigest()[:16]}"
    if exe.is_file():
        return exe
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f".{exe.name}.{os.getpid()}")
    try:
        build_program([*extra, str(source), "-o", str(tmp)])
        tmp.rename(exe)
    finally:
        tmp.unlink(missing_ok=True)
    return exe


def main(argv: Sequence[str]) -> int:
    """Run `strata hipcc`: 0 on success; clang's exit status (with its output) when it fails; 2 for a usage
    error, a missing clang-19 or C compiler."""
    from strata.cuda.bridge.build import BuildError

    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    try:
        if device_only(argv):
            cmd = hipcc_command(argv)
            path = clang_path()
            if path is None:
                raise ClangNotFound(f"strata hipcc: {CLANG} is not installed; {INSTALL_HINT}")
            return subprocess.run([path, *cmd[1:]], check=False).returncode
        build_program(argv)
    except (ValueError, ClangNotFound, BuildError) as e:
        print(e, file=sys.stderr)
        return 2
    except HipccError as e:
        print(e, file=sys.stderr)
        return 1
    return 0
