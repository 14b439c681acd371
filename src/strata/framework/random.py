"""Random numbers with PyTorch's API: `Generator`, `manual_seed`, `seed`, `initial_seed`,
`get_rng_state` / `set_rng_state`; `rand`, `randn`, `randint`, `randperm`, the `*_like` forms, `normal`,
`bernoulli`, `multinomial`; the in-place `uniform_`, `normal_`, `bernoulli_`, `random_`, `exponential_`.

Every generator is Philox4x32-10, the counter-based generator of cuRAND and of PyTorch's CUDA backend:
its state is (seed, offset), the key being the 64-bit seed and the offset counting 32-bit words drawn;
each call takes the words it needs and moves the offset on by that count rounded up to a multiple of 4
(a whole Philox counter, as PyTorch's CUDA generator does). On "cuda" the words come from
strata.libs.rand on the GPU and framework kernels (kernels/random.py, where the word-to-value mapping is
defined) turn them into the distribution, written straight into the output; on "cpu" the same stream is
computed with NumPy and mapped the same way, so one seed gives the same numbers on both devices
(bit-identical for uniform, integer and bernoulli draws; normal and exponential draws agree to the last
bits of log/sin/cos). These are not PyTorch's streams (its CPU generator is mt19937), so strata's values
for a seed differ from PyTorch's while the distributions are the same.

Example:
    >>> import strata
    >>> _ = strata.manual_seed(0)
    >>> a = strata.rand(3)
    >>> _ = strata.manual_seed(0)
    >>> b = strata.rand(3, device="cuda")
    >>> a.tolist() == b.tolist(), bool(((a >= 0) & (a < 1)).all())
    (True, True)
    >>> strata.randint(10, (4,), generator=strata.Generator().manual_seed(1)).dtype
    strata.int64
    >>> sorted(strata.randperm(5).tolist())
    [0, 1, 2, 3, 4]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.cuda import device_count
from strata.framework import autograd, op_table, ops, philox, reductions
from strata.framework import dtypes as dt
from strata.framework.backends import random_cpu, random_cuda  # noqa: F401 - their kernels register here
from strata.framework.device import CPU, canonical, device
from strata.framework.tensor import Tensor, _shape_arg

philox_words = philox.philox_words  # (the name the dropout kernel and the tests use)
DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val
_U64 = (1 << 64) - 1
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}  # mantissa bits, as std::numeric_limits
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
            "int64": "long"}
_RANGES = {"bool": (0, 1), "uint8": (0, 255), "int8": (-128, 127), "int16": (-(1 << 15), (1 << 15) - 1),
           "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


# ----------------------------------------------------------------------------------------- generators
class Generator:
    """A Philox4x32-10 random-number generator for one device (torch.Generator): state (seed, offset).

    Args:
        device: "cpu" (default) or "cuda" / "cuda:N"; a generator only serves tensors of its device type.

    Example:
        >>> g = Generator().manual_seed(42)
        >>> g.initial_seed(), g.get_state().shape
        (42, strata.Size([16]))
    """

    def __init__(self, device: Any = "cpu") -> None:  # noqa: A002 - PyTorch's argument name
        self._device = canonical(device)
        self._seed = DEFAULT_SEED
        self._offset = 0

    @property
    def device(self) -> device:
        """The device this generator serves."""
        return self._device

    def manual_seed(self, seed: Any) -> Generator:
        """Seed the generator (any integer in [-2^63, 2^64), taken modulo 2^64) and reset the offset; returns self.

        Raises:
            ValueError: the seed does not fit 64 bits.
        """
        self._seed, self._offset = _seed_value(seed), 0
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def get_offset(self) -> int:
        """The number of 32-bit words drawn since seeding (the Philox offset)."""
        return self._offset

    def set_offset(self, offset: int) -> Generator:
        """Move the stream to `offset` words; returns self."""
        if not 0 <= int(offset) <= _U64:
            raise RuntimeError(f"set_offset: offset must be in [0, 2^64), got {offset}")
        self._offset = int(offset)
        return self

    def get_state(self) -> Tensor:
        """The state as a 16-byte uint8 cpu tensor: seed and offset, little-endian uint64 each."""
        raw = np.array([self._seed, self._offset & _U64], dtype="<u8").view(np.uint8)
        return ops.from_host(raw, dt.uint8, CPU)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from `get_state`; returns self.

        Raises:
            TypeError: not a uint8 tensor.
            RuntimeError: not 16 bytes.
        """
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != 16:
            raise RuntimeError(f"Expected a PhiloxGeneratorState of size 16 but found the input RNG state size to be "
                               f"{new_state.numel()}")
        seed, offset = (int(v) for v in new_state.detach().cpu()._to_numpy().reshape(-1).view("<u8"))
        self._seed, self._offset = seed, offset
        return self

    def _take(self, words: int) -> tuple[int, int]:
        """(seed, offset) of the next `words` words; the offset moves on by whole counters (4 words)."""
        start = self._offset
        self._offset = (start + (words + 3) // 4 * 4) & _U64
        return self._seed, start

    def __repr__(self) -> str:
        return f"<strata.Generator object device={self._device}>"


def _seed_value(seed: Any) -> int:
    s = int(seed)
    if not -(1 << 63) <= s <= _U64:
        raise ValueError("Overflow when unpacking long long")
    return s & _U64


default_generator = Generator("cpu")
_cuda_generators: dict[int, Generator] = {}


def cuda_default_generator(index: int | None = None) -> Generator:
    """The default generator of CUDA device `index` (the current device when None)."""
    dev = canonical("cuda" if index is None else device("cuda", index))
    i = dev.index or 0
    g = _cuda_generators.get(i)
    if g is None:
        g = _cuda_generators[i] = Generator(dev)
    return g


def manual_seed(seed: Any) -> Generator:
    """Seed the default generators of "cpu" and of every CUDA device; returns the cpu one.

    Raises:
        ValueError: the seed does not fit 64 bits.
    """
    default_generator.manual_seed(seed)
    cuda_manual_seed_all(seed)
    return default_generator


def seed() -> int:
    """Seed every default generator from the operating system's entropy; returns the seed."""
    s = default_generator.seed()
    cuda_manual_seed_all(s)
    return s


def initial_seed() -> int:
    """The seed of the default cpu generator."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default cpu generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default cpu generator's state."""
    default_generator.set_state(new_state)


def cuda_manual_seed(seed: Any) -> None:
    """torch.cuda.manual_seed: seed the current CUDA device's default generator."""
    cuda_default_generator().manual_seed(seed)


def cuda_manual_seed_all(seed: Any) -> None:
    """torch.cuda.manual_seed_all: seed the default generator of every CUDA device."""
    for i in range(device_count()):
        cuda_default_generator(i).manual_seed(seed)


def cuda_seed() -> None:
    """torch.cuda.seed: seed the current CUDA device's generator from the operating system's entropy."""
    cuda_default_generator().seed()


def cuda_seed_all() -> None:
    """torch.cuda.seed_all: one entropy seed for the default generator of every CUDA device."""
    cuda_manual_seed_all(int.from_bytes(os.urandom(8), "little"))


def cuda_initial_seed() -> int:
    """torch.cuda.initial_seed: the current CUDA device's seed."""
    return cuda_default_generator().initial_seed()


def cuda_get_rng_state(device: Any = "cuda") -> Tensor:  # noqa: A002 - PyTorch's argument name
    """torch.cuda.get_rng_state: a CUDA device's generator state (16 bytes: seed, offset)."""
    return cuda_default_generator(_cuda_index(device)).get_state()


def cuda_set_rng_state(new_state: Tensor, device: Any = "cuda") -> None:  # noqa: A002
    """torch.cuda.set_rng_state: restore a CUDA device's generator state."""
    cuda_default_generator(_cuda_index(device)).set_state(new_state)


def _cuda_index(d: Any) -> int:
    return d if isinstance(d, int) else (canonical(d).index or 0)


def _generator(generator: Any, dev: device, op: str) -> Generator:
    """The generator a draw on `dev` uses: `generator`, or the device's default."""
    if generator is None:
        return default_generator if dev.type == "cpu" else cuda_default_generator(dev.index)
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}")
    if generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found '{generator.device.type}'")
    return generator


