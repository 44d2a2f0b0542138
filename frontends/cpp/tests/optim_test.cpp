// optim_test.cpp - tessera::optim against PyTorch: the TinyBlock model's
// (dropout off) from PyTorch's parameters gives PyTorch's logits, loss and
// gradients, and after 3 steps of each optimizer configuration PyTorch's
// parameters and losses (golden/train_golden.json, from
// golden/gen_train_golden.py with torch 1.13), all within 1e-5. Also the
// seed's optimizer facts (lazy AdamW state, set_to_none), param groups,
// state_dict round trips and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"
#include "tinyblock.hpp"

namespace {

namespace nn = tessera::nn;
namespace optim = tessera::optim;
using tessera::Tensor;

using tinyblock::TinyBlock;

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    std::ifstream f(TESSERA_TRAIN_GOLDEN);
    return nlohmann::json::parse(f);
  }();
  return g;
}

Tensor from_json(const nlohmann::json& j) {
  const auto values = j["values"].get<std::vector<double>>();
  const auto shape = j["shape"].get<std::vector<int64_t>>();
  return tessera::tensor(values, tessera::IntList(shape.data(), shape.size()), tessera::kFloat32);
}

void expect_close(const Tensor& actual, const std::vector<double>& expected,
                  const std::string& what) {
  const std::vector<double> a = actual.contiguous().to_vector<double>();
  ASSERT_EQ(a.size(), expected.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], expected[i], 1e-5 + 1e-5 * std::fabs(expected[i]))
        << what << " [" << i << "]";
}

// The golden model (PyTorch's initial parameters), dropout off.
std::shared_ptr<TinyBlock> golden_model() {
  auto model = std::make_shared<TinyBlock>();
  nn::StateDict state;
  for (const auto& [name, j] : golden()["params"].items()) state.emplace_back(name, from_json(j));
  state.emplace_back("temperature", tessera::scalar_tensor(2.0, tessera::kFloat32));
  model->load_state_dict(state);
  model->eval();
  return model;
}

Tensor batch_x() { return from_json(golden()["x"]); }
Tensor batch_target() {
  return tessera::tensor(golden()["target"].get<std::vector<int64_t>>(), tessera::kInt64);
}

TEST(TinyBlockGolden, LogitsLossAndGradientsMatchPyTorch) {
  auto model = golden_model();
  const Tensor logits = (*model)(batch_x());
  expect_close(logits, golden()["logits"].get<std::vector<double>>(), "logits");
  Tensor loss = tessera::cross_entropy(logits, batch_target());
  EXPECT_NEAR(loss.item<double>(), golden()["loss"].get<double>(), 1e-6);
  loss.backward();
  for (const auto& [name, p] : model->named_parameters())
    expect_close(p.grad(), golden()["grads"][name].get<std::vector<double>>(), name + ".grad");
}

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

void run_and_compare(const std::string& config, const MakeOptimizer& make) {
  SCOPED_TRACE(config);
  auto model = golden_model();
  auto opt = make(model->parameters());
  const Tensor x = batch_x(), target = batch_target();
  const auto& run = golden()["runs"][config];
  for (int k = 0; k < 3; ++k) {
    Tensor loss = tessera::cross_entropy((*model)(x), target);
    EXPECT_NEAR(loss.item<double>(), run["losses"][k].get<double>(), 1e-5) << "step " << k;
    loss.backward();
    opt->step();
    opt->zero_grad(true);
  }
  for (const auto& [name, p] : model->named_parameters())
    expect_close(p, run["params"][name].get<std::vector<double>>(), name);
}

