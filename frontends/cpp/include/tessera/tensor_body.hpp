// tessera/tensor_body.hpp - the class tessera::Tensor, the C++ face of
// tsr_tensor. Include tessera/tensor.hpp, which completes it.
//
// Note [Tensor ownership]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A Tensor owns one reference to a `tsr_tensor`:
// copying retains, moving steals, destruction releases. A default-constructed
// Tensor is undefined (holds NULL); every operation on it fails with the
// core's INVALID_ARGUMENT error. Copies share the tensor object itself, as
// LibTorch's Tensor does: `b = a; b.add_(1)` changes `a`.
//
// Threads (Note [Handle thread safety] in tessera.h): a tensor may be read
// (metadata, data reads) from many threads at once but written (in-place ops,
// copy_, fill_, the release of its last reference) by one thread at a time.
// The frontend adds no locking.
//
// This header declares the whole Tensor API and defines metadata, views and
// copies (which map to one C call each). The members that go through the
// boxed call (arithmetic, reductions, clone, ...) are defined in
// tensor_methods.hpp and str() in print.hpp; see tensor.hpp for why they are
// apart.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/dims.hpp"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor_options.hpp"
#include "tessera/tessera.h"

namespace tessera {

enum class MemoryFormat : int32_t {
  Contiguous = TSR_CONTIGUOUS_FORMAT,
  ChannelsLast = TSR_CHANNELS_LAST,
  ChannelsLast3d = TSR_CHANNELS_LAST_3D,
  Preserve = TSR_PRESERVE_FORMAT,
};

// PyTorch-style indexing for Tensor::index: `t.index({Slice(), Slice(None, None, 2)})`
// is `t[:, ::2]`, `t.index({0, Ellipsis})` is `t[0, ...]`.
namespace indexing {

inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndex {};
inline constexpr EllipsisIndex Ellipsis{};

// start:stop:step; None start is 0, None stop is the end, None step is 1.
// Negative start/stop count from the end; step must be >= 1.
struct Slice {
  Slice(std::optional<int64_t> start = None, std::optional<int64_t> stop = None,
        std::optional<int64_t> step = None)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, Ellipsis };
  template <std::integral T>
  requires(!std::same_as<T, bool>) TensorIndex(T index)
      : kind_(Kind::Integer), integer_(index) {}                   // NOLINT
  TensorIndex(Slice slice) : kind_(Kind::Slice), slice_(slice) {}  // NOLINT
  TensorIndex(EllipsisIndex) : kind_(Kind::Ellipsis) {}            // NOLINT
  TensorIndex(std::nullopt_t) = delete;  // None (new axis) is not supported yet

