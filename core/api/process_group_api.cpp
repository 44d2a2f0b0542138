// tessera.h's process groups and collectives: handles over
// tsr::dist::ProcessGroup and Work (Note [Process groups]).
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "api/guard.h"
#include "api/store_handle.h"
#include "distributed/process_group.h"
#include "runtime/device.h"
#include "runtime/runtime.h"
#include "tensor/tensor_impl.h"
#include "tessera/plugin.h"
#include "tessera/tessera.h"

static_assert(int{TSR_DIST_SUM} == int{TSR_COLLECTIVE_SUM} &&
                  int{TSR_DIST_PRODUCT} == int{TSR_COLLECTIVE_PRODUCT} &&
                  int{TSR_DIST_MIN} == int{TSR_COLLECTIVE_MIN} &&
                  int{TSR_DIST_MAX} == int{TSR_COLLECTIVE_MAX} &&
                  int{TSR_DIST_AVG} == int{TSR_COLLECTIVE_AVG},
              "tessera.h's tsr_dist_reduce_op and plugin.h's tsr_collective_op share their values");

struct tsr_process_group {
  static constexpr uint64_t kMagic = 0x7473725f70726f63ull;  // "tsr_proc"
  uint64_t magic = kMagic;
  std::shared_ptr<tsr::dist::ProcessGroup> impl;
};

struct tsr_work {
  static constexpr uint64_t kMagic = 0x7473725f776f726bull;  // "tsr_work"
  uint64_t magic = kMagic;
  std::shared_ptr<tsr::dist::Work> impl;
};

