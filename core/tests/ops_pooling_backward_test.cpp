// The pooling backward ops (max_pool2d_with_indices_backward,
// avg_pool2d_backward, _adaptive_avg_pool2d_backward,
// adaptive_max_pool2d_backward) end to end: through the pooling formulas
// (the CPU plugin's fused kernels for float32/float64), through their
// decompositions (what create_graph records, and what float16/bfloat16 run
// on the CPU), and called directly, each against float64 gradients
// computed here by PyTorch's loops; gradcheck (float64 finite differences)
// of every pool through its formula and of every backward op through its
// decomposition; and bad input (code + message naming the argument).
//
// Windows overlap (stride < kernel), ceil mode adds clipped windows, and max
// pooling inputs hold ties (PyTorch's gradient goes to the first maximum in
// row-major window order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../../conformance/tolerances.hpp"
#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::value;
namespace ag = tessera::autograd;
namespace conf = tessera::conformance;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> pseudo_random(size_t n, uint32_t seed) {
  std::vector<double> values(n);
  uint32_t state = seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }
  return values;
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

conf::Tolerance tol(Dtype d) {
  conf::Tolerance t = conf::tolerance(static_cast<tsr_dtype>(d));
  t.rtol *= conf::kAccumulatingFactor;
  t.atol *= conf::kAccumulatingFactor;
  return t;
}

void expect_values(const std::vector<double>& actual, const std::vector<double>& expected,
                   conf::Tolerance t, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < actual.size() && failures < 10; ++i) {
    if (std::fabs(actual[i] - expected[i]) <= t.atol + t.rtol * std::fabs(expected[i])) continue;
    ++failures;
    ADD_FAILURE() << what << " at " << i << ": got " << actual[i] << ", expected " << expected[i];
  }
}

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

struct PoolCase {
  std::vector<int64_t> in;  // (N, C, H, W)
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t o = num / s + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

std::vector<int64_t> out_shape(const PoolCase& c, int64_t dh, int64_t dw) {
  return {c.in[0], c.in[1], pool_out(c.in[2], c.kh, c.ph, c.sh, dh, c.ceil_mode),
          pool_out(c.in[3], c.kw, c.pw, c.sw, dw, c.ceil_mode)};
}

std::vector<PoolCase> pool_cases() {
  return {
      {{2, 3, 7, 8}, 3, 3, 2, 2, 1, 1, 1, 1, false},  // overlapping windows, padding
      {{1, 2, 6, 7}, 3, 3, 1, 1, 1, 1, 1, 1, false},  // stride 1: every element in 9 windows
      {{1, 2, 6, 6}, 3, 3, 2, 2, 0, 0, 1, 1, true},   // ceil: a clipped last window
      {{1, 2, 5, 5}, 2, 2, 2, 2, 1, 1, 1, 1, true},   // ceil + padding
      {{2, 1, 9, 7}, 3, 2, 1, 2, 1, 1, 2, 3, false},  // dilation (max only)
      {{1, 3, 5, 6}, 2, 3, 3, 1, 0, 1, 1, 1, true},
  };
}

// d sum(g * max_pool2d(x)) / dx by PyTorch's loop: g goes to the first
// maximum of each window (row-major), summed over windows.
std::vector<double> ref_max_grad(const PoolCase& c, const std::vector<double>& x,
                                 const std::vector<double>& g) {
  const int64_t N = c.in[0], C = c.in[1], H = c.in[2], W = c.in[3];
  const auto os = out_shape(c, c.dh, c.dw);
  std::vector<double> dx(x.size(), 0.0);
  size_t k = 0;
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t i = 0; i < os[2]; ++i)
      for (int64_t j = 0; j < os[3]; ++j, ++k) {
        const int64_t hs = i * c.sh - c.ph, ws = j * c.sw - c.pw;
        double m = -kInf;
        int64_t mi = -1;
        for (int64_t a = 0; a < c.kh; ++a)
          for (int64_t b = 0; b < c.kw; ++b) {
            const int64_t h = hs + a * c.dh, w = ws + b * c.dw;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            if (mi < 0 || x[p * H * W + h * W + w] > m) {
              m = x[p * H * W + h * W + w];
              mi = h * W + w;
            }
          }
        dx[p * H * W + mi] += g[k];
      }
  return dx;
}