  Kind kind() const noexcept { return kind_; }
  int64_t integer() const noexcept { return integer_; }
  const Slice& slice() const noexcept { return slice_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
};

}  // namespace indexing

class Tensor {
 public:
  // ---------------------------------------------------------------------
  // Ownership (Note [Tensor ownership])
  // ---------------------------------------------------------------------
  Tensor() noexcept = default;
  Tensor(const Tensor& other) noexcept : handle_(other.handle_) {
    if (handle_ != nullptr) tsr_tensor_retain(handle_);
  }
  Tensor(Tensor&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Tensor& operator=(const Tensor& other) noexcept {
    Tensor(other).swap(*this);
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    Tensor(std::move(other)).swap(*this);
    return *this;
  }
  ~Tensor() {
    if (handle_ != nullptr) tsr_tensor_release(handle_);
  }

  // Wraps a reference the caller owns (one from a C call returning a tensor).
  static Tensor adopt(tsr_tensor* handle) noexcept {
    Tensor tensor;
    tensor.handle_ = handle;
    return tensor;
  }
  // Wraps a borrowed handle, taking a new reference.
  static Tensor borrow(tsr_tensor* handle) noexcept {
    if (handle != nullptr) tsr_tensor_retain(handle);
    return adopt(handle);
  }

  // The handle, borrowed while this Tensor holds it.
  tsr_tensor* get() const noexcept { return handle_; }
  // Gives up ownership: the caller must tsr_tensor_release the result.
  tsr_tensor* release() noexcept { return std::exchange(handle_, nullptr); }
  bool defined() const noexcept { return handle_ != nullptr; }
  void swap(Tensor& other) noexcept { std::swap(handle_, other.handle_); }

  // ---------------------------------------------------------------------
  // Metadata. Each call asks the core; results are snapshots.
  // ---------------------------------------------------------------------
  tsr_tensor_info info() const {
    tsr_tensor_info info{};
    info.struct_size = sizeof info;
    check(tsr_tensor_get_info(handle_, &info));
    return info;
  }
  Dims sizes() const {
    const tsr_tensor_info i = info();
    return Dims(i.sizes, i.ndim);
  }
  Dims strides() const {
    const tsr_tensor_info i = info();
    return Dims(i.strides, i.ndim);
  }
  // Size / stride of `dim` (negative counts from the end).
  int64_t size(int64_t dim) const {
    const tsr_tensor_info i = info();
    return i.sizes[wrap_dim(dim, i.ndim)];
  }
  int64_t stride(int64_t dim) const {
    const tsr_tensor_info i = info();
    return i.strides[wrap_dim(dim, i.ndim)];
  }
  int64_t dim() const {
    int32_t ndim = 0;
    check(tsr_tensor_ndim(handle_, &ndim));
    return ndim;
  }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const {
    int64_t numel = 0;
    check(tsr_tensor_numel(handle_, &numel));
    return numel;
  }
  Dtype dtype() const {
    tsr_dtype dtype = TSR_FLOAT32;
    check(tsr_tensor_dtype(handle_, &dtype));
    return from_c(dtype);
  }
  Dtype scalar_type() const { return dtype(); }
  Device device() const {
    tsr_device device{};
    check(tsr_tensor_device(handle_, &device));
    return Device(device);
  }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  size_t element_size() const { return tessera::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  int64_t storage_offset() const {
    int64_t offset = 0;
    check(tsr_tensor_storage_offset(handle_, &offset));
    return offset;
  }
  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const {
    bool contiguous = false;
    check(tsr_tensor_is_contiguous(handle_, static_cast<tsr_memory_format>(format), &contiguous));
    return contiguous;
  }
  // The version counter shared by views and detach (Note [Version counter]).
  uint64_t version() const {
    uint64_t version = 0;
    check(tsr_tensor_version(handle_, &version));
    return version;
  }
  // Equal for tensors sharing storage; never reused within a runtime.
  uint64_t storage_id() const {
    uint64_t id = 0;
    check(tsr_tensor_storage_id(handle_, &id));
    return id;
  }
  bool is_same_storage(const Tensor& other) const { return storage_id() == other.storage_id(); }
  // Whether both wrap the same tensor object (not merely the same storage).
  bool is_same(const Tensor& other) const noexcept { return handle_ == other.handle_; }
  // The descriptor a kernel would see.
  tsr_tensor_desc describe() const {
    tsr_tensor_desc desc{};
    check(tsr_tensor_describe(handle_, &desc));
    return desc;
  }
  // Address of element (0, ..., 0); host-addressable devices only. Borrowed
  // while the storage lives.
  void* data_ptr() const {
    void* data = nullptr;
    check(tsr_tensor_data_ptr(handle_, &data));
    return data;
  }
  // Typed form: T must have exactly the tensor's dtype.
  template <class T>
  T* data_ptr() const {
    expect_dtype(dtype_of_v<T>, "data_ptr<T>()");
    return static_cast<T*>(data_ptr());
  }

  // ---------------------------------------------------------------------
  // Views: share storage and version counter with *this.
  // ---------------------------------------------------------------------
  // One entry may be -1; fails when the strides cannot express it (see reshape).
  Tensor view(IntList sizes) const {
    return make([&](tsr_tensor** out) {
      return tsr_tensor_view(handle_, sizes.ndim(), sizes.data(), out);
    });
  }
  // A view when the strides allow, else a contiguous copy.
  Tensor reshape(IntList sizes) const {
    return make([&](tsr_tensor** out) {
      return tsr_tensor_reshape(handle_, sizes.ndim(), sizes.data(), out);
    });
  }
  Tensor flatten() const { return reshape(-1); }
  Tensor transpose(int64_t dim0, int64_t dim1) const {
    return make([&](tsr_tensor** out) {
      return tsr_tensor_transpose(handle_, narrow_dim(dim0), narrow_dim(dim1), out);
    });
  }
  // transpose(0, 1) of a 2-d tensor; 0-d and 1-d tensors come back as they are.
  Tensor t() const;
  Tensor permute(IntList dims) const {
    return make([&](tsr_tensor** out) {
      return tsr_tensor_permute(handle_, dims.ndim("dims"), dims.data(), out);
    });
  }
  // self[..., start:end:step, ...] on `dim`. Negative start/end count from the
  // end; the end defaults to "to the end"; step >= 1.
  Tensor slice(int64_t dim, int64_t start = 0, int64_t end = std::numeric_limits<int64_t>::max(),
               int64_t step = 1) const {
    if (start < 0 || end < 0) {
      const int64_t length = size(dim);
      if (start < 0) start = std::max<int64_t>(start + length, 0);
      if (end < 0) end = std::max<int64_t>(end + length, 0);
    }
    return make([&](tsr_tensor** out) {
      return tsr_tensor_slice(handle_, narrow_dim(dim), start, end, step, out);
    });
  }
  // Removes `dim`, taking element `index` (negative counts from the end).
  Tensor select(int64_t dim, int64_t index) const {
    return make(
        [&](tsr_tensor** out) { return tsr_tensor_select(handle_, narrow_dim(dim), index, out); });
  }
  Tensor operator[](int64_t index) const { return select(0, index); }
  // Length `length` from `start` along `dim`.
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const {
    return slice(dim, start, start + length);
  }
  // Integers select, Slices slice, Ellipsis skips the dims the rest leaves.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const {
    using Kind = indexing::TensorIndex::Kind;
    Tensor result = *this;
    int64_t dim = 0;
    int64_t remaining = 0;  // entries after the current one that consume a dim
    for (const auto& index : indices) remaining += index.kind() != Kind::Ellipsis;
    for (const auto& index : indices) {
      switch (index.kind()) {
        case Kind::Integer:
          result = result.select(dim, index.integer());
          --remaining;
          break;
        case Kind::Slice: {
          const auto& s = index.slice();
          result = result.slice(dim, s.start.value_or(0),
                                s.stop.value_or(std::numeric_limits<int64_t>::max()),
                                s.step.value_or(1));
          ++dim;
          --remaining;
          break;
        }
        case Kind::Ellipsis:
          dim = result.dim() - remaining;
          break;
      }
    }
    return result;
  }
  // Broadcasts size-1 dims to `sizes` (-1 keeps a size); writes to the result
  // in place are rejected.
  Tensor expand(IntList sizes) const {
    return make([&](tsr_tensor** out) {
      return tsr_tensor_expand(handle_, sizes.ndim(), sizes.data(), out);
    });
  }
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  // Removes every size-1 dim.
  Tensor squeeze() const {
    return make([&](tsr_tensor** out) { return tsr_tensor_squeeze(handle_, TSR_MAX_DIMS, out); });
  }
  // Removes `dim` if its size is 1.
  Tensor squeeze(int64_t dim) const {
    return make(
        [&](tsr_tensor** out) { return tsr_tensor_squeeze(handle_, narrow_dim(dim), out); });
  }
  Tensor unsqueeze(int64_t dim) const {
    return make(
        [&](tsr_tensor** out) { return tsr_tensor_unsqueeze(handle_, narrow_dim(dim), out); });
  }
  // storage_offset < 0 keeps this tensor's own offset.
  Tensor as_strided(IntList sizes, IntList strides, int64_t storage_offset = -1) const {
    if (sizes.size() != strides.size()) [[unlikely]] {
      detail::throw_error(TSR_INVALID_ARGUMENT,
                          "as_strided: sizes has " + std::to_string(sizes.size()) +
                              " entries but strides has " + std::to_string(strides.size()) +
                              "; give one stride per size");
    }
    return make([&](tsr_tensor** out) {
      return tsr_tensor_as_strided(handle_, sizes.ndim(), sizes.data(), strides.data(),
                                   storage_offset, out);
    });
  }
  // Same storage and version counter, no autograd history.
  Tensor detach() const {
    return make([&](tsr_tensor** out) { return tsr_tensor_detach(handle_, out); });
  }

  // ---------------------------------------------------------------------
  // Autograd (Note [Autograd] in tessera.h)
  // ---------------------------------------------------------------------
  // Leaves only; floating and complex dtypes only.
  Tensor& requires_grad_(bool requires_grad = true) {
    check(tsr_tensor_set_requires_grad(handle_, requires_grad ? 1 : 0));
    return *this;
  }
  bool requires_grad() const {
    int32_t r = 0;
    check(tsr_tensor_requires_grad(handle_, &r));
    return r != 0;
  }
  // Made in inference mode (autograd::InferenceMode): no version counter,
  // refused by autograd.
  bool is_inference() const {
    int32_t v = 0;
    check(tsr_tensor_is_inference(handle_, &v));
    return v != 0;
  }
  bool is_leaf() const {
    int32_t r = 0;
    check(tsr_tensor_is_leaf(handle_, &r));
    return r != 0;
  }
  // The accumulated gradient; undefined (defined() == false) when none.
  Tensor grad() const {
    tsr_tensor* g = nullptr;
    check(tsr_tensor_grad(handle_, &g));
    return adopt(g);
  }
  // Replaces the gradient; an undefined tensor clears it.
  void set_grad(const Tensor& grad) { check(tsr_tensor_set_grad(handle_, grad.get())); }
  // PyTorch's `t.data = data` (tsr_tensor_set_data): this leaf takes data's
  // elements (storage, dtype, shape, device) and keeps its identity - every
  // copy of this Tensor sees the change, requires_grad and grad stay.
  void set_data(const Tensor& data) { check(tsr_tensor_set_data(handle_, data.get())); }
  void retain_grad() { check(tsr_tensor_retain_grad(handle_)); }
  // Makes this tensor a leaf without history, in place.
  Tensor& detach_() {
    check(tsr_tensor_detach_(handle_));
    return *this;
  }
  // grad_fn.next_functions: (name, input_nr) per edge; name empty where the
  // input needs no gradient.
  std::vector<std::pair<std::string, uint32_t>> grad_fn_next() const {
    int32_t count = 0;
    check(tsr_tensor_grad_fn_next(handle_, 0, nullptr, nullptr, &count));
    std::vector<const char*> names(static_cast<size_t>(count));
    std::vector<uint32_t> slots(static_cast<size_t>(count));
    check(tsr_tensor_grad_fn_next(handle_, count, names.data(), slots.data(), &count));
    std::vector<std::pair<std::string, uint32_t>> out;
    for (int32_t i = 0; i < count; ++i)
      out.emplace_back(names[static_cast<size_t>(i)] ? names[static_cast<size_t>(i)] : "",
                       slots[static_cast<size_t>(i)]);
    return out;
  }
  // "MulBackward0", or "" for a leaf.
  std::string grad_fn_name() const {
    const char* name = nullptr;
    check(tsr_tensor_grad_fn_name(handle_, &name));
    return name != nullptr ? std::string(name) : std::string();
  }
  // Accumulates this tensor's gradient into the leaves (gradient may be
  // undefined for a one-element tensor).
  void backward(const Tensor& gradient, bool retain_graph = false,
                bool create_graph = false) const {
    tsr_tensor* outs[1] = {handle_};
    tsr_tensor* grads[1] = {gradient.get()};
    check(tsr_autograd_backward(1, outs, grads, retain_graph ? 1 : 0, create_graph ? 1 : 0));
  }
  void backward() const { backward(Tensor()); }

  // Gradient hook (torch.Tensor.register_hook): `fn` receives each gradient
  // of this tensor as backward computes it and returns a replacement of the
  // same shape, or an undefined Tensor to keep it. Returns the handle for
  // remove_hook. The tensor must require grad.
  using GradHook = std::function<Tensor(const Tensor&)>;
  uint64_t register_hook(GradHook fn) {
    auto* owned = new GradHook(std::move(fn));
    uint64_t handle = 0;
    tsr_status* st = tsr_tensor_register_hook(handle_, &Tensor::run_grad_hook, owned,
                                              &Tensor::delete_hook<GradHook>, &handle);
    if (st != nullptr) delete owned;
    check(st);
    return handle;
  }
  // Post-accumulate hook (leaves): `fn` runs with this tensor after backward
  // updated its .grad.
  using PostAccumulateHook = std::function<void(const Tensor&)>;
  uint64_t register_post_accumulate_grad_hook(PostAccumulateHook fn) {
    auto* owned = new PostAccumulateHook(std::move(fn));
    uint64_t handle = 0;
    tsr_status* st = tsr_tensor_register_post_accumulate_grad_hook(
        handle_, &Tensor::run_post_hook, owned, &Tensor::delete_hook<PostAccumulateHook>, &handle);
    if (st != nullptr) delete owned;
    check(st);
    return handle;
  }
  void remove_hook(uint64_t handle) { check(tsr_tensor_remove_hook(handle_, handle)); }

  // ---------------------------------------------------------------------
  // Copies and conversions
  // ---------------------------------------------------------------------
  // *this itself when already contiguous in `format`, else a copy.
  Tensor contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  // A new tensor with its own storage; kPreserve keeps a dense layout.
  Tensor clone(MemoryFormat format = MemoryFormat::Preserve) const;
  // *this when already on `device` (as PyTorch's to()), else a contiguous copy there.
  Tensor to(Device device) const {
    if (device == this->device()) return *this;
    return make([&](tsr_tensor** out) { return tsr_tensor_to_device(handle_, device.raw(), out); });
  }
  Tensor to(DeviceType type) const { return to(Device(type)); }
  // *this when it already has `dtype`, else a converted copy.
  Tensor to(Dtype dtype) const {
    return make([&](tsr_tensor** out) { return tsr_tensor_to_dtype(handle_, to_c(dtype), out); });
  }
  Tensor to(Device device, Dtype dtype) const { return to(device).to(dtype); }
  Tensor cpu() const { return to(kCPU); }
  // A contiguous host copy in memory pinned for `device` by its plugin
  // (tsr_tensor_pin_memory): copies to and from that device skip staging.
  // Throws UNIMPLEMENTED when the device's plugin has no pinned memory.
  Tensor pin_memory(Device device) const {
    return make(
        [&](tsr_tensor** out) { return tsr_tensor_pin_memory(handle_, device.raw(), out); });
  }
  bool is_pinned() const {
    int32_t pinned = 0;
    check(tsr_tensor_is_pinned(handle_, &pinned));
    return pinned != 0;
  }
  // self.copy_(src): broadcasting, dtype conversion, across devices.
  Tensor& copy_(const Tensor& src) {
    check(tsr_tensor_copy_(handle_, src.handle_));
    return *this;
  }
  // Row-major copy of the elements into host memory of exactly nbytes().
  void copy_to_host(void* dst, size_t nbytes) const {
    check(tsr_tensor_copy_to_host(handle_, dst, nbytes));
  }
  // Overwrites the elements from row-major host memory; bumps the version.
  void copy_from_host(const void* src, size_t nbytes) {
    check(tsr_tensor_copy_from_host(handle_, src, nbytes));
  }

  // The value of a one-element tensor (synchronizes).
  Scalar item() const {
    tsr_scalar value{};
    check(tsr_tensor_item(handle_, &value));
    return Scalar(value);
  }
  template <class T>
  T item() const {
    return item().to<T>();
  }
  // The elements in row-major order, converted to T's dtype first when needed.
  template <class T>
  std::vector<T> to_vector() const {
    constexpr Dtype want = dtype_of_v<T>;
    const Tensor source = dtype() == want ? *this : to(want);
    const auto count = static_cast<size_t>(source.numel());
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(count);
      if (count > 0) source.copy_to_host(bytes.data(), count);
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> values(count);
      if (count > 0) source.copy_to_host(values.data(), count * sizeof(T));
      return values;
    }
  }

