"""`strata nvcc`: NVIDIA's nvcc from pip, set up to build programs that run on strata's virtual GPU.

It runs the nvcc of the `nvidia-cuda-nvcc` wheel (the `programs` extra: `pip install 'strata[programs]'` or
`make programs`; `STRATA_NVCC` names another nvcc) with the system C++ compiler, adding what the virtual GPU
needs and passing every other flag through, so a Makefile works with `NVCC="strata nvcc"`:

- `-gencode arch=compute_90,code=compute_90`: PTX for the virtual GPU embedded in the fat binary (SASS is
  of no use to it);
- `-lineinfo`: a kernel fault's report names the line of the `.cu` file;
- `-cudart shared` and `-L<strata's runtime library folder>`: the program loads `libcudart.so.13` at run
  time, which `strata run` points at strata's replacement (nvcc's default, static cudart, would reach for a
  real driver instead).
- `-I<strata's cuBLAS header folder>` (after the user's own `-I`s): `<cublas_v2.h>`, which the pip wheels
  lack, declaring what strata's `libcublas.so.13` serves (`-lcublas`).

`compile_program(source)` builds a `.cu` file into a cache (what `strata run prog.cu` does), linking the host
libraries its includes name (`<cublas_v2.h>`: `-lcublas`, `<curand.h>`: `-lcurand`, `<cuda.h>`: `-lcuda`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from strata import config
from strata.cuda.bridge.build import INCLUDE, library_dir

VIRTUAL_ARCH = "compute_90"


class NvccNotFound(RuntimeError):
    """No nvcc: the `programs` extra is not installed and STRATA_NVCC is not set."""


def find_nvcc() -> Path:
    """STRATA_NVCC, else the nvcc of the nvidia-cuda-nvcc wheel.

    Raises:
        NvccNotFound: neither is present (the message says how to install it).
    """
    s = config.settings()  # a STRATA_NVCC naming no executable raises ValueError there, saying so
    if s.nvcc_chosen:
        if s.nvcc is None:
            raise NvccNotFound("STRATA_NVCC disables nvcc; unset it to use the `programs` extra's nvcc")
        return s.nvcc
    try:
        import nvidia
    except ImportError:
        nvidia = None
    for base in getattr(nvidia, "__path__", []):
        p = Path(base) / "cu13" / "bin" / "nvcc"
        if p.is_file() and (Path(base) / "cu13" / "nvvm").is_dir():
            return p
    raise NvccNotFound("nvcc is not installed: `pip install 'strata[programs]'` (or `make programs`) installs "
                       "NVIDIA's nvcc wheels (nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-cccl); or set STRATA_NVCC "
                       "to an nvcc")


def host_compiler() -> str:
    """The system C++ compiler nvcc drives (`CXX`, else g++, else c++).

    Raises:
        NvccNotFound: there is none (the message names the Debian package).
    """
    for cxx in (os.environ.get("CXX"), "g++", "c++"):
        if cxx and shutil.which(cxx):
            return shutil.which(cxx) or cxx
    raise NvccNotFound("no C++ compiler found (g++): nvcc compiles a program's host code with the system compiler; "
                       "install it, e.g. `apt-get install g++` on Debian or Ubuntu")


def nvcc_command(args: list[str]) -> list[str]:
    """The nvcc command line for `strata nvcc ARGS`: the user's flags plus PTX for the virtual GPU, the
    shared runtime and strata's library folder (unless the user chose them: `-cudart`, `-ccbin`)."""
    nvcc = find_nvcc()
    cmd = [str(nvcc)]
    if not any(a in ("-ccbin", "--compiler-bindir") or a.startswith(("-ccbin=", "--compiler-bindir="))
               for a in args):
        cmd += ["-ccbin", host_compiler()]
    only_device = any(a in ("-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin", "-E", "-M") for a in args)
    cmd += ["-gencode", f"arch={VIRTUAL_ARCH},code={VIRTUAL_ARCH}"]
    if not any(a in ("-G", "--device-debug", "-lineinfo", "--generate-line-info") for a in args):
        cmd += ["-lineinfo"]  # so a fault's report names the CUDA source line, as under compute-sanitizer
    if not only_device and not any(a.startswith(("-cudart", "--cudart")) for a in args):
        cmd += ["-cudart", "shared"]
    if not only_device:
        cmd += [f"-L{library_dir()}"]
    return cmd + list(args) + [f"-I{INCLUDE}"]  # last: a toolkit's own cuBLAS header, given with -I, wins


def nvcc(args: list[str]) -> int:
    """Run `strata nvcc ARGS`; returns nvcc's exit status (2 with a message when nvcc or g++ is missing)."""
    try:
        cmd = nvcc_command(args)
    except NvccNotFound as e:
        print(f"strata nvcc: {e}", file=sys.stderr)
        return 2
    return subprocess.call(cmd)


# headers whose host library a program needs at link time, as `strata run prog.cu` builds it
_HEADER_LIBRARIES = {"cublas_v2.h": "-lcublas", "cublas_api.h": "-lcublas", "curand.h": "-lcurand", "cuda.h": "-lcuda"}
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def _library_flags(source: Path, extra: Sequence[str]) -> list[str]:
    """`-lcublas`, `-lcurand`, `-lcuda` for the libraries the source's includes name and `extra` lacks."""
    flags: list[str] = []
    for header in _INCLUDE.findall(source.read_text(errors="replace")):
        flag = _HEADER_LIBRARIES.get(header)
        if flag and flag not in extra and flag not in flags:
            flags.append(flag)
    return flags


def compile_program(source: Path, extra: Sequence[str] = ()) -> Path:
    """Build `source` (a .cu file) with `strata nvcc` into the cache; the executable's path. Rebuilt when the
    source, the headers beside it or the flags change.

    Raises:
        NvccNotFound: no nvcc or g++.
        RuntimeError: nvcc failed (its output in the message).
    """
    cmd = nvcc_command([*extra, str(source), *_library_flags(source, extra)])
    # the key leaves out the runtime library's folder (the program does not embed the library) and takes in
    # the headers beside the source (its own includes, most likely)
    h = hashlib.sha256(source.read_bytes() + "\0".join(a for a in cmd if not a.startswith("-L")).encode())
    for header in sorted(p for ext in ("*.h", "*.cuh", "*.hpp") for p in source.parent.glob(ext)):
        h.update(header.name.encode() + header.read_bytes())
    for header in sorted(INCLUDE.glob("*.h")):  # strata's own headers (cublas_v2.h)
        h.update(header.read_bytes())
    key = h.hexdigest()[:16]
    out_dir = config.settings().cache_dir.parent / "programs"
    exe = out_dir / f"{source.stem}-{key}"
    if exe.is_file():
        return exe
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f".{exe.name}.{os.getpid()}")
    res = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"nvcc failed on {source}:\n{res.stderr}{res.stdout}")
    tmp.rename(exe)
    return exe
