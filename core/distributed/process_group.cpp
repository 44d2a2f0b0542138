// Process groups over plugin communicators (Note [Process groups]).
#include "distributed/process_group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "ops/op_util.h"
#include "runtime/device.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tensor/dtype.h"
#include "tensor/grad_mode.h"

namespace tsr::dist {

namespace {

enum class Kind : int64_t {
  all_reduce = 1,
  broadcast,
  reduce,
  all_gather,
  reduce_scatter,
  gather,
  scatter,
  all_to_all,
  send,
  recv,
  barrier,
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::all_reduce:
      return "all_reduce";
    case Kind::broadcast:
      return "broadcast";
    case Kind::reduce:
      return "reduce";
    case Kind::all_gather:
      return "all_gather";
    case Kind::reduce_scatter:
      return "reduce_scatter";
    case Kind::gather:
      return "gather";
    case Kind::scatter:
      return "scatter";
    case Kind::all_to_all:
      return "all_to_all";
    case Kind::send:
      return "send";
    case Kind::recv:
      return "recv";
    case Kind::barrier:
      return "barrier";
  }
  return "?";
}

uint32_t kind_bit(Kind k) {
  switch (k) {
    case Kind::all_reduce:
      return TSR_COLLECTIVE_ALL_REDUCE;
    case Kind::broadcast:
      return TSR_COLLECTIVE_BROADCAST;
    case Kind::reduce:
      return TSR_COLLECTIVE_REDUCE;
    case Kind::all_gather:
      return TSR_COLLECTIVE_ALL_GATHER;
    case Kind::reduce_scatter:
      return TSR_COLLECTIVE_REDUCE_SCATTER;
    case Kind::gather:
      return TSR_COLLECTIVE_GATHER;
    case Kind::scatter:
      return TSR_COLLECTIVE_SCATTER;
    case Kind::all_to_all:
      return TSR_COLLECTIVE_ALL_TO_ALL;
    case Kind::send:
    case Kind::recv:
      return TSR_COLLECTIVE_SEND_RECV;
    case Kind::barrier:
      return TSR_COLLECTIVE_BARRIER;
  }
  return 0;
}

bool has_reduce_op(Kind k) {
  return k == Kind::all_reduce || k == Kind::reduce || k == Kind::reduce_scatter;
}

const char* op_name(int op) {
  static const char* const names[] = {"SUM", "PRODUCT", "MIN", "MAX", "AVG"};
  return op >= 0 && op < TSR_COLLECTIVE_OP_COUNT ? names[op] : "?";
}

std::string shape_text(int32_t ndim, const int64_t* sizes) {
  return fmt::format("[{}]", fmt::join(sizes, sizes + ndim, ", "));
}

// The entry `member` of a collectives table, when the plugin's struct has it.
template <typename F>
F entry_of(const tsr_plugin_collectives* t, F tsr_plugin_collectives::*member) {
  if (t == nullptr) return nullptr;
  const size_t end =
      reinterpret_cast<size_t>(&(static_cast<tsr_plugin_collectives*>(nullptr)->*member)) +
      sizeof(void*);
  if (t->struct_size < end) return nullptr;
  return t->*member;
}

// tsr_host_store over a Store; statuses, never exceptions.
struct HostStore {
  std::shared_ptr<Store> store;
  milliseconds timeout;
  tsr_host_store table{};

  template <typename F>
  static tsr_status* guarded(F&& body) noexcept {
    try {
      body();
      return nullptr;
    } catch (const Error& e) {
      return tsr_status_create(e.code(), e.what());
    } catch (const std::exception& e) {
      return tsr_status_create(TSR_INTERNAL, e.what());
    } catch (...) {
      return tsr_status_create(TSR_INTERNAL, "unknown exception in the host's store");
    }
  }
  milliseconds timeout_of(int64_t ms) const { return ms < 0 ? timeout : milliseconds(ms); }

  HostStore(std::shared_ptr<Store> s, milliseconds t) : store(std::move(s)), timeout(t) {
    table.struct_size = sizeof table;
    table.self = this;
    table.set = [](void* self, const char* key, const void* value, size_t size) {
      return guarded([&] {
        static_cast<HostStore*>(self)->store->set(
            key, std::string(static_cast<const char*>(value), size));
      });
    };
    table.get = [](void* self, const char* key, int64_t ms,
                   void (*sink)(void*, const void*, size_t), void* sink_self) {
      return guarded([&] {
        auto* h = static_cast<HostStore*>(self);
        std::string v = h->store->get(key, h->timeout_of(ms));
        sink(sink_self, v.data(), v.size());
      });
    };
    table.wait = [](void* self, const char* const* keys, size_t count, int64_t ms) {
      return guarded([&] {
        auto* h = static_cast<HostStore*>(self);
        h->store->wait(std::vector<std::string>(keys, keys + count), h->timeout_of(ms));
      });
    };
    table.add = [](void* self, const char* key, int64_t delta, int64_t* out) {
      return guarded([&] { *out = static_cast<HostStore*>(self)->store->add(key, delta); });
    };
  }
};

// The header of Note [Process groups]: kind, dtype, ndim, root, op, sizes.
constexpr int kHeaderWords = 5 + TSR_MAX_DIMS;

}  // namespace

// ---- Communicator -----------------------------------------------------------

struct Communicator {
  DeviceRecord* device = nullptr;
  const tsr_plugin_collectives* table = nullptr;
  tsr_collective_caps caps{};
  void* comm = nullptr;  // null: this device stages through the host communicator
  std::string engine;

