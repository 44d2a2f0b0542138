// gloo_collectives.cpp - cpu:0's collectives over Gloo's TCP transport
// (collectives.hpp).
//
// Gloo's algorithms split buffers at element boundaries, so each call hands
// Gloo the tensor as elements of an unsigned type of the dtype's width
// (complex128 as a 16-byte pair) and reduces with Tessera's own functions by
// dtype: float16 / bfloat16 in float, bool as logical or / and, complex
// min / max refused (as PyTorch does). AVG is SUM divided by the world size,
// for floating and complex dtypes. reduce_scatter is an all_reduce into
// scratch memory and a copy of this rank's slice (Gloo has no reduce-scatter
// over arbitrary dtypes); scatter and gather are Gloo's.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../context.hpp"
#include "collectives.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

using std::chrono::milliseconds;

// A communicator: a Gloo context connected to every peer.
struct gloo_comm {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  int rank = 0;
  int size = 1;
  milliseconds timeout{0};
  std::atomic<bool> aborted{false};
  std::mutex mu;  // one collective at a time (Gloo contexts are not reentrant)
  uint32_t tag = 0;
};

// A status the host's store returned, carried through Gloo to the entry.
struct host_status {
  tsr_status* status;
};

// Gloo's rendezvous store over the host's (valid during comm_init only).
class host_store final : public gloo::rendezvous::Store {
 public:
  host_store(const tsr_host_store& store, milliseconds timeout)
      : store_(store), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    check(store_.set(store_.self, key.c_str(), data.data(), data.size()));
  }
  std::vector<char> get(const std::string& key) override {
    std::vector<char> value;
    check(store_.get(
        store_.self, key.c_str(), timeout_.count(),
        [](void* self, const void* bytes, size_t size) {
          auto* out = static_cast<std::vector<char>*>(self);
          const auto* p = static_cast<const char*>(bytes);
          out->assign(p, p + size);
        },
        &value));
    return value;
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const milliseconds& timeout) override {
    std::vector<const char*> names;
    names.reserve(keys.size());
    for (const std::string& k : keys) names.push_back(k.c_str());
    check(store_.wait(store_.self, names.data(), names.size(), timeout.count()));
  }

 private:
  static void check(tsr_status* s) {
    if (s != nullptr) throw host_status{s};
  }
  const tsr_host_store& store_;
  milliseconds timeout_;
};

// Note [Naming the dead peer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Gloo names a peer that failed by its address ("Connection closed by peer
// [10.0.0.2]:41523"); a user thinks in ranks. After the full mesh connects,
// every rank publishes, through the group's store, the address each of its
// pairs listens on; the address this rank's pair with rank q reports is the
// one q published for its pair with this rank. The map lives for the
// communicator (a port is reused only after it closed), and an I/O error
// from Gloo gets "(rank q)" after every address the map knows.
class peer_names {
 public:
  static peer_names& get() {
    static auto* p = new peer_names();  // never destroyed: entries may run at exit
    return *p;
  }
  void add(const void* comm, const std::string& address, int rank) {
    std::lock_guard<std::mutex> lock(mu_);
    ranks_[address] = {comm, rank};
  }
  void remove(const void* comm) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = ranks_.begin(); it != ranks_.end();) {
      it = it->second.first == comm ? ranks_.erase(it) : std::next(it);
    }
  }
  // `text` with " (rank q)" after each known address. The side of a pair
  // that accepted the connection reports the peer's ephemeral port, which no
  // one published: in a communicator of two the peer is still known.
  std::string annotate(const std::string& text, int rank, int size) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out = text;
    bool named = false;
    for (const auto& [address, who] : ranks_) {
      const size_t at = out.find(address);
      if (at == std::string::npos) continue;
      out.insert(at + address.size(), " (rank " + std::to_string(who.second) + ")");
      named = true;
    }
    if (!named && size == 2) out += " (the peer is rank " + std::to_string(1 - rank) + ")";
    return out;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<const void*, int>> ranks_;
};

void publish_peer_addresses(gloo_comm& c, gloo::rendezvous::Store& store) {
  std::string mine;
  for (int j = 0; j < c.size; ++j) {
    if (j != c.rank) mine += c.context->getPair(j)->address().str();
    mine += '\n';
  }
  store.set("peer-addresses/" + std::to_string(c.rank),
            std::vector<char>(mine.begin(), mine.end()));
  for (int q = 0; q < c.size; ++q) {
    if (q == c.rank) continue;
    const std::vector<char> bytes = store.get("peer-addresses/" + std::to_string(q));
    std::string line;
    int j = 0;
    for (char ch : bytes) {
      if (ch != '\n') {
        line += ch;
        continue;
      }
      if (j++ == c.rank && !line.empty()) peer_names::get().add(&c, line, q);
      line.clear();
    }
  }
}

