"""STRATA_CLUSTER=ray: `strata run --nproc N` places each rank on a Ray cluster (a local Ray instance
here). Skipped where ray is not installed."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from strata.framework.distributed.ray_cluster import cluster_address

SCRIPTS = Path(__file__).parent / "distributed_scripts"


def test_cluster_address_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, want in (("", None), ("local", None), ("ray", ""), ("ray://head:10001", "ray://head:10001")):
        monkeypatch.setenv("STRATA_CLUSTER", value)
        assert cluster_address() == want
    monkeypatch.setenv("STRATA_CLUSTER", "slurm")
    with pytest.raises(ValueError, match="STRATA_CLUSTER must be"):
        cluster_address()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install ray)")
def test_ranks_as_ray_actors_run_every_collective() -> None:
    env = dict(os.environ, STRATA_CLUSTER="ray", STRATA_NVCC="0",  # no ptxas report per kernel: see test_distributed
               STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"))
    env.pop("STRATA_DEVICES", None)
    p = subprocess.run([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(SCRIPTS / "collectives.py"),
                        "nccl"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert set(re.findall(r"rank \d+ ok", p.stdout)) == {"rank 0 ok", "rank 1 ok"}
