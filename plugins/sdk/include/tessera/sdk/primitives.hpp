// tessera/sdk/primitives.hpp - the primitive set as code: each primitive's
// exact schema string, and which function codes of the _unary and _binary
// families each kind of dtype reaches a kernel with.
//
// One copy for everyone: the core's registry (core/registry/defs/) and its dtype
// rules (core/ops/pointwise.cpp, pointwise/binary.cpp) use this header, and so
// does every plugin's kernel table, so a schema or a code domain cannot drift
// between the host and a plugin. A kernel binds only when its schema string
// matches the registry's (docs/primitives.md); `tessera info OP` prints it.
//
// Why here and not in abi/: the ABI headers are C99 and say what crosses the
// boundary (struct layouts, code values and their meaning). The domains are
// the host's dtype policy - "exp of an int tensor computes in float, so no
// integer kernel ever sees TSR_UNARY_EXP" - which a plugin needs only to claim
// the right codes; claiming more is harmless (never called), so the policy
// may change without an ABI version bump. Schema strings are data the loader
// compares, also no layout. C++ constexpr tables serve both sides.
//
//   out.push_back(make_entry(sdk::schema::kUnary, {kFloatingDtypes}, f,
//                            sdk::kUnaryFloatingCodes));
#ifndef TESSERA_SDK_PRIMITIVES_HPP_
#define TESSERA_SDK_PRIMITIVES_HPP_

#include <cstdint>
#include <initializer_list>

#include "tessera/opcodes.h"

namespace tessera::sdk {

// The 20 primitives (docs/primitives.md) and every fused kernel a plugin of
// this tree implements, exactly as the registry spells them: a plugin writes
// no schema string of its own.
namespace schema {
inline constexpr const char* kCopy =
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)";
inline constexpr const char* kFill = "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)";
inline constexpr const char* kAdd =
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
inline constexpr const char* kSub =
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
inline constexpr const char* kMul = "mul.Tensor(Tensor self, Tensor other) -> Tensor";
inline constexpr const char* kDiv = "div.Tensor(Tensor self, Tensor other) -> Tensor";
inline constexpr const char* kMm = "mm(Tensor self, Tensor mat2) -> Tensor";
inline constexpr const char* kBmm = "bmm(Tensor self, Tensor mat2) -> Tensor";
inline constexpr const char* kUnary =
    "_unary(Tensor self, int op, Scalar p0=0, Scalar p1=0, Scalar p2=0) -> Tensor";
inline constexpr const char* kBinary =
    "_binary(Tensor self, Tensor other, int op, Scalar p0=0) -> Tensor";
inline constexpr const char* kWhere =
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor";
inline constexpr const char* kReduce =
    "_reduce(Tensor self, int op, int[] dim, bool keepdim=False) -> Tensor";
inline constexpr const char* kArgReduce =
    "_arg_reduce(Tensor self, int op, int dim, bool keepdim=False) -> Tensor";
inline constexpr const char* kScan = "_scan(Tensor self, int op, int dim) -> Tensor";
inline constexpr const char* kIota =
    "_iota_(Tensor(a!) self, Scalar start, Scalar step, Scalar? end=None) -> Tensor(a!)";
inline constexpr const char* kGather =
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor";
inline constexpr const char* kScatter =
    "_scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src, int op) -> Tensor(a!)";
inline constexpr const char* kNonzero = "nonzero(Tensor self) -> Tensor";
inline constexpr const char* kSort =
    "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
    "(Tensor values, Tensor indices)";
inline constexpr const char* kSearchsorted =
    "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
    "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor";

// Fused kernels (composites a plugin may implement; docs/primitives.md).
inline constexpr const char* kSoftmax =
    "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";
inline constexpr const char* kLogSoftmax =
    "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";
inline constexpr const char* kCummax =
    "cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)";
inline constexpr const char* kCummin =
    "cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)";
inline constexpr const char* kSoftmaxBackwardData =
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
    "input_dtype) -> Tensor";
inline constexpr const char* kLogSoftmaxBackwardData =
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
    "input_dtype) -> Tensor";
inline constexpr const char* kConvolution =
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor";
inline constexpr const char* kConvolutionBackward =
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] "
    "output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)";
inline constexpr const char* kMaxPool2dWithIndices =
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)";
inline constexpr const char* kMaxPool2d =
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor";
inline constexpr const char* kAvgPool2d =
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) "
    "-> Tensor";
inline constexpr const char* kAdaptiveAvgPool2d =
    "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor";
inline constexpr const char* kAdaptiveMaxPool2d =
    "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)";
