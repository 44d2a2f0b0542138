// pointwise_math.glsl - the element functions of the pointwise ops
// (#include "pointwise_math.glsl" after common.glsl): _unary and _binary
// codes (tessera/opcodes.h) on double, int64 and bool values, and the
// double-precision transcendental functions they use (GLSL has them for
// float only), accurate to a few ulps of double. Shared by pointwise.comp
// (any dtype, strides, broadcast) and texel_unary.comp (contiguous float32
// through texels).

// An op's scalar arguments p0..p2, as double and as int64 (layout: part of
// pointwise/unary_binary.cpp's parameter blocks).
struct Scalars {
  double f[4];
  int64_t i[4];
};

// ---------------------------------------------------------------- double math
const double PI = 3.14159265358979311600LF;
const double PI_2 = 1.57079632679489655800LF;
const double PI_4 = 0.78539816339744827900LF;
const double LN2_HI = 6.93147180369123816490e-01LF;
const double LN2_LO = 1.90821492927058770002e-10LF;
const double LN2 = 0.693147180559945286227LF;
const double LOG2E = 1.44269504088896338700LF;
const double LOG10E = 0.434294481903251816668LF;
const double LOG10_2 = 0.301029995663981198017LF;
const double INV_LN2 = 1.44269504088896338700LF;
const double SQRT1_2 = 0.707106781186547572737LF;
const double TWO_OVER_SQRT_PI = 1.12837916709551255856LF;
const double INV_SQRT_PI = 0.564189583547756279280LF;
const double HALF_LOG_2PI = 0.918938533204672669541LF;

double d_inf() { return uint64BitsToDouble(0x7ff0000000000000UL); }
double d_nan() { return uint64BitsToDouble(0x7ff8000000000000UL); }
bool d_signbit(double x) { return (doubleBitsToUint64(x) >> 63) != 0UL; }
double d_copysign(double a, double b) {
  return uint64BitsToDouble((doubleBitsToUint64(a) & 0x7fffffffffffffffUL) |
                            (doubleBitsToUint64(b) & 0x8000000000000000UL));
}
// Round half to even (lavapipe's roundEven on double is not).
double d_rint(double x) {
  const double t = abs(x);
  if (!(t < 4503599627370496.0LF)) return x;  // NaN, inf and integers past 2^52
  const double f = floor(t);
  const double d = t - f;
  double r = f;
  if (d > 0.5LF || (d == 0.5LF && f - 2.0LF * floor(0.5LF * f) != 0.0LF)) r = f + 1.0LF;
  return d_copysign(r, x);
}
// x * 2^k for any k in [-2200, 2200] (GLSL's ldexp may build 2^k itself).
double d_scale(double x, int k) {
  const int h = k / 2;
  return ldexp(ldexp(x, h), k - h);
}

double d_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384LF) return d_inf();
  if (x < -745.2LF) return 0.0LF;
  const double k = d_rint(x * LOG2E);
  const double r = (x - k * LN2_HI) - k * LN2_LO;
  const double p =
      1.0LF +
      r * (1.0LF +
           r * (0.5LF +
                r * (0.16666666666666666LF +
                     r * (0.041666666666666664LF +
                          r * (0.008333333333333333LF +
                               r * (0.001388888888888889LF +
                                    r * (0.0001984126984126984LF +
                                         r * (2.48015873015873e-05LF +
                                              r * (2.7557319223985893e-06LF +
                                                   r * (2.755731922398589e-07LF +
                                                        r * (2.505210838544172e-08LF +
                                                             r * (2.08767569878681e-09LF +
                                                                  r * (1.6059043836821613e-10LF +
                                                                       r * (1.1470745597729725e-11LF))))))))))))));
  return d_scale(p, int(k));
}

double d_expm1(double x) {
  if (abs(x) < 0.5LF)
    return x *
           (1.0LF +
            x * (0.5LF +
                 x * (0.16666666666666666LF +
                      x * (0.041666666666666664LF +
                           x * (0.008333333333333333LF +
                                x * (0.001388888888888889LF +
                                     x * (0.0001984126984126984LF +
                                          x * (2.48015873015873e-05LF +
                                               x * (2.7557319223985893e-06LF +
                                                    x * (2.755731922398589e-07LF +
                                                         x * (2.505210838544172e-08LF +
                                                              x * (2.08767569878681e-09LF +
                                                                   x * (1.6059043836821613e-10LF +
                                                                        x * (1.1470745597729725e-11LF +
                                                                             x * (7.647163731819816e-13LF +
                                                                                  x * (4.779477332387385e-14LF +
                                                                                       x * (2.8114572543455206e-15LF +
                                                                                            x * (1.5619206968586225e-16LF))))))))))))))))));
  if (x < -40.0LF) return -1.0LF;
  return d_exp(x) - 1.0LF;
}

