#include "dispatch/call.h"

#include <span>

#include "registry/registry.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr {

OpId op_named(std::string_view name) {
  const OpDef* def = Registry::get().find(name);
  if (def == nullptr)
    fail(TSR_INTERNAL, "the registry has no op '{}' (an op implementation refers to it)", name);
  return def->id;
}

namespace {
// Builds and runs an internal call's frame (int given for int[1] widened).
void run_internal(OpCall& c, Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs) {
  c.runtime = runtime;
  c.op = &runtime->op_def(id);
  int i = 0;
  for (const tsr_value& v : std::span<const tsr_value>(args, static_cast<size_t>(nargs))) {
    c.args[i] = v;
    if (v.tag == TSR_VALUE_INT && c.op->schema.args[i].kind == ArgKind::kIntList) {
      c.int_scratch[i] = v.u.i;
      c.args[i] = v_ints(&c.int_scratch[i], 1);
    }
    ++i;
  }
  c.nargs = i;
  fill_defaults(c);
  run_op(c);
}
}  // namespace

OpResults call_op_all(Runtime* runtime, OpId id, std::initializer_list<tsr_value> args) {
  return call_op_all(runtime, id, args.begin(), static_cast<int32_t>(args.size()));
}

OpResults call_op_all(Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs) {
  OpCall c;
  run_internal(c, runtime, id, args, nargs);
  OpResults r;
  for (int32_t k = 0; k < c.nresults; ++k) r.r[k] = std::move(c.results[k]);
  r.n = c.nresults;
  return r;
}

TensorRef call_op(Runtime* runtime, OpId id, std::initializer_list<tsr_value> args) {
  OpCall c;
  run_internal(c, runtime, id, args.begin(), static_cast<int32_t>(args.size()));
  return c.nresults > 0 ? std::move(c.results[0]) : TensorRef();
}

}  // namespace tsr
