"""Run by test_distributed.py under `strata run --nproc N`: every collective against NumPy."""

import os
import sys

import numpy as np

import strata
import strata.distributed as dist
from strata import trace

backend = sys.argv[1] if len(sys.argv) > 1 else "nccl"
if len(sys.argv) > 2:  # tcp:// rendezvous: rank and world size from the arguments
    dist.init_process_group(backend, init_method=sys.argv[2], rank=int(os.environ["RANK"]),
                            world_size=int(os.environ["WORLD_SIZE"]))
else:
    dist.init_process_group(backend)
r, w = dist.get_rank(), dist.get_world_size()
assert r == int(os.environ["RANK"]) and w == int(os.environ["WORLD_SIZE"])
dev = f"cuda:{os.environ['LOCAL_RANK']}" if backend == "nccl" else "cpu"


def data(rank: int, n: int, dtype: type = np.float32) -> np.ndarray:
    return (np.random.default_rng(rank).standard_normal(n) * 4).astype(dtype)


def t(a: np.ndarray) -> strata.Tensor:
    return strata.tensor(a, device=dev)


n = 37
for op, fn in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.MIN, np.min),
               (dist.ReduceOp.AVG, np.mean)):
    x = t(data(r, n))
    dist.all_reduce(x, op=op)
    np.testing.assert_allclose(x.cpu().numpy(), fn(np.stack([data(k, n) for k in range(w)]), axis=0), rtol=1e-5,
                               atol=1e-5)
with trace.record() as rec:  # the span carries the modeled time on the platform's fabric (nccl backend)
    dist.all_reduce(t(data(r, n)))
spans = [e for e in rec.events if e.name == "c10d::allreduce_"]
assert len(spans) == 1 and (backend != "nccl" or spans[0].args["busbw"] > 0), spans
xi = t(data(r, n).astype(np.int32))
dist.all_reduce(xi)
np.testing.assert_array_equal(xi.cpu().numpy(), np.sum([data(k, n).astype(np.int32) for k in range(w)], axis=0))

b = t(data(r, n))
dist.broadcast(b, src=w - 1)
np.testing.assert_array_equal(b.cpu().numpy(), data(w - 1, n))

out = t(np.zeros(w * n, np.float32))
dist.all_gather_into_tensor(out, t(data(r, n)))
np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate([data(k, n) for k in range(w)]))
parts = [t(np.zeros(n, np.float32)) for _ in range(w)]
dist.all_gather(parts, t(data(r, n)))
for k in range(w):
    np.testing.assert_array_equal(parts[k].cpu().numpy(), data(k, n))

rs = t(np.zeros(n, np.float32))
dist.reduce_scatter_tensor(rs, t(data(r, w * n)))
np.testing.assert_allclose(rs.cpu().numpy(), np.sum([data(k, w * n) for k in range(w)], axis=0)[r * n:(r + 1) * n],
                           rtol=1e-5, atol=1e-5)

a2a = t(np.zeros(w * n, np.float32))
dist.all_to_all_single(a2a, t(data(r, w * n)))
np.testing.assert_array_equal(a2a.cpu().numpy(), np.concatenate([data(k, w * n)[r * n:(r + 1) * n] for k in range(w)]))

if r % 2 == 0 and r + 1 < w:
    dist.send(t(data(r, n)), dst=r + 1)
elif r % 2 == 1:
    got = t(np.zeros(n, np.float32))
    dist.recv(got, src=r - 1)
    np.testing.assert_array_equal(got.cpu().numpy(), data(r - 1, n))

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
dist.destroy_process_group()
print(f"rank {r} ok", flush=True)
