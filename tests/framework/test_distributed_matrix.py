"""The collectives matrix of issue 18's tests: every collective, every NCCL data type and every size class
against NumPy on 2, 4 and 8 ranks, with the ranks as in-process virtual GPUs (strata.libs.nccl, one
communicator per GPU, the calls of a step grouped) and as processes (`strata run --nproc N`, one process per
rank, strata.distributed over the TCP mesh: nccl on the GPUs and gloo on the CPU).

Size classes: "small" (fewer elements than ranks: some ranks' ring chunks are empty), "uneven" (chunks
of different lengths) and "large" (each rank's ring chunk or block at least 1 MiB: the tiled kernels, and
peer copies on the copy engine instead of copy kernels)."""

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata.cuda.device import devices_of_model
from strata.libs import nccl
from strata.libs.nccl.collectives import CE_MIN_BYTES

DTYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64,
          ml_dtypes.bfloat16]
OPS = ("sum", "prod", "max", "min", "avg")
SCRIPTS = Path(__file__).parent / "distributed_scripts"


def _devices(n: int) -> list[cuda.Device]:
    """n devices of device 0's model (other tests leave devices of other models open, e.g. an MI300X, which has
    no peer path to an H200)."""
    return devices_of_model(n)


def _data(rng: np.random.Generator, dt: np.dtype, n: int) -> np.ndarray:
    """Values whose sums and products over 8 ranks stay exact in integers (modular in unsigned and 8-bit
    types either way: NumPy wraps as the device does) and well conditioned in floats."""
    if dt.kind in "iu":
        return rng.integers(-3 if dt.kind == "i" else 0, 4, n).astype(dt)
    return rng.uniform(0.5, 2.0, n).astype(dt)


def _upload(devs: list[cuda.Device], arrays: list[np.ndarray]) -> list[cuda.DeviceArray]:
    out = []
    for d, a in zip(devs, arrays, strict=True):
        x = cuda.DeviceArray(a.shape, a.dtype, d)
        x.set(a)
        out.append(x)
    return out


def _empty(devs: list[cuda.Device], n: int, dt: np.dtype) -> list[cuda.DeviceArray]:
    return [cuda.DeviceArray((max(n, 1),), dt, d) for d in devs]


def _grouped(fn: Callable[[int], object], n: int) -> None:
    nccl.group_start()
    try:
        for r in range(n):
            fn(r)
    finally:
        nccl.group_end()


