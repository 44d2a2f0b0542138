// matmul.cu - mm (n,k)·(k,m) and bmm (b,n,k)·(b,k,m) for every numeric dtype,
// any strides.
//
// Three layers, the first that applies runs:
//  1. CUDA flavour, float32/float64/float16/bfloat16: cuBLAS
//     (cublasGemmStridedBatchedEx through vendor_libs.hpp) when every operand
//     is row- or column-major with a unit stride and cuBLAS is present (and
//     its header was, at build time: TSR_HAVE_CUBLAS).
//     float32 computes in float32 (CUBLAS_COMPUTE_32F: no TF32) unless the
//     context's allow_tf32 is set; the 16-bit floats accumulate in float32
//     without reduced-precision reductions, like the CPU plugin.
//  2. Device compilers, the same four dtypes: a tiled shared-memory GEMM
//     (64x64 output tiles, 16-wide k slices, a 4x4 register micro-tile per
//     thread), reading any strides (the HIP plugin's GEMM).
//  3. Everywhere else (integers, k == 0, the host emulation): one work item
//     per output element accumulating over k in the CPU plugin's types
//     (float for the 16-bit floats, double for float64, uint64 wrapping for
//     the integers, then truncated modulo 2^bits to their width).
#include <type_traits>

#include "dtypes.hpp"
#include "kernel_util.hpp"
#include "linalg/tile_gemm.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/strided.hpp"
#include "vendor_libs.hpp"

namespace tessera::gpu {
namespace {

// (batch, rows, cols) views with element strides (sdk/strided.hpp).
using Mat3 = sdk::matrix_view;

// The accumulation type of the functor path (the CPU plugin's matmul.cpp).
template <class T>
using acc_t = std::conditional_t<is_integral_v<T>, uint64_t, compute_t<T>>;

template <class Acc, class T>
TSR_HD inline Acc to_acc(T x) {
  if constexpr (is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(x));  // sign-extended, then wrapping
  } else {
    return static_cast<Acc>(x);
  }
}

template <class T, class Acc>
TSR_HD inline T from_acc(Acc x) {
  if constexpr (is_integral_v<T>) {
    return static_cast<T>(x);  // modulo 2^bits
  } else {
    return T(x);
  }
}

// Layer 3: one output element (batch, row, col) per work item, col innermost.
template <class T>
struct MatmulOp {
  const T* a;
  const T* b;
  T* c;
  int64_t n, k, m;
  int64_t as[3], bs[3], cs[3];  // element strides (batch, row, col)
  TSR_HD void operator()(int64_t i) const {
    using Acc = acc_t<T>;
    const int64_t col = i % m;
    const int64_t t = i / m;
    const int64_t row = t % n;
    const int64_t bt = t / n;
    const T* ap = a + bt * as[0] + row * as[1];
    const T* bp = b + bt * bs[0] + col * bs[2];
    Acc acc = Acc(0);
    for (int64_t kk = 0; kk < k; ++kk)
      acc += to_acc<Acc>(ap[kk * as[2]]) * to_acc<Acc>(bp[kk * bs[1]]);
    c[bt * cs[0] + row * cs[1] + col * cs[2]] = from_acc<T>(acc);
  }
};

template <class T>
void matmul_functor(const Exec& exec, const Mat3& a, const Mat3& b, const Mat3& c) {
  MatmulOp<T> op{reinterpret_cast<const T*>(a.data),
                 reinterpret_cast<const T*>(b.data),
                 reinterpret_cast<T*>(c.data),
                 a.rows,
                 a.cols,
                 b.cols,
                 {a.batch_stride, a.row_stride, a.col_stride},
                 {b.batch_stride, b.row_stride, b.col_stride},
                 {c.batch_stride, c.row_stride, c.col_stride}};
  parallel_for(exec, c.batch * c.rows * c.cols, op, "mm");
}

#if TSR_DEVICE_COMPILER
// ---- Layer 2: the tiled GEMM (device only) ----
// The tile shape of tile_gemm.hpp: each of the 256 threads computes the 4x4
// elements (ty + 16 i, tx + 16 j), i, j < 4, of a 64x64 tile of C (its
// stores to C consecutive along the columns). Per 16-wide k slice the block
// stages A's 64x16 and B's 16x64 slices in shared memory in the accumulation
// type, zero outside the matrices, so the inner loop needs no bounds checks;
// only the final store does. gridDim.z strides over batches.

struct GemmArgs {
  const char* a;
  const char* b;
  char* c;
  int64_t batch, n, k, m;
  int64_t as[3], bs[3], cs[3];  // element strides
};

template <class T, class Acc>
__global__ void __launch_bounds__(kTileThreads) gemm_tiled_kernel(GemmArgs g) {
  __shared__ TileSlice<Acc> a_tile;  // [k][row]
  __shared__ TileSlice<Acc> b_tile;  // [k][col]
  const T* a = reinterpret_cast<const T*>(g.a);
  const T* b = reinterpret_cast<const T*>(g.b);
  T* c = reinterpret_cast<T*>(g.c);
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int64_t bt = blockIdx.z; bt < g.batch; bt += gridDim.z) {
    Acc acc[kMicro][kMicro];
    for (int i = 0; i < kMicro; ++i)
      for (int j = 0; j < kMicro; ++j) acc[i][j] = Acc(0);
    for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
      for (int e = tid; e < kTile * kTileK; e += kTileThreads) {
        // A slice: e = r * 16 + kk (consecutive threads walk k).
        const int r = e / kTileK, kk = e % kTileK;
        const int64_t row = row0 + r, ka = k0 + kk;
        a_tile[kk][r] = row < g.n && ka < g.k
                            ? convert<Acc>(a[bt * g.as[0] + row * g.as[1] + ka * g.as[2]])
                            : Acc(0);
        // B slice: e = kk * 64 + col (consecutive threads walk the columns).
        const int kb = e / kTile, cc = e % kTile;
        const int64_t col = col0 + cc, kbb = k0 + kb;
        b_tile[kb][cc] = col < g.m && kbb < g.k
                             ? convert<Acc>(b[bt * g.bs[0] + kbb * g.bs[1] + col * g.bs[2]])
                             : Acc(0);
      }
      __syncthreads();
      accumulate_micro_tile(a_tile, b_tile, ty, tx, acc);
      __syncthreads();  // the next slice overwrites the tiles
    }
    for (int i = 0; i < kMicro; ++i) {
      const int64_t row = row0 + ty + 16 * i;
      if (row >= g.n) continue;
      for (int j = 0; j < kMicro; ++j) {
        const int64_t col = col0 + tx + 16 * j;
        if (col < g.m) c[bt * g.cs[0] + row * g.cs[1] + col * g.cs[2]] = convert<T>(acc[i][j]);
      }
    }
  }
}

