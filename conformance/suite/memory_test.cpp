// memory_test - families "device" and "memory" through the application API
// on the device under test: enumeration, properties, allocation sizes and
// alignment, exhaustion, statistics and leaks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "suite_support.h"

namespace tessera::conformance {
namespace {

bool same_properties(const tsr_device_properties& a, const tsr_device_properties& b) {
  return std::strcmp(a.name, b.name) == 0 && a.total_memory == b.total_memory &&
         a.dtypes == b.dtypes && a.max_allocation == b.max_allocation && a.features == b.features &&
         a.compute_units == b.compute_units && a.alignment == b.alignment;
}

tsr_memory_stats stats() {
  tsr_memory_stats s{};
  s.struct_size = sizeof(s);
  check(tsr_device_memory_stats(runtime(), device(), &s), "tsr_device_memory_stats");
  return s;
}

TEST(Device, EnumerationIsStableAcrossCalls){TSR_CONFORMANCE_TRY({
  size_t first = 0;
  check(tsr_device_count(runtime(), &first), "tsr_device_count");
  for (int round = 0; round < 3; ++round) {
    size_t n = 0;
    check(tsr_device_count(runtime(), &n), "tsr_device_count");
    ASSERT_EQ(n, first) << "the device count changed between calls";
    tsr_device_properties p{};
    p.struct_size = sizeof(p);
    check(tsr_device_get_properties(runtime(), device(), &p), "tsr_device_get_properties");
    EXPECT_TRUE(same_properties(p, properties())) << "properties changed between calls";
  }
})}

TEST(Device, PropertiesAreSane){TSR_CONFORMANCE_TRY({
  const tsr_device_properties& p = properties();
  EXPECT_GT(std::strlen(p.name), 0u) << "no device name";
  EXPECT_TRUE(p.dtypes & TSR_DTYPE_BIT(TSR_FLOAT32)) << "every device must compute in float32";
  EXPECT_GE(p.alignment, 1u);
  EXPECT_EQ(p.alignment & (p.alignment - 1), 0u)
      << "alignment " << p.alignment << " is not a power of two";
  if (p.total_memory != 0 && p.free_memory != 0) {
    EXPECT_LE(p.free_memory, p.total_memory);
  }
  if (p.total_memory != 0 && p.max_allocation != 0) {
    EXPECT_LE(p.max_allocation, p.total_memory) << "max_allocation above total_memory";
  }
  EXPECT_GE(p.compute_units, 0);
})}

TEST(Memory, ZeroSizeTensorsWork){TSR_CONFORMANCE_TRY({
  const std::vector<float> none;
  TensorPtr t = on_device(none.data(), 0, {0, 3}, TSR_FLOAT32);
  int64_t n = -1;
  check(tsr_tensor_numel(t.get(), &n), "tsr_tensor_numel");
  EXPECT_EQ(n, 0);
  check(tsr_tensor_copy_to_host(t.get(), nullptr, 0), "copy of 0 bytes to the host");
})}

TEST(Memory, OddSizesRoundTripExactly){TSR_CONFORMANCE_TRY({
  for (int64_t n : {1, 3, 7, 13, 255, 1023, 4097, 65537}) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 31 + 7);
    TensorPtr t = on_device(v, {n}, TSR_UINT8);
    EXPECT_EQ(to_host<uint8_t>(t.get()), v) << n << " bytes";
  }
})}

TEST(Memory, AddressableAllocationsHonourTheStatedAlignment){TSR_CONFORMANCE_TRY({
  if (!(properties().features & TSR_FEATURE_HOST_ADDRESSABLE))
    GTEST_SKIP() << "device memory is not host-addressable; alignment is the plugin's business";
  const uint32_t align = properties().alignment;
  std::vector<TensorPtr> keep;
  for (int64_t n : {1, 3, 17, 100, 4097}) {
    std::vector<uint8_t> v(static_cast<size_t>(n), 1);
    keep.push_back(on_device(v, {n}, TSR_UINT8));
    void* p = nullptr;
    check(tsr_tensor_data_ptr(keep.back().get(), &p), "tsr_tensor_data_ptr");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u)
        << n << "-byte allocation at " << p << " is not " << align << "-aligned";
  }
})}

