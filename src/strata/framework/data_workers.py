"""`DataLoader(num_workers=N)`: N worker processes load and collate batches while the main process trains,
as torch.utils.data's multiprocessing iterator does.

Each worker has its own queue of batch requests (index lists for a map-style dataset, "next batch" for an
iterable one) and all share one result queue. The main process keeps `prefetch_factor` requests per worker
in flight, hands batches out in request order (or as they arrive with `in_order=False`), and re-raises a
worker's exception in the main process with the worker's traceback in its message. A worker that dies
(killed, crashed) is found within `_POLL_S` and reported as PyTorch reports it; `timeout` bounds each wait.
Workers are seeded `base_seed + worker_id` (Python's `random`, NumPy's legacy global RNG and strata's CPU
generator) and see themselves through `get_worker_info()`, so an `IterableDataset` can shard its stream.
Processes start with the loader's `multiprocessing_context` (default: fork, as PyTorch on Linux). A
dataset that makes "cuda" tensors inside a worker is not supported (CUDA rules out a forked child too).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import random
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

_POLL_S = 1.0  # how often a wait for a batch checks that the workers are alive
_JOIN_S = 5.0  # how long shutdown waits for a worker to exit before terminating it


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker (torch.utils.data.get_worker_info)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_WORKER_INFO: WorkerInfo | None = None


def worker_info() -> WorkerInfo | None:
    return _WORKER_INFO


@dataclass(frozen=True)
class _Failure:
    """An exception raised in a worker, carried to the main process."""

    worker_id: int
    type_name: str
    exc_type: type[BaseException]
    text: str

    def reraise(self) -> None:
        message = (f"Caught {self.type_name} in DataLoader worker process {self.worker_id}.\n"
                   f"Original {self.text}")
        if issubclass(self.exc_type, KeyError):  # KeyError's str() is its argument's repr: keep the lines
            message = _KeyErrorMessage(message)
        try:
            error = self.exc_type(message)
        except Exception:  # noqa: BLE001 - an exception type whose constructor wants other arguments
            raise RuntimeError(message) from None
        raise error


class _KeyErrorMessage(str):
    """A message whose repr is itself, so a re-raised KeyError prints the worker's traceback readably."""

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class _StreamEnd:
    """An iterable dataset's stream ended in this worker."""

    worker_id: int


_RESET = "reset"  # a persistent worker starts its iterable dataset's stream again (a new epoch)


def _worker_loop(dataset: Any, index_queue: Any, result_queue: Any, fetch: Callable[[Any], Any], iterable: bool,
                 seed: int, worker_id: int, num_workers: int, init_fn: Callable[[int], None] | None) -> None:
    """A worker process: answer batch requests until told to stop (None) or the main process goes away."""
    global _WORKER_INFO
    from strata.framework.random import manual_seed

    _WORKER_INFO = WorkerInfo(worker_id, num_workers, seed, dataset)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    manual_seed(seed)
    stream: Iterator[Any] | None = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        if iterable:
            stream = iter(dataset)
    except Exception as e:  # noqa: BLE001 - reported at the first request
        failure: _Failure | None = _failure(worker_id, e)
    else:
        failure = None
    parent = os.getppid()
    while True:
        try:
            request = index_queue.get(timeout=_POLL_S)
        except queue.Empty:
            if os.getppid() != parent:  # the main process died: nobody will ask again
                return
            continue
        if request is None:
            return
        if request == _RESET:
            stream = iter(dataset) if iterable else None
            continue
        idx, indices = request
        if failure is not None:
            result_queue.put((idx, failure))
            continue
        try:
            data = fetch(stream) if iterable else fetch(indices)
        except StopIteration:
            data = _StreamEnd(worker_id)
        except Exception as e:  # noqa: BLE001 - re-raised in the main process
            data = _failure(worker_id, e)
        result_queue.put((idx, data))


@dataclass(frozen=True)
class Fetcher:
    """Turns a request into a batch inside a worker: a list of indices of a map-style dataset (or one index
    without auto-collation), or the next `batch_size` samples of an iterable dataset's stream."""

    dataset: Any
    collate_fn: Callable[[Any], Any]
    auto_collation: bool
    batch_size: int | None
    drop_last: bool

    def __call__(self, request: Any) -> Any:
        if not isinstance(request, Iterator):  # map-style: the indices
            if self.auto_collation:
                return self.collate_fn([self.dataset[i] for i in request])
            return self.collate_fn(self.dataset[request])
        if not self.auto_collation:
            return self.collate_fn(next(request))
        batch = []
        for sample in request:
            batch.append(sample)
            if len(batch) == self.batch_size:
                break
        if not batch or (self.drop_last and len(batch) < (self.batch_size or 0)):
            raise StopIteration
        return self.collate_fn(batch)


def _failure(worker_id: int, e: BaseException) -> _Failure:
    return _Failure(worker_id, type(e).__name__, type(e), "".join(traceback.format_exception(e)))