  bool runs(Kind k, tsr_dtype dtype, int op) const {
    if (comm == nullptr || (caps.collectives & kind_bit(k)) == 0) return false;
    if (k != Kind::barrier && (caps.dtypes & TSR_DTYPE_BIT(dtype)) == 0) return false;
    if (has_reduce_op(k) && (caps.reduce_ops & (1u << op)) == 0) return false;
    return true;
  }
  void call(const char* name, tsr_status* st) const {
    throw_if_error(st, fmt::format("{} on {} ({})", name, device->label, engine));
  }
  ~Communicator() {
    if (comm == nullptr) return;
    if (auto destroy = table->comm_destroy) destroy(device->plugin->context, comm);
    device->plugin->live_objects.fetch_sub(1, std::memory_order_seq_cst);
  }
};

// ---- Work -------------------------------------------------------------------

void Work::finish(tsr_status_code code, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  code_ = code;
  message_ = std::move(message);
  done_ = true;
  cv_.notify_all();
}

void Work::wait(milliseconds timeout) {
  // With the group's timeout, the engine's own (which names the peer) comes
  // first: the wait allows 5 s more. A caller's timeout is kept exactly.
  milliseconds limit = timeout;
  if (timeout.count() < 0) {
    timeout = timeout_;
    limit = timeout_ + std::chrono::seconds(5);
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, limit, [&] { return done_; })) {
    lock.unlock();
    std::string why = fmt::format(
        "{} did not complete within the timeout of {} ms; the process group is aborted "
        "(did a rank stop, hang, or issue other collectives?)",
        name_, timeout.count());
    abort_group_(why);
    fail(TSR_DEADLINE_EXCEEDED, "{}", why);
  }
  if (code_ != TSR_OK) throw Error(code_, message_);
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

tsr_status_code Work::error(std::string* message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (message != nullptr) *message = done_ ? message_ : std::string();
  return done_ ? code_ : TSR_OK;
}

// ---- Task -------------------------------------------------------------------

struct ProcessGroup::Task {
  Kind kind = Kind::barrier;
  TensorRef a;  // inout, or in
  TensorRef b;  // out
  int op = TSR_COLLECTIVE_SUM;
  int root = 0;              // root, or peer of send / recv
  Stream* stream = nullptr;  // the caller's current stream of the tensors' device (retained)
  std::shared_ptr<Work> work;
  ~Task() {
    if (stream != nullptr) stream->release();
  }
  // The tensor whose (dtype, shape) the header carries and whose device runs
  // it: scatter's output (its input exists on the root only), else the input.
  TensorImpl* subject() const { return kind == Kind::scatter || !a ? b.get() : a.get(); }
};

// ---- ProcessGroup -----------------------------------------------------------

std::shared_ptr<ProcessGroup> ProcessGroup::create(Runtime* runtime, std::shared_ptr<Store> store,
                                                   int rank, int size, GroupOptions options) {
  if (runtime == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'runtime' is NULL");
  if (!store) fail(TSR_INVALID_ARGUMENT, "argument 'store' is NULL; pass the group's store");
  if (size < 1)
    fail(TSR_INVALID_ARGUMENT, "argument 'world_size' is {}; a group has at least one rank", size);
  if (rank < 0 || rank >= size)
    fail(TSR_INVALID_ARGUMENT, "argument 'rank' is {}; need 0 <= rank < world_size ({})", rank,
         size);
  if (options.timeout.count() <= 0)
    fail(TSR_INVALID_ARGUMENT, "argument 'timeout' is {} ms; give a positive timeout",
         options.timeout.count());
  return std::shared_ptr<ProcessGroup>(
      new ProcessGroup(runtime, std::move(store), rank, size, std::move(options)));
}

ProcessGroup::ProcessGroup(Runtime* runtime, std::shared_ptr<Store> store, int rank, int size,
                           GroupOptions options)
    : runtime_(runtime),
      store_(std::move(store)),
      rank_(rank),
      size_(size),
      options_(std::move(options)) {
  if (options_.check_headers < 0) {
    const char* debug = std::getenv("TESSERA_DISTRIBUTED_DEBUG");
    check_headers_ = debug != nullptr && std::strcmp(debug, "DETAIL") == 0;
  } else {
    check_headers_ = options_.check_headers != 0;
  }
  runtime_->retain();
  worker_ = std::thread([this] { worker_loop(); });
}

struct ProcessGroup::Lane {
  std::deque<std::unique_ptr<Task>> queue;
  std::thread thread;
};

ProcessGroup::~ProcessGroup() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    lanes_stopping_ = true;
  }
  cv_.notify_all();
  for (auto& [key, lane] : lanes_) lane->thread.join();
  comms_.clear();
  runtime_->release();
}

std::shared_ptr<Work> ProcessGroup::submit(std::unique_ptr<Task> task) {
  std::string name = fmt::format("{} (rank {} of {})", kind_name(task->kind), rank_, size_);
  std::weak_ptr<ProcessGroup> self = weak_from_this();
  task->work = std::shared_ptr<Work>(new Work(
      std::move(name),
      [self](const std::string& why) {
        if (auto g = self.lock()) g->abort(why);
      },
      options_.timeout));
  std::shared_ptr<Work> work = task->work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_)
      fail(TSR_FAILED_PRECONDITION,
           "{}: the process group failed earlier and cannot run collectives: {}", work->name(),
           failure_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_all();
  return work;
}

