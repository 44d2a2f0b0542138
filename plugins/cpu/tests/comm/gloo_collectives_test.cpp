// gloo_collectives_test.cpp - cpu:0's collectives table (Gloo over TCP
// loopback), through the plugin ABI alone: the ranks are threads of this
// process, each with its own communicator, meeting through a store of the
// test's own (the test plays the host). Values are small integers, so every
// dtype holds the exact reference, computed here in long double.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

using namespace std::chrono_literals;

// The host's key/value store, in memory, shared by the rank threads.
class memory_store {
 public:
  tsr_host_store table() {
    tsr_host_store t{};
    t.struct_size = sizeof t;
    t.self = this;
    t.set = [](void* self, const char* key, const void* value, size_t size) -> tsr_status* {
      auto& s = *static_cast<memory_store*>(self);
      std::lock_guard<std::mutex> lock(s.mu_);
      const auto* p = static_cast<const char*>(value);
      s.values_[key].assign(p, p + size);
      s.cv_.notify_all();
      return nullptr;
    };
    t.get = [](void* self, const char* key, int64_t timeout_ms,
               void (*sink)(void*, const void*, size_t), void* sink_self) -> tsr_status* {
      auto& s = *static_cast<memory_store*>(self);
      std::unique_lock<std::mutex> lock(s.mu_);
      if (!s.wait_for(lock, {key}, timeout_ms)) return s.timed_out(key);
      const std::vector<char>& v = s.values_[key];
      sink(sink_self, v.data(), v.size());
      return nullptr;
    };
    t.wait = [](void* self, const char* const* keys, size_t count,
                int64_t timeout_ms) -> tsr_status* {
      auto& s = *static_cast<memory_store*>(self);
      std::unique_lock<std::mutex> lock(s.mu_);
      std::vector<std::string> names(keys, keys + count);
      if (!s.wait_for(lock, names, timeout_ms)) return s.timed_out(names.empty() ? "" : names[0]);
      return nullptr;
    };
    t.add = [](void* self, const char* key, int64_t delta, int64_t* out) -> tsr_status* {
      auto& s = *static_cast<memory_store*>(self);
      std::lock_guard<std::mutex> lock(s.mu_);
      s.counters_[key] += delta;
      *out = s.counters_[key];
      return nullptr;
    };
    return t;
  }

 private:
  bool wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                int64_t timeout_ms) {
    const auto ready = [&] {
      for (const std::string& k : keys)
        if (values_.count(k) == 0) return false;
      return true;
    };
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms < 0 ? 30000 : timeout_ms),
                        ready);
  }
  tsr_status* timed_out(const std::string& key) {
    const std::string message = "test store: timed out waiting for key '" + key + "'";
    return test_host().make_status(TSR_DEADLINE_EXCEEDED, message.c_str());
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> values_;
  std::map<std::string, int64_t> counters_;
};

const tsr_plugin_collectives& table() { return *test_plugin::get().api().collectives; }
tsr_plugin_context* ctx() { return test_plugin::get().context(); }

