// convolution.cu - the fused convolution (the CPU plugin's schema and checks,
// conv/convolution.cpp; contract in core/registry/defs/conv.def): 1-3 spatial
// dims, any stride/padding/dilation/groups, transposed too, float32 and
// float64, operands with any strides.
//
//  - CUDA flavour with cuDNN's header (TSR_HAVE_CUDNN), not transposed:
//    cuDNN (vendor_libs.hpp) with the best heuristic forward algorithm it
//    accepts, float32 without TF32 unless the context's allow_tf32 is set; a
//    weight that is not contiguous is first packed (cuDNN filters are dense),
//    and the bias is added by a functor. Any refusal (an absent library,
//    non-positive strides, a shape cuDNN declines) falls through to
//  - device compilers (HIP always; CUDA without cuDNN or when it refuses),
//    not transposed: a tiled implicit-GEMM kernel, linalg/matmul.cu's shared-memory
//    GEMM tiling (64x64 output tiles, 16-wide k slices, 4x4 per thread) over
//    M = N * OD * OH * OW output positions, O / groups output channels and
//    K = C / groups * KD * KH * KW, the input gathered into the A tiles on
//    the fly (zeros for the padding), the bias added in the epilogue; any
//    stride, padding, dilation and groups. Groups of fewer than 16 output
//    channels and K < 16 (depthwise convolutions and the like) skip it: most
//    of a tile would be wasted. Everything else (transposed convolutions, the
//    host emulation) takes
//  - the direct-convolution functor: one work item per output element
//    (n, oc, z, y, x) summing over its group's input channels and the kernel
//    taps, in the dtype's own precision. Transposed convolutions gather:
//    output position p receives input position i through tap t when
//    p + padding - t * dilation = i * stride.
#include <span>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"
#include "linalg/tile_gemm.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "vendor_libs.hpp"

namespace tessera::gpu {
namespace {

constexpr uint64_t kConvDtypes = TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);

// A convolution canonicalised to 3 spatial dims (leading size-1 dims added).
// Strides in elements.
struct ConvGeom {
  int64_t n = 0, c = 0, o = 0, groups = 1, cg = 0, og = 0;
  int64_t in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int64_t xs[5] = {}, ws[5] = {}, ys[5] = {}, bs = 0;
  bool transposed = false;
};

// The input position feeding output position `pos` through tap `t` along
// spatial dim d, or -1 when none does.
TSR_HD inline int64_t source_index(const ConvGeom& g, int d, int64_t pos, int64_t t) {
  int64_t i;
  if (!g.transposed) {
    i = pos * g.stride[d] - g.padding[d] + t * g.dilation[d];
  } else {
    const int64_t u = pos + g.padding[d] - t * g.dilation[d];
    if (u < 0 || u % g.stride[d] != 0) return -1;
    i = u / g.stride[d];
  }
  return i < g.in[d] ? i : -1;
}

template <class T>
struct ConvOp {
  const T* x;
  const T* w;
  const T* bias;  // null: none
  T* y;
  ConvGeom g;
  TSR_HD void operator()(int64_t i) const {
    const int64_t p2 = i % g.out[2];
    int64_t t = i / g.out[2];
    const int64_t p1 = t % g.out[1];
    t /= g.out[1];
    const int64_t p0 = t % g.out[0];
    t /= g.out[0];
    const int64_t oc = t % g.o;
    const int64_t n = t / g.o;
    const int64_t grp = oc / g.og;
    T acc = bias != nullptr ? bias[oc * g.bs] : T(0);
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      const int64_t i0 = source_index(g, 0, p0, k0);
      if (i0 < 0) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        const int64_t i1 = source_index(g, 1, p1, k1);
        if (i1 < 0) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          const int64_t i2 = source_index(g, 2, p2, k2);
          if (i2 < 0) continue;
          const T* xp =
              x + n * g.xs[0] + grp * g.cg * g.xs[1] + i0 * g.xs[2] + i1 * g.xs[3] + i2 * g.xs[4];
          // Regular weight (O, C/groups, k...); transposed (C, O/groups, k...).
          const T* wp =
              w + k0 * g.ws[2] + k1 * g.ws[3] + k2 * g.ws[4] +
              (g.transposed ? grp * g.cg * g.ws[0] + (oc - grp * g.og) * g.ws[1] : oc * g.ws[0]);
          const int64_t wstep = g.transposed ? g.ws[0] : g.ws[1];
          for (int64_t ci = 0; ci < g.cg; ++ci) acc += xp[ci * g.xs[1]] * wp[ci * wstep];
        }
      }
    }
    y[n * g.ys[0] + oc * g.ys[1] + p0 * g.ys[2] + p1 * g.ys[3] + p2 * g.ys[4]] = acc;
  }
};

