// tessera/dims.hpp - integer lists in and out of the frontend.
//
// `IntList` is a borrowed view of int64 values used for arguments (sizes,
// strides, dims); it converts from a braced list, a std::vector, a std::span,
// a Dims, or a single integer, like LibTorch's IntArrayRef. It does not own
// its elements: a braced list lives until the end of the full expression.
//
// `Dims` is an owned small array (at most TSR_MAX_DIMS entries, no heap) for
// results: sizes() and strides(). It prints as a Python tuple, "(3, 4)" and
// "(12,)", as the seed programs show shapes.
//
// `OptionalDims` is an owned, optional dims argument (PyTorch's `int[1]? dim`:
// var, std, nansum, linalg_vector_norm ...). It copies its values when it is
// made, so every spelling is safe: `{0, 1}`, `{1}`, `1`, an int variable, an
// IntList, a std::vector, a Dims, std::nullopt or `{}` (no dims).
// Note [Why not std::optional<IntList>]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `std::optional<IntList>` made from
// `1` or `{1}` builds its IntList inside optional's constructor from an
// int64_t converted there, a temporary that dies before the op is called; the
// view then reads a dead stack slot (wrong dims or garbage, depending on the
// optimisation level). A parameter type that views its argument is safe only
// when the caller's own expression makes what it views, as a plain IntList
// parameter does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/types.h"

namespace tessera {

class Dims;

class IntList {
 public:
  constexpr IntList() noexcept = default;
  constexpr IntList(const int64_t& one) noexcept : data_(&one), size_(1) {}  // NOLINT
// Borrowing a braced list is the point (the list outlives the call using it);
// GCC warns about the pattern itself.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr IntList(std::initializer_list<int64_t> values) noexcept  // NOLINT
      : data_(values.begin()), size_(values.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  constexpr IntList(std::span<const int64_t> values) noexcept  // NOLINT
      : data_(values.data()), size_(values.size()) {}
  IntList(const std::vector<int64_t>& values) noexcept  // NOLINT
      : data_(values.data()), size_(values.size()) {}
  constexpr IntList(const int64_t* data, size_t size) noexcept : data_(data), size_(size) {}
  IntList(const Dims& dims) noexcept;  // NOLINT

  constexpr const int64_t* data() const noexcept { return data_; }
  constexpr size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr const int64_t* begin() const noexcept { return data_; }
  constexpr const int64_t* end() const noexcept { return data_ + size_; }
  constexpr int64_t operator[](size_t i) const noexcept { return data_[i]; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  // The count as the ABI's int32 ndim; throws when it exceeds TSR_MAX_DIMS.
  int32_t ndim(const char* what = "sizes") const {
    if (size_ > TSR_MAX_DIMS) [[unlikely]] {
      detail::throw_error(TSR_INVALID_ARGUMENT, std::string(what) + " has " +
                                                    std::to_string(size_) +
                                                    " entries; tessera tensors have at most " +
                                                    std::to_string(TSR_MAX_DIMS) + " dims");
    }
    return static_cast<int32_t>(size_);
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class Dims {
 public:
  Dims() noexcept = default;
  Dims(std::initializer_list<int64_t> values) : Dims(IntList(values)) {}
  explicit Dims(IntList values) {
    size_ = values.ndim();
    std::copy(values.begin(), values.end(), values_);
  }
  // The first `ndim` entries of `values` (0 <= ndim <= TSR_MAX_DIMS).
  Dims(const int64_t* values, int32_t ndim) noexcept : size_(ndim) {
    std::copy(values, values + ndim, values_);
  }

  size_t size() const noexcept { return static_cast<size_t>(size_); }
  bool empty() const noexcept { return size_ == 0; }
  const int64_t* data() const noexcept { return values_; }
  const int64_t* begin() const noexcept { return values_; }
  const int64_t* end() const noexcept { return values_ + size_; }
  int64_t operator[](size_t i) const noexcept { return values_[i]; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  // "(3, 4)", "(12,)", "()".
  std::string str() const {
    std::string text = "(";
    for (int32_t i = 0; i < size_; ++i) {
      if (i > 0) text += ", ";
      text += std::to_string(values_[i]);
    }
    if (size_ == 1) text += ",";
    return text + ")";
  }

  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Dims& a, const std::vector<int64_t>& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  int32_t size_ = 0;
  int64_t values_[TSR_MAX_DIMS] = {};
};

inline IntList::IntList(const Dims& dims) noexcept : data_(dims.data()), size_(dims.size()) {}

class OptionalDims {
 public:
  OptionalDims() noexcept = default;
  OptionalDims(std::nullopt_t) noexcept {}                                            // NOLINT
  OptionalDims(int64_t dim) noexcept : has_value_(true), dims_(&dim, 1) {}            // NOLINT
  OptionalDims(std::initializer_list<int64_t> dims) : OptionalDims(IntList(dims)) {}  // NOLINT
  OptionalDims(IntList dims) : has_value_(true), dims_(dims) {}                       // NOLINT
  OptionalDims(std::span<const int64_t> dims) : OptionalDims(IntList(dims)) {}        // NOLINT
  OptionalDims(const std::vector<int64_t>& dims) : OptionalDims(IntList(dims)) {}     // NOLINT
  OptionalDims(const Dims& dims) noexcept : has_value_(true), dims_(dims) {}          // NOLINT
  OptionalDims(const std::optional<IntList>& dims)                                    // NOLINT
      : has_value_(dims.has_value()), dims_(dims ? Dims(*dims) : Dims()) {}

  bool has_value() const noexcept { return has_value_; }
  explicit operator bool() const noexcept { return has_value_; }
  // The dims; empty when there are none. Valid while this object lives.
  const Dims& dims() const noexcept { return dims_; }

 private:
  bool has_value_ = false;
  Dims dims_;
};

inline std::ostream& operator<<(std::ostream& os, const Dims& dims) { return os << dims.str(); }

}  // namespace tessera
