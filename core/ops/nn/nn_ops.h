// Helpers of the nn family's decompositions: short calls of registry ops
// (their OpIds looked up once by name, so this family has no compile-time
// dependency on the others), argument checks shared by the nn ops, and the
// fused-kernel call. Everything here throws tsr::Error; results are new
// references.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/call.h"
#include "dispatch/kernel_call.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "tensor/dtype.h"
#include "util/error.h"

namespace tsr::nn {

// A string literal as a template argument: the cache key of id<>().
template <size_t N>
struct OpName {
  constexpr OpName(const char (&text)[N]) { std::copy_n(text, N, value); }  // NOLINT
  char value[N];
};

// The id of the registry op `Name`, looked up on first use (an op of another
// family that is missing throws INTERNAL naming it, and is looked up again on
// the next call).
template <OpName Name>
OpId id() {
  static const OpId op = op_named(std::string_view(Name.value));
  return op;
}

inline tsr_value tv(TensorImpl* t) { return v_tensor(t); }
inline tsr_value tv(const TensorRef& t) { return v_tensor(t.get()); }
inline tsr_value sv(double f) { return v_scalar(scalar_float(f)); }
inline tsr_value siv(int64_t i) { return v_scalar(scalar_int(i)); }

// ---- arithmetic (basic.def) ------------------------------------------------
inline TensorRef add(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, OpId::add_Tensor, {tv(a), tv(b)});
}
inline TensorRef sub(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, OpId::sub_Tensor, {tv(a), tv(b)});
}
inline TensorRef mul(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, OpId::mul_Tensor, {tv(a), tv(b)});
}
inline TensorRef div(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, OpId::div_Tensor, {tv(a), tv(b)});
}
inline TensorRef add_s(Runtime* rt, const TensorRef& a, double s) {
  return call_op(rt, OpId::add_Scalar, {tv(a), sv(s)});
}
inline TensorRef mul_s(Runtime* rt, const TensorRef& a, double s) {
  return call_op(rt, OpId::mul_Scalar, {tv(a), sv(s)});
}
inline TensorRef div_s(Runtime* rt, const TensorRef& a, double s) {
  return call_op(rt, OpId::div_Scalar, {tv(a), sv(s)});
}
// s - a
inline TensorRef rsub_s(Runtime* rt, const TensorRef& a, double s) {
  return add_s(rt, mul_s(rt, a, -1.0), s);
}

// ---- pointwise family ------------------------------------------------------
inline TensorRef exp(Runtime* rt, const TensorRef& a) { return call_op(rt, id<"exp">(), {tv(a)}); }
inline TensorRef log(Runtime* rt, const TensorRef& a) { return call_op(rt, id<"log">(), {tv(a)}); }
inline TensorRef log1p(Runtime* rt, const TensorRef& a) {
  return call_op(rt, id<"log1p">(), {tv(a)});
}
inline TensorRef rsqrt(Runtime* rt, const TensorRef& a) {
  return call_op(rt, id<"rsqrt">(), {tv(a)});
}
inline TensorRef abs(Runtime* rt, const TensorRef& a) { return call_op(rt, id<"abs">(), {tv(a)}); }
inline TensorRef maximum(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, id<"maximum">(), {tv(a), tv(b)});
}
inline TensorRef minimum(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, id<"minimum">(), {tv(a), tv(b)});
}
inline TensorRef clamp_min(Runtime* rt, const TensorRef& a, double lo) {
  return call_op(rt, id<"clamp">(), {tv(a), sv(lo), v_none()});
}
inline TensorRef clamp_max(Runtime* rt, const TensorRef& a, double hi) {
  return call_op(rt, id<"clamp">(), {tv(a), v_none(), sv(hi)});
}
inline TensorRef where(Runtime* rt, const TensorRef& cond, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, id<"where.self">(), {tv(cond), tv(a), tv(b)});
}
inline TensorRef eq_s(Runtime* rt, const TensorRef& a, int64_t s) {
  return call_op(rt, id<"eq.Scalar">(), {tv(a), siv(s)});
}
inline TensorRef ne_s(Runtime* rt, const TensorRef& a, int64_t s) {
  return call_op(rt, id<"ne.Scalar">(), {tv(a), siv(s)});
}
inline TensorRef lt_s(Runtime* rt, const TensorRef& a, double s) {
  return call_op(rt, id<"lt.Scalar">(), {tv(a), sv(s)});
}
inline TensorRef ge_s(Runtime* rt, const TensorRef& a, double s) {
  return call_op(rt, id<"ge.Scalar">(), {tv(a), sv(s)});
}
inline TensorRef le_s(Runtime* rt, const TensorRef& a, double s) {
  return call_op(rt, id<"le.Scalar">(), {tv(a), sv(s)});
}

// ---- reduction family -------------------------------------------------------
inline TensorRef sum_dims(Runtime* rt, const TensorRef& a, const std::vector<int64_t>& dims,
                          bool keepdim) {
  return call_op(rt, OpId::sum_dim_IntList,
                 {tv(a), v_ints(dims.data(), static_cast<int32_t>(dims.size())), v_bool(keepdim)});
}
inline TensorRef sum_all(Runtime* rt, const TensorRef& a) {
  return call_op(rt, OpId::sum, {tv(a)});
}
inline TensorRef mean_dims(Runtime* rt, const TensorRef& a, const std::vector<int64_t>& dims,
                           bool keepdim) {
  return call_op(rt, OpId::mean_dim,
                 {tv(a), v_ints(dims.data(), static_cast<int32_t>(dims.size())), v_bool(keepdim)});
}
inline TensorRef mean_all(Runtime* rt, const TensorRef& a) {
  return call_op(rt, OpId::mean, {tv(a)});
}
inline TensorRef log_softmax(Runtime* rt, const TensorRef& a, int64_t dim) {
  return call_op(rt, id<"_log_softmax">(), {tv(a), v_int(dim), v_bool(false)});
}
inline TensorRef softmax(Runtime* rt, const TensorRef& a, int64_t dim) {
  return call_op(rt, id<"_softmax">(), {tv(a), v_int(dim), v_bool(false)});
}
inline TensorRef all(Runtime* rt, const TensorRef& a) { return call_op(rt, id<"all">(), {tv(a)}); }

