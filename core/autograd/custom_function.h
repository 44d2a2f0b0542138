// Custom functions (tessera.h "Custom functions", PyTorch's
// autograd.Function): an application's forward and backward callbacks, one
// node per application.
//
// apply_function runs forward with grad mode off. When grad mode is on and a
// tensor argument requires grad, a FunctionNode records: its next edges
// point at the tensor arguments' gradient edges (taken before forward, so a
// dirty input rebased onto the node cannot form a cycle); saved tensors are
// version-checked; outputs that are inputs come back as views (or, marked
// dirty, are rebased onto the node); non-differentiable outputs get no
// history.
#pragma once

#include <string>
#include <vector>

#include "autograd/node.h"
#include "tessera/tessera.h"

namespace tsr::autograd {
class FunctionNode;
}

// The context handle callbacks receive: collects saves and marks in forward,
// serves saved tensors in backward. Owned by its FunctionNode, or by
// apply_function's frame when nothing records.
struct tsr_function_ctx {
  static constexpr uint32_t kAlive = 0x46435458u;
  uint32_t magic = kAlive;
  bool in_backward = false;
  std::vector<int32_t> needs_input_grad;  // per argument
  // Forward only, consumed when forward returns.
  std::vector<tsr::TensorRef> to_save, dirty, non_differentiable;
  tsr::autograd::FunctionNode* node = nullptr;  // null when nothing records
  ~tsr_function_ctx() { magic = 0; }
};

namespace tsr::autograd {

class FunctionNode final : public Node {
 public:
  FunctionNode(const tsr_function_def& def, int32_t nargs);
  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override;
  void release_saved() override;
  const char* forward_op() const override { return function_name_; }

  tsr_function_ctx ctx;
  std::vector<SavedTensor> saved;
  std::vector<int32_t> edge_of_arg;     // index into `next`, -1: none
  std::vector<TensorMeta> meta_of_arg;  // tensor arguments' forward metadata
  std::vector<bool> arg_is_tensor;

 private:
  tsr_function_backward_fn backward_;
  void* context_;
  const char* function_name_;  // interned "MyExp"
};

// tsr_function_apply: results in outs[0 .. nouts-1] (new references).
void apply_function(const tsr_function_def& def, const tsr_value* args, int32_t nargs,
                    tsr_tensor** outs, int32_t nouts);

// The saved tensor `index` of a context in backward (a new reference).
TensorRef function_saved(tsr_function_ctx& ctx, int32_t index);

}  // namespace tsr::autograd