#if TSR_DEVICE_COMPILER
// ---- The tiled implicit-GEMM convolution (device only; regular convolutions) ----
// Per group, the convolution is the GEMM Y[m][n] = sum_k A[m][k] B[k][n] with
// m = (batch, z, y, x) an output position (M = N * OD * OH * OW), n an output
// channel of the group (O / groups), k = (input channel of the group, tap)
// (K = C / groups * KD * KH * KW). A[m][k] is the input element output
// position m reads through tap k (zero in the padding), gathered on the fly;
// B[k][n] the weight element. The tiling is tile_gemm.hpp's, as in linalg/matmul.cu's
// tiled GEMM: a block of 256 threads computes a 64x64 tile of Y, each thread
// the 4x4 elements (row tr + 16 i, column tc + 16 j), staging A's 64x16 and
// B's 16x64 slices in shared memory (zero outside the matrices). Rows and columns swap roles
// with respect to matmul.cu because output positions are what is contiguous
// in Y (NCHW): consecutive threads walk rows when gathering A and when
// storing Y, and walk k when reading the weight, whose (C, taps) are
// contiguous. Each thread gathers A for one fixed row of the tile, so the
// row's (batch, z, y, x) is decoded once per block; k is decoded into
// (channel, tap) with 32-bit divisions per slice. gridDim.x walks the
// output-position tiles, gridDim.y the channel tiles, gridDim.z strides over
// groups. The bias is added in the epilogue. Accumulates in the dtype's own
// precision, like the functor.
// Below these widths a 64x64 tile wastes most of its work (depthwise and
// narrow grouped convolutions, 1-channel inputs): the functor runs them.
constexpr int64_t kConvTiledMinCols = 16, kConvTiledMinK = 16;

struct ConvGemmArgs {
  const char* x;
  const char* w;
  const char* bias;  // null: none
  char* y;
  ConvGeom g;
  int64_t m;          // output positions: n * out[0] * out[1] * out[2]
  int32_t k;          // cg * taps (the host checks it fits)
  int32_t taps;       // kernel[0] * kernel[1] * kernel[2]
  int32_t kernel[3];  // g.kernel as int32
};

// k -> (input channel within the group, tap (t0, t1, t2)).
TSR_DEVICE inline void decode_k(const ConvGemmArgs& a, int32_t k, int32_t& ci, int32_t (&t)[3]) {
  ci = k / a.taps;
  int32_t r = k - ci * a.taps;
  t[2] = r % a.kernel[2];
  r /= a.kernel[2];
  t[1] = r % a.kernel[1];
  t[0] = r / a.kernel[1];
}

// m -> (batch, p0, p1, p2).
TSR_DEVICE inline void decode_m(const ConvGeom& g, int64_t m, int64_t& n, int64_t (&p)[3]) {
  p[2] = m % g.out[2];
  m /= g.out[2];
  p[1] = m % g.out[1];
  m /= g.out[1];
  p[0] = m % g.out[0];
  n = m / g.out[0];
}