// Note [SIGPIPE and dead peers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Gloo writes to its sockets with plain send/writev: a write to a peer that
// died raises SIGPIPE, whose default action kills the whole process - the
// host would die with its peer instead of getting UNAVAILABLE. Every entry
// blocks SIGPIPE on the calling thread for its duration (so the write fails
// with EPIPE, which Gloo reports), takes a SIGPIPE left pending by it, and
// restores the thread's mask; Gloo's own I/O thread is created inside an
// entry (comm_init's device), so it inherits the blocked mask for good. The
// process's disposition of SIGPIPE is never changed.
class no_sigpipe {
 public:
  no_sigpipe() noexcept {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~no_sigpipe() {
    if (sigismember(&old_, SIGPIPE) == 1) return;  // the caller blocks it already
    sigset_t pending;
    sigemptyset(&pending);
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  no_sigpipe(const no_sigpipe&) = delete;
  no_sigpipe& operator=(const no_sigpipe&) = delete;

 private:
  sigset_t pipe_{}, old_{};
};

// Runs f(ctx) as collective entry `name`: the SDK's guard, plus Gloo's
// exceptions and the host store's statuses turned into statuses. `comm`:
// the entry's communicator (a gloo_comm), for naming a failed peer (Note
// [Naming the dead peer]); it is read only after comm_of accepted it. Not a
// thread_local: dynamic TLS in a dlopen'ed plugin crashes LeakSanitizer's
// exit-time tracer.
template <class F>
tsr_status* entry(tsr_plugin_context* context, const char* name, F&& f,
                  const void* comm = nullptr) noexcept {
  const no_sigpipe guard;
  return sdk::context_entry(context, kPluginName, name, [&](tsr_plugin_context& ctx) {
    try {
      f(ctx);
      return static_cast<tsr_status*>(nullptr);
    } catch (const host_status& h) {
      return h.status;
    } catch (const gloo::IoException& e) {
      const auto* c = static_cast<const gloo_comm*>(comm);
      const std::string what =
          c != nullptr ? peer_names::get().annotate(e.what(), c->rank, c->size) : e.what();
      const bool timed_out =
          what.find("imed out") != std::string::npos || what.find("imeout") != std::string::npos;
      sdk::throw_status(timed_out ? TSR_DEADLINE_EXCEEDED : TSR_UNAVAILABLE,
                        "cpu plugin %s (gloo): %s%s", name, what.c_str(),
                        timed_out ? "; a peer did not take part within the group's timeout"
                                  : "; a peer closed its connection (did a rank exit?)");
    } catch (const gloo::Exception& e) {
      sdk::throw_status(TSR_INTERNAL, "cpu plugin %s (gloo): %s", name, e.what());
    }
  });
}

// ---- arguments ----

gloo_comm& comm_of(const char* entry, void* comm) {
  sdk::check_not_null(kPluginName, entry, "comm", comm);
  auto& c = *static_cast<gloo_comm*>(comm);
  if (c.aborted.load()) {
    sdk::throw_status(TSR_ABORTED,
                      "cpu plugin %s: the communicator was aborted (another rank failed); "
                      "destroy it and make a new group",
                      entry);
  }
  return c;
}

// A host tensor's bytes: contiguous, of a valid dtype.
struct span {
  char* data = nullptr;
  size_t numel = 0;
  size_t width = 0;  // bytes per element
  tsr_dtype dtype = TSR_FLOAT32;
  size_t bytes() const { return numel * width; }
};

span span_of(const char* entry, const char* what, const tsr_tensor_desc* t) {
  sdk::check_not_null(kPluginName, entry, what, t);
  if (!sdk::is_valid_dtype(t->dtype)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: %s has dtype %d, not a tsr_dtype",
                      entry, what, static_cast<int>(t->dtype));
  }
  if (t->ndim < 0 || t->ndim > TSR_MAX_DIMS) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: %s has %d dims (0..%d allowed)", entry,
                      what, static_cast<int>(t->ndim), TSR_MAX_DIMS);
  }
  int64_t expected = 1;
  for (int d = t->ndim - 1; d >= 0; --d) {
    if (t->sizes[d] < 0) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: %s has size %lld at dim %d", entry,
                        what, static_cast<long long>(t->sizes[d]), d);
    }
    if (t->sizes[d] != 1 && t->strides[d] != expected) {
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "cpu plugin %s: %s must be contiguous (stride %lld at dim %d, expected "
                        "%lld); the host passes contiguous tensors",
                        entry, what, static_cast<long long>(t->strides[d]), d,
                        static_cast<long long>(expected));
    }
    expected *= t->sizes[d];
  }
  span s;
  s.dtype = static_cast<tsr_dtype>(t->dtype);
  s.numel = static_cast<size_t>(sdk::numel(*t));
  s.width = sdk::element_size(s.dtype);
  s.data = static_cast<char*>(t->data);
  if (s.numel > 0 && s.data == nullptr) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: %s has no data for %zu elements", entry,
                      what, s.numel);
  }
  return s;
}

