// Tests of tessera/optim/lr_scheduler.hpp and tessera/nn/utils/clip_grad.hpp.
//
// Schedulers replay golden/lr_golden.json (PyTorch 1.13's sequences, made by
// golden/gen_lr_golden.py): the same scheduler over an optimizer with the
// same two param groups must give each group's lr and momentum (or beta1)
// after construction and after every step, within 1e-12 relative. A
// state_dict round trip must resume the golden sequence mid-way. Gradient
// clipping is checked against float64 arithmetic done here on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/nn/utils/clip_grad.hpp"
#include "tessera/optim.hpp"
#include "tessera/optim/lr_scheduler.hpp"
#include "tessera/tessera.hpp"

#ifndef TESSERA_LR_GOLDEN
#define TESSERA_LR_GOLDEN TESSERA_TEST_SOURCE_DIR "/frontends/cpp/tests/golden/lr_golden.json"
#endif

namespace {

using json = nlohmann::json;
using tessera::Tensor;
namespace optim = tessera::optim;
namespace utils = tessera::nn::utils;

const json& golden() {
  static const json doc = [] {
    std::ifstream in(TESSERA_LR_GOLDEN);
    if (!in) throw std::runtime_error("cannot open " + std::string(TESSERA_LR_GOLDEN));
    return json::parse(in);
  }();
  return doc;
}

bool close(double a, double b, double rel = 1e-12) {
  if (a == b) return true;
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

Tensor leaf(int64_t n = 2) { return tessera::zeros({n}, tessera::kFloat64).requires_grad_(); }

// The optimizer of a golden configuration: two groups with the recorded lr.
std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& kind) {
  const auto& lrs = golden()["group_lrs"][kind];
  std::vector<optim::ParamGroup> groups;
  for (const auto& lr : lrs)
    groups.emplace_back(std::vector<Tensor>{leaf()}, optim::Options{{"lr", lr.get<double>()}});
  if (kind == "SGD") {
    optim::SGDOptions o;
    o.lr = 0.1;
    o.momentum = 0.9;
    return std::make_unique<optim::SGD>(std::move(groups), o);
  }
  optim::AdamOptions o;
  o.lr = 1e-3;
  o.beta1 = 0.9;
  o.beta2 = 0.999;
  return std::make_unique<optim::Adam>(std::move(groups), o);
}

optim::GroupValues group_values(const json& v) {
  if (v.is_array()) return optim::GroupValues(v.get<std::vector<double>>());
  return optim::GroupValues(v.get<double>());
}

std::shared_ptr<optim::LRScheduler> build(const json& spec, optim::Optimizer& opt) {
  const std::string type = spec["type"];
  if (type == "StepLR")
    return std::make_shared<optim::StepLR>(opt, spec["step_size"].get<int64_t>(),
                                           spec["gamma"].get<double>());
  if (type == "MultiStepLR")
    return std::make_shared<optim::MultiStepLR>(opt, spec["milestones"].get<std::vector<int64_t>>(),
                                                spec["gamma"].get<double>());
  if (type == "ExponentialLR")
    return std::make_shared<optim::ExponentialLR>(opt, spec["gamma"].get<double>());
  if (type == "CosineAnnealingLR")
    return std::make_shared<optim::CosineAnnealingLR>(opt, spec["T_max"].get<int64_t>(),
                                                      spec["eta_min"].get<double>());
  if (type == "LinearLR")
    return std::make_shared<optim::LinearLR>(opt, spec["start_factor"].get<double>(),
                                             spec["end_factor"].get<double>(),
                                             spec["total_iters"].get<int64_t>());
  if (type == "SequentialLR") {
    std::vector<std::shared_ptr<optim::LRScheduler>> children;
    for (const auto& child : spec["schedulers"]) children.push_back(build(child, opt));
    return std::make_shared<optim::SequentialLR>(opt, std::move(children),
                                                 spec["milestones"].get<std::vector<int64_t>>());
  }
  if (type == "OneCycleLR") {
    optim::OneCycleLROptions o;
    o.max_lr = group_values(spec["max_lr"]);
    if (spec.contains("total_steps")) o.total_steps = spec["total_steps"].get<int64_t>();
    if (spec.contains("epochs")) o.epochs = spec["epochs"].get<int64_t>();
    if (spec.contains("steps_per_epoch"))
      o.steps_per_epoch = spec["steps_per_epoch"].get<int64_t>();
    if (spec.contains("pct_start")) o.pct_start = spec["pct_start"];
    if (spec.contains("anneal_strategy")) o.anneal_strategy = spec["anneal_strategy"];
    if (spec.contains("cycle_momentum")) o.cycle_momentum = spec["cycle_momentum"];
    if (spec.contains("base_momentum")) o.base_momentum = group_values(spec["base_momentum"]);
    if (spec.contains("max_momentum")) o.max_momentum = group_values(spec["max_momentum"]);
    if (spec.contains("div_factor")) o.div_factor = spec["div_factor"];
    if (spec.contains("final_div_factor")) o.final_div_factor = spec["final_div_factor"];
    if (spec.contains("three_phase")) o.three_phase = spec["three_phase"];
    return std::make_shared<optim::OneCycleLR>(opt, o);
  }
  throw std::runtime_error("unknown scheduler type " + type);
}

std::unique_ptr<optim::ReduceLROnPlateau> build_plateau(const json& spec, optim::Optimizer& opt) {
  optim::ReduceLROnPlateauOptions o;
  o.mode = spec["mode"];
  o.factor = spec["factor"];
  o.patience = spec["patience"];
  o.threshold = spec["threshold"];
  o.threshold_mode = spec["threshold_mode"];
  o.cooldown = spec["cooldown"];
  if (spec.contains("min_lr")) o.min_lr = group_values(spec["min_lr"]);
  if (spec.contains("eps")) o.eps = spec["eps"];
  return std::make_unique<optim::ReduceLROnPlateau>(opt, o);
}

// Compares the groups' lr and momentum (beta1 for Adam) with row `step`.
void expect_row(const json& config, const optim::Optimizer& opt, size_t step) {
  const std::string key = config["optimizer"] == "Adam" ? "beta1" : "momentum";
  const auto& groups = opt.param_groups();
  ASSERT_EQ(groups.size(), config["lr"][step].size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const double lr = config["lr"][step][g], momentum = config["momentum"][step][g];
    EXPECT_PRED2([](double a, double b) { return close(a, b); }, groups[g].lr(), lr)
        << "lr of group " << g << " after step " << step;
    EXPECT_PRED2([](double a, double b) { return close(a, b); }, groups[g].get(key), momentum)
        << key << " of group " << g << " after step " << step;
  }
}

void expect_last_lr(const json& config, const std::vector<double>& last, size_t step) {
  if (!config.contains("last_lr")) return;
  const auto want = config["last_lr"][step].get<std::vector<double>>();
  ASSERT_EQ(last.size(), want.size());
  for (size_t g = 0; g < want.size(); ++g)
    EXPECT_PRED2([](double a, double b) { return close(a, b); }, last[g], want[g])
        << "get_last_lr()[" << g << "] after step " << step;
}

// Every configuration of the golden file, step by step.
TEST(LRSchedulerGolden, MatchesPyTorchSequences) {
  const size_t steps = golden()["steps"];
  ASSERT_GE(golden()["configs"].size(), 15u);
  for (const auto& config : golden()["configs"]) {
    SCOPED_TRACE(config["name"].get<std::string>());
    auto opt = make_optimizer(config["optimizer"]);
    const auto& spec = config["scheduler"];
    if (spec["type"] == "ReduceLROnPlateau") {
      auto s = build_plateau(spec, *opt);
      expect_row(config, *opt, 0);
      for (size_t i = 0; i < steps; ++i) {
        s->step(config["metrics"][i].get<double>());
        expect_row(config, *opt, i + 1);
      }
      continue;
    }
    auto s = build(spec, *opt);
    expect_row(config, *opt, 0);
    expect_last_lr(config, s->get_last_lr(), 0);
    for (size_t i = 0; i < steps; ++i) {
      s->step();
      expect_row(config, *opt, i + 1);
      expect_last_lr(config, s->get_last_lr(), i + 1);
    }
  }
}

// Saving the optimizer and scheduler after `k` steps and loading both into
// fresh ones (scheduler built with the same arguments, optimizer state
// loaded after it, as PyTorch's recipe) resumes the golden sequence.
TEST(LRSchedulerGolden, StateDictRoundTripResumes) {
  const size_t steps = golden()["steps"];
  for (const size_t k : {size_t{1}, size_t{7}, size_t{13}}) {
    for (const auto& config : golden()["configs"]) {
      SCOPED_TRACE(config["name"].get<std::string>() + " resumed after " + std::to_string(k));
      const auto& spec = config["scheduler"];
      const bool plateau = spec["type"] == "ReduceLROnPlateau";
      auto opt = make_optimizer(config["optimizer"]);
      std::shared_ptr<optim::LRScheduler> s;
      std::unique_ptr<optim::ReduceLROnPlateau> p;
      if (plateau)
        p = build_plateau(spec, *opt);
      else
        s = build(spec, *opt);
      for (size_t i = 0; i < k; ++i) {
        if (plateau)
          p->step(config["metrics"][i].get<double>());
        else
          s->step();
      }
      const optim::OptimizerStateDict opt_state = opt->state_dict();
      const optim::LRSchedulerState state = plateau ? p->state_dict() : s->state_dict();
      s.reset();
      p.reset();
      opt.reset();

      auto opt2 = make_optimizer(config["optimizer"]);
      std::shared_ptr<optim::LRScheduler> s2;
      std::unique_ptr<optim::ReduceLROnPlateau> p2;
      if (plateau)
        p2 = build_plateau(spec, *opt2);
      else
        s2 = build(spec, *opt2);
      opt2->load_state_dict(opt_state);
      if (plateau) {
        p2->load_state_dict(state);
      } else {
        s2->load_state_dict(state);
        expect_last_lr(config, s2->get_last_lr(), k);
      }
      expect_row(config, *opt2, k);
      for (size_t i = k; i < steps; ++i) {
        if (plateau) {
          p2->step(config["metrics"][i].get<double>());
        } else {
          s2->step();
          expect_last_lr(config, s2->get_last_lr(), i + 1);
        }
        expect_row(config, *opt2, i + 1);
      }
    }
  }
}

optim::SGD two_group_sgd() {
  return optim::SGD(
      {optim::ParamGroup({leaf()}, {{"lr", 0.1}}), optim::ParamGroup({leaf()}, {{"lr", 0.01}})},
      [] {
        optim::SGDOptions o;
        o.momentum = 0.9;
        return o;
      }());
}

TEST(LRScheduler, RecordsInitialLrAndBaseLrs) {
  optim::SGD opt = two_group_sgd();
  optim::LinearLR s(opt, 0.5, 1.0, 4);
  EXPECT_EQ(opt.param_groups()[0].get("initial_lr"), 0.1);
  EXPECT_EQ(opt.param_groups()[1].get("initial_lr"), 0.01);
  EXPECT_EQ(s.base_lrs(), (std::vector<double>{0.1, 0.01}));
  EXPECT_EQ(s.last_epoch(), 0);
  EXPECT_EQ(opt.param_groups()[0].lr(), 0.1 * 0.5);  // the constructor's step
  // A second scheduler keeps the recorded initial_lr (setdefault).
  optim::StepLR s2(opt, 2);
  EXPECT_EQ(s2.base_lrs(), (std::vector<double>{0.1, 0.01}));
}

TEST(LRScheduler, ResumingRequiresInitialLr) {
  optim::SGD opt = two_group_sgd();
  EXPECT_THROW(optim::StepLR(opt, 2, 0.1, /*last_epoch=*/4), tessera::Error);
  opt.param_groups()[0].set("initial_lr", 0.2);
  opt.param_groups()[1].set("initial_lr", 0.02);
  optim::StepLR s(opt, 2, 0.5, 4);  // resumes at epoch 5 (not a multiple of 2): lr unchanged
  EXPECT_EQ(s.last_epoch(), 5);
  EXPECT_EQ(opt.param_groups()[0].lr(), 0.1);
  s.step();  // epoch 6
  EXPECT_EQ(opt.param_groups()[0].lr(), 0.05);
  EXPECT_THROW(optim::StepLR(opt, 2, 0.1, -2), tessera::Error);
}

TEST(LRScheduler, ClosedFormStepJumpsToEpoch) {
  optim::SGD opt = two_group_sgd();
  optim::StepLR s(opt, 3, 0.5);
  s.step(7);  // 0.1 * 0.5^(7 // 3)
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].lr(), 0.025);
  EXPECT_EQ(s.last_epoch(), 7);
}

