// tessera/ops/linalg.hpp - typed wrappers of the linalg and conv op families
// (core/registry/defs/linalg.def, conv.def): vector/matrix products, the
// add-and-multiply family (beta * self + alpha * product), linear, einsum,
// tensordot, convolutions and pooling, with PyTorch's defaults.
//
// An optional tensor argument (bias) is None when the Tensor passed is
// undefined (`Tensor{}`, the default). Int-list parameters (stride, padding,
// dilation, kernel_size) take one value for every spatial dim or one per dim,
// as in PyTorch. Pools with indices return std::pair (values, indices); the
// indices are int64 flat positions h * W + w within each input plane.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/boxed_call.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

namespace detail {

inline tsr_value linalg_optional(const Tensor& tensor) noexcept {
  return tensor.defined() ? value(tensor) : none();
}
inline tsr_value linalg_optional(std::optional<int64_t> i) noexcept {
  return i ? value(*i) : none();
}

// Calls `op` and adopts its two tensor results.
inline std::pair<Tensor, Tensor> linalg_call2(const tsr_op* op, const tsr_value* args,
                                              size_t nargs) {
  tsr_value results[2] = {};
  check(tsr_op_call(op, args, nargs, results, 2));
  for (const tsr_value& r : results)
    if (r.tag != TSR_VALUE_TENSOR || r.u.tensor == nullptr) [[unlikely]]
      throw_not_a_tensor(op, r);
  return {Tensor::adopt(results[0].u.tensor), Tensor::adopt(results[1].u.tensor)};
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------

// PyTorch's matmul: 1-d, 2-d and batched operands (decomposes to mm / bmm).
inline Tensor matmul(const Tensor& self, const Tensor& other) { return self.matmul(other); }
// (n, k) x (k, m)
inline Tensor mm(const Tensor& self, const Tensor& mat2) { return self.mm(mat2); }
// (b, n, k) x (b, k, m)
inline Tensor bmm(const Tensor& self, const Tensor& mat2) { return self.bmm(mat2); }

// Inner product of two 1-d tensors of one dtype (0-d result).
inline Tensor dot(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"dot">(), args, 2);
}
// dot with the first argument conjugated (real dtypes: dot).
inline Tensor vdot(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"vdot">(), args, 2);
}
// (n,) x (m,) -> (n, m); promotes like mul.
inline Tensor outer(const Tensor& self, const Tensor& vec2) {
  const tsr_value args[2] = {detail::value(self), detail::value(vec2)};
  return detail::call(detail::op<"outer">(), args, 2);
}
// (n, k) x (k,) -> (n,)
inline Tensor mv(const Tensor& self, const Tensor& vec) {
  const tsr_value args[2] = {detail::value(self), detail::value(vec)};
  return detail::call(detail::op<"mv">(), args, 2);
}
inline Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(out)};
  detail::call_in_place(detail::op<"matmul.out">(), args, 3);
  return out;
}
inline Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  const tsr_value args[3] = {detail::value(self), detail::value(mat2), detail::value(out)};
  detail::call_in_place(detail::op<"mm.out">(), args, 3);
  return out;
}
inline Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  const tsr_value args[3] = {detail::value(self), detail::value(mat2), detail::value(out)};
  detail::call_in_place(detail::op<"bmm.out">(), args, 3);
  return out;
}

// beta * self + alpha * (mat1 @ mat2); self broadcasts to (n, m). beta == 0
// ignores self's values (NaN included).
inline Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                    const Scalar& beta = 1, const Scalar& alpha = 1) {
  const tsr_value args[5] = {detail::value(self), detail::value(mat1), detail::value(mat2),
                             detail::value(beta), detail::value(alpha)};
  return detail::call(detail::op<"addmm">(), args, 5);
}
inline Tensor& addmm_(Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                      const Scalar& alpha = 1) {
  const tsr_value args[5] = {detail::value(self), detail::value(mat1), detail::value(mat2),
                             detail::value(beta), detail::value(alpha)};
  detail::call_in_place(detail::op<"addmm_">(), args, 5);
  return self;
}
// beta * self + alpha * (mat @ vec)
inline Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec,
                    const Scalar& beta = 1, const Scalar& alpha = 1) {
  const tsr_value args[5] = {detail::value(self), detail::value(mat), detail::value(vec),
                             detail::value(beta), detail::value(alpha)};
  return detail::call(detail::op<"addmv">(), args, 5);
}
// beta * self + alpha * outer(vec1, vec2)
inline Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2,
                   const Scalar& beta = 1, const Scalar& alpha = 1) {
  const tsr_value args[5] = {detail::value(self), detail::value(vec1), detail::value(vec2),
                             detail::value(beta), detail::value(alpha)};
  return detail::call(detail::op<"addr">(), args, 5);
}
// beta * self + alpha * bmm(batch1, batch2); self broadcasts to (b, n, m).
inline Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                      const Scalar& beta = 1, const Scalar& alpha = 1) {
  const tsr_value args[5] = {detail::value(self), detail::value(batch1), detail::value(batch2),
                             detail::value(beta), detail::value(alpha)};
  return detail::call(detail::op<"baddbmm">(), args, 5);
}
// beta * self + alpha * sum_b batch1[b] @ batch2[b]
inline Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                     const Scalar& beta = 1, const Scalar& alpha = 1) {
  const tsr_value args[5] = {detail::value(self), detail::value(batch1), detail::value(batch2),
                             detail::value(beta), detail::value(alpha)};
  return detail::call(detail::op<"addbmm">(), args, 5);
}