// log(x) = e * ln2 + l, returns l (log of the mantissa in [sqrt(.5), sqrt(2))) and e.
double d_log_parts(double x, out int e) {
  int sub = 0;
  if (x < 2.2250738585072014e-308LF) {  // subnormal: frexp need not handle it
    x *= 18014398509481984.0LF;         // 2^54
    sub = 54;
  }
  double m = frexp(x, e);
  e -= sub;
  if (m < SQRT1_2) {
    m *= 2.0LF;
    e -= 1;
  }
  const double s = (m - 1.0LF) / (m + 1.0LF);
  const double z = s * s;
  const double p =
      1.0LF +
      z * (0.3333333333333333LF +
           z * (0.2LF + z * (0.14285714285714285LF +
                             z * (0.1111111111111111LF +
                                  z * (0.09090909090909091LF +
                                       z * (0.07692307692307693LF +
                                            z * (0.06666666666666667LF +
                                                 z * (0.058823529411764705LF +
                                                      z * (0.05263157894736842LF +
                                                           z * (0.047619047619047616LF +
                                                                z * (0.043478260869565216LF +
                                                                     z * (0.04LF))))))))))));
  return 2.0LF * s * p;
}
double d_log(double x) {
  if (isnan(x) || x < 0.0LF) return d_nan();
  if (x == 0.0LF) return -d_inf();
  if (isinf(x)) return x;
  int e;
  const double l = d_log_parts(x, e);
  return double(e) * LN2_HI + (double(e) * LN2_LO + l);
}
double d_log2(double x) {
  if (isnan(x) || x < 0.0LF) return d_nan();
  if (x == 0.0LF) return -d_inf();
  if (isinf(x)) return x;
  int e;
  const double l = d_log_parts(x, e);
  return double(e) + l * LOG2E;
}
double d_log10(double x) {
  if (isnan(x) || x < 0.0LF) return d_nan();
  if (x == 0.0LF) return -d_inf();
  if (isinf(x)) return x;
  int e;
  const double l = d_log_parts(x, e);
  return double(e) * LOG10_2 + l * LOG10E;
}
double d_log1p(double x) {
  if (isnan(x) || x < -1.0LF) return d_nan();
  if (isinf(x)) return x;
  const double u = 1.0LF + x;
  if (u == 1.0LF) return x;
  return d_log(u) * (x / (u - 1.0LF));
}

double d_tanh(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  if (a > 22.0LF) return d_copysign(1.0LF, x);
  const double e = d_expm1(2.0LF * a);
  return d_copysign(e / (e + 2.0LF), x);
}
double d_sinh(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  double r;
  if (a > 709.0LF) {
    const double h = d_exp(0.5LF * a);
    r = (0.5LF * h) * h;
  } else {
    const double e = d_expm1(a);
    r = 0.5LF * (e + e / (e + 1.0LF));
  }
  return d_copysign(r, x);
}
double d_cosh(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  if (a > 709.0LF) {
    const double h = d_exp(0.5LF * a);
    return (0.5LF * h) * h;
  }
  const double e = d_exp(a);
  return 0.5LF * (e + 1.0LF / e);
}
double d_sigmoid(double x) {
  if (x >= 0.0LF) return 1.0LF / (1.0LF + d_exp(-x));
  const double e = d_exp(x);
  return e / (1.0LF + e);  // NaN falls here and stays NaN
}