inline constexpr const char* kMaxPool2dWithIndicesBackward =
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, "
    "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, "
    "bool ceil_mode, Tensor indices) -> Tensor";
inline constexpr const char* kAdaptiveMaxPool2dBackward =
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor";
inline constexpr const char* kAvgPool2dBackward =
    "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
    "int? divisor_override) -> Tensor";
inline constexpr const char* kAdaptiveAvgPool2dBackward =
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor";
inline constexpr const char* kNativeLayerNorm =
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)";
inline constexpr const char* kNativeLayerNormBackward =
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, "
    "Tensor, Tensor)";
inline constexpr const char* kScaledDotProductAttention =
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
    "attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, "
    "bool enable_gqa=False) -> Tensor";
inline constexpr const char* kScaledDotProductAttentionForward =
    "scaled_dot_product_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? "
    "attn_mask=None, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> "
    "(Tensor output, Tensor logsumexp)";
inline constexpr const char* kScaledDotProductAttentionBackward =
    "scaled_dot_product_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor "
    "value, Tensor out, Tensor logsumexp, Tensor? attn_mask=None, bool is_causal=False, *, "
    "float? scale=None, bool enable_gqa=False) -> (Tensor grad_query, Tensor grad_key, Tensor "
    "grad_value)";
inline constexpr const char* kCrossEntropyLoss =
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "int ignore_index=-100, float label_smoothing=0.) -> Tensor";
inline constexpr const char* kCrossEntropyLossBackward =
    "cross_entropy_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? "
    "weight, int reduction, int ignore_index, float label_smoothing) -> Tensor";
}  // namespace schema

// Every primitive's registry name and schema, in docs/primitives.md order.
struct primitive_schema {
  const char* name;  // the registry name ("add.Tensor")
  const char* schema;
};
inline constexpr primitive_schema kPrimitiveSchemas[] = {
    {"copy_", schema::kCopy},
    {"fill_.Scalar", schema::kFill},
    {"add.Tensor", schema::kAdd},
    {"sub.Tensor", schema::kSub},
    {"mul.Tensor", schema::kMul},
    {"div.Tensor", schema::kDiv},
    {"mm", schema::kMm},
    {"bmm", schema::kBmm},
    {"_unary", schema::kUnary},
    {"_binary", schema::kBinary},
    {"where.self", schema::kWhere},
    {"_reduce", schema::kReduce},
    {"_arg_reduce", schema::kArgReduce},
    {"_scan", schema::kScan},
    {"_iota_", schema::kIota},
    {"gather", schema::kGather},
    {"_scatter_", schema::kScatter},
    {"nonzero", schema::kNonzero},
    {"sort.stable", schema::kSort},
    {"searchsorted.Tensor", schema::kSearchsorted},
};

// Every fused kernel schema above with its registry name (the SDK primitives
// test checks each against the registry).
inline constexpr primitive_schema kFusedSchemas[] = {
    {"_softmax", schema::kSoftmax},
    {"_log_softmax", schema::kLogSoftmax},
    {"cummax", schema::kCummax},
    {"cummin", schema::kCummin},
    {"_softmax_backward_data", schema::kSoftmaxBackwardData},
    {"_log_softmax_backward_data", schema::kLogSoftmaxBackwardData},
    {"convolution", schema::kConvolution},
    {"convolution_backward", schema::kConvolutionBackward},
    {"max_pool2d_with_indices", schema::kMaxPool2dWithIndices},
    {"max_pool2d", schema::kMaxPool2d},
    {"avg_pool2d", schema::kAvgPool2d},
    {"_adaptive_avg_pool2d", schema::kAdaptiveAvgPool2d},
    {"adaptive_max_pool2d", schema::kAdaptiveMaxPool2d},
    {"max_pool2d_with_indices_backward", schema::kMaxPool2dWithIndicesBackward},
    {"adaptive_max_pool2d_backward", schema::kAdaptiveMaxPool2dBackward},
    {"avg_pool2d_backward", schema::kAvgPool2dBackward},
    {"_adaptive_avg_pool2d_backward", schema::kAdaptiveAvgPool2dBackward},
    {"native_layer_norm", schema::kNativeLayerNorm},
    {"native_layer_norm_backward", schema::kNativeLayerNormBackward},
    {"scaled_dot_product_attention", schema::kScaledDotProductAttention},
    {"scaled_dot_product_attention_forward", schema::kScaledDotProductAttentionForward},
    {"scaled_dot_product_attention_backward", schema::kScaledDotProductAttentionBackward},
    {"cross_entropy_loss", schema::kCrossEntropyLoss},
    {"cross_entropy_loss_backward", schema::kCrossEntropyLossBackward},
};

