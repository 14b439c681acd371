"""Shared oracle helper for the framework suite: PyTorch CPU is the oracle for values, dtypes, shapes
and gradients; every check runs on "cpu" and on "cuda" (the virtual GPU)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch  # the oracle: a dev dependency (pyproject), so a missing torch fails loudly, not skips

import strata
import strata.framework.dtypes  # (used below; `import strata` alone does not bind the subpackage)

DEVICES = ["cpu", "cuda"]


def to_torch_dtype(d: strata.dtype) -> Any:
    return getattr(torch, d.name)


def to_strata_dtype(d: Any) -> strata.dtype:
    return getattr(strata, str(d).removeprefix("torch."))


def as_numpy(x: Any) -> np.ndarray:
    """Host float64 (or exact integer/bool) values of a strata or torch tensor."""
    if isinstance(x, strata.Tensor):
        a = x.detach().cpu()._to_numpy()
        return a.astype(np.float64) if x.dtype.is_floating_point else a
    t = x.detach()
    return t.double().numpy() if t.is_floating_point() else t.numpy()


def assert_same(ours: Any, ref: Any, *, rtol: float = 1e-5, atol: float = 1e-6, device: str | None = None) -> None:
    """Same shape, same dtype (PyTorch's), values close; tuples/lists elementwise."""
    if isinstance(ref, tuple | list):
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref, strict=True):
            assert_same(o, r, rtol=rtol, atol=atol, device=device)
        return
    assert isinstance(ours, strata.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(ref.shape), (ours.shape, ref.shape)
    assert ours.dtype is to_strata_dtype(ref.dtype), (ours.dtype, ref.dtype)
    if device is not None:
        assert ours.device.type == device
    if ref.dtype in (torch.float16, torch.bfloat16):
        rtol, atol = max(rtol, 1e-2), max(atol, 1e-2)
    np.testing.assert_allclose(as_numpy(ours), as_numpy(ref), rtol=rtol, atol=atol, equal_nan=True)


def pair(data: Any, dtype: Any = None, device: str = "cpu", requires_grad: bool = False) -> tuple[Any, Any]:
    """The same values as a strata tensor on `device` and a torch CPU tensor."""
    a = np.asarray(data)
    sd = dtype if dtype is not None else strata.framework.dtypes.from_numpy_dtype(a.dtype)
    s = strata.tensor(a, dtype=sd, device=device)
    t = torch.tensor(a).to(to_torch_dtype(sd))
    if requires_grad:
        s.requires_grad_(True)
        t.requires_grad_(True)
    return s, t


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def oracle() -> Any:
    """This module's helpers (assert_same, pair, as_numpy, dtype maps, torch) for the tests."""
    import sys
    return sys.modules[__name__]
