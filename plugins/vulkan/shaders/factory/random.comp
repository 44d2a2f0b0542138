// random.comp - Philox4x32-10 random fills (tsr_plugin_api.random_fill),
// bit-identical to plugins/sdk/include/tessera/sdk/philox.hpp, the reference
// mapping of Note [Random mapping] (plugin.h).
//
// Invocation g handles blocks g, g + invocations(), ... of the call: block j
// is Philox4x32-10(counter = offset + j, key = seed) and feeds elements
//  - 4j .. 4j+3 (MODE_ONE: one lane per element),
//  - 2j, 2j+1   (MODE_TWO: lanes (0,1) and (2,3), low then high; MODE_NORMAL:
//                the Box-Muller pair of block j).
// The output is contiguous (the core stages other layouts).
//
// Exactness. Every arithmetic step the reference does in float or double is
// done here in the same precision, one IEEE operation per C++ operation, with
// `precise` so that no driver contracts a*b+c into an fma. Conversions to the
// out dtype are written out (round to nearest even; double -> half/bfloat16
// through float rounded to odd, as sdk/half.hpp does) instead of relying on
// packHalf2x16, whose rounding GLSL leaves to the implementation.
// NORMAL needs log, sin and cos, which the reference takes from the host's
// libm; GLSL has them for float only. This shader evaluates them in double
// (log through a double-double atanh series, sin/cos through a three-part
// pi/2 reduction and double-double Taylor kernels): measured against
// 113-bit references they round correctly in all but about 3 cases in 10^4
// (glibc's: about 1 in 10^3), so the two can differ by an ulp. The result is rounded once to a 24-bit or narrower dtype,
// so the out values agree with the host except when a value lies within a
// couple of double ulps of a rounding boundary of the out dtype: the shader
// detects those elements (normal_element) and lists them in a flag block,
// and factory/random.cpp recomputes them on the host. float64 NORMAL, where
// every double bit shows, is not computed here: factory/random.cpp fills it
// on the host.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

const int MODE_ONE = 0, MODE_TWO = 1, MODE_NORMAL = 2;
const int DIST_BITS = 0, DIST_UNIFORM = 1, DIST_NORMAL = 2, DIST_BERNOULLI = 3, DIST_RANDINT = 4;

// factory/random.cpp's Params (std430, 136 bytes).
struct Params {
  uint64_t out_address;  // element 0 of the contiguous output
  uint64_t numel;
  uint64_t nblocks;      // blocks the call consumes
  uint64_t seed;
  uint64_t offset;       // first block
  int distribution;      // tsr_random_distribution
  int dtype;             // out dtype
  int mode;              // MODE_*
  int clamp;             // UNIFORM: param0 < param1 (keep the range half-open)
  // UNIFORM into 32-bit and narrower dtypes: the float bounds and span as
  // the reference computes them; `below_bits` is the out dtype's largest
  // value below `to_f` (bits).
  float from_f, to_f, span_f;
  uint below_bits;
  // UNIFORM into float64: from, span (param1 - param0), to and below;
  // NORMAL: mean (d0), std (d1); BERNOULLI: p (d0).
  double d0, d1, d2, d3;
  // RANDINT: the low bound (as uint64) and the span (0: all of 2^64).
  uint64_t low;
  uint64_t span;
  // NORMAL: the Flag block (see below) and the number of indices it holds.
  uint64_t flag_address;
  uint flag_capacity;
  uint pad_;
};
// Elements of a NORMAL fill whose out value this shader cannot vouch for
// (see normal_element): `count` of them, the first flag_capacity listed.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Flag {
  uint count;
  uint pad_;
  uint64_t index[];
};
layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// ---- Philox4x32-10 --------------------------------------------------------------

uvec4 philox(uint64_t index, uint64_t seed) {
  uvec4 c = uvec4(uint(index), uint(index >> 32), 0u, 0u);
  uint k0 = uint(seed), k1 = uint(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
  }
  return c;
}

// ---- uniforms (exact: every value has at most 24 / 53 significant bits) --------

float uniform24(uint lane) { return float(lane >> 8) * (1.0 / 16777216.0); }
double uniform24_open(uint lane) { return double((lane >> 8) + 1u) * (1.0LF / 16777216.0LF); }
uint64_t join(uint low, uint high) { return (uint64_t(high) << 32) | uint64_t(low); }
const double TWO_M53 = 1.1102230246251565404236316680908203125e-16LF;  // 2^-53
double uniform53(uint low, uint high) { return double(join(low, high) >> 11) * TWO_M53; }
double uniform53_open(uint low, uint high) {
  return double((join(low, high) >> 11) + 1UL) * TWO_M53;
}