TEST(LRScheduler, RejectsInvalidArguments) {
  optim::SGD opt = two_group_sgd();
  EXPECT_THROW(optim::StepLR(opt, 0), tessera::Error);
  EXPECT_THROW(optim::CosineAnnealingLR(opt, 0), tessera::Error);
  EXPECT_THROW(optim::LinearLR(opt, 1.5), tessera::Error);
  EXPECT_THROW(optim::LinearLR(opt, 0.5, -0.1), tessera::Error);
  EXPECT_THROW(optim::LinearLR(opt, 0.5, 1.0, 0), tessera::Error);

  optim::OneCycleLROptions o;
  o.max_lr = 0.1;
  EXPECT_THROW(optim::OneCycleLR(opt, o), tessera::Error);  // no total_steps nor epochs
  o.total_steps = 0;
  EXPECT_THROW(optim::OneCycleLR(opt, o), tessera::Error);
  o.total_steps.reset();
  o.epochs = 2;
  EXPECT_THROW(optim::OneCycleLR(opt, o), tessera::Error);  // no steps_per_epoch
  o.steps_per_epoch = 5;
  o.pct_start = 1.5;
  EXPECT_THROW(optim::OneCycleLR(opt, o), tessera::Error);
  o.pct_start = 0.3;
  o.anneal_strategy = "cosine";
  EXPECT_THROW(optim::OneCycleLR(opt, o), tessera::Error);
  o.anneal_strategy = "cos";
  o.max_lr = std::vector<double>{0.1, 0.2, 0.3};
  EXPECT_THROW(optim::OneCycleLR(opt, o), tessera::Error);

  optim::ReduceLROnPlateauOptions r;
  r.factor = 1.0;
  EXPECT_THROW(optim::ReduceLROnPlateau(opt, r), tessera::Error);
  r = {};
  r.mode = "minimum";
  EXPECT_THROW(optim::ReduceLROnPlateau(opt, r), tessera::Error);
  r = {};
  r.threshold_mode = "relative";
  EXPECT_THROW(optim::ReduceLROnPlateau(opt, r), tessera::Error);
  r = {};
  r.min_lr = std::vector<double>{0.0};
  EXPECT_THROW(optim::ReduceLROnPlateau(opt, r), tessera::Error);
}

