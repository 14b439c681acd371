"""A finalizer's free that lands in the middle of an allocation (the garbage collector runs finalizers
wherever the allocating thread creates a Python object, and Context.release frees at once on an idle
device) must not corrupt the free list: before the fix, the free spliced the list under an index the
allocation had computed, and the same range was handed out twice."""

from __future__ import annotations

from typing import Any

from strata.driver.vram import PAGE_SIZE, VramManager
from strata.hw.memory import DeviceMemory


class _FinalizerFiresOnSplice(list[tuple[int, int]]):
    """The free list, with a "finalizer" that frees `victim` at the moment the allocation splices it."""

    def __init__(self, items: Any, vram: VramManager) -> None:
        super().__init__(items)
        self.vram = vram
        self.victim: int | None = None

    def __setitem__(self, index: Any, value: Any) -> None:
        victim, self.victim = self.victim, None
        if victim is not None:
            self.vram.free(victim)  # re-entrant: this thread holds the manager's lock
        super().__setitem__(index, value)


def _check_free_list(vram: VramManager) -> None:
    """The free list is sorted, its ranges are disjoint, and none overlaps a live allocation."""
    free = list(vram._free)
    assert free == sorted(free), f"free list out of order: {free}"
    for (a, n), (b, _) in zip(free, free[1:], strict=False):
        assert a + n <= b, f"free ranges overlap: {free}"
    for start, (_, reserve) in vram._sizes.items():
        for a, n in free:
            assert start + reserve <= a or a + n <= start, f"live {start:#x}+{reserve} is also free in {free}"


def test_a_free_from_a_finalizer_during_an_allocation_is_deferred_not_spliced_in() -> None:
    vram = VramManager(DeviceMemory(64 * PAGE_SIZE))
    low = vram.alloc(PAGE_SIZE, "low")
    vram.alloc(PAGE_SIZE, "spacer")  # so low's range, once free, does not merge with the tail
    vram._free = _FinalizerFiresOnSplice(vram._free, vram)
    vram._free.victim = low  # freed (as a finalizer would) while the next allocation splices the list
    taken = vram.alloc(PAGE_SIZE, "taken")
    _check_free_list(vram)
    assert vram.size_of(low) is None  # the deferred free ran when the allocation ended
    assert (low, PAGE_SIZE) in vram._free
    again = [vram.alloc(PAGE_SIZE, f"a{i}") for i in range(61)]  # every page: none handed out twice
    assert len({taken, *again}) == 62 and low in again
    _check_free_list(vram)
