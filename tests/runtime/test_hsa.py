"""strata.runtime.hsa: hand-submitted AQL packets through the HSA-named API, checked against NumPy
and against the HSA rules (../shared/reference/apis.md §1): completion signals, barrier-AND/OR,
wait semantics, slot retirement, queue creation limits and status codes."""

from __future__ import annotations

import re
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from strata.cuda.compiler import compile_to_ptx
from strata.driver import list_devices
from strata.hw.catalog import get_spec
from strata.runtime import hsa
from strata.runtime.hsa import HsaError, Status

DOC = Path(__file__).resolve().parents[2] / "docs" / "hsa.md"

KERNELS = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void poke(int* p) { p[threadIdx.x] = 1; }
__device__ int counter = 41;
extern "C" __global__ void tile_sum(const float* x, float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x] + counter;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int k = 0; k < 64; ++k) s += tile[k];
        out[blockIdx.x] = s;
    }
}
"""


@pytest.fixture(scope="module")
def ptx() -> str:
    return compile_to_ptx(KERNELS).ptx


@pytest.fixture(autouse=True)
def runtime():
    hsa.init()
    yield
    hsa.shut_down()


class Setup:
    """The agents, pools and a frozen executable of KERNELS, as every test needs them."""

    def __init__(self, ptx: str) -> None:
        self.cpu, self.gpu = hsa.agents()[:2]
        self.vram = next(p for p in hsa.amd_agent_iterate_memory_pools(self.gpu)
                         if hsa.pool_get_info(p, "segment") == hsa.Segment.GLOBAL)
        self.kernarg_pool = next(p for p in hsa.amd_agent_iterate_memory_pools(self.cpu)
                                 if hsa.pool_get_info(p, "global_flags") & hsa.GlobalFlag.KERNARG_INIT)
        self.exe = hsa.load_code_object(self.gpu, ptx)

    def symbol(self, name: str) -> hsa.ExecutableSymbol:
        return hsa.executable_get_symbol_by_name(self.exe, name, self.gpu)

    def to_device(self, host: np.ndarray) -> int:
        ptr = hsa.amd_memory_pool_allocate(self.vram, host.nbytes)
        hsa.memory_copy(ptr, host.ctypes.data, host.nbytes)
        return ptr

    def to_host(self, ptr: int, n: int, dtype: type = np.float32) -> np.ndarray:
        out = np.zeros(n, dtype)
        hsa.memory_copy(out.ctypes.data, ptr, out.nbytes)
        return out

    def kernarg(self, fmt: str, *values: object) -> int:
        ptr = hsa.amd_memory_pool_allocate(self.kernarg_pool, struct.calcsize(fmt))
        struct.pack_into(fmt, hsa.host_array(ptr), 0, *values)
        return ptr

    def dispatch(self, queue: hsa.Queue, name: str, kernarg: int, grid: int, workgroup: int,
                 done: hsa.Signal | int = 0, ring: bool = True) -> int:
        """The submission protocol for one 1-D dispatch; returns its packet index."""
        sym = self.symbol(name)
        index = hsa.queue_add_write_index_scacq_screl(queue, 1)
        hsa.write_kernel_dispatch_packet(
            queue, index, kernel_object=hsa.executable_symbol_get_info(sym, "kernel_object"),
            kernarg_address=kernarg, grid=grid, workgroup=workgroup,
            group_segment_size=hsa.executable_symbol_get_info(sym, "group_segment_size"), completion_signal=done)
        hsa.publish_header(queue, index, hsa.packet_header(hsa.PACKET_TYPE_KERNEL_DISPATCH, barrier=True), setup=1)
        if ring:
            hsa.signal_store_screlease(queue.doorbell_signal, index)
        return index

    def barrier(self, queue: hsa.Queue, deps: list, done: hsa.Signal | int = 0, *, is_or: bool = False) -> int:
        index = hsa.queue_add_write_index_relaxed(queue, 1)
        write = hsa.write_barrier_or_packet if is_or else hsa.write_barrier_and_packet
        write(queue, index, deps, done)
        kind = hsa.PACKET_TYPE_BARRIER_OR if is_or else hsa.PACKET_TYPE_BARRIER_AND
        hsa.publish_header(queue, index, hsa.packet_header(kind, barrier=True))
        hsa.signal_store_relaxed(queue.doorbell_signal, index)
        return index


def _wait_read_index(queue: hsa.Queue, target: int, timeout: float = 5.0) -> int:
    """The read index moves just after the completion signal (retire follows the decrement)."""
    deadline = time.monotonic() + timeout
    while (seen := hsa.queue_load_read_index_scacquire(queue)) < target and time.monotonic() < deadline:
        time.sleep(1e-3)
    return seen


# --- a whole dispatch by hand -----------------------------------------------------------------------------


def test_hand_submitted_vector_add_matches_numpy(ptx: str) -> None:
    s = Setup(ptx)
    rng = np.random.default_rng(0)
    n = 1000
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    d_a, d_b = s.to_device(a), s.to_device(b)
    d_c = hsa.amd_memory_pool_allocate(s.vram, 4 * n)
    sym = s.symbol("vadd")
    assert hsa.executable_symbol_get_info(sym, "kernarg_segment_size") == struct.calcsize("<QQQi") == 28
    assert hsa.executable_symbol_get_info(sym, hsa.ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_ALIGNMENT) == 16
    assert hsa.executable_symbol_get_info(sym, "type") == hsa.SymbolKind.KERNEL
    kernarg = s.kernarg("<QQQi", d_a, d_b, d_c, n)

    queue = hsa.queue_create(s.gpu, 64, hsa.QUEUE_TYPE_SINGLE)
    assert (queue.size, hsa.queue_load_write_index_relaxed(queue), hsa.queue_load_read_index_relaxed(queue)) == \
        (64, 0, 0)
    assert all(queue.packet_type(i) == hsa.PACKET_TYPE_INVALID for i in range(queue.size))
    assert queue.base_address == queue.ring.ctypes.data and queue.ring.nbytes == 64 * 64
    done = hsa.signal_create(1)
    index = s.dispatch(queue, "vadd", kernarg, grid=1024, workgroup=256, done=done)
    assert index == 0
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_LT, 1, timeout_hint=30.0) == 0

    c = s.to_host(d_c, n)
    assert c.dtype == np.float32 and c.shape == (n,)
    np.testing.assert_array_equal(c, a + b)
    assert _wait_read_index(queue, 1) == 1
    assert queue.packet_type(0) == hsa.PACKET_TYPE_INVALID
    start, end = hsa.amd_profiling_get_dispatch_time(s.gpu, done)
    assert 0.0 <= start < end


def test_symbol_info_group_segment_and_module_variable(ptx: str) -> None:
    s = Setup(ptx)
    sym = s.symbol("tile_sum.kd")  # ROCm's kernel-descriptor name finds the same kernel
    assert hsa.executable_symbol_get_info(sym, "name") == "tile_sum"
    assert hsa.executable_symbol_get_info(sym, "group_segment_size") == 64 * 4
    var = hsa.executable_get_symbol_by_name(s.exe, "counter", s.gpu)
    assert hsa.executable_symbol_get_info(var, "type") == hsa.SymbolKind.VARIABLE
    assert hsa.executable_symbol_get_info(var, "variable_size") == 4
    counter = s.to_host(hsa.executable_symbol_get_info(var, "variable_address"), 1, np.int32)
    assert counter[0] == 41
    with pytest.raises(HsaError) as e:
        hsa.executable_symbol_get_info(var, "kernel_object")
    assert e.value.status == Status.ERROR_INVALID_ARGUMENT

    x = np.arange(128, dtype=np.float32)
    d_x, d_out = s.to_device(x), hsa.amd_memory_pool_allocate(s.vram, 8)
    queue, done = hsa.queue_create(s.gpu, 64), hsa.signal_create(1)
    with pytest.raises(HsaError) as e:  # group memory below the kernel's static __shared__ tile
        hsa.write_kernel_dispatch_packet(queue, 0, kernel_object=hsa.executable_symbol_get_info(sym, "object"),
                                         kernarg_address=0, grid=128, workgroup=64, group_segment_size=0)
    assert e.value.status == Status.ERROR_INVALID_ARGUMENT
    s.dispatch(queue, "tile_sum", s.kernarg("<QQ", d_x, d_out), grid=128, workgroup=64, done=done)
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, 30.0) == 0
    np.testing.assert_allclose(s.to_host(d_out, 2), (x + 41).reshape(2, 64).sum(axis=1), rtol=1e-6)


# --- barriers -------------------------------------------------------------------------------------------


def test_barrier_and_across_two_queues_waits_for_the_host(ptx: str) -> None:
    s = Setup(ptx)
    n = 256
    x = np.linspace(-1, 1, n, dtype=np.float32)
    d_x, d_y, d_z = s.to_device(x), s.to_device(np.zeros(n, np.float32)), s.to_device(np.zeros(n, np.float32))
    qa, qb = hsa.queue_create(s.gpu, 64), hsa.queue_create(s.gpu, 64)
    assert qa.id != qb.id
    k1_done, gate, barrier_done, k2_done = (hsa.signal_create(v) for v in (1, 1, 1, 1))

    # queue B: wait for k1 (queue A) AND the host's gate; then k2 (barrier bit: after the barrier)
    s.barrier(qb, [k1_done, 0, gate], barrier_done)  # a 0 handle counts as satisfied in an AND
    s.dispatch(qb, "axpb", s.kernarg("<QQffi", d_y, d_z, 1.0, 1.0, n), grid=n, workgroup=128, done=k2_done)
    s.dispatch(qa, "axpb", s.kernarg("<QQffi", d_x, d_y, 2.0, 0.0, n), grid=n, workgroup=128, done=k1_done)

    assert hsa.signal_wait_scacquire(k1_done, hsa.SIGNAL_CONDITION_LT, 1, 30.0) == 0
    # k1 is done, the gate is not open: nothing on queue B may have run
    assert hsa.signal_wait_scacquire(k2_done, hsa.SIGNAL_CONDITION_LT, 1, timeout_hint=0.2) == 1
    assert hsa.signal_load_relaxed(barrier_done) == 1
    assert hsa.queue_load_read_index_scacquire(qb) == 0
    np.testing.assert_array_equal(s.to_host(d_z, n), np.zeros(n, np.float32))

    hsa.signal_store_screlease(gate, 0)
    assert hsa.signal_wait_scacquire(k2_done, hsa.SIGNAL_CONDITION_LT, 1, 30.0) == 0
    assert hsa.signal_load_scacquire(barrier_done) == 0
    np.testing.assert_array_equal(s.to_host(d_z, n), (2 * x) + 1)
    assert _wait_read_index(qb, 2) == 2


def test_barrier_or_completes_when_any_dependency_does(ptx: str) -> None:
    s = Setup(ptx)
    queue = hsa.queue_create(s.gpu, 64)
    g1, g2, done = hsa.signal_create(1), hsa.signal_create(1), hsa.signal_create(1)
    s.barrier(queue, [0, g1, g2], done, is_or=True)  # a 0 handle counts as NOT satisfied in an OR
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.1) == 1
    hsa.signal_subtract_screlease(g2, 1)
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=10.0) == 0
    assert hsa.signal_load_relaxed(g1) == 1
    # an AND over the same signals still waits for g1
    done_and = hsa.signal_create(1)
    s.barrier(queue, [g1, g2], done_and)
    assert hsa.signal_wait_scacquire(done_and, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.1) == 1
    hsa.signal_store_screlease(g1, 0)
    assert hsa.signal_wait_scacquire(done_and, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=10.0) == 0


def test_barrier_or_with_only_null_dependencies_never_completes(ptx: str) -> None:
    s = Setup(ptx)
    queue = hsa.queue_create(s.gpu, 64)
    done = hsa.signal_create(1)
    s.barrier(queue, [0, 0], done, is_or=True)
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.1) == 1


# --- signals --------------------------------------------------------------------------------------------


def test_signal_wait_timeout_returns_the_unchanged_value() -> None:
    s = hsa.signal_create(5)
    t0 = time.monotonic()
    assert hsa.signal_wait_scacquire(s, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.05) == 5
    assert time.monotonic() - t0 >= 0.05
    assert hsa.signal_wait_relaxed(s, hsa.SIGNAL_CONDITION_GTE, 5, 0.0, hsa.WAIT_STATE_ACTIVE) == 5  # already true
    assert hsa.signal_wait_relaxed(s, "ne", 5, timeout_hint=0) == 5  # false, no time to wait: the value seen


def test_signal_wait_wakes_on_a_store_from_another_thread() -> None:
    s = hsa.signal_create(1)
    timer = threading.Timer(0.05, hsa.signal_store_screlease, (s, -3))
    timer.start()
    t0 = time.monotonic()
    assert hsa.signal_wait_scacquire(s, hsa.SIGNAL_CONDITION_LT, 0, timeout_hint=10.0) == -3
    assert time.monotonic() - t0 < 5.0
    timer.join()


def test_signal_read_modify_write_operations() -> None:
    s = hsa.signal_create(12)
    expected = 12
    hsa.signal_add_relaxed(s, 5)
    expected += 5
    hsa.signal_subtract_scacquire(s, 3)
    expected -= 3
    assert hsa.signal_load_relaxed(s) == expected
    assert hsa.signal_exchange_screlease(s, 0b1010) == expected
    hsa.signal_and_scacq_screl(s, 0b0110)
    hsa.signal_or_relaxed(s, 0b1000)
    hsa.signal_xor_screlease(s, 0b0011)
    expected = ((0b1010 & 0b0110) | 0b1000) ^ 0b0011
    assert hsa.signal_load_scacquire(s) == expected
    assert hsa.signal_cas_relaxed(s, expected + 1, 99) == expected  # mismatch: unchanged
    assert hsa.signal_cas_scacq_screl(s, expected, 99) == expected
    assert hsa.signal_load_scacquire(s.handle) == 99  # a bare handle names the same signal
    hsa.signal_silent_store_relaxed(s, 7)
    assert hsa.signal_load_relaxed(s) == 7


# --- queues and packet slots ----------------------------------------------------------------------------


def test_packet_slots_retire_to_invalid_and_read_index_advances(ptx: str) -> None:
    s = Setup(ptx)
    queue = hsa.queue_create(s.gpu, 4)  # below the minimum: HSA gives QUEUE_MIN_SIZE
    assert queue.size == hsa.agent_get_info(s.gpu, "queue_min_size") == 64
    total = 150  # wraps the ring twice
    done = hsa.signal_create(total)
    submitted = 0
    while submitted < total:
        write = hsa.queue_load_write_index_relaxed(queue)
        if write - hsa.queue_load_read_index_scacquire(queue) >= queue.size:  # full: wait for retirements
            time.sleep(1e-3)
            continue
        s.barrier(queue, [], done)
        submitted += 1
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, 30.0) == 0
    assert _wait_read_index(queue, total) == total == hsa.queue_load_write_index_scacquire(queue)
    assert all(queue.packet_type(i) == hsa.PACKET_TYPE_INVALID for i in range(queue.size))

    # a reserved slot whose header still reads INVALID stops the packet processor, doorbell or not
    index = hsa.queue_add_write_index_screlease(queue, 1)
    late = hsa.signal_create(1)
    hsa.write_barrier_and_packet(queue, index, [], late)
    hsa.signal_store_screlease(queue.doorbell_signal, index)
    assert hsa.signal_wait_scacquire(late, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.1) == 1
    assert hsa.queue_load_read_index_relaxed(queue) == total
    hsa.publish_header(queue, index, hsa.packet_header(hsa.PACKET_TYPE_BARRIER_AND))
    hsa.signal_store_screlease(queue.doorbell_signal, index)
    assert hsa.signal_wait_scacquire(late, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=10.0) == 0
    assert _wait_read_index(queue, total + 1) == total + 1


def test_write_index_cas_and_add() -> None:
    queue = hsa.queue_create(hsa.agents()[1], 128)
    assert hsa.queue_add_write_index_relaxed(queue, 3) == 0
    assert hsa.queue_cas_write_index_scacquire(queue, 2, 10) == 3  # mismatch: unchanged
    assert hsa.queue_cas_write_index_screlease(queue, 3, 5) == 3
    assert hsa.queue_load_write_index_scacquire(queue) == 5
    hsa.queue_store_write_index_relaxed(queue, 0)  # nothing was published: back to empty
    assert hsa.queue_load_write_index_relaxed(queue) == 0


@pytest.mark.parametrize("size", [1000, 0, 3, -64, 1 << 18])
def test_queue_create_rejects_a_bad_size(size: int) -> None:
    with pytest.raises(HsaError) as e:
        hsa.queue_create(hsa.agents()[1], size)
    assert e.value.status == Status.ERROR_INVALID_ARGUMENT
    assert e.value.status_name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    assert str(size) in str(e.value)


def test_queue_error_reaches_the_callback_and_stops_the_queue(ptx: str) -> None:
    s = Setup(ptx)
    seen: list[tuple[Status, int, object]] = []
    got = threading.Event()

    def callback(status: Status, queue: hsa.Queue, data: object) -> None:
        seen.append((status, queue.id, data))
        got.set()

    queue = hsa.queue_create(s.gpu, 64, hsa.QUEUE_TYPE_MULTI, callback, "mine")
    after = hsa.signal_create(1)
    index = hsa.queue_add_write_index_relaxed(queue, 1)
    hsa.write_barrier_and_packet(queue, index, [])
    hsa.publish_header(queue, index, hsa.packet_header(hsa.PACKET_TYPE_VENDOR_SPECIFIC))
    s.barrier(queue, [], after)
    assert got.wait(10.0)
    assert seen == [(Status.ERROR_INVALID_PACKET_FORMAT, queue.id, "mine")]
    assert queue.error is not None and queue.error.status == Status.ERROR_INVALID_PACKET_FORMAT
    # the queue stopped: the packet behind the bad one never runs; with a callback, waits do not raise
    assert hsa.signal_wait_scacquire(after, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.05) == 1


def test_kernel_fault_without_callback_is_raised_by_waits(ptx: str) -> None:
    s = Setup(ptx)
    queue = hsa.queue_create(s.gpu, 64)
    done = hsa.signal_create(1)
    s.dispatch(queue, "poke", s.kernarg("<Q", 0x10), grid=32, workgroup=32, done=done)  # writes near address 0
    with pytest.raises(HsaError) as e:
        hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_LT, 1, timeout_hint=30.0)
    assert e.value.status == Status.ERROR_EXCEPTION
    assert "cudaErrorIllegalAddress" in str(e.value)
    assert hsa.signal_load_relaxed(done) == 1
    hsa.queue_destroy(queue)  # the faulted queue is gone: waits work again
    other = hsa.signal_create(0)
    assert hsa.signal_wait_scacquire(other, hsa.SIGNAL_CONDITION_EQ, 0) == 0


# --- agents and memory ----------------------------------------------------------------------------------


def test_agents_mirror_the_devices_present(monkeypatch: pytest.MonkeyPatch) -> None:
    hsa.shut_down()
    monkeypatch.setenv("STRATA_DEVICES", "h200,mi300x")
    hsa.init()
    found = hsa.agents()
    assert [hsa.agent_get_info(a, "device") for a in found] == [hsa.DEVICE_TYPE_CPU, hsa.DEVICE_TYPE_GPU,
                                                                hsa.DEVICE_TYPE_GPU]
    for agent, node in zip(found[1:], list_devices(), strict=True):
        spec = get_spec(node.model)
        assert hsa.agent_get_info(agent, "name") == spec.arch
        assert hsa.agent_get_info(agent, hsa.AgentInfo.VENDOR_NAME) == {"amd": "AMD", "nvidia": "NVIDIA"}[spec.vendor]
        assert hsa.agent_get_info(agent, "wavefront_size") == spec.warp_size
        assert hsa.agent_get_info(agent, "compute_unit_count") == spec.sm_count
        assert hsa.agent_get_info(agent, "workgroup_max_size") == spec.max_threads_per_block
        assert hsa.agent_get_info(agent, "product_name") == spec.product
        assert hsa.agent_get_info(agent, "queue_max_size") == 131072
        assert hsa.agent_get_info(agent, 0xA002) == spec.sm_count  # HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT
    assert hsa.agent_get_info(found[2], "wavefront_size") == 64  # MI300X wavefronts
    assert hsa.agent_get_info(found[0], "vendor_name") == "CPU"
    with pytest.raises(HsaError) as e:
        hsa.agent_get_info(found[0], "wavefront_size")  # not a kernel agent
    assert e.value.status == Status.ERROR_INVALID_ARGUMENT

    visited: list[hsa.Agent] = []

    def stop_at_first_gpu(agent: hsa.Agent, data: list) -> Status:
        data.append(agent)
        return Status.INFO_BREAK if agent.device_type == hsa.DEVICE_TYPE_GPU else Status.SUCCESS

    assert hsa.iterate_agents(stop_at_first_gpu, visited) == Status.INFO_BREAK
    assert visited == found[:2]
    assert hsa.iterate_agents() == found


def test_memory_pools_and_async_copy_with_a_dependency(ptx: str) -> None:
    s = Setup(ptx)
    gpu_pools = hsa.amd_agent_iterate_memory_pools(s.gpu)
    assert [(hsa.pool_get_info(p, "segment"), hsa.pool_get_info(p, "runtime_alloc_allowed")) for p in gpu_pools] == \
        [(hsa.Segment.GLOBAL, True), (hsa.Segment.GROUP, False)]
    assert hsa.pool_get_info(s.vram, "global_flags") == hsa.GlobalFlag.COARSE_GRAINED
    assert hsa.pool_get_info(s.vram, "location") == hsa.PoolLocation.GPU
    assert hsa.pool_get_info(s.vram, "size") == get_spec(list_devices()[0].model).hbm_bytes
    cpu_flags = [hsa.pool_get_info(p, "global_flags") for p in hsa.amd_agent_iterate_memory_pools(s.cpu)]
    assert all(f & hsa.GlobalFlag.FINE_GRAINED for f in cpu_flags) and \
        any(f & hsa.GlobalFlag.KERNARG_INIT for f in cpu_flags)

    host = hsa.amd_memory_pool_allocate(s.kernarg_pool, 4096)
    assert host % hsa.pool_get_info(s.kernarg_pool, "runtime_alloc_alignment") == 0
    src = hsa.host_array(host, np.float32)
    src[:] = np.arange(1024, dtype=np.float32)
    dev = hsa.amd_memory_pool_allocate(s.vram, 4096)
    gate, done = hsa.signal_create(1), hsa.signal_create(1)
    hsa.amd_memory_async_copy(dev, s.gpu, host, s.cpu, 4096, [gate], done)
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=0.1) == 1  # held by gate
    hsa.signal_store_relaxed(gate, 0)
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_EQ, 0, timeout_hint=10.0) == 0
    np.testing.assert_array_equal(s.to_host(dev, 1024), np.arange(1024, dtype=np.float32))
    hsa.amd_memory_pool_free(dev)
    hsa.amd_memory_pool_free(host)
    with pytest.raises(HsaError) as e:
        hsa.amd_memory_pool_free(host)
    assert e.value.status == Status.ERROR_INVALID_ARGUMENT


# --- status codes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value"), [  # hsa.h values (apis.md §1.10)
    ("SUCCESS", 0x0), ("INFO_BREAK", 0x1), ("ERROR", 0x1000), ("ERROR_INVALID_ARGUMENT", 0x1001),
    ("ERROR_INVALID_QUEUE_CREATION", 0x1002), ("ERROR_INVALID_SIGNAL", 0x1006), ("ERROR_INVALID_QUEUE", 0x1007),
    ("ERROR_INVALID_PACKET_FORMAT", 0x1009), ("ERROR_NOT_INITIALIZED", 0x100B), ("ERROR_EXCEPTION", 0x1016),
    ("ERROR_INVALID_SYMBOL_NAME", 0x1013), ("ERROR_FATAL", 0x1026)])
def test_status_values_follow_hsa_h(name: str, value: int) -> None:
    assert Status[name] == value
    assert HsaError(f"HSA_STATUS_{name}").status == value == HsaError(name).status
    assert hsa.status_string(value) == f"HSA_STATUS_{name}"


def test_error_statuses(ptx: str) -> None:
    s = Setup(ptx)

    def status(fn, *args, **kwargs) -> Status:
        with pytest.raises(HsaError) as e:
            fn(*args, **kwargs)
        assert re.match(r"HSA_STATUS_ERROR_\w+: \[", str(e.value)), str(e.value)  # names the call
        return e.value.status

    assert status(hsa.queue_create, s.cpu, 64) == Status.ERROR_INVALID_QUEUE_CREATION
    assert status(hsa.queue_create, s.gpu, 64, 7) == Status.ERROR_INVALID_ARGUMENT
    queue = hsa.queue_create(s.gpu, 64)
    assert status(hsa.signal_wait_scacquire, queue.doorbell_signal, hsa.SIGNAL_CONDITION_EQ, 0) == \
        Status.ERROR_INVALID_SIGNAL
    hsa.queue_destroy(queue)
    assert status(hsa.queue_destroy, queue) == Status.ERROR_INVALID_QUEUE
    assert status(hsa.queue_load_read_index_relaxed, queue) == Status.ERROR_INVALID_QUEUE
    assert status(hsa.signal_store_relaxed, queue.doorbell_signal, 1) == Status.ERROR_INVALID_SIGNAL

    sig = hsa.signal_create(0)
    hsa.signal_destroy(sig)
    assert status(hsa.signal_destroy, sig) == Status.ERROR_INVALID_SIGNAL
    assert status(hsa.signal_load_relaxed, 0) == Status.ERROR_INVALID_SIGNAL
    assert status(hsa.signal_wait_scacquire, hsa.signal_create(0), 9, 0) == Status.ERROR_INVALID_ARGUMENT

    group = hsa.amd_agent_iterate_memory_pools(s.gpu)[1]
    assert status(hsa.amd_memory_pool_allocate, s.vram, 0) == Status.ERROR_INVALID_ARGUMENT
    assert status(hsa.amd_memory_pool_allocate, group, 64) == Status.ERROR_INVALID_ALLOCATION
    assert status(hsa.amd_memory_pool_allocate, s.vram, hsa.pool_get_info(s.vram, "size") + 1) == \
        Status.ERROR_INVALID_ALLOCATION
    assert status(hsa.amd_memory_pool_get_info, s.vram, "no_such_attribute") == Status.ERROR_INVALID_ARGUMENT
    assert status(hsa.amd_memory_async_copy, 0, s.cpu, 0, s.cpu, 8, [], hsa.signal_create(1)) == \
        Status.ERROR_INVALID_ARGUMENT
    dev = hsa.amd_memory_pool_allocate(s.vram, 64)
    assert status(hsa.memory_copy, dev + 32, np.zeros(64, np.uint8).ctypes.data, 64) == Status.ERROR_INVALID_ARGUMENT

    assert status(hsa.executable_get_symbol_by_name, s.exe, "nope", s.gpu) == Status.ERROR_INVALID_SYMBOL_NAME
    assert status(hsa.executable_load_code_object, s.exe, s.gpu, ptx) == Status.ERROR_FROZEN_EXECUTABLE
    exe = hsa.executable_create()
    assert status(hsa.executable_load_code_object, exe, s.gpu, ".version 8.0\n.target sm_90\nnot ptx") == \
        Status.ERROR_INVALID_CODE_OBJECT
    assert status(hsa.executable_load_code_object, exe, s.cpu, ptx) == Status.ERROR_INVALID_AGENT
    hsa.executable_destroy(exe)
    assert status(hsa.executable_freeze, exe) == Status.ERROR_INVALID_EXECUTABLE


def test_calls_before_init_raise_not_initialized() -> None:
    agent = hsa.agents()[1]
    hsa.shut_down()
    try:
        for call in (hsa.agents, lambda: hsa.signal_create(1), lambda: hsa.queue_create(agent, 64), hsa.shut_down):
            with pytest.raises(HsaError) as e:
                call()
            assert e.value.status == Status.ERROR_NOT_INITIALIZED
    finally:
        hsa.init()
    with pytest.raises(HsaError) as e:  # an agent from before the shut_down is stale
        hsa.queue_create(agent, 64)
    assert e.value.status == Status.ERROR_INVALID_AGENT


def test_init_is_reference_counted() -> None:
    hsa.init()
    hsa.shut_down()
    assert hsa.signal_create(0).handle != 0  # still initialized: one init is left


# --- the walk-through in docs/hsa.md ----------------------------------------------------------------------


def test_doc_walkthrough_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, "docs/hsa.md lost its example"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