// Runs body(rank, comm) on `world` threads, each with a communicator made
// by comm_init over one store; destroys the communicators afterwards.
void run_ranks(int world, const std::function<void(int, void*)>& body, int64_t timeout_ms = 20000) {
  memory_store store;
  const tsr_host_store s = store.table();
  std::vector<std::thread> threads;
  std::vector<std::string> failures(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      tsr_comm_init_args args{};
      args.struct_size = sizeof args;
      args.device = 0;
      args.rank = r;
      args.world_size = world;
      args.store = &s;
      args.timeout_ms = timeout_ms;
      void* comm = nullptr;
      status_ptr st(table().comm_init(ctx(), &args, &comm));
      if (st) {
        failures[static_cast<size_t>(r)] = "comm_init: " + st->message;
        return;
      }
      body(r, comm);
      table().comm_destroy(ctx(), comm);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(failures[static_cast<size_t>(r)], "") << "rank " << r;
}

// Rank r's element i: a small integer (non-negative for unsigned and bool).
long double value(tsr_dtype d, int r, int64_t i) {
  if (is_bool(d)) return ((i + r) % 3) == 0 ? 1 : 0;
  if (d == TSR_UINT8) return static_cast<long double>((i * 7 + r * 3) % 5);
  return static_cast<long double>((i * 7 + r * 3) % 5) - 2;
}

host_tensor filled(tsr_dtype d, int64_t n, int r, int64_t offset = 0) {
  host_tensor t(d, {n});
  for (int64_t i = 0; i < n; ++i) {
    ref_value v{value(d, r, i + offset), 0};
    if (is_complex(d)) v.im = value(d, r + 1, i + offset);
    t.set({i}, v);
  }
  return t;
}

ref_value reduce_ref(tsr_dtype d, int world, int64_t i, int op) {
  ref_value acc{value(d, 0, i), is_complex(d) ? value(d, 1, i) : 0};
  for (int r = 1; r < world; ++r) {
    const ref_value v{value(d, r, i), is_complex(d) ? value(d, r + 1, i) : 0};
    switch (op) {
      case TSR_COLLECTIVE_PRODUCT:
        if (is_bool(d)) {
          acc.re = (acc.re != 0 && v.re != 0) ? 1 : 0;
        } else {
          acc = {acc.re * v.re - acc.im * v.im, acc.re * v.im + acc.im * v.re};
        }
        break;
      case TSR_COLLECTIVE_MIN:
        acc.re = std::min(acc.re, v.re);
        break;
      case TSR_COLLECTIVE_MAX:
        acc.re = std::max(acc.re, v.re);
        break;
      default:
        acc = {acc.re + v.re, acc.im + v.im};
        if (is_bool(d)) acc.re = acc.re != 0 ? 1 : 0;
    }
  }
  if (op == TSR_COLLECTIVE_AVG) acc = {acc.re / world, acc.im / world};
  return acc;
}

void expect_near(const ref_value& got, const ref_value& want, tsr_dtype d,
                 const std::string& what) {
  // AVG divides by the world size: one rounding of the dtype.
  const long double tol = d == TSR_FLOAT16                         ? 1e-3L
                          : d == TSR_BFLOAT16                      ? 8e-3L
                          : d == TSR_FLOAT32 || d == TSR_COMPLEX64 ? 1e-6L
                                                                   : 1e-12L;
  EXPECT_NEAR(static_cast<double>(got.re), static_cast<double>(want.re),
              static_cast<double>(tol * (1 + std::abs(want.re))))
      << what;
  EXPECT_NEAR(static_cast<double>(got.im), static_cast<double>(want.im),
              static_cast<double>(tol * (1 + std::abs(want.im))))
      << what;
}

// The plugin has collectives where it was built with Gloo (plugins/cpu/CMakeLists.txt).
class GlooCollectives : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test_plugin::get().api().collectives == nullptr)
      GTEST_SKIP() << "the cpu plugin was built without Gloo (apt install libgloo-dev)";
  }
};

TEST_F(GlooCollectives, CapsNameTheEngineAndWhatItRuns) {
  ASSERT_NE(table().query_caps, nullptr);
  tsr_collective_caps caps{};
  caps.struct_size = sizeof caps;
  status_ptr st(table().query_caps(ctx(), 0, &caps));
  ASSERT_EQ(code_of(st), TSR_OK) << message_of(st);
  EXPECT_EQ(std::string(caps.engine).rfind("gloo", 0), 0u) << caps.engine;
  EXPECT_TRUE(caps.collectives & TSR_COLLECTIVE_ALL_REDUCE);
  EXPECT_TRUE(caps.collectives & TSR_COLLECTIVE_ALL_TO_ALL);
  EXPECT_EQ(caps.reduce_ops, 0x1fu);
  EXPECT_TRUE(caps.flags & TSR_COLLECTIVES_HOST_MEMORY);
  EXPECT_EQ(caps.unique_id_size, 0u);
  st.reset(table().query_caps(ctx(), 1, &caps));
  EXPECT_EQ(code_of(st), TSR_OUT_OF_RANGE);
}

