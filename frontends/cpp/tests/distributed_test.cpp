// tessera::distributed on several processes: ctest starts this program
// through `tessera run -n 3` (an odd world size), so every case runs on
// every rank at once. Each rank builds its input from its rank alone, and
// every expectation is computed here, in float64, from the inputs all ranks
// are known to hold - never from the code under test. Cases run on cpu:0
// (Gloo) and, when the Vulkan plugin is loaded, on vulkan:0 (staged through
// cpu:0's communicator).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/distributed.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace dist = tessera::distributed;
using dist::ReduceOp;
using tessera::Device;
using tessera::Dtype;
using tessera::Tensor;

int R() { return dist::get_rank(); }
int N() { return dist::get_world_size(); }

// rank r's value at element i: small integers, exact in every dtype.
double value(int r, int64_t i) { return static_cast<double>((i * 7 + r * 3) % 5 + 1); }

Tensor make(const std::vector<double>& v, Dtype dtype, Device device) {
  std::vector<double> copy = v;
  Tensor t = tessera::from_blob(copy.data(), {static_cast<int64_t>(copy.size())},
                                tessera::TensorOptions(tessera::kFloat64))
                 .clone();
  return t.to(dtype).to(device);
}

Tensor rank_tensor(int r, int64_t n, Dtype dtype, Device device) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value(r, i);
  return make(v, dtype, device);
}

std::vector<double> read(const Tensor& t) {
  Tensor h = t.to(tessera::kCPU).to(tessera::kFloat64).contiguous().reshape({-1});
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

double reduce_ref(ReduceOp op, int64_t i, int n, bool integral) {
  double acc = value(0, i);
  for (int r = 1; r < n; ++r) {
    const double x = value(r, i);
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        acc += x;
        break;
      case ReduceOp::PRODUCT:
        acc *= x;
        break;
      case ReduceOp::MIN:
        acc = std::min(acc, x);
        break;
      case ReduceOp::MAX:
        acc = std::max(acc, x);
        break;
    }
  }
  if (op == ReduceOp::AVG) acc = integral ? std::trunc(acc / n) : acc / n;
  return acc;
}

std::vector<Device> devices() {
  std::vector<Device> out = {tessera::kCPU};
  if (tessera::has_device("vulkan:0")) out.emplace_back("vulkan:0");
  return out;
}

class Distributed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("RANK") == nullptr) return;
    dist::InitOptions o;
    o.timeout = std::chrono::seconds(60);
    o.check_headers = 1;  // mismatches are part of what is tested
    dist::init_process_group("gloo", o);
  }
  void SetUp() override {
    if (!dist::is_initialized())
      GTEST_SKIP() << "not launched by `tessera run -n N` (no RANK in the environment)";
  }
};

TEST_F(Distributed, WorldAndEngines) {
  EXPECT_EQ(R(), std::atoi(std::getenv("RANK")));
  EXPECT_EQ(N(), std::atoi(std::getenv("WORLD_SIZE")));
  EXPECT_NE(dist::group_world().engine().find("gloo"), std::string::npos)
      << dist::group_world().engine();
  if (tessera::has_device("vulkan:0")) {
    const std::string e = dist::group_world().engine(Device("vulkan:0"));
    EXPECT_EQ(e.rfind("staged through cpu:0: gloo", 0), 0u) << e;
  }
}

TEST_F(Distributed, AllReduceEveryOpDtypeAndSize) {
  const Dtype dtypes[] = {tessera::kFloat32, tessera::kFloat64,  tessera::kInt64,
                          tessera::kInt32,   tessera::kBFloat16, tessera::kUInt8};
  const ReduceOp ops[] = {ReduceOp::SUM, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX,
                          ReduceOp::AVG};
  for (Device device : devices()) {
    for (Dtype dtype : dtypes) {
      const bool integral = !tessera::is_floating_point(dtype);
      for (ReduceOp op : ops) {
        if (op == ReduceOp::AVG && integral) continue;  // refused, tested below
        for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1001}}) {
          SCOPED_TRACE(device.str() + " " + std::string(tessera::name(dtype)) + " op " +
                       std::to_string(static_cast<int>(op)) + " n " + std::to_string(n));
          Tensor t = rank_tensor(R(), n, dtype, device);
          dist::all_reduce(t, op);
          std::vector<double> got = read(t);
          ASSERT_EQ(got.size(), static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) {
            double want = reduce_ref(op, i, N(), integral);
            if (dtype == tessera::kUInt8) want = std::fmod(want, 256.0);
            const double tol = dtype == tessera::kBFloat16 ? std::abs(want) / 128 : 1e-6;
            ASSERT_NEAR(got[static_cast<size_t>(i)], want, tol) << "element " << i;
          }
        }
      }
    }
  }
}

