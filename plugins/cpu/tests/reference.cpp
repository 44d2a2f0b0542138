// reference.cpp - the tests' independent element codecs and conversion rules.
#include "reference.hpp"

#include <cfloat>
#include <cmath>
#include <complex>
#include <cstring>
#include <sstream>

namespace cpu_test {

bool is_bool(tsr_dtype d) { return d == TSR_BOOL; }
bool is_integer(tsr_dtype d) { return d >= TSR_UINT8 && d <= TSR_INT64; }
bool is_floating(tsr_dtype d) { return d >= TSR_FLOAT16 && d <= TSR_FLOAT64; }
bool is_complex(tsr_dtype d) { return d == TSR_COMPLEX64 || d == TSR_COMPLEX128; }

size_t size_of(tsr_dtype d) {
  switch (d) {
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8:
      return 1;
    case TSR_INT16:
    case TSR_FLOAT16:
    case TSR_BFLOAT16:
      return 2;
    case TSR_INT32:
    case TSR_FLOAT32:
      return 4;
    case TSR_INT64:
    case TSR_FLOAT64:
    case TSR_COMPLEX64:
      return 8;
    case TSR_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

const char* name_of(tsr_dtype d) {
  static const char* const names[] = {"bool",    "uint8",   "int8",      "int16",
                                      "int32",   "int64",   "float16",   "bfloat16",
                                      "float32", "float64", "complex64", "complex128"};
  return d >= 0 && d < TSR_DTYPE_COUNT ? names[d] : "?";
}

std::vector<tsr_dtype> all_dtypes() {
  std::vector<tsr_dtype> out;
  for (int d = 0; d < TSR_DTYPE_COUNT; ++d) out.push_back(static_cast<tsr_dtype>(d));
  return out;
}

namespace {

// Rounds |x| (finite, > 0) to `mantissa_bits` fraction bits with the smallest
// normal exponent `min_exp`: returns the rounded magnitude.
long double round_magnitude(long double a, int mantissa_bits, int min_exp) {
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): leading bit 2^(e-1)
  const int exponent = std::max(e - 1, min_exp);
  const long double ulp = std::ldexp(1.0L, exponent - mantissa_bits);
  return std::nearbyint(a / ulp) * ulp;  // default rounding: nearest, ties to even
}

// Wraps an integral value into `bits` bits, signed or not.
long double wrap_integer(long double x, int bits, bool is_signed) {
  // x is integral; reduce modulo 2^64 exactly through unsigned arithmetic.
  const long double two64 = std::ldexp(1.0L, 64);
  long double r = std::fmod(x, two64);
  if (r < 0) r += two64;
  uint64_t u = 0;
  if (r >= std::ldexp(1.0L, 63)) {
    u = static_cast<uint64_t>(r - std::ldexp(1.0L, 63)) + (uint64_t{1} << 63);
  } else {
    u = static_cast<uint64_t>(r);
  }
  if (bits < 64) u &= (uint64_t{1} << bits) - 1;
  if (is_signed && bits < 64 && (u >> (bits - 1)) != 0) {
    return static_cast<long double>(u) - std::ldexp(1.0L, bits);
  }
  if (is_signed && bits == 64) return static_cast<long double>(static_cast<int64_t>(u));
  return static_cast<long double>(u);
}

void integer_range(tsr_dtype d, int& bits, bool& is_signed) {
  switch (d) {
    case TSR_UINT8:
      bits = 8, is_signed = false;
      break;
    case TSR_INT8:
      bits = 8, is_signed = true;
      break;
    case TSR_INT16:
      bits = 16, is_signed = true;
      break;
    case TSR_INT32:
      bits = 32, is_signed = true;
      break;
    default:
      bits = 64, is_signed = true;
      break;
  }
}

// Rounds an exact real to floating dtype d (nearest even), as a value.
long double round_real(tsr_dtype d, long double x) {
  switch (d) {
    case TSR_FLOAT16:
      return ref_half_value(ref_half_bits(x));
    case TSR_BFLOAT16:
      return ref_bfloat16_value(ref_bfloat16_bits(x));
    case TSR_FLOAT32:
    case TSR_COMPLEX64:
      return static_cast<float>(x);
    default:
      return static_cast<double>(x);
  }
}

}  // namespace

uint16_t ref_half_bits(long double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  const long double a = std::fabs(x);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a == 0) return sign;
  const long double v = round_magnitude(a, 10, -14);
  if (v >= 65536.0L) return sign | 0x7c00;
  if (v < std::ldexp(1.0L, -14)) return sign | static_cast<uint16_t>(v / std::ldexp(1.0L, -24));
  int e = 0;
  std::frexp(v, &e);
  const int exponent = e - 1;
  const auto mantissa = static_cast<uint16_t>(v / std::ldexp(1.0L, exponent - 10) - 1024);
  return sign | static_cast<uint16_t>((exponent + 15) << 10) | mantissa;
}

long double ref_half_value(uint16_t bits) {
  const long double sign = (bits & 0x8000) ? -1.0L : 1.0L;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<long double>(mantissa), -24);
  return sign * std::ldexp(static_cast<long double>(1024 + mantissa), exponent - 25);
}

uint16_t ref_bfloat16_bits(long double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7fc0;
  const long double a = std::fabs(x);
  if (std::isinf(a)) return sign | 0x7f80;
  if (a == 0) return sign;
  const long double v = round_magnitude(a, 7, -126);
  if (v > FLT_MAX) return sign | 0x7f80;
  const float f = static_cast<float>(v);  // exact: v is a bfloat16 value
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return sign | static_cast<uint16_t>(u >> 16);
}

long double ref_bfloat16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

