// The pointwise op family end to end (C++ frontend -> core -> CPU plugin):
// unary math, activations, clamping, predicates, binary math, comparisons,
// where/masked_fill and the composites, checked against float64 / long double
// references computed here (a few special-function values were produced by
// PyTorch 1.13, as noted where they appear).
//
// Coverage per contract: every dtype class (float32/64, float16, bfloat16,
// integers, bool), 0-d, empty, broadcast, transposed and strided inputs, NaN
// and infinities, in-place and out= forms, the meta device, and bad input
// (error code and a message naming the op and the problem).
//
// Tolerances: conformance/tolerances.hpp (Note [Tolerances]): float32 rtol
// 1.3e-6 atol 1e-5, float64 1e-12, float16 1e-3, bfloat16 1.6e-2; loose()
// (x16) for transcendental functions. Integers and bool compare exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "../../conformance/tolerances.hpp"
#include "tessera/opcodes.h"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::Dtype;
using tessera::Scalar;
using tessera::Tensor;
using tessera::conformance::Tolerance;
namespace tc = tessera::conformance;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using tessera::detail::value;

// Deterministic values in [lo, hi): a small LCG.
std::vector<double> uniform(size_t n, double lo, double hi, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t state = seed;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = lo + (hi - lo) * (static_cast<double>(state >> 8) / static_cast<double>(1u << 24));
  }
  return v;
}

Tensor make(const std::vector<double>& v, tessera::IntList shape, Dtype dtype) {
  return tessera::tensor(v, shape, dtype);
}
Tensor make(const std::vector<double>& v, Dtype dtype) {
  return tessera::tensor(v, {static_cast<int64_t>(v.size())}, dtype);
}

// The tensor's elements as float64 (row-major), whatever its dtype.
std::vector<double> values(const Tensor& t) { return t.to(tessera::kFloat64).to_vector<double>(); }

Tolerance tolerance(Dtype d, bool loose) {
  return loose ? tc::loose(tessera::to_c(d)) : tc::tolerance(tessera::to_c(d));
}

bool close(double a, double e, Tolerance tol) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

void expect_values(const Tensor& actual, const std::vector<double>& expected, Tolerance tol,
                   const std::string& what, const std::vector<double>* inputs = nullptr) {
  const std::vector<double> got = values(actual);
  ASSERT_EQ(got.size(), expected.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i) {
    if (!close(got[i], expected[i], tol)) {
      ++failures;
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", expected " << expected[i]
                    << (inputs ? " for input " + std::to_string((*inputs)[i]) : std::string());
    }
  }
}

void expect_exact(const Tensor& actual, const std::vector<double>& expected,
                  const std::string& what) {
  expect_values(actual, expected, Tolerance{0, 0}, what);
}

// Runs `body`, expecting a tessera::Error with `code` whose message contains
// every fragment.
void expect_error(const std::function<void()>& body, tsr_status_code code,
                  std::initializer_list<const char*> fragments) {
  try {
    body();
    ADD_FAILURE() << "no error; expected " << tsr_status_code_name(code);
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message '" << e.what() << "' lacks '" << f << "'";
  }
}

const std::vector<double> kSpecials = {0.0, -0.0, 1.0, -1.0, 0.5, kNan, kInf, -kInf};
const Dtype kFloatDtypes[] = {tessera::kFloat32, tessera::kFloat64, tessera::kFloat16,
                              tessera::kBFloat16};

// ---------------------------------------------------------------------------
// Unary math against long double references
// ---------------------------------------------------------------------------

using Ref = std::function<long double(long double)>;

// erfinv by bisection on erfl: an independent reference.
long double erfinv_ref(long double y) {
  if (std::isnan(y) || y < -1 || y > 1) return kNan;
  if (y == 1) return kInf;
  if (y == -1) return -kInf;
  long double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const long double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// digamma as the central difference of lgammal (about 1e-10 relative: enough
// for float32 and the 16-bit floats; float64 uses PyTorch's values below).
long double digamma_ref(long double x) {
  if (x == 0) return std::copysign(kInf, -x);
  if (std::isinf(x)) return x > 0 ? x : kNan;
  if (x < 0 && x == std::floor(x)) return kNan;
  const long double h = 1e-5L;
  return (std::lgamma(x + h) - std::lgamma(x - h)) / (2 * h);
}

struct UnaryCase {
  const char* op;
  Ref ref;
  double lo, hi;
  bool loose;  // transcendental: loose tolerance
  bool float64 = true;
};

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"neg", [](long double x) { return -x; }, -10, 10, false},
      {"abs", [](long double x) { return std::fabs(x); }, -10, 10, false},
      {"sign",
       [](long double x) { return (long double)((x > 0) - (x < 0)); },  // NaN -> 0 (torch 1.13)
       -3, 3, false},
      {"exp", [](long double x) { return std::exp(x); }, -10, 10, true},
      {"exp2", [](long double x) { return std::exp2(x); }, -10, 10, true},
      {"expm1", [](long double x) { return std::expm1(x); }, -5, 5, true},
      {"log", [](long double x) { return std::log(x); }, 0.01, 100, true},
      {"log2", [](long double x) { return std::log2(x); }, 0.01, 100, true},
      {"log10", [](long double x) { return std::log10(x); }, 0.01, 100, true},
      {"log1p", [](long double x) { return std::log1p(x); }, -0.9, 10, true},
      {"sqrt", [](long double x) { return std::sqrt(x); }, 0, 100, false},
      {"rsqrt", [](long double x) { return 1 / std::sqrt(x); }, 0.01, 100, true},
      {"reciprocal", [](long double x) { return 1 / x; }, 0.1, 10, false},
      {"sin", [](long double x) { return std::sin(x); }, -3, 3, true},
      {"cos", [](long double x) { return std::cos(x); }, -3, 3, true},
      {"tan", [](long double x) { return std::tan(x); }, -1.5, 1.5, true},
      {"asin", [](long double x) { return std::asin(x); }, -1, 1, true},
      {"acos", [](long double x) { return std::acos(x); }, -1, 1, true},
      {"atan", [](long double x) { return std::atan(x); }, -10, 10, true},
      {"sinh", [](long double x) { return std::sinh(x); }, -5, 5, true},
      {"cosh", [](long double x) { return std::cosh(x); }, -5, 5, true},
      {"tanh", [](long double x) { return std::tanh(x); }, -5, 5, true},
      {"asinh", [](long double x) { return std::asinh(x); }, -10, 10, true},
      {"acosh", [](long double x) { return std::acosh(x); }, 1, 10, true},
      {"atanh", [](long double x) { return std::atanh(x); }, -0.99, 0.99, true},
      {"sigmoid", [](long double x) { return 1 / (1 + std::exp(-x)); }, -10, 10, true},
      {"erf", [](long double x) { return std::erf(x); }, -3, 3, true},
      {"erfc", [](long double x) { return std::erfc(x); }, -3, 3, true},
      {"erfinv", erfinv_ref, -0.99, 0.99, true},
      {"lgamma", [](long double x) { return std::lgamma(x); }, 0.1, 10, true},
      {"digamma", digamma_ref, 0.5, 10, true, /*float64=*/false},
      {"floor", [](long double x) { return std::floor(x); }, -10, 10, false},
      {"ceil", [](long double x) { return std::ceil(x); }, -10, 10, false},
      {"trunc", [](long double x) { return std::trunc(x); }, -10, 10, false},
      {"fix", [](long double x) { return std::trunc(x); }, -10, 10, false},
      {"round", [](long double x) { return std::nearbyint(x); }, -10, 10, false},
      {"frac", [](long double x) { return x - std::trunc(x); }, -10, 10, false},
      {"square", [](long double x) { return x * x; }, -10, 10, false},
      {"relu", [](long double x) { return x < 0 ? 0.0L : x; }, -10, 10, false},
      {"silu", [](long double x) { return x / (1 + std::exp(-x)); }, -10, 10, true},
      {"mish", [](long double x) { return x * std::tanh(std::log1p(std::exp(x))); }, -10, 10, true},
      {"hardsigmoid",
       [](long double x) { return std::min<long double>(std::max<long double>(x + 3, 0), 6) / 6; },
       -5, 5, false},
      {"hardswish",
       [](long double x) {
         return x * std::min<long double>(std::max<long double>(x + 3, 0), 6) / 6;
       },
       -5, 5, false},
      {"selu",
       [](long double x) {
         const long double alpha = 1.6732632423543772848170429916717L;
         const long double scale = 1.0507009873554804934193349852946L;
         return x > 0 ? scale * x : scale * alpha * std::expm1(x);
       },
       -5, 5, true},
  };
  return cases;
}