TEST(LRScheduler, OneCycleNeedsMomentumAndStopsAfterTotalSteps) {
  optim::Adagrad adagrad(std::vector<Tensor>{leaf()});
  optim::OneCycleLROptions o;
  o.max_lr = 0.1;
  o.total_steps = 10;
  EXPECT_THROW(optim::OneCycleLR(adagrad, o), tessera::Error);
  o.cycle_momentum = false;
  optim::OneCycleLR s(adagrad, o);
  EXPECT_DOUBLE_EQ(adagrad.param_groups()[0].lr(), 0.1 / 25);
  for (int i = 0; i < 9; ++i) s.step();
  EXPECT_DOUBLE_EQ(adagrad.param_groups()[0].lr(), 0.1 / 25 / 1e4);  // min_lr at the end
  s.step();  // PyTorch allows last_epoch == total_steps (extrapolating), not beyond
  EXPECT_THROW(s.step(), tessera::Error);
}

TEST(LRScheduler, SequentialLRChecksItsSchedulers) {
  optim::SGD opt = two_group_sgd();
  optim::SGD other = two_group_sgd();
  auto a = std::make_shared<optim::ExponentialLR>(opt, 0.9);
  auto b = std::make_shared<optim::ExponentialLR>(other, 0.9);
  EXPECT_THROW(optim::SequentialLR(opt, {a, b}, {3}), tessera::Error);
  auto c = std::make_shared<optim::StepLR>(opt, 2);
  EXPECT_THROW(optim::SequentialLR(opt, {a, c}, {3, 5}), tessera::Error);
  EXPECT_THROW(optim::SequentialLR(opt, {a, nullptr}, {3}), tessera::Error);
}

