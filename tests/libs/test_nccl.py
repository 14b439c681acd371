"""strata.libs.nccl: collectives between in-process virtual GPUs, run as device kernels, against NumPy."""

import shutil
import threading
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.cuda.device import devices_of_model
from strata.driver import open_device
from strata.libs import nccl
from strata.libs.nccl import DataType, NcclError, NcclTimeoutError

RNG = np.random.default_rng(7)


def devices(n: int) -> list[cuda.Device]:
    """n devices of device 0's model (other tests leave devices of other models open, e.g. an MI300X, which has
    no peer path to an H200)."""
    return devices_of_model(n)


def host(dt: np.dtype, n: int) -> np.ndarray:
    if np.issubdtype(dt, np.integer):
        return RNG.integers(-5 if np.issubdtype(dt, np.signedinteger) else 0, 6, n).astype(dt)
    return RNG.uniform(0.5, 2.0, n).astype(dt)  # positive: prod stays well conditioned


def upload(devs: list[cuda.Device], arrays: list[np.ndarray]) -> list[cuda.DeviceArray]:
    out = []
    for d, a in zip(devs, arrays, strict=True):
        x = cuda.DeviceArray(a.shape, a.dtype, d)
        x.set(a)
        out.append(x)
    return out


def empty(devs: list[cuda.Device], n: int, dt: np.dtype) -> list[cuda.DeviceArray]:
    return [cuda.DeviceArray((n,), dt, d) for d in devs]


def grouped(fn: Callable[[int], object], n: int) -> None:
    nccl.group_start()
    for r in range(n):
        fn(r)
    nccl.group_end()


def close(comms: list[nccl.Communicator]) -> None:
    for c in comms:
        nccl.comm_destroy(c)


