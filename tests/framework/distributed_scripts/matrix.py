"""Every collective of strata.distributed x every dtype its NCCL backend takes (and bool) x small and uneven
sizes, on cuda (nccl) and cpu (gloo) tensors, then large float32/bfloat16 on the GPUs, each against NumPy;
prints `rank R matrix ok K` (K: the cases checked). Run under `strata run --nproc N` by
test_distributed_matrix.py and on Ray by test_distributed_ray.py."""

import ml_dtypes
import numpy as np

import strata
import strata.distributed as dist

DT = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32, "int64": np.int64, "float16": np.float16,
      "float32": np.float32, "float64": np.float64, "bfloat16": ml_dtypes.bfloat16, "bool": np.bool_}
SIZES = {"small": (3, 1), "uneven": (4099, 1031)}  # (whole-buffer count, block count): 3 < 4 and 8 ranks
OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX,
       "min": dist.ReduceOp.MIN, "avg": dist.ReduceOp.AVG}


def data(rank: int, name: str, n: int, tag: int) -> np.ndarray:
    """Rank `rank`'s input of case `tag`: every rank can make every other's, for the oracle."""
    rng = np.random.default_rng([rank, list(DT).index(name), n, tag])
    dt = np.dtype(DT[name])
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        return rng.integers(-3 if dt.kind == "i" else 0, 4, n).astype(dt)
    return rng.uniform(0.5, 2.0, n).astype(dt)