TEST(PointwiseUnary, MatchesLongDoubleReferenceForEveryFloatDtype) {
  for (const UnaryCase& c : unary_cases()) {
    for (Dtype dtype : kFloatDtypes) {
      if (dtype == tessera::kFloat64 && !c.float64) continue;
      std::vector<double> in = uniform(61, c.lo, c.hi, 7);
      in.insert(in.end(), kSpecials.begin(), kSpecials.end());
      const Tensor x = make(in, dtype);
      const std::vector<double> exact_in = values(x);  // rounded to the dtype
      std::vector<double> expected;
      for (double v : exact_in) expected.push_back(static_cast<double>(c.ref(v)));
      const Tensor y = tessera::call_op(c.op, {value(x)});
      EXPECT_EQ(y.dtype(), dtype) << c.op;
      const std::string what = std::string(c.op) + " " + tessera::name(dtype);
      expect_values(y, expected, tolerance(dtype, c.loose), what, &exact_in);
    }
  }
}

TEST(PointwiseUnary, SpecialFunctionsMatchPyTorchInFloat64) {
  // torch.digamma / torch.erfinv on float64 tensors (PyTorch 1.13), except
  // erfinv(0.999999), where torch is 2e-12 off: mpmath.erfinv at 40 digits.
  const std::vector<double> dx = {-2.5, -0.5, 0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 25.5, 100.0};
  const std::vector<double> dy = {1.1031566406452433,  0.03648997397857639, -10.423754940411076,
                                  -1.9635100260214229, -0.5772156649015328, 0.036489973978576194,
                                  0.422784335098467,   1.1671535393615111,  2.251752589066721,
                                  3.2189424728839198,  4.600161852738088};
  expect_values(tessera::digamma(make(dx, tessera::kFloat64)), dy, tc::tolerance(TSR_FLOAT64),
                "digamma");
  const std::vector<double> ex = {-0.999, -0.9, -0.5, -0.1, 0.0, 0.05, 0.3, 0.7, 0.99, 0.999999};
  const std::vector<double> ey = {-2.3267537655135153,
                                  -1.1630871536766743,
                                  -0.4769362762044699,
                                  -0.08885599049425769,
                                  0.0,
                                  0.044340387910005497,
                                  0.2724627147267544,
                                  0.7328690779592169,
                                  1.8213863677184483,
                                  3.4589107372754988};
  expect_values(tessera::erfinv(make(ex, tessera::kFloat64)), ey, tc::tolerance(TSR_FLOAT64),
                "erfinv");
  // Poles and edges: digamma(+-0) = -+inf, digamma(-2) NaN, erfinv(+-1) = +-inf, erfinv(2) NaN.
  expect_exact(tessera::digamma(make({0.0, -0.0, -2.0}, tessera::kFloat64)), {-kInf, kInf, kNan},
               "digamma poles");
  expect_exact(tessera::erfinv(make({1.0, -1.0, 2.0}, tessera::kFloat32)), {kInf, -kInf, kNan},
               "erfinv edges");
}

TEST(PointwiseUnary, IntegerAndBoolInputsOfFloatingFunctionsGiveDefaultFloat) {
  const Tensor ints = tessera::tensor({1, 2, 3});  // int64
  const Tensor e = tessera::exp(ints);
  EXPECT_EQ(e.dtype(), tessera::kFloat32);
  expect_values(e, {std::exp(1.0), std::exp(2.0), std::exp(3.0)}, tc::tolerance(TSR_FLOAT32),
                "exp(int64)");
  const Tensor b = make({1, 0}, tessera::kBool);
  EXPECT_EQ(tessera::sigmoid(b).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::sqrt(make({4, 9}, tessera::kUInt8)).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::sqrt(make({4, 9}, tessera::kInt16)).to_vector<float>(),
            (std::vector<float>{2, 3}));
}

TEST(PointwiseUnary, IntegerOpsKeepTheirDtypeAndWrap) {
  for (Dtype d : {tessera::kInt8, tessera::kInt16, tessera::kInt32, tessera::kInt64}) {
    const Tensor x = make({-3, 0, 5, -1}, d);
    expect_exact(tessera::call_op("neg", {value(x)}), {3, 0, -5, 1}, "neg");
    expect_exact(tessera::abs(x), {3, 0, 5, 1}, "abs");
    expect_exact(tessera::sign(x), {-1, 0, 1, -1}, "sign");
    expect_exact(tessera::floor(x), {-3, 0, 5, -1}, "floor of int is identity");
    expect_exact(tessera::round(x), {-3, 0, 5, -1}, "round");
    expect_exact(tessera::relu(x), {0, 0, 5, 0}, "relu");
    expect_exact(tessera::square(x), {9, 0, 25, 1}, "square");
    EXPECT_EQ(tessera::abs(x).dtype(), d);
  }
  // The minimum value negates to itself (two's complement wrap, as PyTorch).
  const Tensor m = make({-128, 127}, tessera::kInt8);
  expect_exact(tessera::call_op("neg", {value(m)}), {-128, -127}, "neg int8 min");
  expect_exact(tessera::abs(m), {-128, 127}, "abs int8 min");
  const Tensor u = make({0, 200}, tessera::kUInt8);
  expect_exact(tessera::call_op("neg", {value(u)}), {0, 56}, "neg uint8 wraps");
  expect_exact(tessera::sign(make({1, 0}, tessera::kBool)), {1, 0}, "sign of bool");
  // square of bool promotes to int64, like pow(bool, 2).
  EXPECT_EQ(tessera::square(make({1, 0}, tessera::kBool)).dtype(), tessera::kInt64);
}