def tol(dt: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for results of dtype `dt`."""
    if dt == np.float16 or dt == ml_dtypes.bfloat16:
        return 2e-2, 2e-2
    return (1e-5, 1e-6) if np.issubdtype(dt, np.floating) else (0.0, 0.0)


NP_OPS = {"sum": lambda a: np.sum(a, axis=0), "prod": lambda a: np.prod(a, axis=0),
          "max": lambda a: np.max(a, axis=0), "min": lambda a: np.min(a, axis=0),
          "avg": lambda a: np.mean(a, axis=0)}


@pytest.mark.parametrize("algorithm", ["ring", "tree"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "avg"])
def test_all_reduce_every_op_on_4_ranks(op: str, algorithm: str) -> None:
    devs = devices(4)
    comms = nccl.comm_init_all(devs)
    n = 1003  # not a multiple of the ranks: uneven chunks
    hs = [host(np.dtype(np.float32), n) for _ in devs]
    xs, ys = upload(devs, hs), empty(devs, n, np.dtype(np.float32))
    grouped(lambda r: nccl.all_reduce(xs[r], ys[r], n, "float32", op, comms[r], algorithm=algorithm), 4)
    want = NP_OPS[op](np.stack(hs).astype(np.float64))
    for y in ys:
        np.testing.assert_allclose(y.get(), want, rtol=1e-5)
    close(comms)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16,
                                np.float32, np.float64, ml_dtypes.bfloat16])
def test_all_reduce_every_dtype_in_place_on_2_ranks(dt: type) -> None:
    dtype = np.dtype(dt)
    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    n = 65
    hs = [host(dtype, n) for _ in devs]
    xs = upload(devs, hs)
    grouped(lambda r: nccl.all_reduce(xs[r], xs[r], n, dtype, "sum", comms[r]), 2)
    want = (hs[0].astype(np.float64) + hs[1].astype(np.float64)).astype(dtype) if dtype.kind == "f" or \
        dtype == ml_dtypes.bfloat16 else hs[0] + hs[1]
    for x in xs:
        np.testing.assert_allclose(x.get().astype(np.float64), want.astype(np.float64), *tol(dtype))
    close(comms)


def test_all_reduce_on_8_ranks_traces_every_step_and_models_busbw() -> None:
    devs = devices(8)
    comms = nccl.comm_init_all(devs)
    n = 4096
    hs = [host(np.dtype(np.float32), n) for _ in devs]
    xs = upload(devs, hs)
    streams = [cuda.Stream(device=d) for d in devs]
    with trace.record() as rec:
        nccl.group_start()
        works = [nccl.all_reduce(xs[r], xs[r], n, DataType.ncclFloat32, nccl.RedOp.ncclSum, comms[r], streams[r],
                                 algorithm="ring") for r in range(8)]
        nccl.group_end()
    for s in streams:
        s.synchronize()
    for x in xs:
        np.testing.assert_allclose(x.get(), np.sum(hs, axis=0), rtol=1e-5)
    steps = [e for e in rec.events if e.name == "nccl_step"]
    assert len(steps) == 2 * 7 * 8  # 2(n-1) steps on each of 8 ranks
    assert {e.args["phase"] for e in steps} == {"reduce-scatter", "all-gather"}
    m = works[0].model
    assert m is not None and m.busbw == pytest.approx(m.algbw * 2 * 7 / 8)
    # peer traffic: each rank read its predecessor's chunks over the link
    assert devs[1].peer_traffic()[devs[0].index] > 0
    close(comms)


@pytest.mark.parametrize("dt", [np.float16, np.int32])
def test_broadcast_reduce_all_gather_reduce_scatter_on_3_ranks(dt: type) -> None:
    dtype = np.dtype(dt)
    devs = devices(3)
    comms = nccl.comm_init_all(devs)
    n = 50
    hs = [host(dtype, n) for _ in devs]
    xs = upload(devs, hs)
    # broadcast from rank 1
    ys = empty(devs, n, dtype)
    grouped(lambda r: nccl.broadcast(xs[r], ys[r], n, dtype, 1, comms[r]), 3)
    for y in ys:
        np.testing.assert_array_equal(y.get(), hs[1])
    # reduce (max) to rank 2
    zs = empty(devs, n, dtype)
    grouped(lambda r: nccl.reduce(xs[r], zs[r], n, dtype, "max", 2, comms[r]), 3)
    np.testing.assert_array_equal(zs[2].get(), np.max(hs, axis=0))
    # all_gather
    gs = empty(devs, 3 * n, dtype)
    grouped(lambda r: nccl.all_gather(xs[r], gs[r], n, dtype, comms[r]), 3)
    for g in gs:
        np.testing.assert_array_equal(g.get(), np.concatenate(hs))
    # reduce_scatter (sum) of the gathered buffers: rank r gets 3 x block r
    rs = empty(devs, n, dtype)
    grouped(lambda r: nccl.reduce_scatter(gs[r], rs[r], n, dtype, "sum", comms[r]), 3)
    for r, x in enumerate(rs):
        np.testing.assert_allclose(x.get().astype(np.float64), (3 * hs[r].astype(np.float64)), *tol(dtype))
    close(comms)


def test_reduce_avg_and_all_to_all_and_send_recv_on_4_ranks() -> None:
    devs = devices(4)
    comms = nccl.comm_init_all(devs)
    n = 16
    hs = [host(np.dtype(np.float64), 4 * n) for _ in devs]
    xs = upload(devs, hs)
    out = empty(devs, 4 * n, np.dtype(np.float64))
    grouped(lambda r: nccl.reduce(xs[r], out[r], 4 * n, "float64", "avg", 0, comms[r]), 4)
    np.testing.assert_allclose(out[0].get(), np.mean(hs, axis=0), rtol=1e-12)
    # all_to_all: block j of rank i lands in block i of rank j
    grouped(lambda r: nccl.all_to_all(xs[r], out[r], n, "float64", comms[r]), 4)
    for j in range(4):
        np.testing.assert_array_equal(out[j].get(), np.concatenate([hs[i][j * n:(j + 1) * n] for i in range(4)]))
    # send/recv around the ring: rank r sends to r+1
    ring = empty(devs, 4 * n, np.dtype(np.float64))

    def shift(r: int) -> None:
        nccl.send(xs[r], 4 * n, "float64", (r + 1) % 4, comms[r])
        nccl.recv(ring[r], 4 * n, "float64", (r - 1) % 4, comms[r])

    grouped(shift, 4)
    for r in range(4):
        np.testing.assert_array_equal(ring[r].get(), hs[(r - 1) % 4])
    close(comms)


def test_one_thread_per_rank_with_comm_init_rank() -> None:
    devs = devices(4)
    uid = nccl.get_unique_id()
    n = 257
    hs = [host(np.dtype(np.float32), n) for _ in devs]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def rank(r: int) -> None:
        try:
            comm = nccl.comm_init_rank(4, uid, r, devs[r], timeout=30)
            x = cuda.DeviceArray((n,), np.float32, devs[r])
            x.set(hs[r])
            nccl.all_reduce(x, x, n, "float32", "sum", comm)  # no group: waits for the other threads
            nccl.all_reduce(x, x, n, "float32", "max", comm)
            results[r] = x.get()
            nccl.comm_destroy(comm)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    want = np.sum(hs, axis=0)
    for r in range(4):
        np.testing.assert_allclose(results[r], want, rtol=1e-5)


def test_mismatched_counts_name_both_ranks_arguments() -> None:
    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    xs = empty(devs, 16, np.dtype(np.float32))
    with pytest.raises(NcclError) as info:
        nccl.group_start()
        nccl.all_reduce(xs[0], xs[0], 16, "float32", "sum", comms[0])
        nccl.all_reduce(xs[1], xs[1], 12, "float32", "sum", comms[1])
        nccl.group_end()
    msg = str(info.value)
    assert info.value.status == "ncclInvalidUsage"
    assert "rank 0 all_reduce(count=16, datatype=ncclFloat32" in msg and "rank 1 all_reduce(count=12" in msg
    with pytest.raises(NcclError) as info:
        nccl.group_start()
        nccl.all_gather(xs[0], xs[0], 8, "float32", comms[0])
        nccl.all_gather(xs[1], xs[1], 8, "int32", comms[1])
        nccl.group_end()
    assert "ncclFloat32" in str(info.value) and "ncclInt32" in str(info.value)
    close(comms)


def test_invalid_arguments() -> None:
    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    x0 = cuda.DeviceArray((8,), np.float32, devs[0])
    with pytest.raises(NcclError) as info:
        nccl.all_reduce(x0, x0, 8, "float32", "sum", comms[1])  # rank 1's buffer is on device 0
    assert info.value.status == "ncclInvalidArgument" and "device" in str(info.value)
    with pytest.raises(NcclError, match="holds 32 bytes"):
        nccl.all_reduce(x0, x0, 9, "float32", "sum", comms[0])
    with pytest.raises(NcclError, match="not an NCCL data type"):
        nccl.all_reduce(x0, x0, 8, np.complex64, "sum", comms[0])
    with pytest.raises(NcclError, match="not a reduction"):
        nccl.all_reduce(x0, x0, 8, "float32", "xor", comms[0])
    with pytest.raises(NcclError, match="root must be a rank"):
        nccl.broadcast(x0, x0, 8, "float32", 5, comms[0])
    with pytest.raises(NcclError) as info:
        nccl.group_end()
    assert info.value.status == "ncclInvalidUsage"
    with pytest.raises(NcclError, match="duplicate GPU"):
        nccl.comm_init_all([devs[0], devs[0]])
    close(comms)
    with pytest.raises(NcclError, match="destroyed"):
        nccl.all_reduce(x0, x0, 8, "float32", "sum", comms[0])


def test_a_rank_that_never_joins_is_a_timeout_not_a_hang() -> None:
    devs = devices(2)
    uid = nccl.get_unique_id()
    with pytest.raises(NcclTimeoutError, match=r"rank\(s\) \[1\] of 2 never joined"):
        nccl.comm_init_rank(2, uid, 0, devs[0], timeout=0.3)
    # joined, but one thread drives both ranks without a group: the first call cannot complete
    comms = nccl.comm_init_all(devs, timeout=0.3)
    x = cuda.DeviceArray((4,), np.float32, devs[0])
    with pytest.raises(NcclTimeoutError, match=r"rank\(s\) \[1\] never called all_reduce.*group_start"):
        nccl.all_reduce(x, x, 4, "float32", "sum", comms[0])
    close(comms)


def test_abort_wakes_a_waiting_rank() -> None:
    devs = devices(2)
    comms = nccl.comm_init_all(devs, timeout=30)
    x = cuda.DeviceArray((4,), np.float32, devs[0])
    caught: list[BaseException] = []

    def waiter() -> None:
        try:
            nccl.all_reduce(x, x, 4, "float32", "sum", comms[0])
        except BaseException as exc:  # noqa: BLE001
            caught.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    threading.Event().wait(0.2)
    nccl.comm_abort(comms[1])
    t.join(10)
    assert not t.is_alive()
    assert isinstance(caught[0], NcclError) and caught[0].status == "ncclRemoteError" and "aborted" in str(caught[0])


@pytest.mark.parametrize("nranks", [2, 8])
@pytest.mark.parametrize("n", [3, 4099])  # fewer elements than ranks (empty chunks), and uneven chunks
def test_every_collective_on_2_and_8_ranks_small_and_uneven_sizes(nranks: int, n: int) -> None:
    devs = devices(nranks)
    comms = nccl.comm_init_all(devs)
    f32 = np.dtype(np.float32)
    hs = [host(f32, nranks * n) for _ in devs]
    xs = upload(devs, hs)
    ar = empty(devs, nranks * n, f32)
    grouped(lambda r: nccl.all_reduce(xs[r], ar[r], nranks * n, f32, "sum", comms[r]), nranks)
    ag = empty(devs, nranks * n, f32)
    grouped(lambda r: nccl.all_gather(xs[r], ag[r], n, f32, comms[r]), nranks)
    rs = empty(devs, n, f32)
    grouped(lambda r: nccl.reduce_scatter(xs[r], rs[r], n, f32, "sum", comms[r]), nranks)
    bc = empty(devs, n, f32)
    grouped(lambda r: nccl.broadcast(xs[r], bc[r], n, f32, nranks - 1, comms[r]), nranks)
    red = empty(devs, n, f32)
    grouped(lambda r: nccl.reduce(xs[r], red[r], n, f32, "min", 0, comms[r]), nranks)
    a2a = empty(devs, nranks * n, f32)
    grouped(lambda r: nccl.all_to_all(xs[r], a2a[r], n, f32, comms[r]), nranks)
    total = np.sum(np.stack(hs).astype(np.float64), axis=0)
    for r in range(nranks):
        np.testing.assert_allclose(ar[r].get(), total, rtol=1e-5)
        np.testing.assert_array_equal(ag[r].get(), np.concatenate([h[:n] for h in hs]))
        np.testing.assert_allclose(rs[r].get(), total[r * n:(r + 1) * n], rtol=1e-5)
        np.testing.assert_array_equal(bc[r].get(), hs[-1][:n])
        np.testing.assert_array_equal(a2a[r].get(), np.concatenate([h[r * n:(r + 1) * n] for h in hs]))
    np.testing.assert_array_equal(red[0].get(), np.min([h[:n] for h in hs], axis=0))
    close(comms)


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")
def test_all_reduce_on_two_mi300x_over_xgmi() -> None:
    """RCCL's role: the same kernels, compiled for gfx942, over the xGMI mesh's model."""
    from strata.driver import opened_devices

    devs = [cuda.Device(model="mi300x")]
    free = max([f.index for f in opened_devices()] + [cuda.device_count() - 1]) + 1
    open_device(free, "mi300x")
    devs.append(cuda.Device(free))
    comms = nccl.comm_init_all(devs)
    n = 1000
    hs = [host(np.dtype(np.float32), n) for _ in devs]
    xs = upload(devs, hs)
    nccl.group_start()
    works = [nccl.all_reduce(xs[r], xs[r], n, "float32", "sum", comms[r]) for r in range(2)]
    nccl.group_end()
    for x in xs:
        np.testing.assert_allclose(x.get(), hs[0] + hs[1], rtol=1e-6)
    m = works[0].model
    assert m is not None and m.busbw < 2 * 7 * 64e9  # bounded by the seven xGMI links
    close(comms)


@pytest.mark.parametrize("nranks", [3, 5, 8])
@pytest.mark.parametrize("op", ["sum", "max", "avg"])
def test_tree_all_reduce_on_full_and_partial_trees(nranks: int, op: str) -> None:
    devs = devices(nranks)
    comms = nccl.comm_init_all(devs)
    n = 301
    hs = [host(np.dtype(np.float32), n) for _ in devs]
    xs, ys = upload(devs, hs), empty(devs, n, np.dtype(np.float32))
    with trace.record() as rec:
        grouped(lambda r: nccl.all_reduce(xs[r], ys[r], n, "float32", op, comms[r], algorithm="tree"), nranks)
    want = NP_OPS[op](np.stack(hs).astype(np.float64))
    for y in ys:
        np.testing.assert_allclose(y.get(), want, rtol=1e-5)
    phases = {e.args["phase"] for e in rec.events if e.name == "nccl_step"}
    assert phases == {"copy-in", "tree-reduce", "tree-broadcast"}  # out of place: recv starts as send
    close(comms)


def test_the_tuner_picks_the_tree_for_small_sizes_and_the_ring_for_large() -> None:
    from strata.hw.catalog import get_spec
    from strata.libs.nccl.model import choose_algorithm

    h200 = [get_spec("h200")] * 8
    assert choose_algorithm("all_reduce", 4096, h200) == "tree"
    assert choose_algorithm("all_reduce", 4 << 20, h200) == "ring"
    assert choose_algorithm("all_reduce", 256 << 20, h200, ("ring", "tree")) == "ring"  # NVLS has its own test
    small, large = nccl.model("all_reduce", 4096, h200, "tree"), nccl.model("all_reduce", 256 << 20, h200, "tree")
    assert small.seconds < nccl.model("all_reduce", 4096, h200).seconds
    assert large.seconds > nccl.model("all_reduce", 256 << 20, h200).seconds
    devs = devices(4)
    comms = nccl.comm_init_all(devs)
    xs = empty(devs, 64, np.dtype(np.float32))
    nccl.group_start()
    works = [nccl.all_reduce(xs[r], xs[r], 64, "float32", "sum", comms[r]) for r in range(4)]
    nccl.group_end()
    assert works[0].model is not None and works[0].model.algorithm == "tree"
    with pytest.raises(NcclError, match="algorithm must be"):
        nccl.all_reduce(xs[0], xs[0], 64, "float32", "sum", comms[0], algorithm="pat")
    close(comms)


def test_avg_on_integers_truncates_toward_zero_and_mismatched_calls_name_both() -> None:
    devs = devices(3)
    comms = nccl.comm_init_all(devs)
    n = 40
    hs = [RNG.integers(-9, 10, n).astype(np.int32) for _ in devs]
    total = np.sum(np.stack(hs).astype(np.int64), axis=0)
    assert (total < 0).any() and (total % 3 != 0).any()  # cases where truncating and flooring differ
    xs, ys = upload(devs, hs), empty(devs, n, np.dtype(np.int32))
    grouped(lambda r: nccl.all_reduce(xs[r], ys[r], n, "int32", "avg", comms[r]), 3)
    for y in ys:
        np.testing.assert_array_equal(y.get(), (np.sign(total) * (np.abs(total) // 3)).astype(np.int32))
    # rank 0 all_reduce while ranks 1 and 2 broadcast: an error naming both calls, not a hang
    with pytest.raises(NcclError) as info:
        nccl.group_start()
        nccl.all_reduce(xs[0], xs[0], n, "int32", "sum", comms[0])
        nccl.broadcast(xs[1], xs[1], n, "int32", 0, comms[1])
        nccl.broadcast(xs[2], xs[2], n, "int32", 0, comms[2])
        nccl.group_end()
    assert info.value.status == "ncclInvalidUsage"
    assert "rank 0 all_reduce(count=40" in str(info.value) and "broadcast(count=40" in str(info.value)
    close(comms)


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16])
def test_half_ring_sums_round_once_per_step_in_ring_order(dt: type) -> None:
    """NCCL's ring: chunk k starts at rank k and picks up ranks k+1, ..., k-1 in turn, each step adding in
    float and rounding to the dtype once. The oracle redoes that order in NumPy, bit for bit; a sum in
    float64 rounded once at the end differs from it (checked), so the test sees the order."""
    from strata.libs.nccl.collectives import _chunks

    dtype = np.dtype(dt)
    nr, n = 4, 1003
    devs = devices(nr)
    comms = nccl.comm_init_all(devs)
    hs = [(RNG.uniform(-1, 1, n) * 10.0 ** RNG.uniform(-2, 2, n)).astype(dtype) for _ in devs]
    xs, ys = upload(devs, hs), empty(devs, n, dtype)
    grouped(lambda r: nccl.all_reduce(xs[r], ys[r], n, dtype, "sum", comms[r], algorithm="ring"), nr)
    want = np.empty(n, dtype)
    for k, (off, length) in enumerate(_chunks(n, nr, dtype.itemsize)):
        sl = slice(off, off + length)
        acc = hs[k][sl]
        for j in range(1, nr):
            acc = (hs[(k + j) % nr][sl].astype(np.float32) + acc.astype(np.float32)).astype(dtype)
        want[sl] = acc
    once = np.sum(np.stack(hs).astype(np.float64), axis=0).astype(dtype)
    assert (want != once).any()
    for y in ys:
        np.testing.assert_array_equal(y.get(), want)
    close(comms)


def _kernels_run(rec: trace.Recording) -> set[str]:
    return {e.args["kernel"] for e in rec.events if e.name == "kernel"}


def _peer_copies(rec: trace.Recording) -> int:
    """How many copy-engine transfers between two devices ran (the L1 `dma_PtoP` events)."""
    return sum(e.name == "dma_PtoP" for e in rec.events)


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "avg"])
def test_large_chunks_run_whole_tiles_then_the_vector_and_scalar_kernels(op: str) -> None:
    """Chunks of a tile or more (TILE_LANES x K elements) take the tile kernels and the rest of each chunk
    the vector and scalar kernels; the all-gather's copies of such chunks are copy-engine peer copies; the
    result is NumPy's either way. Out of place, 2 ranks: each chunk is one tile plus an odd remainder."""
    from strata.libs.nccl import kernels

    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    n = 2 * (kernels.TILE_LANES * kernels.CXX_K[0] + 4099)
    f32 = np.dtype(np.float32)
    hs = [host(f32, n) for _ in devs]
    xs, ys = upload(devs, hs), empty(devs, n, f32)
    with trace.record() as rec:
        grouped(lambda r: nccl.all_reduce(xs[r], ys[r], n, f32, op, comms[r], algorithm="ring"), 2)
        for y in ys:
            got = y.get()
    names = _kernels_run(rec)
    tiles = "nccl_sum_tiles" if op == "sum" else "nccl_apply_tiles"  # float32 sums: the inline-PTX kernel
    assert any(tiles in k for k in names) and not any("nccl_copy_tiles" in k for k in names)
    assert any("nccl_apply_v" in k for k in names) and any("nccl_applyI" in k for k in names)
    assert _peer_copies(rec) == 2  # the all-gather: one step on each rank
    want = NP_OPS[op](np.stack(hs).astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(ys[0].get(), want, rtol=1e-5)
    close(comms)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.float16, ml_dtypes.bfloat16, np.int32, np.uint32, np.int64,
                                np.uint64, np.float64])
