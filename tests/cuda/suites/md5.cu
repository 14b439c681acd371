// SHOC MD5Hash-style kernel: each thread hashes one short message (at most 55 bytes, so one padded
// 64-byte block) with the four MD5 rounds: 32-bit adds, boolean functions and rotates (funnel shifts).
__constant__ unsigned K[64];
__constant__ unsigned char R[64];

__device__ __forceinline__ unsigned rotl(unsigned x, unsigned c) { return __funnelshift_l(x, x, c); }

extern "C" __global__ void md5(const unsigned char* msgs, const int* lens, int stride, unsigned* digests, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned w[16];
    for (int k = 0; k < 16; k++) w[k] = 0;
    int len = lens[i];
    const unsigned char* m = msgs + i * stride;
    for (int k = 0; k < len; k++) w[k >> 2] |= (unsigned)m[k] << (8 * (k & 3));
    w[len >> 2] |= 0x80u << (8 * (len & 3));
    w[14] = (unsigned)len * 8u;
    unsigned a0 = 0x67452301u, b0 = 0xefcdab89u, c0 = 0x98badcfeu, d0 = 0x10325476u;
    unsigned a = a0, b = b0, c = c0, d = d0;
    for (int j = 0; j < 64; j++) {
        unsigned f;
        int g;
        if (j < 16) { f = (b & c) | (~b & d); g = j; }
        else if (j < 32) { f = (d & b) | (~d & c); g = (5 * j + 1) & 15; }
        else if (j < 48) { f = b ^ c ^ d; g = (3 * j + 5) & 15; }
        else { f = c ^ (b | ~d); g = (7 * j) & 15; }
        f = f + a + K[j] + w[g];
        a = d; d = c; c = b;
        b = b + rotl(f, R[j]);
    }
    digests[4 * i + 0] = a0 + a;
    digests[4 * i + 1] = b0 + b;
    digests[4 * i + 2] = c0 + c;
    digests[4 * i + 3] = d0 + d;
}
