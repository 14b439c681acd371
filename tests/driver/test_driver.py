"""The kernel driver: discovery, the VRAM manager, pinned host memory, interrupts."""

from __future__ import annotations

import mmap
import resource
import threading

import numpy as np
import pytest

from strata.driver import EVENTS, HOST_MEMORY, PAGE_SIZE, VramManager, list_devices
from strata.errors import CudaError, OutOfMemoryError
from strata.hw.memory import GLOBAL_BASE, DeviceMemory


def test_discovery_follows_strata_devices() -> None:
    nodes = list_devices({"STRATA_DEVICES": "2xh200,a100,mi300x"})
    assert [n.model for n in nodes] == ["h200", "h200", "a100", "mi300x"]
    assert len({n.pci_bus_id for n in nodes}) == 4
    assert [hex(n.vendor_id) for n in nodes] == ["0x10de"] * 3 + ["0x1002"]
    assert nodes[2].compute_capability == (8, 0) and nodes[0].compute_capability == (9, 0)
    assert nodes[0].node_path == "/dev/nvidia0" and nodes[3].node_path.startswith("/dev/kfd")
    assert [n.model for n in list_devices({})] == ["h200"]
    assert [n.model for n in list_devices({"STRATA_GPU": "h100"})] == ["h100"]
    with pytest.raises(ValueError, match="STRATA_DEVICES"):
        list_devices({"STRATA_DEVICES": "h200,v100"})


def test_vram_is_page_granular_aligned_and_coalesces() -> None:
    vram = VramManager(DeviceMemory(64 * PAGE_SIZE))
    a = vram.alloc(1)
    b = vram.alloc(PAGE_SIZE + 1)
    c = vram.alloc(100, alignment=8 * PAGE_SIZE)
    assert a == GLOBAL_BASE and b == a + PAGE_SIZE and c % (8 * PAGE_SIZE) == 0
    assert vram.size_of(b) == 2 * PAGE_SIZE
    st = vram.stats()
    assert st.used == 4 * PAGE_SIZE and st.free == 60 * PAGE_SIZE
    vram.free(b)  # a hole between a and the aligned c
    st = vram.stats()
    assert st.largest_free_block < st.free and 0 < st.fragmentation < 1
    vram.free(a)
    vram.free(c)
    st = vram.stats()
    assert (st.used, st.largest_free_block, st.fragmentation) == (0, 64 * PAGE_SIZE, 0.0)
    with pytest.raises(CudaError, match="power of two"):
        vram.alloc(10, alignment=3 * PAGE_SIZE)
    with pytest.raises(CudaError, match="double free"):
        vram.free(a)


def test_vram_exhaustion_names_the_sizes() -> None:
    vram = VramManager(DeviceMemory(16 * PAGE_SIZE))
    keep = [vram.alloc(PAGE_SIZE) for _ in range(16)]
    for addr in keep[::2]:
        vram.free(addr)  # 8 free pages, none adjacent
    with pytest.raises(OutOfMemoryError) as info:
        vram.alloc(2 * PAGE_SIZE)
    msg = str(info.value)
    assert f"requested {2 * PAGE_SIZE:,} bytes" in msg and f"{8 * PAGE_SIZE:,} bytes free" in msg
    assert f"largest free block {PAGE_SIZE:,} bytes" in msg
    assert info.value.name == "cudaErrorMemoryAllocation" and isinstance(info.value, MemoryError)


def test_freed_vram_gives_host_pages_back_and_reads_zero() -> None:
    mem = DeviceMemory(1 << 30)
    vram = VramManager(mem)
    addr = vram.alloc(4 << 20)
    mem.fill(addr, 4 << 20, 0x5A)
    vram.free(addr)
    again = vram.alloc(4 << 20)
    assert again == addr and int(mem.view(addr, 4 << 20).max()) == 0  # MADV_DONTNEED dropped the pages


def test_a_141_gb_device_costs_only_touched_pages() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mem = DeviceMemory(141 * 10**9)
    vram = VramManager(mem)
    addr = vram.alloc(100 * 10**9)  # 100 GB of addresses
    mem.fill(addr, 1 << 20, 1)  # touch 1 MiB
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024  # well under 64 MiB of host RAM
    vram.free(addr)


def test_pinned_host_memory_registry() -> None:
    buf = HOST_MEMORY.pinned(3 * mmap.PAGESIZE + 5)
    base = int(buf.ctypes.data)
    assert buf.nbytes == 3 * mmap.PAGESIZE + 5
    assert HOST_MEMORY.is_pinned(base, buf.nbytes) and HOST_MEMORY.is_pinned(base + 100, 10)
    assert not HOST_MEMORY.is_pinned(int(np.zeros(10).ctypes.data), 10)
    stats = HOST_MEMORY.stats()
    assert stats["pinned_bytes"] >= 4 * mmap.PAGESIZE
    del buf
    import gc

    gc.collect()
    assert not HOST_MEMORY.is_pinned(base, 1)


def test_interrupt_wakes_a_waiting_thread_and_generation_prevents_lost_wakeups() -> None:
    eid = EVENTS.create()
    seen = EVENTS.generation(eid)
    woke: list[bool] = []
    t = threading.Thread(target=lambda: woke.append(EVENTS.wait(eid, seen, timeout=5.0)))
    t.start()
    EVENTS.set(eid)
    t.join(5.0)
    assert woke == [True]
    assert EVENTS.wait(eid, seen, timeout=0.0)  # fired after `seen`: no sleep, no lost wake-up
    assert not EVENTS.wait(eid, EVENTS.generation(eid), timeout=0.02)  # nothing new: times out