namespace {

// Note [Live distributed handles]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Group and work handles are heap objects; a destroyed one must be refused,
// not read. Every live handle is in this set (guarded by its mutex), and
// every call checks membership before touching the handle, so a destroyed
// or foreign pointer is INVALID_ARGUMENT. (A new handle may reuse a freed
// address; it is then live again, as a new handle.)
std::mutex live_mu;
std::unordered_set<const void*>& live_handles() {
  static std::unordered_set<const void*> live;
  return live;
}
bool is_live(const void* h) {
  std::lock_guard<std::mutex> lock(live_mu);
  return live_handles().count(h) != 0;
}
void add_live(const void* h) {
  std::lock_guard<std::mutex> lock(live_mu);
  live_handles().insert(h);
}
// True when `h` was live (and now is not).
bool remove_live(const void* h) {
  std::lock_guard<std::mutex> lock(live_mu);
  return live_handles().erase(h) != 0;
}

using tsr::fail;
using tsr::dist::GroupOptions;
using tsr::dist::milliseconds;
using tsr::dist::ProcessGroup;
using tsr::dist::Work;

ProcessGroup& group_of(const tsr_process_group* group) {
  if (group == nullptr)
    fail(TSR_INVALID_ARGUMENT,
         "argument 'group' is NULL; pass a group from tsr_process_group_init / _create");
  if (!is_live(group) || group->magic != tsr_process_group::kMagic)
    fail(TSR_INVALID_ARGUMENT,
         "argument 'group' is not a live process group (destroyed, or not a tsr_process_group*)");
  return *group->impl;
}

Work& work_of(const tsr_work* work) {
  if (work == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'work' is NULL");
  if (!is_live(work) || work->magic != tsr_work::kMagic)
    fail(TSR_INVALID_ARGUMENT, "argument 'work' is not a live work handle (destroyed?)");
  return *work->impl;
}

GroupOptions options_of(const tsr_process_group_options* o, const GroupOptions* inherit) {
  GroupOptions out = inherit != nullptr ? *inherit : GroupOptions{};
  if (o == nullptr) return out;
  tsr::require_struct(o->struct_size, sizeof(tsr_process_group_options), "options");
  if (o->timeout_ms > 0) out.timeout = milliseconds(o->timeout_ms);
  if (o->backend != nullptr && o->backend[0] != 0) {
    const std::string b = o->backend;
    if (b != "auto" && b != "gloo" && b != "mpi" && b != "nccl")
      fail(TSR_INVALID_ARGUMENT,
           "options.backend is '{}'; use \"auto\", \"gloo\", \"mpi\" or \"nccl\"", b);
    out.backend = b;
  }
  if (o->check_headers < -1 || o->check_headers > 1)
    fail(TSR_INVALID_ARGUMENT, "options.check_headers is {}; use 1 (on), 0 (off) or -1 (env)",
         o->check_headers);
  out.check_headers = o->check_headers;
  return out;
}

tsr_process_group* make_group(std::shared_ptr<ProcessGroup> g) {
  if (!g) return nullptr;
  auto* h = new tsr_process_group;
  h->impl = std::move(g);
  add_live(h);
  return h;
}

tsr::TensorImpl* tensor_or_null(tsr_tensor* t, const char* arg) {
  return t == nullptr ? nullptr : tsr::from_handle(t, arg);
}

// Runs or queues: `issue` returns the Work; NULL out_work waits for it.
template <typename F>
tsr_status* collective(tsr_process_group* group, tsr_work** out_work, F&& issue) {
  return tsr::api_guard([&] {
    if (out_work != nullptr) *out_work = nullptr;
    std::shared_ptr<Work> w = issue(group_of(group));
    if (out_work == nullptr) {
      w->wait(milliseconds(-1));
      return;
    }
    auto* h = new tsr_work;
    h->impl = std::move(w);
    add_live(h);
    *out_work = h;
  });
}

}  // namespace

TSR_API tsr_status* tsr_process_group_init(tsr_runtime* runtime, const char* init_method,
                                           int32_t rank, int32_t world_size,
                                           const tsr_process_group_options* options,
                                           tsr_process_group** out_group) {
  return tsr::api_guard([&] {
    tsr::require_out(out_group, "out_group");
    *out_group = nullptr;
    tsr::Runtime* rt = tsr::runtime_from_handle(runtime, "runtime");
    *out_group =
        make_group(tsr::dist::init_process_group(rt, init_method != nullptr ? init_method : "",
                                                 rank, world_size, options_of(options, nullptr)));
  });
}

TSR_API tsr_status* tsr_process_group_create(tsr_runtime* runtime, tsr_store* store, int32_t rank,
                                             int32_t world_size,
                                             const tsr_process_group_options* options,
                                             tsr_process_group** out_group) {
  return tsr::api_guard([&] {
    tsr::require_out(out_group, "out_group");
    *out_group = nullptr;
    tsr::Runtime* rt = tsr::runtime_from_handle(runtime, "runtime");
    if (store == nullptr || store->magic != tsr_store::kMagic)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'store' is NULL or not a live store; pass one from tsr_store_create_*");
    *out_group = make_group(
        ProcessGroup::create(rt, store->impl, rank, world_size, options_of(options, nullptr)));
  });
}

TSR_API tsr_status* tsr_process_group_new_group(tsr_process_group* group, const int32_t* ranks,
                                                size_t count,
                                                const tsr_process_group_options* options,
                                                tsr_process_group** out_group) {
  return tsr::api_guard([&] {
    tsr::require_out(out_group, "out_group");
    *out_group = nullptr;
    ProcessGroup& g = group_of(group);
    if (ranks == nullptr && count > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'ranks' is NULL with count {}", count);
    std::vector<int> list(ranks, ranks + count);
    *out_group = make_group(g.new_group(list, options_of(options, &g.options())));
  });
}

TSR_API tsr_status* tsr_process_group_split(tsr_process_group* group, int32_t color, int32_t key,
                                            const tsr_process_group_options* options,
                                            tsr_process_group** out_group) {
  return tsr::api_guard([&] {
    tsr::require_out(out_group, "out_group");
    *out_group = nullptr;
    ProcessGroup& g = group_of(group);
    *out_group = make_group(g.split(color, key, options_of(options, &g.options())));
  });
}

TSR_API tsr_status* tsr_process_group_rank(const tsr_process_group* group, int32_t* out_rank,
                                           int32_t* out_size) {
  return tsr::api_guard([&] {
    ProcessGroup& g = group_of(group);
    if (out_rank == nullptr && out_size == nullptr)
      fail(TSR_INVALID_ARGUMENT, "arguments 'out_rank' and 'out_size' are both NULL");
    if (out_rank != nullptr) *out_rank = g.rank();
    if (out_size != nullptr) *out_size = g.size();
  });
}

TSR_API tsr_status* tsr_process_group_abort(tsr_process_group* group) {
  return tsr::api_guard([&] { group_of(group).abort("aborted by the application"); });
}

TSR_API tsr_status* tsr_process_group_engine(tsr_process_group* group, tsr_device device,
                                             char* buffer, size_t capacity) {
  return tsr::api_guard([&] {
    ProcessGroup& g = group_of(group);
    if (buffer == nullptr || capacity == 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'buffer' is NULL or 'capacity' is 0");
    std::string s = g.engine_for(g.runtime()->device(device, "device"));
    std::snprintf(buffer, capacity, "%s", s.c_str());
  });
}

TSR_API tsr_status* tsr_device_get_collectives(const tsr_runtime* runtime, tsr_device device,
                                               tsr_device_collectives* out) {
  return tsr::api_guard([&] {
    tsr::require_out(out, "out_collectives");
    tsr::require_struct(out->struct_size, sizeof(tsr_device_collectives), "out_collectives");
    tsr::DeviceRecord* d = tsr::runtime_from_handle(runtime, "runtime")->device(device, "device");
    tsr_device_collectives result{};
    result.struct_size = sizeof result;
    const tsr_plugin_collectives* t = d->plugin != nullptr ? d->plugin->api.collectives : nullptr;
    const size_t need = offsetof(tsr_plugin_collectives, comm_init) + sizeof(void*);
    if (t != nullptr && t->struct_size >= need && t->query_caps != nullptr &&
        t->comm_init != nullptr) {
      tsr_collective_caps caps{};
      caps.struct_size = sizeof caps;
      tsr::throw_if_error(t->query_caps(d->plugin->context, d->plugin_index, &caps),
                          "collectives query_caps of " + d->label);
      result.native = true;
      result.collectives = caps.collectives;
      result.reduce_ops = caps.reduce_ops;
      result.dtypes = caps.dtypes;
      result.flags = caps.flags;
      std::memcpy(result.engine, caps.engine, sizeof result.engine);
      result.engine[sizeof result.engine - 1] = 0;
    }
    *out = result;
  });
}

TSR_API void tsr_process_group_destroy(tsr_process_group* group) {
  if (group == nullptr || !remove_live(group)) return;
  group->magic = 0;
  delete group;
}

TSR_API tsr_status* tsr_all_reduce(tsr_process_group* group, tsr_tensor* tensor, int32_t op,
                                   tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.all_reduce(tsr::from_handle(tensor, "tensor"), op);
  });
}

TSR_API tsr_status* tsr_broadcast(tsr_process_group* group, tsr_tensor* tensor, int32_t src,
                                  tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.broadcast(tsr::from_handle(tensor, "tensor"), src);
  });
}

