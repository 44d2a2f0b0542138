// The collectives family: a device's tensors through a process group of
// several processes, every collective against a float64 host reference.
//
// Note [Conformance collectives]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `tessera conformance` starts `--ranks N` suite processes for a unit of this
// family (default 2), all with the same case filter, and each joins the
// world group through a file store (--rank R --ranks N --rendezvous FILE).
// Every rank runs every case in the same order and checks its own results;
// rank 0 is the one whose events the runner reads. At the end of a case each
// rank puts its verdict in a second store ("" or its failures) and rank 0
// waits for all of them, so a case passes only when it passed on every rank
// and a failure names the rank it happened on. A rank that dies makes rank 0
// fail the case in flight (the group's timeout, or the verdict wait), and the
// runner restarts every rank for the cases left.
//
// Inputs are small integers (1 .. 5; 1 .. 2 for PRODUCT, so a product of up
// to 6 ranks fits int8 exactly), a function of (rank, element), so every rank
// computes every rank's input and so the expected result in float64; that
// result rounded through the dtype (on the reference CPU) is compared with
// the dtype's tolerance. A combination the engine does not claim (its
// tsr_device_get_collectives, or the host engine's for a staged device) is
// skipped after checking that asking for it is an error, not a hang; an op
// that is undefined for the dtype (AVG of integers, MIN of complex) must be
// INVALID_ARGUMENT on every rank.
//
// The rank that dies (collectives/killed_rank_*) is not one of the suite's
// ranks: rank 0 starts this program again with --victim, which joins a
// two-rank group of its own with rank 0 and exits while an all_reduce is in
// flight.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "case_info.h"
#include "conformance/tolerances.hpp"
#include "suite_support.h"
#include "tessera/plugin.h"  // the TSR_COLLECTIVE_* bits of tsr_device_collectives

namespace tessera::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kGroupTimeoutMs = 30000;
constexpr int64_t kLargeElements = int64_t{16} << 20;  // float32: 64 MiB

// ---- the world -------------------------------------------------------------

tsr_process_group_options group_options(int64_t timeout_ms, int32_t check_headers = 0) {
  tsr_process_group_options o{};
  o.struct_size = sizeof o;
  o.timeout_ms = timeout_ms;
  o.check_headers = check_headers;
  return o;
}

struct World {
  tsr_process_group* group = nullptr;
  tsr_store* verdicts = nullptr;
  int rank = 0;
  int size = 1;
  std::string error;
};

// The world group of this process, made on first use (never destroyed: a
// case's tensors may outlive static teardown).
const World& world() {
  static const World* w = [] {
    auto* out = new World();
    const Target& t = target();
    out->rank = t.rank;
    out->size = t.ranks;
    try {
      std::string file = t.rendezvous;
      if (file.empty()) {
        char tmpl[] = "/tmp/tessera-collectives-XXXXXX";
        const int fd = mkstemp(tmpl);
        if (fd >= 0) ::close(fd);
        file = tmpl;
      }
      const tsr_process_group_options o = group_options(kGroupTimeoutMs);
      check(tsr_process_group_init(runtime(), ("file://" + file).c_str(), t.rank, t.ranks, &o,
                                   &out->group),
            "joining the world group (rank " + std::to_string(t.rank) + " of " +
                std::to_string(t.ranks) + ", file store " + file + ")");
      check(tsr_store_create_file((file + ".verdicts").c_str(), kGroupTimeoutMs, &out->verdicts),
            "the verdict store");
    } catch (const std::exception& e) {
      out->error = e.what();
    }
    return out;
  }();
  if (!w->error.empty()) throw std::runtime_error(w->error);
  return *w;
}

// ---- values ------------------------------------------------------------------

bool is_complex(tsr_dtype d) { return d == TSR_COMPLEX64 || d == TSR_COMPLEX128; }
bool is_floating(tsr_dtype d) {
  return d == TSR_FLOAT16 || d == TSR_BFLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64;
}

using C = std::complex<double>;

// Element i of rank r's input.
C input_value(int r, int64_t i, int op, tsr_dtype dtype) {
  if (dtype == TSR_BOOL) return {static_cast<double>((i + r) % 2), 0};
  const double re = op == TSR_DIST_PRODUCT ? static_cast<double>((i + r) % 2 + 1)
                                           : static_cast<double>((i * 7 + r * 3) % 5 + 1);
  const double im = is_complex(dtype) ? static_cast<double>((i + 2 * r) % 3 - 1) : 0.0;
  return {re, im};
}

std::vector<C> inputs_of(int r, int64_t n, int op, tsr_dtype dtype, int64_t offset = 0) {
  std::vector<C> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = input_value(r, i + offset, op, dtype);
  return v;
}

C reduce_values(const std::vector<C>& xs, int op) {
  C acc = xs[0];
  for (size_t k = 1; k < xs.size(); ++k) {
    const C x = xs[k];
    switch (op) {
      case TSR_DIST_SUM:
      case TSR_DIST_AVG:
        acc += x;
        break;
      case TSR_DIST_PRODUCT:
        acc *= x;
        break;
      case TSR_DIST_MIN:
        acc = std::min(acc.real(), x.real());
        break;
      case TSR_DIST_MAX:
        acc = std::max(acc.real(), x.real());
        break;
    }
  }
  if (op == TSR_DIST_AVG) acc /= static_cast<double>(xs.size());
  return acc;
}