// A set of function codes, as tsr_kernel_entry.op_codes holds it: bit c % 64
// of words[c / 64] set = code c is in the set.
// (Not an aggregate, so a braced list of codes never converts to it by
// mistake: build one with codes_of / codes_below.)
struct code_set {
  uint64_t words[2] = {0, 0};

  constexpr code_set() noexcept = default;

  constexpr bool contains(int code) const noexcept {
    return code >= 0 && code < 128 && ((words[code / 64] >> (code % 64)) & 1u) != 0;
  }
  constexpr code_set with(int code) const noexcept {
    code_set s = *this;
    if (code >= 0 && code < 128) s.words[code / 64] |= uint64_t{1} << (code % 64);
    return s;
  }
  constexpr code_set without(std::initializer_list<int> codes) const noexcept {
    code_set s = *this;
    for (int code : codes) {
      if (code >= 0 && code < 128) s.words[code / 64] &= ~(uint64_t{1} << (code % 64));
    }
    return s;
  }
  friend constexpr bool operator==(const code_set&, const code_set&) = default;
};

// The codes of `list`.
constexpr code_set codes_of(std::initializer_list<int> list) noexcept {
  code_set s;
  for (int code : list) s = s.with(code);
  return s;
}
// The codes [0, count): every code of a family known when the plugin was built
// (the *_CODE_COUNT of opcodes.h).
constexpr code_set codes_below(int count) noexcept {
  code_set s;
  for (int code = 0; code < count; ++code) s = s.with(code);
  return s;
}

// Which dtypes a _unary code is defined on (PyTorch's rules), as the core
// applies them before calling a kernel:
//   floating_fn   exp, sin, sigmoid ...: integer and bool inputs compute in
//                 the default float dtype (the kernel sees floats only);
//   floating_only frac and the activations: other dtypes are rejected;
//   numeric       neg, abs, floor ... clamp: keep the dtype, bool rejected;
//   any           sign, nan_to_num: every dtype, kept;
//   square        every dtype, bool computes in int64;
//   bitwise       bitwise_not: integers and bool only;
//   predicate     logical_not, isnan ...: any dtype, the result is bool.
enum class unary_domain { floating_fn, floating_only, numeric, any, square, bitwise, predicate };

constexpr unary_domain unary_code_domain(int32_t code) noexcept {
  switch (code) {
    case TSR_UNARY_NEG:
    case TSR_UNARY_ABS:
    case TSR_UNARY_FLOOR:
    case TSR_UNARY_CEIL:
    case TSR_UNARY_ROUND:
    case TSR_UNARY_TRUNC:
    case TSR_UNARY_RELU:
    case TSR_UNARY_CLAMP:
    case TSR_UNARY_CLAMP_MIN:
    case TSR_UNARY_CLAMP_MAX:
      return unary_domain::numeric;
    case TSR_UNARY_SIGN:
    case TSR_UNARY_NAN_TO_NUM:
      return unary_domain::any;
    case TSR_UNARY_FRAC:
    case TSR_UNARY_LEAKY_RELU:
    case TSR_UNARY_ELU:
    case TSR_UNARY_GELU:
    case TSR_UNARY_GELU_TANH:
    case TSR_UNARY_SILU:
    case TSR_UNARY_MISH:
    case TSR_UNARY_SOFTPLUS:
    case TSR_UNARY_HARDSIGMOID:
    case TSR_UNARY_HARDSWISH:
      return unary_domain::floating_only;
    case TSR_UNARY_SQUARE:
      return unary_domain::square;
    case TSR_UNARY_BITWISE_NOT:
      return unary_domain::bitwise;
    case TSR_UNARY_LOGICAL_NOT:
    case TSR_UNARY_ISNAN:
    case TSR_UNARY_ISINF:
    case TSR_UNARY_ISPOSINF:
    case TSR_UNARY_ISNEGINF:
    case TSR_UNARY_ISFINITE:
    case TSR_UNARY_SIGNBIT:
      return unary_domain::predicate;
    default:
      return unary_domain::floating_fn;
  }
}

// Which dtypes a _binary code is defined on, for operands promoted together:
//   floating_fn   atan2, copysign, xlogy: integer results compute in float;
//   floating_only hypot, logaddexp: floating inputs only;
//   numeric       pow, remainder, fmod, rounding divisions: bool rejected;
//   any           maximum, minimum, fmax, fmin: every dtype;
//   bitwise       and, or, xor: integers and bool only;
//   shift         lshift, rshift: integers only;
//   predicate     logical ops and comparisons: any dtype, the result is bool.
enum class binary_domain { floating_fn, floating_only, numeric, any, bitwise, shift, predicate };

