# A seeded, bounded mutation fuzzer of the PTX front end, the JIT and the engine (issue 12, item 4): real
# NVRTC PTX of ten varied kernels is mutated (lines deleted, duplicated, swapped; truncation; tokens
# flipped; numbers spliced with 0, -1, 2^31, 2^64-1, 2^64 and huge register counts; random bytes) and
# each mutant is parsed, loaded (JIT) and, when it loads, launched on a small grid. Any exception that
# is not one of strata's typed errors (strata.errors), a case that runs past its time limit, or a
# crash of the interpreter fails the test. The cases run in a child process so a hang or a crash is
# caught too; the whole test stays under 45 s.
"""PTX robustness: mutants of real PTX raise strata's typed errors, in bounded time, never crash."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

SEED = 20261125
CASES = 600  # mutants tried at most (the time budget below may stop earlier)
TIME_BUDGET_S = 30.0  # mutants stop starting after this long in the child
CHILD_TIMEOUT_S = 44.0  # the child is killed (and the test fails) past this
CASE_LIMIT_S = 4.0  # one mutant's parse + load (a launch has the kernel watchdog)
KERNEL_TIMEOUT_S = "1.5"  # STRATA_KERNEL_TIMEOUT for the mutants' launches

KERNELS = {
    "saxpy": r"""
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}""",
    "block_reduce": r"""
extern "C" __global__ void block_reduce(const float* x, float* out, int n) {
    __shared__ float s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t == 0) out[blockIdx.x] = s[0];
}""",
    "warp_ops": r"""
extern "C" __global__ void warp_ops(const int* x, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    unsigned b = __ballot_sync(0xffffffffu, x[i] > 0);
    out[i] = v + __popc(b) + __any_sync(0xffffffffu, x[i] == 3);
}""",
    "histogram": r"""
extern "C" __global__ void histogram(const unsigned char* x, unsigned* bins, int n) {
    __shared__ unsigned local[64];
    int t = threadIdx.x;
    if (t < 64) local[t] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[x[i] & 63], 1u);
    __syncthreads();
    if (t < 64) atomicAdd(&bins[t], local[t]);
}""",
    "calls": r"""
struct P { float x, y; int k; };
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ P mix(P a, float s) { P r; r.x = a.x * s; r.y = a.y + s; r.k = a.k ^ 5; return r; }
extern "C" __global__ void calls(P p, int* out, float* f) {
    int i = threadIdx.x;
    P q = mix(p, (float)i);
    out[i] = fib(i & 7) + q.k;
    f[i] = q.x + q.y;
}""",
    "math": r"""
extern "C" __global__ void math(const float* x, double* d, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    y[i] = sqrtf(fabsf(v)) + expf(-v * v) + sinf(v) / (1.0f + v * v) + fmaf(v, v, 1.0f);
    d[i] = sqrt((double)fabsf(v) + 1.0) * log1p((double)v * v) + (double)i / 3.0;
}""",
    "halves": r"""
#include <cuda_fp16.h>
extern "C" __global__ void halves(const __half2* a, const __half2* b, __half2* c, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 r = __hfma2(a[i], b[i], __float2half2_rn(0.5f));
    c[i] = __hmax2(r, __hneg2(r));
    f[i] = __low2float(r) + __high2float(a[i]);
}""",
    "bits": r"""
extern "C" __global__ void bits(const unsigned long long* x, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long v = x[i];
    int buf[8];
    for (int k = 0; k < 8; ++k) buf[k] = (int)(v >> (8 * k)) * (k + 1);
    unsigned long long r = __umul64hi(v, 0x9E3779B97F4A7C15ull) ^ __brevll(v) ^ (unsigned long long)__clzll(v);
    switch ((int)(v & 7)) { case 0: r += buf[1]; break; case 1: r ^= buf[3]; break; case 2: r -= buf[5];
        case 3: r *= 3; break; default: r += __popcll(v); }
    out[i] = r + buf[(int)(v % 8)];
}""",
    "video": r"""
extern "C" __global__ void video(const unsigned* a, const unsigned* b, unsigned* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    o[i] = __vsadu4(a[i], b[i]) + __vabsdiffu4(a[i], b[i]) + __byte_perm(a[i], b[i], 0x5140) + __vsadu2(a[i], b[i]);
}""",
    "grid2d": r"""
