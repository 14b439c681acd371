"""CUDA C++ -> PTX through NVRTC, with a content-addressed disk cache.

Source of truth for how strata invokes NVRTC: default options (compute_90, -lineinfo, C++17, the
include path), how name expressions are lowered, the cache key and cache-file format, how the PTX names
its source files, and how a failed compile becomes a CompileError.

The include path, in search order: the CUDA headers and CCCL (libcu++ `cuda/std/...`, `nv/target`, CUB,
Thrust) that NVRTC bundles in libnvrtc-builtins, extracted once per NVRTC version into
`<cache_dir>/../nvrtc-headers/<major>.<minor>` (see `bundled_headers_dir`); then the nvidia/cu13/include
directory the nvidia-cuda-runtime, -crt and -curand wheels install into (`cuda_runtime.h`, `crt/mma.h`,
`curand_kernel.h`). docs/headers.md lists what this makes available.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import util as importlib_util
from pathlib import Path
from typing import Any

from cuda.bindings import nvrtc

from strata.config import settings

DEFAULT_ARCH = "compute_90"
# Bump when the cache-file layout or the meaning of an entry changes; old entries are then ignored.
# 2: `.file` directives name in-memory sources `<nvrtc:hash>/name` instead of `<cwd>/name`.
CACHE_FORMAT = 2
# libcu++'s type-list metaprogramming unrolls 10 elements per step under NVCC and 16 elsewhere, NVRTC
# included; NVRTC's front end (NVCC's) expands the preprocessor repetition for 16 about 12x slower:
# <cuda/std/type_traits> alone took 0.75 s instead of 0.06 s, and every CG/CUB/cuRAND/cuda::std program
# includes it. Using NVCC's value changes no generated code (tests/cuda/test_headers.py compares PTX).
CCCL_META_UNROLL_LIMIT = "-D_CCCL_META_UNROLL_LIMIT=10"
# What the PTX's `.file` directives call a source that lives only in memory (the program itself and
# `headers=`): NVRTC would otherwise write `<cwd>/<name>`, a file that does not exist.
MEMORY_FILE_PREFIX = "<nvrtc:"
# NVRTC diagnostics look like `k.cu(3): error: ...`, `k.cu(1): catastrophic error: ...`, `nvrtc: error: ...`.
_ERROR_LINE = re.compile(r"\berror(\s*#[\w-]+)?\s*:", re.IGNORECASE)


class CompileError(ValueError):
    """NVRTC rejected a program; `.log` holds NVRTC's full log.

    Example:
        >>> try:
        ...     compile_to_ptx("__global__ void k() { int x = ; }", name="bad.cu", cache=False)
        ... except CompileError as e:
        ...     print("expected an expression" in e.log)
        True
    """

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class CompiledSource:
    """What NVRTC produced for one program.

    Attributes:
        ptx: the PTX module text.
        lowered_names: each requested name expression (e.g. "scale<float>") -> its mangled symbol.
        log: NVRTC's log (warnings; empty when clean).
        nvrtc_version: (major, minor) of the NVRTC that compiled it.
        cached: True when served from the disk cache instead of NVRTC (not part of equality).
    """

    ptx: str
    lowered_names: dict[str, str]
    log: str
    nvrtc_version: tuple[int, int]
    cached: bool = field(default=False, compare=False)


# what in a source needs the device runtime library (NVRTC declares it only with -rdc=true)
_DEVICE_RUNTIME_USE = re.compile(r"<<<|\bcuda(?:Malloc|Free|GetDevice|DeviceGetAttribute|GetLastError|"
                                 r"PeekAtLastError|Stream[A-Za-z]*|Event[A-Za-z]*|GetParameterBuffer\w*|"
                                 r"LaunchDevice\w*)\s*\(")


def compile_to_ptx(
    source: str,
    *,
    options: Sequence[str] = (),
    name_expressions: Sequence[str] = (),
    name: str = "kernel.cu",
    lineinfo: bool = True,
    cache: bool = True,
    headers: Mapping[str, str] | None = None,
) -> CompiledSource:
    """Compile CUDA C++ `source` to PTX with NVRTC.

    Defaults added unless `options` already says otherwise: `--gpu-architecture=compute_90`,
    `--std=c++17`, `-lineinfo` (so the PTX carries `.loc` lines for fault reports),
    `-D_CCCL_META_UNROLL_LIMIT=10` (NVCC's value; cuts ~0.7 s off every compile that includes CCCL,
    see `CCCL_META_UNROLL_LIMIT`), and always the include path of `include_dirs()`, so
    `#include <cooperative_groups.h>`, `<cuda/std/array>`, `<cub/cub.cuh>`, `<curand_kernel.h>`,
    `<cuda_fp16.h>` and friends resolve. A source with `<<<` (a kernel launching kernels: dynamic
    parallelism) or a call of the device runtime API (`cudaMalloc`, `cudaGetLastError`,
    `cudaStreamCreateWithFlags`, ... in device code) also gets `-rdc=true`, which NVRTC requires for them.

    A relative `name` (and every in-memory header) has no file behind it, so the PTX's `.file`
    directives call it `<nvrtc:XXXXXXXX>/name` (XXXXXXXX: the first 8 hex digits of the source's
    SHA-256) rather than the `<cwd>/name` NVRTC would write; fault reports then name that. An absolute
    `name` is kept as it is (pass the real path of a `.cu` file read from disk).

    Args:
        source: CUDA C++ translation unit.
        options: extra NVRTC options, e.g. ("-DN=4", "--use_fast_math", "-arch=compute_80").
        name_expressions: C++ names to lower, e.g. ("scale<float>",); see `CompiledSource.lowered_names`.
        name: file name NVRTC uses in diagnostics (`name(3): error: ...`) and, as above, in `.file`.
        lineinfo: add `-lineinfo` (the default).
        cache: look up and store the result in the PTX cache (`STRATA_CACHE_DIR`).
        headers: extra headers by include name (`{"my.h": "..."}`), found by `#include "my.h"` before
            the file system, as NVRTC's in-memory headers are.

    Returns:
        A `CompiledSource`.

    Raises:
        CompileError: NVRTC rejected the program or an option; `.log` has NVRTC's log.

    Example:
        >>> out = compile_to_ptx('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }')
        >>> ".visible .entry k(" in out.ptx
        True
    """
    if _DEVICE_RUNTIME_USE.search(source) and \
            not any(o.startswith(("-rdc", "--relocatable-device-code", "-dc")) for o in options):
        # launches from device code and the device runtime API need separate compilation (nvcc -rdc)
        options = (*options, "-rdc=true")
    opts = _full_options(options, lineinfo)
    exprs = list(dict.fromkeys(name_expressions))  # NVRTC rejects duplicates; keep first-seen order
    version = nvrtc_version()
    cfg = settings()
    if cfg.debug >= 2:
        print(f"[strata:compile] {name} options={opts}\n{source}", file=sys.stderr)

    hdrs = dict(sorted((headers or {}).items()))
    path = cfg.cache_dir / f"{_cache_key(source, opts, exprs, name, version, hdrs)}.json" if cache else None
    hit = _cache_load(path) if path is not None else None
    result = hit or _label_memory_files(_nvrtc_compile(source, opts, exprs, name, hdrs), source, name, hdrs)
    if cfg.debug >= 3:
        print(f"[strata:compile] {name} -> PTX\n{result.ptx}", file=sys.stderr)
    if path is not None and hit is None:
        _cache_store(path, result)
    return result


@functools.cache
def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the loaded NVRTC library.

    Example:
        >>> nvrtc_version() >= (13, 0)
        True
    """
    major, minor = _check(nvrtc.nvrtcVersion(), "nvrtcVersion")
    return int(major), int(minor)


