"""STRATA_CLUSTER=ray: `strata run --nproc N` runs each rank as a Ray actor and the collectives move their
bytes between the actors through Ray (`ray_transport.py`). One local Ray instance serves the module (its
start costs seconds); `launch_on_ray` runs each job on it in this process. Skipped where ray is not
installed."""

import importlib.util
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from strata.framework.distributed.launch import free_port
from strata.framework.distributed.ray_cluster import cluster_address, launch_on_ray

SCRIPTS = Path(__file__).parent / "distributed_scripts"
HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (pip install ray)")


def test_cluster_address_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, want in (("", None), ("local", None), ("ray", ""), ("ray://head:10001", "ray://head:10001")):
        monkeypatch.setenv("STRATA_CLUSTER", value)
        assert cluster_address() == want
    monkeypatch.setenv("STRATA_CLUSTER", "slurm")
    with pytest.raises(ValueError, match="STRATA_CLUSTER must be"):
        cluster_address()


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    import ray  # type: ignore[import-not-found, unused-ignore]

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the actors' programs see (they inherit this process's environment through Ray's workers)."""
    monkeypatch.setenv("STRATA_NVCC", "0")  # no ptxas report per kernel: see test_distributed
    monkeypatch.delenv("STRATA_DEVICES", raising=False)