TEST_F(Distributed, AllReduceLargeNonContiguousAndInPlaceView) {
  for (Device device : devices()) {
    // 4 Mi float32 (16 MiB): several of Gloo's chunks.
    const int64_t n = int64_t{1} << 22;
    Tensor t = rank_tensor(R(), n, tessera::kFloat32, device);
    dist::all_reduce(t);
    std::vector<double> got = read(t);
    for (int64_t i = 0; i < n; i += 4099)
      ASSERT_EQ(got[static_cast<size_t>(i)], reduce_ref(ReduceOp::SUM, i, N(), false)) << i;
    // A transposed view: the result lands in the view's elements.
    Tensor base = rank_tensor(R(), 12, tessera::kFloat64, device).reshape({3, 4});
    Tensor view = base.t();
    ASSERT_FALSE(view.is_contiguous());
    dist::all_reduce(view, ReduceOp::MAX);
    std::vector<double> b = read(base);
    for (int64_t i = 0; i < 12; ++i)
      EXPECT_EQ(b[static_cast<size_t>(i)], reduce_ref(ReduceOp::MAX, i, N(), false)) << i;
  }
}

TEST_F(Distributed, BroadcastReduceAndRoots) {
  for (Device device : devices()) {
    for (int root = 0; root < N(); ++root) {
      Tensor t = rank_tensor(R(), 9, tessera::kInt64, device);
      dist::broadcast(t, root);
      std::vector<double> got = read(t);
      for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], value(root, i));

      Tensor u = rank_tensor(R(), 9, tessera::kFloat32, device);
      dist::reduce(u, root, ReduceOp::SUM);
      got = read(u);
      for (int64_t i = 0; i < 9; ++i) {
        const double want = R() == root ? reduce_ref(ReduceOp::SUM, i, N(), false) : value(R(), i);
        EXPECT_EQ(got[static_cast<size_t>(i)], want) << "root " << root << " element " << i;
      }
    }
  }
}

TEST_F(Distributed, AllGatherAndReduceScatterBothForms) {
  for (Device device : devices()) {
    const int64_t n = 5;
    Tensor in = rank_tensor(R(), n, tessera::kFloat32, device).reshape({1, n});
    Tensor out = tessera::empty({N(), n}, in.options());
    dist::all_gather_into_tensor(out, in);
    std::vector<double> got = read(out);
    for (int r = 0; r < N(); ++r)
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(got[static_cast<size_t>(r * n + i)], value(r, i)) << r << "," << i;

    std::vector<Tensor> list;
    for (int r = 0; r < N(); ++r) list.push_back(tessera::zeros({1, n}, in.options()));
    dist::all_gather(list, in);
    for (int r = 0; r < N(); ++r)
      EXPECT_EQ(read(list[static_cast<size_t>(r)]), read(out.narrow(0, r, 1)));

    // A 0-d input gathers into [world_size].
    Tensor scalar = make({static_cast<double>(R() + 10)}, tessera::kInt64, device).reshape({});
    Tensor gathered = tessera::empty({N()}, scalar.options());
    dist::all_gather_into_tensor(gathered, scalar);
    for (int r = 0; r < N(); ++r) EXPECT_EQ(read(gathered)[static_cast<size_t>(r)], r + 10);

    // reduce_scatter: rank r gets slice r of the sum of everyone's input.
    Tensor big = rank_tensor(R(), N() * n, tessera::kFloat64, device);
    Tensor mine = tessera::empty({n}, big.options());
    dist::reduce_scatter_tensor(mine, big, ReduceOp::SUM);
    got = read(mine);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(got[static_cast<size_t>(i)], reduce_ref(ReduceOp::SUM, R() * n + i, N(), false));

    std::vector<Tensor> parts;
    for (int r = 0; r < N(); ++r) parts.push_back(big.narrow(0, r * n, n));
    Tensor mine2 = tessera::empty({n}, big.options());
    dist::reduce_scatter(mine2, parts, ReduceOp::MAX);
    got = read(mine2);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(got[static_cast<size_t>(i)], reduce_ref(ReduceOp::MAX, R() * n + i, N(), false));
  }
}

