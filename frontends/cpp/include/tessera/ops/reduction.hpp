// tessera/ops/reduction.hpp - typed wrappers of the reduction op family
// (core/registry/defs/reduction.def): reductions, arg reductions, statistics,
// norms, scans and softmax, with PyTorch's names, defaults and semantics.
//
// Ops returning two tensors (max_dim, aminmax, var_mean, cummax, ...) return
// a std::pair. Dims are IntList values (`{0, -1}` or one integer); the
// optional `dim` of var, std_dev, var_mean, std_mean, nansum and
// linalg_vector_norm is an OptionalDims (owned; see
// Note [Why not std::optional<IntList>] in dims.hpp). An empty list or
// std::nullopt means every dim.
// PyTorch's std() is std_dev() here (a function named `std` would hide the
// namespace std inside namespace tessera).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "tessera/boxed_call.hpp"
#include "tessera/tensor.hpp"

namespace tessera {
namespace detail {

// Calls `op` and adopts its first two results (tensors).
inline std::pair<Tensor, Tensor> call2(const tsr_op* op, const tsr_value* args, size_t nargs) {
  tsr_value results[2] = {};
  check(tsr_op_call(op, args, nargs, results, 2));
  for (const tsr_value& r : results) {
    if (r.tag != TSR_VALUE_TENSOR || r.u.tensor == nullptr) [[unlikely]] {
      throw_not_a_tensor(op, r);
    }
  }
  return {Tensor::adopt(results[0].u.tensor), Tensor::adopt(results[1].u.tensor)};
}

// Views `dims`' own storage: valid while `dims` lives (the caller's argument).
inline tsr_value value(const OptionalDims& dims) noexcept {
  return dims ? value(IntList(dims.dims())) : none();
}
inline tsr_value value(std::optional<int64_t> i) noexcept { return i ? value(*i) : none(); }

}  // namespace detail

// ---------------------------------------------------------------------------
// Sums and means (Tensor's members, tensor_methods.hpp)
// ---------------------------------------------------------------------------

// Sum of every element (0-d); integer and bool inputs sum to int64.
inline Tensor sum(const Tensor& self, std::optional<Dtype> dtype = std::nullopt) {
  return self.sum(dtype);
}
// Sum over `dims` (negative count from the end).
inline Tensor sum(const Tensor& self, IntList dims, bool keepdim = false,
                  std::optional<Dtype> dtype = std::nullopt) {
  return self.sum(dims, keepdim, dtype);
}
// Floating and complex inputs only (or give a floating `dtype`).
inline Tensor mean(const Tensor& self, std::optional<Dtype> dtype = std::nullopt) {
  return self.mean(dtype);
}
inline Tensor mean(const Tensor& self, IntList dims, bool keepdim = false,
                   std::optional<Dtype> dtype = std::nullopt) {
  return self.mean(dims, keepdim, dtype);
}

// ---------------------------------------------------------------------------
// Products, NaN-ignoring sums
// ---------------------------------------------------------------------------

// Product of every element (0-d); integer and bool inputs give int64.
inline Tensor prod(const Tensor& self, std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[2] = {detail::value(self), detail::value(dtype)};
  return detail::call(detail::op<"prod">(), args, 2);
}
inline Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false,
                   std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(keepdim),
                             detail::value(dtype)};
  return detail::call(detail::op<"prod.dim_int">(), args, 4);
}
// Sum treating NaN as 0.
inline Tensor nansum(const Tensor& self, OptionalDims dims = std::nullopt, bool keepdim = false,
                     std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype)};
  return detail::call(detail::op<"nansum">(), args, 4);
}
// sum over `dims` into `out` (resized as PyTorch does); without `dtype` the
// sum is computed in out's dtype.
inline Tensor& sum_out(Tensor& out, const Tensor& self, IntList dims, bool keepdim = false,
                       std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[5] = {detail::value(self), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype), detail::value(out)};
  detail::call_in_place(detail::op<"sum.IntList_out">(), args, 5);
  return out;
}
inline Tensor& mean_out(Tensor& out, const Tensor& self, IntList dims, bool keepdim = false,
                        std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[5] = {detail::value(self), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype), detail::value(out)};
  detail::call_in_place(detail::op<"mean.out">(), args, 5);
  return out;
}

// ---------------------------------------------------------------------------
// Extremes (NaN propagates; empty reductions are errors)
// ---------------------------------------------------------------------------

inline Tensor max(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"max">(), args, 1);
}
inline Tensor min(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"min">(), args, 1);
}
// (values, indices) along `dim`; the index of the first extreme (or NaN).
inline std::pair<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call2(detail::op<"max.dim">(), args, 3);
}
inline std::pair<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call2(detail::op<"min.dim">(), args, 3);
}
inline Tensor amax(const Tensor& self, IntList dims = {}, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dims), detail::value(keepdim)};
  return detail::call(detail::op<"amax">(), args, 3);
}
inline Tensor amin(const Tensor& self, IntList dims = {}, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dims), detail::value(keepdim)};
  return detail::call(detail::op<"amin">(), args, 3);
}
inline Tensor& amax_out(Tensor& out, const Tensor& self, IntList dims = {}, bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(keepdim),
                             detail::value(out)};
  detail::call_in_place(detail::op<"amax.out">(), args, 4);
  return out;
}
// (min, max) over `dim`, or every element when dim is nullopt.
inline std::pair<Tensor, Tensor> aminmax(const Tensor& self,
                                         std::optional<int64_t> dim = std::nullopt,
                                         bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call2(detail::op<"aminmax">(), args, 3);
}
// int64 index of the first maximum; dim nullopt flattens the input.
inline Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                     bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call(detail::op<"argmax">(), args, 3);
}
inline Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                     bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call(detail::op<"argmin">(), args, 3);
}