namespace {

// The group's threads: no autograd, and SIGPIPE blocked - an engine's write
// to a peer that died must fail with EPIPE, not kill the process (Note
// [SIGPIPE and dead peers] in the CPU plugin does the same for threads other
// than these); the threads are ours.
void prepare_group_thread() {
  autograd::set_grad_enabled(false);
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

bool is_p2p(Kind k) { return k == Kind::send || k == Kind::recv; }

}  // namespace

void ProcessGroup::worker_loop() {
  prepare_group_thread();
  for (;;) {
    std::unique_ptr<Task> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every queued collective ran
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (is_p2p(task->kind)) {
      hand_to_lane(std::move(task));
    } else {
      execute(std::move(task));
    }
  }
}

// A task of a failed group completes at once with the group's error.
bool ProcessGroup::finish_if_failed(Task& task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_) return false;
  task.work->finish(TSR_FAILED_PRECONDITION, fmt::format("{}: the process group failed earlier: {}",
                                                         task.work->name(), failure_));
  return true;
}

// Makes the communicators a send / recv needs here, in issue order, and
// queues it on its lane (Note [Process groups]).
void ProcessGroup::hand_to_lane(std::unique_ptr<Task> task) {
  if (finish_if_failed(*task)) return;
  try {
    communicator_for(*task);
  } catch (const Error& e) {
    task->work->finish(e.code(), e.message());
    return;
  } catch (const std::exception& e) {
    task->work->finish(TSR_INTERNAL, task->work->name() + ": " + e.what());
    return;
  }
  const int key = 2 * task->root + (task->kind == Kind::recv ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Lane>& lane = lanes_[key];
    if (!lane) {
      lane = std::make_unique<Lane>();
      Lane* l = lane.get();
      l->thread = std::thread([this, l] { lane_loop(*l); });
    }
    lane->queue.push_back(std::move(task));
  }
  cv_.notify_all();
}

void ProcessGroup::lane_loop(Lane& lane) {
  prepare_group_thread();
  for (;;) {
    std::unique_ptr<Task> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return lanes_stopping_ || !lane.queue.empty(); });
      if (lane.queue.empty()) return;
      task = std::move(lane.queue.front());
      lane.queue.pop_front();
    }
    execute(std::move(task));
  }
}

// Runs one task to its Work's completion; an engine error fails the group.
void ProcessGroup::execute(std::unique_ptr<Task> task) {
  if (finish_if_failed(*task)) return;
  try {
    run(*task);
    task->work->finish(TSR_OK, {});
  } catch (const Error& e) {
    const tsr_status_code code = e.code();
    const bool engine_error = code == TSR_UNAVAILABLE || code == TSR_DEADLINE_EXCEEDED ||
                              code == TSR_ABORTED || code == TSR_INTERNAL;
    if (engine_error) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failed_) {
        failed_ = true;
        failure_ = e.message();
      }
    }
    task->work->finish(code, e.message());
  } catch (const std::bad_alloc&) {
    task->work->finish(TSR_RESOURCE_EXHAUSTED, task->work->name() + ": out of host memory");
  } catch (const std::exception& e) {
    task->work->finish(TSR_INTERNAL, task->work->name() + ": " + e.what());
  }
}

void ProcessGroup::abort(const std::string& reason) {
  std::vector<Communicator*> comms;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) {
      failed_ = true;
      failure_ = reason;
    }
    for (auto& [device, c] : comms_) comms.push_back(c.get());
  }
  for (Communicator* c : comms) {
    if (c->comm == nullptr) continue;
    if (auto abort_fn = entry_of(c->table, &tsr_plugin_collectives::comm_abort))
      tsr_status_free(abort_fn(c->device->plugin->context, c->comm));
  }
}

DeviceRecord* ProcessGroup::host_device() {
  for (DeviceRecord* d : runtime_->devices()) {
    if (d->is_meta || !d->host_addressable || d->plugin == nullptr) continue;
    const tsr_plugin_collectives* t = d->plugin->api.collectives;
    if (entry_of(t, &tsr_plugin_collectives::comm_init) == nullptr ||
        entry_of(t, &tsr_plugin_collectives::query_caps) == nullptr)
      continue;
    auto caps = tsr_collective_caps{};
    caps.struct_size = sizeof caps;
    tsr_status* st = t->query_caps(d->plugin->context, d->plugin_index, &caps);
    if (st != nullptr) {
      tsr_status_free(st);
      continue;
    }
    if ((caps.flags & TSR_COLLECTIVES_HOST_MEMORY) != 0) return d;
  }
  fail(TSR_FAILED_PRECONDITION,
       "no host communicator: no loaded plugin has collectives on host memory (the cpu plugin "
       "does when built with Gloo: install libgloo-dev and rebuild)");
}