void check_same_dtype(const char* entry, const span& a, const span& b) {
  if (a.dtype != b.dtype) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: in is %s but out is %s", entry,
                      sdk::dtype_name(a.dtype), sdk::dtype_name(b.dtype));
  }
}

void check_numel(const char* entry, const char* what, const span& s, size_t expected,
                 const char* rule) {
  if (s.numel != expected) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: %s has %zu elements, %s: %zu", entry,
                      what, s.numel, rule, expected);
  }
}

void check_rank(const char* entry, const char* what, int32_t r, const gloo_comm& c) {
  if (r < 0 || r >= c.size) {
    sdk::throw_status(TSR_OUT_OF_RANGE, "cpu plugin %s: %s %d is not a rank of the group (0..%d)",
                      entry, what, static_cast<int>(r), c.size - 1);
  }
}

// ---- element types and reductions ----

template <size_t W>
struct lane;
template <>
struct lane<1> {
  using type = uint8_t;
};
template <>
struct lane<2> {
  using type = uint16_t;
};
template <>
struct lane<4> {
  using type = uint32_t;
};
template <>
struct lane<8> {
  using type = uint64_t;
};
struct pair16 {
  uint64_t lo, hi;
};
template <>
struct lane<16> {
  using type = pair16;
};

// Calls f(lane_tag<U>{}) for the unsigned lane type U of `width` bytes.
template <class U>
struct lane_tag {
  using type = U;
};
template <class F>
void with_lane(size_t width, F&& f) {
  switch (width) {
    case 1:
      return f(lane_tag<uint8_t>{});
    case 2:
      return f(lane_tag<uint16_t>{});
    case 4:
      return f(lane_tag<uint32_t>{});
    case 8:
      return f(lane_tag<uint64_t>{});
    default:
      return f(lane_tag<pair16>{});
  }
}

template <class T>
T combine(const T& a, const T& b, int op) {
  if constexpr (std::is_same_v<T, bool>) {
    return (op == TSR_COLLECTIVE_PRODUCT || op == TSR_COLLECTIVE_MIN) ? (a && b) : (a || b);
  } else if constexpr (std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>) {
    const float x = static_cast<float>(a), y = static_cast<float>(b);
    float r = x + y;
    if (op == TSR_COLLECTIVE_PRODUCT) r = x * y;
    if (op == TSR_COLLECTIVE_MIN) r = (x < y || x != x) ? x : y;
    if (op == TSR_COLLECTIVE_MAX) r = (x > y || x != x) ? x : y;
    return T(static_cast<double>(r));
  } else if constexpr (sdk::is_complex_v<T>) {
    return op == TSR_COLLECTIVE_PRODUCT ? a * b : a + b;
  } else {
    if (op == TSR_COLLECTIVE_PRODUCT) return static_cast<T>(a * b);
    if (op == TSR_COLLECTIVE_MIN) return (a < b || a != a) ? a : b;  // NaN propagates
    if (op == TSR_COLLECTIVE_MAX) return (a > b || a != a) ? a : b;
    return static_cast<T>(a + b);
  }
}