def test_large_in_place_all_reduce_of_every_kind_of_type_in_tiles(dt: type) -> None:
    """The tile sums of 1- and 2-byte types (C++: halves combine in float and round once) and of the types
    PTX adds in one instruction (inline PTX), in place."""
    from strata.libs.nccl import kernels

    dtype = np.dtype(dt)
    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    n = 2 * kernels.TILE_LANES * kernels.CXX_K[0] + 6
    hs = [host(dtype, n) for _ in devs]
    xs = upload(devs, hs)
    with trace.record() as rec:
        grouped(lambda r: nccl.all_reduce(xs[r], xs[r], n, dtype, "sum", comms[r], algorithm="ring"), 2)
        got = [x.get() for x in xs]
    narrow = dtype.itemsize < 4 and dtype.kind != "i"
    assert any(("nccl_apply_tiles" if dtype.itemsize < 4 else "nccl_sum_tiles") in k for k in _kernels_run(rec))
    want = (hs[0].astype(np.float32) + hs[1].astype(np.float32)).astype(dtype) if narrow else hs[0] + hs[1]
    for g in got:
        np.testing.assert_array_equal(g, want)  # one rounding of the float sum: bit for bit
    close(comms)


def test_every_tile_size_of_sums_and_copies_in_turn() -> None:
    """A float32 sum and a copy each bigger than a big tile run one tile of each size, biggest first, then
    the vector and scalar kernels, along the buffer; every byte is NumPy's. The copy is the root's own
    out-of-place copy of a broadcast (a kernel: copies from a peer go on the copy engine)."""
    from strata.libs.nccl import kernels

    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    f32 = np.dtype(np.float32)
    n = 2 * (kernels.TILE_LANES * sum(kernels.SUM_K) + 1001)  # per chunk: a tile of each size, 1001 more
    hs = [host(f32, n) for _ in devs]
    xs = upload(devs, hs)
    nbytes = kernels.TILE_LANES * kernels.WORD * sum(kernels.COPY_K) + 4099
    raw = RNG.integers(0, 256, nbytes).astype(np.uint8)
    src, dst = upload(devs[:1], [raw])[0], empty(devs, nbytes, np.dtype(np.uint8))
    with trace.record() as rec:
        grouped(lambda r: nccl.all_reduce(xs[r], xs[r], n, f32, "sum", comms[r], algorithm="ring"), 2)
        grouped(lambda r: nccl.broadcast(src if r == 0 else None, dst[r], nbytes, "uint8", 0, comms[r]), 2)
        got, copied = [x.get() for x in xs], [d.get() for d in dst]
    names = _kernels_run(rec)
    assert {f"nccl_sum_tiles_{k}" for k in kernels.SUM_K} | {f"nccl_copy_tiles_{k}" for k in kernels.COPY_K} <= names
    for g in got:
        np.testing.assert_array_equal(g, hs[0] + hs[1])  # one float32 addition per element
    for c in copied:
        np.testing.assert_array_equal(c, raw)
    close(comms)


