// Shape and stride arithmetic shared by ops and the ABI: validation, broadcasting,
// contiguity per memory format, view stride computation and overlap checks.
// All functions are pure; the throwing ones throw tsr::Error naming `arg`.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor_impl.h"
#include "tessera/types.h"

namespace tsr {

struct Shape {
  int32_t ndim = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
};
inline int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int32_t d = 0; d < s.ndim; ++d) n *= s.sizes[d];
  return n;
}

// Validates ndim (0..TSR_MAX_DIMS), non-null sizes when ndim > 0, sizes >= 0 and
// that numel * itemsize fits in int64. Returns numel.
int64_t check_sizes(int32_t ndim, const int64_t* sizes, size_t itemsize, const char* arg);
// Row-major strides for `sizes`.
void contiguous_strides(int32_t ndim, const int64_t* sizes, int64_t* out_strides);
// Wraps a possibly negative dim into [0, ndim); OUT_OF_RANGE naming `arg` otherwise.
// `ndim` 0 accepts dims -1 and 0 (PyTorch treats a scalar as having one dim here).
int32_t wrap_dim(int64_t dim, int32_t ndim, const char* arg);
// PyTorch broadcasting of two shapes; INVALID_ARGUMENT naming both shapes otherwise.
Shape broadcast_shapes(int32_t na, const int64_t* a, int32_t nb, const int64_t* b);
std::string shape_str(int32_t ndim, const int64_t* sizes);
// Contiguity in a memory format (PyTorch's is_contiguous(memory_format)).
bool is_contiguous_as(const TensorImpl& t, tsr_memory_format format);
// True when the tensor's elements occupy a dense block without gaps or overlap.
bool is_non_overlapping_and_dense(const TensorImpl& t);
// Strides of a non-overlapping dense layout with the same dim order as `t`
// (PyTorch's preserve_format for clone/empty_like).
void preserve_strides(const TensorImpl& t, int64_t* out_strides);
// Channels-last strides for a 4-d (NCHW sizes) tensor.
void channels_last_strides(int32_t ndim, const int64_t* sizes, int64_t* out_strides);
// View strides for `sizes` over (old sizes, old strides), or false when no
// view exists (PyTorch's computeStride).
bool compute_view_strides(int32_t old_ndim, const int64_t* old_sizes, const int64_t* old_strides,
                          int32_t ndim, const int64_t* sizes, int64_t* out_strides);
// Resolves one -1 in `sizes` against `numel`; INVALID_ARGUMENT otherwise.
Shape infer_size(int32_t ndim, const int64_t* sizes, int64_t numel, const char* arg);
// Internal overlap (PyTorch's has_internal_overlap == YES): some element is
// reachable through two indices. Throws the seed's message for written tensors.
void assert_no_internal_overlap(const TensorImpl& t, const char* op = nullptr,
                                const char* arg = "self");
// Partial overlap between a written tensor and an input (same storage, ranges
// intersect, and not exactly the same view).
void assert_no_partial_overlap(const TensorImpl& out, const TensorImpl& in);
// Highest element offset + 1 addressed by (sizes, strides, offset); 0 if empty.
// Sizes, strides and offset must be >= 0. INVALID_ARGUMENT naming `arg` when the
// extent overflows int64 (Note [Checked size arithmetic], util/checked_math.h).
int64_t required_storage_elements(int32_t ndim, const int64_t* sizes, const int64_t* strides,
                                  int64_t offset, const char* arg = "strides");
// elements * itemsize; INVALID_ARGUMENT naming `arg` when it overflows int64.
int64_t checked_nbytes(int64_t elements, size_t itemsize, const char* arg);

}  // namespace tsr
