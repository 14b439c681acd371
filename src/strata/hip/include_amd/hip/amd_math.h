// strata's AMD device header, part 2: the math functions a device library would provide. No device library
// is linked (no ROCm install), so the functions LLVM does not lower natively for AMDGPU are written here on
// native operations (fma, ldexp, frexp, rint, division, sqrt): double exp/log/log2/log10/exp2/sin/cos/tan/
// tanh/sinh/cosh/erf/erfc/erfinv/pow/hypot/expm1/log1p/atan/atan2/asin/acos/asinh/acosh/atanh, their float
// forms (computed in double and rounded once: correctly rounded or within 1 ulp), and the float overloads of
// the <cmath> names. Errors: a few ulp in double (tests compare with NumPy); sin, cos and tan reduce any
// finite argument (Payne-Hanek above 2^28); pow carries log|x| in double-double, so |y log x| does not
// amplify log's rounding. ROCm's device library uses other algorithms, and so
// does CUDA's libdevice, so results may differ from both in the last bits.
// Included at the end of hip_runtime.h.
#pragma once

// ---- double-precision math written on native operations (fma, ldexp, frexp, rint, division, sqrt)
static __device__ __forceinline__ double __strata_poly_exp(double r) {
  // e^r for |r| <= 0.35: Taylor to r^14 (the first term left out is below 1e-18)
  double p = 1.0 / 87178291200.0;
  p = __builtin_fma(p, r, 1.0 / 6227020800.0);
  p = __builtin_fma(p, r, 1.0 / 479001600.0);
  p = __builtin_fma(p, r, 1.0 / 39916800.0);
  p = __builtin_fma(p, r, 1.0 / 3628800.0);
  p = __builtin_fma(p, r, 1.0 / 362880.0);
  p = __builtin_fma(p, r, 1.0 / 40320.0);
  p = __builtin_fma(p, r, 1.0 / 5040.0);
  p = __builtin_fma(p, r, 1.0 / 720.0);
  p = __builtin_fma(p, r, 1.0 / 120.0);
  p = __builtin_fma(p, r, 1.0 / 24.0);
  p = __builtin_fma(p, r, 1.0 / 6.0);
  p = __builtin_fma(p, r, 0.5);
  p = __builtin_fma(p, r, 1.0);
  return __builtin_fma(p, r, 1.0);
}
static __device__ __forceinline__ double exp(double x) {
  if (__builtin_isnan(x)) return x;
  if (x > 709.782712893384) return __builtin_inf();
  if (x < -745.1332191019412) return 0.0;
  double k = __builtin_rint(x * 1.4426950408889634);
  // Cody-Waite: ln 2 in two parts, the first with zero low bits so k * hi is exact
  double r = __builtin_fma(-k, 6.93147180369123816490e-01, x);
  r = __builtin_fma(-k, 1.90821492927058770002e-10, r);
  int ki = (int)k;
  // two ldexp steps keep exp(-745) (a subnormal) and exp(709.78) from overflowing the scale factor
  return __builtin_ldexp(__builtin_ldexp(__strata_poly_exp(r), ki / 2), ki - ki / 2);
}
static __device__ __forceinline__ double expm1(double x) {
  if (__builtin_fabs(x) < 0.5) {  // Taylor to x^18: no cancellation near 0
    double p = 1.0 / 121645100408832000.0;
    double f = 121645100408832000.0;
    for (int n = 19; n >= 2; --n) { f /= n; p = __builtin_fma(p, x, 1.0 / f); }  // f = (n-1)!
    return x * p;  // p = 1 + x/2! + ... + x^18/19!
  }
  return exp(x) - 1.0;
}
static __device__ __forceinline__ double log(double x) {
  if (__builtin_isnan(x) || x < 0.0) return __builtin_nan("");
  if (x == 0.0) return -__builtin_inf();
  if (__builtin_isinf(x)) return x;
  // x = m 2^e, m in [0.5, 1), from the bits (the engine has no v_frexp_*_f64); subnormals scaled first
  int e = 0;
  if (x < 2.2250738585072014e-308) { x *= 18014398509481984.0; e = -54; }
  long long bits = __builtin_bit_cast(long long, x);
  e += (int)((bits >> 52) & 0x7ff) - 1022;
  double m = __builtin_bit_cast(double, (bits & 0x800fffffffffffffLL) | 0x3fe0000000000000LL);
  if (m < 0.70710678118654752440) { m *= 2.0; e -= 1; }
  double f = m - 1.0;                 // exact (Sterbenz)
  double s = f / (2.0 + f), z = s * s;
  // log(1 + f) = 2 atanh(s) = 2s (1 + z/3 + z^2/5 + ...), z <= 0.0295: to z^12
  double p = 1.0 / 25.0;
  for (int k = 23; k >= 3; k -= 2) p = __builtin_fma(p, z, 1.0 / k);
  double lg = 2.0 * s * __builtin_fma(p, z, 1.0);
  double de = (double)e;
  return __builtin_fma(de, 6.93147180369123816490e-01, __builtin_fma(de, 1.90821492927058770002e-10, lg));
}
static __device__ __forceinline__ double log1p(double x) {
  if (__builtin_isnan(x) || x == __builtin_inf()) return x;
  if (x == -1.0) return -__builtin_inf();
  if (__builtin_fabs(x) < 1e-4) return x * (1.0 - x * (0.5 - x * (1.0 / 3.0 - x * 0.25)));
  double u = 1.0 + x;
  // log(u) corrected for the rounding of 1 + x
  return log(u) - ((u - 1.0) - x) / u;
}
static __device__ __forceinline__ double log2(double x) { return log(x) * 1.4426950408889634074; }
static __device__ __forceinline__ double log10(double x) { return log(x) * 0.43429448190325182765; }
static __device__ __forceinline__ double exp2(double x) { return exp(x * 0.69314718055994530942); }
static __device__ __forceinline__ double tanh(double x) {
  double t = __builtin_fabs(x);
  if (t > 22.0) return __builtin_copysign(1.0, x);
  double e = expm1(2.0 * t);
  return __builtin_copysign(e / (e + 2.0), x);
}
static __device__ __forceinline__ double sinh(double x) {
  double t = __builtin_fabs(x), e = expm1(t);
  return __builtin_copysign(0.5 * (e + e / (e + 1.0)), x);
}
static __device__ __forceinline__ double cosh(double x) {
  double e = exp(__builtin_fabs(x));
  return 0.5 * (e + 1.0 / e);
}
// The bits of 2/pi after the binary point, 64 per word, after one word of zeros (the bits before it): what
// the large-argument reduction multiplies by
static __device__ const unsigned long long __strata_two_over_pi[19] = {
    0x0000000000000000ULL,
    0xA2F9836E4E441529ULL,
    0xFC2757D1F534DDC0ULL,
    0xDB6295993C439041ULL,
    0xFE5163ABDEBBC561ULL,
    0xB7246E3A424DD2E0ULL,
    0x06492EEA09D1921CULL,
    0xFE1DEB1CB129A73EULL,
    0xE88235F52EBB4484ULL,
    0xE99C7026B45F7E41ULL,
    0x3991D639835339F4ULL,
    0x9C845F8BBDF9283BULL,
    0x1FF897FFDE05980FULL,
    0xEF2F118B5A0A6D1FULL,
    0x6D367ECF27CB09B7ULL,
    0x4F463F669E5FEA2DULL,
    0x7527BAC7EBE5F17BULL,
    0x3D0739F78A5292EAULL,
    0x6BFB5FB11F8D5D08ULL};
