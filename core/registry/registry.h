// The operator registry: every op as data (schema, kind, implementation).
//
// The registry is built once per process (ops are data, not per-runtime);
// plugin kernels are bound per runtime (Runtime::kernels). Each op has an
// OpFn that runs it from a normalised call frame (dispatch/op_call.h):
// primitives compute their output metadata (the shape rule) and call the
// device kernel through dispatch/kernel_call.h; derived overloads (add_.Tensor,
// add.out, ...) reuse their primitive's kernel (`kernel_op`); composites and
// views are written in terms of other ops. On the meta device every op runs
// its shape rule only.
//
// Note [Op implementations are installed]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The registry sits below the runtime (which binds plugin kernels to ops by
// schema and names ops in its handles), but the functions that run ops live
// with the op families, above dispatch (ops/op_functions.cpp). So the ops
// layer installs its function table here once, from a static initialiser,
// when libtessera loads - before any call can build the registry - and the
// registry copies each op's function into its OpDef when it is built. A build
// of the layers below ops alone has ops and schemas but no functions: the
// registry then refuses to build (INTERNAL), it never runs a null function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "registry/op_ids.h"
#include "registry/schema.h"
#include "tessera/tessera.h"

namespace tsr {

struct CustomOp;
struct OpCall;

// Runs one op from its normalised call frame (dispatch/op_call.h).
using OpFn = void (*)(OpCall& call);

// The most arguments and results one call frame holds (OpCall).
inline constexpr int kOpMaxArgs = 16;
inline constexpr int kOpMaxResults = 4;

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
  // TSR_OUT ops (Note [Derived out= overloads], ops/out_variant.h): the functional
  // op they store the results of, and where each of its arguments comes from.
  // kNone and empty for every other op.
  OpId functional = OpId::kNone;
  std::vector<int32_t> functional_args;
  // Custom ops (runtime/custom_op.h): their definition; null for registry ops.
  CustomOp* custom = nullptr;
  // schema.mutated_arg(), cached: the argument written in place, or -1.
  int32_t mutated = -1;
};

// Where a TSR_OUT op finds each functional argument (OpDef::functional_args):
// an index into its own arguments, or one of these.
inline constexpr int32_t kOutArgDefault = -1;  // the functional schema's default
inline constexpr int32_t kOutArgDtype = -2;    // the first out tensor's dtype
inline constexpr int32_t kOutArgDevice = -3;   // the first out tensor's device

// The functions that run ops (Note [Op implementations are installed]):
// `by_id[i]` runs OpId i, for every op of the registry; `custom` runs every
// custom op (runtime/custom_op.h).
struct OpFunctions {
  const OpFn* by_id = nullptr;
  size_t count = 0;
  OpFn custom = nullptr;
};
// Installs the ops layer's functions; called once, at load. Returns true.
bool install_op_functions(const OpFunctions& functions) noexcept;
// The function of every custom op; throws INTERNAL when none is installed.
OpFn custom_op_function();

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
