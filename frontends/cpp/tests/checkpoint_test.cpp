// checkpoint_test.cpp - module and optimizer checkpoints
// (tessera/serialize/checkpoint.hpp): round trips, tied weights stored once
// and restored tied, dtype/shape/key checks, and an optimizer that resumes
// exactly where it stopped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/serialize/atomic_file.hpp"
#include "tessera/serialize/checkpoint.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace nn = tessera::nn;
namespace optim = tessera::optim;
namespace serialize = tessera::serialize;
using tessera::Tensor;

struct Net : nn::Module {
  std::shared_ptr<nn::Embedding> embed =
      register_module("embed", std::make_shared<nn::Embedding>(6, 4));
  std::shared_ptr<nn::LayerNorm> norm = register_module("norm", std::make_shared<nn::LayerNorm>(4));
  std::shared_ptr<nn::Linear> head = register_module("head", std::make_shared<nn::Linear>(4, 6));
  Net() { head->parameter("weight") = embed->weight; }  // tied input/output embedding
  Tensor forward(const Tensor& ids) override { return (*head)((*norm)((*embed)(ids))); }
};

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "tessera_checkpoint_" + name + ".safetensors";
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Checkpoint, ModuleRoundTripKeepsValuesAndTies) {
  auto a = std::make_shared<Net>();
  const std::string path = temp_path("module");
  serialize::save(*a, path);
  // Stored once: the head.weight entry is an alias of embed.weight.
  const serialize::Metadata md = serialize::load_metadata(path);
  ASSERT_TRUE(md.count(std::string(serialize::kAliasesKey)));
  EXPECT_NE(md.at(std::string(serialize::kAliasesKey)).find("head.weight"), std::string::npos);

  auto b = std::make_shared<Net>();
  const nn::LoadResult r = serialize::load(*b, path);
  EXPECT_TRUE(r.missing_keys.empty());
  EXPECT_TRUE(r.unexpected_keys.empty());
  for (const auto& [name, t] : a->state_dict()) {
    Tensor other;
    for (const auto& [n2, t2] : b->state_dict())
      if (n2 == name) other = t2;
    ASSERT_TRUE(other.defined()) << name;
    EXPECT_EQ(t.to_vector<float>(), other.to_vector<float>()) << name;
  }
  EXPECT_TRUE(b->head->weight.is_same(b->embed->weight));  // still tied
  const Tensor ids = tessera::tensor({1, 5, 0}, tessera::kInt64);
  EXPECT_EQ((*a)(ids).to_vector<float>(), (*b)(ids).to_vector<float>());
  std::remove(path.c_str());
}

TEST(Checkpoint, ModuleLoadChecksDtypesShapesAndKeys) {
  const std::string path = temp_path("checks");
  auto wide = std::make_shared<Net>();
  wide->to(tessera::kFloat64);
  serialize::save(*wide, path);
  auto net = std::make_shared<Net>();
  const std::string dtype_error = error_of([&] { serialize::load(*net, path); });
  EXPECT_NE(dtype_error.find("embed.weight"), std::string::npos) << dtype_error;
  EXPECT_NE(dtype_error.find("float64"), std::string::npos) << dtype_error;

  auto small = std::make_shared<nn::Linear>(4, 4);
  serialize::save(*small, path);
  auto other = std::make_shared<nn::Linear>(4, 5);
  const std::string shape_error = error_of([&] { serialize::load(*other, path); });
  EXPECT_NE(shape_error.find("weight"), std::string::npos) << shape_error;

  auto no_bias = std::make_shared<nn::Linear>(4, 4, false);
  EXPECT_NE(error_of([&] { serialize::load(*no_bias, path); }).find("bias"), std::string::npos);
  const nn::LoadResult loose = serialize::load(*no_bias, path, false);
  EXPECT_EQ(loose.unexpected_keys, (std::vector<std::string>{"bias"}));
  std::remove(path.c_str());
}

TEST(Checkpoint, OptimizerResumesExactly) {
  const Tensor ids = tessera::tensor({1, 5, 0, 2}, tessera::kInt64);
  const Tensor target = tessera::tensor({2, 0, 4, 4}, tessera::kInt64);
  auto step = [&](Net& m, optim::Optimizer& o) {
    o.zero_grad();
    tessera::cross_entropy(m(ids), target).backward();
    o.step();
  };
  auto a = std::make_shared<Net>();
  optim::AdamW opt_a(a->parameters(), {.lr = 0.05, .amsgrad = true});
  step(*a, opt_a);
  step(*a, opt_a);
  const std::string model_path = temp_path("resume_model"), optim_path = temp_path("resume_optim");
  serialize::save(*a, model_path);
  serialize::save(opt_a, optim_path);

  auto b = std::make_shared<Net>();
  serialize::load(*b, model_path);
  optim::AdamW opt_b(b->parameters(), {.lr = 1.0});
  serialize::load(opt_b, optim_path);
  EXPECT_EQ(opt_b.param_groups()[0].lr(), 0.05);
  EXPECT_EQ(opt_b.state_size(), opt_a.state_size());
  step(*a, opt_a);
  step(*b, opt_b);
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_EQ(pa[i].second.to_vector<float>(), pb[i].second.to_vector<float>()) << pa[i].first;

  optim::SGD sgd(b->parameters(), {.lr = 0.1});
  const std::string type_error = error_of([&] { serialize::load(sgd, optim_path); });
  EXPECT_NE(type_error.find("AdamW"), std::string::npos) << type_error;
  EXPECT_NE(error_of([&] { serialize::load(opt_b, model_path); }).find("not an optimizer"),
            std::string::npos);
  std::remove(model_path.c_str());
  std::remove(optim_path.c_str());
}

// A writer killed mid-write leaves `<path>.tmp-<pid>-<n>`; the next save of
// the same path removes it, but never a live writer's temporary.
TEST(Checkpoint, SaveRemovesTemporariesOfKilledWritersOnly) {
  const std::string path = temp_path("stale");
  std::remove(path.c_str());
  // A child that starts writing and is killed before it commits.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // What AtomicFile does up to its first write, in async-signal-safe calls
    // only (this process may have threads): its name, its flock, some bytes.
    char name[4096];
    std::snprintf(name, sizeof name, "%s.tmp-%d-0", path.c_str(), static_cast<int>(::getpid()));
    const int fd = ::open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      (void)::flock(fd, LOCK_EX | LOCK_NB);
      (void)::write(fd, "partial", 7);
    }
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::string stale = path + ".tmp-" + std::to_string(child) + "-0";
  auto leftovers = [&] {
    int n = 0;
    const std::string prefix = std::filesystem::path(path).filename().string() + ".tmp-";
    for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir()))
      n += entry.path().filename().string().rfind(prefix, 0) == 0;
    return n;
  };
  ASSERT_TRUE(std::filesystem::exists(stale)) << "the killed writer left " << stale;
  // A live writer in this process: its temporary must survive the cleanup.
  std::optional<serialize::AtomicFile> live;
  live.emplace(path);
  live->write("live", 4);
  const std::string live_temp = live->temp_path();
  ASSERT_TRUE(std::filesystem::exists(live_temp));

  Net net;
  serialize::save(net, path);
  EXPECT_FALSE(std::filesystem::exists(stale)) << "the stale temporary is still there";
  EXPECT_TRUE(std::filesystem::exists(live_temp)) << "a live writer's file was removed";
  EXPECT_EQ(leftovers(), 1);
  live.reset();  // not committed: removes its temporary
  EXPECT_EQ(leftovers(), 0);
  std::remove(path.c_str());
}

}  // namespace