TEST(LRScheduler, LoadRefusesAnotherTypeOrShape) {
  optim::SGD opt = two_group_sgd();
  optim::StepLR step(opt, 2);
  optim::ExponentialLR expo(opt, 0.5);
  EXPECT_THROW(step.load_state_dict(expo.state_dict()), tessera::Error);
  optim::LRSchedulerState state = step.state_dict();
  state.lists["base_lrs"].pop_back();
  EXPECT_THROW(step.load_state_dict(state), tessera::Error);
  state = step.state_dict();
  state.values.erase("last_epoch");
  EXPECT_THROW(step.load_state_dict(state), tessera::Error);
}

// ---------------------------------------------------------------------------
// clip_grad_norm_ / clip_grad_value_
// ---------------------------------------------------------------------------

Tensor param_with_grad(const std::vector<double>& grad, tessera::Dtype dtype = tessera::kFloat64) {
  Tensor p = tessera::zeros({static_cast<int64_t>(grad.size())}, dtype).requires_grad_();
  p.set_grad(tessera::tensor(grad, dtype));
  return p;
}

std::vector<double> grad_of(const Tensor& p) {
  return p.grad().to(tessera::kFloat64).to_vector<double>();
}

// The p-norm of every value of `grads` together, in double on the host.
double host_norm(const std::vector<std::vector<double>>& grads, double p) {
  double acc = 0;
  for (const auto& g : grads)
    for (double v : g)
      acc = std::isinf(p) ? std::max(acc, std::fabs(v)) : acc + std::pow(std::fabs(v), p);
  return std::isinf(p) ? acc : std::pow(acc, 1.0 / p);
}