// Every rank's `n` inputs from `offset` on, rank after rank (all_gather's
// and gather's output; all_to_all's with offset n * this rank).
std::vector<C> stacked(int world_size, int64_t n, int op, tsr_dtype dtype, int64_t offset = 0) {
  std::vector<C> out;
  for (int k = 0; k < world_size; ++k) {
    const std::vector<C> v = inputs_of(k, n, op, dtype, offset);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Element i of the reduction over every rank's input.
std::vector<C> reduced(int world_size, int64_t n, int op, tsr_dtype dtype, int64_t offset = 0) {
  std::vector<C> out(static_cast<size_t>(n));
  std::vector<C> xs(static_cast<size_t>(world_size));
  for (int64_t i = 0; i < n; ++i) {
    for (int r = 0; r < world_size; ++r)
      xs[static_cast<size_t>(r)] = input_value(r, i + offset, op, dtype);
    out[static_cast<size_t>(i)] = reduce_values(xs, op);
  }
  return out;
}

tsr_device cpu() {
  tsr_device d{};
  check(tsr_device_parse(runtime(), "cpu:0", &d), "finding cpu:0 (the reference)");
  return d;
}

// float64 (complex128) host values as a tensor of `dtype` on `where`.
TensorPtr make(const std::vector<C>& values, const std::vector<int64_t>& shape, tsr_dtype dtype,
               tsr_device where) {
  if (dtype == TSR_FLOAT32) {  // straight to the device: the 64 MiB cases' inputs
    std::vector<float> f(values.size());
    for (size_t i = 0; i < values.size(); ++i) f[i] = static_cast<float>(values[i].real());
    tsr_tensor* t = nullptr;
    check(tsr_tensor_from_host(runtime(), f.data(), f.size() * sizeof(float),
                               static_cast<int32_t>(shape.size()), shape.data(), TSR_FLOAT32, where,
                               &t),
          "tsr_tensor_from_host");
    return TensorPtr(t);
  }
  const bool cx = is_complex(dtype);
  std::vector<double> flat;
  flat.reserve(values.size() * (cx ? 2 : 1));
  for (const C& v : values) {
    flat.push_back(v.real());
    if (cx) flat.push_back(v.imag());
  }
  tsr_tensor* host = nullptr;
  check(tsr_tensor_from_host(runtime(), flat.data(), flat.size() * sizeof(double),
                             static_cast<int32_t>(shape.size()), shape.data(),
                             cx ? TSR_COMPLEX128 : TSR_FLOAT64, cpu(), &host),
        "tsr_tensor_from_host");
  TensorPtr h(host);
  tsr_tensor* typed = nullptr;
  check(tsr_tensor_to_dtype(h.get(), dtype, &typed), "tsr_tensor_to_dtype");
  TensorPtr t(typed);
  tsr_tensor* moved = nullptr;
  check(tsr_tensor_to_device(t.get(), where, &moved), "tsr_tensor_to_device");
  return TensorPtr(moved);
}

// The tensor's elements, widened to float64 (complex128) on the host.
std::vector<C> read(tsr_tensor* t) {
  tsr_dtype dtype = TSR_FLOAT32;
  check(tsr_tensor_dtype(t, &dtype), "tsr_tensor_dtype");
  if (dtype == TSR_FLOAT32) {
    const std::vector<float> f = to_host<float>(t);
    return std::vector<C>(f.begin(), f.end());
  }
  const bool cx = is_complex(dtype);
  tsr_tensor* on_cpu = nullptr;
  check(tsr_tensor_to_device(t, cpu(), &on_cpu), "tsr_tensor_to_device(cpu:0)");
  TensorPtr c(on_cpu);
  tsr_tensor* wide = nullptr;
  check(tsr_tensor_to_dtype(c.get(), cx ? TSR_COMPLEX128 : TSR_FLOAT64, &wide),
        "tsr_tensor_to_dtype");
  TensorPtr w(wide);
  int64_t n = 0;
  check(tsr_tensor_numel(w.get(), &n), "tsr_tensor_numel");
  std::vector<C> out(static_cast<size_t>(n));
  if (cx) {
    std::vector<double> pairs(static_cast<size_t>(2 * n));
    check(tsr_tensor_copy_to_host(w.get(), pairs.data(), pairs.size() * sizeof(double)),
          "tsr_tensor_copy_to_host");
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] = {pairs[static_cast<size_t>(2 * i)],
                                     pairs[static_cast<size_t>(2 * i + 1)]};
  } else {
    const std::vector<double> flat = to_host<double>(w.get());
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = {flat[static_cast<size_t>(i)], 0};
  }
  return out;
}

// `values` rounded through `dtype` (what a correct device holds).
std::vector<C> rounded(const std::vector<C>& values, tsr_dtype dtype) {
  if (values.empty()) return values;
  // Small integers are exact in float32 and float64: nothing to round (this
  // keeps the 64 MiB cases' reference cheap).
  if (dtype == TSR_FLOAT32 || dtype == TSR_FLOAT64) {
    const bool exact = std::all_of(values.begin(), values.end(), [](const C& v) {
      return v.imag() == 0 && v.real() == std::nearbyint(v.real()) && std::fabs(v.real()) < 1e7;
    });
    if (exact) return values;
  }
  TensorPtr t = make(values, {static_cast<int64_t>(values.size())}, dtype, cpu());
  return read(t.get());
}

// Empty when `got` matches `want` (rounded through dtype) within its
// tolerance, else the first mismatches.
std::string compare(const std::vector<C>& got, const std::vector<C>& want_exact, tsr_dtype dtype) {
  if (got.size() != want_exact.size())
    return "has " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(want_exact.size());
  const std::vector<C> want = rounded(want_exact, dtype);
  const Tolerance tol = tolerance(dtype);
  std::string out;
  int shown = 0;
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    auto close = [&](double a, double b) {
      return std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);
    };
    if (close(got[i].real(), want[i].real()) && close(got[i].imag(), want[i].imag())) continue;
    ++wrong;
    if (shown++ < 4)
      out += "[" + std::to_string(i) + "] is " + std::to_string(got[i].real()) +
             (is_complex(dtype) ? "+" + std::to_string(got[i].imag()) + "i" : "") + ", expected " +
             std::to_string(want[i].real()) +
             (is_complex(dtype) ? "+" + std::to_string(want[i].imag()) + "i" : "") + "; ";
  }
  if (wrong == 0) return {};
  return std::to_string(wrong) + " of " + std::to_string(got.size()) + " elements wrong: " + out;
}

