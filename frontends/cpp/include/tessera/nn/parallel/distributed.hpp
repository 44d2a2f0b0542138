// tessera/nn/parallel/distributed.hpp - DistributedDataParallel
// (torch.nn.parallel.DistributedDataParallel): one replica of a module per
// rank, gradients averaged across the ranks as backward produces them.
//
//   tessera::distributed::init_process_group("gloo");
//   auto ddp = std::make_shared<nn::parallel::DistributedDataParallel>(model);
//   optim::SGD opt(ddp->parameters(), {.lr = 0.1});
//   loss_fn(ddp->forward(x_local), y_local).backward();   // grads: the average over ranks
//   opt.step();
//
// Note [DDP buckets]
// ~~~~~~~~~~~~~~~~~~
// At construction the parameters and buffers are broadcast from rank 0, and
// the parameters that require grad are packed into buckets of about
// bucket_cap_mb (25 MB, PyTorch's) in reverse registration order - roughly
// the order backward produces their gradients - one dtype and device per
// bucket. Each parameter gets a post-accumulate-grad hook: when the last
// gradient of a bucket has been accumulated, the bucket's gradients are
// copied into one flat tensor and all-reduced (AVG) asynchronously, so
// communication overlaps the rest of backward. Buckets are launched in index
// order on every rank (a ready bucket waits for the ones before it), so every
// rank issues the same collectives in the same order. When backward ends (an
// autograd callback queued by the first hook), the remaining buckets are
// launched, every all-reduce is waited for, and the averaged gradients are
// copied back into each parameter's .grad.
//
// Parameters that received no gradient in a backward: with
// find_unused_parameters they count as zero and their bucket goes out at the
// end of backward (their .grad becomes the average of the ranks that used
// them); without it backward fails naming them, as PyTorch's DDP does.
// no_sync(): within its scope backward accumulates gradients locally with no
// communication; the first backward after it averages the accumulated ones.
// Every rank must call forward and backward the same number of times.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/distributed.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/shape.hpp"

