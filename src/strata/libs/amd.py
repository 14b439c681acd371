"""The libraries' kernels on an AMD device: the same CUDA C++ compiled by clang-19 for gfx942 (the roles
of rocBLAS, MIOpen, rocSOLVER and rocRAND, which are HIP builds of their kernels).

A library source is compiled through `strata.hip.amd` (strata's AMD device header, code objects cached
on disk) with `include_amd/strata_cuda_on_amd.h` force-included: it maps the CUDA device API the
kernels use (`cuda_fp16.h`/`cuda_bf16.h` types and conversions, `*_sync` shuffles of 64-bit values,
the math functions clang does not lower natively) onto that header. NVRTC's name expressions
('gemm_tiled<float, float, float, 0, 0, 1>') are honoured as hipRTC does: each is referenced from host
code so clang instantiates it, and its kernel is found by the Itanium mangling of the template
arguments (`find_kernel`).

Example:
    >>> find_kernel("reduce<float, 3>", ["_Z6reduceIfLi3EEviPKT_", "_Z6reduceIdLi3EEviPKT_"])
    '_Z6reduceIfLi3EEviPKT_'
    >>> amd_options(("--fmad=false",))
    ['-ffp-contract=off']
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from strata.cuda.compiler import CompileError
from strata.hip.amd import CodeObjectModule, clang_path, compile_to_code_object

SHIM = "strata_cuda_on_amd.h"
INSTALL_HINT = "run `make amd` (or apt-get install clang-19 lld-19 llvm-19)"

# Itanium codes of the builtin types (and the typedefs the kernels name them by)
_TYPE_CODES = {
    "void": "v", "bool": "b", "char": "c", "signed char": "a", "unsigned char": "h", "short": "s",
    "unsigned short": "t", "int": "i", "unsigned": "j", "unsigned int": "j", "long": "l", "unsigned long": "m",
    "long long": "x", "unsigned long long": "y", "float": "f", "double": "d",
    "__half": "6__half", "half": "6__half", "_Float16": "DF16_",
    "__nv_bfloat16": "DF16b", "__hip_bfloat16": "DF16b", "__bf16": "DF16b", "nv_bfloat16": "DF16b",
}
_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:<(.*)>)?\s*$")


class AmdNameError(CompileError):
    """A name expression the AMD path cannot map to a kernel of the code object."""


def include_dir() -> Path:
    """The directory of the CUDA-on-AMD shim headers."""
    return Path(__file__).resolve().parent / "include_amd"


@functools.cache
def _shim_digest() -> str:
    d = hashlib.sha256()
    for p in sorted(include_dir().glob("*.h")):
        d.update(p.name.encode() + p.read_bytes())
    return d.hexdigest()[:16]


def amd_options(options: Sequence[str]) -> list[str]:
    """NVRTC options translated for clang: `--fmad=false` is `-ffp-contract=off`, `-ftz=true` flushes
    denormals; options with no clang counterpart (architecture, line info, defaults) are dropped."""
    out: list[str] = []
    for o in options:
        if o in ("--fmad=false", "-fmad=false"):
            out.append("-ffp-contract=off")
        elif o in ("-ftz=true", "--ftz=true"):
            out.append("-fgpu-flush-denormals-to-zero")
        elif o.startswith(("-D", "-U", "-I")):
            out.append(o)
    return out


def _arg_pattern(arg: str) -> str:
    a = " ".join(arg.split())
    if a in _TYPE_CODES:
        return re.escape(_TYPE_CODES[a])
    if a in ("true", "false"):
        return f"Lb{int(a == 'true')}E"
    if re.fullmatch(r"-?\d+[uUlL]*", a):
        n = int(a.rstrip("uUlL"))
        # an integer template argument is mangled with its parameter's type (Li3E for int, Lj3E for unsigned)
        return f"L[a-z]{'n' if n < 0 else ''}{abs(n)}E"
    raise AmdNameError(f"[amd kernels] cannot mangle template argument {arg!r}")


def name_pattern(expr: str) -> str:
    """A regular expression for the start of the Itanium-mangled name of the kernel that a name
    expression names (name and template arguments; the parameter types follow)."""
    m = _NAME.match(expr)
    if m is None:
        raise AmdNameError(f"[amd kernels] unsupported name expression {expr!r} (expected name<args>)")
    name, args = m.group(1), m.group(2)
    out = f"_Z{len(name)}{name}"
    if args is not None:
        # substitutions: the template name is candidate S_, then each class type at its first use
        # (S0_, S1_, ...); builtin types are never substituted
        seen = [name]
        codes = []
        for p in args.split(",") if args.strip() else []:
            code = _arg_pattern(p)
            if re.fullmatch(r"\d+\w+", _TYPE_CODES.get(" ".join(p.split()), "")):
                if code in seen:
                    i = seen.index(code)
                    code = "S_" if i == 0 else f"S{_base36(i - 1)}_"
                else:
                    seen.append(code)
            codes.append(code)
        out += "I" + "".join(codes) + "E"
    return out


def _base36(n: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = ""
    while True:
        out = digits[n % 36] + out
        n //= 36
        if n == 0:
            return out


def find_kernel(expr: str, kernels: Sequence[str]) -> str:
    """The kernel of `kernels` (mangled names) that the name expression `expr` names."""
    if expr in kernels:  # extern "C"
        return expr
    pattern = re.compile(name_pattern(expr))
    hits = [k for k in kernels if pattern.match(k)]
    if len(hits) != 1:
        raise AmdNameError(f"[amd kernels] name expression {expr!r} matches {len(hits)} kernels of the code object "
                           f"({hits[:4]}); expected one")
    return hits[0]


def compile_kernels(library: str, source: str, *, name_expressions: Sequence[str] = (),
                    options: Sequence[str] = (), arch: str = "gfx942") -> tuple[CodeObjectModule, dict[str, str]]:
    """Compile a library's CUDA C++ for an AMD `arch`: the loaded module and each name expression's
    mangled kernel name.

    Raises:
        ClangNotFound: clang-19 is not installed (the message says to run `make amd`).
        CompileError: clang rejected the source (`.log` has its output).
    """
    if clang_path() is None:
        from strata.hip.amd import ClangNotFound
        raise ClangNotFound(f"[{library}] using an AMD device needs clang-19 to compile the library's kernels for "
                            f"{arch}; {INSTALL_HINT}")
    # host-side references make clang instantiate (and emit) each named template kernel, as hipRTC's
    # name expressions do; the digest makes the code-object cache follow the shim's text
    refs = "".join(f"static void* __strata_name_expr_{i} = (void*)&{e};\n" for i, e in enumerate(name_expressions))
    full = f"// strata shim {_shim_digest()}\n{source}\n{refs}"
    # no mixed-precision fma (v_fma_mix*): half values are widened to float first, as the class __half does
    opts = [f"-I{include_dir()}", "-include", SHIM, "-Xclang", "-target-feature", "-Xclang", "-fma-mix-insts",
            *amd_options(options)]
    image = compile_to_code_object(full, arch=arch, options=opts, name=f"strata_{library}.hip")
    module = CodeObjectModule(image)
    lowered = {e: find_kernel(e, module.kernels) for e in name_expressions}
    return module, lowered
