// tessera/ops/indexing.hpp - typed wrappers of the indexing op family
// (core/registry/defs/indexing.def): gather/scatter, index_select, advanced
// indexing (index, index_put), masks, nonzero, sorting and searching, unique.
//
// Ops with two results return std::pair (values, indices); unique and
// unique_consecutive return std::tuple (values, inverse, counts), where a
// result that was not asked for is an empty 1-d tensor (as in PyTorch).
// Advanced indexing takes a std::vector<std::optional<Tensor>>: std::nullopt is
// a full slice (PyTorch's `:` / None entry of Tensor?[]).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/boxed_call.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

using IndexList = std::vector<std::optional<Tensor>>;

namespace detail {

// Calls `op` and adopts its first N results (tensors).
template <size_t N>
std::array<Tensor, N> indexing_results(const tsr_op* op, const tsr_value* args, size_t nargs) {
  tsr_value results[N] = {};
  check(tsr_op_call(op, args, nargs, results, N));
  std::array<Tensor, N> out;
  for (size_t i = 0; i < N; ++i) {
    if (results[i].tag != TSR_VALUE_TENSOR || results[i].u.tensor == nullptr) [[unlikely]] {
      for (size_t j = i + 1; j < N; ++j) {
        if (results[j].tag == TSR_VALUE_TENSOR && results[j].u.tensor != nullptr) {
          const Tensor dropped = Tensor::adopt(results[j].u.tensor);
        }
      }
      throw_not_a_tensor(op, results[i]);
    }
    out[i] = Tensor::adopt(results[i].u.tensor);
  }
  return out;
}

// Handles of a Tensor?[] argument (NULL for std::nullopt), borrowed for the call.
inline std::vector<tsr_tensor*> index_handles(const IndexList& indices) {
  std::vector<tsr_tensor*> handles;
  handles.reserve(indices.size());
  for (const std::optional<Tensor>& t : indices) handles.push_back(t ? t->get() : nullptr);
  return handles;
}

inline tsr_value optional_int(std::optional<int64_t> i) noexcept { return i ? value(*i) : none(); }

}  // namespace detail

// ---------------------------------------------------------------------------
// gather / scatter
// ---------------------------------------------------------------------------

// out[i][j] = self[index[i][j]][j] (dim 0); index is int64 (int32 accepted).
inline Tensor gather(const Tensor& self, int64_t dim, const Tensor& index,
                     bool sparse_grad = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(sparse_grad)};
  return detail::call(detail::op<"gather">(), args, 4);
}
inline Tensor& gather_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const tsr_value args[5] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(false), detail::value(out)};
  detail::call_in_place(detail::op<"gather.out">(), args, 5);
  return out;
}
// A copy of self with self[index[i][j]][j] = src[i][j] (dim 0).
inline Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(src)};
  return detail::call(detail::op<"scatter.src">(), args, 4);
}
inline Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(value)};
  return detail::call(detail::op<"scatter.value">(), args, 4);
}
// reduce: "add" or "multiply".
inline Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const char* reduce) {
  const tsr_value args[5] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(src), detail::value(reduce)};
  return detail::call(detail::op<"scatter.reduce">(), args, 5);
}
inline Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(src)};
  detail::call_in_place(detail::op<"scatter_.src">(), args, 4);
  return self;
}
inline Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(value)};
  detail::call_in_place(detail::op<"scatter_.value">(), args, 4);
  return self;
}
inline Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const char* reduce) {
  const tsr_value args[5] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(src), detail::value(reduce)};
  detail::call_in_place(detail::op<"scatter_.reduce">(), args, 5);
  return self;
}
inline Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(src)};
  return detail::call(detail::op<"scatter_add">(), args, 4);
}
inline Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(src)};
  detail::call_in_place(detail::op<"scatter_add_">(), args, 4);
  return self;
}
// reduce: "sum", "prod", "mean", "amax" or "amin".
inline Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index,
                             const Tensor& src, const char* reduce, bool include_self = true) {
  const tsr_value args[6] = {detail::value(self),   detail::value(dim),
                             detail::value(index),  detail::value(src),
                             detail::value(reduce), detail::value(include_self)};
  return detail::call(detail::op<"scatter_reduce.two">(), args, 6);
}
inline Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                               const char* reduce, bool include_self = true) {
  const tsr_value args[6] = {detail::value(self),   detail::value(dim),
                             detail::value(index),  detail::value(src),
                             detail::value(reduce), detail::value(include_self)};
  detail::call_in_place(detail::op<"scatter_reduce_.two">(), args, 6);
  return self;
}

