"""The `torch.*` names strata's top level does not define, for the torch alias (`strata run --as-torch`):

- `torch.save` writing PyTorch's zip checkpoint format (strata.save writes safetensors by default);
- creation functions that also take PyTorch's keyword forms (`torch.empty(size=(2, 3))`, `pin_memory=`,
  `layout=`, `memory_format=`);
- the legacy tensor types (`torch.FloatTensor(2, 3)`, `torch.LongTensor([1, 2])`, `isinstance(x,
  torch.FloatTensor)`, and `torch.cuda.FloatTensor` ... bound onto torch.cuda by the alias);
- `torch.mm`, `mv`, `dot`, `addmm`, `spmm`, `sparse_coo_tensor`, `hstack`, `vstack`, `finfo`, `iinfo`, and
  the composites of strata.framework.torch_functions (`meshgrid`, `cdist`, `unique`, `bincount`, ...);
- every other Tensor method as a function (`torch.flatten(x, 1)` is `x.flatten(1)`, `torch.transpose`,
  `torch.squeeze`, `torch.numel`, ...), the way PyTorch binds one op both ways;
- Tensor methods the framework lacks (`mm`, `mv`, `dot`, `addmm`, `pin_memory`, `is_pinned`, `to_sparse`,
  `is_sparse`, `byte`, `char`, `short`, `type`), attached to Tensor when the alias builds `torch` (names the
  framework already has are never replaced).

Example:
    >>> import strata
    >>> from strata.framework import torch_extras as te
    >>> te.lookup("FloatTensor")([1, 2]).dtype, te.OVERRIDES["empty"](size=(2, 3)).shape
    (strata.float32, strata.Size([2, 3]))
    >>> te.lookup("flatten")(strata.ones(2, 3, 4), 1).shape
    strata.Size([2, 12])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from strata.framework import creation, joining, linalg, random, serialization, sparse, torch_functions
from strata.framework import dtypes as dt
from strata.framework.tensor import Tensor

_IGNORED_KWARGS = ("layout", "pin_memory", "memory_format", "out")


def _with_size_kw(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`fn(*size, ...)` that also takes `size=` and ignores PyTorch's layout/pinning keywords."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Tensor:
        if "size" in kwargs:
            if args:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'size'")
            args = (tuple(kwargs.pop("size")),)
        for k in _IGNORED_KWARGS:
            if k == "out" and kwargs.get("out") is not None:
                raise NotImplementedError(f"torch.{fn.__name__}(out=...): strata does not write into out tensors")
            kwargs.pop(k, None)
        return fn(*args, **kwargs)
    return wrapped


OVERRIDES: dict[str, Any] = {name: _with_size_kw(getattr(mod, name)) for mod, name in (
    (creation, "empty"), (creation, "zeros"), (creation, "ones"), (random, "rand"), (random, "randn"))}


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """torch.save: PyTorch's zip checkpoint format (real PyTorch loads the file)."""
    serialization.save(obj, f, pickle_protocol=pickle_protocol,
                       _use_new_zipfile_serialization=_use_new_zipfile_serialization, format="torch")


OVERRIDES["save"] = save


# ---- legacy tensor types
class _LegacyMeta(type):
    _dtype: dt.dtype

    _device: str

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls._dtype and obj.device.type == cls._device


def _legacy(name: str, dtype: dt.dtype, on: str = "cpu") -> type:
    def new(cls: type, *args: Any, device: Any = on) -> Tensor:
        """`T(2, 3)` uninitialised, `T([1, 2])` / `T(ndarray)` a copy, `T(tensor)` a cast, `T()` empty."""
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(dtype)
            return creation.tensor(data, dtype=dtype, device=device)
        return creation.empty(*args, dtype=dtype, device=device) if args else \
            creation.empty(0, dtype=dtype, device=device)
    return _LegacyMeta(name, (), {"__new__": new, "_dtype": dtype, "_device": on,
                                  "__doc__": f"torch.{'cuda.' if on == 'cuda' else ''}{name}: {dtype} on {on}"})


_LEGACY_DTYPES = (("FloatTensor", dt.float32), ("DoubleTensor", dt.float64), ("HalfTensor", dt.float16),
                  ("BFloat16Tensor", dt.bfloat16), ("LongTensor", dt.int64), ("IntTensor", dt.int32),
                  ("ShortTensor", dt.int16), ("CharTensor", dt.int8), ("ByteTensor", dt.uint8),
                  ("BoolTensor", dt.bool_))
_LEGACY = {n: _legacy(n, d) for n, d in _LEGACY_DTYPES}
CUDA_LEGACY = {n: _legacy(n, d, "cuda") for n, d in _LEGACY_DTYPES}  # torch.cuda.FloatTensor and friends