TEST(PointwiseUnary, BitwiseNotAndPredicates) {
  expect_exact(tessera::bitwise_not(make({0, 5, -1}, tessera::kInt32)), {-1, -6, 0},
               "bitwise_not int32");
  expect_exact(tessera::bitwise_not(make({1, 0}, tessera::kBool)), {0, 1}, "bitwise_not bool");
  expect_error([] { tessera::bitwise_not(tessera::tensor({1.0})); }, TSR_INVALID_ARGUMENT,
               {"bitwise_not", "float32", "integer and bool"});

  for (Dtype d : kFloatDtypes) {
    const Tensor x = make({1.0, kNan, kInf, -kInf, -0.0, 0.0, -2.0}, d);
    expect_exact(tessera::isnan(x), {0, 1, 0, 0, 0, 0, 0}, "isnan");
    expect_exact(tessera::isinf(x), {0, 0, 1, 1, 0, 0, 0}, "isinf");
    expect_exact(tessera::isposinf(x), {0, 0, 1, 0, 0, 0, 0}, "isposinf");
    expect_exact(tessera::isneginf(x), {0, 0, 0, 1, 0, 0, 0}, "isneginf");
    expect_exact(tessera::isfinite(x), {1, 0, 0, 0, 1, 1, 1}, "isfinite");
    expect_exact(tessera::signbit(x), {0, 0, 0, 1, 1, 0, 1}, "signbit");
    expect_exact(tessera::logical_not(x), {0, 0, 0, 0, 1, 1, 0}, "logical_not");
    EXPECT_EQ(tessera::isnan(x).dtype(), tessera::kBool);
  }
  const Tensor ints = make({-1, 0, 3}, tessera::kInt64);
  expect_exact(tessera::isnan(ints), {0, 0, 0}, "isnan int");
  expect_exact(tessera::isfinite(ints), {1, 1, 1}, "isfinite int");
  expect_exact(tessera::signbit(ints), {1, 0, 0}, "signbit int");
  expect_exact(tessera::logical_not(ints), {0, 1, 0}, "logical_not int");
}

TEST(PointwiseUnary, RoundIsHalfToEvenWithDecimals) {
  const Tensor x = make({0.5, 1.5, 2.5, -0.5, -1.5, 1234.5678}, tessera::kFloat64);
  expect_exact(tessera::round(x), {0, 2, 2, -0.0, -2, 1235}, "round");
  expect_values(tessera::round(make({1234.5678, 0.125, 1.005}, tessera::kFloat64), 2),
                {1234.57, 0.12, 1.0}, Tolerance{1e-12, 1e-12}, "round decimals=2");
  expect_values(tessera::round(make({1234.5678, 1250, 1350}, tessera::kFloat32), -2),
                {1200, 1200, 1400}, tc::tolerance(TSR_FLOAT32), "round decimals=-2");
  expect_error(
      [] {
        tessera::round(tessera::tensor({1, 2}), 2);
      },
      TSR_INVALID_ARGUMENT, {"round.decimals", "int64"});
}

TEST(PointwiseUnary, BoolNegationAndFloatOnlyFunctionsAreRejected) {
  const Tensor b = make({1, 0}, tessera::kBool);
  expect_error([&] { tessera::call_op("neg", {value(b)}); }, TSR_INVALID_ARGUMENT,
               {"Negation, the `-` operator, on a bool tensor is not supported"});
  expect_error([&] { tessera::abs(b); }, TSR_INVALID_ARGUMENT, {"abs", "bool"});
  expect_error(
      [] {
        tessera::elu(tessera::tensor({1, 2}));
      },
      TSR_INVALID_ARGUMENT, {"elu", "int64", "floating-point"});
  expect_error(
      [] {
        tessera::frac(tessera::tensor({1, 2}));
      },
      TSR_INVALID_ARGUMENT, {"frac", "floating-point"});
  expect_error([] { tessera::gelu(tessera::tensor({1.0}), "fast"); }, TSR_INVALID_ARGUMENT,
               {"gelu", "approximate", "'fast'", "none or tanh"});
}

// ---------------------------------------------------------------------------
// Activations with parameters
// ---------------------------------------------------------------------------

TEST(PointwiseActivations, ParametersFollowPyTorch) {
  std::vector<double> in = uniform(50, -6, 6, 3);
  in.insert(in.end(), {0.0, kNan, kInf, -kInf});
  for (Dtype d : {tessera::kFloat32, tessera::kFloat64, tessera::kBFloat16}) {
    const Tensor x = make(in, d);
    const std::vector<double> xs = values(x);
    const Tolerance tol = tolerance(d, true);
    auto expect = [&](const Tensor& y, const std::function<long double(long double)>& f,
                      const char* what) {
      std::vector<double> e;
      for (double v : xs) e.push_back(static_cast<double>(f(v)));
      expect_values(y, e, tol, std::string(what) + " " + tessera::name(d), &xs);
    };
    expect(
        tessera::leaky_relu(x, 0.2), [](long double v) { return v > 0 ? v : v * 0.2L; },
        "leaky_relu");
    expect(
        tessera::leaky_relu(x), [](long double v) { return v > 0 ? v : v * 0.01L; },
        "leaky_relu default");
    expect(
        tessera::elu(x, 0.5, 2.0, 1.5),
        [](long double v) { return v > 0 ? 2 * v : 0.5L * 2 * std::expm1(1.5L * v); }, "elu");
    expect(
        tessera::celu(x, 2.0), [](long double v) { return v > 0 ? v : 2 * std::expm1(v / 2); },
        "celu");
    expect(
        tessera::gelu(x),
        [](long double v) { return 0.5L * v * (1 + std::erf(v / std::sqrt(2.0L))); }, "gelu");
    expect(
        tessera::gelu(x, "tanh"),
        [](long double v) {
          const long double k = std::sqrt(2.0L / std::numbers::pi_v<long double>);
          return 0.5L * v * (1 + std::tanh(k * (v + 0.044715L * v * v * v)));
        },
        "gelu tanh");
    expect(
        tessera::softplus(x, 2, 5),
        [](long double v) { return 2 * v > 5 ? v : std::log1p(std::exp(2 * v)) / 2; }, "softplus");
    expect(
        tessera::hardtanh(x, -2, 3),
        [](long double v) {
          return std::isnan(v) ? v : std::min<long double>(std::max<long double>(v, -2), 3);
        },
        "hardtanh");
  }
  // logit with and without eps (torch.logit([0, 0.3, 1], eps=0.1) = [-2.1972, -0.8473, 2.1972]).
  const Tensor p = make({0.0, 0.3, 1.0}, tessera::kFloat64);
  expect_values(tessera::logit(p, 0.1),
                {std::log(0.1 / 0.9), std::log(0.3 / 0.7), std::log(0.9 / 0.1)},
                tc::tolerance(TSR_FLOAT64), "logit eps");
  expect_exact(tessera::logit(p).slice(0, 0, 1), {-kInf}, "logit 0");
  expect_error([] { tessera::celu(tessera::tensor({1.0}), 0); }, TSR_INVALID_ARGUMENT,
               {"celu", "alpha", "ZeroDivisionError"});
  expect_error([] { tessera::hardtanh(make({1}, tessera::kUInt8), -1, 1); }, TSR_INVALID_ARGUMENT,
               {"hardtanh", "unsigned"});
  // Integer hardtanh clamps in the integer dtype.
  expect_exact(tessera::hardtanh(make({-5, 0, 5}, tessera::kInt32), -1, 1), {-1, 0, 1},
               "hardtanh int32");
}

// ---------------------------------------------------------------------------
// Clamping and nan_to_num
// ---------------------------------------------------------------------------

