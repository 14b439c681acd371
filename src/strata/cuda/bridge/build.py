"""Build the replacement CUDA runtime library (`libcudart.so.13`) from the C source shipped in the package.

It is compiled once with the system C compiler at first use into `<cache>/cudart/<hash>/`, the hash covering
the sources, the CUDA headers' version and the compiler, so an upgrade rebuilds it. The build goes to a
temporary folder renamed into place (atomic: two programs starting at once never see half a library).
The folder holds `libcudart.so.13` (soname and `libcudart.so.13` symbol version, as the programs nvcc links
expect) with a `libcudart.so` link name for `-cudart shared` links, and the driver API's `libcuda.so.1`
(with `libcuda.so` for `-lcuda`), cuRAND's `libcurand.so.10` (`-lcurand`) and cuBLAS's `libcublas.so.13`
(`-lcublas`; its header is strata's own, in `include/`), which call into the former.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from strata import config

NATIVE = Path(__file__).parent / "native"
SOURCES = ("cudart.c", "cuda_driver.c", "curand.c", "cublas.c", "exports.txt")
INCLUDE = Path(__file__).parent / "include"  # strata's own cuBLAS header (the pip wheels ship none)
LIBRARY = "libcudart.so.13"
DRIVER = "libcuda.so.1"
CURAND = "libcurand.so.10"
CUBLAS = "libcublas.so.13"  # the soname of CUDA 13's cuBLAS


class BuildError(RuntimeError):
    """The replacement runtime library could not be built (no C compiler, no CUDA headers, compile error)."""


def cuda_include_dir() -> Path:
    """The CUDA headers of the nvidia-cuda-runtime wheel (a strata dependency)."""
    import nvidia

    for base in nvidia.__path__:
        inc = Path(base) / "cu13" / "include"
        if (inc / "cuda_runtime_api.h").is_file():
            return inc
    raise BuildError("the CUDA runtime headers (cuda_runtime_api.h) are missing: pip install nvidia-cuda-runtime")


def c_compiler() -> str:
    """The system C compiler (`CC`, else cc, gcc, clang)."""
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    raise BuildError("no C compiler found (cc, gcc or clang): install one, e.g. `apt-get install gcc` on Debian "
                     "or Ubuntu, to build strata's CUDA runtime library")


def exported_names() -> list[str]:
    """The names NVIDIA's libcudart.so.13 exports (the list shipped beside the source)."""
    lines = (NATIVE / "exports.txt").read_text().splitlines()
    return [n.strip() for n in lines if n.strip() and not n.startswith("#")]


def driver_names() -> list[str]:
    """The driver API's function names, as cuda.h declares them and as its macros rename them (`cuMemAlloc`
    -> `cuMemAlloc_v2`, with `_ptds`/`_ptsz` per-thread-stream twins): what programs may link against."""
    text = (cuda_include_dir() / "cuda.h").read_text(errors="replace")
    names = set(re.findall(r"CUresult CUDAAPI (cu\w+)\(", text))
    for m in re.finditer(r"#define\s+cu\w+\s+(__CUDA_API_PT(?:DS|SZ)\()?(cu\w+)\)?", text):
        names.add(m.group(2))
        if m.group(1):
            names.add(m.group(2) + ("_ptds" if "PTDS" in m.group(1) else "_ptsz"))
    return sorted(names)


def curand_names() -> list[str]:
    """cuRAND's host functions, as curand.h declares them."""
    text = (cuda_include_dir() / "curand.h").read_text(errors="replace")
    return sorted(set(re.findall(r"curandStatus_t CURANDAPI\s+(curand\w+)\(", text)))


def cublas_names() -> list[str]:
    """The cuBLAS functions strata's own header declares (include/cublas_api.h)."""
    text = (INCLUDE / "cublas_api.h").read_text()
    return sorted(set(re.findall(r"cublasStatus_t CUBLASWINAPI (cublas\w+)\(", text)))


def stubs_source(names: list[str] | None = None, library: str = "CUDA runtime", code: int = 801,
                 status: str = "cudaErrorNotSupported") -> str:
    """Weak definitions of every exported name: the real ones (cudart.c, cuda_driver.c, ...) override them at
    link time, the rest return `code` (`status`: cudaErrorNotSupported / CUDA_ERROR_NOT_SUPPORTED, 801, by
    default) and print their name once."""
    out = ["#include <stdio.h>",
           "static void strata_unsupported(const char* name, int* said) {",
           f"    if (!*said) {{ *said = 1; fprintf(stderr, \"strata: %s is not implemented by strata's {library} "
           f"(returns {status})\\n\", name); }}",
           "}"]
    for name in exported_names() if names is None else names:
        out.append(f"__attribute__((weak)) int {name}(void) {{ static int said; "
                   f"strata_unsupported(\"{name}\", &said); return {code}; }}")
    return "\n".join(out) + "\n"


