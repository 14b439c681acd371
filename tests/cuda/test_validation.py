"""Validation up front and memcheck by the byte: what the user asked for is what is checked.

memcheck checks the bytes of each allocation (compute-sanitizer semantics), in kernels and in
cudaMemcpy/cudaMemset; device dtypes and byte counts are validated before anything is allocated;
modules unload; the allocators hold up under many threads.
"""

import gc
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata.cuda.caching_allocator import get_allocator
from strata.driver.hostmem import HOST_MEMORY
from strata.hip import capi

SRC = r"""
extern "C" __global__ void read_upto(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = a[i];                    // i == n reads one element past the end
}
extern "C" __global__ void write_upto(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) a[i] = 2.0f * i;                  // i == n writes one element past the end
}
"""
TABLE_SRC = r"""
__device__ float table[1024];
extern "C" __global__ void put(float v) { table[threadIdx.x] = v; }
"""


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC, name="validation.cu")


def _grid(n: int) -> tuple[int, int]:
    return (n + 1 + 255) // 256, 256


# --- memcheck by the byte ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1000, 1024, 4096])  # 1024 and 4096 floats are whole 4 KiB pages
@pytest.mark.parametrize("access", ["read", "write"])
def test_one_element_past_the_end_faults_whatever_the_size(mod: cuda.Module, n: int, access: str) -> None:
    a = cuda.to_device(np.arange(n, dtype=np.float32))
    after = cuda.zeros(n + 1, np.float32)  # the next allocation, where a[n] used to land
    if access == "read":
        launch: Callable[[], object] = lambda: mod.get_function("read_upto")(*_grid(n), (a, after, np.int32(n)))
    else:
        launch = lambda: mod.get_function("write_upto")(*_grid(n), (a, np.int32(n)))
    with pytest.raises(cuda.DeviceFault) as info:
        launch()
        cuda.synchronize()
    r = info.value.report
    assert info.value.name == "cudaErrorIllegalAddress" and r["access"] == access
    assert r["address"] == a.ptr + 4 * n and r["size"] == 4 and r["thread"][0] == n % 256
    assert f"0 bytes after the end of allocation {a.ptr:#x} of {4 * n} bytes" in r["nearest"]


@pytest.mark.parametrize("n", [1000, 1024, 4096])
def test_every_byte_inside_is_valid(mod: cuda.Module, n: int) -> None:
    host = np.random.default_rng(n).standard_normal(n + 1).astype(np.float32)
    a = cuda.to_device(host)  # n + 1 elements: a[n] is the last one
    out = cuda.zeros(n + 1, np.float32)
    mod.get_function("read_upto")(*_grid(n), (a, out, np.int32(n))).wait()
    np.testing.assert_array_equal(out.get(), host)
    mod.get_function("write_upto")(*_grid(n), (a, np.int32(n))).wait()
    np.testing.assert_array_equal(a.get(), 2.0 * np.arange(n + 1, dtype=np.float32))


@pytest.mark.parametrize("size", [4000, 4096, 16384])
def test_memset_and_memcpy_check_the_bytes_asked_for(size: int) -> None:
    p = cuda.malloc(size)
    try:
        cuda.memset(p, 7, size)  # the whole allocation: accepted
        cuda.memset(p + size - 4, 1, 4)
        cuda.memset(p, 0, 0)
        for call in (lambda: cuda.memset(p, 0, size + 1), lambda: cuda.memset(p + size - 4, 0, 5),
                     lambda: cuda.memcpy(p, np.zeros(size + 1, np.uint8), size + 1),
                     lambda: cuda.memcpy(np.zeros(size + 1, np.uint8), p, size + 1),
                     lambda: cuda.memcpy(p + 1, p, size), lambda: cuda.memset_async(p, 0, size + 1)):
            with pytest.raises(cuda.CudaError) as info:
                call()
            assert info.value.name == "cudaErrorInvalidValue" and "past the end" in str(info.value)
        out = np.zeros(size, np.uint8)
        cuda.memcpy(out, p, size)  # nothing ran: the checks came first, and the device is not faulted
        assert (out[:-4] == 7).all() and (out[-4:] == 1).all()
        cuda.synchronize()
    finally:
        cuda.free(p)


def test_memset_count_must_be_a_non_negative_int() -> None:
    a = cuda.zeros(16, np.uint8)
    for bad in (-1, -(2 ** 40), 2.5, None):
        with pytest.raises(cuda.CudaError) as info:
            cuda.memset(a, 1, bad)  # type: ignore[arg-type]
        assert info.value.name == "cudaErrorInvalidValue" and "count" in str(info.value)
    with pytest.raises(cuda.CudaError):
        capi.hipMemset(a, 1, -4)
    assert not a.get().any()


