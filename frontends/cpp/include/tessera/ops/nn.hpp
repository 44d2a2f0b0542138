// tessera/ops/nn.hpp - typed wrappers of the nn op family (core/registry/defs/nn.def):
// normalisation, dropout, embedding, attention and losses, with PyTorch's
// defaults. An optional tensor argument (weight, bias, running stats, masks)
// is None when the Tensor passed is undefined (`Tensor{}`, the default).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "tessera/boxed_call.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// The `reduction` of the loss functions (PyTorch's enum values).
enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };

namespace detail {

// An optional tensor argument: None when undefined.
inline tsr_value optional_value(const Tensor& tensor) noexcept {
  return tensor.defined() ? value(tensor) : none();
}
inline tsr_value optional_value(std::optional<double> f) noexcept { return f ? value(*f) : none(); }
inline tsr_value value(Reduction r) noexcept { return value(static_cast<int64_t>(r)); }

// Calls `op` and adopts its N tensor results.
template <size_t N>
std::array<Tensor, N> call_n(const tsr_op* op, const tsr_value* args, size_t nargs) {
  tsr_value results[N] = {};
  check(tsr_op_call(op, args, nargs, results, N));
  std::array<Tensor, N> out;
  for (size_t i = 0; i < N; ++i) {
    if (results[i].tag != TSR_VALUE_TENSOR || results[i].u.tensor == nullptr) [[unlikely]] {
      throw_not_a_tensor(op, results[i]);
    }
    out[i] = Tensor::adopt(results[i].u.tensor);
  }
  return out;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------

// Normalises over the trailing dims `normalized_shape`; weight/bias have that shape.
inline Tensor layer_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight = {},
                         const Tensor& bias = {}, double eps = 1e-5) {
  const tsr_value args[5] = {detail::value(input), detail::value(normalized_shape),
                             detail::optional_value(weight), detail::optional_value(bias),
                             detail::value(eps)};
  return detail::call(detail::op<"layer_norm">(), args, 5);
}
// (out, mean, rstd); mean and rstd keep the normalised dims with size 1.
inline std::array<Tensor, 3> native_layer_norm(const Tensor& input, IntList normalized_shape,
                                               const Tensor& weight, const Tensor& bias,
                                               double eps) {
  const tsr_value args[5] = {detail::value(input), detail::value(normalized_shape),
                             detail::optional_value(weight), detail::optional_value(bias),
                             detail::value(eps)};
  return detail::call_n<3>(detail::op<"native_layer_norm">(), args, 5);
}

// Batch norm over (N, C, ...): training normalises with the batch statistics
// and updates running_mean/running_var in place (momentum, unbiased
// variance); evaluation uses the running statistics.
inline Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& weight = {}, const Tensor& bias = {}, bool training = false,
                         double momentum = 0.1, double eps = 1e-5) {
  const tsr_value args[9] = {detail::value(input),
                             detail::optional_value(weight),
                             detail::optional_value(bias),
                             detail::optional_value(running_mean),
                             detail::optional_value(running_var),
                             detail::value(training),
                             detail::value(momentum),
                             detail::value(eps),
                             detail::value(true)};
  return detail::call(detail::op<"batch_norm">(), args, 9);
}
// (out, save_mean, save_invstd); the saved statistics are empty in evaluation mode.
inline std::array<Tensor, 3> native_batch_norm(const Tensor& input, const Tensor& weight,
                                               const Tensor& bias, const Tensor& running_mean,
                                               const Tensor& running_var, bool training,
                                               double momentum, double eps) {
  const tsr_value args[8] = {detail::value(input),
                             detail::optional_value(weight),
                             detail::optional_value(bias),
                             detail::optional_value(running_mean),
                             detail::optional_value(running_var),
                             detail::value(training),
                             detail::value(momentum),
                             detail::value(eps)};
  return detail::call_n<3>(detail::op<"native_batch_norm">(), args, 8);
}

inline Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {},
                         const Tensor& bias = {}, double eps = 1e-5) {
  const tsr_value args[5] = {detail::value(input), detail::value(num_groups),
                             detail::optional_value(weight), detail::optional_value(bias),
                             detail::value(eps)};
  return detail::call(detail::op<"group_norm">(), args, 5);
}

// eps std::nullopt: the machine epsilon of the input's dtype.
inline Tensor rms_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight = {},
                       std::optional<double> eps = std::nullopt) {
  const tsr_value args[4] = {detail::value(input), detail::value(normalized_shape),
                             detail::optional_value(weight), detail::optional_value(eps)};
  return detail::call(detail::op<"rms_norm">(), args, 4);
}

// ---------------------------------------------------------------------------
// Dropout and embedding
// ---------------------------------------------------------------------------

