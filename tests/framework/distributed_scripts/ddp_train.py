"""DDP on N virtual GPUs equals one GPU on the combined batch (rank 0 checks), and no_sync accumulates
locally. Run by test_distributed.py under `strata run --nproc N`, and imported by collectives.py, which
calls `check_ddp` in its own process group."""

import os

import numpy as np

import strata
import strata.distributed as dist
from strata import nn


def grad(p: strata.Tensor) -> np.ndarray:
    assert p.grad is not None
    return p.grad.detach().cpu().numpy()


def check_ddp(dev: str, steps: int = 3, B: int = 4) -> None:  # noqa: N803 - B: the per-rank batch
    r, w = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((steps, w * B, 8)).astype(np.float32)  # noqa: N806 - the global batches
    Y = rng.standard_normal((steps, w * B, 1)).astype(np.float32)  # noqa: N806
    strata.manual_seed(1234 + r)  # different initial weights on each rank: DDP must broadcast rank 0's

    def make() -> nn.Module:
        return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(dev)

    model = make()
    reference = make()
    if r == 0:
        reference.load_state_dict(model.state_dict())
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0005)  # small buckets: several per backward
    opt = strata.optim.SGD(ddp.parameters(), lr=0.1)
    ref_opt = strata.optim.SGD(reference.parameters(), lr=0.1)
    for step in range(steps):
        xs = strata.tensor(X[step, r * B:(r + 1) * B], device=dev)
        ys = strata.tensor(Y[step, r * B:(r + 1) * B], device=dev)
        opt.zero_grad()
        nn.functional.mse_loss(ddp(xs), ys).backward()
        opt.step()
        if r == 0:
            ref_opt.zero_grad()
            nn.functional.mse_loss(reference(strata.tensor(X[step], device=dev)),
                                   strata.tensor(Y[step], device=dev)).backward()
            ref_opt.step()
    assert ddp.reduced_buckets >= steps * 2, ddp.reduced_buckets
    if r == 0:
        for (name, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=name)
    # every rank holds the same weights
    flat = strata.cat([p.detach().reshape(-1) for p in model.parameters()])
    mx = flat.clone()
    dist.all_reduce(mx, op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(mx.cpu().numpy(), flat.cpu().numpy())

    # no_sync: a local micro-batch, then a synchronized one: grads = mean over ranks of the accumulated sums
    opt.zero_grad()
    before = ddp.reduced_buckets
    with ddp.no_sync():
        nn.functional.mse_loss(ddp(strata.tensor(X[0, r * B:(r + 1) * B], device=dev)),
                               strata.tensor(Y[0, r * B:(r + 1) * B], device=dev)).backward()
    assert ddp.reduced_buckets == before
    local0 = [grad(p).copy() for p in model.parameters()]
    plain = make()  # the second micro-batch's local gradient, from the same weights without DDP
    plain.load_state_dict(model.state_dict())
    nn.functional.mse_loss(plain(strata.tensor(X[1, r * B:(r + 1) * B], device=dev)),
                           strata.tensor(Y[1, r * B:(r + 1) * B], device=dev)).backward()
    nn.functional.mse_loss(ddp(strata.tensor(X[1, r * B:(r + 1) * B], device=dev)),
                           strata.tensor(Y[1, r * B:(r + 1) * B], device=dev)).backward()
    assert ddp.reduced_buckets > before
    for p, g0, q in zip(model.parameters(), local0, plain.parameters(), strict=True):
        mine = strata.tensor(g0 + grad(q), device=dev)  # this rank's accumulated sum
        dist.all_reduce(mine, op=dist.ReduceOp.AVG)
        np.testing.assert_allclose(grad(p), mine.cpu().numpy(), rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    dist.init_process_group("nccl")
    check_ddp(f"cuda:{os.environ['LOCAL_RANK']}")
    rank = dist.get_rank()
    dist.destroy_process_group()
    print(f"rank {rank} ok", flush=True)