// sin and cos of r, |r| <= pi/4.
double d_sin_poly(double r) {
  const double z = r * r;
  return r * (1.0LF +
              z * (-0.16666666666666666LF +
                   z * (0.008333333333333333LF +
                        z * (-0.0001984126984126984LF +
                             z * (2.7557319223985893e-06LF +
                                  z * (-2.505210838544172e-08LF +
                                       z * (1.6059043836821613e-10LF +
                                            z * (-7.647163731819816e-13LF +
                                                 z * (2.8114572543455206e-15LF +
                                                      z * (-8.22063524662433e-18LF +
                                                           z * (1.9572941063391263e-20LF)))))))))));
}
double d_cos_poly(double r) {
  const double z = r * r;
  return 1.0LF +
         z * (-0.5LF +
              z * (0.041666666666666664LF +
                   z * (-0.001388888888888889LF +
                        z * (2.48015873015873e-05LF +
                             z * (-2.755731922398589e-07LF +
                                  z * (2.08767569878681e-09LF +
                                       z * (-1.1470745597729725e-11LF +
                                            z * (4.779477332387385e-14LF +
                                                 z * (-1.5619206968586225e-16LF +
                                                      z * (4.110317623312165e-19LF))))))))));
}
// x = k * pi/2 + r; returns r and k mod 4.
double d_reduce(double x, out int q) {
  const double k = d_rint(x * 0.636619772367581382433LF);
  const double r = ((x - k * 1.57079632673412561417e+00LF) - k * 6.07710050630396597660e-11LF) -
                   k * 2.02226624871116645580e-21LF;
  q = int(int64_t(k) & 3L);
  return r;
}
double d_sin(double x) {
  if (isnan(x) || isinf(x)) return d_nan();
  if (x == 0.0LF) return x;
  int q;
  const double r = d_reduce(x, q);
  if (q == 0) return d_sin_poly(r);
  if (q == 1) return d_cos_poly(r);
  if (q == 2) return -d_sin_poly(r);
  return -d_cos_poly(r);
}
double d_cos(double x) {
  if (isnan(x) || isinf(x)) return d_nan();
  int q;
  const double r = d_reduce(x, q);
  if (q == 0) return d_cos_poly(r);
  if (q == 1) return -d_sin_poly(r);
  if (q == 2) return -d_cos_poly(r);
  return d_sin_poly(r);
}
double d_tan(double x) {
  if (isnan(x) || isinf(x)) return d_nan();
  if (x == 0.0LF) return x;
  int q;
  const double r = d_reduce(x, q);
  const double s = d_sin_poly(r), c = d_cos_poly(r);
  return (q & 1) == 0 ? s / c : -c / s;
}
double d_atan(double x) {
  if (isnan(x)) return x;
  if (x == 0.0LF) return x;
  double a = abs(x);
  const bool inv = a > 1.0LF;
  if (inv) a = 1.0LF / a;
  // two halvings: atan(a) = 2 atan(a / (1 + sqrt(1 + a^2)))
  a = a / (1.0LF + sqrt(1.0LF + a * a));
  a = a / (1.0LF + sqrt(1.0LF + a * a));
  const double z = a * a;
  const double p =
      1.0LF +
      z * (-0.3333333333333333LF +
           z * (0.2LF +
                z * (-0.14285714285714285LF +
                     z * (0.1111111111111111LF +
                          z * (-0.09090909090909091LF +
                               z * (0.07692307692307693LF +
                                    z * (-0.06666666666666667LF +
                                         z * (0.058823529411764705LF +
                                              z * (-0.05263157894736842LF +
                                                   z * (0.047619047619047616LF +
                                                        z * (-0.043478260869565216LF +
                                                             z * (0.04LF +
                                                                  z * (-0.037037037037037035LF +
                                                                       z * (0.034482758620689655LF))))))))))))));
  double r = 4.0LF * a * p;
  if (inv) r = PI_2 - r;
  return d_copysign(r, x);
}
double d_atan2(double y, double x) {
  if (isnan(x) || isnan(y)) return x + y;
  if (isinf(x) && isinf(y)) return d_copysign(x > 0.0LF ? PI_4 : 3.0LF * PI_4, y);
  if (y == 0.0LF) return d_signbit(x) ? d_copysign(PI, y) : d_copysign(0.0LF, y);
  if (isinf(x)) return x > 0.0LF ? d_copysign(0.0LF, y) : d_copysign(PI, y);
  if (isinf(y) || x == 0.0LF) return d_copysign(PI_2, y);
  const double a = d_atan(abs(y) / abs(x));
  return d_copysign(x > 0.0LF ? a : PI - a, y);
}
double d_asin(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return d_nan();
  if (x == 0.0LF) return x;
  return d_atan2(x, sqrt((1.0LF - x) * (1.0LF + x)));
}
double d_acos(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return d_nan();
  return 2.0LF * d_atan2(sqrt(1.0LF - x), sqrt(1.0LF + x));
}
double d_asinh(double x) {
  if (isnan(x) || isinf(x) || x == 0.0LF) return x;
  const double a = abs(x);
  double r;
  if (a > 1e8LF)
    r = d_log(a) + LN2;
  else
    r = d_log1p(a + a * a / (1.0LF + sqrt(1.0LF + a * a)));
  return d_copysign(r, x);
}
double d_acosh(double x) {
  if (isnan(x) || x < 1.0LF) return d_nan();
  if (isinf(x)) return x;
  if (x > 1e8LF) return d_log(x) + LN2;
  const double t = x - 1.0LF;
  return d_log1p(t + sqrt(2.0LF * t + t * t));
}
double d_atanh(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return d_nan();
  if (x == 0.0LF) return x;
  const double a = abs(x);
  return d_copysign(0.5LF * d_log1p(2.0LF * a / (1.0LF - a)), x);
}

// exp(-x^2), x >= 0, with x^2 split exactly.
double d_exp_neg_sq(double x) {
  const double h = double(float(x));
  return d_exp(-h * h) * d_exp(-(x - h) * (x + h));
}
// erf by its Taylor series, |x| <= 2.5.
double d_erf_series(double x) {
  const double z = x * x;
  double term = x, sum = x;
  for (int n = 1; n < 80; ++n) {
    term *= -z / double(n);
    const double add = term / double(2 * n + 1);
    sum += add;
    if (abs(add) < 1e-17LF * abs(sum)) break;
  }
  return TWO_OVER_SQRT_PI * sum;
}
// erfc by its continued fraction, x >= 2.5.
double d_erfc_cf(double x) {
  if (x > 27.3LF) return 0.0LF;
  const int terms = x < 4.0LF ? 60 : 25;
  double t = 0.0LF;
  for (int n = terms; n >= 1; --n) t = (0.5LF * double(n)) / (x + t);
  return d_exp_neg_sq(x) * INV_SQRT_PI / (x + t);
}
double d_erf(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  if (a <= 2.5LF) return d_erf_series(x);
  return d_copysign(1.0LF - d_erfc_cf(a), x);
}
double d_erfc(double x) {
  if (isnan(x)) return x;
  if (x < 0.0LF) {
    if (x >= -2.5LF) return 1.0LF - d_erf_series(x);
    return 2.0LF - d_erfc_cf(-x);
  }
  if (x < 0.5LF) return 1.0LF - d_erf_series(x);
  if (x <= 2.5LF) return 1.0LF - d_erf_series(x);
  return d_erfc_cf(x);
}
// Note [erf for narrow floats]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// For a result rounded to float32 (or float16/bfloat16) the series above
// are far more than needed, and on lavapipe, which runs every side of a
// branch and every loop until its slowest lane ends, erf's series and
// erfc's continued fraction (both, for every element) made gelu over 16M
// floats 33 ms against 2 ms for its tanh form. So a narrow input takes fixed
// approximations fitted (minimax in relative error, Lawson's iteration,
// against 40-digit erf and erfc) to a relative error far below float32's
// half ulp:
//  - |x| < 0.5: erf(x) = x P(x^2), P of degree 4 (relative error 1.4e-9);
//  - 0.5 <= |x| <= 10.6: erfc(|x|) = exp(-x^2) R(t), t = 2 / (2 + |x|), R
//    of degree 10 (relative error 1.2e-9); past 10.6 erfc is zero (in
//    float32 it rounds to zero from 10.06 on, and gelu's 0.5 x erfc(-x /
//    sqrt 2) from 10.5);
//  - erf = 1 - erfc and erfc = 1 - erf across the split, which 0.5 keeps
//    well conditioned both ways, and erf(-x) = -erf(x), erfc(-x) = 2 - erfc(x).
// They are evaluated in double, with this file's exp: evaluated in float32
// the same polynomials measured up to 3.4 ulp (R's Horner steps and its
// coefficients rounded to float), and double keeps exp(-x^2) exact in its
// argument (a float's square fits a double) and subnormal results
// (erf(1e-40), erfc(9.9)) unflushed on drivers that flush float32
// denormals. A float32 result is then within 0.52 ulp of the true value
// (erf 0.52, erfc 0.52, gelu 0.52 over a dense sweep in a model of this
// code; vulkan_device_test measures the shader). float64
// inputs keep the series.
const double ERF_P0 = 1.12837916557554774e+00LF, ERF_P1 = -3.76126086762478662e-01LF,
             ERF_P2 = 1.12828248575783330e-01LF, ERF_P3 = -2.67573144619598947e-02LF,
             ERF_P4 = 4.71824923618763270e-03LF;