TEST_F(Distributed, GatherScatterAllToAll) {
  for (Device device : devices()) {
    const int64_t n = 3;
    const int root = N() - 1;
    Tensor in = rank_tensor(R(), n, tessera::kInt32, device);
    std::vector<Tensor> list;
    if (R() == root)
      for (int r = 0; r < N(); ++r) list.push_back(tessera::zeros({n}, in.options()));
    dist::gather(in, R() == root ? &list : nullptr, root);
    if (R() == root) {
      for (int r = 0; r < N(); ++r)
        for (int64_t i = 0; i < n; ++i)
          EXPECT_EQ(read(list[static_cast<size_t>(r)])[static_cast<size_t>(i)], value(r, i));
    }

    std::vector<Tensor> pieces;
    if (R() == root)
      for (int r = 0; r < N(); ++r)
        pieces.push_back(rank_tensor(r + 100, n, tessera::kInt32, device));
    Tensor got = tessera::zeros({n}, in.options());
    dist::scatter(got, R() == root ? &pieces : nullptr, root);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(read(got)[static_cast<size_t>(i)], value(R() + 100, i));

    // all_to_all: rank r's slice s holds 1000 r + s; it receives 1000 s + r from rank s.
    std::vector<double> v;
    for (int s = 0; s < N(); ++s)
      for (int64_t i = 0; i < 2; ++i) v.push_back(1000.0 * R() + s + 0.25 * static_cast<double>(i));
    Tensor a = make(v, tessera::kFloat64, device);
    Tensor b = tessera::empty({a.numel()}, a.options());
    dist::all_to_all_single(b, a);
    std::vector<double> w = read(b);
    for (int s = 0; s < N(); ++s)
      for (int64_t i = 0; i < 2; ++i)
        EXPECT_EQ(w[static_cast<size_t>(s * 2 + i)],
                  1000.0 * s + R() + 0.25 * static_cast<double>(i));
  }
}

TEST_F(Distributed, SendRecvRing) {
  for (Device device : devices()) {
    const int next = (R() + 1) % N(), prev = (R() + N() - 1) % N();
    Tensor out = rank_tensor(R(), 17, tessera::kFloat32, device);
    Tensor in = tessera::zeros({17}, out.options());
    // Even ranks send first, odd ranks receive first: no rank waits on itself.
    if (R() % 2 == 0) {
      dist::send(out, next);
      dist::recv(in, prev);
    } else {
      dist::recv(in, prev);
      dist::send(out, next);
    }
    std::vector<double> got = read(in);
    for (int64_t i = 0; i < 17; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], value(prev, i));
    // Every rank sends first, asynchronously: the send waits for its peer's
    // recv, issued after it; each direction has a lane of its own (Note
    // [Process groups]), so this ring completes rather than deadlocking.
    Tensor in2 = tessera::zeros({17}, out.options());
    dist::Work sent = dist::isend(out, next);
    dist::Work received = dist::irecv(in2, prev);
    sent.wait();
    received.wait();
    got = read(in2);
    for (int64_t i = 0; i < 17; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], value(prev, i));
  }
  dist::barrier();
}