extern "C" __global__ void grid2d(const float* a, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int k = 0; k < w; ++k) {
        if (a[y * w + k] < -100.0f) break;
        acc = fmaxf(acc, a[y * w + k] * (k == x ? 2.0f : 1.0f));
    }
    out[y * w + x] = acc > 0.0f ? acc : -acc;
}""",
}

SPECIAL_NUMBERS = ["0", "-1", "1", "2147483648", "2147483647", "4294967295", "18446744073709551615",
                   "18446744073709551616", "-9223372036854775808", "99999999999999999999999999", "0x7fffffff",
                   "0f7F800000", "0fFFFFFFFF", "0d7FF8000000000000", "1e308", "3.5", "0777", "09"]
SPECIAL_TOKENS = ["%r<2000000000>", "%r<65537>", "{", "}", ";", "[", "]", "(", ")", ",", ".reg", ".b128", ".v8",
                  ".v4", ".pred", "%tid.x", "%laneid", "_", "@%p1", "@!%p1", "$L__BB0_1", "bra", "ret;", "exit;",
                  "call", ".param", ".local", ".shared", ".entry", ".func", ".loc", ".pragma", "//", "/*",
                  "\"", ":", "-", "+", "|", "!", "%reserved_smem_offset_1", "vadd4.u32.u32.u32", ".b0", ".h10"]
SUFFIXES = [".u32", ".s32", ".f32", ".f64", ".b64", ".u8", ".s8", ".b128", ".v8", ".v2", ".f16x2", ".pred", ".sat",
            ".rn", ".ftz", ".global", ".shared", ".local", ".param", ".const", ".x", ".wide", ".hi", ".cc", ""]


# ------------------------------------------------------------------------------------------------------
# Mutations
# ------------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[%$.A-Za-z_][A-Za-z0-9_$.%:]*|0[fFdDxX][0-9a-fA-F]+|\d+|[{}()\[\];,@!<>|+-]")


def _tokens(text: str) -> list[re.Match[str]]:
    return list(_TOKEN.finditer(text))


def mutate(rng: random.Random, text: str, pool: list[str]) -> tuple[str, list[str]]:
    """Apply one to three mutations; returns the mutant and what was done (for a reproduction)."""
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        lines = text.split("\n")
        kind = rng.choice(("delete", "duplicate", "swap", "truncate", "token", "number", "regcount", "bytes",
                           "suffix", "token", "number", "delete"))
        if kind == "delete" and len(lines) > 1:
            k = rng.randrange(len(lines))
            done.append(f"delete line {k + 1}")
            del lines[k]
            text = "\n".join(lines)
        elif kind == "duplicate":
            k = rng.randrange(len(lines))
            done.append(f"duplicate line {k + 1}")
            lines.insert(k, lines[k])
            text = "\n".join(lines)
        elif kind == "swap" and len(lines) > 1:
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            done.append(f"swap lines {a + 1} and {b + 1}")
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif kind == "truncate":
            k = rng.randrange(len(text))
            done.append(f"truncate at {k}")
            text = text[:k]
        elif kind in ("token", "number", "suffix"):
            toks = _tokens(text)
            if kind == "number":
                toks = [t for t in toks if t.group()[0].isdigit()] or toks
            if kind == "suffix":
                toks = [t for t in toks if "." in t.group()[1:]] or toks
            if not toks:
                continue
            t = rng.choice(toks)
            if kind == "number":
                new = rng.choice(SPECIAL_NUMBERS)
            elif kind == "suffix":
                parts = t.group().split(".")
                j = rng.randrange(1, len(parts)) if len(parts) > 1 else 0
                parts[j] = rng.choice(SUFFIXES).lstrip(".") or parts[j]
                new = ".".join(p for p in parts if p)
            else:
                new = rng.choice(SPECIAL_TOKENS + SPECIAL_NUMBERS + pool)
            done.append(f"replace {t.group()!r} at {t.start()} with {new!r}")
            text = text[:t.start()] + new + text[t.end():]
        elif kind == "regcount":
            counts = list(re.finditer(r"<(\d+)>", text))
            if not counts:
                continue
            t = rng.choice(counts)
            new = rng.choice(["<2000000000>", "<65536>", "<65537>", "<0>", "<-1>", "<4294967296>", "<1>"])
            done.append(f"register count {t.group()} -> {new}")
            text = text[:t.start()] + new + text[t.end():]
        elif kind == "bytes":
            k = rng.randrange(len(text) + 1)
            blob = "".join(chr(rng.choice((0, 1, 9, 10, 13, 27, 34, 37, 46, 59, 92, 123, 125, 127, 0xE9, 0x2028,
                                           rng.randrange(32, 127)))) for _ in range(rng.randrange(1, 6)))
            done.append(f"insert {blob!r} at {k}")
            text = text[:k] + blob + text[k:]
    return text, done


# ------------------------------------------------------------------------------------------------------
# The child: runs the cases, reports JSON
# ------------------------------------------------------------------------------------------------------


class _CaseTimeout(BaseException):
    """Raised by the per-case alarm (a BaseException so no `except Exception` in strata swallows it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _CaseTimeout()


def _launch_all(mod: Any, module_ir: Any, cuda: Any, np: Any, stats: dict[str, float]) -> None:
    from strata.cuda.module import pack_arguments

    for name in module_ir.kernels[:2]:
        params = module_ir.functions[name].params
        args: list[Any] = []
        for p in params:
            if p.type == "b8" and p.size > 1:
                args.append(bytes(p.size))
            elif p.size == 8 and p.type in ("u64", "s64", "b64"):
                args.append(cuda.to_device(np.zeros(4096, np.uint8)))
            elif p.type.startswith("f"):
                args.append(1.5)
            else:
                args.append(16)
        try:
            pack_arguments(name, params, args)
        except TypeError:  # the mutant's parameter list is one the host API cannot fill; not a device matter
            stats["unlaunchable"] += 1
            continue
        fn = mod.get_function(name)
        grid = (2, 2, 1) if name == "grid2d" else (2, 1, 1)
        fn.launch(grid, (64, 1, 1), tuple(args))
        cuda.synchronize()
        stats["launched"] += 1


def run_cases(corpus: list[str], seed: int, cases: int, budget: float) -> dict[str, Any]:
    """Mutate and run up to `cases` mutants; returns counts and every failure found."""
    import numpy as np

    import strata.cuda as cuda
    from strata import errors
    from strata.hw.ptx.parser import parse

    typed = tuple(v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)
                  and v.__module__ == errors.__name__)
    pool = sorted({t.group() for text in corpus for t in _tokens(text)})
    rng = random.Random(seed)
    counted = ("cases", "parsed", "loaded", "launched", "typed_errors", "unlaunchable")
    stats: dict[str, float] = dict.fromkeys(counted, 0)
    failures: list[dict[str, Any]] = []
    signal.signal(signal.SIGALRM, _alarm)
    start = time.monotonic()
    for case in range(cases):
        if time.monotonic() - start > budget:
            break
        src = rng.randrange(len(corpus))
        text, done = mutate(rng, corpus[src], pool)
        stats["cases"] += 1
        print(f"case {case}: kernel {src}: {done}", file=sys.stderr, flush=True)
        stage = "parse"
        t0 = time.monotonic()
        try:
            signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT_S)
            module_ir = parse(text)
            stats["parsed"] += 1
            stage = "load"
            mod = cuda.Module.from_ptx(text)
            stats["loaded"] += 1
            signal.setitimer(signal.ITIMER_REAL, 0)
            stage = "launch"
            _launch_all(mod, module_ir, cuda, np, stats)
        except _CaseTimeout:
            failures.append({"case": case, "kernel": src, "mutations": done, "stage": stage,
                             "error": f"no answer within {CASE_LIMIT_S} s"})
        except typed as e:
            stats["typed_errors"] += 1
            if isinstance(e, errors.CudaError) and stage == "launch":
                cuda.Device(0).reset()  # a fault is sticky for the context; start the next case clean
        except BaseException as e:  # noqa: BLE001 - the point: anything untyped is a finding
            failures.append({"case": case, "kernel": src, "mutations": done, "stage": stage,
                             "error": f"{type(e).__name__}: {str(e)[:300]}",
                             "where": traceback.format_exc().splitlines()[-6:]})
            with contextlib.suppress(Exception):
                cuda.Device(0).reset()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if time.monotonic() - t0 > CASE_LIMIT_S * 2:
            failures.append({"case": case, "kernel": src, "mutations": done, "stage": stage,
                             "error": f"took {time.monotonic() - t0:.1f} s"})
    stats["seconds"] = round(time.monotonic() - start, 1)
    return {"stats": stats, "failures": failures}