# --- dtypes and byte counts ----------------------------------------------------------------------------

SUPPORTED = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
             np.float16, np.float32, np.float64, np.complex64, np.complex128, ml_dtypes.bfloat16]


@pytest.mark.parametrize("dtype", [object, str, bytes, "V4", [("a", "f4"), ("b", "i4")], np.longdouble,
                                   "datetime64[s]"])
def test_unsupported_dtypes_are_type_errors_naming_the_supported(dtype: object) -> None:
    for make in (lambda: cuda.zeros(3, dtype), lambda: cuda.empty((2, 2), dtype), lambda: cuda.pinned_empty(3, dtype)):
        with pytest.raises(TypeError) as info:
            make()
        assert "supported: bool, int8" in str(info.value) and "float32" in str(info.value)
    with pytest.raises(TypeError):
        cuda.to_device(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        cuda.to_device(np.array([object(), None]))


@pytest.mark.parametrize("dtype", SUPPORTED)
def test_every_supported_dtype_round_trips(dtype: object) -> None:
    host = (np.arange(5) % 2).astype(dtype)
    np.testing.assert_array_equal(cuda.to_device(host).get(), host)
    assert not cuda.zeros((2, 3), dtype).get().view(np.uint8).any()


def test_byte_counts_are_exact() -> None:
    with pytest.raises(ValueError, match="64-bit size") as info:
        cuda.zeros((2 ** 32, 2 ** 32))  # 2**66 bytes: it used to wrap around to a 0-byte array
    assert "(4294967296, 4294967296)" in str(info.value)
    with pytest.raises(ValueError, match="64-bit size"):
        cuda.empty((2 ** 31, 2 ** 31, 4), np.float16)
    total = cuda.current_device().totalGlobalMem
    with pytest.raises(cuda.OutOfMemoryError) as oom:  # fits a size, not the device: cudaMalloc's error
        cuda.empty(total + 1, np.uint8)
    assert oom.value.name == "cudaErrorMemoryAllocation" and f"{total + 1:,}" in str(oom.value)
    with pytest.raises(TypeError, match="shape"):
        cuda.empty(2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="negative"):
        cuda.empty((3, -1))
    assert cuda.zeros(0).nbytes == 0 and cuda.zeros((4, 0, 2)).get().shape == (4, 0, 2)
    big = cuda.empty(2 ** 30, np.float32)  # 4 GiB: within the device, accepted (lazily committed)
    assert big.nbytes == 2 ** 32
    big.free()


# --- modules unload ------------------------------------------------------------------------------------


def test_module_unload_frees_its_globals_and_kernel_objects() -> None:
    dev = cuda.current_device()
    m = cuda.compile(TABLE_SRC, name="table.cu")
    k = m.get_function("put")
    k(1, 32, (np.float32(3),)).wait()
    address, size = m.get_global("table")
    assert size == 4096 and dev.file.gpu.memory.allocation_at(address) is not None
    handles = list(m.loaded(dev).kernel_objects.values())
    assert handles and all(h in dev.file.cp.kernel_objects for h in handles)
    m.unload()
    assert dev.file.gpu.memory.allocation_at(address) is None
    assert not any(h in dev.file.cp.kernel_objects for h in handles)
    for use in (lambda: k(1, 32, (np.float32(1),)), lambda: m.get_function("put"), lambda: m.get_global("table"),
                m.unload):
        with pytest.raises(cuda.CudaError) as info:
            use()
        assert info.value.name == "cudaErrorInvalidResourceHandle" and info.value.hip_name == "hipErrorInvalidHandle"


def test_hip_module_unload_frees() -> None:
    dev = cuda.current_device()
    m = capi.hipModuleLoadData(cuda.compile(TABLE_SRC).ptx)
    address, _ = capi.hipModuleGetGlobal(m, "table")
    capi.hipModuleUnload(m)
    assert dev.file.gpu.memory.allocation_at(address) is None
    with pytest.raises(cuda.CudaError) as info:
        capi.hipModuleUnload(m)
    assert info.value.hip_name == "hipErrorInvalidHandle"


def test_dropping_the_last_reference_unloads() -> None:
    dev = cuda.current_device()
    m = cuda.compile(TABLE_SRC, name="table.cu")
    k = m.get_function("put")
    k(1, 32, (np.float32(3),))  # still queued, maybe, when the references go
    address, _ = m.get_global("table")
    del m
    gc.collect()
    assert dev.file.gpu.memory.allocation_at(address) is not None  # the kernel keeps its module alive
    del k
    gc.collect()  # unloaded now if the device is idle, else handed to the next synchronize: never waited on
    cuda.synchronize()  # the queued launch ran before the memory went
    assert dev.file.gpu.memory.allocation_at(address) is None


SPIN_SRC = r"""
extern "C" __global__ void spin_until_set(int* flag) {
    while (atomicAdd(flag, 0) == 0) {}
}
"""


def test_a_module_dropped_behind_a_busy_device_never_stalls_a_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module dropped while a kernel spins until the host sets a flag: the next launch (a module call) must
    not wait for the device to go idle to unload it (the flag is set only after that launch), so the spin ends
    at once, and the module goes at the synchronize after."""
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "20")  # (a stall: a LaunchTimeout after 20 s)
    dev = cuda.current_device()
    flag = cuda.zeros(1, np.int32)
    spin = cuda.compile(SPIN_SRC).get_function("spin_until_set")
    other = cuda.compile(TABLE_SRC, name="table.cu")
    put = other.get_function("put")
    dropped = cuda.compile(TABLE_SRC, name="table.cu")
    address, _ = dropped.get_global("table")
    spinning, setter, third = (cuda.Stream(non_blocking=True) for _ in range(3))
    report = spin(1, 1, (flag,), stream=spinning)
    t = time.monotonic()
    del dropped
    gc.collect()  # the device is busy: the unload is handed on
    put(1, 32, (np.float32(1),), stream=third)  # a module call, while the kernel still spins
    assert time.monotonic() - t < 10 and not report.done
    flag.set(np.ones(1, np.int32), stream=setter)
    report.wait()
    cuda.synchronize()
    assert time.monotonic() - t < 10
    assert dev.file.gpu.memory.allocation_at(address) is None  # unloaded once the device was idle


def test_an_array_dropped_behind_a_busy_device_never_stalls_an_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for memory: an array the garbage collector frees while a kernel spins until the host sets a
    flag; the next cudaMalloc must not wait for the device (the flag is set after it), and the memory is
    freed at the synchronize after."""
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "20")
    dev = cuda.current_device()
    flag = cuda.zeros(1, np.int32)
    spin = cuda.compile(SPIN_SRC).get_function("spin_until_set")
    dropped = cuda.DeviceArray((1 << 16,), np.float32)
    address = dropped.ptr
    spinning, setter = cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)
    report = spin(1, 1, (flag,), stream=spinning)
    t = time.monotonic()
    del dropped
    gc.collect()  # the device is busy: the free is handed on
    fresh = cuda.DeviceArray((1 << 16,), np.float32)  # cudaMalloc while the kernel spins
    assert time.monotonic() - t < 10 and not report.done and fresh.ptr != address
    flag.set(np.ones(1, np.int32), stream=setter)
    report.wait()
    cuda.synchronize()
    assert time.monotonic() - t < 10
    assert dev.file.gpu.memory.allocation_at(address) is None


