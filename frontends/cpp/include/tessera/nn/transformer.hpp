// tessera/nn/transformer.hpp - torch.nn.TransformerEncoderLayer: self
// attention and a feed-forward block, each with dropout and a residual
// connection, LayerNorm after each (or before, with norm_first).
//
// Children, in PyTorch's order: self_attn, linear1, dropout, linear2, norm1,
// norm2, dropout1, dropout2. activation: "relu" or "gelu".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/nn/attention.hpp"
#include "tessera/nn/dropout.hpp"
#include "tessera/nn/linear.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/nn/normalization.hpp"
#include "tessera/ops/pointwise.hpp"

namespace tessera::nn {

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048,
                          double dropout = 0.1, std::string activation = "relu",
                          double layer_norm_eps = 1e-5, bool batch_first = false,
                          bool norm_first = false, bool bias = true,
                          const TensorOptions& options = {})
      : self_attn(
            register_module("self_attn", std::make_shared<MultiheadAttention>(
                                             d_model, nhead, dropout, bias, batch_first, options))),
        linear1(register_module("linear1",
                                std::make_shared<Linear>(d_model, dim_feedforward, bias, options))),
        dropout(register_module("dropout", std::make_shared<Dropout>(dropout))),
        linear2(register_module("linear2",
                                std::make_shared<Linear>(dim_feedforward, d_model, bias, options))),
        norm1(register_module(
            "norm1", std::make_shared<LayerNorm>(d_model, layer_norm_eps, true, bias, options))),
        norm2(register_module(
            "norm2", std::make_shared<LayerNorm>(d_model, layer_norm_eps, true, bias, options))),
        dropout1(register_module("dropout1", std::make_shared<Dropout>(dropout))),
        dropout2(register_module("dropout2", std::make_shared<Dropout>(dropout))),
        activation(std::move(activation)),
        norm_first(norm_first) {
    if (this->activation != "relu" && this->activation != "gelu")
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "TransformerEncoderLayer: activation should be relu or gelu, "
                                   "not " +
                                       this->activation);
  }
  std::string type_name() const override { return "TransformerEncoderLayer"; }

  Tensor operator()(const Tensor& src, const Tensor& src_mask = {},
                    const Tensor& src_key_padding_mask = {}) {
    return invoke({src, src_mask, src_key_padding_mask},
                  [this](const std::vector<Tensor>& in) {
                    return std::vector<Tensor>{forward(in.at(0), in.at(1), in.at(2))};
                  })
        .at(0);
  }
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
    Tensor x = src;
    if (norm_first) {
      x = x + self_attention((*norm1)(x), src_mask, src_key_padding_mask);
      x = x + feed_forward((*norm2)(x));
    } else {
      x = (*norm1)(x + self_attention(x, src_mask, src_key_padding_mask));
      x = (*norm2)(x + feed_forward(x));
    }
    return x;
  }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<Dropout> dropout1;
  std::shared_ptr<Dropout> dropout2;
  const std::string activation;
  const bool norm_first;

 private:
  Tensor self_attention(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask) {
    return (*dropout1)((*self_attn)(x, x, x, key_padding_mask, false, mask).first);
  }
  Tensor feed_forward(const Tensor& x) {
    const Tensor h = (*linear1)(x);
    return (*dropout2)((*linear2)((*dropout)(activation == "gelu" ? gelu(h) : relu(h))));
  }
};

}  // namespace tessera::nn
