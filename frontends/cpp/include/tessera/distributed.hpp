// tessera/distributed.hpp - torch.distributed in C++: process groups and
// collectives over tessera.h's tsr_process_group (docs/distributed.md).
//
//   tessera::distributed::init_process_group("gloo");   // env://, as torchrun sets it
//   auto t = tessera::ones({4});
//   tessera::distributed::all_reduce(t);                 // every rank: world_size
//   auto w = tessera::distributed::all_reduce(t, ReduceOp::AVG, {}, /*async_op=*/true);
//   w.wait();
//
// As in PyTorch, every collective takes an optional group (default: the
// world group init_process_group made) and async_op; a synchronous call
// returns a completed Work. Every rank issues the same collectives in the
// same order. Tensors of any device work (host staging where the device's
// plugin has no collectives). Errors are tessera::Error with the core's
// message. Thread safety: collectives of one group may be issued from
// several threads only if every rank issues them in the same order.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tessera.h"

namespace tessera::distributed {

enum class ReduceOp : int32_t {
  SUM = TSR_DIST_SUM,
  PRODUCT = TSR_DIST_PRODUCT,
  MIN = TSR_DIST_MIN,
  MAX = TSR_DIST_MAX,
  AVG = TSR_DIST_AVG,
};

// A process group handle (shared: copies name one group). Default-made: the
// world group, resolved when used.
class ProcessGroup {
 public:
  ProcessGroup() = default;
  bool is_world() const noexcept { return !handle_; }
  tsr_process_group* get() const;
  int rank() const {
    int32_t r = 0;
    check(tsr_process_group_rank(get(), &r, nullptr));
    return r;
  }
  int size() const {
    int32_t s = 0;
    check(tsr_process_group_rank(get(), nullptr, &s));
    return s;
  }
  // What runs collectives of `device`'s tensors ("gloo 0.5.0 (tcp)", "staged through cpu:0: ...").
  std::string engine(Device device = Device()) const {
    char buffer[256];
    check(tsr_process_group_engine(get(), device.raw(), buffer, sizeof buffer));
    return buffer;
  }
  void abort() const { check(tsr_process_group_abort(get())); }

  static ProcessGroup adopt(tsr_process_group* handle) {
    ProcessGroup g;
    if (handle != nullptr)
      g.handle_ = std::shared_ptr<tsr_process_group>(handle, tsr_process_group_destroy);
    return g;
  }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  std::shared_ptr<tsr_process_group> handle_;
};

namespace detail {
inline std::shared_ptr<tsr_process_group>& world_slot() {
  static std::shared_ptr<tsr_process_group> world;
  return world;
}
}  // namespace detail

inline tsr_process_group* ProcessGroup::get() const {
  if (handle_) return handle_.get();
  tsr_process_group* w = detail::world_slot().get();
  if (w == nullptr)
    tessera::detail::throw_error(TSR_FAILED_PRECONDITION,
                                 "the default process group is not initialized; call "
                                 "tessera::distributed::init_process_group first");
  return w;
}

// A collective in flight (async_op) or done. wait() makes its outputs valid
// and throws its error; a Work dropped without wait() still completes.
class Work {
 public:
  Work() = default;
  explicit Work(tsr_work* handle, std::function<void()> then = {})
      : handle_(handle, tsr_work_destroy), then_(std::move(then)) {}

  // timeout < 0: the group's. True once completed (throws its error).
  bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1)) {
    if (handle_) check(tsr_work_wait(handle_.get(), timeout.count()));
    if (then_) std::exchange(then_, {})();
    return true;
  }
  bool is_completed() const {
    if (!handle_) return true;
    bool done = false;
    check(tsr_work_is_completed(handle_.get(), &done));
    return done;
  }
  // True when it completed successfully; false while pending or failed.
  bool is_success() const {
    if (!handle_) return true;
    tsr_status* st = tsr_work_error(handle_.get());
    if (st != nullptr) {
      tsr_status_free(st);
      return false;
    }
    return is_completed();
  }

 private:
  std::shared_ptr<tsr_work> handle_;
  std::function<void()> then_;
};

struct InitOptions {
  // "env://" (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), "tcp://HOST:PORT", "file:///PATH".
  std::string init_method = "env://";
  int world_size = -1;  // < 0: from the environment
  int rank = -1;
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  // Cross-rank dtype/shape checks: 1, 0, or -1 (TESSERA_DISTRIBUTED_DEBUG=DETAIL).
  int check_headers = -1;
};

