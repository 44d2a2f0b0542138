// ops_out_variants_test.cpp - out= overloads derived from their functional op
// (TSR_OUT, Note [Derived out= overloads] in core/ops/out_variant.h): results
// against float64 references, PyTorch's out= rules (resize, castable dtype,
// exact dtype for indices, out aliasing an input), random overloads drawing in
// the out's dtype, and the count of such overloads in the registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/ops/random.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::none;
using tessera::detail::value;

Tensor make(const std::vector<double>& values, tessera::IntList shape, Dtype dtype) {
  return tessera::tensor(values, shape).to(dtype);
}

std::vector<int64_t> sizes_of(const Tensor& t) {
  const auto d = t.sizes();
  return std::vector<int64_t>(d.begin(), d.end());
}

// The status code of running `fn`, with its message in `message`.
template <class Fn>
tsr_status_code code_of(Fn&& fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const tessera::Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return TSR_OK;
}

const std::vector<double> kRows = {1.5, -2.0, 0.25,  4.0, 3.0, -1.0,
                                   2.5, 0.5,  -0.75, 6.0, 1.0, -3.5};

TEST(OutVariants, SumAndProdWriteIntoAResizedWiderOut) {
  Tensor x = make(kRows, {3, 4}, Dtype::Float32);
  Tensor out = tessera::zeros({5}, tessera::TensorOptions().dtype(Dtype::Float64));
  Tensor r = tessera::call_op("sum.out", {value(x), none(), value(out)});
  EXPECT_EQ(r.get(), out.get()) << "sum.out returns its out";
  EXPECT_TRUE(sizes_of(out).empty()) << "a [5] out is resized to the 0-d result";
  EXPECT_EQ(out.dtype(), Dtype::Float64);
  const double exact = std::accumulate(kRows.begin(), kRows.end(), 0.0);
  EXPECT_NEAR(out.item<double>(), exact, 1e-6);

  Tensor ints = make({2, -3, 4, 5}, {4}, Dtype::Int32);
  Tensor prod = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Int64));
  tessera::call_op("prod.out", {value(ints), none(), value(prod)});
  EXPECT_EQ(prod.item<int64_t>(), -120);
}

TEST(OutVariants, VarAndStdMatchTheFloat64Definition) {
  Tensor x = make(kRows, {3, 4}, Dtype::Float64);
  for (const bool unbiased : {true, false}) {
    Tensor var = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float64));
    Tensor sd = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float64));
    const int64_t dim = 1;
    tessera::call_op("var.out", {value(x), value(tessera::IntList(dim)), value(unbiased),
                                 value(true), value(var)});
    tessera::call_op("std.out", {value(x), value(tessera::IntList(dim)), value(unbiased),
                                 value(false), value(sd)});
    EXPECT_EQ(sizes_of(var), (std::vector<int64_t>{3, 1}));
    EXPECT_EQ(sizes_of(sd), (std::vector<int64_t>{3}));
    const std::vector<double> v = var.to_vector<double>(), s = sd.to_vector<double>();
    for (int r = 0; r < 3; ++r) {
      double mean = 0, ss = 0;
      for (int c = 0; c < 4; ++c) mean += kRows[r * 4 + c] / 4;
      for (int c = 0; c < 4; ++c) ss += (kRows[r * 4 + c] - mean) * (kRows[r * 4 + c] - mean);
      const double expected = ss / (unbiased ? 3 : 4);
      EXPECT_NEAR(v[r], expected, 1e-12) << r;
      EXPECT_NEAR(s[r], std::sqrt(expected), 1e-12) << r;
    }
  }
}

TEST(OutVariants, SortAndTopkFillValuesAndIndices) {
  Tensor x = make(kRows, {12}, Dtype::Float32);
  Tensor values = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float32));
  Tensor indices = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Int64));
  const std::vector<Tensor> r = tessera::call_op_all(
      "sort.values", {value(x), value(int64_t{0}), value(true), value(values), value(indices)});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].get(), values.get());
  EXPECT_EQ(r[1].get(), indices.get());
  std::vector<int64_t> order(12);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [](int64_t a, int64_t b) { return kRows[a] > kRows[b]; });
  EXPECT_EQ(indices.to_vector<int64_t>(), order);
  const std::vector<double> got = values.to_vector<double>();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], kRows[order[i]]) << i;

  Tensor top_v = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float64));
  Tensor top_i = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Int64));
  tessera::call_op_all("topk.values", {value(x), value(int64_t{3}), value(int64_t{-1}), value(true),
                                       value(true), value(top_v), value(top_i)});
  EXPECT_EQ(top_i.to_vector<int64_t>(), (std::vector<int64_t>{order[0], order[1], order[2]}));
  EXPECT_EQ(top_v.to_vector<double>(),
            (std::vector<double>{kRows[order[0]], kRows[order[1]], kRows[order[2]]}));
}

