"""strata.libs.nccl: the collectives of one communicator run in issue order, whatever stream each is on.

Real NCCL orders every operation of a communicator after the previous one (internal events between the
user's streams), so two collectives issued on two streams of one communicator never run at once; strata's
collectives that stage partial results in the communicator's one scratch buffer (reduce, reduce_scatter,
NVLS all-reduce chains) would otherwise overwrite each other's partials. The tests hold every stream
behind a gate (a kernel spinning on a flag the host sets once everything is queued), so both calls' packets
are waiting when the devices start and really interleave on each device's compute engine (without it the
first call, queued first, mostly finishes before the second is queued); every result is checked against
NumPy.
"""

from collections.abc import Callable

import numpy as np
import pytest

import strata.cuda as cuda
from strata.cuda.device import devices_of_model
from strata.libs import nccl

RNG = np.random.default_rng(18)
F32 = np.dtype(np.float32)
CALLS = 3  # calls of one collective, each on its own streams, queued before any runs


def _upload(devs: list[cuda.Device], arrays: list[np.ndarray]) -> list[cuda.DeviceArray]:
    out = []
    for d, a in zip(devs, arrays, strict=True):
        x = cuda.DeviceArray(a.shape, a.dtype, d)
        x.set(a)
        out.append(x)
    return out


def _empty(devs: list[cuda.Device], n: int) -> list[cuda.DeviceArray]:
    return [cuda.DeviceArray((n,), F32, d) for d in devs]


def _grouped(fn: Callable[[int], object], n: int) -> None:
    nccl.group_start()
    for r in range(n):
        fn(r)
    nccl.group_end()


def _ints(n: int) -> np.ndarray:
    """Small integers as float32: every sum of a few is exact, so any order of addition gives NumPy's."""
    return RNG.integers(-8, 9, n).astype(F32)


GATE_SRC = r"""
extern "C" __global__ void spin_until_set(int *flag) {
    while (atomicAdd(flag, 0) == 0) {}  // an atomic read each time round: never served from a register
}
"""


class Gate:
    """Streams that wait on `hold()` start only at `open()`: a one-thread kernel on a stream of `dev` spins on
    a device flag until the host sets it (with a copy on the copy engine, which runs beside the spinning
    kernel)."""

    def __init__(self, dev: cuda.Device) -> None:
        self.flag = cuda.DeviceArray((1,), np.int32, dev)
        self.flag.set(np.zeros(1, np.int32))
        self.stream = cuda.Stream(non_blocking=True, device=dev)
        self.setter = cuda.Stream(non_blocking=True, device=dev)
        # kept while its kernel runs (a dropped module is unloaded once the device is idle)
        self.kernel = cuda.compile(GATE_SRC).get_function("spin_until_set")
        self.kernel((1,), (1,), (self.flag,), stream=self.stream)
        self.event = cuda.Event(timing=False, device=dev)
        self.event.record(self.stream)

    def hold(self, streams: list[cuda.Stream]) -> None:
        for s in streams:
            s.wait_event(self.event)

    def open(self) -> None:
        self.flag.set(np.ones(1, np.int32), stream=self.setter)
        self.setter.synchronize()


def _queue(kind: str, xs: list[cuda.DeviceArray], ys: list[cuda.DeviceArray], comms: list[nccl.Communicator],
           ss: list[cuda.Stream]) -> None:
    """One call of `kind` on every rank (one group), rank r's on stream ss[r]."""
    nr, n = len(comms), xs[0].size

    def one(r: int) -> None:
        if kind == "reduce_scatter":
            nccl.reduce_scatter(xs[r], ys[r], n // nr, "float32", "sum", comms[r], ss[r])
        else:  # reduce, to rank 1
            nccl.reduce(xs[r], ys[r], n, "float32", "sum", 1, comms[r], ss[r])

    _grouped(one, nr)


def _expected(kind: str, hs: list[np.ndarray]) -> list[np.ndarray | None]:
    """Each rank's result (None: not significant) of `kind` over the ranks' inputs `hs`."""
    nr, total = len(hs), np.sum(hs, axis=0)
    if kind == "reduce_scatter":
        per = total.size // nr
        return [total[r * per:(r + 1) * per] for r in range(nr)]
    return [total if r == 1 else None for r in range(nr)]  # reduce, to rank 1


# (NVLS chains through the scratch too, but within one step of one rank's stream, and the emulator's compute
# engine switches queues only at a barrier packet, so two calls' chains cannot interleave there today: the
# ordering covers them all the same.)
@pytest.mark.parametrize("one_group", [False, True], ids=["calls", "one-group"])
@pytest.mark.parametrize(("kind", "nr", "n"), [("reduce_scatter", 4, 4 << 20), ("reduce", 3, 1 << 20)])
def test_two_collectives_on_two_streams_of_one_communicator_do_not_share_scratch_at_once(
        kind: str, nr: int, n: int, one_group: bool) -> None:
    """Large calls of one collective, each on other streams of every rank, all queued before any runs: each
    must match NumPy (before issue 18 a later call's partial sums overwrote an earlier one's in the shared
    scratch buffer). Also with every call in one group (NCCL runs a group's collectives in order too). The
    calls return while the gate still holds every stream: the order is kept on the devices, not by the host
    waiting."""
    devs = devices_of_model(nr)
    comms = nccl.comm_init_all(devs)
    out_n = n // nr if kind == "reduce_scatter" else n
    hs = [[_ints(n) for _ in devs] for _ in range(CALLS)]
    xs = [_upload(devs, h) for h in hs]
    ys = [_empty(devs, out_n) for _ in range(CALLS)]
    ss = [[cuda.Stream(non_blocking=True, device=d) for d in devs] for _ in range(CALLS)]
    for d in devs:
        d.synchronize()
    gate = Gate(devs[0])
    try:
        gate.hold([s for streams in ss for s in streams])
        if one_group:
            nccl.group_start()
        for i in range(CALLS):
            _queue(kind, xs[i], ys[i], comms, ss[i])
        if one_group:
            nccl.group_end()
    finally:  # (also on an error: the devices must not spin until the watchdog)
        gate.open()
    for streams in ss:
        for s in streams:
            s.synchronize()
    for i in range(CALLS):
        for r, w in enumerate(_expected(kind, hs[i])):
            if w is not None:
                np.testing.assert_allclose(ys[i][r].get(), w, rtol=1e-6, err_msg=f"call {i}, rank {r}")
    for c in comms:
        nccl.comm_destroy(c)