def _fill(t: Tensor, kind: str, gen: Generator, a: Any = None, b: Any = None, p: Tensor | None = None) -> Tensor:
    """Write `kind` draws into t (any strides) in row-major element order, without autograd.

    kind: 'uniform' (a=from, b=to), 'normal' (a=mean, b=std), 'exponential' (a=lambda), 'randint'
    (a=low, b=span), 'bernoulli' (a=scalar p, or p a tensor broadcastable to t).
    """
    n = t.numel()
    wide = kind == "randint" and b > 1 << 32
    nwords = philox.words_needed(kind, t.dtype, n, wide)
    seed_, offset = gen._take(nwords)
    op_table.kernel("random_fill", t.device.type)(t, kind, seed_, offset, nwords, a, b, p, wide)
    return t


# ----------------------------------------------------------------------------------------- in place
def _begin_inplace(t: Tensor) -> None:
    if autograd.is_grad_enabled() and t.requires_grad and t.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _end_inplace(t: Tensor, name: str) -> Tensor:
    # the values no longer depend on the old ones: the gradient through the op is zero, as in PyTorch
    return ops.record(t, [t], name, lambda g: (ops.zeros_like(g),))


def _not_implemented(kernel: str, d: dt.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{ops._torch_name(d.name)}'")


def uniform_(self: Tensor, from_: float = 0, to: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fill self with draws from U[from, to), in place (Tensor.uniform_).

    Raises:
        NotImplementedError: self is not floating point.
        RuntimeError: from > to.
    """
    if not self.dtype.is_floating_point:
        raise _not_implemented("check_uniform_bounds", self.dtype)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > "
                           f"to={_num(to)}")
    _begin_inplace(self)
    _fill(self, "uniform", _generator(generator, self.device, "uniform_"), from_, to)
    return _end_inplace(self, "UniformBackward0")


def normal_(self: Tensor, mean: float = 0, std: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fill self with draws from N(mean, std^2), in place (Tensor.normal_).

    Raises:
        NotImplementedError: self is not floating point.
        RuntimeError: std < 0.
    """
    if not self.dtype.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", self.dtype)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    _begin_inplace(self)
    _fill(self, "normal", _generator(generator, self.device, "normal_"), mean, std)
    return _end_inplace(self, "NormalBackward0")


def exponential_(self: Tensor, lambd: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fill self with draws from the exponential distribution of rate `lambd`, in place.

    Raises:
        RuntimeError: lambd <= 0, or self is not floating point.
    """
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {ops._torch_name(self.dtype.name)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    _begin_inplace(self)
    _fill(self, "exponential", _generator(generator, self.device, "exponential_"), lambd)
    return _end_inplace(self, "ExponentialBackward0")


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Set each element of self to 1 with probability p (a float, or a tensor broadcastable to self), else 0.

    Raises:
        RuntimeError: a float p outside [0, 1]; on "cpu", a tensor p with an element outside [0, 1]
            (on "cuda" that check would read the device, so it is skipped, as PyTorch's CUDA kernel does).
    """
    gen = _generator(generator, self.device, "bernoulli_")
    if isinstance(p, Tensor):
        shape = ops.broadcast_shapes(self.shape, p.shape)
        if tuple(shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        op_table.kernel("random_check_p", p.device.type)(p)  # (on "cuda" none: it would read the device)
        _begin_inplace(self)
        _fill(self, "bernoulli", gen, p=p)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        _begin_inplace(self)
        _fill(self, "bernoulli", gen, float(p))
    return _end_inplace(self, "BernoulliBackward1" if not isinstance(p, Tensor) else "BernoulliBackward2")


_UNSET: Any = object()


def random_(self: Tensor, from_: Any = _UNSET, to: Any = _UNSET, *, generator: Generator | None = None) -> Tensor:
    """Fill self with integers drawn uniformly from [from, to - 1], in place: `random_(to)` is [0, to);
    `random_()` is [0, 2^mantissa] for floating dtypes and [0, max] for integers.

    Raises:
        RuntimeError: from >= to, or a bound outside self's dtype.
    """
    if to is _UNSET:  # random_() or random_(to)
        low, high = 0, (None if from_ is _UNSET else from_)
    else:  # random_(from, to), random_(to=to); to=None means the dtype's maximum
        low, high = (0 if from_ is _UNSET else from_), to
    if high is None:
        high = (1 << _DIGITS[self.dtype.name]) + 1 if self.dtype.is_floating_point else \
            _RANGES[self.dtype.name][1] + 1
    _check_range(int(low), int(high), self.dtype)
    _begin_inplace(self)
    _fill(self, "randint", _generator(generator, self.device, "random_"), int(low), int(high) - int(low))
    return _end_inplace(self, "RandomBackward2")


def _check_range(low: int, high: int, d: dt.dtype) -> None:
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if d.name in _RANGES:
        lo, hi = _RANGES[d.name]
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {_C_NAMES[d.name]}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES[d.name]}")


def _num(x: Any) -> str:
    """A number as PyTorch prints it in messages (1.0 -> '1', 0.5 -> '0.5')."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# ----------------------------------------------------------------------------------------- factories
def _new(size: Sequence[int], dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    if requires_grad and not d.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return ops.empty(size, d, CPU if device is None else canonical(device))


def _done(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_(True) if requires_grad else t


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of `size` with draws from U[0, 1).

    Raises:
        NotImplementedError: a non-floating dtype.
    """
    t = _new(_shape_arg(size), dtype, device, requires_grad)
    if not t.dtype.is_floating_point:
        raise _not_implemented("check_uniform_bounds", t.dtype)
    return _done(_fill(t, "uniform", _generator(generator, t.device, "rand"), 0.0, 1.0), requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of `size` with draws from the standard normal distribution.

    Raises:
        NotImplementedError: a non-floating dtype.
    """
    t = _new(_shape_arg(size), dtype, device, requires_grad)
    if not t.dtype.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", t.dtype)
    return _done(_fill(t, "normal", _generator(generator, t.device, "randn"), 0.0, 1.0), requires_grad)


def randint(*args: Any, size: Any = None, low: Any = None, high: Any = None, generator: Generator | None = None,
            dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """`randint(low=0, high, size)`: integers drawn uniformly from [low, high), int64 unless `dtype` says.

    Raises:
        TypeError: bounds that are not ints, or a size that is not a tuple of ints.
        RuntimeError: low >= high, or bounds outside the dtype.
    """
    pos = list(args)
    where = ""
    if size is None and pos:
        size, where = pos.pop(), f" (position {len(args)})"
    if high is None and pos:
        high = pos.pop()
    if low is None:
        low = pos.pop() if pos else 0
    if pos or size is None or high is None:
        got = ", ".join(type(x).__name__ for x in args)
        raise TypeError(f"randint() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of: (int high, tuple of ints size, ...), (int low, int high, tuple of ints size, ...)")
    if not isinstance(size, Sequence):
        raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, not {type(size).__name__}")
    for x in (low, high):
        if not isinstance(x, int | np.integer) or isinstance(x, bool):
            raise TypeError(f"randint(): argument 'low' and 'high' must be int, not {type(x).__name__}")
    t = _new(_shape_arg((size,)), dtype if dtype is not None else dt.int64, device, requires_grad)
    _check_range(int(low), int(high), t.dtype)
    gen = _generator(generator, t.device, "randint")
    return _done(_fill(t, "randint", gen, int(low), int(high) - int(low)), requires_grad)


def _like(input: Tensor, dtype: Any, device: Any, requires_grad: bool) -> Tensor:  # noqa: A002
    return _new(tuple(input.shape), dtype if dtype is not None else input.dtype,
                device if device is not None else input.device, requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,  # noqa: A002
              layout: Any = None, device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """U[0, 1) draws shaped like `input` (its dtype and device unless given)."""
    t = _like(input, dtype, device, requires_grad)
    if not t.dtype.is_floating_point:
        raise _not_implemented("check_uniform_bounds", t.dtype)
    return _done(_fill(t, "uniform", _generator(generator, t.device, "rand_like"), 0.0, 1.0), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,  # noqa: A002
               layout: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """Standard normal draws shaped like `input`."""
    t = _like(input, dtype, device, requires_grad)
    if not t.dtype.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", t.dtype)
    return _done(_fill(t, "normal", _generator(generator, t.device, "randn_like"), 0.0, 1.0), requires_grad)


def randint_like(input: Tensor, low: Any = None, high: Any = None, *,  # noqa: A002
                 generator: Generator | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
                 requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """`randint_like(input, low=0, high)`: integers from [low, high) shaped like `input`, in its dtype."""
    if high is None:
        if low is None:
            raise TypeError("randint_like() missing required argument 'high'")
        low, high = 0, low
    low = 0 if low is None else low
    t = _like(input, dtype, device, requires_grad)
    _check_range(int(low), int(high), t.dtype)
    gen = _generator(generator, t.device, "randint_like")
    return _done(_fill(t, "randint", gen, int(low), int(high) - int(low)), requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1: a stable argsort of n random 63-bit keys (on "cuda" the
    framework's sort kernel), so every permutation is (almost exactly) equally likely.

    Raises:
        RuntimeError: n < 0, or n does not fit the dtype.
        NotImplementedError: dtype bool.
    """
    from strata.framework import sorting  # NOTE: a sibling framework module; imported here to keep start-up light

    d = dt.as_dtype(dtype) if dtype is not None else dt.int64
    if d is dt.bool_:
        raise _not_implemented("randperm", d)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if d.name in _RANGES and n - 1 > _RANGES[d.name][1]:
        c = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int"}[d.name]
        raise RuntimeError(f"value cannot be converted to type {c} without overflow")
    _new((0,), d, device, requires_grad)  # the requires_grad check
    keys = _new((n,), dt.int64, device, False)
    _fill(keys, "randint", _generator(generator, keys.device, "randperm"), 0, 1 << 63)
    with autograd.no_grad():
        perm = sorting.argsort(keys, stable=True)
    return _done(perm if d is dt.int64 else ops._cast(perm, d), requires_grad)


# ----------------------------------------------------------------------------------------- normal, bernoulli
def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Draws from N(mean, std^2): `normal(mean_tensor, std_tensor)` (broadcast), `normal(mean_tensor, std=1.0)`,
    `normal(mean, std_tensor)`, or `normal(mean, std, size)` for floats. The gradient through the draw is
    zero, as in PyTorch.

    Raises:
        TypeError: two floats without `size`.
        RuntimeError: a negative std (for a std tensor this reads the minimum back, as PyTorch does).
    """
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected one of: (Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor "
                            "std), (float mean, float std, tuple of ints size)")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
        t = _new(_shape_arg((size,)), dtype, device, requires_grad)
        if not t.dtype.is_floating_point:
            raise _not_implemented("normal_kernel_cpu", t.dtype)
        return _done(_fill(t, "normal", _generator(generator, t.device, "normal"), float(mean), float(std)),
                     requires_grad)
    dev = ops._check_same_device(mean, std)
    if st:
        if std.numel() and bool((reductions.min(std.detach()) < 0).item()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    d = dt.result_type(mean, std) if mt and st else (mean.dtype if mt else std.dtype)
    if not d.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", d)
    shape = ops.broadcast_shapes(mean.shape if mt else (), std.shape if st else ())
    z = _fill(ops.empty(shape, d, dev), "normal", _generator(generator, dev, "normal"), 0.0, 1.0)
    with autograd.no_grad():
        out = ops.add(ops.mul(z, std), mean)
    name = "NormalBackward3" if mt and st else "NormalBackward1" if mt else "NormalBackward2"
    return ops.record(out, [mean, std], name, lambda g: (
        ops.zeros_like(mean) if mt and mean.requires_grad else None,
        ops.zeros_like(std) if st and std.requires_grad else None))


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None) -> Tensor:  # noqa: A002
    """1 with probability `input` (elementwise), else 0, in input's dtype; `bernoulli(input, p)` uses the
    float p for every element instead. The gradient is zero, as in PyTorch.

    Raises:
        NotImplementedError: an integral `input` used as probabilities.
        RuntimeError: probabilities outside [0, 1] (checked on "cpu" only, as bernoulli_).
    """
    out = ops.empty(input.shape, input.dtype, input.device)
    with autograd.no_grad():
        if p is None:
            if not input.dtype.is_floating_point:
                raise _not_implemented("bernoulli_tensor_cpu_p_", input.dtype)
            bernoulli_(out, input, generator=generator)
        else:
            bernoulli_(out, p, generator=generator)
    return ops.record(out, [input], "BernoulliBackward0", lambda g: (ops.zeros_like(input),))


# ----------------------------------------------------------------------------------------- multinomial
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Generator | None = None) -> Tensor:
    """Sample category indices from the rows of `input` (1-D (n,) or 2-D (R, n) non-negative weights,
    not necessarily normalised): int64 of shape (num_samples,) or (R, num_samples).

    Without replacement (or for one sample) as PyTorch: index = top-k of input / E with E ~ Exp(1)
    (the Gumbel-max trick), after checking the weights (this reads two flags back, as PyTorch does);
    zero-weight categories come only after all positive ones. With replacement: inverse-CDF sampling,
    one block per row on "cuda" (kernels/random.py); zero-weight categories are never drawn. On "cuda"
    the with-replacement path does not read the device, so invalid weights there go unreported.

    Raises:
        RuntimeError: input not 1-D/2-D or not floating point, num_samples <= 0, more samples than
            categories without replacement, or invalid weights (negative, inf, NaN, zero-sum rows).
        TypeError: num_samples not an int.
    """
    if not isinstance(num_samples, int | np.integer) or isinstance(num_samples, bool):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    if not 0 < input.dim() <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{ops._torch_name(input.dtype.name)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _generator(generator, input.device, "multinomial")
    rows = input.shape[0] if input.dim() == 2 else 1
    out_shape = (num_samples,) if input.dim() == 1 else (rows, num_samples)
    p = input.detach()
    if rows == 0:
        return ops.empty(out_shape, dt.int64, p.device)
    if not replacement or num_samples == 1:
        return _multinomial_topk(p, num_samples, gen)
    seed_, offset = gen._take(2 * rows * num_samples)
    return op_table.kernel("multinomial_replacement", p.device.type)(p, num_samples, seed_, offset, out_shape)


def _multinomial_topk(p: Tensor, k: int, gen: Generator) -> Tensor:
    """Without replacement: the check (one read of the device, as PyTorch's), then top-k of p / E."""
    from strata.framework import sorting  # NOTE: a sibling framework module; imported here to keep start-up light

    rows, n = (p.shape[0] if p.dim() == 2 else 1), p.shape[-1]
    nwords = philox.words_needed("exponential", p.dtype, rows * n)
    seed_, offset = gen._take(nwords)
    q, status = op_table.kernel("multinomial_keys", p.device.type)(p, seed_, offset, nwords)
    if any(c in (1, 2) for c in status):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if 3 in status:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    with autograd.no_grad():
        if k == 1:
            return reductions.argmax(q, -1, True)
        return sorting.topk(q, k).indices