// d sum(g * avg_pool2d(x)) / dx: g over each window's divisor (PyTorch's
// rules) added to its in-bounds elements.
std::vector<double> ref_avg_grad(const PoolCase& c, const std::vector<double>& g, bool include_pad,
                                 int64_t divisor_override) {
  const int64_t N = c.in[0], C = c.in[1], H = c.in[2], W = c.in[3];
  const auto os = out_shape(c, 1, 1);
  std::vector<double> dx(static_cast<size_t>(numel(c.in)), 0.0);
  size_t k = 0;
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t i = 0; i < os[2]; ++i)
      for (int64_t j = 0; j < os[3]; ++j, ++k) {
        int64_t hs = i * c.sh - c.ph, ws = j * c.sw - c.pw;
        int64_t he = std::min(hs + c.kh, H + c.ph), we = std::min(ws + c.kw, W + c.pw);
        const int64_t pool = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0);
        ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H);
        we = std::min(we, W);
        const int64_t d = divisor_override ? divisor_override
                          : include_pad    ? pool
                                           : (he - hs) * (we - ws);
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w)
            dx[p * H * W + h * W + w] += g[k] / static_cast<double>(d);
      }
  return dx;
}

// Adaptive pools' gradients: window i is [i * in / out, ceil((i + 1) * in / out)).
std::vector<double> ref_adaptive_grad(const std::vector<double>& x, const std::vector<double>& g,
                                      int64_t planes, int64_t H, int64_t W, int64_t oh, int64_t ow,
                                      bool max) {
  std::vector<double> dx(x.size(), 0.0);
  size_t k = 0;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j, ++k) {
        const int64_t hs = i * H / oh, he = ((i + 1) * H + oh - 1) / oh;
        const int64_t ws = j * W / ow, we = ((j + 1) * W + ow - 1) / ow;
        int64_t mi = -1;
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w) {
            const int64_t at = p * H * W + h * W + w;
            if (!max)
              dx[at] += g[k] / static_cast<double>((he - hs) * (we - ws));
            else if (mi < 0 || x[at] > x[mi])
              mi = at;
          }
        if (max) dx[mi] += g[k];
      }
  return dx;
}

// x's gradient of sum(g * pool(x)): by backward() (the formula's fused op)
// or by grad() with create_graph (the backward op's decomposition).
template <class Pool>
std::vector<double> input_grad(const Tensor& x0, const Tensor& g, Pool&& pool, bool create_graph) {
  Tensor x = x0.clone();
  x.requires_grad_();
  Tensor loss = (pool(x) * g).sum();
  if (!create_graph) {
    loss.backward();
    return held(x.grad());
  }
  return held(ag::grad({loss}, {x}, {}, true, /*create_graph=*/true)[0]);
}

// Checks the three paths of one pool against want(x, g) (float64, of the
// values as held in the dtype): float32 and float64 through the formula
// (the fused kernel: `fused_op` runs, `composed_op` does not), float64 under
// create_graph (`composed_op` runs) and 16-bit backward (the decomposition).
template <class Pool, class Want>
void check_paths(const std::vector<double>& xv, const std::vector<int64_t>& in,
                 const std::vector<double>& gv, const std::vector<int64_t>& out, Pool&& pool,
                 Want&& want, const char* fused_op, const char* composed_op,
                 const std::string& what) {
  for (Dtype dt : {tessera::kFloat32, tessera::kFloat64, tessera::kFloat16, tessera::kBFloat16}) {
    const bool fused = dt == tessera::kFloat32 || dt == tessera::kFloat64;
    const Tensor x = make(xv, in, dt), g = make(gv, out, dt);
    const auto expected = want(held(x), held(g));
    OpLog log;
    const auto got = input_grad(x, g, pool, false);
    if (fused) {
      EXPECT_TRUE(log.saw(fused_op)) << what;
      EXPECT_FALSE(log.saw(composed_op)) << what << ": the fused backward decomposed";
    } else {
      EXPECT_TRUE(log.saw(composed_op)) << what;
    }
    expect_values(got, expected, tol(dt),
                  what + (fused ? " fused " : " decomposition ") + tessera::name(dt));
    if (dt != tessera::kFloat64) continue;
    OpLog composed_log;
    const auto composed = input_grad(x, g, pool, true);
    EXPECT_TRUE(composed_log.saw(composed_op)) << what;
    expect_values(composed, expected, tol(dt), what + " create_graph decomposition");
  }
}

