"""Source of truth for strata's environment variables: names, types, defaults, validation.

The only module that reads `os.environ`. A leaf: any layer may import it. `settings()` re-reads the
environment on every call (microseconds), so tests can `monkeypatch.setenv` without reloading anything.
Each variable is documented in docs/config.md; `ENV_VARS` below holds the same one-line summaries.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

GPUS: tuple[str, ...] = ("h100", "h200", "a100", "mi300x", "mi250x")
DEFAULT_GPU = "h200"
DEFAULT_LAUNCH_BUDGET = 0  # no instruction cap: the wall-clock watchdog stops runaway kernels
DEFAULT_KERNEL_TIMEOUT = 60.0  # seconds
DEFAULT_CHUNK_LANES = 65536
MAX_DEBUG = 4
EXECUTORS: tuple[str, ...] = ("native", "reference")
# The native executor (hw/native) compiles a kernel once the reference has spent STRATA_NATIVE_AFTER_MS on it
# (hw/native/tiering.py); when llvmlite is missing, the reference executor runs everything (hw/native reports it).
DEFAULT_EXECUTOR = "native"
DEFAULT_NATIVE_AFTER_MS = 150
# How the native executor optimizes (hw/native/tiering.py): "auto" runs LLVM -O0 code first and recompiles a kernel
# at -O3 in the background once its time on the -O0 code reaches the -O3 compile's predicted cost; "0" never
# optimizes; "3" compiles every kernel at -O3 at once.
NATIVE_OPT_MODES: tuple[str, ...] = ("auto", "0", "3")

# Name -> one-line summary; `strata env`-style tooling and docs/config.md list these.
ENV_VARS: dict[str, str] = {
    "STRATA_GPU": f"virtual GPU model to emulate and time: {'|'.join(GPUS)} (default {DEFAULT_GPU})",
    "STRATA_CACHE_DIR": "directory for the NVRTC PTX cache (default $XDG_CACHE_HOME/strata/ptx, "
    "else ~/.cache/strata/ptx)",
    "STRATA_DEBUG": "verbosity 0-4: 1 launches, 2 +sources, 3 +PTX, 4 +per-instruction trace (default 0)",
    "STRATA_KERNEL_TIMEOUT": "seconds of wall-clock time one kernel may run before the watchdog stops it "
    f"with LaunchTimeout; 0 = off (default {DEFAULT_KERNEL_TIMEOUT:g})",
    "STRATA_LAUNCH_BUDGET": "optional cap on thread-instructions one launch may execute before LaunchTimeout; "
    "0 = unlimited (default 0)",
    "STRATA_CHUNK_LANES": "threads the emulator executes at once, as one vector "
    f"(default {DEFAULT_CHUNK_LANES})",
    "STRATA_NVCC": "path to nvcc, or 0 to never use it (default: nvcc on PATH, if any)",
    "STRATA_DEVICES": "the virtual GPUs present, e.g. 'h200', 'h200,h100' or '4xh200' (default: one STRATA_GPU)",
    "STRATA_LAUNCH_BLOCKING": "1 makes every launch and async copy synchronous, like CUDA_LAUNCH_BLOCKING (default 0)",
    "STRATA_DEFAULT_STREAM": "legacy (synchronizes with other streams, the default) or per-thread, like "
    "nvcc --default-stream",
    "STRATA_EXECUTOR": "native (kernels compiled to CPU code through llvmlite) or reference (the NumPy "
    f"interpreter); default {DEFAULT_EXECUTOR}",
    "STRATA_NATIVE_AFTER_MS": "the native executor compiles a kernel once the reference executor's time on it "
    f"(spent plus predicted) reaches this many ms; 0 = compile every kernel at its first launch (default "
    f"{DEFAULT_NATIVE_AFTER_MS})",
    "STRATA_NATIVE_OPT": "auto (a kernel's first native code is LLVM -O0, recompiled at -O3 in the background "
    "once it has run as long as that compile takes), 0 (never optimize) or 3 (compile at -O3 at once); "
    "default auto",
    "STRATA_STAGE_PAGEABLE": "1: a native program's pageable cudaMemcpy goes through the shared staging area "
    "(two copies) instead of the copy engine reading its pages in place (default 0)",
    "STRATA_CLUSTER": "where `strata run --nproc N` places its ranks: local (processes on this machine, the "
    "default), ray (a Ray actor per rank on a local or running cluster) or ray://host:port (Ray Client)",
    "NCCL_ALGO": "NCCL's variable: the all_reduce algorithms strata.libs.nccl's tuner may pick, a comma list of "
    "ring, tree, nvls, or ^list to exclude them, case-insensitive (default: all three)",
}

_OFF = frozenset({"0", "off", "false", "no", "none"})


@dataclass(frozen=True)
class Settings:
    """A snapshot of strata's configuration, read from the environment by `settings()`.

    Attributes:
        gpu: model of the virtual GPU (`STRATA_GPU`), lower-case, one of `GPUS`.
        cache_dir: where compiled PTX is cached (`STRATA_CACHE_DIR`); created on first write.
        debug: verbosity level 0-4 (`STRATA_DEBUG`).
        kernel_timeout: seconds of wall-clock time one kernel may run (`STRATA_KERNEL_TIMEOUT`, 0 = no
            limit); the engine raises LaunchTimeout past it, the way a watchdog kills a hung kernel.
        launch_budget: an optional cap on thread-instructions per launch (`STRATA_LAUNCH_BUDGET`,
            0 = unlimited, the default); LaunchTimeout past it.
        chunk_lanes: how many threads the emulator runs at once as one NumPy vector
            (`STRATA_CHUNK_LANES`); trades memory for speed, never changes results.
        nvcc: resolved path to nvcc, or None when absent or disabled (`STRATA_NVCC`).
        nvcc_chosen: `STRATA_NVCC` is set: `strata nvcc` then uses `nvcc` (or none, when disabled) instead
            of the nvcc of the `programs` extra's wheels.
            nvcc is optional: strata only uses it to cross-check, never to run.
        devices: model of each virtual GPU present, by device index (`STRATA_DEVICES`).
        launch_blocking: launches and async copies complete before returning (`STRATA_LAUNCH_BLOCKING`).
        default_stream: 'legacy' or 'per-thread' semantics of the default stream (`STRATA_DEFAULT_STREAM`).
        executor: 'native' or 'reference' (`STRATA_EXECUTOR`): which executor runs kernels.
        native_after_ms: the native executor compiles a kernel once the reference executor's time on it,
            spent plus predicted for the launch at hand, reaches this (`STRATA_NATIVE_AFTER_MS`; 0 = at once).
        native_opt: 'auto', '0' or '3' (`STRATA_NATIVE_OPT`): whether the native executor's code starts at LLVM
            -O0 and is optimized in the background when hot (auto), stays at -O0, or is -O3 from the start.
        cluster: None (local rank processes), '' (Ray: `ray.init()` of a local or running cluster) or a
            'ray://host:port' client address (`STRATA_CLUSTER`).
        nccl_algo: `NCCL_ALGO` as set (NCCL's own variable: the algorithms its tuner may choose), or None;
            strata.libs.nccl parses and checks it when a collective needs it, so a value only real NCCL
            knows does not stop the rest of strata.

    Example:
        >>> s = Settings()
        >>> (s.gpu, s.debug, s.chunk_lanes)
        ('h200', 0, 65536)
    """

    gpu: str = DEFAULT_GPU
    cache_dir: Path = Path("~/.cache/strata/ptx").expanduser()
    debug: int = 0
    kernel_timeout: float = DEFAULT_KERNEL_TIMEOUT
    launch_budget: int = DEFAULT_LAUNCH_BUDGET
    chunk_lanes: int = DEFAULT_CHUNK_LANES
    nvcc: Path | None = None
    nvcc_chosen: bool = False
    devices: tuple[str, ...] = (DEFAULT_GPU,)
    launch_blocking: bool = False
    default_stream: str = "legacy"
    executor: str = DEFAULT_EXECUTOR
    native_after_ms: int = DEFAULT_NATIVE_AFTER_MS
    native_opt: str = NATIVE_OPT_MODES[0]
    cluster: str | None = None
    nccl_algo: str | None = None


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read strata's configuration from the environment (or `environ`, for tests).

    Args:
        environ: mapping to read instead of `os.environ`.

    Returns:
        A frozen `Settings`.

    Raises:
        ValueError: a variable is set to a value outside its documented range; the message names it.

    Example:
        >>> settings({"STRATA_GPU": "H100", "STRATA_DEBUG": "2"}).gpu
        'h100'
        >>> settings({"STRATA_DEBUG": "9"})
        Traceback (most recent call last):
        ...
        ValueError: STRATA_DEBUG must be an integer in 0..4, got '9'
    """
    if environ is None:
        # Cached on the variables read, so a launch pays a dict lookup, not a PATH search.
        # os.environ's raw bytes mapping makes the key ~1 us instead of ~25 us of str decoding.
        raw = getattr(os.environ, "_data", None)
        if isinstance(raw, dict):
            return _cached(tuple(map(raw.get, _READ_RAW)))  # (map: no Python frame per variable)
        return _read(os.environ)
    return _read(environ)


_READ = (*ENV_VARS, "XDG_CACHE_HOME", "HOME", "PATH")
_READ_RAW = tuple(os.fsencode(k) for k in _READ)


@functools.lru_cache(maxsize=16)
def _cached(values: tuple[bytes | str | None, ...]) -> Settings:
    return _read(os.environ)


def _read(env: Mapping[str, str]) -> Settings:
    gpu = _gpu(env)
    return Settings(
        gpu=gpu,
        cache_dir=_cache_dir(env),
        debug=_int(env, "STRATA_DEBUG", 0, lo=0, hi=MAX_DEBUG),
        kernel_timeout=_seconds(env, "STRATA_KERNEL_TIMEOUT", DEFAULT_KERNEL_TIMEOUT),
        launch_budget=_int(env, "STRATA_LAUNCH_BUDGET", DEFAULT_LAUNCH_BUDGET, lo=0),
        chunk_lanes=_int(env, "STRATA_CHUNK_LANES", DEFAULT_CHUNK_LANES, lo=1),
        nvcc=_nvcc(env),
        nvcc_chosen=env.get("STRATA_NVCC") is not None,
        devices=_devices(env, gpu),
        launch_blocking=_int(env, "STRATA_LAUNCH_BLOCKING", 0, lo=0, hi=1) == 1,
        default_stream=_choice(env, "STRATA_DEFAULT_STREAM", ("legacy", "per-thread")),
        executor=_choice(env, "STRATA_EXECUTOR", (DEFAULT_EXECUTOR, *(e for e in EXECUTORS if e != DEFAULT_EXECUTOR))),
        native_after_ms=_int(env, "STRATA_NATIVE_AFTER_MS", DEFAULT_NATIVE_AFTER_MS, lo=0),
        native_opt=_choice(env, "STRATA_NATIVE_OPT", NATIVE_OPT_MODES),
        cluster=_cluster(env),
        nccl_algo=env.get("NCCL_ALGO", "").strip() or None,
    )


def _cluster(env: Mapping[str, str]) -> str | None:
    value = env.get("STRATA_CLUSTER", "").strip()
    if not value or value == "local":
        return None
    if value == "ray":
        return ""
    if value.startswith("ray://") and len(value) > len("ray://"):
        return value
    raise ValueError(f"STRATA_CLUSTER must be 'local', 'ray' or 'ray://host:port', got {value!r}")


# --- helpers ------------------------------------------------------------------------------------------


def _gpu(env: Mapping[str, str]) -> str:
    raw = env.get("STRATA_GPU", "").strip()
    gpu = raw.lower() or DEFAULT_GPU
    if gpu not in GPUS:
        raise ValueError(f"STRATA_GPU must be one of {', '.join(GPUS)}, got {raw!r}")
    return gpu


def _devices(env: Mapping[str, str], gpu: str) -> tuple[str, ...]:
    raw = env.get("STRATA_DEVICES", "").strip()
    if not raw:
        return (gpu,)
    out: list[str] = []
    for item in raw.lower().replace(" ", "").split(","):
        count, _, model = item.partition("x") if item.split("x", 1)[0].isdigit() else ("1", "", item)
        if model not in GPUS or not count.isdigit() or not 1 <= int(count) <= 64:
            raise ValueError(f"STRATA_DEVICES must list models from {', '.join(GPUS)} (e.g. 'h200,h100' or "
                             f"'4xh200'), got {raw!r}")
        out += [model] * int(count)
    if len(out) > 64:
        raise ValueError(f"STRATA_DEVICES lists {len(out)} devices; at most 64 are supported")
    return tuple(out)


def _choice(env: Mapping[str, str], name: str, options: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return options[0]
    if raw not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got {raw!r}")
    return raw


def _cache_dir(env: Mapping[str, str]) -> Path:
    if raw := env.get("STRATA_CACHE_DIR", "").strip():
        return Path(raw).expanduser()
    # XDG says a relative XDG_CACHE_HOME is invalid and must be ignored.
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path("~/.cache").expanduser()
    return base / "strata" / "ptx"


def _int(env: Mapping[str, str], name: str, default: int, *, lo: int, hi: int | None = None) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    text = raw.replace("_", "")
    try:
        # Accept 5e9 as well as 5_000_000_000, but only when the value is integral.
        value = int(text) if text.lstrip("+-").isdigit() else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or value < lo or (hi is not None and value > hi):
        rng = f"in {lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer {rng}, got {raw!r}")
    return int(value)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw.replace("_", ""))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a number of seconds >= 0 (0 = off), got {raw!r}")
    return value


def _nvcc(env: Mapping[str, str]) -> Path | None:
    raw = env.get("STRATA_NVCC")
    if raw is not None and raw.strip().lower() in _OFF | {""}:
        return None
    # Resolved again whenever PATH or STRATA_NVCC change (settings() caches on them).
    found = shutil.which(raw.strip() if raw is not None else "nvcc", path=env.get("PATH", os.defpath))
    if found is None and raw is not None:
        raise ValueError(f"STRATA_NVCC must name an executable nvcc (or 0 to disable), got {raw!r}")
    return Path(found) if found else None
