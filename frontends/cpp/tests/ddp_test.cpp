// DistributedDataParallel on 2 ranks (ctest starts it through `tessera run
// -n 2`). The reference is a 1-rank run computed on every rank without any
// communication: the same initial parameters (rank 0's, as DDP broadcasts
// them), trained with plain autograd and SGD on the concatenated global
// batch. After k steps DDP's parameters must equal it within 1e-6. Also:
// no_sync accumulates locally and the next synced backward averages the sum;
// an unused parameter is handled with find_unused_parameters and reported,
// naming it, without; buckets follow reverse registration order and the cap.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tessera/distributed.hpp"
#include "tessera/nn/linear.hpp"
#include "tessera/nn/parallel/distributed.hpp"
#include "tessera/optim/sgd.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace dist = tessera::distributed;
namespace nn = tessera::nn;
using nn::parallel::DDPOptions;
using nn::parallel::DistributedDataParallel;
using tessera::Tensor;

struct Mlp : nn::Module {
  explicit Mlp(bool with_unused) {
    l1 = register_module("l1", std::make_shared<nn::Linear>(4, 8));
    l2 = register_module("l2", std::make_shared<nn::Linear>(8, 3));
    if (with_unused) spare = register_module("spare", std::make_shared<nn::Linear>(3, 3));
  }
  Tensor forward(const Tensor& x) override { return l2->forward(tessera::tanh(l1->forward(x))); }
  std::shared_ptr<nn::Linear> l1, l2, spare;
};

// The global batch of step s: 8 rows; rank r takes rows 4r .. 4r+3.
Tensor batch_x(int step) {
  std::vector<double> v;
  for (int i = 0; i < 8 * 4; ++i) v.push_back(std::sin(0.37 * i + step));
  return tessera::from_blob(v.data(), {8, 4}, tessera::TensorOptions(tessera::kFloat64))
      .clone()
      .to(tessera::kFloat32);
}
Tensor batch_y(int step) {
  std::vector<double> v;
  for (int i = 0; i < 8 * 3; ++i) v.push_back(std::cos(0.11 * i - step));
  return tessera::from_blob(v.data(), {8, 3}, tessera::TensorOptions(tessera::kFloat64))
      .clone()
      .to(tessera::kFloat32);
}
Tensor local(const Tensor& t, int rank, int world) {
  const int64_t n = t.size(0) / world;
  return t.narrow(0, rank * n, n);
}

// A model with the same parameter values as `source`.
std::shared_ptr<Mlp> copy_of(Mlp& source, bool with_unused) {
  auto m = std::make_shared<Mlp>(with_unused);
  tessera::autograd::NoGradGuard no_grad;
  auto dst = m->named_parameters();
  auto src = source.named_parameters();
  for (size_t i = 0; i < dst.size(); ++i) dst[i].second.copy_(src[i].second);
  return m;
}

double max_abs(const Tensor& t) { return tessera::max(tessera::abs(t)).item<double>(); }

double max_diff(nn::Module& a, nn::Module& b) {
  auto pa = a.parameters(), pb = b.parameters();
  EXPECT_EQ(pa.size(), pb.size());
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, max_abs(pa[i] - pb[i]));
  return worst;
}

class Ddp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("RANK") == nullptr) return;
    dist::InitOptions o;
    o.timeout = std::chrono::seconds(60);
    dist::init_process_group("gloo", o);
  }
  void SetUp() override {
    if (!dist::is_initialized()) GTEST_SKIP() << "not launched by `tessera run -n 2`";
    rank = dist::get_rank();
    world = dist::get_world_size();
  }
  int rank = 0, world = 1;
};

