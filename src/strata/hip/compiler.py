"""HIP C++ -> PTX: the role hipcc/hipRTC play on NVIDIA platforms, played by strata's HIP headers + NVRTC.

Source of truth for how strata compiles HIP source: NVRTC (through `strata.cuda.compile`, so the same
options, include path, PTX cache and errors) with `-I<strata/hip/include>` for `#include <hip/hip_runtime.h>`
searched after the CUDA headers, CCCL and cuRAND (`strata.cuda.compiler.include_dirs`, docs/headers.md), that
header pre-included (hipRTC programs need not include it), and the macros hipRTC defines, `__HIPCC__`
and `__HIPCC_RTC__`. The headers map HIP's device API onto CUDA's (docs/hip.md lists what they provide).

Example:
    >>> import numpy as np
    >>> mod = compile('''#include <hip/hip_runtime.h>
    ... extern "C" __global__ void iota(int* x) { x[hipThreadIdx_x] = hipThreadIdx_x; }''')
    >>> from strata.cuda import empty
    >>> x = empty(4, np.int32); _ = mod.get_function("iota")(1, 4, (x,)); x.get().tolist()
    [0, 1, 2, 3]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from strata import cuda

# The HIP API version the headers implement; include/hip/hip_version.h says the same (a test checks).
HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH = 6, 4, 0
HIP_VERSION = HIP_VERSION_MAJOR * 10_000_000 + HIP_VERSION_MINOR * 100_000 + HIP_VERSION_PATCH


def compile(source: str, *, options: Sequence[str] = (), name_expressions: Sequence[str] = (),
            name: str = "kernel.hip", headers: Mapping[str, str] | None = None,
            arch: str | None = None) -> Any:  # noqa: A001
    """Compile HIP C++ to a loaded module (hiprtcCompileProgram + hipModuleLoadData).

    HIP's device API (hipThreadIdx_x, HIP_DYNAMIC_SHARED, __shfl_down, __ballot, ...) is available
    with or without `#include <hip/hip_runtime.h>`, as under hipRTC; the other HIP headers (hip_fp16.h,
    hip_bf16.h, hip_bfloat16.h, hip_complex.h, hip_math_constants.h, ...) are there to include.
    `__HIPCC__` and `__HIPCC_RTC__` are defined. Everything else is `strata.cuda.compile`'s.

    Args:
        source: HIP C++ source text (device code).
        options: extra NVRTC options (e.g. "-DN=4", "--use_fast_math").
        name_expressions: C++ names of template instantiations to make loadable ("scale<float>").
        name: the file name diagnostics and `.loc` lines report.
        headers: extra headers by include name, e.g. {"common.h": "..."}.
        arch: an AMD target ("gfx942", "gfx90a"): compile with clang-19 to a code object instead
            (`strata.hip.amd`, docs/amd.md). None: the current device's, when it is an AMD device;
            NVIDIA devices keep NVRTC, as HIP's NVIDIA platform does.

    Returns:
        A `strata.cuda.Module` (an instance of `strata.hip.Module` too), or for an AMD target a
        `strata.hip.amd.CodeObjectModule`.

    Raises:
        CompileError: NVRTC rejected the source; `.log` holds its log.

    Example:
        >>> compile('#include <hip/hip_runtime.h>\\n'
        ...         'extern "C" __global__ void k(float* x) { x[hipBlockIdx_x] = 1.0f; }').kernels
        ['k']
    """
    if arch is None:
        spec = cuda.current_device().spec
        arch = spec.arch if spec.vendor == "amd" else None
    if arch is not None:
        from strata.hip.amd import compile_amd  # NOTE: late: clang is only needed for AMD targets
        return compile_amd(source, arch=arch, options=options, name=name)
    return cuda.compile(source, options=(*hiprtc_options(), *options), name_expressions=name_expressions,
                        name=name, headers=headers)


def hiprtc_options() -> tuple[str, ...]:
    """The NVRTC options that make it hipRTC for the NVIDIA platform.

    Example:
        >>> hiprtc_options()[:2]
        ('-D__HIPCC__', '-D__HIPCC_RTC__')
    """
    return ("-D__HIPCC__", "-D__HIPCC_RTC__", f"-I{include_dir()}", "--pre-include=hip/hip_runtime.h")


@functools.cache
def include_dir() -> Path:
    """The directory holding `hip/hip_runtime.h` and the other HIP headers strata ships.

    Example:
        >>> (include_dir() / "hip" / "hip_runtime.h").is_file()
        True
    """
    return Path(__file__).resolve().parent / "include"


def header_version() -> tuple[int, int, int]:
    """(major, minor, patch) as `include/hip/hip_version.h` defines them.

    Example:
        >>> header_version() == (HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH)
        True
    """
    text = (include_dir() / "hip" / "hip_version.h").read_text(encoding="utf-8")
    found = dict(re.findall(r"#define HIP_VERSION_(MAJOR|MINOR|PATCH) (\d+)", text))
    return int(found["MAJOR"]), int(found["MINOR"]), int(found["PATCH"])
