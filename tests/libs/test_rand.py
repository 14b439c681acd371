"""strata.libs.rand: Philox4x32-10 on the virtual GPU against the published known-answer vectors and an
independent NumPy implementation of the algorithm."""

from __future__ import annotations

import numpy as np
import pytest

import strata.cuda as cuda
from strata.libs import rand
from strata.libs.common import LibraryError

# Random123's kat_vectors, philox4x32 10: counter (4 words), key (2 words) -> output (4 words)
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox_numpy(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 written from the paper with uint64 arithmetic, vectorised over rows."""
    c = counters.astype(np.uint64)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[:, 0], np.uint64(0xCD9E8D57) * c[:, 2]
        c = np.stack([(p1 >> np.uint64(32)) ^ c[:, 1] ^ k0, p1 & mask, (p0 >> np.uint64(32)) ^ c[:, 3] ^ k1,
                      p0 & mask], axis=1)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask, (k1 + np.uint64(0xBB67AE85)) & mask
    return c.astype(np.uint32)


def stream_numpy(seed: int, offset: int, n: int) -> np.ndarray:
    """Values offset..offset+n-1 of a generator, by the documented counter mapping."""
    first, last = offset // 4, (offset + n - 1) // 4
    q = np.arange(first, last + 1, dtype=np.uint64)
    counters = np.stack([q & np.uint64(0xFFFFFFFF), q >> np.uint64(32), 0 * q, 0 * q], axis=1)
    words = philox_numpy(counters, (seed & 0xFFFFFFFF, seed >> 32)).reshape(-1)
    return words[offset - 4 * first: offset - 4 * first + n]


@pytest.mark.parametrize(("ctr", "key", "want"), KAT)
def test_known_answer_vectors(ctr: tuple[int, ...], key: tuple[int, int], want: tuple[int, ...]) -> None:
    counters = cuda.to_device(np.array([ctr], np.uint32))
    out = cuda.empty((1, 4), np.uint32)
    rand.philox4x32_10(counters, key, out)
    assert out.get()[0].tolist() == list(want)
    assert philox_numpy(np.array([ctr], np.uint32), key)[0].tolist() == list(want)  # the oracle agrees too


def test_raw_stream_matches_the_reference_and_continues_across_calls() -> None:
    seed = 0x0123456789ABCDEF
    gen = rand.create_generator(seed, offset=6)
    a, b = cuda.empty(1001, np.uint32), cuda.empty(37, np.uint32)
    rand.generate(gen, a)
    rand.generate(gen, b)
    assert gen.offset == 6 + 1001 + 37
    whole = stream_numpy(seed, 6, 1038)
    np.testing.assert_array_equal(np.concatenate([a.get(), b.get()]), whole)
    again = cuda.empty(1038, np.uint32)
    rand.generate(rand.create_generator(seed, 6), again)  # (seed, offset) reproduces
    np.testing.assert_array_equal(again.get(), whole)


def test_uniform_float32_and_float64() -> None:
    gen = rand.create_generator(7)
    x = cuda.empty(4096, np.float32)
    rand.uniform(gen, x)
    raw = stream_numpy(7, 0, 4096)
    want = (raw.astype(np.float32) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33))
    np.testing.assert_array_equal(x.get(), want)
    v = x.get()
    assert ((v > 0) & (v <= 1)).all() and abs(v.mean() - 0.5) < 0.02
    d = cuda.empty(2048, np.float64)
    rand.uniform(rand.create_generator(7), d)
    dv = d.get()
    assert ((dv > 0) & (dv <= 1)).all() and abs(dv.mean() - 0.5) < 0.03 and len(np.unique(dv)) == 2048


def test_normal_moments_and_pairs() -> None:
    gen = rand.create_generator(99)
    x = cuda.empty(20001, np.float32)  # odd: draws one extra value
    rand.normal(gen, x, mean=3.0, stddev=2.0)
    assert gen.offset == 20002
    v = x.get().astype(np.float64)
    assert abs(v.mean() - 3.0) < 0.06 and abs(v.std() - 2.0) < 0.06
    raw = stream_numpy(99, 0, 4).astype(np.float64) * 2.0 ** -32 + 2.0 ** -33
    r, t = np.sqrt(-2 * np.log(raw[0])), 2 * np.pi * raw[1]
    np.testing.assert_allclose(v[:2], [3 + 2 * r * np.cos(t), 3 + 2 * r * np.sin(t)], rtol=1e-5)


def test_bernoulli() -> None:
    out = cuda.empty(50000, np.uint8)
    rand.bernoulli(rand.create_generator(5), out, 0.3)
    v = out.get()
    assert set(np.unique(v)) <= {0, 1} and abs(v.mean() - 0.3) < 0.01
    raw = stream_numpy(5, 0, 50000).astype(np.float32) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)
    np.testing.assert_array_equal(v, (raw <= np.float32(0.3)).astype(np.uint8))


def test_bad_arguments() -> None:
    with pytest.raises(LibraryError) as info:
        rand.uniform(rand.create_generator(1), cuda.empty(4, np.int32))
    assert info.value.status == "CURAND_STATUS_TYPE_ERROR" and "float32 or float64" in str(info.value)
    with pytest.raises(LibraryError, match=r"p must be in \[0, 1\]"):
        rand.bernoulli(rand.create_generator(1), cuda.empty(4, np.uint8), 1.5)
    with pytest.raises(LibraryError, match="64 bits"):
        rand.create_generator(1 << 64)
