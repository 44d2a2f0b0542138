// The optional `dim` of var, std_dev, var_mean, std_mean, nansum and
// linalg_vector_norm (OptionalDims, tessera/dims.hpp) in every spelling a
// caller may write: each must reduce over exactly the dims written. The
// spellings `1`, `{1}` and an int variable once left a view of a temporary
// that died before the op ran (Note [Why not std::optional<IntList>]);
// AddressSanitizer reports that as stack-use-after-scope, which is why CI's
// ASan stage also runs this file built with -O2 (frontend_optional_dims_o2_test).
//
// References are float64 loops over the 2x3 input written here; float64
// results compare within 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<double> kValues = {1, 2, 4, 3, 5, 11};
const std::vector<double> kWithNaN = {1, kNaN, 4, 3, 5, kNaN};

enum class Over { Rows, Columns, Every };  // dim 0, dim 1 (or -1), every dim

// reduce(values of one output element) for a 2x3 input.
template <class F>
std::vector<double> reference(const std::vector<double>& x, Over over, F reduce) {
  std::vector<std::vector<double>> groups;
  if (over == Over::Columns) {
    for (int r = 0; r < 2; ++r) groups.push_back({x[r * 3], x[r * 3 + 1], x[r * 3 + 2]});
  } else if (over == Over::Rows) {
    for (int c = 0; c < 3; ++c) groups.push_back({x[c], x[3 + c]});
  } else {
    groups.push_back(x);
  }
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(reduce(g));
  return out;
}

double mean_of(const std::vector<double>& g) {
  double s = 0;
  for (double v : g) s += v;
  return s / static_cast<double>(g.size());
}
double var_of(const std::vector<double>& g) {  // correction 1
  const double m = mean_of(g);
  double s = 0;
  for (double v : g) s += (v - m) * (v - m);
  return s / static_cast<double>(g.size() - 1);
}
double nansum_of(const std::vector<double>& g) {
  double s = 0;
  for (double v : g) s += std::isnan(v) ? 0.0 : v;
  return s;
}
double norm_of(const std::vector<double>& g) {
  double s = 0;
  for (double v : g) s += v * v;
  return std::sqrt(s);
}

void expect_values(const Tensor& t, const std::vector<double>& want, const char* what) {
  const std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << what << " at " << i;
}

// The six ops' results for one spelling of the dims.
struct Results {
  Tensor var, std_dev;
  std::pair<Tensor, Tensor> var_mean, std_mean;
  Tensor nansum, norm;
};

void expect_reduced(const Results& r, Over over) {
  const auto sqrt_var = [](const std::vector<double>& g) { return std::sqrt(var_of(g)); };
  expect_values(r.var, reference(kValues, over, var_of), "var");
  expect_values(r.std_dev, reference(kValues, over, sqrt_var), "std_dev");
  expect_values(r.var_mean.first, reference(kValues, over, var_of), "var_mean (var)");
  expect_values(r.var_mean.second, reference(kValues, over, mean_of), "var_mean (mean)");
  expect_values(r.std_mean.first, reference(kValues, over, sqrt_var), "std_mean (std)");
  expect_values(r.std_mean.second, reference(kValues, over, mean_of), "std_mean (mean)");
  expect_values(r.nansum, reference(kWithNaN, over, nansum_of), "nansum");
  expect_values(r.norm, reference(kValues, over, norm_of), "linalg_vector_norm");
}

class OptionalDimsSpelling : public ::testing::Test {
 protected:
  const Tensor x = tessera::tensor(kValues, {2, 3}, tessera::kFloat64);
  const Tensor xn = tessera::tensor(kWithNaN, {2, 3}, tessera::kFloat64);
};

TEST_F(OptionalDimsSpelling, BracedOneDim) {
  expect_reduced(
      {tessera::var(x, {1}), tessera::std_dev(x, {1}), tessera::var_mean(x, {1}),
       tessera::std_mean(x, {1}), tessera::nansum(xn, {1}), tessera::linalg_vector_norm(x, 2, {1})},
      Over::Columns);
  expect_reduced(
      {tessera::var(x, {0}), tessera::std_dev(x, {0}), tessera::var_mean(x, {0}),
       tessera::std_mean(x, {0}), tessera::nansum(xn, {0}), tessera::linalg_vector_norm(x, 2, {0})},
      Over::Rows);
}

TEST_F(OptionalDimsSpelling, IntegerLiteral) {
  expect_reduced(
      {tessera::var(x, 1), tessera::std_dev(x, 1), tessera::var_mean(x, 1), tessera::std_mean(x, 1),
       tessera::nansum(xn, 1), tessera::linalg_vector_norm(x, 2, 1)},
      Over::Columns);
  expect_reduced(
      {tessera::var(x, -1), tessera::std_dev(x, -1), tessera::var_mean(x, -1),
       tessera::std_mean(x, -1), tessera::nansum(xn, -1), tessera::linalg_vector_norm(x, 2, -1)},
      Over::Columns);
  expect_reduced({tessera::var(x, int64_t{0}), tessera::std_dev(x, int64_t{0}),
                  tessera::var_mean(x, int64_t{0}), tessera::std_mean(x, int64_t{0}),
                  tessera::nansum(xn, int64_t{0}), tessera::linalg_vector_norm(x, 2, int64_t{0})},
                 Over::Rows);
}

