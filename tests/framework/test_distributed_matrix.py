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
import textwrap
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata.driver import open_device, opened_devices
from strata.libs import nccl
from strata.libs.nccl.collectives import CE_MIN_BYTES

DTYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64,
          ml_dtypes.bfloat16]
OPS = ("sum", "prod", "max", "min", "avg")
SCRIPTS = Path(__file__).parent / "distributed_scripts"


def _devices(n: int) -> list[cuda.Device]:
    """n devices of device 0's model: those present or opened already (of that model), then new ones."""
    model = cuda.Device(0).spec.name
    opened = {f.index for f in opened_devices()} | set(cuda.Device._by_index)
    out: list[cuda.Device] = []
    i = 0
    while len(out) < n:
        if i < cuda.device_count() or i in opened:
            if cuda.Device(i).spec.name == model:
                out.append(cuda.Device(i))
        else:
            open_device(i, model)
            out.append(cuda.Device(i))
        i += 1
    return out


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


# --- multi-process: one process per rank under `strata run --nproc N` ------------------------------------

MATRIX = textwrap.dedent("""
    import os, sys
    import ml_dtypes
    import numpy as np
    import strata
    import strata.distributed as dist

    dist.init_process_group(timeout=120)  # no backend: nccl for cuda tensors, gloo for cpu ones
    r, w = dist.get_rank(), dist.get_world_size()
    DT = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32, "int64": np.int64, "float16": np.float16,
          "float32": np.float32, "float64": np.float64, "bfloat16": ml_dtypes.bfloat16, "bool": np.bool_}
    SIZES = {"small": (3, 1), "uneven": (4099, 1031)}
    checked = 0

    def data(rank, name, n, tag):
        rng = np.random.default_rng([rank, list(DT).index(name), n, tag])
        dt = np.dtype(DT[name])
        if dt == np.bool_:
            return rng.integers(0, 2, n).astype(bool)
        if dt.kind in "iu":
            return rng.integers(-3 if dt.kind == "i" else 0, 4, n).astype(dt)
        return rng.uniform(0.5, 2.0, n).astype(dt)

    def close(got, want, name, what, w_terms):
        dt = np.dtype(DT[name])
        if dt == np.bool_:  # a bool element's byte is 0 or 1, never a sum of trues
            assert got.view(np.uint8).max(initial=0) <= 1, f"{what}: bool bytes {np.unique(got.view(np.uint8))}"
        if dt.kind in "iub":
            np.testing.assert_array_equal(got, want.astype(dt), err_msg=what)
            return
        u = float(ml_dtypes.finfo(dt).eps) / 2  # one rounding per combine: w * u * the result's size
        err = np.abs(got.astype(np.float64) - want)
        bound = (w_terms + 1) * u * np.abs(want) * 2
        assert (err <= bound).all(), f"{what}: max error {err.max()} over {bound[err.argmax()]}"

    def reduced(op, arrays, name):
        dt = np.dtype(DT[name])
        st = np.stack(arrays)
        if dt == np.bool_:  # torch's bool: SUM is logical or (NCCL max), PRODUCT logical and (min)
            return {"sum": st.any(0), "prod": st.all(0), "max": st.any(0), "min": st.all(0)}[op]
        if dt.kind in "iu":
            if op == "avg":
                t = st.astype(np.int64).sum(0)
                return (np.sign(t) * (np.abs(t) // len(arrays))).astype(dt)
            return {"sum": lambda: st.sum(0, dtype=dt), "prod": lambda: st.prod(0, dtype=dt),
                    "max": lambda: st.max(0), "min": lambda: st.min(0)}[op]()
        f = st.astype(np.float64)
        return {"sum": f.sum(0), "prod": f.prod(0), "max": f.max(0), "min": f.min(0), "avg": f.mean(0)}[op]

    OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX,
           "min": dist.ReduceOp.MIN, "avg": dist.ReduceOp.AVG}
    for dev in ("cuda:0", "cpu"):
        for name in DT:
            for size, (c, b) in SIZES.items():
                def t(a):
                    return strata.tensor(a, device=dev)
                mine = lambda n, tag: data(r, name, n, tag)
                every = lambda n, tag: [data(k, name, n, tag) for k in range(w)]
                for opname, op in OPS.items():
                    if opname == "avg" and name == "bool":
                        continue  # torch: AVG is not defined on bool
                    x = t(mine(c, 1))
                    dist.all_reduce(x, op=op)
                    close(x.cpu().numpy(), reduced(opname, every(c, 1), name), name,
                          f"{dev} {name} {size} all_reduce {opname}", w)
                x = t(mine(c, 2))
                dist.broadcast(x, src=w - 1)
                np.testing.assert_array_equal(x.cpu().numpy(), every(c, 2)[w - 1], err_msg=f"{dev} {name} broadcast")
                x = t(mine(c, 3))
                dist.reduce(x, dst=1, op=dist.ReduceOp.MAX)
                if r == 1:
                    close(x.cpu().numpy(), reduced("max", every(c, 3), name), name, f"{dev} {name} reduce", w)
                out = t(np.zeros(w * b, DT[name]))
                dist.all_gather_into_tensor(out, t(mine(b, 4)))
                np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate(every(b, 4)),
                                              err_msg=f"{dev} {name} all_gather_into_tensor")
                parts = [t(np.zeros(b, DT[name])) for _ in range(w)]
                dist.all_gather(parts, t(mine(b, 5)))
                for k in range(w):
                    np.testing.assert_array_equal(parts[k].cpu().numpy(), every(b, 5)[k], err_msg=f"{dev} all_gather")
                if name != "bool":  # torch's reduce_scatter has no bool on NCCL either way: skipped as there
                    out = t(np.zeros(b, DT[name]))
                    dist.reduce_scatter_tensor(out, t(mine(w * b, 6)))
                    close(out.cpu().numpy(), reduced("sum", [a[r * b:(r + 1) * b] for a in every(w * b, 6)], name),
                          name, f"{dev} {name} {size} reduce_scatter", w)
                out = t(np.zeros(w * b, DT[name]))
                dist.all_to_all_single(out, t(mine(w * b, 7)))
                np.testing.assert_array_equal(out.cpu().numpy(),
                                              np.concatenate([a[r * b:(r + 1) * b] for a in every(w * b, 7)]),
                                              err_msg=f"{dev} {name} all_to_all_single")
                # a ring of send/recv: even ranks send first, odd ranks receive first (blocking calls)
                got = t(np.zeros(b, DT[name]))
                if r % 2 == 0:
                    dist.send(t(mine(b, 8)), dst=(r + 1) % w)
                    dist.recv(got, src=(r - 1) % w)
                else:
                    dist.recv(got, src=(r - 1) % w)
                    dist.send(t(mine(b, 8)), dst=(r + 1) % w)
                np.testing.assert_array_equal(got.cpu().numpy(), every(b, 8)[(r - 1) % w], err_msg=f"{dev} recv")
                checked += 1
    # large: 1 MiB and more per rank chunk over the mesh, float32 and bfloat16 on the GPUs
    for name in ("float32", "bfloat16"):
        n = w * ((1 << 20) // np.dtype(DT[name]).itemsize + 5)
        x = strata.tensor(data(r, name, n, 9), device="cuda:0")
        dist.all_reduce(x)
        close(x.cpu().numpy(), reduced("sum", [data(k, name, n, 9) for k in range(w)], name), name, "large", w)
        out = strata.tensor(np.zeros(w * n, DT[name]), device="cuda:0")
        dist.all_gather_into_tensor(out, strata.tensor(data(r, name, n, 10), device="cuda:0"))
        np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate([data(k, name, n, 10) for k in range(w)]))
        checked += 1
    dist.destroy_process_group()
    print(f"rank {r} matrix ok {checked}", flush=True)
""")


def _strata_run(nproc: int, script: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STRATA_NVCC="0", STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"))
    env.pop("STRATA_DEVICES", None)
    env.pop("STRATA_CLUSTER", None)
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", "--nproc", str(nproc), str(script)],
                          capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize("nproc", [2, 4, 8])
def test_every_collective_and_dtype_across_processes(nproc: int, tmp_path: Path) -> None:
    """Every collective of strata.distributed (all_reduce with every op, broadcast, reduce, both all_gathers,
    reduce_scatter_tensor, all_to_all_single, send/recv) on cuda (nccl) and cpu (gloo) tensors of every
    dtype the framework's NCCL backend takes, small and uneven, and large float32/bfloat16 on the GPUs."""
    script = tmp_path / "matrix.py"
    script.write_text(MATRIX)
    p = _strata_run(nproc, script, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    got = re.findall(r"rank (\d+) matrix ok (\d+)", p.stdout)
    assert sorted(int(r) for r, _ in got) == list(range(nproc)), p.stdout
    assert {int(k) for _, k in got} == {2 * 9 * 2 + 2}  # devices x dtypes x sizes, + the two large