const double ERFC_R0 = 2.55336137331931273e-06LF, ERFC_R1 = 2.82013611226673455e-01LF,
             ERFC_R2 = 2.83220862290914810e-01LF, ERFC_R3 = 2.37873932750261502e-01LF,
             ERFC_R4 = 2.21443200977487320e-01LF, ERFC_R5 = -6.57050295330722234e-02LF,
             ERFC_R6 = 3.19940661575420726e-01LF, ERFC_R7 = -4.93914454973359673e-01LF,
             ERFC_R8 = 2.50234522789745062e-01LF, ERFC_R9 = -2.41654565877396851e-02LF,
             ERFC_R10 = -1.09609694090097819e-02LF;
// erf(x) for |x| < 0.5.
double n_erf_small(double x) {
  const double s = x * x;
  return x * (ERF_P0 + s * (ERF_P1 + s * (ERF_P2 + s * (ERF_P3 + s * ERF_P4))));
}
// erfc(a) for a >= 0.5 (0 past 10.6, and for a = +inf).
double n_erfc_tail(double a) {
  const double t = 2.0LF / (2.0LF + a);
  const double r =
      ERFC_R0 +
      t * (ERFC_R1 +
           t * (ERFC_R2 +
                t * (ERFC_R3 +
                     t * (ERFC_R4 +
                          t * (ERFC_R5 +
                               t * (ERFC_R6 +
                                    t * (ERFC_R7 + t * (ERFC_R8 + t * (ERFC_R9 + t * ERFC_R10)))))))));
  return a > 10.6LF ? 0.0LF : d_exp(-a * a) * r;
}
double n_erf(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  const double big = d_copysign(1.0LF - n_erfc_tail(a), x);
  return a < 0.5LF ? n_erf_small(x) : big;
}
double n_erfc(double x) {
  if (isnan(x)) return x;
  const double q = n_erfc_tail(abs(x));
  const double big = x > 0.0LF ? q : 2.0LF - q;
  return abs(x) < 0.5LF ? 1.0LF - n_erf_small(x) : big;
}
// erfinv: Giles's single-precision approximation ("Approximating the
// erfinv function", GPU Computing Gems, 2011), then Newton steps on erf
// (erfc past 0.5, where 1 - y is exact): two with the series for float64,
// one with Note [erf for narrow floats]'s erf for a narrow result (a step
// about squares the approximation's single-precision relative error, so
// what remains is erf's own, far below float32's rounding).
double erfinv_with(double y, bool narrow) {
  if (isnan(y) || y < -1.0LF || y > 1.0LF) return d_nan();
  if (y == 1.0LF) return d_inf();
  if (y == -1.0LF) return -d_inf();
  if (y == 0.0LF) return y;
  double w = -d_log((1.0LF - y) * (1.0LF + y));
  double p;
  if (w < 5.0LF) {
    w -= 2.5LF;
    p = 2.81022636e-08LF;
    p = 3.43273939e-07LF + p * w;
    p = -3.5233877e-06LF + p * w;
    p = -4.39150654e-06LF + p * w;
    p = 0.00021858087LF + p * w;
    p = -0.00125372503LF + p * w;
    p = -0.00417768164LF + p * w;
    p = 0.246640727LF + p * w;
    p = 1.50140941LF + p * w;
  } else {
    w = sqrt(w) - 3.0LF;
    p = -0.000200214257LF;
    p = 0.000100950558LF + p * w;
    p = 0.00134934322LF + p * w;
    p = -0.00367342844LF + p * w;
    p = 0.00573950773LF + p * w;
    p = -0.0076224613LF + p * w;
    p = 0.00943887047LF + p * w;
    p = 1.00167406LF + p * w;
    p = 2.83297682LF + p * w;
  }
  const double a = abs(y);
  double x = p * a;
  for (int i = 0; i < (narrow ? 1 : 2); ++i) {
    const double slope = TWO_OVER_SQRT_PI * d_exp_neg_sq(x);
    if (slope == 0.0LF) break;
    if (a > 0.5LF)
      x += ((narrow ? n_erfc(x) : d_erfc(x)) - (1.0LF - a)) / slope;
    else
      x -= ((narrow ? n_erf(x) : d_erf(x)) - a) / slope;
  }
  return y < 0.0LF ? -x : x;
}
// sin(pi x), exact reduction.
double d_sinpi(double x) {
  double r = x - 2.0LF * floor(0.5LF * x);  // [0, 2)
  double s = 1.0LF;
  if (r >= 1.0LF) {
    r -= 1.0LF;
    s = -1.0LF;
  }
  if (r > 0.5LF) r = 1.0LF - r;
  return s * d_sin(PI * r);
}
double d_lgamma_pos(double x) {  // x >= 0.5
  double shift = 0.0LF;
  double prod = 1.0LF;
  while (x < 10.0LF) {
    prod *= x;
    x += 1.0LF;
  }
  shift = d_log(prod);
  const double z = 1.0LF / (x * x);
  const double series =
      (1.0LF / 12.0LF -
       z * (1.0LF / 360.0LF -
            z * (1.0LF / 1260.0LF -
                 z * (1.0LF / 1680.0LF - z * (1.0LF / 1188.0LF - z * (691.0LF / 360360.0LF)))))) /
      x;
  return (x - 0.5LF) * d_log(x) - x + HALF_LOG_2PI + series - shift;
}
double d_lgamma(double x) {
  if (isnan(x)) return x;
  if (isinf(x)) return d_inf();
  if (x <= 0.0LF && x == floor(x)) return d_inf();
  if (x >= 0.5LF) return d_lgamma_pos(x);
  // reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
  return d_log(PI / abs(d_sinpi(x))) - d_lgamma_pos(1.0LF - x);
}
double d_digamma(double x) {
  if (isnan(x)) return x;
  if (x == 0.0LF) return d_copysign(d_inf(), -x);
  if (isinf(x)) return x > 0.0LF ? x : d_nan();
  double result = 0.0LF;
  if (x < 0.0LF) {
    if (x == floor(x)) return d_nan();
    result = -PI / d_tan(PI * x);
    x = 1.0LF - x;
  }
  while (x < 10.0LF) {
    result -= 1.0LF / x;
    x += 1.0LF;
  }
  const double z = 1.0LF / (x * x);
  const double series =
      z * (1.0LF / 12.0LF -
           z * (1.0LF / 120.0LF -
                z * (1.0LF / 252.0LF - z * (1.0LF / 240.0LF - z * (1.0LF / 132.0LF)))));
  return result + d_log(x) - 0.5LF / x - series;
}
bool d_is_int(double y) { return !isinf(y) && y == floor(y); }
bool d_is_odd(double y) {
  return d_is_int(y) && abs(y) < 9007199254740992.0LF && (int64_t(y) & 1L) == 1L;
}
double d_pow(double a, double b) {
  if (b == 0.0LF || a == 1.0LF) return 1.0LF;
  if (isnan(a) || isnan(b)) return a + b;
  if (isinf(b)) {
    const double m = abs(a);
    if (m == 1.0LF) return 1.0LF;
    return (m < 1.0LF) == (b > 0.0LF) ? 0.0LF : d_inf();
  }
  const bool odd = d_is_odd(b);
  if (a == 0.0LF || isinf(a)) {
    const bool big = (a == 0.0LF) == (b < 0.0LF);
    const double r = big ? d_inf() : 0.0LF;
    return odd && d_signbit(a) ? -r : r;
  }
  if (a < 0.0LF && !d_is_int(b)) return d_nan();
  const double m = abs(a);
  double r;
  if (d_is_int(b) && abs(b) <= 64.0LF) {
    int e = int(abs(b));
    double base = m;
    r = 1.0LF;
    while (e != 0) {
      if ((e & 1) != 0) r *= base;
      base *= base;
      e >>= 1;
    }
    if (b < 0.0LF) r = 1.0LF / r;
  } else {
    r = d_exp(b * d_log(m));
  }
  return a < 0.0LF && odd ? -r : r;
}
double d_hypot(double a, double b) {
  if (isinf(a) || isinf(b)) return d_inf();
  if (isnan(a) || isnan(b)) return a + b;
  a = abs(a);
  b = abs(b);
  const double m = max(a, b), n = min(a, b);
  if (m == 0.0LF) return 0.0LF;
  const double q = n / m;
  return m * sqrt(1.0LF + q * q);
}
double d_fmod(double a, double b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0.0LF) return d_nan();
  if (isinf(b)) return a;
  // exact long division on magnitudes
  double x = abs(a);
  const double y = abs(b);
  if (x < y) return a;
  int ex, ey;
  frexp(x, ex);
  frexp(y, ey);
  for (int k = ex - ey; k >= 0; --k) {
    const double s = ldexp(y, k);
    if (x >= s) x -= s;
  }
  return d_copysign(x, a);
}
double d_floor_divide(double a, double b) {
  if (b == 0.0LF) return a / b;
  const double m = d_fmod(a, b);
  double div = (a - m) / b;
  if (m != 0.0LF && ((b < 0.0LF) != (m < 0.0LF))) div -= 1.0LF;
  if (div == 0.0LF) return d_copysign(0.0LF, a / b);
  double fd = floor(div);
  if (div - fd > 0.5LF) fd += 1.0LF;
  return fd;
}

