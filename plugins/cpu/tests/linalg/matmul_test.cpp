// matmul_test.cpp - mm and bmm for every non-bool dtype, with row-major,
// transposed (column-major), strided, flipped and batch-broadcast operands,
// against a long double reference. Floating tolerance: the classic dot-product
// bound k * u_acc * sum|a_ik b_kj| plus the output's rounding u_out * |ref|
// (u_acc = 2^-24 for float16/bfloat16/float32, which accumulate in float32;
// 2^-53 for float64). Integers must match exactly, wrapping modulo 2^bits.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <random>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

using cld = std::complex<long double>;

ref_value random_entry(tsr_dtype d, std::mt19937_64& rng) {
  ref_value v;
  if (is_integer(d)) {
    v.re = static_cast<long double>(static_cast<int64_t>(rng()));
  } else {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    v.re = u(rng);
    v.im = is_complex(d) ? u(rng) : 0;
  }
  unsigned char bytes[16];
  encode(d, bytes, v);
  return decode(d, bytes);
}

long double accumulate_roundoff(tsr_dtype d) {
  return (d == TSR_FLOAT64 || d == TSR_COMPLEX128) ? std::ldexp(1.0L, -53) : std::ldexp(1.0L, -24);
}

// Checks out[b] == a[b] · m[b] for 3-d (batch, rows, cols) views; `index`
// maps (batch, row, col) to a tensor index (dropping batch for mm).
void expect_matmul(const host_tensor& a, const host_tensor& m, const host_tensor& out,
                   int64_t batches, int64_t n, int64_t k, int64_t cols, bool batched) {
  const tsr_dtype d = out.dtype();
  auto at = [&](int64_t b, int64_t r, int64_t c) {
    return batched ? std::vector<int64_t>{b, r, c} : std::vector<int64_t>{r, c};
  };
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        ref_value expected;
        long double abs_sum = 0;
        if (is_integer(d)) {
          uint64_t acc = 0;
          for (int64_t kk = 0; kk < k; ++kk) {
            acc += static_cast<uint64_t>(static_cast<int64_t>(a.get(at(b, i, kk)).re)) *
                   static_cast<uint64_t>(static_cast<int64_t>(m.get(at(b, kk, j)).re));
          }
          expected = ref_convert(ref_value{static_cast<long double>(static_cast<int64_t>(acc)), 0},
                                 TSR_INT64, d);
        } else {
          cld acc = 0;
          for (int64_t kk = 0; kk < k; ++kk) {
            const ref_value x = a.get(at(b, i, kk)), y = m.get(at(b, kk, j));
            acc += cld(x.re, x.im) * cld(y.re, y.im);
            abs_sum += std::hypot(x.re, x.im) * std::hypot(y.re, y.im);
          }
          expected = ref_value{acc.real(), acc.imag()};
        }
        const ref_value got = out.get(at(b, i, j));
        const long double tol =
            is_integer(d) ? 0
                          : (k + 2) * accumulate_roundoff(d) * abs_sum * (is_complex(d) ? 2 : 1) +
                                unit_roundoff(d) * std::hypot(expected.re, expected.im);
        ASSERT_TRUE(near_value(got, expected, tol))
            << name_of(d) << " [" << b << "," << i << "," << j << "] got " << to_string(got)
            << " expected " << to_string(expected) << " tol " << static_cast<double>(tol);
      }
    }
  }
}

void fill_random(host_tensor& t, std::mt19937_64& rng) {
  for_each_index(t.sizes(), [&](const auto& i) { t.set(i, random_entry(t.dtype(), rng)); });
}

struct operand_layout {
  const char* name;
  // Builds a (rows, cols) matrix, or (batch, rows, cols) when batch > 0.
  std::function<host_tensor(tsr_dtype, int64_t batch, int64_t rows, int64_t cols)> make;
};

