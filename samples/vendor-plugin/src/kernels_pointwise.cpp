// kernels_pointwise.cpp - copy_, fill_.Scalar, add/sub/mul/div.Tensor,
// _unary (60 codes), _binary (28 codes) and where.self.
//
// Contract (docs/operators.md): inputs arrive broadcast to the output's shape
// (stride 0 on broadcast dims) in the computation dtype; the output is
// preallocated and may alias an input exactly. Each kernel walks the output's
// indices, loads elements as double or int64 (elements.hpp), computes, and
// stores. Semantics are PyTorch's: NaN propagates, round is half to even,
// integer division by zero is an error, remainder takes the divisor's sign.
#include <cmath>
#include <numbers>

#include "acme.hpp"
#include "tessera/sdk/primitives.hpp"
#include "tessera/sdk/special.hpp"

namespace acme {
// Python's floor division: the exact quotient rounded toward -inf, computed
// from fmod so that a / b's rounding cannot push it across an integer.
// F is the precision PyTorch divides in: float for float32 and narrower.
template <class F>
static F floor_divide(F a, F b) {
  if (b == F(0)) return a / b;  // inf or NaN, as IEEE says
  const F mod = std::fmod(a, b);
  F quotient = (a - mod) / b;  // nearly an integer
  if (mod != F(0) && (b < F(0)) != (mod < F(0))) quotient -= F(1);
  if (quotient == F(0)) return std::copysign(F(0), a / b);
  F floored = std::floor(quotient);
  if (quotient - floored > F(0.5)) floored += F(1);
  return floored;
}

// A Scalar as an int64: floats truncate and saturate, NaN is 0.
static int64_t saturating_int(const tsr_scalar& s) {
  if (scalar_is_integral(s)) return s.v.i;
  const double v = scalar_double(s);
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// ---- copy_ and fill_ ----

// copy_(self, src): src arrives broadcast to self's shape in its own dtype.
// Same dtype: elements move bit for bit. Otherwise they convert: floats round
// to nearest even, float -> integer truncates and saturates (NaN -> 0),
// integer -> integer wraps, anything -> bool is x != 0.
void copy_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& src = tensor_arg(call, 1, "src");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_same_sizes(call, src, "src", out, "self");
  for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
    const int64_t o = offset(out, i), s = offset(src, i);
    if (out.dtype == src.dtype) {
      move_element(out, o, src, s);
    } else if (is_floating_dtype(src.dtype)) {
      store_double(out, o, load_double(src, s));
    } else {
      store_int(out, o, load_int(src, s));
    }
  });
}

void fill_kernel(const tsr_kernel_call& call) {
  const tsr_scalar& value = scalar_arg(call, 1, "value");
  const tsr_tensor_desc& out = out_arg(call, 0);
  for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
    if (scalar_is_integral(value)) {
      store_int(out, offset(out, i), value.v.i);
    } else {
      store_double(out, offset(out, i),
                   scalar_double(value));  // complex: the real part
    }
  });
}

// ---- add / sub / mul / div.Tensor ----
enum class arith { add, sub, mul, div };

// out = self op (alpha * other); all three share out's dtype.
static void arithmetic(const tsr_kernel_call& call, arith op) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const tsr_tensor_desc& other = tensor_arg(call, 1, "other");
  const tsr_tensor_desc& out = out_arg(call, 0);
  const bool has_alpha = op == arith::add || op == arith::sub;
  const tsr_scalar alpha = has_alpha ? scalar_arg(call, 2, "alpha") : tsr_scalar{TSR_INT64, 0, {1}};
  check_same_sizes(call, self, "self", out, "out");
  check_same_sizes(call, other, "other", out, "out");
  check_dtype(call, self, "self", out.dtype);
  check_dtype(call, other, "other", out.dtype);
  const bool floating = is_floating_dtype(out.dtype);
  if ((op == arith::div && !floating) || (op == arith::sub && out.dtype == TSR_BOOL))
    throw_unsupported_dtype(call, "self", out.dtype, kName);
  if (!floating && !scalar_is_integral(alpha)) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: alpha must be an integer for %s tensors, got a %s Scalar; pass an integer "
                 "alpha or use floating-point tensors",
                 op_name(call), dtype_name(out.dtype),
                 alpha.kind == TSR_FLOAT64 ? "float" : "complex");
  }
  if (alpha.kind == TSR_COMPLEX128)
    throw_status(TSR_INVALID_ARGUMENT, "%s: alpha is complex but the tensors are %s", op_name(call),
                 dtype_name(out.dtype));

  for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
    const int64_t a = offset(self, i), b = offset(other, i), o = offset(out, i);
    if (floating) {
      const double x = load_double(self, a), y = load_double(other, b), s = scalar_double(alpha);
      store_double(out, o,
                   op == arith::add   ? x + s * y
                   : op == arith::sub ? x - s * y
                   : op == arith::mul ? x * y
                                      : x / y);
    } else if (out.dtype == TSR_BOOL) {  // add is logical or, mul logical and
      const bool x = load_int(self, a) != 0, y = load_int(other, b) != 0;
      store_int(out, o, op == arith::add ? (x || (alpha.v.i != 0 && y)) : (x && y));
    } else {  // integers wrap, like the dtype
      const int64_t x = load_int(self, a), y = load_int(other, b), scaled = times(alpha.v.i, y);
      store_int(out, o,
                op == arith::add   ? plus(x, scaled)
                : op == arith::sub ? minus(x, scaled)
                                   : times(x, y));
    }
  });
}

