"""Build the replacement HIP runtime library (`libamdhip64.so.6`) from the C source shipped in the package.

It is compiled once with the system C compiler at first use into `<cache>/amdhip/<hash>/`, as strata's CUDA
runtime library is (`strata.cuda.bridge.build`), and links that library: both speak to the `strata run`
process over one connection. The hash covers the sources, strata's HIP header, the CUDA library's folder and
the compiler. The folder holds `libamdhip64.so.6` (ROCm 6's soname) and the `libamdhip64.so` link name for
`-lamdhip64`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path

from strata import config
from strata.cuda.bridge.build import BuildError, build_cached, c_compiler, cuda_include_dir, run_compiler
from strata.cuda.bridge.build import library_dir as cudart_dir

NATIVE = Path(__file__).parent / "native"
SOURCES = ("amdhip.c", "amdhip_props.c", "strata_props.h")
HEADER = Path(__file__).resolve().parents[1] / "include_amd" / "hip" / "hip_runtime_api.h"
LIBRARY = "libamdhip64.so.6"
NOT_SUPPORTED = 801  # hipErrorNotSupported

__all__ = ["LIBRARY", "BuildError", "errors_source", "exported_names", "library_dir", "stubs_source"]

# HIP runtime calls by the categories of strata's hipify table that name runtime/driver API functions
_API_CATEGORIES = {"device", "memory", "stream", "event", "execution", "graph", "context", "occupancy", "module",
                   "peer", "error", "init", "version", "texture", "surface", "ordered_memory", "virtual_memory",
                   "profiler", "unified", "thread", "external_resource"}


def exported_names() -> list[str]:
    """Every HIP runtime function name a program may link against: those strata's HIP header declares, and
    the HIP runtime/driver functions of strata's hipify table (`cuda2hip.csv`); the ones amdhip.c does not
    define are weak stubs."""
    names = set(re.findall(r"^(?:hipError_t|const char\*)\s+(\w+)\(", HEADER.read_text(), re.MULTILINE))
    table = (Path(__file__).resolve().parents[1] / "cuda2hip.csv").read_text()
    rows = csv.DictReader(io.StringIO("\n".join(ln for ln in table.splitlines() if not ln.startswith("#"))))
    for row in rows:
        hip = row.get("hip") or ""
        if (row.get("api") in ("runtime", "driver") and row.get("category") in _API_CATEGORIES
                and row.get("support") != "unsupported" and re.fullmatch(r"hip[A-Z]\w*", hip)):
            names.add(hip)
    return sorted(names)


def stubs_source(names: list[str] | None = None) -> str:
    """Weak definitions of every exported name: amdhip.c's real ones override them at link time; the rest
    return hipErrorNotSupported and print their name once."""
    out = ["#include <stdio.h>",
           "static void strata_unsupported(const char* name, int* said) {",
           "    if (!*said) { *said = 1; fprintf(stderr, \"strata: %s is not implemented by strata's HIP runtime "
           "(returns hipErrorNotSupported)\\n\", name); }",
           "}"]
    for name in exported_names() if names is None else names:
        out.append(f"__attribute__((weak)) int {name}(void) {{ static int said; "
                   f"strata_unsupported(\"{name}\", &said); return {NOT_SUPPORTED}; }}")
    return "\n".join(out) + "\n"


def errors_source() -> str:
    """The C table of hipError_t codes, HIP names and messages (`hip_errors.inc`), from strata.errors."""
    from strata.cuda.bridge.error_texts import ERROR_TEXTS, EXTRA_CODES
    from strata.errors import CUDA_ERRORS

    rows: dict[int, tuple[str, str]] = {}
    for cuda_name, (code, hip_name) in CUDA_ERRORS.items():
        if hip_name and code not in rows:
            rows[code] = (hip_name, ERROR_TEXTS.get(cuda_name, hip_name))
    for cuda_name, code in EXTRA_CODES.items():  # codes the C side sets itself
        hip_name = "hipError" + cuda_name.removeprefix("cudaError")
        rows.setdefault(code, (hip_name, ERROR_TEXTS.get(cuda_name, hip_name)))
    lines = [f'    {{{code}, "{name}", "{text}"}},' for code, (name, text) in sorted(rows.items())]
    return ("static const struct { int code; const char* name; const char* text; } hip_error_table[] = {\n"
            + "\n".join(lines) + "\n};\n")


def _key(cc: str, cudart: Path) -> str:
    h = hashlib.sha256(errors_source().encode() + stubs_source().encode() + HEADER.read_bytes())
    for name in SOURCES:
        h.update((NATIVE / name).read_bytes())
    h.update(f"{cc}:{cudart}".encode())
    return h.hexdigest()[:16]


def library_dir() -> Path:
    """The folder holding the built `libamdhip64.so.6` (and `libamdhip64.so`); built if missing. Strata's
    `libcudart.so.13` (which it links, found through its run path) is built first if needed.

    Raises:
        BuildError: no C compiler, missing headers, or the compiler's error output.
    """
    cc = c_compiler()
    cudart = cudart_dir()

    def build(tmp: Path) -> None:
        (tmp / "amdhip_stubs.c").write_text(stubs_source())
        (tmp / "hip_errors.inc").write_text(errors_source())
        common = [cc, "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter", "-c"]
        # amdhip.c sees only HIP's types, amdhip_props.c only CUDA's (both headers define dim3)
        steps = [[*common, f"-I{HEADER.parent.parent}", f"-I{tmp}", str(NATIVE / "amdhip.c"), "-o", str(tmp / "a.o")],
                 [*common, f"-I{cuda_include_dir()}", str(NATIVE / "amdhip_props.c"), "-o", str(tmp / "p.o")],
                 [*common, str(tmp / "amdhip_stubs.c"), "-o", str(tmp / "s.o")],
                 [cc, "-shared", "-o", str(tmp / LIBRARY), str(tmp / "a.o"), str(tmp / "p.o"), str(tmp / "s.o"),
                  f"-Wl,-soname,{LIBRARY}", f"-L{cudart}", "-l:libcudart.so.13", f"-Wl,-rpath,{cudart}"]]
        for cmd in steps:
            run_compiler(cmd, "HIP runtime library")
        for obj in ("a.o", "p.o", "s.o"):
            (tmp / obj).unlink()
        (tmp / "libamdhip64.so").symlink_to(LIBRARY)

    return build_cached(config.settings().cache_dir.parent / "amdhip", _key(cc, cudart), LIBRARY, build)