// input @ weight.t() + bias; weight is (out_features, in_features).
inline Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}) {
  const tsr_value args[3] = {detail::value(input), detail::value(weight),
                             detail::linalg_optional(bias)};
  return detail::call(detail::op<"linear">(), args, 3);
}

// Einstein summation: "ij,jk->ik", "bij,bjk", "...ij->...ji", "ii->i".
inline Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::vector<tsr_tensor*> handles;
  handles.reserve(operands.size());
  for (const Tensor& t : operands) handles.push_back(t.get());
  const tsr_value args[2] = {detail::value(equation.c_str()), detail::value(handles)};
  return detail::call(detail::op<"einsum">(), args, 2);
}

// Contracts dims_self of self with dims_other of other (pairwise, in order).
inline Tensor tensordot(const Tensor& self, const Tensor& other, IntList dims_self,
                        IntList dims_other) {
  const tsr_value args[4] = {detail::value(self), detail::value(other), detail::value(dims_self),
                             detail::value(dims_other)};
  return detail::call(detail::op<"tensordot">(), args, 4);
}

// ---------------------------------------------------------------------------
// Convolution
// ---------------------------------------------------------------------------

// The general form: weight (O, C/groups, k...) or, transposed, (C, O/groups, k...).
inline Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                          IntList stride, IntList padding, IntList dilation, bool transposed,
                          IntList output_padding, int64_t groups) {
  const tsr_value args[9] = {
      detail::value(input),      detail::value(weight),         detail::linalg_optional(bias),
      detail::value(stride),     detail::value(padding),        detail::value(dilation),
      detail::value(transposed), detail::value(output_padding), detail::value(groups)};
  return detail::call(detail::op<"convolution">(), args, 9);
}
// input (N, C, L) or unbatched (C, L); weight (O, C/groups, k).
inline Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                     IntList stride = 1, IntList padding = 0, IntList dilation = 1,
                     int64_t groups = 1) {
  const tsr_value args[7] = {detail::value(input),          detail::value(weight),
                             detail::linalg_optional(bias), detail::value(stride),
                             detail::value(padding),        detail::value(dilation),
                             detail::value(groups)};
  return detail::call(detail::op<"conv1d">(), args, 7);
}
// input (N, C, H, W) or unbatched (C, H, W); weight (O, C/groups, kH, kW).
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                     IntList stride = 1, IntList padding = 0, IntList dilation = 1,
                     int64_t groups = 1) {
  const tsr_value args[7] = {detail::value(input),          detail::value(weight),
                             detail::linalg_optional(bias), detail::value(stride),
                             detail::value(padding),        detail::value(dilation),
                             detail::value(groups)};
  return detail::call(detail::op<"conv2d">(), args, 7);
}
// PyTorch's padding strings: "valid" (none) or "same" (output size = input
// size; stride 1 only; an odd total padding puts the extra zero on the right).
enum class ConvPadding { Valid, Same };
// conv1d/conv2d/conv3d with a padding string.
inline Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                     ConvPadding padding, IntList dilation = 1, int64_t groups = 1) {
  const tsr_value args[7] = {detail::value(input),
                             detail::value(weight),
                             detail::linalg_optional(bias),
                             detail::value(stride),
                             detail::value(padding == ConvPadding::Same ? "same" : "valid"),
                             detail::value(dilation),
                             detail::value(groups)};
  return detail::call(detail::op<"conv1d.padding">(), args, 7);
}
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                     ConvPadding padding, IntList dilation = 1, int64_t groups = 1) {
  const tsr_value args[7] = {detail::value(input),
                             detail::value(weight),
                             detail::linalg_optional(bias),
                             detail::value(stride),
                             detail::value(padding == ConvPadding::Same ? "same" : "valid"),
                             detail::value(dilation),
                             detail::value(groups)};
  return detail::call(detail::op<"conv2d.padding">(), args, 7);
}
inline Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                     ConvPadding padding, IntList dilation = 1, int64_t groups = 1) {
  const tsr_value args[7] = {detail::value(input),
                             detail::value(weight),
                             detail::linalg_optional(bias),
                             detail::value(stride),
                             detail::value(padding == ConvPadding::Same ? "same" : "valid"),
                             detail::value(dilation),
                             detail::value(groups)};
  return detail::call(detail::op<"conv3d.padding">(), args, 7);
}
// input (N, C, D, H, W) or unbatched; weight (O, C/groups, kD, kH, kW).
inline Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                     IntList stride = 1, IntList padding = 0, IntList dilation = 1,
                     int64_t groups = 1) {
  const tsr_value args[7] = {detail::value(input),          detail::value(weight),
                             detail::linalg_optional(bias), detail::value(stride),
                             detail::value(padding),        detail::value(dilation),
                             detail::value(groups)};
  return detail::call(detail::op<"conv3d">(), args, 7);
}
// weight (C, O/groups, kL); see conv_transpose2d.
inline Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                               IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                               int64_t groups = 1, IntList dilation = 1) {
  const tsr_value args[8] = {detail::value(input),          detail::value(weight),
                             detail::linalg_optional(bias), detail::value(stride),
                             detail::value(padding),        detail::value(output_padding),
                             detail::value(groups),         detail::value(dilation)};
  return detail::call(detail::op<"conv_transpose1d">(), args, 8);
}
// weight (C, O/groups, kH, kW); out = (in - 1) * stride - 2 * padding +
// dilation * (k - 1) + output_padding + 1.
inline Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                               IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                               int64_t groups = 1, IntList dilation = 1) {
  const tsr_value args[8] = {detail::value(input),          detail::value(weight),
                             detail::linalg_optional(bias), detail::value(stride),
                             detail::value(padding),        detail::value(output_padding),
                             detail::value(groups),         detail::value(dilation)};
  return detail::call(detail::op<"conv_transpose2d.input">(), args, 8);
}
// weight (C, O/groups, kD, kH, kW); see conv_transpose2d.
inline Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                               IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                               int64_t groups = 1, IntList dilation = 1) {
  const tsr_value args[8] = {detail::value(input),          detail::value(weight),
                             detail::linalg_optional(bias), detail::value(stride),
                             detail::value(padding),        detail::value(output_padding),
                             detail::value(groups),         detail::value(dilation)};
  return detail::call(detail::op<"conv_transpose3d.input">(), args, 8);
}

