// tessera/sdk/strided.hpp - walking N-d strided tensors (tsr_tensor_desc) fast.
//
// A `strided_layout<N>` describes N operands sharing one iteration shape, each
// with its own byte strides (so operands of different dtypes mix freely).
// make_layout() builds it from descriptors and simplifies it without changing
// which elements pair up:
//   - dims of size 1 are dropped;
//   - adjacent dims d-1, d are merged when, for every operand,
//     stride[d-1] == stride[d] * size[d] (they walk memory as one dim).
// A contiguous tensor thus becomes one dim, a broadcast row over a matrix two.
// Dims keep their order: the last one is the innermost.
//
// for_each_run() visits the linear element range [begin, end) (row-major order
// over the layout) as runs along the innermost dim: f(ptrs, count) gets each
// operand's address of the run's first element; consecutive elements of the run
// are layout.strides[k][layout.ndim - 1] bytes apart (0 for a 0-d layout). The
// range form lets callers split work between threads. No allocation, no
// exceptions; at most TSR_MAX_DIMS dims.
//
// Also: numel(), is_contiguous() (row-major, size-1 dims ignored),
// matrix_view_of() (mm / bmm operands as batches of matrices), lines_along()
// (the lines along one dim: sort, scan, gather, scatter) and
// all_contiguous() ("every operand contiguous with the same sizes": one memcpy-
// shaped loop covers them).
#ifndef TESSERA_SDK_STRIDED_HPP_
#define TESSERA_SDK_STRIDED_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/types.h"

namespace tessera::sdk {

// Number of elements of `desc` (1 for 0-d).
inline int64_t numel(const tsr_tensor_desc& desc) noexcept {
  int64_t n = 1;
  for (int d = 0; d < desc.ndim; ++d) n *= desc.sizes[d];
  return n;
}

// Row-major contiguous: strides[d] == product of sizes[d+1..], ignoring dims of
// size 1 (whose stride never matters). Empty tensors count as contiguous.
inline bool is_contiguous(const tsr_tensor_desc& desc) noexcept {
  int64_t expected = 1;
  for (int d = desc.ndim - 1; d >= 0; --d) {
    const int64_t size = desc.sizes[d];
    if (size == 0) return true;
    if (size != 1 && desc.strides[d] != expected) return false;
    expected *= size;
  }
  return true;
}

// A 2-d (rows, cols) or 3-d (batch, rows, cols) tensor as a batch of
// matrices, with element strides (mm, bmm); a 2-d one is a batch of one.
struct matrix_view {
  char* data = nullptr;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
};
inline matrix_view matrix_view_of(const tsr_tensor_desc& desc) noexcept {
  matrix_view m;
  m.data = static_cast<char*>(desc.data);
  const int off = desc.ndim - 2;
  if (off == 1) {
    m.batch = desc.sizes[0];
    m.batch_stride = desc.strides[0];
  }
  m.rows = desc.sizes[off];
  m.cols = desc.sizes[off + 1];
  m.row_stride = desc.strides[off];
  m.col_stride = desc.strides[off + 1];
  return m;
}

inline bool same_sizes(const tsr_tensor_desc& a, const tsr_tensor_desc& b) noexcept {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.sizes[d] != b.sizes[d]) return false;
  }
  return true;
}

// Every operand contiguous, all with the sizes of descs[0].
template <size_t N>
bool all_contiguous(const tsr_tensor_desc* const (&descs)[N]) noexcept {
  for (size_t k = 0; k < N; ++k) {
    if (!is_contiguous(*descs[k]) || !same_sizes(*descs[0], *descs[k])) return false;
  }
  return true;
}

// Entries at and past `ndim` are unspecified (left uninitialised: building a
// layout must cost nanoseconds).
template <size_t N>
struct strided_layout {
  int ndim = 0;                      // 0 .. TSR_MAX_DIMS after simplification
  int64_t sizes[TSR_MAX_DIMS];       // last = innermost
  int64_t strides[N][TSR_MAX_DIMS];  // bytes, per operand

  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= sizes[d];
    return n;
  }
  // Byte stride of operand k along the innermost dim (0 for 0-d).
  int64_t inner_stride(size_t k) const noexcept { return ndim ? strides[k][ndim - 1] : 0; }
  int64_t inner_size() const noexcept { return ndim ? sizes[ndim - 1] : 1; }
};

// Builds the simplified layout of `ndim` dims of `sizes` for N operands whose
// element strides are strides[k] and element sizes elem_sizes[k] bytes.
template <size_t N>
strided_layout<N> make_layout(int ndim, const int64_t* sizes, const int64_t* const (&strides)[N],
                              const size_t (&elem_sizes)[N]) noexcept {
  strided_layout<N> layout;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 0) {  // empty: one dim of size 0 is all callers need
      layout.ndim = 1;
      layout.sizes[0] = 0;
      for (size_t k = 0; k < N; ++k) layout.strides[k][0] = 0;
      return layout;
    }
  }
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    const int i = layout.ndim;
    bool merge = i > 0;
    for (size_t k = 0; k < N && merge; ++k) {
      merge = layout.strides[k][i - 1] ==
              strides[k][d] * static_cast<int64_t>(elem_sizes[k]) * sizes[d];
    }
    if (merge) {
      layout.sizes[i - 1] *= sizes[d];
      for (size_t k = 0; k < N; ++k) {
        layout.strides[k][i - 1] = strides[k][d] * static_cast<int64_t>(elem_sizes[k]);
      }
    } else {
      layout.sizes[i] = sizes[d];
      for (size_t k = 0; k < N; ++k) {
        layout.strides[k][i] = strides[k][d] * static_cast<int64_t>(elem_sizes[k]);
      }
      layout.ndim = i + 1;
    }
  }
  return layout;
}

