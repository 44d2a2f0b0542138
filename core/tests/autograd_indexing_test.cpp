// autograd_indexing_test - gradients of the ops that write or read at
// indices (index_put, index_put_, embedding, nn::Embedding) against PyTorch
// 2.15's (values from torch.ops.aten.<op> with the same arguments and
// upstream gradient; the cases repeat indices and hit padding_idx, where
// finite differences cannot see PyTorch's conventions).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend_test_support.h"
#include "tessera/autograd.hpp"
#include "tessera/nn/embedding.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::value;

Tensor f64(const std::vector<double>& values, tessera::IntList shape, bool requires_grad = false) {
  Tensor t = tessera::tensor(values, shape, tessera::TensorOptions().dtype(Dtype::Float64));
  if (requires_grad) t.requires_grad_();
  return t;
}
Tensor i64(const std::vector<int64_t>& values, tessera::IntList shape) {
  return tessera::tensor(values, shape);
}
std::vector<double> grad_of(const Tensor& t) { return t.grad().to_vector<double>(); }

struct IndexPutCase {
  std::vector<int64_t> index;
  bool accumulate;
  std::vector<double> grad_self, grad_values;
};

TEST(IndexPutGrad, SelfAndValuesMatchPyTorchWithAndWithoutAccumulate) {
  // self = zeros(5), values = [10, 20, 30][:len(index)], upstream g = 1..5.
  const IndexPutCase cases[] = {
      {{0, 3}, true, {1, 2, 3, 4, 5}, {1, 4}},
      {{1, 1, 3}, true, {1, 2, 3, 4, 5}, {2, 2, 4}},
      // Without accumulate the written positions of self get nothing; a
      // repeated index gives each of its values the gradient there.
      {{0, 3}, false, {0, 2, 3, 0, 5}, {1, 4}},
      {{1, 1, 3}, false, {1, 0, 3, 0, 5}, {2, 2, 4}},
  };
  for (const IndexPutCase& k : cases) {
    SCOPED_TRACE(std::string("accumulate=") + (k.accumulate ? "true" : "false") + ", " +
                 std::to_string(k.index.size()) + " indices");
    Tensor self = f64({0, 0, 0, 0, 0}, {5}, true);
    const int64_t n = static_cast<int64_t>(k.index.size());
    std::vector<double> v = {10, 20, 30};
    v.resize(k.index.size());
    Tensor values = f64(v, {n}, true);
    Tensor r = tessera::index_put(self, {i64(k.index, {n})}, values, k.accumulate);
    r.backward(f64({1, 2, 3, 4, 5}, {5}));
    EXPECT_EQ(grad_of(self), k.grad_self);
    EXPECT_EQ(grad_of(values), k.grad_values);
  }
}

TEST(IndexPutGrad, PyTorchExampleZeroesWrittenPositionsOfSelf) {
  Tensor self = f64({0, 0, 0, 0, 0}, {5}, true);
  Tensor values = f64({1, 1}, {2}, true);
  Tensor r = tessera::index_put(self, {i64({0, 3}, {2})}, values, false);
  r.backward(tessera::ones_like(r));
  EXPECT_EQ(grad_of(self), (std::vector<double>{0, 1, 1, 0, 1}));
  EXPECT_EQ(grad_of(values), (std::vector<double>{1, 1}));
}

TEST(IndexPutGrad, BroadcastValueSumsOverRepeatedPairs) {
  // Two index tensors, the pair (0, 1) twice, a 0-d value broadcast to all.
  Tensor self = f64(std::vector<double>(12, 0.0), {3, 4}, true);
  Tensor value0d = f64({7}, {}, true);
  Tensor r = tessera::index_put(self, {i64({0, 2, 0}, {3}), i64({1, 3, 1}, {3})}, value0d, false);
  std::vector<double> g(12);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(i + 1);
  r.backward(f64(g, {3, 4}));
  EXPECT_EQ(grad_of(self), (std::vector<double>{1, 0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0}));
  EXPECT_EQ(grad_of(value0d), (std::vector<double>{16}));
}

TEST(IndexPutGrad, InPlaceOnANonLeafIsDifferentiable) {
  Tensor x = f64({0, 0, 0, 0, 0}, {5}, true);
  Tensor values = f64({1, 2}, {2}, true);
  Tensor y = x.clone();
  tessera::index_put_(y, {i64({0, 3}, {2})}, values);
  y.backward(f64({1, 2, 3, 4, 5}, {5}));
  EXPECT_EQ(grad_of(x), (std::vector<double>{0, 2, 3, 0, 5}));
  EXPECT_EQ(grad_of(values), (std::vector<double>{1, 4}));
}

