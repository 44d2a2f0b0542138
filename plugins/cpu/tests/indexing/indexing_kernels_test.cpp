// indexing_kernels_test.cpp - the indexing family's CPU kernels called
// directly (no libtessera): gather and _scatter_ over strided, negative-stride
// and broadcast operands, their bounds checks (no access outside the
// tensors), scatter's exact combination of duplicates in parallel, the
// two-phase nonzero protocol (size_fn then fn), sort and searchsorted, and
// the validation of malformed calls. References are loops over the harness's
// own element codecs (reference.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

tsr_value int_value(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}

const test_plugin& plugin() { return test_plugin::get(); }

// The _scatter_ entry claiming `code` for `dtype`.
const tsr_kernel_entry& scatter_entry(int code, tsr_dtype dtype) {
  const tsr_plugin_api& api = plugin().api();
  for (size_t i = 0; i < api.kernel_count; ++i) {
    const tsr_kernel_entry& e = api.kernels[i];
    if (std::strncmp(e.schema, "_scatter_(", 10) != 0) continue;
    if (!(e.op_codes[code / 64] & (uint64_t{1} << (code % 64)))) continue;
    if (e.dtype_masks[0] != 0 && !(e.dtype_masks[0] & TSR_DTYPE_BIT(dtype))) continue;
    return e;
  }
  ADD_FAILURE() << "no _scatter_ kernel for code " << code;
  return api.kernels[0];
}

status_ptr call_entry(const tsr_kernel_entry& entry, const char* name,
                      const std::vector<tsr_value>& args, std::vector<tsr_tensor_desc>& outs) {
  tsr_kernel_call call{};
  call.struct_size = sizeof call;
  call.op_name = name;
  call.nargs = static_cast<int32_t>(args.size());
  call.nouts = static_cast<int32_t>(outs.size());
  call.args = args.data();
  call.outs = outs.data();
  return status_ptr(entry.fn(plugin().context(), &call));
}

void fill(host_tensor& t, const std::vector<long double>& values) {
  size_t k = 0;
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& i) { t.set(i, {values[k++], 0}); });
}

std::vector<long double> values_of(const host_tensor& t) {
  std::vector<long double> v;
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& i) { v.push_back(t.get(i).re); });
  return v;
}

// ---- gather --------------------------------------------------------------------

