"""A kernel's atomics and the host's copies into the same bytes never land inside each other.

The reference executors emulate an atomic as a read and then a write; a DMA write from another thread
between the two was lost (the kernel wrote back the value it had read). The symptom: a kernel spinning on
`atomicAdd(flag, 0) == 0` while the host sets the flag with a copy on another stream kept spinning until the
watchdog, about one run in five (the NCCL ordering tests' gate hung that way on the MI300X pass). Device
memory's read-modify-write guard (hw/memory.py, `rmw_guard`) orders them as a GPU's memory-side atomics are
ordered with DMA writes: before or after, never inside. Kernels compiled by NVRTC (and clang-19 for gfx942)."""

from __future__ import annotations

import shutil
import threading
import time

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hw.memory import GLOBAL_BASE

PING = r"""
extern "C" __global__ void ping(int *flag, int *log, int rounds) {
    for (int i = 0; i < rounds; ++i) {
        int v;
        while ((v = atomicAdd(flag, 0)) == 0) {}  // a read-modify-write: it writes back what it read
        log[i] = v;
        atomicExch(flag, 0);  // the host's next value may come
    }
}
"""
ROUNDS = 150  # handshakes in one launch; before the guard about one in twenty lost the host's write


def _ping_pong(mod: cuda.Module, dev: cuda.Device) -> None:
    """A one-thread kernel waits ROUNDS times for the host to set a flag (a copy on another stream, while the
    kernel spins on it), logs the value and clears the flag; the host sets the next value once it reads the
    flag clear. A write lost inside the kernel's atomic leaves both waiting: the host's deadline fails the test
    (and the watchdog ends the kernel)."""
    mem = dev.file.gpu.memory
    flag, log = cuda.DeviceArray((1,), np.int32, dev), cuda.DeviceArray((ROUNDS,), np.int32, dev)
    flag.set(np.zeros(1, np.int32))
    log.set(np.zeros(ROUNDS, np.int32))
    spin, setter = cuda.Stream(non_blocking=True, device=dev), cuda.Stream(non_blocking=True, device=dev)
    mod.get_function("ping")((1,), (1,), (flag, log, np.int32(ROUNDS)), stream=spin)
    for value in range(1, ROUNDS + 1):
        deadline = time.monotonic() + 5
        while int.from_bytes(mem.read(flag.ptr, 4), "little"):  # (below the runtime: no stream to wait on)
            assert time.monotonic() < deadline, f"round {value}: the kernel never took value {value - 1}"
            time.sleep(0)
        flag.set(np.full(1, value, np.int32), stream=setter)
        setter.synchronize()
    spin.synchronize()
    np.testing.assert_array_equal(log.get(), np.arange(1, ROUNDS + 1, dtype=np.int32))


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_EXECUTOR", "reference")
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "10")


def test_a_copy_is_never_lost_inside_a_ptx_atomic(reference: None) -> None:
    _ping_pong(cuda.compile(PING), cuda.current_device())


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd): HIP for gfx942 "
                    "is compiled with it")
def test_a_copy_is_never_lost_inside_an_amd_atomic(reference: None, mi300x: cuda.Device) -> None:
    _ping_pong(hip.compile(PING), mi300x)


def test_host_writes_wait_for_an_atomic_holding_the_bytes() -> None:
    """The protocol itself, deterministically: while an atomic holds the guard of some bytes, a DMA copy into
    them (and the driver's write and fill) waits; once it is released, the copy lands."""
    dev = cuda.current_device()
    mem = dev.file.gpu.memory
    x = cuda.DeviceArray((4,), np.int32, dev)
    x.set(np.zeros(4, np.int32))
    off = x.ptr - GLOBAL_BASE
    s = cuda.Stream(non_blocking=True, device=dev)
    writers = [threading.Thread(target=lambda: (x.set(np.full(4, 7, np.int32), stream=s), s.synchronize())),
               threading.Thread(target=mem.fill, args=(x.ptr + 8, 4, 0x11))]
    with mem.rmw_guard(off, off + 15):
        for t in writers:
            t.start()
        time.sleep(0.2)
        assert np.frombuffer(mem.read(x.ptr, 16), np.int32).tolist() == [0, 0, 0, 0]  # nobody wrote inside
    for t in writers:
        t.join(10)
        assert not t.is_alive()
    got = np.frombuffer(mem.read(x.ptr, 16), np.int32).tolist()
    assert got[:2] == [7, 7] and got[3] == 7 and got[2] in (7, 0x11111111)  # (the two writers' order is theirs)
