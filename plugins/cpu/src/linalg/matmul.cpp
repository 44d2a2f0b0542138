// matmul.cpp - mm (n,k)·(k,m) and bmm (b,n,k)·(b,k,m).
//
// float32 goes to oneDNN (onednn_matmul.hpp), which reads row- or
// column-major inputs in place; inputs with other strides (stride 0, negative,
// or neither dim unit-stride) are first packed contiguous, and an output that
// is not row-major is computed into a temporary and copied back. float16 and
// bfloat16 go there too, widened to float32 first (matmul_reduced). Tiny
// products (<= 8K multiply-adds) of those and every other dtype (float64,
// float16/bfloat16 accumulating in float32, integers wrapping modulo 2^64 then
// to their width, complex) run a blocked loop: for each block of 64 output
// columns, the matching columns of the right operand are packed once into the
// accumulation type, then each output row accumulates over k in registers,
// rows split between threads. k == 0 gives zeros.
#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../convert.hpp"
#include "../half_convert.hpp"
#include "../kernels.hpp"
#include "../pointwise_loop.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

// (batch, rows, cols) views with element strides (strided.hpp).
using matrix3 = sdk::matrix_view;

template <class T>
using accumulate_t = std::conditional_t<is_integral_v<T>, uint64_t,
                                        std::conditional_t<is_reduced_float_v<T>, float, T>>;

template <class Acc, class T>
inline Acc to_acc(T x) noexcept {
  if constexpr (is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  } else {
    return static_cast<Acc>(x);
  }
}

template <class T, class Acc>
inline T from_acc(Acc x) noexcept {
  if constexpr (is_reduced_float_v<T>) {
    return T(x);
  } else {
    return static_cast<T>(x);  // integers: modular
  }
}

template <class T>
const T& at(const matrix3& x, int64_t b, int64_t r, int64_t c) noexcept {
  return reinterpret_cast<const T*>(
      x.data)[b * x.batch_stride + r * x.row_stride + c * x.col_stride];
}

template <class T>
T& at_mut(const matrix3& x, int64_t b, int64_t r, int64_t c) noexcept {
  return reinterpret_cast<T*>(x.data)[b * x.batch_stride + r * x.row_stride + c * x.col_stride];
}

// The blocked loop with blocks of kBlock output columns (a power of two up to
// 64; narrow outputs use narrow blocks so no work is wasted on padding).
template <class T, int64_t kBlock>
void matmul_blocked_width(const tsr_plugin_context& context, const matrix3& a, const matrix3& b,
                          const matrix3& c) {
  using Acc = accumulate_t<T>;
  const int64_t n = a.rows, k = a.cols, m = b.cols;
  std::vector<Acc> packed(static_cast<size_t>(k * kBlock));
  for (int64_t batch = 0; batch < a.batch; ++batch) {
    for (int64_t j0 = 0; j0 < m; j0 += kBlock) {
      const int64_t width = std::min(kBlock, m - j0);
      for (int64_t kk = 0; kk < k; ++kk) {
        Acc* row = packed.data() + kk * kBlock;
        for (int64_t j = 0; j < width; ++j) row[j] = to_acc<Acc>(at<T>(b, batch, kk, j0 + j));
        for (int64_t j = width; j < kBlock; ++j) row[j] = Acc{};
      }
      parallel_ranges(thread_count(context), n, k * width, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          Acc acc[kBlock] = {};
          for (int64_t kk = 0; kk < k; ++kk) {
            const Acc av = to_acc<Acc>(at<T>(a, batch, i, kk));
            const Acc* bp = packed.data() + kk * kBlock;
            for (int64_t j = 0; j < kBlock; ++j) acc[j] += av * bp[j];
          }
          for (int64_t j = 0; j < width; ++j) at_mut<T>(c, batch, i, j0 + j) = from_acc<T>(acc[j]);
        }
      });
    }
  }
}

template <class T>
void matmul_blocked(const tsr_plugin_context& context, const matrix3& a, const matrix3& b,
                    const matrix3& c) {
  const int64_t m = b.cols;
  if (m <= 8) return matmul_blocked_width<T, 8>(context, a, b, c);
  if (m <= 16) return matmul_blocked_width<T, 16>(context, a, b, c);
  if (m <= 32) return matmul_blocked_width<T, 32>(context, a, b, c);
  matmul_blocked_width<T, 64>(context, a, b, c);
}

