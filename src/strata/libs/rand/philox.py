"""Philox4x32-10 (Salmon et al., 'Parallel random numbers: as easy as 1, 2, 3', SC'11), the generator
behind cuRAND's CURAND_RNG_PSEUDO_PHILOX4_32_10 and rocRAND's philox4x32_10, on the virtual GPU.

How values map to counters (strata's definition, modelled on cuRAND's): the key is the 64-bit seed
(low word first); value i of a generator at `offset` comes from the 128-bit counter
(offset + i) // 4, output word (offset + i) % 4. Floats: uniform = x * 2^-32 + 2^-33, in (0, 1] like
curand_uniform; normal = Box-Muller on consecutive pairs of uniforms, like curand_normal; bernoulli =
(uniform < p). The generator's offset advances by the number of values drawn, so consecutive calls
continue the stream, and a (seed, offset) pair always reproduces the same values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, LibraryError, library_call, require

SOURCE = r"""
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

struct u4 { unsigned x, y, z, w; };

__device__ __forceinline__ u4 philox_round(u4 c, unsigned k0, unsigned k1) {
    unsigned hi0 = __umulhi(PHILOX_M0, c.x), lo0 = PHILOX_M0 * c.x;
    unsigned hi1 = __umulhi(PHILOX_M1, c.z), lo1 = PHILOX_M1 * c.z;
    u4 r = { hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0 };
    return r;
}

__device__ u4 philox4x32_10(u4 c, unsigned k0, unsigned k1) {
    #pragma unroll
    for (int i = 0; i < 10; ++i) {
        c = philox_round(c, k0, k1);
        k0 += PHILOX_W0; k1 += PHILOX_W1;
    }
    return c;
}

// counter number q (128-bit: q_lo + 2^64 q_hi)
__device__ u4 block_of(unsigned long long q_lo, unsigned long long q_hi, unsigned k0, unsigned k1) {
    u4 c = { (unsigned)q_lo, (unsigned)(q_lo >> 32), (unsigned)q_hi, (unsigned)(q_hi >> 32) };
    return philox4x32_10(c, k0, k1);
}

__device__ unsigned word(u4 r, int j) { return j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w; }

// value i of the stream starting at `offset` (a 64-bit count of values)
__device__ unsigned raw_at(unsigned long long offset, unsigned long long i, unsigned k0, unsigned k1) {
    unsigned long long v = offset + i;
    return word(block_of(v >> 2, 0ull, k0, k1), (int)(v & 3));
}

__device__ float to_uniform(unsigned x) { return x * 2.3283064365386963e-10f + 1.1641532182693481e-10f; }

extern "C" __global__ void philox_raw(const unsigned* counters, unsigned* out, unsigned k0, unsigned k1, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u4 c = { counters[4 * i], counters[4 * i + 1], counters[4 * i + 2], counters[4 * i + 3] };
    u4 r = philox4x32_10(c, k0, k1);
    out[4 * i] = r.x; out[4 * i + 1] = r.y; out[4 * i + 2] = r.z; out[4 * i + 3] = r.w;
}

extern "C" __global__ void generate_u32(unsigned* out, unsigned long long offset, unsigned k0, unsigned k1,
                                        long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = raw_at(offset, i, k0, k1);
}

extern "C" __global__ void uniform_f32(float* out, unsigned long long offset, unsigned k0, unsigned k1, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = to_uniform(raw_at(offset, i, k0, k1));
}

extern "C" __global__ void uniform_f64(double* out, unsigned long long offset, unsigned k0, unsigned k1, long long n) {
    // like curand_uniform_double: two 32-bit words make 53 random bits, in (0, 1]
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = raw_at(offset, 2 * i, k0, k1), b = raw_at(offset, 2 * i + 1, k0, k1);
    unsigned long long z = ((unsigned long long)a ^ ((unsigned long long)b << 21)) & ((1ull << 53) - 1);
    out[i] = z * 1.1102230246251565e-16 + 5.551115123125783e-17;
}

extern "C" __global__ void normal_f32(float* out, unsigned long long offset, unsigned k0, unsigned k1, long long n,
                                      float mean, float stddev) {
    // Box-Muller on the pair (2j, 2j+1): value 2j gets the cosine, 2j+1 the sine
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long j = i >> 1;
    float u1 = to_uniform(raw_at(offset, 2 * j, k0, k1)), u2 = to_uniform(raw_at(offset, 2 * j + 1, k0, k1));
    float r = sqrtf(-2.0f * logf(u1)), t = 6.2831853071795865f * u2;
    out[i] = mean + stddev * r * ((i & 1) ? sinf(t) : cosf(t));
}