template <class T>
__global__ void __launch_bounds__(kTileThreads) conv_implicit_gemm_kernel(ConvGemmArgs a) {
  __shared__ TileSlice<T> a_tile;  // [k][output position]
  __shared__ TileSlice<T> b_tile;  // [k][output channel]
  const ConvGeom& g = a.g;
  const T* x = reinterpret_cast<const T*>(a.x);
  const T* w = reinterpret_cast<const T*>(a.w);
  const T* bias = reinterpret_cast<const T*>(a.bias);
  T* y = reinterpret_cast<T*>(a.y);
  const int tid = static_cast<int>(threadIdx.x);
  const int tr = tid % 16, tc = tid / 16;  // the micro-tile's row and column offsets
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t n0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // A gather: row ar of the tile, k offsets ak + 4 j (e = kk * 64 + row = tid + 256 j).
  const int ar = tid % kTile, ak = tid / kTile;
  const bool a_row = m0 + ar < a.m;
  int64_t a_base = 0, a_pos[3] = {0, 0, 0};  // batch offset; input position of tap 0
  if (a_row) {
    int64_t n, p[3];
    decode_m(g, m0 + ar, n, p);
    a_base = n * g.xs[0];
    for (int d = 0; d < 3; ++d) a_pos[d] = p[d] * g.stride[d] - g.padding[d];
  }
  // B read: k offset bk, columns bc + 16 j (e = col * 16 + kk = tid + 256 j).
  const int bk = tid % kTileK, bc = tid / kTileK;
  for (int64_t grp = blockIdx.z; grp < g.groups; grp += gridDim.z) {
    const T* xg = x + a_base + grp * g.cg * g.xs[1];
    const int64_t oc0 = grp * g.og;  // the group's first output channel
    T acc[kMicro][kMicro];
    for (int i = 0; i < kMicro; ++i)
      for (int j = 0; j < kMicro; ++j) acc[i][j] = T(0);
    for (int32_t k0 = 0; k0 < a.k; k0 += kTileK) {
      for (int j = 0; j < kTile * kTileK / kTileThreads; ++j) {
        const int kk = ak + (kTileThreads / kTile) * j;
        T v = T(0);
        if (a_row && k0 + kk < a.k) {
          int32_t ci, t[3];
          decode_k(a, k0 + kk, ci, t);
          int64_t off = ci * g.xs[1];
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            const int64_t i = a_pos[d] + t[d] * g.dilation[d];
            inside = inside && static_cast<uint64_t>(i) < static_cast<uint64_t>(g.in[d]);
            off += i * g.xs[2 + d];
          }
          if (inside) v = xg[off];
        }
        a_tile[kk][ar] = v;
      }
      {
        const int32_t kb = k0 + bk;
        int32_t ci = 0, t[3] = {0, 0, 0};
        if (kb < a.k) decode_k(a, kb, ci, t);
        const int64_t off = ci * g.ws[1] + t[0] * g.ws[2] + t[1] * g.ws[3] + t[2] * g.ws[4];
        for (int j = 0; j < kTile * kTileK / kTileThreads; ++j) {
          const int cc = bc + (kTileThreads / kTileK) * j;
          const int64_t col = n0 + cc;
          b_tile[bk][cc] = kb < a.k && col < g.og ? w[(oc0 + col) * g.ws[0] + off] : T(0);
        }
      }
      __syncthreads();
      accumulate_micro_tile(a_tile, b_tile, tr, tc, acc);
      __syncthreads();  // the next slice overwrites the tiles
    }
    for (int i = 0; i < kMicro; ++i) {
      const int64_t m = m0 + tr + 16 * i;
      if (m >= a.m) continue;
      int64_t n, p[3];
      decode_m(g, m, n, p);
      T* yp = y + n * g.ys[0] + p[0] * g.ys[2] + p[1] * g.ys[3] + p[2] * g.ys[4];
      for (int j = 0; j < kMicro; ++j) {
        const int64_t col = n0 + tc + 16 * j;
        if (col >= g.og) continue;
        const int64_t oc = oc0 + col;
        yp[oc * g.ys[1]] = bias != nullptr ? acc[i][j] + bias[oc * g.bs] : acc[i][j];
      }
    }
  }
}

// Launches the tiled implicit GEMM; false (the functor runs) for transposed
// convolutions, narrow problems, and grids or sizes out of its range.
template <class T>
bool conv_tiled(const Exec& exec, const ConvGeom& g, const T* x, const T* w, const T* bias, T* y) {
  if (g.transposed) return false;
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t k = g.cg * taps;
  if (g.og < kConvTiledMinCols || k < kConvTiledMinK || k > INT32_MAX) return false;
  const int64_t m = g.n * g.out[0] * g.out[1] * g.out[2];
  const int64_t gx = (m + kTile - 1) / kTile, gy = (g.og + kTile - 1) / kTile;
  if (gx > exec.info->max_grid_x || gy > 65535) return false;
  const int64_t gz = g.groups < 65535 ? g.groups : 65535;
  ConvGemmArgs a{reinterpret_cast<const char*>(x),
                 reinterpret_cast<const char*>(w),
                 reinterpret_cast<const char*>(bias),
                 reinterpret_cast<char*>(y),
                 g,
                 m,
                 static_cast<int32_t>(k),
                 static_cast<int32_t>(taps),
                 {static_cast<int32_t>(g.kernel[0]), static_cast<int32_t>(g.kernel[1]),
                  static_cast<int32_t>(g.kernel[2])}};
#if defined(__HIPCC__)
  auto stream = static_cast<hipStream_t>(exec.stream);
#else
  auto stream = static_cast<cudaStream_t>(exec.stream);
#endif
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz));
  conv_implicit_gemm_kernel<T><<<grid, dim3(kTileThreads), 0, stream>>>(a);
  check_launch("convolution (implicit GEMM)");
  return true;
}
#endif  // TSR_DEVICE_COMPILER

