// nn_test.cpp - tessera::nn: TinyBlock's module facts (registry names
// and order, state_dict order, hooks, train/eval), the Module machinery
// (tying, to(), load_state_dict, apply, containers, printing) and every
// layer's numbers against float64 references computed here from the layer's
// own parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"
#include "tinyblock.hpp"

namespace {

namespace nn = tessera::nn;
using tessera::kFloat32;
using tessera::kFloat64;
using tessera::Tensor;

using tinyblock::TinyBlock;  // the TinyBlock model (samples/tinyblock)

template <class Named>
std::vector<std::string> names_of(const Named& named) {
  std::vector<std::string> out;
  for (const auto& [name, value] : named) out.push_back(name);
  return out;
}

std::vector<double> values(const Tensor& t) { return t.contiguous().to_vector<double>(); }

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(want[i]))) << what << " [" << i << "]";
}

Tensor randn(std::vector<int64_t> shape, uint64_t seed) {
  tessera::Generator g(seed);
  return tessera::randn(shape, g, kFloat32);
}

// --- TinyBlock ---------------------------------------------------------------

TEST(Seed2, ChildrenParametersBuffersAndStateDictInPyTorchOrder) {
  auto model = std::make_shared<TinyBlock>();
  EXPECT_EQ(names_of(model->named_children()),
            (std::vector<std::string>{"up", "norm", "dropout", "down"}));
  EXPECT_EQ(names_of(model->named_parameters()),
            (std::vector<std::string>{"up.weight", "up.bias", "norm.weight", "norm.bias",
                                      "down.weight", "down.bias"}));
  EXPECT_EQ(names_of(model->named_buffers()), (std::vector<std::string>{"temperature"}));
  // A module's own entries before its children's.
  EXPECT_EQ(names_of(model->state_dict()),
            (std::vector<std::string>{"temperature", "up.weight", "up.bias", "norm.weight",
                                      "norm.bias", "down.weight", "down.bias"}));
  EXPECT_EQ(names_of(model->named_modules()),
            (std::vector<std::string>{"", "up", "norm", "dropout", "down"}));
  for (const Tensor& p : model->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  EXPECT_FALSE(model->temperature.requires_grad());
}

TEST(Seed2, PrintsLikePyTorch) {
  auto model = std::make_shared<TinyBlock>();
  EXPECT_EQ(model->repr(),
            "TinyBlock(\n"
            "  (up): Linear(in_features=3, out_features=8, bias=True)\n"
            "  (norm): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (dropout): Dropout(p=0.25, inplace=False)\n"
            "  (down): Linear(in_features=8, out_features=2, bias=True)\n"
            ")");
}

TEST(Seed2, ForwardPreHookFiresBeforeForwardHookAndHandlesRemoveThem) {
  auto model = std::make_shared<TinyBlock>();
  std::vector<std::string> log;
  auto pre = model->register_forward_pre_hook(
      [&](nn::Module&, const std::vector<Tensor>&) -> std::optional<std::vector<Tensor>> {
        log.push_back("pre");
        return std::nullopt;
      });
  auto post = model->register_forward_hook(
      [&](nn::Module&, const std::vector<Tensor>& in,
          const std::vector<Tensor>& out) -> std::optional<std::vector<Tensor>> {
        log.push_back("forward");
        EXPECT_EQ(in.size(), 1u);
        EXPECT_EQ(out.at(0).sizes(), tessera::Dims({4, 2}));
        return std::nullopt;
      });
  auto inner = model->up->register_forward_hook(
      [&](nn::Module& m, const std::vector<Tensor>&,
          const std::vector<Tensor>&) -> std::optional<std::vector<Tensor>> {
        log.push_back("up:" + m.type_name());
        return std::nullopt;
      });
  const Tensor x = randn({4, 3}, 1);
  (*model)(x);
  EXPECT_EQ(log, (std::vector<std::string>{"pre", "up:Linear", "forward"}));
  pre.remove();
  post.remove();
  post.remove();  // twice: harmless
  log.clear();
  (*model)(x);
  EXPECT_EQ(log, (std::vector<std::string>{"up:Linear"}));
}

TEST(Seed2, HooksCanReplaceInputsAndOutputs) {
  auto lin = std::make_shared<nn::Linear>(2, 2);
  auto h1 = lin->register_forward_pre_hook(
      [](nn::Module&, const std::vector<Tensor>& in) -> std::optional<std::vector<Tensor>> {
        return std::vector<Tensor>{in[0] * 0.0};
      });
  auto h2 = lin->register_forward_hook(
      [](nn::Module&, const std::vector<Tensor>&,
         const std::vector<Tensor>& out) -> std::optional<std::vector<Tensor>> {
        return std::vector<Tensor>{out[0] + 1.0};
      });
  // (0 * x) W^T + b + 1 = b + 1
  const std::vector<double> y = values((*lin)(tessera::ones({1, 2})));
  const std::vector<double> b = values(lin->bias);
  expect_near_all(y, {b[0] + 1.0, b[1] + 1.0}, 1e-6, "replaced");
}

TEST(Seed2, EvalSwitchesDropoutOffButNotAutograd) {
  auto drop = std::make_shared<nn::Dropout>(0.25);
  const Tensor x = tessera::ones({100000});
  // Training: about a quarter zeroed, the rest scaled by 1 / 0.75.
  const std::vector<double> t = values((*drop)(x));
  int64_t zeros = 0;
  for (double v : t) {
    if (v == 0.0) {
      ++zeros;
    } else {
      EXPECT_NEAR(v, 1.0 / 0.75, 1e-6);
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros) / 100000.0, 0.25, 0.01);

  auto model = std::make_shared<TinyBlock>();
  model->eval();
  for (nn::Module* m : model->modules()) EXPECT_FALSE(m->is_training()) << m->type_name();
  const Tensor e = (*drop).eval().operator()(x);
  EXPECT_TRUE(e.is_same(x) || values(e) == values(x));
  // Autograd still records in eval mode.
  Tensor loss = (*model)(randn({4, 3}, 2)).sum();
  EXPECT_TRUE(loss.requires_grad());
  loss.backward();
  EXPECT_TRUE(model->up->weight.grad().defined());
  model->train();
  EXPECT_TRUE(model->dropout->is_training());
}

TEST(Seed2, ZeroGradSetToNoneLeavesGradUnset) {
  auto model = std::make_shared<TinyBlock>();
  (*model)(randn({4, 3}, 3)).sum().backward();
  ASSERT_TRUE(model->down->weight.grad().defined());
  model->zero_grad(false);
  EXPECT_EQ(values(model->down->weight.grad()), std::vector<double>(16, 0.0));
  model->zero_grad();
  for (const Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
}

// PyTorch's gradient layout contract: .grad takes the parameter's strides
// (linear's weight gradient is computed transposed), or is contiguous when
// the parameter is not dense.
TEST(Module, GradientsTakeTheLayoutOfTheirParameter) {
  nn::Linear lin(5, 3);
  const Tensor x = randn({4, 5}, 20);
  lin(x).sum().backward();
  EXPECT_EQ(lin.weight.grad().strides(), lin.weight.strides());
  EXPECT_TRUE(lin.weight.grad().is_contiguous());
  // d sum(x W^T + b) / dW[o][i] = sum_n x[n][i]
  const std::vector<double> xv = values(x), gw = values(lin.weight.grad());
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 5; ++i) {
      double want = 0;
      for (int n = 0; n < 4; ++n) want += xv[n * 5 + i];
      EXPECT_NEAR(gw[o * 5 + i], want, 1e-5) << o << "," << i;
    }

  Tensor transposed = randn({3, 4}, 21).t();  // dense (4, 3), strides (1, 4)
  transposed.requires_grad_();
  const Tensor b = randn({3, 2}, 22);
  tessera::matmul(transposed, b).sum().backward();
  EXPECT_EQ(transposed.grad().strides(), transposed.strides());
  // d sum(A B) / dA[i][k] = sum_j B[k][j]
  const std::vector<double> g = values(transposed.grad()), bv = values(b);
  ASSERT_EQ(g.size(), 12u);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(g[i * 3 + k], bv[k * 2] + bv[k * 2 + 1], 1e-5);
}

// --- Module machinery ------------------------------------------------------

struct Tied : nn::Module {
  std::shared_ptr<nn::Linear> a = register_module("a", std::make_shared<nn::Linear>(4, 4));
  std::shared_ptr<nn::Linear> b = register_module("b", std::make_shared<nn::Linear>(4, 4));
  Tied() { b->parameter("weight") = a->weight; }  // b.weight = a.weight
};

TEST(Module, TiedWeightsAreListedOnceButSavedUnderEveryName) {
  auto m = std::make_shared<Tied>();
  EXPECT_TRUE(m->b->weight.is_same(m->a->weight));
  EXPECT_EQ(names_of(m->named_parameters()),
            (std::vector<std::string>{"a.weight", "a.bias", "b.bias"}));
  EXPECT_EQ(names_of(m->named_parameters(true, false)),
            (std::vector<std::string>{"a.weight", "a.bias", "b.weight", "b.bias"}));
  EXPECT_EQ(names_of(m->state_dict()),
            (std::vector<std::string>{"a.weight", "a.bias", "b.weight", "b.bias"}));
  // A shared child is visited once.
  auto shared = std::make_shared<nn::Linear>(2, 2);
  auto seq = std::make_shared<nn::Sequential>(
      std::initializer_list<std::shared_ptr<nn::Module>>{shared, shared});
  EXPECT_EQ(names_of(seq->named_modules()), (std::vector<std::string>{"", "0"}));
  EXPECT_EQ(seq->parameters().size(), 2u);
}

TEST(Module, ToDtypeMovesDataInPlaceKeepingIdentityTiesAndIntegerBuffers) {
  auto m = std::make_shared<Tied>();
  const Tensor before = m->a->weight;  // a copy of the handle, as an optimizer keeps
  const std::vector<double> v = values(before);
  const Tensor x = randn({2, 4}, 4);
  ((*m->a)(x).sum() + (*m->b)(x).sum()).backward();
  m->to(kFloat64);
  EXPECT_EQ(before.dtype(), kFloat64);
  EXPECT_TRUE(before.is_same(m->a->weight));
  EXPECT_TRUE(m->b->weight.is_same(m->a->weight));
  EXPECT_EQ(values(before), v);  // float32 -> float64 is exact
  EXPECT_TRUE(before.requires_grad());
  EXPECT_EQ(before.grad().dtype(), kFloat64);
  // Works as a float64 model.
  EXPECT_EQ((*m->a)(tessera::ones({1, 4}, kFloat64)).dtype(), kFloat64);

  auto bn = std::make_shared<nn::BatchNorm1d>(3);
  bn->to(kFloat64);
  EXPECT_EQ(bn->running_mean.dtype(), kFloat64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), tessera::kInt64);
}