def memory_file_label(source: str, name: str) -> str:
    """What the PTX's `.file` directives call `name` when it has no file behind it.

    Example:
        >>> memory_file_label("__global__ void k() {}", "kernel.cu")
        '<nvrtc:cf0a9752>/kernel.cu'
    """
    digest = hashlib.sha256(source.encode()).hexdigest()[:8]
    return f"{MEMORY_FILE_PREFIX}{digest}>/{os.path.normpath(name)}"


def include_dirs() -> list[Path]:
    """The directories strata puts on NVRTC's include path, in search order.

    The bundled CUDA headers and `<that>/cccl` (`bundled_headers_dir`, when NVRTC ships them and they
    could be extracted), then the wheels' nvidia/cu13/include (`cuda_include_dir`, when installed).

    Example:
        >>> any((d / "curand_kernel.h").is_file() for d in include_dirs())
        True
    """
    dirs = []
    if (bundled := bundled_headers_dir()) is not None:
        dirs += [bundled, bundled / "cccl"]
    if (inc := cuda_include_dir()) is not None:
        dirs.append(inc)
    return dirs


_BUNDLED_LOCK = threading.Lock()
_bundled_dir: Path | None = None  # where this process found or put the headers; re-checked per call


def bundled_headers_dir() -> Path | None:
    """The CUDA headers + CCCL bundled in libnvrtc-builtins, extracted on first use; None if unavailable.

    They go to `<cache_dir>/../nvrtc-headers/<major>.<minor>` (beside the PTX cache, so by default
    `~/.cache/strata/nvrtc-headers/13.5`), or, when that is not writable, under the temporary directory.
    Extraction (`nvrtcInstallBundledHeaders`, ~26 MB, 0.1-0.6 s) happens once per NVRTC version and
    machine: into a fresh temporary directory that is then renamed into place, so a concurrent process
    sees either nothing or the complete tree, and the loser of a race discards its copy. The location
    is decided once per process (a test that points `STRATA_CACHE_DIR` elsewhere does not cause a
    second extraction); a directory deleted meanwhile is extracted again.

    Example:
        >>> d = bundled_headers_dir()
        >>> (d / "cccl" / "nv" / "target").is_file() and (d / "cooperative_groups.h").is_file()
        True
    """
    global _bundled_dir
    with _BUNDLED_LOCK:
        if _bundled_dir is not None and _headers_complete(_bundled_dir):
            return _bundled_dir
        info = _bundled_info()
        if info is None:
            return None
        version = f"{info[0]}.{info[1]}"
        roots = [settings().cache_dir.parent, Path(tempfile.gettempdir()) / f"strata-{os.getuid()}"]
        for root in roots:
            target = root / "nvrtc-headers" / version
            if _headers_complete(target) or _install_bundled(target):
                _bundled_dir = target
                return target
        return None


