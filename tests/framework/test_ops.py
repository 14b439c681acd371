"""Elementwise ops, comparisons, where/clamp, in-place ops, reductions and matmul against PyTorch CPU,
on "cpu" (NumPy) and "cuda" (the framework's kernels and strata.libs.blas on the virtual GPU)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata
from strata.framework import kernels

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((4,)).astype(np.float32)
POS = (np.abs(A) + 0.5).astype(np.float32)
INTS = np.array([[3, -1, 0, 7], [2, 5, -4, 1], [9, 0, 1, -2]], np.int64)

UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "sign", "reciprocal"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_unary_float(op: str, dtype: str, device: str, oracle: Any) -> None:
    data = POS if op in ("log", "sqrt", "rsqrt") else A
    s, t = oracle.pair(data, dtype=getattr(strata, dtype), device=device)
    oracle.assert_same(getattr(s, op)(), getattr(t, op)(), device=device)
    oracle.assert_same(getattr(strata, op)(s.T), getattr(torch, op)(t.T), device=device)  # strided input


@pytest.mark.parametrize("op", ["neg", "abs", "relu", "sign", "exp", "sqrt"])
def test_unary_int_promotes_like_torch(op: str, device: str, oracle: Any) -> None:
    s, t = oracle.pair(np.abs(INTS) if op == "sqrt" else INTS, device=device)
    oracle.assert_same(getattr(s, op)(), getattr(t, op)(), device=device)


BINARY = [("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
          ("div", lambda x, y: x / y), ("pow", lambda x, y: x ** y), ("maximum", lambda x, y: x.maximum(y)),
          ("minimum", lambda x, y: x.minimum(y)), ("eq", lambda x, y: x == y), ("ne", lambda x, y: x != y),
          ("lt", lambda x, y: x < y), ("le", lambda x, y: x <= y), ("gt", lambda x, y: x > y),
          ("ge", lambda x, y: x >= y)]


@pytest.mark.parametrize(("name", "fn"), BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcast(name: str, fn: Any, device: str, oracle: Any) -> None:
    a = POS if name == "pow" else A
    sa, ta = oracle.pair(a, device=device)
    sb, tb = oracle.pair(np.round(B, 1) if name != "eq" else A[1], device=device)
    oracle.assert_same(fn(sa, sb), fn(ta, tb), device=device)  # (3,4) with (4,)
    oracle.assert_same(fn(sa.T[:, :1], sb[:3]), fn(ta.T[:, :1], tb[:3]), device=device)  # (4,1) with (3,)
    if name in ("maximum", "minimum"):
        for x in (sa, ta):
            with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other' \\(position 1\\) must be Tensor"):
                fn(x, 2)
        return
    oracle.assert_same(fn(sa, 2), fn(ta, 2), device=device)  # Python scalar
    oracle.assert_same(fn(1.5, sa) if name != "pow" else fn(sa, 0.5), fn(1.5, ta) if name != "pow" else fn(ta, 0.5),
                       device=device)


PROMOTION = [("int64", "float32"), ("int32", "int64"), ("uint8", "int8"), ("float16", "bfloat16"),
             ("bool", "int16"), ("float16", "float64"), ("bool", "bool")]


@pytest.mark.parametrize(("da", "db"), PROMOTION, ids=["-".join(p) for p in PROMOTION])
@pytest.mark.parametrize("name", ["add", "div", "maximum", "lt"])
def test_binary_promotion(da: str, db: str, name: str, device: str, oracle: Any) -> None:
    fn = dict(BINARY)[name]
    sa, ta = oracle.pair(np.abs(INTS[:2, :3]), dtype=getattr(strata, da), device=device)
    sb, tb = oracle.pair(np.array([1, 0, 2]), dtype=getattr(strata, db), device=device)
    if name == "div":
        sb, tb = sb + 1, tb + 1
    oracle.assert_same(fn(sa, sb), fn(ta, tb), device=device)
    oracle.assert_same(fn(sa, strata.tensor(3, device=device)), fn(ta, torch.tensor(3)), device=device)
    if name != "maximum":
        oracle.assert_same(fn(sa, 2.5), fn(ta, 2.5), device=device)


def test_integer_ops_exact(device: str, oracle: Any) -> None:
    s, t = oracle.pair(INTS, device=device)
    oracle.assert_same(s * s - s, t * t - t, device=device)
    oracle.assert_same(s ** 2, t ** 2, device=device)
    big = strata.tensor([2 ** 53 + 1], device=device)
    assert (big + 2).tolist() == [2 ** 53 + 3]  # int64 stays exact on the device


def test_nan_propagation(device: str, oracle: Any) -> None:
    vals = np.array([np.nan, 1.0, -2.0, np.inf], np.float32)
    s, t = oracle.pair(vals, device=device)
    oracle.assert_same(s.maximum(s * 0), t.maximum(t * 0), device=device)
    oracle.assert_same(s.relu(), t.relu(), device=device)
    oracle.assert_same(s.max(), t.max(), device=device)
    oracle.assert_same(s.max(0), tuple(t.max(0)), device=device)


def test_where_and_clamp(device: str, oracle: Any) -> None:
    sa, ta = oracle.pair(A, device=device)
    sb, tb = oracle.pair(B, device=device)
    oracle.assert_same(strata.where(sa > 0, sa, sb), torch.where(ta > 0, ta, tb), device=device)
    oracle.assert_same(strata.where(sa > 0, sa, 0.0), torch.where(ta > 0, ta, 0.0), device=device)
    oracle.assert_same(sa.clamp(-0.5, 0.5), ta.clamp(-0.5, 0.5), device=device)
    oracle.assert_same(strata.clamp(sa, min=0), torch.clamp(ta, min=0), device=device)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        strata.where(sa, sa, sb)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        sa.clamp()


def test_in_place(device: str, oracle: Any) -> None:
    sa, ta = oracle.pair(A, device=device)
    sb, tb = oracle.pair(B, device=device)
    for x, y in ((sa, sb), (ta, tb)):
        x.add_(y)
        x.mul_(2)
        x[:, 1:3].sub_(1)
        x.T.div_(4)
        x += 1
        x.clamp_(max=1.0)
    oracle.assert_same(sa, ta, device=device)
    si, ti = oracle.pair(INTS, device=device)
    for x in (si, ti):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            x.add_(0.5)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x[0].add_(x.clone())
    sa.zero_()
    assert sa.sum().item() == 0


def test_operand_errors(device: str) -> None:
    s, t = strata.ones(2, 3, device=device), torch.ones(2, 3)
    for x in (s, t):
        with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\) "
                                               r"at non-singleton dimension 1"):
            x + x[:, :2]
        with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
            _ = -(x > 0)
    if device == "cuda":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            s + strata.ones(2, 3)
        assert (s + strata.tensor(2.0)).device.type == "cuda"  # cpu 0-dim tensors are allowed


REDUCTIONS = [
    ("sum_all", lambda x: x.sum()),
    ("sum_dim", lambda x: x.sum(1)),
    ("sum_dims_keep", lambda x: x.sum((0, 2), keepdim=True)),
    ("sum_neg_dim", lambda x: x.sum(-1)),
    ("mean_all", lambda x: x.mean()),
    ("mean_dim", lambda x: x.mean(0, keepdim=True)),
    ("max_all", lambda x: x.max()),
    ("max_dim", lambda x: tuple(x.max(1))),
    ("min_dim_keep", lambda x: tuple(x.min(2, keepdim=True))),
    ("argmax", lambda x: x.argmax()),
    ("argmax_dim", lambda x: x.argmax(dim=1, keepdim=True)),
    ("argmin_dim", lambda x: x.argmin(0)),
    ("sum_transposed", lambda x: x.transpose(0, 2).sum(0)),
]


@pytest.mark.parametrize(("name", "fn"), REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool"])
def test_reductions(name: str, fn: Any, dtype: str, device: str, oracle: Any) -> None:
    data = np.round(rng.standard_normal((2, 5, 3)) * 3)
    data[0, 1, 2] = data[0, 1, 0]  # ties: the first index wins
    if dtype == "bool":
        data = data > 0
    if name.startswith("mean") and dtype in ("int32", "bool") or name.startswith("arg") and dtype == "bool":
        s, t = oracle.pair(data, dtype=getattr(strata, dtype), device=device)
        for x in (s, t):
            with pytest.raises(RuntimeError, match="could not infer output dtype|does not support bool input"):
                fn(x)
        return
    s, t = oracle.pair(data, dtype=getattr(strata, dtype), device=device)
    oracle.assert_same(fn(s), fn(t), device=device)


def test_large_reduction_uses_the_tree(device: str, oracle: Any) -> None:
    data = rng.standard_normal((3, 1000)).astype(np.float32)
    s, t = oracle.pair(data, device=device)
    oracle.assert_same(s.sum(1), t.sum(1), rtol=1e-4, atol=1e-4, device=device)
    oracle.assert_same(tuple(s.max(1)), tuple(t.max(1)), device=device)
    oracle.assert_same(s.mean(), t.mean(), rtol=1e-4, atol=1e-5, device=device)


def test_reduction_errors(device: str) -> None:
    for m, dev in ((strata, device), (torch, "cpu")):
        e = m.zeros(0, 3, device=dev)
        assert e.sum().item() == 0
        with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
            e.max()
        with pytest.raises(IndexError, match="Dimension out of range"):
            m.ones(2, 3, device=dev).sum(2)


MATMUL = [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
          ((2, 1, 3, 4), (3, 4, 2)), ((5, 3), (3, 1))]


@pytest.mark.parametrize(("sa", "sb"), MATMUL, ids=[f"{a}@{b}" for a, b in MATMUL])
def test_matmul_shapes(sa: tuple, sb: tuple, device: str, oracle: Any) -> None:
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    x, tx = oracle.pair(a, dtype=strata.float32, device=device)
    y, ty = oracle.pair(b, dtype=strata.float32, device=device)
    oracle.assert_same(x @ y, tx @ ty, rtol=1e-4, atol=1e-5, device=device)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_matmul_dtypes_and_strided(dtype: str, device: str, oracle: Any) -> None:
    x, tx = oracle.pair(rng.standard_normal((4, 3)), dtype=getattr(strata, dtype), device=device)
    y, ty = oracle.pair(rng.standard_normal((4, 2)), dtype=getattr(strata, dtype), device=device)
    oracle.assert_same(x.T @ y, tx.T @ ty, rtol=1e-4, atol=1e-5, device=device)
    oracle.assert_same(strata.matmul(x.T, y), torch.matmul(tx.T, ty), rtol=1e-4, atol=1e-5, device=device)


def test_matmul_errors(device: str) -> None:
    for m, dev in ((strata, device), (torch, "cpu")):
        a = m.ones(2, 3, device=dev)
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
            a @ a
        with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
            a @ m.ones(3, 2, dtype=m.float64, device=dev)
        with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
            m.matmul(m.tensor(1.0, device=dev), a)


def test_cuda_results_come_from_kernels() -> None:
    """Every cuda op above went through the framework's kernel sets (or BLAS), not the host."""
    x = strata.arange(6.0, device="cuda").view(2, 3)
    before = {k for k, ks in kernels._sets.items() if ks._module is not None or ks._amd}  # compiled (PTX or gfx9)
    y = (x.exp() * 2 > 3).sum(1)
    assert y.device.type == "cuda" and y.tolist() == (np.exp(np.arange(6.0).reshape(2, 3)) * 2 > 3).sum(1).tolist()
    used = {k for k, ks in kernels._sets.items() if ks._module is not None or ks._amd}
    assert {("unary", "float32", ""), ("binary", "float32", ""), ("compare", "float32", ""),
            ("reduce", "bool", "")} <= used | before


