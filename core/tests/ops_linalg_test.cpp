// The linalg and conv op families end to end (C++ frontend -> core -> CPU
// plugin): products (dot, vdot, outer, mv, addmm/addmv/addr/baddbmm/addbmm
// with beta and alpha, linear, matmul broadcasting and out=, tensordot),
// einsum, convolution (1-d/2-d/3-d, stride, padding, dilation, groups,
// transposed with output_padding, 'same'/'valid', unbatched, bias None,
// non-contiguous operands) and pooling (max with indices, avg, adaptive),
// against float64 references computed here, plus the meta device and bad
// input (code + message naming op and argument).
//
// Both paths of the fusable ops are checked: the CPU plugin's fused kernels
// claim float32 and float64, so int64, float16 and bfloat16 inputs run the
// core's decompositions (integer-valued data makes those comparisons exact),
// and an op observer confirms which path ran.
//
// Tolerances (conformance/tolerances.hpp): float64 1e-12, float32 rtol 1.3e-6
// atol 1e-5, float16 1e-3, bfloat16 1.6e-2; products and convolutions
// accumulate, so they use loose(): x16. Integer results compare exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "../../conformance/tolerances.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
namespace conf = tessera::conformance;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Deterministic values in [-1, 1) (a small LCG).
std::vector<double> pseudo_random(size_t n, uint32_t seed) {
  std::vector<double> values(n);
  uint32_t state = seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }
  return values;
}

// Small integers in [-4, 4]: exact in every dtype and in integer products.
std::vector<double> small_ints(size_t n, uint32_t seed) {
  std::vector<double> v = pseudo_random(n, seed);
  for (auto& x : v) x = std::round(x * 4.0);
  return v;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Tensor make(const std::vector<double>& values, const std::vector<int64_t>& shape, Dtype dtype) {
  return tessera::tensor(values, tessera::IntList(shape)).to(dtype);
}
std::vector<double> held(const Tensor& t) { return t.to_vector<double>(); }
std::vector<int64_t> sizes_of(const Tensor& t) {
  const auto d = t.sizes();
  return std::vector<int64_t>(d.begin(), d.end());
}

conf::Tolerance tol(Dtype d, bool loose = true) {
  conf::Tolerance t = conf::tolerance(static_cast<tsr_dtype>(d));
  if (loose) {
    t.rtol *= conf::kAccumulatingFactor;
    t.atol *= conf::kAccumulatingFactor;
  }
  return t;
}

void expect_values(const std::vector<double>& actual, const std::vector<double>& expected,
                   conf::Tolerance t, const std::string& what = "") {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < actual.size() && failures < 10; ++i) {
    const double a = actual[i], e = expected[i];
    bool ok;
    if (std::isnan(e))
      ok = std::isnan(a);
    else if (std::isinf(e))
      ok = a == e;
    else
      ok = std::fabs(a - e) <= t.atol + t.rtol * std::fabs(e);
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << " at " << i << ": got " << a << ", expected " << e;
    }
  }
}

bool has_op(const char* name) {
  const tsr_op* op = nullptr;
  tsr_status* s = tsr_op_find(tessera::default_runtime(), name, &op);
  if (s) tsr_status_free(s);
  return s == nullptr;
}

#define SKIP_WITHOUT(op_name) \
  if (!has_op(op_name))       \
  GTEST_SKIP() << "needs op '" << op_name << "' of another family, not registered yet"

template <class F>
void expect_error(F&& f, tsr_status_code code, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message lacks '" << p << "': " << e.what();
  }
}

// Records the names of the ops a call crosses (tsr_runtime_set_op_observer).
class OpLog {
 public:
  OpLog() {
    tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), &OpLog::record, this));
  }
  ~OpLog() {
    tsr_status_free(tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr));
  }
  OpLog(const OpLog&) = delete;
  OpLog& operator=(const OpLog&) = delete;
  bool saw(const std::string& name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }

 private:
  static void record(const tsr_op* op, void* context) {
    static_cast<OpLog*>(context)->names_.push_back(tsr_op_name(op));
  }
  std::vector<std::string> names_;
};

// Row-major (b, n, k) x (b, k, m).
std::vector<double> ref_bmm(const std::vector<double>& a, const std::vector<double>& b,
                            int64_t batch, int64_t n, int64_t k, int64_t m) {
  std::vector<double> c(static_cast<size_t>(batch * n * m), 0.0);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t x = 0; x < k; ++x) acc += a[(p * n + i) * k + x] * b[(p * k + x) * m + j];
        c[(p * n + i) * m + j] = acc;
      }
  return c;
}

// ===========================================================================
// Products
// ===========================================================================

TEST(Products, DotVdotOuterMv) {
  for (Dtype dt : {tessera::kFloat32, tessera::kFloat64, tessera::kInt64}) {
    const bool ints = dt == tessera::kInt64;
    const auto a = ints ? small_ints(7, 1) : pseudo_random(7, 1);
    const auto b = ints ? small_ints(7, 2) : pseudo_random(7, 2);
    const Tensor ta = make(a, {7}, dt), tb = make(b, {7}, dt);
    const auto ha = held(ta), hb = held(tb);
    double d = 0;
    for (int i = 0; i < 7; ++i) d += ha[i] * hb[i];
    const Tensor r = tessera::dot(ta, tb);
    EXPECT_EQ(r.dim(), 0);
    EXPECT_EQ(r.dtype(), dt);
    expect_values(held(r), {d}, tol(dt), "dot");
    expect_values(held(tessera::vdot(ta, tb)), {d}, tol(dt), "vdot");
    // outer (7,) x (3,)
    const Tensor tc = make(ints ? small_ints(3, 3) : pseudo_random(3, 3), {3}, dt);
    const auto hc = held(tc);
    std::vector<double> o;
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 3; ++j) o.push_back(ha[i] * hc[j]);
    const Tensor to = tessera::outer(ta, tc);
    EXPECT_EQ(sizes_of(to), (std::vector<int64_t>{7, 3}));
    expect_values(held(to), o, tol(dt, false), "outer");
    // mv: (3, 7) x (7,) with a transposed matrix.
    const Tensor m = make(ints ? small_ints(21, 4) : pseudo_random(21, 4), {7, 3}, dt).t();
    const auto hm = held(m);
    std::vector<double> mv(3, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 7; ++j) mv[i] += hm[i * 7 + j] * ha[j];
    expect_values(held(tessera::mv(m, ta)), mv, tol(dt), "mv");
  }
  // Strided vectors and the empty dot.
  const Tensor big = make(pseudo_random(12, 5), {12}, tessera::kFloat64);
  const Tensor s = big.slice(0, 0, 12, 3);
  const auto hs = held(s);
  double d = 0;
  for (double v : hs) d += v * v;
  expect_values(held(tessera::dot(s, s)), {d}, tol(tessera::kFloat64));
  const Tensor e = tessera::empty({0});
  expect_values(held(tessera::dot(e, e)), {0.0}, tol(tessera::kFloat32));
  // outer promotes like mul.
  EXPECT_EQ(tessera::outer(tessera::tensor({1.0, 2.0}), tessera::tensor({1, 2})).dtype(),
            tessera::kFloat32);
}

TEST(Products, AddmmBetaAlphaAndForms) {
  const Dtype dt = tessera::kFloat64;
  const auto m1 = pseudo_random(2 * 4, 10), m2 = pseudo_random(4 * 3, 11);
  const auto self = pseudo_random(2 * 3, 12);
  const auto prod = ref_bmm(m1, m2, 1, 2, 4, 3);
  const Tensor t1 = make(m1, {2, 4}, dt), t2 = make(m2, {4, 3}, dt);
  // Full self, row-broadcast self, scalar self.
  std::vector<double> want(6);
  for (int i = 0; i < 6; ++i) want[i] = 0.5 * self[i] + 2.0 * prod[i];
  expect_values(held(tessera::addmm(make(self, {2, 3}, dt), t1, t2, 0.5, 2.0)), want, tol(dt));
  const std::vector<double> row = {1.0, -2.0, 3.0};
  for (int i = 0; i < 6; ++i) want[i] = row[i % 3] + prod[i];
  expect_values(held(tessera::addmm(make(row, {3}, dt), t1, t2)), want, tol(dt));
  // beta = 0 ignores NaN in self.
  const Tensor nan_self = tessera::full({2, 3}, kNaN, tessera::TensorOptions().dtype(dt));
  for (int i = 0; i < 6; ++i) want[i] = 3.0 * prod[i];
  expect_values(held(tessera::addmm(nan_self, t1, t2, 0, 3)), want, tol(dt));
  // In place and out=.
  Tensor acc = make(self, {2, 3}, dt);
  const int64_t version = acc.version();
  tessera::addmm_(acc, t1, t2);
  EXPECT_EQ(acc.version(), version + 1);
  for (int i = 0; i < 6; ++i) want[i] = self[i] + prod[i];
  expect_values(held(acc), want, tol(dt));
  Tensor out = tessera::empty({0}, tessera::TensorOptions().dtype(dt));
  tessera::call_op("addmm.out",
                   {tessera::detail::value(make(self, {2, 3}, dt)), tessera::detail::value(t1),
                    tessera::detail::value(t2), tessera::detail::value(tessera::Scalar(1)),
                    tessera::detail::value(tessera::Scalar(1)), tessera::detail::value(out)});
  EXPECT_EQ(sizes_of(out), (std::vector<int64_t>{2, 3}));
  expect_values(held(out), want, tol(dt));
  // Integers: exact, integer beta/alpha.
  const Tensor i1 = make(small_ints(8, 13), {2, 4}, tessera::kInt64);
  const Tensor i2 = make(small_ints(12, 14), {4, 3}, tessera::kInt64);
  const auto ip = ref_bmm(held(i1), held(i2), 1, 2, 4, 3);
  for (int i = 0; i < 6; ++i) want[i] = 2 * ip[i] - 1;
  const Tensor ones = tessera::ones({2, 3}, tessera::TensorOptions().dtype(tessera::kInt64));
  expect_values(held(tessera::addmm(ones, i1, i2, -1, 2)), want, tol(tessera::kInt64));
}

TEST(Products, AddmvAddrBaddbmmAddbmm) {
  const Dtype dt = tessera::kFloat64;
  const auto mat = pseudo_random(3 * 4, 20), vec = pseudo_random(4, 21),
             self3 = pseudo_random(3, 22);
  std::vector<double> want(3);
  for (int i = 0; i < 3; ++i) {
    double s = 0;
    for (int j = 0; j < 4; ++j) s += mat[i * 4 + j] * vec[j];
    want[i] = 2 * self3[i] + 0.5 * s;
  }
  expect_values(
      held(tessera::addmv(make(self3, {3}, dt), make(mat, {3, 4}, dt), make(vec, {4}, dt), 2, 0.5)),
      want, tol(dt));
  // addr
  const auto v1 = pseudo_random(3, 23), v2 = pseudo_random(2, 24), s32 = pseudo_random(6, 25);
  std::vector<double> w6(6);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) w6[i * 2 + j] = s32[i * 2 + j] + 3 * v1[i] * v2[j];
  expect_values(
      held(tessera::addr(make(s32, {3, 2}, dt), make(v1, {3}, dt), make(v2, {2}, dt), 1, 3)), w6,
      tol(dt));
  // baddbmm with a broadcast self, addbmm summing over the batch.
  const int64_t B = 3, n = 2, k = 5, m = 4;
  const auto b1 = pseudo_random(B * n * k, 26), b2 = pseudo_random(B * k * m, 27);
  const auto prod = ref_bmm(b1, b2, B, n, k, m);
  const auto s = pseudo_random(m, 28);
  std::vector<double> wb(prod.size());
  for (size_t i = 0; i < prod.size(); ++i) wb[i] = -s[i % m] + 2 * prod[i];
  const Tensor tb1 = make(b1, {B, n, k}, dt), tb2 = make(b2, {B, k, m}, dt);
  expect_values(held(tessera::baddbmm(make(s, {m}, dt), tb1, tb2, -1, 2)), wb, tol(dt));
  std::vector<double> wa(static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n * m; ++i) {
    double acc = 0;
    for (int64_t p = 0; p < B; ++p) acc += prod[p * n * m + i];
    wa[i] = s[i % m] + acc;
  }
  expect_values(held(tessera::addbmm(make(s, {m}, dt), tb1, tb2)), wa, tol(dt));
}

