// tessera/nn.hpp - the module library (torch.nn): Module and every layer.
//
//   nn/module.hpp         Module: parameters, buffers, children, hooks, state_dict
//   nn/init.hpp           initialisers (xavier, kaiming, normal, uniform, zeros)
//   nn/linear.hpp         Identity, Linear, Bilinear
//   nn/conv.hpp           Conv1d, Conv2d, ConvTranspose2d
//   nn/pooling.hpp        MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
//   nn/normalization.hpp  LayerNorm, GroupNorm, RMSNorm, BatchNorm1d/2d
//   nn/dropout.hpp        Dropout
//   nn/embedding.hpp      Embedding
//   nn/activation.hpp     ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax
//   nn/attention.hpp      MultiheadAttention
//   nn/transformer.hpp    TransformerEncoderLayer
//   nn/container.hpp      Sequential, ModuleList, ModuleDict, ParameterList
//   nn/utils/clip_grad.hpp  clip_grad_norm_, clip_grad_value_
// Functional forms are the operators themselves (tessera::linear,
// tessera::layer_norm, tessera::cross_entropy, ... in ops/).
#pragma once

#include "tessera/nn/activation.hpp"       // IWYU pragma: export
#include "tessera/nn/attention.hpp"        // IWYU pragma: export
#include "tessera/nn/container.hpp"        // IWYU pragma: export
#include "tessera/nn/conv.hpp"             // IWYU pragma: export
#include "tessera/nn/dropout.hpp"          // IWYU pragma: export
#include "tessera/nn/embedding.hpp"        // IWYU pragma: export
#include "tessera/nn/init.hpp"             // IWYU pragma: export
#include "tessera/nn/linear.hpp"           // IWYU pragma: export
#include "tessera/nn/module.hpp"           // IWYU pragma: export
#include "tessera/nn/normalization.hpp"    // IWYU pragma: export
#include "tessera/nn/pooling.hpp"          // IWYU pragma: export
#include "tessera/nn/transformer.hpp"      // IWYU pragma: export
#include "tessera/nn/utils/clip_grad.hpp"  // IWYU pragma: export