@pytest.mark.parametrize("lanes", ["16384", "131072"])
def test_tiles_are_right_whatever_the_emulators_chunk(lanes: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tile row is the default chunk of lanes; chunks of a part of a row or of two rows (lanes that are
    not one run of consecutive addresses: the gathering path, for the neighbour's memory too) change the
    speed, never the result."""
    from strata.libs.nccl import kernels

    monkeypatch.setenv("STRATA_CHUNK_LANES", lanes)
    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    f32 = np.dtype(np.float32)
    n = 2 * (3 * kernels.TILE_LANES * kernels.SUM_K[-1] + 5)  # per chunk: 3 small tiles and 5 more
    hs = [host(f32, n) for _ in devs]
    xs, ys = upload(devs, hs), empty(devs, n, f32)
    with trace.record() as rec:
        grouped(lambda r: nccl.all_reduce(xs[r], ys[r], n, f32, "sum", comms[r], algorithm="ring"), 2)
        got = [y.get() for y in ys]
    assert f"nccl_sum_tiles_{kernels.SUM_K[-1]}" in _kernels_run(rec)
    for g in got:
        np.testing.assert_array_equal(g, hs[0] + hs[1])
    close(comms)


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")
def test_tile_sums_and_copies_on_two_mi300x() -> None:
    """On AMD devices the inline-PTX tile kernels are their C++ loops, compiled for gfx942."""
    from strata.driver import opened_devices
    from strata.libs.nccl import kernels

    devs = [cuda.Device(model="mi300x")]
    free = max([f.index for f in opened_devices()] + [cuda.device_count() - 1]) + 1
    open_device(free, "mi300x")
    devs.append(cuda.Device(free))
    comms = nccl.comm_init_all(devs)
    n = 2 * (kernels.TILE_LANES * kernels.COPY_K[-1] * kernels.WORD // 4 + 5)  # a chunk: a small copy tile and more
    hs = [host(np.dtype(np.float32), n) for _ in devs]
    xs, ys = upload(devs, hs), empty(devs, n, np.dtype(np.float32))
    with trace.record() as rec:
        grouped(lambda r: nccl.all_reduce(xs[r], xs[r], n, "float32", "sum", comms[r], algorithm="ring"), 2)
        # the root's own out-of-place copy is a copy kernel (the other rank's, from a peer, a copy-engine one)
        grouped(lambda r: nccl.broadcast(xs[r], ys[r], n, "float32", 0, comms[r]), 2)
        got, copied = [x.get() for x in xs], [y.get() for y in ys]
    assert {f"nccl_sum_tiles_{kernels.SUM_K[-1]}", f"nccl_copy_tiles_{kernels.COPY_K[-1]}"} <= _kernels_run(rec)
    for g, c in zip(got, copied, strict=True):
        np.testing.assert_array_equal(g, hs[0] + hs[1])
        np.testing.assert_array_equal(c, hs[0] + hs[1])
    close(comms)


def test_large_all_reduce_all_gathers_over_the_copy_engines_with_the_model_unchanged() -> None:
    """Chunks of CE_MIN_BYTES or more: the reduce-scatter's sums stay kernels reading the predecessor's
    memory, the all-gather's copies are peer copies on each receiving device's copy engine, placed on its
    timeline at the link's modeled rate; the call's model (NCCL's busbw) is the same as for kernels, and
    the sums are in ring order, bit for bit. A smaller call copies with kernels."""
    from strata.hw.topology import peer_copy_seconds
    from strata.libs.nccl.collectives import CE_MIN_BYTES, _chunks
    from strata.libs.nccl.model import model

    nr = 4
    devs = devices(nr)
    comms = nccl.comm_init_all(devs)
    f32 = np.dtype(np.float32)
    n = nr * CE_MIN_BYTES // 4 + 8  # chunks of a bit more than CE_MIN_BYTES (the last a bit less: kernels)
    hs = [host(f32, n) for _ in devs]
    xs = upload(devs, hs)
    before = [d.peer_traffic() for d in devs]
    with trace.record() as rec:
        nccl.group_start()
        works = [nccl.all_reduce(xs[r], xs[r], n, f32, "sum", comms[r], algorithm="ring") for r in range(nr)]
        nccl.group_end()
        got = [x.get() for x in xs]
    # the copy engines' peer copies count as interconnect bytes, as the kernels' reads do: the ring schedule's
    want_bytes = _ring_peer_bytes(n, nr, 4)
    assert _moved(devs, before) == [{devs[(r - 1) % nr].index: want_bytes[r]} for r in range(nr)]
    chunks = _chunks(n, nr, 4)
    want = np.empty(n, f32)
    for k, (off, length) in enumerate(chunks):  # chunk k starts at rank k and picks up ranks k+1, ..., k-1
        sl = slice(off, off + length)
        acc = hs[k][sl]
        for j in range(1, nr):
            acc = hs[(k + j) % nr][sl] + acc
        want[sl] = acc
    for g in got:
        np.testing.assert_array_equal(g, want)
    big = sum(length * 4 >= CE_MIN_BYTES for _, length in chunks)
    assert 0 < big < nr  # both kinds of all-gather copy are in the call
    steps = [e for e in rec.events if e.name == "nccl_step"]
    assert {e.args["engine"] for e in steps if e.args["phase"] == "reduce-scatter"} == {"compute"}
    gather = [e for e in steps if e.args["phase"] == "all-gather"]
    assert sum(e.args["engine"] == "copy" for e in gather) == big * (nr - 1)
    assert all((e.args["engine"] == "copy") == (e.args["bytes"] >= CE_MIN_BYTES) for e in gather)
    op = works[0].op
    assert op is not None and op.copies == big * (nr - 1) and _peer_copies(rec) == op.copies
    spec = devs[0].spec
    for e in (e for e in rec.events if e.name == "dma_PtoP"):
        assert e.device_start is not None and e.device_end is not None
        assert e.device_end - e.device_start == pytest.approx(
            peer_copy_seconds(spec, spec, e.args["bytes"]))
    assert works[0].model == model("all_reduce", n * 4, [d.spec for d in devs], "ring")
    with trace.record() as rec:  # small: every step a kernel
        grouped(lambda r: nccl.all_reduce(xs[r], xs[r], 4096, f32, "sum", comms[r], algorithm="ring"), nr)
    assert _peer_copies(rec) == 0
    assert {e.args["engine"] for e in rec.events if e.name == "nccl_step"} == {"compute"}
    close(comms)


@pytest.mark.parametrize("extra", [0, -8])
def test_send_recv_from_ce_min_bytes_is_one_peer_copy(extra: int) -> None:
    """A send/recv of CE_MIN_BYTES goes on the receiver's copy engine (no kernel); 8 bytes less is a kernel."""
    from strata.libs.nccl.collectives import CE_MIN_BYTES

    devs = devices(2)
    comms = nccl.comm_init_all(devs)
    nbytes = CE_MIN_BYTES + extra
    raw = RNG.integers(0, 256, nbytes).astype(np.uint8)
    src, dst = upload(devs[:1], [raw])[0], empty(devs[1:], nbytes, np.dtype(np.uint8))[0]
    with trace.record() as rec:
        nccl.group_start()
        work = nccl.send(src, nbytes, "uint8", 1, comms[0])
        nccl.recv(dst, nbytes, "uint8", 0, comms[1])
        nccl.group_end()
        copied = dst.get()
    np.testing.assert_array_equal(copied, raw)
    assert work.op is not None
    assert (work.op.copies, work.op.launches > 0, _peer_copies(rec)) == ((1, False, 1) if extra == 0 else (0, True, 0))
    close(comms)


def _ring_peer_bytes(count: int, nr: int, size: int) -> list[int]:
    """Bytes rank r reads from its predecessor in the ring all-reduce, from the schedule: the chunk
    r-s-1 it adds in reduce-scatter step s and the chunk r-s it copies in all-gather step s."""
    from strata.libs.nccl.collectives import _chunks

    chunks = _chunks(count, nr, size)
    return [size * sum(chunks[(r - s - 1) % nr][1] + chunks[(r - s) % nr][1] for s in range(nr - 1))
            for r in range(nr)]


def _moved(devs: list[cuda.Device], before: list[dict[int, int]]) -> list[dict[int, int]]:
    """Each device's interconnect bytes per peer since `before` (after the devices' work finished)."""
    for d in devs:
        d.synchronize()
    return [{k: v - b.get(k, 0) for k, v in d.peer_traffic().items() if v != b.get(k, 0)}
            for d, b in zip(devs, before, strict=True)]


@pytest.mark.parametrize("engine", ["copy", "compute"])
def test_ring_all_reduce_peer_bytes_are_the_same_on_the_copy_engine_as_in_kernels(
        engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Device.peer_traffic() counts the all-gather's chunks whether a copy kernel or the receiving device's
    copy engine moved them: each rank moved exactly what the ring schedule has it read from its
    predecessor, and nothing from any other rank. CE_MIN_BYTES is lowered so the copy engine takes these
    small chunks (the test with the real threshold is below)."""
    from strata.libs.nccl import collectives

    monkeypatch.setattr(collectives, "CE_MIN_BYTES", 1024 if engine == "copy" else 1 << 40)
    nr, n = 4, 4 * 1003 + 5  # uneven chunks: the last one shorter
    f32 = np.dtype(np.float32)
    devs = devices(nr)
    comms = nccl.comm_init_all(devs)
    hs = [host(f32, n) for _ in devs]
    xs = upload(devs, hs)
    before = [d.peer_traffic() for d in devs]
    works = []
    grouped(lambda r: works.append(nccl.all_reduce(xs[r], xs[r], n, f32, "sum", comms[r], algorithm="ring")), nr)
    moved = _moved(devs, before)
    np.testing.assert_allclose(xs[0].get(), np.sum(np.stack(hs).astype(np.float64), axis=0), rtol=1e-5)
    op = works[0].op
    assert op is not None and (op.copies > 0) == (engine == "copy")
    want = _ring_peer_bytes(n, nr, 4)
    assert moved == [{devs[(r - 1) % nr].index: want[r]} for r in range(nr)]
    close(comms)


def test_memcpy_peer_counts_its_bytes_on_the_receiving_device() -> None:
    """cudaMemcpyPeer(Async) runs on the destination device's copy engine: its bytes are that device's
    interconnect traffic from the source (the source device moved nothing)."""
    d0, d1 = devices(2)
    raw = RNG.integers(0, 256, 3000).astype(np.uint8)
    src, dst = upload([d0], [raw])[0], empty([d1], raw.size, np.dtype(np.uint8))[0]
    before = [d.peer_traffic() for d in (d0, d1)]
    cuda.memcpy_peer(dst, d1, src, d0, 1000)
    s = cuda.Stream(device=d1)
    cuda.memcpy_peer_async(dst.ptr + 1000, d1, src.ptr + 1000, d0, 2000, s)
    s.synchronize()
    np.testing.assert_array_equal(dst.get(), raw)
    assert _moved([d0, d1], before) == [{}, {d0.index: 3000}]


def _alltoallv_layout(counts: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Send and receive displacements (elements) of each rank for counts[i][j] (rank i sends to rank j),
    each rank's blocks packed in rank order."""
    nr = counts.shape[0]
    sd = [[int(counts[i, :j].sum()) for j in range(nr)] for i in range(nr)]
    rd = [[int(counts[:j, i].sum()) for j in range(nr)] for i in range(nr)]
    return sd, rd


@pytest.mark.parametrize(("nr", "dt"), [(2, np.float32), (4, np.int64), (4, ml_dtypes.bfloat16)])
def test_uneven_all_to_allv_against_numpy(nr: int, dt: type) -> None:
    """Grouped send/recv with a different count per pair (some empty, an empty one at a buffer's end):
    rank j's output is every rank's block for j, in rank order."""
    dtype = np.dtype(dt)
    devs = devices(nr)
    comms = nccl.comm_init_all(devs)
    counts = RNG.integers(0, 9, (nr, nr))
    counts[0, nr - 1] = 0
    counts[nr - 1, 1 % nr] = 0
    sd, rd = _alltoallv_layout(counts)
    hs = [host(dtype, int(counts[i].sum())) for i in range(nr)]
    xs = upload(devs, hs)
    ys = empty(devs, int(counts.sum(axis=0).max()), dtype)
    with trace.record() as rec:
        grouped(lambda r: nccl.all_to_allv(xs[r], counts[r].tolist(), sd[r], ys[r], counts[:, r].tolist(), rd[r],
                                           dtype, comms[r]), nr)
    for j in range(nr):
        want = np.concatenate([hs[i][sd[i][j]:sd[i][j] + counts[i, j]] for i in range(nr)])
        np.testing.assert_array_equal(ys[j].get()[:want.size], want)
    pairs = [e for e in rec.events if e.name == "nccl.send_recv"]
    assert len(pairs) == nr * nr  # one matched send/recv per ordered pair, a rank's own block included
    close(comms)


def test_all_to_allv_errors_name_both_ranks() -> None:
    devs = devices(2)
    comms = nccl.comm_init_all(devs, timeout=5)
    xs, ys = empty(devs, 8, np.dtype(np.float32)), empty(devs, 8, np.dtype(np.float32))
    with pytest.raises(NcclError, match=r"sendcounts must hold one int >= 0 per rank \(2\)") as info:
        nccl.all_to_allv(xs[0], [1], [0], ys[0], [1, 1], [0, 1], "float32", comms[0])
    assert info.value.status == "ncclInvalidArgument"
    with pytest.raises(NcclError, match="sendbuff holds 32 bytes, the call needs 36"):
        nccl.all_to_allv(xs[0], [4, 5], [0, 4], ys[0], [1, 1], [0, 1], "float32", comms[0])
    # rank 0 sends 3 elements to rank 1, which expects 2 from it
    with pytest.raises(NcclError, match=r"count or datatype differs between send and recv .*rank 0 send\(count=3.*"
                                        r"rank 1 recv\(count=2") as info:
        grouped(lambda r: nccl.all_to_allv(xs[r], [[1, 3], [2, 1]][r], [0, 1], ys[r], [[1, 2], [2, 1]][r], [0, 1],
                                           "float32", comms[r]), 2)
    assert info.value.status == "ncclInvalidUsage"
    for c in comms:
        nccl.comm_abort(c)


def _all_reduce_all(xs: list[cuda.DeviceArray], ys: list[cuda.DeviceArray], n: int, op: str,
                    comms: list[nccl.Communicator], **kw: object) -> list[nccl.Work]:
    """One grouped all_reduce of float32 over every rank; the ranks' works."""
    nccl.group_start()
    works = [nccl.all_reduce(x, y, n, "float32", op, c, **kw) for x, y, c in zip(xs, ys, comms, strict=True)]
    nccl.group_end()
    return works


@pytest.mark.parametrize("op", ["sum", "avg", "max", "prod"])
def test_nvls_all_reduce_in_rank_order_against_numpy(op: str) -> None:
    """NVLS on 4 H200s (asked for by name; the tuner prefers the ring at 4 ranks): rank r reduces shard r of
    every rank's buffer in rank order, then gathers the other shards; sums bit for bit against NumPy
    adding the ranks' float32 arrays in that order. Out of place and in place (where a rank's own shard
    must not be overwritten before its turn)."""
    from strata.libs.nccl.collectives import _chunks

    nr, n = 4, 4 * 257 + 3
    f32 = np.dtype(np.float32)
    devs = devices(nr)
    comms = nccl.comm_init_all(devs)
    hs = [host(f32, n) for _ in devs]
    combine = {"sum": np.add, "avg": np.add, "max": np.maximum, "prod": np.multiply}[op]
    want = hs[0]
    for h in hs[1:]:
        want = combine(want, h)
    for in_place in (False, True):
        xs = upload(devs, hs)
        ys = xs if in_place else empty(devs, n, f32)
        before = [d.peer_traffic() for d in devs]
        with trace.record() as rec:
            works = _all_reduce_all(xs, ys, n, op, comms, algorithm="nvls")
            for d in devs:  # the kernels' trace events come as they run
                d.synchronize()
        # interconnect bytes, one launch or a chain: rank r reads its shard of every other rank's buffer once,
        # then gets each other rank's finished shard
        shards = [4 * length for _, length in _chunks(n, nr, 4)]
        assert _moved(devs, before) == [{q.index: shards[r] + shards[k] for k, q in enumerate(devs) if k != r}
                                        for r in range(nr)]
        for y in ys:
            if op == "avg":  # the last step adds and divides in float32, rounding once more: within an ulp
                np.testing.assert_allclose(y.get(), want / np.float32(nr), rtol=2.5e-7)
            else:
                np.testing.assert_array_equal(y.get(), want)
        m = works[0].model
        assert m is not None and m.algorithm == "nvls"
        assert m == nccl.model("all_reduce", n * 4, [d.spec for d in devs], "nvls")
        phases = [e.args["phase"] for e in rec.events if e.name == "nccl_step"]
        # a float32 sum is one launch per rank reading every rank's shard (an average's sum, then its last
        # addition and division: two); other operations chain two-input launches
        per_rank = {"sum": 1, "avg": 2}.get(op, nr - 1)
        assert phases.count("nvls-reduce-scatter") == nr * per_rank
        assert phases.count("nvls-all-gather") == nr * (nr - 1)
        if op == "sum":
            assert any("nccl_sum_many" in k for k in _kernels_run(rec))  # (C++ names are mangled)
    close(comms)


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.float64, np.uint64])
def test_many_input_sums_in_tiles_and_rest_left_to_right(dt: type) -> None:
    """kernels.sum_many: 3 and 8 sources added left to right in one launch per kind of kernel (a small
    tile, then the bounds-checked rest), bit for bit NumPy's left fold, also when dst is one of the
    sources (each element is read before it is written)."""
    from strata.libs.nccl import kernels

    dtype = np.dtype(dt)
    dt_nccl = DataType.of(dtype)
    [dev] = devices(1)
    n = kernels.TILE_LANES * kernels.MANY_K[-1] + 7
    for m in (3, kernels.MAX_INPUTS):
        hs = [host(dtype, n) for _ in range(m)]
        xs = upload([dev] * m, hs)
        want = hs[0]
        for h in hs[1:]:
            want = want + h
        out = empty([dev], n, dtype)[0]
        with trace.record() as rec:
            launches = kernels.sum_many(dt_nccl, out.ptr, tuple(x.ptr for x in xs), n, None)
            in_place = kernels.sum_many(dt_nccl, xs[1].ptr, tuple(x.ptr for x in xs), n, None)
            got, got_in_place = out.get(), xs[1].get()
        assert launches == in_place == 2
        names = _kernels_run(rec)
        assert f"nccl_sum{m}_tiles_{kernels.MANY_K[-1]}" in names and any("nccl_sum_many" in k for k in names)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_in_place, want)
    with pytest.raises(NcclError, match="sum_many takes 2..8 sources"):
        kernels.sum_many(DataType.ncclFloat16, 0, (0, 0, 0), 1, None)


@pytest.mark.parametrize("op", ["sum", "avg"])
def test_nvls_sums_past_max_inputs_chain_through_scratch(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """More ranks than one launch takes (MAX_INPUTS, 3 here): the first launch adds 3 shards into the rank's
    scratch, the next continues from it, in rank order; in place, bit for bit NumPy's left fold (an
    average: within an ulp of it, divided once)."""
    from strata.libs.nccl import collectives

    monkeypatch.setattr(collectives, "MAX_INPUTS", 3)
    nr, n = 5, 5 * 263 + 1
    f32 = np.dtype(np.float32)
    devs = devices(nr)
    comms = nccl.comm_init_all(devs)
    hs = [host(f32, n) for _ in devs]
    want = hs[0]
    for h in hs[1:]:
        want = want + h
    xs = upload(devs, hs)
    with trace.record() as rec:
        _all_reduce_all(xs, xs, n, op, comms, algorithm="nvls")
        got = [x.get() for x in xs]
    for g in got:
        if op == "avg":
            np.testing.assert_allclose(g, want / np.float32(nr), rtol=2.5e-7)
        else:
            np.testing.assert_array_equal(g, want)
    # sum: [0, 1, 2] -> scratch, [scratch, 3, 4] -> recv; avg: [0, 1, 2], [scratch, 3], then scratch + 4 / 5
    phases = [e.args["phase"] for e in rec.events if e.name == "nccl_step"]
    assert phases.count("nvls-reduce-scatter") == nr * (2 if op == "sum" else 3)
    close(comms)


def test_the_tuner_picks_nvls_for_large_all_reduces_on_nvswitch_and_nccl_algo_restricts_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """NVLS beats the ring on 8 H200s from about 11 MB (fewer bytes per link, a fixed 25 us), models near
    nccl-tests' published ~480 GB/s busbw at 256 MiB against the ring's ~378; never on HGX A100 (no
    reducing switch), the MI300X mesh or 2 ranks. NCCL_ALGO limits the tuner; a call that cannot run NVLS is
    ncclInvalidUsage."""
    from strata.hw.catalog import get_spec
    from strata.libs.nccl.model import choose_algorithm, nvls_supported

    h200 = [get_spec("h200")] * 8
    big = 256 << 20
    assert choose_algorithm("all_reduce", big, h200) == "nvls"
    assert choose_algorithm("all_reduce", 4 << 20, h200) == "ring"
    nvls, ring = nccl.model("all_reduce", big, h200, "nvls"), nccl.model("all_reduce", big, h200, "ring")
    assert nvls.seconds < ring.seconds and 460e9 < nvls.busbw < 500e9 and ring.busbw < 400e9
    assert nvls.busbw == pytest.approx(nvls.algbw * 2 * 7 / 8)
    assert not nvls_supported([get_spec("a100")] * 8) and not nvls_supported([get_spec("mi300x")] * 8)
    assert not nvls_supported(h200[:2]) and nvls_supported(h200[:3])
    assert choose_algorithm("all_reduce", big, [get_spec("a100")] * 8) == "ring"
    with pytest.raises(NcclError, match="NVLS") as info:
        nccl.model("all_reduce", big, [get_spec("mi300x")] * 8, "nvls")
    assert info.value.status == "ncclInvalidUsage"
    assert choose_algorithm("all_reduce", big, h200, ("ring", "tree")) == "ring"
    assert choose_algorithm("all_reduce", 4096, h200, ("nvls",)) == "nvls"
    with pytest.raises(NcclError, match="NCCL_ALGO allows nvls, none of which runs on 2 x h200"):
        choose_algorithm("all_reduce", big, h200[:2], ("nvls",))

    devs = devices(3)
    comms = nccl.comm_init_all(devs)
    xs = upload(devs, [host(np.dtype(np.float32), 96) for _ in devs])
    for env, want in (("NVLS", "nvls"), ("^nvls,tree", "ring"), ("Ring,Tree", "tree")):
        monkeypatch.setenv("NCCL_ALGO", env)
        works = _all_reduce_all(xs, xs, 96, "sum", comms)
        assert works[0].model is not None and works[0].model.algorithm == want, env
    monkeypatch.setenv("NCCL_ALGO", "PAT")  # an algorithm of NCCL's that strata does not run
    with pytest.raises(NcclError, match="NCCL_ALGO allows , none of which runs on 3 x h200"):
        _all_reduce_all(xs, xs, 96, "sum", comms)
    monkeypatch.setenv("NCCL_ALGO", "Rings")
    with pytest.raises(NcclError, match="NCCL_ALGO='Rings': expected a comma list of NCCL's algorithms") as info:
        _all_reduce_all(xs, xs, 96, "sum", comms)
    assert info.value.status == "ncclInvalidArgument"
    works = _all_reduce_all(xs, xs, 96, "sum", comms, algorithm="tree")  # named: NCCL_ALGO is not read
    assert works[0].model is not None and works[0].model.algorithm == "tree"
    close(comms)
    monkeypatch.delenv("NCCL_ALGO")
    comms = nccl.comm_init_all(devs[:2], timeout=5)
    with pytest.raises(NcclError, match="needs more than 2 GPUs") as info:
        _all_reduce_all(xs[:2], xs[:2], 96, "sum", comms, algorithm="nvls")
    assert info.value.status == "ncclInvalidUsage"
    close(comms)