// Integer inputs with floating (or complex) beta/alpha: addmm, addmv, baddbmm
// and addbmm convert each scale to the dtype as PyTorch converts a Scalar
// (toward zero; refused out of the dtype's range). Every expected value is
// PyTorch 2.15's, with A = [[1, 2], [3, 4]], v = [5, 6], sv = [1, -1],
// bs = [[1, 2], [3, 4]], b1 = arange(8).reshape(2, 2, 2), b2 = b1 - 3.
TEST(Products, IntegerProductsTruncateFloatingScales) {
  using V = std::vector<double>;
  const Dtype i64 = tessera::kInt64;
  const Tensor A = make({1, 2, 3, 4}, {2, 2}, i64), v = make({5, 6}, {2}, i64);
  const Tensor sv = make({1, -1}, {2}, i64), bs = make({1, 2, 3, 4}, {2, 2}, i64);
  const Tensor b1 = make({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}, i64);
  const Tensor b2 = make({-3, -2, -1, 0, 1, 2, 3, 4}, {2, 2, 2}, i64);
  struct Case {
    tessera::Scalar beta, alpha;
    V addmv, addmm, addbmm, baddbmm;
  };
  const Case cases[] = {
      {1.5, 2.5, {35, 77}, {15, 22, 33, 48}, {37, 58, 39, 76}, {-1, 2, -15, -4, 39, 58, 57, 84}},
      {-0.5,
       -1.5,
       {-17, -39},
       {-7, -10, -15, -22},
       {-18, -28, -18, -36},
       {1, 0, 9, 4, -19, -28, -27, -40}},
      {0.5, 1, {17, 39}, {7, 10, 15, 22}, {18, 28, 18, 36}, {-1, 0, -9, -4, 19, 28, 27, 40}},
      {2, 0.3, {2, -2}, {2, 4, 6, 8}, {2, 4, 6, 8}, {2, 4, 6, 8, 2, 4, 6, 8}},
      {0.7, 0.0, {0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}},
      {true, 1, {18, 38}, {8, 12, 18, 26}, {19, 30, 21, 40}, {0, 2, -6, 0, 20, 30, 30, 44}},
      {std::complex<double>(2, 0),
       1,
       {19, 37},
       {9, 14, 21, 30},
       {20, 32, 24, 44},
       {1, 4, -3, 4, 21, 32, 33, 48}},
  };
  const conf::Tolerance exact = tol(i64);
  for (const Case& k : cases) {
    const std::string what = "beta " + std::to_string(k.beta.to<double>()) + " alpha " +
                             std::to_string(k.alpha.to<double>());
    const Tensor mv = tessera::addmv(sv, A, v, k.beta, k.alpha);
    EXPECT_EQ(mv.dtype(), i64);
    expect_values(held(mv), k.addmv, exact, "addmv " + what);
    expect_values(held(tessera::addmm(bs, A, A, k.beta, k.alpha)), k.addmm, exact, "addmm " + what);
    expect_values(held(tessera::addbmm(bs, b1, b2, k.beta, k.alpha)), k.addbmm, exact,
                  "addbmm " + what);
    expect_values(held(tessera::baddbmm(bs, b1, b2, k.beta, k.alpha)), k.baddbmm, exact,
                  "baddbmm " + what);
  }
  // Narrower dtypes: uint8 wraps, 127.99 fits int8, -1 and -255 fit uint8.
  const Dtype u8 = tessera::kUInt8, i8 = tessera::kInt8;
  const Tensor b2u = make({253, 254, 255, 0, 1, 2, 3, 4}, {2, 2, 2}, u8);
  expect_values(held(tessera::baddbmm(bs.to(u8), b1.to(u8), b2u, 1.5, 2.5)),
                {255, 2, 241, 252, 39, 58, 57, 84}, exact, "baddbmm uint8");
  expect_values(held(tessera::addmv(sv.to(i8), A.to(i8), v.to(i8), 1, 127.99)), {112, 88}, exact,
                "addmv int8 alpha 127.99");
  expect_values(held(tessera::addmv(sv.to(i8), A.to(i8), v.to(i8), 1, -128.0)), {-127, 127}, exact,
                "addmv int8 alpha -128.0");
  const Tensor svu = make({1, 255}, {2}, u8);
  expect_values(held(tessera::addmv(svu, A.to(u8), v.to(u8), 1, -1)), {240, 216}, exact,
                "addmv uint8 alpha -1");
  expect_values(held(tessera::addmv(svu, A.to(u8), v.to(u8), 1, -255)), {18, 38}, exact,
                "addmv uint8 alpha -255");
  expect_values(held(tessera::addmv(svu, A.to(u8), v.to(u8), 1, 255.99)), {240, 216}, exact,
                "addmv uint8 alpha 255.99");
  // In place and out= take the same conversion.
  Tensor acc = sv.clone();
  tessera::call_op(
      "addmv_",
      {tessera::detail::value(acc), tessera::detail::value(A), tessera::detail::value(v),
       tessera::detail::value(tessera::Scalar(1.5)), tessera::detail::value(tessera::Scalar(2.5))});
  expect_values(held(acc), {35, 77}, exact, "addmv_");
  // Out of range for the dtype (PyTorch: "value cannot be converted to type ...
  // without overflow").
  auto refused = [&](const Tensor& self, const Tensor& mat, const Tensor& vec,
                     const tessera::Scalar& beta, const tessera::Scalar& alpha, const char* arg,
                     const char* dtype) {
    expect_error([&] { (void)tessera::addmv(self, mat, vec, beta, alpha); }, TSR_INVALID_ARGUMENT,
                 {"addmv", arg, "cannot be converted to", dtype, "without overflow"});
  };
  refused(sv, A, v, 1e20, 1, "'beta'", "int64");
  refused(sv, A, v, 1, -1e20, "'alpha'", "int64");
  refused(sv, A, v, 1, 9223372036854775808.0, "'alpha'", "int64");
  refused(sv, A, v, std::complex<double>(0, 1), 1, "'beta'", "int64");
  refused(sv.to(i8), A.to(i8), v.to(i8), 1, 128.0, "'alpha'", "int8");
  refused(sv.to(i8), A.to(i8), v.to(i8), 1, 128, "'alpha'", "int8");
  refused(sv.to(i8), A.to(i8), v.to(i8), 1, -128.5, "'alpha'", "int8");
  refused(svu, A.to(u8), v.to(u8), 1, -0.5, "'alpha'", "uint8");
  refused(svu, A.to(u8), v.to(u8), 1, 256.0, "'alpha'", "uint8");
  refused(svu, A.to(u8), v.to(u8), 1, -256, "'alpha'", "uint8");
  const Dtype i32 = tessera::kInt32;
  refused(sv.to(i32), A.to(i32), v.to(i32), 1, 2147483648.0, "'alpha'", "int32");
  const Dtype f32 = tessera::kFloat32, f16 = tessera::kFloat16;
  refused(sv.to(f32), A.to(f32), v.to(f32), 1, 1e39, "'alpha'", "float32");
  refused(sv.to(f16), A.to(f16), v.to(f16), 1, 65519.0, "'alpha'", "float16");
  refused(sv.to(f32), A.to(f32), v.to(f32), std::complex<double>(0, 1), 1, "'beta'", "float32");
  // inf converts to every floating dtype; 65504 is float16's largest.
  expect_values(held(tessera::addmv(sv.to(f32), A.to(f32), v.to(f32), 1, kInf)), {kInf, kInf},
                exact, "addmv float32 alpha inf");
  expect_values(held(tessera::addmv(sv.to(f16), A.to(f16), v.to(f16), 1, 65504.0)), {kInf, kInf},
                exact, "addmv float16 alpha 65504");
  // bool products stay refused (PyTorch: not implemented for 'Bool').
  const Tensor bm = A.to(tessera::kBool), bv = v.to(tessera::kBool);
  expect_error([&] { (void)tessera::addmv(bv, bm, bv); }, TSR_UNIMPLEMENTED, {"addmv", "bool"});
}

