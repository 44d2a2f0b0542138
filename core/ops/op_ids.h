// Stable ids of the registry's ops, in registration order (ops/op_table.cpp).
#pragma once

#include <cstdint>

namespace tsr {

enum class OpId : uint32_t {
  // primitives
  copy_,
  fill__Scalar,
  add_Tensor,
  sub_Tensor,
  mul_Tensor,
  div_Tensor,
  mm,
  bmm,
  sum_dim_IntList,
  mean_dim,
  // derived overloads of primitives
  add_Scalar,
  add__Tensor,
  add__Scalar,
  add_out,
  sub_Scalar,
  sub__Tensor,
  sub__Scalar,
  sub_out,
  mul_Scalar,
  mul__Tensor,
  mul__Scalar,
  mul_out,
  div_Scalar,
  div__Tensor,
  div__Scalar,
  div_out,
  sum,
  mean,
  mm_out,
  bmm_out,
  // composites
  matmul,
  clone,
  contiguous,
  _to_copy,
  zeros_like,
  ones_like,
  // views
  view,
  reshape,
  transpose_int,
  t,
  permute,
  slice_Tensor,
  select_int,
  expand,
  squeeze,
  squeeze_dim,
  unsqueeze,
  as_strided,
  detach,
  alias,
  kCount,
  kNone = 0xffffffffu
};

constexpr uint32_t kOpCount = static_cast<uint32_t>(OpId::kCount);

}  // namespace tsr
