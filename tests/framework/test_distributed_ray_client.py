"""STRATA_CLUSTER=ray://host:port (Ray Client) end to end: a Ray head with a client server is started here as
a separate process group (`ray start --head --block`, its own temporary folder, token authentication with
a token made for the test), `strata run --nproc 2` connects to it as a Ray Client, and the head and every
process it started are stopped at the end. Skipped with the reason where ray or its client part (grpcio)
is not installed.

Also `Program`, which ships the rank program to nodes that do not have it (what a remote cluster needs):
end to end with the launcher in a mount namespace of its own, whose script the cluster cannot see."""

import contextlib
import importlib.util
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from strata.framework.distributed.ray_cluster import Program

SCRIPTS = Path(__file__).parent / "distributed_scripts"
HAVE_RAY = importlib.util.find_spec("ray") is not None
HAVE_CLIENT = HAVE_RAY and importlib.util.find_spec("grpc") is not None
needs_client = pytest.mark.skipif(not HAVE_CLIENT, reason="Ray Client needs ray and grpcio (pip install 'ray[client]')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _group(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (the head's: everything `ray start` started)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


class Head:
    """A Ray head with a Ray Client server on 127.0.0.1, and what a client needs to reach it."""

    def __init__(self, proc: subprocess.Popen[bytes], address: str, env: dict[str, str], log: Path) -> None:
        self.proc, self.address, self.env, self.log = proc, address, env, log


@pytest.fixture(scope="module")
def head() -> Iterator[Head]:
    with _ray_head() as h:
        yield h


@contextlib.contextmanager
def _ray_head() -> Iterator[Head]:
    if sys.platform != "linux":
        pytest.skip("stops the Ray head's processes by process group, read from /proc")
    folder = Path(tempfile.mkdtemp(prefix="strata-ray-", dir="/tmp"))  # short: Ray's socket paths must fit
    gcs, client = _free_port(), _free_port()
    # token authentication (which Ray also turns on by itself where ~/.ray/auth_token exists), with a token of
    # this test's own: the client must present it
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    env.pop("RAY_ADDRESS", None)
    log = folder / "head.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", "--head", f"--port={gcs}",
                                 f"--ray-client-server-port={client}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
                                 "--include-dashboard=false", f"--temp-dir={folder / 'ray'}", "--disable-usage-stats",
                                 "--block"],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", client)) == 0:
                    break
            time.sleep(0.5)
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        yield Head(proc, f"ray://127.0.0.1:{client}", env, log)
    finally:
        # SIGTERM: `ray start --block` stops what it started, but takes up to half a minute; after a few
        # seconds whatever of its group is left is killed (nothing of the cluster is kept)
        with _suppress_gone():
            os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.3)
        for pid in _group(proc.pid):
            with _suppress_gone():
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


class _suppress_gone:  # noqa: N801 - used as contextlib.suppress is
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> bool:
        return kind is not None and issubclass(kind, ProcessLookupError)


def _launcher_env(h: Head) -> dict[str, str]:
    env = dict(h.env, STRATA_CLUSTER=h.address, STRATA_NVCC="0",
               STRATA_KERNEL_TIMEOUT=os.environ.get("STRATA_KERNEL_TIMEOUT", "300"))
    env.pop("STRATA_DEVICES", None)
    return env


JOB = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import strata
    import strata.distributed as dist
    from strata.framework.distributed import api

    rank, phase = int(os.environ["RANK"]), sys.argv[1]
    dist.init_process_group("nccl", timeout=30)
    r, w, dev = dist.get_rank(), dist.get_world_size(), "cuda:0"
    if phase == "job":
        data = [np.random.default_rng(k).standard_normal(1000).astype(np.float32) for k in range(w)]
        x = strata.tensor(data[r], device=dev)
        dist.all_reduce(x)
        np.testing.assert_allclose(x.cpu().numpy(), np.sum(data, axis=0), rtol=1e-5, atol=1e-5)
        ints = [np.random.default_rng(k).integers(-99, 99, 77).astype(np.int64) for k in range(w)]
        xi = strata.tensor(ints[r], device=dev)
        dist.all_reduce(xi, op=dist.ReduceOp.MAX)
        np.testing.assert_array_equal(xi.cpu().numpy(), np.max(ints, axis=0))
        b = strata.tensor(data[r], device=dev)
        dist.broadcast(b, src=1)
        np.testing.assert_array_equal(b.cpu().numpy(), data[1])
        sys.path.insert(0, sys.argv[2])
        from ddp_train import check_ddp
        check_ddp(dev, steps=2)
        print(f"rank {r} job ok via {type(api._state.mesh).__name__} in pid {os.getpid()}", flush=True)
    elif phase == "die":
        if r == 1:
            os._exit(3)
        start = time.monotonic()
        try:
            dist.all_reduce(strata.ones(4, device=dev))
        except dist.DistBackendError as exc:
            print(f"rank 0 caught after {time.monotonic() - start:.1f} s: {exc}", flush=True)
            sys.exit(7)
    elif phase == "hang":
        with open(os.path.join(sys.argv[2], f"pid{r}"), "w") as f:
            f.write(str(os.getpid()))
        if r == 0:
            dist.all_reduce(strata.ones(4, device=dev))  # waits for rank 1, which never calls it
        time.sleep(120)
    dist.destroy_process_group()