TEST(PoolingBackward, MaxPoolGradientsMatchFloat64Reference) {
  for (const PoolCase& c : pool_cases()) {
    // Coarse values (multiples of 1/4, exact in bfloat16) make ties.
    auto xv = pseudo_random(static_cast<size_t>(numel(c.in)), 210);
    for (auto& v : xv) v = std::round(v * 3.0) / 4.0;
    const auto os = out_shape(c, c.dh, c.dw);
    auto gv = pseudo_random(static_cast<size_t>(numel(os)), 211);
    for (auto& v : gv) v = std::round(v * 8.0) / 8.0;
    auto pool = [&](const Tensor& x) {
      return tessera::max_pool2d_with_indices(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw},
                                              {c.dh, c.dw}, c.ceil_mode)
          .first;
    };
    const std::string what = "max_pool2d k" + std::to_string(c.kh) + " s" + std::to_string(c.sh) +
                             (c.ceil_mode ? " ceil" : "");
    auto want = [&](const std::vector<double>& x, const std::vector<double>& g) {
      return ref_max_grad(c, x, g);
    };
    check_paths(xv, c.in, gv, os, pool, want, "max_pool2d_with_indices_backward", "scatter_add",
                what);
    // max_pool2d (no indices result) takes the same backward op.
    auto plain = [&](const Tensor& x) {
      return tessera::max_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw},
                                 c.ceil_mode);
    };
    check_paths(xv, c.in, gv, os, plain, want, "max_pool2d_with_indices_backward", "scatter_add",
                what + " (max_pool2d)");
  }
}

TEST(PoolingBackward, AvgPoolGradientsMatchFloat64Reference) {
  for (const PoolCase& pc : pool_cases()) {
    PoolCase c = pc;
    c.dh = c.dw = 1;
    for (int mode = 0; mode < 3; ++mode) {
      const bool include_pad = mode != 1;
      const int64_t divisor = mode == 2 ? 3 : 0;
      const auto xv = pseudo_random(static_cast<size_t>(numel(c.in)), 220);
      const auto os = out_shape(c, 1, 1);
      auto gv = pseudo_random(static_cast<size_t>(numel(os)), 221);
      auto pool = [&](const Tensor& x) {
        return tessera::avg_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, c.ceil_mode,
                                   include_pad,
                                   divisor ? std::optional<int64_t>(divisor) : std::nullopt);
      };
      const std::string what = "avg_pool2d k" + std::to_string(c.kh) + " s" + std::to_string(c.sh) +
                               (c.ceil_mode ? " ceil" : "") + " mode " + std::to_string(mode);
      auto want = [&](const std::vector<double>&, const std::vector<double>& g) {
        return ref_avg_grad(c, g, include_pad, divisor);
      };
      check_paths(xv, c.in, gv, os, pool, want, "avg_pool2d_backward", "scatter_add", what);
    }
  }
}

TEST(PoolingBackward, AdaptivePoolGradientsMatchFloat64Reference) {
  struct Case {
    std::vector<int64_t> in;
    int64_t oh, ow;
  };
  const std::vector<Case> cases = {{{2, 3, 7, 5}, 3, 2},  // overlapping adaptive windows
                                   {{1, 2, 8, 8}, 4, 4},
                                   {{2, 1, 5, 9}, 1, 1},
                                   {{1, 2, 3, 4}, 5, 7},  // more outputs than inputs
                                   {{3, 6, 6}, 4, 3}};
  for (const Case& cs : cases) {
    const int64_t H = cs.in[cs.in.size() - 2], W = cs.in.back();
    const int64_t planes = numel(cs.in) / (H * W);
    std::vector<int64_t> os(cs.in.begin(), cs.in.end() - 2);
    os.push_back(cs.oh);
    os.push_back(cs.ow);
    auto xv = pseudo_random(static_cast<size_t>(numel(cs.in)), 230);
    for (auto& v : xv) v = std::round(v * 3.0) / 4.0;  // ties
    const auto gv = pseudo_random(static_cast<size_t>(numel(os)), 231);
    const std::string what = "adaptive " + std::to_string(cs.oh) + "x" + std::to_string(cs.ow);
    auto avg = [&](const Tensor& x) { return tessera::adaptive_avg_pool2d(x, {cs.oh, cs.ow}); };
    auto want = [&](bool max) {
      return [&, max](const std::vector<double>& x, const std::vector<double>& g) {
        return ref_adaptive_grad(x, g, planes, H, W, cs.oh, cs.ow, max);
      };
    };
    check_paths(xv, cs.in, gv, os, avg, want(false), "_adaptive_avg_pool2d_backward", "matmul",
                what + " avg");
    auto max = [&](const Tensor& x) {
      return tessera::adaptive_max_pool2d(x, {cs.oh, cs.ow}).first;
    };
    check_paths(xv, cs.in, gv, os, max, want(true), "adaptive_max_pool2d_backward", "scatter_add",
                what + " max");
  }
}