// ---- indexing family -------------------------------------------------------
inline TensorRef gather(Runtime* rt, const TensorRef& a, int64_t dim, const TensorRef& index) {
  return call_op(rt, id<"gather">(), {tv(a), v_int(dim), tv(index)});
}
inline TensorRef index_select(Runtime* rt, const TensorRef& a, int64_t dim,
                              const TensorRef& index) {
  return call_op(rt, id<"index_select">(), {tv(a), v_int(dim), tv(index)});
}

// ---- views and shapes (basic.def) ------------------------------------------
inline TensorRef reshape(Runtime* rt, const TensorRef& a, const std::vector<int64_t>& shape) {
  return call_op(rt, OpId::reshape,
                 {tv(a), v_ints(shape.data(), static_cast<int32_t>(shape.size()))});
}
inline TensorRef expand(Runtime* rt, const TensorRef& a, const std::vector<int64_t>& shape) {
  return call_op(rt, OpId::expand,
                 {tv(a), v_ints(shape.data(), static_cast<int32_t>(shape.size()))});
}
inline TensorRef unsqueeze(Runtime* rt, const TensorRef& a, int64_t dim) {
  return call_op(rt, OpId::unsqueeze, {tv(a), v_int(dim)});
}
inline TensorRef squeeze_dim(Runtime* rt, const TensorRef& a, int64_t dim) {
  return call_op(rt, OpId::squeeze_dim, {tv(a), v_int(dim)});
}
inline TensorRef transpose(Runtime* rt, const TensorRef& a, int64_t d0, int64_t d1) {
  return call_op(rt, OpId::transpose_int, {tv(a), v_int(d0), v_int(d1)});
}
inline TensorRef matmul(Runtime* rt, const TensorRef& a, const TensorRef& b) {
  return call_op(rt, OpId::matmul, {tv(a), tv(b)});
}
inline TensorRef to_dtype(const TensorRef& a, tsr_dtype d) { return cast(a.get(), d); }

// ---- small utilities -------------------------------------------------------
inline std::vector<int64_t> sizes_of(const TensorImpl& t) {
  return std::vector<int64_t>(t.sizes, t.sizes + t.ndim);
}
inline std::string shape_text(const TensorImpl& t) { return shape_str(t.ndim, t.sizes); }
inline std::string shape_text(const std::vector<int64_t>& s) {
  return shape_str(static_cast<int32_t>(s.size()), s.data());
}
// A new tensor of `sizes` like `like` (device) holding `value` everywhere.
inline TensorRef full(Runtime* rt, const TensorImpl& like, tsr_dtype dtype,
                      const std::vector<int64_t>& sizes, double value) {
  TensorRef t =
      new_tensor(rt, like.device(), dtype, static_cast<int32_t>(sizes.size()), sizes.data());
  fill_raw(t.get(), dtype == TSR_BOOL ? scalar_int(value != 0.0) : scalar_float(value));
  return t;
}
// float32 for float16/bfloat16 (reduced-precision inputs compute in float32),
// else the dtype itself.
inline tsr_dtype acc_dtype(tsr_dtype d) {
  return d == TSR_FLOAT16 || d == TSR_BFLOAT16 ? TSR_FLOAT32 : d;
}

// Throws unless `t` is a real floating tensor (argument `arg` of op `op`).
inline void check_floating(const OpDef& op, const TensorImpl& t, const char* arg) {
  if (!is_floating(t.dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' has dtype {}, but the op is only implemented for floating "
         "dtypes (float16, bfloat16, float32, float64); convert it with to()",
         op.name, arg, dtype_name(t.dtype));
}

// The reduction enum of the loss ops: 0 none, 1 mean, 2 sum.
enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };
inline Reduction check_reduction(const OpDef& op, int64_t r) {
  if (r < 0 || r > 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'reduction' = {} is not a valid reduction; use 0 (none), 1 (mean) "
         "or 2 (sum)",
         op.name, r);
  return static_cast<Reduction>(r);
}
// Applies `reduction` to an elementwise loss.
inline TensorRef reduce_loss(Runtime* rt, const TensorRef& loss, Reduction r) {
  if (r == kMean) return mean_all(rt, loss);
  if (r == kSum) return sum_all(rt, loss);
  return loss;
}

// Calls the fused kernel `k` of `op` with `args` (tensor values given as
// TensorImpl*, converted to descriptors here) writing `outs`.
inline void run_fused(const OpDef& op, const BoundKernel& k, DeviceRecord* dev,
                      std::vector<tsr_value> args, const std::vector<TensorImpl*>& outs) {
  std::vector<tsr_tensor_desc> descs;
  descs.reserve(args.size() + outs.size());
  for (tsr_value& v : args) {
    if (v.tag != TSR_VALUE_TENSOR) continue;
    descs.push_back(reinterpret_cast<TensorImpl*>(v.u.tensor)->desc());
    v.u.desc = &descs.back();
  }
  std::vector<tsr_tensor_desc> out_descs;
  for (TensorImpl* o : outs) out_descs.push_back(o->desc());
  invoke_kernel(op, k, dev, args.data(), static_cast<int32_t>(args.size()), out_descs.data(),
                static_cast<int32_t>(out_descs.size()));
}

}  // namespace tsr::nn