TEST(Module, LoadStateDictCopiesValuesAndReportsMissingUnexpectedAndShapes) {
  auto src = std::make_shared<TinyBlock>();
  auto dst = std::make_shared<TinyBlock>();
  const nn::LoadResult ok = dst->load_state_dict(src->state_dict());
  EXPECT_TRUE(ok.missing_keys.empty());
  EXPECT_TRUE(ok.unexpected_keys.empty());
  EXPECT_EQ(values(dst->up->weight), values(src->up->weight));
  EXPECT_FALSE(dst->up->weight.is_same(src->up->weight));  // copied, not shared

  nn::StateDict partial = src->state_dict();
  partial.erase(partial.begin() + 1);  // up.weight
  partial.emplace_back("extra.weight", tessera::zeros({1}));
  try {
    dst->load_state_dict(partial);
    FAIL() << "strict load accepted a missing and an unexpected key";
  } catch (const tessera::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Error(s) in loading state_dict for TinyBlock"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Missing key(s) in state_dict: \"up.weight\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("Unexpected key(s) in state_dict: \"extra.weight\""), std::string::npos)
        << msg;
  }
  const nn::LoadResult loose = dst->load_state_dict(partial, false);
  EXPECT_EQ(loose.missing_keys, (std::vector<std::string>{"up.weight"}));
  EXPECT_EQ(loose.unexpected_keys, (std::vector<std::string>{"extra.weight"}));

  nn::StateDict wrong = src->state_dict();
  wrong[1].second = tessera::zeros({4, 3});
  try {
    dst->load_state_dict(wrong, false);
    FAIL() << "a shape mismatch was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch for up.weight: copying a param with "
                                         "shape [4, 3] from checkpoint, the shape in current "
                                         "model is [8, 3]"),
              std::string::npos)
        << e.what();
  }
}

