"""`torch.utils.data` for strata: datasets (`Dataset`, `IterableDataset`, `TensorDataset`, `Subset`,
`ConcatDataset`, `random_split`), samplers (`SequentialSampler`, `RandomSampler` (drawing lazily with
replacement), `SubsetRandomSampler`, `WeightedRandomSampler`, `DistributedSampler`, `BatchSampler`) and
`DataLoader` with PyTorch's arguments, batching, shuffling and `default_collate` (tensors stacked,
numbers and NumPy arrays made tensors, tuples, lists and dicts collated field by field).

With `num_workers > 0` batches are loaded and collated by that many worker processes, prefetched,
handed out in order, with a worker's exception re-raised in the main process and a dead worker reported
(`data_workers.py`); `get_worker_info()` describes the worker inside one. `pin_memory` is accepted and
ignored (host memory needs no pinning for the virtual GPU's copies). Shuffling draws its permutation with
`strata.randperm` on the CPU generator (reproducible after `strata.manual_seed`, or from the
`generator` passed); sample indices are host-side metadata, as in PyTorch. (The orders differ from
PyTorch's, whose CPU generator is a Mersenne Twister.) Batches are stacked by
the tensors' own ops, so a dataset of "cuda" tensors yields "cuda" batches stacked on the GPU.

Example:
    >>> import strata
    >>> from strata.framework.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(strata.arange(10).float(), strata.tensor([0, 1] * 5))
    >>> [(x.tolist(), y.tolist()) for x, y in DataLoader(ds, batch_size=4, drop_last=True)]
    [([0.0, 1.0, 2.0, 3.0], [0, 1, 0, 1]), ([4.0, 5.0, 6.0, 7.0], [0, 1, 0, 1])]
"""

from __future__ import annotations

import bisect
import collections.abc
import importlib
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from strata.framework.creation import as_tensor, tensor
from strata.framework.dtypes import float64
from strata.framework.joining import stack
from strata.framework.tensor import Tensor

T = TypeVar("T")


# ----------------------------------------------------------------------------------------- datasets
class Dataset(Generic[T]):
    """A map-style dataset: subclasses define `__getitem__(index)` and usually `__len__`."""

    def __getitem__(self, index: int) -> T:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T]) -> ConcatDataset[T]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T]):
    """A stream-style dataset: subclasses define `__iter__`."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are the rows `(t[i] for t in tensors)` of tensors sharing their first dimension.

    Raises:
        AssertionError: the tensors' first dimensions differ (PyTorch's error type).
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


class Subset(Dataset[T]):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset[T], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: int | list[int]) -> Any:
        if isinstance(idx, list):
            return [self.dataset[self.indices[i]] for i in idx]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T]):
    """Datasets one after another."""

    def __init__(self, datasets: Iterable[Dataset[T]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, idx: int) -> T:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = int(self.cumulative_sizes[d - 1]) if d else 0
        return self.datasets[d][idx - start]


def random_split(dataset: Dataset[T], lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset[T]]:
    """Split `dataset` into non-overlapping random subsets of the given lengths (or fractions summing
    to 1; the remainder goes round-robin to the first subsets, as PyTorch does).

    Raises:
        ValueError: the lengths don't add up to len(dataset), or a fraction is outside [0, 1].
    """
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes: list[int] = []
        for frac in lengths:
            if not 0 <= frac <= 1:
                raise ValueError(f"Fraction at index {len(sizes)} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _randperm(n, generator)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start:start + int(length)]))
        start += int(length)
    return out


# ----------------------------------------------------------------------------------------- samplers
class Sampler(Generic[T]):
    """Yields the indices (or index lists) a DataLoader fetches."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A fresh random permutation each epoch (or `num_samples` draws with replacement)."""

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one epoch yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            return self._draws(n)
        out: list[int] = []
        while len(out) < self.num_samples:
            out += _randperm(n, self.generator)
        return iter(out[:self.num_samples])

    def _draws(self, n: int) -> Iterator[int]:
        # drawn in chunks of 32 as PyTorch does, so num_samples=10**10 costs nothing up front
        left = self.num_samples
        while left > 0:
            chunk = min(left, _DRAW_CHUNK)
            yield from _randint(n, chunk, self.generator)
            left -= chunk

    def __len__(self) -> int:
        return self.num_samples


