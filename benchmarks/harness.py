# Shared machinery of the strata benchmarks: the timing rule, the result record, the table, the
# machine description, and how the strata side is imported and guarded. The timing rule written here
# (compile and one warm run excluded, best of N) is the one docs/benchmarks.md states.
# Benchmarks never run in the test suite; they are scripts (`make bench` -> benchmarks/run_all.py).

from __future__ import annotations

import datetime
import importlib
import importlib.util
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
BENCH_DIR = Path(__file__).resolve().parent

# Result states. ERROR means the benchmark could not produce a figure (strata missing or raising);
# FAIL means it produced one that misses the target or computed a wrong answer; SKIP means an optional
# tool the row needs is not installed (nvcc, clang-19), with the reason in the row: not a failure.
PASS, FAIL, ERROR, SKIP = "PASS", "FAIL", "ERROR", "SKIP"
NO_TARGET = "none (reported)"  # a row measured and shown, not judged


# What the benchmarks call on strata.cuda (the user contract in the team brief).
CONTRACT = ("compile", "to_device", "zeros")


class StrataUnavailable(RuntimeError):
    """strata could not run a benchmark step; the message names the step and the cause."""


@dataclass
class BenchResult:
    """One row of the results table.

    `ratio` follows `ratio_def` (e.g. "peer/strata"), so every target reads as `ratio <op> bound` or,
    for absolute targets, `value <op> bound` with `value` in `strata_value`.
    """

    name: str
    description: str
    target: str  # human-readable, e.g. ">= 1000x (speedup)"
    status: str = ERROR
    strata_value: float | None = None  # seconds, or another unit named in `strata_unit`
    strata_unit: str = "s"
    peer_name: str | None = None
    peer_value: float | None = None  # seconds
    ratio: float | None = None
    ratio_def: str | None = None
    correct: bool | None = None  # strata's answer matched the NumPy oracle
    note: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def add_note(self, text: str) -> None:
        self.note = "; ".join(filter(None, [self.note, text]))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge(result: BenchResult, meets_target: bool) -> BenchResult:
    """Set `status` from correctness first (a wrong answer FAILs whatever its speed), then the target."""
    if result.correct is False:
        result.status = FAIL
        result.note = "; ".join(filter(None, ["wrong result vs NumPy", result.note]))
    else:
        result.status = PASS if meets_target else FAIL
    return result


def judge_slowdown(result: BenchResult, strata: dict[str, Any], target: float) -> BenchResult:
    """A ratio row: strata's best wall time `strata["wall_s"]` over the peer's, judged against `target`
    (the largest slowdown that passes)."""
    result.strata_value, result.correct = strata["wall_s"], strata["correct"]
    result.details["strata"] = strata
    result.ratio = result.strata_value / result.peer_value
    return judge(result, result.ratio <= target)


# --- timing -------------------------------------------------------------------------------------


def best_of(fn: Callable[[], object], repeats: int, warmups: int = 1) -> tuple[float, list[float]]:
    """Run `fn` `warmups` times untimed, then `repeats` times timed; return (best, all timed runs)."""
    if repeats < 1:
        raise ValueError(f"[best_of] repeats must be >= 1, got {repeats}")
    for _ in range(warmups):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times


# --- the strata side ----------------------------------------------------------------------------


def import_strata_cuda() -> ModuleType:
    """Import `strata.cuda`, from the working tree if it is not installed; raise StrataUnavailable."""
    # NOTE: the benchmark measures the tree it sits in, so src/ goes first when strata isn't installed.
    if importlib.util.find_spec("strata") is None and str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    try:
        cuda = importlib.import_module("strata.cuda")
    except Exception as e:
        raise StrataUnavailable(
            f"strata.cuda is not importable ({type(e).__name__}: {e}); "
            f"run from {REPO} with PYTHONPATH=src or pip install -e ."
        ) from e
    missing = [name for name in CONTRACT if not hasattr(cuda, name)]
    if missing:
        where = getattr(cuda, "__file__", None) or list(getattr(cuda, "__path__", []))
        raise StrataUnavailable(
            f"strata.cuda (at {where}) lacks {', '.join(missing)} of the user contract; "
            "is the emulator built yet?"
        )
    return cuda


@contextmanager
def strata_step(bench: str, step: str) -> Iterator[None]:
    """Turn any exception inside a strata step into StrataUnavailable naming the benchmark and step."""
    try:
        yield
    except StrataUnavailable:
        raise
    except Exception as e:
        hint = (
            " (raise STRATA_KERNEL_TIMEOUT for benchmark runs)" if type(e).__name__ == "LaunchTimeout" else ""
        )
        raise StrataUnavailable(f"[{bench}] strata {step} failed: {type(e).__name__}: {e}{hint}") from e