// |x| >= 2^28 (Payne-Hanek): x * 2/pi mod 4 from the 128 bits of 2/pi that reach it, in 128-bit integers. x is
// m 2^e (m a 53-bit integer); bits of 2/pi before position e - 1 only add multiples of 4, the ones after
// position e + 126 less than 2^-73. Returns r in [-pi/4, pi/4] and sets the quadrant.
static __device__ __forceinline__ double __strata_reduce_large(double ax, long long* quadrant) {
  int ex;
  double mant = __builtin_frexp(ax, &ex);
  unsigned long long m = (unsigned long long)__builtin_ldexp(mant, 53);
  int o = ex - 53 - 2 + 64;  // the first bit of 2/pi that matters, as an offset into the table
  int w = o >> 6, s = o & 63;
  const unsigned long long* t = __strata_two_over_pi;
  unsigned long long bhi = s ? (t[w] << s) | (t[w + 1] >> (64 - s)) : t[w];
  unsigned long long blo = s ? (t[w + 1] << s) | (t[w + 2] >> (64 - s)) : t[w + 1];
  unsigned __int128 p = (unsigned __int128)m * blo + ((unsigned __int128)(m * bhi) << 64);  // x 2/pi mod 4, 2^126
  long long q = (long long)(p >> 126);
  unsigned __int128 f = p << 2;  // the fraction, in units of 2^-128
  if (f >> 127) q += 1;          // a fraction >= 1/2 is f - 1 of the next quadrant (the high word read as signed)
  double fd = (double)(long long)(unsigned long long)(f >> 64) * 0x1p-64 + (double)(unsigned long long)f * 0x1p-128;
  *quadrant = q & 3;
  return __builtin_fma(fd, 1.5707963267948966, fd * 6.123233995736766e-17);  // f pi/2, pi/2 in two parts
}
// sin and cos: x = q pi/2 + r, |r| <= pi/4: pi/2 in three parts below 2^28, the bits of 2/pi above
static __device__ __forceinline__ void __strata_sincos(double x, double* s, double* c) {
  double r;
  long long q;
  if (__builtin_fabs(x) < 268435456.0 || !__builtin_isfinite(x)) {
    double k = __builtin_rint(x * 0.63661977236758134308);
    r = __builtin_fma(-k, 1.57079632673412561417e+00, x);
    r = __builtin_fma(-k, 6.07710050630396597660e-11, r);
    r = __builtin_fma(-k, 2.02226624871116645580e-21, r);
    q = __builtin_isfinite(k) ? (long long)k & 3 : 0;
  } else {
    r = __strata_reduce_large(__builtin_fabs(x), &q);
    if (x < 0) {
      r = -r;
      q = (4 - q) & 3;
    }
  }
  double z = r * r;
  double fs = 121645100408832000.0;  // 19!
  double ps = 1.0 / fs;
  for (int n = 19; n >= 5; n -= 2) { fs /= (double)n * (n - 1); ps = __builtin_fma(-ps, z, 1.0 / fs); }
  double sr = __builtin_fma(-ps * z, r, r);  // r - r^3/3! + ...
  double fc = 6402373705728000.0;            // 18!
  double pc = 1.0 / fc;
  for (int n = 18; n >= 4; n -= 2) { fc /= (double)n * (n - 1); pc = __builtin_fma(-pc, z, 1.0 / fc); }
  double cr = __builtin_fma(-pc, z, 1.0);    // 1 - r^2/2! + ...
  double sv = q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr;
  double cv = q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr;
  if (__builtin_isinf(x) || __builtin_isnan(x)) sv = cv = __builtin_nan("");
  *s = sv;
  *c = cv;
}
static __device__ __forceinline__ double sin(double x) { double s, c; __strata_sincos(x, &s, &c); return s; }
// float sine and cosine through the double reduction, rounded once
static __device__ __forceinline__ float sinf(float x) { return (float)sin((double)x); }
static __device__ __forceinline__ float cosf(float x) {
  double s, c;
  __strata_sincos((double)x, &s, &c);
  return (float)c;
}
static __device__ __forceinline__ void sincosf(float x, float* s, float* c) {
  double sd, cd;
  __strata_sincos((double)x, &sd, &cd);
  *s = (float)sd;
  *c = (float)cd;
}
static __device__ __forceinline__ double cos(double x) { double s, c; __strata_sincos(x, &s, &c); return c; }
static __device__ __forceinline__ double erf(double x) {
  // erf(x) = 2/sqrt(pi) e^-x^2 sum 2^n x^(2n+1) / (2n+1)!!: every term positive (no cancellation)
  double t = __builtin_fabs(x);
  if (__builtin_isnan(x)) return x;
  if (t >= 6.0) return __builtin_copysign(1.0, x);
  double term = t, sum = t, x2 = t * t;
  for (int n = 1; n < 400; ++n) {
    term *= 2.0 * x2 / (2 * n + 1);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return __builtin_copysign(1.1283791670955125739 * exp(-x2) * sum, x);
}
static __device__ __forceinline__ double erfc(double x) { return 1.0 - erf(x); }
static __device__ __forceinline__ double __strata_ipow(double x, long long n) {
  double r = 1.0, b = x;
  unsigned long long e = n < 0 ? -n : n;
  while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
  return n < 0 ? 1.0 / r : r;
}
// log x as hi + lo (a double-double, about 100 bits): the reduction of log() above with the rounding error of
// s = f / (2 + f) and of the sum of its parts carried, for pow (whose error is |y| times log's)
static __device__ __forceinline__ double __strata_log_dd(double x, double* lo) {
  int e = 0;
  if (x < 2.2250738585072014e-308) { x *= 18014398509481984.0; e = -54; }
  long long bits = __builtin_bit_cast(long long, x);
  e += (int)((bits >> 52) & 0x7ff) - 1022;
  double m = __builtin_bit_cast(double, (bits & 0x800fffffffffffffLL) | 0x3fe0000000000000LL);
  if (m < 0.70710678118654752440) { m *= 2.0; e -= 1; }
  double f = m - 1.0;                                  // exact
  double t = 2.0 + f, tl = (2.0 - t) + f;              // 2 + f = t + tl exactly
  double s = f / t;
  double sl = (__builtin_fma(-s, t, f) - s * tl) / t;  // f / (2 + f) = s + sl
  double z = s * s;
  double p = 1.0 / 25.0;
  for (int k = 23; k >= 3; k -= 2) p = __builtin_fma(p, z, 1.0 / k);
  double tail = 2.0 * s * z * p;                       // 2 atanh(s) - 2s, small beside 2s
  double de = (double)e;
  double a = de * 6.93147180369123816490e-01;          // exact: the high part of ln 2 has zero low bits
  double b = 2.0 * s;
  double hi = a + b;
  double err = __builtin_fabs(a) >= __builtin_fabs(b) ? (a - hi) + b : (b - hi) + a;
  double l = err + (2.0 * sl + __builtin_fma(de, 1.90821492927058770002e-10, tail));
  double r = hi + l;
  *lo = l - (r - hi);
  return r;
}
static __device__ __forceinline__ double pow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (__builtin_isnan(x) || __builtin_isnan(y)) return x + y;
  bool yint = __builtin_rint(y) == y;
  if (yint && __builtin_fabs(y) <= 64.0) return __strata_ipow(x, (long long)y);
  bool odd = yint && __builtin_fabs(y) < 9007199254740992.0 && ((long long)y & 1);
  if (x == 0.0) return y > 0 ? (odd ? x : 0.0) : (odd ? __builtin_copysign(__builtin_inf(), x) : __builtin_inf());
  if (x < 0.0 && !yint) return __builtin_nan("");
  double ax = __builtin_fabs(x);
  double r;
  if (__builtin_isinf(ax) || __builtin_isinf(y)) {
    r = exp(y * log(ax));  // the infinite cases (C's pow: 0, 1 or inf by |x| against 1 and the sign of y)
  } else {
    double ll, lh = __strata_log_dd(ax, &ll);
    double ph = y * lh;
    double pl = __builtin_fma(y, lh, -ph) + y * ll;  // y log|x| = ph + pl to about 100 bits
    double e = exp(ph);
    r = __builtin_isinf(e) || e == 0.0 ? e : __builtin_fma(e, pl, e);  // exp(ph + pl) = exp(ph) (1 + pl)
  }
  return x < 0.0 && odd ? -r : r;
}
static __device__ __forceinline__ double hypot(double x, double y) {
  double a = __builtin_fabs(x), b = __builtin_fabs(y);
  if (__builtin_isinf(a) || __builtin_isinf(b)) return __builtin_inf();
  double m = a > b ? a : b, n = a > b ? b : a;
  if (m == 0.0) return 0.0;
  double r = n / m;
  return m * __builtin_sqrt(__builtin_fma(r, r, 1.0));
}
static __device__ __forceinline__ double atan(double x) {
  // reduce to |t| <= tan(pi/12) by atan(x) = pi/2 - atan(1/x) and atan(x) = pi/6 + atan((x sqrt3 - 1)/(x + sqrt3))
  double t = __builtin_fabs(x), base = 0.0;
  bool inv = t > 1.0;
  if (inv) t = 1.0 / t;
  if (t > 0.2679491924311227) { t = (t * 1.7320508075688772 - 1.0) / (t + 1.7320508075688772); base = 0.52359877559829887308; }
  double z = t * t, p = 0.0;
  for (int k = 41; k >= 3; k -= 2) p = __builtin_fma(p, -z, 1.0 / k);  // 1/3 - z/5 + ...
  double r = base + __builtin_fma(-p * z, t, t);
  if (inv) r = 1.57079632679489661923 - r;
  return __builtin_copysign(r, x);
}