extern "C" __global__ void bernoulli_u8(unsigned char* out, unsigned long long offset, unsigned k0, unsigned k1,
                                        long long n, float p) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = to_uniform(raw_at(offset, i, k0, k1)) <= p ? 1 : 0;
}
"""

KERNELS = KernelSet("rand", SOURCE)
BLOCK = 256


@dataclass
class Generator:
    """A Philox4x32-10 generator (curandGenerator_t): the seed is the key, `offset` counts values drawn."""

    seed: int
    offset: int = 0

    @property
    def key(self) -> tuple[int, int]:
        return self.seed & 0xFFFFFFFF, (self.seed >> 32) & 0xFFFFFFFF


def create_generator(seed: int = 0, offset: int = 0) -> Generator:
    """curandCreateGenerator(CURAND_RNG_PSEUDO_PHILOX4_32_10) + SetPseudoRandomGeneratorSeed + SetGeneratorOffset."""
    require(0 <= seed < 1 << 64, "CURAND_STATUS_OUT_OF_RANGE", f"[create_generator] seed must fit 64 bits, got {seed}")
    require(offset >= 0, "CURAND_STATUS_OUT_OF_RANGE", f"[create_generator] offset must be >= 0, got {offset}")
    return Generator(seed, offset)


def generate(gen: Generator, out: DeviceArray) -> None:
    """curandGenerate: raw 32-bit values into a uint32 array."""
    _check(out, (np.uint32,), "generate")
    _run("rand.generate", "curandGenerate", "rocrand_generate", "generate_u32", gen, out, out.size, ())


def uniform(gen: Generator, out: DeviceArray) -> None:
    """curandGenerateUniform / UniformDouble: values in (0, 1] into a float32 or float64 array."""
    _check(out, (np.float32, np.float64), "uniform")
    if out.dtype == np.float64:
        _run("rand.uniform", "curandGenerateUniformDouble", "rocrand_generate_uniform_double", "uniform_f64", gen,
             out, 2 * out.size, ())
    else:
        _run("rand.uniform", "curandGenerateUniform", "rocrand_generate_uniform", "uniform_f32", gen, out,
             out.size, ())


def normal(gen: Generator, out: DeviceArray, mean: float = 0.0, stddev: float = 1.0) -> None:
    """curandGenerateNormal: Box-Muller normals into a float32 array (an odd count draws one extra value,
    as cuRAND's pairs do)."""
    _check(out, (np.float32,), "normal")
    require(stddev >= 0, "CURAND_STATUS_OUT_OF_RANGE", f"[normal] stddev must be >= 0, got {stddev}")
    _run("rand.normal", "curandGenerateNormal", "rocrand_generate_normal", "normal_f32", gen, out,
         out.size + out.size % 2, (np.float32(mean), np.float32(stddev)))


def bernoulli(gen: Generator, out: DeviceArray, p: float) -> None:
    """0/1 draws with probability `p` into a uint8 array (the role of curand's Bernoulli sampling)."""
    _check(out, (np.uint8,), "bernoulli")
    require(0.0 <= p <= 1.0, "CURAND_STATUS_OUT_OF_RANGE", f"[bernoulli] p must be in [0, 1], got {p}")
    _run("rand.bernoulli", "curand_uniform (<= p)", "rocrand_uniform (<= p)", "bernoulli_u8", gen, out, out.size,
         (np.float32(p),))


def philox4x32_10(counters: DeviceArray, key: tuple[int, int], out: DeviceArray) -> None:
    """The bare block function on the device: out[i, :] = Philox4x32-10(counters[i, :], key), for
    (n, 4) uint32 arrays (what the published known-answer tests check)."""
    for a, what in ((counters, "counters"), (out, "out")):
        _check(a, (np.uint32,), "philox4x32_10")
        require(a.ndim == 2 and a.shape[1] == 4, "CURAND_STATUS_LENGTH_NOT_MULTIPLE",
                f"[philox4x32_10] {what} must have shape (n, 4), got {a.shape}")
    require(counters.shape == out.shape, "CURAND_STATUS_LENGTH_NOT_MULTIPLE",
            f"[philox4x32_10] counters {counters.shape} and out {out.shape} differ")
    n = counters.shape[0]
    with library_call("rand.philox4x32_10", cuda_name="curand Philox4_32_10 (device API)",
                      rocm_name="rocrand philox4x32_10", n=n, kernel="philox_raw"):
        if n:
            KERNELS.get("philox_raw")(-(-n // BLOCK), BLOCK, (counters, out, np.uint32(key[0]), np.uint32(key[1]),
                                                              np.int32(n)))


def _check(out: DeviceArray, dtypes: tuple[type, ...], op: str) -> None:
    if not isinstance(out, DeviceArray):
        raise LibraryError("CURAND_STATUS_TYPE_ERROR", f"[{op}] out must be a DeviceArray, got {type(out).__name__}")
    require(out.dtype in [np.dtype(d) for d in dtypes], "CURAND_STATUS_TYPE_ERROR",
            f"[{op}] out must be {' or '.join(np.dtype(d).name for d in dtypes)}, got {out.dtype}")


def _run(api: str, cuda_name: str, rocm_name: str, kernel: str, gen: Generator, out: DeviceArray, consumed: int,
         extra: tuple[object, ...]) -> None:
    n = out.size
    with library_call(api, cuda_name=cuda_name, rocm_name=rocm_name, n=n, kernel=kernel, seed=gen.seed,
                      offset=gen.offset):
        if n:
            k0, k1 = gen.key
            KERNELS.get(kernel)(-(-n // BLOCK), BLOCK, (out, np.uint64(gen.offset), np.uint32(k0), np.uint32(k1),
                                                        np.int64(n), *extra))
        gen.offset += consumed
