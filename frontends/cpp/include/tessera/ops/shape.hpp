// tessera/ops/shape.hpp - typed wrappers of the shape op family
// (core/registry/defs/shape.def): joining (cat, stack, hstack, vstack), splitting
// (split, split_with_sizes, chunk, unbind), reordering and repeating views and
// copies, with PyTorch's names, defaults and errors.
//
// split/chunk/unbind return std::vector<Tensor> of views built here from
// narrow/select: the registry's results cannot carry a list of any length yet,
// so these have no registry op of their own (PyTorch's results: same sizes,
// strides and storage).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/boxed_call.hpp"
#include "tessera/tensor.hpp"

namespace tessera {
namespace detail {

// Handles of `tensors` for a Tensor[] argument (borrowed for the call).
inline std::vector<tsr_tensor*> shape_handles(const std::vector<Tensor>& tensors) {
  std::vector<tsr_tensor*> handles;
  handles.reserve(tensors.size());
  for (const Tensor& t : tensors) handles.push_back(t.get());
  return handles;
}

[[noreturn]] inline void shape_error(const std::string& message) {
  throw_error(TSR_INVALID_ARGUMENT, message);
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Joining
// ---------------------------------------------------------------------------

// Concatenates along `dim` (dtype promotion across inputs; 1-d empty tensors
// are skipped as in PyTorch).
inline Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0) {
  const std::vector<tsr_tensor*> handles = detail::shape_handles(tensors);
  const tsr_value args[2] = {detail::value(handles), detail::value(dim)};
  return detail::call(detail::op<"cat">(), args, 2);
}
inline Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0) {
  const std::vector<tsr_tensor*> handles = detail::shape_handles(tensors);
  const tsr_value args[3] = {detail::value(handles), detail::value(dim), detail::value(out)};
  detail::call_in_place(detail::op<"cat.out">(), args, 3);
  return out;
}
// Joins equally shaped tensors along a new dim.
inline Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0) {
  const std::vector<tsr_tensor*> handles = detail::shape_handles(tensors);
  const tsr_value args[2] = {detail::value(handles), detail::value(dim)};
  return detail::call(detail::op<"stack">(), args, 2);
}
inline Tensor hstack(const std::vector<Tensor>& tensors) {
  const std::vector<tsr_tensor*> handles = detail::shape_handles(tensors);
  const tsr_value args[1] = {detail::value(handles)};
  return detail::call(detail::op<"hstack">(), args, 1);
}
inline Tensor vstack(const std::vector<Tensor>& tensors) {
  const std::vector<tsr_tensor*> handles = detail::shape_handles(tensors);
  const tsr_value args[1] = {detail::value(handles)};
  return detail::call(detail::op<"vstack">(), args, 1);
}

// ---------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------

// Elements [start, start + length) of `dim` (start may be negative).
inline Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(start),
                             detail::value(length)};
  return detail::call(detail::op<"narrow">(), args, 4);
}
inline Tensor movedim(const Tensor& self, IntList source, IntList destination) {
  const tsr_value args[3] = {detail::value(self), detail::value(source),
                             detail::value(destination)};
  return detail::call(detail::op<"movedim.intlist">(), args, 3);
}
inline Tensor movedim(const Tensor& self, int64_t source, int64_t destination) {
  const tsr_value args[3] = {detail::value(self), detail::value(source),
                             detail::value(destination)};
  return detail::call(detail::op<"movedim.int">(), args, 3);
}
inline Tensor moveaxis(const Tensor& self, IntList source, IntList destination) {
  return movedim(self, source, destination);
}
inline Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) {
  const tsr_value args[3] = {detail::value(self), detail::value(axis0), detail::value(axis1)};
  return detail::call(detail::op<"swapaxes">(), args, 3);
}
inline Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) {
  return swapaxes(self, dim0, dim1);
}
inline Tensor expand_as(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"expand_as">(), args, 2);
}
inline Tensor view_as(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"view_as">(), args, 2);
}
inline Tensor reshape_as(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"reshape_as">(), args, 2);
}
inline Tensor broadcast_to(const Tensor& self, IntList size) {
  const tsr_value args[2] = {detail::value(self), detail::value(size)};
  return detail::call(detail::op<"broadcast_to">(), args, 2);
}
// The diagonal of dims (dim1, dim2) as the last dim of a view.
inline Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) {
  const tsr_value args[4] = {detail::value(self), detail::value(offset), detail::value(dim1),
                             detail::value(dim2)};
  return detail::call(detail::op<"diagonal">(), args, 4);
}
// Dims start_dim..end_dim merged into one (a view when possible).
inline Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1) {
  const tsr_value args[3] = {detail::value(self), detail::value(start_dim), detail::value(end_dim)};
  return detail::call(detail::op<"flatten.using_ints">(), args, 3);
}
// Dim `dim` split into `sizes` (one entry may be -1).
inline Tensor unflatten(const Tensor& self, int64_t dim, IntList sizes) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(sizes)};
  return detail::call(detail::op<"unflatten.int">(), args, 3);
}

// ---------------------------------------------------------------------------
// Splitting (views)
// ---------------------------------------------------------------------------