void require(const tsr_kernel_call& call, bool ok, const char* what) {
  if (!ok) sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: %s", call.op_name, what);
}

#if TSR_HAVE_CUDNN
// ---- cuDNN (CUDA flavour, regular convolutions) ----

// Copies a strided tensor into a contiguous one of the same dtype.
template <class T>
struct PackOp {
  char* dst;
  const char* src;
  Indexer<2> ix;
  TSR_HD void operator()(int64_t i) const {
    int64_t off[2];
    ix.offsets(i, off);
    *reinterpret_cast<T*>(dst + off[0]) = *reinterpret_cast<const T*>(src + off[1]);
  }
};

// Adds bias[oc] to every output element (after cuDNN wrote y).
template <class T>
struct BiasAddOp {
  T* y;
  const T* bias;
  ConvGeom g;
  TSR_HD void operator()(int64_t i) const {
    const int64_t p2 = i % g.out[2];
    int64_t t = i / g.out[2];
    const int64_t p1 = t % g.out[1];
    t /= g.out[1];
    const int64_t p0 = t % g.out[0];
    t /= g.out[0];
    const int64_t oc = t % g.o;
    const int64_t n = t / g.o;
    y[n * g.ys[0] + oc * g.ys[1] + p0 * g.ys[2] + p1 * g.ys[3] + p2 * g.ys[4]] += bias[oc * g.bs];
  }
};

// cuDNN descriptors, destroyed on every path out.
struct CudnnDescs {
  const vendor_libs::CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  explicit CudnnDescs(const vendor_libs::CudnnApi& a) : api(a) {}
  ~CudnnDescs() {
    if (x != nullptr) (void)api.destroy_tensor_desc(x);
    if (y != nullptr) (void)api.destroy_tensor_desc(y);
    if (w != nullptr) (void)api.destroy_filter_desc(w);
    if (conv != nullptr) (void)api.destroy_conv_desc(conv);
  }
  CudnnDescs(const CudnnDescs&) = delete;
  CudnnDescs& operator=(const CudnnDescs&) = delete;
};

// A 5-d (N, C, D, H, W) or 4-d (1-d and 2-d problems: N, C, H, W) shape with
// positive int strides for cuDNN, from the canonical geometry; false when
// some stride of a dim longer than 1 is not positive or a value exceeds int.
bool cudnn_dims(int spatial, const int64_t (&sizes)[5], const int64_t (&strides)[5], int* dims,
                int* out_strides) {
  // Canonical dims (N, C, D, H, W) kept: D only for 3-d problems.
  static constexpr int kKeep5[5] = {0, 1, 2, 3, 4}, kKeep4[4] = {0, 1, 3, 4};
  const int nd = spatial == 3 ? 5 : 4;
  const int* keep = spatial == 3 ? kKeep5 : kKeep4;
  int64_t running = 1;
  for (int j = nd - 1; j >= 0; --j) {
    const int64_t size = sizes[keep[j]];
    int64_t stride = strides[keep[j]];
    if (size == 1) stride = running;  // never read; any positive value
    if (stride <= 0 || size > INT32_MAX || stride > INT32_MAX) return false;
    dims[j] = static_cast<int>(size);
    out_strides[j] = static_cast<int>(stride);
    running *= size;
  }
  return true;
}