// The layout of N descriptors iterated over the sizes of descs[0] (the others
// must have those sizes or be broadcast to them with stride 0; callers check).
template <size_t N>
strided_layout<N> make_layout(const tsr_tensor_desc* const (&descs)[N]) noexcept {
  const int64_t* strides[N];
  size_t elem_sizes[N];
  bool contiguous = true;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = descs[k]->strides;
    elem_sizes[k] = element_size(descs[k]->dtype);
    contiguous = contiguous && is_contiguous(*descs[k]);
  }
  if (contiguous) {  // the common case, without the general loop
    strided_layout<N> layout;
    layout.ndim = 1;
    layout.sizes[0] = numel(*descs[0]);
    for (size_t k = 0; k < N; ++k) layout.strides[k][0] = static_cast<int64_t>(elem_sizes[k]);
    return layout;
  }
  return make_layout<N>(descs[0]->ndim, descs[0]->sizes, strides, elem_sizes);
}

// The lines along dim `dim` of N operands that share the sizes `sizes`
// (`ndim` dims): the other dims in order, with each operand's strides (in
// elements) along them. Ops that handle one line at a time (sort, scan,
// gather, scatter) iterate these and walk `dim` themselves.
//   const sdk::dim_lines<2> l = sdk::lines_along<2>(dim, in.ndim, in.sizes,
//                                                   {in.strides, out.strides});
//   const auto layout = sdk::make_layout(l, {in_size, out_size});
template <size_t N>
struct dim_lines {
  int ndim = 0;  // the dims other than `dim`
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t strides[N][TSR_MAX_DIMS] = {};

  // Whether two lines reach the same element of operand k (it is broadcast:
  // stride 0 along a dim of size > 1), so writers of k cannot run in parallel.
  bool overlaps(size_t k) const noexcept {
    for (int i = 0; i < ndim; ++i) {
      if (strides[k][i] == 0 && sizes[i] > 1) return true;
    }
    return false;
  }
};

template <size_t N>
dim_lines<N> lines_along(int dim, int ndim, const int64_t* sizes,
                         const int64_t* const (&strides)[N]) noexcept {
  dim_lines<N> l;
  for (int d = 0; d < ndim; ++d) {
    if (d == dim) continue;
    l.sizes[l.ndim] = sizes[d];
    for (size_t k = 0; k < N; ++k) l.strides[k][l.ndim] = strides[k][d];
    ++l.ndim;
  }
  return l;
}

// The layout of dim_lines `l`'s iteration (make_layout above).
template <size_t N>
strided_layout<N> make_layout(const dim_lines<N>& l, const size_t (&elem_sizes)[N]) noexcept {
  const int64_t* strides[N];
  for (size_t k = 0; k < N; ++k) strides[k] = l.strides[k];
  return make_layout<N>(l.ndim, l.sizes, strides, elem_sizes);
}

// Visits elements [begin, end) of `layout` as innermost-dim runs; see the top
// of the file. `base[k]` is operand k's address of element (0, ..., 0).
template <size_t N, class F>
void for_each_run(const strided_layout<N>& layout, char* const (&base)[N], int64_t begin,
                  int64_t end, F&& f) {
  if (begin >= end) return;
  char* ptrs[N];
  if (layout.ndim == 0) {
    for (size_t k = 0; k < N; ++k) ptrs[k] = base[k];
    f(ptrs, int64_t{1});
    return;
  }
  const int inner = layout.ndim - 1;
  int64_t index[TSR_MAX_DIMS] = {};
  for (size_t k = 0; k < N; ++k) ptrs[k] = base[k];
  if (begin != 0) {
    int64_t rest = begin;
    for (int d = inner; d >= 0; --d) {
      index[d] = rest % layout.sizes[d];
      rest /= layout.sizes[d];
    }
    for (size_t k = 0; k < N; ++k) {
      for (int d = 0; d <= inner; ++d) ptrs[k] += index[d] * layout.strides[k][d];
    }
  }
  int64_t remaining = end - begin;
  for (;;) {
    const int64_t count = std::min(layout.sizes[inner] - index[inner], remaining);
    f(static_cast<char* const(&)[N]>(ptrs), count);
    remaining -= count;
    if (remaining <= 0) return;
    // Back to the start of the innermost dim, then odometer-increment the rest.
    for (size_t k = 0; k < N; ++k) ptrs[k] -= index[inner] * layout.strides[k][inner];
    index[inner] = 0;
    for (int d = inner - 1; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) ptrs[k] += layout.strides[k][d];
      if (++index[d] < layout.sizes[d]) break;
      for (size_t k = 0; k < N; ++k) ptrs[k] -= index[d] * layout.strides[k][d];
      index[d] = 0;
    }
  }
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_STRIDED_HPP_
