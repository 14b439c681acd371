// Device printf with the C conversions debugging code uses: flags, widths, precisions, %g/%e/%a, octal and
// hex with #, 64-bit and unsigned lengths, %c, %%, and inf/nan.
extern "C" __global__ void formats(const double* d, const long long* l, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    double x = d[i];
    long long y = l[i];
    printf("[%2d] %+d|%-6s|%08.3f|%g|%e|%.3g|%o|%#x|%X|%llu|%lld|%lx|%c|%%|%5.1f|%-8.2e|%i|%hd\n", i, (int)y,
           i % 2 ? "ab" : "xyz", x, x, x, x * 1e10, (unsigned)(y & 0777), (unsigned)y, (unsigned)(y >> 8),
           (unsigned long long)y, y, (unsigned long)(y * 3), 'a' + i, x / 0.0 * (i % 3 ? 1.0 : -1.0),
           x * 1e-7, (int)(y % 1000), (short)y);
}