// addr computes elementwise: its operands promote, a bool result is
// (beta && self) || (alpha && vec1 (x) vec2) with integer beta/alpha, and a
// floating scale is refused for an integral result and a bool one for any
// other. Every expected value is PyTorch 2.15's.
TEST(Products, AddrPromotesAndComputesBool) {
  using V = std::vector<double>;
  const Dtype b = tessera::kBool, i64 = tessera::kInt64, f32 = tessera::kFloat32;
  const conf::Tolerance exact = tol(i64);
  const Tensor s = make({1, 0, 0, 1, 1, 1}, {3, 2}, b);
  const Tensor v1 = make({1, 0, 1}, {3}, b), v2 = make({1, 1}, {2}, b);
  struct BoolCase {
    tessera::Scalar beta, alpha;
    V want;
  };
  const BoolCase bool_cases[] = {
      {1, 1, {1, 1, 0, 1, 1, 1}},        {2, 3, {1, 1, 0, 1, 1, 1}},
      {0, 1, {1, 1, 0, 0, 1, 1}},        {1, 0, {1, 0, 0, 1, 1, 1}},
      {0, 0, {0, 0, 0, 0, 0, 0}},        {true, false, {1, 0, 0, 1, 1, 1}},
      {false, true, {1, 1, 0, 0, 1, 1}}, {2, -1, {1, 1, 0, 1, 1, 1}},
  };
  for (const BoolCase& k : bool_cases) {
    const Tensor r = tessera::addr(s, v1, v2, k.beta, k.alpha);
    EXPECT_EQ(r.dtype(), b);
    expect_values(held(r), k.want, exact,
                  "bool beta " + std::to_string(k.beta.to<double>()) + " alpha " +
                      std::to_string(k.alpha.to<double>()));
  }
  // A 0-d bool self broadcasts.
  expect_values(
      held(tessera::addr(make({1}, {}, b), make({1, 1}, {2}, b), make({0, 1}, {2}, b), 2, 5)),
      {1, 1, 1, 1}, exact, "bool 0-d self");
  // uint8 wraps a negative alpha.
  const Dtype u8 = tessera::kUInt8;
  expect_values(held(tessera::addr(s.to(u8), v1.to(u8), v2.to(u8), 2, -1)), {1, 255, 0, 2, 1, 1},
                exact, "uint8");
  // Promotion over self, vec1 and vec2 (a 0-d self counts like any other).
  const Tensor si = s.to(i64), v1i = v1.to(i64), v2i = v2.to(i64);
  auto expect_addr = [&](const Tensor& r, Dtype dtype, const V& want, const std::string& what) {
    EXPECT_EQ(r.dtype(), dtype) << what;
    expect_values(held(r), want, exact, what);
  };
  expect_addr(tessera::addr(s, v1i, v2i), i64, {2, 1, 0, 1, 2, 2}, "bool self, int64 vecs");
  expect_addr(tessera::addr(si, v1.to(f32), v2.to(f32)), f32, {2, 1, 0, 1, 2, 2},
              "int64 self, float32 vecs");
  expect_addr(tessera::addr(s.to(f32), v1i, v2.to(f32)), f32, {2, 1, 0, 1, 2, 2},
              "int64 vec1, float32 vec2");
  expect_addr(tessera::addr(s.to(tessera::kInt32), v1i, v2i), i64, {2, 1, 0, 1, 2, 2},
              "int32 self, int64 vecs");
  const Tensor v = make({5, 6}, {2}, i64), bs = make({1, 2, 3, 4}, {2, 2}, i64);
  expect_addr(tessera::addr(bs, v.to(b), v), i64, {6, 8, 8, 10}, "bool vec1, int64 vec2");
  expect_addr(tessera::addr(tessera::ones({2, 2}, tessera::TensorOptions().dtype(i64)),
                            make({1, 0}, {2}, b), make({1, 1}, {2}, b), 2, 3),
              i64, {5, 5, 2, 2}, "bool vecs, int64 self, beta 2 alpha 3");
  expect_addr(tessera::addr(make({3}, {}, tessera::kFloat64), v.to(f32), v.to(f32)),
              tessera::kFloat64, {28, 33, 33, 39}, "0-d float64 self, float32 vecs");
  expect_addr(
      tessera::addr(tessera::ones({2, 2}, tessera::TensorOptions().dtype(tessera::kFloat16)),
                    v.to(tessera::kBFloat16), v.to(tessera::kBFloat16)),
      f32, {26, 31, 31, 37}, "float16 self, bfloat16 vecs");
  // out= casts the promoted result as PyTorch's can_cast allows.
  Tensor out = tessera::empty({0});
  tessera::call_op(
      "addr.out", {tessera::detail::value(bs), tessera::detail::value(v), tessera::detail::value(v),
                   tessera::detail::value(tessera::Scalar(1)),
                   tessera::detail::value(tessera::Scalar(1)), tessera::detail::value(out)});
  expect_values(held(out), {26, 32, 33, 40}, exact, "addr.out float32 out, int64 result");
  expect_error(
      [&] {
        Tensor long_out = tessera::empty({0}, tessera::TensorOptions().dtype(i64));
        tessera::call_op(
            "addr.out",
            {tessera::detail::value(bs.to(f32)), tessera::detail::value(v),
             tessera::detail::value(v), tessera::detail::value(tessera::Scalar(1)),
             tessera::detail::value(tessera::Scalar(1)), tessera::detail::value(long_out)});
      },
      TSR_INVALID_ARGUMENT, {"addr"});
  // Refusals: floating scales for integral (and bool) results, bool scales
  // for non-bool results, a complex scale for a real floating result.
  auto refused = [&](const Tensor& self, const Tensor& a, const Tensor& c,
                     const tessera::Scalar& beta, const tessera::Scalar& alpha,
                     std::initializer_list<const char*> parts) {
    expect_error([&] { (void)tessera::addr(self, a, c, beta, alpha); }, TSR_INVALID_ARGUMENT,
                 parts);
  };
  refused(s, v1, v2, 1.5, 1, {"addr", "argument beta must not be a floating point number"});
  refused(s, v1, v2, 1, 1.0, {"addr", "argument alpha must not be a floating point number"});
  refused(si, v1i, v2i, 0.0, 1, {"argument beta must not be a floating point number"});
  refused(si, v1i, v2i, std::complex<double>(0, 1), 1,
          {"argument beta must not be a floating point number"});
  refused(si, v1i, v2i, true, 1, {"Boolean beta only supported for Boolean results"});
  refused(si, v1i, v2i, 1, true, {"Boolean alpha only supported for Boolean results"});
  refused(s.to(f32), v1.to(f32), v2.to(f32), true, 1,
          {"Boolean beta only supported for Boolean results"});
  refused(s.to(f32), v1.to(f32), v2.to(f32), std::complex<double>(0, 1), 1,
          {"'beta'", "cannot be converted to float32 without overflow"});
  // A float result with beta 0 ignores inf in self.
  expect_values(held(tessera::addr(tessera::full({2, 2}, kInf), v.to(f32), v.to(f32), 0, 2)),
                {50, 60, 60, 72}, exact, "beta 0");
}

TEST(Products, LinearShapesAndBias) {
  for (Dtype dt : {tessera::kFloat32, tessera::kFloat64}) {
    const int64_t in = 5, outf = 3;
    const auto x = pseudo_random(2 * 4 * in, 30), w = pseudo_random(outf * in, 31),
               b = pseudo_random(outf, 32);
    const Tensor tx = make(x, {2, 4, in}, dt), tw = make(w, {outf, in}, dt),
                 tb = make(b, {outf}, dt);
    const auto hx = held(tx), hw = held(tw), hb = held(tb);
    std::vector<double> want(2 * 4 * outf), want_nb(want.size());
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t o = 0; o < outf; ++o) {
        double acc = 0;
        for (int64_t i = 0; i < in; ++i) acc += hx[r * in + i] * hw[o * in + i];
        want[r * outf + o] = acc + hb[o];
        want_nb[r * outf + o] = acc;
      }
    const Tensor y = tessera::linear(tx, tw, tb);
    EXPECT_EQ(sizes_of(y), (std::vector<int64_t>{2, 4, outf}));
    expect_values(held(y), want, tol(dt), "linear 3-d");
    expect_values(held(tessera::linear(tx, tw)), want_nb, tol(dt), "linear no bias");
    // 2-d input (addmm path) and a 1-d input.
    const Tensor x2 = tx.reshape({8, in});
    {
      OpLog log;  // PyTorch's decomposition of this case: t + addmm
      expect_values(held(tessera::linear(x2, tw, tb)), want, tol(dt), "linear 2-d");
      EXPECT_TRUE(log.saw("t"));
      EXPECT_TRUE(log.saw("addmm"));
    }
    const Tensor x1 = tx.reshape({8, in}).select(0, 0);
    expect_values(held(tessera::linear(x1, tw, tb)),
                  std::vector<double>(want.begin(), want.begin() + outf), tol(dt), "linear 1-d");
  }
  expect_error(
      [] {
        (void)tessera::linear(tessera::ones({5, 3}), tessera::ones({4, 2}));
      },
      TSR_INVALID_ARGUMENT, {"linear", "mat1 and mat2 shapes cannot be multiplied", "5x3"});
  expect_error(
      [] {
        (void)tessera::linear(tessera::ones({5, 3}), tessera::ones({4, 3}), tessera::ones({3}));
      },
      TSR_INVALID_ARGUMENT, {"linear", "bias"});
  expect_error(
      [] {
        (void)tessera::linear(
            tessera::ones({5, 3}),
            tessera::ones({4, 3}, tessera::TensorOptions().dtype(tessera::kFloat64)));
      },
      TSR_INVALID_ARGUMENT, {"linear", "same dtype"});
}