// Gloo's reduction function for `dtype` and `op` (AVG reduces as SUM).
gloo::AllreduceOptions::Func reducer(tsr_dtype dtype, int op) {
  return sdk::dispatch_dtype(dtype, [op](auto tag) -> gloo::AllreduceOptions::Func {
    using T = typename decltype(tag)::type;
    return [op](void* out, const void* a, const void* b, size_t n) {
      auto* o = static_cast<T*>(out);
      const auto* x = static_cast<const T*>(a);
      const auto* y = static_cast<const T*>(b);
      for (size_t i = 0; i < n; ++i) o[i] = combine<T>(x[i], y[i], op);
    };
  });
}

void check_op(const char* entry, int32_t op, tsr_dtype dtype) {
  if (op < 0 || op >= TSR_COLLECTIVE_OP_COUNT) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "cpu plugin %s: op %d is not a tsr_collective_op (0 sum .. 4 avg)", entry,
                      static_cast<int>(op));
  }
  const bool complex = dtype == TSR_COMPLEX64 || dtype == TSR_COMPLEX128;
  if (complex && (op == TSR_COLLECTIVE_MIN || op == TSR_COLLECTIVE_MAX)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin %s: min and max are undefined for %s",
                      entry, sdk::dtype_name(dtype));
  }
  const bool floating = complex || dtype == TSR_FLOAT16 || dtype == TSR_BFLOAT16 ||
                        dtype == TSR_FLOAT32 || dtype == TSR_FLOAT64;
  if (op == TSR_COLLECTIVE_AVG && !floating) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "cpu plugin %s: avg needs a floating or complex dtype, not %s; reduce with "
                      "sum and divide",
                      entry, sdk::dtype_name(dtype));
  }
}

// Divides every element by `n` (AVG after SUM).
void divide(const span& s, int n) {
  sdk::dispatch_dtype(s.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>) {
      auto* p = reinterpret_cast<T*>(s.data);
      for (size_t i = 0; i < s.numel; ++i)
        p[i] = T(static_cast<double>(static_cast<float>(p[i]) / static_cast<float>(n)));
    } else if constexpr (sdk::is_complex_v<T>) {
      auto* p = reinterpret_cast<T*>(s.data);
      for (size_t i = 0; i < s.numel; ++i) p[i] /= static_cast<typename T::value_type>(n);
    } else if constexpr (std::is_floating_point_v<T>) {
      auto* p = reinterpret_cast<T*>(s.data);
      for (size_t i = 0; i < s.numel; ++i) p[i] /= static_cast<T>(n);
    }
  });
}

// All-reduce of `in` into `out` (may be the same memory).
void run_all_reduce(gloo_comm& c, const span& in, const span& out, int32_t op) {
  if (out.numel == 0) return;
  if (in.data != out.data) std::memcpy(out.data, in.data, in.bytes());
  if (c.size > 1) {
    gloo::AllreduceOptions o(c.context);
    with_lane(out.width, [&](auto tag) {
      using U = typename decltype(tag)::type;
      o.setOutput(reinterpret_cast<U*>(out.data), out.numel);
    });
    o.setReduceFunction(reducer(out.dtype, op));
    o.setTag(c.tag++);
    o.setTimeout(c.timeout);
    gloo::allreduce(o);
  }
  if (op == TSR_COLLECTIVE_AVG) divide(out, c.size);
}

// ---- entries ----

void comm_destroy(tsr_plugin_context*, void* comm) noexcept {
  const no_sigpipe guard;  // closing a pair may write to a dead peer
  peer_names::get().remove(comm);
  delete static_cast<gloo_comm*>(comm);
}

tsr_status* query_caps(tsr_plugin_context* context, int32_t device,
                       tsr_collective_caps* out) noexcept {
  return entry(context, "query_caps", [&](tsr_plugin_context&) {
    sdk::check_device_index(kPluginName, "query_caps", device, 1);
    sdk::check_not_null(kPluginName, "query_caps", "out_caps", out);
    auto caps = sdk::zeroed_struct<tsr_collective_caps>();
    caps.collectives = TSR_COLLECTIVE_ALL_REDUCE | TSR_COLLECTIVE_BROADCAST |
                       TSR_COLLECTIVE_ALL_GATHER | TSR_COLLECTIVE_REDUCE_SCATTER |
                       TSR_COLLECTIVE_SEND_RECV | TSR_COLLECTIVE_BARRIER |
                       TSR_COLLECTIVE_ALL_TO_ALL | TSR_COLLECTIVE_REDUCE | TSR_COLLECTIVE_GATHER |
                       TSR_COLLECTIVE_SCATTER;
    caps.reduce_ops = (1u << TSR_COLLECTIVE_OP_COUNT) - 1u;
    caps.dtypes = TSR_DTYPE_MASK_ALL;
    caps.flags = TSR_COLLECTIVES_HOST_MEMORY;
    caps.max_world = 0;
    caps.unique_id_size = 0;
    std::snprintf(caps.engine, sizeof caps.engine, "gloo %d.%d.%d (tcp)", GLOO_VERSION_MAJOR,
                  GLOO_VERSION_MINOR, GLOO_VERSION_PATCH);
    sdk::write_sized(caps, out);
  });
}

