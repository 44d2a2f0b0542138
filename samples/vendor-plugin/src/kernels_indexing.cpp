// kernels_indexing.cpp - _iota_, gather, _scatter_, nonzero (two-phase),
// sort.stable and searchsorted.Tensor.
//
// Every index is checked before memory is touched (OUT_OF_RANGE naming the
// argument, value, dim and size; nothing is written when one is bad). Dims
// arrive resolved into [0, ndim).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "acme.hpp"

namespace acme {

// _iota_(self, start, step, end=None): element i (row-major) = start + i*step;
// with `end` (linspace), the second half counts back from it:
// end - (n - 1 - i) * step for i >= n / 2, so both ends are exact.
// Integer outputs with integral arguments compute in wrapping int64; the
// rest in double, rounded once (integers truncate and saturate).
void iota_kernel(const tsr_kernel_call& call) {
  const tsr_scalar& start = scalar_arg(call, 1, "start");
  const tsr_scalar& step = scalar_arg(call, 2, "step");
  const bool has_end = !is_none(call, 3);
  const tsr_scalar end = has_end ? scalar_arg(call, 3, "end") : tsr_scalar{};
  const tsr_tensor_desc& out = out_arg(call, 0);
  if (out.dtype == TSR_BOOL) throw_unsupported_dtype(call, "self", out.dtype, kName);
  const int64_t n = numel(out);
  const int64_t mirror_from = has_end ? n / 2 : n;
  const bool integer_math = !is_floating_dtype(out.dtype) && scalar_is_integral(start) &&
                            scalar_is_integral(step) && (!has_end || scalar_is_integral(end));
  int64_t i = 0;
  for_each_index(out.ndim, out.sizes, [&](const int64_t* index) {
    const int64_t o = offset(out, index);
    if (integer_math) {
      store_int(out, o,
                i < mirror_from ? plus(start.v.i, times(i, step.v.i))
                                : minus(end.v.i, times(n - 1 - i, step.v.i)));
    } else {
      const double s = scalar_double(step);
      store_double(out, o,
                   i < mirror_from ? scalar_double(start) + static_cast<double>(i) * s
                                   : scalar_double(end) - static_cast<double>(n - 1 - i) * s);
    }
    ++i;
  });
}

// ---- gather and _scatter_ ----
// (check_index_shape, check_scatter_src: tessera/sdk/op_checks.hpp)

// Every element of `index` lies in [0, size); else OUT_OF_RANGE naming the
// first bad one (row-major order).
static void check_indices(const tsr_kernel_call& call, const char* name,
                          const tsr_tensor_desc& index, int dim, int64_t size) {
  for_each_index(index.ndim, index.sizes, [&](const int64_t* i) {
    const int64_t value = load_int(index, offset(index, i));
    if (value < 0 || value >= size) {
      throw_status(TSR_OUT_OF_RANGE,
                   "%s: argument '%s' has value %lld, which is out of bounds for dimension %d with "
                   "size %lld; indices must lie in [0, %lld)",
                   op_name(call), name, static_cast<long long>(value), dim,
                   static_cast<long long>(size), static_cast<long long>(size));
    }
  });
}

// dst = dst op src for one scatter code, in number type V.
// clang-format off
template <class V>
static V scatter_combine(int code, V dst, V src) {
  switch (code) {
    case TSR_SCATTER_ADD: return plus(dst, src);
    case TSR_SCATTER_MUL: return times(dst, src);
    case TSR_SCATTER_AMAX: return (dst > src || is_nan(dst)) ? dst : src;  // NaN propagates
    case TSR_SCATTER_AMIN: return (dst < src || is_nan(dst)) ? dst : src;
    default: return src;
  }
}
// clang-format on

// out[p] = self[p with p[dim] replaced by index[p]], over index's shape.
void gather_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const tsr_tensor_desc& index = tensor_arg(call, 2, "index");
  const tsr_tensor_desc& out = out_arg(call, 0);
  const int dim = check_index_shape(call, self, index, int_arg(call, 1, "dim"));
  check_dtype(call, out, "out", self.dtype);
  check_same_sizes(call, out, "out", index, "index");
  check_indices(call, "index", index, dim, self.sizes[dim]);
  for_each_index(index.ndim, index.sizes, [&](const int64_t* i) {
    int64_t source[TSR_MAX_DIMS];
    std::copy(i, i + self.ndim, source);
    source[dim] = load_int(index, offset(index, i));
    move_element(out, offset(out, i), self, offset(self, source));
  });
}