Communicator& ProcessGroup::comm_for(DeviceRecord* device) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = comms_.find(device);
    if (it != comms_.end()) return *it->second;
  }
  auto c = std::make_unique<Communicator>();
  c->device = device;
  PluginRecord* plugin = device->plugin;
  const tsr_plugin_collectives* t = plugin != nullptr ? plugin->api.collectives : nullptr;
  auto init = entry_of(t, &tsr_plugin_collectives::comm_init);
  auto query = entry_of(t, &tsr_plugin_collectives::query_caps);
  // A 1.0 table (no query_caps / comm_init) cannot say what it runs or take
  // the host's store: its device stages.
  if (!device->is_meta && init != nullptr && query != nullptr) {
    c->table = t;
    c->caps.struct_size = sizeof c->caps;
    throw_if_error(query(plugin->context, device->plugin_index, &c->caps),
                   fmt::format("collectives query_caps of {}", device->label));
    c->engine.assign(c->caps.engine, strnlen(c->caps.engine, sizeof c->caps.engine));
    if (c->caps.max_world != 0 && static_cast<uint32_t>(size_) > c->caps.max_world) {
      c->table = nullptr;  // too many ranks for this engine: stage
    }
  }
  if (c->table != nullptr) {
    const std::string type = runtime_->device_type_name(device->device.type);
    int n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = comms_per_type_[type]++;
    }
    auto cstore = prefix_store(store_, fmt::format("comm/{}/{}", type, n));
    std::string uid;
    if (c->caps.unique_id_size > 0) {
      auto get_uid = entry_of(t, &tsr_plugin_collectives::get_unique_id);
      if (get_uid == nullptr)
        fail(TSR_FAILED_PRECONDITION,
             "plugin '{}' needs a unique id of {} bytes but has no get_unique_id", plugin->name,
             c->caps.unique_id_size);
      if (rank_ == 0) {
        uid.resize(c->caps.unique_id_size);
        c->call("get_unique_id",
                get_uid(plugin->context, device->plugin_index, uid.data(), uid.size()));
        cstore->set("unique_id", uid);
      } else {
        uid = cstore->get("unique_id", options_.timeout);
        if (uid.size() != c->caps.unique_id_size)
          fail(TSR_DATA_LOSS, "the unique id rank 0 published has {} bytes, not {}", uid.size(),
               c->caps.unique_id_size);
      }
    }
    HostStore host_store(cstore, options_.timeout);
    auto args = tsr_comm_init_args{};
    args.struct_size = sizeof args;
    args.device = device->plugin_index;
    args.rank = rank_;
    args.world_size = size_;
    args.unique_id = uid.empty() ? nullptr : uid.data();
    args.unique_id_size = uid.size();
    args.store = &host_store.table;
    args.timeout_ms = options_.timeout.count();
    const bool named = options_.backend != "auto" && !options_.backend.empty();
    args.engine = named ? options_.backend.c_str() : nullptr;
    PluginEntry entry(plugin, plugin->live_objects, "communicator", device->label);
    void* comm = nullptr;
    tsr_status* st = init(plugin->context, &args, &comm);
    if (st != nullptr && tsr_status_code_of(st) == TSR_NOT_FOUND && named &&
        !device->host_addressable) {
      // This device has no such engine: stage through the host's.
      tsr_status_free(st);
      c->table = nullptr;
    } else {
      c->call("comm_init", st);
      if (comm == nullptr)
        fail(TSR_INTERNAL, "plugin '{}' comm_init returned OK and no communicator", plugin->name);
      c->comm = comm;
      entry.keep();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = comms_.emplace(device, std::move(c));
  return *it->second;
}

std::string ProcessGroup::engine_for(DeviceRecord* device) {
  const tsr_plugin_collectives* t =
      device->plugin != nullptr ? device->plugin->api.collectives : nullptr;
  auto query = entry_of(t, &tsr_plugin_collectives::query_caps);
  if (query != nullptr && entry_of(t, &tsr_plugin_collectives::comm_init) != nullptr) {
    auto caps = tsr_collective_caps{};
    caps.struct_size = sizeof caps;
    tsr_status* st = query(device->plugin->context, device->plugin_index, &caps);
    if (st == nullptr) return std::string(caps.engine, strnlen(caps.engine, sizeof caps.engine));
    tsr_status_free(st);
  }
  DeviceRecord* host = host_device();
  return fmt::format("staged through {}: {}", host->label, engine_for(host));
}

void ProcessGroup::exchange_headers(const Task& task) {
  DeviceRecord* host = host_device();
  Communicator& hc = comm_for(host);
  int64_t mine[kHeaderWords] = {};
  const TensorImpl* s = task.kind == Kind::barrier ? nullptr : task.subject();
  mine[0] = static_cast<int64_t>(task.kind);
  if (s != nullptr) {
    mine[1] = s->dtype;
    mine[2] = s->ndim;
    std::copy(s->sizes, s->sizes + s->ndim, mine + 5);
  }
  mine[3] = (task.kind == Kind::broadcast || task.kind == Kind::reduce ||
             task.kind == Kind::gather || task.kind == Kind::scatter)
                ? task.root
                : -1;
  mine[4] = has_reduce_op(task.kind) ? task.op : -1;
  const int64_t sizes[1] = {static_cast<int64_t>(size_) * kHeaderWords};
  const int64_t one[1] = {kHeaderWords};
  TensorRef in = new_tensor(runtime_, host, TSR_INT64, 1, one);
  TensorRef all = new_tensor(runtime_, host, TSR_INT64, 1, sizes);
  std::memcpy(in->desc().data, mine, sizeof mine);
  tsr_tensor_desc din = in->desc(), dall = all->desc();
  hc.call("all_gather (header exchange)",
          hc.table->all_gather(host->plugin->context, hc.comm, &din, &dall, nullptr));
  const auto* h = static_cast<const int64_t*>(dall.data);
  auto text = [&](const int64_t* w) {
    return fmt::format("{} {}", dtype_name(static_cast<tsr_dtype>(w[1])),
                       shape_text(static_cast<int32_t>(w[2]), w + 5));
  };
  for (int r = 0; r < size_; ++r) {
    const int64_t* w = h + static_cast<ptrdiff_t>(r) * kHeaderWords;
    if (std::equal(w, w + kHeaderWords, h)) continue;
    const char* what = kind_name(task.kind);
    if (w[0] != h[0])
      fail(TSR_INVALID_ARGUMENT,
           "collective #{} mismatch across ranks: rank {} issued {} where rank 0 issued {}; "
           "every rank must issue the same collectives in the same order",
           sequence_, r, kind_name(static_cast<Kind>(w[0])), kind_name(static_cast<Kind>(h[0])));
    if (w[3] != h[3])
      fail(TSR_INVALID_ARGUMENT, "{}: rank {} gave root {} but rank 0 gave root {}", what, r, w[3],
           h[3]);
    if (w[4] != h[4])
      fail(TSR_INVALID_ARGUMENT, "{}: rank {} gave ReduceOp {} but rank 0 gave {}", what, r,
           op_name(static_cast<int>(w[4])), op_name(static_cast<int>(h[4])));
    fail(TSR_INVALID_ARGUMENT,
         "{}: rank {} gave a tensor of {} but rank 0 gave {}; every rank must pass tensors of "
         "one dtype and shape",
         what, r, text(w), text(h));
  }
}