// Gloo's TCP device: on GLOO_SOCKET_IFNAME's interface when set (PyTorch's
// variable), else on this host's name when it resolves, else loopback.
std::shared_ptr<gloo::transport::Device> tcp_device() {
  gloo::transport::tcp::attr attr;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface != nullptr && *iface != 0) {
    attr.iface = iface;
  } else if (const char* host = std::getenv("TESSERA_GLOO_HOSTNAME");
             host != nullptr && *host != 0) {
    attr.hostname = host;
  } else {
    attr.hostname = "127.0.0.1";
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0 && name[0] != 0) {
      try {
        return gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr(name));
      } catch (const gloo::Exception&) {  // NOLINT(bugprone-empty-catch): fall back to loopback
      }
    }
  }
  return gloo::transport::tcp::CreateDevice(attr);
}

tsr_status* comm_init(tsr_plugin_context* context, const tsr_comm_init_args* args,
                      void** out_comm) noexcept {
  return entry(context, "comm_init", [&](tsr_plugin_context&) {
    sdk::check_not_null(kPluginName, "comm_init", "args", args);
    sdk::check_not_null(kPluginName, "comm_init", "out_comm", out_comm);
    *out_comm = nullptr;
    sdk::check_device_index(kPluginName, "comm_init", args->device, 1);
    if (args->world_size < 1 || args->rank < 0 || args->rank >= args->world_size) {
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "cpu plugin comm_init: rank %d of world size %d; need 0 <= rank < "
                        "world_size",
                        static_cast<int>(args->rank), static_cast<int>(args->world_size));
    }
    if (args->timeout_ms <= 0) {
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "cpu plugin comm_init: timeout_ms is %lld; give a positive timeout",
                        static_cast<long long>(args->timeout_ms));
    }
    if (args->engine != nullptr && args->engine[0] != 0 && std::strcmp(args->engine, "gloo") != 0) {
      sdk::throw_status(TSR_NOT_FOUND,
                        "cpu plugin comm_init: no engine '%s'; the cpu plugin's engine is 'gloo'",
                        args->engine);
    }
    auto c = std::make_unique<gloo_comm>();
    c->rank = args->rank;
    c->size = args->world_size;
    c->timeout = milliseconds(args->timeout_ms);
    if (c->size > 1) {
      sdk::check_not_null(kPluginName, "comm_init", "store", args->store);
      c->device = tcp_device();
      c->context = std::make_shared<gloo::rendezvous::Context>(c->rank, c->size);
      c->context->setTimeout(c->timeout);
      host_store store(*args->store, c->timeout);
      c->context->connectFullMesh(store, c->device);
      publish_peer_addresses(*c, store);  // Note [Naming the dead peer]
    }
    *out_comm = c.release();
  });
}

tsr_status* comm_abort(tsr_plugin_context* context, void* comm) noexcept {
  return entry(context, "comm_abort", [&](tsr_plugin_context&) {
    sdk::check_not_null(kPluginName, "comm_abort", "comm", comm);
    static_cast<gloo_comm*>(comm)->aborted.store(true);
  });
}

tsr_status* comm_get_async_error(tsr_plugin_context* context, void* comm) noexcept {
  // Synchronous: every error was returned by the call that met it.
  return entry(context, "comm_get_async_error", [&](tsr_plugin_context&) {
    sdk::check_not_null(kPluginName, "comm_get_async_error", "comm", comm);
  });
}