static __device__ __forceinline__ double atan2(double y, double x) {
  if (__builtin_isnan(x) || __builtin_isnan(y)) return x + y;
  const double pi = 3.14159265358979323846;
  if (__builtin_isinf(x) && __builtin_isinf(y))
    return __builtin_copysign(x > 0 ? pi / 4 : 3 * pi / 4, y);
  if (x == 0.0) {
    if (y == 0.0) return __builtin_signbit(x) ? __builtin_copysign(pi, y) : y;
    return __builtin_copysign(pi / 2, y);
  }
  if (__builtin_isinf(x)) return x > 0 ? __builtin_copysign(0.0, y) : __builtin_copysign(pi, y);
  if (__builtin_isinf(y)) return __builtin_copysign(pi / 2, y);
  // the smaller over the larger magnitude keeps atan's argument in [-1, 1]
  double ax = __builtin_fabs(x), ay = __builtin_fabs(y);
  double r = ay <= ax ? atan(ay / ax) : pi / 2 - atan(ax / ay);
  if (x < 0) r = pi - r;
  return __builtin_copysign(r, y);
}
static __device__ __forceinline__ double asin(double x) {
  if (__builtin_fabs(x) > 1.0) return __builtin_nan("");
  return atan2(x, __builtin_sqrt((1.0 - x) * (1.0 + x)));
}
static __device__ __forceinline__ double acos(double x) {
  if (__builtin_fabs(x) > 1.0) return __builtin_nan("");
  return atan2(__builtin_sqrt((1.0 - x) * (1.0 + x)), x);
}
static __device__ __forceinline__ double tan(double x) { double s, c; __strata_sincos(x, &s, &c); return s / c; }
static __device__ __forceinline__ double asinh(double x) {
  double t = __builtin_fabs(x);
  double r = t > 1e150 ? log(t) + 0.69314718055994530942 : log1p(t + t * t / (1.0 + __builtin_sqrt(1.0 + t * t)));
  return __builtin_copysign(r, x);
}
static __device__ __forceinline__ double acosh(double x) {
  if (x < 1.0) return __builtin_nan("");
  if (x > 1e150) return log(x) + 0.69314718055994530942;
  double t = x - 1.0;
  return log1p(t + __builtin_sqrt(t * (x + 1.0)));
}
static __device__ __forceinline__ double atanh(double x) {
  double t = __builtin_fabs(x);
  if (t > 1.0) return __builtin_nan("");
  return __builtin_copysign(0.5 * log1p(2.0 * t / (1.0 - t)), x);
}
static __device__ __forceinline__ double erfinv(double y) {
  if (__builtin_isnan(y) || __builtin_fabs(y) > 1.0) return __builtin_nan("");
  if (__builtin_fabs(y) == 1.0) return __builtin_copysign(__builtin_inf(), y);
  // Giles' single-precision approximation, then Newton steps on erf(x) - y
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w; p = 1.50140941 + p * w;
    x = p * y;
  } else {
    w = __builtin_sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w; p = 2.83297682 + p * w;
    x = p * y;
  }
  for (int i = 0; i < 3; ++i) x -= (erf(x) - y) / (1.1283791670955125739 * exp(-x * x));
  return x;
}
static __device__ __forceinline__ double fmod(double x, double y) { return __builtin_fmod(x, y); }
static __device__ __forceinline__ double cbrt(double x) {
  // exp(log|x| / 3), then two Newton steps on r^3 = |x| (each halves the error's exponent), written with
  // |x| / r^2 so that no r^3 overflows near the largest doubles
  double a = __builtin_fabs(x);
  if (a == 0.0 || __builtin_isinf(a) || __builtin_isnan(x)) return x + x;
  double r = exp(log(a) * (1.0 / 3.0));
  r = r + (a / (r * r) - r) * (1.0 / 3.0);
  r = r + (a / (r * r) - r) * (1.0 / 3.0);
  return __builtin_copysign(r, x);
}

