"""Run by test_distributed.py: rank 1 dies before init_process_group; rank 0, waiting in the rendezvous
for it, must fail at once (the launcher reports the dead rank to the store), not after the timeout."""

import os
import sys
import time

import strata.distributed as dist

if os.environ["RANK"] == "1":
    sys.exit(3)
start = time.monotonic()
try:
    dist.init_process_group("nccl", timeout=60)
except (dist.DistStoreError, dist.DistBackendError) as exc:
    print(f"rank 0 caught after {time.monotonic() - start:.1f} s: {type(exc).__name__}: {exc}", flush=True)
    sys.exit(7)
print("no error", flush=True)