CHECKS = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import strata
    import strata.distributed as dist
    from strata.framework.distributed import api

    rank, phase = int(os.environ["RANK"]), sys.argv[1]
    dist.init_process_group("nccl", timeout=20)
    dev = "cuda:0"
    if phase == "big":  # 1 MiB per rank: messages in parts inside Ray's calls; 20 MiB: through the object store
        for n in (1 << 18, 5 << 20):
            x = (np.random.default_rng(rank).standard_normal(n)).astype(np.float32)
            t = strata.tensor(x, device=dev)
            dist.all_reduce(t)
            want = sum(np.random.default_rng(k).standard_normal(n).astype(np.float32) for k in range(2))
            np.testing.assert_allclose(t.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
        mesh = api._state.mesh
        print(f"rank {rank} big ok via {type(mesh).__name__} sent {mesh.bytes_sent}", flush=True)
    elif phase == "die":  # rank 1's process dies mid-job (no clean exit); rank 0 must fail fast, naming it
        # one collective first, and rank 1 dies a moment after it: dying as init_process_group returns could
        # cut rank 0's own init short (its last confirmations to rank 1), outside the try below
        dist.all_reduce(strata.ones(4, device=dev))
        if rank == 1:
            time.sleep(0.5)
            os._exit(3)
        start = time.monotonic()
        try:
            dist.all_reduce(strata.ones(4, device=dev))
        except dist.DistBackendError as exc:
            print(f"rank 0 caught after {time.monotonic() - start:.1f} s: {exc}", flush=True)
            sys.exit(7)
        print("no error", flush=True)
    dist.destroy_process_group()
""")


@needs_ray
def test_every_collective_ddp_and_faults_through_ray(ray_instance: None, env: None,
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    """The whole multi-process script of test_distributed (every collective against NumPy, DDP against one
    GPU, re-init, gloo, a mismatched collective, a timeout, a rank exiting mid-job), unchanged, on Ray."""
    status = launch_on_ray(2, str(SCRIPTS / "collectives.py"), [str(free_port())], model="h200", timeout=400)
    out, err = capfd.readouterr()
    for phase in ("nccl", "ddp", "reuse", "gloo", "mismatch", "timeout"):
        assert f"rank 0 {phase} ok" in out and f"rank 1 {phase} ok" in out, (phase, out[-2000:], err[-3000:])
    # the last phase: rank 1 exits with status 3 after init; rank 0's all_reduce fails naming it, status 7
    assert status == 3, err[-3000:]
    assert re.search(r"rank 0 caught: rank 0: rank 1 (closed its connection|aborted)", out), out[-2000:]
    assert "rank 0 (Ray actor) exited with status 7" in err


@needs_ray
def test_large_all_reduce_goes_through_ray(ray_instance: None, env: None, tmp_path: Path,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "checks.py"
    script.write_text(CHECKS)
    assert launch_on_ray(2, str(script), ["big"], model="h200", timeout=200) == 0, capfd.readouterr().err[-3000:]
    out = capfd.readouterr().out
    for r in (0, 1):  # a 2-rank ring all_reduce sends half the buffer twice
        assert f"rank {r} big ok via RayMesh sent {21 << 20}" in out, out


@needs_ray
def test_a_rank_whose_process_dies_fails_the_other_fast(ray_instance: None, env: None, tmp_path: Path,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "checks.py"
    script.write_text(CHECKS)
    start = time.monotonic()
    status = launch_on_ray(2, str(script), ["die"], model="h200", timeout=200)
    out, err = capfd.readouterr()
    assert status == 1, err[-3000:]  # rank 1's actor died: its status is 1, the first failure's
    m = re.search(r"rank 0 caught after ([\d.]+) s: rank 0: (.*)", out)
    assert m is not None, (out, err[-3000:])
    assert float(m.group(1)) < 10, m.group(0)  # the launcher's notice or the failed send, not the 20 s timeout
    assert "rank 1" in m.group(2) and ("exited or crashed" in m.group(2) or "Ray actor" in m.group(2)), m.group(2)
    assert "rank 1's Ray actor died" in err and "rank 0 (Ray actor) exited with status 7" in err
    assert time.monotonic() - start < 120


HANG = textwrap.dedent("""
    import os, sys, time
    import strata
    import strata.distributed as dist

    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl", timeout=120)
    with open(os.path.join(sys.argv[1], f"pid{rank}"), "w") as f:
        f.write(str(os.getpid()))
    if rank == 0:
        dist.all_reduce(strata.ones(4, device="cuda:0"))  # waits for rank 1, which never calls it
    time.sleep(120)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


@needs_ray
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_of_the_launcher_stops_every_rank_actor(ray_instance: None, tmp_path: Path,
                                                                 sig: signal.Signals, status: int) -> None:
    """`strata run` with STRATA_CLUSTER=ray (joining this module's Ray instance through RAY_ADDRESS): a
    signal to the launcher ends both ranks' actor processes, one blocked in a collective, one asleep."""
    import ray  # type: ignore[import-not-found, unused-ignore]

    script = tmp_path / "hang.py"
    script.write_text(HANG)
    env = dict(os.environ, STRATA_CLUSTER="ray", STRATA_NVCC="0", RAY_ADDRESS=ray.get_runtime_context().gcs_address)
    env.pop("STRATA_DEVICES", None)
    pids: list[int] = []
    with subprocess.Popen([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(script), str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as launcher:
        try:
            deadline = time.monotonic() + 120
            while len(pids) < 2 and time.monotonic() < deadline and launcher.poll() is None:
                pids = [int(p.read_text()) for p in tmp_path.glob("pid*") if p.read_text()]
                time.sleep(0.2)
            assert len(pids) == 2, launcher.communicate(timeout=30)[1][-3000:]
            assert os.getpid() not in pids and launcher.pid not in pids  # the ranks ran in the actors' processes
            time.sleep(0.3)  # rank 0 is now blocked in its all_reduce
            launcher.send_signal(sig)
            _, err = launcher.communicate(timeout=30)
            assert launcher.returncode == status, err[-3000:]
            assert "stopped 2 rank(s)" in err
            deadline = time.monotonic() + 15  # ray.kill ends the actors' processes shortly after it returns
            while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not [p for p in pids if _alive(p)], "a rank's actor process outlived the launcher"
        finally:
            if launcher.poll() is None:
                launcher.kill()
            for p in pids:
                if _alive(p):
                    os.kill(p, signal.SIGKILL)


@needs_ray
def test_a_rank_exiting_before_init_ends_the_others_meeting_at_once(ray_instance: None, env: None,
                                                                   capfd: pytest.CaptureFixture[str]) -> None:
    status = launch_on_ray(2, str(SCRIPTS / "crash.py"), [], model="h200", timeout=200)
    out, err = capfd.readouterr()
    assert status == 3, err[-3000:]
    # rank 0 waited for rank 1's hello; the launcher's notice ended it, not crash.py's 60 s timeout
    m = re.search(r"rank 0 caught after ([\d.]+) s: DistBackendError: .*never connected: rank 1 exited with status 3",
                  out)
    assert m is not None and float(m.group(1)) < 10, out + err[-2000:]


@needs_ray
def test_a_torch_distributed_script_runs_unchanged_as_torch_on_ray(ray_instance: None, env: None,
                                                                   capfd: pytest.CaptureFixture[str]) -> None:
    status = launch_on_ray(2, str(SCRIPTS / "torch_ddp.py"), [], model="h200", as_torch=True, timeout=200)
    out, err = capfd.readouterr()
    assert status == 0, err[-3000:]
    assert set(re.findall(r"rank \d+ ok", out)) == {"rank 0 ok", "rank 1 ok"}, out


FOUR = textwrap.dedent("""
    import os
    import numpy as np
    import strata
    import strata.distributed as dist

    dist.init_process_group("nccl", timeout=60)
    r, w, n = dist.get_rank(), dist.get_world_size(), 37
    data = [np.random.default_rng(k).standard_normal(w * n).astype(np.float32) for k in range(w)]
    t = lambda a: strata.tensor(a, device="cuda:0")
    x = t(data[r])
    dist.all_reduce(x)
    np.testing.assert_allclose(x.cpu().numpy(), np.sum(data, axis=0), rtol=1e-5, atol=1e-5)
    x = t(data[r])
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(x.cpu().numpy(), np.max(data, axis=0))
    b = t(data[r])
    dist.broadcast(b, src=2)
    np.testing.assert_array_equal(b.cpu().numpy(), data[2])
    g = t(np.zeros(w * w * n, np.float32))
    dist.all_gather_into_tensor(g, t(data[r]))
    np.testing.assert_array_equal(g.cpu().numpy(), np.concatenate(data))
    rs = t(np.zeros(n, np.float32))
    dist.reduce_scatter_tensor(rs, t(data[r]))
    np.testing.assert_allclose(rs.cpu().numpy(), np.sum(data, axis=0)[r * n:(r + 1) * n], rtol=1e-5, atol=1e-5)
    a = t(np.zeros(w * n, np.float32))
    dist.all_to_all_single(a, t(data[r]))
    np.testing.assert_array_equal(a.cpu().numpy(), np.concatenate([d[r * n:(r + 1) * n] for d in data]))
    odd = dist.new_group([1, 3])
    if r % 2:
        o = t(data[r])
        dist.all_reduce(o, group=odd)
        np.testing.assert_allclose(o.cpu().numpy(), data[1] + data[3], rtol=1e-5, atol=1e-5)
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {r} ok", flush=True)
""")


@needs_ray
def test_every_collective_on_four_ranks_through_ray(ray_instance: None, env: None, tmp_path: Path,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """Four ranks: ring steps between different peers, an all-to-all over three peers, a group of two;
    each result against NumPy."""
    script = tmp_path / "four.py"
    script.write_text(FOUR)
    status = launch_on_ray(4, str(script), [], model="h200", timeout=300)
    out, err = capfd.readouterr()
    assert status == 0, err[-3000:]
    assert set(re.findall(r"rank \d+ ok", out)) == {f"rank {r} ok" for r in range(4)}, out


@needs_ray
def test_rank_0_exiting_before_it_serves_the_store_ends_the_others_wait(ray_instance: None, env: None,
                                                                        tmp_path: Path,
                                                                        capfd: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "early.py"
    script.write_text(textwrap.dedent("""
        import os, sys, time
        import strata.distributed as dist

        if os.environ["RANK"] == "0":
            sys.exit(4)
        start = time.monotonic()
        try:
            dist.init_process_group("nccl", timeout=60)
        except dist.DistStoreError as exc:
            print(f"rank 1 caught after {time.monotonic() - start:.1f} s: {exc}", flush=True)
            sys.exit(7)
    """))
    assert launch_on_ray(2, str(script), [], model="h200", timeout=200) == 4
    out, err = capfd.readouterr()
    m = re.search(r"rank 1 caught after ([\d.]+) s: could not reach the rendezvous store .*: rank 0 exited with "
                  r"status 4", out)
    assert m is not None and float(m.group(1)) < 10, out + err[-2000:]


CRASH4 = textwrap.dedent("""
    import os, sys, time
    import strata
    import strata.distributed as dist

    dist.init_process_group("nccl", timeout=60)
    r = dist.get_rank()
    x = strata.ones(1000, device="cuda:0")
    dist.all_reduce(x)  # every pair of ranks has met
    dist.barrier()
    if r == 2:
        os._exit(3)  # the actor's process dies with it
    start = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(x)
    except dist.DistBackendError as exc:
        print(f"rank {r} caught after {time.monotonic() - start:.1f} s: {exc}", flush=True)
        sys.exit(7)
    print(f"rank {r} no error", flush=True)
""")


@needs_ray
def test_a_rank_crashing_mid_job_fails_every_other_rank_of_4_fast_on_ray(ray_instance: None, env: None,
                                                                         tmp_path: Path,
                                                                         capfd: pytest.CaptureFixture[str]) -> None:
    """Four ranks as Ray actors; rank 2's process dies in the middle: ranks 0, 1 and 3 (two of which never
    receive from it) each fail with an error naming it, well within the group's 60 s timeout."""
    script = tmp_path / "crash4.py"
    script.write_text(CRASH4)
    start = time.monotonic()
    status = launch_on_ray(4, str(script), [], model="h200", timeout=200)
    out, err = capfd.readouterr()
    assert status in (1, 7), err[-3000:]  # rank 2's dead actor (1), or a peer's 7 seen in the same poll
    assert "rank 2's Ray actor died" in err, err[-3000:]
    caught = {int(r): (float(s), why) for r, s, why in re.findall(r"rank (\d) caught after ([\d.]+) s: (.*)", out)}
    assert set(caught) == {0, 1, 3}, out + err[-3000:]
    for r, (seconds, why) in caught.items():
        assert seconds < 15, (r, seconds, why)
        assert "rank 2" in why, (r, why)
    assert time.monotonic() - start < 120


@needs_ray
def test_every_collective_and_dtype_on_two_ranks_through_ray(ray_instance: None, env: None,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    """distributed_scripts/matrix.py (every collective x every dtype x small/uneven, nccl and gloo, and large
    float32/bfloat16, against NumPy) with the bytes moving through RayMesh. Two ranks: the transport moves
    bytes whatever their dtype, and four ranks' collectives through Ray are tested above (the matrix on four
    ranks runs across local processes in test_distributed_matrix)."""
    status = launch_on_ray(2, str(SCRIPTS / "matrix.py"), [], model="h200", timeout=400)
    out, err = capfd.readouterr()
    assert status == 0, out[-2000:] + err[-3000:]
    got = re.findall(r"rank (\d) matrix ok (\d+)", out)
    assert sorted(r for r, _ in got) == ["0", "1"] and {k for _, k in got} == {"38"}, out