void add_kernel(const tsr_kernel_call& call) { arithmetic(call, arith::add); }
void sub_kernel(const tsr_kernel_call& call) { arithmetic(call, arith::sub); }
void mul_kernel(const tsr_kernel_call& call) { arithmetic(call, arith::mul); }
void div_kernel(const tsr_kernel_call& call) { arithmetic(call, arith::div); }

// ---- _unary ----
// min(max(x, 0), 6), letting NaN through (fmin/fmax would drop it).
static double relu6(double x) { return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x); }

// One code on a floating value. Predicates return 1 or 0 (stored into a bool
// out). `float64`: the dtype is float64 (round with decimals scales in float
// for narrower dtypes, as PyTorch does).
// clang-format off
static double unary_float(int code, double x, const double* p, bool float64) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  switch (code) {
    case TSR_UNARY_NEG: return -x;
    case TSR_UNARY_ABS: return std::fabs(x);
    case TSR_UNARY_SIGN: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);  // NaN -> 0
    case TSR_UNARY_EXP: return std::exp(x);
    case TSR_UNARY_EXP2: return std::exp2(x);
    case TSR_UNARY_EXPM1: return std::expm1(x);
    case TSR_UNARY_LOG: return std::log(x);
    case TSR_UNARY_LOG2: return std::log2(x);
    case TSR_UNARY_LOG10: return std::log10(x);
    case TSR_UNARY_LOG1P: return std::log1p(x);
    case TSR_UNARY_SQRT: return std::sqrt(x);
    case TSR_UNARY_RSQRT: return 1.0 / std::sqrt(x);
    case TSR_UNARY_RECIPROCAL: return 1.0 / x;
    case TSR_UNARY_SIN: return std::sin(x);
    case TSR_UNARY_COS: return std::cos(x);
    case TSR_UNARY_TAN: return std::tan(x);
    case TSR_UNARY_ASIN: return std::asin(x);
    case TSR_UNARY_ACOS: return std::acos(x);
    case TSR_UNARY_ATAN: return std::atan(x);
    case TSR_UNARY_SINH: return std::sinh(x);
    case TSR_UNARY_COSH: return std::cosh(x);
    case TSR_UNARY_TANH: return std::tanh(x);
    case TSR_UNARY_ASINH: return std::asinh(x);
    case TSR_UNARY_ACOSH: return std::acosh(x);
    case TSR_UNARY_ATANH: return std::atanh(x);
    case TSR_UNARY_SIGMOID: return 1.0 / (1.0 + std::exp(-x));
    case TSR_UNARY_LOGIT: {
      const double eps = p[0];
      const double z = eps < 0 ? x : (x < eps ? eps : (x > 1.0 - eps ? 1.0 - eps : x));
      return std::log(z / (1.0 - z));
    }
    case TSR_UNARY_ERF: return std::erf(x);
    case TSR_UNARY_ERFC: return std::erfc(x);
    case TSR_UNARY_ERFINV: return erfinv(x);
    case TSR_UNARY_LGAMMA: return sdk::lgamma(x);  // thread-safe, unlike std::lgamma
    case TSR_UNARY_DIGAMMA: return digamma(x);
    case TSR_UNARY_FLOOR: return std::floor(x);
    case TSR_UNARY_CEIL: return std::ceil(x);
    case TSR_UNARY_ROUND: {
      const int decimals = static_cast<int>(p[0]);
      if (decimals == 0) return std::nearbyint(x);  // half to even
      if (float64) {
        const double scale = std::pow(10.0, std::abs(decimals));
        return decimals > 0 ? std::nearbyint(x * scale) / scale : std::nearbyint(x / scale) * scale;
      }
      const float scale = static_cast<float>(std::pow(10.0, std::abs(decimals)));
      const float f = static_cast<float>(x);
      return decimals > 0 ? std::nearbyint(f * scale) / scale : std::nearbyint(f / scale) * scale;
    }
    case TSR_UNARY_TRUNC: return std::trunc(x);
    case TSR_UNARY_FRAC: return x - std::trunc(x);
    case TSR_UNARY_RELU: return x < 0 ? 0.0 : x;
    case TSR_UNARY_LEAKY_RELU: return x > 0 ? x : x * p[0];
    case TSR_UNARY_ELU: return x > 0 ? x * p[1] : p[0] * p[1] * std::expm1(x * p[2]);
    case TSR_UNARY_GELU: return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
    case TSR_UNARY_GELU_TANH: {
      const double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case TSR_UNARY_SILU: return x / (1.0 + std::exp(-x));
    case TSR_UNARY_MISH: return x * std::tanh(std::log1p(std::exp(x)));
    case TSR_UNARY_SOFTPLUS: return x * p[0] > p[1] ? x : std::log1p(std::exp(x * p[0])) / p[0];
    case TSR_UNARY_CLAMP: {  // a NaN x stays NaN; max wins when min > max
      const double lower = x < p[0] ? p[0] : x;
      return lower > p[1] ? p[1] : lower;
    }
    case TSR_UNARY_CLAMP_MIN: return x < p[0] ? p[0] : x;
    case TSR_UNARY_CLAMP_MAX: return x > p[0] ? p[0] : x;
    case TSR_UNARY_HARDSIGMOID: return relu6(x + 3.0) / 6.0;
    case TSR_UNARY_HARDSWISH: return x * relu6(x + 3.0) / 6.0;
    case TSR_UNARY_SQUARE: return x * x;
    case TSR_UNARY_LOGICAL_NOT: return x == 0.0;
    case TSR_UNARY_ISNAN: return std::isnan(x);
    case TSR_UNARY_ISINF: return std::isinf(x);
    case TSR_UNARY_ISPOSINF: return x == inf;
    case TSR_UNARY_ISNEGINF: return x == -inf;
    case TSR_UNARY_ISFINITE: return std::isfinite(x);
    case TSR_UNARY_SIGNBIT: return std::signbit(x);
    case TSR_UNARY_NAN_TO_NUM:
      return std::isnan(x) ? p[0] : (x == inf ? p[1] : (x == -inf ? p[2] : x));
    default:
      throw_status(TSR_UNIMPLEMENTED, "_unary code %d is not defined for floating dtypes", code);
  }
}
// clang-format on