// Pieces of `split_size` along dim (the last may be smaller).
inline std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0) {
  if (self.dim() == 0) detail::shape_error("split: a 0-d tensor cannot be split; unsqueeze it");
  const int64_t size = self.size(dim);
  if (split_size < 0 || (split_size == 0 && size != 0)) {
    detail::shape_error("split: argument 'split_size' = " + std::to_string(split_size) +
                        ": split_size can only be 0 if dimension size is 0, and must be "
                        "non-negative");
  }
  std::vector<Tensor> pieces;
  if (size == 0) {
    pieces.push_back(narrow(self, dim, 0, 0));
    return pieces;
  }
  for (int64_t start = 0; start < size; start += split_size) {
    pieces.push_back(narrow(self, dim, start, std::min(split_size, size - start)));
  }
  return pieces;
}
// Pieces of the given sizes along dim (they must sum to the dim's size).
inline std::vector<Tensor> split_with_sizes(const Tensor& self, IntList split_sizes,
                                            int64_t dim = 0) {
  if (self.dim() == 0) {
    detail::shape_error("split_with_sizes: a 0-d tensor cannot be split; unsqueeze it");
  }
  const int64_t size = self.size(dim);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) {
      detail::shape_error("split_with_sizes: argument 'split_sizes' has the negative entry " +
                          std::to_string(s));
    }
    total += s;
  }
  if (total != size) {
    detail::shape_error("split_with_sizes expects split_sizes to sum exactly to " +
                        std::to_string(size) + " (input tensor's size at dimension " +
                        std::to_string(dim) + "), but got a sum of " + std::to_string(total));
  }
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    pieces.push_back(narrow(self, dim, start, s));
    start += s;
  }
  return pieces;
}
inline std::vector<Tensor> split(const Tensor& self, IntList split_sizes, int64_t dim) {
  return split_with_sizes(self, split_sizes, dim);
}
// `chunks` pieces of ceil(size / chunks) along dim (fewer when they run out).
inline std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0) {
  if (self.dim() == 0) detail::shape_error("chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) {
    detail::shape_error("chunk expects `chunks` to be greater than 0, got: " +
                        std::to_string(chunks));
  }
  const int64_t size = self.size(dim);
  const int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0) {
    std::vector<Tensor> pieces;
    for (int64_t i = 0; i < chunks; ++i) pieces.push_back(narrow(self, dim, 0, 0));
    return pieces;
  }
  return split(self, split_size, dim);
}
// Every index of dim, as views without that dim.
inline std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0) {
  if (self.dim() == 0)
    detail::shape_error("unbind: dimension specified as 0 but tensor has no dimensions");
  const int64_t size = self.size(dim);
  std::vector<Tensor> pieces;
  pieces.reserve(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) pieces.push_back(self.select(dim, i));
  return pieces;
}

// ---------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------

// A new tensor with its own storage (Tensor::clone, tensor_methods.hpp).
inline Tensor clone(const Tensor& self, MemoryFormat format = MemoryFormat::Preserve) {
  return self.clone(format);
}

inline Tensor flip(const Tensor& self, IntList dims) {
  const tsr_value args[2] = {detail::value(self), detail::value(dims)};
  return detail::call(detail::op<"flip">(), args, 2);
}
// Rotates elements by shifts[i] along dims[i]; without dims, the flattened
// tensor by shifts[0].
inline Tensor roll(const Tensor& self, IntList shifts, IntList dims = {}) {
  const tsr_value args[3] = {detail::value(self), detail::value(shifts), detail::value(dims)};
  return detail::call(detail::op<"roll">(), args, 3);
}
inline Tensor repeat(const Tensor& self, IntList repeats) {
  const tsr_value args[2] = {detail::value(self), detail::value(repeats)};
  return detail::call(detail::op<"repeat">(), args, 2);
}
inline Tensor tile(const Tensor& self, IntList dims) {
  const tsr_value args[2] = {detail::value(self), detail::value(dims)};
  return detail::call(detail::op<"tile">(), args, 2);
}
// 1-d: a square matrix with `self` on diagonal `diagonal`; 2-d: that diagonal.
inline Tensor diag(const Tensor& self, int64_t diagonal = 0) {
  const tsr_value args[2] = {detail::value(self), detail::value(diagonal)};
  return detail::call(detail::op<"diag">(), args, 2);
}
inline Tensor tril(const Tensor& self, int64_t diagonal = 0) {
  const tsr_value args[2] = {detail::value(self), detail::value(diagonal)};
  return detail::call(detail::op<"tril">(), args, 2);
}
inline Tensor triu(const Tensor& self, int64_t diagonal = 0) {
  const tsr_value args[2] = {detail::value(self), detail::value(diagonal)};
  return detail::call(detail::op<"triu">(), args, 2);
}
inline Tensor& tril_(Tensor& self, int64_t diagonal = 0) {
  const tsr_value args[2] = {detail::value(self), detail::value(diagonal)};
  detail::call_in_place(detail::op<"tril_">(), args, 2);
  return self;
}
inline Tensor& triu_(Tensor& self, int64_t diagonal = 0) {
  const tsr_value args[2] = {detail::value(self), detail::value(diagonal)};
  detail::call_in_place(detail::op<"triu_">(), args, 2);
  return self;
}

}  // namespace tessera