TEST(Module, RegistrationRefusesDuplicateAndDottedNames) {
  nn::Module m;
  m.register_parameter("w", tessera::zeros({2}));
  EXPECT_THROW(m.register_buffer("w", tessera::zeros({2})), tessera::Error);
  EXPECT_THROW(m.register_parameter("a.b", tessera::zeros({2})), tessera::Error);
  EXPECT_THROW(m.register_module("", std::make_shared<nn::ReLU>()), tessera::Error);
  EXPECT_THROW(m.parameter("absent"), tessera::Error);
  // An absent (None) parameter is listed nowhere.
  m.register_parameter("none", Tensor());
  EXPECT_EQ(names_of(m.named_parameters()), (std::vector<std::string>{"w"}));
  EXPECT_THROW(m.forward(tessera::zeros({1})), tessera::Error);
}

TEST(Module, ApplyVisitsChildrenBeforeParentsOnce) {
  auto model = std::make_shared<TinyBlock>();
  std::vector<std::string> order;
  model->apply([&](nn::Module& m) { order.push_back(m.type_name()); });
  EXPECT_EQ(order,
            (std::vector<std::string>{"Linear", "LayerNorm", "Dropout", "Linear", "TinyBlock"}));
}

TEST(Module, Containers) {
  auto seq = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(4, 2)});
  EXPECT_EQ(names_of(seq->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  const Tensor x = randn({5, 3}, 5);
  const Tensor chained = (*seq->at(2))(tessera::relu((*seq->at(0))(x)));
  EXPECT_EQ(values((*seq)(x)), values(chained));
  EXPECT_THROW(seq->at(3), tessera::Error);

  nn::ModuleList list{std::make_shared<nn::Linear>(2, 2)};
  list.push_back(std::make_shared<nn::Tanh>());
  EXPECT_EQ(list.size(), 2u);
  int n = 0;
  for (const auto& m : list) n += m != nullptr;
  EXPECT_EQ(n, 2);
  EXPECT_EQ(names_of(list.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));

  nn::ModuleDict dict({{"enc", std::make_shared<nn::Linear>(2, 3)}});
  dict.insert("act", std::make_shared<nn::GELU>());
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"enc", "act"}));
  EXPECT_TRUE(dict.contains("act"));
  EXPECT_EQ(dict["act"]->type_name(), "GELU");

  nn::ParameterList params{tessera::zeros({2}), tessera::ones({3})};
  params.append(tessera::ones({1}));
  EXPECT_EQ(names_of(params.named_parameters()), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(params[1].sizes(), tessera::Dims({3}));
  EXPECT_TRUE(params[2].requires_grad());
}