// Zeroes each element with probability p (default generator) and scales the
// rest by 1 / (1 - p); the input itself when !train or p == 0.
inline Tensor dropout(const Tensor& input, double p = 0.5, bool train = true) {
  const tsr_value args[3] = {detail::value(input), detail::value(p), detail::value(train)};
  return detail::call(detail::op<"dropout">(), args, 3);
}
inline Tensor& dropout_(Tensor& self, double p = 0.5, bool train = true) {
  const tsr_value args[3] = {detail::value(self), detail::value(p), detail::value(train)};
  detail::call_in_place(detail::op<"dropout_">(), args, 3);
  return self;
}
// (out, keep mask as bool).
inline std::array<Tensor, 2> native_dropout(const Tensor& input, double p, bool train = true) {
  const tsr_value args[3] = {detail::value(input), detail::value(p), detail::value(train)};
  return detail::call_n<2>(detail::op<"native_dropout">(), args, 3);
}

// Rows of `weight` (num_embeddings, dim) at `indices` (int64/int32, any
// shape): indices.shape + [dim]. ATen's argument order (weight first).
inline Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1) {
  const tsr_value args[3] = {detail::value(weight), detail::value(indices),
                             detail::value(padding_idx)};
  return detail::call(detail::op<"embedding">(), args, 3);
}

// ---------------------------------------------------------------------------
// Attention
// ---------------------------------------------------------------------------

// softmax(q k^T * scale + mask) v; attn_mask bool (true = attend) or
// floating (added); scale std::nullopt = 1 / sqrt(E).
inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                           const Tensor& value, const Tensor& attn_mask = {},
                                           double dropout_p = 0.0, bool is_causal = false,
                                           std::optional<double> scale = std::nullopt,
                                           bool enable_gqa = false) {
  const tsr_value args[8] = {detail::value(query),          detail::value(key),
                             detail::value(value),          detail::optional_value(attn_mask),
                             detail::value(dropout_p),      detail::value(is_causal),
                             detail::optional_value(scale), detail::value(enable_gqa)};
  return detail::call(detail::op<"scaled_dot_product_attention">(), args, 8);
}

// ---------------------------------------------------------------------------
// Losses
// ---------------------------------------------------------------------------

// Class indices (int64, input's shape without the class dim 1) or class
// probabilities (target shaped like input).
inline Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean, int64_t ignore_index = -100,
                            double label_smoothing = 0.0) {
  const tsr_value args[6] = {detail::value(input),           detail::value(target),
                             detail::optional_value(weight), detail::value(reduction),
                             detail::value(ignore_index),    detail::value(label_smoothing)};
  return detail::call(detail::op<"cross_entropy_loss">(), args, 6);
}
// input holds log-probabilities (N, C, d1, ...) or (C).
inline Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                       Reduction reduction = Reduction::Mean, int64_t ignore_index = -100) {
  const tsr_value args[5] = {detail::value(input), detail::value(target),
                             detail::optional_value(weight), detail::value(reduction),
                             detail::value(ignore_index)};
  return detail::call(detail::op<"nll_loss_nd">(), args, 5);
}
inline Tensor mse_loss(const Tensor& input, const Tensor& target,
                       Reduction reduction = Reduction::Mean) {
  const tsr_value args[3] = {detail::value(input), detail::value(target), detail::value(reduction)};
  return detail::call(detail::op<"mse_loss">(), args, 3);
}
inline Tensor l1_loss(const Tensor& input, const Tensor& target,
                      Reduction reduction = Reduction::Mean) {
  const tsr_value args[3] = {detail::value(input), detail::value(target), detail::value(reduction)};
  return detail::call(detail::op<"l1_loss">(), args, 3);
}
inline Tensor huber_loss(const Tensor& input, const Tensor& target,
                         Reduction reduction = Reduction::Mean, double delta = 1.0) {
  const tsr_value args[4] = {detail::value(input), detail::value(target), detail::value(reduction),
                             detail::value(delta)};
  return detail::call(detail::op<"huber_loss">(), args, 4);
}
inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                             Reduction reduction = Reduction::Mean, double beta = 1.0) {
  const tsr_value args[4] = {detail::value(input), detail::value(target), detail::value(reduction),
                             detail::value(beta)};
  return detail::call(detail::op<"smooth_l1_loss">(), args, 4);
}
// input holds probabilities in [0, 1].
inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                   const Tensor& weight = {},
                                   Reduction reduction = Reduction::Mean) {
  const tsr_value args[4] = {detail::value(input), detail::value(target),
                             detail::optional_value(weight), detail::value(reduction)};
  return detail::call(detail::op<"binary_cross_entropy">(), args, 4);
}
inline Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               const Tensor& weight = {},
                                               const Tensor& pos_weight = {},
                                               Reduction reduction = Reduction::Mean) {
  const tsr_value args[5] = {detail::value(input), detail::value(target),
                             detail::optional_value(weight), detail::optional_value(pos_weight),
                             detail::value(reduction)};
  return detail::call(detail::op<"binary_cross_entropy_with_logits">(), args, 5);
}
// input holds log-probabilities; target probabilities (log-probabilities with log_target).
inline Tensor kl_div(const Tensor& input, const Tensor& target,
                     Reduction reduction = Reduction::Mean, bool log_target = false) {
  const tsr_value args[4] = {detail::value(input), detail::value(target), detail::value(reduction),
                             detail::value(log_target)};
  return detail::call(detail::op<"kl_div">(), args, 4);
}

}  // namespace tessera