TEST(Products, MatmulBroadcastingOneDAndOut) {
  const Dtype dt = tessera::kFloat64;
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const std::vector<Case> cases = {
      {{3}, {3}, {}},
      {{3}, {3, 4}, {4}},
      {{2, 3}, {3}, {2}},
      {{2, 1, 2, 3}, {5, 3, 4}, {2, 5, 2, 4}},
      {{3}, {2, 3, 4}, {2, 4}},
      {{2, 5, 3}, {3}, {2, 5}},
      {{4, 2, 3}, {3, 2}, {4, 2, 2}},
      {{2, 3}, {4, 3, 2}, {4, 2, 2}},
  };
  for (const Case& cs : cases) {
    const auto av = pseudo_random(static_cast<size_t>(numel(cs.a)), 40);
    const auto bv = pseudo_random(static_cast<size_t>(numel(cs.b)), 41);
    const Tensor ta = make(av, cs.a, dt), tb = make(bv, cs.b, dt);
    const Tensor r = tessera::matmul(ta, tb);
    EXPECT_EQ(sizes_of(r), cs.out);
    // Reference: promote 1-d, broadcast batches, multiply.
    std::vector<int64_t> a2 = cs.a, b2 = cs.b;
    if (a2.size() == 1) a2.insert(a2.begin(), 1);
    if (b2.size() == 1) b2.push_back(1);
    const int64_t n = a2[a2.size() - 2], k = a2.back(), m = b2.back();
    std::vector<int64_t> ba(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
    const size_t nb = std::max(ba.size(), bb.size());
    while (ba.size() < nb) ba.insert(ba.begin(), 1);
    while (bb.size() < nb) bb.insert(bb.begin(), 1);
    std::vector<int64_t> batch(nb);
    for (size_t i = 0; i < nb; ++i) batch[i] = std::max(ba[i], bb[i]);
    const int64_t total = numel(batch);
    std::vector<double> want;
    for (int64_t p = 0; p < total; ++p) {
      int64_t rem = p, oa = 0, ob = 0, sa = 1, sb = 1;
      for (int64_t d = static_cast<int64_t>(nb) - 1; d >= 0; --d) {
        const int64_t i = rem % batch[d];
        rem /= batch[d];
        oa += (ba[d] == 1 ? 0 : i) * sa;
        ob += (bb[d] == 1 ? 0 : i) * sb;
        sa *= ba[d];
        sb *= bb[d];
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          double acc = 0;
          for (int64_t x = 0; x < k; ++x)
            acc += av[(oa * n + i) * k + x] * bv[(ob * k + x) * m + j];
          want.push_back(acc);
        }
    }
    expect_values(held(r), want, tol(dt), "matmul");
    Tensor out = tessera::empty({1}, tessera::TensorOptions().dtype(dt));
    tessera::matmul_out(out, ta, tb);
    EXPECT_EQ(sizes_of(out), cs.out);
    expect_values(held(out), want, tol(dt), "matmul.out");
  }
  expect_error([] { (void)tessera::matmul(tessera::ones({3}), tessera::ones({4})); },
               TSR_INVALID_ARGUMENT, {"matmul", "cannot be multiplied"});
  expect_error(
      [] {
        (void)tessera::matmul(
            tessera::ones({2, 3}),
            tessera::ones({3}, tessera::TensorOptions().dtype(tessera::kFloat64)));
      },
      TSR_INVALID_ARGUMENT, {"matmul", "same dtype"});
  Tensor wrong = tessera::empty({2, 2}, tessera::TensorOptions().dtype(tessera::kFloat64));
  expect_error(
      [&] {
        tessera::mm_out(wrong, tessera::ones({2, 3}), tessera::ones({3, 2}));
      },
      TSR_INVALID_ARGUMENT, {"mm.out", "out"});
  Tensor bo = tessera::empty({0});
  tessera::bmm_out(bo, tessera::ones({2, 3, 4}), tessera::ones({2, 4, 5}));
  EXPECT_EQ(sizes_of(bo), (std::vector<int64_t>{2, 3, 5}));
  expect_values(held(bo), std::vector<double>(30, 4.0), tol(tessera::kFloat32));
}

TEST(Products, Tensordot) {
  const Dtype dt = tessera::kFloat64;
  const auto a = pseudo_random(2 * 3 * 4, 50), b = pseudo_random(4 * 3 * 5, 51);
  const Tensor r =
      tessera::tensordot(make(a, {2, 3, 4}, dt), make(b, {4, 3, 5}, dt), {1, 2}, {1, 0});
  EXPECT_EQ(sizes_of(r), (std::vector<int64_t>{2, 5}));
  std::vector<double> want(10, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 4; ++q)
          want[i * 5 + j] += a[(i * 3 + p) * 4 + q] * b[(q * 3 + p) * 5 + j];
  expect_values(held(r), want, tol(dt));
  expect_error(
      [] {
        (void)tessera::tensordot(tessera::ones({2, 3, 4}), tessera::ones({3, 4, 5}), {1, 2},
                                 {1, 0});
      },
      TSR_INVALID_ARGUMENT, {"tensordot", "contracted dimensions need to match"});
}

TEST(Products, MetaDeviceComputesShapes) {
  const auto meta = tessera::TensorOptions().device(tessera::kMeta);
  using tessera::empty;
  EXPECT_EQ(sizes_of(tessera::addmm(empty({3}, meta), empty({2, 4}, meta), empty({4, 3}, meta))),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(
      sizes_of(tessera::linear(empty({7, 5, 4}, meta), empty({3, 4}, meta), empty({3}, meta))),
      (std::vector<int64_t>{7, 5, 3}));
  EXPECT_EQ(sizes_of(tessera::matmul(empty({2, 1, 3, 4}, meta), empty({5, 4, 6}, meta))),
            (std::vector<int64_t>{2, 5, 3, 6}));
  EXPECT_EQ(
      sizes_of(tessera::einsum("bij,bjk->bki", {empty({2, 3, 4}, meta), empty({2, 4, 5}, meta)})),
      (std::vector<int64_t>{2, 5, 3}));
  EXPECT_EQ(
      sizes_of(tessera::tensordot(empty({2, 3, 4}, meta), empty({4, 3, 5}, meta), {1, 2}, {1, 0})),
      (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(sizes_of(tessera::baddbmm(empty({1, 3}, meta), empty({2, 4, 5}, meta),
                                      empty({2, 5, 3}, meta))),
            (std::vector<int64_t>{2, 4, 3}));
}

TEST(Products, BadInput) {
  using tessera::ones;
  expect_error([] { (void)tessera::dot(ones({3}), ones({4})); }, TSR_INVALID_ARGUMENT,
               {"dot", "inconsistent tensor size"});
  expect_error(
      [] {
        (void)tessera::dot(ones({2, 3}), ones({3}));
      },
      TSR_INVALID_ARGUMENT, {"dot", "1D tensors expected", "2-D"});
  expect_error(
      [] {
        (void)tessera::dot(ones({3}), ones({3}, tessera::TensorOptions().dtype(tessera::kFloat64)));
      },
      TSR_INVALID_ARGUMENT, {"dot", "same dtype", "float32", "float64"});
  expect_error(
      [] {
        (void)tessera::outer(ones({2, 2}), ones({3}));
      },
      TSR_INVALID_ARGUMENT, {"outer", "self", "2-D"});
  expect_error(
      [] {
        (void)tessera::mv(ones({2, 4}), ones({3}));
      },
      TSR_INVALID_ARGUMENT, {"mv", "size mismatch"});
  expect_error(
      [] {
        (void)tessera::addmm(ones({2, 3}), ones({2, 4}), ones({5, 3}));
      },
      TSR_INVALID_ARGUMENT, {"addmm", "mat1 and mat2 shapes cannot be multiplied (2x4 and 5x3)"});
  expect_error(
      [] {
        (void)tessera::addmm(ones({2}), ones({2, 4}), ones({4, 3}));
      },
      TSR_INVALID_ARGUMENT, {"addmm", "self", "[2]", "[2, 3]"});
  expect_error(
      [] {
        const auto i = tessera::TensorOptions().dtype(tessera::kInt64);
        (void)tessera::addmm(ones({2, 3}, i), ones({2, 4}, i), ones({4, 3}, i), 1e20);
      },
      TSR_INVALID_ARGUMENT, {"addmm", "'beta'", "cannot be converted to int64 without overflow"});
  expect_error(
      [] {
        (void)tessera::baddbmm(ones({5, 2, 3}), ones({5, 2, 4}), ones({4, 4, 3}));
      },
      TSR_INVALID_ARGUMENT, {"baddbmm", "batch2", "[5, 4]", "[4, 4]"});
  expect_error(
      [] {
        (void)tessera::baddbmm(ones({5, 2, 3}), ones({2, 4}), ones({5, 4, 3}));
      },
      TSR_INVALID_ARGUMENT, {"baddbmm", "batch1", "3-D"});
  const auto b = tessera::TensorOptions().dtype(tessera::kBool);
  expect_error([&] { (void)tessera::dot(ones({3}, b), ones({3}, b)); }, TSR_UNIMPLEMENTED,
               {"dot", "bool"});
}

// ===========================================================================
// einsum
// ===========================================================================

// Reference einsum for explicit equations without ellipsis: loops over every
// assignment of the labels.
std::vector<double> ref_einsum(const std::string& eq,
                               const std::vector<std::vector<double>>& values,
                               const std::vector<std::vector<int64_t>>& shapes) {
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow), out = eq.substr(arrow + 2);
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      terms.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  std::map<char, int64_t> size;
  for (size_t t = 0; t < terms.size(); ++t)
    for (size_t d = 0; d < terms[t].size(); ++d)
      size[terms[t][d]] = std::max(size[terms[t][d]], shapes[t][d]);
  std::vector<char> labels;
  for (const auto& [c, s] : size) labels.push_back(c);
  int64_t out_n = 1;
  for (char ch : out) out_n *= size[ch];
  std::vector<double> result(static_cast<size_t>(out_n), 0.0);
  std::map<char, int64_t> idx;
  for (char ch : labels) idx[ch] = 0;
  int64_t combos = 1;
  for (char ch : labels) combos *= size[ch];
  for (int64_t c = 0; c < combos; ++c) {
    int64_t rem = c;
    for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
      idx[*it] = rem % size[*it];
      rem /= size[*it];
    }
    double prod = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      int64_t off = 0;
      for (size_t d = 0; d < terms[t].size(); ++d)
        off = off * shapes[t][d] + (shapes[t][d] == 1 ? 0 : idx[terms[t][d]]);
      prod *= values[t][off];
    }
    int64_t o = 0;
    for (char ch : out) o = o * size[ch] + idx[ch];
    result[o] += prod;
  }
  return result;
}

TEST(Einsum, EquationsAgainstReference) {
  struct Case {
    std::string eq;
    std::vector<std::vector<int64_t>> shapes;
    std::string explicit_eq;  // the same contraction spelled out for the reference
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}, ""},
      {"ij,jk", {{2, 3}, {3, 4}}, "ij,jk->ik"},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, ""},
      {"ij->ji", {{3, 4}}, ""},
      {"ii->i", {{4, 4}}, ""},
      {"ii", {{4, 4}}, "ii->"},
      {"ij->", {{3, 4}}, ""},
      {"i,i->", {{5}, {5}}, ""},
      {"i,j->ij", {{3}, {4}}, ""},
      {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, ""},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, ""},
      {"iij,jk->ik", {{3, 3, 2}, {2, 4}}, ""},
      {"ab,ab->a", {{3, 4}, {3, 4}}, ""},
      {"i,i->i", {{1}, {3}}, ""},
      {"Ab,bc->Ac", {{2, 3}, {3, 4}}, ""},
      {"ijk->kji", {{2, 3, 4}}, ""},
  };
  for (const Case& cs : cases) {
    for (Dtype dt : {tessera::kFloat64, tessera::kFloat32, tessera::kInt64}) {
      std::vector<std::vector<double>> values;
      std::vector<Tensor> ts;
      uint32_t seed = 60;
      for (const auto& s : cs.shapes) {
        const auto v = dt == tessera::kInt64 ? small_ints(static_cast<size_t>(numel(s)), seed++)
                                             : pseudo_random(static_cast<size_t>(numel(s)), seed++);
        ts.push_back(make(v, s, dt));
        values.push_back(held(ts.back()));
      }
      const Tensor r = tessera::einsum(cs.eq, ts);
      EXPECT_EQ(r.dtype(), dt) << cs.eq;
      const auto want =
          ref_einsum(cs.explicit_eq.empty() ? cs.eq : cs.explicit_eq, values, cs.shapes);
      expect_values(held(r), want, tol(dt), cs.eq + " " + std::string(tessera::name(dt)));
    }
  }
}

TEST(Einsum, EllipsisBroadcastAndViews) {
  const Dtype dt = tessera::kFloat64;
  // '...ij,...jk' with batch dims (2, 1) and (5): result (2, 5, 2, 4).
  const auto a = pseudo_random(2 * 1 * 2 * 3, 70), b = pseudo_random(5 * 3 * 4, 71);
  const Tensor r =
      tessera::einsum("...ij,...jk", {make(a, {2, 1, 2, 3}, dt), make(b, {5, 3, 4}, dt)});
  EXPECT_EQ(sizes_of(r), (std::vector<int64_t>{2, 5, 2, 4}));
  std::vector<double> want;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 5; ++q)
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 4; ++k) {
          double acc = 0;
          for (int j = 0; j < 3; ++j) acc += a[(p * 2 + i) * 3 + j] * b[(q * 3 + j) * 4 + k];
          want.push_back(acc);
        }
  expect_values(held(r), want, tol(dt));
  // '...ii->...i' (batched diagonal) and '...ij->...' sums.
  const auto c = pseudo_random(2 * 3 * 3, 72);
  const Tensor tc = make(c, {2, 3, 3}, dt);
  std::vector<double> diag, sums;
  for (int p = 0; p < 2; ++p) {
    double s = 0;
    for (int i = 0; i < 3; ++i) {
      diag.push_back(c[(p * 3 + i) * 3 + i]);
      for (int j = 0; j < 3; ++j) s += c[(p * 3 + i) * 3 + j];
    }
    sums.push_back(s);
  }
  expect_values(held(tessera::einsum("...ii->...i", {tc})), diag, tol(dt));
  expect_values(held(tessera::einsum("...ij->...", {tc})), sums, tol(dt));
  // A transposed operand and a permutation that is a view.
  const Tensor t = make(pseudo_random(12, 73), {3, 4}, dt);
  const Tensor v = tessera::einsum("ij->ji", {t});
  EXPECT_EQ(sizes_of(v), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(held(v), held(t.t()));
  const Tensor m = tessera::einsum("ij,jk->ik", {t.t(), t});
  expect_values(held(m), held(tessera::matmul(t.t(), t)), tol(dt));
}

TEST(Einsum, BadEquations) {
  using tessera::ones;
  const std::vector<std::pair<std::string, std::vector<std::vector<int64_t>>>> bad = {
      {"ij,jk->ik", {{2, 3}, {4, 5}}},
      {"ij,jk->ikl", {{2, 3}, {3, 5}}},
      {"ij->ii", {{2, 3}}},
      {"ij", {{2, 3}, {3}}},
      {"ijk", {{2, 3}}},
      {"ii", {{2, 3}}},
      {"i$", {{2, 3}}},
      {"i.j", {{2, 3}}},
      {"...i...", {{2, 3}}},
      {"ij,jk", {{2, 3}}},
  };
  const std::vector<const char*> parts = {
      "subscript j has size 4",
      "output subscript l does not appear",
      "appears more than once",
      "more operands were provided",
      "does not match the number of dimensions",
      "sizes don't match",
      "invalid subscript given at index 1",
      "not part of any ellipsis",
      "ellipsis was already found",
      "fewer operands were provided",
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    std::vector<Tensor> ts;
    for (const auto& s : bad[i].second) ts.push_back(ones(tessera::IntList(s)));
    expect_error([&] { (void)tessera::einsum(bad[i].first, ts); }, TSR_INVALID_ARGUMENT,
                 {"einsum", parts[i]});
  }
  expect_error(
      [] {
        (void)tessera::einsum(
            "i,i", {ones({2}), ones({2}, tessera::TensorOptions().dtype(tessera::kFloat64))});
      },
      TSR_INVALID_ARGUMENT, {"einsum", "same dtype"});
}