// --- Initialisers -------------------------------------------------------------

TEST(Init, GainsFansAndDefaultBounds) {
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("conv2d"), 1.0);
  EXPECT_THROW(nn::init::calculate_gain("softplus"), tessera::Error);
  const auto [fi, fo] = nn::init::calculate_fan_in_and_fan_out(tessera::zeros({16, 4, 3, 5}));
  EXPECT_EQ(fi, 4 * 15);
  EXPECT_EQ(fo, 16 * 15);
  EXPECT_THROW(nn::init::calculate_fan_in_and_fan_out(tessera::zeros({3})), tessera::Error);

  // Linear(300, 200): weights and bias in +-1/sqrt(300), spread over the range.
  nn::Linear lin(300, 200);
  const double bound = 1.0 / std::sqrt(300.0);
  double lo = 1, hi = -1;
  for (double w : values(lin.weight)) {
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -0.99 * bound);
  EXPECT_GT(hi, 0.99 * bound);
  for (double b : values(lin.bias)) EXPECT_LE(std::fabs(b), bound);
}

TEST(Init, XavierAndKaimingMatchTheirVariances) {
  Tensor w = tessera::empty({400, 600});
  nn::init::xavier_uniform_(w, 2.0);
  const double xb = 2.0 * std::sqrt(6.0 / 1000.0);
  double lo = 1, hi = -1, sum2 = 0;
  for (double v : values(w)) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -xb);
  EXPECT_LE(hi, xb);
  EXPECT_LT(hi, xb);
  EXPECT_GT(hi, 0.99 * xb);
  nn::init::kaiming_normal_(w, 0.0, nn::init::FanMode::FanOut, "relu");
  const std::vector<double> k = values(w);
  for (double v : k) sum2 += v * v;
  const double want = 2.0 / 400.0;  // gain^2 / fan_out
  EXPECT_NEAR(sum2 / static_cast<double>(k.size()), want, 0.02 * want);
  nn::init::zeros_(w);
  EXPECT_EQ(values(w.sum())[0], 0.0);
  EXPECT_FALSE(w.requires_grad());
}

// --- Layers against float64 references ---------------------------------------