// The communicator that runs `task`: its device's own, or the host's when
// that device stages (made on first use: collectively, in issue order).
Communicator* ProcessGroup::communicator_for(const Task& task) {
  TensorImpl* subject = task.subject();
  DeviceRecord* device = subject != nullptr ? subject->device() : host_device();
  const tsr_dtype dtype = subject != nullptr ? subject->dtype : TSR_UINT8;
  Communicator* c = &comm_for(device);
  if (c->runs(task.kind, dtype, task.op)) return c;
  c = &comm_for(host_device());
  if (!c->runs(task.kind, dtype, task.op))
    fail(TSR_UNIMPLEMENTED, "{}: {} has no {} of {}{}{}", task.work->name(), c->engine,
         kind_name(task.kind), dtype_name(dtype), has_reduce_op(task.kind) ? " with ReduceOp " : "",
         has_reduce_op(task.kind) ? op_name(task.op) : "");
  return c;
}

void ProcessGroup::run(Task& task) {
  if (!is_p2p(task.kind)) {
    ++sequence_;  // the worker thread's alone
    if (check_headers_ && size_ > 1) exchange_headers(task);
  }
  if (task.stream != nullptr) task.stream->synchronize();

  TensorImpl* subject = task.subject();
  Communicator* c = communicator_for(task);
  const bool native = subject != nullptr && c->device == subject->device();
  DeviceRecord* run_on = c->device;
  tsr_plugin_context* ctx = run_on->plugin->context;
  const tsr_plugin_collectives* t = c->table;

  // Where the engine reads and writes: the tensor itself when it is on the
  // engine's device and contiguous, else scratch (copied in / back).
  auto source = [&](TensorImpl* x) -> TensorRef {
    if (x == nullptr) return {};
    if (x->device() == run_on && x->contiguous) return TensorRef::borrow(x);
    TensorRef s = new_tensor(runtime_, run_on, x->dtype, x->ndim, x->sizes);
    copy_raw(s.get(), x);
    return s;
  };
  auto target = [&](TensorImpl* x) -> TensorRef {
    if (x == nullptr) return {};
    if (x->device() == run_on && x->contiguous) return TensorRef::borrow(x);
    return new_tensor(runtime_, run_on, x->dtype, x->ndim, x->sizes);
  };
  auto write_back = [&](TensorImpl* x, const TensorRef& s) {
    if (x == nullptr) return;
    if (s.get() != x) copy_raw(x, s.get());
    x->bump_version();
  };
  Stream* stream = native && task.stream != nullptr ? task.stream : run_on->default_stream;
  tsr_plugin_stream* ps = stream != nullptr ? stream->plugin_stream : nullptr;
  const char* name = kind_name(task.kind);

  TensorRef a, b;
  tsr_tensor_desc da{}, db{};
  switch (task.kind) {
    case Kind::all_reduce:
    case Kind::broadcast:
    case Kind::reduce:
      a = source(task.a.get());
      da = a->desc();
      break;
    case Kind::send:
      a = source(task.a.get());
      da = a->desc();
      break;
    case Kind::recv:
      b = target(task.b.get());
      db = b->desc();
      break;
    default:
      a = source(task.a.get());
      b = target(task.b.get());
      if (a) da = a->desc();
      if (b) db = b->desc();
      break;
  }
  auto need = [&](auto fn) {
    if (fn == nullptr)
      fail(TSR_UNIMPLEMENTED, "{}: plugin '{}' claims {} but has no entry for it",
           task.work->name(), run_on->plugin->name, name);
    return fn;
  };
  switch (task.kind) {
    case Kind::all_reduce:
      c->call(name, need(t->all_reduce)(ctx, c->comm, &da, task.op, ps));
      break;
    case Kind::broadcast:
      c->call(name, need(t->broadcast)(ctx, c->comm, &da, task.root, ps));
      break;
    case Kind::reduce:
      c->call(name, need(entry_of(t, &tsr_plugin_collectives::reduce))(ctx, c->comm, &da, task.op,
                                                                       task.root, ps));
      break;
    case Kind::all_gather:
      c->call(name, need(t->all_gather)(ctx, c->comm, &da, &db, ps));
      break;
    case Kind::reduce_scatter:
      c->call(name, need(t->reduce_scatter)(ctx, c->comm, &da, &db, task.op, ps));
      break;
    case Kind::gather:
      c->call(name, need(entry_of(t, &tsr_plugin_collectives::gather))(
                        ctx, c->comm, &da, b ? &db : nullptr, task.root, ps));
      break;
    case Kind::scatter:
      c->call(name, need(entry_of(t, &tsr_plugin_collectives::scatter))(
                        ctx, c->comm, a ? &da : nullptr, &db, task.root, ps));
      break;
    case Kind::all_to_all:
      c->call(name,
              need(entry_of(t, &tsr_plugin_collectives::all_to_all))(ctx, c->comm, &da, &db, ps));
      break;
    case Kind::send:
      c->call(name, need(t->send)(ctx, c->comm, &da, task.root, ps));
      break;
    case Kind::recv:
      c->call(name, need(t->recv)(ctx, c->comm, &db, task.root, ps));
      break;
    case Kind::barrier:
      c->call(name, need(t->barrier)(ctx, c->comm, ps));
      break;
  }
  if (stream != nullptr) stream->synchronize();
  switch (task.kind) {
    case Kind::all_reduce:
    case Kind::broadcast:
      write_back(task.a.get(), a);
      break;
    case Kind::reduce:
      if (rank_ == task.root) write_back(task.a.get(), a);
      break;
    case Kind::send:
    case Kind::barrier:
      break;
    default:
      write_back(task.b.get(), b);
      break;
  }
}