// Launches the tiled GEMM; false when the grid does not fit (then the functor runs).
template <class T>
bool matmul_tiled(const Exec& exec, const Mat3& a, const Mat3& b, const Mat3& c) {
  using Acc = compute_t<T>;
  const int64_t gx = (c.cols + kTile - 1) / kTile, gy = (c.rows + kTile - 1) / kTile;
  if (gx > exec.info->max_grid_x || gy > 65535) return false;
  const int64_t gz = c.batch < 65535 ? c.batch : 65535;
  GemmArgs g{a.data,
             b.data,
             c.data,
             c.batch,
             a.rows,
             a.cols,
             b.cols,
             {a.batch_stride, a.row_stride, a.col_stride},
             {b.batch_stride, b.row_stride, b.col_stride},
             {c.batch_stride, c.row_stride, c.col_stride}};
#if defined(__HIPCC__)
  auto stream = static_cast<hipStream_t>(exec.stream);
#else
  auto stream = static_cast<cudaStream_t>(exec.stream);
#endif
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz));
  gemm_tiled_kernel<T, Acc><<<grid, dim3(kTileThreads), 0, stream>>>(g);
  check_launch("mm (tiled)");
  return true;
}
#endif  // TSR_DEVICE_COMPILER

#if TSR_HAVE_CUBLAS
// ---- Layer 1: cuBLAS (CUDA flavour) ----
// A logical matrix X (rows x cols) as cuBLAS sees it: column-major memory
// (op N, ld = col stride) or row-major memory read transposed (op T,
// ld = row stride).
struct BlasOperand {
  const char* data = nullptr;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0, batch_stride = 0;
};

