#include "dispatch/normalise.h"

#include "dispatch/normalise.h"
#include "dispatch/op_call.h"
#include "dispatch/values.h"
#include "registry/registry.h"
#include "runtime/generator.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr {

const char* OpCall::arg_name(int i) const { return op->schema.args[i].name.c_str(); }

namespace {

const char* tag_name(int32_t tag) {
  switch (tag) {
    case TSR_VALUE_NONE:
      return "None";
    case TSR_VALUE_TENSOR:
      return "a Tensor";
    case TSR_VALUE_INT:
      return "an int";
    case TSR_VALUE_FLOAT:
      return "a float";
    case TSR_VALUE_BOOL:
      return "a bool";
    case TSR_VALUE_SCALAR:
      return "a Scalar";
    case TSR_VALUE_INT_LIST:
      return "an int list";
    case TSR_VALUE_FLOAT_LIST:
      return "a float list";
    case TSR_VALUE_BOOL_LIST:
      return "a bool list";
    case TSR_VALUE_TENSOR_LIST:
      return "a Tensor list";
    case TSR_VALUE_STRING:
      return "a string";
    case TSR_VALUE_DTYPE:
      return "a ScalarType";
    case TSR_VALUE_DEVICE:
      return "a Device";
    case TSR_VALUE_MEMORY_FORMAT:
      return "a MemoryFormat";
    case TSR_VALUE_GENERATOR:
      return "a Generator";
    default:
      return "an unknown tag";
  }
}

[[noreturn]] void type_error(const OpCall& c, int i, const tsr_value& v) {
  const SchemaArg& a = c.op->schema.args[i];
  fail(TSR_INVALID_ARGUMENT,
       "op '{}': argument '{}' (position {}) must be {}, got {} (tag {}); schema: {}", c.op->name,
       a.name, i, a.type_text, tag_name(v.tag), v.tag, c.op->canonical);
}

void normalise_one(OpCall& c, int i, const tsr_value& v) {
  const SchemaArg& a = c.op->schema.args[i];
  tsr_value& out = c.args[i];
  if (v.tag == TSR_VALUE_NONE) {
    if (!a.optional) type_error(c, i, v);
    out = tsr_value{};
    return;
  }
  switch (a.kind) {
    case ArgKind::kTensor: {
      if (v.tag != TSR_VALUE_TENSOR) type_error(c, i, v);
      TensorImpl* t = from_handle(v.u.tensor, a.name.c_str());
      if (t->runtime != c.runtime)
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument '{}' belongs to another runtime than the op handle; create "
             "tensors and find ops in one runtime",
             c.op->name, a.name);
      out = v_tensor(t);
      return;
    }
    case ArgKind::kInt:
      if (v.tag != TSR_VALUE_INT) type_error(c, i, v);
      out = v;
      return;
    case ArgKind::kIntList:
      if (v.tag == TSR_VALUE_INT) {
        c.int_scratch[i] = v.u.i;
        out = v_ints(&c.int_scratch[i], 1);
        return;
      }
      if (v.tag != TSR_VALUE_INT_LIST) type_error(c, i, v);
      if (v.len < 0 || v.len > TSR_MAX_DIMS || (v.len > 0 && v.u.ints == nullptr))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument '{}' is an int list of length {} with {} data; lists hold 0 to "
             "{} entries and need data when non-empty",
             c.op->name, a.name, v.len, v.u.ints ? "non-NULL" : "NULL", TSR_MAX_DIMS);
      out = v;
      return;
    case ArgKind::kFloat:
      if (v.tag == TSR_VALUE_FLOAT) {
        out = v;
      } else if (v.tag == TSR_VALUE_INT) {
        out.tag = TSR_VALUE_FLOAT;
        out.len = 0;
        out.u.f = static_cast<double>(v.u.i);
      } else {
        type_error(c, i, v);
      }
      return;
    case ArgKind::kBool:
      if (v.tag != TSR_VALUE_BOOL) type_error(c, i, v);
      out = v_bool(v.u.b != 0);
      return;
    case ArgKind::kScalar: {
      tsr_scalar s{};
      if (v.tag == TSR_VALUE_SCALAR) {
        s = v.u.scalar;
        if (s.kind != TSR_BOOL && s.kind != TSR_INT64 && s.kind != TSR_FLOAT64 &&
            s.kind != TSR_COMPLEX128)
          fail(TSR_INVALID_ARGUMENT,
               "op '{}': argument '{}' is a Scalar of kind {}; a Scalar's kind must be TSR_BOOL, "
               "TSR_INT64, TSR_FLOAT64 or TSR_COMPLEX128",
               c.op->name, a.name, s.kind);
      } else if (v.tag == TSR_VALUE_INT) {
        s = scalar_int(v.u.i);
      } else if (v.tag == TSR_VALUE_FLOAT) {
        s = scalar_float(v.u.f);
      } else if (v.tag == TSR_VALUE_BOOL) {
        s.kind = TSR_BOOL;
        s.v.i = v.u.b != 0;
      } else {
        type_error(c, i, v);
      }
      out = v_scalar(s);
      return;
    }
    case ArgKind::kScalarType:
      if (v.tag != TSR_VALUE_DTYPE) type_error(c, i, v);
      if (!dtype_valid(static_cast<int32_t>(v.u.i)))
        fail(TSR_INVALID_ARGUMENT, "op '{}': argument '{}' = {} is not a valid dtype", c.op->name,
             a.name, v.u.i);
      out = v;
      return;
    case ArgKind::kDevice:
      if (v.tag != TSR_VALUE_DEVICE) type_error(c, i, v);
      c.runtime->device(v.u.device, a.name.c_str());  // exists?
      out = v;
      return;
    case ArgKind::kMemoryFormat:
      if (v.tag != TSR_VALUE_MEMORY_FORMAT) type_error(c, i, v);
      if (v.u.i < TSR_CONTIGUOUS_FORMAT || v.u.i > TSR_PRESERVE_FORMAT)
        fail(TSR_INVALID_ARGUMENT, "op '{}': argument '{}' = {} is not a valid memory format",
             c.op->name, a.name, v.u.i);
      out = v;
      return;
    case ArgKind::kStr:
      if (v.tag != TSR_VALUE_STRING || v.u.str == nullptr) type_error(c, i, v);
      out = v;
      return;
    case ArgKind::kTensorList: {
      if (v.tag != TSR_VALUE_TENSOR_LIST) type_error(c, i, v);
      if (v.len < 0 || (v.len > 0 && v.u.tensors == nullptr))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument '{}' is a Tensor list of length {} with {} data; pass a "
             "non-negative length and an array of that many handles",
             c.op->name, a.name, v.len, v.u.tensors ? "non-NULL" : "NULL");
      c.list_storage.emplace_back(new TensorImpl*[v.len > 0 ? v.len : 1]);
      TensorImpl** dst = c.list_storage.back().get();
      for (int32_t j = 0; j < v.len; ++j) {
        tsr_tensor* h = v.u.tensors[j];
        if (h == nullptr) {
          if (!a.elem_optional)
            fail(TSR_INVALID_ARGUMENT,
                 "op '{}': argument '{}' entry {} is NULL; this list ({}) takes tensors only",
                 c.op->name, a.name, j, a.type_text);
          dst[j] = nullptr;
          continue;
        }
        std::string what = fmt::format("{}[{}]", a.name, j);
        TensorImpl* t = from_handle(h, what.c_str());
        if (t->runtime != c.runtime)
          fail(TSR_INVALID_ARGUMENT,
               "op '{}': argument '{}' entry {} belongs to another runtime than the op handle",
               c.op->name, a.name, j);
        dst[j] = t;
      }
      out = v_tensors(dst, v.len);
      return;
    }
    case ArgKind::kFloatList:
      if (v.tag != TSR_VALUE_FLOAT_LIST) type_error(c, i, v);
      if (v.len < 0 || (v.len > 0 && v.u.floats == nullptr))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument '{}' is a float list of length {} with {} data", c.op->name, a.name,
             v.len, v.u.floats ? "non-NULL" : "NULL");
      out = v;
      return;
    case ArgKind::kBoolList:
      if (v.tag != TSR_VALUE_BOOL_LIST) type_error(c, i, v);
      if (v.len < 0 || (v.len > 0 && v.u.bools == nullptr))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument '{}' is a bool list of length {} with {} data", c.op->name, a.name,
             v.len, v.u.bools ? "non-NULL" : "NULL");
      out = v;
      return;
    case ArgKind::kGenerator:
      if (v.tag != TSR_VALUE_GENERATOR) type_error(c, i, v);
      out = v;
      out.u.generator = check_generator(v.u.generator, c.runtime, a.name.c_str());
      return;
    default:
      fail(TSR_UNIMPLEMENTED, "op '{}': arguments of type {} ('{}') are not supported yet",
           c.op->name, a.type_text, a.name);
  }
}

}  // namespace

void normalise_args(OpCall& c, const tsr_value* args, size_t nargs) {
  const Schema& s = c.op->schema;
  if (nargs > s.args.size())
    fail(TSR_INVALID_ARGUMENT, "op '{}' takes at most {} arguments but {} were given; schema: {}",
         c.op->name, s.args.size(), nargs, c.op->canonical);
  if (nargs > 0 && args == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument 'args' is NULL but nargs is {}", nargs);
  for (size_t i = 0; i < nargs; ++i) normalise_one(c, static_cast<int>(i), args[i]);
  c.nargs = static_cast<int32_t>(nargs);
  fill_defaults(c);
}

void fill_defaults(OpCall& c) {
  const Schema& s = c.op->schema;
  for (size_t i = static_cast<size_t>(c.nargs); i < s.args.size(); ++i) {
    const SchemaArg& a = s.args[i];
    if (!a.has_default)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': required argument '{}' (position {}, {}) is missing; schema: {}", c.op->name,
           a.name, i, a.type_text, c.op->canonical);
    c.args[i] = a.default_value;
  }
  c.nargs = static_cast<int32_t>(s.args.size());
}

}  // namespace tsr
