// lines.hpp - walking a tensor as lines along one dim, for the kernels that
// work along a single dim (_arg_reduce, _scan, cummax/cummin, softmax).
//
// A `line_layout<N>` holds N operands (input first, then outputs): `lines` is
// the simplified layout of every dim except `dim` (one line per element of it),
// `n` the length along `dim` and `step[k]` operand k's byte stride along it.
// Two loop shapes cover every case:
//   - per line: elements step[k] bytes apart, contiguous when step[k] equals
//     the element size (dim is innermost);
//   - columns: when dim is not innermost and every operand is contiguous along
//     the lines' innermost dim, a block of adjacent lines is processed together,
//     element k of every line in the block being adjacent in memory (vectorised
//     across lines, memory read in order).
// 0-d tensors are one line of one element.
#ifndef TESSERA_PLUGINS_CPU_REDUCTION_LINES_HPP_
#define TESSERA_PLUGINS_CPU_REDUCTION_LINES_HPP_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {

// True for a NaN of a floating compute type; false for every integer type
// (the arg-reductions and scans treat NaN as the extreme value).
template <class C>
inline bool nan_of(C x) noexcept {
  if constexpr (std::is_floating_point_v<C>) {
    return x != x;
  } else {
    return false;
  }
}

template <size_t N>
struct line_layout {
  sdk::strided_layout<N> lines;
  int64_t n = 1;
  int64_t step[N] = {};
  size_t elem[N] = {};

  int64_t line_count() const noexcept { return lines.numel(); }
  // Every operand contiguous along the lines' innermost dim, and dim is not
  // that innermost dim: the column loop applies.
  bool columns() const noexcept {
    if (lines.ndim == 0 || lines.inner_size() < 4 || n <= 1) return false;
    for (size_t k = 0; k < N; ++k) {
      if (lines.inner_stride(k) != static_cast<int64_t>(elem[k])) return false;
    }
    return true;
  }
  bool contiguous_lines() const noexcept {
    for (size_t k = 0; k < N; ++k) {
      if (step[k] != static_cast<int64_t>(elem[k])) return false;
    }
    return true;
  }
};

// The lines of `descs` (all with the sizes of descs[0] except along `dim`,
// where outputs may have size 1) along `dim` (0 for 0-d tensors).
template <size_t N>
line_layout<N> make_lines(const tsr_tensor_desc* const (&descs)[N], int dim) noexcept {
  line_layout<N> l;
  const tsr_tensor_desc& in = *descs[0];
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[N][TSR_MAX_DIMS];
  int ndim = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (d == dim) continue;
    sizes[ndim] = in.sizes[d];
    for (size_t k = 0; k < N; ++k) strides[k][ndim] = descs[k]->strides[d];
    ++ndim;
  }
  const int64_t* stride_ptrs[N];
  for (size_t k = 0; k < N; ++k) {
    stride_ptrs[k] = strides[k];
    l.elem[k] = sdk::element_size(descs[k]->dtype);
    l.step[k] = in.ndim == 0 ? 0 : descs[k]->strides[dim] * static_cast<int64_t>(l.elem[k]);
  }
  l.n = in.ndim == 0 ? 1 : in.sizes[dim];
  l.lines = sdk::make_layout<N>(ndim, sizes, stride_ptrs, l.elem);
  return l;
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_REDUCTION_LINES_HPP_