namespace detail {
inline tsr_process_group_options raw_options(const std::string& backend,
                                             std::chrono::milliseconds timeout, int check_headers) {
  tsr_process_group_options o{};
  o.struct_size = sizeof o;
  o.timeout_ms = timeout.count();
  o.backend = backend.c_str();
  o.check_headers = check_headers;
  return o;
}

// Runs `issue(out_work)`; sync: waits and then runs `then`.
template <typename F>
Work run(bool async_op, F&& issue, std::function<void()> then = {}) {
  if (!async_op) {
    check(issue(nullptr));
    if (then) then();
    return Work();
  }
  tsr_work* w = nullptr;
  check(issue(&w));
  return Work(w, std::move(then));
}
}  // namespace detail

// backend: "auto" (each device's engine), "gloo", "nccl", "mpi".
inline void init_process_group(const std::string& backend = "auto",
                               const InitOptions& options = {}) {
  if (detail::world_slot())
    tessera::detail::throw_error(
        TSR_FAILED_PRECONDITION,
        "init_process_group: the default process group is already initialized; "
        "call destroy_process_group first");
  const tsr_process_group_options o =
      detail::raw_options(backend, options.timeout, options.check_headers);
  tsr_process_group* g = nullptr;
  check(tsr_process_group_init(default_runtime(), options.init_method.c_str(), options.rank,
                               options.world_size, &o, &g));
  detail::world_slot() = std::shared_ptr<tsr_process_group>(g, tsr_process_group_destroy);
}

inline bool is_initialized() { return detail::world_slot() != nullptr; }
// Destroys `group`'s handle, or the world group (after its queued collectives).
inline void destroy_process_group() { detail::world_slot().reset(); }

inline int get_rank(const ProcessGroup& group = {}) { return group.rank(); }
inline int get_world_size(const ProcessGroup& group = {}) { return group.size(); }
inline ProcessGroup group_world() { return ProcessGroup(); }

// Every rank of `parent` calls it with the same ranks; non-members get an
// empty ProcessGroup (operator bool false).
inline ProcessGroup new_group(const std::vector<int>& ranks, const ProcessGroup& parent = {},
                              std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
  std::vector<int32_t> r(ranks.begin(), ranks.end());
  tsr_process_group_options o{};
  o.struct_size = sizeof o;
  o.timeout_ms = timeout.count();
  o.check_headers = -1;
  tsr_process_group* g = nullptr;
  check(tsr_process_group_new_group(parent.get(), r.data(), r.size(), &o, &g));
  return ProcessGroup::adopt(g);
}

// Ranks with one colour form a group ordered by (key, rank); colour < 0: empty.
inline ProcessGroup split_group(int color, int key, const ProcessGroup& parent = {}) {
  tsr_process_group_options o{};
  o.struct_size = sizeof o;
  o.check_headers = -1;
  tsr_process_group* g = nullptr;
  check(tsr_process_group_split(parent.get(), color, key, &o, &g));
  return ProcessGroup::adopt(g);
}

inline Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = {},
                       bool async_op = false) {
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_all_reduce(group.get(), tensor.get(), static_cast<int32_t>(op), w);
  });
}

inline Work broadcast(Tensor& tensor, int src, const ProcessGroup& group = {},
                      bool async_op = false) {
  return detail::run(
      async_op, [&](tsr_work** w) { return tsr_broadcast(group.get(), tensor.get(), src, w); });
}

inline Work reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM,
                   const ProcessGroup& group = {}, bool async_op = false) {
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_reduce(group.get(), tensor.get(), static_cast<int32_t>(op), dst, w);
  });
}

inline Work all_gather_into_tensor(Tensor& output, const Tensor& input,
                                   const ProcessGroup& group = {}, bool async_op = false) {
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_all_gather_into_tensor(group.get(), output.get(), input.get(), w);
  });
}

namespace detail {
// Slice i of a stacked tensor (dim 0 of size n * s, or [n] for 0-d parts).
inline Tensor part(const Tensor& flat, int64_t i, int64_t n, const Tensor& like) {
  if (like.dim() == 0) return flat.select(0, i);
  const int64_t s = flat.size(0) / n;
  return flat.narrow(0, i * s, s);
}
inline std::vector<int64_t> stacked_sizes(const Tensor& t, int64_t n) {
  std::vector<int64_t> s = t.sizes().vec();
  if (s.empty()) return {n};
  s[0] *= n;
  return s;
}
}  // namespace detail

// outputs: world_size tensors shaped like input, filled in rank order.
inline Work all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                       const ProcessGroup& group = {}, bool async_op = false) {
  const int64_t n = group.size();
  if (static_cast<int64_t>(outputs.size()) != n)
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                 "all_gather: 'tensor_list' has " + std::to_string(outputs.size()) +
                                     " tensors; it needs one per rank (" + std::to_string(n) + ")");
  Tensor flat = empty(detail::stacked_sizes(input, n), input.options());
  auto then = [outputs, flat, input, n]() mutable {
    for (int64_t i = 0; i < n; ++i) outputs[i].copy_(detail::part(flat, i, n, input));
  };
  return detail::run(
      async_op,
      [&](tsr_work** w) {
        return tsr_all_gather_into_tensor(group.get(), flat.get(), input.get(), w);
      },
      then);
}

