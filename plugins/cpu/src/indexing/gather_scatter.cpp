// gather_scatter.cpp - gather and _scatter_ over any strides.
//
// gather(self, dim, index) -> out: out[p] = self[p with p[dim] = index[p]],
// iterating over index's shape (= out's). It moves raw elements, so one loop
// per element size serves every dtype. The iteration is one strided layout of
// three operands (out, index, self with stride 0 on `dim`); the index value
// times self's `dim` stride is added per element.
//
// _scatter_(self, dim, index, src, op): self[p with p[dim] = index[p]] op= src[p]
// (opcodes.h). Every write of one "line" (all index positions that share the
// coordinates other than `dim`) lands in the same line of self, and distinct
// lines land in distinct lines of self (the host refuses self with internal
// overlap), so work is split between threads by whole lines: duplicates are
// combined by one thread in index order, which makes ADD/MUL/AMAX/AMIN exact
// and deterministic whatever the thread count. The layout puts `dim` innermost
// so a run is (part of) a line.
//
// Indices are checked against self.size(dim) before each access; the first bad
// one (lowest position in index's row-major order) is reported as
// "index 7 is out of bounds for dimension 0 with size 3" (OUT_OF_RANGE).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include "../convert.hpp"
#include "../parallel.hpp"
#include "indexing_kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {

void check_dim(const tsr_kernel_call& call, int64_t dim, int32_t ndim, const char* name) {
  if (dim < 0 || dim >= ndim) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument '%s' = %lld is not a dim of a %d-d tensor; the host must "
                      "wrap dims into [0, ndim) (and pass 0-d tensors as 1-d)",
                      sdk::op_name(call), name, static_cast<long long>(dim),
                      static_cast<int>(ndim));
  }
}

void throw_index_out_of_bounds(int64_t index, int64_t dim, int64_t size) {
  sdk::throw_status(
      TSR_OUT_OF_RANGE, "index %lld is out of bounds for dimension %lld with size %lld",
      static_cast<long long>(index), static_cast<long long>(dim), static_cast<long long>(size));
}

namespace {

// The first out-of-range index seen by any thread (lowest position wins).
class bad_index {
 public:
  void record(int64_t position, int64_t value) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (position < position_) {
      position_ = position;
      value_ = value;
    }
    seen_.store(true, std::memory_order_relaxed);
  }
  void throw_if_any(int64_t dim, int64_t size) const {
    if (seen_.load(std::memory_order_relaxed)) throw_index_out_of_bounds(value_, dim, size);
  }

 private:
  std::mutex mutex_;
  std::atomic<bool> seen_{false};
  int64_t position_ = std::numeric_limits<int64_t>::max();
  int64_t value_ = 0;
};

inline int64_t load_index(const char* p) noexcept {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline bool in_range(int64_t index, int64_t size) noexcept {
  return static_cast<uint64_t>(index) < static_cast<uint64_t>(size);
}

// ---- gather -------------------------------------------------------------------

template <size_t Bytes>
struct raw_element {
  unsigned char bytes[Bytes];
};

template <class E>
void gather_loop(const tsr_plugin_context& context, const sdk::strided_layout<3>& layout,
                 char* const (&base)[3], int64_t dim_stride, int64_t limit, bad_index& bad) {
  const int64_t out_stride = layout.inner_stride(0);
  const int64_t index_stride = layout.inner_stride(1);
  const int64_t self_stride = layout.inner_stride(2);
  auto body = [&](int64_t begin, int64_t end) {
    int64_t position = begin;
    bool stop = false;
    sdk::for_each_run(layout, base, begin, end, [&](char* const(&p)[3], int64_t n) {
      if (stop) return;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t index = load_index(p[1] + i * index_stride);
        if (!in_range(index, limit)) {
          bad.record(position + i, index);
          stop = true;
          return;
        }
        std::memcpy(p[0] + i * out_stride, p[2] + i * self_stride + index * dim_stride, sizeof(E));
      }
      position += n;
    });
  };
  const int64_t n = layout.numel();
  if (n < kParallelMinElements) {
    body(0, n);
  } else {
    parallel_ranges(thread_count(context), n, 1, body);
  }
}

// ---- _scatter_ ----------------------------------------------------------------

using sdk::wrap_t;