// ===========================================================================
// Convolution
// ===========================================================================

struct ConvCase {
  std::vector<int64_t> in;  // (N, C, spatial...)
  int64_t out_channels;
  std::vector<int64_t> kernel, stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  bool bias = true;
};

int spatial(const ConvCase& c) { return static_cast<int>(c.in.size()) - 2; }

std::vector<int64_t> weight_shape(const ConvCase& c) {
  std::vector<int64_t> w = c.transposed ? std::vector<int64_t>{c.in[1], c.out_channels / c.groups}
                                        : std::vector<int64_t>{c.out_channels, c.in[1] / c.groups};
  for (int64_t k : c.kernel) w.push_back(k);  // (insert trips GCC 12's -Wstringop-overflow)
  return w;
}

std::vector<int64_t> conv_out_shape(const ConvCase& c) {
  std::vector<int64_t> o = {c.in[0], c.out_channels};
  for (int i = 0; i < spatial(c); ++i) {
    const int64_t ext = c.dilation[i] * (c.kernel[i] - 1) + 1;
    o.push_back(c.transposed
                    ? (c.in[2 + i] - 1) * c.stride[i] - 2 * c.padding[i] + ext + c.output_padding[i]
                    : (c.in[2 + i] + 2 * c.padding[i] - ext) / c.stride[i] + 1);
  }
  return o;
}

// Direct float64 convolution (scatter form for transposed), row-major data.
std::vector<double> ref_conv(const ConvCase& c, const std::vector<double>& x,
                             const std::vector<double>& w, const std::vector<double>* b) {
  const int k = spatial(c);
  const auto os = conv_out_shape(c);
  // Canonical 3 spatial dims.
  int64_t in[3] = {1, 1, 1}, ker[3] = {1, 1, 1}, out[3] = {1, 1, 1}, st[3] = {1, 1, 1},
          pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  for (int i = 0; i < k; ++i) {
    in[3 - k + i] = c.in[2 + i];
    ker[3 - k + i] = c.kernel[i];
    out[3 - k + i] = os[2 + i];
    st[3 - k + i] = c.stride[i];
    pd[3 - k + i] = c.padding[i];
    dl[3 - k + i] = c.dilation[i];
  }
  const int64_t N = c.in[0], C = c.in[1], O = c.out_channels, G = c.groups;
  const int64_t cg = C / G, og = O / G;
  const int64_t L = out[0] * out[1] * out[2], Lin = in[0] * in[1] * in[2],
                K = ker[0] * ker[1] * ker[2];
  std::vector<double> y(static_cast<size_t>(N * O * L), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ci = 0; ci < C; ++ci)
      for (int64_t t = 0; t < K; ++t) {
        const int64_t k0 = t / (ker[1] * ker[2]), k1 = (t / ker[2]) % ker[1], k2 = t % ker[2];
        const int64_t g = ci / cg;
        for (int64_t oo = 0; oo < og; ++oo) {
          const int64_t oc = g * og + oo;
          const double wv =
              c.transposed ? w[((ci * og + oo) * K) + t] : w[((oc * cg + (ci - g * cg)) * K) + t];
          if (!c.transposed) {
            for (int64_t p = 0; p < L; ++p) {
              const int64_t z = p / (out[1] * out[2]), yy = (p / out[2]) % out[1], xx = p % out[2];
              const int64_t i0 = z * st[0] - pd[0] + k0 * dl[0],
                            i1 = yy * st[1] - pd[1] + k1 * dl[1],
                            i2 = xx * st[2] - pd[2] + k2 * dl[2];
              if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
              y[(n * O + oc) * L + p] +=
                  x[(n * C + ci) * Lin + (i0 * in[1] + i1) * in[2] + i2] * wv;
            }
          } else {
            for (int64_t p = 0; p < Lin; ++p) {
              const int64_t i0 = p / (in[1] * in[2]), i1 = (p / in[2]) % in[1], i2 = p % in[2];
              const int64_t z = i0 * st[0] - pd[0] + k0 * dl[0],
                            yy = i1 * st[1] - pd[1] + k1 * dl[1],
                            xx = i2 * st[2] - pd[2] + k2 * dl[2];
              if (z < 0 || z >= out[0] || yy < 0 || yy >= out[1] || xx < 0 || xx >= out[2])
                continue;
              y[(n * O + oc) * L + (z * out[1] + yy) * out[2] + xx] +=
                  x[(n * C + ci) * Lin + p] * wv;
            }
          }
        }
      }
  if (b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < O; ++oc)
        for (int64_t p = 0; p < L; ++p) y[(n * O + oc) * L + p] += (*b)[oc];
  return y;
}

Tensor run_conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  return tessera::convolution(x, w, b, tessera::IntList(c.stride), tessera::IntList(c.padding),
                              tessera::IntList(c.dilation), c.transposed,
                              tessera::IntList(c.output_padding), c.groups);
}

std::vector<ConvCase> conv_cases() {
  return {
      // 2-d: plain, stride, padding, dilation, groups, depthwise, batch 1, odd sizes.
      {{2, 3, 7, 6}, 4, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}},
      {{1, 4, 9, 8}, 6, {3, 2}, {2, 1}, {1, 0}, {1, 2}, {0, 0}, 2},
      {{3, 6, 5, 7}, 6, {3, 3}, {1, 2}, {1, 1}, {2, 1}, {0, 0}, 6, false, false},
      {{2, 2, 5, 5}, 3, {1, 1}, {2, 2}, {0, 0}, {1, 1}, {0, 0}},
      {{1, 3, 11, 4}, 5, {5, 3}, {3, 1}, {2, 1}, {1, 1}, {0, 0}},
      // 1-d and 3-d.
      {{2, 3, 13}, 4, {3}, {2}, {1}, {2}, {0}},
      {{1, 4, 10}, 4, {4}, {1}, {0}, {1}, {0}, 4, false, false},
      {{1, 2, 5, 4, 6}, 3, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0, 0, 0}},
      {{2, 4, 4, 5, 3}, 2, {2, 3, 1}, {2, 1, 1}, {0, 1, 0}, {1, 1, 1}, {0, 0, 0}, 2},
      // Transposed: stride, padding, output_padding, dilation, groups.
      {{2, 3, 4, 5}, 4, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, 1, true},
      {{1, 4, 3, 3}, 6, {2, 3}, {1, 2}, {0, 1}, {2, 1}, {0, 1}, 2, true, false},
      {{2, 2, 6}, 3, {3}, {3}, {1}, {1}, {2}, 1, true},
      {{1, 2, 3, 2, 3}, 2, {2, 2, 2}, {2, 1, 2}, {0, 0, 1}, {1, 2, 1}, {1, 0, 1}, 1, true},
      {{1, 4, 3, 4, 2}, 4, {3, 1, 2}, {1, 2, 1}, {1, 0, 0}, {1, 1, 1}, {0, 1, 0}, 2, true},
  };
}

std::string describe(const ConvCase& c, Dtype dt) {
  std::string s = std::string(tessera::name(dt)) + (c.transposed ? " transposed" : "") + " in=[";
  for (int64_t v : c.in) s += std::to_string(v) + ",";
  return s + "] groups=" + std::to_string(c.groups);
}

void check_conv_case(const ConvCase& c, Dtype dt, bool exact_ints) {
  const auto ws = weight_shape(c);
  const auto xv = exact_ints ? small_ints(static_cast<size_t>(numel(c.in)), 80)
                             : pseudo_random(static_cast<size_t>(numel(c.in)), 80);
  const auto wv = exact_ints ? small_ints(static_cast<size_t>(numel(ws)), 81)
                             : pseudo_random(static_cast<size_t>(numel(ws)), 81);
  const auto bv = exact_ints ? small_ints(static_cast<size_t>(c.out_channels), 82)
                             : pseudo_random(static_cast<size_t>(c.out_channels), 82);
  const Tensor x = make(xv, c.in, dt), w = make(wv, ws, dt);
  const Tensor b = c.bias ? make(bv, {c.out_channels}, dt) : Tensor{};
  const auto hb = c.bias ? held(b) : std::vector<double>{};
  const auto want = ref_conv(c, held(x), held(w), c.bias ? &hb : nullptr);
  const Tensor y = run_conv(c, x, w, b);
  EXPECT_EQ(sizes_of(y), conv_out_shape(c)) << describe(c, dt);
  EXPECT_EQ(y.dtype(), dt);
  conf::Tolerance t = tol(dt);
  if (dt == tessera::kFloat16 || dt == tessera::kBFloat16) t.atol = 1e-2;  // rounded output
  expect_values(held(y), want, t, describe(c, dt));
}

TEST(Convolution, FusedKernelFloat32AndFloat64) {
  for (const ConvCase& c : conv_cases())
    for (Dtype dt : {tessera::kFloat32, tessera::kFloat64}) check_conv_case(c, dt, false);
}

TEST(Convolution, DecompositionIsExactForIntegers) {
  for (const ConvCase& c : conv_cases()) check_conv_case(c, tessera::kInt64, true);
  for (const ConvCase& c : conv_cases()) check_conv_case(c, tessera::kInt32, true);
}

TEST(Convolution, DecompositionFloat16AndBFloat16) {
  // Small integers times small integers stay exact in float32 accumulation.
  for (const ConvCase& c : conv_cases())
    for (Dtype dt : {tessera::kFloat16, tessera::kBFloat16}) check_conv_case(c, dt, true);
}

TEST(Convolution, FusedAndDecomposedPathsRunAsClaimed) {
  const Tensor x = tessera::ones({1, 2, 5, 5}), w = tessera::ones({3, 2, 3, 3});
  {
    OpLog log;
    (void)tessera::conv2d(x, w);
    EXPECT_TRUE(log.saw("convolution"));
    EXPECT_FALSE(log.saw("bmm")) << "float32 must run the fused kernel";
  }
  {
    OpLog log;
    (void)tessera::conv2d(x.to(tessera::kFloat16), w.to(tessera::kFloat16), {}, 1, 1);
    EXPECT_TRUE(log.saw("bmm")) << "float16 runs the decomposition";
    EXPECT_TRUE(log.saw("as_strided"));
  }
  {
    OpLog log;
    (void)tessera::conv_transpose2d(x.to(tessera::kInt64), w.transpose(0, 1).to(tessera::kInt64));
    EXPECT_TRUE(log.saw("bmm"));
    EXPECT_TRUE(log.saw("add_.Tensor"));
  }
}

TEST(Convolution, NonContiguousOperandsAndRepeatedCalls) {
  for (Dtype dt : {tessera::kFloat32, tessera::kFloat64, tessera::kInt64}) {
    const bool ints = dt == tessera::kInt64;
    // Input as a transposed view of (N, C, W, H), weight as a slice.
    const auto xv = ints ? small_ints(2 * 3 * 6 * 5, 90) : pseudo_random(2 * 3 * 6 * 5, 90);
    const Tensor xt = make(xv, {2, 3, 6, 5}, dt).transpose(2, 3);
    const auto wv = ints ? small_ints(8 * 3 * 3 * 3, 91) : pseudo_random(8 * 3 * 3 * 3, 91);
    const Tensor wbig = make(wv, {8, 3, 3, 3}, dt);
    const Tensor w = wbig.slice(0, 0, 8, 2);  // every other output channel
    ConvCase c{{2, 3, 5, 6}, 4, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {0, 0}, 1, false, false};
    const auto want = ref_conv(c, held(xt.contiguous()), held(w.contiguous()), nullptr);
    for (int rep = 0; rep < 3; ++rep)
      expect_values(held(run_conv(c, xt, w, Tensor{})), want, tol(dt), "non-contiguous");
    // The weights change between calls: no stale cached weights.
    Tensor w2 = w.contiguous();
    w2.mul_(2);
    std::vector<double> want2 = want;
    for (auto& v : want2) v *= 2;
    expect_values(held(run_conv(c, xt, w2, Tensor{})), want2, tol(dt), "updated weights");
  }
}