TEST_F(OptionalDimsSpelling, IntegerVariables) {
  const int dim = 1;
  expect_reduced(
      {tessera::var(x, dim), tessera::std_dev(x, dim), tessera::var_mean(x, dim),
       tessera::std_mean(x, dim), tessera::nansum(xn, dim), tessera::linalg_vector_norm(x, 2, dim)},
      Over::Columns);
  const int64_t dim64 = 0;
  expect_reduced({tessera::var(x, dim64), tessera::std_dev(x, dim64), tessera::var_mean(x, dim64),
                  tessera::std_mean(x, dim64), tessera::nansum(xn, dim64),
                  tessera::linalg_vector_norm(x, 2, dim64)},
                 Over::Rows);
  const size_t unsigned_dim = 1;
  expect_reduced(
      {tessera::var(x, unsigned_dim), tessera::std_dev(x, unsigned_dim),
       tessera::var_mean(x, unsigned_dim), tessera::std_mean(x, unsigned_dim),
       tessera::nansum(xn, unsigned_dim), tessera::linalg_vector_norm(x, 2, unsigned_dim)},
      Over::Columns);
}

TEST_F(OptionalDimsSpelling, BracedSeveralDims) {
  expect_reduced({tessera::var(x, {0, 1}), tessera::std_dev(x, {0, 1}),
                  tessera::var_mean(x, {0, 1}), tessera::std_mean(x, {0, 1}),
                  tessera::nansum(xn, {0, 1}), tessera::linalg_vector_norm(x, 2, {0, 1})},
                 Over::Every);
  expect_reduced({tessera::var(x, {-1, 0}), tessera::std_dev(x, {-1, 0}),
                  tessera::var_mean(x, {-1, 0}), tessera::std_mean(x, {-1, 0}),
                  tessera::nansum(xn, {-1, 0}), tessera::linalg_vector_norm(x, 2, {-1, 0})},
                 Over::Every);
}

TEST_F(OptionalDimsSpelling, ContainersAndViews) {
  using V = std::vector<int64_t>;
  expect_reduced({tessera::var(x, V{1}), tessera::std_dev(x, V{1}), tessera::var_mean(x, V{1}),
                  tessera::std_mean(x, V{1}), tessera::nansum(xn, V{1}),
                  tessera::linalg_vector_norm(x, 2, V{1})},
                 Over::Columns);
  const V rows = {0};
  const tessera::IntList view = rows;
  expect_reduced({tessera::var(x, view), tessera::std_dev(x, view), tessera::var_mean(x, view),
                  tessera::std_mean(x, view), tessera::nansum(xn, view),
                  tessera::linalg_vector_norm(x, 2, view)},
                 Over::Rows);
  const tessera::Dims dims{1};
  expect_reduced({tessera::var(x, dims), tessera::std_dev(x, dims), tessera::var_mean(x, dims),
                  tessera::std_mean(x, dims), tessera::nansum(xn, dims),
                  tessera::linalg_vector_norm(x, 2, dims)},
                 Over::Columns);
  const std::optional<tessera::IntList> optional = view;
  expect_reduced({tessera::var(x, optional), tessera::std_dev(x, optional),
                  tessera::var_mean(x, optional), tessera::std_mean(x, optional),
                  tessera::nansum(xn, optional), tessera::linalg_vector_norm(x, 2, optional)},
                 Over::Rows);
  // An OptionalDims made once and passed to every op.
  const tessera::OptionalDims made = 1;
  expect_reduced({tessera::var(x, made), tessera::std_dev(x, made), tessera::var_mean(x, made),
                  tessera::std_mean(x, made), tessera::nansum(xn, made),
                  tessera::linalg_vector_norm(x, 2, made)},
                 Over::Columns);
}

TEST_F(OptionalDimsSpelling, NoDimsMeansEveryDim) {
  expect_reduced({tessera::var(x), tessera::std_dev(x), tessera::var_mean(x), tessera::std_mean(x),
                  tessera::nansum(xn), tessera::linalg_vector_norm(x)},
                 Over::Every);
  expect_reduced(
      {tessera::var(x, std::nullopt), tessera::std_dev(x, std::nullopt),
       tessera::var_mean(x, std::nullopt), tessera::std_mean(x, std::nullopt),
       tessera::nansum(xn, std::nullopt), tessera::linalg_vector_norm(x, 2, std::nullopt)},
      Over::Every);
  expect_reduced(
      {tessera::var(x, {}), tessera::std_dev(x, {}), tessera::var_mean(x, {}),
       tessera::std_mean(x, {}), tessera::nansum(xn, {}), tessera::linalg_vector_norm(x, 2, {})},
      Over::Every);
  const std::optional<tessera::IntList> none;
  expect_reduced({tessera::var(x, none), tessera::std_dev(x, none), tessera::var_mean(x, none),
                  tessera::std_mean(x, none), tessera::nansum(xn, none),
                  tessera::linalg_vector_norm(x, 2, none)},
                 Over::Every);
}

// The arguments after the dims still bind: correction, keepdim, dtype.
TEST_F(OptionalDimsSpelling, LaterArgumentsKeepTheirMeaning) {
  const Tensor v = tessera::var(x, 1, 0, true);
  EXPECT_EQ(v.sizes(), (std::vector<int64_t>{2, 1}));
  std::vector<double> biased = reference(kValues, Over::Columns, var_of);
  for (double& b : biased) b *= 2.0 / 3.0;  // correction 0: n - 1 = 2 -> n = 3
  expect_values(v, biased, "var correction 0 keepdim");
  const Tensor n = tessera::nansum(xn, {1}, true, tessera::kFloat32);
  EXPECT_EQ(n.dtype(), tessera::kFloat32);
  EXPECT_EQ(n.sizes(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(n.to_vector<double>(), reference(kWithNaN, Over::Columns, nansum_of));
}

}  // namespace