// ---- issuing ----------------------------------------------------------------

namespace {

void check_tensor(const TensorImpl* t, const char* arg, const char* what) {
  if (t == nullptr)
    fail(TSR_INVALID_ARGUMENT, "{}: argument '{}' is NULL; pass a tensor", what, arg);
  if (t->device()->is_meta)
    fail(TSR_INVALID_ARGUMENT, "{}: argument '{}' is a meta tensor, which has no data to send",
         what, arg);
}

void check_op(int op, const TensorImpl* t, const char* what) {
  if (op < 0 || op >= TSR_COLLECTIVE_OP_COUNT)
    fail(TSR_INVALID_ARGUMENT,
         "{}: argument 'op' is {}; pass a ReduceOp (SUM 0, PRODUCT 1, MIN 2, MAX 3, AVG 4)", what,
         op);
  if (op == TSR_COLLECTIVE_AVG && !is_floating(t->dtype) && !is_complex(t->dtype))
    fail(TSR_INVALID_ARGUMENT, "{}: ReduceOp AVG needs a floating or complex tensor, not {}", what,
         dtype_name(t->dtype));
  if (is_complex(t->dtype) && (op == TSR_COLLECTIVE_MIN || op == TSR_COLLECTIVE_MAX))
    fail(TSR_INVALID_ARGUMENT, "{}: ReduceOp {} is undefined for complex tensors ({})", what,
         op_name(op), dtype_name(t->dtype));
}

void check_rank(int r, int size, const char* arg, const char* what) {
  if (r < 0 || r >= size)
    fail(TSR_INVALID_ARGUMENT, "{}: argument '{}' is {}; the group has ranks 0 .. {}", what, arg, r,
         size - 1);
}

void check_pair(const TensorImpl* out, const TensorImpl* in, const char* what) {
  if (out->device() != in->device())
    fail(TSR_INVALID_ARGUMENT,
         "{}: 'output' is on {} but 'input' on {}; both must be on one device", what,
         out->device()->label, in->device()->label);
  if (out->dtype != in->dtype)
    fail(TSR_INVALID_ARGUMENT, "{}: 'output' is {} but 'input' is {}; both need one dtype", what,
         dtype_name(out->dtype), dtype_name(in->dtype));
}

// `big` must be `small` stacked `n` times along dim 0 (or [n] for a 0-d small).
void check_stacked(const TensorImpl* big, const TensorImpl* small, int n, const char* big_name,
                   const char* small_name, const char* what) {
  bool ok;
  if (small->ndim == 0) {
    ok = big->ndim == 1 && big->sizes[0] == n;
  } else {
    ok = big->ndim == small->ndim && big->sizes[0] == small->sizes[0] * n &&
         std::equal(big->sizes + 1, big->sizes + big->ndim, small->sizes + 1);
  }
  if (!ok) {
    Shape want = shape_of(*small);
    if (want.ndim == 0) {
      want.ndim = 1;
      want.sizes[0] = n;
    } else {
      want.sizes[0] *= n;
    }
    fail(TSR_INVALID_ARGUMENT,
         "{}: '{}' has shape {} but '{}' is {}: it must be {} (world size {} along dim 0)", what,
         big_name, shape_text(big->ndim, big->sizes), small_name,
         shape_text(small->ndim, small->sizes), shape_text(want.ndim, want.sizes), n);
  }
}

}  // namespace

namespace {
std::unique_ptr<ProcessGroup::Task> new_task(int kind, TensorImpl* a, TensorImpl* b) {
  auto t = std::make_unique<ProcessGroup::Task>();
  t->kind = static_cast<Kind>(kind);
  if (a != nullptr) t->a = TensorRef::borrow(a);
  if (b != nullptr) t->b = TensorRef::borrow(b);
  TensorImpl* s = a != nullptr ? a : b;
  if (s != nullptr) {
    Stream* st = current_stream(s->device());
    if (st != nullptr && st->try_retain()) t->stream = st;
  }
  return t;
}
}  // namespace