// Float64 leaves of `shape`, values in [-1, 1) (distinct: max pooling is
// differentiable there).
Tensor leaf(const std::vector<int64_t>& shape, uint32_t seed) {
  Tensor t = make(pseudo_random(static_cast<size_t>(numel(shape)), seed), shape, tessera::kFloat64);
  t.requires_grad_();
  return t;
}

TEST(PoolingBackward, GradcheckPoolsAndBackwardOps) {
  const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, s1[2] = {1, 1}, p1[2] = {1, 1}, d1[2] = {1, 1},
                o23[2] = {2, 3};
  using tessera::IntList;
  auto max_fn = [&](const std::vector<Tensor>& x) {
    return tessera::call_op_all("max_pool2d_with_indices",
                                {value(x[0]), value(IntList(k3, 2)), value(IntList(s2, 2)),
                                 value(IntList(p1, 2)), value(IntList(d1, 2)), value(true)})[0];
  };
  auto avg_fn = [&](const std::vector<Tensor>& x) {
    return tessera::call_op("avg_pool2d",
                            {value(x[0]), value(IntList(k3, 2)), value(IntList(s1, 2)),
                             value(IntList(p1, 2)), value(true), value(false), value(int64_t{5})});
  };
  auto adaptive_avg_fn = [&](const std::vector<Tensor>& x) {
    return tessera::call_op("_adaptive_avg_pool2d", {value(x[0]), value(IntList(o23, 2))});
  };
  auto adaptive_max_fn = [&](const std::vector<Tensor>& x) {
    return tessera::call_op_all("adaptive_max_pool2d", {value(x[0]), value(IntList(o23, 2))})[0];
  };
  for (const auto& shape : {std::vector<int64_t>{2, 2, 6, 5}, std::vector<int64_t>{2, 5, 5}}) {
    EXPECT_EQ(ag::gradcheck(max_fn, {leaf(shape, 240)}), "") << "max_pool2d_with_indices";
    EXPECT_EQ(ag::gradcheck(avg_fn, {leaf(shape, 241)}), "") << "avg_pool2d";
    EXPECT_EQ(ag::gradgradcheck(avg_fn, {leaf(shape, 241)}), "") << "avg_pool2d";
    EXPECT_EQ(ag::gradcheck(adaptive_avg_fn, {leaf(shape, 242)}), "") << "adaptive_avg_pool2d";
    EXPECT_EQ(ag::gradgradcheck(adaptive_avg_fn, {leaf(shape, 242)}), "") << "adaptive_avg_pool2d";
    EXPECT_EQ(ag::gradcheck(adaptive_max_fn, {leaf(shape, 243)}), "") << "adaptive_max_pool2d";
  }
  // Each backward op is linear in grad_output; its derivative (through the
  // decomposition) is the forward pool's.
  const Tensor x = make(pseudo_random(2 * 6 * 5, 244), {1, 2, 6, 5}, tessera::kFloat64);
  const auto [pooled, indices] = tessera::max_pool2d_with_indices(x, 3, 2, 1, 1, true);
  EXPECT_EQ(ag::gradcheck(
                [&](const std::vector<Tensor>& g) {
                  return tessera::call_op(
                      "max_pool2d_with_indices_backward",
                      {value(g[0]), value(x), value(IntList(k3, 2)), value(IntList(s2, 2)),
                       value(IntList(p1, 2)), value(IntList(d1, 2)), value(true), value(indices)});
                },
                {leaf({1, 2, 4, 3}, 245)}),
            "");
  EXPECT_EQ(ag::gradcheck(
                [&](const std::vector<Tensor>& g) {
                  return tessera::call_op(
                      "avg_pool2d_backward",
                      {value(g[0]), value(x), value(IntList(k3, 2)), value(IntList(s2, 2)),
                       value(IntList(p1, 2)), value(true), value(true), tessera::detail::none()});
                },
                {leaf({1, 2, 4, 3}, 246)}),
            "");
  EXPECT_EQ(ag::gradcheck(
                [&](const std::vector<Tensor>& g) {
                  return tessera::call_op("_adaptive_avg_pool2d_backward", {value(g[0]), value(x)});
                },
                {leaf({1, 2, 2, 3}, 247)}),
            "");
  const auto [amax, aidx] = tessera::adaptive_max_pool2d(x, {2, 3});
  EXPECT_EQ(ag::gradcheck(
                [&](const std::vector<Tensor>& g) {
                  return tessera::call_op("adaptive_max_pool2d_backward",
                                          {value(g[0]), value(x), value(aidx)});
                },
                {leaf({1, 2, 2, 3}, 248)}),
            "");
}

