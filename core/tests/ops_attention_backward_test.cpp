// Fused attention training: scaled_dot_product_attention_forward
// (out, logsumexp) and scaled_dot_product_attention_backward, through
// autograd and called directly, on every CPU body (baseline, AVX2, AVX-512)
// in float32 and through the decomposition in float64, against a float64
// reference written here from the definition (softmax, then the chain rule:
// no shared code with the op or its kernel).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Tensor;
using tessera::detail::value;

const double kInf = std::numeric_limits<double>::infinity();

std::vector<double> random_values(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<double> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<double>(s >> 8) / static_cast<double>(1u << 24);
  }
  for (auto& x : v) x = static_cast<double>(static_cast<float>(x));  // exact in float32
  return v;
}

struct Case {
  int64_t b, hq, hkv, l, s, e, ev;
  bool causal;
  int mask;  // 0 none, 1 bool (L, S) broadcast, 2 float (B, 1, L, S)
};

struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

// Masks shared by the reference and the tensors: bool keeps (i + 2 j) % 5
// != 0 (a fully masked row never happens for S >= 3), float in [-2, 1).
bool keeps(int64_t i, int64_t j) { return (i + 2 * j) % 5 != 0 || j == i % 3; }

Reference reference(const Case& c, const std::vector<double>& q, const std::vector<double>& k,
                    const std::vector<double>& v, const std::vector<double>& g,
                    const std::vector<double>& fmask, double scale) {
  Reference r;
  r.out.assign(static_cast<size_t>(c.b * c.hq * c.l * c.ev), 0.0);
  r.lse.assign(static_cast<size_t>(c.b * c.hq * c.l), 0.0);
  r.dq.assign(static_cast<size_t>(c.b * c.hq * c.l * c.e), 0.0);
  r.dk.assign(static_cast<size_t>(c.b * c.hkv * c.s * c.e), 0.0);
  r.dv.assign(static_cast<size_t>(c.b * c.hkv * c.s * c.ev), 0.0);
  std::vector<double> p(static_cast<size_t>(c.s)), dp(static_cast<size_t>(c.s));
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h) {
      const int64_t kh = h / (c.hq / c.hkv);
      auto Q = [&](int64_t i, int64_t x) { return q[((b * c.hq + h) * c.l + i) * c.e + x]; };
      auto K = [&](int64_t j, int64_t x) { return k[((b * c.hkv + kh) * c.s + j) * c.e + x]; };
      auto V = [&](int64_t j, int64_t x) { return v[((b * c.hkv + kh) * c.s + j) * c.ev + x]; };
      auto G = [&](int64_t i, int64_t x) { return g[((b * c.hq + h) * c.l + i) * c.ev + x]; };
      for (int64_t i = 0; i < c.l; ++i) {
        double mx = -kInf;
        for (int64_t j = 0; j < c.s; ++j) {
          double d = 0;
          for (int64_t x = 0; x < c.e; ++x) d += Q(i, x) * K(j, x);
          d *= scale;
          if (c.causal && j > i) d = -kInf;
          if (c.mask == 1 && !keeps(i, j)) d = -kInf;
          if (c.mask == 2) d += fmask[(b * c.l + i) * c.s + j];
          p[j] = d;
          mx = std::max(mx, d);
        }
        double sum = 0;
        for (int64_t j = 0; j < c.s; ++j) sum += std::exp(p[j] - mx);
        r.lse[(b * c.hq + h) * c.l + i] = mx + std::log(sum);
        for (int64_t j = 0; j < c.s; ++j) p[j] = std::exp(p[j] - mx) / sum;
        // out = P V; dP = dO V^T; dS = P (dP - sum_j P dP); dQ = scale dS K ...
        double dsum = 0;
        for (int64_t j = 0; j < c.s; ++j) {
          double t = 0;
          for (int64_t x = 0; x < c.ev; ++x) {
            r.out[((b * c.hq + h) * c.l + i) * c.ev + x] += p[j] * V(j, x);
            t += G(i, x) * V(j, x);
          }
          dp[j] = t;
          dsum += p[j] * t;
        }
        for (int64_t j = 0; j < c.s; ++j) {
          const double ds = p[j] * (dp[j] - dsum) * scale;
          for (int64_t x = 0; x < c.e; ++x) {
            r.dq[((b * c.hq + h) * c.l + i) * c.e + x] += ds * K(j, x);
            r.dk[((b * c.hkv + kh) * c.s + j) * c.e + x] += ds * Q(i, x);
          }
          for (int64_t x = 0; x < c.ev; ++x)
            r.dv[((b * c.hkv + kh) * c.s + j) * c.ev + x] += p[j] * G(i, x);
        }
      }
    }
  return r;
}