std::shared_ptr<Work> ProcessGroup::all_reduce(TensorImpl* tensor, int op) {
  check_tensor(tensor, "tensor", "all_reduce");
  check_op(op, tensor, "all_reduce");
  auto t = new_task(static_cast<int>(Kind::all_reduce), tensor, nullptr);
  t->op = op;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::broadcast(TensorImpl* tensor, int root) {
  check_tensor(tensor, "tensor", "broadcast");
  check_rank(root, size_, "src", "broadcast");
  auto t = new_task(static_cast<int>(Kind::broadcast), tensor, nullptr);
  t->root = root;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::reduce(TensorImpl* tensor, int op, int root) {
  check_tensor(tensor, "tensor", "reduce");
  check_op(op, tensor, "reduce");
  check_rank(root, size_, "dst", "reduce");
  auto t = new_task(static_cast<int>(Kind::reduce), tensor, nullptr);
  t->op = op;
  t->root = root;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::all_gather(TensorImpl* out, TensorImpl* in) {
  check_tensor(out, "output", "all_gather");
  check_tensor(in, "input", "all_gather");
  check_pair(out, in, "all_gather");
  check_stacked(out, in, size_, "output", "input", "all_gather");
  return submit(new_task(static_cast<int>(Kind::all_gather), in, out));
}

std::shared_ptr<Work> ProcessGroup::reduce_scatter(TensorImpl* out, TensorImpl* in, int op) {
  check_tensor(out, "output", "reduce_scatter");
  check_tensor(in, "input", "reduce_scatter");
  check_pair(out, in, "reduce_scatter");
  check_op(op, in, "reduce_scatter");
  check_stacked(in, out, size_, "input", "output", "reduce_scatter");
  auto t = new_task(static_cast<int>(Kind::reduce_scatter), in, out);
  t->op = op;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::gather(TensorImpl* out, TensorImpl* in, int root) {
  check_tensor(in, "input", "gather");
  check_rank(root, size_, "dst", "gather");
  if (rank_ == root) {
    check_tensor(out, "output", "gather");
    check_pair(out, in, "gather");
    check_stacked(out, in, size_, "output", "input", "gather");
  } else {
    out = nullptr;  // only the root receives
  }
  auto t = new_task(static_cast<int>(Kind::gather), in, out);
  t->root = root;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::scatter(TensorImpl* out, TensorImpl* in, int root) {
  check_tensor(out, "output", "scatter");
  check_rank(root, size_, "src", "scatter");
  if (rank_ == root) {
    check_tensor(in, "input", "scatter");
    check_pair(out, in, "scatter");
    check_stacked(in, out, size_, "input", "output", "scatter");
  } else {
    in = nullptr;
  }
  auto t = new_task(static_cast<int>(Kind::scatter), in, out);
  t->root = root;
  // The header carries out's shape on every rank (in exists on the root only).
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::all_to_all(TensorImpl* out, TensorImpl* in) {
  check_tensor(out, "output", "all_to_all");
  check_tensor(in, "input", "all_to_all");
  check_pair(out, in, "all_to_all");
  if (!same_shape(*out, shape_of(*in)))
    fail(TSR_INVALID_ARGUMENT, "all_to_all: 'output' has shape {} but 'input' {}; they must match",
         shape_text(out->ndim, out->sizes), shape_text(in->ndim, in->sizes));
  if (in->ndim == 0 || in->sizes[0] % size_ != 0)
    fail(TSR_INVALID_ARGUMENT,
         "all_to_all: 'input' has shape {}; dim 0 must split evenly into world size {} slices",
         shape_text(in->ndim, in->sizes), size_);
  return submit(new_task(static_cast<int>(Kind::all_to_all), in, out));
}

std::shared_ptr<Work> ProcessGroup::send(TensorImpl* tensor, int dst) {
  check_tensor(tensor, "tensor", "send");
  check_rank(dst, size_, "dst", "send");
  if (dst == rank_)
    fail(TSR_INVALID_ARGUMENT, "send: argument 'dst' is {}, this rank itself; send to a peer", dst);
  auto t = new_task(static_cast<int>(Kind::send), tensor, nullptr);
  t->root = dst;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::recv(TensorImpl* tensor, int src) {
  check_tensor(tensor, "tensor", "recv");
  check_rank(src, size_, "src", "recv");
  if (src == rank_)
    fail(TSR_INVALID_ARGUMENT, "recv: argument 'src' is {}, this rank itself; receive from a peer",
         src);
  auto t = new_task(static_cast<int>(Kind::recv), nullptr, tensor);
  t->root = src;
  return submit(std::move(t));
}

std::shared_ptr<Work> ProcessGroup::barrier() {
  return submit(new_task(static_cast<int>(Kind::barrier), nullptr, nullptr));
}

// ---- sub-groups -------------------------------------------------------------

std::shared_ptr<ProcessGroup> ProcessGroup::make_subgroup(const std::string& name,
                                                          const std::vector<int>& members,
                                                          GroupOptions options) {
  auto me = std::find(members.begin(), members.end(), rank_);
  if (me == members.end()) return nullptr;
  return create(runtime_, prefix_store(store_, name), static_cast<int>(me - members.begin()),
                static_cast<int>(members.size()), std::move(options));
}

std::shared_ptr<ProcessGroup> ProcessGroup::new_group(const std::vector<int>& ranks,
                                                      GroupOptions options) {
  if (ranks.empty()) fail(TSR_INVALID_ARGUMENT, "new_group: argument 'ranks' is empty");
  std::set<int> seen;
  for (int r : ranks) {
    check_rank(r, size_, "ranks", "new_group");
    if (!seen.insert(r).second)
      fail(TSR_INVALID_ARGUMENT, "new_group: rank {} appears twice in 'ranks'", r);
  }
  const int64_t n = subgroups_++;
  return make_subgroup(fmt::format("group/{}", n), ranks, std::move(options));
}

std::shared_ptr<ProcessGroup> ProcessGroup::split(int color, int key, GroupOptions options) {
  const int64_t n = subgroups_++;
  const std::string base = fmt::format("split/{}", n);
  store_->set(fmt::format("{}/{}", base, rank_), fmt::format("{} {}", color, key));
  struct Entry {
    int color, key, rank;
  };
  std::vector<Entry> all;
  for (int r = 0; r < size_; ++r) {
    std::string v = store_->get(fmt::format("{}/{}", base, r), options_.timeout);
    Entry e{0, 0, r};
    if (std::sscanf(v.c_str(), "%d %d", &e.color, &e.key) != 2)
      fail(TSR_DATA_LOSS, "split: rank {} published '{}', not 'color key'", r, v);
    all.push_back(e);
  }
  if (color < 0) return nullptr;
  std::vector<Entry> mine;
  for (const Entry& e : all)
    if (e.color == color) mine.push_back(e);
  std::stable_sort(mine.begin(), mine.end(), [](const Entry& x, const Entry& y) {
    return x.key != y.key ? x.key < y.key : x.rank < y.rank;
  });
  std::vector<int> members;
  for (const Entry& e : mine) members.push_back(e.rank);
  return make_subgroup(fmt::format("{}/{}", base, color), members, std::move(options));
}

// ---- init_process_group -----------------------------------------------------

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != 0 ? v : nullptr;
}

int env_int(const char* primary, const char* fallback, const char* what) {
  const char* v = env(primary);
  const char* used = primary;
  if (v == nullptr && fallback != nullptr) {
    v = env(fallback);
    used = fallback;
  }
  if (v == nullptr)
    fail(TSR_INVALID_ARGUMENT,
         "init_process_group: environment variable {} is not set, and no {} was given; launch with "
         "`tessera run -n N -- PROGRAM` (or torchrun, or mpirun), or pass {}",
         primary, what, what);
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (end == v || *end != 0 || x < 0 || x > (1 << 24))
    fail(TSR_INVALID_ARGUMENT, "init_process_group: environment variable {} is '{}', not a rank",
         used, v);
  return static_cast<int>(x);
}

uint16_t parse_port(const std::string& text, const char* what) {
  char* end = nullptr;
  long p = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != 0 || p < 1 || p > 65535)
    fail(TSR_INVALID_ARGUMENT, "init_process_group: {} is '{}', not a port (1..65535)", what, text);
  return static_cast<uint16_t>(p);
}

}  // namespace

std::shared_ptr<ProcessGroup> init_process_group(Runtime* runtime, const std::string& init_method,
                                                 int rank, int world_size, GroupOptions options) {
  if (rank < 0) rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", "rank");
  if (world_size < 0) world_size = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "world_size");
  if (options.timeout.count() <= 0)
    fail(TSR_INVALID_ARGUMENT, "init_process_group: timeout is {} ms; give a positive timeout",
         options.timeout.count());
  std::shared_ptr<Store> store;
  const std::string method = init_method.empty() ? "env://" : init_method;
  if (method == "env://") {
    const char* addr = env("MASTER_ADDR");
    const char* port = env("MASTER_PORT");
    if (addr != nullptr || port != nullptr) {
      if (addr == nullptr || port == nullptr)
        fail(TSR_INVALID_ARGUMENT,
             "init_process_group: {} is set but {} is not; env:// needs both MASTER_ADDR and "
             "MASTER_PORT",
             addr ? "MASTER_ADDR" : "MASTER_PORT", addr ? "MASTER_PORT" : "MASTER_ADDR");
      store = tcp_store(addr, parse_port(port, "MASTER_PORT"), rank == 0, options.timeout);
    } else if (const char* job =
                   env("PMIX_NAMESPACE") ? env("PMIX_NAMESPACE") : env("OMPI_MCA_ess_base_jobid")) {
      // mpirun on one host without MASTER_ADDR: a file store for this job.
      std::string name(job);
      for (char& ch : name)
        if (ch == '/' || ch == ' ') ch = '_';
      const char* tmp = env("TMPDIR");
      store =
          file_store(fmt::format("{}/tessera-store-{}", tmp ? tmp : "/tmp", name), options.timeout);
    } else {
      fail(TSR_INVALID_ARGUMENT,
           "init_process_group: env:// needs MASTER_ADDR and MASTER_PORT (rank 0's host and a "
           "free port); `tessera run` sets them");
    }
  } else if (method.rfind("tcp://", 0) == 0) {
    const std::string rest = method.substr(6);
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0)
      fail(TSR_INVALID_ARGUMENT, "init_process_group: init_method '{}' is not tcp://HOST:PORT",
           method);
    store = tcp_store(rest.substr(0, colon), parse_port(rest.substr(colon + 1), "the port"),
                      rank == 0, options.timeout);
  } else if (method.rfind("file://", 0) == 0) {
    store = file_store(method.substr(7), options.timeout);
  } else {
    fail(TSR_INVALID_ARGUMENT,
         "init_process_group: init_method '{}' is not env://, tcp://HOST:PORT or file:///PATH",
         method);
  }
  // Everyone arrives before anyone proceeds (PyTorch's store-based barrier),
  // so a missing rank or a wrong world size fails here, named.
  const int64_t joined = store->add("init/joined", 1);
  if (joined > world_size)
    fail(TSR_FAILED_PRECONDITION,
         "init_process_group: {} processes joined a world of size {}: a second job shares this "
         "store (MASTER_PORT / file), or WORLD_SIZE is wrong",
         joined, world_size);
  if (joined == world_size) store->set("init/done", "1");
  try {
    store->wait({"init/done"}, options.timeout);
  } catch (const Error& e) {
    if (e.code() != TSR_DEADLINE_EXCEEDED) throw;
    fail(TSR_DEADLINE_EXCEEDED,
         "init_process_group: rank {} waited {} ms and not every one of the {} ranks joined; did "
         "every rank start with the same MASTER_ADDR/MASTER_PORT and WORLD_SIZE?",
         rank, options.timeout.count(), world_size);
  }
  return ProcessGroup::create(runtime, std::move(store), rank, world_size, std::move(options));
}

}  // namespace tsr::dist