TEST_F(GlooCollectives, AllReduceEveryDtypeOpAndSize) {
  for (int world : {2, 3}) {
    run_ranks(world, [&](int r, void* comm) {
      for (tsr_dtype d : all_dtypes()) {
        for (int op = 0; op < TSR_COLLECTIVE_OP_COUNT; ++op) {
          const bool complex = is_complex(d);
          if (complex && (op == TSR_COLLECTIVE_MIN || op == TSR_COLLECTIVE_MAX)) continue;
          if (op == TSR_COLLECTIVE_AVG && !is_floating(d) && !complex) continue;
          for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{70001}}) {
            host_tensor t = filled(d, n, r);
            status_ptr st(table().all_reduce(ctx(), comm, &t.desc(), op, nullptr));
            ASSERT_EQ(code_of(st), TSR_OK) << name_of(d) << " op " << op << ": " << message_of(st);
            for (int64_t i = 0; i < n; i += (n > 100 ? 997 : 1)) {
              expect_near(t.get({i}), reduce_ref(d, world, i, op), d,
                          std::string(name_of(d)) + " op " + std::to_string(op) + " world " +
                              std::to_string(world) + " i " + std::to_string(i));
            }
          }
        }
      }
    });
  }
}

TEST_F(GlooCollectives, BroadcastGatherScatterAndFriendsMatchTheirLayouts) {
  const int world = 3;
  const int64_t n = 5;
  const tsr_dtype d = TSR_FLOAT64;
  run_ranks(world, [&](int r, void* comm) {
    // broadcast from rank 1
    host_tensor b = filled(d, n, r);
    ASSERT_EQ(code_of(status_ptr(table().broadcast(ctx(), comm, &b.desc(), 1, nullptr))), TSR_OK);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(b.get({i}).re, value(d, 1, i));
    // all_gather: out[k*n + i] = rank k's element i
    host_tensor in = filled(d, n, r);
    host_tensor out(d, {world * n});
    ASSERT_EQ(
        code_of(status_ptr(table().all_gather(ctx(), comm, &in.desc(), &out.desc(), nullptr))),
        TSR_OK);
    for (int k = 0; k < world; ++k)
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out.get({k * n + i}).re, value(d, k, i));
    // reduce_scatter: rank r gets the sum of slice r
    host_tensor big = filled(d, world * n, r);
    host_tensor mine(d, {n});
    ASSERT_EQ(code_of(status_ptr(table().reduce_scatter(ctx(), comm, &big.desc(), &mine.desc(),
                                                        TSR_COLLECTIVE_SUM, nullptr))),
              TSR_OK);
    for (int64_t i = 0; i < n; ++i) {
      long double want = 0;
      for (int k = 0; k < world; ++k) want += value(d, k, r * n + i);
      EXPECT_EQ(mine.get({i}).re, want);
    }
    // all_to_all: slice k of out is rank k's slice r
    host_tensor a_in = filled(d, world * n, r);
    host_tensor a_out(d, {world * n});
    ASSERT_EQ(
        code_of(status_ptr(table().all_to_all(ctx(), comm, &a_in.desc(), &a_out.desc(), nullptr))),
        TSR_OK);
    for (int k = 0; k < world; ++k)
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(a_out.get({k * n + i}).re, value(d, k, r * n + i));
    // reduce (max) to rank 2: the others keep their values
    host_tensor red = filled(d, n, r);
    ASSERT_EQ(code_of(status_ptr(
                  table().reduce(ctx(), comm, &red.desc(), TSR_COLLECTIVE_MAX, 2, nullptr))),
              TSR_OK);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(red.get({i}).re,
                r == 2 ? reduce_ref(d, world, i, TSR_COLLECTIVE_MAX).re : value(d, r, i));
    // gather to rank 0 (out only there)
    host_tensor g_out(d, {world * n});
    ASSERT_EQ(code_of(status_ptr(table().gather(ctx(), comm, &in.desc(),
                                                r == 0 ? &g_out.desc() : nullptr, 0, nullptr))),
              TSR_OK);
    if (r == 0) {
      for (int k = 0; k < world; ++k)
        for (int64_t i = 0; i < n; ++i) EXPECT_EQ(g_out.get({k * n + i}).re, value(d, k, i));
    }
    // scatter from rank 2 (in only there)
    host_tensor s_in = filled(d, world * n, 2);
    host_tensor s_out(d, {n});
    ASSERT_EQ(code_of(status_ptr(table().scatter(ctx(), comm, r == 2 ? &s_in.desc() : nullptr,
                                                 &s_out.desc(), 2, nullptr))),
              TSR_OK);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(s_out.get({i}).re, value(d, 2, r * n + i));
    // send / recv around the ring, then a barrier
    host_tensor to_next = filled(d, n, r);
    host_tensor from_prev(d, {n});
    const int next = (r + 1) % world, prev = (r + world - 1) % world;
    if (r % 2 == 0) {
      ASSERT_EQ(code_of(status_ptr(table().send(ctx(), comm, &to_next.desc(), next, nullptr))),
                TSR_OK);
      ASSERT_EQ(code_of(status_ptr(table().recv(ctx(), comm, &from_prev.desc(), prev, nullptr))),
                TSR_OK);
    } else {
      ASSERT_EQ(code_of(status_ptr(table().recv(ctx(), comm, &from_prev.desc(), prev, nullptr))),
                TSR_OK);
      ASSERT_EQ(code_of(status_ptr(table().send(ctx(), comm, &to_next.desc(), next, nullptr))),
                TSR_OK);
    }
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(from_prev.get({i}).re, value(d, prev, i));
    EXPECT_EQ(code_of(status_ptr(table().barrier(ctx(), comm, nullptr))), TSR_OK);
  });
}

