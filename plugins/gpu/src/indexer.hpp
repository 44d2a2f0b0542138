// indexer.hpp - N-d strided addressing for the shared kernels.
//
// An Indexer<N> is N operands walked over one iteration shape (row-major
// element order, the last dim innermost): byte strides per operand, dims
// coalesced on the host (sdk::make_layout drops size-1 dims and merges dims
// every operand walks as one), so a contiguous tensor of any rank is one dim
// and a broadcast row over a matrix two. It is trivially copyable and passed
// by value to kernels. offsets() turns a linear element index into each
// operand's byte offset with one division per dim.
//
// Invariants: 0 <= ndim <= TSR_MAX_DIMS; sizes[d] >= 1 for d < ndim unless the
// iteration is empty (then ndim == 1, sizes[0] == 0); entries past ndim are 0.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "tessera/sdk/strided.hpp"
#include "tessera/types.h"

namespace tessera::gpu {

template <int N>
struct Indexer {
  int ndim = 0;
  int64_t numel = 1;
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t strides[N][TSR_MAX_DIMS] = {};  // bytes

  // Byte offsets of operand k of linear element `i` (0 <= i < numel).
  TSR_HD void offsets(int64_t i, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t size = sizes[d];
      const int64_t idx = i % size;
      i /= size;
      for (int k = 0; k < N; ++k) out[k] += idx * strides[k][d];
    }
  }
  // One operand's byte offset (cheaper when a kernel needs only one).
  TSR_HD int64_t offset(int k, int64_t i) const {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t size = sizes[d];
      off += (i % size) * strides[k][d];
      i /= size;
    }
    return off;
  }
  // Every operand contiguous, in one dim with the element sizes as strides.
  bool contiguous(const int (&elem_sizes)[N]) const {
    if (ndim > 1) return false;
    if (ndim == 0) return true;
    for (int k = 0; k < N; ++k)
      if (strides[k][0] != elem_sizes[k]) return false;
    return true;
  }
};

// An Indexer over `ndim` dims of `sizes`, operand k with element strides
// strides[k] and elements of elem[k] bytes, simplified (size-1 dims dropped,
// mergeable dims merged). Host only.
template <int N>
Indexer<N> indexer_of(int ndim, const int64_t* sizes, const int64_t* const (&strides)[N],
                      const size_t (&elem)[N]) {
  const auto layout = sdk::make_layout<static_cast<size_t>(N)>(ndim, sizes, strides, elem);
  Indexer<N> ix;
  ix.ndim = layout.ndim;
  ix.numel = layout.numel();
  for (int d = 0; d < layout.ndim; ++d) {
    ix.sizes[d] = layout.sizes[d];
    for (int k = 0; k < N; ++k) ix.strides[k][d] = layout.strides[k][d];
  }
  return ix;
}

// The indexer of N descriptors over the sizes of descs[0] (the others have
// those sizes or are broadcast to them with stride 0). Host only.
template <int N>
Indexer<N> make_indexer(const tsr_tensor_desc* const (&descs)[N]) {
  const int64_t* strides[N];
  size_t elem[N];
  for (int k = 0; k < N; ++k) {
    strides[k] = descs[k]->strides;
    elem[k] = sdk::element_size(descs[k]->dtype);
  }
  return indexer_of<N>(descs[0]->ndim, descs[0]->sizes, strides, elem);
}

// The Indexer of sdk::lines_along's lines.
template <int N>
Indexer<N> indexer_of(const sdk::dim_lines<static_cast<size_t>(N)>& l, const size_t (&elem)[N]) {
  const int64_t* strides[N];
  for (int k = 0; k < N; ++k) strides[k] = l.strides[k];
  return indexer_of<N>(l.ndim, l.sizes, strides, elem);
}

}  // namespace tessera::gpu
