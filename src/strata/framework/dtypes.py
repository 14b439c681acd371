"""Tensor dtypes with PyTorch's names, and PyTorch's type-promotion rules (`promote_types`,
`result_type`) including Python scalars and zero-dim tensors.

Example:
    >>> import strata
    >>> strata.float16.itemsize, strata.bfloat16.is_floating_point, strata.promote_types(strata.uint8, strata.int8)
    (2, True, strata.int16)
    >>> strata.result_type(strata.tensor([1, 2]), 2.5)
    strata.float32
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np


class dtype:  # noqa: N801 - PyTorch's name
    """A tensor element type (`strata.float32`, ...): its NumPy storage type, size and category."""

    def __init__(self, name: str, np_dtype: Any, rank: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._rank = rank  # position in the promotion lattice within a category
        # (computed once: every op asks)
        self._float = name in ("float16", "bfloat16", "float32", "float64")
        self._category = 0 if name == "bool" else 2 if self._float else 1

    @property
    def is_floating_point(self) -> bool:
        """True for float16, bfloat16, float32, float64."""
        return self._float

    @property
    def is_signed(self) -> bool:
        """True unless uint8 or bool (as torch.dtype.is_signed)."""
        return self.name not in ("uint8", "bool")

    @property
    def category(self) -> int:
        """0 bool, 1 integral, 2 floating (used by the promotion rules)."""
        return self._category

    def __repr__(self) -> str:
        return f"strata.{self.name}"

    def __reduce__(self) -> str:
        return self.name


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 2)
int32 = dtype("int32", np.int32, 3)
int64 = dtype("int64", np.int64, 4)
float16 = dtype("float16", np.float16, 1)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 1)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 3)

ALL: tuple[dtype, ...] = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# aliases as in PyTorch
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64, "int": int32, "short": int16})

_default_dtype = float32


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (float32 unless `set_default_dtype`)."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float16, bfloat16, float32 or float64), as torch.set_default_dtype."""
    global _default_dtype
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def from_numpy_dtype(npd: Any) -> dtype:
    """The strata dtype storing NumPy dtype `npd`.

    Raises:
        TypeError: NumPy dtypes strata has no tensor type for (complex, uint16, ...).
    """
    d = _BY_NP.get(np.dtype(npd))
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(npd).name}. The only supported types "
                        "are: float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool.")
    return d


def as_dtype(d: Any) -> dtype:
    """Accept a strata dtype, a name ('float32'), a Python type (float, int, bool) or a NumPy dtype."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return from_numpy_dtype(d)
    except (TypeError, ValueError) as e:
        raise TypeError(f"invalid dtype: {d!r}") from e


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both `a` and `b` convert to without losing category (torch.promote_types).

    Within floats, float16 and bfloat16 meet at float32; uint8 and a signed int meet at the next signed
    type wide enough (uint8 + int8 -> int16); bool is below every other type.
    """
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == 2:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a._rank > b._rank else b
    # integral
    if uint8 in (a, b):
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a._rank > b._rank else b


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """c10's combine_categories: a lower-priority group matters only when its category is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(x: Any) -> dtype:
    if isinstance(x, bool | np.bool_):
        return bool_
    if isinstance(x, int | np.integer):
        return int64
    if isinstance(x, float | np.floating):
        return _default_dtype
    raise TypeError(f"result_type: unsupported operand type {type(x).__name__}")


def result_type(*operands: Any) -> dtype:
    """The dtype of an elementwise op on `operands` (tensors and Python scalars), as torch.result_type.

    Tensors with dimensions take priority over zero-dim tensors, which take priority over Python
    scalars; a lower group changes the result only when its category (bool < integral < floating) is
    higher, and then a Python float contributes the default dtype, a Python int int64.
    """
    groups: list[dtype | None] = [None, None, None]  # dimensioned tensors, zero-dim tensors, scalars
    for x in operands:
        if hasattr(x, "dtype") and hasattr(x, "dim") and isinstance(x.dtype, dtype):
            g, d = (0 if x.dim() > 0 else 1), x.dtype
        else:
            g, d = 2, _scalar_dtype(x)
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)  # type: ignore[arg-type]
    out = _combine(groups[0], _combine(groups[1], groups[2]))
    if out is None:
        raise TypeError("result_type: expected at least one operand")
    return out