@contextmanager
def executor(name: str, opt: str = "3") -> Iterator[None]:
    """Run the block's launches on one executor: 'reference' or 'native' (which then compiles each kernel at
    its first launch, STRATA_NATIVE_AFTER_MS=0, so a benchmark's warm-up launch pays the compile). Native code
    is compiled at `opt` (STRATA_NATIVE_OPT): -O3 by default, the code a hot kernel runs once the background
    optimizer has recompiled it, so that timed launches measure that code and not a moment of the tier-up;
    'auto' times what the first launches of a process run. The variables are read at each launch; the
    previous values come back afterwards."""
    saved = {k: os.environ.get(k) for k in ("STRATA_EXECUTOR", "STRATA_NATIVE_AFTER_MS", "STRATA_NATIVE_OPT")}
    os.environ["STRATA_EXECUTOR"] = name
    if name == "native":
        os.environ["STRATA_NATIVE_AFTER_MS"] = "0"
        os.environ["STRATA_NATIVE_OPT"] = opt
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def settle_native(timeout_s: float = 600.0) -> None:
    """Wait for the native executor's background -O3 recompiles (hw/native/optimizer.py) queued so far, so that
    they do not run beside what is timed next; nothing when the native executor was never imported."""
    optimizer = sys.modules.get("strata.hw.native.optimizer")
    if optimizer is not None:
        optimizer.settle(timeout_s)


def synchronize(cuda: ModuleType) -> None:
    """Wait for the device if strata exposes a way to; launches in the emulator are synchronous today."""
    sync = getattr(cuda, "synchronize", None)
    if callable(sync):
        sync()
        return
    current = getattr(cuda, "current_device", None)
    dev_sync = getattr(current(), "synchronize", None) if callable(current) else None
    if callable(dev_sync):
        dev_sync()


def report_summary(report: object) -> dict[str, Any]:
    """The JSON-friendly parts of a LaunchReport (wall time, counters, modeled timing) we can find."""
    out: dict[str, Any] = {}
    wall = getattr(report, "wall_time_s", None)
    if isinstance(wall, (int, float)):
        out["report_wall_time_s"] = float(wall)
    counters = getattr(report, "counters", None)
    if counters is not None:
        tti = getattr(counters, "total_thread_instructions", None)
        if isinstance(tti, (int, np.integer)):
            out["total_thread_instructions"] = int(tti)
        for name in ("total_warp_instructions", "simt_efficiency", "threads_launched", "blocks_launched"):
            v = getattr(counters, name, None)
            if isinstance(v, (int, float, np.integer, np.floating)):
                out[name] = v.item() if isinstance(v, np.generic) else v
    modeled_s = getattr(report, "modeled_time_s", None)
    if isinstance(modeled_s, (int, float)):
        out["modeled_time_s"] = float(modeled_s)
    modeled = getattr(report, "modeled", None)
    if modeled is not None:
        as_dict = getattr(modeled, "as_dict", None)
        try:
            out["modeled"] = as_dict() if callable(as_dict) else repr(modeled)[:500]
        except Exception as e:  # a report field must never sink the benchmark
            out["modeled"] = f"<unreadable: {type(e).__name__}: {e}>"
    return out


# --- machine description ------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None  # not a repository, or no commit yet
    return out.stdout.strip() or None


def machine_info() -> dict[str, Any]:
    """Platform, CPU model, core counts, memory, Python and library versions, git commit."""
    mem_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except (OSError, ValueError):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,  # what `nproc` prints
        "mem_total_gib": round(mem_kb / 2**20, 1) if mem_kb else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": _version("numba"),
        "numba_cuda": _version("numba-cuda"),
        "git_commit": _git_commit(),
    }


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


# --- output -------------------------------------------------------------------------------------


def _fmt_value(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    if unit == "s":
        return f"{v * 1e3:.3f} ms" if v < 1 else f"{v:.2f} s"
    return f"{v:.3g} {unit}"


def format_table(results: list[BenchResult]) -> str:
    """A fixed-width text table: benchmark, strata, peer, ratio, target, result."""
    header = ("benchmark", "strata", "peer", "ratio", "target", "result")
    rows = []
    for r in results:
        peer = "-" if r.peer_value is None else f"{_fmt_value(r.peer_value, 's')} ({r.peer_name})"
        ratio = "-" if r.ratio is None else f"{r.ratio:.3g} ({r.ratio_def})"
        rows.append((r.name, _fmt_value(r.strata_value, r.strata_unit), peer, ratio, r.target, r.status))
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in (header, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"  {r.name}: {r.note}" for r in results if r.note]
    return "\n".join(lines + (["", "notes:", *notes] if notes else []))


def log(msg: str) -> None:
    """Progress goes to stderr so stdout holds only the table (or JSON)."""
    print(msg, file=sys.stderr, flush=True)