_DRAW_CHUNK = 32


class SubsetRandomSampler(Sampler[int]):
    """The given indices, in a fresh random order each epoch."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        return iter([self.indices[i] for i in _randperm(len(self.indices), self.generator)])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices drawn with probability proportional to `weights` (with or without replacement).

    Raises:
        ValueError: weights not a 1-D sequence, num_samples not positive, or replacement not a bool.
    """

    def __init__(self, weights: Sequence[float] | Tensor, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights if isinstance(weights, Tensor) else as_tensor(np.asarray(weights, dtype=np.float64))
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights, self.num_samples = w.to(float64), num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        random = importlib.import_module("strata.framework.random")
        kwargs = {"generator": self.generator} if self.generator is not None else {}
        drawn = random.multinomial(self.weights, self.num_samples, self.replacement, **kwargs)
        return iter(int(i) for i in drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class DistributedSampler(Sampler[int]):
    """This process's share of the dataset: indices rank, rank + num_replicas, ... of the (optionally
    shuffled, epoch-seeded) order, padded by repeating (or cut, with drop_last) to an even split, as
    torch.utils.data.distributed.DistributedSampler. num_replicas and rank default to the process group's
    (strata.distributed).

    Raises:
        ValueError: rank outside [0, num_replicas).
        RuntimeError: num_replicas or rank left out without an initialised process group.
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            dist = importlib.import_module("strata.framework.distributed")
            if not dist.is_initialized():
                raise RuntimeError("Requires distributed package to be available (initialise the process group "
                                   "with torch.distributed.init_process_group, or pass num_replicas and rank)")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        assert num_replicas is not None and rank is not None
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank, self.epoch = dataset, num_replicas, rank, 0
        self.drop_last, self.shuffle, self.seed = drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            # every rank draws the same permutation: a generator seeded by seed + epoch
            random = importlib.import_module("strata.framework.random")
            g = random.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _randperm(n, g)
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """A new shuffle order for the next epoch (the same on every rank)."""
        self.epoch = epoch


def get_worker_info() -> Any:
    """Inside a DataLoader worker process: its `WorkerInfo` (id, num_workers, seed, dataset, the worker's copy);
    None in the main process (torch.utils.data.get_worker_info)."""
    from strata.framework.data_workers import worker_info

    return worker_info()


class BatchSampler(Sampler[list[int]]):
    """Groups a sampler's indices into lists of `batch_size` (the last one shorter unless `drop_last`)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


def _rng() -> Any:
    # strata's RNG module is written alongside this one; until it exists NumPy's global RNG shuffles
    try:
        return importlib.import_module("strata.framework.random")
    except ModuleNotFoundError:
        return None


def _randperm(n: int, generator: Any = None) -> list[int]:
    """A random permutation of range(n) as host ints, from strata's RNG when it is present."""
    random = _rng()
    if random is not None and hasattr(random, "randperm") and not isinstance(generator, np.random.Generator):
        kwargs = {"generator": generator} if generator is not None else {}
        return [int(i) for i in random.randperm(n, **kwargs).tolist()]
    rng = generator if isinstance(generator, np.random.Generator) else np.random
    return [int(i) for i in rng.permutation(n)]


def _randint(high: int, size: int, generator: Any = None) -> list[int]:
    """`size` uniform draws from range(high), with replacement."""
    random = _rng()
    if random is not None and hasattr(random, "randint") and not isinstance(generator, np.random.Generator):
        kwargs = {"generator": generator} if generator is not None else {}
        return [int(i) for i in random.randint(0, high, (size,), **kwargs).tolist()]
    rng = generator if isinstance(generator, np.random.Generator) else np.random
    return [int(i) for i in rng.randint(0, high, size)] if rng is np.random else \
        [int(i) for i in rng.integers(0, high, size)]


# ----------------------------------------------------------------------------------------- collation
def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch: tensors stacked (a new first dim), NumPy arrays and
    numbers made tensors (floats as float64, ints as int64), strings kept as the sequence, mappings
    and sequences collated per key / position (tuples come back as lists, namedtuples as such).

    Raises:
        RuntimeError: sequence samples of different lengths.
        TypeError: a sample of another type.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "USO":
        return stack([as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic) and elem.dtype.kind not in "USO":
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(elem, int):
        return tensor(list(batch))
    if isinstance(elem, str | bytes):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch, strict=True)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        cols = [default_collate(s) for s in zip(*batch, strict=True)]
        if isinstance(elem, tuple):
            return cols
        try:
            return type(elem)(cols)  # type: ignore[call-arg]
        except TypeError:
            return cols
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


def default_convert(data: Any) -> Any:
    """One sample without batching (batch_size=None): NumPy arrays made tensors, containers converted
    element by element, anything else unchanged."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "USO":
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


# ----------------------------------------------------------------------------------------- loader
class DataLoader(Generic[T]):
    """Iterate over `dataset` in batches, as torch.utils.data.DataLoader.

    Args:
        dataset: a map-style (`__getitem__`, `__len__`) or iterable dataset.
        batch_size: samples per batch (None: no batching, samples converted one by one).
        shuffle: a new random order each epoch (map-style only).
        sampler, batch_sampler: custom index orders (exclusive with shuffle / with batch options).
        num_workers: worker processes that load and collate batches (0: in this process).
        collate_fn: merges a list of samples (default: `default_collate`).
        drop_last: drop the last, incomplete batch.
        timeout: seconds to wait for a worker's batch (0: forever) before RuntimeError.
        worker_init_fn: called with the worker id in each worker, after seeding.
        generator: the RNG for shuffling and for the workers' base seed.
        prefetch_factor: batches in flight per worker (default 2 with workers).
        persistent_workers: keep the workers between passes over the data.
        in_order: hand batches out in order (False: as the workers finish them).

    Raises:
        ValueError: incompatible options, as PyTorch raises them.
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers, self.pin_memory, self.timeout = num_workers, pin_memory, timeout
        self.worker_init_fn, self.generator, self.prefetch_factor = worker_init_fn, generator, prefetch_factor
        self.persistent_workers, self.multiprocessing_context = persistent_workers, multiprocessing_context
        self.in_order = in_order
        self._workers: Any = None  # the persistent workers' iterator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        auto = batch_sampler is not None or (self._iterable and batch_size is not None)
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if auto else default_convert)
        self._auto_collation = auto

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers > 0:
            return self._worker_iter()
        if self._iterable:
            return self._iter_stream()
        if self._auto_collation:
            return (self.collate_fn([self.dataset[i] for i in b]) for b in self.batch_sampler)
        return (self.collate_fn(self.dataset[i]) for i in self.sampler)

    def _worker_iter(self) -> Iterator[Any]:
        from strata.framework.data_workers import Fetcher, MultiprocessIterator

        if self._workers is not None and not self._workers.closed:
            return self._workers.restart()

        def batches() -> Iterator[Any] | None:
            if self._iterable:
                return None
            return iter(self.batch_sampler if self._auto_collation else self.sampler)

        fetch = Fetcher(self.dataset, self.collate_fn, self._auto_collation, self.batch_size, self.drop_last)
        it = MultiprocessIterator(self, fetch, batches)
        if self.persistent_workers:
            self._workers = it
        return it

    def _iter_stream(self) -> Iterator[Any]:
        if not self._auto_collation:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch: list[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)


__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
           "DistributedSampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler",
           "default_collate", "default_convert", "get_worker_info", "random_split"]