std::vector<operand_layout> operand_layouts() {
  return {
      {"row_major",
       [](tsr_dtype d, int64_t batch, int64_t r, int64_t c) {
         return batch ? host_tensor(d, {batch, r, c}) : host_tensor(d, {r, c});
       }},
      {"transposed",
       [](tsr_dtype d, int64_t batch, int64_t r, int64_t c) {
         return batch ? host_tensor::permuted(d, {batch, r, c}, {0, 2, 1})
                      : host_tensor::permuted(d, {r, c}, {1, 0});
       }},
      {"padded_rows",
       [](tsr_dtype d, int64_t batch, int64_t r, int64_t c) {
         return batch ? host_tensor(d, {batch, r, c}, {r * (c + 3), c + 3, 1})
                      : host_tensor(d, {r, c}, {c + 3, 1});
       }},
      {"strided_both",
       [](tsr_dtype d, int64_t batch, int64_t r, int64_t c) {
         return batch ? host_tensor(d, {batch, r, c}, {2 * r * c + 1, 2, 2 * r})
                      : host_tensor(d, {r, c}, {2, 2 * r});
       }},
      {"flipped_rows",
       [](tsr_dtype d, int64_t batch, int64_t r, int64_t c) {
         return batch ? host_tensor(d, {batch, r, c}, {r * c, -c, 1})
                      : host_tensor(d, {r, c}, {-c, 1});
       }},
  };
}

class Matmul : public ::testing::TestWithParam<tsr_dtype> {};

TEST_P(Matmul, MmMatchesReferenceForEveryOperandLayout) {
  const tsr_dtype d = GetParam();
  std::mt19937_64 rng(7 + d);
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 4}, {17, 33, 9}, {5, 9, 20}, {9, 70, 130}};
  for (const auto& shape : shapes) {
    const int64_t n = shape[0], k = shape[1], m = shape[2];
    for (const auto& la : operand_layouts()) {
      for (const auto& lb : operand_layouts()) {
        SCOPED_TRACE(std::string(la.name) + " x " + lb.name + " n=" + std::to_string(n) +
                     " k=" + std::to_string(k) + " m=" + std::to_string(m));
        host_tensor a = la.make(d, 0, n, k), b = lb.make(d, 0, k, m);
        fill_random(a, rng);
        fill_random(b, rng);
        host_tensor out(d, {n, m});
        std::vector<tsr_tensor_desc> outs = {out.desc()};
        const status_ptr s =
            test_plugin::get().call("mm", {tensor_value(a), tensor_value(b)}, outs);
        ASSERT_EQ(s, nullptr) << message_of(s);
        expect_matmul(a, b, out, 1, n, k, m, false);
      }
    }
  }
}

TEST_P(Matmul, MmWritesTransposedOutputs) {
  const tsr_dtype d = GetParam();
  std::mt19937_64 rng(11 + d);
  host_tensor a(d, {7, 6}), b(d, {6, 5});
  fill_random(a, rng);
  fill_random(b, rng);
  host_tensor out = host_tensor::permuted(d, {7, 5}, {1, 0});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(test_plugin::get().call("mm", {tensor_value(a), tensor_value(b)}, outs), nullptr);
  expect_matmul(a, b, out, 1, 7, 6, 5, false);
}

TEST_P(Matmul, BmmMatchesReferenceIncludingBroadcastBatches) {
  const tsr_dtype d = GetParam();
  std::mt19937_64 rng(13 + d);
  const int64_t batches = 3, n = 6, k = 11, m = 7;
  for (const auto& la : operand_layouts()) {
    for (const auto& lb : operand_layouts()) {
      SCOPED_TRACE(std::string(la.name) + " x " + lb.name);
      host_tensor a = la.make(d, batches, n, k), b = lb.make(d, batches, k, m);
      fill_random(a, rng);
      fill_random(b, rng);
      host_tensor out(d, {batches, n, m});
      std::vector<tsr_tensor_desc> outs = {out.desc()};
      ASSERT_EQ(test_plugin::get().call("bmm", {tensor_value(a), tensor_value(b)}, outs), nullptr);
      expect_matmul(a, b, out, batches, n, k, m, true);
    }
  }
  // One matrix shared by every batch (stride 0).
  host_tensor a(d, {batches, n, k});
  host_tensor b(d, {batches, k, m}, {0, m, 1});
  fill_random(a, rng);
  fill_random(b, rng);
  host_tensor out(d, {batches, n, m});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(test_plugin::get().call("bmm", {tensor_value(a), tensor_value(b)}, outs), nullptr);
  expect_matmul(a, b, out, batches, n, k, m, true);
}

