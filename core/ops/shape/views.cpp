// View ops: new TensorImpls over the same storage and version counter
// (Note [Version counter]), computed by the core for every device. Error
// messages follow PyTorch's.
#include <algorithm>

#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/checked_math.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

void result_view(OpCall& c, TensorImpl* self, int32_t ndim, const int64_t* sizes,
                 const int64_t* strides, int64_t offset) {
  c.set_result(make_alias(self, ndim, sizes, strides, offset));
}

const tsr_value& list_arg(const OpCall& c, int i) { return c.args[i]; }

// a * b for a view's strides and offset (Note [Checked size arithmetic]). A
// non-empty view stays inside its storage, whose byte count fits int64, so only
// an empty tensor's sizes and strides (never bounded: as_strided accepts any
// stride for zero elements) can overflow here; an empty view addresses
// nothing, so any value does and `a` is kept.
int64_t view_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  return mul_ok(a, b, &product) ? product : a;
}
// offset + index * stride, under the same rule (`offset` kept).
int64_t view_offset(int64_t offset, int64_t index, int64_t stride) {
  int64_t step = 0, out = 0;
  return mul_ok(index, stride, &step) && add_ok(offset, step, &out) ? out : offset;
}

}  // namespace

void view(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_value& size = list_arg(c, 1);
  Shape s = infer_size(size.len, size.u.ints, self->numel, "size");
  int64_t strides[TSR_MAX_DIMS];
  if (!compute_view_strides(self->ndim, self->sizes, self->strides, s.ndim, s.sizes, strides))
    fail(TSR_INVALID_ARGUMENT,
         "view size is not compatible with input tensor's size and stride (at least one "
         "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  result_view(c, self, s.ndim, s.sizes, strides, self->offset);
}

void reshape(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_value& size = list_arg(c, 1);
  Shape s = infer_size(size.len, size.u.ints, self->numel, "shape");
  int64_t strides[TSR_MAX_DIMS];
  if (compute_view_strides(self->ndim, self->sizes, self->strides, s.ndim, s.sizes, strides)) {
    result_view(c, self, s.ndim, s.sizes, strides, self->offset);
    return;
  }
  TensorRef copy = contiguous_of(self);
  contiguous_strides(s.ndim, s.sizes, strides);
  result_view(c, copy.get(), s.ndim, s.sizes, strides, copy->offset);
}

void transpose(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  int32_t d0 = wrap_dim(c.int_arg(1), self->ndim, "dim0");
  int32_t d1 = wrap_dim(c.int_arg(2), self->ndim, "dim1");
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  std::copy(self->sizes, self->sizes + self->ndim, sizes);
  std::copy(self->strides, self->strides + self->ndim, strides);
  if (self->ndim > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  result_view(c, self, self->ndim, sizes, strides, self->offset);
}

void t(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim > 2)
    fail(TSR_INVALID_ARGUMENT,
         "t() expects a tensor with <= 2 dimensions, but self is {}D; use transpose(dim0, dim1)",
         self->ndim);
  int64_t sizes[2], strides[2];
  for (int32_t d = 0; d < self->ndim; ++d) {
    sizes[d] = self->sizes[self->ndim - 1 - d];
    strides[d] = self->strides[self->ndim - 1 - d];
  }
  result_view(c, self, self->ndim, sizes, strides, self->offset);
}

void permute(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_value& dims = list_arg(c, 1);
  if (dims.len != self->ndim)
    fail(TSR_INVALID_ARGUMENT,
         "permute(sparse_coo): number of dimensions in the tensor input does not match the "
         "length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to "
         "len(dims) = {}",
         self->ndim, dims.len);
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  uint32_t seen = 0;
  for (int32_t i = 0; i < dims.len; ++i) {
    int32_t d = wrap_dim(dims.u.ints[i], self->ndim, "dims");
    if (seen & (1u << d))
      fail(TSR_INVALID_ARGUMENT, "permute(): duplicate dims are not allowed (dim {} repeats)", d);
    seen |= 1u << d;
    sizes[i] = self->sizes[d];
    strides[i] = self->strides[d];
  }
  result_view(c, self, self->ndim, sizes, strides, self->offset);
}

void slice(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0) fail(TSR_INVALID_ARGUMENT, "slice() cannot be applied to a 0-dim tensor.");
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  int64_t size = self->sizes[dim];
  int64_t start = c.is_none(2) ? 0 : c.int_arg(2);
  int64_t end = c.is_none(3) ? size : c.int_arg(3);
  int64_t step = c.int_arg(4);
  if (step <= 0)
    fail(TSR_INVALID_ARGUMENT, "argument 'step' = {}: slice step must be positive", step);
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, 0, size);
  if (end < start) end = start;
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  std::copy(self->sizes, self->sizes + self->ndim, sizes);
  std::copy(self->strides, self->strides + self->ndim, strides);
  // ceil((end - start) / step) without forming end - start + step - 1.
  const int64_t span = end - start;
  sizes[dim] = span / step + (span % step != 0 ? 1 : 0);
  // stride * step, as PyTorch reports it even for a dim of 0 or 1 elements;
  // such a dim never steps, so where the product would overflow the stride
  // stays (view_mul).
  strides[dim] = view_mul(self->strides[dim], step);
  result_view(c, self, self->ndim, sizes, strides,
              view_offset(self->offset, start, self->strides[dim]));
}

