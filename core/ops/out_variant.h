// out= overloads: writing a result into a caller's tensor with PyTorch's rules,
// and the generic implementation of overloads declared with TSR_OUT.
//
// Note [Derived out= overloads]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Most `op.out` overloads in PyTorch compute exactly what their functional
// overload computes and then store it. Those are declared in the op definition
// files as TSR_OUT(id, functional, schema): the registry maps each argument of
// the functional schema to the out= schema's argument of the same name
// (checked when the registry is built, INTERNAL on a mismatch), so out_variant() runs the
// functional op and writes each of its results into the matching out tensor.
// A functional argument the out= schema lacks takes its default, except
// `dtype` and `device`, which take the first out tensor's (so rand(out=d)
// draws float64 bits for a float64 out). Overloads that compute into their
// out directly (add.out, sum.IntList_out, ...) are routed ops and do not come
// here.
#pragma once

#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "tensor/tensor_impl.h"

namespace tsr::ops {

// out= handling (PyTorch's rules): `out` is resized to result's shape (a
// non-empty out of another shape is resized too) and receives its values.
// With `exact_dtype` the dtypes must be equal (amax.out, argmax.out,
// softmax.out, index outputs ...), else result's dtype must be castable into
// out's (no float into an integer out). Bumps out's version; returns out
// borrowed. `out_name` names the argument in messages.
TensorRef write_out(const OpDef& op, TensorImpl* out, TensorImpl* result, bool exact_dtype,
                    const char* out_name = "out");

// The OpFn of every TSR_OUT op (Note [Derived out= overloads]). Index results
// (a functional return or an out argument named "indices") need an out of
// exactly their dtype; other results follow the castable rule.
void out_variant(OpCall& c);

}  // namespace tsr::ops
