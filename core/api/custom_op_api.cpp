// tessera.h: custom operators (Note [Custom operators]).
#include <cstddef>

#include "api/guard.h"
#include "runtime/custom_op.h"
#include "runtime/runtime.h"
#include "tessera/tessera.h"

using namespace tsr;

namespace {
CustomOp* custom_from_handle(const tsr_op* op, const char* arg) {
  if (op == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass the handle tsr_op_define returned",
         arg);
  if (op->magic != tsr_op::kAlive)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is not an op handle", arg);
  if (op->def->custom == nullptr)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is the registry op '{}'; kernels and derivatives can be set only on "
         "custom ops (tsr_op_define)",
         arg, op->def->name);
  return op->def->custom;
}
}  // namespace

extern "C" {

TSR_API tsr_status* tsr_op_define(tsr_runtime* runtime, const tsr_op_def* def,
                                  const tsr_op** out_op) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_op, "out_op");
    if (def == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'def' is NULL");
    require_struct(def->struct_size, offsetof(tsr_op_def, derivative) + sizeof(const char*), "def");
    if (def->schema == nullptr)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'def->schema' is NULL; pass e.g. \"myns::op(Tensor x) -> Tensor\"");
    if (def->shape == nullptr)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'def->shape' is NULL; every custom op needs a shape rule");
    CustomOp* op = rt->define_custom_op(def->schema, def->shape, def->shape_context,
                                        def->derivative ? def->derivative : "", nullptr);
    if (def->backward) op->set_backward(def->backward, def->backward_context);
    *out_op = &op->handle;
  });
}

TSR_API tsr_status* tsr_op_register_kernel(const tsr_op* op, const char* device_type,
                                           uint64_t dtypes, tsr_custom_kernel_fn fn,
                                           void* context) {
  return api_guard([&] {
    CustomOp* custom = custom_from_handle(op, "op");
    if (device_type == nullptr)
      fail(TSR_INVALID_ARGUMENT, "argument 'device_type' is NULL; pass e.g. \"cpu\"");
    if (fn == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'fn' is NULL");
    int32_t type = op->runtime->device_type_id(device_type);
    if (type < 0 || type == TSR_DEVICE_META)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'device_type' = '{}' is not a device type of this runtime{}", device_type,
           type == TSR_DEVICE_META ? " that runs kernels (meta runs the shape rule only)" : "");
    custom->add_app_kernel(type, AppKernel{fn, context, dtypes});
  });
}

TSR_API tsr_status* tsr_op_set_backward(const tsr_op* op, tsr_backward_fn fn, void* context) {
  return api_guard([&] { custom_from_handle(op, "op")->set_backward(fn, context); });
}

}  // extern "C"
