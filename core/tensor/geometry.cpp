#include "tensor/geometry.h"

#include <algorithm>
#include <numeric>

#include "util/checked_math.h"
#include "util/error.h"

namespace tsr {

int64_t check_sizes(int32_t ndim, const int64_t* sizes, size_t itemsize, const char* arg) {
  if (ndim < 0 || ndim > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "argument 'ndim' is {}; tensors have 0 to {} (TSR_MAX_DIMS) dims",
         ndim, TSR_MAX_DIMS);
  if (ndim > 0 && sizes == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL but ndim is {}; pass {} sizes", arg, ndim,
         ndim);
  int64_t numel = 1;
  int64_t span = 1;  // the product of max(size, 1): the largest contiguous stride
  bool overflow = false;
  for (int32_t d = 0; d < ndim; ++d) {
    if (sizes[d] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "argument '{}' has a negative size {} at dim {}; sizes must be >= 0", arg, sizes[d], d);
    if (!mul_ok(numel, sizes[d], &numel)) overflow = true;
    if (!mul_ok(span, std::max<int64_t>(sizes[d], 1), &span))
      fail(TSR_INVALID_ARGUMENT,
           "argument '{}' = {}: stride calculation overflowed int64 (a zero-size dim does not "
           "make the others' strides smaller); use smaller sizes",
           arg, shape_str(ndim, sizes));
  }
  int64_t bytes = 0;
  if (overflow || numel < 0 ||
      !mul_ok(numel, static_cast<int64_t>(itemsize ? itemsize : 1), &bytes))
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' = {}: the number of elements or bytes overflows int64; use smaller sizes",
         arg, shape_str(ndim, sizes));
  return numel;
}

void contiguous_strides(int32_t ndim, const int64_t* sizes, int64_t* out) {
  // Unsigned: sizes that check_sizes accepted cannot overflow; for any others
  // (a caller that skipped it) the result is wrong but never undefined.
  uint64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    out[d] = static_cast<int64_t>(s);
    s *= static_cast<uint64_t>(std::max<int64_t>(sizes[d], 1));
  }
}

int32_t wrap_dim(int64_t dim, int32_t ndim, const char* arg) {
  int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    fail(TSR_OUT_OF_RANGE,
         "argument '{}' = {} is out of range: dimension expected in [{}, {}] for a tensor of {} "
         "dim(s)",
         arg, dim, -n, n - 1, ndim);
  return static_cast<int32_t>(dim < 0 ? dim + n : dim);
}

std::string shape_str(int32_t ndim, const int64_t* sizes) {
  std::string s = "[";
  for (int32_t d = 0; d < ndim; ++d) {
    if (d) s += ", ";
    s += std::to_string(sizes[d]);
  }
  return s + "]";
}