TEST_F(GlooCollectives, BadArgumentsNameTheArgumentAndTheFix) {
  run_ranks(2, [&](int r, void* comm) {
    host_tensor t = filled(TSR_INT32, 4, r);
    status_ptr st(table().all_reduce(ctx(), comm, &t.desc(), 9, nullptr));
    EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT);
    EXPECT_NE(message_of(st).find("op 9 is not a tsr_collective_op"), std::string::npos)
        << message_of(st);
    st.reset(table().all_reduce(ctx(), comm, &t.desc(), TSR_COLLECTIVE_AVG, nullptr));
    EXPECT_NE(message_of(st).find("avg needs a floating or complex dtype, not int32"),
              std::string::npos)
        << message_of(st);
    host_tensor c = filled(TSR_COMPLEX64, 4, r);
    st.reset(table().all_reduce(ctx(), comm, &c.desc(), TSR_COLLECTIVE_MAX, nullptr));
    EXPECT_NE(message_of(st).find("min and max are undefined for complex64"), std::string::npos)
        << message_of(st);
    host_tensor out(TSR_INT32, {7});
    st.reset(table().all_gather(ctx(), comm, &t.desc(), &out.desc(), nullptr));
    EXPECT_EQ(message_of(st),
              "cpu plugin all_gather: out has 7 elements, world_size times in's: 8");
    host_tensor strided(TSR_INT32, {3, 2}, {1, 3});
    st.reset(table().broadcast(ctx(), comm, &strided.desc(), 0, nullptr));
    EXPECT_NE(message_of(st).find("inout must be contiguous"), std::string::npos) << message_of(st);
    st.reset(table().broadcast(ctx(), comm, &t.desc(), 2, nullptr));
    EXPECT_EQ(code_of(st), TSR_OUT_OF_RANGE);
    EXPECT_EQ(message_of(st), "cpu plugin broadcast: root 2 is not a rank of the group (0..1)");
    st.reset(table().all_reduce(ctx(), comm, nullptr, 0, nullptr));
    EXPECT_EQ(message_of(st), "cpu plugin all_reduce: inout is NULL");
    // The communicator still works after refused calls.
    EXPECT_EQ(code_of(status_ptr(table().barrier(ctx(), comm, nullptr))), TSR_OK);
  });
}

