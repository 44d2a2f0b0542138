#include "dispatch/op_api.h"

#include "dispatch/normalise.h"
#include "dispatch/op_call.h"
#include "dispatch/run_op.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::op {

Shape ints(std::initializer_list<int64_t> values) {
  if (values.size() > static_cast<size_t>(TSR_MAX_DIMS))
    fail(TSR_INTERNAL, "op::ints: {} values given, at most {} fit; pass a span or vector",
         values.size(), TSR_MAX_DIMS);
  Shape s;
  s.ndim = static_cast<int32_t>(values.size());
  int32_t d = 0;
  for (int64_t v : values) s.sizes[d++] = v;
  return s;
}

namespace detail {
namespace {

const SchemaArg& arg(const OpCall& c, int i) { return c.op->schema.args[static_cast<size_t>(i)]; }

[[noreturn]] void mismatch(const OpCall& c, int i, const char* given) {
  const SchemaArg& a = arg(c, i);
  fail(TSR_INTERNAL,
       "internal call of op '{}': argument '{}' (position {}) is {} but the caller passed {}; "
       "schema: {}",
       c.op->name, a.name, i, a.type_text, given, c.op->canonical);
}

tsr_value tagged(int32_t tag) {
  tsr_value v{};
  v.tag = tag;
  return v;
}

}  // namespace

void begin(OpCall& c, Runtime* runtime, OpId id, int32_t nargs) {
  c.runtime = runtime;
  c.op = &runtime->op_def(id);
  if (static_cast<size_t>(nargs) > c.op->schema.args.size())
    fail(TSR_INTERNAL, "internal call of op '{}' with {} arguments; it takes at most {}: {}",
         c.op->name, nargs, c.op->schema.args.size(), c.op->canonical);
  c.nargs = nargs;
}

void put_tensor(OpCall& c, int i, TensorImpl* t) {
  const SchemaArg& a = arg(c, i);
  if (a.kind != ArgKind::kTensor) mismatch(c, i, "a Tensor");
  if (t == nullptr) {
    if (!a.optional) mismatch(c, i, "a null Tensor");
    c.args[i] = tsr_value{};
    return;
  }
  tsr_value& v = c.args[i];
  v = tagged(TSR_VALUE_TENSOR);
  v.u.tensor = reinterpret_cast<tsr_tensor*>(t);
}

void put_int(OpCall& c, int i, int64_t x) {
  tsr_value& v = c.args[i];
  switch (arg(c, i).kind) {
    case ArgKind::kInt:
      v = tagged(TSR_VALUE_INT);
      v.u.i = x;
      return;
    case ArgKind::kIntList:
      c.int_scratch[i] = x;
      v = tagged(TSR_VALUE_INT_LIST);
      v.len = 1;
      v.u.ints = &c.int_scratch[i];
      return;
    case ArgKind::kScalar:
      v = tagged(TSR_VALUE_SCALAR);
      v.u.scalar = scalar_int(x);
      return;
    case ArgKind::kFloat:
      v = tagged(TSR_VALUE_FLOAT);
      v.u.f = static_cast<double>(x);
      return;
    default:
      mismatch(c, i, "an int");
  }
}

void put_float(OpCall& c, int i, double x) {
  tsr_value& v = c.args[i];
  switch (arg(c, i).kind) {
    case ArgKind::kFloat:
      v = tagged(TSR_VALUE_FLOAT);
      v.u.f = x;
      return;
    case ArgKind::kScalar:
      v = tagged(TSR_VALUE_SCALAR);
      v.u.scalar = scalar_float(x);
      return;
    default:
      mismatch(c, i, "a float");
  }
}

void put_bool(OpCall& c, int i, bool b) {
  tsr_value& v = c.args[i];
  switch (arg(c, i).kind) {
    case ArgKind::kBool:
      v = tagged(TSR_VALUE_BOOL);
      v.u.b = b;
      return;
    case ArgKind::kScalar:
      v = tagged(TSR_VALUE_SCALAR);
      v.u.scalar.kind = TSR_BOOL;
      v.u.scalar.v.i = b;
      return;
    default:
      mismatch(c, i, "a bool");
  }
}

void put_scalar(OpCall& c, int i, const tsr_scalar& s) {
  if (arg(c, i).kind != ArgKind::kScalar) mismatch(c, i, "a Scalar");
  c.args[i] = tagged(TSR_VALUE_SCALAR);
  c.args[i].u.scalar = s;
}

void put_dtype(OpCall& c, int i, tsr_dtype d) {
  if (arg(c, i).kind != ArgKind::kScalarType) mismatch(c, i, "a ScalarType");
  c.args[i] = tagged(TSR_VALUE_DTYPE);
  c.args[i].u.i = d;
}

void put_device(OpCall& c, int i, const tsr_device& d) {
  if (arg(c, i).kind != ArgKind::kDevice) mismatch(c, i, "a Device");
  c.args[i] = tagged(TSR_VALUE_DEVICE);
  c.args[i].u.device = d;
}

void put_memory_format(OpCall& c, int i, tsr_memory_format f) {
  if (arg(c, i).kind != ArgKind::kMemoryFormat) mismatch(c, i, "a MemoryFormat");
  c.args[i] = tagged(TSR_VALUE_MEMORY_FORMAT);
  c.args[i].u.i = f;
}

void put_generator(OpCall& c, int i, tsr_generator* g) {
  const SchemaArg& a = arg(c, i);
  if (a.kind != ArgKind::kGenerator) mismatch(c, i, "a Generator");
  if (g == nullptr) {
    if (!a.optional) mismatch(c, i, "a null Generator");
    c.args[i] = tsr_value{};
    return;
  }
  c.args[i] = tagged(TSR_VALUE_GENERATOR);
  c.args[i].u.generator = g;
}

void put_str(OpCall& c, int i, const char* s) {
  if (arg(c, i).kind != ArgKind::kStr || s == nullptr) mismatch(c, i, "a string");
  c.args[i] = tagged(TSR_VALUE_STRING);
  c.args[i].u.str = s;
}

void put_ints(OpCall& c, int i, const int64_t* p, size_t n) {
  if (arg(c, i).kind != ArgKind::kIntList) mismatch(c, i, "an int list");
  c.args[i] = tagged(TSR_VALUE_INT_LIST);
  c.args[i].len = static_cast<int32_t>(n);
  c.args[i].u.ints = p;
}

void put_tensors(OpCall& c, int i, TensorImpl* const* p, size_t n) {
  if (arg(c, i).kind != ArgKind::kTensorList) mismatch(c, i, "a Tensor list");
  c.args[i] = tagged(TSR_VALUE_TENSOR_LIST);
  c.args[i].len = static_cast<int32_t>(n);
  c.args[i].u.tensors = reinterpret_cast<tsr_tensor* const*>(p);
}

void put_none(OpCall& c, int i) {
  if (!arg(c, i).optional) mismatch(c, i, "None");
  c.args[i] = tsr_value{};
}

void put_value(OpCall& c, int i, const tsr_value& v) {
  if (v.tag == TSR_VALUE_INT && arg(c, i).kind == ArgKind::kIntList) {
    put_int(c, i, v.u.i);
    return;
  }
  c.args[i] = v;
}

void finish(OpCall& c) {
  fill_defaults(c);
  run_op(c);
}

OpResults take_results(OpCall& c) {
  OpResults r;
  for (int32_t k = 0; k < c.nresults; ++k) r.r[k] = std::move(c.results[k]);
  r.n = c.nresults;
  return r;
}

Runtime* runtime_of(TensorImpl* t, OpId id) {
  if (t == nullptr)
    fail(TSR_INTERNAL,
         "internal call of op '{}' without a runtime: its first tensor argument is null; pass "
         "the runtime",
         Registry::get().op(id).name);
  return t->runtime;
}

}  // namespace detail

OpResults call_values(Runtime* runtime, OpId id, std::span<const tsr_value> args) {
  OpCall c;
  detail::begin(c, runtime, id, static_cast<int32_t>(args.size()));
  int i = 0;
  for (const tsr_value& v : args) detail::put_value(c, i++, v);
  detail::finish(c);
  return detail::take_results(c);
}

}  // namespace tsr::op
