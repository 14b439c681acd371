"""Run by test_distributed.py under `strata run --nproc 2 collectives.py <tcp port>`: one launch exercises
the whole package, and prints `rank R <phase> ok` after each phase, which the tests check one by one:

  nccl      every collective on cuda tensors against NumPy (env:// rendezvous)
  ddp       DistributedDataParallel against one GPU on the combined batch, and no_sync
  reuse     after destroy_process_group, a collective raises; then init again on tcp:// works
  gloo      every collective on cpu tensors (backend gloo, the tcp:// group)
  mismatch  rank 0 all_reduce while rank 1 broadcasts: both get a DistBackendError naming the calls
  timeout   a rank that never calls the collective: the other's DistBackendError after a 1 s timeout
  crash     (last) rank 1 exits with status 3 in the middle; rank 0's collective fails at once

With `nccl` instead of a port (test_distributed_ray.py), only the first phase runs, then `rank R ok`.
"""

import os
import sys
import time

import ml_dtypes
import numpy as np
from ddp_train import check_ddp  # type: ignore[import-not-found]  # beside this script

import strata
import strata.distributed as dist
from strata import trace

PORT = sys.argv[1]
RANK = int(os.environ["RANK"])


def done(phase: str) -> None:
    print(f"rank {RANK} {phase} ok", flush=True)


def data(rank: int, n: int, dtype: type = np.float32) -> np.ndarray:
    return (np.random.default_rng(rank).standard_normal(n) * 4).astype(dtype)