// ----------------------------------------------------------------- function codes
// _unary
const int U_NEG = 0, U_ABS = 1, U_SIGN = 2, U_EXP = 3, U_EXP2 = 4, U_EXPM1 = 5, U_LOG = 6,
          U_LOG2 = 7, U_LOG10 = 8, U_LOG1P = 9, U_SQRT = 10, U_RSQRT = 11, U_RECIPROCAL = 12,
          U_SIN = 13, U_COS = 14, U_TAN = 15, U_ASIN = 16, U_ACOS = 17, U_ATAN = 18, U_SINH = 19,
          U_COSH = 20, U_TANH = 21, U_ASINH = 22, U_ACOSH = 23, U_ATANH = 24, U_SIGMOID = 25,
          U_LOGIT = 26, U_ERF = 27, U_ERFC = 28, U_ERFINV = 29, U_LGAMMA = 30, U_DIGAMMA = 31,
          U_FLOOR = 32, U_CEIL = 33, U_ROUND = 34, U_TRUNC = 35, U_FRAC = 36, U_RELU = 37,
          U_LEAKY_RELU = 38, U_ELU = 39, U_GELU = 40, U_GELU_TANH = 41, U_SILU = 42, U_MISH = 43,
          U_SOFTPLUS = 44, U_CLAMP = 45, U_CLAMP_MIN = 46, U_CLAMP_MAX = 47, U_HARDSIGMOID = 48,
          U_HARDSWISH = 49, U_SQUARE = 50, U_BITWISE_NOT = 51, U_LOGICAL_NOT = 52, U_ISNAN = 53,
          U_ISINF = 54, U_ISPOSINF = 55, U_ISNEGINF = 56, U_ISFINITE = 57, U_SIGNBIT = 58,
          U_NAN_TO_NUM = 59;