TEST(TinyBlockGolden, ThreeStepsOfEachOptimizerMatchPyTorch) {
  run_and_compare("AdamW", [](std::vector<Tensor> p) {
    return std::make_unique<optim::AdamW>(std::move(p), optim::AdamWOptions{.lr = 0.01});
  });
  run_and_compare("AdamW_amsgrad", [](std::vector<Tensor> p) {
    return std::make_unique<optim::AdamW>(
        std::move(p), optim::AdamWOptions{.lr = 0.01, .weight_decay = 0.1, .amsgrad = true});
  });
  run_and_compare("Adam_l2", [](std::vector<Tensor> p) {
    return std::make_unique<optim::Adam>(
        std::move(p),
        optim::AdamOptions{.lr = 0.02, .beta1 = 0.8, .beta2 = 0.99, .weight_decay = 0.05});
  });
  run_and_compare("SGD", [](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(std::move(p), optim::SGDOptions{.lr = 0.1});
  });
  run_and_compare("SGD_momentum", [](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(
        std::move(p),
        optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01});
  });
  run_and_compare("SGD_nesterov", [](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(
        std::move(p), optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true});
  });
  run_and_compare("RMSprop", [](std::vector<Tensor> p) {
    return std::make_unique<optim::RMSprop>(std::move(p), optim::RMSpropOptions{.lr = 0.01});
  });
  run_and_compare("RMSprop_centered_momentum", [](std::vector<Tensor> p) {
    return std::make_unique<optim::RMSprop>(
        std::move(p),
        optim::RMSpropOptions{.lr = 0.01, .weight_decay = 0.01, .momentum = 0.5, .centered = true});
  });
  run_and_compare("Adagrad", [](std::vector<Tensor> p) {
    return std::make_unique<optim::Adagrad>(
        std::move(p),
        optim::AdagradOptions{
            .lr = 0.1, .lr_decay = 0.01, .weight_decay = 0.01, .initial_accumulator_value = 0.1});
  });
}

// The multi-tensor path (Note [Flat parameters]) gives PyTorch's numbers too,
// and bit for bit the per-parameter path's.
TEST(TinyBlockGolden, ForeachPathMatchesPyTorchAndThePerParameterPath) {
  run_and_compare("AdamW", [](std::vector<Tensor> p) {
    return std::make_unique<optim::AdamW>(std::move(p),
                                          optim::AdamWOptions{.lr = 0.01, .foreach = true});
  });
  run_and_compare("AdamW_amsgrad", [](std::vector<Tensor> p) {
    return std::make_unique<optim::AdamW>(
        std::move(p),
        optim::AdamWOptions{.lr = 0.01, .weight_decay = 0.1, .amsgrad = true, .foreach = true});
  });
  run_and_compare("Adam_l2", [](std::vector<Tensor> p) {
    return std::make_unique<optim::Adam>(
        std::move(p),
        optim::AdamOptions{
            .lr = 0.02, .beta1 = 0.8, .beta2 = 0.99, .weight_decay = 0.05, .foreach = true});
  });
  run_and_compare("SGD_momentum", [](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(
        std::move(p),
        optim::SGDOptions{
            .lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01, .foreach = true});
  });
  run_and_compare("SGD_nesterov", [](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(
        std::move(p),
        optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true, .foreach = true});
  });

  // Bit for bit against the per-parameter path, over 4 steps.
  auto a = golden_model(), b = golden_model();
  optim::AdamW per_param(a->parameters(), {.lr = 0.01, .amsgrad = true});
  optim::AdamW flat(b->parameters(), {.lr = 0.01, .amsgrad = true, .foreach = true});
  for (int k = 0; k < 4; ++k) {
    for (auto [m, o] : {std::pair<TinyBlock*, optim::Optimizer*>{a.get(), &per_param},
                        std::pair<TinyBlock*, optim::Optimizer*>{b.get(), &flat}}) {
      o->zero_grad();
      tessera::cross_entropy((*m)(batch_x()), batch_target()).backward();
      o->step();
    }
  }
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].second.to_vector<float>(), pb[i].second.to_vector<float>()) << pa[i].first;
    // The state looks the same: per-parameter entries shaped like the parameter.
    EXPECT_EQ(flat.state(pb[i].second).at("exp_avg").to_vector<float>(),
              per_param.state(pa[i].second).at("exp_avg").to_vector<float>());
    EXPECT_EQ(flat.state(pb[i].second).at("step").item<double>(), 4.0);
  }
  // The parameters became views of one buffer and kept their identity.
  EXPECT_TRUE(pb[0].second.is_same_storage(pb[5].second));
  EXPECT_TRUE(pb[0].second.is_same(b->up->weight));
}