def check_collectives(dev: str) -> None:
    r, w = dist.get_rank(), dist.get_world_size()

    def t(a: np.ndarray) -> strata.Tensor:
        return strata.tensor(a, device=dev)

    n = 37  # odd: the ring's chunks are uneven
    for op, fn in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.MIN, np.min),
                   (dist.ReduceOp.AVG, np.mean), (dist.ReduceOp.PRODUCT, np.prod)):
        x = t(data(r, n))
        dist.all_reduce(x, op=op)
        want = fn(np.stack([data(k, n) for k in range(w)]).astype(np.float64), axis=0)
        np.testing.assert_allclose(x.cpu().numpy(), want, rtol=1e-5, atol=1e-5, err_msg=op)
    with trace.record() as rec:  # the span carries the modeled time on the platform's fabric (nccl backend)
        dist.all_reduce(t(data(r, n)))
    spans = [e for e in rec.events if e.name == "c10d::allreduce_"]
    assert len(spans) == 1 and (not dev.startswith("cuda") or spans[0].args["busbw"] > 0), spans
    # integers: SUM wraps as the dtype does, AVG divides the sum truncating toward zero (as NCCL's C division)
    ints = [data(k, n).astype(np.int32) for k in range(w)]
    total = np.sum(np.stack(ints).astype(np.int64), axis=0)
    assert (total < 0).any() and (total % w != 0).any()  # the data has the cases that tell trunc from floor
    xi = t(ints[r])
    dist.all_reduce(xi)
    np.testing.assert_array_equal(xi.cpu().numpy(), total.astype(np.int32))
    xa = t(ints[r])
    dist.all_reduce(xa, op=dist.ReduceOp.AVG)
    np.testing.assert_array_equal(xa.cpu().numpy(), (np.sign(total) * (np.abs(total) // w)).astype(np.int32))
    # half and bfloat16: each combine rounds to the dtype once (two ranks: one rounding of the exact sum)
    for dt in (np.float16, ml_dtypes.bfloat16):
        hs = [data(k, n, dt) for k in range(w)]
        xh = t(hs[r])
        dist.all_reduce(xh)
        want = np.sum(np.stack(hs).astype(np.float64), axis=0).astype(dt)
        got = xh.cpu().numpy()
        assert got.dtype == np.dtype(dt)
        # w - 1 roundings of partial sums: each off by at most half an ulp of a partial sum, so at most
        # w * u * sum(|x|) in all (u the dtype's unit roundoff); exact for two ranks
        bound = w * float(ml_dtypes.finfo(dt).eps) / 2 * np.sum(np.abs(np.stack(hs).astype(np.float64)), axis=0)
        np.testing.assert_array_less(np.abs(got.astype(np.float64) - want.astype(np.float64)),
                                     bound + 1e-300 if w > 2 else 1e-300)
        xv = t(hs[r])
        dist.all_reduce(xv, op=dist.ReduceOp.AVG)  # the last step adds and divides in float, rounds once
        want = (np.sum(np.stack(hs).astype(np.float32), axis=0) / np.float32(w)).astype(dt)
        np.testing.assert_array_less(np.abs(xv.cpu().numpy().astype(np.float64) - want.astype(np.float64)),
                                     bound / w + 1e-300 if w > 2 else 1e-300)

    b = t(data(r, n))
    dist.broadcast(b, src=w - 1)
    np.testing.assert_array_equal(b.cpu().numpy(), data(w - 1, n))

    out = t(np.zeros(w * n, np.float32))
    dist.all_gather_into_tensor(out, t(data(r, n)))
    np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate([data(k, n) for k in range(w)]))
    parts = [t(np.zeros((n,), np.float32)) for _ in range(w)]
    dist.all_gather(parts, t(data(r, n)))
    for k in range(w):
        np.testing.assert_array_equal(parts[k].cpu().numpy(), data(k, n))
    try:  # the arguments are checked before anything moves, on each rank alike
        dist.all_gather([t(np.zeros(n + 1, np.float32)) for _ in range(w)], t(data(r, n)))
        raise AssertionError("all_gather accepted a list of tensors of another size")
    except ValueError as exc:
        assert "has 38 elements" in str(exc), exc
    try:
        dist.all_gather_into_tensor(t(np.zeros(w * n, np.float64)), t(data(r, n)))
        raise AssertionError("all_gather_into_tensor accepted tensors of two dtypes")
    except TypeError as exc:
        assert "dtype" in str(exc), exc
    try:
        dist.reduce_scatter_tensor(t(np.zeros(n, np.float32)), t(data(r, w * n + 1)))
        raise AssertionError("reduce_scatter_tensor accepted an input of another size")
    except ValueError as exc:
        assert "input tensor must have" in str(exc), exc

    for op, fn in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.AVG, np.mean)):
        src = data(r, w * n)
        rs_in = t(src)
        rs = t(np.zeros(n, np.float32))
        dist.reduce_scatter_tensor(rs, rs_in, op=op)
        want = fn(np.stack([data(k, w * n) for k in range(w)]).astype(np.float64), axis=0)[r * n:(r + 1) * n]
        np.testing.assert_allclose(rs.cpu().numpy(), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(rs_in.cpu().numpy(), src)  # the input is left as it was

    a2a = t(np.zeros(w * n, np.float32))
    dist.all_to_all_single(a2a, t(data(r, w * n)))
    np.testing.assert_array_equal(a2a.cpu().numpy(),
                                  np.concatenate([data(k, w * n)[r * n:(r + 1) * n] for k in range(w)]))

    # uneven splits: rank k sends k + 2j + 1 rows of 3 elements to rank j (all_to_all_single), and a tensor
    # of k + 2j + 1 elements (the list form); rank r gets rank k's in rank order
    def rows(k: int, j: int) -> int:
        return k + 2 * j + 1

    def split_data(k: int) -> np.ndarray:
        return data(k, 3 * sum(rows(k, j) for j in range(w))).reshape(-1, 3)

    got = t(np.zeros((sum(rows(k, r) for k in range(w)), 3), np.float32))
    dist.all_to_all_single(got, t(split_data(r)), [rows(k, r) for k in range(w)], [rows(r, j) for j in range(w)])
    want_rows = [split_data(k)[sum(rows(k, j) for j in range(r)):][:rows(k, r)] for k in range(w)]
    np.testing.assert_array_equal(got.cpu().numpy(), np.concatenate(want_rows))
    outs = [t(np.zeros(rows(k, r), np.float32)) for k in range(w)]
    dist.all_to_all(outs, [t(data(100 * r + j, rows(r, j))) for j in range(w)])
    for k in range(w):
        np.testing.assert_array_equal(outs[k].cpu().numpy(), data(100 * k + r, rows(k, r)))

    if r % 2 == 0 and r + 1 < w:
        dist.send(t(data(r, n)), dst=r + 1)
    elif r % 2 == 1:
        rcv = t(np.zeros(n, np.float32))
        dist.recv(rcv, src=r - 1)
        np.testing.assert_array_equal(rcv.cpu().numpy(), data(r - 1, n))

    evens = dist.new_group([k for k in range(w) if k % 2 == 0])
    if r % 2 == 0:
        e = t(data(r, n))
        dist.all_reduce(e, group=evens)
        np.testing.assert_allclose(e.cpu().numpy(), np.sum([data(k, n) for k in range(0, w, 2)], axis=0), rtol=1e-5,
                                   atol=1e-5)
        assert dist.get_rank(evens) == r // 2
    else:
        assert evens is dist.GroupMember.NON_GROUP_MEMBER
    work = dist.barrier(async_op=True)
    assert work is not None and work.wait()


def expect_backend_error(fn: object, *needles: str) -> str:
    try:
        fn()  # type: ignore[operator]
    except dist.DistBackendError as exc:
        msg = str(exc)
        assert any(s in msg for s in needles), msg
        return msg
    raise AssertionError("no DistBackendError")


tcp = f"tcp://127.0.0.1:{PORT}"
world = int(os.environ["WORLD_SIZE"])
cuda_dev = f"cuda:{os.environ['LOCAL_RANK']}"

dist.init_process_group("nccl")
assert dist.get_rank() == RANK and dist.get_world_size() == world
check_collectives(cuda_dev)
done("nccl")
if PORT == "nccl":  # test_distributed_ray.py: this phase only, on ranks that may be on other nodes
    dist.destroy_process_group()
    print(f"rank {RANK} ok", flush=True)
    sys.exit(0)
check_ddp(cuda_dev, steps=2, B=2)
done("ddp")

dist.destroy_process_group()
try:
    dist.all_reduce(strata.ones(2, device=cuda_dev))
    raise AssertionError("a collective ran after destroy_process_group")
except RuntimeError as exc:
    assert "has not been initialized" in str(exc), exc
dist.init_process_group("gloo", init_method=tcp, rank=RANK, world_size=world)
assert dist.get_backend() == "gloo"
done("reuse")
check_collectives("cpu")
dist.destroy_process_group()
done("gloo")

# faults (each aborts its group; a new one is made on the same port)
dist.init_process_group("gloo", init_method=tcp, rank=RANK, world_size=world, timeout=5)
x = strata.ones(8)
start = time.monotonic()
if RANK == 0:
    expect_backend_error(lambda: dist.all_reduce(x), "aborted the process group", "collective mismatch")
else:
    msg = expect_backend_error(lambda: dist.broadcast(x, src=0), "collective mismatch")
    assert "this rank called broadcast #1" in msg and "called all_reduce #1" in msg, msg
assert time.monotonic() - start < 4, "the mismatch was found by the timeout, not by the message tags"
expect_backend_error(dist.barrier, "aborted by an earlier error")  # the group stays unusable
dist.destroy_process_group()
done("mismatch")

dist.init_process_group("gloo", init_method=tcp, rank=RANK, world_size=world, timeout=1)
if RANK == 0:
    start = time.monotonic()
    msg = expect_backend_error(lambda: dist.all_reduce(x), "sent nothing within 1 s")
    assert time.monotonic() - start < 5, msg
else:
    time.sleep(1.5)  # alive, but not calling the collective
    expect_backend_error(dist.barrier, "aborted the process group", "collective mismatch", "closed its connection")
dist.destroy_process_group()
done("timeout")

dist.init_process_group("nccl", timeout=60)
if RANK == 1:
    sys.exit(3)
try:
    dist.all_reduce(strata.ones(4, device=cuda_dev))
except dist.DistBackendError as exc:
    print(f"rank {RANK} caught: {exc}", flush=True)
    sys.exit(7)
print("no error", flush=True)