TEST(GatherKernel, NegativeStrideSelfAndBroadcastIndex) {
  host_tensor self(TSR_FLOAT32, {4, 3}, {-3, 1});  // rows in reverse memory order
  fill(self, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  host_tensor index(TSR_INT64, {2, 3}, {0, 1});  // each row the same: stride 0
  fill(index, {3, 0, 2, 3, 0, 2});
  host_tensor out(TSR_FLOAT32, {2, 3});
  std::vector<tsr_value> args = {tensor_value(self), int_value(0), tensor_value(index),
                                 bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(code_of(plugin().call("gather", args, outs)), TSR_OK);
  EXPECT_EQ(values_of(out), (std::vector<long double>{9, 1, 8, 9, 1, 8}));
}

TEST(GatherKernel, OutOfRangeIndexIsReportedNotRead) {
  host_tensor self(TSR_FLOAT64, {3});
  host_tensor index(TSR_INT64, {3});
  fill(index, {1, static_cast<long double>(int64_t{1} << 40), -3});
  host_tensor out(TSR_FLOAT64, {3});
  std::vector<tsr_value> args = {tensor_value(self), int_value(0), tensor_value(index),
                                 bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  status_ptr st = plugin().call("gather", args, outs);
  EXPECT_EQ(code_of(st), TSR_OUT_OF_RANGE);
  EXPECT_NE(message_of(st).find("index 1099511627776 is out of bounds for dimension 0 with size 3"),
            std::string::npos)
      << message_of(st);
}

TEST(GatherKernel, MalformedCallsAreRejected) {
  host_tensor self(TSR_FLOAT32, {3});
  host_tensor index32(TSR_INT32, {2});
  host_tensor out(TSR_FLOAT32, {2});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  std::vector<tsr_value> args = {tensor_value(self), int_value(0), tensor_value(index32),
                                 bool_value(false)};
  EXPECT_EQ(code_of(plugin().call("gather", args, outs)), TSR_INVALID_ARGUMENT);
  host_tensor index(TSR_INT64, {2});
  args[2] = tensor_value(index);
  args[1] = int_value(1);  // no dim 1
  EXPECT_EQ(code_of(plugin().call("gather", args, outs)), TSR_INVALID_ARGUMENT);
  args.pop_back();
  EXPECT_EQ(code_of(plugin().call("gather", args, outs)), TSR_INVALID_ARGUMENT);
}

// ---- _scatter_ ---------------------------------------------------------------

TEST(ScatterKernel, AmaxAminPropagateNaNAndBoolCombines) {
  host_tensor self(TSR_FLOAT32, {2});
  fill(self, {1, 5});
  host_tensor index(TSR_INT64, {3});
  fill(index, {0, 0, 1});
  host_tensor src(TSR_FLOAT32, {3});
  fill(src, {3, NAN, 2});
  std::vector<tsr_value> args = {tensor_value(self), int_value(0), tensor_value(index),
                                 tensor_value(src), int_value(TSR_SCATTER_AMAX)};
  std::vector<tsr_tensor_desc> outs = {self.desc()};
  ASSERT_EQ(
      code_of(call_entry(scatter_entry(TSR_SCATTER_AMAX, TSR_FLOAT32), "_scatter_", args, outs)),
      TSR_OK);
  std::vector<long double> got = values_of(self);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 5);

  host_tensor b(TSR_BOOL, {2});
  fill(b, {0, 1});
  host_tensor bsrc(TSR_BOOL, {3});
  fill(bsrc, {1, 0, 0});
  args = {tensor_value(b), int_value(0), tensor_value(index), tensor_value(bsrc),
          int_value(TSR_SCATTER_MUL)};
  outs = {b.desc()};
  ASSERT_EQ(code_of(call_entry(scatter_entry(TSR_SCATTER_MUL, TSR_BOOL), "_scatter_", args, outs)),
            TSR_OK);
  EXPECT_EQ(values_of(b), (std::vector<long double>{0, 0}));  // and
}

TEST(ScatterKernel, ParallelAddEqualsSequentialReference) {
  const int64_t n = 2048, m = 256, rows = 16;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> pick(0, rows - 1);
  std::uniform_real_distribution<double> val(-1, 1);
  host_tensor self(TSR_FLOAT32, {rows, m});
  host_tensor index(TSR_INT64, {n, m});
  host_tensor src(TSR_FLOAT32, {n, m});
  std::vector<float> want(static_cast<size_t>(rows * m), 0.0f);
  std::vector<int64_t> iv(static_cast<size_t>(n * m));
  std::vector<float> sv(iv.size());
  for (size_t i = 0; i < iv.size(); ++i) {
    iv[i] = pick(rng);
    sv[i] = static_cast<float>(val(rng));
  }
  for (int64_t j = 0; j < m; ++j)
    for (int64_t i = 0; i < n; ++i)  // the kernel's order within a line
      want[static_cast<size_t>(iv[i * m + j] * m + j)] += sv[static_cast<size_t>(i * m + j)];
  std::memcpy(index.address({0, 0}), iv.data(), iv.size() * sizeof(int64_t));
  std::memcpy(src.address({0, 0}), sv.data(), sv.size() * sizeof(float));
  std::vector<tsr_value> args = {tensor_value(self), int_value(0), tensor_value(index),
                                 tensor_value(src), int_value(TSR_SCATTER_ADD)};
  std::vector<tsr_tensor_desc> outs = {self.desc()};
  ASSERT_EQ(
      code_of(call_entry(scatter_entry(TSR_SCATTER_ADD, TSR_FLOAT32), "_scatter_", args, outs)),
      TSR_OK);
  std::vector<float> got(want.size());
  std::memcpy(got.data(), self.address({0, 0}), got.size() * sizeof(float));
  EXPECT_EQ(got, want);
}

TEST(ScatterKernel, BadCodeAndOutOfRange) {
  host_tensor self(TSR_INT64, {2});
  host_tensor index(TSR_INT64, {1});
  fill(index, {2});
  host_tensor src(TSR_INT64, {1});
  std::vector<tsr_value> args = {tensor_value(self), int_value(0), tensor_value(index),
                                 tensor_value(src), int_value(TSR_SCATTER_ADD)};
  std::vector<tsr_tensor_desc> outs = {self.desc()};
  const tsr_kernel_entry& add = scatter_entry(TSR_SCATTER_ADD, TSR_INT64);
  status_ptr st = call_entry(add, "_scatter_", args, outs);
  EXPECT_EQ(code_of(st), TSR_OUT_OF_RANGE);
  EXPECT_NE(message_of(st).find("index 2 is out of bounds for dimension 0 with size 2"),
            std::string::npos);
  args[4] = int_value(99);
  EXPECT_EQ(code_of(call_entry(add, "_scatter_", args, outs)), TSR_INVALID_ARGUMENT);
}

// ---- nonzero (two-phase) -----------------------------------------------------

TEST(NonzeroKernel, SizeThenFill) {
  const tsr_kernel_entry& e = plugin().kernel("nonzero");
  ASSERT_TRUE(e.flags & TSR_KERNEL_TWO_PHASE);
  ASSERT_NE(e.size_fn, nullptr);
  host_tensor self = host_tensor::permuted(TSR_FLOAT32, {2, 3}, {1, 0});  // column-major
  fill(self, {0, 1, 0, 2, 0, 3});
  std::vector<tsr_value> args = {tensor_value(self)};
  tsr_tensor_desc out_desc{};
  out_desc.dtype = TSR_INT64;
  tsr_kernel_call call{};
  call.struct_size = sizeof call;
  call.op_name = "nonzero";
  call.nargs = 1;
  call.nouts = 1;
  call.args = args.data();
  call.outs = &out_desc;
  int32_t ndims[1] = {-1};
  int64_t sizes[TSR_MAX_DIMS] = {};
  ASSERT_EQ(code_of(status_ptr(e.size_fn(plugin().context(), &call, ndims, sizes))), TSR_OK);
  EXPECT_EQ(ndims[0], 2);
  EXPECT_EQ(sizes[0], 3);
  EXPECT_EQ(sizes[1], 2);
  host_tensor out(TSR_INT64, {3, 2});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(code_of(plugin().call("nonzero", args, outs)), TSR_OK);
  EXPECT_EQ(values_of(out), (std::vector<long double>{0, 1, 1, 0, 1, 2}));
  // An output whose row count disagrees with the data is refused, not overrun.
  host_tensor short_out(TSR_INT64, {2, 2});
  outs = {short_out.desc()};
  EXPECT_EQ(code_of(plugin().call("nonzero", args, outs)), TSR_FAILED_PRECONDITION);
}

// ---- sort, searchsorted ------------------------------------------------------

TEST(SortKernel, StableOverNegativeStrides) {
  host_tensor self(TSR_INT32, {5}, {-1});
  fill(self, {2, 1, 2, 0, 1});
  host_tensor values(TSR_INT32, {5});
  host_tensor indices(TSR_INT64, {5});
  std::vector<tsr_value> args = {tensor_value(self), none_value(), int_value(0), bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {values.desc(), indices.desc()};
  ASSERT_EQ(code_of(plugin().call("sort.stable", args, outs)), TSR_OK);
  EXPECT_EQ(values_of(values), (std::vector<long double>{0, 1, 1, 2, 2}));
  EXPECT_EQ(values_of(indices), (std::vector<long double>{3, 1, 4, 0, 2}));
}

TEST(SearchsortedKernel, BinarySearchAndResolvedArguments) {
  host_tensor seq(TSR_FLOAT64, {4});
  fill(seq, {1, 2, 2, 4});
  host_tensor self(TSR_FLOAT64, {2, 3});
  fill(self, {0, 2, 3, 4, 5, 2});
  host_tensor out(TSR_INT32, {2, 3});
  std::vector<tsr_value> args = {tensor_value(seq), tensor_value(self), bool_value(true),
                                 bool_value(true),  none_value(),       none_value()};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(code_of(plugin().call("searchsorted.Tensor", args, outs)), TSR_OK);
  EXPECT_EQ(values_of(out), (std::vector<long double>{0, 3, 3, 4, 4, 3}));
  args[5] = tensor_value(seq);  // a sorter must be applied by the host
  EXPECT_EQ(code_of(plugin().call("searchsorted.Tensor", args, outs)), TSR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace cpu_test
