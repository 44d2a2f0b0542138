#include "runtime/custom_op_table.h"

#include "registry/registry.h"
#include "runtime/custom_op.h"
#include "runtime/device.h"
#include "util/error.h"

namespace tsr {

CustomOpTable::CustomOpTable() : ops_(std::make_unique<std::atomic<CustomOp*>[]>(kMaxCustomOps)) {
  for (uint32_t i = 0; i < kMaxCustomOps; ++i) ops_[i].store(nullptr);
}

CustomOpTable::~CustomOpTable() = default;

const tsr_op* CustomOpTable::handle(uint32_t index) const noexcept {
  uint32_t i = index - kOpCount;
  CustomOp* op = i < kMaxCustomOps ? ops_[i].load(std::memory_order_acquire) : nullptr;
  return op ? &op->handle : nullptr;
}

const KernelList* CustomOpTable::kernels(uint32_t index, int32_t device_type) const noexcept {
  uint32_t i = index - kOpCount;
  CustomOp* op = i < kMaxCustomOps ? ops_[i].load(std::memory_order_acquire) : nullptr;
  return op ? op->kernels[device_type].load(std::memory_order_acquire) : nullptr;
}

CustomOp* CustomOpTable::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

CustomOp* CustomOpTable::define(Runtime* runtime, const std::string& schema_text,
                                tsr_shape_rule_fn shape, void* shape_context,
                                const std::string& derivative, PluginRecord* by) {
  Schema schema;
  try {
    schema = parse_schema(schema_text);
  } catch (const Error& e) {
    fail(TSR_INVALID_ARGUMENT, "custom op schema '{}': {}", schema_text, e.message());
  }
  std::string problem = custom_schema_problem(schema);
  if (!problem.empty())
    fail(TSR_INVALID_ARGUMENT, "custom op schema '{}': {}", schema_text, problem);
  const std::string name = schema.full_name();
  if (Registry::get().find(name) != nullptr)
    fail(TSR_ALREADY_EXISTS, "custom op '{}': the operator registry already has an op of that name",
         name);
  if (auto it = by_name_.find(name); it != by_name_.end())
    fail(TSR_ALREADY_EXISTS, "custom op '{}' is already defined (by {}) with schema '{}'", name,
         it->second->defined_by_name, it->second->def.canonical);
  if (shape == nullptr)
    fail(TSR_INVALID_ARGUMENT, "custom op '{}': the shape rule is NULL; every custom op needs one",
         name);
  uint32_t index = count_.load(std::memory_order_relaxed);
  if (index >= kMaxCustomOps)
    fail(TSR_RESOURCE_EXHAUSTED,
         "custom op '{}': this runtime already has {} custom ops (the most)", name, kMaxCustomOps);
  auto op = make_custom_op(runtime, std::move(schema), static_cast<OpId>(kOpCount + index), shape,
                           shape_context, derivative);
  op->defined_by = by;
  op->defined_by_name = by ? fmt::format("plugin '{}'", by->name) : std::string("the application");
  CustomOp* raw = op.get();
  owned_.push_back(std::move(op));
  by_name_[name] = raw;
  ops_[index].store(raw, std::memory_order_release);
  count_.store(index + 1, std::memory_order_release);
  return raw;
}

}  // namespace tsr