void expect_close(const Tensor& actual, const std::vector<double>& expected, bool f32,
                  const std::string& what) {
  const std::vector<double> a = actual.to_vector<double>();
  ASSERT_EQ(a.size(), expected.size()) << what;
  double scale = 0;
  for (double x : expected) scale = std::max(scale, std::abs(x));
  const double tol = f32 ? 2e-5 + 1e-4 * scale : 1e-10 * (1 + scale);
  size_t bad = 0;
  for (size_t i = 0; i < a.size() && bad < 5; ++i)
    if (!(std::abs(a[i] - expected[i]) <= tol)) {
      ++bad;
      ADD_FAILURE() << what << " at " << i << ": " << a[i] << " vs " << expected[i];
    }
}

// Runs `body` for each CPU body the processor has, then restores "auto".
void for_each_cpu_isa(const std::function<void(const std::string&)>& body) {
  for (const char* isa : {"baseline", "avx2", "avx512"}) {
    try {
      tessera::set_option(tessera::kCPU, "isa", isa);
    } catch (const tessera::Error&) {
      continue;
    }
    body(isa);
  }
  tessera::set_option(tessera::kCPU, "isa", "auto");
}

std::vector<std::string> ops_crossed(const std::function<void()>& f) {
  std::vector<std::string> names;
  auto record = [](const tsr_op* op, void* context) {
    static_cast<std::vector<std::string>*>(context)->push_back(tsr_op_name(op));
  };
  tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), record, &names));
  try {
    f();
  } catch (...) {
    tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr));
    throw;
  }
  tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr));
  return names;
}
bool crosses(const std::vector<std::string>& names, const std::string& op) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

// Every case through autograd (sdpa forward, backward with a random grad) and
// the two ops called directly, float32 on each body and float64.
TEST(AttentionBackward, FusedAndComposedMatchFloat64Reference) {
  // BERT-like heads, causal across several row/key tiles (L = 130, S = 129),
  // L != S, Ev != E, odd E and Ev (vector tails), GQA, both masks.
  const Case cases[] = {{8, 12, 12, 47, 47, 32, 32, false, 0}, {1, 2, 2, 130, 129, 16, 24, true, 0},
                        {2, 4, 2, 9, 70, 8, 5, false, 1},      {2, 3, 3, 47, 33, 64, 24, false, 2},
                        {1, 6, 2, 66, 66, 5, 20, true, 0},     {2, 2, 1, 3, 5, 4, 6, false, 2},
                        {1, 4, 4, 17, 200, 48, 48, false, 1}};
  for (const Case& c : cases) {
    const bool gqa = c.hq != c.hkv;
    const auto q = random_values(static_cast<size_t>(c.b * c.hq * c.l * c.e), 61, -2, 2);
    const auto k = random_values(static_cast<size_t>(c.b * c.hkv * c.s * c.e), 62, -2, 2);
    const auto v = random_values(static_cast<size_t>(c.b * c.hkv * c.s * c.ev), 63);
    const auto g = random_values(static_cast<size_t>(c.b * c.hq * c.l * c.ev), 64);
    const auto fm = random_values(static_cast<size_t>(c.b * c.l * c.s), 65, -2, 1);
    const double scale = c.mask == 2 ? 0.3 : 1 / std::sqrt(static_cast<double>(c.e));
    const Reference ref = reference(c, q, k, v, g, fm, scale);
    std::vector<double> bm(static_cast<size_t>(c.l * c.s));
    for (int64_t i = 0; i < c.l; ++i)
      for (int64_t j = 0; j < c.s; ++j) bm[i * c.s + j] = keeps(i, j) ? 1 : 0;
    const std::string shape =
        std::to_string(c.b) + "x" + std::to_string(c.hq) + "/" + std::to_string(c.hkv) + "x" +
        std::to_string(c.l) + "x" + std::to_string(c.s) + " E" + std::to_string(c.e) + " Ev" +
        std::to_string(c.ev) + (c.causal ? " causal" : "") + " mask" + std::to_string(c.mask);
    auto run = [&](tessera::Dtype dt, const std::string& what) {
      const bool f32 = dt == tessera::kFloat32;
      Tensor tq = tessera::tensor(q, {c.b, c.hq, c.l, c.e}, dt).requires_grad_();
      Tensor tk = tessera::tensor(k, {c.b, c.hkv, c.s, c.e}, dt).requires_grad_();
      Tensor tv = tessera::tensor(v, {c.b, c.hkv, c.s, c.ev}, dt).requires_grad_();
      Tensor tg = tessera::tensor(g, {c.b, c.hq, c.l, c.ev}, dt);
      Tensor mask;
      if (c.mask == 1) mask = tessera::tensor(bm, {c.l, c.s}).to(tessera::kBool);
      if (c.mask == 2) mask = tessera::tensor(fm, {c.b, 1, c.l, c.s}, dt);
      std::optional<double> sc;
      if (c.mask == 2) sc = scale;
      Tensor out;
      auto names = ops_crossed([&] {
        out = tessera::scaled_dot_product_attention(tq, tk, tv, mask, 0, c.causal, sc, gqa);
        tessera::autograd::backward({out}, {tg});
      });
      expect_close(out, ref.out, f32, what + " out");
      expect_close(tq.grad(), ref.dq, f32, what + " autograd dq");
      expect_close(tk.grad(), ref.dk, f32, what + " autograd dk");
      expect_close(tv.grad(), ref.dv, f32, what + " autograd dv");
      EXPECT_TRUE(crosses(names, "scaled_dot_product_attention_backward")) << what;
      EXPECT_FALSE(crosses(names, "matmul") && f32) << what << ": the fused kernels run";
      // The ops themselves, without autograd.
      tessera::autograd::NoGradGuard no_grad;
      tsr_value mv = mask.defined() ? value(mask) : tsr_value{};
      tsr_value sv = sc ? value(*sc) : tsr_value{};
      std::vector<Tensor> fwd = tessera::call_op_all(
          "scaled_dot_product_attention_forward",
          {value(tq), value(tk), value(tv), mv, value(c.causal), sv, value(gqa)});
      ASSERT_EQ(fwd.size(), 2u);
      expect_close(fwd[0], ref.out, f32, what + " forward out");
      expect_close(fwd[1], ref.lse, f32, what + " forward logsumexp");
      std::vector<Tensor> bwd =
          tessera::call_op_all("scaled_dot_product_attention_backward",
                               {value(tg), value(tq), value(tk), value(tv), value(fwd[0]),
                                value(fwd[1]), mv, value(c.causal), sv, value(gqa)});
      ASSERT_EQ(bwd.size(), 3u);
      expect_close(bwd[0], ref.dq, f32, what + " direct dq");
      expect_close(bwd[1], ref.dk, f32, what + " direct dk");
      expect_close(bwd[2], ref.dv, f32, what + " direct dv");
    };
    for_each_cpu_isa([&](const std::string& isa) { run(tessera::kFloat32, isa + " " + shape); });
    run(tessera::kFloat64, "float64 decomposition " + shape);
  }
}