TEST(PointwiseClamp, ScalarBoundsPromoteAndMaxWins) {
  const Tensor x = make({-2.0, 0.5, 3.0, kNan}, tessera::kFloat32);
  expect_exact(tessera::clamp(x, -1.0, 1.0), {-1, 0.5, 1, kNan}, "clamp");
  expect_exact(tessera::clamp(x, -1.0), {-1, 0.5, 3, kNan}, "clamp min");
  expect_exact(tessera::clamp(x, std::nullopt, 1.0), {-2, 0.5, 1, kNan}, "clamp max");
  expect_exact(tessera::clamp(x, 2.0, 1.0), {1, 1, 1, kNan}, "min > max: max wins");
  expect_exact(tessera::clamp(x, kNan), {-2, 0.5, 3, kNan}, "NaN bound is ignored (PyTorch)");
  expect_exact(tessera::clamp_min(x, 0.0), {0, 0.5, 3, kNan}, "clamp_min");
  expect_exact(tessera::clamp_max(x, 0.0), {-2, 0, 0, kNan}, "clamp_max");
  expect_exact(tessera::clip(x, -1.0, 1.0), {-1, 0.5, 1, kNan}, "clip");

  const Tensor ints = make({-5, 0, 5}, tessera::kInt32);
  const Tensor ci = tessera::clamp(ints, -1, 1);
  EXPECT_EQ(ci.dtype(), tessera::kInt32);
  expect_exact(ci, {-1, 0, 1}, "clamp int32");
  const Tensor cf = tessera::clamp(ints, 0.5);
  EXPECT_EQ(cf.dtype(), tessera::kFloat32) << "a float bound promotes an int tensor";
  expect_exact(cf, {0.5, 0.5, 5}, "clamp int with float bound");
  EXPECT_EQ(tessera::clamp(make({1, 0}, tessera::kBool), 0, 1).dtype(), tessera::kInt64);

  Tensor inplace = make({-2.0, 2.0}, tessera::kFloat64);
  tessera::clamp_(inplace, -1.0, 1.0);
  expect_exact(inplace, {-1, 1}, "clamp_");
  expect_error([&] { tessera::clamp(x, std::nullopt, std::nullopt); }, TSR_INVALID_ARGUMENT,
               {"clamp", "At least one of 'min' or 'max' must not be None"});
  Tensor int_target = make({1, 2}, tessera::kInt64);
  expect_error([&] { tessera::clamp_(int_target, 0.5); }, TSR_INVALID_ARGUMENT,
               {"clamp_", "float32", "int64"});
}

TEST(PointwiseClamp, TensorBoundsBroadcastAndPropagateNaN) {
  const Tensor x = make({1, 5, -3, 2, 0, 9}, {2, 3}, tessera::kFloat32);
  const Tensor lo = make({0, kNan, -1}, tessera::kFloat32);
  const Tensor hi = make({3, 3}, {2, 1}, tessera::kInt64);
  const Tensor r = tessera::clamp(x, lo, hi);
  EXPECT_EQ(r.sizes(), Dims({2, 3}));
  EXPECT_EQ(r.dtype(), tessera::kFloat32);
  expect_exact(r, {1, kNan, -1, 2, kNan, 3}, "clamp.Tensor");
  expect_exact(tessera::clamp(x, lo, Tensor{}), {1, kNan, -1, 2, kNan, 9}, "clamp.Tensor min only");
  expect_exact(tessera::clamp_min(x, lo), {1, kNan, -1, 2, kNan, 9}, "clamp_min.Tensor");
  expect_exact(tessera::clamp_max(x, make({2}, tessera::kFloat32)), {1, 2, -3, 2, 0, 2},
               "clamp_max.Tensor");
  // In place: the bounds may not grow self.
  Tensor small = make({1, 2, 3}, tessera::kFloat32);
  expect_error(
      [&] {
        tessera::call_op("clamp_.Tensor", {value(small), value(x), value(x)});
      },
      TSR_INVALID_ARGUMENT, {"clamp_.Tensor", "doesn't match the broadcast shape"});
  tessera::call_op("clamp_.Tensor", {value(small), value(make({2}, tessera::kFloat32)),
                                     value(make({2.5}, tessera::kFloat32))});
  expect_exact(small, {2, 2, 2.5}, "clamp_.Tensor");
}

TEST(PointwiseClamp, NanToNumDefaultsToTheDtypeRange) {
  const std::vector<double> in = {kNan, kInf, -kInf, 1.5};
  expect_exact(tessera::nan_to_num(make(in, tessera::kFloat16)), {0, 65504, -65504, 1.5},
               "nan_to_num float16");
  expect_exact(tessera::nan_to_num(make(in, tessera::kFloat32)),
               {0, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1.5},
               "nan_to_num float32");
  expect_exact(tessera::nan_to_num(make(in, tessera::kFloat64), 1.0, 2.0, -3.0), {1, 2, -3, 1.5},
               "nan_to_num explicit");
  // torch.nan_to_num on bfloat16 gives +-3.3895e+38.
  const std::vector<double> bf = values(tessera::nan_to_num(make(in, tessera::kBFloat16)));
  EXPECT_DOUBLE_EQ(bf[1], 3.3895313892515355e38);
  expect_exact(tessera::nan_to_num(make({3, -4}, tessera::kInt32)), {3, -4}, "nan_to_num int");
  Tensor t = make(in, tessera::kFloat64);
  tessera::nan_to_num_(t, 0.0, 9.0, -9.0);
  expect_exact(t, {0, 9, -9, 1.5}, "nan_to_num_");
}

// ---------------------------------------------------------------------------
// Binary math
// ---------------------------------------------------------------------------

using Ref2 = std::function<long double(long double, long double)>;

long double py_remainder(long double a, long double b) {
  long double r = std::fmod(a, b);
  if (r != 0 && ((b < 0) != (r < 0))) r += b;
  return r;
}

struct BinaryCase {
  const char* op;
  Ref2 ref;
  double lo, hi;
  bool loose;
};

TEST(PointwiseBinary, FloatOpsBroadcastAndMatchReferences) {
  const std::vector<BinaryCase> cases = {
      {"pow.Tensor_Tensor", [](long double a, long double b) { return std::pow(a, b); }, 0.1, 3,
       true},
      {"atan2", [](long double a, long double b) { return std::atan2(a, b); }, -3, 3, true},
      {"maximum", [](long double a, long double b) { return std::max(a, b); }, -3, 3, false},
      {"minimum", [](long double a, long double b) { return std::min(a, b); }, -3, 3, false},
      {"fmax", [](long double a, long double b) { return std::fmax(a, b); }, -3, 3, false},
      {"fmin", [](long double a, long double b) { return std::fmin(a, b); }, -3, 3, false},
      {"remainder.Tensor", py_remainder, -5, 5, true},
      {"fmod.Tensor", [](long double a, long double b) { return std::fmod(a, b); }, -5, 5, true},
      {"floor_divide", [](long double a, long double b) { return std::floor(a / b); }, -5, 5,
       false},
      {"copysign.Tensor", [](long double a, long double b) { return std::copysign(a, b); }, -3, 3,
       false},
      {"hypot", [](long double a, long double b) { return std::hypot(a, b); }, -3, 3, true},
      {"xlogy.Tensor", [](long double a, long double b) { return a * std::log(b); }, 0.1, 3, true},
      {"logaddexp",
       [](long double a, long double b) { return std::log(std::exp(a) + std::exp(b)); }, -5, 5,
       true},
  };
  for (const BinaryCase& c : cases) {
    for (Dtype d : {tessera::kFloat32, tessera::kFloat64, tessera::kFloat16}) {
      // (4, 1) op (1, 5) -> (4, 5), the first operand transposed from (1, 4).
      const Tensor a = make(uniform(4, c.lo, c.hi, 11), {1, 4}, d).t();
      const Tensor b = make(uniform(5, c.lo, c.hi, 12), {1, 5}, d);
      const std::vector<double> av = values(a), bv = values(b);
      std::vector<double> expected;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) expected.push_back(static_cast<double>(c.ref(av[i], bv[j])));
      const Tensor r = tessera::call_op(c.op, {value(a), value(b)});
      EXPECT_EQ(r.sizes(), Dims({4, 5})) << c.op;
      EXPECT_EQ(r.dtype(), d) << c.op;
      expect_values(r, expected, tolerance(d, c.loose), std::string(c.op) + " " + tessera::name(d));
    }
  }
}