def _reduced(op: str, arrays: list[np.ndarray], dt: np.dtype) -> np.ndarray:
    """NumPy's result of `op` over the ranks' arrays: integers in the dtype's own (wrapping) arithmetic,
    AVG truncating toward zero as NCCL's integer division; floats exactly (float64), rounded at the end."""
    stack = np.stack(arrays)
    n = len(arrays)
    if dt.kind in "iu":
        if op == "avg":
            total = np.sum(stack.astype(np.int64), axis=0)
            return (np.sign(total) * (np.abs(total) // n)).astype(dt)
        if op == "sum":
            return np.sum(stack, axis=0, dtype=dt)
        if op == "prod":
            return np.prod(stack, axis=0, dtype=dt)
        return np.max(stack, axis=0) if op == "max" else np.min(stack, axis=0)
    wide = stack.astype(np.float64)
    if op in ("sum", "avg"):
        return np.sum(wide, axis=0) / (n if op == "avg" else 1)
    if op == "prod":
        return np.prod(wide, axis=0)
    return np.max(wide, axis=0) if op == "max" else np.min(wide, axis=0)


def _check(got: np.ndarray, want: np.ndarray, dt: np.dtype, op: str, arrays: list[np.ndarray], what: str) -> None:
    """Integers, max, min and copies bit for bit; float sums and products within the roundings of one
    combine per rank (each at most half an ulp of a partial result: w * u * the sum of the magnitudes, u the
    dtype's unit roundoff), AVG's division adding one more."""
    if dt.kind in "iu" or op in ("max", "min", "copy"):
        np.testing.assert_array_equal(got, want.astype(dt), err_msg=what)
        return
    u = float(ml_dtypes.finfo(dt).eps) / 2
    w = len(arrays)
    mags = np.stack(arrays).astype(np.float64)
    size = np.prod(mags, axis=0) if op == "prod" else np.sum(mags, axis=0) / (w if op == "avg" else 1)
    bound = (w + 1) * u * size * (2 if op == "prod" else 1)
    err = np.abs(got.astype(np.float64) - want)
    assert (err <= bound).all(), f"{what}: max error {err.max()} over the bound {bound[err.argmax()]}"


SIZES = ("small", "uneven", "large")


def _counts(size: str, w: int, dt: np.dtype) -> tuple[int, int]:
    """(count of a whole-buffer collective, count of one block) for a size class on w ranks."""
    if size == "small":
        return 3, 1  # 3 < 4 and 8 ranks: empty ring chunks
    if size == "uneven":
        return 4099, 1031
    per = CE_MIN_BYTES // dt.itemsize + 5  # each ring chunk / block just over 1 MiB
    return w * per + 3, per


# 8 ranks of the large class move 8+ MiB per rank per collective (about 26 s for the ten types): slow
RANKS_SIZES = [pytest.param(w, size, id=f"{w}-{size}", marks=[pytest.mark.slow] if (w, size) == (8, "large") else [])
               for w in (2, 4, 8) for size in SIZES]


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(("w", "size"), RANKS_SIZES)
def test_every_collective_in_process(w: int, size: str, dt: type) -> None:
    """all_reduce (every op; the large class: sum), broadcast, reduce, all_gather, reduce_scatter, all_to_all
    and a ring of send/recv on w in-process GPUs, against NumPy."""
    dtype = np.dtype(dt)
    rng = np.random.default_rng([w, DTYPES.index(dt), SIZES.index(size)])
    c, b = _counts(size, w, dtype)
    devs = _devices(w)
    comms = nccl.comm_init_all(devs)
    try:
        hs = [_data(rng, dtype, max(c, w * b)) for _ in range(w)]
        xs = _upload(devs, hs)
        for op in OPS if size != "large" else ("sum",):
            out = _empty(devs, c, dtype)

            def call(r: int, o: list[cuda.DeviceArray] = out, how: str = op) -> object:
                return nccl.all_reduce(xs[r], o[r], c, dtype, how, comms[r])

            _grouped(call, w)
            want = _reduced(op, [h[:c] for h in hs], dtype)
            for r in range(w):
                _check(out[r].get()[:c], want, dtype, op, [h[:c] for h in hs], f"all_reduce {op} rank {r}")
        root = w - 1
        out = _empty(devs, c, dtype)
        _grouped(lambda r: nccl.broadcast(xs[r], out[r], c, dtype, root, comms[r]), w)
        for r in range(w):
            np.testing.assert_array_equal(out[r].get()[:c], hs[root][:c], err_msg=f"broadcast rank {r}")
        op = "max" if size == "small" else "sum"
        out = _empty(devs, c, dtype)
        _grouped(lambda r: nccl.reduce(xs[r], out[r], c, dtype, op, 1, comms[r]), w)
        _check(out[1].get()[:c], _reduced(op, [h[:c] for h in hs], dtype), dtype, op, [h[:c] for h in hs],
               f"reduce {op} to rank 1")
        gathered = _empty(devs, w * b, dtype)
        _grouped(lambda r: nccl.all_gather(xs[r], gathered[r], b, dtype, comms[r]), w)
        for r in range(w):
            np.testing.assert_array_equal(gathered[r].get(), np.concatenate([h[:b] for h in hs]),
                                          err_msg=f"all_gather rank {r}")
        out = _empty(devs, b, dtype)
        _grouped(lambda r: nccl.reduce_scatter(xs[r], out[r], b, dtype, "sum", comms[r]), w)
        for r in range(w):
            blocks = [h[r * b:(r + 1) * b] for h in hs]
            _check(out[r].get()[:b], _reduced("sum", blocks, dtype), dtype, "sum", blocks, f"reduce_scatter rank {r}")
        out = _empty(devs, w * b, dtype)
        _grouped(lambda r: nccl.all_to_all(xs[r], out[r], b, dtype, comms[r]), w)
        for r in range(w):
            np.testing.assert_array_equal(out[r].get(), np.concatenate([h[r * b:(r + 1) * b] for h in hs]),
                                          err_msg=f"all_to_all rank {r}")
        out = _empty(devs, b, dtype)

        def shift(r: int) -> None:
            nccl.send(xs[r], b, dtype, (r + 1) % w, comms[r])
            nccl.recv(out[r], b, dtype, (r - 1) % w, comms[r])

        _grouped(shift, w)
        for r in range(w):
            np.testing.assert_array_equal(out[r].get(), hs[(r - 1) % w][:b], err_msg=f"recv rank {r}")
    finally:
        for comm in comms:
            nccl.comm_destroy(comm)


# --- multi-process: one process per rank under `strata run --nproc N` (distributed_scripts/matrix.py) ------


def _strata_run(nproc: int, script: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STRATA_NVCC="0", STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"))
    env.pop("STRATA_DEVICES", None)
    env.pop("STRATA_CLUSTER", None)
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", "--nproc", str(nproc), str(script)],
                          capture_output=True, text=True, env=env, timeout=timeout)


# 8 processes on 2 cores: 30-40 s, slow
@pytest.mark.parametrize("nproc", [2, 4, pytest.param(8, marks=pytest.mark.slow)])
def test_every_collective_and_dtype_across_processes(nproc: int) -> None:
    """Every collective of strata.distributed (all_reduce with every op, broadcast, reduce, both all_gathers,
    reduce_scatter_tensor, all_to_all_single, send/recv) on cuda (nccl) and cpu (gloo) tensors of every
    dtype the framework's NCCL backend takes, small and uneven, and large float32/bfloat16 on the GPUs."""
    p = _strata_run(nproc, SCRIPTS / "matrix.py", timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    got = re.findall(r"rank (\d+) matrix ok (\d+)", p.stdout)
    assert sorted(int(r) for r, _ in got) == list(range(nproc)), p.stdout
    assert {int(k) for _, k in got} == {2 * 9 * 2 + 2}  # devices x dtypes x sizes, + the two large