class MultiprocessIterator:
    """One pass over a DataLoader with worker processes (kept across passes with `persistent_workers`)."""

    def __init__(self, loader: Any, fetch: Callable[[Any], Any], batches: Callable[[], Iterator[Any] | None]) -> None:
        """`fetch` turns a request into a batch in a worker (index list -> batch, or stream -> batch);
        `batches()` gives this pass's index lists (None for an iterable dataset)."""
        self.loader, self._batches = loader, batches
        context = loader.multiprocessing_context
        if context is None or isinstance(context, str):
            context = mp.get_context(context or ("fork" if "fork" in mp.get_all_start_methods() else None))
        n = loader.num_workers
        self.prefetch = (loader.prefetch_factor or 2) * n
        from strata.framework.random import randint  # NOTE: late, as in the worker (a leaf of the framework)

        # drawn from the loader's generator (or the default one), so manual_seed makes the workers' seeds repeat
        seed = int(randint(0, 2**62, (1,), generator=loader.generator).item())
        self.result_queue = context.Queue()
        self.index_queues = [context.Queue() for _ in range(n)]
        self.workers = []
        for i in range(n):
            w = context.Process(target=_worker_loop, name=f"strata-dataloader-{i}", daemon=True,
                                args=(loader.dataset, self.index_queues[i], self.result_queue, fetch, loader._iterable,
                                      seed + i, i, n, loader.worker_init_fn))
            w.start()
            self.workers.append(w)
        self.closed = False
        self._reset(first=True)

    def _reset(self, first: bool = False) -> None:
        """Start a pass: no requests in flight, every worker active, the first prefetch sent."""
        self.send_idx = self.rcvd_idx = 0
        self.owner: dict[int, int] = {}  # request index -> worker
        self.ready: dict[int, Any] = {}  # results that arrived before their turn
        self.active = [True] * len(self.workers)
        self.next_worker = 0
        self.index_iter = self._batches()
        if not first and self.loader._iterable:
            for q in self.index_queues:
                q.put(_RESET)
        for _ in range(self.prefetch):
            self._send()

    def _send(self) -> None:
        if self.index_iter is not None:
            indices = next(self.index_iter, None)
            if indices is None:
                return
        else:
            indices = None
        for _ in range(len(self.workers)):  # the next active worker, round robin
            w = self.next_worker
            self.next_worker = (w + 1) % len(self.workers)
            if self.active[w]:
                self.index_queues[w].put((self.send_idx, indices))
                self.owner[self.send_idx] = w
                self.send_idx += 1
                return

    def __iter__(self) -> MultiprocessIterator:
        return self

    def __next__(self) -> Any:
        while True:
            in_order = self.loader.in_order
            if self.ready and (not in_order or self.rcvd_idx in self.ready):
                idx = self.rcvd_idx if self.rcvd_idx in self.ready else next(iter(self.ready))
                data = self.ready.pop(idx)
                if idx == self.rcvd_idx:
                    self.rcvd_idx += 1
                self._send()
                if isinstance(data, _Failure):
                    self.close()
                    data.reraise()
                return data
            if in_order and self.rcvd_idx < self.send_idx and self.rcvd_idx not in self.owner:
                self.rcvd_idx += 1  # that request found its worker's stream at its end: nothing to hand out
                continue
            if not self.owner:  # nothing in flight, nothing waiting, nothing left to ask: the pass is over
                if not self.loader.persistent_workers:
                    self.close()
                raise StopIteration
            idx, data = self._get()
            del self.owner[idx]
            if isinstance(data, _StreamEnd):
                self.active[data.worker_id] = False
                self._send()  # its share goes to the workers still streaming
            else:
                self.ready[idx] = data

    def _get(self) -> tuple[int, Any]:
        """The next result from any worker, waiting at most the loader's timeout; a dead worker is an error."""
        timeout = self.loader.timeout
        deadline = time.monotonic() + timeout if timeout > 0 else None
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            try:
                return self.result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [w.pid for w, busy in zip(self.workers, self.active, strict=True) if busy and not w.is_alive()]
            if dead:
                self.close()
                raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited unexpectedly")
            if deadline is not None and time.monotonic() >= deadline:
                self.close()
                raise RuntimeError(f"DataLoader timed out after {timeout:g} seconds")

    def restart(self) -> MultiprocessIterator:
        """A new pass over the same workers (persistent_workers)."""
        self._reset()
        return self

    def close(self) -> None:
        """Stop every worker (join, then terminate those that do not exit)."""
        if self.closed:
            return
        self.closed = True
        for q in self.index_queues:
            with contextlib.suppress(OSError, ValueError):  # the queue is already closed
                q.put(None)
        deadline = time.monotonic() + _JOIN_S
        for w in self.workers:
            w.join(max(0.0, deadline - time.monotonic()))
            if w.is_alive():
                w.terminate()
                w.join(1.0)
        for q in (*self.index_queues, self.result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: best effort
            self.close()