void expect_scaled(const std::vector<double>& got, const std::vector<double>& original, double coef,
                   double rel = 1e-14) {
  ASSERT_EQ(got.size(), original.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_PRED3([](double a, double b, double r) { return close(a, b, r); }, got[i],
                 original[i] * coef, rel)
        << "element " << i;
}

TEST(ClipGradNorm, TwoNormScalesEveryGradientInPlace) {
  const std::vector<double> g1{1.0, -2.0, 3.0}, g2{0.5, 4.0, -1.0, 2.0};
  Tensor p1 = param_with_grad(g1), p2 = param_with_grad(g2);
  Tensor no_grad = leaf(3);
  Tensor held = p1.grad();  // the same gradient tensor: changed in place
  const double total = host_norm({g1, g2}, 2.0);
  const double coef = 1.5 / (total + 1e-6);
  Tensor result = utils::clip_grad_norm_({p1, no_grad, p2}, 1.5);
  EXPECT_EQ(result.dim(), 0);
  EXPECT_PRED3([](double a, double b, double r) { return close(a, b, r); }, result.item<double>(),
               total, 1e-14);
  expect_scaled(grad_of(p1), g1, coef);
  expect_scaled(grad_of(p2), g2, coef);
  expect_scaled(held.to_vector<double>(), g1, coef);
  EXPECT_FALSE(no_grad.grad().defined());
}

TEST(ClipGradNorm, LeavesGradientsBelowTheBound) {
  const std::vector<double> g1{0.25, -0.5}, g2{1.0};
  Tensor p1 = param_with_grad(g1), p2 = param_with_grad(g2);
  const double total = utils::clip_grad_norm_({p1, p2}, 10.0).item<double>();
  EXPECT_PRED3([](double a, double b, double r) { return close(a, b, r); }, total,
               host_norm({g1, g2}, 2.0), 1e-14);
  EXPECT_EQ(grad_of(p1), g1);
  EXPECT_EQ(grad_of(p2), g2);
}

TEST(ClipGradNorm, InfinityAndOtherOrders) {
  const std::vector<double> g1{1.0, -7.0, 3.0}, g2{6.5, -2.0};
  {
    Tensor p1 = param_with_grad(g1), p2 = param_with_grad(g2);
    const double inf = std::numeric_limits<double>::infinity();
    const double total = utils::clip_grad_norm_({p1, p2}, 2.0, inf).item<double>();
    EXPECT_EQ(total, 7.0);
    expect_scaled(grad_of(p1), g1, 2.0 / (7.0 + 1e-6));
    expect_scaled(grad_of(p2), g2, 2.0 / (7.0 + 1e-6));
  }
  {
    Tensor p1 = param_with_grad(g1);  // one gradient: its own max-abs
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(utils::clip_grad_norm_(p1, 100.0, inf).item<double>(), 7.0);
    EXPECT_EQ(grad_of(p1), g1);
  }
  for (double order : {1.0, 3.0, 0.5}) {
    SCOPED_TRACE(order);
    Tensor p1 = param_with_grad(g1), p2 = param_with_grad(g2);
    const double want = host_norm({g1, g2}, order);
    const double total = utils::clip_grad_norm_({p1, p2}, 1.0, order).item<double>();
    EXPECT_PRED3([](double a, double b, double r) { return close(a, b, r); }, total, want, 1e-12);
    expect_scaled(grad_of(p1), g1, 1.0 / (want + 1e-6), 1e-12);
  }
}

TEST(ClipGradNorm, Float32Gradients) {
  const std::vector<double> g1{0.1, -0.2, 0.3, 0.4}, g2{2.0, -1.0};
  Tensor p1 = param_with_grad(g1, tessera::kFloat32), p2 = param_with_grad(g2, tessera::kFloat32);
  Tensor total = utils::clip_grad_norm_({p1, p2}, 0.5);
  EXPECT_EQ(total.dtype(), tessera::kFloat32);
  const double want = host_norm({g1, g2}, 2.0);
  EXPECT_PRED3([](double a, double b, double r) { return close(a, b, r); }, total.item<double>(),
               want, 1e-6);
  expect_scaled(grad_of(p1), g1, 0.5 / (want + 1e-6), 1e-6);
  expect_scaled(grad_of(p2), g2, 0.5 / (want + 1e-6), 1e-6);
}

TEST(ClipGradNorm, NoGradientsGiveZero) {
  Tensor a = leaf(), b = leaf();
  Tensor total = utils::clip_grad_norm_({a, b}, 1.0);
  EXPECT_EQ(total.dtype(), tessera::kFloat32);
  EXPECT_EQ(total.item<double>(), 0.0);
  EXPECT_EQ(utils::clip_grad_norm_(std::vector<Tensor>{}, 1.0).item<double>(), 0.0);
}

TEST(ClipGradNorm, NonFiniteNormThrowsOnlyWhenAsked) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> g1{1.0, nan}, g2{3.0, 4.0};
  Tensor p1 = param_with_grad(g1), p2 = param_with_grad(g2);
  EXPECT_THROW(utils::clip_grad_norm_({p1, p2}, 1.0, 2.0, true), tessera::Error);
  EXPECT_EQ(grad_of(p2), g2);  // untouched by the refused call
  Tensor inf_p = param_with_grad({std::numeric_limits<double>::infinity(), 1.0});
  EXPECT_THROW(utils::clip_grad_norm_(inf_p, 1.0, 2.0, true), tessera::Error);
  // Without the flag PyTorch scales by the NaN coefficient anyway.
  EXPECT_TRUE(std::isnan(utils::clip_grad_norm_({p1, p2}, 1.0).item<double>()));
  for (double v : grad_of(p2)) EXPECT_TRUE(std::isnan(v));
}

TEST(ClipGradValue, ClampsInPlaceAndSkipsAbsentGradients) {
  const std::vector<double> g1{-3.0, 0.5, 2.0, -0.25}, g2{10.0};
  Tensor p1 = param_with_grad(g1), p2 = param_with_grad(g2), none = leaf();
  Tensor held = p1.grad();
  utils::clip_grad_value_({p1, none, p2}, 1.0);
  const std::vector<double> want1{-1.0, 0.5, 1.0, -0.25};
  EXPECT_EQ(grad_of(p1), want1);
  EXPECT_EQ(held.to_vector<double>(), want1);
  EXPECT_EQ(grad_of(p2), (std::vector<double>{1.0}));
  EXPECT_FALSE(none.grad().defined());
  utils::clip_grad_value_(p1, 0.3);
  EXPECT_EQ(grad_of(p1), (std::vector<double>{-0.3, 0.3, 0.3, -0.25}));
}

}  // namespace
