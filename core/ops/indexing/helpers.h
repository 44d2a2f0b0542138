// Building blocks of the shape and indexing families (core/ops/shape/,
// core/ops/indexing/): calls of the family's primitive kernels and argument
// checks shared by several ops (their op calls go through ops/shorthands.h,
// so a composite decomposes into registered ops that observers and autograd
// see). Every function takes the OpDef of the op the user called, for
// messages ("op 'index_select': argument 'index' ...").
#pragma once

#include <cstdint>
#include <initializer_list>

#include "dispatch/op_call.h"
#include "ops/op_util.h"
#include "ops/shorthands.h"
#include "registry/registry.h"

namespace tsr::ops::ix {

// ---- new tensors -------------------------------------------------------------
// A 0-d tensor holding `value` as `dtype` on `like`'s device.
TensorRef scalar(TensorImpl* like, const tsr_scalar& value, tsr_dtype dtype);

// ---- the family's primitives as kernel calls --------------------------------
// Kernels are skipped on the meta device and for empty work. 0-d tensors are
// handed to kernels as 1-d tensors of one element (the kernels need a dim).
//
// out = gather(self, dim, index): index int64 with self's ndim, out shaped like
// index. `dim` is already wrapped.
void gather_into(const OpDef& op, TensorImpl* self, int32_t dim, TensorImpl* index,
                 TensorImpl* out);
// self op= src at index along dim (tsr_scatter_op `code`); no checks beyond
// the kernel's, no version bump.
void scatter_into(const OpDef& op, TensorImpl* self, int32_t dim, TensorImpl* index,
                  TensorImpl* src, int32_t code);
// nonzero(self): [n, ndim] int64 through the two-phase protocol (one host
// synchronisation, Note [Two-phase calls]).
TensorRef nonzero_of(const OpDef& op, TensorImpl* self);
// Sorts along `dim` (wrapped) into new (values, indices); stable.
void sort_of(const OpDef& op, TensorImpl* self, int32_t dim, bool descending, TensorRef* values,
             TensorRef* indices);

// ---- checks --------------------------------------------------------------
// `index` as an int64 tensor (int32 is converted); INVALID_ARGUMENT naming the
// op and argument for any other dtype.
TensorRef long_index(const OpDef& op, TensorImpl* index, const char* arg);

// Throws unless `out` and `in` share no memory (an op that reads `in` while
// writing `out` elementwise out of order needs disjoint buffers).
void check_no_overlap(const OpDef& op, const TensorImpl& out, const char* out_name,
                      const TensorImpl& in, const char* in_name);
// The shape of `t` with 0-d read as 1-d of one element (what kernels see).
Shape kernel_shape(const TensorImpl& t);

}  // namespace tsr::ops::ix