TEST(OutVariants, PyTorchsDtypeRulesAreEnforced) {
  Tensor x = make(kRows, {12}, Dtype::Float32);
  std::string message;
  // A float result cannot go into an integer out.
  Tensor int_out = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Int64));
  EXPECT_EQ(code_of(
                [&] {
                  tessera::call_op("sum.out", {value(x), none(), value(int_out)});
                },
                &message),
            TSR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("sum.out"), std::string::npos) << message;
  EXPECT_NE(message.find("can't be cast"), std::string::npos) << message;
  // Indices need exactly int64.
  Tensor values = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float32));
  Tensor indices32 = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Int32));
  EXPECT_EQ(code_of(
                [&] {
                  tessera::call_op_all("sort.values", {value(x), value(int64_t{0}), value(false),
                                                       value(values), value(indices32)});
                },
                &message),
            TSR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("'indices'"), std::string::npos) << message;
  EXPECT_NE(message.find("int64"), std::string::npos) << message;
}

TEST(OutVariants, AnOutThatIsAlsoAnInputGetsTheResult) {
  Tensor x = make({1, 2, 3, 4}, {4}, Dtype::Float32);
  // add.Scalar_out(self, other, alpha, *, out) with out = self: x + 2 * 10.
  tessera::call_op("add.Scalar_out",
                   {value(x), value(tessera::Scalar(2.0)), value(tessera::Scalar(10.0)), value(x)});
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{21, 22, 23, 24}));
  // flip.out(self, dims, *, out) into itself reads every input before writing.
  const int64_t dim = 0;
  tessera::call_op("flip.out", {value(x), value(tessera::IntList(dim)), value(x)});
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{24, 23, 22, 21}));
}

TEST(OutVariants, FactoriesTakeDtypeAndDeviceFromTheOut) {
  Tensor ints = tessera::empty({7}, tessera::TensorOptions().dtype(Dtype::Int32));
  const int64_t size[2] = {2, 3};
  tessera::call_op("full.out",
                   {value(tessera::IntList(size, 2)), value(tessera::Scalar(7)), value(ints)});
  EXPECT_EQ(ints.dtype(), Dtype::Int32);
  EXPECT_EQ(sizes_of(ints), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ints.to_vector<int64_t>(), (std::vector<int64_t>(6, 7)));
  Tensor eye = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float64));
  tessera::call_op("eye.m_out", {value(int64_t{2}), value(int64_t{3}), value(eye)});
  EXPECT_EQ(eye.to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 1, 0}));

  // rand.generator_out into a float64 out draws float64 values: the same bits
  // as rand(dtype=float64) from the same generator state, not float32 ones
  // widened.
  tessera::Generator a(1234), b(1234);
  Tensor out = tessera::empty({0}, tessera::TensorOptions().dtype(Dtype::Float64));
  tessera::call_op("rand.generator_out", {value(tessera::IntList(size, 2)),
                                          tessera::detail::value(std::optional(a)), value(out)});
  Tensor direct = tessera::rand({2, 3}, b, tessera::TensorOptions().dtype(Dtype::Float64));
  EXPECT_EQ(out.to_vector<double>(), direct.to_vector<double>());
  bool any_beyond_float = false;
  for (double v : out.to_vector<double>()) {
    any_beyond_float |= static_cast<double>(static_cast<float>(v)) != v;
  }
  EXPECT_TRUE(any_beyond_float) << "float64 draws should not all be float32 values";
}

TEST(OutVariants, TheRegistryListsThemAsComposites) {
  // Every out= overload PyTorch 1.13 has for the ops of the CPU operator library
  // is registered; spot-check a few from each family.
  for (const char* name :
       {"sum.out", "prod.out", "var.out", "std.out", "sort.values", "topk.values", "rand.out",
        "zeros.out", "arange.start_out", "index.Tensor_out", "convolution.out",
        "native_layer_norm.out", "nll_loss.out", "tril.out", "stack.out", "_softmax.out"}) {
    const tsr_op* op = nullptr;
    tsr_status* s = tsr_op_find(tessera::default_runtime(), name, &op);
    EXPECT_EQ(s, nullptr) << name;
    if (s) tsr_status_free(s);
  }
}

}  // namespace
