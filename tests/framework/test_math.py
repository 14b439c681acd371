"""More elementwise math (trigonometric, special, rounding, predicates, nan_to_num, fmod/remainder/
floor_divide, atan2/hypot/copysign, bitwise and logical ops, lerp) and reductions/utilities (prod, all,
any, count_nonzero, amax/amin/aminmax, norm/vector_norm, isclose/allclose/equal) against PyTorch CPU,
on "cpu" and "cuda": values, dtypes, gradients, grad_fn names and errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata
from strata.framework import ops, reductions

rng = np.random.default_rng(1)
X = rng.uniform(-2.0, 2.0, (3, 4)).astype(np.float32)
UNIT = rng.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
POS = rng.uniform(0.2, 3.0, (3, 4)).astype(np.float32)
INTS = np.array([[7, -7, 5, 0], [-3, 12, 1, -9], [4, -1, 6, 8]], np.int64)


def check(oracle: Any, fs: Callable[..., Any], ft: Callable[..., Any], inputs: list[Any], device: str, *,
          dtype: Any = None, grad: bool = True, rtol: float = 1e-5, atol: float = 1e-6) -> tuple[Any, Any]:
    """Run fs on strata tensors and ft on torch ones made from `inputs` (arrays become tensors, other
    values pass as they are); compare outputs, and when grad, the grad_fn name and the input gradients."""
    ss: list[Any] = []
    ts: list[Any] = []
    for a in inputs:
        if isinstance(a, np.ndarray):
            floating = np.issubdtype(a.dtype, np.floating) and (dtype is None or dtype.is_floating_point)
            s, t = oracle.pair(a, dtype=dtype, device=device, requires_grad=grad and floating)
            ss.append(s)
            ts.append(t)
        else:
            ss.append(a)
            ts.append(a)
    out_s, out_t = fs(*ss), ft(*ts)
    oracle.assert_same(out_s, out_t, rtol=rtol, atol=atol, device=device)
    if grad and isinstance(out_t, torch.Tensor) and out_t.requires_grad:
        assert out_s.grad_fn is not None
        assert out_s.grad_fn.name() == type(out_t.grad_fn).__name__
        seed = rng.standard_normal(tuple(out_t.shape)).astype(np.float32)
        out_t.backward(torch.tensor(seed).to(out_t.dtype))
        out_s.backward(strata.tensor(seed, device=device).to(out_s.dtype))
        for s, t in zip(ss, ts, strict=True):
            if isinstance(t, torch.Tensor) and t.requires_grad and t.grad is None:
                assert s.grad is None
            elif isinstance(t, torch.Tensor) and t.requires_grad:
                oracle.assert_same(s.grad, t.grad, rtol=max(rtol, 1e-4), atol=max(atol, 1e-5), device=device)
    return out_s, out_t


def same_error(fs: Callable[[], Any], ft: Callable[[], Any]) -> None:
    """fs raises the exception type and message that ft raises in PyTorch."""
    with pytest.raises(Exception) as ref:  # noqa: PT011 - any error: we compare with PyTorch's below
        ft()
    with pytest.raises(ref.type) as ours:
        fs()
    assert str(ours.value) == str(ref.value)


# ----------------------------------------------------------------------------------------- unary
DOMAIN = {"asin": UNIT, "acos": UNIT, "atanh": UNIT, "erfinv": UNIT, "acosh": POS + 1, "log1p": POS - 0.5,
          "log2": POS, "log10": POS}
UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log1p", "expm1",
         "log2", "log10", "exp2", "erf", "erfinv", "floor", "ceil", "trunc", "frac", "round", "square"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_float32_values_and_grads(op: str, device: str, oracle: Any) -> None:
    data = DOMAIN.get(op, X * 1.3)
    check(oracle, getattr(strata, op), getattr(torch, op), [data], device, rtol=2e-5)
    s, t = oracle.pair(data, device=device)
    oracle.assert_same(getattr(s.T, op)(), getattr(t.T, op)(), rtol=2e-5, device=device)  # strided, method form


@pytest.mark.parametrize(("op", "dtype"), [("sin", "float16"), ("atan", "float64"), ("erf", "bfloat16"),
                                           ("floor", "float16")])
def test_unary_other_float_dtypes(op: str, dtype: str, device: str, oracle: Any) -> None:
    check(oracle, getattr(strata, op), getattr(torch, op), [X], device, dtype=getattr(strata, dtype), grad=False)


@pytest.mark.parametrize("op", ["sin", "erf", "floor", "round", "square"])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_unary_integral_and_bool_dtypes_like_torch(op: str, dtype: str, device: str, oracle: Any) -> None:
    data = np.abs(INTS) % 5 if dtype != "bool" else INTS > 0
    d = getattr(strata, dtype if dtype != "bool" else "bool_")
    s, t = oracle.pair(data, dtype=d, device=device)
    try:
        ref = getattr(torch, op)(t)
    except NotImplementedError:
        same_error(lambda: getattr(strata, op)(s), lambda: getattr(torch, op)(t))
        return
    oracle.assert_same(getattr(strata, op)(s), ref, device=device)


def test_unary_errors(device: str, oracle: Any) -> None:
    s, t = oracle.pair(INTS, device=device)
    same_error(lambda: strata.frac(s), lambda: torch.frac(t))
    sb, tb = oracle.pair(INTS > 0, device=device)
    same_error(lambda: strata.floor(sb), lambda: torch.floor(tb))
    same_error(lambda: strata.round(sb), lambda: torch.round(tb))
    same_error(lambda: ops.silu(s), lambda: torch.nn.functional.silu(t))
    same_error(lambda: ops.gelu(s), lambda: torch.nn.functional.gelu(t))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_and_silu(approximate: str, device: str, oracle: Any) -> None:
    check(oracle, lambda x: ops.gelu(x, approximate), lambda x: torch.nn.functional.gelu(x, approximate=approximate),
          [X * 2], device)
    check(oracle, ops.silu, torch.nn.functional.silu, [X * 2], device)
    check(oracle, lambda x: ops.gelu(x, approximate), lambda x: torch.nn.functional.gelu(x, approximate=approximate),
          [X], device, dtype=strata.bfloat16, grad=False)


@pytest.mark.parametrize("decimals", [1, 2, -1])
def test_round_decimals(decimals: int, device: str, oracle: Any) -> None:
    data = (X * 123.4567).astype(np.float32)
    check(oracle, lambda x: strata.round(x, decimals=decimals), lambda x: torch.round(x, decimals=decimals), [data],
          device, rtol=1e-6)


SPECIAL = np.array([[1.5, np.nan, np.inf], [-np.inf, -0.0, 3e38]], np.float32)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_predicates_and_nan_to_num(dtype: str, device: str, oracle: Any) -> None:
    d = getattr(strata, dtype)
    data = SPECIAL if dtype != "float16" else np.nan_to_num(SPECIAL, posinf=np.inf, neginf=-np.inf, nan=np.nan)
    s, t = oracle.pair(data, dtype=d, device=device)
    for op in ("isnan", "isinf", "isfinite"):
        oracle.assert_same(getattr(strata, op)(s), getattr(torch, op)(t), device=device)
        oracle.assert_same(getattr(s.T, op)(), getattr(t.T, op)(), device=device)
    oracle.assert_same(strata.nan_to_num(s), torch.nan_to_num(t), rtol=0, device=device)
    oracle.assert_same(s.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), t.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0),
                       device=device)


def test_nan_to_num_grad_and_integral_inputs(device: str, oracle: Any) -> None:
    check(oracle, strata.nan_to_num, torch.nan_to_num, [SPECIAL], device)
    si, ti = oracle.pair(INTS, device=device)
    for op in ("isnan", "isinf", "isfinite", "nan_to_num"):
        oracle.assert_same(getattr(strata, op)(si), getattr(torch, op)(ti), device=device)


# ----------------------------------------------------------------------------------------- binary
DIV_A = np.array([[5.5, -5.5, 7.0, -7.0], [0.0, -0.0, 2.5, 1e-3], [9.0, -3.25, 4.0, -8.0]], np.float32)
DIV_B = np.array([2.0, 2.0, -3.0, -1.5], np.float32)


@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
def test_division_like_floats(op: str, device: str, oracle: Any) -> None:
    check(oracle, getattr(strata, op), getattr(torch, op), [DIV_A, DIV_B], device, grad=op != "floor_divide")
    check(oracle, getattr(strata, op), getattr(torch, op), [DIV_A, -2.5], device, grad=False)  # Python scalar
    check(oracle, getattr(strata, op), getattr(torch, op), [DIV_A, DIV_B], device, dtype=strata.float64, grad=False)
    check(oracle, getattr(strata, op), getattr(torch, op), [DIV_A, DIV_B], device, dtype=strata.bfloat16, grad=False)


@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", ["int64", "int8"])
def test_division_like_integers(op: str, dtype: str, device: str, oracle: Any) -> None:
    b = np.array([3, -2, 5, -4], np.int64)
    check(oracle, getattr(strata, op), getattr(torch, op), [INTS, b], device, dtype=getattr(strata, dtype))
    check(oracle, getattr(strata, op), getattr(torch, op), [INTS, -3], device, dtype=getattr(strata, dtype))
    check(oracle, getattr(strata, op), getattr(torch, op), [INTS, 2.5], device, dtype=getattr(strata, dtype),
          grad=False)  # an int tensor with a float scalar computes in float


def test_division_like_operators_and_errors(device: str, oracle: Any) -> None:
    s, t = oracle.pair(INTS, device=device)
    oracle.assert_same(s // 4, t // 4, device=device)
    oracle.assert_same(s % -4, t % -4, device=device)
    oracle.assert_same(17 // s[0, :3], 17 // t[0, :3], device=device)
    oracle.assert_same(17 % s[0, :3], 17 % t[0, :3], device=device)
    same_error(lambda: s % 0, lambda: t % 0)
    same_error(lambda: strata.floor_divide(s, 0), lambda: torch.floor_divide(t, 0))
    if device == "cpu":  # a zero inside a tensor divisor is only found on the host
        z = strata.tensor([1, 0, 2, 3])
        same_error(lambda: strata.fmod(s, z), lambda: torch.fmod(t, torch.tensor([1, 0, 2, 3])))
    sb, tb = oracle.pair(INTS > 0, device=device)
    for op in ("fmod", "remainder", "floor_divide"):
        same_error(lambda op=op: getattr(strata, op)(sb, sb), lambda op=op: getattr(torch, op)(tb, tb))
    x = strata.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = strata.floor_divide(x, 2)
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="the derivative for 'floor_divide' is not implemented"):
        y.sum().backward()


@pytest.mark.parametrize("op", ["atan2", "hypot", "copysign"])
def test_float_binary(op: str, device: str, oracle: Any) -> None:
    b = np.array([[0.5], [-1.5], [2.0]], np.float32)
    check(oracle, getattr(strata, op), getattr(torch, op), [X, b], device)
    check(oracle, getattr(strata, op), getattr(torch, op), [X, b], device, dtype=strata.float16, grad=False)
    s, t = oracle.pair(INTS, device=device)
    if op == "hypot":
        same_error(lambda: strata.hypot(s, s), lambda: torch.hypot(t, t))
    else:
        oracle.assert_same(getattr(strata, op)(s, s.flip(1)), getattr(torch, op)(t, t.flip(1)), device=device)


BITWISE = [("bitwise_and", lambda a, b: a & b), ("bitwise_or", lambda a, b: a | b),
           ("bitwise_xor", lambda a, b: a ^ b)]


@pytest.mark.parametrize(("op", "operator"), BITWISE, ids=[b[0] for b in BITWISE])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_bitwise(op: str, operator: Any, dtype: str, device: str, oracle: Any) -> None:
    d = strata.bool_ if dtype == "bool" else getattr(strata, dtype)
    a = INTS > 0 if dtype == "bool" else np.abs(INTS) * 9
    b = np.array([True, False, True, False]) if dtype == "bool" else np.array([3, 12, 5, 255])
    check(oracle, getattr(strata, op), getattr(torch, op), [a, b], device, dtype=d)
    check(oracle, operator, operator, [a, b], device, dtype=d)
    check(oracle, lambda x: operator(x, 6), lambda x: operator(x, 6), [a], device, dtype=d)  # bool & 6 -> int64
    check(oracle, lambda x: operator(6, x), lambda x: operator(6, x), [a], device, dtype=d)
    check(oracle, strata.bitwise_not, torch.bitwise_not, [a], device, dtype=d)
    check(oracle, lambda x: ~x, lambda x: ~x, [a], device, dtype=d)


def test_bitwise_in_place_and_errors(device: str, oracle: Any) -> None:
    s, t = oracle.pair(INTS, device=device)
    s &= 6
    t &= 6
    s ^= 3
    t ^= 3
    oracle.assert_same(s, t, device=device)
    sf, tf = oracle.pair(X, device=device)
    same_error(lambda: ~sf, lambda: ~tf)
    same_error(lambda: sf & 1, lambda: tf & 1)
    same_error(lambda: strata.bitwise_not(sf), lambda: torch.bitwise_not(tf))
    same_error(lambda: s & 2.0, lambda: t & 2.0)


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
def test_logical(op: str, device: str, oracle: Any) -> None:
    a = np.array([[0.0, 1.5, np.nan, -2.0]], np.float32)
    b = np.array([[0], [3], [-1]], np.int64)
    s, t = oracle.pair(a, device=device)
    sb, tb = oracle.pair(b, device=device)
    oracle.assert_same(getattr(strata, op)(s, sb), getattr(torch, op)(t, tb), device=device)
    oracle.assert_same(getattr(s, op)(s > 0), getattr(t, op)(t > 0), device=device)


def test_lerp(device: str, oracle: Any) -> None:
    end = rng.standard_normal((4,)).astype(np.float32)
    check(oracle, lambda a, b: strata.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), [X, end], device)
    check(oracle, lambda a, b: strata.lerp(a, b, 0.8), lambda a, b: torch.lerp(a, b, 0.8), [X, end], device)
    w = rng.uniform(0, 1, (3, 1)).astype(np.float32)
    check(oracle, strata.lerp, torch.lerp, [X, end, w], device)
    s, t = oracle.pair(X, device=device)
    si, ti = oracle.pair(INTS, device=device)
    same_error(lambda: strata.lerp(si, si, 0.5), lambda: torch.lerp(ti, ti, 0.5))
    same_error(lambda: strata.lerp(s, s.double(), 0.5), lambda: torch.lerp(t, t.double(), 0.5))
    oracle.assert_same(s.clone().lerp_(s * 2, 0.25), t.clone().lerp_(t * 2, 0.25), device=device)


# ----------------------------------------------------------------------------------------- reductions
PROD = np.array([[1.5, -2.0, 0.5, 3.0], [0.0, 2.0, 1.25, -1.0], [0.0, 0.0, 2.0, 0.75]], np.float32)


@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod_values_and_grads_with_zeros(dim: Any, device: str, oracle: Any) -> None:
    for data in (X, PROD):
        if dim is None:
            check(oracle, strata.prod, torch.prod, [data], device)
        else:
            check(oracle, lambda x: strata.prod(x, dim), lambda x: torch.prod(x, dim), [data], device)
            check(oracle, lambda x: x.prod(dim, keepdim=True), lambda x: x.prod(dim, keepdim=True), [data], device)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "float64"])
def test_prod_dtypes(dtype: str, device: str, oracle: Any) -> None:
    d = strata.bool_ if dtype == "bool" else getattr(strata, dtype)
    data = INTS > 0 if dtype == "bool" else np.abs(INTS) % 4 + (0 if dtype != "float16" else 0.5)
    check(oracle, strata.prod, torch.prod, [data], device, dtype=d, grad=False)
    check(oracle, lambda x: x.prod(1), lambda x: x.prod(1), [data], device, dtype=d, grad=False)
    check(oracle, lambda x: x.prod(0, dtype=strata.float64), lambda x: x.prod(0, dtype=torch.float64), [data],
          device, dtype=d, grad=False)


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("dtype", ["float32", "uint8", "bool"])
def test_all_any(op: str, dtype: str, device: str, oracle: Any) -> None:
    d = strata.bool_ if dtype == "bool" else getattr(strata, dtype)
    data = np.array([[1, 0, 2], [3, 4, 5]]) if dtype != "bool" else np.array([[True, False, True], [True] * 3])
    s, t = oracle.pair(data, dtype=d, device=device)
    for args in ((), (0,), (1,), (-1, True), ((0, 1),)):
        oracle.assert_same(getattr(strata, op)(s, *args), getattr(torch, op)(t, *args), device=device)
        oracle.assert_same(getattr(s, op)(*args), getattr(t, op)(*args), device=device)
    se, te = oracle.pair(np.zeros((0, 2)), dtype=d, device=device)
    oracle.assert_same(getattr(s, op)(), getattr(t, op)(), device=device)
    oracle.assert_same(getattr(se, op)(0), getattr(te, op)(0), device=device)


def test_count_nonzero(device: str, oracle: Any) -> None:
    s, t = oracle.pair(PROD, device=device)
    for args in ((), (0,), (1,), ((0, 1),)):
        oracle.assert_same(strata.count_nonzero(s, *args), torch.count_nonzero(t, *args), device=device)
    sb, tb = oracle.pair(INTS > 0, device=device)
    oracle.assert_same(sb.count_nonzero(0), tb.count_nonzero(0), device=device)


TIES = np.array([[3.0, 1.0, 3.0], [-2.0, -2.0, 0.5]], np.float32)


@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin(op: str, device: str, oracle: Any) -> None:
    for args in ((), (0,), (1, True), ((0, 1),), (-1,)):
        check(oracle, lambda x, a=args: getattr(strata, op)(x, *a), lambda x, a=args: getattr(torch, op)(x, *a),
              [TIES], device)
    check(oracle, lambda x: getattr(x, op)(1), lambda x: getattr(x, op)(1), [INTS], device)
    check(oracle, lambda x: getattr(x, op)(0), lambda x: getattr(x, op)(0), [INTS > 0], device)
    se, te = oracle.pair(np.zeros((0, 2), np.float32), device=device)
    same_error(lambda: getattr(strata, op)(se), lambda: getattr(torch, op)(te))
    oracle.assert_same(getattr(strata, op)(se, 1), getattr(torch, op)(te, 1), device=device)


def test_aminmax(device: str, oracle: Any) -> None:
    s, t = oracle.pair(TIES, device=device)
    oracle.assert_same(tuple(strata.aminmax(s)), tuple(torch.aminmax(t)), device=device)
    r, ref = s.aminmax(dim=1, keepdim=True), t.aminmax(dim=1, keepdim=True)
    oracle.assert_same(r.min, ref.min, device=device)
    oracle.assert_same(r.max, ref.max, device=device)
    assert repr(r).startswith("strata.return_types.aminmax(")


NORMS = [2, 1, math.inf, -math.inf, 0, 3, 0.5]


@pytest.mark.parametrize("p", NORMS)
def test_vector_norm(p: float, device: str, oracle: Any) -> None:
    data = PROD if p not in (3, 0.5) else POS
    check(oracle, lambda x: reductions.vector_norm(x, p), lambda x: torch.linalg.vector_norm(x, p), [data], device)
    check(oracle, lambda x: reductions.vector_norm(x, p, dim=1, keepdim=True),
          lambda x: torch.linalg.vector_norm(x, p, dim=1, keepdim=True), [data], device)
    check(oracle, lambda x: strata.norm(x, p, dim=(0, 1)), lambda x: torch.norm(x, p, dim=(0, 1)), [data], device)


def test_norm_defaults_zero_grad_and_errors(device: str, oracle: Any) -> None:
    check(oracle, strata.norm, torch.norm, [X], device)
    check(oracle, lambda x: x.norm(dim=0), lambda x: x.norm(dim=0), [np.zeros((2, 3), np.float32)], device)
    s, t = oracle.pair(INTS, device=device)
    same_error(lambda: strata.norm(s), lambda: torch.norm(t))


def test_isclose_allclose_equal(device: str, oracle: Any) -> None:
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], np.float32)
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 100.2], np.float32)
    sa, ta = oracle.pair(a, device=device)
    sb, tb = oracle.pair(b, device=device)
    for kw in ({}, {"equal_nan": True}, {"rtol": 1e-2}, {"atol": 0.0, "rtol": 0.0}):
        oracle.assert_same(strata.isclose(sa, sb, **kw), torch.isclose(ta, tb, **kw), device=device)
        assert strata.allclose(sa[:1], sb[:1], **kw) == torch.allclose(ta[:1], tb[:1], **kw)
        assert sa.allclose(sb, **kw) == ta.allclose(tb, **kw)
    si, ti = oracle.pair(INTS, device=device)
    oracle.assert_same(strata.isclose(si, si + 1, atol=1), torch.isclose(ti, ti + 1, atol=1), device=device)
    same_error(lambda: strata.isclose(sa, sa.double()), lambda: torch.isclose(ta, ta.double()))
    same_error(lambda: strata.allclose(si, si.float()), lambda: torch.allclose(ti, ti.float()))
    assert strata.equal(si, si.clone()) and not strata.equal(si, si + 1) and not strata.equal(si, si[:1])
    assert strata.equal(si.float(), si) == torch.equal(ti.float(), ti)


def test_new_families_compile_only_what_is_used() -> None:
    from strata.framework import kernels
    names = kernels.kernel_set("trig", "float32").name_expressions
    assert list(names) == [f"funary<float, {c}>" for c in kernels.TRIG.values()]
    assert all("double" not in n for n in kernels.kernel_set("divmod", "float32").name_expressions)