// Normalises the strides of size-1 dims and reports whether oneDNN can read
// `x` in place: row-major (col_stride 1, row_stride >= cols) or column-major
// (row_stride 1, col_stride >= rows), batches not overlapping.
bool make_plain(matrix3& x, bool row_major_only) {
  if (x.cols == 1) x.col_stride = x.rows == 1 ? 1 : (x.row_stride == 1 ? x.rows : 1);
  if (x.rows == 1) x.row_stride = x.col_stride == 1 ? x.cols : 1;
  const bool row_major = x.col_stride == 1 && x.row_stride >= x.cols;
  const bool col_major = !row_major_only && x.row_stride == 1 && x.col_stride >= x.rows;
  if (!row_major && !col_major) return false;
  const int64_t extent = (x.rows - 1) * x.row_stride + (x.cols - 1) * x.col_stride + 1;
  if (x.batch == 1) x.batch_stride = extent;
  return x.batch_stride >= extent;
}

// A contiguous row-major float32 matrix of x's shape over `storage`
// (resized to fit); contents unset.
matrix3 contiguous_f32(const matrix3& x, std::vector<float>& storage) {
  storage.resize(static_cast<size_t>(x.batch * x.rows * x.cols));
  matrix3 packed = x;
  packed.data = reinterpret_cast<char*>(storage.data());
  packed.col_stride = 1;
  packed.row_stride = x.cols;
  packed.batch_stride = x.rows * x.cols;
  return packed;
}

// A contiguous row-major float32 copy of x's batches (x of float32,
// float16 or bfloat16: exact), in `storage`; rows split between threads.
template <class T>
matrix3 widen(const tsr_plugin_context& context, const matrix3& x, std::vector<float>& storage) {
  const matrix3 wide = contiguous_f32(x, storage);
  parallel_ranges(thread_count(context), x.batch * x.rows, x.cols, [&](int64_t r0, int64_t r1) {
    for (int64_t br = r0; br < r1; ++br) {
      const int64_t b = br / x.rows, r = br % x.rows;
      float* out = &at_mut<float>(wide, b, r, 0);
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t col = 0; col < x.cols; ++col) out[col] = at<float>(x, b, r, col);
      } else if (x.col_stride == 1) {
        to_float(&at<T>(x, b, r, 0), out, x.cols);
      } else {
        for (int64_t col = 0; col < x.cols; ++col)
          out[col] = static_cast<float>(at<T>(x, b, r, col));
      }
    }
  });
  return wide;
}

f32_matrix as_f32(const matrix3& x) {
  return f32_matrix{reinterpret_cast<float*>(x.data),
                    x.batch,
                    x.rows,
                    x.cols,
                    x.batch_stride,
                    x.row_stride,
                    x.col_stride};
}

void matmul_f32(const tsr_plugin_context& context, matrix3 a, matrix3 b, const matrix3& c) {
  std::vector<float> a_storage, b_storage, c_storage;
  if (!make_plain(a, false)) a = widen<float>(context, a, a_storage);
  if (!make_plain(b, false)) b = widen<float>(context, b, b_storage);
  matrix3 target = c;
  const bool direct = make_plain(target, true);
  if (!direct) target = contiguous_f32(c, c_storage);
  apply_thread_count(context);
  if (!context.matmul->run(as_f32(a), as_f32(b), as_f32(target), thread_count(context))) {
    matmul_blocked<float>(context, a, b, target);
  }
  if (!direct) {
    for (int64_t bt = 0; bt < c.batch; ++bt) {
      for (int64_t r = 0; r < c.rows; ++r) {
        for (int64_t col = 0; col < c.cols; ++col)
          at_mut<float>(c, bt, r, col) = at<float>(target, bt, r, col);
      }
    }
  }
}