@functools.cache
def _bundled_info() -> tuple[int, int] | None:
    """(CUDA major, minor) of the headers this NVRTC bundles, or None if it bundles none (NVRTC < 13.3)."""
    query = getattr(nvrtc, "nvrtcGetBundledHeadersInfo", None)
    if query is None:
        return None
    status, info, *_ = query()
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS or not info.available:
        return None
    return int(info.cudaVersionMajor), int(info.cudaVersionMinor)


def _headers_complete(path: Path) -> bool:
    # The version marker is written last by NVRTC, and the tree only appears here by an atomic rename.
    return (path / ".nvrtc_headers_version").is_file() and (path / "cccl" / "nv" / "target").is_file()


def _install_bundled(target: Path) -> bool:
    """Extract the bundled headers into `target` atomically; False if that is not possible there."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    except OSError:
        return False
    try:
        status, *_ = nvrtc.nvrtcInstallBundledHeaders(str(tmp).encode(), 0)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS or not _headers_complete(tmp):
            return False
        # Another installer's copy may land at any moment (a rename: complete at once). So first `exists`, then
        # `complete`: a target that exists yet is incomplete is a leftover of a crash (only complete copies are
        # renamed into place, and none can be while it is there), never a copy landing between two checks;
        # dropping it on the opposite order of checks deleted the copy another thread had just put in place.
        if target.exists() and not _headers_complete(target):
            shutil.rmtree(target, ignore_errors=True)
        if _headers_complete(target):  # another installer's copy landed meanwhile: as good as ours
            return True
        # If another installer renamed its copy first, the rename fails; theirs is as good as ours.
        with contextlib.suppress(OSError):
            os.rename(tmp, target)
        return _headers_complete(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@functools.cache
def cuda_include_dir() -> Path | None:
    """The headers the nvidia-cuda-runtime, -crt and -curand wheels install (`nvidia/cu13/include`), or None.

    Example:
        >>> (cuda_include_dir() / "cuda_runtime.h").is_file()
        True
    """
    spec = importlib_util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        inc = Path(root) / "cu13" / "include"
        if (inc / "cuda_runtime.h").is_file():
            return inc
    return None


# --- NVRTC ------------------------------------------------------------------------------------------


def _full_options(options: Sequence[str], lineinfo: bool) -> list[str]:
    opts = [str(o) for o in options]
    defaults = []
    if not any(o.startswith(("--gpu-architecture", "-arch")) for o in opts):
        defaults.append(f"--gpu-architecture={DEFAULT_ARCH}")
    if not any(o.startswith(("--std", "-std")) for o in opts):
        defaults.append("--std=c++17")
    if lineinfo and not any(o in ("-lineinfo", "--generate-line-info") for o in opts):
        defaults.append("-lineinfo")
    if not any(o.startswith(("-D_CCCL_META_UNROLL_LIMIT", "--define-macro=_CCCL_META_UNROLL_LIMIT")) for o in opts):
        defaults.append(CCCL_META_UNROLL_LIMIT)
    defaults += [f"-I{d}" for d in include_dirs()]
    return defaults + opts


def _nvrtc_compile(source: str, opts: list[str], exprs: list[str], name: str,
                   headers: Mapping[str, str]) -> CompiledSource:
    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), len(headers),
                                           [h.encode() for h in headers.values()],
                                           [k.encode() for k in headers]), "nvrtcCreateProgram")
    try:
        for expr in exprs:
            _check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), "nvrtcAddNameExpression")
        raw_opts = [o.encode() for o in opts]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(raw_opts), raw_opts)
        log = _read(prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"[compile] NVRTC could not compile {name}: {_first_error(log, status)}", log)
        ptx = _read(prog, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
        lowered = {}
        for expr in exprs:
            mangled = _check(nvrtc.nvrtcGetLoweredName(prog, expr.encode()), f"nvrtcGetLoweredName({expr!r})")
            lowered[expr] = mangled.decode() if isinstance(mangled, bytes) else str(mangled)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return CompiledSource(ptx=ptx, lowered_names=lowered, log=log, nvrtc_version=nvrtc_version())


_FILE_DIRECTIVE = re.compile(r'^(\s*\.file\s+\d+\s+)"([^"]*)"', re.MULTILINE)


def _label_memory_files(result: CompiledSource, source: str, name: str,
                        headers: Mapping[str, str]) -> CompiledSource:
    """Rename, in the PTX's `.file` directives, the `<cwd>/name` NVRTC wrote for in-memory sources."""
    if ".file" not in result.ptx:
        return result
    cwd = os.getcwd()
    relabel: dict[str, str] = {}
    for n in (name, *headers):
        if not os.path.isabs(n):
            label = memory_file_label(source, n)
            relabel[os.path.join(cwd, n)] = relabel[os.path.normpath(os.path.join(cwd, n))] = label
    if not relabel:
        return result
    ptx = _FILE_DIRECTIVE.sub(lambda m: m.group(1) + f'"{relabel.get(m.group(2), m.group(2))}"', result.ptx)
    return CompiledSource(ptx, result.lowered_names, result.log, result.nvrtc_version)


