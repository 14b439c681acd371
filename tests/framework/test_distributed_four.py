"""Issue 18's tests at 4 ranks under `strata run --nproc 4` (local processes): a torch.distributed script runs
unchanged with --as-torch, and a rank that crashes in the middle of a job makes every other rank fail with
a clear error naming it, well within the group's timeout, including the ranks that do not exchange data
with it directly (the ring's abort reaches them)."""

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

SCRIPTS = Path(__file__).parent / "distributed_scripts"

CRASH = textwrap.dedent("""
    import os, sys, time
    import strata
    import strata.distributed as dist

    dist.init_process_group("nccl", timeout=60)
    r = dist.get_rank()
    x = strata.ones(1000, device="cuda:0")
    dist.all_reduce(x)  # every pair of ranks has met
    dist.barrier()
    if r == 2:
        os._exit(3)  # no clean exit: the kernel closes its sockets
    start = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(x)
    except dist.DistBackendError as exc:
        print(f"rank {r} caught after {time.monotonic() - start:.1f} s: {exc}", flush=True)
        sys.exit(7)
    print(f"rank {r} no error", flush=True)
""")


def _strata_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STRATA_NVCC="0", STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"))
    env.pop("STRATA_DEVICES", None)
    env.pop("STRATA_CLUSTER", None)
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def test_a_torch_distributed_script_runs_unchanged_on_4_ranks_as_torch() -> None:
    p = _strata_run("--nproc", "4", "--as-torch", str(SCRIPTS / "torch_ddp.py"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert set(re.findall(r"rank \d ok", p.stdout)) == {f"rank {r} ok" for r in range(4)}, p.stdout


def test_a_rank_crashing_mid_job_fails_every_other_rank_of_4_fast(tmp_path: Path) -> None:
    script = tmp_path / "crash4.py"
    script.write_text(CRASH)
    start = time.monotonic()
    p = _strata_run("--nproc", "4", str(script))
    # the first failure's status: rank 2's, or another's when it ended within the same poll of the launcher
    assert p.returncode in (3, 7), p.stderr[-3000:]
    assert "strata run: rank 2 exited with status 3" in p.stderr, p.stderr[-3000:]
    # each rank's message runs to the next rank's (four processes share the pipe: their lines may interleave)
    found = list(re.finditer(r"rank (\d) caught after ([\d.]+) s: ", p.stdout))
    ends = [m.start() for m in found[1:]] + [len(p.stdout)]
    caught = {int(m[1]): (float(m[2]), p.stdout[m.end():end]) for m, end in zip(found, ends, strict=True)}
    assert set(caught) == {0, 1, 3}, p.stdout + p.stderr[-3000:]
    for r, (seconds, why) in caught.items():
        assert seconds < 15, (r, seconds, why)  # the closed connection or the abort, not the 60 s timeout
        assert "rank 2" in why, (r, why)
    assert time.monotonic() - start < 120