TEST(Layers, LinearAndBilinear) {
  nn::Linear lin(3, 2);
  const Tensor x = randn({4, 3}, 6);
  const auto xv = values(x), w = values(lin.weight), b = values(lin.bias);
  std::vector<double> want(8);
  for (int n = 0; n < 4; ++n)
    for (int o = 0; o < 2; ++o) {
      double acc = b[o];
      for (int i = 0; i < 3; ++i) acc += xv[n * 3 + i] * w[o * 3 + i];
      want[n * 2 + o] = acc;
    }
  expect_near_all(values(lin(x)), want, 1e-6, "linear");

  nn::Bilinear bil(3, 2, 4);
  const Tensor x2 = randn({5, 2}, 7);
  const Tensor x1 = randn({5, 3}, 8);
  const auto a = values(x1), c = values(x2), bw = values(bil.weight), bb = values(bil.bias);
  std::vector<double> want2(20);
  for (int n = 0; n < 5; ++n)
    for (int o = 0; o < 4; ++o) {
      double acc = bb[o];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j) acc += a[n * 3 + i] * bw[(o * 3 + i) * 2 + j] * c[n * 2 + j];
      want2[n * 4 + o] = acc;
    }
  expect_near_all(values(bil(x1, x2)), want2, 1e-5, "bilinear");
  EXPECT_EQ(bil(x1.reshape({5, 1, 3}), x2.reshape({5, 1, 2})).sizes(), tessera::Dims({5, 1, 4}));
}

TEST(Layers, Conv2dWithStridePaddingGroupsAndConvTranspose2d) {
  nn::Conv2d conv(4, 6, {3, 2}, {2, 1}, {1, 0}, {1}, 2);
  EXPECT_EQ(conv.weight.sizes(), tessera::Dims({6, 2, 3, 2}));
  const Tensor x = randn({2, 4, 5, 4}, 9);
  const Tensor y = conv(x);
  // out = floor((5 + 2 - 3) / 2) + 1 = 3, (4 - 2) / 1 + 1 = 3
  ASSERT_EQ(y.sizes(), tessera::Dims({2, 6, 3, 3}));
  const auto xv = values(x), w = values(conv.weight), b = values(conv.bias), yv = values(y);
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 6; ++o)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const int g = o / 3;
          double acc = b[o];
          for (int c = 0; c < 2; ++c)
            for (int ki = 0; ki < 3; ++ki)
              for (int kj = 0; kj < 2; ++kj) {
                const int r = i * 2 - 1 + ki, s = j + kj;
                if (r < 0 || r >= 5) continue;
                acc +=
                    xv[((n * 4 + g * 2 + c) * 5 + r) * 4 + s] * w[((o * 2 + c) * 3 + ki) * 2 + kj];
              }
          EXPECT_NEAR(yv[((n * 6 + o) * 3 + i) * 3 + j], acc, 1e-5) << n << o << i << j;
        }

  nn::ConvTranspose2d tconv(2, 3, {2}, {2});
  EXPECT_EQ(tconv.weight.sizes(), tessera::Dims({2, 3, 2, 2}));
  const Tensor u = randn({1, 2, 2, 3}, 10);
  const Tensor t = tconv(u);
  ASSERT_EQ(t.sizes(), tessera::Dims({1, 3, 4, 6}));
  const auto uv = values(u), tw = values(tconv.weight), tb = values(tconv.bias), tv = values(t);
  std::vector<double> want(3 * 4 * 6);
  for (int o = 0; o < 3; ++o)
    for (int k = 0; k < 24; ++k) want[o * 24 + k] = tb[o];
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int o = 0; o < 3; ++o)
          for (int ki = 0; ki < 2; ++ki)
            for (int kj = 0; kj < 2; ++kj)
              want[(o * 4 + i * 2 + ki) * 6 + j * 2 + kj] +=
                  uv[(c * 2 + i) * 3 + j] * tw[((c * 3 + o) * 2 + ki) * 2 + kj];
  expect_near_all(tv, want, 1e-5, "conv_transpose2d");
  EXPECT_EQ(conv.extra_repr(), "4, 6, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), groups=2");
}