TEST(IndexPutGrad, InPlaceIntoAViewOfANonLeafIsDifferentiable) {
  // y = x.clone(); y[1].index_put_([0, 2], v): row 1's written positions get
  // nothing, the rest of x passes g, v gets g at row 1, columns 0 and 2.
  Tensor x = f64(std::vector<double>(6, 0.0), {2, 3}, true);
  Tensor values = f64({1, 2}, {2}, true);
  Tensor y = x.clone();
  Tensor row = y.select(0, 1);
  tessera::index_put_(row, {i64({0, 2}, {2})}, values);
  y.backward(f64({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(grad_of(x), (std::vector<double>{1, 2, 3, 0, 5, 0}));
  EXPECT_EQ(grad_of(values), (std::vector<double>{4, 6}));
}

TEST(IndexPutGrad, BoolMaskSelectsTheWrittenPositions) {
  Tensor self = f64({1, 2, 3, 4}, {2, 2}, true);
  Tensor values = f64({5, 6}, {2}, true);
  Tensor mask = tessera::tensor({true, false, false, true}, {2, 2});
  Tensor r = tessera::index_put(self, {mask}, values, false);
  r.backward(f64({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(grad_of(self), (std::vector<double>{0, 2, 3, 0}));
  EXPECT_EQ(grad_of(values), (std::vector<double>{1, 4}));
}

TEST(EmbeddingGrad, PaddingRowGetsNoGradient) {
  std::vector<double> w(12), g(12);
  for (size_t i = 0; i < 12; ++i) {
    w[i] = static_cast<double>(i);
    g[i] = static_cast<double>(i + 1);
  }
  Tensor weight = f64(w, {4, 3}, true);
  Tensor e = tessera::embedding(weight, i64({0, 2, 2, 1}, {2, 2}), /*padding_idx=*/2);
  e.backward(f64(g, {2, 2, 3}));
  EXPECT_EQ(grad_of(weight), (std::vector<double>{1, 2, 3, 10, 11, 12, 0, 0, 0, 0, 0, 0}));
}

TEST(EmbeddingGrad, NegativePaddingIdxMatchesNoIndex) {
  // At the op level (torch.ops.aten.embedding) a negative padding_idx is no
  // row; only torch.nn.functional wraps it.
  Tensor weight = f64(std::vector<double>(12, 0.5), {4, 3}, true);
  Tensor e = tessera::embedding(weight, i64({1, 1, 3, 0}, {4}), /*padding_idx=*/-2);
  e.backward(tessera::ones_like(e));
  EXPECT_EQ(grad_of(weight), (std::vector<double>{1, 1, 1, 2, 2, 2, 0, 0, 0, 1, 1, 1}));
}

TEST(EmbeddingGrad, ScaleGradByFreqDividesByTheCountOfEachIndex) {
  std::vector<double> g(12);
  for (size_t i = 0; i < 12; ++i) g[i] = static_cast<double>(i + 1);
  for (int64_t padding : {int64_t{-1}, int64_t{1}}) {
    SCOPED_TRACE("padding_idx " + std::to_string(padding));
    Tensor weight = f64(std::vector<double>(12, 0.5), {4, 3}, true);
    Tensor e = tessera::call_op("embedding", {value(weight), value(i64({1, 1, 3, 0}, {4})),
                                              value(padding), value(true), value(false)});
    e.backward(f64(g, {4, 3}));
    const std::vector<double> row1 =
        padding == 1 ? std::vector<double>{0, 0, 0} : std::vector<double>{2.5, 3.5, 4.5};
    std::vector<double> expected = {10, 11, 12};
    expected.insert(expected.end(), row1.begin(), row1.end());
    expected.insert(expected.end(), {0, 0, 0, 7, 8, 9});
    EXPECT_EQ(grad_of(weight), expected);
  }
}

TEST(EmbeddingGrad, ModuleWithPaddingIdxLeavesThatRowAlone) {
  tessera::nn::Embedding emb(5, 3, /*padding_idx=*/1,
                             tessera::TensorOptions().dtype(Dtype::Float64));
  Tensor out = emb(i64({4, 1, 4, 1, 0}, {5}));
  out.sum().backward();
  const std::vector<double> g = grad_of(emb.weight);
  const std::vector<double> expected = {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2};
  EXPECT_EQ(g, expected);
}

}  // namespace