// dst op= src for one element, in compute_t<T> (integers wrap; NaN propagates
// through AMAX/AMIN; bool: ADD/AMAX are or, MUL/AMIN and).
template <class T, int Op>
inline T combine(T a, T b) noexcept {
  if constexpr (Op == TSR_SCATTER_ASSIGN) {
    return b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return (Op == TSR_SCATTER_ADD || Op == TSR_SCATTER_AMAX) ? (a || b) : (a && b);
  } else if constexpr (is_integral_v<T>) {
    using U = wrap_t<T>;
    if constexpr (Op == TSR_SCATTER_ADD)
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (Op == TSR_SCATTER_MUL)
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if constexpr (Op == TSR_SCATTER_AMAX) return a < b ? b : a;
    return b < a ? b : a;  // AMIN
  } else if constexpr (is_complex_v<T>) {
    if constexpr (Op == TSR_SCATTER_ADD) return a + b;
    return a * b;  // MUL (AMAX/AMIN are not offered for complex)
  } else {
    using C = compute_t<T>;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    if constexpr (Op == TSR_SCATTER_ADD) return T(x + y);
    if constexpr (Op == TSR_SCATTER_MUL) return T(x * y);
    if constexpr (Op == TSR_SCATTER_AMAX) return (x > y || std::isnan(x)) ? a : b;
    return (x < y || std::isnan(x)) ? a : b;  // AMIN
  }
}

template <class T, int Op>
void scatter_lines(const sdk::strided_layout<3>& layout, char* const (&base)[3], int64_t begin,
                   int64_t end, int64_t dim_stride, int64_t limit, bad_index& bad) {
  const int64_t dst_stride = layout.inner_stride(0);
  const int64_t index_stride = layout.inner_stride(1);
  const int64_t src_stride = layout.inner_stride(2);
  int64_t position = begin;
  bool stop = false;
  sdk::for_each_run(layout, base, begin, end, [&](char* const(&p)[3], int64_t n) {
    if (stop) return;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t index = load_index(p[1] + i * index_stride);
      if (!in_range(index, limit)) {
        bad.record(position + i, index);
        stop = true;
        return;
      }
      char* dst = p[0] + i * dst_stride + index * dim_stride;
      T a, b;
      std::memcpy(&b, p[2] + i * src_stride, sizeof(T));
      if constexpr (Op == TSR_SCATTER_ASSIGN) {
        std::memcpy(dst, &b, sizeof(T));
      } else {
        std::memcpy(&a, dst, sizeof(T));
        const T r = combine<T, Op>(a, b);
        std::memcpy(dst, &r, sizeof(T));
      }
    }
    position += n;
  });
}

template <class T, int Op>
void scatter_loop(const tsr_plugin_context& context, const sdk::strided_layout<3>& layout,
                  char* const (&base)[3], int64_t line, bool parallel_safe, int64_t dim_stride,
                  int64_t limit, bad_index& bad) {
  const int64_t n = layout.numel();
  const int64_t lines = line > 0 ? n / line : 0;
  if (!parallel_safe || n < kParallelMinElements || lines < 2) {
    scatter_lines<T, Op>(layout, base, 0, n, dim_stride, limit, bad);
    return;
  }
  parallel_ranges(thread_count(context), lines, line, [&](int64_t first, int64_t last) {
    scatter_lines<T, Op>(layout, base, first * line, last * line, dim_stride, limit, bad);
  });
}

template <class T>
void scatter_typed(const tsr_kernel_call& call, const tsr_plugin_context& context, int64_t code,
                   const sdk::strided_layout<3>& layout, char* const (&base)[3], int64_t line,
                   bool parallel_safe, int64_t dim_stride, int64_t limit, bad_index& bad) {
  switch (code) {
    case TSR_SCATTER_ASSIGN:
      return scatter_loop<T, TSR_SCATTER_ASSIGN>(context, layout, base, line, parallel_safe,
                                                 dim_stride, limit, bad);
    case TSR_SCATTER_ADD:
      return scatter_loop<T, TSR_SCATTER_ADD>(context, layout, base, line, parallel_safe,
                                              dim_stride, limit, bad);
    case TSR_SCATTER_MUL:
      return scatter_loop<T, TSR_SCATTER_MUL>(context, layout, base, line, parallel_safe,
                                              dim_stride, limit, bad);
    case TSR_SCATTER_AMAX:
    case TSR_SCATTER_AMIN:
      if constexpr (is_complex_v<T>) {
        sdk::throw_status(TSR_UNIMPLEMENTED, "%s: amax/amin are not defined for complex dtypes",
                          sdk::op_name(call));
      } else if (code == TSR_SCATTER_AMAX) {
        return scatter_loop<T, TSR_SCATTER_AMAX>(context, layout, base, line, parallel_safe,
                                                 dim_stride, limit, bad);
      } else {
        return scatter_loop<T, TSR_SCATTER_AMIN>(context, layout, base, line, parallel_safe,
                                                 dim_stride, limit, bad);
      }
    default:
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'op' = %lld is not a tsr_scatter_op",
                        sdk::op_name(call), static_cast<long long>(code));
  }
}

}  // namespace

