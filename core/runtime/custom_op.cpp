// Custom ops as runtime state: their definition, kernels and derivative.
// They run through run_custom_op (ops/custom_op.cpp).
#include "runtime/custom_op.h"

#include <cctype>

#include "util/error.h"

namespace tsr {

CustomOp::~CustomOp() {
  for (int32_t t = 0; t < TSR_DEVICE_TYPE_MAX; ++t) {
    delete app_kernels[t].load(std::memory_order_relaxed);
    delete kernels[t].load(std::memory_order_relaxed);
  }
  delete backward.load(std::memory_order_relaxed);
}

void CustomOp::add_app_kernel(int32_t device_type, AppKernel k) {
  std::lock_guard<std::mutex> lock(mu);
  const std::vector<AppKernel>* old = app_kernels[device_type].load(std::memory_order_acquire);
  auto next = std::make_unique<std::vector<AppKernel>>();
  if (old) *next = *old;
  next->push_back(k);
  app_kernels[device_type].store(next.release(), std::memory_order_release);
  if (old) retired_app.emplace_back(old);
}

void CustomOp::set_kernels(int32_t device_type, std::unique_ptr<KernelList> list) {
  std::lock_guard<std::mutex> lock(mu);
  const KernelList* old = kernels[device_type].exchange(list.release(), std::memory_order_acq_rel);
  if (old) retired_lists.emplace_back(old);
}

void CustomOp::set_backward(tsr_backward_fn fn, void* context) {
  std::lock_guard<std::mutex> lock(mu);
  const CustomBackward* next = fn ? new CustomBackward{fn, context} : nullptr;
  const CustomBackward* old = backward.exchange(next, std::memory_order_acq_rel);
  if (old) retired_backward.emplace_back(old);
}

std::string custom_schema_problem(const Schema& s) {
  size_t sep = s.name.find("::");
  if (sep == std::string::npos || sep == 0)
    return fmt::format("the name '{}' has no namespace; custom ops live in their own ('myns::{}')",
                       s.name, s.name);
  if (s.name.compare(0, sep, "aten") == 0)
    return "the aten namespace belongs to the operator registry; use your own ('myns::...')";
  if (s.args.size() > static_cast<size_t>(kOpMaxArgs))
    return fmt::format("{} arguments; a custom op takes at most {}", s.args.size(), kOpMaxArgs);
  bool has_tensor = false;
  for (const SchemaArg& a : s.args) {
    if (a.alias_set != 0 || a.is_write)
      return fmt::format(
          "argument '{}' has an alias annotation ({}); custom ops may not write to or alias "
          "their inputs",
          a.name, a.type_text);
    if (a.kind == ArgKind::kTensorList && a.elem_optional)
      return fmt::format("argument '{}': Tensor?[] is not supported in custom ops", a.name);
    if (a.kind == ArgKind::kTensor || a.kind == ArgKind::kTensorList) has_tensor = true;
  }
  if (!has_tensor)
    return "no Tensor argument; a custom op's results live on its tensor arguments' device";
  if (s.returns.empty() || s.returns.size() > static_cast<size_t>(kOpMaxResults))
    return fmt::format("{} results; a custom op returns 1 to {} Tensors", s.returns.size(),
                       kOpMaxResults);
  for (const SchemaReturn& r : s.returns) {
    if (r.kind != ArgKind::kTensor || r.optional || r.alias_set != 0)
      return fmt::format("result type '{}'; custom op results are plain Tensors", r.type_text);
  }
  return "";
}

std::unique_ptr<CustomOp> make_custom_op(Runtime* runtime, Schema schema, OpId id,
                                         tsr_shape_rule_fn shape, void* shape_context,
                                         std::string derivative) {
  auto op = std::make_unique<CustomOp>();
  OpDef& d = op->def;
  d.id = id;
  d.schema = std::move(schema);
  bind_schema_defaults(d.schema);  // op never moves from here on
  d.name = d.schema.full_name();
  d.canonical = d.schema.canonical();
  d.kind = TSR_OP_PRIMITIVE;
  d.fn = custom_op_function();  // run_custom_op (Note [Op implementations are installed])
  d.kernel_op = id;
  d.code = -1;
  d.custom = op.get();
  op->handle = tsr_op{tsr_op::kAlive, runtime, static_cast<uint32_t>(id), &op->def};
  // "asquare::affine" -> "asquare::AffineBackward0", as PyTorch names nodes.
  size_t sep = d.schema.name.rfind("::");
  std::string node = d.schema.name.substr(0, sep + 2);
  bool upper = true;
  for (char ch : d.schema.name.substr(sep + 2)) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    node += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  op->node_name = node + "Backward0";
  op->shape = shape;
  op->shape_context = shape_context;
  op->derivative = std::move(derivative);
  return op;
}

}  // namespace tsr