// ---- float forms: computed in double, rounded once
static __device__ __forceinline__ float tanhf(float x) { return (float)tanh((double)x); }
static __device__ __forceinline__ float erff(float x) { return (float)erf((double)x); }
static __device__ __forceinline__ float erfcf(float x) { return (float)erfc((double)x); }
static __device__ __forceinline__ float powf(float x, float y) { return (float)pow((double)x, (double)y); }
static __device__ __forceinline__ float hypotf(float x, float y) {
  return (float)__builtin_sqrt((double)x * x + (double)y * y);
}
static __device__ __forceinline__ float expm1f(float x) { return (float)expm1((double)x); }
static __device__ __forceinline__ float log1pf(float x) { return (float)log1p((double)x); }
static __device__ __forceinline__ float sinhf(float x) { return (float)sinh((double)x); }
static __device__ __forceinline__ float coshf(float x) { return (float)cosh((double)x); }
static __device__ __forceinline__ float atanf(float x) { return (float)atan((double)x); }
static __device__ __forceinline__ float atan2f(float y, float x) { return (float)atan2((double)y, (double)x); }
static __device__ __forceinline__ float asinf(float x) { return (float)asin((double)x); }
static __device__ __forceinline__ float acosf(float x) { return (float)acos((double)x); }
static __device__ __forceinline__ float tanf(float x) { return (float)tan((double)x); }
static __device__ __forceinline__ float cbrtf(float x) { return (float)cbrt((double)x); }
static __device__ __forceinline__ float asinhf(float x) { return (float)asinh((double)x); }
static __device__ __forceinline__ float acoshf(float x) { return (float)acosh((double)x); }
static __device__ __forceinline__ float atanhf(float x) { return (float)atanh((double)x); }
static __device__ __forceinline__ float erfinvf(float x) { return (float)erfinv((double)x); }
static __device__ __forceinline__ float fmodf(float x, float y) { return __builtin_fmodf(x, y); }