TEST_F(GlooCollectives, AMissingPeerIsAnErrorWithinTheTimeoutNeverAHang) {
  // Rank 1 skips the all_reduce: rank 0 must fail within the 1 s timeout.
  std::atomic<bool> rank0_done{false};
  run_ranks(
      2,
      [&](int r, void* comm) {
        if (r == 0) {
          host_tensor t = filled(TSR_FLOAT32, 1000, r);
          const auto start = std::chrono::steady_clock::now();
          status_ptr st(table().all_reduce(ctx(), comm, &t.desc(), TSR_COLLECTIVE_SUM, nullptr));
          const auto took = std::chrono::steady_clock::now() - start;
          EXPECT_TRUE(code_of(st) == TSR_DEADLINE_EXCEEDED || code_of(st) == TSR_UNAVAILABLE)
              << message_of(st);
          EXPECT_NE(message_of(st).find("gloo"), std::string::npos) << message_of(st);
          EXPECT_LT(took, 10s);
          rank0_done = true;
        } else {
          while (!rank0_done) std::this_thread::sleep_for(10ms);
        }
      },
      1000);
}

TEST_F(GlooCollectives, ARendezvousWithoutPeersTimesOut) {
  memory_store store;
  const tsr_host_store s = store.table();
  tsr_comm_init_args args{};
  args.struct_size = sizeof args;
  args.rank = 0;
  args.world_size = 2;
  args.store = &s;
  args.timeout_ms = 300;
  void* comm = reinterpret_cast<void*>(1);
  status_ptr st(table().comm_init(ctx(), &args, &comm));
  EXPECT_EQ(code_of(st), TSR_DEADLINE_EXCEEDED) << message_of(st);
  EXPECT_NE(message_of(st).find("timed out waiting for key"), std::string::npos) << message_of(st);
  EXPECT_EQ(comm, nullptr);
  args.rank = 2;
  st.reset(table().comm_init(ctx(), &args, &comm));
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT);
  args.rank = 0;
  args.engine = "mpi";
  st.reset(table().comm_init(ctx(), &args, &comm));
  EXPECT_EQ(code_of(st), TSR_NOT_FOUND);
  EXPECT_NE(message_of(st).find("'gloo'"), std::string::npos) << message_of(st);
}

TEST_F(GlooCollectives, AnAbortedCommunicatorRefusesLaterCalls) {
  run_ranks(1, [&](int, void* comm) {
    host_tensor t = filled(TSR_FLOAT32, 3, 0);
    EXPECT_EQ(code_of(status_ptr(table().all_reduce(ctx(), comm, &t.desc(), 0, nullptr))), TSR_OK);
    EXPECT_EQ(code_of(status_ptr(table().comm_abort(ctx(), comm))), TSR_OK);
    status_ptr st(table().all_reduce(ctx(), comm, &t.desc(), 0, nullptr));
    EXPECT_EQ(code_of(st), TSR_ABORTED);
    EXPECT_NE(message_of(st).find("was aborted"), std::string::npos) << message_of(st);
    EXPECT_EQ(code_of(status_ptr(table().comm_get_async_error(ctx(), comm))), TSR_OK);
  });
}

}  // namespace
}  // namespace cpu_test