inline Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM,
                                  const ProcessGroup& group = {}, bool async_op = false) {
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_reduce_scatter_tensor(group.get(), output.get(), input.get(),
                                     static_cast<int32_t>(op), w);
  });
}

// inputs: world_size tensors shaped like output; rank r gets the reduction of everyone's inputs[r].
inline Work reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                           ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = {},
                           bool async_op = false) {
  const int64_t n = group.size();
  if (static_cast<int64_t>(inputs.size()) != n)
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT, "reduce_scatter: 'input_list' has " + std::to_string(inputs.size()) +
                                  " tensors; it needs one per rank (" + std::to_string(n) + ")");
  Tensor flat = empty(detail::stacked_sizes(output, n), output.options());
  for (int64_t i = 0; i < n; ++i) detail::part(flat, i, n, output).copy_(inputs[i]);
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_reduce_scatter_tensor(group.get(), output.get(), flat.get(),
                                     static_cast<int32_t>(op), w);
  });
}

// gather_list: world_size tensors on dst (ignored elsewhere).
inline Work gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst = 0,
                   const ProcessGroup& group = {}, bool async_op = false) {
  const int64_t n = group.size();
  const bool root = group.rank() == dst;
  Tensor flat;
  if (root) {
    if (gather_list == nullptr || static_cast<int64_t>(gather_list->size()) != n)
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "gather: the destination rank needs 'gather_list' of one tensor per rank (" +
              std::to_string(n) + ")");
    flat = empty(detail::stacked_sizes(tensor, n), tensor.options());
  }
  std::function<void()> then;
  if (root) {
    std::vector<Tensor> outs = *gather_list;
    then = [outs, flat, tensor, n]() mutable {
      for (int64_t i = 0; i < n; ++i) outs[i].copy_(detail::part(flat, i, n, tensor));
    };
  }
  return detail::run(
      async_op,
      [&](tsr_work** w) {
        return tsr_gather(group.get(), root ? flat.get() : nullptr, tensor.get(), dst, w);
      },
      then);
}

// scatter_list: world_size tensors on src (ignored elsewhere).
inline Work scatter(Tensor& tensor, const std::vector<Tensor>* scatter_list, int src = 0,
                    const ProcessGroup& group = {}, bool async_op = false) {
  const int64_t n = group.size();
  const bool root = group.rank() == src;
  Tensor flat;
  if (root) {
    if (scatter_list == nullptr || static_cast<int64_t>(scatter_list->size()) != n)
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "scatter: the source rank needs 'scatter_list' of one tensor per rank (" +
              std::to_string(n) + ")");
    flat = empty(detail::stacked_sizes(tensor, n), tensor.options());
    for (int64_t i = 0; i < n; ++i) detail::part(flat, i, n, tensor).copy_((*scatter_list)[i]);
  }
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_scatter(group.get(), tensor.get(), root ? flat.get() : nullptr, src, w);
  });
}

// Equal splits of dim 0.
inline Work all_to_all_single(Tensor& output, const Tensor& input, const ProcessGroup& group = {},
                              bool async_op = false) {
  return detail::run(async_op, [&](tsr_work** w) {
    return tsr_all_to_all_single(group.get(), output.get(), input.get(), w);
  });
}

inline Work send(const Tensor& tensor, int dst, const ProcessGroup& group = {}) {
  return detail::run(false,
                     [&](tsr_work** w) { return tsr_send(group.get(), tensor.get(), dst, w); });
}
inline Work recv(Tensor& tensor, int src, const ProcessGroup& group = {}) {
  return detail::run(false,
                     [&](tsr_work** w) { return tsr_recv(group.get(), tensor.get(), src, w); });
}
inline Work isend(const Tensor& tensor, int dst, const ProcessGroup& group = {}) {
  return detail::run(true,
                     [&](tsr_work** w) { return tsr_send(group.get(), tensor.get(), dst, w); });
}
inline Work irecv(Tensor& tensor, int src, const ProcessGroup& group = {}) {
  return detail::run(true,
                     [&](tsr_work** w) { return tsr_recv(group.get(), tensor.get(), src, w); });
}

inline Work barrier(const ProcessGroup& group = {}, bool async_op = false) {
  return detail::run(async_op, [&](tsr_work** w) { return tsr_barrier(group.get(), w); });
}

}  // namespace tessera::distributed