// ---- verdicts ----------------------------------------------------------------

std::string failures_so_far() {
  const testing::TestResult* r = testing::UnitTest::GetInstance()->current_test_info()->result();
  std::string out;
  for (int i = 0; i < r->total_part_count(); ++i) {
    const testing::TestPartResult& p = r->GetTestPartResult(i);
    if (!p.failed()) continue;
    if (!out.empty()) out += "\n";
    out += p.message();
  }
  return out.empty() ? std::string("ok") : out;
}

// Every rank's verdict reaches rank 0, which fails the case with the others'
// failures (Note [Conformance collectives]).
void exchange_verdicts() {
  const World& w = world();
  if (w.size == 1) return;
  const std::string id = case_id(*testing::UnitTest::GetInstance()->current_test_info());
  if (w.rank != 0) {
    const std::string mine = failures_so_far();
    const std::string key = "verdict/" + id + "/" + std::to_string(w.rank);
    tsr_status_free(tsr_store_set(w.verdicts, key.c_str(), mine.data(), mine.size()));
    return;
  }
  for (int r = 1; r < w.size; ++r) {
    const std::string key = "verdict/" + id + "/" + std::to_string(r);
    size_t size = 0;
    Outcome o =
        outcome(tsr_store_get(w.verdicts, key.c_str(), kGroupTimeoutMs + 15000, nullptr, 0, &size));
    if (o.code != TSR_OK && o.code != TSR_OUT_OF_RANGE) {
      ADD_FAILURE() << "rank " << r << " sent no verdict (did it die or hang?): " << o.message;
      continue;
    }
    std::string text(size, '\0');
    o = outcome(tsr_store_get(w.verdicts, key.c_str(), 1000, text.data(), text.size(), &size));
    if (o.code != TSR_OK) {
      ADD_FAILURE() << "rank " << r << "'s verdict cannot be read: " << o.message;
    } else if (text != "ok") {
      ADD_FAILURE() << "on rank " << r << ": " << text;
    }
  }
}