# ---- matrix products
def mm(input: Any, mat2: Any) -> Any:  # noqa: A002
    """Matrix product of two 2-D tensors (either may be sparse COO).

    Raises:
        RuntimeError: an operand is not 2-D (PyTorch's messages).
    """
    if isinstance(input, sparse.SparseCOOTensor) or isinstance(mat2, sparse.SparseCOOTensor):
        return sparse.mm(input, mat2)
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    return linalg.matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:  # noqa: A002
    """Matrix-vector product.

    Raises:
        RuntimeError: not a 2-D tensor and a 1-D one.
    """
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {vec.dim()}")
    return linalg.matmul(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Inner product of two 1-D tensors.

    Raises:
        RuntimeError: an operand is not 1-D, or their sizes differ.
    """
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] "
                           "to have the same number of elements, but got "
                           f"{input.shape[0]} and {other.shape[0]} elements respectively")
    return linalg.matmul(input, other)


def addmm(input: Tensor, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2)."""
    return sparse.addmm(input, mat1, mat2, beta=beta, alpha=alpha)


def hstack(tensors: Any) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    ts = list(tensors)
    return joining.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors: Any) -> Tensor:
    """Concatenate along dim 0, 1-D tensors taken as rows."""
    return joining.cat([t.unsqueeze(0) if t.dim() == 1 else t for t in tensors], 0)


def finfo(dtype: Any = None) -> Any:
    """Machine limits of a floating dtype (NumPy's finfo; bfloat16 from its 8-bit exponent, 8-bit mantissa)."""
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    if d == dt.bfloat16:
        return _BF16
    if not d.is_floating_point:
        raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle '{d}'")
    return np.finfo(d.np)


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype."""
    d = dt.as_dtype(dtype)
    if d.is_floating_point:
        raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{d}'")
    return np.iinfo(np.uint8 if d == dt.bool_ else d.np)


class _BFloat16Info:
    bits, eps, max, min, tiny, smallest_normal, resolution = 16, 2.0 ** -7, 3.3895313892515355e38, \
        -3.3895313892515355e38, 2.0 ** -126, 2.0 ** -126, 0.01
    dtype = "bfloat16"


_BF16 = _BFloat16Info()

_FUNCTIONS: dict[str, Any] = {
    "mm": mm, "mv": mv, "dot": dot, "addmm": addmm, "spmm": sparse.spmm, "sparse_coo_tensor": sparse.sparse_coo_tensor,
    "hstack": hstack, "vstack": vstack, "finfo": finfo, "iinfo": iinfo,
    "sparse_coo": "torch.sparse_coo", "strided": "torch.strided", "contiguous_format": "torch.contiguous_format",
    "channels_last": "torch.channels_last", "preserve_format": "torch.preserve_format",
}


def _method_as_function(name: str) -> Callable[..., Any]:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, ...) is input.{name}(...)."
    return fn


def lookup(name: str) -> Any:
    """The torch-level attribute `name` from this module (None: not provided)."""
    if name in _LEGACY:
        return _LEGACY[name]
    if name in _FUNCTIONS:
        return _FUNCTIONS[name]
    if name in torch_functions.FUNCTIONS:
        return torch_functions.FUNCTIONS[name]
    if not name.startswith("_") and callable(getattr(Tensor, name, None)):
        return _method_as_function(name)
    return None


# ---- Tensor methods the framework lacks
def _pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """Host tensors are already in memory copies can read directly (strata's host/device copies need no
    staging), so pinning returns the tensor itself."""
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.device.type}' memory: only dense CPU tensors can be pinned")
    return self


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """`x.type()`: PyTorch's type string ('torch.FloatTensor', 'torch.cuda.FloatTensor'); `x.type(t)`: a
    cast to a dtype, a legacy type or its name.

    Raises:
        ValueError: an unknown type name.
    """
    if dtype is None:
        return f"torch.{'cuda.' if self.device.type == 'cuda' else ''}{_TYPE_NAMES[self.dtype.name]}"
    if isinstance(dtype, _LegacyMeta):
        return self.to(dtype._device).to(dtype._dtype)
    if isinstance(dtype, str):
        short = dtype.rsplit(".", 1)[-1]
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if short not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        out = self.to(dt.as_dtype(names[short]))
        return out.cuda() if ".cuda." in dtype else out
    return self.to(dt.as_dtype(dtype))


_METHODS: dict[str, Any] = {
    "type": _type,
    "mm": mm, "mv": mv, "dot": dot, "addmm": addmm, "pin_memory": _pin_memory,
    "is_pinned": lambda self, device=None: False, "to_sparse": sparse.to_sparse,
    "byte": lambda self: self.to(dt.uint8), "char": lambda self: self.to(dt.int8),
    "short": lambda self: self.to(dt.int16),
}


def attach_tensor_methods() -> None:
    """Add the methods above to Tensor where it has no such attribute (never replacing the framework's)."""
    for name, fn in {**torch_functions.METHODS, **_METHODS}.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    if not hasattr(Tensor, "is_sparse"):
        Tensor.is_sparse = False  # type: ignore[attr-defined]


__all__ = ["OVERRIDES", "addmm", "attach_tensor_methods", "dot", "finfo", "hstack", "iinfo", "lookup", "mm", "mv",
           "vstack"]
