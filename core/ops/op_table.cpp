// The op table: every op of the registry as one row of data. Order must match
// OpId (op_ids.h); the registry checks it at start-up.
#include "ops/op_table.h"
#include "ops/op_impls.h"

namespace tsr {

namespace {
constexpr tsr_op_kind P = TSR_OP_PRIMITIVE, C = TSR_OP_COMPOSITE, V = TSR_OP_VIEW;
}

const std::vector<OpRow>& op_table() {
  using namespace ops;
  static const std::vector<OpRow> rows = {
      // ---- primitives: a plugin kernel computes them -------------------------
      {OpId::copy_, "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", P,
       copy_, OpId::copy_},
      {OpId::fill__Scalar, "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", P, fill_,
       OpId::fill__Scalar},
      {OpId::add_Tensor, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", P,
       add_Tensor, OpId::add_Tensor},
      {OpId::sub_Tensor, "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", P,
       sub_Tensor, OpId::sub_Tensor},
      {OpId::mul_Tensor, "mul.Tensor(Tensor self, Tensor other) -> Tensor", P, mul_Tensor,
       OpId::mul_Tensor},
      {OpId::div_Tensor, "div.Tensor(Tensor self, Tensor other) -> Tensor", P, div_Tensor,
       OpId::div_Tensor},
      {OpId::mm, "mm(Tensor self, Tensor mat2) -> Tensor", P, mm, OpId::mm},
      {OpId::bmm, "bmm(Tensor self, Tensor mat2) -> Tensor", P, bmm, OpId::bmm},
      {OpId::sum_dim_IntList,
       "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) "
       "-> Tensor",
       P, sum_dim, OpId::sum_dim_IntList},
      {OpId::mean_dim,
       "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
       "Tensor",
       P, mean_dim, OpId::mean_dim},
      // ---- derived overloads: run their primitive's kernel ---------------------
      {OpId::add_Scalar, "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", P,
       add_Scalar, OpId::add_Tensor},
      {OpId::add__Tensor,
       "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", P,
       add__Tensor, OpId::add_Tensor},
      {OpId::add__Scalar,
       "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", P, add__Scalar,
       OpId::add_Tensor},
      {OpId::add_out,
       "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", P,
       add_out, OpId::add_Tensor},
      {OpId::sub_Scalar, "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", P,
       sub_Scalar, OpId::sub_Tensor},
      {OpId::sub__Tensor,
       "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", P,
       sub__Tensor, OpId::sub_Tensor},
      {OpId::sub__Scalar,
       "sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", P, sub__Scalar,
       OpId::sub_Tensor},
      {OpId::sub_out,
       "sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", P,
       sub_out, OpId::sub_Tensor},
      {OpId::mul_Scalar, "mul.Scalar(Tensor self, Scalar other) -> Tensor", P, mul_Scalar,
       OpId::mul_Tensor},
      {OpId::mul__Tensor, "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", P,
       mul__Tensor, OpId::mul_Tensor},
      {OpId::mul__Scalar, "mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", P,
       mul__Scalar, OpId::mul_Tensor},
      {OpId::mul_out, "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", P,
       mul_out, OpId::mul_Tensor},
      {OpId::div_Scalar, "div.Scalar(Tensor self, Scalar other) -> Tensor", P, div_Scalar,
       OpId::div_Tensor},
      {OpId::div__Tensor, "div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", P,
       div__Tensor, OpId::div_Tensor},
      {OpId::div__Scalar, "div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", P,
       div__Scalar, OpId::div_Tensor},
      {OpId::div_out, "div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", P,
       div_out, OpId::div_Tensor},
      {OpId::sum, "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", P, ops::sum,
       OpId::sum_dim_IntList},
      {OpId::mean, "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", P, ops::mean,
       OpId::mean_dim},
      {OpId::mm_out, "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", P, mm_out,
       OpId::mm},
      {OpId::bmm_out, "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", P,
       bmm_out, OpId::bmm},
      // ---- composites: decompositions into the ops above ------------------------
      {OpId::matmul, "matmul(Tensor self, Tensor other) -> Tensor", C, matmul, OpId::kNone},
      {OpId::clone, "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", C, clone,
       OpId::kNone},
      {OpId::contiguous,
       "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
       C, contiguous, OpId::kNone},
      {OpId::_to_copy,
       "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool "
       "non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
       C, to_copy, OpId::kNone},
      {OpId::zeros_like,
       "zeros_like(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? "
       "memory_format=None) -> Tensor",
       C, zeros_like, OpId::kNone},
      {OpId::ones_like,
       "ones_like(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? "
       "memory_format=None) -> Tensor",
       C, ones_like, OpId::kNone},
      // ---- views: metadata only, every device ------------------------------------
      {OpId::view, "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", V, view, OpId::kNone},
      {OpId::reshape, "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", C, reshape,
       OpId::kNone},
      {OpId::transpose_int, "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", V,
       transpose, OpId::kNone},
      {OpId::t, "t(Tensor(a) self) -> Tensor(a)", V, ops::t, OpId::kNone},
      {OpId::permute, "permute(Tensor(a) self, int[] dims) -> Tensor(a)", V, permute, OpId::kNone},
      {OpId::slice_Tensor,
       "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
       "step=1) -> Tensor(a)",
       V, slice, OpId::kNone},
      {OpId::select_int, "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", V,
       select, OpId::kNone},
      {OpId::expand, "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
       V, expand, OpId::kNone},
      {OpId::squeeze, "squeeze(Tensor(a) self) -> Tensor(a)", V, squeeze, OpId::kNone},
      {OpId::squeeze_dim, "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", V, squeeze_dim,
       OpId::kNone},
      {OpId::unsqueeze, "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", V, unsqueeze,
       OpId::kNone},
      {OpId::as_strided,
       "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> "
       "Tensor(a)",
       V, as_strided, OpId::kNone},
      {OpId::detach, "detach(Tensor(a) self) -> Tensor(a)", V, detach, OpId::kNone},
      {OpId::alias, "alias(Tensor(a) self) -> Tensor(a)", V, alias, OpId::kNone},
  };
  return rows;
}

}  // namespace tsr
