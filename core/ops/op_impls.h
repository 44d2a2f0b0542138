// Implementations of the registry's ops (one OpFn each), grouped by file:
// elementwise.cpp, reduction.cpp, linalg.cpp, views.cpp, conversion.cpp.
// They are referenced only by the op table (op_table.cpp).
#pragma once

#include "ops/registry.h"

namespace tsr::ops {

// elementwise.cpp
void copy_(OpCall& c);
void fill_(OpCall& c);
void add_Tensor(OpCall& c);
void sub_Tensor(OpCall& c);
void mul_Tensor(OpCall& c);
void div_Tensor(OpCall& c);
void add_Scalar(OpCall& c);
void sub_Scalar(OpCall& c);
void mul_Scalar(OpCall& c);
void div_Scalar(OpCall& c);
void add__Tensor(OpCall& c);
void sub__Tensor(OpCall& c);
void mul__Tensor(OpCall& c);
void div__Tensor(OpCall& c);
void add__Scalar(OpCall& c);
void sub__Scalar(OpCall& c);
void mul__Scalar(OpCall& c);
void div__Scalar(OpCall& c);
void add_out(OpCall& c);
void sub_out(OpCall& c);
void mul_out(OpCall& c);
void div_out(OpCall& c);
// reduction.cpp
void sum_dim(OpCall& c);
void mean_dim(OpCall& c);
void sum(OpCall& c);
void mean(OpCall& c);
// linalg.cpp
void mm(OpCall& c);
void bmm(OpCall& c);
void mm_out(OpCall& c);
void bmm_out(OpCall& c);
void matmul(OpCall& c);
// conversion.cpp
void clone(OpCall& c);
void contiguous(OpCall& c);
void to_copy(OpCall& c);
void zeros_like(OpCall& c);
void ones_like(OpCall& c);
// views.cpp
void view(OpCall& c);
void reshape(OpCall& c);
void transpose(OpCall& c);
void t(OpCall& c);
void permute(OpCall& c);
void slice(OpCall& c);
void select(OpCall& c);
void expand(OpCall& c);
void squeeze(OpCall& c);
void squeeze_dim(OpCall& c);
void unsqueeze(OpCall& c);
void as_strided(OpCall& c);
void detach(OpCall& c);
void alias(OpCall& c);

}  // namespace tsr::ops
