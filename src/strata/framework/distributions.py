"""`torch.distributions` for strata: the distributions example programs use (`Categorical` for policy
gradients, `Normal` for VAEs and continuous actions, `Bernoulli`, `Uniform`) with PyTorch's constructor
arguments (`probs` or `logits`), `sample` / `rsample` (the reparameterised, differentiable draw),
`log_prob`, `entropy`, `mean`, `stddev`, `variance`, and `kl_divergence` between two distributions of one
kind. Draws come from strata's generators on the parameters' device; densities are differentiable
framework ops.

Example:
    >>> import strata
    >>> from strata.framework.distributions import Categorical, Normal
    >>> c = Categorical(probs=strata.tensor([0.25, 0.75]))
    >>> round(c.log_prob(strata.tensor(1)).item(), 4), round(c.entropy().item(), 4)
    (-0.2877, 0.5623)
    >>> round(Normal(0.0, 2.0).log_prob(strata.tensor(1.0)).item(), 4)
    -1.7371
"""

from __future__ import annotations

import math
from typing import Any

from strata.framework import autograd, ops, random
from strata.framework import dtypes as dt
from strata.framework.creation import tensor
from strata.framework.nn import functional as F
from strata.framework.tensor import Size, Tensor


def _t(v: Any, like: Tensor | None = None) -> Tensor:
    if isinstance(v, Tensor):
        return v
    dtype = like.dtype if like is not None and like.dtype.is_floating_point else dt.get_default_dtype()
    return tensor(float(v), dtype=dtype, device=like.device if like is not None else None)


def _expand(t: Tensor, shape: Any) -> Tensor:
    """t broadcast to shape (t itself when it already has it: no graph node to keep alive)."""
    return t if tuple(t.shape) == tuple(shape) else t.expand(*shape)


def _shape(sample_shape: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in sample_shape)


class Distribution:
    """The base class: `batch_shape`, `event_shape`, `sample` (no gradient) and the interface."""

    has_rsample = False

    def __init__(self, batch_shape: tuple[int, ...] = (), event_shape: tuple[int, ...] = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape sample_shape + batch_shape + event_shape (no gradient)."""
        with autograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampling (rsample)")

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Categorical(Distribution):
    """A categorical distribution over the last dim of `probs` (normalised) or `logits`.

    Raises:
        ValueError: neither or both of probs and logits, or a 0-dim parameter.
    """

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            eps = _eps(self.probs)
            self.logits = self.probs.clamp(eps, 1 - eps).log()
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = F.softmax(logits, -1)
        self._num_events = self.probs.shape[-1]
        super().__init__(tuple(self.probs.shape[:-1]))

    @property
    def param_shape(self) -> Size:
        return Size(self.probs.shape)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = _shape(sample_shape)
        flat = self.probs.detach().reshape(-1, self._num_events)
        n = math.prod(shape)
        draws = random.multinomial(flat, max(n, 1), True)  # (batch, n)
        out = draws.transpose(0, 1).reshape(*shape, *self.batch_shape) if n else draws[:, :0].reshape(
            *shape, *self.batch_shape)
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        v = value.long().unsqueeze(-1)
        logits = self.logits
        shape = ops.broadcast_shapes(tuple(v.shape[:-1]), tuple(logits.shape[:-1]))
        v = v.expand(*shape, 1)
        logits = logits.expand(*shape, self._num_events)
        return logits.gather(-1, v).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=_lowest(self.logits))
        return -(logits * self.probs).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.probs * float("nan")

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)


class Normal(Distribution):
    """N(loc, scale^2), elementwise over the broadcast shape of loc and scale."""

    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        lt = loc if isinstance(loc, Tensor) else None
        st = scale if isinstance(scale, Tensor) else None
        like = lt if lt is not None else st
        self.loc, self.scale = _t(loc, like), _t(scale, like)
        shape = ops.broadcast_shapes(tuple(self.loc.shape), tuple(self.scale.shape))
        self.loc, self.scale = _expand(self.loc, shape), _expand(self.scale, shape)
        super().__init__(tuple(shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = _shape(sample_shape) + tuple(self.batch_shape)
        eps = random.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        v = _t(value, self.loc)
        var = self.scale ** 2
        return -((v - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value: Any) -> Tensor:
        v = _t(value, self.loc)
        return 0.5 * (1 + ((v - self.loc) / (self.scale * math.sqrt(2))).erf())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2


class Bernoulli(Distribution):
    """1 with probability `probs` (or sigmoid(`logits`)), elementwise.

    Raises:
        ValueError: neither or both of probs and logits.
    """

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = _t(probs)
            eps = _eps(self.probs)
            p = self.probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (-p).log1p()
        else:
            self.logits = _t(logits)
            self.probs = self.logits.sigmoid()
        super().__init__(tuple(self.probs.shape))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = _shape(sample_shape) + tuple(self.batch_shape)
        with autograd.no_grad():
            return random.bernoulli(self.probs.detach().expand(*shape))

    def log_prob(self, value: Any) -> Tensor:
        v = _t(value, self.logits)
        logits = self.logits
        shape = ops.broadcast_shapes(tuple(v.shape), tuple(logits.shape))
        return -F.binary_cross_entropy_with_logits(logits.expand(*shape), v.expand(*shape).to(logits.dtype),
                                                   reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)


class Uniform(Distribution):
    """U[low, high), elementwise."""

    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        like = low if isinstance(low, Tensor) else high if isinstance(high, Tensor) else None
        self.low, self.high = _t(low, like), _t(high, like)
        shape = ops.broadcast_shapes(tuple(self.low.shape), tuple(self.high.shape))
        self.low, self.high = _expand(self.low, shape), _expand(self.high, shape)
        super().__init__(tuple(shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = _shape(sample_shape) + tuple(self.batch_shape)
        u = random.rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        v = _t(value, self.low)
        inside = (v >= self.low).logical_and(v < self.high).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) for two Normal, two Categorical or two Bernoulli distributions.

    Raises:
        NotImplementedError: another pair of types.
    """
    if isinstance(p, Normal) and isinstance(q, Normal):
        var_ratio = (p.scale / q.scale) ** 2
        t1 = ((p.loc - q.loc) / q.scale) ** 2
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        t = p.probs * (p.logits - q.logits)
        t = ops.where(q.probs == 0, t * 0.0 + math.inf, t)
        t = ops.where(p.probs == 0, t * 0.0, t)
        return t.sum(-1)
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
        t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
        return t1 + t2
    raise NotImplementedError(f"kl_divergence({type(p).__name__}, {type(q).__name__}) is not implemented in strata")


def _eps(t: Tensor) -> float:
    """The dtype's machine epsilon: PyTorch clamps probabilities to [eps, 1 - eps] before taking logs."""
    return {"float64": 2.220446049250313e-16, "float16": 0.0009765625, "bfloat16": 0.0078125}.get(
        t.dtype.name, 1.1920928955078125e-07)


def _lowest(t: Tensor) -> float:
    return {"float64": -1.7976931348623157e308, "float16": -65504.0}.get(t.dtype.name, -3.4028234663852886e38)


__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "kl_divergence"]