""")


def _run(h: Head, script: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(script), *args],
                          capture_output=True, text=True, env=_launcher_env(h), timeout=timeout)


@needs_client
def test_a_job_through_ray_client_collectives_ddp_and_a_crash(head: Head, tmp_path: Path) -> None:
    """Two ranks as Ray actors on the cluster behind ray://: all_reduce and broadcast against NumPy, DDP
    against one GPU, the bytes over RayMesh; then rank 1 dies mid-job and rank 0 fails fast naming it."""
    script = tmp_path / "job.py"
    script.write_text(JOB)
    p = _run(head, script, "job", str(SCRIPTS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    lines = re.findall(r"rank (\d) job ok via (\w+) in pid (\d+)", p.stdout)
    assert sorted(r for r, _, _ in lines) == ["0", "1"], p.stdout
    assert {m for _, m, _ in lines} == {"RayMesh"}
    assert not {int(pid) for _, _, pid in lines} & {os.getpid()}  # the ranks ran in the cluster's workers
    assert "Passing the following kwargs" not in p.stderr  # Ray Client's notice is silenced

    start = time.monotonic()
    p = _run(head, script, "die")
    assert p.returncode == 1, p.stderr[-3000:]  # rank 1's actor died (os._exit): the first failure
    m = re.search(r"rank 0 caught after ([\d.]+) s: rank 0: (.*)", p.stdout)
    assert m is not None and float(m.group(1)) < 15, p.stdout + p.stderr[-3000:]  # not the 30 s timeout
    assert "rank 1" in m.group(2)
    assert "rank 1's Ray actor died" in p.stderr and "rank 0 (Ray actor) exited with status 7" in p.stderr
    assert time.monotonic() - start < 120


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@needs_client
def test_ctrl_c_of_a_ray_client_launcher_stops_every_rank(head: Head, tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    pids: list[int] = []
    with subprocess.Popen([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(script), "hang",
                           str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=_launcher_env(head)) as launcher:
        try:
            deadline = time.monotonic() + 120
            while len(pids) < 2 and time.monotonic() < deadline and launcher.poll() is None:
                pids = [int(t) for p in tmp_path.glob("pid*") if (t := p.read_text())]
                time.sleep(0.2)
            assert len(pids) == 2, launcher.communicate(timeout=30)[1][-3000:]
            time.sleep(0.5)  # rank 0 is now blocked in its all_reduce
            launcher.send_signal(signal.SIGINT)
            _, err = launcher.communicate(timeout=60)
            assert launcher.returncode == 130, err[-3000:]
            assert "interrupted; stopped 2 rank(s)" in err
            deadline = time.monotonic() + 20
            while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not [p for p in pids if _alive(p)], "a rank's actor process outlived the launcher"
        finally:
            if launcher.poll() is None:
                launcher.kill()
            for p in pids:
                if _alive(p):
                    os.kill(p, signal.SIGKILL)


@needs_client
@pytest.mark.slow
def test_a_wrong_token_is_a_clear_connection_error(head: Head, tmp_path: Path) -> None:
    """A client without the cluster's token: the launcher says it could not connect and what Ray Client needs
    (exit status 1) once Ray's connection attempts end, instead of a traceback."""
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = dict(_launcher_env(head), RAY_AUTH_TOKEN=secrets.token_hex(32),  # and Ray's retries shortened
               RAY_CLIENT_INITIAL_CONNECTION_TIMEOUT_S="1", RAY_CLIENT_MAX_CONNECTION_TIMEOUT_S="2")
    p = subprocess.run([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(script), "job"],
                       capture_output=True, text=True, env=env, timeout=200)
    assert p.returncode == 1, p.stderr[-3000:]
    assert f"could not connect to Ray at {head.address}" in p.stderr and "RAY_AUTH_MODE=token" in p.stderr
    assert "Traceback" not in p.stderr


SHIPPED = textwrap.dedent("""
    import os
    import numpy as np
    import strata
    import strata.distributed as dist

    dist.init_process_group("nccl", timeout=30)
    r = dist.get_rank()
    x = strata.tensor(np.full(5, r + 1, np.float32), device="cuda:0")
    dist.all_reduce(x)
    assert x.cpu().numpy().tolist() == [3.0] * 5
    print(f"rank {r} ran {__file__}", flush=True)
    dist.destroy_process_group()
""")


