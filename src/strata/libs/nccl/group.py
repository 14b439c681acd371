"""ncclGroupStart / ncclGroupEnd: calls between them are posted together, and waited for at the end.

Per thread, as in NCCL: a thread that drives several ranks groups their calls, so no call waits for a
rank the same thread has not reached yet. Groups nest; the outermost `group_end` does the work.

Example:
    >>> group_start(); depth(); group_end(); depth()
    1
    0
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from strata.libs.nccl.types import NcclError

_local = threading.local()


_groups = itertools.count(1)  # each outermost group of any thread gets its own number


def _state() -> tuple[int, list[Callable[[], None]], list[Callable[[], None]]]:
    if not hasattr(_local, "depth"):
        _local.depth, _local.posts, _local.waits, _local.token = 0, [], [], 0
    return _local.depth, _local.posts, _local.waits


def depth() -> int:
    """How many group_start calls of this thread are open."""
    return _state()[0]


def current_group() -> int | None:
    """The number of this thread's open outermost group, None outside a group: the calls of one group are
    one unit of their communicator's issue order (`collectives.py`)."""
    return _local.token if _state()[0] else None


def group_start() -> None:
    """ncclGroupStart."""
    if _state()[0] == 0:
        _local.token = next(_groups)
    _local.depth += 1


def group_end() -> None:
    """ncclGroupEnd: post the grouped calls in order, then wait until each one's device work is queued.

    Raises:
        NcclError: ncclInvalidUsage without a matching group_start; any error of a grouped call.
    """
    d, posts, waits = _state()
    if d == 0:
        raise NcclError("ncclInvalidUsage", "[group_end] without a matching group_start")
    _local.depth -= 1
    if _local.depth:
        return
    _local.posts, _local.waits = [], []
    first: BaseException | None = None
    for p in posts:
        try:
            p()
        except BaseException as exc:  # noqa: BLE001 - the others still post, so their peers do not hang
            first = first or exc
    for w in waits:
        try:
            w()
        except BaseException as exc:  # noqa: BLE001
            first = first or exc
    if first is not None:
        raise first


def deferred_post(post: Callable[[], None]) -> None:
    """Run `post` now, or at the outermost group_end when a group is open."""
    if depth():
        _local.posts.append(post)
    else:
        post()


def deferred_wait(wait: Callable[[], None]) -> None:
    """Run `wait` now, or after every grouped post at the outermost group_end."""
    if depth():
        _local.waits.append(wait)
    else:
        wait()