// _binary
const int B_POW = 0, B_ATAN2 = 1, B_MAXIMUM = 2, B_MINIMUM = 3, B_FMAX = 4, B_FMIN = 5,
          B_REMAINDER = 6, B_FMOD = 7, B_DIV_TRUNC = 8, B_DIV_FLOOR = 9, B_AND = 10, B_OR = 11,
          B_XOR = 12, B_LSHIFT = 13, B_RSHIFT = 14, B_LOGICAL_AND = 15, B_LOGICAL_OR = 16,
          B_LOGICAL_XOR = 17, B_EQ = 18, B_NE = 19, B_LT = 20, B_LE = 21, B_GT = 22, B_GE = 23,
          B_COPYSIGN = 24, B_HYPOT = 25, B_XLOGY = 26, B_LOGADDEXP = 27;

double clamp_lo_hi(double x, double lo, double hi) {
  const double r = x < lo ? lo : x;
  return r > hi ? hi : r;
}

// Floating _unary whose result is a value (not a predicate).
double unary_float(int op, double x, int dtype, Scalars sc) {
  switch (op) {
    case U_NEG:
      return -x;
    case U_ABS:
      return abs(x);
    case U_SIGN:
      return x > 0.0LF ? 1.0LF : (x < 0.0LF ? -1.0LF : 0.0LF);
    case U_EXP:
      return d_exp(x);
    case U_EXP2: {
      if (isnan(x)) return x;
      if (x > 1024.0LF) return d_inf();
      if (x < -1080.0LF) return 0.0LF;
      const double k = d_rint(x);
      return d_scale(d_exp((x - k) * LN2), int(k));
    }
    case U_EXPM1:
      return d_expm1(x);
    case U_LOG:
      return d_log(x);
    case U_LOG2:
      return d_log2(x);
    case U_LOG10:
      return d_log10(x);
    case U_LOG1P:
      return d_log1p(x);
    case U_SQRT:
      return sqrt(x);
    case U_RSQRT:
      return 1.0LF / sqrt(x);
    case U_RECIPROCAL:
      return 1.0LF / x;
    case U_SIN:
      return d_sin(x);
    case U_COS:
      return d_cos(x);
    case U_TAN:
      return d_tan(x);
    case U_ASIN:
      return d_asin(x);
    case U_ACOS:
      return d_acos(x);
    case U_ATAN:
      return d_atan(x);
    case U_SINH:
      return d_sinh(x);
    case U_COSH:
      return d_cosh(x);
    case U_TANH:
      return d_tanh(x);
    case U_ASINH:
      return d_asinh(x);
    case U_ACOSH:
      return d_acosh(x);
    case U_ATANH:
      return d_atanh(x);
    case U_SIGMOID:
      return d_sigmoid(x);
    case U_LOGIT: {
      double z = x;
      if (sc.f[0] >= 0.0LF) {
        double lo = sc.f[0], hi = 1.0LF - sc.f[0];
        if (dtype != FLOAT64) {
          lo = double(float(lo));
          hi = double(1.0 - float(sc.f[0]));
        }
        z = x < lo ? lo : (x > hi ? hi : x);
      }
      return d_log(z / (1.0LF - z));
    }
    case U_ERF:  // Note [erf for narrow floats]
      return dtype == FLOAT64 ? d_erf(x) : n_erf(x);
    case U_ERFC:
      return dtype == FLOAT64 ? d_erfc(x) : n_erfc(x);
    case U_ERFINV:
      return erfinv_with(x, dtype != FLOAT64);
    case U_LGAMMA:
      return d_lgamma(x);
    case U_DIGAMMA:
      return d_digamma(x);
    case U_FLOOR:
      return floor(x);
    case U_CEIL:
      return ceil(x);
    case U_TRUNC:
      return trunc(x);
    case U_ROUND: {
      const int64_t decimals = sc.i[0];
      if (decimals == 0L) return d_rint(x);
      double scale = 1.0LF;
      for (int64_t k = 0L; k < abs(decimals) && k < 400L; ++k) scale *= 10.0LF;
      if (dtype == FLOAT64) {
        if (decimals > 0L) return d_rint(x * scale) / scale;
        return d_rint(x / scale) * scale;
      }
      const float xf = float(x), sf = float(scale);
      if (decimals > 0L) return double(float(d_rint(double(xf * sf))) / sf);
      return double(float(d_rint(double(xf / sf))) * sf);
    }
    case U_FRAC:
      return isinf(x) ? d_nan() : x - trunc(x);
    case U_RELU:
      return x < 0.0LF ? 0.0LF : x;
    case U_LEAKY_RELU:
      return x > 0.0LF ? x : x * sc.f[0];
    case U_ELU:
      return x > 0.0LF ? x * sc.f[1] : sc.f[0] * sc.f[1] * d_expm1(x * sc.f[2]);
    case U_GELU:
      return 0.5LF * x * (dtype == FLOAT64 ? d_erfc(-x * SQRT1_2) : n_erfc(-x * SQRT1_2));
    case U_GELU_TANH: {
      const double beta = 0.797884560802865355880LF;
      const double inner = beta * (x + 0.044715LF * x * x * x);
      return 0.5LF * x * (1.0LF + d_tanh(inner));
    }
    case U_SILU:
      return x * d_sigmoid(x);
    case U_MISH:
      return x * d_tanh(d_log1p(d_exp(x)));
    case U_SOFTPLUS: {
      const double beta = sc.f[0], threshold = sc.f[1];
      return x * beta > threshold ? x : d_log1p(d_exp(x * beta)) / beta;
    }
    case U_CLAMP:
      return clamp_lo_hi(x, sc.f[0], sc.f[1]);
    case U_CLAMP_MIN:
      return x < sc.f[0] ? sc.f[0] : x;
    case U_CLAMP_MAX:
      return x > sc.f[0] ? sc.f[0] : x;
    case U_HARDSIGMOID:
      return clamp_lo_hi(x + 3.0LF, 0.0LF, 6.0LF) / 6.0LF;
    case U_HARDSWISH:
      return x * clamp_lo_hi(x + 3.0LF, 0.0LF, 6.0LF) / 6.0LF;
    case U_SQUARE:
      return x * x;
    case U_NAN_TO_NUM:
      if (isnan(x)) return sc.f[0];
      if (isinf(x)) return x > 0.0LF ? sc.f[1] : sc.f[2];
      return x;
  }
  return d_nan();
}

