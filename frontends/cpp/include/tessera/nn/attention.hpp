// tessera/nn/attention.hpp - torch.nn.MultiheadAttention (same query, key and
// value widths; no bias_k/bias_v, no add_zero_attn).
//
// Parameters, in PyTorch's order and initialisation: in_proj_weight
// (3E, E, xavier_uniform_), in_proj_bias (3E, zeros), out_proj (a Linear
// E -> E with default weight init and a zero bias). Inputs are (L, N, E), or
// (N, L, E) with batch_first, or unbatched (L, E). key_padding_mask (N, S):
// true (bool) ignores a key, a float mask is added; attn_mask (L, S) or
// (N * num_heads, L, S) likewise. Without need_weights the heads run through
// scaled_dot_product_attention; with it the probabilities are formed
// explicitly and returned, averaged over heads unless average_attn_weights is
// false. Dropout on the probabilities applies in training mode only.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/nn/init.hpp"
#include "tessera/nn/linear.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/linalg.hpp"
#include "tessera/ops/nn.hpp"
#include "tessera/ops/pointwise.hpp"
#include "tessera/ops/reduction.hpp"
#include "tessera/ops/shape.hpp"

namespace tessera::nn {

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = false, const TensorOptions& options = {})
      : embed_dim(embed_dim),
        num_heads(check_heads(embed_dim, num_heads)),
        head_dim(embed_dim / num_heads),
        dropout(dropout),
        batch_first(batch_first),
        in_proj_weight(
            register_parameter("in_proj_weight", empty({3 * embed_dim, embed_dim}, options))),
        in_proj_bias(
            register_parameter("in_proj_bias", bias ? empty({3 * embed_dim}, options) : Tensor())),
        out_proj(register_module("out_proj",
                                 std::make_shared<Linear>(embed_dim, embed_dim, bias, options))) {
    init::xavier_uniform_(in_proj_weight);
    if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
    if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
  }
  std::string type_name() const override { return "MultiheadAttention"; }

  // (attn_output, attn_weights); attn_weights is undefined without need_weights.
  std::pair<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                       const Tensor& key_padding_mask = {},
                                       bool need_weights = true, const Tensor& attn_mask = {},
                                       bool average_attn_weights = true) {
    std::vector<Tensor> out = invoke(
        {query, key, value, key_padding_mask, attn_mask}, [&](const std::vector<Tensor>& in) {
          auto [o, w] = forward(in.at(0), in.at(1), in.at(2), in.at(3), need_weights, in.at(4),
                                average_attn_weights);
          return std::vector<Tensor>{o, w};
        });
    return {out.at(0), out.at(1)};
  }

  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& key_padding_mask = {}, bool need_weights = true,
                                    const Tensor& attn_mask = {},
                                    bool average_attn_weights = true) {
    const bool batched = query.dim() == 3;
    if (!batched && query.dim() != 2)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "MultiheadAttention: query should be unbatched 2D or batched "
                                   "3D, got " +
                                       std::to_string(query.dim()) + "D");
    // To (L, N, E).
    auto seq_first = [&](const Tensor& t) {
      if (!batched) return t.unsqueeze(1);
      return batch_first ? t.transpose(0, 1) : t;
    };
    const Tensor q_in = seq_first(query), k_in = seq_first(key), v_in = seq_first(value);
    const int64_t L = q_in.size(0), N = q_in.size(1), S = k_in.size(0);
    if (q_in.size(2) != embed_dim || k_in.size(2) != embed_dim || v_in.size(2) != embed_dim)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "MultiheadAttention: query, key and value must have " +
                                       std::to_string(embed_dim) + " features");
    // Projections: rows [0, E), [E, 2E), [2E, 3E) of in_proj.
    auto project = [&](const Tensor& x, int64_t part) {
      const Tensor w = in_proj_weight.narrow(0, part * embed_dim, embed_dim);
      const Tensor b =
          in_proj_bias.defined() ? in_proj_bias.narrow(0, part * embed_dim, embed_dim) : Tensor();
      return linear(x, w, b);
    };
    // (L, N, E) -> (N, H, L, hd)
    auto heads = [&](const Tensor& x, int64_t len) {
      return x.reshape({len, N, num_heads, head_dim}).permute({1, 2, 0, 3});
    };
    const Tensor q = heads(project(q_in, 0), L);
    const Tensor k = heads(project(k_in, 1), S);
    const Tensor v = heads(project(v_in, 2), S);

    // One additive mask broadcastable to (N, H, L, S), or none.
    Tensor mask = additive(attn_mask, q.dtype());
    if (mask.defined()) {
      if (mask.dim() == 2) {
        mask = mask.reshape({1, 1, L, S});
      } else if (mask.dim() == 3) {
        mask = mask.reshape({N, num_heads, L, S});
      } else {
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     "MultiheadAttention: attn_mask must be 2D or 3D");
      }
    }
    if (key_padding_mask.defined()) {
      Tensor kpm = additive(batched ? key_padding_mask : key_padding_mask.unsqueeze(0), q.dtype())
                       .reshape({N, 1, 1, S});
      mask = mask.defined() ? mask + kpm : kpm;
    }
    const double p = is_training() ? dropout : 0.0;
    Tensor out;  // (N, H, L, hd)
    Tensor weights;
    if (!need_weights) {
      out = scaled_dot_product_attention(q, k, v, mask, p);
    } else {
      Tensor scores = matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
      if (mask.defined()) scores = scores + mask;
      weights = softmax(scores, -1);
      const Tensor used = p > 0.0 ? tessera::dropout(weights, p, true) : weights;
      out = matmul(used, v);
      if (average_attn_weights) weights = weights.mean({1});
      if (!batched) weights = weights.squeeze(0);
    }
    // (N, H, L, hd) -> (L, N, E) -> out_proj
    Tensor o = (*out_proj)(out.permute({2, 0, 1, 3}).reshape({L, N, embed_dim}));
    if (!batched) {
      o = o.squeeze(1);
    } else if (batch_first) {
      o = o.transpose(0, 1);
    }
    return {o, weights};
  }

  const int64_t embed_dim;
  const int64_t num_heads;
  const int64_t head_dim;
  const double dropout;
  const bool batch_first;
  Tensor& in_proj_weight;
  Tensor& in_proj_bias;
  std::shared_ptr<Linear> out_proj;

 private:
  static int64_t check_heads(int64_t embed_dim, int64_t num_heads) {
    if (num_heads <= 0 || embed_dim % num_heads != 0)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "MultiheadAttention: embed_dim (" +
                                                             std::to_string(embed_dim) +
                                                             ") must be divisible by num_heads (" +
                                                             std::to_string(num_heads) + ")");
    return num_heads;
  }
  // A bool mask (true = masked out) as 0 / -inf in `dtype`; a float mask as is.
  static Tensor additive(const Tensor& mask, Dtype dtype) {
    if (!mask.defined()) return mask;
    if (mask.dtype() == kBool)
      return where(mask, -std::numeric_limits<double>::infinity(), 0.0).to(dtype);
    return mask.to(dtype);
  }
};

}  // namespace tessera::nn