def _read(prog: Any, size_fn: Callable[..., tuple[Any, ...]], get_fn: Callable[..., tuple[Any, ...]]) -> str:
    size = _check(size_fn(prog), "nvrtcGet*Size")
    # NVRTC writes into the buffer, so it must be mutable: `b" " * 1` would be the interpreter's shared
    # one-byte b" " object, and an empty log (size 1, just the NUL) would overwrite it for the process.
    buf = bytearray(int(size))
    _check(get_fn(prog, buf), "nvrtcGet*")
    return bytes(buf).rstrip(b"\0").decode("utf-8", errors="replace")


def _check(ret: tuple[Any, ...], what: str) -> Any:
    """Unpack a cuda-bindings `(status, *values)` tuple, raising on a non-success status."""
    status, *values = ret
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(status)
        raise CompileError(f"[compile] {what} failed: {text.decode() if isinstance(text, bytes) else text}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _first_error(log: str, status: object) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    for ln in lines:
        if _ERROR_LINE.search(ln):
            return ln
    return lines[0] if lines else str(getattr(status, "name", status))


# --- cache ------------------------------------------------------------------------------------------


def _cache_key(source: str, opts: list[str], exprs: list[str], name: str, version: tuple[int, int],
               headers: Mapping[str, str] | None = None) -> str:
    # The current directory is part of the key because NVRTC resolves relative `-I` options and file
    # names against it (the `.file` directives of relative names are relabelled, but keep it simple).
    where = name if os.path.isabs(name) else os.path.join(os.getcwd(), name)
    parts: list[object] = [CACHE_FORMAT, source, opts, exprs, where, list(version)]
    if headers:  # only then, so entries cached before headers existed stay valid
        parts.append(sorted(headers.items()))
    blob = json.dumps(parts, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _cache_load(path: Path) -> CompiledSource | None:
    # Any unreadable, truncated or foreign entry is a miss; the fresh compile then overwrites it.
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry.get("format") != CACHE_FORMAT:
            return None
        ptx, lowered, log = entry["ptx"], entry["lowered_names"], entry["log"]
        version = entry["nvrtc_version"]
        if not (isinstance(ptx, str) and isinstance(lowered, dict) and isinstance(log, str)):
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in lowered.items()):
            return None
        return CompiledSource(ptx, lowered, log, (int(version[0]), int(version[1])), cached=True)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _cache_store(path: Path, result: CompiledSource) -> None:
    entry = {
        "format": CACHE_FORMAT,
        "ptx": result.ptx,
        "lowered_names": result.lowered_names,
        "log": result.log,
        "nvrtc_version": list(result.nvrtc_version),
    }
    # Write-then-rename so a concurrent reader never sees half a file; a read-only cache is not fatal.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass
