"""strata's random numbers: reproducibility, one stream on "cpu" and "cuda", the Philox known answers,
distributions against scipy.stats, and shapes, dtypes, errors and gradients against PyTorch (whose
values differ: its CPU stream is mt19937, strata's is Philox4x32-10 on both devices)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from scipy import stats

import strata
from strata.framework import random as srandom
from strata.libs import rand as librand

from .conftest import DEVICES, as_numpy, to_strata_dtype

FLOATS = [strata.float32, strata.float64, strata.float16, strata.bfloat16]


def _np(t: strata.Tensor) -> np.ndarray:
    return as_numpy(t)


def _same_error(fn: Callable[[Any], Any], device: str = "cpu") -> None:
    """fn(strata) raises the same error type and message as fn(torch) (which runs on cpu)."""
    with pytest.raises(Exception) as ref:
        fn(torch)
    with pytest.raises(type(ref.value)) as ours:
        fn(strata)
    assert str(ours.value) == str(ref.value)


# ----------------------------------------------------------------------------------------- the stream
def test_philox_words_known_answers_and_the_device_stream() -> None:
    # Random123's kat_vectors (philox4x32 10): counter 0, key 0 and all-ones counter and key
    assert srandom.philox_words(0, 0, 4).tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    # counter 2^64 - 1 sits at word offset 4 * (2^64 - 1); only the counter's low 64 bits are used
    seed, offset = 0x0123456789ABCDEF, 6
    import strata.cuda as cuda
    dev = cuda.empty(1001, np.uint32)
    librand.generate(librand.create_generator(seed, offset), dev)
    np.testing.assert_array_equal(srandom.philox_words(seed, offset, 1001), dev.get())


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_is_the_same_on_cpu_and_cuda(dtype: strata.dtype) -> None:
    a = strata.rand(5, 7, generator=strata.Generator().manual_seed(11), dtype=dtype)
    b = strata.rand(5, 7, generator=strata.Generator("cuda").manual_seed(11), dtype=dtype, device="cuda")
    assert a.dtype is b.dtype is dtype and a.shape == b.shape == (5, 7)
    np.testing.assert_array_equal(_np(a), _np(b))
    v = _np(a)
    assert ((v >= 0) & (v < 1)).all() and len(np.unique(v)) > 20


def test_every_distribution_matches_across_devices() -> None:
    def draw(dev: str) -> list[np.ndarray]:
        g = strata.Generator(dev).manual_seed(2024)
        p = strata.tensor([[0.0, 0.2, 0.5], [0.9, 0.0, 1.0]], device=dev)
        probs = strata.tensor([[1.0, 0.0, 3.0, 2.0, 0.5], [0.0, 0.0, 1.0, 1.0, 4.0]], device=dev)
        view = strata.zeros(4, 6, device=dev).t()[1:5]  # a strided view
        view.uniform_(-3.0, 5.0, generator=g)
        return [_np(x) for x in (
            strata.randn(9, generator=g, device=dev), strata.randn(5, dtype=strata.float64, generator=g, device=dev),
            strata.randint(-7, 7, (13,), generator=g, device=dev),
            strata.randint(-2 ** 62, 2 ** 62, (5,), generator=g, device=dev),
            strata.bernoulli(p, generator=g), strata.empty(2, 3, device=dev).bernoulli_(0.3, generator=g),
            strata.empty(7, device=dev).exponential_(2.0, generator=g), view,
            strata.empty(6, dtype=strata.int64, device=dev).random_(generator=g),
            strata.randperm(17, generator=g, device=dev),
            strata.multinomial(probs, 3, generator=g), strata.multinomial(probs, 40, True, generator=g),
            strata.normal(strata.zeros(2, 3, device=dev), strata.full((3,), 2.0, device=dev), generator=g),
        )]
    for a, b in zip(draw("cpu"), draw("cuda"), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)  # exact but for log/sin/cos's last bits


@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_same_numbers_different_seed_different(device: str) -> None:
    def draws(s: int) -> list[np.ndarray]:
        strata.manual_seed(s)
        return [_np(strata.rand(8, device=device)), _np(strata.randn(8, device=device)),
                _np(strata.randint(1000, (8,), device=device)), _np(strata.randperm(8, device=device)),
                _np(strata.multinomial(strata.ones(3, 6, device=device), 4))]
    a, b, c = draws(5), draws(5), draws(6)
    for x, y, z in zip(a, b, c, strict=True):
        np.testing.assert_array_equal(x, y)
        assert not np.array_equal(x, z)
    strata.manual_seed(5)
    first, second = strata.rand(8, device=device), strata.rand(8, device=device)  # the stream moves on
    assert not np.array_equal(_np(first), _np(second))


@pytest.mark.parametrize("device", DEVICES)
def test_the_offset_moves_by_whole_counters_and_calls_continue_the_stream(device: str) -> None:
    g = strata.Generator(device).manual_seed(3)
    a = strata.rand(3, generator=g, device=device)
    assert g.get_offset() == 4
    b = strata.rand(5, generator=g, device=device)
    assert g.get_offset() == 12
    strata.randn(3, dtype=strata.float64, generator=g, device=device)  # 2 pairs of draws, 2 words each
    assert g.get_offset() == 20
    whole = strata.rand(12, generator=strata.Generator(device).manual_seed(3), device=device)
    np.testing.assert_array_equal(_np(whole)[:3], _np(a))
    np.testing.assert_array_equal(_np(whole)[4:9], _np(b))


# ----------------------------------------------------------------------------------------- generators
def test_generator_state_seed_and_errors() -> None:
    g = strata.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == srandom.DEFAULT_SEED
    assert g.device == strata.device("cpu") and g.manual_seed(7) is g
    strata.rand(10, generator=g)
    state = g.get_state()
    assert state.dtype is strata.uint8 and state.shape == (16,)
    x = strata.rand(4, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(_np(strata.rand(4, generator=g)), _np(x))
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    assert strata.Generator().manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    _same_error(lambda m: m.manual_seed(2 ** 64))
    _same_error(lambda m: m.Generator().set_state(m.zeros(5)))
    _same_error(lambda m: m.Generator().set_state([1]))
    with pytest.raises(RuntimeError, match="size 16 but found the input RNG state size to be 5"):
        strata.Generator().set_state(strata.zeros(5, dtype=strata.uint8))


def test_manual_seed_seeds_every_default_generator() -> None:
    g = strata.manual_seed(123)
    assert g is strata.default_generator and strata.initial_seed() == 123
    assert srandom.cuda_initial_seed() == 123
    a = strata.rand(4, device="cuda")
    srandom.cuda_manual_seed(123)
    np.testing.assert_array_equal(_np(strata.rand(4, device="cuda")), _np(a))
    srandom.cuda_manual_seed_all(9)
    assert srandom.cuda_default_generator(0).initial_seed() == 9 and strata.initial_seed() == 123
    state = srandom.cuda_get_rng_state()
    b = strata.randn(3, device="cuda")
    srandom.cuda_set_rng_state(state)
    np.testing.assert_array_equal(_np(strata.randn(3, device="cuda")), _np(b))
    st = strata.get_rng_state()
    c = strata.rand(3)
    strata.set_rng_state(st)
    np.testing.assert_array_equal(_np(strata.rand(3)), _np(c))
    s = strata.seed()
    assert strata.initial_seed() == s == srandom.cuda_initial_seed()


@pytest.mark.parametrize("device", DEVICES)
def test_a_private_generator_leaves_the_default_stream_alone(device: str) -> None:
    strata.manual_seed(0)
    want = _np(strata.rand(6, device=device))
    strata.manual_seed(0)
    g = strata.Generator(device).manual_seed(0)
    mine = _np(strata.rand(6, generator=g, device=device))
    strata.randn(50, generator=g, device=device)
    np.testing.assert_array_equal(_np(strata.rand(6, device=device)), want)
    np.testing.assert_array_equal(mine, want)  # a fresh generator with the same seed gives the same stream


def test_generator_device_must_match() -> None:
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        strata.rand(3, generator=strata.Generator("cuda"))
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        strata.randn(3, generator=strata.Generator(), device="cuda")
    with pytest.raises(TypeError, match="must be torch.Generator, not int"):
        strata.rand(3, generator=5)


# ----------------------------------------------------------------------------------------- distributions
@pytest.mark.parametrize("device", DEVICES)
def test_continuous_distributions_pass_ks_tests(device: str) -> None:
    g = strata.Generator(device).manual_seed(77)
    n = 4000
    cases = [
        (strata.rand(n, generator=g, device=device), stats.uniform()),
        (strata.empty(n, device=device).uniform_(-2.0, 3.0, generator=g), stats.uniform(-2.0, 5.0)),
        (strata.randn(n, dtype=strata.float64, generator=g, device=device), stats.norm()),
        (strata.randn(n, generator=g, device=device), stats.norm()),
        (strata.normal(1.5, 0.5, (n,), generator=g, device=device), stats.norm(1.5, 0.5)),
        (strata.empty(n, device=device).exponential_(3.0, generator=g), stats.expon(scale=1 / 3.0)),
        (strata.empty(n, dtype=strata.float64, device=device).normal_(-1.0, 2.0, generator=g), stats.norm(-1, 2)),
    ]
    for x, dist in cases:
        assert stats.kstest(_np(x), dist.cdf).pvalue > 1e-3
    u = _np(strata.rand(n, dtype=strata.float16, generator=g, device=device))
    assert ((u >= 0) & (u < 1)).all() and abs(u.mean() - 0.5) < 0.03


@pytest.mark.parametrize("device", DEVICES)
def test_discrete_distributions_pass_chi_square_tests(device: str) -> None:
    g = strata.Generator(device).manual_seed(5)
    x = _np(strata.randint(-3, 5, (4000,), generator=g, device=device))
    assert x.min() >= -3 and x.max() <= 4
    assert stats.chisquare(np.bincount(x + 3, minlength=8)).pvalue > 1e-3
    w = np.array([0.1, 0.0, 0.4, 0.2, 0.3])
    s = _np(strata.multinomial(strata.tensor(w, dtype=strata.float32, device=device), 4000, True, generator=g))
    counts = np.bincount(s, minlength=5)
    assert counts[1] == 0
    assert stats.chisquare(counts[w > 0], 4000 * w[w > 0]).pvalue > 1e-3
    b = _np(strata.empty(4000, device=device).bernoulli_(0.3, generator=g))
    assert set(np.unique(b)) <= {0.0, 1.0} and stats.binomtest(int(b.sum()), 4000, 0.3).pvalue > 1e-3
    big = _np(strata.randint(0, 3 * 2 ** 40, (2000,), generator=g, device=device))  # two words per value
    assert big.min() >= 0 and big.max() < 3 * 2 ** 40
    assert stats.kstest(big / (3 * 2 ** 40), "uniform").pvalue > 1e-3


@pytest.mark.parametrize("device", DEVICES)
def test_multinomial_rules(device: str) -> None:
    g = strata.Generator(device).manual_seed(8)
    p = strata.tensor([[0.0, 1.0, 0.0, 2.0, 3.0, 0.0, 1.0], [5.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]], device=device)
    for _ in range(5):
        s = _np(strata.multinomial(p, 2, generator=g))
        assert s.shape == (2, 2) and all(len(set(r)) == 2 for r in s)
        assert all(_np(p)[i, j] > 0 for i in range(2) for j in s[i])
    s = _np(strata.multinomial(p[0], 4, generator=g))
    assert sorted(s) == [1, 3, 4, 6]  # all the positive categories, none twice
    r = _np(strata.multinomial(p, 300, replacement=True, generator=g))
    assert r.shape == (2, 300) and all(_np(p)[i, j] > 0 for i in range(2) for j in r[i])
    one = strata.multinomial(p, 1, generator=g)
    assert one.shape == (2, 1) and one.dtype is strata.int64
    half = strata.multinomial(strata.tensor([0.0, 1.0, 1.0], dtype=strata.float16, device=device), 2, generator=g)
    assert sorted(_np(half)) == [1, 2]
    m = p.t().contiguous().t()  # non-contiguous rows
    assert set(_np(strata.multinomial(m, 50, True, generator=g))[1]) <= {0, 3}
    assert strata.multinomial(strata.ones(0, 3, device=device), 1).shape == (0, 1)
    # a rank larger than the positive categories gives the zero ones last, as PyTorch's top-k does
    assert sorted(_np(strata.multinomial(strata.tensor([1.0, 0.0, 0.0], device=device), 3, generator=g))) == [0, 1, 2]


@pytest.mark.parametrize("device", DEVICES)
def test_randperm_and_random_ranges(device: str) -> None:
    g = strata.Generator(device).manual_seed(1)
    for n in (0, 1, 5, 300):
        p = strata.randperm(n, generator=g, device=device)
        assert p.dtype is strata.int64 and sorted(_np(p).tolist()) == list(range(n))
    perms = {tuple(_np(strata.randperm(3, generator=g, device=device))) for _ in range(40)}
    assert len(perms) == 6
    f = strata.randperm(6, dtype=strata.float32, generator=g, device=device)
    assert f.dtype is strata.float32 and sorted(_np(f)) == list(range(6))
    if device == "cpu":  # (the same kernel template on "cuda"; one dtype there keeps the suite's JIT time down)
        assert set(_np(strata.empty(200, dtype=strata.bool, device=device).random_(generator=g))) == {0, 1}
        u8 = _np(strata.empty(500, dtype=strata.uint8, device=device).random_(generator=g))
        assert u8.max() > 200 and u8.min() < 50
        b = strata.randint(0, 2, (50,), dtype=strata.bool, generator=g, device=device)
        assert set(_np(b)) == {0, 1}
    r = _np(strata.empty(300, dtype=strata.int64, device=device).random_(10, generator=g))
    assert set(r) == set(range(10))
    r = _np(strata.empty(300, dtype=strata.float32, device=device).random_(-4, 3, generator=g))
    assert set(r) == set(range(-4, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_fills_only_the_view(device: str) -> None:
    base = strata.zeros(4, 5, device=device)
    base[:, 1:3].normal_(generator=strata.Generator(device).manual_seed(2))
    v = _np(base)
    assert (v[:, [0, 3, 4]] == 0).all() and (v[:, 1:3] != 0).all()
    t = strata.full((4, 3), 0.5, device=device).t()
    out = strata.empty(4, 3, device=device).t().bernoulli_(t, generator=strata.Generator(device).manual_seed(4))
    assert out.shape == (3, 4) and set(np.unique(_np(out))) <= {0.0, 1.0}


# ----------------------------------------------------------------------------------------- PyTorch's surface
def _check(fn: Callable[[Any], Any], device: str = "cpu") -> None:
    """fn(strata) has the shape, dtype and requires_grad of fn(torch), on `device`."""
    ref, ours = fn(torch), fn(strata)
    assert tuple(ours.shape) == tuple(ref.shape) and ours.dtype is to_strata_dtype(ref.dtype)
    assert ours.requires_grad == ref.requires_grad and ours.device.type == device


def test_shapes_and_dtypes_follow_pytorch() -> None:
    for fn in [
        lambda m: m.rand(2, 3), lambda m: m.rand((2, 3), dtype=m.float64), lambda m: m.rand([4], requires_grad=True),
        lambda m: m.randn(2, 1, 3, dtype=m.float16), lambda m: m.randint(5, (3,)),
        lambda m: m.randint(2, 5, (3, 2), dtype=m.int32), lambda m: m.randint(low=2, high=5, size=(3,)),
        lambda m: m.randint(2, high=5, size=(3,)), lambda m: m.randint(0, 9, (2,), dtype=m.float32, requires_grad=True),
        lambda m: m.randperm(4, dtype=m.float64), lambda m: m.rand_like(m.zeros(2, 2, dtype=m.float16)),
        lambda m: m.randn_like(m.zeros(3), dtype=m.float64), lambda m: m.randint_like(m.zeros(2), 5),
        lambda m: m.randint_like(m.zeros(2, dtype=m.int32), 3, 5), lambda m: m.randint_like(m.zeros(2), low=3, high=5),
        lambda m: m.normal(m.zeros(3), m.ones(2, 3)), lambda m: m.normal(m.zeros(3, dtype=m.float64), 2.0),
        lambda m: m.normal(0.0, m.ones(2, dtype=m.float16)), lambda m: m.normal(0.0, 1.0, (2, 2), dtype=m.float64),
        lambda m: m.bernoulli(m.full((2, 2), 0.5, dtype=m.float64)), lambda m: m.bernoulli(m.zeros(3), 0.3),
        lambda m: m.multinomial(m.ones(4), 2), lambda m: m.multinomial(m.ones(2, 4), 5, replacement=True),
        lambda m: m.zeros(3, dtype=m.int64).bernoulli_(0.5), lambda m: m.ones(3).multinomial(2),
    ]:
        _check(fn)


def test_factories_place_on_cuda() -> None:
    # the shape/dtype logic is device-independent (above); here: the device and a few kernel dtypes
    for fn in [lambda m: m.rand(2, 3, **_c(m)), lambda m: m.randn(4, requires_grad=True, **_c(m)),
               lambda m: m.randint(2, 5, (3, 2), **_c(m)), lambda m: m.randint(0, 9, (2,), dtype=m.float32, **_c(m)),
               lambda m: m.randperm(4, dtype=m.float32, **_c(m)), lambda m: m.randn_like(m.zeros(3, **_c(m))),
               lambda m: m.randint_like(m.zeros(2, **_c(m)), 5), lambda m: m.normal(0.0, 1.0, (2, 2), **_c(m)),
               lambda m: m.normal(m.zeros(3, **_c(m)), 2.0), lambda m: m.bernoulli(m.zeros(3, **_c(m)), 0.3),
               lambda m: m.ones(2, 4, **_c(m)).multinomial(5, True)]:
        _check(fn, "cuda")


def _c(m: Any) -> dict[str, str]:
    return {"device": "cuda"} if m is strata else {}


def test_errors_follow_pytorch() -> None:
    for fn in [
        lambda m: m.rand(2, dtype=m.int64),
        lambda m: m.randn(2, dtype=m.int32),
        lambda m: m.rand(2, -1),
        lambda m: m.randint(5, 2, (3,)),
        lambda m: m.randint(0, 5, (3,), requires_grad=True),
        lambda m: m.randint(0, 300, (3,), dtype=m.uint8),
        lambda m: m.randint(-1, 5, (3,), dtype=m.uint8),
        lambda m: m.randint(0, 2 ** 40, (3,), dtype=m.int32),
        lambda m: m.randperm(-1),
        lambda m: m.randperm(300, dtype=m.uint8),
        lambda m: m.randperm(5, requires_grad=True),
        lambda m: m.randperm(5, dtype=m.bool),
        lambda m: m.empty(3).uniform_(2, 1),
        lambda m: m.empty(3, dtype=m.int64).uniform_(0, 1),
        lambda m: m.empty(3).normal_(0, -1),
        lambda m: m.empty(3).bernoulli_(1.5),
        lambda m: m.empty(3).bernoulli_(m.tensor([0.5, 2.0, -1.0])),
        lambda m: m.bernoulli(m.tensor([0.5, 2.0])),
        lambda m: m.bernoulli(m.tensor([0, 1])),
        lambda m: m.empty(3).exponential_(0),
        lambda m: m.empty(3, dtype=m.int64).exponential_(),
        lambda m: m.empty(3, dtype=m.uint8).random_(0, 300),
        lambda m: m.normal(m.zeros(3), -1.0),
        lambda m: m.normal(m.zeros(3), -m.ones(3)),
        lambda m: m.normal(m.zeros(3), m.ones(4)),
        lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0),
        lambda m: m.randint(5, 3),
        lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3),
        lambda m: m.multinomial(m.tensor([1.0, -2.0]), 1),
        lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 2),
        lambda m: m.multinomial(m.tensor([1.0, -2.0]), 2, True),
        lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 2, True),
        lambda m: m.multinomial(m.tensor([1.0, float("inf")]), 2, True),
        lambda m: m.multinomial(m.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
        lambda m: m.multinomial(m.tensor([[1.0, 1.0], [0.0, 0.0]]), 2, True),
        lambda m: m.multinomial(m.tensor([1.0, 1.0]), 0),
        lambda m: m.multinomial(m.tensor(1.0), 1),
        lambda m: m.multinomial(m.ones(0), 1),
        lambda m: m.multinomial(m.tensor([1, 2]), 1),
        lambda m: m.multinomial(m.tensor([1.0, 2.0]), 2.0),
    ]:
        try:
            _same_error(fn)
        except AssertionError as e:
            raise AssertionError(f"{e}\n  in {fn.__code__.co_firstlineno}") from e


def test_multinomial_fast_path_errors_on_cuda() -> None:
    for fn in [lambda m, d: m.multinomial(m.tensor([1.0, -2.0], device=d), 2),
               lambda m, d: m.multinomial(m.tensor([[1.0, 1.0], [0.0, 0.0]], device=d), 1),
               lambda m, d: m.normal(m.zeros(3, device=d), -m.ones(3, device=d))]:
        with pytest.raises(RuntimeError) as ref:
            fn(torch, "cpu")
        with pytest.raises(RuntimeError) as ours:
            fn(strata, "cuda")
        assert str(ours.value) == str(ref.value)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_through_draws_are_zero_as_in_pytorch(device: str) -> None:
    for lib, dev in ((torch, "cpu"), (strata, device)):
        m = lib.zeros(3, device=dev, requires_grad=True)
        s = lib.ones(3, device=dev, requires_grad=True)
        y = lib.normal(m, s)
        assert type(y.grad_fn).__name__ == "NormalBackward3" if lib is torch else y.grad_fn.name() == "NormalBackward3"
        (y * 2).sum().backward()
        np.testing.assert_array_equal(as_numpy(m.grad), np.zeros(3))
        np.testing.assert_array_equal(as_numpy(s.grad), np.zeros(3))
        p = lib.full((2,), 0.5, device=dev, requires_grad=True)
        lib.bernoulli(p).sum().backward()
        np.testing.assert_array_equal(as_numpy(p.grad), np.zeros(2))
        x = lib.ones(3, device=dev, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            x.uniform_()
        y = x * 3
        y.uniform_()
        name = type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name()
        assert name == "UniformBackward0"
        y.sum().backward()
        np.testing.assert_array_equal(as_numpy(x.grad), np.zeros(3))
    r = strata.rand(2, 2, device=device, requires_grad=True)
    assert r.is_leaf and r.requires_grad and r.grad_fn is None


def test_cuda_draws_do_not_read_the_device() -> None:
    ctx = strata.cuda.Device(0).context
    g = strata.Generator("cuda").manual_seed(0)
    x = strata.empty(3, 4, device="cuda")
    p = strata.full((4,), 0.5, device="cuda")
    w = strata.ones(2, 5, device="cuda")

    def draws() -> None:
        strata.rand(6, generator=g, device="cuda")
        strata.randn(6, generator=g, device="cuda")
        strata.randint(0, 9, (6,), generator=g, device="cuda")
        x.uniform_(generator=g).normal_(generator=g).bernoulli_(p, generator=g)
        strata.randperm(6, generator=g, device="cuda")
        strata.multinomial(w, 7, True, generator=g)
    draws()  # loads the kernels
    before = ctx.host_syncs
    draws()
    assert ctx.host_syncs == before
    strata.multinomial(w, 2, generator=g)  # the checked path reads one flag per row, as PyTorch's reads two
    assert ctx.host_syncs == before + 1
