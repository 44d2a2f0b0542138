// Shorthands over the internal op API (dispatch/op_api.h) for the calls that
// op implementations, decompositions and derivative formulas make most:
// arithmetic, comparisons, reductions, views and reshapes, copies and fills.
// Each is exactly one registry op (named beside it), run in the runtime of its
// first tensor through run_op, so it is observed, records under grad mode and
// runs on the tensors' device. Tensors are given as TensorImpl* or TensorRef;
// results are new references. Errors of the op propagate as tsr::Error.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "dispatch/op_api.h"
#include "ops/op_util.h"

namespace tsr::op {

// A tensor argument: a borrowed TensorImpl* or TensorRef (not owned).
struct TensorArg {
  TensorImpl* t;
  TensorArg(TensorImpl* p) : t(p) {}             // NOLINT(google-explicit-constructor)
  TensorArg(const TensorRef& r) : t(r.get()) {}  // NOLINT(google-explicit-constructor)
};

// An int list argument: borrowed, valid for the call (a braced list lives
// until the end of the full expression).
// A braced list is copied in (at most TSR_MAX_DIMS values).
struct IntArg {
  const int64_t* p;
  size_t n;
  Shape own;
  IntArg(const Shape& s) : p(s.sizes), n(static_cast<size_t>(s.ndim)) {}  // NOLINT
  IntArg(std::span<const int64_t> s) : p(s.data()), n(s.size()) {}        // NOLINT
  IntArg(const std::vector<int64_t>& v) : p(v.data()), n(v.size()) {}     // NOLINT
  IntArg(std::initializer_list<int64_t> l) : own(ints(l)) {               // NOLINT
    p = own.sizes;
    n = static_cast<size_t>(own.ndim);
  }
  IntArg(const IntArg& o) : p(o.p), n(o.n), own(o.own) {
    if (o.p == o.own.sizes) p = own.sizes;
  }
  IntArg& operator=(const IntArg&) = delete;
  std::span<const int64_t> span() const { return {p, n}; }
};

// ---- arithmetic: add/sub/mul/div .Tensor and .Scalar, neg -------------------
inline TensorRef add(TensorArg a, TensorArg b) { return call(OpId::add_Tensor, a.t, b.t); }
inline TensorRef add(TensorArg a, double k) { return call(OpId::add_Scalar, a.t, k); }
inline TensorRef sub(TensorArg a, TensorArg b) { return call(OpId::sub_Tensor, a.t, b.t); }
inline TensorRef mul(TensorArg a, TensorArg b) { return call(OpId::mul_Tensor, a.t, b.t); }
inline TensorRef mul(TensorArg a, double k) { return call(OpId::mul_Scalar, a.t, k); }
inline TensorRef div(TensorArg a, TensorArg b) { return call(OpId::div_Tensor, a.t, b.t); }
inline TensorRef div(TensorArg a, double k) { return call(OpId::div_Scalar, a.t, k); }
inline TensorRef neg(TensorArg a) { return call(OpId::neg, a.t); }
// k - a, as neg then add.Scalar.
inline TensorRef rsub(double k, TensorArg a) { return add(neg(a), k); }
// a * a (mul.Tensor).
inline TensorRef square(TensorArg a) { return mul(a, a); }
// A one-tensor op `id` (exp, sin, sigmoid ...).
inline TensorRef unary(OpId id, TensorArg a) { return call(id, a.t); }

// ---- pointwise functions ------------------------------------------------------
inline TensorRef exp(TensorArg a) { return call(OpId::exp, a.t); }
inline TensorRef log(TensorArg a) { return call(OpId::log, a.t); }
inline TensorRef log1p(TensorArg a) { return call(OpId::log1p, a.t); }
inline TensorRef rsqrt(TensorArg a) { return call(OpId::rsqrt, a.t); }
inline TensorRef abs(TensorArg a) { return call(OpId::abs, a.t); }
inline TensorRef maximum(TensorArg a, TensorArg b) { return call(OpId::maximum, a.t, b.t); }
inline TensorRef minimum(TensorArg a, TensorArg b) { return call(OpId::minimum, a.t, b.t); }
// clamp(a, min=lo) and clamp(a, max=hi).
inline TensorRef clamp_min(TensorArg a, double lo) { return call(OpId::clamp, a.t, lo, none); }
inline TensorRef clamp_max(TensorArg a, double hi) { return call(OpId::clamp, a.t, none, hi); }
// where.self: cond ? a : b.
inline TensorRef where(TensorArg cond, TensorArg a, TensorArg b) {
  return call(OpId::where_self, cond.t, a.t, b.t);
}
// Comparisons with a Scalar (eq/ne take an int Scalar, the others a float one).
inline TensorRef eq(TensorArg a, int64_t k) { return call(OpId::eq_Scalar, a.t, k); }
inline TensorRef ne(TensorArg a, int64_t k) { return call(OpId::ne_Scalar, a.t, k); }
inline TensorRef gt(TensorArg a, double k) { return call(OpId::gt_Scalar, a.t, k); }
inline TensorRef lt(TensorArg a, double k) { return call(OpId::lt_Scalar, a.t, k); }
inline TensorRef ge(TensorArg a, double k) { return call(OpId::ge_Scalar, a.t, k); }
inline TensorRef le(TensorArg a, double k) { return call(OpId::le_Scalar, a.t, k); }

// ---- reductions ----------------------------------------------------------------
inline TensorRef sum(TensorArg a) { return call(OpId::sum, a.t); }
inline TensorRef sum(TensorArg a, IntArg dims, bool keepdim) {
  return call(OpId::sum_dim_IntList, a.t, dims.span(), keepdim);
}
inline TensorRef mean(TensorArg a) { return call(OpId::mean, a.t); }
inline TensorRef mean(TensorArg a, IntArg dims, bool keepdim) {
  return call(OpId::mean_dim, a.t, dims.span(), keepdim);
}
inline TensorRef all(TensorArg a) { return call(OpId::all, a.t); }
// _softmax / _log_softmax along `dim` (half_to_float false).
inline TensorRef softmax(TensorArg a, int64_t dim) { return call(OpId::_softmax, a.t, dim, false); }
inline TensorRef log_softmax(TensorArg a, int64_t dim) {
  return call(OpId::_log_softmax, a.t, dim, false);
}

// ---- indexing --------------------------------------------------------------------
inline TensorRef gather(TensorArg a, int64_t dim, TensorArg index) {
  return call(OpId::gather, a.t, dim, index.t);
}
inline TensorRef index_select(TensorArg a, int64_t dim, TensorArg index) {
  return call(OpId::index_select, a.t, dim, index.t);
}

// ---- views, reshapes and products ------------------------------------------------
inline TensorRef view(TensorArg a, IntArg sizes) { return call(OpId::view, a.t, sizes.span()); }
inline TensorRef reshape(TensorArg a, IntArg sizes) {
  return call(OpId::reshape, a.t, sizes.span());
}
inline TensorRef expand(TensorArg a, IntArg sizes) { return call(OpId::expand, a.t, sizes.span()); }
inline TensorRef permute(TensorArg a, IntArg dims) { return call(OpId::permute, a.t, dims.span()); }
inline TensorRef unsqueeze(TensorArg a, int64_t dim) { return call(OpId::unsqueeze, a.t, dim); }
// squeeze.dim
inline TensorRef squeeze(TensorArg a, int64_t dim) { return call(OpId::squeeze_dim, a.t, dim); }
// transpose.int
inline TensorRef transpose(TensorArg a, int64_t d0, int64_t d1) {
  return call(OpId::transpose_int, a.t, d0, d1);
}
// slice.Tensor and select.int.
inline TensorRef slice(TensorArg a, int64_t dim, int64_t start, int64_t end, int64_t step = 1) {
  return call(OpId::slice_Tensor, a.t, dim, start, end, step);
}
// narrow
inline TensorRef narrow(TensorArg a, int64_t dim, int64_t start, int64_t length) {
  return call(OpId::narrow, a.t, dim, start, length);
}
inline TensorRef select(TensorArg a, int64_t dim, int64_t index) {
  return call(OpId::select_int, a.t, dim, index);
}
inline TensorRef as_strided(TensorArg a, IntArg sizes, IntArg strides, int64_t offset) {
  return call(OpId::as_strided, a.t, sizes.span(), strides.span(), offset);
}
// `a` itself when it is already contiguous, else the contiguous op.
inline TensorRef contiguous(TensorArg a) {
  if (a.t->contiguous) return TensorRef::borrow(a.t);
  return call(OpId::contiguous, a.t);
}
// `a` as one dim: itself when 1-d, else reshape to [-1].
inline TensorRef flatten(TensorArg a) {
  if (a.t->ndim == 1) return TensorRef::borrow(a.t);
  return reshape(a, {-1});
}
inline TensorRef matmul(TensorArg a, TensorArg b) { return call(OpId::matmul, a.t, b.t); }

// ---- copies and new tensors -------------------------------------------------------
// dst.copy_(src): broadcast, conversion, version bump.
inline void copy_(TensorArg dst, TensorArg src) { call(OpId::copy_, dst.t, src.t); }
inline TensorRef zeros_like(TensorArg a) { return call(OpId::zeros_like, a.t); }
// A new contiguous, uninitialised tensor on `like`'s device (no op: memory only).
inline TensorRef empty(TensorArg like, tsr_dtype dtype, IntArg sizes) {
  return new_tensor(like.t->runtime, like.t->device(), dtype, static_cast<int32_t>(sizes.n),
                    sizes.p);
}
// A new tensor of `shape` on `dev` holding `value` (filled by fill_.Scalar).
inline TensorRef full(Runtime* rt, DeviceRecord* dev, tsr_dtype dtype, const Shape& shape,
                      const tsr_scalar& value) {
  TensorRef t = new_tensor(rt, dev, dtype, shape);
  call(rt, OpId::fill__Scalar, t, value);
  return t;
}

}  // namespace tsr::op