# ------------------------------------------------------------------------------------------------------
# The test
# ------------------------------------------------------------------------------------------------------


def _corpus() -> list[str]:
    from strata.cuda.compiler import compile_to_ptx

    return [compile_to_ptx(src, name=f"{name}.cu").ptx for name, src in KERNELS.items()]


def test_mutated_ptx_raises_only_typed_errors_in_bounded_time() -> None:
    corpus = _corpus()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.json"
        path.write_text(json.dumps(corpus))
        env = dict(os.environ, STRATA_KERNEL_TIMEOUT=KERNEL_TIMEOUT_S, PYTHONHASHSEED="0")
        try:
            proc = subprocess.run([sys.executable, __file__, str(path), str(SEED), str(CASES), str(TIME_BUDGET_S)],
                                  capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired as e:
            last = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            raise AssertionError(f"the fuzzer hung; last case started:\n{last.strip().splitlines()[-1:]}") from None
    last_case = proc.stderr.strip().splitlines()[-3:]
    assert proc.returncode == 0, f"the fuzzer's process died (code {proc.returncode}); last lines: {last_case}"
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    stats, failures = report["stats"], report["failures"]
    # the cases reached every stage, so the fuzzer tests more than the parser's first line
    assert stats["cases"] >= 100 and stats["loaded"] >= 10 and stats["launched"] >= 5, stats
    assert not failures, f"{len(failures)} mutants broke the front end ({stats}):\n" + \
        "\n".join(json.dumps(f) for f in failures[:8])


if __name__ == "__main__":  # the child process
    _corpus_texts = json.loads(Path(sys.argv[1]).read_text())
    _report = run_cases(_corpus_texts, int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    print(json.dumps(_report))