TEST(Convolution, UnbatchedSameValidAndWrappers) {
  const Dtype dt = tessera::kFloat64;
  // conv2d on (C, H, W).
  const auto xv = pseudo_random(3 * 6 * 7, 100), wv = pseudo_random(4 * 3 * 3 * 3, 101);
  const Tensor x = make(xv, {3, 6, 7}, dt), w = make(wv, {4, 3, 3, 3}, dt);
  const Tensor y = tessera::conv2d(x, w, {}, 1, 1);
  EXPECT_EQ(sizes_of(y), (std::vector<int64_t>{4, 6, 7}));
  ConvCase c{{1, 3, 6, 7}, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, false};
  expect_values(held(y), ref_conv(c, xv, wv, nullptr), tol(dt), "unbatched");
  // 'same' with an odd kernel equals padding 1; 'valid' equals padding 0.
  expect_values(held(tessera::conv2d(x, w, {}, 1, tessera::ConvPadding::Same)), held(y), tol(dt));
  expect_values(held(tessera::conv2d(x, w, {}, 1, tessera::ConvPadding::Valid)),
                held(tessera::conv2d(x, w)), tol(dt));
  // 'same' with an even kernel pads the extra zero on the right (torch 1.13:
  // conv1d(arange(5.).view(1,1,5), ones(1,1,4), padding='same') = [3, 6, 10, 9, 7]).
  const Tensor r = tessera::conv1d(tessera::arange(0.0, 5.0).reshape({1, 1, 5}),
                                   tessera::ones({1, 1, 4}), {}, 1, tessera::ConvPadding::Same);
  expect_values(held(r), {3, 6, 10, 9, 7}, tol(tessera::kFloat32));
  const Tensor r2 = tessera::conv1d(tessera::arange(0.0, 5.0).reshape({1, 1, 5}),
                                    tessera::ones({1, 1, 2}), {}, 1, tessera::ConvPadding::Same, 3);
  EXPECT_EQ(sizes_of(r2), (std::vector<int64_t>{1, 1, 5}));
  // conv3d and conv_transpose wrappers agree with convolution.
  const auto x3 = pseudo_random(2 * 2 * 4 * 4 * 4, 102), w3 = pseudo_random(3 * 2 * 2 * 2 * 2, 103);
  const Tensor t3 = make(x3, {2, 2, 4, 4, 4}, dt), tw3 = make(w3, {3, 2, 2, 2, 2}, dt);
  ConvCase c3{{2, 2, 4, 4, 4}, 3,         {2, 2, 2}, {2, 2, 2}, {0, 0, 0},
              {1, 1, 1},       {0, 0, 0}, 1,         false,     false};
  expect_values(held(tessera::conv3d(t3, tw3, {}, 2)),
                ref_conv(c3, x3, tw3.to_vector<double>(), nullptr), tol(dt), "conv3d");
  const Tensor xt = make(pseudo_random(2 * 3 * 5, 104), {2, 3, 5}, dt);
  const Tensor wt = make(pseudo_random(3 * 2 * 3, 105), {3, 2, 3}, dt);
  ConvCase ct{{2, 3, 5}, 2, {3}, {2}, {1}, {1}, {1}, 1, true, false};
  expect_values(held(tessera::conv_transpose1d(xt, wt, {}, 2, 1, 1)),
                ref_conv(ct, held(xt), held(wt), nullptr), tol(dt), "conv_transpose1d");
  // Empty batch and zero output channels.
  EXPECT_EQ(sizes_of(tessera::conv2d(tessera::ones({0, 3, 5, 5}), tessera::ones({6, 3, 3, 3}))),
            (std::vector<int64_t>{0, 6, 3, 3}));
  EXPECT_EQ(sizes_of(tessera::conv2d(tessera::ones({2, 0, 5, 5}), tessera::ones({6, 0, 3, 3}))),
            (std::vector<int64_t>{2, 6, 3, 3}));
}

TEST(Convolution, MetaDeviceComputesShapes) {
  const auto meta = tessera::TensorOptions().device(tessera::kMeta);
  const Tensor y =
      tessera::conv2d(tessera::empty({2, 4, 9, 9}, meta), tessera::empty({6, 2, 3, 3}, meta),
                      tessera::empty({6}, meta), 2, 1, 1, 2);
  EXPECT_EQ(sizes_of(y), (std::vector<int64_t>{2, 6, 5, 5}));
  const Tensor t = tessera::conv_transpose2d(tessera::empty({2, 4, 5, 5}, meta),
                                             tessera::empty({4, 3, 3, 3}, meta), {}, 2, 1, 1);
  EXPECT_EQ(sizes_of(t), (std::vector<int64_t>{2, 3, 10, 10}));
  const auto pooled =
      tessera::max_pool2d_with_indices(tessera::empty({1, 2, 6, 6}, meta), 3, 2, 1, 1, true);
  EXPECT_EQ(sizes_of(pooled.first), (std::vector<int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(pooled.second.dtype(), tessera::kInt64);
  EXPECT_EQ(sizes_of(tessera::adaptive_avg_pool2d(tessera::empty({2, 5, 7}, meta), {3, 2})),
            (std::vector<int64_t>{2, 3, 2}));
}

// The gradients of sum(g * conv(x, w) + b) in float64 from ref_conv: the
// convolution is linear in x and in w, so the gradient at entry j is
// <g, conv(e_j, w)> (and <g, conv(x, e_j)>); the bias gradient sums g over
// everything but the channels.
struct ConvGrads {
  std::vector<double> dx, dw, db;
};
ConvGrads ref_conv_grads(const ConvCase& c, const std::vector<double>& x,
                         const std::vector<double>& w, const std::vector<double>& g) {
  auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  };
  ConvGrads r;
  std::vector<double> e(x.size(), 0.0);
  for (size_t j = 0; j < x.size(); ++j) {
    e[j] = 1;
    r.dx.push_back(dot(g, ref_conv(c, e, w, nullptr)));
    e[j] = 0;
  }
  e.assign(w.size(), 0.0);
  for (size_t j = 0; j < w.size(); ++j) {
    e[j] = 1;
    r.dw.push_back(dot(g, ref_conv(c, x, e, nullptr)));
    e[j] = 0;
  }
  const auto os = conv_out_shape(c);
  const int64_t per = numel(os) / (os[0] * os[1]);
  r.db.assign(static_cast<size_t>(c.out_channels), 0.0);
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t o = 0; o < os[1]; ++o)
      for (int64_t p = 0; p < per; ++p) r.db[o] += g[(n * os[1] + o) * per + p];
  return r;
}

TEST(ConvolutionBackward, GradientsMatchFloat64Reference) {
  // float32 plain convolutions run the fused backward kernel (oneDNN),
  // float64 and transposed ones the decomposition.
  for (const ConvCase& c : conv_cases()) {
    for (Dtype dt : {tessera::kFloat32, tessera::kFloat64}) {
      const auto ws = weight_shape(c);
      const auto os = conv_out_shape(c);
      const Tensor x0 = make(pseudo_random(static_cast<size_t>(numel(c.in)), 83), c.in, dt);
      const Tensor w0 = make(pseudo_random(static_cast<size_t>(numel(ws)), 84), ws, dt);
      const Tensor g = make(pseudo_random(static_cast<size_t>(numel(os)), 85), os, dt);
      const ConvGrads want = ref_conv_grads(c, held(x0), held(w0), held(g));
      Tensor x = x0.clone(), w = w0.clone();
      Tensor b = tessera::zeros({c.out_channels}).to(dt);
      x.requires_grad_();
      w.requires_grad_();
      b.requires_grad_();
      (run_conv(c, x, w, b) * g).sum().backward();
      const std::string what = describe(c, dt);
      expect_values(held(x.grad()), want.dx, tol(dt), what + " dx");
      expect_values(held(w.grad()), want.dw, tol(dt), what + " dw");
      expect_values(held(b.grad()), want.db, tol(dt), what + " db");
    }
  }
}

TEST(ConvolutionBackward, Float32TrainingRunsOneFusedBackwardOp) {
  Tensor x = tessera::randn({2, 3, 8, 8}), w = tessera::randn({4, 3, 3, 3});
  x.requires_grad_();
  w.requires_grad_();
  Tensor y = tessera::conv2d(x, w, {}, 1, 1).sum();
  OpLog log;
  y.backward();
  EXPECT_TRUE(log.saw("convolution_backward"));
  EXPECT_FALSE(log.saw("convolution")) << "the backward ran forward convolutions";
  EXPECT_FALSE(log.saw("permute"));
}

TEST(ConvolutionBackward, OutputMaskAndBadInput) {
  const Tensor x = tessera::randn({2, 3, 6, 6}), w = tessera::randn({4, 3, 3, 3});
  const Tensor g = tessera::randn({2, 4, 4, 4});
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0}, bias[1] = {4};
  auto call = [&](const Tensor& gg, std::array<int32_t, 3> m, bool with_bias) {
    const tsr_op* op = nullptr;
    tessera::check(tsr_op_find(tessera::default_runtime(), "convolution_backward", &op));
    tsr_value mask{};
    mask.tag = TSR_VALUE_BOOL_LIST;
    mask.len = 3;
    mask.u.bools = m.data();
    using tessera::detail::value;
    const tsr_value args[11] = {value(gg),
                                value(x),
                                value(w),
                                with_bias ? value(tessera::IntList(bias, 1)) : tsr_value{},
                                value(tessera::IntList(one, 2)),
                                value(tessera::IntList(zero, 2)),
                                value(tessera::IntList(one, 2)),
                                value(false),
                                value(tessera::IntList(zero, 2)),
                                value(int64_t{1}),
                                mask};
    tsr_value out[3] = {};
    tessera::check(tsr_op_call(op, args, 11, out, 3));
    std::vector<Tensor> r;
    for (const tsr_value& v : out)
      r.push_back(v.tag == TSR_VALUE_TENSOR ? Tensor::adopt(v.u.tensor) : Tensor());
    return r;
  };
  std::vector<Tensor> r = call(g, {0, 1, 1}, true);
  EXPECT_FALSE(r[0].defined());
  ASSERT_TRUE(r[1].defined() && r[2].defined());
  EXPECT_EQ(sizes_of(r[1]), std::vector<int64_t>({4, 3, 3, 3}));
  expect_values(held(r[2]), held(g.sum(tessera::IntList({0, 2, 3}))), tol(tessera::kFloat32),
                "bias gradient");
  r = call(g, {1, 0, 1}, false);
  EXPECT_TRUE(r[0].defined() && !r[1].defined() && !r[2].defined());
  expect_error(
      [&] {
        call(tessera::randn({2, 4, 5, 5}), {1, 1, 0}, false);
      },
      TSR_INVALID_ARGUMENT, {"convolution_backward", "grad_output"});
}

