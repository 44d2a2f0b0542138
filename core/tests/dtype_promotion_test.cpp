// dtype_promotion_test.cpp - Tessera's type promotion against PyTorch's, as data.
//
// data/promotion_golden.inc was generated once from PyTorch 1.13.1 by
// data/gen_promotion_golden.py (see its docstring for the row format). Two
// families of checks:
//  - tsr_dtype_promote over all 144 dtype pairs equals torch.promote_types,
//    and the laws it must obey (symmetry, identity of bool, idempotence).
//  - the result dtype of add.Tensor / add.Scalar / mul.Tensor / div.Tensor,
//    called through tsr_op_call on cpu:0, equals torch's for dimensioned
//    tensors, 0-d tensors and Python scalars (a Python scalar travels as a
//    TSR_VALUE_SCALAR to add.Scalar; a 0-d tensor as a 0-d tensor). The first
//    element of each result is checked too: promotion must also cast inputs
//    (int8 + 2.5 is 3.5, not 3).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/tessera.h"
#include "test_support.h"

namespace {

using tsr_test::Outcome;
using tsr_test::Take;

// ---------------------------------------------------------------------------
// The golden rows.
// ---------------------------------------------------------------------------

enum OperandKind { DIM, ZERO_DIM };
enum ScalarKind { BOOL, INT, FLOAT, COMPLEX };

struct PromoteRow {
  tsr_dtype a, b, result;
};
struct BinaryRow {
  const char* op;
  OperandKind lhs_kind;
  tsr_dtype lhs;
  OperandKind rhs_kind;
  tsr_dtype rhs;
  tsr_dtype result;
};
struct ScalarRow {
  const char* op;
  OperandKind lhs_kind;
  tsr_dtype lhs;
  ScalarKind scalar;
  tsr_dtype result;
};

#define TSR_GOLDEN_PROMOTE(a, b, result) {a, b, result},
#define TSR_GOLDEN_BINARY(op, lhs_kind, lhs, rhs_kind, rhs, result)
#define TSR_GOLDEN_SCALAR(op, lhs_kind, lhs, scalar, result)
constexpr PromoteRow kPromoteRows[] = {
#include "data/promotion_golden.inc"
};
#undef TSR_GOLDEN_PROMOTE
#undef TSR_GOLDEN_BINARY
#undef TSR_GOLDEN_SCALAR

#define TSR_GOLDEN_PROMOTE(a, b, result)
#define TSR_GOLDEN_BINARY(op, lhs_kind, lhs, rhs_kind, rhs, result) \
  {op, lhs_kind, lhs, rhs_kind, rhs, result},
#define TSR_GOLDEN_SCALAR(op, lhs_kind, lhs, scalar, result)
constexpr BinaryRow kBinaryRows[] = {
#include "data/promotion_golden.inc"
};
#undef TSR_GOLDEN_PROMOTE
#undef TSR_GOLDEN_BINARY
#undef TSR_GOLDEN_SCALAR

#define TSR_GOLDEN_PROMOTE(a, b, result)
#define TSR_GOLDEN_BINARY(op, lhs_kind, lhs, rhs_kind, rhs, result)
#define TSR_GOLDEN_SCALAR(op, lhs_kind, lhs, scalar, result) {op, lhs_kind, lhs, scalar, result},
constexpr ScalarRow kScalarRows[] = {
#include "data/promotion_golden.inc"
};
#undef TSR_GOLDEN_PROMOTE
#undef TSR_GOLDEN_BINARY
#undef TSR_GOLDEN_SCALAR

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

std::string Name(tsr_dtype dtype) { return tsr_dtype_name(dtype); }

const char* KindName(OperandKind kind) { return kind == DIM ? "tensor[3]" : "0-d tensor"; }

const char* ScalarName(ScalarKind kind) {
  switch (kind) {
    case BOOL:
      return "True";
    case INT:
      return "5";
    case FLOAT:
      return "2.5";
    case COMPLEX:
      return "(1+2j)";
  }
  return "?";
}

tsr_scalar MakeScalar(ScalarKind kind) {
  tsr_scalar scalar{};
  switch (kind) {
    case BOOL:
      scalar.kind = TSR_BOOL;
      scalar.v.i = 1;
      break;
    case INT:
      scalar.kind = TSR_INT64;
      scalar.v.i = 5;
      break;
    case FLOAT:
      scalar.kind = TSR_FLOAT64;
      scalar.v.f = 2.5;
      break;
    case COMPLEX:
      scalar.kind = TSR_COMPLEX128;
      scalar.v.c.re = 1.0;
      scalar.v.c.im = 2.0;
      break;
  }
  return scalar;
}

// The value 1 as one element of `dtype`, in its bytes.
std::vector<uint8_t> OneAs(tsr_dtype dtype) {
  std::vector<uint8_t> bytes(tsr_dtype_size(dtype), 0);
  auto put = [&bytes](const auto& value) { std::memcpy(bytes.data(), &value, sizeof value); };
  switch (dtype) {
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8:
      put(uint8_t{1});
      break;
    case TSR_INT16:
      put(int16_t{1});
      break;
    case TSR_INT32:
      put(int32_t{1});
      break;
    case TSR_INT64:
      put(int64_t{1});
      break;
    case TSR_FLOAT16:
      put(uint16_t{0x3C00});
      break;
    case TSR_BFLOAT16:
      put(uint16_t{0x3F80});
      break;
    case TSR_FLOAT32:
      put(1.0f);
      break;
    case TSR_FLOAT64:
      put(1.0);
      break;
    case TSR_COMPLEX64:
      put(std::complex<float>(1.0f, 0.0f));
      break;
    case TSR_COMPLEX128:
      put(std::complex<double>(1.0, 0.0));
      break;
    default:
      break;
  }
  return bytes;
}

double HalfToDouble(uint16_t bits) {
  const int sign = (bits >> 15) ? -1 : 1;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// The real part of the first element held in `bytes` as `dtype`.
double FirstAsDouble(tsr_dtype dtype, const std::vector<uint8_t>& bytes) {
  auto get = [&bytes](auto value) {
    std::memcpy(&value, bytes.data(), sizeof value);
    return value;
  };
  switch (dtype) {
    case TSR_BOOL:
    case TSR_UINT8:
      return get(uint8_t{});
    case TSR_INT8:
      return get(int8_t{});
    case TSR_INT16:
      return get(int16_t{});
    case TSR_INT32:
      return get(int32_t{});
    case TSR_INT64:
      return static_cast<double>(get(int64_t{}));
    case TSR_FLOAT16:
      return HalfToDouble(get(uint16_t{}));
    case TSR_BFLOAT16: {
      const uint32_t widened = uint32_t{get(uint16_t{})} << 16;
      float value;
      std::memcpy(&value, &widened, sizeof value);
      return value;
    }
    case TSR_FLOAT32:
      return get(float{});
    case TSR_FLOAT64:
      return get(double{});
    case TSR_COMPLEX64:
      return get(std::complex<float>{}).real();
    case TSR_COMPLEX128:
      return get(std::complex<double>{}).real();
    default:
      return std::nan("");
  }
}

struct TensorDeleter {
  void operator()(tsr_tensor* tensor) const { tsr_tensor_release(tensor); }
};
using TensorPtr = std::unique_ptr<tsr_tensor, TensorDeleter>;

// Mismatches are collected and the first few reported one by one, so that a
// broken rule shows as a readable list rather than hundreds of failures.
class Mismatches {
 public:
  explicit Mismatches(const char* what) : what_(what) {}
  ~Mismatches() {
    if (count_ > 0) {
      ADD_FAILURE() << count_ << " of " << checked_ << " " << what_ << " cases differ from PyTorch"
                    << (count_ > kShown ? " (first " + std::to_string(kShown) + " shown above)"
                                        : std::string());
    }
  }
  void Check(bool ok, const std::string& description) {
    ++checked_;
    if (ok) return;
    if (++count_ <= kShown) ADD_FAILURE() << description;
  }
  int checked() const { return checked_; }

 private:
  static constexpr int kShown = 30;
  const char* what_;
  int count_ = 0;
  int checked_ = 0;
};

// ---------------------------------------------------------------------------
// tsr_dtype_promote
// ---------------------------------------------------------------------------

TEST(DtypePromotion, GoldenTableCoversEveryPairOnce) {
  ASSERT_EQ(std::size(kPromoteRows), size_t{TSR_DTYPE_COUNT * TSR_DTYPE_COUNT});
  bool seen[TSR_DTYPE_COUNT][TSR_DTYPE_COUNT] = {};
  for (const PromoteRow& row : kPromoteRows) {
    EXPECT_FALSE(seen[row.a][row.b]) << Name(row.a) << ", " << Name(row.b) << " listed twice";
    seen[row.a][row.b] = true;
  }
}

TEST(DtypePromotion, PromoteMatchesPyTorchForAllPairs) {
  Mismatches mismatches("promote_types");
  for (const PromoteRow& row : kPromoteRows) {
    tsr_dtype got = static_cast<tsr_dtype>(0);
    const Outcome outcome = Take(tsr_dtype_promote(row.a, row.b, &got));
    mismatches.Check(outcome.code == TSR_OK && got == row.result,
                     "promote(" + Name(row.a) + ", " + Name(row.b) + "): want " + Name(row.result) +
                         ", got " +
                         (outcome.code == TSR_OK ? Name(got) : tsr_status_code_name(outcome.code)) +
                         " " + outcome.message);
  }
  EXPECT_EQ(mismatches.checked(), TSR_DTYPE_COUNT * TSR_DTYPE_COUNT);
}

TEST(DtypePromotion, PromoteIsSymmetricIdempotentAndHasBoolAsIdentity) {
  for (int i = 0; i < TSR_DTYPE_COUNT; ++i) {
    const auto a = static_cast<tsr_dtype>(i);
    tsr_dtype self = TSR_BOOL, with_bool = TSR_BOOL;
    ASSERT_EQ(Take(tsr_dtype_promote(a, a, &self)).code, TSR_OK);
    EXPECT_EQ(self, a) << "promote(" << Name(a) << ", " << Name(a) << ")";
    ASSERT_EQ(Take(tsr_dtype_promote(TSR_BOOL, a, &with_bool)).code, TSR_OK);
    EXPECT_EQ(with_bool, a) << "promote(bool, " << Name(a) << ")";
    for (int j = 0; j < TSR_DTYPE_COUNT; ++j) {
      const auto b = static_cast<tsr_dtype>(j);
      tsr_dtype ab = TSR_BOOL, ba = TSR_BOOL;
      ASSERT_EQ(Take(tsr_dtype_promote(a, b, &ab)).code, TSR_OK);
      ASSERT_EQ(Take(tsr_dtype_promote(b, a, &ba)).code, TSR_OK);
      EXPECT_EQ(ab, ba) << "promote(" << Name(a) << ", " << Name(b) << ") = " << Name(ab)
                        << " but promote(" << Name(b) << ", " << Name(a) << ") = " << Name(ba);
    }
  }
}

// ---------------------------------------------------------------------------
// Result dtypes of operator calls on cpu:0
// ---------------------------------------------------------------------------

class ResultType : public ::testing::Test {
 protected:
  void SetUp() override {
    tsr_runtime_options options{};
    options.struct_size = sizeof options;
    options.skip_default_plugins = true;
    tsr_runtime* runtime = nullptr;
    const Outcome created = Take(tsr_runtime_create(&options, &runtime));
    ASSERT_EQ(created.code, TSR_OK) << created;
    runtime_.reset(runtime);
    const std::string path = std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtessera-cpu.so";
    tsr_plugin* plugin = nullptr;
    const Outcome loaded = Take(tsr_plugin_load(runtime, path.c_str(), &plugin));
    ASSERT_EQ(loaded.code, TSR_OK) << path << ": " << loaded;
  }

  const tsr_op* Op(const char* name) {
    const tsr_op* op = nullptr;
    const Outcome found = Take(tsr_op_find(runtime_.get(), name, &op));
    EXPECT_EQ(found.code, TSR_OK) << name << ": " << found;
    return op;
  }

  // Ones of `dtype`, shape [3] or 0-d, on cpu:0.
  TensorPtr Ones(OperandKind kind, tsr_dtype dtype) {
    const std::vector<uint8_t> one = OneAs(dtype);
    const int32_t ndim = kind == DIM ? 1 : 0;
    const int64_t count = kind == DIM ? 3 : 1;
    std::vector<uint8_t> bytes;
    for (int64_t i = 0; i < count; ++i) bytes.insert(bytes.end(), one.begin(), one.end());
    const int64_t sizes[1] = {count};
    tsr_tensor* tensor = nullptr;
    const Outcome made = Take(tsr_tensor_from_host(runtime_.get(), bytes.data(), bytes.size(), ndim,
                                                   ndim ? sizes : nullptr, dtype,
                                                   tsr_device{TSR_DEVICE_CPU, 0}, &tensor));
    EXPECT_EQ(made.code, TSR_OK) << made;
    return TensorPtr(tensor);
  }

  // Runs `op` on `args`; on success describes the result (dtype, ndim and its
  // first element's real part) in `result`; returns "" or what went wrong.
  std::string Run(const tsr_op* op, const std::vector<tsr_value>& args, tsr_dtype* dtype,
                  int32_t* ndim, double* first) {
    tsr_value out{};
    const Outcome called = Take(tsr_op_call(op, args.data(), args.size(), &out, 1));
    if (called.code != TSR_OK)
      return "call failed: " + std::string(tsr_status_code_name(called.code)) + " " +
             called.message;
    if (out.tag != TSR_VALUE_TENSOR || out.u.tensor == nullptr) return "no tensor result";
    TensorPtr result(out.u.tensor);
    tsr_tensor_info info{};
    info.struct_size = sizeof info;
    const Outcome described = Take(tsr_tensor_get_info(result.get(), &info));
    if (described.code != TSR_OK) return "get_info failed: " + described.message;
    *dtype = static_cast<tsr_dtype>(info.dtype);
    *ndim = info.ndim;
    if (info.dtype < 0 || info.dtype >= TSR_DTYPE_COUNT) return "result dtype out of range";
    std::vector<uint8_t> bytes(static_cast<size_t>(info.numel) * tsr_dtype_size(*dtype));
    const Outcome copied = Take(tsr_tensor_copy_to_host(result.get(), bytes.data(), bytes.size()));
    if (copied.code != TSR_OK) return "copy_to_host failed: " + copied.message;
    *first = bytes.empty() ? std::nan("") : FirstAsDouble(*dtype, bytes);
    return "";
  }

  void CheckBinaryRows(const char* op_name) {
    const tsr_op* op = Op(op_name);
    ASSERT_NE(op, nullptr);
    Mismatches mismatches(op_name);
    for (const BinaryRow& row : kBinaryRows) {
      if (std::string(row.op) != op_name) continue;
      TensorPtr lhs = Ones(row.lhs_kind, row.lhs);
      TensorPtr rhs = Ones(row.rhs_kind, row.rhs);
      ASSERT_TRUE(lhs && rhs);
      tsr_value args[2]{};
      args[0].tag = TSR_VALUE_TENSOR;
      args[0].u.tensor = lhs.get();
      args[1].tag = TSR_VALUE_TENSOR;
      args[1].u.tensor = rhs.get();
      tsr_dtype dtype{};
      int32_t ndim = -1;
      double first = 0;
      const std::string error = Run(op, {args[0], args[1]}, &dtype, &ndim, &first);
      const std::string what = std::string(op_name) + "(" + KindName(row.lhs_kind) + " " +
                               Name(row.lhs) + ", " + KindName(row.rhs_kind) + " " + Name(row.rhs) +
                               "): want " + Name(row.result);
      if (!error.empty()) {
        mismatches.Check(false, what + ", " + error);
        continue;
      }
      const int32_t want_ndim = (row.lhs_kind == DIM || row.rhs_kind == DIM) ? 1 : 0;
      const bool is_bool = row.result == TSR_BOOL;
      const double want_first = std::string(op_name) == "add.Tensor" ? (is_bool ? 1.0 : 2.0) : 1.0;
      mismatches.Check(dtype == row.result && ndim == want_ndim && first == want_first,
                       what + " ndim " + std::to_string(want_ndim) + " value " +
                           std::to_string(want_first) + "; got " + Name(dtype) + " ndim " +
                           std::to_string(ndim) + " value " + std::to_string(first));
    }
    EXPECT_GT(mismatches.checked(), 0) << "no golden rows for " << op_name;
  }

  struct RuntimeOwner {
    void operator()(tsr_runtime* runtime) const { tsr_runtime_destroy(runtime); }
  };
  std::unique_ptr<tsr_runtime, RuntimeOwner> runtime_;
};

TEST_F(ResultType, AddTensorWithZeroDimTensorsMatchesPyTorch) { CheckBinaryRows("add.Tensor"); }

TEST_F(ResultType, MulTensorMatchesPyTorch) { CheckBinaryRows("mul.Tensor"); }

TEST_F(ResultType, DivTensorIsTrueDivisionAndMatchesPyTorch) { CheckBinaryRows("div.Tensor"); }

TEST_F(ResultType, AddScalarWithPythonScalarsMatchesPyTorch) {
  const tsr_op* op = Op("add.Scalar");
  ASSERT_NE(op, nullptr);
  Mismatches mismatches("add.Scalar");
  for (const ScalarRow& row : kScalarRows) {
    ASSERT_STREQ(row.op, "add.Scalar");
    TensorPtr lhs = Ones(row.lhs_kind, row.lhs);
    ASSERT_TRUE(lhs);
    tsr_value args[2]{};
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].u.tensor = lhs.get();
    args[1].tag = TSR_VALUE_SCALAR;
    args[1].u.scalar = MakeScalar(row.scalar);
    tsr_dtype dtype{};
    int32_t ndim = -1;
    double first = 0;
    const std::string error = Run(op, {args[0], args[1]}, &dtype, &ndim, &first);
    const std::string what = std::string("add.Scalar(") + KindName(row.lhs_kind) + " " +
                             Name(row.lhs) + ", " + ScalarName(row.scalar) + "): want " +
                             Name(row.result);
    if (!error.empty()) {
      mismatches.Check(false, what + ", " + error);
      continue;
    }
    // 1 + True = 2 (True for bool), 1 + 5 = 6, 1 + 2.5 = 3.5, re(1 + (1+2j)) = 2.
    double want_first = 0;
    switch (row.scalar) {
      case BOOL:
        want_first = row.result == TSR_BOOL ? 1.0 : 2.0;
        break;
      case INT:
        want_first = 6.0;
        break;
      case FLOAT:
        want_first = 3.5;
        break;
      case COMPLEX:
        want_first = 2.0;
        break;
    }
    const int32_t want_ndim = row.lhs_kind == DIM ? 1 : 0;
    mismatches.Check(dtype == row.result && ndim == want_ndim && first == want_first,
                     what + " ndim " + std::to_string(want_ndim) + " value " +
                         std::to_string(want_first) + "; got " + Name(dtype) + " ndim " +
                         std::to_string(ndim) + " value " + std::to_string(first));
  }
  EXPECT_GT(mismatches.checked(), 0);
}

}  // namespace
