// The call frame of one op call (OpCall): what every op implementation, the
// autograd recorder and the kernel call read their arguments from, and where
// they leave their results. Built by normalise_args (application calls,
// dispatch/normalise.h) or by the internal op API (dispatch/op_api.h), and run
// by run_op (dispatch/run_op.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "registry/registry.h"
#include "tensor/tensor_impl.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;

// Note [Normalised frame]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A normalised call: arguments in schema order, defaults filled, types checked.
// Tensors travel as TensorImpl* (borrowed) in .u.tensor.
struct OpCall {
  static constexpr int kMaxArgs = kOpMaxArgs;
  static constexpr int kMaxResults = kOpMaxResults;
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

// Scalars as a frame holds them (a Scalar argument's value).
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