def _private_mounts() -> bool:
    """Whether this process may make a mount namespace of its own (root with CAP_SYS_ADMIN)."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@needs_client
def test_a_script_only_the_launcher_can_see_runs_from_the_shipped_copy(head: Head, tmp_path: Path) -> None:
    """The launcher runs in a mount namespace of its own, its script on a tmpfs there: the cluster's workers
    cannot see the file, as on a remote cluster, and run the copy the launcher shipped."""
    if not _private_mounts():
        pytest.skip("needs `unshare -m` (root with CAP_SYS_ADMIN) to hide the script from the cluster")
    private = tmp_path / "private"
    private.mkdir()
    launch = ('mount -t tmpfs strata-private "$1" && cat > "$1/job.py" && '
              'exec "$2" -m strata.cli run --nproc 2 "$1/job.py"')
    p = subprocess.run(["unshare", "-m", "sh", "-c", launch, "sh", str(private), sys.executable],
                       input=SHIPPED, capture_output=True, text=True, env=_launcher_env(head), timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert not (private / "job.py").exists()  # outside the launcher's namespace there is no such file
    ran = dict(re.findall(r"rank (\d) ran (\S+)", p.stdout))
    assert sorted(ran) == ["0", "1"], p.stdout
    for path in ran.values():
        assert Path(path).name == "job.py" and Path(path).parent.name.startswith("strata-rank-"), path
        assert not Path(path).exists()  # removed after the run


def test_the_program_runs_where_it_is_or_from_a_shipped_copy(tmp_path: Path) -> None:
    """A node with the launcher's file at the same path runs it there (its neighbours stay importable); a
    node without it, or with another file there, runs a copy of the launcher's bytes with its mode bits."""
    script = tmp_path / "prog.py"
    script.write_bytes(b"print('hello')\n")
    script.chmod(0o751)
    shipped = Program.read(str(script))
    assert (shipped.path, shipped.data, shipped.mode) == (str(script), b"print('hello')\n", 0o751)
    assert shipped.place() == (str(script), None)

    for change in ("edit", "remove"):
        if change == "edit":
            script.write_bytes(b"print('another')\n")
        else:
            script.unlink()
        path, folder = shipped.place()
        try:
            assert folder is not None and path == os.path.join(folder, "prog.py") and path != str(script)
            assert Path(path).read_bytes() == b"print('hello')\n"
            assert os.stat(path).st_mode & 0o777 == 0o751
        finally:
            if folder is not None:
                shutil.rmtree(folder)

    with pytest.raises(OSError):
        Program.read(str(tmp_path / "missing.py"))


@needs_client
@pytest.mark.slow
def test_a_launcher_whose_cluster_dies_says_so_and_leaves_nothing_running(tmp_path: Path) -> None:
    """The head (and with it every rank's actor) is killed mid-job: the launcher, a Ray Client, ends with
    one clear message within seconds of Ray's reconnection grace, and starts no local Ray instance of its
    own on the way out (as Ray's automatic ray.init would on a ray.kill after the connection is gone)."""
    script = tmp_path / "job.py"
    script.write_text(JOB)
    with _ray_head() as h:
        env = dict(_launcher_env(h), RAY_CLIENT_RECONNECT_GRACE_PERIOD="3")
        with subprocess.Popen([sys.executable, "-m", "strata.cli", "run", "--nproc", "2", str(script), "hang",
                               str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                              start_new_session=True) as launcher:
            try:
                deadline = time.monotonic() + 120
                while len(list(tmp_path.glob("pid*"))) < 2 and time.monotonic() < deadline and launcher.poll() is None:
                    time.sleep(0.2)
                assert len(list(tmp_path.glob("pid*"))) == 2, launcher.communicate(timeout=30)[1][-3000:]
                for pid in _group(h.proc.pid):  # the whole cluster dies at once
                    with _suppress_gone():
                        os.kill(pid, signal.SIGKILL)
                start = time.monotonic()
                _, err = launcher.communicate(timeout=90)
                assert launcher.returncode == 1, err[-3000:]
                assert f"lost the connection to the Ray cluster at {h.address}" in err, err[-3000:]
                assert time.monotonic() - start < 60
                time.sleep(1)
                assert not _group(launcher.pid), "the launcher left processes running (a local Ray instance?)"
            finally:
                if launcher.poll() is None:
                    launcher.kill()
                for pid in _group(launcher.pid):
                    with _suppress_gone():
                        os.kill(pid, signal.SIGKILL)