TEST_F(Distributed, AsyncWorkCompletesInIssueOrder) {
  std::vector<Tensor> ts;
  std::vector<dist::Work> works;
  for (int k = 0; k < 6; ++k) {
    ts.push_back(rank_tensor(R() + k, 1000, tessera::kFloat64, tessera::kCPU));
    works.push_back(dist::all_reduce(ts.back(), ReduceOp::SUM, {}, /*async_op=*/true));
  }
  // Waiting on the last first: the earlier ones completed before it.
  works.back().wait();
  for (int k = 0; k < 6; ++k) EXPECT_TRUE(works[static_cast<size_t>(k)].is_completed()) << k;
  for (int k = 0; k < 6; ++k) {
    works[static_cast<size_t>(k)].wait();
    EXPECT_TRUE(works[static_cast<size_t>(k)].is_success());
    std::vector<double> got = read(ts[static_cast<size_t>(k)]);
    double want = 0;
    for (int r = 0; r < N(); ++r) want += value(r + k, 5);
    EXPECT_EQ(got[5], want) << k;
  }
}

TEST_F(Distributed, SubGroupsAndSplitRunConcurrently) {
  // {last, 0}: member order defines the new ranks.
  dist::ProcessGroup pair = dist::new_group({N() - 1, 0});
  const bool member = R() == 0 || R() == N() - 1;
  ASSERT_EQ(static_cast<bool>(pair), member);
  // Odd and even ranks, ordered by descending rank (key = -rank).
  dist::ProcessGroup parity = dist::split_group(R() % 2, -R());
  ASSERT_TRUE(parity);
  int same = 0;
  for (int r = 0; r < N(); ++r) same += r % 2 == R() % 2;
  EXPECT_EQ(parity.size(), same);
  int above = 0;
  for (int r = R() + 1; r < N(); ++r) above += r % 2 == R() % 2;
  EXPECT_EQ(parity.rank(), above);

  // Both groups and the world in flight at once.
  Tensor a = make({static_cast<double>(R() + 1)}, tessera::kInt64, tessera::kCPU);
  Tensor b = make({static_cast<double>(R() + 1)}, tessera::kInt64, tessera::kCPU);
  Tensor c = make({static_cast<double>(R() + 1)}, tessera::kInt64, tessera::kCPU);
  dist::Work wa, wb;
  if (member) {
    EXPECT_EQ(pair.rank(), R() == 0 ? 1 : 0);
    wa = dist::all_reduce(a, ReduceOp::SUM, pair, true);
  }
  wb = dist::all_reduce(b, ReduceOp::SUM, parity, true);
  dist::all_reduce(c, ReduceOp::SUM);
  wa.wait();
  wb.wait();
  if (member) {
    EXPECT_EQ(read(a)[0], 1 + N());
  }
  int parity_sum = 0;
  for (int r = 0; r < N(); ++r)
    if (r % 2 == R() % 2) parity_sum += r + 1;
  EXPECT_EQ(read(b)[0], parity_sum);
  EXPECT_EQ(read(c)[0], N() * (N() + 1) / 2);
}

TEST_F(Distributed, ArgumentErrorsNameTheArgument) {
  Tensor in = tessera::zeros({4});
  Tensor wrong = tessera::zeros({4 * N() + 1});
  try {
    dist::all_gather_into_tensor(wrong, in);
    FAIL() << "a wrong output shape was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("'output' has shape [" + std::to_string(4 * N() + 1)),
              std::string::npos)
        << e.what();
  }
  Tensor ints = tessera::zeros({3}, tessera::TensorOptions(tessera::kInt64));
  try {
    dist::all_reduce(ints, ReduceOp::AVG);
    FAIL() << "AVG of int64 was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("AVG needs a floating"), std::string::npos) << e.what();
  }
  try {
    dist::broadcast(in, N());
    FAIL() << "a root outside the group was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("argument 'src' is " + std::to_string(N())),
              std::string::npos)
        << e.what();
  }
  dist::barrier();  // nothing was sent: the group is still in step
}

TEST_F(Distributed, ShapeMismatchAcrossRanksFailsOnEveryRank) {
  // Rank 1 passes one element more: every rank learns it, names rank 1.
  Tensor t = tessera::ones({3 + (R() == 1 ? 1 : 0)});
  try {
    dist::all_reduce(t);
    FAIL() << "a shape mismatch across ranks went unnoticed";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 1 gave a tensor of float32 [4] but rank 0 gave float32 [3]"),
              std::string::npos)
        << m;
  }
  // The group is still usable afterwards.
  Tensor ok = tessera::ones({2});
  dist::all_reduce(ok);
  EXPECT_EQ(read(ok)[1], N());
}

}  // namespace