// One code on an integer or bool value (bool is 0 or 1).
// clang-format off
static int64_t unary_int(int code, int64_t x, const tsr_scalar* p, bool is_bool) {
  switch (code) {
    case TSR_UNARY_SIGN: return (x > 0) - (x < 0);
    case TSR_UNARY_NAN_TO_NUM: case TSR_UNARY_FLOOR: case TSR_UNARY_CEIL: case TSR_UNARY_ROUND: case TSR_UNARY_TRUNC:
      return x;  // integers are already integral and finite
    case TSR_UNARY_BITWISE_NOT: return is_bool ? !x : ~x;
    case TSR_UNARY_LOGICAL_NOT: return x == 0;
    case TSR_UNARY_ISNAN: case TSR_UNARY_ISINF: case TSR_UNARY_ISPOSINF: case TSR_UNARY_ISNEGINF:
      return 0;
    case TSR_UNARY_ISFINITE: return 1;
    case TSR_UNARY_SIGNBIT: return x < 0;
    case TSR_UNARY_NEG: return minus(0, x);
    case TSR_UNARY_ABS: return x < 0 ? minus(0, x) : x;  // abs(INT_MIN) wraps to itself
    case TSR_UNARY_RELU: return x < 0 ? 0 : x;
    case TSR_UNARY_SQUARE: return times(x, x);
    case TSR_UNARY_CLAMP: {
      const int64_t lower = x < saturating_int(p[0]) ? saturating_int(p[0]) : x;
      return lower > saturating_int(p[1]) ? saturating_int(p[1]) : lower;
    }
    case TSR_UNARY_CLAMP_MIN: return x < saturating_int(p[0]) ? saturating_int(p[0]) : x;
    case TSR_UNARY_CLAMP_MAX: return x > saturating_int(p[0]) ? saturating_int(p[0]) : x;
    default:
      throw_status(TSR_UNIMPLEMENTED, "_unary code %d is not defined for integer dtypes", code);
  }
}
// clang-format on