// Counts the ops the dispatcher sees while alive, by name.
struct OpCounter {
  OpCounter() {
    tessera::check(tsr_runtime_set_op_observer(
        tessera::default_runtime(),
        [](const tsr_op* op, void* self) {
          ++static_cast<OpCounter*>(self)->by_name[tsr_op_name(op)];
        },
        this));
  }
  ~OpCounter() {
    tsr_status_free(tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr));
  }
  // Ops other than views (no kernel) and the gradients' gather copies.
  int64_t update_ops() const {
    int64_t n = 0;
    for (const auto& [name, count] : by_name)
      if (name != "reshape" && name != "slice.Tensor" && name != "copy_" && name != "cat")
        n += count;
    return n;
  }
  int64_t total() const {
    int64_t n = 0;
    for (const auto& [name, count] : by_name) n += count;
    return n;
  }
  std::map<std::string, int64_t> by_name;
};

// The foreach step's update runs a fixed number of ops whatever the
// parameter count; what grows is the gather of the gradients into one
// buffer (cat: one copy per parameter on the CPU plugin). The
// per-parameter path runs the whole update per parameter.
TEST(Optimizer, ForeachStepUpdatesEveryParameterInAFixedNumberOfOps) {
  struct Counts {
    int64_t update, copies, total;
  };
  auto ops_per_step = [](bool foreach, int layers) {
    nn::Sequential model;
    for (int k = 0; k < layers; ++k) model.push_back(std::make_shared<nn::Linear>(4, 4));
    optim::AdamW opt(model.parameters(), {.lr = 0.01, .foreach = foreach});
    const Tensor x = tessera::ones({2, 4});
    Counts last{};
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      model(x).sum().backward();
      OpCounter counter;
      opt.step();
      last = {counter.update_ops(), counter.by_name["copy_"], counter.total()};
    }
    return last;
  };
  const Counts flat8 = ops_per_step(true, 8), flat32 = ops_per_step(true, 32);
  const Counts per8 = ops_per_step(false, 8), per32 = ops_per_step(false, 32);
  EXPECT_EQ(flat8.update, flat32.update);
  EXPECT_LE(flat32.update, 16);
  EXPECT_EQ(flat32.copies, 64);  // the gather: one per parameter (2 per layer)
  EXPECT_GE(per32.update, 4 * per8.update - 4);
  EXPECT_GT(per32.update, 40 * flat32.update);
  EXPECT_GT(per32.total, 2 * flat32.total);
}