TEST(Layers, BatchNormTrainsRunningStatisticsAndUsesThemInEval) {
  nn::BatchNorm1d bn(2);
  const std::vector<double> xs = {1, 10, 2, 20, 4, 40, 9, 90};  // (4, 2)
  const Tensor x = tessera::tensor(xs, {4, 2}, kFloat32);
  const Tensor y = bn(x);
  double mean[2], var[2];
  for (int c = 0; c < 2; ++c) {
    mean[c] = 0;
    for (int n = 0; n < 4; ++n) mean[c] += xs[n * 2 + c] / 4;
    var[c] = 0;
    for (int n = 0; n < 4; ++n) var[c] += (xs[n * 2 + c] - mean[c]) * (xs[n * 2 + c] - mean[c]);
  }
  std::vector<double> want(8);
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 2; ++c)
      want[n * 2 + c] = (xs[n * 2 + c] - mean[c]) / std::sqrt(var[c] / 4 + 1e-5);
  expect_near_all(values(y), want, 1e-5, "batch statistics");
  // running = 0.9 * running + 0.1 * batch (unbiased variance)
  expect_near_all(values(bn.running_mean), {0.1 * mean[0], 0.1 * mean[1]}, 1e-6, "running_mean");
  expect_near_all(values(bn.running_var), {0.9 + 0.1 * var[0] / 3, 0.9 + 0.1 * var[1] / 3}, 1e-6,
                  "running_var");
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.eval();
  const auto rm = values(bn.running_mean), rv = values(bn.running_var);
  std::vector<double> want_eval(8);
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 2; ++c)
      want_eval[n * 2 + c] = (xs[n * 2 + c] - rm[c]) / std::sqrt(rv[c] + 1e-5);
  expect_near_all(values(bn(x)), want_eval, 1e-5, "eval");
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);

  // momentum=None: a cumulative average (two batches -> their mean).
  nn::BatchNorm2d cum(1, 1e-5, std::nullopt);
  cum(tessera::full({2, 1, 1, 1}, 2.0));
  cum(tessera::full({2, 1, 1, 1}, 4.0));
  expect_near_all(values(cum.running_mean), {3.0}, 1e-6, "cumulative");
  EXPECT_THROW(cum(tessera::zeros({2, 1})), tessera::Error);
  EXPECT_EQ(names_of(cum.state_dict()),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                      "num_batches_tracked"}));
}

TEST(Layers, LayerGroupAndRmsNorm) {
  const Tensor x = randn({3, 4}, 11);
  const auto xv = values(x);
  nn::LayerNorm ln(4);
  nn::init::normal_(ln.weight);
  nn::init::normal_(ln.bias);
  nn::RMSNorm rms(4, 1e-6);
  nn::init::normal_(rms.weight);
  const auto lw = values(ln.weight), lb = values(ln.bias), rw = values(rms.weight);
  std::vector<double> want_ln(12), want_rms(12);
  for (int r = 0; r < 3; ++r) {
    double mean = 0, ms = 0;
    for (int c = 0; c < 4; ++c) mean += xv[r * 4 + c] / 4;
    double var = 0;
    for (int c = 0; c < 4; ++c) {
      var += (xv[r * 4 + c] - mean) * (xv[r * 4 + c] - mean) / 4;
      ms += xv[r * 4 + c] * xv[r * 4 + c] / 4;
    }
    for (int c = 0; c < 4; ++c) {
      want_ln[r * 4 + c] = (xv[r * 4 + c] - mean) / std::sqrt(var + 1e-5) * lw[c] + lb[c];
      want_rms[r * 4 + c] = xv[r * 4 + c] / std::sqrt(ms + 1e-6) * rw[c];
    }
  }
  expect_near_all(values(ln(x)), want_ln, 1e-5, "layer_norm");
  expect_near_all(values(rms(x)), want_rms, 1e-5, "rms_norm");

  nn::GroupNorm gn(2, 4);
  const Tensor g = randn({2, 4, 3}, 12);
  const auto gv = values(g);
  std::vector<double> want_gn(24);
  for (int n = 0; n < 2; ++n)
    for (int grp = 0; grp < 2; ++grp) {
      double mean = 0, var = 0;
      for (int k = 0; k < 6; ++k) mean += gv[n * 12 + grp * 6 + k] / 6;
      for (int k = 0; k < 6; ++k)
        var += (gv[n * 12 + grp * 6 + k] - mean) * (gv[n * 12 + grp * 6 + k] - mean) / 6;
      for (int k = 0; k < 6; ++k)
        want_gn[n * 12 + grp * 6 + k] = (gv[n * 12 + grp * 6 + k] - mean) / std::sqrt(var + 1e-5);
    }
  expect_near_all(values(gn(g)), want_gn, 1e-5, "group_norm");
  EXPECT_THROW(nn::GroupNorm(3, 4), tessera::Error);
}

