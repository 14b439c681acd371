"""Run by test_distributed.py: rank 1 dies before the collective; the others must fail fast, not hang."""

import os
import sys

import strata
import strata.distributed as dist

dist.init_process_group("nccl", timeout=60)
if dist.get_rank() == 1:
    sys.exit(3)
x = strata.ones(4, device=f"cuda:{os.environ['LOCAL_RANK']}")
try:
    dist.all_reduce(x)
except dist.DistBackendError as exc:
    print(f"rank {dist.get_rank()} caught: {exc}", flush=True)
    sys.exit(7)
print("no error", flush=True)