// TinyBlock: AdamW's state is created lazily, one entry per parameter
// with step, exp_avg and exp_avg_sq shaped like it; zero_grad(set_to_none)
// leaves .grad unset.
TEST(Seed2, AdamWStateIsLazyAndZeroGradSetsToNone) {
  auto model = golden_model();
  optim::AdamW opt(model->parameters(), {.lr = 0.01});
  EXPECT_EQ(opt.state_size(), 0u);
  tessera::cross_entropy((*model)(batch_x()), batch_target()).backward();
  opt.step();
  EXPECT_EQ(opt.state_size(), 6u);
  for (const Tensor& p : model->parameters()) {
    const optim::ParamState& s = opt.state(p);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s.at("step").item<double>(), 1.0);
    EXPECT_EQ(s.at("exp_avg").sizes(), p.sizes());
    EXPECT_EQ(s.at("exp_avg_sq").sizes(), p.sizes());
  }
  opt.zero_grad(true);
  for (const Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Optimizer, ParamGroupsTakeTheirOwnOptionsAndDefaults) {
  auto model = golden_model();
  const std::vector<double> down_before = model->down->weight.to_vector<double>();
  optim::SGD opt({optim::ParamGroup({model->up->weight, model->up->bias}),
                  optim::ParamGroup({model->down->weight}, {{"lr", 0.0}})},
                 {.lr = 0.1, .momentum = 0.9});
  EXPECT_EQ(opt.param_groups()[0].lr(), 0.1);
  EXPECT_EQ(opt.param_groups()[1].lr(), 0.0);
  EXPECT_EQ(opt.param_groups()[1].get("momentum"), 0.9);  // from the defaults
  tessera::cross_entropy((*model)(batch_x()), batch_target()).backward();
  const std::vector<double> g = model->up->bias.grad().to_vector<double>();
  const std::vector<double> b = model->up->bias.to_vector<double>();
  opt.step();
  EXPECT_EQ(model->down->weight.to_vector<double>(), down_before);  // lr 0
  // First momentum step: p - lr * g.
  const std::vector<double> after = model->up->bias.to_vector<double>();
  for (size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(after[i], b[i] - 0.1 * g[i], 1e-7);
  EXPECT_EQ(opt.state_size(), 3u);  // norm's parameters have no group, down has a grad
}

TEST(Optimizer, StateDictRoundTripResumesTrainingIdentically) {
  const Tensor x = batch_x(), target = batch_target();
  auto train_step = [&](TinyBlock& m, optim::Optimizer& o) {
    o.zero_grad();
    tessera::cross_entropy(m(x), target).backward();
    o.step();
  };
  auto a = golden_model();
  optim::Adam opt_a(a->parameters(), {.lr = 0.05, .amsgrad = true});
  train_step(*a, opt_a);
  train_step(*a, opt_a);

  auto b = std::make_shared<TinyBlock>();
  b->load_state_dict(a->state_dict());
  b->eval();
  optim::Adam opt_b(b->parameters(), {.lr = 0.5});
  opt_b.load_state_dict(opt_a.state_dict());
  EXPECT_EQ(opt_b.param_groups()[0].lr(), 0.05);
  EXPECT_EQ(opt_b.state_size(), 6u);
  train_step(*a, opt_a);
  train_step(*b, opt_b);
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_EQ(pa[i].second.to_vector<double>(), pb[i].second.to_vector<double>()) << pa[i].first;
  // The loaded state is a copy, not shared with the source.
  EXPECT_FALSE(
      opt_b.state(b->up->weight).at("exp_avg").is_same(opt_a.state(a->up->weight).at("exp_avg")));
}

TEST(Optimizer, StepWithClosureReturnsTheLoss) {
  auto model = golden_model();
  optim::SGD opt(model->parameters(), {.lr = 0.1});
  const Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = tessera::cross_entropy((*model)(batch_x()), batch_target());
    l.backward();
    return l;
  });
  EXPECT_NEAR(loss.item<double>(), golden()["loss"].get<double>(), 1e-6);
  // One plain SGD step: p - lr * grad, from PyTorch's initial values and gradients.
  const auto p0 = golden()["params"]["down.bias"]["values"].get<std::vector<double>>();
  const auto g0 = golden()["grads"]["down.bias"].get<std::vector<double>>();
  expect_close(model->down->bias, {p0[0] - 0.1 * g0[0], p0[1] - 0.1 * g0[1]},
               "down.bias after one step");
}

TEST(Optimizer, BadArgumentsAreRefusedWithTheirValue) {
  auto model = golden_model();
  auto message = [](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const tessera::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] {
              optim::SGD(model->parameters(), {.lr = -1});
            }).find("Invalid learning rate value: -1"),
            std::string::npos);
  EXPECT_NE(message([&] {
              optim::Adam(model->parameters(), {.beta2 = 1.0});
            }).find("Invalid beta parameter at index 1"),
            std::string::npos);
  EXPECT_NE(message([&] {
              optim::SGD(model->parameters(), {.lr = 0.1, .nesterov = true});
            }).find("Nesterov"),
            std::string::npos);
  EXPECT_NE(message([&] { optim::AdamW(std::vector<Tensor>{}); }).find("empty parameter list"),
            std::string::npos);
  EXPECT_NE(message([&] {
              optim::SGD(
                  {optim::ParamGroup({model->up->weight}), optim::ParamGroup({model->up->weight})});
            }).find("more than one parameter group"),
            std::string::npos);
  EXPECT_NE(message([&] {
              optim::SGD({optim::ParamGroup({model->up->weight}, {{"betas", 0.9}})});
            }).find("unknown option 'betas'"),
            std::string::npos);
}

}  // namespace