// ---------------------------------------------------------------------------
// Selecting
// ---------------------------------------------------------------------------

inline Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(index)};
  return detail::call(detail::op<"index_select">(), args, 3);
}
inline Tensor& index_select_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const tsr_value args[4] = {detail::value(self), detail::value(dim), detail::value(index),
                             detail::value(out)};
  detail::call_in_place(detail::op<"index_select.out">(), args, 4);
  return out;
}
// Without dim: over the flattened tensor.
inline Tensor take_along_dim(const Tensor& self, const Tensor& indices,
                             std::optional<int64_t> dim = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::value(indices),
                             detail::optional_int(dim)};
  return detail::call(detail::op<"take_along_dim">(), args, 3);
}
// PyTorch's self[indices...] with tensors: integer tensors broadcast together,
// bool masks select their true positions, std::nullopt keeps a dim whole.
inline Tensor index(const Tensor& self, const IndexList& indices) {
  const std::vector<tsr_tensor*> handles = detail::index_handles(indices);
  const tsr_value args[2] = {detail::value(self), detail::value(handles)};
  return detail::call(detail::op<"index.Tensor">(), args, 2);
}
// self[indices...] = values (or += with accumulate, duplicates summed).
inline Tensor& index_put_(Tensor& self, const IndexList& indices, const Tensor& values,
                          bool accumulate = false) {
  const std::vector<tsr_tensor*> handles = detail::index_handles(indices);
  const tsr_value args[4] = {detail::value(self), detail::value(handles), detail::value(values),
                             detail::value(accumulate)};
  detail::call_in_place(detail::op<"index_put_">(), args, 4);
  return self;
}
inline Tensor index_put(const Tensor& self, const IndexList& indices, const Tensor& values,
                        bool accumulate = false) {
  const std::vector<tsr_tensor*> handles = detail::index_handles(indices);
  const tsr_value args[4] = {detail::value(self), detail::value(handles), detail::value(values),
                             detail::value(accumulate)};
  return detail::call(detail::op<"index_put">(), args, 4);
}
// The elements where mask (broadcast with self) is true, as a 1-d tensor.
inline Tensor masked_select(const Tensor& self, const Tensor& mask) {
  const tsr_value args[2] = {detail::value(self), detail::value(mask)};
  return detail::call(detail::op<"masked_select">(), args, 2);
}
// Copies source's leading elements into self where mask is true (row-major).
inline Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  const tsr_value args[3] = {detail::value(self), detail::value(mask), detail::value(source)};
  detail::call_in_place(detail::op<"masked_scatter_">(), args, 3);
  return self;
}
inline Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const tsr_value args[3] = {detail::value(self), detail::value(mask), detail::value(source)};
  return detail::call(detail::op<"masked_scatter">(), args, 3);
}
// [n, ndim] int64 coordinates of the non-zero elements, row-major.
inline Tensor nonzero(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"nonzero">(), args, 1);
}
inline Tensor argwhere(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"argwhere">(), args, 1);
}

// ---------------------------------------------------------------------------
// Sorting and searching
// ---------------------------------------------------------------------------