TEST(Layers, EmbeddingPoolingAndActivations) {
  nn::Embedding emb(5, 3, 1);
  EXPECT_EQ(values(emb.weight.select(0, 1)), std::vector<double>(3, 0.0));
  const Tensor idx = tessera::tensor({4, 1, 4}, tessera::kInt64);
  const auto rows = values(emb(idx)), w = values(emb.weight);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(rows[k], w[12 + k]);
    EXPECT_EQ(rows[3 + k], 0.0);
    EXPECT_EQ(rows[6 + k], w[12 + k]);
  }
  EXPECT_THROW(nn::Embedding(5, 3, 5), tessera::Error);

  const Tensor img = tessera::arange(16, kFloat32).reshape({1, 1, 4, 4});
  EXPECT_EQ(values(nn::MaxPool2d({2})(img)), (std::vector<double>{5, 7, 13, 15}));
  EXPECT_EQ(values(nn::AvgPool2d({2})(img)), (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  EXPECT_EQ(values(nn::AdaptiveAvgPool2d({1})(img)), (std::vector<double>{7.5}));

  const Tensor v = tessera::tensor({-2.0f, 0.5f, 3.0f});
  const std::vector<double> in = {-2.0, 0.5, 3.0};
  std::vector<double> relu, gelu, silu, tanh_, sig;
  for (double a : in) {
    relu.push_back(std::max(a, 0.0));
    gelu.push_back(0.5 * a * (1 + std::erf(a / std::sqrt(2.0))));
    silu.push_back(a / (1 + std::exp(-a)));
    tanh_.push_back(std::tanh(a));
    sig.push_back(1 / (1 + std::exp(-a)));
  }
  expect_near_all(values(nn::ReLU()(v)), relu, 1e-6, "relu");
  expect_near_all(values(nn::GELU()(v)), gelu, 1e-6, "gelu");
  expect_near_all(values(nn::SiLU()(v)), silu, 1e-6, "silu");
  expect_near_all(values(nn::Tanh()(v)), tanh_, 1e-6, "tanh");
  expect_near_all(values(nn::Sigmoid()(v)), sig, 1e-6, "sigmoid");
  const double z = std::exp(-2.0) + std::exp(0.5) + std::exp(3.0);
  expect_near_all(values(nn::Softmax(0)(v)),
                  {std::exp(-2.0) / z, std::exp(0.5) / z, std::exp(3.0) / z}, 1e-6, "softmax");
  EXPECT_THROW(nn::GELU("fast"), tessera::Error);
}

// Multi-head attention by hand in float64 from the module's parameters.
std::vector<double> reference_mha(nn::MultiheadAttention& mha, const std::vector<double>& x, int L,
                                  int N, const std::vector<bool>& key_masked /* N*L */,
                                  std::vector<double>* avg_weights) {
  const int E = static_cast<int>(mha.embed_dim), H = static_cast<int>(mha.num_heads), D = E / H;
  const auto w = values(mha.in_proj_weight), b = values(mha.in_proj_bias);
  const auto ow = values(mha.out_proj->weight), ob = values(mha.out_proj->bias);
  // x: (L, N, E). proj[part][l][n][e]
  auto proj = [&](int part, int l, int n, int e) {
    double acc = b[part * E + e];
    for (int k = 0; k < E; ++k) acc += x[(l * N + n) * E + k] * w[(part * E + e) * E + k];
    return acc;
  };
  std::vector<double> ctx(L * N * E, 0.0);
  if (avg_weights != nullptr) avg_weights->assign(N * L * L, 0.0);
  for (int n = 0; n < N; ++n)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < L; ++i) {
        std::vector<double> s(L);
        double mx = -1e300;
        for (int j = 0; j < L; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += proj(0, i, n, h * D + d) * proj(1, j, n, h * D + d);
          s[j] = key_masked.empty() || !key_masked[n * L + j] ? dot / std::sqrt(D) : -INFINITY;
          mx = std::max(mx, s[j]);
        }
        double z = 0;
        for (int j = 0; j < L; ++j) z += s[j] = std::exp(s[j] - mx);
        for (int j = 0; j < L; ++j) {
          s[j] /= z;
          if (avg_weights != nullptr) (*avg_weights)[(n * L + i) * L + j] += s[j] / H;
          for (int d = 0; d < D; ++d)
            ctx[(i * N + n) * E + h * D + d] += s[j] * proj(2, j, n, h * D + d);
        }
      }
  std::vector<double> out(L * N * E);
  for (int r = 0; r < L * N; ++r)
    for (int e = 0; e < E; ++e) {
      double acc = ob[e];
      for (int k = 0; k < E; ++k) acc += ctx[r * E + k] * ow[e * E + k];
      out[r * E + e] = acc;
    }
  return out;
}

