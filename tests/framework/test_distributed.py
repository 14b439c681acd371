"""strata.distributed: process groups across `strata run --nproc N` processes, collectives against NumPy,
DDP against single-GPU training, torch.distributed scripts under --as-torch, and every failure mode ending
in a typed error within a bounded time (crash before init, crash in a collective, a rank that never calls
the collective, mismatched collectives, a wrong MASTER_PORT, Ctrl-C of the launcher, use after destroy).

Starting a rank costs seconds (a Python process importing the framework), so one 2-rank launch of
`collectives.py` runs most phases and each test checks its phase's line; only the 4-GPU DDP equivalence
runs its own 4 ranks (marked slow)."""

import os
import re
import signal
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


def _env() -> dict[str, str]:
    """The ranks' environment. STRATA_NVCC=0: no `ptxas -v` register report per kernel (occupancy, which
    these tests do not check); it costs a subprocess per kernel in every rank, most of a rank's run."""
    env = dict(os.environ, STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"), STRATA_NVCC="0")
    env.pop("STRATA_DEVICES", None)
    return env


def strata_run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", *args], capture_output=True, text=True,
                          env=_env(), timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ok_ranks(out: str, phase: str = "") -> set[str]:
    """The 'rank N <phase> ok' lines (the ranks share one stdout, so lines may run together)."""
    return set(re.findall(rf"rank \d+ {phase + ' ' if phase else ''}ok", out))


@pytest.fixture(scope="module")
def two_ranks() -> subprocess.CompletedProcess[str]:
    """One `strata run --nproc 2 collectives.py` for the phase tests below."""
    return strata_run("--nproc", "2", str(SCRIPTS / "collectives.py"), str(free_port()))


@pytest.mark.parametrize("phase", ["nccl", "ddp", "reuse", "gloo", "mismatch", "timeout"])
def test_two_processes(two_ranks: subprocess.CompletedProcess[str], phase: str) -> None:
    """nccl/gloo: every collective and dtype class against NumPy; ddp: DDP on 2 GPUs equals one GPU on the
    combined batch; reuse: destroy then a collective raises, then a new group; mismatch/timeout: typed
    errors, fast (see collectives.py)."""
    assert ok_ranks(two_ranks.stdout, phase) == {f"rank {r} {phase} ok" for r in range(2)}, \
        two_ranks.stdout[-2000:] + two_ranks.stderr[-3000:]


def test_a_rank_crashing_in_a_collective_makes_the_other_fail_fast(two_ranks: subprocess.CompletedProcess[str]) \
        -> None:
    # the first failure's status: rank 1's, or rank 0's when both ended within one poll of the launcher
    assert two_ranks.returncode in (3, 7), two_ranks.stderr[-3000:]
    assert "strata run: rank 1 exited with status 3" in two_ranks.stderr, two_ranks.stderr[-3000:]
    assert re.search(r"rank 0 caught: rank 0: rank 1 closed its connection", two_ranks.stdout), two_ranks.stdout


def test_a_rank_crashing_before_init_ends_the_rendezvous_at_once() -> None:
    start = time.monotonic()
    p = strata_run("--nproc", "2", str(SCRIPTS / "crash.py"))
    assert p.returncode == 3, p.stderr[-3000:]
    # rank 0 waited in the rendezvous for rank 1; the launcher reported the exit, not the 60 s timeout
    m = re.search(r"rank 0 caught after ([\d.]+) s: DistStoreError: .*rank 1 exited with status 3", p.stdout)
    assert m is not None and float(m.group(1)) < 10, p.stdout + p.stderr[-2000:]
    assert time.monotonic() - start < 60


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="checks for leftover processes in /proc")
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_of_the_launcher_stops_every_rank(sig: signal.Signals, status: int) -> None:
    pids: list[int] = []
    with subprocess.Popen([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(SCRIPTS / "hang.py")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()) as launcher:
        _interrupt(launcher, pids, sig, status)


def _interrupt(launcher: subprocess.Popen[str], pids: list[int], sig: signal.Signals, status: int) -> None:
    try:
        assert launcher.stdout is not None
        deadline = time.monotonic() + 120
        while len(pids) < 2 and time.monotonic() < deadline:
            line = launcher.stdout.readline()
            if not line:
                break
            pids += [int(p) for p in re.findall(r"pid (\d+) waiting", line)]
        assert len(pids) == 2, launcher.stderr.read() if launcher.stderr else ""
        time.sleep(0.3)  # rank 0 is now blocked in its all_reduce
        start = time.monotonic()
        launcher.send_signal(sig)
        try:  # drain both pipes meanwhile: a launcher blocked on a full pipe would be the test's doing
            _, err = launcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the launcher did not exit within 30 s of {sig.name}: {_where(launcher.pid, *pids)}")
        code = launcher.returncode
        assert time.monotonic() - start < 15, err
        assert code == status
        assert not [p for p in pids if _alive(p)], "a rank outlived the launcher"
    finally:
        if launcher.poll() is None:
            launcher.kill()
        for p in pids:
            if _alive(p):
                os.kill(p, signal.SIGKILL)


def _where(*pids: int) -> str:
    """What each process is blocked in (state and kernel wait channel), for a failure message."""
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
        except OSError:
            state, wchan = "gone", "-"
        out.append(f"pid {pid} state {state} wchan {wchan}")
    return "; ".join(out)


def test_a_torch_distributed_script_runs_unchanged_as_torch() -> None:
    p = strata_run("--nproc", "2", "--as-torch", str(SCRIPTS / "torch_ddp.py"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert ok_ranks(p.stdout) == {"rank 0 ok", "rank 1 ok"}


@pytest.mark.slow
def test_ddp_on_4_gpus_equals_one_gpu_on_the_combined_batch() -> None:
    p = strata_run("--nproc", "4", str(SCRIPTS / "ddp_train.py"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert ok_ranks(p.stdout) == {f"rank {r} ok" for r in range(4)}


def test_single_process_group_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="RANK expected"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("mpi", rank=0, world_size=1)
    port = free_port()
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
        with pytest.raises(TypeError, match="dtype"):
            dist.all_to_all_single(strata.zeros(4, dtype=strata.float64), strata.zeros(4))
        dist.barrier()
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.barrier()


def test_a_wrong_master_port_is_a_store_error_within_the_timeout() -> None:
    port = free_port()  # nobody serves it: rank 1 waits for a store that never comes
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match=f"could not reach the rendezvous store at 127.0.0.1:{port}"):
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=1, world_size=2, timeout=0.3)
    assert time.monotonic() - start < 5
    with socket.socket() as taken:  # rank 0 cannot serve a port another process listens on
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(dist.DistStoreError, match="could not serve the rendezvous store"):
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{taken.getsockname()[1]}", rank=0,
                                    world_size=2, timeout=0.3)
        start = time.monotonic()  # rank 1 meets a listener that never answers as a store does
        with pytest.raises(dist.DistStoreError, match="went away"):
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{taken.getsockname()[1]}", rank=1,
                                    world_size=2, timeout=0.3)
        assert time.monotonic() - start < 5
    assert not dist.is_initialized()


def test_a_rank_that_never_joins_the_mesh_is_a_timeout() -> None:
    """Rank 0 alone in a world of 2, with the store up: it waits for rank 1's address, then gives up."""
    port = free_port()
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match=r"strata/mesh/1.*did not appear .* within 0.5 s"):
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=2, timeout=0.5)
    assert time.monotonic() - start < 5 and not dist.is_initialized()


def test_a_rank_waiting_for_a_lower_rank_stops_when_the_launcher_reports_it_dead() -> None:
    """Rank 1 of 2 waits for rank 0 to connect to it; the launcher's report in the store ends the wait."""
    from strata.framework.distributed.store import FAILED_KEY, TCPStore
    from strata.framework.distributed.transport import Mesh

    store = TCPStore("127.0.0.1", 0, is_master=True, timeout=5)
    try:
        store.set(FAILED_KEY, "rank 0 exited with status 9")
        start = time.monotonic()
        with pytest.raises(dist.DistBackendError, match=r"\[0\] never connected: rank 0 exited with status 9"):
            Mesh(store, 1, 2, timeout=5)
        assert time.monotonic() - start < 2
    finally:
        store.close(linger=0)