// float16 and bfloat16 (T) through oneDNN's float32 matmul: both operands
// widened to contiguous float32, the products accumulated in float32 (as
// the blocked loop does, in another order), each result rounded once to T
// (to nearest even). Widening and narrowing cost O(nk + km + nm) against
// the product's O(nkm). Why not oneDNN's own bfloat16 matmul: oneDNN 2.6 has
// no float16 one on x86, and its bfloat16 one runs on AVX512-BF16 or AMX
// dot products where the CPU has them, which flush subnormal inputs and
// results to zero - results would depend on the CPU. (The blocked loop ran
// bfloat16 at 0.05x of PyTorch's AMX matmul on a 16-core Xeon; this is
// oneDNN's float32 speed, not AMX's.)
template <class T>
void matmul_reduced(const tsr_plugin_context& context, const matrix3& a, const matrix3& b,
                    const matrix3& c) {
  std::vector<float> a_storage, b_storage, c_storage;
  const matrix3 aw = widen<T>(context, a, a_storage);
  const matrix3 bw = widen<T>(context, b, b_storage);
  const matrix3 cw = contiguous_f32(c, c_storage);
  apply_thread_count(context);
  if (!context.matmul->run(as_f32(aw), as_f32(bw), as_f32(cw), thread_count(context)))
    matmul_blocked<float>(context, aw, bw, cw);
  parallel_ranges(thread_count(context), c.batch * c.rows, c.cols, [&](int64_t r0, int64_t r1) {
    for (int64_t br = r0; br < r1; ++br) {
      const int64_t bt = br / c.rows, r = br % c.rows;
      const float* in = &at<float>(cw, bt, r, 0);
      if (c.col_stride == 1) {
        from_float(in, &at_mut<T>(c, bt, r, 0), c.cols);
      } else {
        for (int64_t col = 0; col < c.cols; ++col) at_mut<T>(c, bt, r, col) = T(in[col]);
      }
    }
  });
}

// Writes zeros (all-zero bits in every dtype) into `out`.
void zero_fill(const tsr_plugin_context& context, const tsr_tensor_desc& out) {
  const tsr_tensor_desc* descs[1] = {&out};
  const auto layout = sdk::make_layout(descs);
  const int64_t stride = layout.inner_stride(0);
  const size_t size = sdk::element_size(out.dtype);
  char* const base[1] = {base_address(out)};
  for_each_element_run(context, layout, base, [&](char* const(&p)[1], int64_t n) {
    if (stride == static_cast<int64_t>(size)) {
      std::memset(p[0], 0, static_cast<size_t>(n) * size);
    } else {
      for (int64_t i = 0; i < n; ++i) std::memset(p[0] + i * stride, 0, size);
    }
  });
}

void matmul_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call,
                   bool batched) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 2, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& mat2 = sdk::tensor_arg(call, 1, "mat2");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  const int ndim = batched ? 3 : 2;
  if (self.ndim != ndim || mat2.ndim != ndim || out.ndim != ndim) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: self, mat2 and out must be %d-d; got %d-d, %d-d and %d-d",
                      sdk::op_name(call), ndim, static_cast<int>(self.ndim),
                      static_cast<int>(mat2.ndim), static_cast<int>(out.ndim));
  }
  const matrix3 a = sdk::matrix_view_of(self), b = sdk::matrix_view_of(mat2),
                c = sdk::matrix_view_of(out);
  if (a.batch != b.batch || a.batch != c.batch || a.cols != b.rows || c.rows != a.rows ||
      c.cols != b.cols) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: shapes do not match: self (%lld, %lld, %lld), mat2 (%lld, %lld, %lld), "
                      "out (%lld, %lld, %lld) (batch, rows, cols); need (b,n,k)·(b,k,m) -> "
                      "(b,n,m)",
                      sdk::op_name(call), static_cast<long long>(a.batch),
                      static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                      static_cast<long long>(b.batch), static_cast<long long>(b.rows),
                      static_cast<long long>(b.cols), static_cast<long long>(c.batch),
                      static_cast<long long>(c.rows), static_cast<long long>(c.cols));
  }
  sdk::check_dtype(call, self, "self", out.dtype);
  sdk::check_dtype(call, mat2, "mat2", out.dtype);
  if (out.dtype == TSR_BOOL) sdk::throw_unsupported_dtype(call, "self", out.dtype, kPluginName);
  if (c.batch == 0 || c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) {
    zero_fill(context, out);
    return;
  }
  // Tiny products stay out of oneDNN, whose per-call overhead (stream,
  // memory objects) is microseconds; the blocked loop takes nanoseconds.
  constexpr int64_t kTinyMatmulFlops = 8 * 1024;
  if (c.batch * c.rows * c.cols * a.cols > kTinyMatmulFlops) {
    if (out.dtype == TSR_FLOAT32) return matmul_f32(context, a, b, c);
    if (out.dtype == TSR_FLOAT16) return matmul_reduced<sdk::half>(context, a, b, c);
    if (out.dtype == TSR_BFLOAT16) return matmul_reduced<sdk::bfloat16>(context, a, b, c);
  }
  sdk::dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) matmul_blocked<T>(context, a, b, c);
  });
}

}  // namespace

void mm_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  matmul_kernel(context, call, false);
}

void bmm_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  matmul_kernel(context, call, true);
}

}  // namespace tessera::cpu