def reduced(op: str, arrays: list[np.ndarray], name: str) -> np.ndarray:
    """NumPy's result: integers in the dtype's own wrapping arithmetic (AVG truncating toward zero, as
    NCCL's integer division); bool as torch's (SUM logical or, PRODUCT logical and); floats in float64."""
    dt = np.dtype(DT[name])
    st = np.stack(arrays)
    if dt == np.bool_:
        return np.asarray(st.any(0) if op in ("sum", "max") else st.all(0))
    if dt.kind in "iu":
        if op == "avg":
            total = st.astype(np.int64).sum(0)
            return (np.sign(total) * (np.abs(total) // len(arrays))).astype(dt)
        if op in ("sum", "prod"):
            return st.sum(0, dtype=dt) if op == "sum" else st.prod(0, dtype=dt)
        return st.max(0) if op == "max" else st.min(0)
    f = st.astype(np.float64)
    return {"sum": f.sum(0), "prod": f.prod(0), "max": f.max(0), "min": f.min(0), "avg": f.mean(0)}[op]


def close(got: np.ndarray, want: np.ndarray, name: str, what: str, w: int) -> None:
    """Integers, bool, max/min bit for bit; floats within one rounding per combine (w + 1 of them at most,
    each half an ulp of the result's size; products doubled)."""
    dt = np.dtype(DT[name])
    if dt == np.bool_:  # a bool element's byte is 0 or 1, never a count of trues
        assert got.view(np.uint8).max(initial=0) <= 1, f"{what}: bool bytes {np.unique(got.view(np.uint8))}"
    if dt.kind in "iub":
        np.testing.assert_array_equal(got, want.astype(dt), err_msg=what)
        return
    u = float(ml_dtypes.finfo(dt).eps) / 2
    err = np.abs(got.astype(np.float64) - want)
    bound = (w + 1) * u * np.abs(want) * 2
    assert (err <= bound).all(), f"{what}: max error {err.max()} over {bound[err.argmax()]}"


def check(dev: str, name: str, size: str, r: int, w: int) -> None:
    """Every collective on `dev` for one dtype and size class."""
    c, b = SIZES[size]
    dt = DT[name]

    def t(a: np.ndarray) -> strata.Tensor:
        return strata.tensor(a, device=dev)

    def every(n: int, tag: int) -> list[np.ndarray]:
        return [data(k, name, n, tag) for k in range(w)]

    where = f"{dev} {name} {size}"
    for opname, op in OPS.items():
        if opname == "avg" and name == "bool":
            continue  # torch: AVG is not defined on bool
        x = t(data(r, name, c, 1))
        dist.all_reduce(x, op=op)
        close(x.cpu().numpy(), reduced(opname, every(c, 1), name), name, f"{where} all_reduce {opname}", w)
    x = t(data(r, name, c, 2))
    dist.broadcast(x, src=w - 1)
    np.testing.assert_array_equal(x.cpu().numpy(), every(c, 2)[w - 1], err_msg=f"{where} broadcast")
    x = t(data(r, name, c, 3))
    dist.reduce(x, dst=1, op=dist.ReduceOp.MAX)
    if r == 1:
        close(x.cpu().numpy(), reduced("max", every(c, 3), name), name, f"{where} reduce", w)
    out = t(np.zeros(w * b, dt))
    dist.all_gather_into_tensor(out, t(data(r, name, b, 4)))
    np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate(every(b, 4)), err_msg=f"{where} all_gather_i_t")
    parts = [t(np.zeros(b, dt)) for _ in range(w)]
    dist.all_gather(parts, t(data(r, name, b, 5)))
    for k in range(w):
        np.testing.assert_array_equal(parts[k].cpu().numpy(), every(b, 5)[k], err_msg=f"{where} all_gather")
    if name != "bool":  # a sum of bools scattered: not a torch case
        out = t(np.zeros(b, dt))
        dist.reduce_scatter_tensor(out, t(data(r, name, w * b, 6)))
        blocks = [a[r * b:(r + 1) * b] for a in every(w * b, 6)]
        close(out.cpu().numpy(), reduced("sum", blocks, name), name, f"{where} reduce_scatter", w)
    out = t(np.zeros(w * b, dt))
    dist.all_to_all_single(out, t(data(r, name, w * b, 7)))
    np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate([a[r * b:(r + 1) * b] for a in every(w * b, 7)]),
                                  err_msg=f"{where} all_to_all_single")
    got = t(np.zeros(b, dt))  # a ring of send/recv: even ranks send first, odd ranks receive first
    if r % 2 == 0:
        dist.send(t(data(r, name, b, 8)), dst=(r + 1) % w)
        dist.recv(got, src=(r - 1) % w)
    else:
        dist.recv(got, src=(r - 1) % w)
        dist.send(t(data(r, name, b, 8)), dst=(r + 1) % w)
    np.testing.assert_array_equal(got.cpu().numpy(), every(b, 8)[(r - 1) % w], err_msg=f"{where} send/recv")


def check_large(name: str, r: int, w: int) -> None:
    """Over 1 MiB per rank's ring chunk and per all_gather block, on the GPUs."""
    n = w * ((1 << 20) // np.dtype(DT[name]).itemsize + 5)
    x = strata.tensor(data(r, name, n, 9), device="cuda:0")
    dist.all_reduce(x)
    close(x.cpu().numpy(), reduced("sum", [data(k, name, n, 9) for k in range(w)], name), name, "large", w)
    out = strata.tensor(np.zeros(w * n, DT[name]), device="cuda:0")
    dist.all_gather_into_tensor(out, strata.tensor(data(r, name, n, 10), device="cuda:0"))
    np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate([data(k, name, n, 10) for k in range(w)]))


def main() -> None:
    dist.init_process_group(timeout=120)  # no backend: nccl for cuda tensors, gloo for cpu ones
    r, w = dist.get_rank(), dist.get_world_size()
    checked = 0
    for dev in ("cuda:0", "cpu"):
        for name in DT:
            for size in SIZES:
                check(dev, name, size, r, w)
                checked += 1
    for name in ("float32", "bfloat16"):
        check_large(name, r, w)
        checked += 1
    dist.destroy_process_group()
    print(f"rank {r} matrix ok {checked}", flush=True)


if __name__ == "__main__":
    main()