// self[p with p[dim] replaced by index[p]] op= src[p], over index's shape, in
// index order (so duplicates combine deterministically; ASSIGN keeps the last).
void scatter_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const tsr_tensor_desc& index = tensor_arg(call, 2, "index");
  const tsr_tensor_desc& src = tensor_arg(call, 3, "src");
  const int32_t code = code_arg(call, 4, "op", TSR_SCATTER_CODE_COUNT, "tsr_scatter_op");
  const tsr_tensor_desc& out = out_arg(call, 0);  // aliases self
  const int dim = check_index_shape(call, self, index, int_arg(call, 1, "dim"));
  check_dtype(call, src, "src", self.dtype);
  check_dtype(call, out, "out", self.dtype);
  check_same_sizes(call, out, "out", self, "self");
  check_scatter_src(call, index, src);
  check_indices(call, "index", index, dim, out.sizes[dim]);
  with_number_type(self.dtype, [&](auto v) {
    using V = decltype(v);
    for_each_index(index.ndim, index.sizes, [&](const int64_t* i) {
      int64_t target[TSR_MAX_DIMS];
      std::copy(i, i + out.ndim, target);
      target[dim] = load_int(index, offset(index, i));
      const int64_t o = offset(out, target), s = offset(src, i);
      if (code == TSR_SCATTER_ASSIGN) {
        move_element(out, o, src, s);
      } else {
        store(out, o, scatter_combine<V>(static_cast<int>(code), load<V>(out, o), load<V>(src, s)));
      }
    });
  });
}

// nonzero(self) -> [count, ndim] int64: the row-major coordinates of every
// non-zero element (NaN counts, -0.0 does not). Two phases: the host asks
// nonzero_count for the output's size, allocates it, then calls the kernel.
static bool is_nonzero(const tsr_tensor_desc& t, int64_t off) {
  return is_floating_dtype(t.dtype) ? load_double(t, off) != 0.0 : load_int(t, off) != 0;
}

static int64_t count_nonzero(const tsr_tensor_desc& self) {
  int64_t count = 0;
  for_each_index(self.ndim, self.sizes,
                 [&](const int64_t* i) { count += is_nonzero(self, offset(self, i)) ? 1 : 0; });
  return count;
}

void nonzero_count(const tsr_kernel_call& call, int32_t* out_ndims, int64_t* out_sizes) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  out_ndims[0] = 2;
  out_sizes[0] = count_nonzero(self);
  out_sizes[1] = self.ndim;
}

void nonzero_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_dtype(call, out, "out", TSR_INT64);
  if (out.ndim != 2 || out.sizes[1] != self.ndim || out.sizes[0] != count_nonzero(self)) {
    throw_status(TSR_FAILED_PRECONDITION,
                 "%s: out must be [count, %d] with the count from the size phase; was self "
                 "modified between the two phases?",
                 op_name(call), self.ndim);
  }
  int64_t row = 0;
  for_each_index(self.ndim, self.sizes, [&](const int64_t* i) {
    if (!is_nonzero(self, offset(self, i))) return;
    for (int d = 0; d < self.ndim; ++d) {
      const int64_t cell[2] = {row, d};
      store_int(out, offset(out, cell), i[d]);
    }
    ++row;
  });
}

// sort.stable(self, *, stable, dim, descending) -> (values, indices): each
// line along `dim` is sorted stably (always; every `stable` value accepts
// that). PyTorch's order: NaN is above +inf, so it goes last ascending and
// first descending; equal keys keep their order in both directions.
template <class V>
static void sort_typed(int dim, bool descending, const tsr_tensor_desc& self,
                       const tsr_tensor_desc& values, const tsr_tensor_desc& indices) {
  const int64_t n = self.sizes[dim];
  std::vector<V> keys(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for_each_line(self, dim, [&](int64_t* index) {
    for (int64_t k = 0; k < n; ++k) {
      index[dim] = k;
      keys[static_cast<size_t>(k)] = load<V>(self, offset(self, index));
    }
    std::iota(order.begin(), order.end(), int64_t{0});
    // "a goes before b": NaN counts as the largest key.
    auto before = [&](int64_t a, int64_t b) {
      const V x = keys[static_cast<size_t>(a)], y = keys[static_cast<size_t>(b)];
      if (descending) return is_nan(x) ? !is_nan(y) : (!is_nan(y) && x > y);
      return is_nan(y) ? !is_nan(x) : x < y;
    };
    std::stable_sort(order.begin(), order.end(), before);
    int64_t from[TSR_MAX_DIMS];
    for (int d = 0; d < self.ndim; ++d) from[d] = index[d];
    for (int64_t k = 0; k < n; ++k) {
      index[dim] = k;
      from[dim] = order[static_cast<size_t>(k)];
      move_element(values, offset(values, index), self, offset(self, from));
      store_int(indices, offset(indices, index), from[dim]);
    }
  });
}

void sort_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const int64_t dim_arg = int_arg(call, 2, "dim");
  const bool descending = bool_arg(call, 3, "descending");
  const tsr_tensor_desc& values = out_arg(call, 0);
  const tsr_tensor_desc& indices = out_arg(call, 1);
  check_dtype(call, values, "values", self.dtype);
  check_dtype(call, indices, "indices", TSR_INT64);
  check_same_sizes(call, values, "values", self, "self");
  check_same_sizes(call, indices, "indices", self, "self");
  if (self.ndim == 0) {  // one element: itself, at index 0
    move_element(values, 0, self, 0);
    store_int(indices, 0, 0);
    return;
  }
  const int dim = check_dim(call, dim_arg, "dim", self);
  with_number_type(
      self.dtype, [&](auto v) { sort_typed<decltype(v)>(dim, descending, self, values, indices); });
}

