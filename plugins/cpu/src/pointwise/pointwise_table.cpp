// pointwise_table.cpp - kernel entries of the pointwise op family
// (core/ops/defs/pointwise.def): _unary and _binary split by the dtypes each
// group of function codes is defined for (so coverage reports say exactly
// which code runs on which dtype), and where.self for every dtype.
#include <iterator>

#include "kernel_entry.hpp"
#include "pointwise/pointwise_kernels.hpp"
#include "tessera/opcodes.h"

namespace tessera::cpu {
namespace {

constexpr uint64_t kFloating = TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) |
                               TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);
constexpr uint64_t kIntegers = TSR_DTYPE_BIT(TSR_UINT8) | TSR_DTYPE_BIT(TSR_INT8) |
                               TSR_DTYPE_BIT(TSR_INT16) | TSR_DTYPE_BIT(TSR_INT32) |
                               TSR_DTYPE_BIT(TSR_INT64);
constexpr uint64_t kIntegersAndBool = kIntegers | TSR_DTYPE_BIT(TSR_BOOL);

constexpr const char* kUnary =
    "_unary(Tensor self, int op, Scalar p0=0, Scalar p1=0, Scalar p2=0) -> Tensor";
constexpr const char* kBinary = "_binary(Tensor self, Tensor other, int op, Scalar p0=0) -> Tensor";

// Every _unary code but BITWISE_NOT on floating dtypes.
constexpr tsr_kernel_entry unary_floating() {
  tsr_kernel_entry e =
      with_code_range(entry(kUnary, kFloating, 0, trampoline<unary_kernel>), TSR_UNARY_CODE_COUNT);
  e.op_codes[TSR_UNARY_BITWISE_NOT / 64] &= ~(uint64_t{1} << (TSR_UNARY_BITWISE_NOT % 64));
  return e;
}

// Every _binary code but the bitwise ones and shifts on floating dtypes.
constexpr tsr_kernel_entry binary_floating() {
  tsr_kernel_entry e = with_code_range(
      entry(kBinary, kFloating, kFloating, trampoline<binary_code_kernel>), TSR_BINARY_CODE_COUNT);
  for (int c : {TSR_BINARY_BITWISE_AND, TSR_BINARY_BITWISE_OR, TSR_BINARY_BITWISE_XOR,
                TSR_BINARY_LSHIFT, TSR_BINARY_RSHIFT})
    e.op_codes[c / 64] &= ~(uint64_t{1} << (c % 64));
  return e;
}

constexpr tsr_kernel_entry kEntries[] = {
    unary_floating(),
    with_codes(entry(kUnary, kIntegers, 0, trampoline<unary_kernel>),
               {TSR_UNARY_NEG, TSR_UNARY_ABS, TSR_UNARY_FLOOR, TSR_UNARY_CEIL, TSR_UNARY_ROUND,
                TSR_UNARY_TRUNC, TSR_UNARY_RELU, TSR_UNARY_SQUARE, TSR_UNARY_CLAMP,
                TSR_UNARY_CLAMP_MIN, TSR_UNARY_CLAMP_MAX}),
    with_codes(entry(kUnary, kIntegersAndBool, 0, trampoline<unary_kernel>),
               {TSR_UNARY_SIGN, TSR_UNARY_NAN_TO_NUM, TSR_UNARY_BITWISE_NOT, TSR_UNARY_LOGICAL_NOT,
                TSR_UNARY_ISNAN, TSR_UNARY_ISINF, TSR_UNARY_ISPOSINF, TSR_UNARY_ISNEGINF,
                TSR_UNARY_ISFINITE, TSR_UNARY_SIGNBIT}),
    binary_floating(),
    with_codes(entry(kBinary, kIntegers, kIntegers, trampoline<binary_code_kernel>),
               {TSR_BINARY_POW, TSR_BINARY_REMAINDER, TSR_BINARY_FMOD, TSR_BINARY_DIV_TRUNC,
                TSR_BINARY_DIV_FLOOR, TSR_BINARY_LSHIFT, TSR_BINARY_RSHIFT}),
    with_codes(
        entry(kBinary, kIntegersAndBool, kIntegersAndBool, trampoline<binary_code_kernel>),
        {TSR_BINARY_MAXIMUM, TSR_BINARY_MINIMUM, TSR_BINARY_FMAX, TSR_BINARY_FMIN,
         TSR_BINARY_BITWISE_AND, TSR_BINARY_BITWISE_OR, TSR_BINARY_BITWISE_XOR,
         TSR_BINARY_LOGICAL_AND, TSR_BINARY_LOGICAL_OR, TSR_BINARY_LOGICAL_XOR, TSR_BINARY_EQ,
         TSR_BINARY_NE, TSR_BINARY_LT, TSR_BINARY_LE, TSR_BINARY_GT, TSR_BINARY_GE}),
    entry("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
          TSR_DTYPE_BIT(TSR_BOOL), kAll, trampoline<where_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> pointwise_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