bool unary_float_test(int op, double x) {
  switch (op) {
    case U_LOGICAL_NOT:
      return x == 0.0LF;
    case U_ISNAN:
      return isnan(x);
    case U_ISINF:
      return isinf(x);
    case U_ISPOSINF:
      return isinf(x) && x > 0.0LF;
    case U_ISNEGINF:
      return isinf(x) && x < 0.0LF;
    case U_ISFINITE:
      return !isinf(x) && !isnan(x);
    case U_SIGNBIT:
      return d_signbit(x);
  }
  return false;
}

bool is_unary_test(int op) { return op >= U_LOGICAL_NOT && op <= U_SIGNBIT; }

int64_t unary_int(int op, int64_t x, int dtype, Scalars sc) {
  const bool is_signed = dtype != UINT8 && dtype != BOOL;
  switch (op) {
    case U_SIGN:
      return x > 0L ? 1L : (x < 0L ? -1L : 0L);
    case U_NAN_TO_NUM:
      return x;
    case U_BITWISE_NOT:
      return dtype == BOOL ? (x == 0L ? 1L : 0L) : ~x;
    case U_LOGICAL_NOT:
      return x == 0L ? 1L : 0L;
    case U_ISNAN:
    case U_ISINF:
    case U_ISPOSINF:
    case U_ISNEGINF:
      return 0L;
    case U_ISFINITE:
      return 1L;
    case U_SIGNBIT:
      return is_signed && x < 0L ? 1L : 0L;
    case U_NEG:
      return -x;
    case U_ABS:
      return x < 0L ? -x : x;
    case U_FLOOR:
    case U_CEIL:
    case U_ROUND:
    case U_TRUNC:
      return x;
    case U_RELU:
      return x < 0L ? 0L : x;
    case U_SQUARE:
      return x * x;
    case U_CLAMP: {
      const int64_t r = x < sc.i[0] ? sc.i[0] : x;
      return r > sc.i[1] ? sc.i[1] : r;
    }
    case U_CLAMP_MIN:
      return x < sc.i[0] ? sc.i[0] : x;
    case U_CLAMP_MAX:
      return x > sc.i[0] ? sc.i[0] : x;
  }
  return 0L;
}

