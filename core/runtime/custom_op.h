// Custom operators: ops an application or a plugin defines at run time
// (Note [Custom operators] in tessera.h).
//
// A custom op is an OpDef like any registry op - run_op, observers, autograd
// and tsr_op_call treat it the same - whose id lies past the registry
// (kOpCount + its index in the runtime) and whose `custom` points here. Its
// function runs the shape rule, allocates the results and calls the first
// kernel that accepts the tensor dtypes: application kernels
// (tsr_op_register_kernel) before plugin kernels. Its derivative is an
// application callback, or a derivative op called with (grads..., args...).
//
// Invariants: a CustomOp is created once by Runtime::define_custom_op, never
// moves and lives as long as its runtime (handles and OpDef pointers to it
// stay valid). Kernel lists and the backward are swapped atomically; readers
// see either the old or the new one, and old ones are kept until the runtime
// dies.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "registry/registry.h"
#include "runtime/runtime.h"

namespace tsr {

struct PluginRecord;

// An application kernel (tsr_op_register_kernel).
struct AppKernel {
  tsr_custom_kernel_fn fn;
  void* context;
  uint64_t dtypes;  // TSR_DTYPE_BIT mask over the first tensor argument; 0: any
};

// The application's derivative (tsr_op_set_backward).
struct CustomBackward {
  tsr_backward_fn fn;
  void* context;
};

struct CustomOp {
  OpDef def;              // def.custom == this
  tsr_op handle;          // what tsr_op_find returns for it
  std::string node_name;  // its autograd node: "asquare::AffineBackward0"
  tsr_shape_rule_fn shape = nullptr;
  void* shape_context = nullptr;
  // Plugin that defined the op (null: the application). Once it is unloaded
  // the shape rule is gone and calls fail naming it.
  PluginRecord* defined_by = nullptr;
  std::string defined_by_name;
  std::atomic<bool> orphaned{false};
  // Derivative op name ("" for none), resolved at backward time.
  std::string derivative;
  std::atomic<const CustomBackward*> backward{nullptr};
  // Per device type: application kernels, and plugin kernels (BoundKernel).
  std::atomic<const std::vector<AppKernel>*> app_kernels[TSR_DEVICE_TYPE_MAX] = {};
  std::atomic<const KernelList*> kernels[TSR_DEVICE_TYPE_MAX] = {};

  // Guards the swaps below and owns what readers may still hold.
  std::mutex mu;
  std::vector<std::unique_ptr<const std::vector<AppKernel>>> retired_app;
  std::vector<std::unique_ptr<const KernelList>> retired_lists;
  std::vector<std::unique_ptr<const CustomBackward>> retired_backward;

  ~CustomOp();
  void add_app_kernel(int32_t device_type, AppKernel k);
  // Replaces the plugin kernels of `device_type` (null: none).
  void set_kernels(int32_t device_type, std::unique_ptr<KernelList> list);
  void set_backward(tsr_backward_fn fn, void* context);
};

// Checks that `schema` can be a custom op (namespace, no alias annotations,
// 1..4 plain Tensor results, a Tensor argument, at most kOpMaxArgs
// arguments). Returns "" or the reason it cannot.
std::string custom_schema_problem(const Schema& schema);

// Builds a custom op (not yet published in a runtime): its OpDef with id
// `id`, name and canonical schema, function run_custom_op (ops/custom_op.cpp,
// installed as custom_op_function()).
std::unique_ptr<CustomOp> make_custom_op(Runtime* runtime, Schema schema, OpId id,
                                         tsr_shape_rule_fn shape, void* shape_context,
                                         std::string derivative);

}  // namespace tsr