TEST(PointwiseBinary, NaNAndInfinitySemantics) {
  const Tensor a = make({1.0, kNan, kNan, 5.0, -5.0, 0.0, 0.0}, tessera::kFloat64);
  const Tensor b = make({kNan, 2.0, kNan, kInf, kInf, kNan, 0.0}, tessera::kFloat64);
  expect_exact(tessera::maximum(a, b), {kNan, kNan, kNan, kInf, kInf, kNan, 0}, "maximum NaN");
  expect_exact(tessera::fmax(a, b), {1, 2, kNan, kInf, kInf, 0, 0}, "fmax NaN");
  expect_exact(tessera::remainder(a, b), {kNan, kNan, kNan, 5, kInf, kNan, kNan},
               "remainder by inf (Python semantics)");
  expect_exact(tessera::xlogy(a, b), {kNan, kNan, kNan, kInf, -kInf, kNan, 0}, "xlogy");
  expect_exact(tessera::logaddexp(make({kInf, -kInf, 1}, tessera::kFloat32),
                                  make({kInf, -kInf, kNan}, tessera::kFloat32)),
               {kInf, -kInf, kNan}, "logaddexp at infinities");
  expect_exact(tessera::div(make({-7, 7, 1, -1, 0}, tessera::kFloat32),
                            make({2, -2, 0, 0, 0}, tessera::kFloat32), "floor"),
               {-4, -4, kInf, -kInf, kNan}, "div floor");
  expect_exact(tessera::div(make({-7, 7, 0}, tessera::kFloat32),
                            make({2, -2, 0}, tessera::kFloat32), "trunc"),
               {-3, -3, kNan}, "div trunc");
}

TEST(PointwiseBinary, IntegerDivisionFollowsPythonAndNeverCrashes) {
  const Tensor a = make({-7, 7, -7, 7, 6}, tessera::kInt64);
  const Tensor b = make({2, -2, -2, 2, 3}, tessera::kInt64);
  expect_exact(tessera::remainder(a, b), {1, -1, -1, 1, 0}, "remainder");
  expect_exact(tessera::fmod(a, b), {-1, 1, -1, 1, 0}, "fmod");
  expect_exact(tessera::floor_divide(a, b), {-4, -4, 3, 3, 2}, "floor_divide");
  expect_exact(tessera::div(a, b, "trunc"), {-3, -3, 3, 3, 2}, "div trunc");
  EXPECT_EQ(tessera::div(a, b, "floor").dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::div(a, b, nullptr).dtype(), tessera::kFloat32);
  expect_exact(tessera::remainder(a, 3), {2, 1, 2, 1, 0}, "remainder.Scalar");
  // The minimum divided by -1 wraps instead of raising SIGFPE.
  const Tensor m = make({-2147483648.0, 5}, tessera::kInt32);
  const Tensor neg1 = make({-1, -1}, tessera::kInt32);
  expect_exact(tessera::floor_divide(m, neg1), {-2147483648.0, -5}, "INT_MIN // -1");
  expect_exact(tessera::remainder(m, neg1), {0, 0}, "INT_MIN % -1");
  expect_exact(tessera::fmod(m, neg1), {0, 0}, "fmod INT_MIN, -1");
  // Division by zero is an error naming the op, for every integer op.
  for (const char* op : {"remainder.Tensor", "fmod.Tensor", "floor_divide"}) {
    expect_error(
        [&] {
          tessera::call_op(op, {value(a), value(make({1, 0, 1, 1, 1}, tessera::kInt64))});
        },
        TSR_INVALID_ARGUMENT, {op, "ZeroDivisionError"});
  }
  expect_error([&] { tessera::div(a, make({0}, tessera::kInt64), "trunc"); }, TSR_INVALID_ARGUMENT,
               {"div", "ZeroDivisionError"});
  expect_error([&] { tessera::remainder(a, 0); }, TSR_INVALID_ARGUMENT, {"ZeroDivisionError"});
  // Nothing was written by the failed in-place call.
  Tensor target = make({5, 6}, tessera::kInt32);
  expect_error(
      [&] {
        tessera::floor_divide_(target, make({2, 0}, tessera::kInt32));
      },
      TSR_INVALID_ARGUMENT, {"floor_divide_", "ZeroDivisionError"});
  expect_exact(target, {5, 6}, "target untouched");
  expect_error([] { tessera::remainder(make({1}, tessera::kBool), make({1}, tessera::kBool)); },
               TSR_INVALID_ARGUMENT, {"remainder", "bool"});
}

TEST(PointwiseBinary, PowPromotionAndIntegerExponents) {
  const Tensor i = make({2, -3, 0, 5, -7}, tessera::kInt32);
  expect_exact(tessera::pow(i, make({-1, -2, -1, 0, 3}, tessera::kInt32)), {0, 0, 0, 1, -343},
               "int pow with negative exponents");
  expect_exact(
      tessera::pow(make({1, -1, -1}, tessera::kInt64), make({-1, -1, -2}, tessera::kInt64)),
      {1, -1, 1}, "pow of +-1 by negative exponents");
  EXPECT_EQ(tessera::pow(i, 2).dtype(), tessera::kInt32);
  expect_exact(tessera::pow(i, 2), {4, 9, 0, 25, 49}, "pow int scalar");
  EXPECT_EQ(tessera::pow(i, 2.0).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::pow(2, i).dtype(), tessera::kInt32);
  EXPECT_EQ(tessera::pow(2.5, i).dtype(), tessera::kFloat32);
  expect_exact(tessera::pow(2, make({0, 3, 10}, tessera::kInt64)), {1, 8, 1024}, "pow.Scalar");
  expect_error([&] { tessera::pow(i, -2); }, TSR_INVALID_ARGUMENT,
               {"pow.Tensor_Scalar", "Integers to negative integer powers are not allowed"});
  const Tensor fp = tessera::float_power(make({2, 3}, tessera::kInt32), 0.5);
  EXPECT_EQ(fp.dtype(), tessera::kFloat64);
  expect_values(fp, {std::sqrt(2.0), std::sqrt(3.0)}, tc::tolerance(TSR_FLOAT64), "float_power");
  Tensor f32 = make({2.0}, tessera::kFloat32);
  expect_error(
      [&] {
        tessera::call_op("float_power_.Scalar", {value(f32), value(Scalar(2))});
      },
      TSR_INVALID_ARGUMENT, {"float_power_", "float32", "float64"});
}

TEST(PointwiseBinary, BitwiseAndShifts) {
  const Tensor a = make({12, -1, 0}, tessera::kInt16);
  const Tensor b = make({10, 7, 3}, tessera::kInt16);
  expect_exact(tessera::bitwise_and(a, b), {8, 7, 0}, "and");
  expect_exact(tessera::bitwise_or(a, b), {14, -1, 3}, "or");
  expect_exact(tessera::bitwise_xor(a, b), {6, -8, 3}, "xor");
  expect_exact(tessera::bitwise_and(a, 4), {4, 4, 0}, "and scalar");
  expect_exact(tessera::bitwise_xor(make({1, 0}, tessera::kBool), make({1, 1}, tessera::kBool)),
               {0, 1}, "xor bool");
  EXPECT_EQ(tessera::bitwise_or(make({1, 0}, tessera::kBool), make({1, 1}, tessera::kBool)).dtype(),
            tessera::kBool);
  // Shifts: out-of-range amounts give 0 (left) or the sign fill (right).
  const Tensor x = make({1, 1, -8, 8, -8}, tessera::kInt32);
  expect_exact(tessera::bitwise_left_shift(x, make({31, 40, 1, -1, 2}, tessera::kInt32)),
               {-2147483648.0, 0, -16, 0, -32}, "left shift");
  expect_exact(tessera::bitwise_right_shift(x, make({0, 40, 1, 40, 40}, tessera::kInt32)),
               {1, 0, -4, 0, -1}, "right shift");
  expect_exact(tessera::bitwise_right_shift(make({200}, tessera::kUInt8), 9), {0},
               "uint8 right shift past width");
  expect_error([] { tessera::bitwise_and(tessera::tensor({1.0}), tessera::tensor({1.0})); },
               TSR_INVALID_ARGUMENT, {"bitwise_and", "float32", "integer and bool"});
  expect_error([] { tessera::bitwise_or(tessera::tensor({1}), 1.5); }, TSR_INVALID_ARGUMENT,
               {"bitwise_or", "float32"});
  expect_error(
      [] { tessera::bitwise_left_shift(make({1}, tessera::kBool), make({1}, tessera::kBool)); },
      TSR_INVALID_ARGUMENT, {"bitwise_left_shift", "integer tensors only"});
}

