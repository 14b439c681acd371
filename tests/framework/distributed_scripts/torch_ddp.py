"""A script written for PyTorch (torch.distributed + DDP, launched by torchrun); test_distributed.py runs it
unchanged under `strata run --nproc 2 --as-torch`."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 2).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.ones(3, 4, device="cuda") * (dist.get_rank() + 1)
    loss = model(x).sum()
    loss.backward()
    opt.step()
    w = model.module.weight.detach().clone()
    gathered = [torch.zeros_like(w) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, w)
    assert all(torch.equal(g, gathered[0]) for g in gathered)
    t = torch.tensor([float(dist.get_rank())], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    assert t.item() == sum(range(dist.get_world_size()))
    dist.barrier()
    print(f"rank {dist.get_rank()} ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