void select(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0) fail(TSR_INVALID_ARGUMENT, "select() cannot be applied to a 0-dim tensor.");
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  int64_t index = c.int_arg(2);
  int64_t size = self->sizes[dim];
  if (index < -size || index >= size)
    fail(TSR_OUT_OF_RANGE, "select(): index {} out of range for tensor of size {} at dimension {}",
         index, shape_str(self->ndim, self->sizes), dim);
  if (index < 0) index += size;
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < self->ndim; ++d)
    if (d != dim) {
      sizes[n] = self->sizes[d];
      strides[n++] = self->strides[d];
    }
  result_view(c, self, n, sizes, strides, view_offset(self->offset, index, self->strides[dim]));
}

void expand(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_value& size = list_arg(c, 1);
  if (size.len < self->ndim)
    fail(TSR_INVALID_ARGUMENT,
         "expand: the number of sizes provided ({}) must be greater or equal to the number of "
         "dimensions in the tensor ({})",
         size.len, self->ndim);
  int32_t n = size.len, lead = n - self->ndim;
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  for (int32_t i = n - 1; i >= 0; --i) {
    int64_t want = size.u.ints[i];
    int32_t src = i - lead;
    if (src < 0) {
      if (want < 0)
        fail(TSR_INVALID_ARGUMENT,
             "expand: the expanded size of the tensor ({}) isn't allowed in a leading, "
             "non-existing dimension {}",
             want, i);
      sizes[i] = want;
      strides[i] = 0;
      continue;
    }
    int64_t have = self->sizes[src];
    if (want == -1) want = have;
    if (want < 0) fail(TSR_INVALID_ARGUMENT, "expand: invalid size {} at dim {}", want, i);
    if (have == want) {
      sizes[i] = have;
      strides[i] = self->strides[src];
    } else if (have == 1) {
      sizes[i] = want;
      strides[i] = 0;
    } else {
      fail(TSR_INVALID_ARGUMENT,
           "The expanded size of the tensor ({}) must match the existing size ({}) at "
           "non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
           want, have, i, shape_str(n, size.u.ints), shape_str(self->ndim, self->sizes));
    }
  }
  // Stride 0 keeps the storage small, but numel must still fit int64.
  check_sizes(n, sizes, self->itemsize(), "size");
  result_view(c, self, n, sizes, strides, self->offset);
}

void squeeze(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < self->ndim; ++d)
    if (self->sizes[d] != 1) {
      sizes[n] = self->sizes[d];
      strides[n++] = self->strides[d];
    }
  result_view(c, self, n, sizes, strides, self->offset);
}

void squeeze_dim(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < self->ndim; ++d)
    if (d != dim || self->sizes[d] != 1) {
      sizes[n] = self->sizes[d];
      strides[n++] = self->strides[d];
    }
  result_view(c, self, n, sizes, strides, self->offset);
}

void unsqueeze(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim >= TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "unsqueeze: the tensor already has {} (TSR_MAX_DIMS) dims",
         TSR_MAX_DIMS);
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim + 1, "dim");
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d <= self->ndim; ++d) {
    if (d == dim) {
      sizes[n] = 1;
      strides[n++] = d < self->ndim ? view_mul(self->sizes[d], self->strides[d]) : 1;
    }
    if (d < self->ndim) {
      sizes[n] = self->sizes[d];
      strides[n++] = self->strides[d];
    }
  }
  result_view(c, self, n, sizes, strides, self->offset);
}

void as_strided(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_value& size = list_arg(c, 1);
  const tsr_value& stride = list_arg(c, 2);
  if (size.len != stride.len)
    fail(TSR_INVALID_ARGUMENT,
         "as_strided: mismatch in length of strides and shape ({} sizes, {} strides)", size.len,
         stride.len);
  check_sizes(size.len, size.u.ints, self->itemsize(), "size");
  for (int32_t d = 0; d < stride.len; ++d)
    if (stride.u.ints[d] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "as_strided: negative strides are not supported (stride {} at dim {})", stride.u.ints[d],
           d);
  int64_t offset = c.is_none(3) ? self->offset : c.int_arg(3);
  if (offset < 0)
    fail(TSR_INVALID_ARGUMENT, "as_strided: storage_offset must be >= 0, got {}", offset);
  int64_t need = required_storage_elements(size.len, size.u.ints, stride.u.ints, offset, "stride");
  int64_t bytes = checked_nbytes(need, self->itemsize(), "stride");
  if (static_cast<uint64_t>(bytes) > self->storage->nbytes)
    fail(TSR_OUT_OF_RANGE,
         "as_strided: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a "
         "storage size of {} are out of bounds for storage of size {}; pass sizes, strides and "
         "storage_offset that stay inside the storage",
         shape_str(size.len, size.u.ints), shape_str(stride.len, stride.u.ints), offset,
         self->itemsize(), bytes, self->storage->nbytes);
  result_view(c, self, size.len, size.u.ints, stride.u.ints, offset);
}

void detach(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  result_view(c, self, self->ndim, self->sizes, self->strides, self->offset);
}

void alias(OpCall& c) { detach(c); }

}  // namespace tsr::ops