template <class T>
bool conv_cudnn(tsr_plugin_context& context, const Exec& exec, const tsr_kernel_call& call,
                const tsr_tensor_desc& weight, int spatial, const ConvGeom& g, const T* x,
                const T* w, const T* bias, T* y) {
  if (g.transposed) return false;
  const vendor_libs::CudnnApi* api = vendor_libs::cudnn();
  if (api == nullptr) return false;
  const int nd = spatial == 3 ? 5 : 4;
  int xdims[5], xstr[5], ydims[5], ystr[5], wdims[5], wstr[5];
  const int64_t xsizes[5] = {g.n, g.c, g.in[0], g.in[1], g.in[2]};
  const int64_t ysizes[5] = {g.n, g.o, g.out[0], g.out[1], g.out[2]};
  const int64_t wsizes[5] = {g.o, g.cg, g.kernel[0], g.kernel[1], g.kernel[2]};
  const int64_t dense_ws[5] = {g.cg * g.kernel[0] * g.kernel[1] * g.kernel[2],
                               g.kernel[0] * g.kernel[1] * g.kernel[2], g.kernel[1] * g.kernel[2],
                               g.kernel[2], 1};
  if (!cudnn_dims(spatial, xsizes, g.xs, xdims, xstr) ||
      !cudnn_dims(spatial, ysizes, g.ys, ydims, ystr) ||
      !cudnn_dims(spatial, wsizes, dense_ws, wdims, wstr))
    return false;
  // cuDNN filters are dense (O, C/groups, k...): pack a weight that is not.
  bool dense = true;
  for (int d = 0; d < 5; ++d)
    if (wsizes[d] > 1 && g.ws[d] != dense_ws[d]) dense = false;
  if (!dense) {
    tsr_tensor_desc packed = weight;
    int64_t running = 1;
    for (int d = packed.ndim - 1; d >= 0; --d) {
      packed.strides[d] = running;
      running *= packed.sizes[d];
    }
    packed.data = scratch(call, static_cast<size_t>(running) * sizeof(T));
    const tsr_tensor_desc* descs[2] = {&packed, &weight};
    const Indexer<2> ix = make_indexer<2>(descs);
    parallel_for(exec, ix.numel, PackOp<T>{data_of(packed), data_of(weight), ix}, "convolution");
    w = static_cast<const T*>(packed.data);
  }
  const cudnnDataType_t type = sizeof(T) == 8 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  int pad[3], stride[3], dilation[3];
  const int first = 3 - (nd - 2);  // the first canonical spatial dim cuDNN sees
  for (int d = first; d < 3; ++d) {
    const int k = d - first;
    if (g.padding[d] > INT32_MAX || g.stride[d] > INT32_MAX || g.dilation[d] > INT32_MAX)
      return false;
    pad[k] = static_cast<int>(g.padding[d]);
    stride[k] = static_cast<int>(g.stride[d]);
    dilation[k] = static_cast<int>(g.dilation[d]);
  }
  if (g.groups > INT32_MAX) return false;
  const bool tf32 = context.allow_tf32.load(std::memory_order_relaxed);
  return vendor_libs::with_cudnn(
      context, exec.device, exec.stream, [&](const vendor_libs::CudnnApi& a, cudnnHandle_t h) {
        CudnnDescs dd(a);
        if (a.create_tensor_desc(&dd.x) != CUDNN_STATUS_SUCCESS ||
            a.create_tensor_desc(&dd.y) != CUDNN_STATUS_SUCCESS ||
            a.create_filter_desc(&dd.w) != CUDNN_STATUS_SUCCESS ||
            a.create_conv_desc(&dd.conv) != CUDNN_STATUS_SUCCESS)
          return false;
        if (a.set_tensor_nd(dd.x, type, nd, xdims, xstr) != CUDNN_STATUS_SUCCESS ||
            a.set_tensor_nd(dd.y, type, nd, ydims, ystr) != CUDNN_STATUS_SUCCESS ||
            a.set_filter_nd(dd.w, type, CUDNN_TENSOR_NCHW, nd, wdims) != CUDNN_STATUS_SUCCESS ||
            a.set_conv_nd(dd.conv, nd - 2, pad, stride, dilation, CUDNN_CROSS_CORRELATION, type) !=
                CUDNN_STATUS_SUCCESS ||
            a.set_group_count(dd.conv, static_cast<int>(g.groups)) != CUDNN_STATUS_SUCCESS)
          return false;
        // float32 without TF32 tensor cores unless allowed (FMA math forbids them).
        const cudnnMathType_t math =
            type == CUDNN_DATA_FLOAT && !tf32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
        if (a.set_conv_math_type(dd.conv, math) != CUDNN_STATUS_SUCCESS) return false;
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int returned = 0;
        if (a.get_forward_algorithm(h, dd.x, dd.w, dd.conv, dd.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                    &returned, perf) != CUDNN_STATUS_SUCCESS)
          return false;
        const float one_f = 1.0f, zero_f = 0.0f;
        const double one_d = 1.0, zero_d = 0.0;
        const void* alpha = sizeof(T) == 8 ? static_cast<const void*>(&one_d) : &one_f;
        const void* beta = sizeof(T) == 8 ? static_cast<const void*>(&zero_d) : &zero_f;
        for (int r = 0; r < returned; ++r) {
          if (perf[r].status != CUDNN_STATUS_SUCCESS) continue;
          if (math == CUDNN_FMA_MATH && perf[r].mathType != CUDNN_FMA_MATH &&
              perf[r].mathType != CUDNN_DEFAULT_MATH)
            continue;
          size_t bytes = 0;
          if (a.get_forward_workspace(h, dd.x, dd.w, dd.conv, dd.y, perf[r].algo, &bytes) !=
              CUDNN_STATUS_SUCCESS)
            continue;
          void* workspace = nullptr;
          try {
            workspace = scratch(call, bytes);
          } catch (...) {  // NOLINT(bugprone-empty-catch): too big; try a leaner algorithm
            continue;
          }
          if (a.forward(h, alpha, dd.x, x, dd.w, w, dd.conv, perf[r].algo, workspace, bytes, beta,
                        dd.y, y) != CUDNN_STATUS_SUCCESS)
            continue;
          if (bias != nullptr)
            parallel_for(exec, g.n * g.o * g.out[0] * g.out[1] * g.out[2], BiasAddOp<T>{y, bias, g},
                         "convolution (bias)");
          return true;
        }
        return false;
      });
}
#endif  // TSR_HAVE_CUDNN

