// kernels_reduction.cpp - _reduce (sum, prod, mean, amax, amin, any, all over a
// list of dims), _arg_reduce (argmax, argmin along one dim) and _scan
// (cumsum, cumprod, logcumsumexp, cummax, cummin along one dim).
//
// Contract (plugin.h, opcodes.h): dims arrive resolved (non-negative, sorted,
// unique); outs[0] of a reduction keeps the input's ndim with size 1 on
// reduced dims whatever `keepdim` says; the input is in the output's dtype
// (integer and bool sums arrive as int64), except ANY/ALL (out bool) and
// _arg_reduce (out int64). Each output element loops over its reduced
// elements in double or wrapping int64; bool follows from storing x != 0.
#include <cmath>
#include <limits>
#include <span>

#include "acme.hpp"

namespace acme {
// The running value of one reduction code in number type V.
template <class V>
struct reducer {
  int code;
  V acc{};
  int64_t count = 0;

  explicit reducer(int c) : code(c) {
    if (code == TSR_REDUCE_PROD || code == TSR_REDUCE_ALL) acc = 1;
  }
  // clang-format off
  void add(V x) {
    switch (code) {
      case TSR_REDUCE_SUM: case TSR_REDUCE_MEAN: acc = plus(acc, x); break;
      case TSR_REDUCE_PROD: acc = times(acc, x); break;
      case TSR_REDUCE_AMAX:  // the first NaN sticks
        if (count == 0 || x > acc || (is_nan(x) && !is_nan(acc))) acc = x;
        break;
      case TSR_REDUCE_AMIN:
        if (count == 0 || x < acc || (is_nan(x) && !is_nan(acc))) acc = x;
        break;
      case TSR_REDUCE_ANY:  // NaN counts as true (non-zero)
        acc = (acc != 0 || x != 0);
        break;
      case TSR_REDUCE_ALL: acc = (acc != 0 && x != 0); break;
    }
    ++count;
  }
  // clang-format on

  V result() const {
    if constexpr (std::is_same_v<V, double>) {
      if (code == TSR_REDUCE_MEAN) return acc / static_cast<double>(count);  // 0 elements: NaN
    }
    return acc;
  }
};

template <class V>
static void reduce_typed(const tsr_kernel_call& call, int code, const tsr_tensor_desc& self,
                         const tsr_tensor_desc& out, const int64_t* reduced_sizes) {
  // Walk every output index; under each, every index of the reduced dims
  // (reduced_sizes is 1 on kept dims, so index + r is the input index).
  for_each_index(out.ndim, out.sizes, [&](const int64_t* o) {
    reducer<V> r(code);
    for_each_index(self.ndim, reduced_sizes, [&](const int64_t* k) {
      int64_t index[TSR_MAX_DIMS];
      for (int d = 0; d < self.ndim; ++d) index[d] = o[d] + k[d];
      r.add(load<V>(self, offset(self, index)));
    });
    if (r.count == 0 && (code == TSR_REDUCE_AMAX || code == TSR_REDUCE_AMIN)) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: amax/amin of an empty reduction has no identity; reduce over non-empty "
                   "dims",
                   op_name(call));
    }
    store(out, offset(out, o), r.result());
  });
}

void reduce_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const int64_t code = int_arg(call, 1, "op");
  const std::span<const int64_t> dims = int_list_arg(call, 2, "dim");
  const tsr_tensor_desc& out = out_arg(call, 0);
  const bool logical = code == TSR_REDUCE_ANY || code == TSR_REDUCE_ALL;
  check_dtype(call, out, "out", logical ? TSR_BOOL : self.dtype);
  if (code == TSR_REDUCE_MEAN && !is_floating_dtype(self.dtype))
    throw_unsupported_dtype(call, "self", self.dtype, kName);

  int64_t reduced_sizes[TSR_MAX_DIMS];
  int64_t kept_sizes[TSR_MAX_DIMS];
  for (int d = 0; d < self.ndim; ++d) {
    reduced_sizes[d] = 1;
    kept_sizes[d] = self.sizes[d];
  }
  for (const int64_t d : dims) {
    if (self.ndim == 0 && d == 0) continue;  // a 0-d input "reduces" its one element
    check_dim(call, d, "dim", self);
    reduced_sizes[d] = self.sizes[d];
    kept_sizes[d] = 1;
  }
  bool keepdim_layout = out.ndim == self.ndim;
  for (int d = 0; keepdim_layout && d < self.ndim; ++d)
    keepdim_layout = out.sizes[d] == kept_sizes[d];
  if (!keepdim_layout) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: out must have self's %d dims with size 1 on the reduced ones (the keepdim "
                 "layout)",
                 op_name(call), self.ndim);
  }
  // ANY/ALL decide per element whether it is non-zero: in double for floats
  // (NaN is non-zero), in int64 otherwise; the result is stored as bool.
  with_number_type(self.dtype, [&](auto v) {
    reduce_typed<decltype(v)>(call, static_cast<int>(code), self, out, reduced_sizes);
  });
}

