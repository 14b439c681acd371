"""Run by test_distributed.py, which interrupts the launcher (SIGINT) once both ranks are waiting: rank 0
in an all_reduce that rank 1 never joins, rank 1 asleep. Every rank must end, none outlive the launcher."""

import os
import time

import strata
import strata.distributed as dist

dist.init_process_group("gloo", timeout=600)
print(f"rank {dist.get_rank()} pid {os.getpid()} waiting", flush=True)
if dist.get_rank() == 0:
    dist.all_reduce(strata.ones(4))
else:
    time.sleep(600)