// Hostile stride, padding or dilation values are refused by name before any
// size is computed: a zero stride would divide by zero (SIGFPE) and huge
// ones would wrap int64.
TEST(ConvolutionBackward, HostileStridesPaddingsAndDilationsAreRefused) {
  const Tensor x = tessera::randn({1, 2, 5, 5}), w = tessera::randn({3, 2, 3, 3});
  const Tensor g = tessera::randn({1, 3, 3, 3});
  const int64_t zero[2] = {0, 0};
  auto call = [&](std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                  std::array<int64_t, 2> dil, bool transposed) {
    const tsr_op* op = nullptr;
    tessera::check(tsr_op_find(tessera::default_runtime(), "convolution_backward", &op));
    std::array<int32_t, 3> m = {1, 1, 0};
    tsr_value mask{};
    mask.tag = TSR_VALUE_BOOL_LIST;
    mask.len = 3;
    mask.u.bools = m.data();
    using tessera::detail::value;
    const tsr_value args[11] = {value(g),
                                value(x),
                                value(w),
                                tsr_value{},
                                value(tessera::IntList(stride.data(), 2)),
                                value(tessera::IntList(pad.data(), 2)),
                                value(tessera::IntList(dil.data(), 2)),
                                value(transposed),
                                value(tessera::IntList(zero, 2)),
                                value(int64_t{1}),
                                mask};
    tsr_value out[3] = {};
    tessera::check(tsr_op_call(op, args, 11, out, 3));
    for (const tsr_value& v : out)
      if (v.tag == TSR_VALUE_TENSOR) tsr_tensor_release(v.u.tensor);
  };
  const int64_t big = int64_t{1} << 62;
  for (bool transposed : {false, true}) {
    expect_error(
        [&] {
          call({0, 1}, {0, 0}, {1, 1}, transposed);
        },
        TSR_INVALID_ARGUMENT, {"convolution_backward", "stride (0)"});
    expect_error(
        [&] {
          call({1, 1}, {-1, 0}, {1, 1}, transposed);
        },
        TSR_INVALID_ARGUMENT, {"padding (-1)"});
    expect_error(
        [&] {
          call({1, 1}, {0, 0}, {0, 1}, transposed);
        },
        TSR_INVALID_ARGUMENT, {"dilation (0)"});
    expect_error(
        [&] {
          call({1, 1}, {0, 0}, {big, 1}, transposed);
        },
        TSR_INVALID_ARGUMENT, {"overflows int64"});
    expect_error(
        [&] {
          call({1, 1}, {big, 0}, {1, 1}, transposed);
        },
        TSR_INVALID_ARGUMENT, {"overflows int64"});
  }
  expect_error(
      [&] {
        call({big, 1}, {0, 0}, {1, 1}, true);
      },
      TSR_INVALID_ARGUMENT, {"overflows int64"});
}

TEST(Convolution, BadInput) {
  using tessera::ones;
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 4, 5, 5}), ones({6, 3, 3, 3}));
      },
      TSR_INVALID_ARGUMENT,
      {"convolution",
       "Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 5, 5] "
       "to have 3 channels, but got 4 channels instead"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 3, 2, 2}), ones({6, 3, 3, 3}));
      },
      TSR_INVALID_ARGUMENT,
      {"Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel "
       "size can't be greater than actual input size"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 3, 5, 5}), ones({6, 3, 3, 3}), {}, 1, -1);
      },
      TSR_INVALID_ARGUMENT, {"negative padding is not supported"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 3, 5, 5}), ones({6, 3, 3, 3}), {}, 0);
      },
      TSR_INVALID_ARGUMENT, {"non-positive stride is not supported"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 3, 5, 5}), ones({6, 3, 3, 3}), {}, 1, 0, 0);
      },
      TSR_INVALID_ARGUMENT, {"non-positive dilation is not supported"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 4, 5, 5}), ones({6, 2, 3, 3}), {}, 1, 0, 1, 4);
      },
      TSR_INVALID_ARGUMENT, {"expected weight to be divisible by 4 at dimension 0"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 4, 5, 5}), ones({6, 2, 3, 3}), ones({5}), 1, 0, 1, 2);
      },
      TSR_INVALID_ARGUMENT, {"expected bias to be 1-dimensional with 6 elements"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({5, 5}), ones({6, 3, 3, 3}));
      },
      TSR_INVALID_ARGUMENT, {"conv2d", "Expected 3D (unbatched) or 4D (batched) input to conv2d"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 3, 5, 5}, tessera::TensorOptions().dtype(tessera::kFloat64)),
                              ones({6, 3, 3, 3}));
      },
      TSR_INVALID_ARGUMENT, {"Input type (float64) and weight type (float32) should be the same"});
  expect_error(
      [] {
        (void)tessera::conv2d(ones({2, 3, 5, 5}), ones({6, 3, 3, 3}), {}, 2,
                              tessera::ConvPadding::Same);
      },
      TSR_INVALID_ARGUMENT, {"padding='same' is not supported for strided convolutions"});
  expect_error(
      [] {
        (void)tessera::call_op("conv2d.padding",
                               {tessera::detail::value(ones({2, 3, 5, 5})),
                                tessera::detail::value(ones({6, 3, 3, 3})), tessera::detail::none(),
                                tessera::detail::value(int64_t{1}), tessera::detail::value("foo")});
      },
      TSR_INVALID_ARGUMENT, {"Invalid padding string: 'foo'"});
  expect_error(
      [] {
        (void)tessera::conv_transpose2d(ones({2, 3, 5, 5}), ones({3, 2, 3, 3}), {}, 2, 0, 2);
      },
      TSR_INVALID_ARGUMENT, {"output padding must be smaller than either stride or dilation"});
  expect_error(
      [] {
        (void)tessera::conv_transpose2d(ones({2, 4, 5, 5}), ones({3, 2, 3, 3}));
      },
      TSR_INVALID_ARGUMENT, {"Given transposed=1", "to have 3 channels, but got 4"});
  expect_error(
      [] {
        (void)tessera::conv_transpose2d(ones({2, 3, 5, 5}), ones({3, 2, 3, 3}), {}, 1, 5);
      },
      TSR_INVALID_ARGUMENT, {"Output size is too small"});
  expect_error(
      [] {
        (void)tessera::convolution(ones({2, 3, 5, 5}), ones({6, 3, 3, 3}), {}, {1, 1, 1}, {0, 0},
                                   {1, 1}, false, {0, 0}, 1);
      },
      TSR_INVALID_ARGUMENT, {"convolution", "stride"});
  expect_error(
      [] {
        const auto b = tessera::TensorOptions().dtype(tessera::kBool);
        (void)tessera::conv2d(ones({2, 3, 5, 5}, b), ones({6, 3, 3, 3}, b));
      },
      TSR_UNIMPLEMENTED, {"convolution", "bool"});
}

// ===========================================================================
// Pooling
// ===========================================================================

struct PoolCase {
  std::vector<int64_t> in;  // (N, C, H, W)
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

// PyTorch's max pooling loop: values and flat indices.
void ref_max_pool(const PoolCase& c, const std::vector<double>& x, std::vector<double>& vals,
                  std::vector<double>& idx) {
  const int64_t N = c.in[0], C = c.in[1], H = c.in[2], W = c.in[3];
  const int64_t oh = pool_out(H, c.kh, c.ph, c.sh, c.dh, c.ceil_mode);
  const int64_t ow = pool_out(W, c.kw, c.pw, c.sw, c.dw, c.ceil_mode);
  vals.clear();
  idx.clear();
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t hs = i * c.sh - c.ph, ws = j * c.sw - c.pw;
        int64_t h0 = hs, w0 = ws;
        while (h0 < 0) h0 += c.dh;
        while (w0 < 0) w0 += c.dw;
        double m = -kInf;
        int64_t mi = h0 * W + w0;
        for (int64_t a = 0; a < c.kh; ++a)
          for (int64_t b = 0; b < c.kw; ++b) {
            const int64_t h = hs + a * c.dh, w = ws + b * c.dw;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const double v = x[p * H * W + h * W + w];
            if (v > m || std::isnan(v)) {
              m = v;
              mi = h * W + w;
            }
          }
        vals.push_back(m);
        idx.push_back(static_cast<double>(mi));
      }
}

std::vector<PoolCase> pool_cases() {
  return {
      {{2, 3, 7, 8}, 3, 3, 2, 2, 1, 1, 1, 1, false},
      {{1, 2, 6, 6}, 3, 3, 2, 2, 0, 0, 1, 1, true},   // ceil: last window starts at 4
      {{1, 2, 5, 5}, 2, 2, 2, 2, 1, 1, 1, 1, true},   // ceil + padding: the start rule
      {{2, 1, 9, 7}, 3, 2, 1, 2, 1, 1, 2, 3, false},  // dilation
      {{1, 3, 5, 6}, 2, 3, 3, 1, 0, 1, 1, 1, true},
      {{1, 1, 4, 4}, 4, 4, 4, 4, 2, 2, 1, 1, false},
  };
}

TEST(Pooling, MaxPoolWithIndicesMatchesReference) {
  for (const PoolCase& c : pool_cases())
    for (Dtype dt : {tessera::kFloat32, tessera::kFloat64}) {
      // Coarse values make ties; a NaN and -inf planes test the special rules.
      auto xv = pseudo_random(static_cast<size_t>(numel(c.in)), 110);
      for (auto& v : xv) v = std::round(v * 3.0);
      xv[3] = kNaN;
      if (xv.size() > 20) xv[17] = kNaN;
      const Tensor x = make(xv, c.in, dt);
      std::vector<double> vals, idx;
      ref_max_pool(c, held(x), vals, idx);
      const auto [v, i] = tessera::max_pool2d_with_indices(x, {c.kh, c.kw}, {c.sh, c.sw},
                                                           {c.ph, c.pw}, {c.dh, c.dw}, c.ceil_mode);
      EXPECT_EQ(i.dtype(), tessera::kInt64);
      expect_values(held(v), vals, tol(dt, false), "max values");
      expect_values(held(i), idx, tol(tessera::kInt64), "max indices");
      expect_values(held(tessera::max_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw},
                                             {c.dh, c.dw}, c.ceil_mode)),
                    vals, tol(dt, false), "max_pool2d");
    }
  // All -inf windows report the first in-bounds element (torch 1.13:
  // max_pool2d(full((1,1,2,2), -inf), 2, padding=1) indices [[0, 1], [2, 3]]).
  const Tensor ninf = tessera::full({1, 1, 2, 2}, -kInf);
  expect_values(held(tessera::max_pool2d_with_indices(ninf, 2, 2, 1).second), {0, 1, 2, 3},
                tol(tessera::kInt64));
  // Two NaNs: the last one's index (torch 1.13: [[nan, 1], [2, nan]] -> index 3).
  const Tensor two_nans = tessera::tensor({kNaN, 1.0, 2.0, kNaN}, {1, 1, 2, 2});
  expect_values(held(tessera::max_pool2d_with_indices(two_nans, 2).second), {3},
                tol(tessera::kInt64));
}

TEST(Pooling, MaxPoolUnbatchedNonContiguousAnd1d) {
  const Dtype dt = tessera::kFloat32;
  const auto xv = pseudo_random(3 * 6 * 5, 120);
  const Tensor x = make(xv, {3, 6, 5}, dt).transpose(1, 2);  // (3, 5, 6), non-contiguous
  PoolCase c{{1, 3, 5, 6}, 2, 3, 1, 2, 1, 1, 1, 1, false};
  std::vector<double> vals, idx;
  ref_max_pool(c, held(x.contiguous()), vals, idx);
  const auto [v, i] = tessera::max_pool2d_with_indices(x, {2, 3}, {1, 2}, 1);
  EXPECT_EQ(sizes_of(v), (std::vector<int64_t>{3, 6, 3}));
  expect_values(held(v), vals, tol(dt, false));
  expect_values(held(i), idx, tol(tessera::kInt64));
  // max_pool1d over (N, C, L) equals the height-1 2-d pool.
  const Tensor l = make(pseudo_random(2 * 3 * 9, 121), {2, 3, 9}, dt);
  const Tensor m1 = tessera::max_pool1d(l, 3, 2, 1);
  EXPECT_EQ(sizes_of(m1), (std::vector<int64_t>{2, 3, 5}));
  expect_values(held(m1),
                held(tessera::max_pool2d(l.reshape({2, 3, 1, 9}), {1, 3}, {1, 2}, {0, 1})),
                tol(dt, false));
}