// (values, indices); always stable; NaN sorts above +inf.
inline std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1,
                                      bool descending = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(descending)};
  auto r = detail::indexing_results<2>(detail::op<"sort">(), args, 3);
  return {std::move(r[0]), std::move(r[1])};
}
inline std::pair<Tensor, Tensor> sort(const Tensor& self, bool stable, int64_t dim,
                                      bool descending) {
  const tsr_value args[4] = {detail::value(self), detail::value(stable), detail::value(dim),
                             detail::value(descending)};
  auto r = detail::indexing_results<2>(detail::op<"sort.stable">(), args, 4);
  return {std::move(r[0]), std::move(r[1])};
}
inline Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false) {
  const tsr_value args[3] = {detail::value(self), detail::value(dim), detail::value(descending)};
  return detail::call(detail::op<"argsort">(), args, 3);
}
inline Tensor argsort(const Tensor& self, bool stable, int64_t dim, bool descending) {
  const tsr_value args[4] = {detail::value(self), detail::value(stable), detail::value(dim),
                             detail::value(descending)};
  return detail::call(detail::op<"argsort.stable">(), args, 4);
}
// The k largest (or smallest) along dim: (values, indices), sorted.
inline std::pair<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                      bool largest = true, bool sorted = true) {
  const tsr_value args[5] = {detail::value(self), detail::value(k), detail::value(dim),
                             detail::value(largest), detail::value(sorted)};
  auto r = detail::indexing_results<2>(detail::op<"topk">(), args, 5);
  return {std::move(r[0]), std::move(r[1])};
}
// The k-th smallest (1-based) along dim: (values, indices).
inline std::pair<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1,
                                          bool keepdim = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(k), detail::value(dim),
                             detail::value(keepdim)};
  auto r = detail::indexing_results<2>(detail::op<"kthvalue">(), args, 4);
  return {std::move(r[0]), std::move(r[1])};
}
// Insertion points of `self` in the last dim of `sorted_sequence`.
// side: "left", "right" or nullptr (then `right` decides); sorter: the
// argsort of an unsorted sequence.
inline Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self,
                           bool out_int32 = false, bool right = false, const char* side = nullptr,
                           const std::optional<Tensor>& sorter = std::nullopt) {
  const tsr_value args[6] = {detail::value(sorted_sequence),
                             detail::value(self),
                             detail::value(out_int32),
                             detail::value(right),
                             side ? detail::value(side) : detail::none(),
                             sorter ? detail::value(*sorter) : detail::none()};
  return detail::call(detail::op<"searchsorted.Tensor">(), args, 6);
}
inline Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self,
                           bool out_int32 = false, bool right = false) {
  const tsr_value args[4] = {detail::value(sorted_sequence), detail::value(self),
                             detail::value(out_int32), detail::value(right)};
  return detail::call(detail::op<"searchsorted.Scalar">(), args, 4);
}
inline Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false,
                        bool right = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(boundaries),
                             detail::value(out_int32), detail::value(right)};
  return detail::call(detail::op<"bucketize.Tensor">(), args, 4);
}

// (values, inverse, counts) of torch.unique over the flattened tensor; values
// are sorted whatever `sorted` says (any order is allowed for false).
inline std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted = true,
                                                 bool return_inverse = false,
                                                 bool return_counts = false) {
  const tsr_value args[4] = {detail::value(self), detail::value(sorted),
                             detail::value(return_inverse), detail::value(return_counts)};
  auto r = detail::indexing_results<3>(detail::op<"_unique2">(), args, 4);
  return {std::move(r[0]), std::move(r[1]), std::move(r[2])};
}
// Runs of equal consecutive values (or slices along dim).
inline std::tuple<Tensor, Tensor, Tensor> unique_consecutive(
    const Tensor& self, bool return_inverse = false, bool return_counts = false,
    std::optional<int64_t> dim = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::value(return_inverse),
                             detail::value(return_counts), detail::optional_int(dim)};
  auto r = detail::indexing_results<3>(detail::op<"unique_consecutive">(), args, 4);
  return {std::move(r[0]), std::move(r[1]), std::move(r[2])};
}

}  // namespace tessera
