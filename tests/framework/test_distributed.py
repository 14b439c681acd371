"""strata.distributed: process groups across `strata run --nproc N` processes, collectives against NumPy,
DDP against single-GPU training, torch.distributed scripts under --as-torch, and a crashing rank."""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import strata
import strata.distributed as dist

SCRIPTS = Path(__file__).parent / "distributed_scripts"


def strata_run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"))
    env.pop("STRATA_DEVICES", None)
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def ok_ranks(out: str) -> set[str]:
    """The 'rank N ok' lines (the ranks share one stdout, so lines may run together)."""
    return set(re.findall(r"rank \d+ ok", out))


def test_every_collective_on_4_processes_nccl() -> None:
    p = strata_run("--nproc", "4", str(SCRIPTS / "collectives.py"), "nccl")
    assert p.returncode == 0, p.stderr[-3000:]
    assert ok_ranks(p.stdout) == {f"rank {r} ok" for r in range(4)}


def test_gloo_on_cpu_tensors_with_tcp_rendezvous() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = strata_run("--nproc", "3", str(SCRIPTS / "collectives.py"), "gloo", f"tcp://127.0.0.1:{port}")
    assert p.returncode == 0, p.stderr[-3000:]
    assert ok_ranks(p.stdout) == {f"rank {r} ok" for r in range(3)}


def test_ddp_on_4_gpus_equals_one_gpu_on_the_combined_batch() -> None:
    p = strata_run("--nproc", "4", str(SCRIPTS / "ddp_train.py"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert ok_ranks(p.stdout) == {f"rank {r} ok" for r in range(4)}


def test_a_torch_distributed_script_runs_unchanged_as_torch() -> None:
    p = strata_run("--nproc", "2", "--as-torch", str(SCRIPTS / "torch_ddp.py"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert ok_ranks(p.stdout) == {"rank 0 ok", "rank 1 ok"}


def test_a_crashing_rank_makes_the_others_fail_fast() -> None:
    start = time.monotonic()
    p = strata_run("--nproc", "3", str(SCRIPTS / "crash.py"))
    assert time.monotonic() - start < 50  # the collective timeout is 60 s: they noticed the closed socket
    assert p.returncode == 3, p.stderr[-3000:]  # the first failure's status
    # the survivors caught a DistBackendError naming a peer that went away (rank 1, or one that failed after it)
    assert re.search(r"rank \d caught: rank \d: rank \d closed its connection", p.stdout), p.stdout


def test_single_process_group_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="RANK expected"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("mpi", rank=0, world_size=1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1, timeout=10)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        x = strata.tensor(np.arange(5, dtype=np.float32))
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        np.testing.assert_array_equal(x.numpy(), np.arange(5, dtype=np.float32))
        with pytest.raises(RuntimeError, match="No backend type associated with device type cuda"):
            dist.all_reduce(strata.ones(2, device="cuda"))
        with pytest.raises(ValueError, match="unsupported ReduceOp"):
            dist.all_reduce(x, op="BXOR")
        with pytest.raises(RuntimeError, match="twice"):
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