TEST(PointwiseBinary, ComparisonsPromoteThenCompare) {
  const Tensor i = make({1, 2, 3}, tessera::kInt64);
  expect_exact(tessera::lt(i, 2.5), {1, 1, 0}, "int < 2.5 compares in float");
  expect_exact(tessera::eq(i, 2), {0, 1, 0}, "eq scalar");
  const Tensor f = make({1.0, kNan, 3.0}, tessera::kFloat32);
  expect_exact(tessera::eq(f, f), {1, 0, 1}, "NaN != NaN");
  expect_exact(tessera::ne(f, f), {0, 1, 0}, "ne NaN");
  expect_exact(tessera::ge(i, f), {1, 0, 1}, "ge mixed");
  expect_exact(tessera::gt(i, f), {0, 0, 0}, "gt mixed");
  expect_exact(tessera::le(i.reshape({3, 1}), i), {1, 1, 1, 0, 1, 1, 0, 0, 1}, "le broadcast");
  EXPECT_EQ(tessera::lt(i, f).dtype(), tessera::kBool);
  // In place: the bool result is stored in self's dtype.
  Tensor g = make({1.0, 2.0, 3.0}, tessera::kFloat32);
  tessera::gt_(g, make({2.0}, tessera::kFloat32));
  EXPECT_EQ(g.dtype(), tessera::kFloat32);
  expect_exact(g, {0, 0, 1}, "gt_");
  Tensor out = tessera::empty({0}, tessera::kBool);
  tessera::ne_out(out, i, make({1, 0, 3}, tessera::kInt64));
  EXPECT_EQ(out.sizes(), Dims({3}));
  expect_exact(out, {0, 1, 0}, "ne.out resized");
  // Logical ops take any dtypes and give bool.
  const Tensor p = make({0.0, 2.0, kNan, 0.0}, tessera::kFloat32);
  const Tensor q = make({1, 0, 0, 0}, tessera::kInt8);
  expect_exact(tessera::logical_and(p, q), {0, 0, 0, 0}, "logical_and");
  expect_exact(tessera::logical_or(p, q), {1, 1, 1, 0}, "logical_or");
  expect_exact(tessera::logical_xor(p, q), {1, 1, 1, 0}, "logical_xor");
}

TEST(PointwiseBinary, ScalarOperandsAreWrappedNumbers) {
  const Tensor h = make({1.0, 2.0}, tessera::kFloat16);
  EXPECT_EQ(tessera::atan2(h, make({1.0}, tessera::kFloat64).reshape({})).dtype(),
            tessera::kFloat16)
      << "a 0-d tensor does not raise a dimensioned tensor of the same category";
  EXPECT_EQ(tessera::copysign(make({1, 2}, tessera::kInt32), -1).dtype(), tessera::kFloat32);
  expect_exact(tessera::copysign(make({1, 2}, tessera::kInt32), -1), {-1, -2}, "copysign int");
  EXPECT_EQ(tessera::remainder(make({5, 6}, tessera::kUInt8), 4).dtype(), tessera::kUInt8);
  EXPECT_EQ(tessera::remainder(make({5, 6}, tessera::kUInt8), 4.0).dtype(), tessera::kFloat32);
  expect_exact(tessera::rsub(make({1, 2}, tessera::kInt64), 5), {4, 3}, "rsub.Scalar");
  expect_exact(
      tessera::rsub(make({1.0, 2.0}, tessera::kFloat32), make({5.0, 5.0}, tessera::kFloat32), 2),
      {3, 1}, "rsub.Tensor alpha");
  expect_exact(tessera::true_divide(make({1, 3}, tessera::kInt64), 2), {0.5, 1.5}, "true_divide");
  expect_values(tessera::xlogy(make({0.0, 2.0}, tessera::kFloat32), 3.0), {0.0, 2 * std::log(3.0)},
                tc::loose(TSR_FLOAT32), "xlogy.Scalar_Other");
  expect_values(tessera::call_op("xlogy.Scalar_Self",
                                 {value(Scalar(2.0)), value(make({1.0, 4.0}, tessera::kFloat64))}),
                {0.0, 2 * std::log(4.0)}, tc::tolerance(TSR_FLOAT64), "xlogy.Scalar_Self");
}

// ---------------------------------------------------------------------------
// where, masked_fill and the composites
// ---------------------------------------------------------------------------

TEST(PointwiseSelect, WhereBroadcastsAndPromotes) {
  const Tensor c = make({1, 0, 1}, tessera::kBool);
  const Tensor a = make({1.0, 2.0, 3.0}, tessera::kFloat32);
  const Tensor b = make({10, 20}, {2, 1}, tessera::kInt64);
  const Tensor r = tessera::where(c, a, b);
  EXPECT_EQ(r.sizes(), Dims({2, 3}));
  EXPECT_EQ(r.dtype(), tessera::kFloat32);
  expect_exact(r, {1, 10, 3, 1, 20, 3}, "where");
  expect_exact(tessera::where(c, 7, a), {7, 2, 7}, "where.ScalarSelf");
  expect_exact(tessera::where(c, a, -1.5), {1, -1.5, 3}, "where.ScalarOther");
  EXPECT_EQ(tessera::where(c, 1.0, 0).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::where(c, 1, 0).dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::where(c, make({1, 2, 3}, tessera::kInt32), 2).dtype(), tessera::kInt32);
  EXPECT_EQ(tessera::where(c, make({1, 2, 3}, tessera::kInt32), 2.5).dtype(), tessera::kFloat32);
  for (Dtype d : {tessera::kInt8, tessera::kFloat16, tessera::kInt64, tessera::kBool}) {
    const Tensor x = make({1, 0, 1}, d), y = make({0, 1, 0}, d);
    expect_exact(tessera::where(c, x, y), {1, 1, 1}, std::string("where ") + tessera::name(d));
  }
  Tensor out = tessera::empty({3}, tessera::kFloat64);
  tessera::call_op("where.self_out", {value(c), value(a), value(a), value(out)});
  expect_exact(out, {1, 2, 3}, "where.self_out");
  expect_error([&] { tessera::where(a, a, a); }, TSR_INVALID_ARGUMENT,
               {"where", "condition", "boolean", "float32"});
}