  // ---------------------------------------------------------------------
  // Operators through the boxed call (defined in tensor_methods.hpp)
  // ---------------------------------------------------------------------
  Tensor add(const Tensor& other) const;
  Tensor add(const Tensor& other, const Scalar& alpha) const;
  Tensor add(const Scalar& other) const;
  Tensor sub(const Tensor& other) const;
  Tensor sub(const Tensor& other, const Scalar& alpha) const;
  Tensor sub(const Scalar& other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor neg() const;

  // In place: each bumps the version counter and returns *this.
  Tensor& add_(const Tensor& other);
  Tensor& add_(const Tensor& other, const Scalar& alpha);
  Tensor& add_(const Scalar& other);
  Tensor& sub_(const Tensor& other);
  Tensor& sub_(const Tensor& other, const Scalar& alpha);
  Tensor& sub_(const Scalar& other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_() { return fill_(0); }

  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;

  // Reductions; integer and bool sums produce int64 unless `dtype` says otherwise.
  Tensor sum(std::optional<Dtype> dtype = std::nullopt) const;
  Tensor sum(IntList dims, bool keepdim = false, std::optional<Dtype> dtype = std::nullopt) const;
  Tensor mean(std::optional<Dtype> dtype = std::nullopt) const;
  Tensor mean(IntList dims, bool keepdim = false, std::optional<Dtype> dtype = std::nullopt) const;

  Tensor& operator+=(const Tensor& other) { return add_(other); }
  Tensor& operator+=(const Scalar& other) { return add_(other); }
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  Tensor& operator-=(const Scalar& other) { return sub_(other); }
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  Tensor& operator*=(const Scalar& other) { return mul_(other); }
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  Tensor& operator/=(const Scalar& other) { return div_(other); }
  Tensor operator-() const { return neg(); }

  // PyTorch-like text, "tensor([[0., 1.], [2., 3.]])" (print.hpp).
  std::string str() const;

 private:
  // Runs `fn(&out)` (a C call producing a tensor) and adopts the result.
  template <class Fn>
  static Tensor make(Fn&& fn) {
    tsr_tensor* out = nullptr;
    check(fn(&out));
    return adopt(out);
  }
  // The ABI takes dims as int32; larger values are out of range anyway, so
  // they are saturated and the core names them in its error.
  static int32_t narrow_dim(int64_t dim) noexcept {
    if (dim > std::numeric_limits<int32_t>::max()) return std::numeric_limits<int32_t>::max();
    if (dim < std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(dim);
  }
  static int32_t wrap_dim(int64_t dim, int32_t ndim) {
    const int64_t wrapped = dim < 0 ? dim + ndim : dim;
    if (wrapped < 0 || wrapped >= ndim) [[unlikely]] {
      detail::throw_error(TSR_OUT_OF_RANGE,
                          "dim " + std::to_string(dim) + " is out of range for a tensor of " +
                              std::to_string(ndim) + " dims; use a dim in [" +
                              std::to_string(-ndim) + ", " + std::to_string(ndim - 1) + "]");
    }
    return static_cast<int32_t>(wrapped);
  }
  void expect_dtype(Dtype want, const char* what) const {
    const Dtype have = dtype();
    if (have != want) [[unlikely]] {
      detail::throw_error(TSR_INVALID_ARGUMENT, std::string(what) + ": the tensor has dtype " +
                                                    name(have) + " but T is " + name(want) +
                                                    "; convert with .to(dtype) first");
    }
  }

  template <typename F>
  static void delete_hook(void* fn) noexcept {
    delete static_cast<F*>(fn);
  }
  static tsr_status* run_grad_hook(void* fn, tsr_tensor* grad, tsr_tensor** out) noexcept {
    try {
      Tensor replacement = (*static_cast<GradHook*>(fn))(Tensor::borrow(grad));
      if (replacement.defined()) *out = replacement.release();
      return nullptr;
    } catch (...) {
      return detail::current_exception_status();
    }
  }
  static tsr_status* run_post_hook(void* fn, tsr_tensor* tensor) noexcept {
    try {
      (*static_cast<PostAccumulateHook*>(fn))(Tensor::borrow(tensor));
      return nullptr;
    } catch (...) {
      return detail::current_exception_status();
    }
  }

  tsr_tensor* handle_ = nullptr;
};

}  // namespace tessera