ref_value decode(tsr_dtype d, const void* p) {
  ref_value v;
  switch (d) {
    case TSR_BOOL: {
      uint8_t b = 0;
      std::memcpy(&b, p, 1);
      v.re = b != 0;
      break;
    }
    case TSR_UINT8:
      v.re = *static_cast<const uint8_t*>(p);
      break;
    case TSR_INT8:
      v.re = *static_cast<const int8_t*>(p);
      break;
    case TSR_INT16:
      v.re = *static_cast<const int16_t*>(p);
      break;
    case TSR_INT32:
      v.re = *static_cast<const int32_t*>(p);
      break;
    case TSR_INT64:
      v.re = *static_cast<const int64_t*>(p);
      break;
    case TSR_FLOAT16:
      v.re = ref_half_value(*static_cast<const uint16_t*>(p));
      break;
    case TSR_BFLOAT16:
      v.re = ref_bfloat16_value(*static_cast<const uint16_t*>(p));
      break;
    case TSR_FLOAT32:
      v.re = *static_cast<const float*>(p);
      break;
    case TSR_FLOAT64:
      v.re = *static_cast<const double*>(p);
      break;
    case TSR_COMPLEX64:
      v.re = static_cast<const float*>(p)[0];
      v.im = static_cast<const float*>(p)[1];
      break;
    case TSR_COMPLEX128:
      v.re = static_cast<const double*>(p)[0];
      v.im = static_cast<const double*>(p)[1];
      break;
    default:
      break;
  }
  return v;
}

void encode(tsr_dtype d, void* p, const ref_value& v) {
  if (is_integer(d)) {
    int bits = 0;
    bool is_signed = false;
    integer_range(d, bits, is_signed);
    const long double w = wrap_integer(std::trunc(v.re), bits, is_signed);
    switch (d) {
      case TSR_UINT8:
        *static_cast<uint8_t*>(p) = static_cast<uint8_t>(w);
        break;
      case TSR_INT8:
        *static_cast<int8_t*>(p) = static_cast<int8_t>(w);
        break;
      case TSR_INT16:
        *static_cast<int16_t*>(p) = static_cast<int16_t>(w);
        break;
      case TSR_INT32:
        *static_cast<int32_t*>(p) = static_cast<int32_t>(w);
        break;
      default:
        *static_cast<int64_t*>(p) = static_cast<int64_t>(w);
        break;
    }
    return;
  }
  switch (d) {
    case TSR_BOOL:
      *static_cast<uint8_t*>(p) = (v.re != 0 || v.im != 0) ? 1 : 0;
      break;
    case TSR_FLOAT16:
      *static_cast<uint16_t*>(p) = ref_half_bits(v.re);
      break;
    case TSR_BFLOAT16:
      *static_cast<uint16_t*>(p) = ref_bfloat16_bits(v.re);
      break;
    case TSR_FLOAT32:
      *static_cast<float*>(p) = static_cast<float>(v.re);
      break;
    case TSR_FLOAT64:
      *static_cast<double*>(p) = static_cast<double>(v.re);
      break;
    case TSR_COMPLEX64:
      static_cast<float*>(p)[0] = static_cast<float>(v.re);
      static_cast<float*>(p)[1] = static_cast<float>(v.im);
      break;
    case TSR_COMPLEX128:
      static_cast<double*>(p)[0] = static_cast<double>(v.re);
      static_cast<double*>(p)[1] = static_cast<double>(v.im);
      break;
    default:
      break;
  }
}

ref_value ref_convert(const ref_value& v, tsr_dtype from, tsr_dtype to) {
  ref_value out;
  if (to == TSR_BOOL) {
    out.re = (v.re != 0 || v.im != 0) ? 1 : 0;
    return out;
  }
  if (is_complex(to)) {
    out.re = round_real(to, v.re);
    out.im = is_complex(from) ? round_real(to, v.im) : 0;
    return out;
  }
  if (is_integer(to)) {
    int bits = 0;
    bool is_signed = false;
    integer_range(to, bits, is_signed);
    if (is_floating(from) || is_complex(from)) {
      if (std::isnan(v.re)) return out;
      const long double lo = is_signed ? -std::ldexp(1.0L, bits - 1) : 0.0L;
      const long double hi =
          is_signed ? std::ldexp(1.0L, bits - 1) - 1 : std::ldexp(1.0L, bits) - 1;
      out.re = std::min(std::max(std::trunc(v.re), lo), hi) + 0.0L;  // no -0 integers
    } else {
      out.re = wrap_integer(v.re, bits, is_signed);
    }
    return out;
  }
  out.re = round_real(to, v.re);
  return out;
}

namespace {
bool same_component(long double a, long double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}
bool near_component(long double a, long double b, long double tolerance) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= tolerance;
}
}  // namespace

bool same_value(const ref_value& a, const ref_value& b) {
  return same_component(a.re, b.re) && same_component(a.im, b.im);
}

bool near_value(const ref_value& a, const ref_value& b, long double tolerance) {
  return near_component(a.re, b.re, tolerance) && near_component(a.im, b.im, tolerance);
}

long double unit_roundoff(tsr_dtype d) {
  switch (d) {
    case TSR_FLOAT16:
      return std::ldexp(1.0L, -11);
    case TSR_BFLOAT16:
      return std::ldexp(1.0L, -8);
    case TSR_FLOAT32:
    case TSR_COMPLEX64:
      return std::ldexp(1.0L, -24);
    case TSR_FLOAT64:
    case TSR_COMPLEX128:
      return std::ldexp(1.0L, -53);
    default:
      return 0;
  }
}

std::string to_string(const ref_value& v) {
  std::ostringstream out;
  out.precision(21);
  out << v.re;
  if (v.im != 0) out << (v.im < 0 ? "" : "+") << v.im << "i";
  return out.str();
}

}  // namespace cpu_test