// ---- CUDA's float overloads of the <cmath> names (T = float in templates calls these)
static __device__ __forceinline__ float exp(float x) { return expf(x); }
static __device__ __forceinline__ float log(float x) { return logf(x); }
static __device__ __forceinline__ float sqrt(float x) { return sqrtf(x); }
static __device__ __forceinline__ float fabs(float x) { return fabsf(x); }
static __device__ __forceinline__ float fmax(float a, float b) { return fmaxf(a, b); }
static __device__ __forceinline__ float fmin(float a, float b) { return fminf(a, b); }
static __device__ __forceinline__ float floor(float x) { return floorf(x); }
static __device__ __forceinline__ float ceil(float x) { return ceilf(x); }
static __device__ __forceinline__ float trunc(float x) { return truncf(x); }
static __device__ __forceinline__ float tanh(float x) { return tanhf(x); }
static __device__ __forceinline__ float erf(float x) { return erff(x); }
static __device__ __forceinline__ float pow(float x, float y) { return powf(x, y); }
static __device__ __forceinline__ float hypot(float x, float y) { return hypotf(x, y); }
static __device__ __forceinline__ float sin(float x) { return sinf(x); }
static __device__ __forceinline__ float cos(float x) { return cosf(x); }
static __device__ __forceinline__ float expm1(float x) { return expm1f(x); }
static __device__ __forceinline__ float cbrt(float x) { return cbrtf(x); }
static __device__ __forceinline__ float log1p(float x) { return log1pf(x); }
static __device__ __forceinline__ float rsqrt(float x) { return rsqrtf(x); }
static __device__ __forceinline__ double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
static __device__ __forceinline__ float fma(float a, float b, float c) { return fmaf(a, b, c); }