bool blas_operand(const Mat3& x, BlasOperand& out) {
  // Strides of size-1 dims are never used; give them the value that makes the
  // layout plain.
  const int64_t rs = x.rows == 1 ? 1 : x.row_stride;
  const int64_t cs = x.cols == 1 ? 1 : x.col_stride;
  out.data = x.data;
  out.batch_stride = x.batch == 1 ? 0 : x.batch_stride;
  if (out.batch_stride < 0) return false;
  if (rs == 1) {  // column-major
    out.op = CUBLAS_OP_N;
    out.ld = x.cols == 1 ? x.rows : cs;
    if (out.ld < x.rows) return false;
  } else if (cs == 1) {  // row-major
    out.op = CUBLAS_OP_T;
    out.ld = x.rows == 1 ? x.cols : rs;
    if (out.ld < x.cols) return false;
  } else {
    return false;
  }
  if (out.ld < 1) out.ld = 1;
  return out.ld <= INT32_MAX;
}

// The transposed view of x (rows and columns swapped).
Mat3 transposed(Mat3 x) {
  Mat3 t = x;
  t.rows = x.cols;
  t.cols = x.rows;
  t.row_stride = x.col_stride;
  t.col_stride = x.row_stride;
  return t;
}

bool matmul_cublas(tsr_plugin_context& context, const Exec& exec, const tsr_kernel_call& call,
                   int32_t dtype, const Mat3& a, const Mat3& b, const Mat3& c) {
  if (vendor_libs::cublas() == nullptr) return false;
  cudaDataType type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (dtype) {
    case TSR_FLOAT32:
      type = CUDA_R_32F;
      if (context.allow_tf32.load(std::memory_order_relaxed))
        compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case TSR_FLOAT64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case TSR_FLOAT16:
      type = CUDA_R_16F;
      break;
    case TSR_BFLOAT16:
      type = CUDA_R_16BF;
      break;
    default:
      return false;
  }
  // cuBLAS writes its output column-major: C itself when C is column-major
  // (C = A B), else C^T (C^T = B^T A^T, C row-major).
  BlasOperand out, first, second;
  Mat3 x = a, y = b, z = c;
  if (!blas_operand(z, out)) return false;
  if (out.op == CUBLAS_OP_T) {  // row-major C: compute C^T
    x = transposed(b);
    y = transposed(a);
    z = transposed(c);
    if (!blas_operand(z, out) || out.op != CUBLAS_OP_N) return false;
  }
  if (!blas_operand(x, first) || !blas_operand(y, second)) return false;
  // z = x · y with z (M x N) column-major, x M x K, y K x N.
  const int64_t M = z.rows, N = z.cols, K = x.cols;
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) return false;
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = dtype == TSR_FLOAT64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = dtype == TSR_FLOAT64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const size_t elem = sdk::element_size(dtype);
  // A workspace of this call's own (stream-ordered scratch): cublasSetStream
  // resets the handle to its default workspace, which calls on other streams
  // share. cuBLAS recommends 32 MiB on Hopper and newer, 4 MiB before.
  size_t ws_bytes = (exec.info != nullptr && exec.info->major >= 9 ? 32u : 4u) << 20;
  void* workspace = nullptr;
  try {
    workspace = scratch(call, ws_bytes);
  } catch (...) {  // NOLINT(bugprone-empty-catch): no memory to spare: run without a workspace
    ws_bytes = 0;
  }
  return vendor_libs::with_cublas(
      context, exec.device, exec.stream, [&](const vendor_libs::CublasApi& api, cublasHandle_t h) {
        // No reduced-precision reductions for the 16-bit floats (float
        // accumulation throughout, as the CPU plugin does).
        if (api.set_math_mode(
                h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
            CUBLAS_STATUS_SUCCESS)
          return false;
        if (api.set_workspace(h, workspace, ws_bytes) != CUBLAS_STATUS_SUCCESS) return false;
        // Batches in chunks the grid's z dimension always takes.
        constexpr int64_t kChunk = 65535;
        bool launched = false;
        for (int64_t b0 = 0; b0 < c.batch; b0 += kChunk) {
          const int64_t count = c.batch - b0 < kChunk ? c.batch - b0 : kChunk;
          const cublasStatus_t st = api.gemm_strided_batched_ex(
              h, first.op, second.op, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K),
              alpha, first.data + b0 * first.batch_stride * elem, type, static_cast<int>(first.ld),
              first.batch_stride, second.data + b0 * second.batch_stride * elem, type,
              static_cast<int>(second.ld), second.batch_stride, beta,
              const_cast<char*>(out.data) + b0 * out.batch_stride * elem, type,
              static_cast<int>(out.ld), out.batch_stride, static_cast<int>(count), compute,
              CUBLAS_GEMM_DEFAULT);
          if (st != CUBLAS_STATUS_SUCCESS) {
            // Nothing enqueued yet: the caller's fallback computes everything.
            // After a partial launch, report rather than recompute.
            if (!launched) return false;
            sdk::throw_status(TSR_INTERNAL, "%s plugin mm: cublasGemmStridedBatchedEx failed (%d)",
                              flavour_name(), static_cast<int>(st));
          }
          launched = true;
        }
        return true;
      });
}
#endif  // TSR_HAVE_CUBLAS

