// Tensor operations the autograd machinery itself needs (zero-filling,
// accumulating, reducing a broadcast gradient to an input's shape, casting),
// written with registry ops so they run on every device. All return new
// references; none records history unless grad mode is on (create_graph).
#pragma once

#include "autograd/node.h"
#include "dispatch/op_call.h"
#include "registry/registry.h"

namespace tsr::autograd {

// Zeros shaped, typed and placed like `meta`.
TensorRef zeros_of(Runtime* runtime, const TensorMeta& meta);
// `grad` summed over the dims `meta` broadcast along (PyTorch's sum_to), then
// cast to meta's dtype and moved to meta's device; returned as is when already
// matching. Throws INTERNAL
// when grad cannot have come from meta's shape.
TensorRef reduce_to(TensorImpl* grad, const TensorMeta& meta, const char* node_name);
// A new tensor sharing t's storage and version counter, without history.
TensorRef detached(TensorImpl* t);
// A contiguous copy of t without history.
TensorRef clone_detached(TensorImpl* t);

}  // namespace tsr::autograd