// searchsorted.Tensor(sorted_sequence, self, *, out_int32, right, side,
// sorter): for each value v of self, the position in its boundary list b (the
// 1-d sorted_sequence, or the row of an N-d one matching v's leading indices):
//   left:  the first i with !(b[i] < v),  right: the first i with !(b[i] <= v)
// written as PyTorch does (!(b >= v), !(b > v)), so a NaN value goes last.
// `side` ("left"/"right") overrides `right`; `sorter` (int64, the shape of
// sorted_sequence) reads b[i] as sequence[sorter[i]] and is bounds-checked.
template <class V>
static void searchsorted_typed(const tsr_tensor_desc& seq, const tsr_tensor_desc& self, bool right,
                               const tsr_tensor_desc* sorter, const tsr_tensor_desc& out) {
  const int64_t n = seq.sizes[seq.ndim - 1];
  const bool per_row = seq.ndim > 1;
  for_each_index(self.ndim, self.sizes, [&](const int64_t* i) {
    const V v = load<V>(self, offset(self, i));
    int64_t at[TSR_MAX_DIMS] = {};  // an index into seq (and sorter)
    if (per_row) std::copy(i, i + seq.ndim - 1, at);
    auto boundary = [&](int64_t position) {
      at[seq.ndim - 1] = position;
      if (sorter != nullptr) at[seq.ndim - 1] = load_int(*sorter, offset(*sorter, at));
      return load<V>(seq, offset(seq, at));
    };
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const V b = boundary(mid);
      if (right ? !(b > v) : !(b >= v)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    store_int(out, offset(out, i), lo);
  });
}

void searchsorted_kernel(const tsr_kernel_call& call) {
  const tsr_tensor_desc& seq = tensor_arg(call, 0, "sorted_sequence");
  const tsr_tensor_desc& self = tensor_arg(call, 1, "self");
  const bool out_int32 = bool_arg(call, 2, "out_int32");
  bool right = bool_arg(call, 3, "right");
  const tsr_tensor_desc& out = out_arg(call, 0);
  if (const char* side = optional_string_arg(call, 4, "side")) {
    if (std::strcmp(side, "left") != 0 && std::strcmp(side, "right") != 0) {
      throw_status(TSR_INVALID_ARGUMENT, "%s: side must be 'left' or 'right', got '%s'",
                   op_name(call), side);
    }
    right = std::strcmp(side, "right") == 0;
  }
  const tsr_tensor_desc* sorter = optional_tensor_arg(call, 5, "sorter");
  check_dtype(call, self, "self", seq.dtype);
  check_dtype(call, out, "out", out_int32 ? TSR_INT32 : TSR_INT64);
  check_same_sizes(call, out, "out", self, "self");
  bool shapes_ok = seq.ndim >= 1;
  if (shapes_ok && seq.ndim > 1) {
    shapes_ok = seq.ndim == self.ndim;
    for (int d = 0; shapes_ok && d + 1 < seq.ndim; ++d) shapes_ok = seq.sizes[d] == self.sizes[d];
  }
  if (!shapes_ok) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: sorted_sequence must be 1-d, or have self's dims with the same sizes in all "
                 "but the last",
                 op_name(call));
  }
  if (sorter != nullptr) {
    check_dtype(call, *sorter, "sorter", TSR_INT64);
    check_same_sizes(call, *sorter, "sorter", seq, "sorted_sequence");
    check_indices(call, "sorter", *sorter, seq.ndim - 1, seq.sizes[seq.ndim - 1]);
  }
  with_number_type(self.dtype,
                   [&](auto v) { searchsorted_typed<decltype(v)>(seq, self, right, sorter, out); });
}

}  // namespace acme
