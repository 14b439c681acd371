"""strata.framework.data (torch.utils.data) against torch.utils.data: the batches a DataLoader yields
(values, dtypes, shapes, structure), shuffling, drop_last, collation of tensors/tuples/dicts/numbers/
arrays, samplers, random_split, and PyTorch's errors; datasets of "cuda" tensors give "cuda" batches; worker
processes (the same batches in the same order as torch's workers, errors, seeds, persistence, timeout)."""

from __future__ import annotations

import os
import time
from collections import namedtuple
from typing import Any

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import strata
from strata.framework import data as sud

from .conftest import assert_same

X = np.arange(30, dtype=np.float32).reshape(10, 3) / 7
Y = np.arange(10) % 3


def _same_structure(ours: Any, ref: Any, device: str | None = None) -> None:
    if isinstance(ref, torch.Tensor):
        assert_same(ours, ref, device=device)
    elif isinstance(ref, dict):
        assert type(ours) is type(ref) and list(ours) == list(ref)
        for k in ref:
            _same_structure(ours[k], ref[k], device)
    elif isinstance(ref, list | tuple):
        assert type(ours) is type(ref) and len(ours) == len(ref), (type(ours), type(ref))
        for o, r in zip(ours, ref, strict=True):
            _same_structure(o, r, device)
    else:
        assert ours == ref


@pytest.mark.parametrize(("batch_size", "drop_last"), [(1, False), (3, False), (3, True), (10, False), (4, True)])
def test_tensor_dataset_batches_match_torch(batch_size: int, drop_last: bool, device: str) -> None:
    sds = sud.TensorDataset(strata.tensor(X, device=device), strata.tensor(Y, device=device))
    tds = tud.TensorDataset(torch.tensor(X), torch.tensor(Y))
    assert len(sds) == len(tds) == 10
    sl = sud.DataLoader(sds, batch_size=batch_size, drop_last=drop_last)
    tl = tud.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(sl) == len(tl)
    sb, tb = list(sl), list(tl)
    assert len(sb) == len(tb)
    for s, t in zip(sb, tb, strict=True):
        _same_structure(s, t, device)