tsr_status* all_reduce(tsr_plugin_context* context, void* comm, tsr_tensor_desc* inout, int32_t op,
                       tsr_plugin_stream*) noexcept {
  return entry(
      context, "all_reduce",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("all_reduce", comm);
        const span s = span_of("all_reduce", "inout", inout);
        check_op("all_reduce", op, s.dtype);
        std::lock_guard<std::mutex> lock(c.mu);
        run_all_reduce(c, s, s, op);
        // TEST ONLY ($TESSERA_CPU_TEST_WRONG_COLLECTIVE=all_reduce): rank 1's
        // first float32 element comes out wrong, so the collectives conformance
        // family can show it catches a wrong engine on a rank other than 0.
        static const bool wrong = [] {
          const char* w = std::getenv("TESSERA_CPU_TEST_WRONG_COLLECTIVE");
          return w != nullptr && std::strcmp(w, "all_reduce") == 0;
        }();
        if (wrong && c.rank == 1 && s.dtype == TSR_FLOAT32 && s.numel > 0) {
          float first;
          std::memcpy(&first, s.data, sizeof first);
          first += 1.0f;
          std::memcpy(s.data, &first, sizeof first);
        }
      },
      comm);
}

tsr_status* reduce(tsr_plugin_context* context, void* comm, tsr_tensor_desc* inout, int32_t op,
                   int32_t root, tsr_plugin_stream*) noexcept {
  return entry(
      context, "reduce",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("reduce", comm);
        const span s = span_of("reduce", "inout", inout);
        check_op("reduce", op, s.dtype);
        check_rank("reduce", "root", root, c);
        std::lock_guard<std::mutex> lock(c.mu);
        if (s.numel == 0) return;
        if (c.size > 1) {
          // Gloo's reduce leaves the non-roots' buffers as scratch; PyTorch's
          // contract leaves them unspecified too, but ours keeps them: reduce a copy.
          std::vector<char> copy(s.data, s.data + s.bytes());
          gloo::ReduceOptions o(c.context);
          with_lane(s.width, [&](auto tag) {
            using U = typename decltype(tag)::type;
            o.setInput(reinterpret_cast<U*>(copy.data()), s.numel);
            o.setOutput(reinterpret_cast<U*>(copy.data()), s.numel);
          });
          o.setRoot(root);
          o.setReduceFunction(reducer(s.dtype, op));
          o.setTag(c.tag++);
          o.setTimeout(c.timeout);
          gloo::reduce(o);
          if (c.rank == root) std::memcpy(s.data, copy.data(), s.bytes());
        }
        if (op == TSR_COLLECTIVE_AVG && c.rank == root) divide(s, c.size);
      },
      comm);
}

tsr_status* broadcast(tsr_plugin_context* context, void* comm, tsr_tensor_desc* inout, int32_t root,
                      tsr_plugin_stream*) noexcept {
  return entry(
      context, "broadcast",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("broadcast", comm);
        const span s = span_of("broadcast", "inout", inout);
        check_rank("broadcast", "root", root, c);
        std::lock_guard<std::mutex> lock(c.mu);
        if (s.numel == 0 || c.size == 1) return;
        gloo::BroadcastOptions o(c.context);
        with_lane(s.width, [&](auto tag) {
          using U = typename decltype(tag)::type;
          if (c.rank == root) o.setInput(reinterpret_cast<U*>(s.data), s.numel);
          o.setOutput(reinterpret_cast<U*>(s.data), s.numel);
        });
        o.setRoot(root);
        o.setTag(c.tag++);
        o.setTimeout(c.timeout);
        gloo::broadcast(o);
      },
      comm);
}

// Gloo's `Options` algorithm from `in` to `out` (all_gather, all_to_all):
// Gloo reads `in` after it starts writing `out`, so `in` goes via a copy (it
// may lie inside `out`); one rank only copies.
template <class Options, class Run>
void run_in_out(gloo_comm& c, const span& i, const span& o, Run run) {
  if (o.numel == 0) return;
  if (c.size == 1) {
    std::memmove(o.data, i.data, i.bytes());
    return;
  }
  std::vector<char> copy(i.data, i.data + i.bytes());
  Options options(c.context);
  with_lane(o.width, [&](auto tag) {
    using U = typename decltype(tag)::type;
    options.setInput(reinterpret_cast<U*>(copy.data()), i.numel);
    options.setOutput(reinterpret_cast<U*>(o.data), o.numel);
  });
  options.setTag(c.tag++);
  options.setTimeout(c.timeout);
  run(options);
}