TEST(Memory, TenThousandSmallAllocationsLiveAtOnce){TSR_CONFORMANCE_TRY({
  std::vector<TensorPtr> live;
  live.reserve(10000);
  for (int i = 0; i < 10000; ++i) {
    const int32_t v[2] = {i, -i};
    live.push_back(on_device(v, sizeof(v), {2}, TSR_INT32));
  }
  for (int i : {0, 1, 4999, 9999}) {
    const std::vector<int32_t> got = to_host<int32_t>(live[static_cast<size_t>(i)].get());
    EXPECT_EQ(got, (std::vector<int32_t>{i, -i})) << "allocation " << i;
  }
})}

TEST(Memory, LargeAllocationsRoundTrip){TSR_CONFORMANCE_TRY({
  constexpr int64_t kMiB = 1 << 20;
  int64_t n = 96 * kMiB + 3;  // not a power of two
  if (properties().max_allocation != 0)
    n = std::min<int64_t>(n, static_cast<int64_t>(properties().max_allocation));
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i >> 12) ^ i);
  TensorPtr t = on_device(v, {n}, TSR_UINT8);
  EXPECT_TRUE(to_host<uint8_t>(t.get()) == v) << n << " bytes did not round-trip";
})}

TEST(Memory, ExhaustionIsResourceExhaustedAndTheDeviceStillWorks){TSR_CONFORMANCE_TRY({
  // 2^50 bytes: more than any device of this decade; must be refused
  // cleanly, not crash, not be "allocated" lazily.
  const int64_t sizes[1] = {int64_t{1} << 50};
  tsr_tensor* t = nullptr;
  const Outcome o = outcome(tsr_tensor_empty(runtime(), 1, sizes, TSR_UINT8, device(), &t));
  if (t != nullptr) tsr_tensor_release(t);
  EXPECT_EQ(o.code, TSR_RESOURCE_EXHAUSTED)
      << "a 1 PiB allocation gave " << tsr_status_code_name(o.code) << ": " << o.message;
  const std::vector<float> v = {1.5f, -2.5f};
  TensorPtr after = on_device(v, {2}, TSR_FLOAT32);
  EXPECT_EQ(to_host<float>(after.get()), v) << "the device did not recover";
})}

TEST(Memory, StatisticsFollowAllocationsAndReleases){TSR_CONFORMANCE_TRY({
  check(tsr_device_synchronize(runtime(), device()), "tsr_device_synchronize");
  const tsr_memory_stats before = stats();
  EXPECT_GE(before.reserved, before.allocated);
  constexpr int64_t kBytes = 3 << 20;
  std::vector<uint8_t> v(kBytes, 7);
  {
    TensorPtr t = on_device(v, {kBytes}, TSR_UINT8);
    const tsr_memory_stats during = stats();
    EXPECT_GE(during.allocated, before.allocated + kBytes);
    EXPECT_GE(during.peak_allocated, during.allocated);
    EXPECT_GE(during.reserved, during.allocated);
    EXPECT_GT(during.alloc_count, before.alloc_count);
  }
  check(tsr_device_synchronize(runtime(), device()), "tsr_device_synchronize");
  EXPECT_EQ(stats().allocated, before.allocated) << "bytes still held after the release";
})}

TEST(Memory, NothingLeaksAfterAWorkload) {
  TSR_CONFORMANCE_TRY({
    check(tsr_device_synchronize(runtime(), device()), "tsr_device_synchronize");
    check(tsr_device_empty_cache(runtime(), device()), "tsr_device_empty_cache");
    const tsr_memory_stats before = stats();
    for (int round = 0; round < 20; ++round) {
      std::vector<float> v(static_cast<size_t>(1000 + round * 377), 1.0f);
      TensorPtr a = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
      TensorPtr b = call("add.Tensor", {tensor_value(a.get()), tensor_value(a.get())});
      TensorPtr c = call("sum", {tensor_value(b.get())});
      EXPECT_EQ(to_host<float>(c.get())[0], 2.0f * static_cast<float>(v.size()));
    }
    check(tsr_device_synchronize(runtime(), device()), "tsr_device_synchronize");
    check(tsr_device_empty_cache(runtime(), device()), "tsr_device_empty_cache");
    const tsr_memory_stats after = stats();
    EXPECT_EQ(after.allocated, before.allocated) << "allocated bytes grew over the workload";
    EXPECT_EQ(after.reserved, before.reserved) << "the cache kept memory after empty_cache";
  })
}

}  // namespace
}  // namespace tessera::conformance
