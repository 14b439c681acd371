# Loading a 1 GiB safetensors file into device memory: strata's direct path (GPUDirect Storage role:
# O_DIRECT reads straight into the virtual GPU's HBM, no host staging) and bounce path (reads into a
# pinned host buffer + cudaMemcpy), against the `safetensors` library's own NumPy loader
# (`safetensors.numpy.load_file`, which loads to host memory only) on the same file in the same run.
#
# Each loader is timed with a cold page cache (the file's pages dropped with posix_fadvise(DONTNEED)
# before every timed run: weights read from the drive, the model-loading case GDS is for) and warm (the
# file already in the page cache, which only buffered readers can use). Target: direct wall time (cold)
# <= the safetensors loader's (cold). Every strata load is checked byte for byte against the library's
# arrays (so the direct and bounce paths also agree with each other). Modeled times come from
# strata.hw.storage_model (NVMe Gen4 x4 + PCIe), reported beside the wall times.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_storage.py [--mib 1024] [--repeat 2] [--dir /tmp]

from __future__ import annotations

import argparse
import gc
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from harness import BenchResult, StrataUnavailable, format_table, import_strata_cuda, judge, log, strata_step

SIZE_MIB = 1024
TENSOR_MIB = 16  # most tensors are 16 MiB (a 2048 x 2048 float32 weight); a few small ones sit between
GB = 1e9


def write_file(path: Path, mib: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Write a `mib` MiB safetensors file of float32 weights plus small float16 / int64 tensors."""
    import safetensors.numpy as st_numpy

    rng = np.random.default_rng(seed)
    block = rng.standard_normal(TENSOR_MIB * 2**20 // 4).astype(np.float32)
    arrays: dict[str, np.ndarray] = {}
    n_big = max(1, mib // TENSOR_MIB)
    for i in range(n_big):
        arrays[f"layers.{i}.weight"] = (block + np.float32(i)).reshape(2048, -1)
        arrays[f"layers.{i}.bias"] = rng.standard_normal(2048).astype(np.float16)
    arrays["step"] = np.array([12345], dtype=np.int64)
    st_numpy.save_file(arrays, str(path))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # clean pages, so dropping them from the cache works
    finally:
        os.close(fd)
    return arrays


def drop_cache(path: Path) -> None:
    """Evict this file's pages from the page cache (only this file; nothing system-wide)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm_cache(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def run(mib: int, repeats: int, directory: Path) -> list[BenchResult]:
    """Write the file, then per cache state run the three loaders in turn `repeats` times (interleaved,
    so all three see the same machine load; best kept), checking every strata load."""
    import safetensors.numpy as st_numpy

    path = directory / f"strata-bench-{os.getpid()}.safetensors"
    rows: list[BenchResult] = []
    try:
        log(f"[storage] writing {mib} MiB to {path}")
        write_file(path, mib)
        size = path.stat().st_size
        try:
            import_strata_cuda()
            from strata.storage import read_tensors as load_safetensors
        except StrataUnavailable as e:
            r = BenchResult("load_safetensors", "strata.storage", "-")
            r.add_note(str(e))
            return [r]
        oracle = st_numpy.load_file(str(path))
        loaders = {"peer": lambda: st_numpy.load_file(str(path)),
                   "direct": lambda: load_safetensors(path, direct=True),
                   "bounce": lambda: load_safetensors(path, direct=False)}
        results: dict[tuple[str, bool], dict[str, Any]] = {}
        for cold in (True, False):
            tag = "cold" if cold else "warm"
            for rep in range(repeats):
                for kind, fn in loaders.items():
                    log(f"[storage] {tag} run {rep + 1}/{repeats}: {kind}")
                    gc.collect()
                    drop_cache(path) if cold else warm_cache(path)
                    with strata_step("storage", f"load ({kind})"):
                        t0 = time.perf_counter()
                        out = fn()
                        wall = time.perf_counter() - t0
                    res = results.setdefault((kind, cold), {"times_s": [], "correct": True})
                    res["times_s"].append(wall)
                    if kind != "peer":
                        with strata_step("storage", f"check ({kind})"):
                            res["correct"] &= set(out) == set(oracle) and all(
                                out[n].array.get().tobytes() == oracle[n].tobytes() for n in oracle)
                        rep_ = out.report
                        res.update(mode=rep_.mode, modeled_s=rep_.modeled_s, host_copy_bytes=rep_.host_copy_bytes,
                                   requests=rep_.requests, file_bytes=rep_.file_bytes)
                    del out
        del oracle
        for cold in (True, False):
            tag = "cold" if cold else "warm"
            peer = min(results[("peer", cold)]["times_s"])
            for kind in ("direct", "bounce"):
                s = results[(kind, cold)]
                wall = min(s["times_s"])
                target = "<= 1x (strata/peer)" if (kind, cold) == ("direct", True) else "none (reported)"
                r = BenchResult(f"load_safetensors {kind} ({mib} MiB, {tag} cache)",
                                f"safetensors file -> device memory by the {kind} path", target,
                                strata_value=wall, peer_name="safetensors.numpy.load_file, to host",
                                peer_value=peer, ratio=wall / peer, ratio_def="strata/peer",
                                correct=s["correct"], details={"strata": s, "peer": results[("peer", cold)],
                                                                "file_bytes": size})
                r.add_note(f"wall {size / GB / wall:.2f} GB/s; modeled {s['modeled_s'] * 1e3:.1f} ms = "
                           f"{size / GB / s['modeled_s']:.2f} GB/s; mode {s['mode']}; host copies "
                           f"{s['host_copy_bytes'] / size:.2f}/byte; {s['requests']} requests; runs "
                           f"{', '.join(f'{t:.2f}' for t in s['times_s'])} s vs peer "
                           f"{', '.join(f'{t:.2f}' for t in results[('peer', cold)]['times_s'])} s")
                judge(r, r.ratio is not None and r.ratio <= 1.0 if target.startswith("<=") else True)
                rows.append(r)
        return rows
    finally:
        path.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description="safetensors -> GPU loading: direct vs bounce vs the library.")
    parser.add_argument("--mib", type=int, default=SIZE_MIB, help="file size in MiB")
    parser.add_argument("--repeat", type=int, default=3, help="timed loads per loader and cache state (best kept)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp"), help="where to write the file")
    args = parser.parse_args()
    results = run(args.mib, args.repeat, args.dir)
    print(format_table(results))
    return 0 if all(r.status == "PASS" for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
