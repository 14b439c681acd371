"""cuRAND's host API for whole CUDA programs: what strata's `libcurand.so.10` (strata/cuda/bridge/native/
curand.c) asks the runtime process for, served by strata.libs.rand. Importing this module registers the
handlers with the bridge (`strata run` does).

Every pseudo-random generator type draws Philox4x32-10 numbers (strata's generator), so a program gets
the same kind of values cuRAND gives, though not NVIDIA's exact sequences for XORWOW or MRG32k3a;
quasi-random types are refused with CURAND_STATUS_TYPE_ERROR. Replies carry the curandStatus_t.
"""

from __future__ import annotations

import struct

import numpy as np

import strata.cuda as cuda
from strata.cuda.bridge.protocol import Op
from strata.cuda.bridge.server import register_handler
from strata.libs.common import LibraryError
from strata.libs.rand.philox import Generator, create_generator, generate, normal, uniform

STATUS = {"CURAND_STATUS_SUCCESS": 0, "CURAND_STATUS_NOT_INITIALIZED": 101, "CURAND_STATUS_TYPE_ERROR": 103,
          "CURAND_STATUS_OUT_OF_RANGE": 104, "CURAND_STATUS_LENGTH_NOT_MULTIPLE": 105,
          "CURAND_STATUS_LAUNCH_FAILURE": 201}
PSEUDO_TYPES = range(100, 200)  # CURAND_RNG_PSEUDO_DEFAULT (100) .. PHILOX4_32_10 (161)
# what CURAND_GENERATE draws: 0 raw uint32, 1 uniform float, 2 uniform double, 3 normal float
_KINDS = {0: np.uint32, 1: np.float32, 2: np.float64, 3: np.float32}

_generators: dict[int, Generator] = {}
_next = [0x1000]


def _status(name: str) -> bytes:
    return struct.pack("<i", STATUS.get(name, 999))


def _create(body: bytes) -> bytes:
    (rng_type,) = struct.unpack("<i", body)
    if rng_type not in PSEUDO_TYPES:
        return _status("CURAND_STATUS_TYPE_ERROR") + struct.pack("<Q", 0)
    _next[0] += 1
    _generators[_next[0]] = create_generator(seed=0)
    return _status("CURAND_STATUS_SUCCESS") + struct.pack("<Q", _next[0])


def _set(body: bytes) -> bytes:
    handle, what, value = struct.unpack("<QQQ", body)
    gen = _generators.get(handle)
    if gen is None:
        return _status("CURAND_STATUS_NOT_INITIALIZED")
    if what == 0:  # seed: a new sequence from its start, as curandSetPseudoRandomGeneratorSeed does
        _generators[handle] = create_generator(seed=value, offset=0)
    else:
        gen.offset = value
    return _status("CURAND_STATUS_SUCCESS")


def _generate(body: bytes) -> bytes:
    handle, kind, ptr, n = struct.unpack_from("<QQQQ", body)
    mean, stddev = struct.unpack_from("<dd", body, 32)
    gen = _generators.get(handle)
    if gen is None:
        return _status("CURAND_STATUS_NOT_INITIALIZED")
    if kind == 3 and n % 2:
        return _status("CURAND_STATUS_LENGTH_NOT_MULTIPLE")  # cuRAND draws normals in pairs
    if kind not in _KINDS:
        return _status("CURAND_STATUS_TYPE_ERROR")
    out = cuda.DeviceArray.view(ptr, (n,), _KINDS[kind])
    try:
        if kind == 0:
            generate(gen, out)
        elif kind == 3:
            normal(gen, out, mean, stddev)
        else:
            uniform(gen, out)
    except LibraryError as e:
        return _status(e.status)
    return _status("CURAND_STATUS_SUCCESS")


def _destroy(body: bytes) -> bytes:
    (handle,) = struct.unpack("<Q", body)
    return _status("CURAND_STATUS_SUCCESS" if _generators.pop(handle, None) else "CURAND_STATUS_NOT_INITIALIZED")


register_handler(Op.CURAND_CREATE, _create)
register_handler(Op.CURAND_SET, _set)
register_handler(Op.CURAND_GENERATE, _generate)
register_handler(Op.CURAND_DESTROY, _destroy)