TEST_P(Matmul, ZeroSizedInnerDimensionGivesZeros) {
  const tsr_dtype d = GetParam();
  host_tensor a(d, {4, 0}), b(d, {0, 3});
  a.desc().data = nullptr;
  b.desc().data = nullptr;
  host_tensor out(d, {4, 3});
  for_each_index(out.sizes(), [&](const auto& i) { out.set(i, ref_value{5, 5}); });
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(test_plugin::get().call("mm", {tensor_value(a), tensor_value(b)}, outs), nullptr);
  for_each_index(out.sizes(), [&](const auto& i) {
    EXPECT_TRUE(same_value(out.get(i), ref_value{0, 0})) << to_string(out.get(i));
  });
  host_tensor none(d, {0, 3});
  std::vector<tsr_tensor_desc> none_outs = {none.desc()};
  host_tensor a0(d, {0, 2}), b0(d, {2, 3});
  EXPECT_EQ(test_plugin::get().call("mm", {tensor_value(a0), tensor_value(b0)}, none_outs),
            nullptr);
}

std::vector<tsr_dtype> matmul_dtypes() {
  std::vector<tsr_dtype> out;
  for (tsr_dtype d : all_dtypes()) {
    if (d != TSR_BOOL) out.push_back(d);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Matmul, ::testing::ValuesIn(matmul_dtypes()),
                         [](const auto& info) { return std::string(name_of(info.param)); });

TEST(MatmulFloat32, LargeTransposedProductsThroughOneDnnAreAccurateAndRepeatable) {
  std::mt19937_64 rng(5);
  const int64_t n = 130, k = 257, m = 96;
  host_tensor a = host_tensor::permuted(TSR_FLOAT32, {n, k}, {1, 0});
  host_tensor b(TSR_FLOAT32, {k, m});
  fill_random(a, rng);
  fill_random(b, rng);
  host_tensor first(TSR_FLOAT32, {n, m}), second(TSR_FLOAT32, {n, m});
  for (host_tensor* out : {&first, &second}) {
    std::vector<tsr_tensor_desc> outs = {out->desc()};
    ASSERT_EQ(test_plugin::get().call("mm", {tensor_value(a), tensor_value(b)}, outs), nullptr);
  }
  expect_matmul(a, b, first, 1, n, k, m, false);
  for_each_index(first.sizes(),
                 [&](const auto& i) { ASSERT_TRUE(same_value(first.get(i), second.get(i))); });
}

TEST(MatmulFloat32, BatchedProductsThroughOneDnnForEveryOperandLayout) {
  // Large enough (> 8K multiply-adds) for the oneDNN path.
  std::mt19937_64 rng(21);
  const int64_t batches = 4, n = 24, k = 40, m = 36;
  for (const auto& la : operand_layouts()) {
    for (const auto& lb : operand_layouts()) {
      SCOPED_TRACE(std::string(la.name) + " x " + lb.name);
      host_tensor a = la.make(TSR_FLOAT32, batches, n, k), b = lb.make(TSR_FLOAT32, batches, k, m);
      fill_random(a, rng);
      fill_random(b, rng);
      host_tensor out(TSR_FLOAT32, {batches, n, m});
      std::vector<tsr_tensor_desc> outs = {out.desc()};
      ASSERT_EQ(test_plugin::get().call("bmm", {tensor_value(a), tensor_value(b)}, outs), nullptr);
      expect_matmul(a, b, out, batches, n, k, m, true);
    }
  }
  host_tensor a(TSR_FLOAT32, {batches, n, k});
  host_tensor shared(TSR_FLOAT32, {batches, k, m}, {0, m, 1});
  fill_random(a, rng);
  fill_random(shared, rng);
  host_tensor out = host_tensor::permuted(TSR_FLOAT32, {batches, n, m}, {0, 2, 1});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  ASSERT_EQ(test_plugin::get().call("bmm", {tensor_value(a), tensor_value(shared)}, outs), nullptr);
  expect_matmul(a, shared, out, batches, n, k, m, true);
}

// float16 and bfloat16 past 8K multiply-adds go through oneDNN's float32
// matmul, widened (matmul.cpp's matmul_reduced): float32 accumulation and one
// rounding to the dtype, for every operand layout, a broadcast batch and a
// transposed output; subnormal inputs count on every CPU (AVX512-BF16's and
// AMX's dot products would flush them).
TEST(MatmulReduced, HalfAndBfloat16ThroughOneDnnForEveryOperandLayout) {
  std::mt19937_64 rng(22);
  const int64_t batches = 3, n = 20, k = 44, m = 28;
  for (const tsr_dtype d : {TSR_FLOAT16, TSR_BFLOAT16}) {
    for (const auto& la : operand_layouts()) {
      for (const auto& lb : operand_layouts()) {
        SCOPED_TRACE(std::string(name_of(d)) + " " + la.name + " x " + lb.name);
        host_tensor a = la.make(d, batches, n, k), b = lb.make(d, batches, k, m);
        fill_random(a, rng);
        fill_random(b, rng);
        host_tensor out(d, {batches, n, m});
        std::vector<tsr_tensor_desc> outs = {out.desc()};
        ASSERT_EQ(test_plugin::get().call("bmm", {tensor_value(a), tensor_value(b)}, outs),
                  nullptr);
        expect_matmul(a, b, out, batches, n, k, m, true);
      }
    }
    host_tensor a(d, {batches, n, k});
    host_tensor shared(d, {batches, k, m}, {0, m, 1});
    fill_random(a, rng);
    fill_random(shared, rng);
    // bfloat16 has float32's exponent range: a column of subnormal inputs
    // times a row of 2e38 adds about 0.6 to every result (a flush would lose it)
    if (d == TSR_BFLOAT16) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < batches; ++b) a.set({b, i, 0}, ref_value{3e-39L, 0});
      for (int64_t j = 0; j < m; ++j) shared.set({0, 0, j}, ref_value{2e38L, 0});
    }
    host_tensor out = host_tensor::permuted(d, {batches, n, m}, {0, 2, 1});
    std::vector<tsr_tensor_desc> outs = {out.desc()};
    ASSERT_EQ(test_plugin::get().call("bmm", {tensor_value(a), tensor_value(shared)}, outs),
              nullptr);
    expect_matmul(a, shared, out, batches, n, k, m, true);
  }
}

TEST(MatmulBadCalls, MismatchedInnerDimensionsAreInvalid) {
  host_tensor a(TSR_FLOAT32, {2, 3}), b(TSR_FLOAT32, {4, 2}), out(TSR_FLOAT32, {2, 2});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  const status_ptr s = test_plugin::get().call("mm", {tensor_value(a), tensor_value(b)}, outs);
  EXPECT_EQ(code_of(s), TSR_INVALID_ARGUMENT);
  host_tensor bools(TSR_BOOL, {2, 2});
  std::vector<tsr_tensor_desc> bool_outs = {bools.desc()};
  EXPECT_EQ(
      code_of(test_plugin::get().call("mm", {tensor_value(bools), tensor_value(bools)}, bool_outs)),
      TSR_UNIMPLEMENTED);
}

}  // namespace
}  // namespace cpu_test