// _arg_reduce: the first index of the extreme value along `dim`; a NaN is
// the extreme (its first index wins).
template <class V>
static void arg_reduce_typed(const tsr_kernel_call& call, bool max, int dim,
                             const tsr_tensor_desc& self, const tsr_tensor_desc& out) {
  const int64_t n = self.sizes[dim];
  if (n == 0) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: argmax/argmin along an empty dim %d has no answer",
                 op_name(call), dim);
  }
  for_each_index(out.ndim, out.sizes, [&](const int64_t* o) {
    int64_t index[TSR_MAX_DIMS];
    for (int d = 0; d < self.ndim; ++d) index[d] = o[d];
    V best = load<V>(self, offset(self, index));
    int64_t best_k = 0;
    for (int64_t k = 1; k < n && !is_nan(best); ++k) {
      index[dim] = k;
      const V x = load<V>(self, offset(self, index));
      if (is_nan(x) || (max ? x > best : x < best)) {
        best = x;
        best_k = k;
      }
    }
    store_int(out, offset(out, o), best_k);
  });
}

void arg_reduce_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const int64_t code = int_arg(call, 1, "op");
  const int64_t dim_arg = int_arg(call, 2, "dim");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_dtype(call, out, "out", TSR_INT64);
  if (self.ndim == 0) {  // one element: its index is 0
    store_int(out, 0, 0);
    return;
  }
  const int dim = check_dim(call, dim_arg, "dim", self);
  if (out.ndim != self.ndim || out.sizes[dim] != 1)
    throw_status(TSR_INVALID_ARGUMENT, "%s: out must be in the keepdim layout", op_name(call));
  with_number_type(self.dtype, [&](auto v) {
    arg_reduce_typed<decltype(v)>(call, code == TSR_ARG_REDUCE_ARGMAX, dim, self, out);
  });
}

// ---- _scan: inclusive running sums, products, log-sum-exps, maxima, minima. ----
static double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  const double hi = std::fmax(a, b), lo = std::fmin(a, b);
  if (lo == -std::numeric_limits<double>::infinity() ||
      hi == std::numeric_limits<double>::infinity())
    return hi;  // exact at the infinities (-inf is the identity)
  return hi + std::log1p(std::exp(lo - hi));
}

// clang-format off
template <class V>
static V scan_step(int code, V acc, V x) {
  switch (code) {
    case TSR_SCAN_CUMSUM: return plus(acc, x);
    case TSR_SCAN_CUMPROD: return times(acc, x);
    case TSR_SCAN_CUMMAX:  // a NaN sticks
      if (is_nan(acc)) return acc;
      return (is_nan(x) || x > acc) ? x : acc;
    case TSR_SCAN_CUMMIN:
      if (is_nan(acc)) return acc;
      return (is_nan(x) || x < acc) ? x : acc;
    default:
      if constexpr (std::is_same_v<V, double>) return log_add_exp(acc, x);
      return acc;
  }
}
// clang-format on

template <class V>
static void scan_typed(int code, int dim, const tsr_tensor_desc& self, const tsr_tensor_desc& out) {
  const int64_t n = self.ndim == 0 ? 1 : self.sizes[dim];
  if (n == 0) return;
  for_each_line(self, dim, [&](int64_t* index) {
    V acc{};
    for (int64_t k = 0; k < n; ++k) {
      if (self.ndim > 0) index[dim] = k;
      const V x = load<V>(self, offset(self, index));
      acc = k == 0 ? x : scan_step(code, acc, x);
      store(out, offset(out, index), acc);
    }
  });
}

void scan_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const int64_t code = int_arg(call, 1, "op");
  const int64_t dim_arg = int_arg(call, 2, "dim");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_dtype(call, out, "out", self.dtype);
  check_same_sizes(call, self, "self", out, "out");
  const int dim = self.ndim == 0 ? 0 : check_dim(call, dim_arg, "dim", self);
  if (code == TSR_SCAN_LOGCUMSUMEXP && !is_floating_dtype(self.dtype))
    throw_unsupported_dtype(call, "self", self.dtype, kName);
  with_number_type(
      self.dtype, [&](auto v) { scan_typed<decltype(v)>(static_cast<int>(code), dim, self, out); });
}

}  // namespace acme