void unary_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const int64_t code = int_arg(call, 1, "op");
  const tsr_scalar p[3] = {scalar_arg(call, 2, "p0"), scalar_arg(call, 3, "p1"),
                           scalar_arg(call, 4, "p2")};
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_same_sizes(call, self, "self", out, "out");
  const int c = static_cast<int>(code);  // predicates give bool (the SDK's code domains)
  check_dtype(call, out, "out",
              unary_code_domain(c) == unary_domain::predicate ? TSR_BOOL : self.dtype);
  if (is_floating_dtype(self.dtype)) {
    const double params[3] = {scalar_double(p[0]), scalar_double(p[1]), scalar_double(p[2])};
    const bool float64 = self.dtype == TSR_FLOAT64;
    for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
      store_double(out, offset(out, i),
                   unary_float(c, load_double(self, offset(self, i)), params, float64));
    });
  } else {
    const bool is_bool = self.dtype == TSR_BOOL;
    for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
      store_int(out, offset(out, i), unary_int(c, load_int(self, offset(self, i)), p, is_bool));
    });
  }
}

// ---- _binary ----
// One code on floating values; `float64` as in unary_float (the rounding
// divisions divide in float for narrower dtypes, where it decides the result).
// clang-format off
static double binary_float(int code, double a, double b, bool float64) {
  const bool nan = std::isnan(a) || std::isnan(b);
  switch (code) {
    case TSR_BINARY_POW: return std::pow(a, b);
    case TSR_BINARY_ATAN2: return std::atan2(a, b);
    case TSR_BINARY_MAXIMUM: return nan ? a + b : (a > b ? a : b);  // a + b is the NaN
    case TSR_BINARY_MINIMUM: return nan ? a + b : (a < b ? a : b);
    case TSR_BINARY_FMAX: return std::fmax(a, b);
    case TSR_BINARY_FMIN: return std::fmin(a, b);
    case TSR_BINARY_REMAINDER: {
      double r = std::fmod(a, b);
      if (r != 0.0 && (r < 0.0) != (b < 0.0)) r += b;
      return r;
    }
    case TSR_BINARY_FMOD: return std::fmod(a, b);
    case TSR_BINARY_DIV_TRUNC: return std::trunc(float64 ? a / b : static_cast<float>(a / b));
    case TSR_BINARY_DIV_FLOOR:
      return float64 ? floor_divide(a, b)
                     : floor_divide(static_cast<float>(a), static_cast<float>(b));
    case TSR_BINARY_LOGICAL_AND: return a != 0.0 && b != 0.0;
    case TSR_BINARY_LOGICAL_OR: return a != 0.0 || b != 0.0;
    case TSR_BINARY_LOGICAL_XOR: return (a != 0.0) != (b != 0.0);
    case TSR_BINARY_EQ: return a == b;
    case TSR_BINARY_NE: return a != b;
    case TSR_BINARY_LT: return a < b;
    case TSR_BINARY_LE: return a <= b;
    case TSR_BINARY_GT: return a > b;
    case TSR_BINARY_GE: return a >= b;
    case TSR_BINARY_COPYSIGN: return std::copysign(a, b);
    case TSR_BINARY_HYPOT: return std::hypot(a, b);
    case TSR_BINARY_XLOGY:
      if (std::isnan(b)) return b;
      return a == 0.0 ? 0.0 : a * std::log(b);
    case TSR_BINARY_LOGADDEXP:
      if (std::isinf(a) && a == b) return a;  // inf - inf would be NaN
      return (nan ? a + b : std::fmax(a, b)) + std::log1p(std::exp(-std::fabs(a - b)));
    default:
      throw_status(TSR_UNIMPLEMENTED, "_binary code %d is not defined for floating dtypes", code);
  }
}
// clang-format on