TEST_F(Ddp, StepsEqualOneRankOverTheConcatenatedBatch) {
  tessera::manual_seed(100 + rank);  // different on each rank: DDP must broadcast rank 0's
  auto model = std::make_shared<Mlp>(false);
  // A tiny cap: several buckets (l2.bias, l2.weight, ... each alone or paired).
  DDPOptions o;
  o.bucket_cap_mb = 100.0 / (1024 * 1024);
  auto ddp = std::make_shared<DistributedDataParallel>(model, o);
  EXPECT_GT(ddp->bucket_count(), 1u);
  // Reverse registration order: the last parameter opens the first bucket.
  EXPECT_EQ(ddp->bucket_parameters(0).front(), "l2.bias");
  auto reference = copy_of(*model, false);  // now rank 0's values on every rank

  tessera::optim::SGD opt(ddp->parameters(), {.lr = 0.1});
  tessera::optim::SGD ref_opt(reference->parameters(), {.lr = 0.1});
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    tessera::mse_loss(ddp->forward(local(batch_x(step), rank, world)),
                      local(batch_y(step), rank, world))
        .backward();
    opt.step();
    ref_opt.zero_grad();
    tessera::mse_loss(reference->forward(batch_x(step)), batch_y(step)).backward();
    ref_opt.step();
    EXPECT_LT(max_diff(*model, *reference), 1e-6) << "step " << step;
  }
}

TEST_F(Ddp, NoSyncAccumulatesAndTheNextBackwardAverages) {
  tessera::manual_seed(7);
  auto model = std::make_shared<Mlp>(false);
  auto ddp = std::make_shared<DistributedDataParallel>(model);
  auto reference = copy_of(*model, false);
  // Two micro-batches: step 0's under no_sync, step 1's synced.
  {
    auto guard = ddp->no_sync();
    tessera::mse_loss(ddp->forward(local(batch_x(0), rank, world)), local(batch_y(0), rank, world))
        .backward();
  }
  // Nothing was communicated: the gradient is this rank's own.
  auto alone = copy_of(*model, false);
  tessera::mse_loss(alone->forward(local(batch_x(0), rank, world)), local(batch_y(0), rank, world))
      .backward();
  {
    auto g = model->parameters(), ag = alone->parameters();
    for (size_t i = 0; i < g.size(); ++i)
      EXPECT_LT(max_abs(g[i].grad() - ag[i].grad()), 1e-7) << "no_sync communicated: " << i;
  }
  tessera::mse_loss(reference->forward(batch_x(0)), batch_y(0)).backward();
  tessera::mse_loss(ddp->forward(local(batch_x(1), rank, world)), local(batch_y(1), rank, world))
      .backward();
  tessera::mse_loss(reference->forward(batch_x(1)), batch_y(1)).backward();
  auto g = model->parameters(), rg = reference->parameters();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_LT(max_abs(g[i].grad() - rg[i].grad()), 1e-6) << i;
}

TEST_F(Ddp, UnusedParametersHandledWhenAskedReportedWhenNot) {
  tessera::manual_seed(11);
  {
    auto model = std::make_shared<Mlp>(true);
    auto ddp = std::make_shared<DistributedDataParallel>(model);
    Tensor loss = tessera::mse_loss(ddp->forward(local(batch_x(0), rank, world)),
                                    local(batch_y(0), rank, world));
    try {
      loss.backward();
      FAIL() << "an unused parameter went unreported";
    } catch (const tessera::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("no gradient in this backward: spare.weight, spare.bias."),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("find_unused_parameters"), std::string::npos) << m;
    }
  }
  dist::barrier();  // both ranks are in step again
  auto model = std::make_shared<Mlp>(true);
  DDPOptions o;
  o.find_unused_parameters = true;
  auto ddp = std::make_shared<DistributedDataParallel>(model, o);
  auto reference = copy_of(*model, true);
  tessera::mse_loss(ddp->forward(local(batch_x(2), rank, world)), local(batch_y(2), rank, world))
      .backward();
  tessera::mse_loss(reference->forward(batch_x(2)), batch_y(2)).backward();
  auto g = model->named_parameters();
  auto rg = reference->named_parameters();
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i].first.rfind("spare", 0) == 0) {
      // Unused on every rank: the average of zeros.
      EXPECT_EQ(max_abs(g[i].second.grad()), 0.0) << g[i].first;
      continue;
    }
    EXPECT_LT(max_abs(g[i].second.grad() - rg[i].second.grad()), 1e-6) << g[i].first;
  }
}

}  // namespace
