// lines.hpp - what reduce.cu (_reduce, _arg_reduce, _scan, cummax, cummin),
// softmax.cu (_softmax, _log_softmax) and nn/norm.cu (native_layer_norm,
// cross_entropy_loss) share: device math overloads for float and double,
// NaN tests, and tensors walked as lines along one dim (one work item per
// line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::gpu {

// Math in the compute type: the C functions by name (float and double
// overloads of the global names are not available everywhere).
TSR_HD inline float exp_of(float x) { return ::expf(x); }
TSR_HD inline double exp_of(double x) { return ::exp(x); }
TSR_HD inline float log_of(float x) { return ::logf(x); }
TSR_HD inline double log_of(double x) { return ::log(x); }
TSR_HD inline float log1p_of(float x) { return ::log1pf(x); }
TSR_HD inline double log1p_of(double x) { return ::log1p(x); }

// True for a NaN of a floating type; false for integers and bool.
template <class C>
TSR_HD inline bool nan_of(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return x != x;
  } else {
    return false;
  }
}

// N operands (input first) walked as lines along `dim`: `ix` has one element
// per line (every dim but `dim`), `n` is the line length and step[k] operand
// k's byte stride along it. Outputs may have size 1 along `dim` (keepdim
// results); they must have the input's sizes elsewhere. A 0-d input is one
// line of one element.
template <int N>
struct Lines {
  Indexer<N> ix;
  int64_t n = 1;
  int64_t step[N] = {};
};

template <int N>
Lines<N> make_lines(const tsr_tensor_desc* const (&descs)[N], int dim) {
  const tsr_tensor_desc& in = *descs[0];
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[N][TSR_MAX_DIMS];
  const int64_t* stride_ptrs[N];
  size_t elem[N];
  int ndim = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (d == dim) continue;
    sizes[ndim] = in.sizes[d];
    for (int k = 0; k < N; ++k) strides[k][ndim] = descs[k]->strides[d];
    ++ndim;
  }
  Lines<N> l;
  for (int k = 0; k < N; ++k) {
    stride_ptrs[k] = strides[k];
    elem[k] = sdk::element_size(descs[k]->dtype);
    l.step[k] = in.ndim == 0 ? 0 : descs[k]->strides[dim] * static_cast<int64_t>(elem[k]);
  }
  l.n = in.ndim == 0 ? 1 : in.sizes[dim];
  l.ix = indexer_of<N>(ndim, sizes, stride_ptrs, elem);
  return l;
}

// A resolved single dim argument: 0 <= dim < max(ndim, 1), else INVALID_ARGUMENT.
inline int resolved_dim(const tsr_kernel_call& call, int index, int ndim) {
  const int64_t dim = int_arg(call, index, "dim");
  if (dim < 0 || dim >= (ndim == 0 ? 1 : ndim))
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: dim %lld is not valid for a %d-d input (the core passes a resolved, "
                      "non-negative dim)",
                      call.op_name, static_cast<long long>(dim), ndim);
  return static_cast<int>(dim);
}

#if TSR_DEVICE_COMPILER
// Device-only block-per-line paths (softmax.cu, reduce.cu, nn/norm.cu): one block of
// kRowThreads threads per long line (the functor paths give a line one
// thread, so a warp reads memory a whole line apart). Each thread strides
// the line by kRowThreads; partial results meet in a shared-memory tree. The
// kernels' grid-stride loops depend on blockIdx only, so every thread of a
// block walks the same lines and reaches every __syncthreads().
constexpr int kRowThreads = 256;  // a multiple of 32 and 64
constexpr int64_t kRowMinLength = 1024;

struct MaxSticky {  // NaN is sticky
  __device__ double operator()(double a, double b) const { return (b > a || b != b) ? b : a; }
};
struct Plus {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// The block-wide combination of every thread's `v` (shm: kRowThreads
// entries); every thread gets the result.
template <class W, class F>
__device__ W block_reduce(W v, W* shm, F combine) {
  const int t = static_cast<int>(threadIdx.x);
  shm[t] = v;
  __syncthreads();
  for (int w = kRowThreads / 2; w > 0; w /= 2) {
    if (t < w) shm[t] = combine(shm[t], shm[t + w]);
    __syncthreads();
  }
  const W r = shm[0];
  __syncthreads();  // shm is reused by the next reduction
  return r;
}

// Blocks for `rows` lines of one block each (the grid-stride loop covers more).
inline unsigned row_blocks(const Exec& exec, int64_t rows) {
  const int64_t cap = int64_t{exec.info->multiprocessors > 0 ? exec.info->multiprocessors : 1} * 32;
  const int64_t b = rows < cap ? rows : cap;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

#if defined(__HIPCC__)
inline hipStream_t native_stream(const Exec& exec) { return static_cast<hipStream_t>(exec.stream); }
#else
inline cudaStream_t native_stream(const Exec& exec) {
  return static_cast<cudaStream_t>(exec.stream);
}
#endif
#endif  // TSR_DEVICE_COMPILER

}  // namespace tessera::gpu
