// The operator registry: every op as data (schema, kind, implementation).
//
// The registry is built once per process (ops are data, not per-runtime);
// plugin kernels are bound per runtime (Runtime::kernels). Each op has an
// OpFn that runs it from a normalised call frame: primitives compute their
// output metadata (the shape rule) and call the device kernel through
// dispatch/kernel_call.h; derived overloads (add_.Tensor, add.out, ...) reuse
// their primitive's kernel (`kernel_op`); composites and views are written in
// terms of other ops. On the meta device every op runs its shape rule only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dispatch/op_call.h"
#include "registry/op_ids.h"
#include "registry/schema.h"
#include "tensor/tensor_impl.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;
struct CustomOp;

struct OpDef {
  OpId id;
  std::string name;  // "add.Tensor"
  Schema schema;
  std::string canonical;  // schema.canonical()
  tsr_op_kind kind;
  OpFn fn;
  OpId kernel_op;  // whose kernels run this op (itself for primitives and fusable
                   // composites; the primitive for routed ops; kNone otherwise)
  int32_t code;    // function code passed to a family primitive (opcodes.h); -1 if none
  // TSR_OUT ops (Note [Derived out= overloads], out_variant.h): the functional
  // op they store the results of, and where each of its arguments comes from.
  // kNone and empty for every other op.
  OpId functional = OpId::kNone;
  std::vector<int32_t> functional_args;
  // Custom ops (registry/custom_op.h): their definition; null for registry ops.
  CustomOp* custom = nullptr;
  // schema.mutated_arg(), cached: the argument written in place, or -1.
  int32_t mutated = -1;
};

// Points list and string defaults of `schema` into its own storage; call once
// the schema has its final address (it must not move afterwards).
void bind_schema_defaults(Schema& schema);

class Registry {
 public:
  static const Registry& get();
  const OpDef& op(OpId id) const { return ops_[static_cast<size_t>(id)]; }
  const OpDef* find(std::string_view name) const;  // "add.Tensor" or "mm"; null if unknown
  size_t size() const { return ops_.size(); }
  const std::vector<OpDef>& ops() const { return ops_; }
  // Up to `n` known names closest to `name` (edit distance), for NOT_FOUND messages.
  std::vector<std::string> suggest(std::string_view name, size_t n) const;

 private:
  Registry();
  std::vector<OpDef> ops_;
  std::unordered_map<std::string, uint32_t> by_name_;
};

}  // namespace tsr
