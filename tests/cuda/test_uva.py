"""Unified virtual addressing: each device owns its own range of addresses, a pointer says which device
it belongs to, and a kernel reaches another device's memory only with peer access enabled."""

from collections.abc import Iterator

import numpy as np
import pytest

import strata.cuda as cuda
import strata.cuda.device as device_mod
from strata.hip import capi
from strata.hw.catalog import get_spec
from strata.hw.gpu import VirtualGPU
from strata.hw.memory import GLOBAL_BASE, UVA_RANGE, UVA_SHIFT, memory_of

SRC = r"""
extern "C" __global__ void fill(float* y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}
extern "C" __global__ void count_positive(int* c, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) atomicAdd(c, 1);
}
extern "C" __global__ void axpy(float* y, const float* x, const float* z, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + z[i];
}
"""
N = 256


@pytest.fixture
def devs(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[cuda.Device, cuda.Device]]:
    """(d0, d1): the default device and a second NVIDIA device; d1 is current during the test."""
    d0 = cuda.current_device()
    d1 = cuda.Device(model="h100" if d0.spec.name != "h100" else "a100")
    monkeypatch.setattr(device_mod, "_explicit", device_mod._explicit)  # restored after the test
    yield d0, d1
    for a, b in ((d0, d1), (d1, d0)):
        if b.file.gpu.memory.slot in a.file.gpu.memory.peers:
            a.disable_peer_access(b)


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC, name="uva.cu")


def _slot(ptr: int) -> int:
    return (ptr - GLOBAL_BASE) >> UVA_SHIFT


def test_each_device_owns_its_own_address_range(devs: tuple[cuda.Device, cuda.Device]) -> None:
    d0, d1 = devs
    a = cuda.DeviceArray((N,), np.float32, d0)
    b = cuda.DeviceArray((N,), np.float32, d1)
    m0, m1 = d0.file.gpu.memory, d1.file.gpu.memory
    assert _slot(a.ptr) == m0.slot != m1.slot == _slot(b.ptr)
    assert m0.base <= a.ptr < m0.end and m1.base <= b.ptr < m1.end
    assert memory_of(a.ptr) is m0 and memory_of(b.ptr) is m1
    # the device a pointer belongs to follows from the address alone (cudaPointerGetAttributes)
    pa, pb = cuda.pointer_get_attributes(a.ptr + 12), cuda.pointer_get_attributes(b)
    assert (pa.type, pa.device, pa.start, pa.size) == ("device", d0.index, a.ptr, a.nbytes)
    assert (pb.type, pb.device, pb.start) == ("device", d1.index, b.ptr)
    assert cuda.pointer_get_attributes(np.zeros(4)).type == "unregistered"
    assert cuda.pointer_get_attributes(cuda.pinned_empty(4)).type == "host"
    assert capi.hipPointerGetAttributes(b.ptr).device == d1.index


def test_the_largest_catalogued_hbm_fits_its_range() -> None:
    gpu = VirtualGPU("mi300x")  # 192 GiB
    mem = gpu.memory
    assert get_spec("mi300x").hbm_bytes == mem.capacity < UVA_RANGE == mem.end - mem.base
    from strata.driver.vram import VramManager

    vram = VramManager(mem)
    p = vram.alloc(mem.capacity)  # all of it, lazily committed
    assert p == mem.base and vram.stats().free == 0
    mem.write(p + mem.capacity - 4, b"\x01\x02\x03\x04")
    assert mem.read(p + mem.capacity - 4, 4) == b"\x01\x02\x03\x04"
    vram.free(p)


def test_a_foreign_pointer_faults_instead_of_overwriting_the_other_device(
        devs: tuple[cuda.Device, cuda.Device], mod: cuda.Module) -> None:
    d0, d1 = devs
    x0 = cuda.to_device(np.arange(N, dtype=np.float32))  # on d0 (current)
    cuda.set_device(d1)
    y1 = cuda.to_device(np.full(N, 5, np.float32))  # on d1, the first array of both devices
    with pytest.raises(cuda.DeviceFault) as info:
        mod.get_function("fill")(1, N, (x0, np.float32(-1), np.int32(N))).wait()
    r = info.value.report
    assert info.value.name == "cudaErrorIllegalAddress" and r["address"] == x0.ptr and r["access"] == "write"
    assert "another device" in r["nearest"] and "not enabled" in r["nearest"]
    np.testing.assert_array_equal(x0.get(), np.arange(N, dtype=np.float32))  # nobody's memory was written
    on_d1 = np.frombuffer(d1.file.gpu.memory.read(y1.ptr, y1.nbytes), np.float32)  # (d1's context is faulted)
    np.testing.assert_array_equal(on_d1, 5)
    d1.reset()


def test_peer_access_reaches_the_peer_and_counts_interconnect_bytes(
        devs: tuple[cuda.Device, cuda.Device], mod: cuda.Module) -> None:
    d0, d1 = devs
    rng = np.random.default_rng(0)
    xh, zh = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    x0, y0 = cuda.to_device(xh), cuda.zeros(N, np.float32)  # on d0
    cuda.set_device(d1)
    z1 = cuda.to_device(zh)
    assert d1.can_access_peer(d0) and cuda.device_can_access_peer(d1, d0) and not d1.can_access_peer(d1)
    before = d1.peer_traffic().get(d0.index, 0)
    cuda.device_enable_peer_access(d0)  # the current device (d1) may access d0
    mod.get_function("axpy")(1, N, (y0, x0, z1, np.float32(2), np.int32(N))).wait()
    np.testing.assert_allclose(y0.get(), 2 * xh + zh, rtol=1e-6)
    assert d1.peer_traffic()[d0.index] - before == 2 * N * 4  # x read and y written over the interconnect
    # access is one-way: d0's kernels still fault on d1's memory
    assert d1.file.gpu.memory.slot not in d0.file.gpu.memory.peers
    # and it ends with disable
    cuda.device_disable_peer_access(d0)
    with pytest.raises(cuda.DeviceFault, match="not enabled"):
        mod.get_function("axpy")(1, N, (y0, x0, z1, np.float32(2), np.int32(N))).wait()
    d1.reset()