TSR_API tsr_status* tsr_reduce(tsr_process_group* group, tsr_tensor* tensor, int32_t op,
                               int32_t dst, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.reduce(tsr::from_handle(tensor, "tensor"), op, dst);
  });
}

TSR_API tsr_status* tsr_all_gather_into_tensor(tsr_process_group* group, tsr_tensor* output,
                                               tsr_tensor* input, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.all_gather(tsr::from_handle(output, "output"), tsr::from_handle(input, "input"));
  });
}

TSR_API tsr_status* tsr_reduce_scatter_tensor(tsr_process_group* group, tsr_tensor* output,
                                              tsr_tensor* input, int32_t op, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.reduce_scatter(tsr::from_handle(output, "output"), tsr::from_handle(input, "input"),
                            op);
  });
}

TSR_API tsr_status* tsr_gather(tsr_process_group* group, tsr_tensor* output, tsr_tensor* input,
                               int32_t dst, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.gather(tensor_or_null(output, "output"), tsr::from_handle(input, "input"), dst);
  });
}

TSR_API tsr_status* tsr_scatter(tsr_process_group* group, tsr_tensor* output, tsr_tensor* input,
                                int32_t src, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.scatter(tsr::from_handle(output, "output"), tensor_or_null(input, "input"), src);
  });
}

TSR_API tsr_status* tsr_all_to_all_single(tsr_process_group* group, tsr_tensor* output,
                                          tsr_tensor* input, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.all_to_all(tsr::from_handle(output, "output"), tsr::from_handle(input, "input"));
  });
}

TSR_API tsr_status* tsr_send(tsr_process_group* group, tsr_tensor* tensor, int32_t dst,
                             tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.send(tsr::from_handle(tensor, "tensor"), dst);
  });
}

TSR_API tsr_status* tsr_recv(tsr_process_group* group, tsr_tensor* tensor, int32_t src,
                             tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) {
    return g.recv(tsr::from_handle(tensor, "tensor"), src);
  });
}

TSR_API tsr_status* tsr_barrier(tsr_process_group* group, tsr_work** out_work) {
  return collective(group, out_work, [&](ProcessGroup& g) { return g.barrier(); });
}

TSR_API tsr_status* tsr_work_wait(tsr_work* work, int64_t timeout_ms) {
  return tsr::api_guard([&] { work_of(work).wait(milliseconds(timeout_ms)); });
}

TSR_API tsr_status* tsr_work_is_completed(tsr_work* work, bool* out_completed) {
  return tsr::api_guard([&] {
    tsr::require_out(out_completed, "out_completed");
    *out_completed = work_of(work).is_completed();
  });
}

TSR_API tsr_status* tsr_work_error(tsr_work* work) {
  tsr_status* bad = tsr::api_guard([&] { work_of(work); });
  if (bad != nullptr) return bad;
  std::string message;
  const tsr_status_code code = work->impl->error(&message);
  return code == TSR_OK ? nullptr : tsr_status_create(code, message.c_str());
}

TSR_API void tsr_work_destroy(tsr_work* work) {
  if (work == nullptr || !remove_live(work)) return;
  work->magic = 0;
  delete work;
}