bool is_binary_test(int op) {
  return (op >= B_LOGICAL_AND && op <= B_LOGICAL_XOR) || (op >= B_EQ && op <= B_GE);
}

bool binary_test_float(int op, double a, double b) {
  switch (op) {
    case B_LOGICAL_AND:
      return a != 0.0LF && b != 0.0LF;
    case B_LOGICAL_OR:
      return a != 0.0LF || b != 0.0LF;
    case B_LOGICAL_XOR:
      return (a != 0.0LF) != (b != 0.0LF);
    case B_EQ:
      return a == b;
    case B_NE:
      return a != b;
    case B_LT:
      return a < b;
    case B_LE:
      return a <= b;
    case B_GT:
      return a > b;
    case B_GE:
      return a >= b;
  }
  return false;
}
bool binary_test_int(int op, int64_t a, int64_t b) {
  switch (op) {
    case B_LOGICAL_AND:
      return a != 0L && b != 0L;
    case B_LOGICAL_OR:
      return a != 0L || b != 0L;
    case B_LOGICAL_XOR:
      return (a != 0L) != (b != 0L);
    case B_EQ:
      return a == b;
    case B_NE:
      return a != b;
    case B_LT:
      return a < b;
    case B_LE:
      return a <= b;
    case B_GT:
      return a > b;
    case B_GE:
      return a >= b;
  }
  return false;
}

double binary_float(int op, double a, double b, int dtype) {
  switch (op) {
    case B_POW:
      return d_pow(a, b);
    case B_ATAN2:
      return d_atan2(a, b);
    case B_MAXIMUM:
      return (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b);
    case B_MINIMUM:
      return (isnan(a) || isnan(b)) ? a + b : (a < b ? a : b);
    case B_FMAX:
      return isnan(a) ? b : (isnan(b) ? a : (a > b ? a : b));
    case B_FMIN:
      return isnan(a) ? b : (isnan(b) ? a : (a < b ? a : b));
    case B_REMAINDER: {
      double r = d_fmod(a, b);
      if (r != 0.0LF && ((b < 0.0LF) != (r < 0.0LF))) r += b;
      return r;
    }
    case B_FMOD:
      return d_fmod(a, b);
    case B_DIV_TRUNC: {
      if (dtype != FLOAT64) return double(trunc(float(a) / float(b)));
      return trunc(a / b);
    }
    case B_DIV_FLOOR:
      return d_floor_divide(a, b);
    case B_COPYSIGN:
      return d_copysign(a, b);
    case B_HYPOT:
      return d_hypot(a, b);
    case B_XLOGY:
      if (isnan(b)) return b;
      return a == 0.0LF ? 0.0LF : a * d_log(b);
    case B_LOGADDEXP: {
      if (isinf(a) && a == b) return a;
      const double m = (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b);
      return m + d_log1p(d_exp(-abs(a - b)));
    }
  }
  return d_nan();
}

int64_t binary_int(int op, int64_t a, int64_t b, int dtype) {
  const bool is_signed = dtype != UINT8 && dtype != BOOL;
  const int64_t bits = int64_t(element_size(dtype) * 8);
  switch (op) {
    case B_MAXIMUM:
    case B_FMAX:
      return a > b ? a : b;
    case B_MINIMUM:
    case B_FMIN:
      return a < b ? a : b;
    case B_AND:
      return a & b;
    case B_OR:
      return a | b;
    case B_XOR:
      return a ^ b;
    case B_POW: {
      if (b < 0L) {
        if (a == 1L) return 1L;
        if (a == -1L) return (b & 1L) != 0L ? -1L : 1L;
        return 0L;
      }
      int64_t r = 1L, base = a, e = b;
      while (e != 0L) {
        if ((e & 1L) != 0L) r *= base;
        base *= base;
        e >>= 1;
      }
      return r;
    }
    case B_REMAINDER: {
      if (b == 0L || b == -1L) return 0L;
      int64_t r = a - (a / b) * b;
      if (r != 0L && ((r < 0L) != (b < 0L))) r += b;
      return r;
    }
    case B_FMOD:
      if (b == 0L || b == -1L) return 0L;
      return a - (a / b) * b;
    case B_DIV_TRUNC:
      if (b == 0L) return 0L;
      if (b == -1L) return -a;
      return a / b;
    case B_DIV_FLOOR: {
      if (b == 0L) return 0L;
      if (b == -1L) return -a;
      int64_t q = a / b;
      if (a - q * b != 0L && ((a < 0L) != (b < 0L))) q -= 1L;
      return q;
    }
    case B_LSHIFT:
      if (b < 0L || b >= bits) return 0L;
      return a << b;
    case B_RSHIFT:
      if (b < 0L || b >= bits) return is_signed && a < 0L ? -1L : 0L;
      return a >> b;
  }
  return 0L;
}