TEST(PointwiseSelect, MaskedFill) {
  const Tensor x = make({1, 2, 3}, tessera::kInt64);
  const Tensor m = make({1, 0, 1}, tessera::kBool);
  expect_exact(tessera::masked_fill(x, m, 2.7), {2, 2, 2}, "value cast to self's dtype");
  expect_exact(tessera::masked_fill(x, m, make({9}, tessera::kInt64).reshape({})), {9, 2, 9},
               "masked_fill.Tensor");
  const Tensor m2 = make({1, 0}, {2, 1}, tessera::kBool);
  const Tensor wide = tessera::masked_fill(x, m2, 0);
  EXPECT_EQ(wide.sizes(), Dims({2, 3}));
  expect_exact(wide, {0, 0, 0, 1, 2, 3}, "masked_fill broadcasts self and mask");
  Tensor y = make({1.0, 2.0, 3.0}, tessera::kFloat32);
  const uint64_t v0 = y.version();
  tessera::masked_fill_(y, m, -kInf);
  expect_exact(y, {-kInf, 2, -kInf}, "masked_fill_");
  EXPECT_EQ(y.version(), v0 + 1);
  expect_error([&] { tessera::masked_fill_(y, m2, 0); }, TSR_INVALID_ARGUMENT,
               {"masked_fill_", "output with shape [3] doesn't match the broadcast shape [2, 3]"});
  expect_error([&] { tessera::masked_fill(x, x, 0); }, TSR_INVALID_ARGUMENT,
               {"masked_fill", "boolean masks", "int64"});
  expect_error(
      [&] {
        tessera::masked_fill(x, m, make({1, 2}, tessera::kInt64));
      },
      TSR_INVALID_ARGUMENT, {"0-dimensional value tensor", "1 dimension(s)"});
}

TEST(PointwiseComposites, LerpAddcmulAddcdiv) {
  const Tensor a = make({1.0, 2.0, -1.0}, tessera::kFloat64);
  const Tensor b = make({3.0, -2.0, 5.0}, tessera::kFloat64);
  expect_values(tessera::lerp(a, b, 0.25), {1.5, 1.0, 0.5}, tc::tolerance(TSR_FLOAT64),
                "lerp 0.25");
  expect_exact(tessera::lerp(a, b, 1.0), {3, -2, 5}, "lerp weight 1 gives end exactly");
  const Tensor w = make({0.0, 0.75, 1.0}, tessera::kFloat64);
  expect_values(tessera::lerp(a, b, w), {1.0, -1.0, 5.0}, tc::tolerance(TSR_FLOAT64),
                "lerp.Tensor");
  expect_error([&] { tessera::lerp(a, b.to(tessera::kFloat32), 0.5); }, TSR_INVALID_ARGUMENT,
               {"lerp", "expected dtype float64 for `end` but got dtype float32"});
  expect_error([] { tessera::lerp(tessera::tensor({1}), tessera::tensor({2}), 0.5); },
               TSR_INVALID_ARGUMENT, {"lerp", "floating-point"});

  const Tensor s = make({1.0, 1.0}, tessera::kFloat32);
  const Tensor t1 = make({2.0, 3.0}, tessera::kFloat32);
  const Tensor t2 = make({4.0, 6.0}, tessera::kFloat32);
  expect_exact(tessera::addcmul(s, t1, t2, 0.5), {5, 10}, "addcmul");
  expect_exact(tessera::addcdiv(s, t1, t2, 2), {2, 2}, "addcdiv");
  Tensor inplace = s.clone();
  tessera::call_op("addcmul_", {value(inplace), value(t1), value(t2)});
  expect_exact(inplace, {9, 19}, "addcmul_");
  expect_error(
      [] { tessera::addcdiv(tessera::tensor({1}), tessera::tensor({2}), tessera::tensor({2})); },
      TSR_INVALID_ARGUMENT, {"addcdiv", "Integer division with addcdiv is no longer supported"});
}

// ---------------------------------------------------------------------------
// In-place and out= forms, layouts, the meta device
// ---------------------------------------------------------------------------

TEST(PointwiseForms, InPlaceAndOutObeyCastingAndShapes) {
  Tensor x = make({0.0, 1.0}, tessera::kFloat32);
  const uint64_t v0 = x.version();
  tessera::exp_(x);
  expect_values(x, {1.0, std::exp(1.0)}, tc::loose(TSR_FLOAT32), "exp_");
  EXPECT_EQ(x.version(), v0 + 1);

  Tensor ints = make({1, 2}, tessera::kInt64);
  expect_error([&] { tessera::exp_(ints); }, TSR_INVALID_ARGUMENT,
               {"exp_", "result type float32 can't be cast to the desired output type int64"});
  Tensor int_out = tessera::empty({2}, tessera::kInt32);
  expect_error([&] { tessera::sin_out(int_out, x); }, TSR_INVALID_ARGUMENT,
               {"sin.out", "float32", "int32"});
  // A float64 out takes a float32 result (computed, then copied).
  Tensor wide = tessera::empty({2}, tessera::kFloat64);
  tessera::sqrt_out(wide, make({4.0, 9.0}, tessera::kFloat32));
  expect_exact(wide, {2, 3}, "sqrt.out into float64");
  // out= is resized when it has the wrong shape.
  Tensor resized = tessera::empty({0}, tessera::kFloat32);
  tessera::atan2_out(resized, make({1, 1, 1}, {3, 1}, tessera::kFloat32),
                     make({1, 1}, tessera::kFloat32));
  EXPECT_EQ(resized.sizes(), Dims({3, 2}));
  // In-place broadcasting may not grow self.
  Tensor small = make({1.0, 2.0}, tessera::kFloat32);
  expect_error(
      [&] {
        tessera::pow_(small, make({1, 2, 3, 4}, {2, 2}, tessera::kFloat32));
      },
      TSR_INVALID_ARGUMENT,
      {"pow_.Tensor", "output with shape [2] doesn't match the broadcast shape [2, 2]"});
  // An expanded self refers to one element many times: no in-place writes.
  Tensor expanded = make({1.0}, tessera::kFloat32).expand({4});
  expect_error(
      [&] { tessera::sin_(expanded); }, TSR_INVALID_ARGUMENT,
      {"more than one element of the written-to tensor refers to a single memory location"});
  // out= partially overlapping an input is refused.
  Tensor base = make({1, 2, 3, 4}, tessera::kFloat32);
  Tensor head = base.slice(0, 0, 3), tail = base.slice(0, 1, 4);
  expect_error([&] { tessera::neg_out(tail, head); }, TSR_INVALID_ARGUMENT,
               {"refer to a single memory location"});
  // Exact aliasing (out is the input) is allowed.
  tessera::neg_out(head, head);
  expect_exact(base, {-1, -2, -3, 4}, "neg.out aliasing its input");
  // Comparisons and predicates write bool into any out dtype.
  Tensor f_out = tessera::empty({2}, tessera::kFloat32);
  tessera::isnan_out(f_out, make({kNan, 1.0}, tessera::kFloat64));
  expect_exact(f_out, {1, 0}, "isnan.out float");
}