tsr_status* all_gather(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                       tsr_tensor_desc* out, tsr_plugin_stream*) noexcept {
  return entry(
      context, "all_gather",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("all_gather", comm);
        const span i = span_of("all_gather", "in", in);
        const span o = span_of("all_gather", "out", out);
        check_same_dtype("all_gather", i, o);
        check_numel("all_gather", "out", o, i.numel * static_cast<size_t>(c.size),
                    "world_size times in's");
        std::lock_guard<std::mutex> lock(c.mu);
        run_in_out<gloo::AllgatherOptions>(c, i, o,
                                           [](gloo::AllgatherOptions& g) { gloo::allgather(g); });
      },
      comm);
}

tsr_status* reduce_scatter(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                           tsr_tensor_desc* out, int32_t op, tsr_plugin_stream*) noexcept {
  return entry(
      context, "reduce_scatter",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("reduce_scatter", comm);
        const span i = span_of("reduce_scatter", "in", in);
        const span o = span_of("reduce_scatter", "out", out);
        check_same_dtype("reduce_scatter", i, o);
        check_op("reduce_scatter", op, o.dtype);
        check_numel("reduce_scatter", "in", i, o.numel * static_cast<size_t>(c.size),
                    "world_size times out's");
        std::lock_guard<std::mutex> lock(c.mu);
        if (o.numel == 0) return;
        std::vector<char> scratch(i.bytes());
        span all = i;
        all.data = scratch.data();
        run_all_reduce(c, i, all, op);
        std::memcpy(o.data, scratch.data() + static_cast<size_t>(c.rank) * o.bytes(), o.bytes());
      },
      comm);
}

tsr_status* all_to_all(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                       tsr_tensor_desc* out, tsr_plugin_stream*) noexcept {
  return entry(
      context, "all_to_all",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("all_to_all", comm);
        const span i = span_of("all_to_all", "in", in);
        const span o = span_of("all_to_all", "out", out);
        check_same_dtype("all_to_all", i, o);
        check_numel("all_to_all", "out", o, i.numel, "the same as in's");
        if (i.numel % static_cast<size_t>(c.size) != 0) {
          sdk::throw_status(
              TSR_INVALID_ARGUMENT,
              "cpu plugin all_to_all: in has %zu elements, not a multiple of the world "
              "size %d",
              i.numel, c.size);
        }
        std::lock_guard<std::mutex> lock(c.mu);
        run_in_out<gloo::AlltoallOptions>(c, i, o,
                                          [](gloo::AlltoallOptions& a) { gloo::alltoall(a); });
      },
      comm);
}

tsr_status* gather(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                   tsr_tensor_desc* out, int32_t root, tsr_plugin_stream*) noexcept {
  return entry(
      context, "gather",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("gather", comm);
        check_rank("gather", "root", root, c);
        const span i = span_of("gather", "in", in);
        span o;
        if (c.rank == root) {
          o = span_of("gather", "out", out);
          check_same_dtype("gather", i, o);
          check_numel("gather", "out", o, i.numel * static_cast<size_t>(c.size),
                      "world_size times in's");
        }
        std::lock_guard<std::mutex> lock(c.mu);
        if (i.numel == 0) return;
        if (c.size == 1) {
          std::memmove(o.data, i.data, i.bytes());
          return;
        }
        std::vector<char> copy(i.data, i.data + i.bytes());
        gloo::GatherOptions g(c.context);
        with_lane(i.width, [&](auto tag) {
          using U = typename decltype(tag)::type;
          g.setInput(reinterpret_cast<U*>(copy.data()), i.numel);
          if (c.rank == root) g.setOutput(reinterpret_cast<U*>(o.data), o.numel);
        });
        g.setRoot(root);
        g.setTag(c.tag++);
        g.setTimeout(c.timeout);
        gloo::gather(g);
      },
      comm);
}

tsr_status* scatter(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                    tsr_tensor_desc* out, int32_t root, tsr_plugin_stream*) noexcept {
  return entry(
      context, "scatter",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("scatter", comm);
        check_rank("scatter", "root", root, c);
        const span o = span_of("scatter", "out", out);
        span i;
        if (c.rank == root) {
          i = span_of("scatter", "in", in);
          check_same_dtype("scatter", i, o);
          check_numel("scatter", "in", i, o.numel * static_cast<size_t>(c.size),
                      "world_size times out's");
        }
        std::lock_guard<std::mutex> lock(c.mu);
        if (o.numel == 0) return;
        if (c.size == 1) {
          std::memmove(o.data, i.data, o.bytes());
          return;
        }
        std::vector<char> copy;
        if (c.rank == root) copy.assign(i.data, i.data + i.bytes());
        gloo::ScatterOptions s(c.context);
        with_lane(o.width, [&](auto tag) {
          using U = typename decltype(tag)::type;
          if (c.rank == root) {
            std::vector<U*> parts(static_cast<size_t>(c.size));
            for (int r = 0; r < c.size; ++r)
              parts[static_cast<size_t>(r)] =
                  reinterpret_cast<U*>(copy.data() + static_cast<size_t>(r) * o.bytes());
            s.setInputs(parts, o.numel);
          }
          s.setOutput(reinterpret_cast<U*>(o.data), o.numel);
        });
        s.setRoot(root);
        s.setTag(c.tag++);
        s.setTimeout(c.timeout);
        gloo::scatter(s);
      },
      comm);
}