TEST(PoolingBackward, RepeatedIndicesAddAndBadInputIsRefused) {
  using tessera::IntList;
  const int64_t k2[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
  const Tensor x = tessera::zeros({1, 1, 3, 3});
  const Tensor g = tessera::tensor({1.0, 2.0, 3.0, 4.0}, {1, 1, 2, 2}).to(tessera::kFloat32);
  auto call = [&](const Tensor& gg, const Tensor& idx) {
    return tessera::call_op(
        "max_pool2d_with_indices_backward",
        {value(gg), value(x.to(gg.dtype())), value(IntList(k2, 2)), value(IntList(one, 2)),
         value(IntList(zero, 2)), value(IntList(one, 2)), value(false), value(idx)});
  };
  // Every window reports the centre (overlapping windows): its gradient is the sum.
  const Tensor centre = tessera::tensor(std::vector<int64_t>{4, 4, 4, 4}, {1, 1, 2, 2});
  for (Dtype dt : {tessera::kFloat32, tessera::kFloat64, tessera::kFloat16})
    expect_values(held(call(g.to(dt), centre)), {0, 0, 0, 0, 10, 0, 0, 0, 0}, tol(dt),
                  std::string("repeated index ") + tessera::name(dt));
  expect_error(
      [&] {
        (void)call(g, tessera::tensor(std::vector<int64_t>{0, 9, 1, 2}, {1, 1, 2, 2}));
      },
      TSR_INVALID_ARGUMENT, {"max_pool2d_with_indices_backward", "indices holds 9"});
  expect_error(
      [&] {
        (void)call(tessera::ones({1, 1, 3, 3}), centre);
      },
      TSR_INVALID_ARGUMENT, {"max_pool2d_with_indices_backward", "grad_output", "[1, 1, 2, 2]"});
  expect_error([&] { (void)call(g, centre.to(tessera::kInt32)); }, TSR_INVALID_ARGUMENT,
               {"indices", "int32", "int64"});
  expect_error(
      [&] {
        (void)tessera::call_op(
            "max_pool2d_with_indices_backward",
            {value(g.to(tessera::kFloat64)), value(x.to(tessera::kFloat32)), value(IntList(k2, 2)),
             value(IntList(one, 2)), value(IntList(zero, 2)), value(IntList(one, 2)), value(false),
             value(centre)});
      },
      TSR_INVALID_ARGUMENT, {"grad_output", "float64", "float32"});
  expect_error(
      [&] {
        (void)tessera::call_op(
            "avg_pool2d_backward",
            {value(g), value(x), value(IntList(k2, 2)), value(IntList(one, 2)),
             value(IntList(zero, 2)), value(false), value(true), value(int64_t{0})});
      },
      TSR_INVALID_ARGUMENT, {"avg_pool2d_backward", "divisor must be not zero"});
  expect_error(
      [&] {
        (void)tessera::call_op("_adaptive_avg_pool2d_backward",
                               {value(tessera::ones({1, 2, 2})), value(x)});
      },
      TSR_INVALID_ARGUMENT, {"_adaptive_avg_pool2d_backward", "grad_output", "as many dims"});
  // An empty batch gives an empty gradient.
  const Tensor empty =
      tessera::call_op("avg_pool2d_backward",
                       {value(tessera::ones({0, 1, 2, 2})), value(tessera::ones({0, 1, 3, 3})),
                        value(IntList(k2, 2)), value(IntList(one, 2)), value(IntList(zero, 2)),
                        value(false), value(true), tessera::detail::none()});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.dim(), 4);
}

}  // namespace