TEST(PointwiseForms, NonContiguousZeroDimAndEmptyInputs) {
  const Tensor base = make(uniform(24, -2, 2, 5), {4, 6}, tessera::kFloat32);
  const Tensor view = base.t().slice(0, 0, 6, 2);  // (3, 4), strides (2, 6)
  ASSERT_FALSE(view.is_contiguous());
  const std::vector<double> vin = values(view);
  std::vector<double> expected;
  for (double v : vin) expected.push_back(std::tanh(v));
  expect_values(tessera::tanh(view), expected, tc::loose(TSR_FLOAT32), "tanh strided");
  // In place on a strided view touches only the view.
  Tensor target = base.clone();
  Tensor tv = target.t().slice(0, 0, 6, 2);
  tessera::abs_(tv);
  const std::vector<double> all = values(target), orig = values(base);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 6; ++c) {
      const double o = orig[r * 6 + c];
      EXPECT_EQ(all[r * 6 + c], c % 2 == 0 ? std::fabs(o) : o) << r << "," << c;
    }

  const Tensor s = make({2.0}, tessera::kFloat64).reshape({});
  const Tensor e = tessera::exp(s);
  EXPECT_EQ(e.dim(), 0);
  EXPECT_NEAR(e.item<double>(), std::exp(2.0), 1e-12);
  expect_exact(tessera::maximum(s, make({1, 5}, tessera::kFloat64)), {2, 5}, "0-d broadcast");

  const Tensor empty = tessera::empty({0, 3}, tessera::kFloat32);
  EXPECT_EQ(tessera::exp(empty).sizes(), Dims({0, 3}));
  EXPECT_EQ(tessera::eq(empty, 1.0).sizes(), Dims({0, 3}));
  EXPECT_EQ(tessera::where(tessera::empty({0, 1}, tessera::kBool), empty, 1.0).sizes(),
            Dims({0, 3}));
  EXPECT_EQ(tessera::maximum(empty, make({1, 2, 3}, tessera::kFloat32)).sizes(), Dims({0, 3}));
}

TEST(PointwiseForms, LargeInputsRunInParallelWithTheSameResults) {
  const int64_t n = 300001;  // above the parallel threshold, odd length
  const std::vector<double> in = uniform(static_cast<size_t>(n), -4, 4, 9);
  const Tensor x = make(in, tessera::kFloat32);
  const std::vector<double> xs = values(x);
  const std::vector<double> y = values(tessera::sigmoid(x));
  const std::vector<double> z = values(tessera::maximum(x, tessera::neg(x)));
  for (int64_t i = 0; i < n; i += 997) {
    EXPECT_NEAR(y[i], 1 / (1 + std::exp(-xs[i])), 1e-6) << i;
    EXPECT_EQ(z[i], std::fabs(xs[i])) << i;
  }
  const Tensor h = make(in, tessera::kBFloat16);
  const std::vector<double> hv = values(h), hy = values(tessera::exp(h));
  for (int64_t i = 0; i < n; i += 1009)
    EXPECT_TRUE(close(hy[i], std::exp(hv[i]), tc::tolerance(TSR_BFLOAT16))) << i;
}

// Large contiguous float32 calls of exp, log, tanh, sigmoid, gelu, silu and elu
// run through oneDNN's eltwise primitive in chunks (the tail through the plain
// loop): same semantics, specials included, in place too.
TEST(PointwiseForms, LargeFloat32TranscendentalsMatchTheReference) {
  const size_t n = 3 * 8192 + 77;
  std::vector<double> in = uniform(n, -30, 30, 21);
  for (size_t i = 0; i < n; i += 4099) {
    in[i] = kNan;
    in[i + 1] = kInf;
    in[i + 2] = -kInf;
    in[i + 3] = 0.0;
    in[i + 4] = 100.0;
  }
  const Tensor x = make(in, tessera::kFloat32);
  const std::vector<double> xs = values(x);
  struct Case {
    const char* op;
    std::function<long double(long double)> ref;
  };
  const std::vector<Case> cases = {
      {"exp", [](long double v) { return std::exp(v); }},
      {"log", [](long double v) { return std::log(v); }},
      {"tanh", [](long double v) { return std::tanh(v); }},
      {"sigmoid", [](long double v) { return 1 / (1 + std::exp(-v)); }},
      {"gelu", [](long double v) { return 0.5L * v * (1 + std::erf(v / std::sqrt(2.0L))); }},
      {"silu", [](long double v) { return v / (1 + std::exp(-v)); }},
      {"elu", [](long double v) { return v > 0 ? v : std::expm1(v); }},
  };
  for (const Case& c : cases) {
    std::vector<double> expected;
    for (double v : xs) expected.push_back(static_cast<float>(c.ref(v)));  // overflow: inf
    expect_values(tessera::call_op(c.op, {value(x)}), expected, tc::loose(TSR_FLOAT32), c.op, &xs);
    Tensor y = x.clone();
    tessera::call_op((std::string(c.op) + "_").c_str(), {value(y)});
    expect_values(y, expected, tc::loose(TSR_FLOAT32), std::string(c.op) + "_", &xs);
  }
}

TEST(PointwiseForms, MetaDeviceComputesShapesAndDtypesOnly) {
  const Tensor a =
      tessera::empty({2, 1, 3}, tessera::TensorOptions(tessera::kInt32).device(tessera::kMeta));
  const Tensor b =
      tessera::empty({4, 1}, tessera::TensorOptions(tessera::kFloat16).device(tessera::kMeta));
  const Tensor e = tessera::exp(a);
  EXPECT_TRUE(e.device().is_meta());
  EXPECT_EQ(e.dtype(), tessera::kFloat32);
  EXPECT_EQ(e.sizes(), Dims({2, 1, 3}));
  const Tensor p = tessera::pow(a, b);
  EXPECT_EQ(p.sizes(), Dims({2, 4, 3}));
  EXPECT_EQ(p.dtype(), tessera::kFloat16);
  EXPECT_EQ(tessera::lt(a, b).dtype(), tessera::kBool);
  const Tensor c =
      tessera::empty({4, 3}, tessera::TensorOptions(tessera::kBool).device(tessera::kMeta));
  EXPECT_EQ(tessera::where(c, a, b).sizes(), Dims({2, 4, 3}));
  EXPECT_EQ(tessera::clamp(b, a, Tensor{}).sizes(), Dims({2, 4, 3}));
  EXPECT_EQ(tessera::lerp(b, b, 0.5).dtype(), tessera::kFloat16);
  EXPECT_EQ(tessera::addcmul(b, b, a).sizes(), Dims({2, 4, 3}));
  EXPECT_EQ(tessera::masked_fill(b, c, 1).sizes(), Dims({4, 3}));
  EXPECT_EQ(tessera::gelu(b).dtype(), tessera::kFloat16);
  EXPECT_EQ(tessera::isnan(a).dtype(), tessera::kBool);
  expect_error([&] { tessera::call_op("neg", {value(c)}); }, TSR_INVALID_ARGUMENT, {"Negation"});
}

TEST(PointwisePrimitives, UnaryAndBinaryByCode) {
  const Tensor x = make({0.25, 4.0}, tessera::kFloat64);
  expect_values(tessera::call_op("_unary", {value(x), value(int64_t{TSR_UNARY_LOG2})}), {-2, 2},
                tc::tolerance(TSR_FLOAT64), "_unary LOG2");
  expect_exact(tessera::call_op("_unary", {value(x), value(int64_t{TSR_UNARY_CLAMP}),
                                           value(Scalar(0.5)), value(Scalar(1.0))}),
               {0.5, 1.0}, "_unary CLAMP with params");
  expect_exact(tessera::call_op("_binary", {value(x), value(x), value(int64_t{TSR_BINARY_LE})}),
               {1, 1}, "_binary LE");
  expect_error(
      [&] {
        tessera::call_op("_unary", {value(x), value(999)});
      },
      TSR_INVALID_ARGUMENT, {"_unary", "999", "tsr_unary_op"});
  expect_error(
      [&] {
        tessera::call_op("_binary", {value(x), value(x), value(-1)});
      },
      TSR_INVALID_ARGUMENT, {"_binary", "tsr_binary_op"});
  expect_error([&] { tessera::div(x, x, "round"); }, TSR_INVALID_ARGUMENT,
               {"div", "rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"});
}

}  // namespace