TEST(Layers, MultiheadAttentionMatchesItsDefinition) {
  nn::MultiheadAttention mha(8, 2);
  EXPECT_EQ(names_of(mha.named_parameters()),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                      "out_proj.bias"}));
  EXPECT_EQ(values(mha.in_proj_bias), std::vector<double>(24, 0.0));
  nn::init::normal_(mha.in_proj_bias, 0.0, 0.1);  // exercise the biases too
  nn::init::normal_(mha.out_proj->bias, 0.0, 0.1);
  const int L = 3, N = 2;
  const Tensor x = randn({L, N, 8}, 13);
  const auto xv = values(x);
  std::vector<double> weights;
  const auto want = reference_mha(mha, xv, L, N, {}, &weights);
  auto [out, w] = mha(x, x, x);
  expect_near_all(values(out), want, 1e-5, "mha output");
  expect_near_all(values(w), weights, 1e-5, "mha averaged weights");
  EXPECT_EQ(w.sizes(), tessera::Dims({N, L, L}));
  // Without weights (the sdpa path) and batch_first give the same numbers.
  auto [fast, none] = mha(x, x, x, Tensor(), false);
  EXPECT_FALSE(none.defined());
  expect_near_all(values(fast), want, 1e-5, "mha sdpa path");

  // key_padding_mask: batch 0 ignores key 2, batch 1 ignores key 0.
  const std::vector<bool> masked = {false, false, true, true, false, false};
  const Tensor kpm =
      tessera::tensor({false, false, true, true, false, false}, {N, L}, tessera::kBool);
  std::vector<double> mw;
  const auto want_masked = reference_mha(mha, xv, L, N, masked, &mw);
  auto [mo, mwt] = mha(x, x, x, kpm);
  expect_near_all(values(mo), want_masked, 1e-5, "masked output");
  expect_near_all(values(mwt), mw, 1e-5, "masked weights");
  EXPECT_EQ(values(mwt.select(0, 0).select(1, 2)), std::vector<double>(3, 0.0));
  auto [mfast, unused] = mha(x, x, x, kpm, false);
  expect_near_all(values(mfast), want_masked, 1e-5, "masked sdpa path");
  EXPECT_THROW(nn::MultiheadAttention(8, 3), tessera::Error);
}

TEST(Layers, TransformerEncoderLayerStructureAndBothNormOrders) {
  for (bool norm_first : {false, true}) {
    nn::TransformerEncoderLayer layer(8, 2, 16, 0.1, "gelu", 1e-5, true, norm_first);
    EXPECT_EQ(names_of(layer.named_children()),
              (std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1",
                                        "norm2", "dropout1", "dropout2"}));
    layer.eval();
    const Tensor x = randn({2, 3, 8}, 14);  // batch_first
    // The layer's definition, composed from its own submodules.
    auto sa = [&](const Tensor& t) { return (*layer.self_attn)(t, t, t, Tensor(), false).first; };
    auto ff = [&](const Tensor& t) { return (*layer.linear2)(tessera::gelu((*layer.linear1)(t))); };
    Tensor want;
    if (norm_first) {
      const Tensor h = x + sa((*layer.norm1)(x));
      want = h + ff((*layer.norm2)(h));
    } else {
      const Tensor h = (*layer.norm1)(x + sa(x));
      want = (*layer.norm2)(h + ff(h));
    }
    const Tensor got = layer(x);
    EXPECT_EQ(got.sizes(), tessera::Dims({2, 3, 8}));
    expect_near_all(values(got), values(want), 1e-6, norm_first ? "norm_first" : "post-norm");
    // Trains: gradients reach the first projection.
    layer.train();
    layer(x).sum().backward();
    EXPECT_TRUE(layer.self_attn->in_proj_weight.grad().defined());
  }
  EXPECT_THROW(nn::TransformerEncoderLayer(8, 2, 16, 0.1, "tanh"), tessera::Error);
}

}  // namespace
