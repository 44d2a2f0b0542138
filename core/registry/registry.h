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

#include "registry/op_ids.h"
#include "registry/schema.h"
#include "tensor/tensor_impl.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;
struct OpDef;
struct CustomOp;

// Note [Normalised frame]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A normalised call: arguments in schema order, defaults filled, types checked.
// Tensors travel as TensorImpl* (borrowed) in .u.tensor.
struct OpCall {
  static constexpr int kMaxArgs = 16;
  static constexpr int kMaxResults = 4;
  Runtime* runtime = nullptr;
  const OpDef* op = nullptr;
  int32_t nargs = 0;
  tsr_value args[kMaxArgs];
  int64_t int_scratch[kMaxArgs];  // backing store for an int given for int[1]
  TensorRef results[kMaxResults];
  int32_t nresults = 0;
  // Decoded tensors of Tensor[] arguments (normalise_args): one array per list
  // argument, owned by the frame (empty, and free, for calls without lists).
  std::vector<std::unique_ptr<TensorImpl*[]>> list_storage;

  TensorImpl* tensor(int i) const { return reinterpret_cast<TensorImpl*>(args[i].u.tensor); }
  TensorImpl* opt_tensor(int i) const {
    return args[i].tag == TSR_VALUE_NONE ? nullptr : tensor(i);
  }
  bool is_none(int i) const { return args[i].tag == TSR_VALUE_NONE; }
  int64_t int_arg(int i) const { return args[i].u.i; }
  double float_arg(int i) const { return args[i].u.f; }
  bool bool_arg(int i) const { return args[i].u.b != 0; }
  const tsr_scalar& scalar(int i) const { return args[i].u.scalar; }
  // A Tensor[] / Tensor?[] argument: its length and entry j (null for a None
  // entry of Tensor?[]). Entries were validated by normalise_args.
  int32_t list_size(int i) const { return args[i].len; }
  TensorImpl* list_tensor(int i, int32_t j) const {
    return reinterpret_cast<TensorImpl*>(args[i].u.tensors[j]);
  }
  // A `Generator?` argument (null for None), validated by normalise_args.
  tsr_generator* generator(int i) const {
    return args[i].tag == TSR_VALUE_NONE ? nullptr : args[i].u.generator;
  }
  const char* arg_name(int i) const;
  void set_result(TensorRef t) { results[nresults++] = std::move(t); }
  // The result of an op whose schema returns one Tensor[] (split, chunk,
  // unbind): any number of tensors, flattened into outs by tsr_op_call.
  std::vector<TensorRef> list_results;
  bool returns_list = false;
  void set_list_result(std::vector<TensorRef> ts) {
    list_results = std::move(ts);
    returns_list = true;
  }
};

using OpFn = void (*)(OpCall& call);

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

// Validates an application's generator handle (random/generator.cpp): throws
// INVALID_ARGUMENT naming `name` unless it is a live generator of `runtime`.
tsr_generator* check_generator(tsr_generator* g, Runtime* runtime, const char* name);

// Normalises `nargs` boxed application arguments into `call` (type checks,
// handle decoding, defaults). Throws INVALID_ARGUMENT naming the argument.
void normalise_args(OpCall& call, const tsr_value* args, size_t nargs);
// Fills defaults of arguments [nargs, schema size) of an internally built frame.
void fill_defaults(OpCall& call);
// Runs the op of a normalised frame (the one place every call passes through).
void run_op(OpCall& call);

// Internal calls between ops: builds a frame from already-typed values.
// Returns the first result (call_op_all: every result).
TensorRef call_op(Runtime* runtime, OpId id, std::initializer_list<tsr_value> args);
struct OpResults {
  TensorRef r[OpCall::kMaxResults];
  int32_t n = 0;
};
OpResults call_op_all(Runtime* runtime, OpId id, std::initializer_list<tsr_value> args);
// The same with `nargs` values from an array (nargs <= OpCall::kMaxArgs).
OpResults call_op_all(Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs);

// The id of the op named `name` ("amax", "max.dim"); throws INTERNAL when the
// registry has no such op. For calls across op families without a compile-time
// dependency; cache the result in a function-local static.
OpId op_named(std::string_view name);

// Value builders for call_op.
inline tsr_value v_tensor(TensorImpl* t) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = reinterpret_cast<tsr_tensor*>(t);
  return v;
}
inline tsr_value v_none() { return tsr_value{}; }
inline tsr_value v_int(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
inline tsr_value v_bool(bool b) {
  tsr_value v{};
  v.tag = TSR_VALUE_BOOL;
  v.u.b = b;
  return v;
}
inline tsr_value v_ints(const int64_t* p, int32_t n) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT_LIST;
  v.len = n;
  v.u.ints = p;
  return v;
}
inline tsr_value v_scalar(tsr_scalar s) {
  tsr_value v{};
  v.tag = TSR_VALUE_SCALAR;
  v.u.scalar = s;
  return v;
}
inline tsr_value v_dtype(tsr_dtype d) {
  tsr_value v{};
  v.tag = TSR_VALUE_DTYPE;
  v.u.i = d;
  return v;
}
// A Tensor[] value over internal tensors (entries may be null for Tensor?[]).
inline tsr_value v_tensors(TensorImpl* const* ts, int32_t n) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR_LIST;
  v.len = n;
  v.u.tensors = reinterpret_cast<tsr_tensor* const*>(ts);
  return v;
}
inline tsr_value v_float(double f) {
  tsr_value v{};
  v.tag = TSR_VALUE_FLOAT;
  v.u.f = f;
  return v;
}
inline tsr_value v_str(const char* s) {
  tsr_value v{};
  v.tag = TSR_VALUE_STRING;
  v.u.str = s;
  return v;
}
inline tsr_value v_generator(tsr_generator* g) {
  tsr_value v{};
  if (g) {
    v.tag = TSR_VALUE_GENERATOR;
    v.u.generator = g;
  }
  return v;
}
inline tsr_value v_device(tsr_device d) {
  tsr_value v{};
  v.tag = TSR_VALUE_DEVICE;
  v.u.device = d;
  return v;
}
inline tsr_scalar scalar_int(int64_t i) {
  tsr_scalar s{};
  s.kind = TSR_INT64;
  s.v.i = i;
  return s;
}
inline tsr_scalar scalar_float(double f) {
  tsr_scalar s{};
  s.kind = TSR_FLOAT64;
  s.v.f = f;
  return s;
}

}  // namespace tsr
