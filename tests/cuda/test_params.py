"""Launch arguments packed by the fast path (cuda/params.py) are byte for byte what the checked path packs,
and whatever the fast path declines still packs or raises as the checked path does. The oracle is the checked
path itself, one parameter at a time, padded by hand to each parameter's alignment."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
from strata.cuda import params as packing
from strata.hw.ptx.ir import Param

TYPES = ["u8", "s8", "u16", "s16", "f16", "u32", "s32", "b32", "f32", "u64", "s64", "b64", "f64"]
SIZES = {"8": 1, "16": 2, "32": 4, "64": 8}


def _param(i: int, t: str) -> Param:
    size = SIZES[t[1:]]
    return Param(f"k_param_{i}", t, size, size)


def _checked(params: list[Param], args: list[Any]) -> bytes:
    buf = bytearray()
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        buf += bytes(-len(buf) % p.align)
        buf += packing._pack_one("k", i, p, a)
    return bytes(buf)


def _values(dev: Any) -> list[Any]:
    ints = [0, 1, -1] + [v for bits in (8, 16, 32, 64)  # each size's edges, and one past each
                         for v in (2**bits - 1, 2**bits, -(2 ** (bits - 1)), -(2 ** (bits - 1)) - 1)]
    scalars = [np.dtype(d).type(v) for d in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                             np.uint64) for v in (0, 5, np.iinfo(d).max, np.iinfo(d).min)]
    floats = [np.float16(1.5), np.float32(-2.25), np.float64(3.0e300), np.float32("nan"),
              np.array([0x7FA00001], np.uint32).view(np.float32)[0]]  # a signaling NaN with a payload: bits as they are
    return ints + scalars + floats + [1.5, True, np.bool_(True), dev, "x"]


def test_every_argument_packs_as_the_checked_path_packs_it() -> None:
    dev = cuda.to_device(np.zeros(4, np.float32))
    values = _values(dev)
    fast = 0
    for t, a in itertools.product(TYPES, values):
        params = [_param(0, "u8"), _param(1, t)]  # (after one byte: the parameter's own alignment pads it)
        args = [np.uint8(7), a]
        try:
            want: bytes | type[Exception] = _checked(params, args)
        except (TypeError, cuda.CudaError) as e:
            want = type(e)
        got_fast = packing._pack_fast(params, args)
        fast += got_fast is not None
        if isinstance(want, bytes):
            assert packing.pack_arguments("k", params, args) == want, (t, a)
            assert got_fast in (None, want), (t, a)
        else:
            assert got_fast is None, (t, a)  # the fast path never accepts what the checked path refuses
            with pytest.raises(want):
                packing.pack_arguments("k", params, args)
    assert fast > 100  # (the fast path took most of them)


def test_a_freed_array_is_refused_on_the_fast_path_too() -> None:
    dev = cuda.to_device(np.zeros(4, np.float32))
    params = [_param(0, "u64"), _param(1, "s32")]
    assert packing._pack_fast(params, [dev, 3]) is not None
    dev.free()
    with pytest.raises(cuda.CudaError, match="was freed"):
        packing.pack_arguments("k", params, [dev, 3])


def test_a_struct_by_value_goes_the_checked_way() -> None:
    params = [Param("k_param_0", "b8", 12, 4), _param(1, "u32")]
    raw = np.arange(3, dtype=np.int32).tobytes()
    assert packing._pack_fast(params, [raw, 9]) is None
    assert packing.pack_arguments("k", params, [raw, 9]) == raw + (9).to_bytes(4, "little")