// ---------------------------------------------------------------------------
// Pooling ((N, C, H, W) or unbatched (C, H, W) input)
// ---------------------------------------------------------------------------

// stride {} means kernel_size.
inline Tensor max_pool2d(const Tensor& self, IntList kernel_size, IntList stride = {},
                         IntList padding = 0, IntList dilation = 1, bool ceil_mode = false) {
  const tsr_value args[6] = {detail::value(self),     detail::value(kernel_size),
                             detail::value(stride),   detail::value(padding),
                             detail::value(dilation), detail::value(ceil_mode)};
  return detail::call(detail::op<"max_pool2d">(), args, 6);
}
inline std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntList kernel_size,
                                                         IntList stride = {}, IntList padding = 0,
                                                         IntList dilation = 1,
                                                         bool ceil_mode = false) {
  const tsr_value args[6] = {detail::value(self),     detail::value(kernel_size),
                             detail::value(stride),   detail::value(padding),
                             detail::value(dilation), detail::value(ceil_mode)};
  return detail::linalg_call2(detail::op<"max_pool2d_with_indices">(), args, 6);
}
// (C, L) or (N, C, L).
inline Tensor max_pool1d(const Tensor& self, IntList kernel_size, IntList stride = {},
                         IntList padding = 0, IntList dilation = 1, bool ceil_mode = false) {
  const tsr_value args[6] = {detail::value(self),     detail::value(kernel_size),
                             detail::value(stride),   detail::value(padding),
                             detail::value(dilation), detail::value(ceil_mode)};
  return detail::call(detail::op<"max_pool1d">(), args, 6);
}
inline Tensor avg_pool2d(const Tensor& self, IntList kernel_size, IntList stride = {},
                         IntList padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                         std::optional<int64_t> divisor_override = std::nullopt) {
  const tsr_value args[7] = {detail::value(self),
                             detail::value(kernel_size),
                             detail::value(stride),
                             detail::value(padding),
                             detail::value(ceil_mode),
                             detail::value(count_include_pad),
                             detail::linalg_optional(divisor_override)};
  return detail::call(detail::op<"avg_pool2d">(), args, 7);
}
inline Tensor avg_pool1d(const Tensor& self, IntList kernel_size, IntList stride = {},
                         IntList padding = 0, bool ceil_mode = false,
                         bool count_include_pad = true) {
  const tsr_value args[6] = {detail::value(self),      detail::value(kernel_size),
                             detail::value(stride),    detail::value(padding),
                             detail::value(ceil_mode), detail::value(count_include_pad)};
  return detail::call(detail::op<"avg_pool1d">(), args, 6);
}
// Window i spans [floor(i * in / out), ceil((i + 1) * in / out)).
inline Tensor adaptive_avg_pool2d(const Tensor& self, IntList output_size) {
  const tsr_value args[2] = {detail::value(self), detail::value(output_size)};
  return detail::call(detail::op<"adaptive_avg_pool2d">(), args, 2);
}
inline std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntList output_size) {
  const tsr_value args[2] = {detail::value(self), detail::value(output_size)};
  return detail::linalg_call2(detail::op<"adaptive_max_pool2d">(), args, 2);
}

}  // namespace tessera