constexpr binary_domain binary_code_domain(int32_t code) noexcept {
  switch (code) {
    case TSR_BINARY_ATAN2:
    case TSR_BINARY_COPYSIGN:
    case TSR_BINARY_XLOGY:
      return binary_domain::floating_fn;
    case TSR_BINARY_HYPOT:
    case TSR_BINARY_LOGADDEXP:
      return binary_domain::floating_only;
    case TSR_BINARY_POW:
    case TSR_BINARY_REMAINDER:
    case TSR_BINARY_FMOD:
    case TSR_BINARY_DIV_TRUNC:
    case TSR_BINARY_DIV_FLOOR:
      return binary_domain::numeric;
    case TSR_BINARY_MAXIMUM:
    case TSR_BINARY_MINIMUM:
    case TSR_BINARY_FMAX:
    case TSR_BINARY_FMIN:
      return binary_domain::any;
    case TSR_BINARY_BITWISE_AND:
    case TSR_BINARY_BITWISE_OR:
    case TSR_BINARY_BITWISE_XOR:
      return binary_domain::bitwise;
    case TSR_BINARY_LSHIFT:
    case TSR_BINARY_RSHIFT:
      return binary_domain::shift;
    default:  // logical ops and comparisons
      return binary_domain::predicate;
  }
}

namespace detail {
template <class Domain, class Pred>
constexpr code_set codes_where(int count, Domain (*domain)(int32_t), Pred keep) noexcept {
  code_set s;
  for (int code = 0; code < count; ++code) {
    if (keep(domain(code))) s = s.with(code);
  }
  return s;
}
}  // namespace detail

// The codes a kernel is called with, by the dtype of its input, following the
// domains above: a table gives each group its own entry so coverage reports
// say which code runs on which dtype.
//
// _unary on floating inputs: every code but bitwise_not.
inline constexpr code_set kUnaryFloatingCodes =
    detail::codes_where(TSR_UNARY_CODE_COUNT, unary_code_domain,
                        [](unary_domain d) { return d != unary_domain::bitwise; });
// _unary on integer inputs only (not bool): numeric codes and square.
inline constexpr code_set kUnaryIntegerCodes = detail::codes_where(
    TSR_UNARY_CODE_COUNT, unary_code_domain,
    [](unary_domain d) { return d == unary_domain::numeric || d == unary_domain::square; });
// _unary on integer and bool inputs: sign, nan_to_num, bitwise_not, predicates.
inline constexpr code_set kUnaryIntegerAndBoolCodes =
    detail::codes_where(TSR_UNARY_CODE_COUNT, unary_code_domain, [](unary_domain d) {
      return d == unary_domain::any || d == unary_domain::bitwise || d == unary_domain::predicate;
    });
// _binary on floating inputs: every code but the bitwise ones and shifts.
inline constexpr code_set kBinaryFloatingCodes = detail::codes_where(
    TSR_BINARY_CODE_COUNT, binary_code_domain,
    [](binary_domain d) { return d != binary_domain::bitwise && d != binary_domain::shift; });
// _binary on integer inputs only (not bool): numeric codes and shifts.
inline constexpr code_set kBinaryIntegerCodes = detail::codes_where(
    TSR_BINARY_CODE_COUNT, binary_code_domain,
    [](binary_domain d) { return d == binary_domain::numeric || d == binary_domain::shift; });
// _binary on integer and bool inputs: max/min, bitwise, logical, comparisons.
inline constexpr code_set kBinaryIntegerAndBoolCodes =
    detail::codes_where(TSR_BINARY_CODE_COUNT, binary_code_domain, [](binary_domain d) {
      return d == binary_domain::any || d == binary_domain::bitwise ||
             d == binary_domain::predicate;
    });

// The whole code family of _reduce, _arg_reduce, _scan and _scatter_ (every
// code opcodes.h defines): a kernel that handles each code of its family for
// the dtypes of its entry claims these.
inline constexpr code_set kReduceCodes = codes_below(TSR_REDUCE_CODE_COUNT);
inline constexpr code_set kArgReduceCodes = codes_below(TSR_ARG_REDUCE_CODE_COUNT);
inline constexpr code_set kScanCodes = codes_below(TSR_SCAN_CODE_COUNT);
inline constexpr code_set kScatterCodes = codes_below(TSR_SCATTER_CODE_COUNT);

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_PRIMITIVES_HPP_