namespace tessera::nn::parallel {

struct DDPOptions {
  // The group the gradients are averaged over (default: the world group).
  distributed::ProcessGroup process_group{};
  double bucket_cap_mb = 25;
  bool find_unused_parameters = false;
  // Broadcast the buffers from rank 0 before every forward (PyTorch's default).
  bool broadcast_buffers = true;
};

class DistributedDataParallel : public Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<Module> module, DDPOptions options = {})
      : options_(std::move(options)) {
    module_ = register_module("module", std::move(module));
    {
      autograd::NoGradGuard no_grad;
      for (Tensor& p : module_->parameters()) distributed::broadcast(p, 0, options_.process_group);
      for (Tensor& b : module_->buffers()) distributed::broadcast(b, 0, options_.process_group);
    }
    for (auto& [name, p] : module_->named_parameters())
      if (p.requires_grad()) params_.push_back({name, p});
    build_buckets();
    for (size_t i = 0; i < params_.size(); ++i) {
      params_[i].hook = params_[i].tensor.register_post_accumulate_grad_hook(
          [this, i](const Tensor&) { on_grad_ready(i); });
    }
  }
  ~DistributedDataParallel() override {
    for (Param& p : params_) {
      try {
        p.tensor.remove_hook(p.hook);
      } catch (...) {  // the tensor is gone with its hooks
      }
    }
  }

  std::string type_name() const override { return "DistributedDataParallel"; }

  Tensor forward(const Tensor& input) override {
    if (options_.broadcast_buffers) {
      autograd::NoGradGuard no_grad;
      for (Tensor& b : module_->buffers()) distributed::broadcast(b, 0, options_.process_group);
    }
    prepare_for_backward();
    return module_->operator()(input);
  }

  std::shared_ptr<Module> module() const { return module_; }
  size_t bucket_count() const { return buckets_.size(); }
  // The parameter names of bucket `i`, in the bucket's order.
  std::vector<std::string> bucket_parameters(size_t i) const {
    std::vector<std::string> names;
    for (size_t p : buckets_.at(i).params) names.push_back(params_[p].name);
    return names;
  }

  // Within its scope, backward does not communicate (gradient accumulation).
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp) : ddp_(ddp) { ++ddp_.no_sync_depth_; }
    ~NoSync() { --ddp_.no_sync_depth_; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

 private:
  struct Param {
    std::string name;
    Tensor tensor;
    uint64_t hook = 0;
    size_t bucket = 0, offset = 0;
    bool ready = false;
  };
  struct Bucket {
    std::vector<size_t> params;
    int64_t numel = 0;
    size_t pending = 0;
    bool launched = false;
    Tensor flat;
    distributed::Work work;
  };

  void build_buckets() {
    const double cap = options_.bucket_cap_mb * 1024 * 1024;
    for (size_t k = params_.size(); k-- > 0;) {
      const Tensor& t = params_[k].tensor;
      const double bytes =
          static_cast<double>(t.numel() * static_cast<int64_t>(element_size(t.dtype())));
      bool fresh = buckets_.empty();
      if (!fresh) {
        const Param& first = params_[buckets_.back().params.front()];
        const double held = static_cast<double>(buckets_.back().numel) *
                            static_cast<double>(element_size(first.tensor.dtype()));
        fresh = first.tensor.dtype() != t.dtype() || !(first.tensor.device() == t.device()) ||
                held + bytes > cap;
      }
      if (fresh) buckets_.emplace_back();
      Bucket& b = buckets_.back();
      params_[k].bucket = buckets_.size() - 1;
      params_[k].offset = static_cast<size_t>(b.numel);
      b.params.push_back(k);
      b.numel += t.numel();
    }
  }

  void prepare_for_backward() {
    if (no_sync_depth_ > 0) {
      syncing_ = false;
      return;
    }
    syncing_ = true;
    finalize_queued_ = false;
    next_bucket_ = 0;
    for (Param& p : params_) p.ready = false;
    for (Bucket& b : buckets_) {
      b.pending = b.params.size();
      b.launched = false;
      b.work = distributed::Work();
    }
  }

  void on_grad_ready(size_t i) {
    if (!syncing_) return;
    if (!finalize_queued_) {
      finalize_queued_ = true;
      autograd::queue_callback([this] { finalize(); });
    }
    Param& p = params_[i];
    if (p.ready) return;
    p.ready = true;
    if (--buckets_[p.bucket].pending == 0) launch_ready();
  }

  // Launches the ready buckets in index order.
  void launch_ready() {
    while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0)
      launch(buckets_[next_bucket_++]);
  }

  void launch(Bucket& b) {
    autograd::NoGradGuard no_grad;
    std::vector<Tensor> parts;
    for (size_t k : b.params) {
      const Param& p = params_[k];
      Tensor g = p.tensor.grad();
      parts.push_back(g.defined() ? g.reshape({-1})
                                  : zeros({p.tensor.numel()}, p.tensor.options()));
    }
    b.flat = parts.size() == 1 ? parts[0].clone() : cat(parts, 0);
    b.work = distributed::all_reduce(b.flat, distributed::ReduceOp::AVG, options_.process_group,
                                     /*async_op=*/true);
    b.launched = true;
  }

  void finalize() {
    syncing_ = false;
    std::string unused;  // in registration order
    for (Param& p : params_) {
      if (p.ready) continue;
      if (!options_.find_unused_parameters) {
        unused += (unused.empty() ? "" : ", ") + p.name;
        continue;
      }
      p.ready = true;
      --buckets_[p.bucket].pending;
    }
    if (!unused.empty()) {
      // Wait for what did go out, so no collective is left in flight.
      for (Bucket& b : buckets_)
        if (b.launched) b.work.wait();
      tessera::detail::throw_error(
          TSR_FAILED_PRECONDITION,
          "DistributedDataParallel: parameters received no gradient in this backward: " + unused +
              ". Every rank must reduce every parameter; pass find_unused_parameters = true to "
              "DDPOptions if some parameters are unused in forward, or make sure the loss uses "
              "every parameter's output");
    }
    launch_ready();
    autograd::NoGradGuard no_grad;
    for (Bucket& b : buckets_) {
      b.work.wait();
      for (size_t k : b.params) {
        Param& p = params_[k];
        const int64_t n = p.tensor.numel();
        Tensor avg = b.flat.narrow(0, static_cast<int64_t>(p.offset), n).view(p.tensor.sizes());
        Tensor g = p.tensor.grad();
        if (g.defined()) {
          g.copy_(avg);
        } else {
          p.tensor.set_grad(avg.clone());
        }
      }
      b.flat = Tensor();
    }
  }

  DDPOptions options_;
  std::shared_ptr<Module> module_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  size_t next_bucket_ = 0;
  int no_sync_depth_ = 0;
  bool syncing_ = false;
  bool finalize_queued_ = false;
};

}  // namespace tessera::nn::parallel