void gather_kernel(const tsr_plugin_context& context, const tsr_kernel_call* c) {
  const tsr_kernel_call& call = sdk::check_call(c, 4, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& index = sdk::tensor_arg(call, 2, "index");
  sdk::bool_arg(call, 3, "sparse_grad");
  tsr_tensor_desc& out = sdk::out_arg(call, 0);
  const int dim = sdk::check_index_shape(call, self, index, sdk::int_arg(call, 1, "dim"));
  sdk::check_dtype(call, out, "out", self.dtype);
  sdk::check_same_sizes(call, out, "out", index, "index");
  if (sdk::numel(out) == 0) return;

  const size_t esize = sdk::element_size(self.dtype);
  int64_t self_strides[TSR_MAX_DIMS];
  std::copy(self.strides, self.strides + self.ndim, self_strides);
  self_strides[dim] = 0;
  const int64_t* strides[3] = {out.strides, index.strides, self_strides};
  const size_t sizes[3] = {esize, sizeof(int64_t), esize};
  const auto layout = sdk::make_layout<3>(index.ndim, index.sizes, strides, sizes);
  char* const base[3] = {static_cast<char*>(out.data), static_cast<char*>(index.data),
                         static_cast<char*>(self.data)};
  const int64_t dim_stride = self.strides[dim] * static_cast<int64_t>(esize);
  const int64_t limit = self.sizes[dim];
  bad_index bad;
  switch (esize) {
    case 1:
      gather_loop<raw_element<1>>(context, layout, base, dim_stride, limit, bad);
      break;
    case 2:
      gather_loop<raw_element<2>>(context, layout, base, dim_stride, limit, bad);
      break;
    case 4:
      gather_loop<raw_element<4>>(context, layout, base, dim_stride, limit, bad);
      break;
    case 8:
      gather_loop<raw_element<8>>(context, layout, base, dim_stride, limit, bad);
      break;
    default:
      gather_loop<raw_element<16>>(context, layout, base, dim_stride, limit, bad);
      break;
  }
  bad.throw_if_any(dim, limit);
}

void scatter_kernel(const tsr_plugin_context& context, const tsr_kernel_call* c) {
  const tsr_kernel_call& call = sdk::check_call(c, 5, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& index = sdk::tensor_arg(call, 2, "index");
  const tsr_tensor_desc& src = sdk::tensor_arg(call, 3, "src");
  const int64_t code = sdk::code_arg(call, 4, "op", TSR_SCATTER_CODE_COUNT, "tsr_scatter_op");
  tsr_tensor_desc& out = sdk::out_arg(call, 0);
  const int dim = sdk::check_index_shape(call, self, index, sdk::int_arg(call, 1, "dim"));
  sdk::check_dtype(call, src, "src", self.dtype);
  sdk::check_dtype(call, out, "out", self.dtype);
  sdk::check_same_sizes(call, out, "out", self, "self");
  sdk::check_scatter_src(call, index, src);
  if (sdk::numel(index) == 0) return;

  // Iterate index's shape with `dim` innermost; the destination (outs[0],
  // which aliases self) walks `dim` through the index value only.
  const size_t esize = sdk::element_size(self.dtype);
  sdk::dim_lines<3> l =
      sdk::lines_along<3>(dim, index.ndim, index.sizes, {out.strides, index.strides, src.strides});
  const bool parallel_safe = !l.overlaps(0);  // else lines would collide
  l.sizes[l.ndim] = index.sizes[dim];
  l.strides[0][l.ndim] = 0;
  l.strides[1][l.ndim] = index.strides[dim];
  l.strides[2][l.ndim] = src.strides[dim];
  ++l.ndim;
  const auto layout = sdk::make_layout(l, {esize, sizeof(int64_t), esize});
  char* const base[3] = {static_cast<char*>(out.data), static_cast<char*>(index.data),
                         static_cast<char*>(src.data)};
  const int64_t dim_stride = out.strides[dim] * static_cast<int64_t>(esize);
  const int64_t limit = out.sizes[dim];
  bad_index bad;
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatter_typed<T>(call, context, code, layout, base, index.sizes[dim], parallel_safe, dim_stride,
                     limit, bad);
  });
  bad.throw_if_any(dim, limit);
}

}  // namespace tessera::cpu
