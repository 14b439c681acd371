"""strata.distributed's uneven all-to-all: all_to_all_single with split sizes and the list form all_to_all.

The ring/exchange algorithms take a mesh of connections, so 2 and 4 ranks run here as threads of this
process, each with its own Mesh over real sockets and, for the nccl backend, its own in-process virtual
GPU (a DeviceBuffer); the end-to-end calls on tensors run in the 2-process launch of
test_distributed.py (collectives.py). The argument checks, worded as torch words them, run on a group of
one."""

import socket
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import strata
import strata.cuda as cuda
import strata.distributed as dist
from strata.cuda.device import devices_of_model
from strata.framework.distributed import algorithms as alg
from strata.framework.distributed.store import TCPStore
from strata.framework.distributed.transport import Mesh

RNG = np.random.default_rng(11)


def devices(n: int) -> list[cuda.Device]:
    """n devices of device 0's model (other tests leave devices of other models open, e.g. an MI300X, which has
    no peer path to an H200)."""
    return devices_of_model(n)


def run_ranks(n: int, body: Callable[[Mesh], Any], timeout: float = 20) -> list[Any]:
    """body(mesh) on n ranks, each a thread with its own mesh; their results (or raised errors)."""
    master = TCPStore("127.0.0.1", 0, n, is_master=True, timeout=timeout)
    results: list[Any] = [None] * n

    def rank(r: int) -> None:
        store = master if r == 0 else TCPStore("127.0.0.1", master.port, n, timeout=timeout)
        mesh = None
        try:
            mesh = Mesh(store, r, n, timeout)
            with mesh.call("all_to_all #1 of group 0 (dtype=test)"):
                results[r] = body(mesh)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            results[r] = exc
        finally:
            if mesh is not None:
                mesh.close()
            if r:
                store.close(linger=0)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 10)
    master.close(linger=0)
    assert not any(t.is_alive() for t in threads), "a rank hung"
    return results


def blocks(buf: Any, counts: list[int]) -> list[alg.Block]:
    out, off = [], 0
    for k in counts:
        out.append((buf, off, k))
        off += k
    return out


@pytest.mark.parametrize(("nr", "backend"), [(2, "gloo"), (4, "gloo"), (2, "nccl"), (4, "nccl")])
def test_uneven_all_to_all_between_ranks_against_numpy(nr: int, backend: str) -> None:
    """counts[i][j] elements from rank i to rank j, some zero: rank j's output is rank 0's block for j, then
    rank 1's, ... (NumPy's concatenation of the same slices)."""
    counts = RNG.integers(0, 7, (nr, nr))
    counts[0, 1] = 0
    data = [RNG.standard_normal(int(counts[i].sum())).astype(np.float32) for i in range(nr)]
    devs = devices(nr) if backend == "nccl" else []

    def buffer(r: int, a: np.ndarray) -> Any:
        if backend == "gloo":
            return alg.HostBuffer(a)
        x = cuda.DeviceArray((max(1, a.size),), np.float32, devs[r])
        if a.size:
            x.set(np.pad(a, (0, max(1, a.size) - a.size)))
        return alg.DeviceBuffer(x.ptr, a.size, np.dtype(np.float32), devs[r].index), x

    def body(mesh: Mesh) -> np.ndarray:
        r = mesh.rank
        inp = buffer(r, data[r].copy())
        out = buffer(r, np.zeros(int(counts[:, r].sum()), np.float32))
        if backend == "nccl":
            (inp, _keep_in), (out, keep_out) = inp, out
        alg.all_to_all(mesh, list(range(nr)), blocks(inp, counts[r].tolist()), blocks(out, counts[:, r].tolist()),
                       "all_to_all_single")
        if backend == "gloo":
            return out.array.copy()
        return keep_out.get()[:out.count]

    got = run_ranks(nr, body)
    for j in range(nr):
        offs = [int(counts[i, :j].sum()) for i in range(nr)]
        want = np.concatenate([data[i][offs[i]:offs[i] + counts[i, j]] for i in range(nr)])
        assert not isinstance(got[j], BaseException), got[j]
        np.testing.assert_array_equal(got[j], want)


def test_split_sizes_that_disagree_between_ranks_are_a_backend_error_naming_the_counts() -> None:
    """Rank 0 sends 2 elements to rank 1, which expects 3: rank 1 fails naming both counts; rank 0 (whose
    own blocks matched) is not left waiting."""
    send = {0: [1, 2], 1: [2, 2]}
    recv = {0: [1, 2], 1: [3, 2]}

    def body(mesh: Mesh) -> np.ndarray:
        r = mesh.rank
        inp = alg.HostBuffer(np.arange(sum(send[r]), dtype=np.int64))
        out = alg.HostBuffer(np.zeros(sum(recv[r]), np.int64))
        alg.all_to_all(mesh, [0, 1], blocks(inp, send[r]), blocks(out, recv[r]), "all_to_all_single")
        return out.array

    got = run_ranks(2, body)
    assert isinstance(got[1], dist.DistBackendError), got
    assert "expected 3 elements from rank 0, which sent 2" in str(got[1])
    np.testing.assert_array_equal(got[0], [0, 0, 1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_argument_checks_as_torch_words_them_and_a_group_of_one() -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1, timeout=10)
    try:
        x = strata.tensor(np.arange(12, dtype=np.float32).reshape(6, 2))
        out = strata.zeros(6, 2)
        dist.all_to_all_single(out, x, [6], [6])  # one rank: its own split, rows of 2 elements
        np.testing.assert_array_equal(out.numpy(), x.numpy())
        with pytest.raises(RuntimeError, match="^Number of tensor splits not equal to group size$"):
            dist.all_to_all_single(out, x, [3, 3], [3, 3])
        with pytest.raises(RuntimeError, match="^Split sizes doesn't match total dim 0 size$"):
            dist.all_to_all_single(out, x, [5], None)
        with pytest.raises(ValueError, match="rows must match"):
            dist.all_to_all_single(strata.zeros(4, 3), strata.zeros(4, 2))
        outs = [strata.zeros(3)]
        dist.all_to_all(outs, [strata.tensor(np.array([1, 2, 3], np.float32))])
        np.testing.assert_array_equal(outs[0].numpy(), [1, 2, 3])
        with pytest.raises(TypeError, match="Expected parameter `input_tensor_list` of type List"):
            dist.all_to_all(outs, strata.zeros(3))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="Invalid usage of tensors with different dtypes"):
            dist.all_to_all(outs, [strata.zeros(3, dtype=strata.float64)])
        with pytest.raises(ValueError, match=r"must hold one tensor per rank of the group \(1\), has 2"):
            dist.all_to_all(outs, [strata.zeros(3), strata.zeros(3)])
        with pytest.raises(dist.DistBackendError, match="expected 3 elements from rank 0, which sent 2"):
            dist.all_to_all(outs, [strata.zeros(2)])
    finally:
        dist.destroy_process_group()


def test_equal_splits_need_dim0_divisible_by_the_group_size() -> None:
    """torch's check when no split sizes are given (made before anything moves)."""
    with pytest.raises(RuntimeError, match="^Tensor's dim 0 does not divide equally across group size$"):
        dist.api._splits(None, strata.zeros(3, 2), 2)
    assert dist.api._splits(None, strata.zeros(4, 2), 2) == [2, 2]
