"""SGD and Adam/AdamW are written once with tensor ops (`sgd_step`, `adam_step`); each backend's fused kernel is
a fast path. With the fast paths switched off the composite gives torch.optim's results on "cpu" and "cuda",
and on "cpu" (float32, float64) the same bits as the NumPy fast path it stands in for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import strata
from strata.framework import op_table

from .conftest import DEVICES, as_numpy
from .test_optim import ADAM_CASES, SGD_CASES, _params, _run


@pytest.fixture
def composite_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The op table without the optimizers' fast paths: every step runs the tensor-op composite."""
    real = op_table.fast_path
    monkeypatch.setattr(op_table, "fast_path",
                        lambda name, backend: None if name in ("sgd_step", "adam_step") else real(name, backend))
    yield


@pytest.mark.usefixtures("composite_only")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kwargs", SGD_CASES[1:4], ids=str)
def test_sgd_composite_matches_torch(kwargs: dict[str, Any], device: str) -> None:
    _run("SGD", kwargs, device)


@pytest.mark.usefixtures("composite_only")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("cls", "kwargs"), ADAM_CASES[1:3] + ADAM_CASES[-1:], ids=str)
def test_adam_composite_matches_torch(cls: str, kwargs: dict[str, Any], device: str) -> None:
    _run(cls, kwargs, device)


@pytest.mark.parametrize("dtype", [strata.float32, strata.float64])
@pytest.mark.parametrize(("cls", "kwargs"), [("SGD", SGD_CASES[3]), ("Adam", ADAM_CASES[2][1]),
                                             ("AdamW", ADAM_CASES[-1][1])])
def test_the_cpu_fast_path_gives_the_composites_bits(cls: str, kwargs: dict[str, Any], dtype: strata.dtype,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    results = []
    real = op_table.fast_path
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(op_table, "fast_path", lambda n, b: None if n.endswith("_step") else real(n, b))
        ours, _ = _params("cpu", dtype)
        opt = getattr(strata.optim, cls)(ours, **kwargs)
        for step in range(3):
            rng = np.random.default_rng(100 + step)
            for p in ours:
                p.grad = strata.tensor(rng.standard_normal(tuple(p.shape)), dtype=dtype)
            opt.step()
        results.append([as_numpy(p).tobytes() for p in ours])
    assert results[0] == results[1]
