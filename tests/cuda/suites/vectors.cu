// Narrow vector types and bit-fields: uchar4/char4/short2 loads and stores (ld.v4.u8), a packed
// bit-field struct decoded per element, and unaligned-by-design byte gathers.
struct Packed {
    unsigned a : 5;
    unsigned b : 11;
    int c : 9;
    unsigned d : 7;
};

extern "C" __global__ void vectors(const uchar4* px, const char4* sx, const short2* hx, const Packed* pk, int* out,
                                   uchar4* inv, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uchar4 p = px[i];
    char4 s = sx[i];
    short2 h = hx[i];
    Packed k = pk[i];
    int* o = out + 8 * i;
    o[0] = p.x + p.y * 2 + p.z * 3 + p.w * 4;
    o[1] = s.x - s.y + s.z - s.w;
    o[2] = h.x * h.y;
    o[3] = k.a;
    o[4] = k.b;
    o[5] = k.c;
    o[6] = k.d;
    o[7] = reinterpret_cast<const unsigned char*>(px)[3 * i + 1];
    inv[i] = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, 255 - p.w);
}