// One code on integers (or bool as 0/1) of a dtype `bits` wide. Division by
// zero was ruled out before; x / -1 is written as a negation (INT64_MIN / -1
// is undefined in C++, and wraps in PyTorch).
// clang-format off
static int64_t binary_int(int code, int64_t a, int64_t b, int bits) {
  switch (code) {
    case TSR_BINARY_MAXIMUM: case TSR_BINARY_FMAX: return a > b ? a : b;
    case TSR_BINARY_MINIMUM: case TSR_BINARY_FMIN: return a < b ? a : b;
    case TSR_BINARY_BITWISE_AND: return a & b;
    case TSR_BINARY_BITWISE_OR: return a | b;
    case TSR_BINARY_BITWISE_XOR: return a ^ b;
    case TSR_BINARY_LOGICAL_AND: return a != 0 && b != 0;
    case TSR_BINARY_LOGICAL_OR: return a != 0 || b != 0;
    case TSR_BINARY_LOGICAL_XOR: return (a != 0) != (b != 0);
    case TSR_BINARY_EQ: return a == b;
    case TSR_BINARY_NE: return a != b;
    case TSR_BINARY_LT: return a < b;
    case TSR_BINARY_LE: return a <= b;
    case TSR_BINARY_GT: return a > b;
    case TSR_BINARY_GE: return a >= b;
    case TSR_BINARY_POW: {
      if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
      int64_t result = 1;
      for (int64_t base = a; b > 0; b >>= 1, base = times(base, base)) {
        if (b & 1) result = times(result, base);
      }
      return result;
    }
    case TSR_BINARY_REMAINDER: {
      if (b == -1) return 0;
      const int64_t r = a % b;
      return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
    }
    case TSR_BINARY_FMOD: return b == -1 ? 0 : a % b;
    case TSR_BINARY_DIV_TRUNC: return b == -1 ? minus(0, a) : a / b;
    case TSR_BINARY_DIV_FLOOR: {
      if (b == -1) return minus(0, a);
      const int64_t q = a / b;
      return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
    }
    case TSR_BINARY_LSHIFT:  // PyTorch: shifting by < 0 or >= the width gives 0
      if (b < 0 || b >= bits) return 0;
      return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    case TSR_BINARY_RSHIFT:  // ... and the sign fill to the right
      if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
      return a >> b;
    default:
      throw_status(TSR_UNIMPLEMENTED, "_binary code %d is not defined for integer dtypes", code);
  }
}
// clang-format on

static bool is_division(int64_t code) {
  return code == TSR_BINARY_REMAINDER || code == TSR_BINARY_FMOD || code == TSR_BINARY_DIV_TRUNC ||
         code == TSR_BINARY_DIV_FLOOR;
}

void binary_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const tsr_tensor_desc& other = tensor_arg(call, 1, "other");
  const int64_t code = int_arg(call, 2, "op");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_same_sizes(call, self, "self", out, "out");
  check_same_sizes(call, other, "other", out, "out");
  check_dtype(call, other, "other", self.dtype);
  const int c = static_cast<int>(code);
  check_dtype(call, out, "out",
              binary_code_domain(c) == binary_domain::predicate ? TSR_BOOL : self.dtype);
  if (is_floating_dtype(self.dtype)) {
    const bool float64 = self.dtype == TSR_FLOAT64;
    for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
      const double a = load_double(self, offset(self, i)), b = load_double(other, offset(other, i));
      store_double(out, offset(out, i), binary_float(c, a, b, float64));
    });
    return;
  }
  // Integer division by zero fails before anything is written (PyTorch
  // raises ZeroDivisionError; there is no integer inf).
  if (is_division(code)) {
    for_each_index(other.ndim, other.sizes, [&](const int64_t* i) {
      if (load_int(other, offset(other, i)) == 0) {
        throw_status(TSR_INVALID_ARGUMENT,
                     "%s: ZeroDivisionError: integer division or modulo by zero (argument 'other' "
                     "has a zero element); use floating-point inputs to get inf/nan",
                     op_name(call));
      }
    });
  }
  const int bits = static_cast<int>(element_size(self.dtype)) * 8;
  for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
    const int64_t a = load_int(self, offset(self, i)), b = load_int(other, offset(other, i));
    store_int(out, offset(out, i), binary_int(c, a, b, bits));
  });
}

// ---- where.self: out = condition ? self : other, elements moved bit for bit. ----
void where_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& condition = tensor_arg(call, 0, "condition");
  const tsr_tensor_desc& self = tensor_arg(call, 1, "self");
  const tsr_tensor_desc& other = tensor_arg(call, 2, "other");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_dtype(call, condition, "condition", TSR_BOOL);
  check_dtype(call, self, "self", out.dtype);
  check_dtype(call, other, "other", out.dtype);
  check_same_sizes(call, condition, "condition", out, "out");
  check_same_sizes(call, self, "self", out, "out");
  check_same_sizes(call, other, "other", out, "out");
  for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
    if (load_int(condition, offset(condition, i)) != 0) {
      move_element(out, offset(out, i), self, offset(self, i));
    } else {
      move_element(out, offset(out, i), other, offset(other, i));
    }
  });
}

}  // namespace acme