def test_dims_coalesce_and_the_limit(oracle: Any) -> None:
    s, t = oracle.pair(np.arange(2 ** 7).reshape([2] * 7), device="cuda")
    oracle.assert_same(s + 1, t + 1)  # contiguous: one run, whatever the rank
    oracle.assert_same(s.sum((1, 2, 3)), t.sum((1, 2, 3)))
    assert kernels.coalesce([2, 1, 3, 4], [[12, 99, 4, 1], [0, 5, 4, 1]]) == ([2, 12], [[12, 1], [0, 1]])
    with pytest.raises(RuntimeError, match="more than 6 dims"):
        _ = s.permute(6, 5, 4, 3, 2, 1, 0) + 1  # seven dims that don't merge


COMPOSITES = [
    ("softmax", lambda m, x: m.softmax(x, 1)),
    ("log_softmax", lambda m, x: x.log_softmax(0)),
    ("var", lambda m, x: x.var(1)),
    ("var_keep_corr0", lambda m, x: m.var(x, 0, correction=0, keepdim=True)),
    ("std_all", lambda m, x: x.std()),
    ("cat", lambda m, x: m.cat([x, x * 2, x[:, :1]], 1)),
    ("cat_neg_dim", lambda m, x: m.cat([x, x], -2)),
    ("stack", lambda m, x: m.stack([x, x.exp()], 1)),
]


@pytest.mark.parametrize(("name", "fn"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composites_and_their_gradients(name: str, fn: Any, device: str, oracle: Any) -> None:
    s, t = oracle.pair(A, device=device, requires_grad=True)
    out, ref = fn(strata, s), fn(torch, t)
    oracle.assert_same(out, ref, rtol=1e-5, atol=1e-6, device=device)
    w = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    (out * strata.tensor(w, device=device)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    oracle.assert_same(s.grad, t.grad, rtol=1e-4, atol=1e-5, device=device)


def test_cat_promotes_and_checks(device: str, oracle: Any) -> None:
    si, ti = oracle.pair(INTS[:1], device=device)
    sf, tf = oracle.pair(A[:1], dtype=strata.float16, device=device)
    oracle.assert_same(strata.cat([si, sf]), torch.cat([ti, tf]), device=device)
    for m, x in ((strata, si), (torch, ti)):
        with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
            m.cat([x, x[:, :2]])
        with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
            m.stack([x, x[:, :2]])
    for x in (si, ti):  # dim 0 of a 2-D tensor is not the last: no "_lastdim"
        with pytest.raises(RuntimeError, match="\"softmax_kernel_impl\" not implemented for 'Long'"):
            x.softmax(0)