def test_peer_access_errors_have_cuda_and_hip_names(devs: tuple[cuda.Device, cuda.Device]) -> None:
    d0, d1 = devs
    d1.enable_peer_access(d0)
    with pytest.raises(cuda.CudaError) as info:
        d1.enable_peer_access(d0)
    assert (info.value.name, info.value.hip_name) == ("cudaErrorPeerAccessAlreadyEnabled",
                                                      "hipErrorPeerAccessAlreadyEnabled")
    d1.disable_peer_access(d0)
    with pytest.raises(cuda.CudaError) as info:
        d1.disable_peer_access(d0)
    assert (info.value.name, info.value.hip_name) == ("cudaErrorPeerAccessNotEnabled", "hipErrorPeerAccessNotEnabled")
    with pytest.raises(cuda.CudaError) as info:
        d1.enable_peer_access(d1)
    assert info.value.name == "cudaErrorInvalidDevice"
    with pytest.raises(cuda.CudaError) as info:
        d1.enable_peer_access(d0, flags=1)
    assert info.value.name == "cudaErrorInvalidValue"
    with pytest.raises(cuda.CudaError) as info:
        d1.enable_peer_access(99)
    assert info.value.name == "cudaErrorInvalidDevice"
    # the HIP C names
    cuda.set_device(d1)
    assert capi.hipDeviceCanAccessPeer(d1.index, d0.index) == 1
    capi.hipDeviceEnablePeerAccess(d0.index, 0)
    with pytest.raises(cuda.CudaError) as info:
        capi.hipDeviceEnablePeerAccess(d0.index, 0)
    assert info.value.hip_name == "hipErrorPeerAccessAlreadyEnabled"
    capi.hipDeviceDisablePeerAccess(d0.index)
    assert d0.file.gpu.memory.slot not in d1.file.gpu.memory.peers


def test_copies_between_devices(devs: tuple[cuda.Device, cuda.Device]) -> None:
    d0, d1 = devs
    host = np.arange(N, dtype=np.float32) * 3
    x0 = cuda.to_device(host)
    y1 = cuda.DeviceArray((N,), np.float32, d1)
    cuda.memcpy_peer(y1, d1, x0, d0, x0.nbytes)
    np.testing.assert_array_equal(y1.get(), host)
    z1 = cuda.DeviceArray((N,), np.float32, d1)
    cuda.memcpy(z1.ptr + 16, x0.ptr, x0.nbytes - 16)  # Default kind, two devices: a peer copy
    np.testing.assert_array_equal(z1.get()[4:], host[:-4])
    w1 = cuda.DeviceArray((N,), np.float32, d1)
    capi.hipMemcpyPeer(w1.ptr, d1.index, x0.ptr, d0.index, x0.nbytes)
    np.testing.assert_array_equal(w1.get(), host)
    v1 = cuda.DeviceArray((N,), np.float32, d1)
    v1.copy_from(x0)  # DeviceArray's cudaMemcpy DeviceToDevice across devices
    np.testing.assert_array_equal(v1.get(), host)
    with pytest.raises(cuda.CudaError, match="belongs to device"):
        cuda.memcpy_peer(y1, d0, x0, d0, x0.nbytes)
    with pytest.raises(cuda.CudaError, match="past the end"):
        cuda.memcpy_peer(y1.ptr, d1, x0.ptr, d0, x0.nbytes + 4)


def test_atomics_on_peer_memory(devs: tuple[cuda.Device, cuda.Device], mod: cuda.Module) -> None:
    d0, d1 = devs
    counter = cuda.zeros(1, np.int32)  # on d0
    cuda.set_device(d1)
    xh = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    x1 = cuda.to_device(xh)
    d1.enable_peer_access(d0)
    before = d1.peer_traffic().get(d0.index, 0)
    mod.get_function("count_positive")(4, 256, (counter, x1, np.int32(xh.size))).wait()
    hits = int((xh > 0).sum())
    assert int(counter.get()[0]) == hits
    assert d1.peer_traffic()[d0.index] - before == 4 * hits  # one 4-byte atomic per hit crossed over


def test_running_out_of_device_ranges_is_a_typed_error_and_ranges_come_back() -> None:
    from strata.hw.memory import UVA_SLOTS, DeviceMemory

    held = []
    with pytest.raises(cuda.CudaError) as info:
        for _ in range(UVA_SLOTS + 1):
            held.append(DeviceMemory(1 << 20, uva=True))
    assert info.value.name == "cudaErrorInvalidDevice" and f"all {UVA_SLOTS}" in str(info.value)
    assert len({m.slot for m in held}) == len(held) <= UVA_SLOTS
    slot = held[-1].slot
    held[-1].write(held[-1].base, b"old data")
    del held[-1]  # a dropped device gives its range back, zeroed
    fresh = DeviceMemory(1 << 20, uva=True)
    assert fresh.slot == slot and fresh.read(fresh.base, 8) == bytes(8)