class Collectives : public testing::Test {
 protected:
  void TearDown() override {
    try {
      exchange_verdicts();
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
};

// ---- the matrix ----------------------------------------------------------------

enum class Coll {
  all_reduce,
  broadcast,
  reduce,
  all_gather,
  reduce_scatter,
  gather,
  scatter,
  all_to_all,
  send_recv,
};

struct CollInfo {
  Coll coll;
  const char* name;
  bool reduces;
  uint32_t bit;  // TSR_COLLECTIVE_* of the engine's capabilities
};

const CollInfo kColls[] = {
    {Coll::all_reduce, "all_reduce", true, TSR_COLLECTIVE_ALL_REDUCE},
    {Coll::broadcast, "broadcast", false, TSR_COLLECTIVE_BROADCAST},
    {Coll::reduce, "reduce", true, TSR_COLLECTIVE_REDUCE},
    {Coll::all_gather, "all_gather_into_tensor", false, TSR_COLLECTIVE_ALL_GATHER},
    {Coll::reduce_scatter, "reduce_scatter_tensor", true, TSR_COLLECTIVE_REDUCE_SCATTER},
    {Coll::gather, "gather", false, TSR_COLLECTIVE_GATHER},
    {Coll::scatter, "scatter", false, TSR_COLLECTIVE_SCATTER},
    {Coll::all_to_all, "all_to_all_single", false, TSR_COLLECTIVE_ALL_TO_ALL},
    {Coll::send_recv, "send_recv", false, TSR_COLLECTIVE_SEND_RECV},
};

constexpr tsr_dtype kDtypes[] = {TSR_FLOAT32, TSR_FLOAT64,  TSR_FLOAT16, TSR_BFLOAT16,
                                 TSR_INT8,    TSR_UINT8,    TSR_INT32,   TSR_INT64,
                                 TSR_BOOL,    TSR_COMPLEX64};
constexpr const char* kOpNames[] = {"sum", "product", "min", "max", "avg"};

struct Size {
  int64_t n;
  const char* name;
};
constexpr Size kSizes[] = {{0, "n0"}, {1, "n1"}, {1031, "n1031"}};

struct Param {
  size_t coll;  // into kColls
  tsr_dtype dtype;
  int op;  // -1: none
  int64_t n;
  std::string name;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (size_t c = 0; c < std::size(kColls); ++c) {
    for (tsr_dtype d : kDtypes) {
      const int ops = kColls[c].reduces ? 5 : 1;
      for (int op = 0; op < ops; ++op) {
        for (const Size& s : kSizes) {
          Param p{c, d, kColls[c].reduces ? op : -1, s.n, kColls[c].name};
          p.name += std::string("__") + tsr_dtype_name(d);
          if (p.op >= 0) p.name += std::string("__") + kOpNames[op];
          p.name += std::string("__") + s.name;
          out.push_back(std::move(p));
        }
      }
    }
    // >= 64 MiB, float32 (SUM for the reducing ones).
    Param big{c, TSR_FLOAT32, kColls[c].reduces ? TSR_DIST_SUM : -1, kLargeElements,
              kColls[c].name};
    big.name += std::string("__float32") + (big.op >= 0 ? "__sum" : "") + "__64MiB";
    out.push_back(std::move(big));
  }
  return out;
}

const bool kRegistered = [] {
  for (const Param& p : params()) {
    const char* cls = p.n == 0                ? "empty"
                      : p.n == 1              ? "one"
                      : p.n == kLargeElements ? "large"
                                              : "odd";
    register_case_info("collectives/" + p.name, kColls[p.coll].name, tsr_dtype_name(p.dtype), cls);
  }
  return true;
}();

// Whether the engine running the device's tensors claims the combination;
// when not, `why` says so.
bool claimed(const CollInfo& c, tsr_dtype dtype, int op, std::string* why) {
  tsr_device_collectives caps{};
  caps.struct_size = sizeof caps;
  check(tsr_device_get_collectives(runtime(), device(), &caps), "tsr_device_get_collectives");
  std::string engine = caps.engine;
  if (!caps.native) {
    caps = tsr_device_collectives{};
    caps.struct_size = sizeof caps;
    check(tsr_device_get_collectives(runtime(), cpu(), &caps),
          "tsr_device_get_collectives(cpu:0), the host engine");
    engine = std::string("staged through cpu:0: ") + caps.engine;
  }
  if ((caps.collectives & c.bit) != c.bit) {
    *why = engine + " does not claim " + c.name;
    return false;
  }
  if ((caps.dtypes & TSR_DTYPE_BIT(dtype)) == 0) {
    *why = engine + " does not claim " + tsr_dtype_name(dtype);
    return false;
  }
  if (op >= 0 && (caps.reduce_ops & (1u << op)) == 0) {
    *why = engine + " does not claim ReduceOp " + kOpNames[op];
    return false;
  }
  return true;
}

// PyTorch's rules: AVG needs floating or complex, MIN/MAX real tensors.
bool undefined(int op, tsr_dtype dtype) {
  if (op == TSR_DIST_AVG) return !is_floating(dtype) && !is_complex(dtype);
  if (op == TSR_DIST_MIN || op == TSR_DIST_MAX) return is_complex(dtype);
  return false;
}

std::vector<int64_t> shape(int64_t n) { return {n}; }

// Runs one collective of the matrix; returns the error (TSR_OK when it ran).
Outcome issue(const Param& p, const World& w) {
  const Coll coll = kColls[p.coll].coll;
  const int W = w.size, r = w.rank, last = W - 1;
  const int op = p.op < 0 ? 0 : p.op;
  const int64_t n = p.n;
  const tsr_device dev = device();
  auto mine = [&](int64_t count, int64_t offset = 0) {
    return make(inputs_of(r, count, op, p.dtype, offset), shape(count), p.dtype, dev);
  };
  auto blank = [&](int64_t count) {
    return make(std::vector<C>(static_cast<size_t>(count)), shape(count), p.dtype, dev);
  };
  auto expect = [&](tsr_tensor* t, const std::vector<C>& want, const char* what) {
    const std::string diff = compare(read(t), want, p.dtype);
    EXPECT_TRUE(diff.empty()) << what << " " << diff;
  };
  Outcome o;
  switch (coll) {
    case Coll::all_reduce: {
      TensorPtr t = mine(n);
      o = outcome(tsr_all_reduce(w.group, t.get(), op, nullptr));
      if (o.code == TSR_OK) expect(t.get(), reduced(W, n, op, p.dtype), "the result");
      break;
    }
    case Coll::broadcast: {
      TensorPtr t = mine(n);
      o = outcome(tsr_broadcast(w.group, t.get(), last, nullptr));
      if (o.code == TSR_OK) expect(t.get(), inputs_of(last, n, op, p.dtype), "the result");
      break;
    }
    case Coll::reduce: {
      TensorPtr t = mine(n);
      o = outcome(tsr_reduce(w.group, t.get(), op, last, nullptr));
      if (o.code == TSR_OK && r == last)
        expect(t.get(), reduced(W, n, op, p.dtype), "the result on the destination");
      break;
    }
    case Coll::all_gather: {
      TensorPtr in = mine(n);
      TensorPtr out = blank(n * W);
      o = outcome(tsr_all_gather_into_tensor(w.group, out.get(), in.get(), nullptr));
      if (o.code == TSR_OK) {
        const std::vector<C> want = stacked(W, n, op, p.dtype);
        expect(out.get(), want, "the output");
      }
      break;
    }
    case Coll::reduce_scatter: {
      // Rank r's input: W slices; slice k holds the elements k*n .. (k+1)*n.
      TensorPtr in = mine(n * W);
      TensorPtr out = blank(n);
      o = outcome(tsr_reduce_scatter_tensor(w.group, out.get(), in.get(), op, nullptr));
      if (o.code == TSR_OK) expect(out.get(), reduced(W, n, op, p.dtype, n * r), "the output");
      break;
    }
    case Coll::gather: {
      TensorPtr in = mine(n);
      TensorPtr out;
      if (r == last) out = blank(n * W);
      o = outcome(tsr_gather(w.group, out.get(), in.get(), last, nullptr));
      if (o.code == TSR_OK && r == last) {
        const std::vector<C> want = stacked(W, n, op, p.dtype);
        expect(out.get(), want, "the output on the destination");
      }
      break;
    }
    case Coll::scatter: {
      TensorPtr in;
      if (r == last) in = mine(n * W);
      TensorPtr out = blank(n);
      o = outcome(tsr_scatter(w.group, out.get(), in.get(), last, nullptr));
      if (o.code == TSR_OK) expect(out.get(), inputs_of(last, n, op, p.dtype, n * r), "the output");
      break;
    }
    case Coll::all_to_all: {
      // Rank r sends its slice k (elements k*n ..) to rank k.
      TensorPtr in = mine(n * W);
      TensorPtr out = blank(n * W);
      o = outcome(tsr_all_to_all_single(w.group, out.get(), in.get(), nullptr));
      if (o.code == TSR_OK) {
        const std::vector<C> want = stacked(W, n, op, p.dtype, n * r);
        expect(out.get(), want, "the output");
      }
      break;
    }
    case Coll::send_recv: {
      if (W == 1) {
        o.code = TSR_OK;
        break;
      }
      // A ring: send to the next rank, receive from the one before.
      TensorPtr t = mine(n);
      TensorPtr got = blank(n);
      tsr_work* s = nullptr;
      tsr_work* v = nullptr;
      o = outcome(tsr_send(w.group, t.get(), (r + 1) % W, &s));
      WorkPtr sp(s);
      if (o.code != TSR_OK) break;
      o = outcome(tsr_recv(w.group, got.get(), (r + W - 1) % W, &v));
      WorkPtr vp(v);
      if (o.code != TSR_OK) break;
      o = outcome(tsr_work_wait(sp.get(), -1));
      if (o.code != TSR_OK) break;
      o = outcome(tsr_work_wait(vp.get(), -1));
      if (o.code == TSR_OK)
        expect(got.get(), inputs_of((r + W - 1) % W, n, op, p.dtype), "the received tensor");
      break;
    }
  }
  return o;
}

class Matrix : public Collectives, public testing::WithParamInterface<Param> {};

TEST_P(Matrix, Run){TSR_CONFORMANCE_TRY({
  const Param& p = GetParam();
  const World& w = world();
  const CollInfo& c = kColls[p.coll];
  if ((properties().dtypes & TSR_DTYPE_BIT(p.dtype)) == 0)
    GTEST_SKIP() << target().device << " has no " << tsr_dtype_name(p.dtype) << " tensors";
  if (p.op >= 0 && undefined(p.op, p.dtype)) {
    const Outcome o = issue(p, w);
    EXPECT_EQ(o.code, TSR_INVALID_ARGUMENT)
        << "ReduceOp " << kOpNames[p.op] << " of " << tsr_dtype_name(p.dtype)
        << " is undefined (as in PyTorch) and must be refused; got " << tsr_status_code_name(o.code)
        << ": " << o.message;
    EXPECT_NE(o.message.find(kOpNames[p.op] == std::string("avg") ? "AVG" : "ReduceOp"),
              std::string::npos)
        << o.message;
    return;
  }
  std::string why;
  if (!claimed(c, p.dtype, p.op, &why)) {
    // Asking anyway is an error on every rank, not a hang or a wrong value.
    const Outcome o = issue(p, w);
    EXPECT_NE(o.code, TSR_OK) << "an unclaimed combination ran (" << why << ")";
    if (o.code == TSR_OK) return;
    GTEST_SKIP() << why;
  }
  const Outcome o = issue(p, w);
  EXPECT_EQ(o.code, TSR_OK) << c.name << " failed: " << tsr_status_code_name(o.code) << ": "
                            << o.message;
})}

INSTANTIATE_TEST_SUITE_P(Collectives, Matrix, testing::ValuesIn(params()),
                         [](const testing::TestParamInfo<Param>& info) { return info.param.name; });

// ---- the cases beyond the matrix ------------------------------------------------

std::vector<C> iota_of(int r, int64_t n) {
  std::vector<C> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = {static_cast<double>(i + 100 * r), 0};
  return v;
}

// A transposed (non-contiguous) tensor is reduced in place: its logical
// elements, not its storage order, are what the ranks combine.
TEST_F(Collectives, NonContiguousAllReduce){TSR_CONFORMANCE_TRY({
  const World& w = world();
  std::vector<C> base = iota_of(w.rank, 15);  // storage [3, 5]
  TensorPtr t = make(base, {3, 5}, TSR_FLOAT32, device());
  tsr_tensor* tv = nullptr;
  check(tsr_tensor_transpose(t.get(), 0, 1, &tv), "tsr_tensor_transpose");
  TensorPtr view(tv);  // [5, 3], strides (1, 5)
  check(tsr_all_reduce(w.group, view.get(), TSR_DIST_SUM, nullptr), "all_reduce of a [5, 3] view");
  std::vector<C> want(15);
  for (int k = 0; k < w.size; ++k) {
    const std::vector<C> v = iota_of(k, 15);
    for (size_t i = 0; i < 15; ++i) want[i] += v[i];
  }
  // The base holds the sums in storage order; the view reads them transposed.
  EXPECT_EQ(compare(read(t.get()), want, TSR_FLOAT32), "");
  std::vector<C> want_view(15);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      want_view[static_cast<size_t>(i * 3 + j)] = want[static_cast<size_t>(j * 5 + i)];
  EXPECT_EQ(compare(read(view.get()), want_view, TSR_FLOAT32), "");
})}

// all_gather whose input is this rank's slice of the output (NCCL's in-place
// form), and reduce_scatter whose output is this rank's slice of the input.
TEST_F(Collectives, InPlaceAllGatherAndReduceScatter){TSR_CONFORMANCE_TRY({
  const World& w = world();
  const int64_t n = 37;
  std::vector<C> initial(static_cast<size_t>(n * w.size));
  const std::vector<C> mine = iota_of(w.rank, n);
  std::copy(mine.begin(), mine.end(), initial.begin() + n * w.rank);
  TensorPtr out = make(initial, {n * w.size}, TSR_FLOAT32, device());
  tsr_tensor* slice = nullptr;
  check(tsr_tensor_slice(out.get(), 0, n * w.rank, n * (w.rank + 1), 1, &slice),
        "tsr_tensor_slice");
  TensorPtr in(slice);
  check(tsr_all_gather_into_tensor(w.group, out.get(), in.get(), nullptr),
        "all_gather_into_tensor in place");
  std::vector<C> want;
  for (int k = 0; k < w.size; ++k) {
    const std::vector<C> v = iota_of(k, n);
    want.insert(want.end(), v.begin(), v.end());
  }
  EXPECT_EQ(compare(read(out.get()), want, TSR_FLOAT32), "") << "all_gather in place";

  TensorPtr big = make(iota_of(w.rank, n * w.size), {n * w.size}, TSR_FLOAT32, device());
  tsr_tensor* part = nullptr;
  check(tsr_tensor_slice(big.get(), 0, n * w.rank, n * (w.rank + 1), 1, &part), "tsr_tensor_slice");
  TensorPtr o(part);
  check(tsr_reduce_scatter_tensor(w.group, o.get(), big.get(), TSR_DIST_SUM, nullptr),
        "reduce_scatter_tensor in place");
  std::vector<C> sums(static_cast<size_t>(n));
  for (int k = 0; k < w.size; ++k) {
    const std::vector<C> v = iota_of(k, n * w.size);
    for (int64_t i = 0; i < n; ++i)
      sums[static_cast<size_t>(i)] += v[static_cast<size_t>(n * w.rank + i)];
  }
  EXPECT_EQ(compare(read(o.get()), sums, TSR_FLOAT32), "") << "reduce_scatter in place";
})}

// new_group over the ranks in reverse order (member i is its rank i, so
// broadcast from group rank 0 sends the last world rank's tensor), a group of
// rank 0 alone, and split by colour.
TEST_F(Collectives, SubGroups){TSR_CONFORMANCE_TRY({
  const World& w = world();
  std::vector<int32_t> reversed;
  for (int k = w.size - 1; k >= 0; --k) reversed.push_back(k);
  const tsr_process_group_options o = group_options(kGroupTimeoutMs);
  tsr_process_group* g = nullptr;
  check(tsr_process_group_new_group(w.group, reversed.data(), reversed.size(), &o, &g),
        "new_group(reversed ranks)");
  GroupPtr rev(g);
  ASSERT_NE(rev, nullptr);
  int32_t gr = -1, gs = -1;
  check(tsr_process_group_rank(rev.get(), &gr, &gs), "tsr_process_group_rank");
  EXPECT_EQ(gr, w.size - 1 - w.rank);
  EXPECT_EQ(gs, w.size);
  TensorPtr t = make(iota_of(w.rank, 9), {9}, TSR_FLOAT32, device());
  check(tsr_broadcast(rev.get(), t.get(), 0, nullptr), "broadcast from group rank 0");
  EXPECT_EQ(compare(read(t.get()), iota_of(w.size - 1, 9), TSR_FLOAT32), "")
      << "group rank 0 is world rank " << w.size - 1;

  const int32_t only0[] = {0};
  tsr_process_group* g0 = nullptr;
  check(tsr_process_group_new_group(w.group, only0, 1, &o, &g0), "new_group({0})");
  GroupPtr alone(g0);
  EXPECT_EQ(alone != nullptr, w.rank == 0) << "members get the group, others NULL";
  if (alone) {
    TensorPtr u = make(iota_of(7, 4), {4}, TSR_FLOAT32, device());
    check(tsr_all_reduce(alone.get(), u.get(), TSR_DIST_SUM, nullptr), "all_reduce on {0}");
    EXPECT_EQ(compare(read(u.get()), iota_of(7, 4), TSR_FLOAT32), "") << "a group of one";
  }

  // Colour rank % 2, key -rank: each colour ordered by descending rank.
  tsr_process_group* gs2 = nullptr;
  check(tsr_process_group_split(w.group, w.rank % 2, -w.rank, &o, &gs2), "split");
  GroupPtr half(gs2);
  ASSERT_NE(half, nullptr);
  std::vector<int> members;
  for (int k = w.size - 1; k >= 0; --k)
    if (k % 2 == w.rank % 2) members.push_back(k);
  check(tsr_process_group_rank(half.get(), &gr, &gs), "tsr_process_group_rank");
  EXPECT_EQ(gs, static_cast<int>(members.size()));
  EXPECT_EQ(gr, std::find(members.begin(), members.end(), w.rank) - members.begin());
  TensorPtr s = make({C(w.rank + 1, 0)}, {1}, TSR_INT64, device());
  check(tsr_all_reduce(half.get(), s.get(), TSR_DIST_SUM, nullptr), "all_reduce on the split");
  double want = 0;
  for (int k : members) want += k + 1;
  EXPECT_EQ(compare(read(s.get()), {C(want, 0)}, TSR_INT64), "") << "sum over one colour";
})}

// Two groups over the same ranks, each with an asynchronous collective in
// flight at once.
TEST_F(Collectives, TwoGroupsConcurrently){TSR_CONFORMANCE_TRY({
  const World& w = world();
  std::vector<int32_t> all;
  for (int k = 0; k < w.size; ++k) all.push_back(k);
  const tsr_process_group_options o = group_options(kGroupTimeoutMs);
  tsr_process_group* g = nullptr;
  check(tsr_process_group_new_group(w.group, all.data(), all.size(), &o, &g), "new_group(all)");
  GroupPtr second(g);
  const int64_t n = 1 << 18;
  TensorPtr a = make(iota_of(w.rank, n), {n}, TSR_FLOAT32, device());
  TensorPtr b = make(iota_of(w.rank + 1, n), {n}, TSR_FLOAT32, device());
  tsr_work* wa = nullptr;
  tsr_work* wb = nullptr;
  check(tsr_all_reduce(w.group, a.get(), TSR_DIST_MAX, &wa), "all_reduce on the world");
  WorkPtr pa(wa);
  check(tsr_broadcast(second.get(), b.get(), 0, &wb), "broadcast on the second group");
  WorkPtr pb(wb);
  check(tsr_work_wait(pb.get(), -1), "waiting for the broadcast");
  check(tsr_work_wait(pa.get(), -1), "waiting for the all_reduce");
  EXPECT_EQ(compare(read(a.get()), iota_of(w.size - 1, n), TSR_FLOAT32), "") << "world MAX";
  EXPECT_EQ(compare(read(b.get()), iota_of(1, n), TSR_FLOAT32), "") << "second group's broadcast";
})}

// Collectives of one group complete in the order they were issued: once the
// last is done, every earlier one is.
TEST_F(Collectives, AsyncCompletionOrder){TSR_CONFORMANCE_TRY({
  const World& w = world();
  const int64_t sizes[] = {1 << 20, 3, 1 << 16, 0, 513};
  std::vector<TensorPtr> ts;
  std::vector<WorkPtr> works;
  for (size_t k = 0; k < std::size(sizes); ++k) {
    ts.push_back(
        make(iota_of(w.rank + static_cast<int>(k), sizes[k]), {sizes[k]}, TSR_FLOAT32, device()));
    tsr_work* h = nullptr;
    check(tsr_all_reduce(w.group, ts.back().get(), TSR_DIST_SUM, &h), "an async all_reduce");
    works.emplace_back(h);
  }
  check(tsr_work_wait(works.back().get(), -1), "waiting for the last");
  for (size_t k = 0; k + 1 < works.size(); ++k) {
    bool done = false;
    check(tsr_work_is_completed(works[k].get(), &done), "tsr_work_is_completed");
    EXPECT_TRUE(done) << "collective #" << k << " is not complete after the last one is";
    EXPECT_EQ(outcome(tsr_work_error(works[k].get())).code, TSR_OK);
  }
  for (size_t k = 0; k < ts.size(); ++k) {
    std::vector<C> want(static_cast<size_t>(sizes[k]));
    for (int r = 0; r < w.size; ++r) {
      const std::vector<C> v = iota_of(r + static_cast<int>(k), sizes[k]);
      for (size_t i = 0; i < want.size(); ++i) want[i] += v[i];
    }
    EXPECT_EQ(compare(read(ts[k].get()), want, TSR_FLOAT32), "") << "collective #" << k;
  }
})}

// With header checks on, ranks that pass different shapes (or dtypes) all
// get INVALID_ARGUMENT naming the rank and both tensors, and the group works
// on afterwards.
TEST_F(Collectives, MismatchedSizesFailOnEveryRank){TSR_CONFORMANCE_TRY({
  const World& w = world();
  if (w.size == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  std::vector<int32_t> all;
  for (int k = 0; k < w.size; ++k) all.push_back(k);
  const tsr_process_group_options o = group_options(kGroupTimeoutMs, 1);
  tsr_process_group* g = nullptr;
  check(tsr_process_group_new_group(w.group, all.data(), all.size(), &o, &g),
        "new_group(check_headers)");
  GroupPtr checked(g);
  TensorPtr t = make(iota_of(w.rank, 3 + w.rank), {3 + w.rank}, TSR_FLOAT32, device());
  Outcome bad = outcome(tsr_all_reduce(checked.get(), t.get(), TSR_DIST_SUM, nullptr));
  EXPECT_EQ(bad.code, TSR_INVALID_ARGUMENT) << bad.message;
  EXPECT_NE(bad.message.find("rank 1"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("[3]"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("[4]"), std::string::npos) << bad.message;
  const tsr_dtype dt = w.rank == 0 ? TSR_FLOAT32 : TSR_INT32;
  TensorPtr d = make(iota_of(w.rank, 4), {4}, dt, device());
  bad = outcome(tsr_all_reduce(checked.get(), d.get(), TSR_DIST_SUM, nullptr));
  EXPECT_EQ(bad.code, TSR_INVALID_ARGUMENT) << bad.message;
  EXPECT_NE(bad.message.find("float32"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("int32"), std::string::npos) << bad.message;
  TensorPtr ok = make(iota_of(w.rank, 4), {4}, TSR_FLOAT32, device());
  check(tsr_all_reduce(checked.get(), ok.get(), TSR_DIST_SUM, nullptr),
        "an all_reduce after the refused ones");
})}

TEST_F(Collectives, Barrier){TSR_CONFORMANCE_TRY({
  const World& w = world();
  check(tsr_barrier(w.group, nullptr), "barrier");
  tsr_work* h = nullptr;
  check(tsr_barrier(w.group, &h), "async barrier");
  WorkPtr p(h);
  check(tsr_work_wait(p.get(), -1), "waiting for the barrier");
})}

// A rank that dies while an all_reduce is in flight: the survivor fails
// within the group's timeout with an error, its group is failed from then
// on, and nothing hangs (Note [Conformance collectives]).
TEST_F(Collectives, KilledRankFailsTheOthersWithinTheTimeout) {
  TSR_CONFORMANCE_TRY({
    const World& w = world();
    if (w.rank != 0) return;
    char tmpl[] = "/tmp/tessera-victim-XXXXXX";
    const int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ::close(fd);
    const std::string file = tmpl;
    const Target& t = target();
    std::vector<std::string> args = {"/proc/self/exe", "--plugin",   t.plugin_path,
                                     "--cpu-plugin",   t.cpu_plugin, "--device",
                                     t.device,         "--victim",   file};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::execv("/proc/self/exe", argv.data());
      ::_exit(127);
    }
    // The victim loads the plugin (seconds on some drivers), then says so;
    // only then does the pair meet with the short timeout under test.
    StorePtr ready;
    {
      tsr_store* st = nullptr;
      check(tsr_store_create_file((file + ".ready").c_str(), 120000, &st), "the victim's store");
      ready.reset(st);
    }
    const char* key = "ready";
    check(tsr_store_wait(ready.get(), &key, 1, 120000), "waiting for the victim to start");
    const int64_t timeout_ms = 4000;
    const tsr_process_group_options o = group_options(timeout_ms);
    tsr_process_group* g = nullptr;
    check(tsr_process_group_init(runtime(), ("file://" + file).c_str(), 0, 2, &o, &g),
          "joining the victim");
    GroupPtr pair(g);
    // One all_reduce with both alive (the communicator exists from here on),
    // then the victim dies with the next in flight.
    TensorPtr small = make({C(1, 0)}, {1}, TSR_FLOAT32, device());
    check(tsr_all_reduce(pair.get(), small.get(), TSR_DIST_SUM, nullptr),
          "an all_reduce with the victim alive");
    EXPECT_EQ(compare(read(small.get()), {C(2, 0)}, TSR_FLOAT32), "");
    TensorPtr x = make(std::vector<C>(static_cast<size_t>(kLargeElements / 4), C(1, 0)),
                       {kLargeElements / 4}, TSR_FLOAT32, device());
    const auto start = Clock::now();
    Outcome first = outcome(tsr_all_reduce(pair.get(), x.get(), TSR_DIST_SUM, nullptr));
    // The victim may die between collectives rather than inside one: the
    // next one fails then.
    for (int k = 0; k < 3 && first.code == TSR_OK; ++k)
      first = outcome(tsr_all_reduce(pair.get(), x.get(), TSR_DIST_SUM, nullptr));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_NE(first.code, TSR_OK) << "all_reduce with a dead peer succeeded";
    EXPECT_TRUE(first.code == TSR_UNAVAILABLE || first.code == TSR_DEADLINE_EXCEEDED ||
                first.code == TSR_ABORTED)
        << tsr_status_code_name(first.code) << ": " << first.message;
    EXPECT_LT(seconds, timeout_ms / 1000.0 + 7.0)
        << "the group's timeout is " << timeout_ms << " ms (+5 s grace for the engine's own)";
    EXPECT_NE(first.message.find("rank 1)"), std::string::npos)
        << "the error should name the rank that died: " << first.message;
    const Outcome later = outcome(tsr_barrier(pair.get(), nullptr));
    EXPECT_EQ(later.code, TSR_FAILED_PRECONDITION) << "the group stays failed: " << later.message;
    int status = 0;
    const pid_t reaped = ::waitpid(pid, &status, 0);
    EXPECT_EQ(reaped, pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 9)
        << "the victim should exit 9 mid-collective (status " << status << ")";
    ::unlink(file.c_str());
    ::unlink((file + ".ready").c_str());
  })
}

}  // namespace

// The victim of KilledRankFailsTheOthersWithinTheTimeout: rank 1 of a
// two-rank group through `file`; exits 9 with an all_reduce in flight.
[[noreturn]] void run_victim(const std::string& file) {
  try {
    device();  // loads the plugin
    tsr_store* st = nullptr;
    check(tsr_store_create_file((file + ".ready").c_str(), 120000, &st), "the victim's store");
    StorePtr ready(st);
    check(tsr_store_set(ready.get(), "ready", "1", 1), "saying the victim is ready");
    const tsr_process_group_options o = group_options(4000);
    tsr_process_group* g = nullptr;
    check(tsr_process_group_init(runtime(), ("file://" + file).c_str(), 1, 2, &o, &g), "joining");
    TensorPtr small = make({C(1, 0)}, {1}, TSR_FLOAT32, device());
    check(tsr_all_reduce(g, small.get(), TSR_DIST_SUM, nullptr), "the first all_reduce");
    TensorPtr x = make(std::vector<C>(static_cast<size_t>(kLargeElements / 4), C(1, 0)),
                       {kLargeElements / 4}, TSR_FLOAT32, device());
    tsr_work* w = nullptr;
    check(tsr_all_reduce(g, x.get(), TSR_DIST_SUM, &w), "all_reduce");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "victim: %s\n", e.what());
  }
  ::_exit(9);
}

}  // namespace tessera::conformance