TEST(AttentionBackward, FullyMaskedRowsAndArgumentErrors) {
  // A row that attends to nothing: logsumexp -inf, output and gradients NaN,
  // as the float64 definition (0 / 0) gives.
  for (tessera::Dtype dt : {tessera::kFloat32, tessera::kFloat64}) {
    Tensor q = tessera::ones({1, 1, 2, 4}, dt).requires_grad_();
    Tensor k = tessera::ones({1, 1, 3, 4}, dt).requires_grad_();
    Tensor v = tessera::ones({1, 1, 3, 2}, dt).requires_grad_();
    Tensor mask = tessera::tensor(std::vector<double>{1, 1, 1, 0, 0, 0}, {2, 3}).to(tessera::kBool);
    Tensor out = tessera::scaled_dot_product_attention(q, k, v, mask);
    out.sum().backward();
    const std::vector<double> dq = q.grad().to_vector<double>();
    EXPECT_EQ(dq[0], 0.0) << tessera::name(dt);  // all values equal: zero gradient
    EXPECT_TRUE(std::isnan(dq[4])) << tessera::name(dt);
    tessera::autograd::NoGradGuard no_grad;
    std::vector<Tensor> f = tessera::call_op_all("scaled_dot_product_attention_forward",
                                                 {value(q), value(k), value(v), value(mask)});
    const std::vector<double> lse = f[1].to_vector<double>();
    EXPECT_NEAR(lse[0], std::log(3.0) + 4 / 2.0, 1e-6);
    EXPECT_EQ(lse[1], -kInf);
  }
  tessera::autograd::NoGradGuard no_grad;
  Tensor q = tessera::ones({1, 2, 3, 4});
  Tensor k = tessera::ones({1, 2, 5, 4});
  Tensor v = tessera::ones({1, 2, 5, 6});
  Tensor o = tessera::ones({1, 2, 3, 6});
  Tensor lse = tessera::zeros({1, 2, 3});
  auto bwd = [&](const Tensor& gg, const Tensor& ll) {
    tessera::call_op_all("scaled_dot_product_attention_backward",
                         {value(gg), value(q), value(k), value(v), value(o), value(ll)});
  };
  auto expect_error = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one naming '" << part << "'";
    } catch (const tessera::Error& e) {
      EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error([&] { bwd(tessera::ones({1, 2, 3, 5}), lse); }, "grad_out");
  expect_error([&] { bwd(o, tessera::zeros({1, 2, 4})); }, "logsumexp");
  expect_error([&] { bwd(o.to(tessera::kFloat64), lse); }, "grad_out");
  expect_error(
      [&] {
        tessera::call_op_all(
            "scaled_dot_product_attention_forward",
            {value(q), value(tessera::ones({2, 2, 5, 4})), value(tessera::ones({2, 2, 5, 6}))});
      },
      "batch dims");
}

}  // namespace
