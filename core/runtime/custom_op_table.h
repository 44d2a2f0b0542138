// CustomOpTable: a runtime's custom ops (runtime/custom_op.h), by index - op
// kOpCount + i is entry i - and by name.
//
// Invariant: a custom op is never removed and never moves; entries are
// published in index order and `count` rises only after its entry is set.
//
// Synchronization (Note [Runtime locking] in runtime.h): handle(), kernels()
// and count() are lock-free reads; find(), define() and owned() are called
// with the runtime's mutex held.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel_table.h"
#include "runtime/op_handles.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;
struct CustomOp;
struct PluginRecord;

class CustomOpTable {
 public:
  static constexpr uint32_t kMaxCustomOps = 1024;

  CustomOpTable();
  ~CustomOpTable();
  CustomOpTable(const CustomOpTable&) = delete;
  CustomOpTable& operator=(const CustomOpTable&) = delete;

  // By op index (kOpCount and up), lock-free: null past the defined ones.
  const tsr_op* handle(uint32_t index) const noexcept;
  const KernelList* kernels(uint32_t index, int32_t device_type) const noexcept;
  uint32_t count() const noexcept { return count_.load(std::memory_order_acquire); }

  // The custom op named `name` ("ns::op.overload"), or null.
  CustomOp* find(const std::string& name) const;
  // Defines a custom op of `runtime`; `by` is the defining plugin (null: the
  // application). Throws ALREADY_EXISTS when the name is taken (by the
  // registry or a custom op), INVALID_ARGUMENT for a schema a custom op
  // cannot have or a null shape rule, RESOURCE_EXHAUSTED past kMaxCustomOps.
  CustomOp* define(Runtime* runtime, const std::string& schema_text, tsr_shape_rule_fn shape,
                   void* shape_context, const std::string& derivative, PluginRecord* by);
  // Every custom op, in index order.
  const std::vector<std::unique_ptr<CustomOp>>& owned() const noexcept { return owned_; }

 private:
  std::unique_ptr<std::atomic<CustomOp*>[]> ops_;  // ops_[i] is op kOpCount + i
  std::atomic<uint32_t> count_{0};
  std::vector<std::unique_ptr<CustomOp>> owned_;
  std::map<std::string, CustomOp*> by_name_;
};

}  // namespace tsr