tsr_status* matmul_kernel(tsr_plugin_context* context, const tsr_kernel_call* call,
                          bool batched) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const tsr_tensor_desc& mat2 = tensor_arg(*call, 1, "mat2");
    const tsr_tensor_desc& out = out_arg(*call, 0);
    const int ndim = batched ? 3 : 2;
    if (self.ndim != ndim || mat2.ndim != ndim || out.ndim != ndim)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: self, mat2 and out must be %d-d; got %d-d, %d-d and %d-d",
                        call->op_name, ndim, static_cast<int>(self.ndim),
                        static_cast<int>(mat2.ndim), static_cast<int>(out.ndim));
    const Mat3 a = sdk::matrix_view_of(self), b = sdk::matrix_view_of(mat2),
               c = sdk::matrix_view_of(out);
    if (a.batch != b.batch || a.batch != c.batch || a.cols != b.rows || c.rows != a.rows ||
        c.cols != b.cols)
      sdk::throw_status(
          TSR_INVALID_ARGUMENT,
          "%s: shapes do not match: self (%lld, %lld, %lld), mat2 (%lld, %lld, %lld), "
          "out (%lld, %lld, %lld) (batch, rows, cols); need (b,n,k)·(b,k,m) -> (b,n,m)",
          call->op_name, static_cast<long long>(a.batch), static_cast<long long>(a.rows),
          static_cast<long long>(a.cols), static_cast<long long>(b.batch),
          static_cast<long long>(b.rows), static_cast<long long>(b.cols),
          static_cast<long long>(c.batch), static_cast<long long>(c.rows),
          static_cast<long long>(c.cols));
    if (self.dtype != out.dtype || mat2.dtype != out.dtype || out.dtype == TSR_BOOL)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: self, mat2 and out must have one numeric dtype",
                        call->op_name);
    if (c.batch == 0 || c.rows == 0 || c.cols == 0) return;
    const bool blas_dtype = out.dtype == TSR_FLOAT32 || out.dtype == TSR_FLOAT64 ||
                            out.dtype == TSR_FLOAT16 || out.dtype == TSR_BFLOAT16;
    // k == 0 (zeros) and integers take the functor.
    if (blas_dtype && a.cols > 0) {
#if TSR_HAVE_CUBLAS
      if (matmul_cublas(*context, exec, *call, out.dtype, a, b, c)) return;
#endif
#if TSR_DEVICE_COMPILER
      bool done = false;
      switch (out.dtype) {
        case TSR_FLOAT32:
          done = matmul_tiled<float>(exec, a, b, c);
          break;
        case TSR_FLOAT64:
          done = matmul_tiled<double>(exec, a, b, c);
          break;
        case TSR_FLOAT16:
          done = matmul_tiled<half>(exec, a, b, c);
          break;
        default:
          done = matmul_tiled<bfloat16>(exec, a, b, c);
          break;
      }
      if (done) return;
#endif
    }
    TSR_GPU_DISPATCH(out.dtype, call->op_name, T, {
      if constexpr (!std::is_same_v<T, bool>) matmul_functor<T>(exec, a, b, c);
    });
  });
}

tsr_status* mm_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return matmul_kernel(context, call, false);
}
tsr_status* bmm_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return matmul_kernel(context, call, true);
}

}  // namespace

void add_matmul_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kMm, {kNumericDtypes, kNumericDtypes}, mm_kernel));
  out.push_back(make_entry(sdk::schema::kBmm, {kNumericDtypes, kNumericDtypes}, bmm_kernel));
}

}  // namespace tessera::gpu