def test_a_free_whose_wait_gives_up_never_frees_memory_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """cudaFree waits for the device; when that wait gives up (a minute of queued work), the memory must stay
    mapped (a queued kernel may still use it) until the device is idle, not be freed anyway."""
    dev = cuda.current_device()
    a = cuda.DeviceArray((1024,), np.float32)
    address = a.ptr
    monkeypatch.setattr(dev.file, "wait_idle", lambda timeout=60.0: False)  # as if still busy after the wait
    a.free()
    assert dev.file.gpu.memory.allocation_at(address) is not None
    monkeypatch.undo()
    cuda.synchronize()  # idle now: the handed-over free is carried out
    assert dev.file.gpu.memory.allocation_at(address) is None


# --- many threads --------------------------------------------------------------------------------------


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads as often as the interpreter can, so races show up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _hammer(threads: int, body: Callable[[random.Random], None]) -> None:
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        try:
            body(random.Random(seed))
        except BaseException as e:  # reported on the main thread
            errors.append(e)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    assert not errors, errors[:3]


class _Live:
    """Ranges handed out and not yet returned; two owners of one byte fail the test."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ranges: dict[int, int] = {}

    def add(self, start: int, size: int) -> None:
        with self.lock:
            for s, n in self.ranges.items():
                assert start + size <= s or s + n <= start, f"{start:#x}+{size} overlaps {s:#x}+{n}"
            self.ranges[start] = size

    def remove(self, start: int) -> None:
        with self.lock:
            del self.ranges[start]


def test_concurrent_malloc_and_free_keep_one_owner_per_byte(busy_switching: None) -> None:
    dev = cuda.current_device()
    cuda.synchronize()
    before_used, before_allocs = dev.file.vram.stats().used, len(dev.file.gpu.memory.allocations())
    live = _Live()

    def body(rng: random.Random) -> None:
        mine: list[int] = []
        for _ in range(150):
            if mine and rng.random() < 0.5:
                p = mine.pop(rng.randrange(len(mine)))
                live.remove(p)
                cuda.free(p)
            else:
                size = rng.choice([1, 100, 4096, 4097, 20000])
                p = cuda.malloc(size)
                live.add(p, size)
                mine.append(p)
        for p in mine:
            live.remove(p)
            cuda.free(p)

    _hammer(6, body)
    assert dev.file.vram.stats().used == before_used
    assert len(dev.file.gpu.memory.allocations()) == before_allocs


def test_concurrent_device_arrays_and_caching_allocator(busy_switching: None) -> None:
    dev = cuda.current_device()
    alloc = get_allocator(dev.index)
    before = alloc.memory_allocated()
    before_used = dev.file.vram.stats().used
    live = _Live()

    def body(rng: random.Random) -> None:
        for _ in range(60):
            blocks = []
            for _ in range(rng.randrange(1, 4)):
                b = alloc.malloc(rng.choice([512, 3000, 1 << 16]))
                live.add(b.ptr, b.size)
                blocks.append(b)
            arr = cuda.DeviceArray((rng.randrange(1, 3000),), np.float32)
            live.add(arr.ptr, arr.nbytes)
            live.remove(arr.ptr)
            arr.free()
            for b in blocks:
                live.remove(b.ptr)
                alloc.free(b)

    _hammer(6, body)
    assert alloc.memory_allocated() == before >= 0
    alloc.empty_cache()
    assert dev.file.vram.stats().used <= before_used + alloc.memory_reserved()


def test_concurrent_pinned_memory(busy_switching: None) -> None:
    before = HOST_MEMORY.stats()

    def body(rng: random.Random) -> None:
        for _ in range(100):
            bufs = [cuda.pinned_empty(rng.randrange(1, 20000), np.uint8) for _ in range(3)]
            for b in bufs:
                assert HOST_MEMORY.is_pinned(b.ctypes.data, b.nbytes)
            del bufs

    _hammer(6, body)
    gc.collect()
    after = HOST_MEMORY.stats()
    assert after["pinned_allocations"] == before["pinned_allocations"]
    assert after["pinned_bytes"] == before["pinned_bytes"]


def test_another_devices_caching_allocator_does_not_move_this_threads_mallocs(busy_switching: None) -> None:
    d0 = cuda.current_device()
    d1 = cuda.Device(model="h100" if d0.spec.name != "h100" else "a100")
    other = get_allocator(d1.index)
    stop = threading.Event()

    def churn(rng: random.Random) -> None:  # segments come and go on d1 all the time
        while not stop.is_set():
            b = other.malloc(rng.choice([3 << 20, 12 << 20]))
            other.free(b)
            other.empty_cache()

    def mallocs(rng: random.Random) -> None:
        try:
            for _ in range(200):
                p = cuda.malloc(64)  # the current device, d0, whatever other threads do
                try:
                    assert cuda.pointer_get_attributes(p).device == d0.index
                finally:
                    cuda.free(p)
        finally:
            stop.set()

    workers = [threading.Thread(target=churn, args=(random.Random(i),)) for i in range(2)]
    for t in workers:
        t.start()
    try:
        _hammer(2, mallocs)
    finally:
        stop.set()
        for t in workers:
            t.join(timeout=60)
    assert other.memory_allocated() == 0 and cuda.current_device() is d0


def test_concurrent_first_use_on_a_device_loads_a_module_once(busy_switching: None) -> None:
    d0 = cuda.current_device()
    d1 = cuda.Device(model="h100" if d0.spec.name != "h100" else "a100")

    def tables() -> int:
        return sum(a.tag == ".global table" for a in d1.file.gpu.memory.allocations())

    before = tables()
    for _ in range(12):
        m = cuda.Module.from_ptx(cuda.compile(TABLE_SRC, name="table.cu").ptx)
        got: list[object] = []
        _hammer(8, lambda rng: got.append(m.loaded(d1)))  # noqa: B023 - run before the next iteration
        assert len(got) == 8 and all(g is got[0] for g in got)
        assert tables() == before + 1
        m.unload()
        assert tables() == before