// Point-to-point: Gloo's unbound buffers, on a slot both sides derive from
// the pair (so sends between two ranks keep their order).
constexpr uint64_t kPointToPointSlot = 0x7e55e7a000000000ull;

tsr_status* send(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in, int32_t peer,
                 tsr_plugin_stream*) noexcept {
  return entry(
      context, "send",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("send", comm);
        check_rank("send", "peer", peer, c);
        if (peer == c.rank) {
          sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu plugin send: rank %d cannot send to itself",
                            c.rank);
        }
        const span s = span_of("send", "in", in);
        if (s.numel == 0) return;
        auto buffer = c.context->createUnboundBuffer(s.data, s.bytes());
        buffer->send(peer, kPointToPointSlot);
        if (!buffer->waitSend(c.timeout)) {
          sdk::throw_status(TSR_ABORTED, "cpu plugin send to rank %d: aborted",
                            static_cast<int>(peer));
        }
      },
      comm);
}

tsr_status* recv(tsr_plugin_context* context, void* comm, tsr_tensor_desc* out, int32_t peer,
                 tsr_plugin_stream*) noexcept {
  return entry(
      context, "recv",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("recv", comm);
        check_rank("recv", "peer", peer, c);
        if (peer == c.rank) {
          sdk::throw_status(TSR_INVALID_ARGUMENT,
                            "cpu plugin recv: rank %d cannot receive from itself", c.rank);
        }
        const span s = span_of("recv", "out", out);
        if (s.numel == 0) return;
        auto buffer = c.context->createUnboundBuffer(s.data, s.bytes());
        buffer->recv(peer, kPointToPointSlot);
        if (!buffer->waitRecv(c.timeout)) {
          sdk::throw_status(TSR_ABORTED, "cpu plugin recv from rank %d: aborted",
                            static_cast<int>(peer));
        }
      },
      comm);
}

tsr_status* barrier(tsr_plugin_context* context, void* comm, tsr_plugin_stream*) noexcept {
  return entry(
      context, "barrier",
      [&](tsr_plugin_context&) {
        gloo_comm& c = comm_of("barrier", comm);
        std::lock_guard<std::mutex> lock(c.mu);
        if (c.size == 1) return;
        gloo::BarrierOptions b(c.context);
        b.setTag(c.tag++);
        b.setTimeout(c.timeout);
        gloo::barrier(b);
      },
      comm);
}

// Grouped calls: Gloo runs each call when issued, so a group is only nesting.
tsr_status* group_start(tsr_plugin_context* context) noexcept {
  return entry(context, "group_start", [](tsr_plugin_context&) {});
}
tsr_status* group_end(tsr_plugin_context* context) noexcept {
  return entry(context, "group_end", [](tsr_plugin_context&) {});
}

tsr_plugin_collectives make_table() noexcept {
  auto t = sdk::zeroed_struct<tsr_plugin_collectives>();
  t.comm_destroy = comm_destroy;
  t.all_reduce = all_reduce;
  t.broadcast = broadcast;
  t.all_gather = all_gather;
  t.reduce_scatter = reduce_scatter;
  t.send = send;
  t.recv = recv;
  t.barrier = barrier;
  t.query_caps = query_caps;
  t.comm_init = comm_init;
  t.comm_abort = comm_abort;
  t.comm_get_async_error = comm_get_async_error;
  t.group_start = group_start;
  t.group_end = group_end;
  t.all_to_all = all_to_all;
  t.reduce = reduce;
  t.gather = gather;
  t.scatter = scatter;
  return t;
}

}  // namespace

const tsr_plugin_collectives* collectives_table() noexcept {
  static const tsr_plugin_collectives table = make_table();
  return &table;
}

}  // namespace tessera::cpu
