// tessera/data/example.hpp - Example<Data, Target>, the (input, label) pair of
// a supervised dataset, as LibTorch's torch::data::Example.
//
// A plain aggregate so datasets can return `{image, label}`; the default
// collate (collate.hpp) batches it field by field into an Example of batched
// fields, and the DataLoader's device transfer (transfer.hpp) moves both.
#pragma once

#include "tessera/tensor.hpp"

namespace tessera::data {

// One example. No invariant beyond its fields; copies share tensors as
// Tensor copies do.
template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Data data;
  Target target;
};

}  // namespace tessera::data
