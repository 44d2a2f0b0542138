// tessera/nn/embedding.hpp - torch.nn.Embedding: a (num_embeddings,
// embedding_dim) table looked up by integer indices. Initialised N(0, 1);
// the padding_idx row (if any) starts at zero and gets no gradient.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/factories.hpp"
#include "tessera/nn/init.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/nn.hpp"

namespace tessera::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim,
            std::optional<int64_t> padding_idx = std::nullopt, const TensorOptions& options = {})
      : num_embeddings(num_embeddings),
        embedding_dim(embedding_dim),
        padding_idx(normalize(padding_idx, num_embeddings)),
        weight(register_parameter("weight", empty({num_embeddings, embedding_dim}, options))) {
    reset_parameters();
  }
  void reset_parameters() {
    init::normal_(weight);
    if (padding_idx) {
      autograd::NoGradGuard no_grad;
      weight.select(0, *padding_idx).fill_(0);
    }
  }
  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override {
    std::string text = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
    if (padding_idx) text += ", padding_idx=" + std::to_string(*padding_idx);
    return text;
  }
  Tensor forward(const Tensor& indices) override {
    return embedding(weight, indices, padding_idx.value_or(-1));
  }

  const int64_t num_embeddings;
  const int64_t embedding_dim;
  const std::optional<int64_t> padding_idx;  // in [0, num_embeddings)
  Tensor& weight;

 private:
  static std::optional<int64_t> normalize(std::optional<int64_t> idx, int64_t n) {
    if (!idx) return idx;
    if (*idx >= n || *idx < -n)
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT, "Embedding: padding_idx " + std::to_string(*idx) +
                                    " must be within num_embeddings (" + std::to_string(n) + ")");
    return *idx < 0 ? *idx + n : *idx;
  }
};

}  // namespace tessera::nn