tsr_status* convolution_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const sdk::convolution_args a = sdk::read_convolution(*call);
    const tsr_tensor_desc& input = *a.input;
    const tsr_tensor_desc& weight = *a.weight;
    const tsr_tensor_desc* bias = a.bias;
    const tsr_tensor_desc& out = *a.output;
    const int k = a.spatial;
    require(*call, input.dtype == TSR_FLOAT32 || input.dtype == TSR_FLOAT64,
            "input, weight, bias and out must have one dtype, float32 or float64");
    ConvGeom g;
    g.groups = a.groups;
    g.transposed = a.transposed;
    g.n = a.n;
    g.c = a.c;
    g.o = a.o;
    g.cg = g.c / g.groups;
    g.og = g.o / g.groups;
    const int off = 3 - k;
    for (int i = 0; i < 2; ++i) {
      g.xs[i] = input.strides[i];
      g.ws[i] = weight.strides[i];
      g.ys[i] = out.strides[i];
    }
    for (int i = 0; i < k; ++i) {
      const int d = off + i;
      g.in[d] = a.in[i];
      g.kernel[d] = a.kernel[i];
      g.out[d] = a.out[i];
      g.stride[d] = a.stride[i];
      g.padding[d] = a.padding[i];
      g.dilation[d] = a.dilation[i];
      g.xs[2 + d] = input.strides[2 + i];
      g.ws[2 + d] = weight.strides[2 + i];
      g.ys[2 + d] = out.strides[2 + i];
    }
    int64_t numel = g.n * g.c * g.o;
    for (int i = 0; i < k; ++i) numel *= g.in[off + i] * g.out[off + i];
    require(*call, numel != 0, "empty operands reach the kernel; the host handles them");
    if (bias != nullptr) g.bs = bias->strides[0];
    const int64_t items = g.n * g.o * g.out[0] * g.out[1] * g.out[2];
    TSR_GPU_DISPATCH(input.dtype, call->op_name, T, {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        const T* x = reinterpret_cast<const T*>(data_of(input));
        const T* w = reinterpret_cast<const T*>(data_of(weight));
        const T* b = bias != nullptr ? reinterpret_cast<const T*>(data_of(*bias)) : nullptr;
        T* y = reinterpret_cast<T*>(data_of(out));
#if TSR_HAVE_CUDNN
        if (conv_cudnn<T>(*context, exec, *call, weight, k, g, x, w, b, y)) return;
#endif
#if TSR_DEVICE_COMPILER
        if (conv_tiled<T>(exec, g, x, w, b, y)) return;
#endif
        parallel_for(exec, items, ConvOp<T>{x, w, b, y, g}, "convolution");
      }
    });
  });
}

}  // namespace

void add_convolution_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kConvolution, {kConvDtypes, kConvDtypes, kConvDtypes},
                           convolution_kernel));
}

}  // namespace tessera::gpu
