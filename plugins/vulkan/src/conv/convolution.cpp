// convolution.cpp - the fused convolution for the Vulkan plugin
// (shaders/conv/convolution.comp): float32 and float64, 1 to 3 spatial dims,
// stride, padding, dilation, groups, optional bias, plain and transposed, any
// strides; a direct convolution, one invocation per output element, or
// im2col plus the texel matmul (Note [Convolution through matmul]). Without
// it the core runs im2col + bmm, correct but slow.
// The core has no fallback once it has picked a kernel (an UNIMPLEMENTED
// from here would be the op's error), so the entry covers everything its
// dtype masks admit; the argument checks below mirror the CPU plugin's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "kernel_util.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kConvSpirv[] = {
#include "convolution.spv.inc"
};
const Shader kConv{"convolution", kConvSpirv, sizeof kConvSpirv, 0, true};
const uint32_t kConvPackSpirv[] = {
#include "conv_pack.spv.inc"
};
const Shader kConvPack{"conv_pack", kConvPackSpirv, sizeof kConvPackSpirv, 0, true};

constexpr uint64_t kF32F64 = TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);

// convolution.comp's parameter block (std430, 520 bytes). Invariants: spatial
// arrays hold 3 dims, outer first, missing leading dims 1 (padding 0);
// operand strides cover 5 dims in that canonical order.
struct ConvParams {
  int64_t items = 0;  // work items: N * groups * ceil((O / groups) / conv_block) * out spatial
  int64_t batch = 0;
  int64_t c = 0;
  int64_t o = 0;
  int64_t groups = 1;
  int64_t bias_stride = 0;
  int64_t in_size[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t out_size[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t padding[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};
  int32_t transposed = 0;
  int32_t has_bias = 0;
  OperandParams t[4];
};
static_assert(offsetof(ConvParams, in_size) == 48);
static_assert(offsetof(ConvParams, transposed) == 192);
static_assert(offsetof(ConvParams, t) == 200);
static_assert(sizeof(ConvParams) == 520);

// `d`'s strides over the canonical 5 dims: (dim 0, dim 1, spatial padded in front to 3).
OperandParams conv_operand(const tsr_tensor_desc& d, int spatial) {
  OperandParams o = operand(d, 2);
  for (int i = 0; i < spatial; ++i) o.strides[2 + (3 - spatial) + i] = d.strides[2 + i];
  return o;
}

// Note [Convolution through matmul]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A float32 convolution (not transposed, one group) runs as im2col and a
// matmul through the texel fast path: conv_pack.comp writes the im2col
// matrix (N * S rows, one per image and output position, of K4 columns:
// C * taps input values, then a 1 where there is a bias, then zeros to a
// multiple of 4) and the weight matrix (O rows: the weights, the bias, the
// same zeros) into scratch memory, and linalg_texel.comp computes, per
// image, out[n] (O x S) = weights (O x K4) @ im2col[n]^T, the bias riding
// in as column K. On lavapipe the direct kernel (convolution.comp) runs at
// ~0.24 GFLOP/s for a 4x16x32x32 input and 32 3x3 filters, where the
// matmul does 12-19 (bench_vulkan's conv row gives the figure of this
// path). It needs S (the output positions per image) to be a multiple of
// 4, the output's positions contiguous (rows of the matmul's output) and
// 16-byte aligned, sizes that fit the shaders' 32-bit indices, and scratch
// of at most kConvMatmulScratch; otherwise, and below kConvMatmulMin
// multiply-adds, the direct kernel runs. Both accumulate in float; the
// order differs (the bias comes last here), within float32 tolerance.
constexpr int64_t kConvMatmulMin = int64_t{1} << 14;
constexpr int64_t kConvMatmulScratch = int64_t{256} << 20;

// conv_pack.comp's parameter block (std430, 256 bytes).
struct PackParams {
  int64_t texels = 0;
  int32_t k4 = 0;
  int32_t k = 0;
  int32_t has_bias = 0;
  int32_t pad_ = 0;
  RowDivision per_row, per_image, per_plane, per_line, per_channel, per_kplane, per_kline;
  int32_t s = 0, out_plane = 0, out_w = 0, taps = 0, kplane = 0, kw = 0;
  int32_t in_size[3] = {}, stride[3] = {}, padding[3] = {}, dilation[3] = {};
  uint64_t dst = 0;
  uint64_t bias = 0;
  int64_t bias_stride = 0;
  OperandParams src;
};
static_assert(offsetof(PackParams, per_row) == 24 && offsetof(PackParams, s) == 80 &&
              offsetof(PackParams, in_size) == 104 && offsetof(PackParams, dst) == 152 &&
              offsetof(PackParams, src) == 176 && sizeof(PackParams) == 256);

bool fits_int32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

// A float32 matrix descriptor over `a` (batch, rows, columns).
tsr_tensor_desc matrix_over(const Allocation& a, tsr_device device, int64_t batch, int64_t rows,
                            int64_t cols, int64_t batch_stride, int64_t row_stride,
                            int64_t col_stride) {
  tsr_tensor_desc d{};
  d.dtype = TSR_FLOAT32;
  d.ndim = 3;
  d.sizes[0] = batch;
  d.sizes[1] = rows;
  d.sizes[2] = cols;
  d.strides[0] = batch_stride;
  d.strides[1] = row_stride;
  d.strides[2] = col_stride;
  d.buffer = const_cast<Allocation*>(&a);
  d.byte_offset = 0;
  d.device = device;
  return d;
}

// See Note [Convolution through matmul]: true when recorded, false (nothing
// recorded) when the convolution does not qualify.
bool run_conv_matmul(tsr_plugin_context* context, const tsr_kernel_call& call, const ConvParams& p,
                     const tsr_tensor_desc& out, const tsr_tensor_desc* bias) {
  if (out.dtype != TSR_FLOAT32 || p.transposed || p.groups != 1) return false;
  int64_t s = 1, taps = 1;
  for (int i = 0; i < 3; ++i) {
    s *= p.out_size[i];
    taps *= p.kernel[i];
  }
  const int64_t k = p.c * taps;
  const int64_t k4 = (k + (bias ? 1 : 0) + 3) / 4 * 4;
  if (s % 4 != 0 || p.batch * s * p.o * k < kConvMatmulMin) return false;
  // The output's positions are contiguous: out[n][o] is one row of S floats.
  int64_t expected = 1;
  for (int i = 2; i >= 0; --i) {
    if (p.out_size[i] != 1 && p.t[0].strides[2 + i] != expected) return false;
    expected *= p.out_size[i];
  }
  const int64_t rows = p.batch * s;
  const int64_t cols_bytes = rows * k4 * 4, weights_bytes = p.o * k4 * 4;
  if (cols_bytes > kConvMatmulScratch || !fits_int32(rows * k4) || !fits_int32(p.o * k4) ||
      !fits_int32(k4 + 1))
    return false;
  for (int i = 0; i < 3; ++i)
    if (!fits_int32(p.in_size[i]) || !fits_int32(p.out_size[i] * p.stride[i] + p.padding[i]) ||
        !fits_int32(p.kernel[i] * p.dilation[i] + p.padding[i]))
      return false;
  // The output as the matmul writes it; run_texel checks the rest
  // (alignment, strides in whole texels, the views' reach) before packing.
  tsr_tensor_desc o{};
  o.dtype = TSR_FLOAT32;
  o.ndim = 3;
  o.sizes[0] = p.batch;
  o.sizes[1] = p.o;
  o.sizes[2] = s;
  o.strides[0] = p.t[0].strides[0];
  o.strides[1] = p.t[0].strides[1];
  o.strides[2] = 1;
  o.buffer = out.buffer;
  o.byte_offset = out.byte_offset;
  o.device = out.device;
  if (o.strides[0] % 4 != 0 || o.strides[1] % 4 != 0 || o.strides[0] < 0 || o.strides[1] < 0 ||
      texel_of(o, static_cast<uint64_t>(
                      ((p.batch - 1) * o.strides[0] + (p.o - 1) * o.strides[1] + s) * 4)) < 0)
    return false;

  Allocation& cols = scratch(call, static_cast<size_t>(cols_bytes), "the im2col matrix");
  Allocation& weights = scratch(call, static_cast<size_t>(weights_bytes), "the weight matrix");
  Kernels& kernels = kernels_of(context, call);
  PackParams q;
  q.k4 = static_cast<int32_t>(k4 / 4);
  q.k = static_cast<int32_t>(k);
  q.has_bias = bias ? 1 : 0;
  q.per_row = RowDivision::by(static_cast<uint32_t>(k4 / 4));
  q.per_image = RowDivision::by(static_cast<uint32_t>(s));
  q.per_plane = RowDivision::by(static_cast<uint32_t>(p.out_size[1] * p.out_size[2]));
  q.per_line = RowDivision::by(static_cast<uint32_t>(p.out_size[2]));
  q.per_channel = RowDivision::by(static_cast<uint32_t>(taps));
  q.per_kplane = RowDivision::by(static_cast<uint32_t>(p.kernel[1] * p.kernel[2]));
  q.per_kline = RowDivision::by(static_cast<uint32_t>(p.kernel[2]));
  q.s = static_cast<int32_t>(s);
  q.out_plane = static_cast<int32_t>(p.out_size[1] * p.out_size[2]);
  q.out_w = static_cast<int32_t>(p.out_size[2]);
  q.taps = static_cast<int32_t>(taps);
  q.kplane = static_cast<int32_t>(p.kernel[1] * p.kernel[2]);
  q.kw = static_cast<int32_t>(p.kernel[2]);
  for (int i = 0; i < 3; ++i) {
    q.in_size[i] = static_cast<int32_t>(p.in_size[i]);
    q.stride[i] = static_cast<int32_t>(p.stride[i]);
    q.padding[i] = static_cast<int32_t>(p.padding[i]);
    q.dilation[i] = static_cast<int32_t>(p.dilation[i]);
  }
  // the im2col matrix
  q.texels = rows * k4 / 4;
  q.dst = cols.address();
  q.src = p.t[1];
  kernels.dispatch(call.stream, kConvPack, &q, sizeof q, static_cast<uint64_t>(q.texels), nullptr,
                   0, Kernels::Spec{0, 0, 0});
  // the weights, the bias in column K
  q.texels = p.o * k4 / 4;
  q.dst = weights.address();
  q.src = p.t[2];
  if (bias) {
    q.bias = p.t[3].address;
    q.bias_stride = p.bias_stride;
  }
  kernels.dispatch(call.stream, kConvPack, &q, sizeof q, static_cast<uint64_t>(q.texels), nullptr,
                   0, Kernels::Spec{1, 0, 0});
  const tsr_tensor_desc a = matrix_over(weights, out.device, p.batch, p.o, k4, 0, k4, 1);
  const tsr_tensor_desc b = matrix_over(cols, out.device, p.batch, k4, s, s * k4, 1, k4);
  if (!texel_bmm(context, call, a, b, o))
    sdk::throw_status(TSR_INTERNAL,
                      "vulkan plugin %s: the convolution's matmul did not take the texel path",
                      call.op_name);
  return true;
}

void convolution_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const sdk::convolution_args a = sdk::read_convolution<sdk::memory::buffer>(*call);
  const tsr_tensor_desc& input = *a.input;
  const tsr_tensor_desc& weight = *a.weight;
  const tsr_tensor_desc* bias = a.bias;
  const tsr_tensor_desc& out = *a.output;
  const int k = a.spatial;
  if (((kF32F64 >> input.dtype) & 1) == 0)
    sdk::throw_status(TSR_UNIMPLEMENTED,
                      "vulkan plugin %s: 'input' has dtype %s; this kernel takes float32 and "
                      "float64",
                      call->op_name, dtype_label(input.dtype));
  const int64_t groups = a.groups;
  const int64_t og = a.o / groups;

  ConvParams p;
  p.batch = a.n;
  p.c = a.c;
  p.o = a.o;
  p.groups = groups;
  p.transposed = a.transposed;
  const int off = 3 - k;
  for (int i = 0; i < k; ++i) {
    p.in_size[off + i] = a.in[i];
    p.kernel[off + i] = a.kernel[i];
    p.out_size[off + i] = a.out[i];
    p.stride[off + i] = a.stride[i];
    p.padding[off + i] = a.padding[i];
    p.dilation[off + i] = a.dilation[i];
  }
  if (sdk::numel(out) == 0) return;
  if (sdk::numel(input) == 0 || sdk::numel(weight) == 0)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: empty input or weight with a non-empty out; the core "
                      "handles empty operands",
                      call->op_name);
  p.t[0] = conv_operand(out, k);
  p.t[1] = conv_operand(input, k);
  p.t[2] = conv_operand(weight, k);
  if (bias) {
    p.has_bias = 1;
    p.t[3] = operand(*bias, 1);
    p.bias_stride = bias->strides[0];
  }
  if (run_conv_matmul(context, *call, p, out, bias)) return;
  // Note [Output-channel blocks] (device.hpp): OB channels per work item
  const int64_t ob = device_at(*context, call->device, call->op_name).conv_block;
  p.items = p.batch * groups * ((og + ob - 1) / ob);
  for (int i = 0; i < 3; ++i) p.items *= p.out_size[i];
  kernels_of(context, *call)
      .dispatch(call->stream, kConv, &p, sizeof p, static_cast<uint64_t>(p.items), nullptr, 0,
                Kernels::Spec{static_cast<int32_t>(ob), 0, 0});
}

}  // namespace

void add_convolution_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kConvolution, {kF32F64, kF32F64, kF32F64},
                           sdk::trampoline<convolution_kernel>));
}

}  // namespace tessera::vulkan