def errors_source() -> str:
    """The C table of cudaError_t codes, names and messages (`errors.inc`), from strata.errors."""
    from strata.cuda.bridge.error_texts import ERROR_TEXTS, EXTRA_CODES
    from strata.errors import CUDA_ERRORS

    codes = {name: code for name, (code, _) in CUDA_ERRORS.items()} | EXTRA_CODES
    rows = [f'    {{{code}, "{name}", "{ERROR_TEXTS.get(name, name)}"}},'
            for name, code in sorted(codes.items(), key=lambda kv: kv[1])]
    return ("static const struct { int code; const char* name; const char* text; } error_table[] = {\n"
            + "\n".join(rows) + "\n};\n")


def _key(cc: str) -> str:
    h = hashlib.sha256(errors_source().encode())
    for name in SOURCES:
        h.update((NATIVE / name).read_bytes())
    for header in sorted(INCLUDE.glob("*.h")):
        h.update(header.read_bytes())
    h.update(str(cuda_include_dir()).encode())
    version = (cuda_include_dir() / "cuda_runtime_api.h").stat().st_size
    h.update(f"{cc}:{version}".encode())
    return h.hexdigest()[:16]


def library_dir() -> Path:
    """The folder holding the built `libcudart.so.13` (and `libcudart.so`); built if missing.

    Raises:
        BuildError: no C compiler, missing headers, or the compiler's error output.
    """
    cc = c_compiler()

    def build(tmp: Path) -> None:
        (tmp / "cudart_stubs.c").write_text(stubs_source())
        (tmp / "errors.inc").write_text(errors_source())
        (tmp / "cudart.map").write_text("libcudart.so.13 { global: *; };\n")
        cmd = [cc, "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter",
               f"-I{cuda_include_dir()}", f"-I{tmp}", "-o", str(tmp / LIBRARY),
               str(NATIVE / "cudart.c"), str(tmp / "cudart_stubs.c"),
               f"-Wl,-soname,{LIBRARY}", f"-Wl,--version-script={tmp / 'cudart.map'}", "-lpthread"]
        run_compiler(cmd, "CUDA runtime library")
        (tmp / "libcudart.so").symlink_to(LIBRARY)
        # the driver API (libcuda.so.1), sharing libcudart's connection to the runtime process
        (tmp / "cuda_stubs.c").write_text(stubs_source(driver_names(), "CUDA driver"))
        cmd = [cc, "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter",
               f"-I{cuda_include_dir()}", "-o", str(tmp / DRIVER), str(NATIVE / "cuda_driver.c"),
               str(tmp / "cuda_stubs.c"), f"-Wl,-soname,{DRIVER}", f"-L{tmp}", f"-l:{LIBRARY}",
               "-Wl,-rpath,$ORIGIN"]
        run_compiler(cmd, "CUDA driver library")
        (tmp / "libcuda.so").symlink_to(DRIVER)
        # cuRAND's host API (libcurand.so.10), served by strata.libs.rand over the same connection
        (tmp / "curand_stubs.c").write_text(stubs_source(curand_names(), "cuRAND", code=999,
                                                         status="CURAND_STATUS_INTERNAL_ERROR"))
        cmd = [cc, "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter",
               f"-I{cuda_include_dir()}", "-o", str(tmp / CURAND), str(NATIVE / "curand.c"),
               str(tmp / "curand_stubs.c"), f"-Wl,-soname,{CURAND}", f"-L{tmp}", f"-l:{LIBRARY}",
               "-Wl,-rpath,$ORIGIN"]
        run_compiler(cmd, "cuRAND library")
        (tmp / "libcurand.so").symlink_to(CURAND)
        # cuBLAS's host API (libcublas.so.13), served by strata.libs.blas over the same connection
        (tmp / "cublas_stubs.c").write_text(stubs_source(cublas_names(), "cuBLAS", code=15,
                                                         status="CUBLAS_STATUS_NOT_SUPPORTED"))
        (tmp / "cublas.map").write_text(f"{CUBLAS} {{ global: *; }};\n")
        cmd = [cc, "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter",
               f"-I{cuda_include_dir()}", f"-I{INCLUDE}", "-o", str(tmp / CUBLAS), str(NATIVE / "cublas.c"),
               str(tmp / "cublas_stubs.c"), f"-Wl,-soname,{CUBLAS}", f"-Wl,--version-script={tmp / 'cublas.map'}",
               f"-L{tmp}", f"-l:{LIBRARY}", "-Wl,-rpath,$ORIGIN"]
        run_compiler(cmd, "cuBLAS library")
        (tmp / "libcublas.so").symlink_to(CUBLAS)

    return build_cached(config.settings().cache_dir.parent / "cudart", _key(cc), LIBRARY, build)


def run_compiler(cmd: list[str], what: str) -> None:
    """Run one compile or link step of a bridge library; BuildError with the compiler's output if it fails."""
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"building strata's {what} failed ({' '.join(cmd)}):\n{res.stderr}")


def build_cached(root: Path, key: str, marker: str, build: Callable[[Path], None]) -> Path:
    """The folder `root/key`, built by `build(tmp)` into a fresh folder beside it if `marker` is not there
    yet, then published by one rename: no process sees a half-built library, and when two processes build
    at once, the first rename wins and the other's folder is dropped."""
    final = root / key
    if (final / marker).is_file():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    try:
        build(tmp)
        try:
            tmp.rename(final)
        except OSError:  # another process built it first
            if not (final / marker).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final
