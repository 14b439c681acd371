"""The caching device allocator: PyTorch's rounding, pools, splitting, merging, reuse and statistics."""

from __future__ import annotations

import gc

import pytest

import strata
import strata.cuda as cuda
from strata.cuda.caching_allocator import K_LARGE_BUFFER, K_SMALL_BUFFER, CachingAllocator, allocation_size, round_size

MiB = 1 << 20


def test_round_and_segment_sizes() -> None:
    assert [round_size(n) for n in (0, 1, 512, 513, 1000)] == [512, 512, 512, 1024, 1024]
    assert allocation_size(512) == allocation_size(MiB) == K_SMALL_BUFFER
    assert allocation_size(MiB + 512) == allocation_size(10 * MiB - 512) == K_LARGE_BUFFER
    assert allocation_size(10 * MiB + 1) == 12 * MiB  # rounded to 2 MiB


def test_small_blocks_split_one_segment_and_merge_back() -> None:
    a = CachingAllocator(0)
    try:
        free_before = cuda.mem_get_info()[0]
        blocks = [a.malloc(1000) for _ in range(4)]
        assert a.memory_reserved() == K_SMALL_BUFFER  # one 2 MiB segment serves all four
        assert cuda.mem_get_info()[0] == free_before - K_SMALL_BUFFER
        assert [b.ptr - blocks[0].ptr for b in blocks] == [0, 1024, 2048, 3072]
        assert a.memory_allocated() == 4 * 1024 == a.max_memory_allocated()
        a.free(blocks[1])
        again = a.malloc(600)  # the smallest fitting cached block: the hole at +1024
        assert again.ptr == blocks[1].ptr and again.size == 1024
        for b in (blocks[0], again, blocks[2], blocks[3]):
            a.free(b)
        assert a.memory_allocated() == 0 and a.max_memory_allocated() == 4096
        # everything merged back into one free block of the whole segment
        assert [(e[0], e[2].is_split) for e in a._pools[True]] == [(K_SMALL_BUFFER, False)]
        a.empty_cache()
        assert a.memory_reserved() == 0
        assert cuda.mem_get_info()[0] == free_before
    finally:
        a.empty_cache()


def test_large_pool_splits_only_when_the_rest_is_large() -> None:
    a = CachingAllocator(0)
    try:
        b1 = a.malloc(2 * MiB)  # 1..10 MiB -> a 20 MiB segment, split (18 MiB left > 1 MiB)
        assert a.memory_reserved() == K_LARGE_BUFFER and b1.size == 2 * MiB and b1.is_split
        b2 = a.malloc(17 * MiB + 512)  # leaves 512 KiB: not worth splitting, takes the whole rest
        assert b2.ptr == b1.ptr + 2 * MiB and b2.size == 18 * MiB
        assert a.memory_reserved() == K_LARGE_BUFFER
        a.free(b1)
        a.free(b2)
        a.empty_cache()
        assert a.memory_reserved() == 0
    finally:
        a.empty_cache()


def test_tensors_use_the_cache_and_free_on_collection() -> None:
    strata.empty_cache()
    base = strata.memory_allocated()
    x = strata.zeros(1000, device="cuda")  # 4000 B -> 4096
    y = strata.ones(10, device="cuda")  # 40 B -> 512
    assert strata.memory_allocated() - base == 4096 + 512
    assert strata.memory_reserved() >= K_SMALL_BUFFER
    ptr = x._storage.ptr
    del x, y
    gc.collect()
    assert strata.memory_allocated() == base
    z = strata.empty(1000, device="cuda")
    assert z._storage.ptr == ptr  # reused from the cache, no new cudaMalloc
    assert strata.max_memory_allocated() >= base + 4608
    v = z[2:5]  # views keep the storage alive
    del z
    gc.collect()
    assert strata.memory_allocated() == base + 4096
    del v
    gc.collect()
    strata.empty_cache()
    assert strata.memory_allocated() == base


def test_device_reset_invalidates_tensors_and_the_cache() -> None:
    x = strata.ones(3, device="cuda")
    _ = x @ x  # a BLAS handle exists before the reset
    cuda.Device(0).reset()
    assert strata.memory_allocated() == 0 and strata.memory_reserved() == 0
    y = strata.full((3,), 2.0, device="cuda")
    with pytest.raises(cuda.CudaError, match="released by Device.reset"):
        x.tolist()
    del x  # freeing a block of the old generation must not touch the new pools
    gc.collect()
    assert y.tolist() == [2.0, 2.0, 2.0] and strata.memory_allocated() == 512
    assert (y @ y).item() == 12.0  # matmul works again (a new handle)
