// Shared pieces of the reduction family (reduction.def): resolving dim
// arguments, running the three family primitives (_reduce, _arg_reduce,
// _scan), shaping keepdim results, and writing results into out= tensors.
//
// Note [Reduction layout]
// ~~~~~~~~~~~~~~~~~~~~~~~
// Every reduction kernel writes a tensor with the input's ndim whose reduced
// dims have size 1 (stride 0 in the descriptor the kernel sees): the keepdim
// layout. The core allocates it contiguous and, when keepdim is false, returns
// a view without the reduced dims. Inputs reach the kernel already converted
// to the kernel dtype (opcodes.h); the dims list is resolved (non-negative,
// sorted, unique, every dim when the user gave none).
#pragma once

#include <cstdint>

#include "dispatch/op_call.h"
#include "ops/op_util.h"
#include "ops/out_variant.h"
#include "registry/registry.h"
#include "tensor/geometry.h"

namespace tsr::ops::reduction {

// Dims of `self` to reduce as a bit mask (bit d = dim d). `dims` is an int[]
// value (or None, or null); None, null and (when `empty_is_all`) an empty list
// mean every dim. Wraps negative dims, refuses repeats and out-of-range dims
// naming `arg`. A 0-d tensor reduces over nothing (mask 0) and accepts 0/-1.
uint32_t dim_mask(const OpDef& op, const TensorImpl& self, const tsr_value* dims,
                  bool empty_is_all = true, const char* arg = "dim");
// Wraps a possibly negative dim of a tensor of `ndim` dims (0-d accepts 0 and
// -1); OUT_OF_RANGE naming op, argument and the valid range otherwise.
int32_t wrap_dim_of(const OpDef& op, int64_t dim, int32_t ndim, const char* arg = "dim");
// The mask of a single int dim (0 for a 0-d tensor).
uint32_t single_dim_mask(const OpDef& op, const TensorImpl& self, int64_t dim,
                         const char* arg = "dim");
inline uint32_t all_dims_mask(const TensorImpl& self) {
  return self.ndim == 0 ? 0u : (1u << self.ndim) - 1u;
}

// The output shape of a reduction of `self` over `mask`.
Shape reduced_shape(const TensorImpl& self, uint32_t mask, bool keepdim);
// Number of elements each output element reduces.
int64_t reduced_count(const TensorImpl& self, uint32_t mask);

// Throws unless every reduced dim is non-empty (max, amax, argmax... have no
// identity). `all_dims` says the user gave no dim (PyTorch's wording then
// asks for one).
void check_nonempty(const OpDef& op, const TensorImpl& self, uint32_t mask, bool all_dims);
// Throws for complex inputs of ordering ops (max, argmax, cummax, ...).
void check_not_complex(const OpDef& op, const TensorImpl& self);

// A keepdim-layout result `keep` of reducing `in` over `mask`, viewed without
// the reduced dims unless `keepdim`.
TensorRef drop_dims(TensorRef keep, const TensorImpl& in, uint32_t mask, bool keepdim);

// Runs _reduce `code` over `mask` of `in` (already in the kernel dtype: out is
// in's dtype, bool for ANY/ALL). Returns the result shaped per `keepdim`.
// On the meta device only the metadata is computed. `op` names the user's op
// in messages.
TensorRef run_reduce(const OpDef& op, TensorImpl* in, int32_t code, uint32_t mask, bool keepdim);
// Runs _arg_reduce `code` along `dim` (wrapped) of `in`; int64 result.
TensorRef run_arg_reduce(const OpDef& op, TensorImpl* in, int32_t code, int32_t dim, bool keepdim);
// Runs _scan `code` along `dim` (wrapped) of `in`; result in in's dtype.
TensorRef run_scan(const OpDef& op, TensorImpl* in, int32_t code, int32_t dim);

// The dtype sum/prod/cumsum give `self` without a dtype argument: int64 for
// integer and bool inputs, else self's.
inline tsr_dtype widened_dtype(tsr_dtype self) {
  return is_integral(self, true) ? TSR_INT64 : self;
}

// A ScalarType? argument, or `fallback` when it is None.
inline tsr_dtype dtype_or(const OpCall& c, int arg, tsr_dtype fallback) {
  return c.is_none(arg) ? fallback : static_cast<tsr_dtype>(c.int_arg(arg));
}

// out= handling: ops::write_out (ops/out_variant.h).
using ::tsr::ops::write_out;

}  // namespace tsr::ops::reduction