// ---- exact conversions to the out dtype (sdk/half.hpp's) ------------------------

// float -> binary16 bits, round to nearest even, every class of input.
uint half_bits(float value) {
  uint x = floatBitsToUint(value);
  uint sign = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return a == 0x7f800000u ? (sign | 0x7c00u) : (sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  uint e = a >> 23;
  if (e >= 143u) return sign | 0x7c00u;
  if (e >= 113u) {
    uint h = ((e - 112u) << 10) | ((a >> 13) & 0x3ffu);
    uint rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) ++h;
    return sign | h;
  }
  if (e <= 101u) return sign;
  uint m = (a & 0x7fffffu) | 0x800000u;
  uint shift = 126u - e;
  uint h = m >> shift;
  uint rest = m & ((1u << shift) - 1u);
  uint halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (h & 1u) != 0u)) ++h;
  return sign | h;
}
// float -> bfloat16 bits, round to nearest even.
uint bfloat_bits(float value) {
  uint x = floatBitsToUint(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}
// The out bits of a float value (float32, float16, bfloat16).
uint64_t bits_of_float(float v, int dtype) {
  if (dtype == FLOAT32) return uint64_t(floatBitsToUint(v));
  if (dtype == FLOAT16) return uint64_t(half_bits(v));
  return uint64_t(bfloat_bits(v));
}
// The value of float32/float16/bfloat16 bits, as float (exact).
float float_of_bits(uint64_t bits, int dtype) {
  if (dtype == FLOAT32) return uintBitsToFloat(uint(bits));
  if (dtype == FLOAT16) return unpackHalf2x16(uint(bits)).x;
  return uintBitsToFloat(uint(bits) << 16);
}
// double -> float rounded to odd (exact first step of double -> 16-bit).
float round_odd(double v) {
  if (isnan(v)) return float(v);
  float f = float(v);
  if (isinf(f) && !isinf(v)) {
    f = uintBitsToFloat((floatBitsToUint(f) & 0x80000000u) | 0x7f7fffffu);
  } else if (abs(double(f)) > abs(v)) {
    f = uintBitsToFloat(floatBitsToUint(f) - 1u);  // one step toward zero (f != 0)
  }
  if (double(f) != v) f = uintBitsToFloat(floatBitsToUint(f) | 1u);
  return f;
}
// from_real<T>(double): rounded once to the out dtype.
uint64_t bits_of_double(double v, int dtype) {
  if (dtype == FLOAT64) return doubleBitsToUint64(v);
  if (dtype == FLOAT32) return uint64_t(floatBitsToUint(float(v)));
  return bits_of_float(round_odd(v), dtype);
}
// from_integer<T>(int64): bool, wrap to the integer width, or the nearest value.
uint64_t bits_of_int(int64_t x, int dtype) {
  if (dtype == BOOL) return x != 0L ? 1UL : 0UL;
  if (dtype == FLOAT64) return doubleBitsToUint64(double(x));
  if (dtype == FLOAT32) return uint64_t(floatBitsToUint(float(x)));
  if (dtype == FLOAT16 || dtype == BFLOAT16) return bits_of_double(double(x), dtype);
  return uint64_t(x);  // store_bits keeps the low bytes
}

// ---- double-precision log, sin, cos for Box-Muller ------------------------------

// Double-double helpers (error-free transformations).
void two_sum(double a, double b, out double s, out double e) {
  precise double ss = a + b;
  precise double bb = ss - a;
  precise double err = (a - (ss - bb)) + (b - bb);
  s = ss;
  e = err;
}
void two_prod(double a, double b, out double p, out double e) {
  precise double pp = a * b;
  e = fma(a, b, -pp);
  p = pp;
}

const double LN2_HI = 6.93147180369123816490e-01LF;  // 0x3fe62e42fee00000, 32 bits
const double LN2_LO = 1.90821492927058770002e-10LF;  // 0x3dea39ef35793c76

// log(x) for x in (0, 1] (normal doubles): x = m 2^e with m in [sqrt(1/2),
// sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, with the
// two leading terms in double-double and the rest in double (relative error
// about 2^-66 before the final rounding).
double log_open(double x) {
  uint64_t bits = doubleBitsToUint64(x);
  int e = int((bits >> 52) & 0x7ffUL) - 1023;
  double m = uint64BitsToDouble((bits & 0x000fffffffffffffUL) | 0x3ff0000000000000UL);
  if (m > 1.4142135623730951LF) {
    m *= 0.5LF;
    e += 1;
  }
  precise double num = m - 1.0LF;  // exact (Sterbenz)
  double den_hi, den_lo;
  two_sum(m, 1.0LF, den_hi, den_lo);
  // s = num / den in double-double
  precise double q = num / den_hi;
  precise double rem = fma(-q, den_hi, num) - q * den_lo;
  precise double q_lo = rem / den_hi;
  double s_hi, s_lo;
  two_sum(q, q_lo, s_hi, s_lo);
  // s^2 and s^3 (leading parts in double-double)
  double s2_hi, s2_lo;
  two_prod(s_hi, s_hi, s2_hi, s2_lo);
  precise double s2_corr = s2_lo + 2.0LF * s_hi * s_lo;
  precise double s2 = s2_hi + s2_corr;
  double s3_hi, s3_lo;
  two_prod(s2_hi, s_hi, s3_hi, s3_lo);
  precise double s3_corr = s3_lo + s2_corr * s_hi + s2_hi * s_lo;
  // 2 atanh(s) = 2 s + 2 s^3 / 3 + s^5 (2/5 + 2 s^2/7 + ...)
  precise double tail = 0.0LF;
  for (int k = 16; k >= 2; --k) tail = tail * s2 + 2.0LF / double(2 * k + 1);
  precise double s5 = s3_hi * s2;
  precise double t_tail = s5 * tail;
  // 2 s^3 / 3 in double-double
  const double THIRD_HI = 0.33333333333333331483LF;
  const double THIRD_LO = 1.8503717077085942e-17LF;
  double c_hi, c_lo;
  two_prod(s3_hi, THIRD_HI, c_hi, c_lo);
  precise double c_corr = c_lo + s3_hi * THIRD_LO + s3_corr * THIRD_HI;
  // e ln2 (exact high part: e has at most 11 bits, LN2_HI 32)
  precise double ed = double(e);
  precise double w_hi = ed * LN2_HI;
  precise double w_lo = ed * LN2_LO;
  // sum: w_hi + 2 s_hi + 2 c_hi + small terms
  double a_hi, a_lo;
  two_sum(w_hi, 2.0LF * s_hi, a_hi, a_lo);
  double b_hi, b_lo;
  two_sum(a_hi, 2.0LF * c_hi, b_hi, b_lo);
  precise double small = a_lo + b_lo + w_lo + 2.0LF * s_lo + 2.0LF * c_corr + t_tail;
  precise double result = b_hi + small;
  return result;
}

// sin and cos kernels on [-pi/4, pi/4]; x + y is the reduced argument in
// double-double. The two leading Taylor terms are summed in double-double
// and the rest (below 1/300 of the result) in double, so the result is
// within about 0.501 ulp (libm's own sin/cos round correctly nearly always,
// and this agrees with them nearly always).
double sin_kernel(double x, double y) {
  double x2_hi, x2_lo;
  two_prod(x, x, x2_hi, x2_lo);
  precise double x2 = x2_hi + x2_lo;
  double x3_hi, x3_lo;
  two_prod(x2_hi, x, x3_hi, x3_lo);
  precise double x3_corr = x3_lo + x2_lo * x;
  // c = x^3 / 6 in double-double
  const double SIXTH_HI = 0.16666666666666665741LF;  // 1/6 rounded
  const double SIXTH_LO = 9.2518585385429707e-18LF;  // 1/6 - SIXTH_HI
  double c_hi, c_lo;
  two_prod(x3_hi, SIXTH_HI, c_hi, c_lo);
  precise double c_corr = c_lo + x3_hi * SIXTH_LO + x3_corr * SIXTH_HI;
  // tail: x^5 (1/5! - x^2/7! + ... - x^14/19!)
  precise double tail = 0.0LF;
  for (int k = 19; k >= 5; k -= 2) {
    double f = 1.0LF;
    for (int i = 2; i <= k; ++i) f *= double(i);  // exact up to 19! / 2^16...
    precise double coef = (((k - 5) / 2) % 2 == 0 ? 1.0LF : -1.0LF) / f;
    tail = tail * x2 + coef;
  }
  precise double x5 = x3_hi * x2;
  precise double t = x5 * tail;
  // y cos(x) ~ y (1 - x^2/2 + x^4/24 - x^6/720)
  precise double ycos = y * (1.0LF + x2 * (-0.5LF + x2 * (1.0LF / 24.0LF - x2 * (1.0LF / 720.0LF))));
  double s_hi, s_lo;
  two_sum(x, -c_hi, s_hi, s_lo);
  precise double small = s_lo - c_corr + t + ycos;
  precise double res = s_hi + small;
  return res;
}
double cos_kernel(double x, double y) {
  double x2_hi, x2_lo;
  two_prod(x, x, x2_hi, x2_lo);
  precise double x2 = x2_hi + x2_lo;
  // h = x^2 / 2 (exact scaling); q = x^4 / 24 in double-double
  double x4_hi, x4_lo;
  two_prod(x2_hi, x2_hi, x4_hi, x4_lo);
  precise double x4_corr = x4_lo + 2.0LF * x2_hi * x2_lo;
  const double T24_HI = 0.041666666666666664354LF;  // 1/24 rounded
  const double T24_LO = 2.3129646346357426e-18LF;   // 1/24 - T24_HI
  double q_hi, q_lo;
  two_prod(x4_hi, T24_HI, q_hi, q_lo);
  precise double q_corr = q_lo + x4_hi * T24_LO + x4_corr * T24_HI;
  // tail: x^6 (-1/6! + x^2/8! - ... + x^14/20!)
  precise double tail = 0.0LF;
  for (int k = 20; k >= 6; k -= 2) {
    double f = 1.0LF;
    for (int i = 2; i <= k; ++i) f *= double(i);
    precise double coef = (((k - 6) / 2) % 2 == 0 ? -1.0LF : 1.0LF) / f;
    tail = tail * x2 + coef;
  }
  precise double x6 = x4_hi * x2;
  precise double t = x6 * tail;
  // y sin(x) ~ y x (1 - x^2/6 + x^4/120 - x^6/5040)
  precise double ysin = y * x * (1.0LF + x2 * (-1.0LF / 6.0LF + x2 * (1.0LF / 120.0LF - x2 * (1.0LF / 5040.0LF))));
  // 1 - h + q: two_sum keeps every bit
  double a_hi, a_lo;
  two_sum(1.0LF, -0.5LF * x2_hi, a_hi, a_lo);
  double b_hi, b_lo;
  two_sum(a_hi, q_hi, b_hi, b_lo);
  precise double small = a_lo + b_lo - 0.5LF * x2_lo + q_corr + t - ysin;
  precise double res = b_hi + small;
  return res;
}

// sin and cos of t in [0, 2 pi): t - k pi/2 with pi/2 in three parts (the
// first two with their low 20 bits zero, so k * part is exact for k <= 4;
// the third to full precision).
void sincos_reduced(double t, out double s, out double c) {
  const double PIO2_1 = 1.57079632673412561417e+00LF;   // 0x3FF921FB54400000
  const double PIO2_2 = 6.07710050630396597660e-11LF;   // 0x3DD0B4611A600000
  const double PIO2_3 = 2.02226624879595063154e-21LF;   // 0x3BA3198A2E037073
  const double INV_PIO2 = 6.36619772367581382433e-01LF;
  precise double kd = floor(t * INV_PIO2 + 0.5LF);
  int k = int(kd);
  precise double r1 = t - kd * PIO2_1;      // exact
  precise double w = kd * PIO2_2;           // exact
  double r2_hi, r2_lo;
  two_sum(r1, -w, r2_hi, r2_lo);            // r1 - w exactly
  precise double w3 = kd * PIO2_3;
  precise double lo = r2_lo - w3;
  double x, y;
  two_sum(r2_hi, lo, x, y);
  double sk = sin_kernel(x, y), ck = cos_kernel(x, y);
  int q = k & 3;
  if (q == 0) { s = sk; c = ck; }
  else if (q == 1) { s = ck; c = -sk; }
  else if (q == 2) { s = -sk; c = -ck; }
  else { s = -ck; c = sk; }
}

// Square root with one Newton correction on the driver's (Vulkan leaves the
// precision of double sqrt open; lavapipe's and NVIDIA's are IEEE).
double sqrt_rn(double x) {
  if (x == 0.0LF) return x;
  precise double y = sqrt(x);
  precise double r = fma(-y, y, x);
  precise double yc = fma(r, 0.5LF / y, y);
  return yc;
}

// ---- the fill --------------------------------------------------------------------

void store(uint64_t element, uint64_t bits) {
  int size = element_size(pc.params.dtype);
  store_bits(pc.params.out_address + element * uint64_t(size), size, bits);
}

// UNIFORM, BERNOULLI, RANDINT, BITS from one lane.
uint64_t one_lane_bits(uint lane) {
  Params p = pc.params;
  int dist = p.distribution, dtype = p.dtype;
  if (dist == DIST_UNIFORM) {
    precise float scaled = uniform24(lane) * p.span_f;
    precise float v = p.from_f + scaled;
    uint64_t r = bits_of_float(v, dtype);
    if (p.clamp != 0 && float_of_bits(r, dtype) >= p.to_f) r = uint64_t(p.below_bits);
    return r;
  }
  if (dist == DIST_BERNOULLI) return bits_of_int(double(uniform24(lane)) < p.d0 ? 1L : 0L, dtype);
  if (dist == DIST_RANDINT) return bits_of_int(int64_t(p.low + uint64_t(lane) % p.span), dtype);
  return bits_of_int(int64_t(uint64_t(lane)), dtype);  // BITS
}

// UNIFORM (float64), BERNOULLI (float64), RANDINT (range > 2^32) from two lanes.
uint64_t two_lane_bits(uint low, uint high) {
  Params p = pc.params;
  int dist = p.distribution, dtype = p.dtype;
  if (dist == DIST_UNIFORM) {
    precise double scaled = uniform53(low, high) * p.d1;
    precise double v = p.d0 + scaled;
    if (p.clamp != 0 && v >= p.d2) v = p.d3;
    return doubleBitsToUint64(v);
  }
  if (dist == DIST_BERNOULLI) return bits_of_int(uniform53(low, high) < p.d0 ? 1L : 0L, dtype);
  uint64_t x = join(low, high);
  if (p.span != 0UL) x = x % p.span;
  return bits_of_int(int64_t(p.low + x), dtype);
}

// NORMAL's out value v = mean + std z, rounded to the out dtype, for the
// shader's z and for z moved by the most the host's libm can differ: the
// rounding is monotone in z (std >= 0), so when both ends round to the same
// bits so does the host's z. |z - z_host| is below 2^-49 |z| when libm's and
// this shader's log, sin and cos are each within one ulp (glibc documents
// 0.52 for log); the band used, 2^-46 |z|, leaves a factor 8. Elements whose
// band holds a rounding boundary are flagged for the host (about one in 2^22
// for float32, fewer for 16-bit dtypes).
void normal_element(uint64_t element, double z) {
  Params p = pc.params;
  precise double scaled = p.d1 * z;
  precise double v = p.d0 + scaled;
  uint64_t bits = bits_of_double(v, p.dtype);
  store(element, bits);
  precise double band = abs(z) * 1.4210854715202004e-14LF;  // 2^-46
  precise double z_lo = z - band;
  precise double z_hi = z + band;
  precise double s_lo = p.d1 * z_lo;
  precise double s_hi = p.d1 * z_hi;
  precise double v_lo = p.d0 + s_lo;
  precise double v_hi = p.d0 + s_hi;
  if (bits_of_double(v_lo, p.dtype) != bits || bits_of_double(v_hi, p.dtype) != bits) {
    Flag f = Flag(p.flag_address);
    uint slot = atomicAdd(f.count, 1u);
    if (slot < p.flag_capacity) f.index[slot] = element;
  }
}

void main() {
  Params p = pc.params;
  const double TWO_PI = 6.283185307179586476925286766559LF;
  for (uint64_t j = global_index(); j < p.nblocks; j += invocations()) {
    uvec4 b = philox(p.offset + j, p.seed);
    if (p.mode == MODE_ONE) {
      uint64_t first = j * 4UL;
      for (int l = 0; l < 4; ++l)
        if (first + uint64_t(l) < p.numel) store(first + uint64_t(l), one_lane_bits(b[l]));
    } else if (p.mode == MODE_TWO) {
      uint64_t first = j * 2UL;
      store(first, two_lane_bits(b.x, b.y));
      if (first + 1UL < p.numel) store(first + 1UL, two_lane_bits(b.z, b.w));
    } else {
      // Box-Muller in double (24-bit uniforms: the out dtype is not float64).
      precise double u1 = uniform24_open(b.x);
      precise double u2 = double(uniform24(b.y));
      precise double l = log_open(u1);
      precise double r = sqrt_rn(-2.0LF * l);
      precise double theta = TWO_PI * u2;
      double sn, cs;
      sincos_reduced(theta, sn, cs);
      uint64_t first = j * 2UL;
      precise double z0 = r * cs;
      normal_element(first, z0);
      if (first + 1UL < p.numel) {
        precise double z1 = r * sn;
        normal_element(first + 1UL, z1);
      }
    }
  }
}