Shape broadcast_shapes(int32_t na, const int64_t* a, int32_t nb, const int64_t* b) {
  Shape out;
  if (na == nb && std::equal(a, a + na, b)) {
    out.ndim = na;
    std::copy(a, a + na, out.sizes);
    return out;
  }
  out.ndim = std::max(na, nb);
  for (int32_t i = 0; i < out.ndim; ++i) {
    int32_t ia = na - 1 - i, ib = nb - 1 - i;
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(TSR_INVALID_ARGUMENT,
           "shapes {} and {} are not broadcastable: the size of dim {} ({} vs {}) must match or "
           "be 1",
           shape_str(na, a), shape_str(nb, b), out.ndim - 1 - i, sa, sb);
    out.sizes[out.ndim - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

void channels_last_strides(int32_t ndim, const int64_t* sizes, int64_t* out) {
  // NCHW sizes, NHWC memory order (5-d: NCDHW sizes, NDHWC order).
  int64_t s = 1;
  out[1] = s;
  s *= std::max<int64_t>(sizes[1], 1);
  for (int32_t d = ndim - 1; d >= 2; --d) {
    out[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  out[0] = s;
}

bool is_contiguous_as(const TensorImpl& t, tsr_memory_format format) {
  if (format == TSR_CONTIGUOUS_FORMAT || format == TSR_PRESERVE_FORMAT) return t.contiguous;
  int32_t want = format == TSR_CHANNELS_LAST ? 4 : 5;
  if (t.ndim != want) return false;
  if (t.numel == 0) return true;
  // Walk dims in NHWC order from fastest to slowest, ignoring size-1 dims.
  int32_t order[5];
  if (want == 4) {
    int32_t o[] = {1, 3, 2, 0};
    std::copy(o, o + 4, order);
  } else {
    int32_t o[] = {1, 4, 3, 2, 0};
    std::copy(o, o + 5, order);
  }
  int64_t expected = 1;
  for (int32_t i = 0; i < want; ++i) {
    int32_t d = order[i];
    if (t.sizes[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

bool is_non_overlapping_and_dense(const TensorImpl& t) {
  if (t.contiguous) return true;
  // Dims of size > 1 by increasing stride (insertion sort: at most 8 dims).
  int32_t perm[TSR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (t.sizes[d] < 2) continue;
    int32_t i = n++;
    while (i > 0 && t.strides[perm[i - 1]] > t.strides[d]) {
      perm[i] = perm[i - 1];
      --i;
    }
    perm[i] = d;
  }
  int64_t expected = 1;
  for (int32_t i = 0; i < n; ++i) {
    int32_t d = perm[i];
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

void preserve_strides(const TensorImpl& t, int64_t* out) {
  if (!is_non_overlapping_and_dense(t)) {
    contiguous_strides(t.ndim, t.sizes, out);
    return;
  }
  // Same dim order as t: sort dims by stride (stable, outer dims first on ties).
  // Dims by decreasing stride, outer dims first on ties (stable insertion sort).
  int32_t perm[TSR_MAX_DIMS];
  for (int32_t d = 0; d < t.ndim; ++d) {
    int32_t i = d;
    while (i > 0 && t.strides[perm[i - 1]] < t.strides[d]) {
      perm[i] = perm[i - 1];
      --i;
    }
    perm[i] = d;
  }
  int64_t s = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    out[perm[i]] = s;
    s *= std::max<int64_t>(t.sizes[perm[i]], 1);
  }
}

bool compute_view_strides(int32_t old_ndim, const int64_t* old_sizes, const int64_t* old_strides,
                          int32_t ndim, const int64_t* sizes, int64_t* out) {
  int64_t numel = 1;
  for (int32_t d = 0; d < old_ndim; ++d) numel *= old_sizes[d];
  if (old_ndim == 0) {
    for (int32_t d = 0; d < ndim; ++d) out[d] = 1;
    return true;
  }
  if (numel == 0) {
    // Any shape with zero elements: contiguous strides are as good as any.
    contiguous_strides(ndim, sizes, out);
    return true;
  }
  // Walk old dims from the back in chunks whose elements are laid out
  // contiguously relative to each other; each chunk must be matched exactly by a
  // run of new dims.
  int32_t view_d = ndim - 1;
  int64_t chunk_base_stride = old_strides[old_ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int32_t d = old_ndim - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    bool chunk_ends =
        d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (chunk_ends) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Shape infer_size(int32_t ndim, const int64_t* sizes, int64_t numel, const char* arg) {
  if (ndim < 0 || ndim > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "argument 'ndim' is {}; tensors have 0 to {} (TSR_MAX_DIMS) dims",
         ndim, TSR_MAX_DIMS);
  if (ndim > 0 && sizes == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL but ndim is {}", arg, ndim);
  Shape out;
  out.ndim = ndim;
  int64_t known = 1;
  int32_t infer = -1;
  for (int32_t d = 0; d < ndim; ++d) {
    if (sizes[d] == -1) {
      if (infer >= 0)
        fail(TSR_INVALID_ARGUMENT, "argument '{}' = {}: only one dimension can be inferred (-1)",
             arg, shape_str(ndim, sizes));
      infer = d;
    } else if (sizes[d] < 0) {
      fail(TSR_INVALID_ARGUMENT, "argument '{}' = {}: invalid size {} at dim {}", arg,
           shape_str(ndim, sizes), sizes[d], d);
    } else {
      if (!mul_ok(known, sizes[d], &known))
        fail(TSR_INVALID_ARGUMENT, "argument '{}' = {}: the number of elements overflows int64",
             arg, shape_str(ndim, sizes));
    }
    out.sizes[d] = sizes[d];
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      fail(TSR_INVALID_ARGUMENT, "shape '{}' is invalid for input of size {}",
           shape_str(ndim, sizes), numel);
    out.sizes[infer] = numel / known;
  } else if (known != numel) {
    fail(TSR_INVALID_ARGUMENT, "shape '{}' is invalid for input of size {}", shape_str(ndim, sizes),
         numel);
  }
  return out;
}

void assert_no_internal_overlap(const TensorImpl& t, const char* op, const char* arg) {
  for (int32_t d = 0; d < t.ndim; ++d)
    if (t.sizes[d] > 1 && t.strides[d] == 0)
      fail(TSR_INVALID_ARGUMENT,
           "unsupported operation: more than one element of the written-to tensor refers to a "
           "single memory location. Please clone() the tensor before performing the operation. "
           "({}argument '{}' has stride 0 at dim {} of size {})",
           op ? fmt::format("op '{}', ", op) : std::string(), arg, d, t.sizes[d]);
}

namespace {
// [lo, hi) byte range addressed by a tensor.
void byte_range(const TensorImpl& t, int64_t& lo, int64_t& hi) {
  int64_t min_off = t.offset, max_off = t.offset;
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (t.sizes[d] == 0) {
      lo = hi = 0;
      return;
    }
    int64_t span = (t.sizes[d] - 1) * t.strides[d];
    if (span > 0)
      max_off += span;
    else
      min_off += span;
  }
  int64_t item = static_cast<int64_t>(t.itemsize());
  lo = min_off * item;
  hi = (max_off + 1) * item;
}
}  // namespace

void assert_no_partial_overlap(const TensorImpl& out, const TensorImpl& in) {
  if (out.storage != in.storage || out.numel == 0 || in.numel == 0) return;
  bool same = out.offset == in.offset && out.ndim == in.ndim && out.dtype == in.dtype;
  for (int32_t d = 0; same && d < out.ndim; ++d)
    same = out.sizes[d] == in.sizes[d] && out.strides[d] == in.strides[d];
  if (same) return;
  int64_t a0, a1, b0, b1;
  byte_range(out, a0, a1);
  byte_range(in, b0, b1);
  if (a0 < b1 && b0 < a1)
    fail(TSR_INVALID_ARGUMENT,
         "unsupported operation: some elements of the input tensor and the written-to tensor "
         "refer to a single memory location. Please clone() the tensor before performing the "
         "operation.");
}

int64_t required_storage_elements(int32_t ndim, const int64_t* sizes, const int64_t* strides,
                                  int64_t offset, const char* arg) {
  int64_t max_off = offset;
  bool ok = true;
  for (int32_t d = 0; d < ndim; ++d) {
    if (sizes[d] == 0) return 0;
    int64_t span = 0;
    ok = ok && mul_ok(sizes[d] - 1, strides[d], &span) && add_ok(max_off, span, &max_off);
  }
  if (ok && add_ok(max_off, 1, &max_off)) return max_off;
  fail(TSR_INVALID_ARGUMENT,
       "argument '{}': sizes {} with strides {} and storage offset {} address an element beyond "
       "int64; use smaller sizes, strides or offset",
       arg, shape_str(ndim, sizes), shape_str(ndim, strides), offset);
}

int64_t checked_nbytes(int64_t elements, size_t itemsize, const char* arg) {
  return checked_mul(elements, static_cast<int64_t>(itemsize), [&] {
    return overflow_message(arg, std::to_string(elements) + " elements",
                            fmt::format("the byte count at {} bytes each", itemsize),
                            "use smaller sizes");
  });
}

}  // namespace tsr