// ---------------------------------------------------------------------------
// Logical reductions (bool results; uint8 inputs give uint8)
// ---------------------------------------------------------------------------

inline Tensor any(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"any">(), args, 1);
}
inline Tensor any(const Tensor& self, int64_t dim, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call(detail::op<"any.dim">(), args, 3);
}
inline Tensor all(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"all">(), args, 1);
}
inline Tensor all(const Tensor& self, int64_t dim, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(keepdim)};
  return detail::call(detail::op<"all.dim">(), args, 3);
}
// int64 count of non-zero elements over `dims` (every dim by default).
inline Tensor count_nonzero(const Tensor& self, IntList dims = {}) {
  const tsr_value args[2] = {detail::value(self), detail::value(dims)};
  return detail::call(detail::op<"count_nonzero.dim_IntList">(), args, 2);
}

// ---------------------------------------------------------------------------
// Statistics and norms (floating inputs)
// ---------------------------------------------------------------------------

// Variance with `correction` (1: unbiased, Bessel's correction; 0: biased).
inline Tensor var(const Tensor& self, OptionalDims dims = std::nullopt, int64_t correction = 1,
                  bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(correction),
                             detail::value(keepdim)};
  return detail::call(detail::op<"var.correction">(), args, 4);
}
// PyTorch's std().
inline Tensor std_dev(const Tensor& self, OptionalDims dims = std::nullopt, int64_t correction = 1,
                      bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(correction),
                             detail::value(keepdim)};
  return detail::call(detail::op<"std.correction">(), args, 4);
}
// (var, mean)
inline std::pair<Tensor, Tensor> var_mean(const Tensor& self, OptionalDims dims = std::nullopt,
                                          int64_t correction = 1, bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(correction),
                             detail::value(keepdim)};
  return detail::call2(detail::op<"var_mean.correction">(), args, 4);
}
// (std, mean)
inline std::pair<Tensor, Tensor> std_mean(const Tensor& self, OptionalDims dims = std::nullopt,
                                          int64_t correction = 1, bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(correction),
                             detail::value(keepdim)};
  return detail::call2(detail::op<"std_mean.correction">(), args, 4);
}
// The p-norm of every element (p = 0, 1, 2, inf, -inf or any real).
inline Tensor norm(const Tensor& self, const Scalar& p = 2) {
  const tsr_value args[2] = {detail::value(self), detail::value(p)};
  return detail::call(detail::op<"norm.Scalar">(), args, 2);
}
inline Tensor norm(const Tensor& self, const Scalar& p, IntList dims, bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(p), detail::value(dims),
                             detail::value(keepdim)};
  return detail::call(detail::op<"norm.ScalarOpt_dim">(), args, 4);
}
// norm(x, 'fro'): the 2-norm over `dims` (every dim when empty).
inline Tensor frobenius_norm(const Tensor& self, IntList dims = {}, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dims), detail::value(keepdim)};
  return detail::call(detail::op<"frobenius_norm.dim">(), args, 3);
}
inline Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord = 2,
                                 OptionalDims dims = std::nullopt, bool keepdim = false,
                                 std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[5] = {detail::value(self), detail::value(ord), detail::value(dims),
                             detail::value(keepdim), detail::value(dtype)};
  return detail::call(detail::op<"linalg_vector_norm">(), args, 5);
}
// log(sum(exp(x))) over `dims`, computed stably.
inline Tensor logsumexp(const Tensor& self, IntList dims, bool keepdim = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dims), detail::value(keepdim)};
  return detail::call(detail::op<"logsumexp">(), args, 3);
}

// ---------------------------------------------------------------------------
// Scans
// ---------------------------------------------------------------------------

// Running sum along `dim`; integer and bool inputs give int64.
inline Tensor cumsum(const Tensor& self, int64_t dim, std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(dtype)};
  return detail::call(detail::op<"cumsum">(), args, 3);
}
inline Tensor cumprod(const Tensor& self, int64_t dim, std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(dtype)};
  return detail::call(detail::op<"cumprod">(), args, 3);
}
inline Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  const tsr_value args[2] = {detail::value(self), detail::value(dim)};
  return detail::call(detail::op<"logcumsumexp">(), args, 2);
}
// (values, indices) of the running maximum along `dim`.
inline std::pair<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  const tsr_value args[2] = {detail::value(self), detail::value(dim)};
  return detail::call2(detail::op<"cummax">(), args, 2);
}
inline std::pair<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  const tsr_value args[2] = {detail::value(self), detail::value(dim)};
  return detail::call2(detail::op<"cummin">(), args, 2);
}

// ---------------------------------------------------------------------------
// Softmax (floating inputs, or give a floating `dtype`)
// ---------------------------------------------------------------------------

inline Tensor softmax(const Tensor& self, int64_t dim, std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(dtype)};
  return detail::call(detail::op<"softmax.int">(), args, 3);
}
inline Tensor log_softmax(const Tensor& self, int64_t dim,
                          std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(dtype)};
  return detail::call(detail::op<"log_softmax.int">(), args, 3);
}

}  // namespace tessera