TEST(Pooling, MaxPoolDecompositionMatchesKernel) {
  SKIP_WITHOUT("_arg_reduce");
  SKIP_WITHOUT("gather");
  for (const PoolCase& c : pool_cases())
    for (Dtype dt : {tessera::kBFloat16, tessera::kFloat16}) {
      auto xv = pseudo_random(static_cast<size_t>(numel(c.in)), 130);
      for (auto& v : xv) v = std::round(v * 8.0);  // exact in both 16-bit types
      const Tensor x = make(xv, c.in, dt);
      std::vector<double> vals, idx;
      ref_max_pool(c, xv, vals, idx);
      OpLog log;
      const auto [v, i] = tessera::max_pool2d_with_indices(x, {c.kh, c.kw}, {c.sh, c.sw},
                                                           {c.ph, c.pw}, {c.dh, c.dw}, c.ceil_mode);
      EXPECT_TRUE(log.saw("_arg_reduce"));
      expect_values(held(v), vals, tol(tessera::kFloat64), "decomposed max values");
      expect_values(held(i), idx, tol(tessera::kInt64), "decomposed max indices");
    }
}

// PyTorch's avg_pool2d divisor rules; int64 results truncate toward zero.
std::vector<double> ref_avg_pool(const PoolCase& c, const std::vector<double>& x, bool include_pad,
                                 int64_t divisor_override, bool truncate) {
  const int64_t N = c.in[0], C = c.in[1], H = c.in[2], W = c.in[3];
  const int64_t oh = pool_out(H, c.kh, c.ph, c.sh, 1, c.ceil_mode);
  const int64_t ow = pool_out(W, c.kw, c.pw, c.sw, 1, c.ceil_mode);
  std::vector<double> out;
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t hs = i * c.sh - c.ph, ws = j * c.sw - c.pw;
        int64_t he = std::min(hs + c.kh, H + c.ph), we = std::min(ws + c.kw, W + c.pw);
        const int64_t pool = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0);
        ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H);
        we = std::min(we, W);
        double s = 0;
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w) s += x[p * H * W + h * W + w];
        const int64_t d = divisor_override ? divisor_override
                          : include_pad    ? pool
                                           : (he - hs) * (we - ws);
        double r = (hs >= he || ws >= we) ? 0.0 : s / static_cast<double>(d);
        out.push_back(truncate ? std::trunc(r) : r);
      }
  return out;
}

TEST(Pooling, AvgPoolKernelAndDecomposition) {
  for (const PoolCase& pc : pool_cases()) {
    PoolCase c = pc;
    c.dh = c.dw = 1;
    for (Dtype dt : {tessera::kFloat32, tessera::kFloat64, tessera::kInt64, tessera::kFloat16}) {
      for (int mode = 0; mode < 3; ++mode) {
        const bool include_pad = mode != 1;
        const int64_t divisor = mode == 2 ? 3 : 0;
        const bool ints = dt == tessera::kInt64 || dt == tessera::kFloat16;
        auto xv = ints ? small_ints(static_cast<size_t>(numel(c.in)), 140)
                       : pseudo_random(static_cast<size_t>(numel(c.in)), 140);
        if (dt == tessera::kInt64)
          for (auto& v : xv) v *= 7;
        const Tensor x = make(xv, c.in, dt);
        const auto want = ref_avg_pool(c, xv, include_pad, divisor, dt == tessera::kInt64);
        const Tensor y = tessera::avg_pool2d(
            x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, c.ceil_mode, include_pad,
            divisor ? std::optional<int64_t>(divisor) : std::nullopt);
        EXPECT_EQ(y.dtype(), dt);
        expect_values(held(y), want, tol(dt), "avg_pool2d " + std::string(tessera::name(dt)));
      }
    }
  }
  // torch 1.13: avg_pool2d(tensor([[[[1, 2], [3, 5]]]]), 2) = 2 and of the negation -2.
  expect_values(held(tessera::avg_pool2d(tessera::tensor({1, 2, 3, 5}, {1, 1, 2, 2}), 2)), {2},
                tol(tessera::kInt64));
  expect_values(held(tessera::avg_pool2d(tessera::tensor({-1, -2, -3, -5}, {1, 1, 2, 2}), 2)), {-2},
                tol(tessera::kInt64));
  // avg_pool1d
  const Tensor l = make(pseudo_random(2 * 7, 141), {2, 7}, tessera::kFloat64);
  expect_values(
      held(tessera::avg_pool1d(l, 3, 2, 1, false, false)),
      held(tessera::avg_pool2d(l.reshape({2, 1, 7}), {1, 3}, {1, 2}, {0, 1}, false, false)),
      tol(tessera::kFloat64));
}

std::vector<double> ref_adaptive(const std::vector<double>& x, int64_t planes, int64_t H, int64_t W,
                                 int64_t oh, int64_t ow, bool max, std::vector<double>* indices) {
  std::vector<double> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t hs = i * H / oh, he = ((i + 1) * H + oh - 1) / oh;
        const int64_t ws = j * W / ow, we = ((j + 1) * W + ow - 1) / ow;
        double acc = max ? -kInf : 0.0;
        int64_t mi = hs * W + ws;
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w) {
            const double v = x[p * H * W + h * W + w];
            if (!max) {
              acc += v;
            } else if (v > acc || std::isnan(v)) {
              acc = v;
              mi = h * W + w;
            }
          }
        out.push_back(max ? acc : acc / static_cast<double>((he - hs) * (we - ws)));
        if (indices) indices->push_back(static_cast<double>(mi));
      }
  return out;
}

TEST(Pooling, AdaptiveAvgAndMax) {
  struct Case {
    std::vector<int64_t> in;
    int64_t oh, ow;
  };
  const std::vector<Case> cases = {{{2, 3, 7, 5}, 3, 2},
                                   {{1, 2, 8, 8}, 4, 4},
                                   {{2, 1, 5, 9}, 1, 1},
                                   {{1, 2, 3, 4}, 5, 7},
                                   {{3, 6, 6}, 4, 3}};
  for (const Case& cs : cases) {
    const int64_t H = cs.in[cs.in.size() - 2], W = cs.in.back();
    const int64_t planes = numel(cs.in) / (H * W);
    for (Dtype dt : {tessera::kFloat32, tessera::kFloat64, tessera::kBFloat16}) {
      auto xv = pseudo_random(static_cast<size_t>(numel(cs.in)), 150);
      if (dt == tessera::kBFloat16)
        for (auto& v : xv) v = std::round(v * 8.0) / 4.0;
      const Tensor x = make(xv, cs.in, dt);
      const auto want = ref_adaptive(held(x), planes, H, W, cs.oh, cs.ow, false, nullptr);
      const Tensor y = tessera::adaptive_avg_pool2d(x, {cs.oh, cs.ow});
      std::vector<int64_t> shape(cs.in.begin(), cs.in.end() - 2);
      shape.push_back(cs.oh);
      shape.push_back(cs.ow);
      EXPECT_EQ(sizes_of(y), shape);
      expect_values(held(y), want, tol(dt), "adaptive_avg_pool2d");
      if (dt == tessera::kBFloat16 && !(has_op("_arg_reduce") && has_op("gather"))) continue;
      std::vector<double> idx;
      const auto wmax = ref_adaptive(held(x), planes, H, W, cs.oh, cs.ow, true, &idx);
      const auto [v, i] = tessera::adaptive_max_pool2d(x, {cs.oh, cs.ow});
      expect_values(held(v), wmax, tol(dt, false), "adaptive_max_pool2d");
      expect_values(held(i), idx, tol(tessera::kInt64), "adaptive_max_pool2d indices");
    }
  }
  // Global pooling of a non-contiguous input (the kernel's generic path).
  const Tensor xt =
      make(pseudo_random(2 * 3 * 4 * 5, 151), {2, 3, 4, 5}, tessera::kFloat32).transpose(2, 3);
  expect_values(held(tessera::adaptive_avg_pool2d(xt, 1)),
                ref_adaptive(held(xt.contiguous()), 6, 5, 4, 1, 1, false, nullptr),
                tol(tessera::kFloat32), "global average, transposed");
  EXPECT_EQ(sizes_of(tessera::adaptive_avg_pool2d(tessera::ones({1, 1, 5, 5}), 0)),
            (std::vector<int64_t>{1, 1, 0, 0}));
}

TEST(Pooling, BadInput) {
  using tessera::ones;
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({1, 1, 5, 5}), 3, {}, 2);
      },
      TSR_INVALID_ARGUMENT,
      {"max_pool2d", "pad should be at most half of kernel size, but got pad=2 and kernel_size=3"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({1, 1, 5, 5}), 3, 0);
      },
      TSR_INVALID_ARGUMENT, {"stride should be greater than zero"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({1, 1, 2, 2}), 3);
      },
      TSR_INVALID_ARGUMENT,
      {"Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({1, 1, 5, 5}), {3, 3, 3});
      },
      TSR_INVALID_ARGUMENT, {"kernel_size must either be a single int, or a tuple of two ints"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({1, 1, 5, 5}), 3, 1, 0, 0);
      },
      TSR_INVALID_ARGUMENT, {"dilation should be greater than zero"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({5, 5}), 3);
      },
      TSR_INVALID_ARGUMENT, {"Expected 3D or 4D (batch mode) tensor"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(ones({1, 0, 5, 5}), 3);
      },
      TSR_INVALID_ARGUMENT,
      {"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size", "[1, 0, 5, 5]"});
  expect_error(
      [] {
        (void)tessera::max_pool2d(
            ones({1, 1, 5, 5}, tessera::TensorOptions().dtype(tessera::kInt64)), 3);
      },
      TSR_UNIMPLEMENTED, {"max_pool2d", "int64"});
  expect_error(
      [] {
        (void)tessera::avg_pool2d(ones({1, 1, 5, 5}), 3, {}, 0, false, true, 0);
      },
      TSR_INVALID_ARGUMENT, {"divisor must be not zero"});
  expect_error(
      [] {
        (void)tessera::avg_pool2d(ones({1, 1, 5, 5}), 3, {}, -1);
      },
      TSR_INVALID_ARGUMENT, {"pad must be non-negative"});
  expect_error(
      [] {
        (void)tessera::adaptive_avg_pool2d(ones({1, 1, 5, 5}), {2, 2, 2});
      },
      TSR_INVALID_ARGUMENT, {"output_size must be 2"});
  expect_error(
      [] {
        (void)tessera::adaptive_avg_pool2d(ones({1, 1, 0, 5}), {2, 2});
      },
      TSR_INVALID_ARGUMENT, {"non-zero size for non-batch dimensions", "dimension 2"});
  expect_error([] { (void)tessera::max_pool1d(ones({5}), 2); }, TSR_INVALID_ARGUMENT,
               {"max_pool1d", "Expected 2D or 3D"});
  // An empty batch is fine.
  EXPECT_EQ(sizes_of(tessera::max_pool2d(ones({0, 2, 5, 5}), 2)),
            (std::vector<int64_t>{0, 2, 2, 2}));
}

}  // namespace