SAMPLES: dict[str, list] = {
    "numbers": [(1, 2.5, True), (3, -1.0, False)],
    "strings": [("a", 1), ("b", 2)],
    "dict": [{"x": [1.0, 2.0], "y": 4}, {"x": [3.0, 4.0], "y": 5}],
    "numpy": [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
    "numpy-scalars": [np.float32(1.5), np.float32(2.5)],
    "numpy-f64": [np.arange(3.0), np.arange(3.0) * 2],
    "nested-list": [[1, [2, 3]], [4, [5, 6]]],
}


@pytest.mark.parametrize("case", list(SAMPLES))
def test_default_collate_matches_torch(case: str) -> None:
    batch = SAMPLES[case]
    _same_structure(sud.default_collate(batch), tud.default_collate(batch))


def test_default_collate_namedtuple_and_tensors(device: str) -> None:
    P = namedtuple("P", ["a", "b"])
    sb = sud.default_collate([P(strata.ones(2, device=device), 1), P(strata.zeros(2, device=device), 2)])
    tb = tud.default_collate([P(torch.ones(2), 1), P(torch.zeros(2), 2)])
    assert type(sb) is P
    assert_same(sb.a, tb.a, device=device)
    assert_same(sb.b, tb.b)


@pytest.mark.parametrize("case", ["ragged", "object"])
def test_default_collate_errors_match_torch(case: str) -> None:
    batch: list = [[1, 2], [3]] if case == "ragged" else [object(), object()]
    with pytest.raises(Exception) as te:
        tud.default_collate(batch)
    with pytest.raises(type(te.value)) as se:
        sud.default_collate(batch)
    assert str(se.value) == str(te.value)


def test_shuffle_is_a_permutation_each_epoch(device: str) -> None:
    ds = sud.TensorDataset(strata.arange(20, device=device))
    loader = sud.DataLoader(ds, batch_size=6, shuffle=True)
    epochs = []
    for _ in range(3):
        batches = [b for (b,) in loader]
        assert [len(b) for b in batches] == [6, 6, 6, 2]
        assert all(b.device.type == device for b in batches)
        order = [v for b in batches for v in b.tolist()]
        assert sorted(order) == list(range(20))
        epochs.append(order)
    assert epochs[0] != epochs[1] or epochs[1] != epochs[2]  # 3 equal orders: p = (1/20!)^2


def test_shuffle_follows_strata_rng() -> None:
    def order(**kw: Any) -> list:
        return [b.tolist() for b in sud.DataLoader(range(9), batch_size=4, shuffle=True, **kw)]

    strata.manual_seed(5)
    a = order()
    strata.manual_seed(5)
    assert order() == a
    g1, g2 = strata.Generator().manual_seed(11), strata.Generator().manual_seed(11)
    assert order(generator=g1) == order(generator=g2)
    p1 = sud.random_split(range(10), [4, 6], generator=strata.Generator().manual_seed(2))
    p2 = sud.random_split(range(10), [4, 6], generator=strata.Generator().manual_seed(2))
    assert p1[0].indices == p2[0].indices


def test_samplers() -> None:
    assert list(sud.SequentialSampler(range(4))) == [0, 1, 2, 3]
    bs = sud.BatchSampler(sud.SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == list(tud.BatchSampler(tud.SequentialSampler(range(7)), 3, drop_last=False))
    assert len(bs) == 3 and len(sud.BatchSampler(range(7), 3, True)) == 2
    rs = sud.RandomSampler(range(5))
    assert sorted(rs) == list(range(5)) and len(rs) == 5
    rr = list(sud.RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(rr) == 50 and set(rr) <= {0, 1, 2}
    loader = sud.DataLoader(range(6), batch_sampler=[[5, 0], [2]])
    assert [b.tolist() for b in loader] == [[5, 0], [2]]
    assert [b.tolist() for b in sud.DataLoader(range(6), sampler=[3, 1, 4], batch_size=2)] == [[3, 1], [4]]
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        sud.BatchSampler(range(3), 0, False)


def test_batch_size_none_and_custom_collate() -> None:
    ds = [np.ones(2, np.float32), np.zeros(2, np.float32)]
    ours = list(sud.DataLoader(ds, batch_size=None))
    ref = list(tud.DataLoader(ds, batch_size=None))
    for o, r in zip(ours, ref, strict=True):
        assert_same(o, r)
    assert list(sud.DataLoader(range(5), batch_size=2, collate_fn=list)) == [[0, 1], [2, 3], [4]]


class _Stream(sud.IterableDataset):
    def __iter__(self) -> Any:
        return iter(range(7))

    def __len__(self) -> int:
        return 7


def test_iterable_dataset() -> None:
    batches = [b.tolist() for b in sud.DataLoader(_Stream(), batch_size=3)]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(sud.DataLoader(_Stream(), batch_size=3, drop_last=True)) == 2
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        sud.DataLoader(_Stream(), shuffle=True)


@pytest.mark.parametrize("case", ["shuffle-sampler", "batch-sampler", "none-drop-last", "workers"])
def test_loader_errors_match_torch(case: str) -> None:
    kwargs: dict[str, Any] = {
        "shuffle-sampler": {"shuffle": True, "sampler": [0, 1]},
        "batch-sampler": {"batch_sampler": [[0]], "batch_size": 2},
        "none-drop-last": {"batch_size": None, "drop_last": True},
        "workers": {"num_workers": -1},
    }[case]
    with pytest.raises(ValueError) as te:
        tud.DataLoader(range(3), **kwargs)
    with pytest.raises(ValueError) as se:
        sud.DataLoader(range(3), **kwargs)
    assert str(se.value) == str(te.value)


def _shards(mod: Any) -> Any:
    """An IterableDataset of `mod` whose workers each stream every num_workers-th number (PyTorch's docs' way)."""

    class Shards(mod.IterableDataset):  # type: ignore[name-defined, misc]
        def __iter__(self) -> Any:
            w = mod.get_worker_info()
            start, step = (w.id, w.num_workers) if w is not None else (0, 1)
            return iter(range(start, 11, step))

    return Shards()


class _Items(tud.Dataset):  # the worker that loaded each item; item 5 raises, item `die` kills its worker
    def __init__(self, get_info: Any, die: int = -1) -> None:
        self.get_info, self.die = get_info, die

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> Any:
        if i == self.die:
            os._exit(3)
        if i == 5 and self.die == -2:
            raise KeyError(f"no item {i}")
        w = self.get_info()
        return np.array([i, -1 if w is None else w.id, os.getpid()])


def _ids(batches: Any) -> list[list[list[int]]]:
    return [np.asarray(b)[:, :2].tolist() for b in batches]


def test_workers_load_the_batches_torch_does_in_the_order_it_does() -> None:
    ours = sud.DataLoader(_Items(sud.get_worker_info), batch_size=3, num_workers=2)
    ref = tud.DataLoader(_Items(tud.get_worker_info), batch_size=3, num_workers=2)
    assert _ids(ours) == _ids(ref)  # batch i from worker i % 2, in order
    pids = {int(p) for b in ours for p in np.asarray(b)[:, 2]}
    assert len(pids) == 2 and os.getpid() not in pids
    streams = [[b.tolist() for b in mod.DataLoader(_shards(mod), batch_size=2, num_workers=2)] for mod in (sud, tud)]
    assert streams[0] == streams[1]
    assert sud.get_worker_info() is None


def test_worker_errors_are_raised_in_the_main_process_as_torch_raises_them() -> None:
    msgs = []
    for mod in (sud, tud):
        with pytest.raises(KeyError) as e:
            list(mod.DataLoader(_Items(mod.get_worker_info, die=-2), batch_size=2, num_workers=2))
        msgs.append(str(e.value).strip("'\"").splitlines()[0])
    assert msgs[0] == msgs[1] == "Caught KeyError in DataLoader worker process 0."
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(sud.DataLoader(_Items(sud.get_worker_info, die=3), batch_size=2, num_workers=2))


def test_worker_seeds_init_fn_persistent_workers_and_timeout() -> None:
    def seeds() -> list[int]:
        strata.manual_seed(7)
        loader = sud.DataLoader(range(4), batch_size=1, num_workers=2,
                                collate_fn=lambda b: (sud.get_worker_info().seed, strata.rand(1).item()))
        return [x for pair in loader for x in pair]

    first = seeds()
    assert first == seeds() and first[0] + 1 == first[2] and first[1] != first[3]  # base + worker id, per worker
    loader = sud.DataLoader(_Items(sud.get_worker_info), batch_size=4, num_workers=2, persistent_workers=True,
                            worker_init_fn=lambda i: np.random.seed(100 + i))
    pids = [{int(p) for b in loader for p in np.asarray(b)[:, 2]} for _ in range(2)]
    assert pids[0] == pids[1] and len(pids[0]) == 2  # the same two workers both passes
    loader._workers.close()
    slow = sud.DataLoader(range(2), batch_size=1, num_workers=1, timeout=0.5, collate_fn=lambda b: time.sleep(3))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        next(iter(slow))


def test_random_split_subset_concat() -> None:
    parts = sud.random_split(range(10), [3, 7])
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    assert [parts[0][i] for i in range(3)] == list(parts[0].indices)
    fr = sud.random_split(range(11), [0.5, 0.3, 0.2])
    tr = tud.random_split(range(11), [0.5, 0.3, 0.2])
    assert [len(p) for p in fr] == [len(p) for p in tr]
    with pytest.raises(ValueError) as te:
        tud.random_split(range(10), [3, 3])
    with pytest.raises(ValueError) as se:
        sud.random_split(range(10), [3, 3])
    assert str(se.value) == str(te.value)
    cat = sud.ConcatDataset([range(3), range(10, 12)])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 2, 10, 11] and cat[-1] == 11
    sub = sud.Subset(range(10), [9, 2])
    assert len(sub) == 2 and sub[0] == 9 and sub[[0, 1]] == [9, 2]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        sud.TensorDataset(strata.ones(3), strata.ones(2))
