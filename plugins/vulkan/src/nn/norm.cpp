// kernels_nn.cpp - fused _softmax, _log_softmax, native_layer_norm and
// convolution for the Vulkan plugin.
//
// Without these the core runs decompositions (softmax: amax, sub, exp, sum,
// div - five kernels and four temporaries; convolution: im2col + bmm), which
// are correct but slow. The fused kernels read their inputs once or twice:
//  - _softmax / _log_softmax (shaders/nn.comp): float16, bfloat16, float32
//    and float64, any dim, any strides, half_to_float; one workgroup per row
//    (or one invocation per row for many short rows), online max/sum, NaN
//    rows as PyTorch;
//  - native_layer_norm (shaders/nn.comp): float32 and float64, contiguous
//    input (the core passes it so), optional weight and bias; mean and rstd
//    as PyTorch (biased variance, rstd = 1 / sqrt(var + eps));
//  - convolution (shaders/nn_conv.comp): float32 and float64, 1 to 3
//    spatial dims, stride, padding, dilation, groups, optional bias, plain
//    and transposed, any strides; a direct convolution, one invocation per
//    output element.
// The core has no fallback once it has picked a kernel (an UNIMPLEMENTED
// from here would be the op's error), so every entry covers everything its
// dtype masks admit; the argument checks below mirror the CPU plugin's.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernel_util.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kNnSpirv[] = {
#include "nn.spv.inc"
};
const Shader kNn{"nn", kNnSpirv, sizeof kNnSpirv};

const uint32_t kConvSpirv[] = {
#include "nn_conv.spv.inc"
};
const Shader kConv{"nn_conv", kConvSpirv, sizeof kConvSpirv, 0, true};
const uint32_t kConvPackSpirv[] = {
#include "conv_pack.spv.inc"
};
const Shader kConvPack{"conv_pack", kConvPackSpirv, sizeof kConvPackSpirv, 0, true};

constexpr uint64_t kF32F64 = TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);

enum RowMode : int32_t { kSoftmax = 0, kLogSoftmax = 1, kLayerNorm = 2 };
enum RowFlags : int32_t { kHasWeight = 1, kHasBias = 2 };

// nn.comp's parameter block (std430, 600 bytes). Invariants: 1 <= ndim <= 8;
// sizes[0..ndim) is the row space (its product is `rows`); t[] are out,
// input, weight, bias, mean, rstd, the unused ones zero.
struct RowParams {
  int64_t rows = 0;
  int64_t n = 0;
  int64_t in_step = 0;
  int64_t out_step = 0;
  int32_t mode = 0;
  int32_t ndim = 0;
  int32_t wide = 0;
  int32_t flags = 0;
  double eps = 0;
  int64_t sizes[8] = {};
  OperandParams t[6];
};
static_assert(offsetof(RowParams, mode) == 32);
static_assert(offsetof(RowParams, eps) == 48);
static_assert(offsetof(RowParams, sizes) == 56);
static_assert(offsetof(RowParams, t) == 120);
static_assert(sizeof(RowParams) == 600);

// nn_conv.comp's parameter block (std430, 520 bytes). Invariants: spatial
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

// Wide (a workgroup per row: lanes stride over the row and merge through
// subgroup operations and shared memory) or narrow (an invocation per row,
// looping over it). A GPU takes rows of kWideLength or more wide: a
// workgroup per short row would leave most of its 256 lanes idle. A CPU
// device (lavapipe) runs a workgroup's invocations as SIMD lanes of one
// thread and switches all 256 of them at each barrier, which costs more than
// the row itself: it goes wide only for long rows too few to spread over its
// threads (measured on a 1024 x 1024 softmax: narrow 6x faster).
constexpr int64_t kWideLength = 128;
constexpr int64_t kCpuWideLength = 4096;
constexpr int64_t kCpuWideRows = 64;

bool wide_rows(const Device& d, int64_t rows, int64_t n) {
  if (d.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
    return n >= kCpuWideLength && rows < kCpuWideRows;
  return n >= kWideLength;
}

const char* dtype_label(int32_t dtype) {
  switch (dtype) {
    case TSR_FLOAT16:
      return "float16";
    case TSR_BFLOAT16:
      return "bfloat16";
    case TSR_FLOAT32:
      return "float32";
    case TSR_FLOAT64:
      return "float64";
    default:
      return "a non-floating dtype";
  }
}

tsr_tensor_desc& out_at(const tsr_kernel_call& call, int i) {
  if (call.nouts <= i || call.outs == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: expected %d outputs, got %d",
                      call.op_name, i + 1, static_cast<int>(call.nouts));
  return call.outs[i];
}

// Tensor argument i, or NULL when it is None.
const tsr_tensor_desc* optional_tensor(const tsr_kernel_call& call, int i) {
  if (i < call.nargs && call.args[i].tag == TSR_VALUE_NONE) return nullptr;
  return &tensor_arg(call, i);
}

double float_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_FLOAT, "a float").u.f;
}

// An int list argument of exactly `n` entries (the core resolves single values).
const int64_t* int_list(const tsr_kernel_call& call, int i, int n, const char* name) {
  const tsr_value& v = arg_at(call, i, TSR_VALUE_INT_LIST, "an int list");
  if (v.len != n)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument '%s' has %d entries; expected %d (one per spatial dim)",
                      call.op_name, name, static_cast<int>(v.len), n);
  return v.u.ints;
}

bool same_sizes(const tsr_tensor_desc& a, const tsr_tensor_desc& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.sizes[d] != b.sizes[d]) return false;
  return true;
}

// Row-major contiguous (strides of size-1 dims are free).
bool contiguous(const tsr_tensor_desc& d) {
  int64_t expected = 1;
  for (int k = d.ndim - 1; k >= 0; --k) {
    if (d.sizes[k] != 1 && d.strides[k] != expected) return false;
    expected *= d.sizes[k];
  }
  return true;
}

void require_contiguous(const tsr_kernel_call& call, const tsr_tensor_desc& d, const char* name) {
  if (!contiguous(d))
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: '%s' must be contiguous (the core passes it so); "
                      "make it contiguous first",
                      call.op_name, name);
}

void check_ndim(const tsr_kernel_call& call, const tsr_tensor_desc& d, const char* name) {
  if (d.ndim > 8)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: '%s' has %d dims; at most 8",
                      call.op_name, name, static_cast<int>(d.ndim));
}

// Dispatches nn.comp over p.rows rows, picking the mode.
void dispatch_rows(tsr_plugin_context* context, const tsr_kernel_call& call, RowParams& p) {
  Kernels& kernels = kernels_of(context, call);
  p.wide = wide_rows(device_at(*context, call.device, call.op_name), p.rows, p.n);
  const uint64_t rows = static_cast<uint64_t>(p.rows);
  // Note [Specializing by use] (kernels.hpp): mode, wide, and the dtype
  // when every operand present (address != 0) is float32; the work is the
  // elements of the input. nn.comp always runs workgroups of 256.
  bool float32 = true;
  for (const OperandParams& t : p.t)
    float32 = float32 && (t.address == 0 || t.dtype == TSR_FLOAT32);
  const Kernels::Spec spec = kernels.by_use(
      kNn, Kernels::kWorkgroup, Kernels::Spec{p.mode, float32 ? TSR_FLOAT32 : -1, p.wide},
      Kernels::Spec{-1, -1, -1}, rows * static_cast<uint64_t>(p.n));
  kernels.dispatch(call.stream, kNn, &p, sizeof p, p.wide ? rows * Kernels::kWorkgroup : rows,
                   nullptr, 0, spec);
}

// ---- _softmax / _log_softmax ---------------------------------------------------

tsr_status* softmax_common(tsr_plugin_context* context, const tsr_kernel_call* call,
                           RowMode mode) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& self = tensor_arg(*call, 0);
    const int64_t dim_arg = int_arg(*call, 1);
    const bool half_to_float = bool_arg(*call, 2);
    const tsr_tensor_desc& out = out_at(*call, 0);
    if (((kFloatingDtypes >> self.dtype) & 1) == 0)
      sdk::throw_status(TSR_UNIMPLEMENTED,
                        "vulkan plugin %s: 'self' has dtype %d; softmax needs float16, "
                        "bfloat16, float32 or float64",
                        call->op_name, static_cast<int>(self.dtype));
    const bool reduced = self.dtype == TSR_FLOAT16 || self.dtype == TSR_BFLOAT16;
    if (half_to_float && !reduced)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: half_to_float needs a float16 or bfloat16 input, got %s; pass "
                        "half_to_float=False",
                        call->op_name, dtype_label(self.dtype));
    const int32_t want = half_to_float ? TSR_FLOAT32 : self.dtype;
    if (out.dtype != want)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: out has dtype %s; expected %s",
                        call->op_name, dtype_label(out.dtype), dtype_label(want));
    if (!same_sizes(self, out))
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "vulkan plugin %s: out's shape differs from self's; allocate it like self",
                        call->op_name);
    check_ndim(*call, self, "self");
    const int64_t rank = self.ndim > 0 ? self.ndim : 1;
    if (dim_arg < -rank || dim_arg >= rank)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: dim %lld is out of range for a tensor of %d dims; use -%lld to %lld",
                        call->op_name, static_cast<long long>(dim_arg), static_cast<int>(self.ndim),
                        static_cast<long long>(rank), static_cast<long long>(rank - 1));
    const int dim = static_cast<int>(dim_arg < 0 ? dim_arg + rank : dim_arg);
    const int64_t numel = numel_of(self);
    if (numel == 0) return;

    RowParams p;
    p.mode = mode;
    p.ndim = static_cast<int32_t>(rank);
    p.sizes[0] = 1;
    for (int d = 0; d < self.ndim; ++d) p.sizes[d] = self.sizes[d];
    p.n = p.sizes[dim];
    p.sizes[dim] = 1;
    p.rows = numel / p.n;
    p.t[0] = operand(out, self.ndim);
    p.t[1] = operand(self, self.ndim);
    if (self.ndim > 0) {
      p.in_step = self.strides[dim];
      p.out_step = out.strides[dim];
    }
    dispatch_rows(context, *call, p);
  });
}

tsr_status* softmax_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return softmax_common(context, call, kSoftmax);
}

tsr_status* log_softmax_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return softmax_common(context, call, kLogSoftmax);
}

// ---- native_layer_norm -----------------------------------------------------------

tsr_status* layer_norm_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& input = tensor_arg(*call, 0);
    const tsr_value& ns = arg_at(*call, 1, TSR_VALUE_INT_LIST, "an int list (normalized_shape)");
    const tsr_tensor_desc* weight = optional_tensor(*call, 2);
    const tsr_tensor_desc* bias = optional_tensor(*call, 3);
    const double eps = float_arg(*call, 4);
    tsr_tensor_desc& out = out_at(*call, 0);
    tsr_tensor_desc& mean = out_at(*call, 1);
    tsr_tensor_desc& rstd = out_at(*call, 2);
    if (((kF32F64 >> input.dtype) & 1) == 0)
      sdk::throw_status(TSR_UNIMPLEMENTED,
                        "vulkan plugin %s: 'input' has dtype %s; this kernel takes float32 and "
                        "float64",
                        call->op_name, dtype_label(input.dtype));
    check_ndim(*call, input, "input");
    const int axis = input.ndim - ns.len;
    if (ns.len < 1 || axis < 0)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: normalized_shape has %d dims; expected 1 to %d (the input's dims)",
                        call->op_name, static_cast<int>(ns.len), static_cast<int>(input.ndim));
    int64_t n = 1, rows = 1;
    for (int i = 0; i < ns.len; ++i) {
      if (input.sizes[axis + i] != ns.u.ints[i])
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: normalized_shape[%d] = %lld but input has size %lld in dim %d",
                          call->op_name, i, static_cast<long long>(ns.u.ints[i]),
                          static_cast<long long>(input.sizes[axis + i]), axis + i);
      n *= ns.u.ints[i];
    }
    for (int d = 0; d < axis; ++d) rows *= input.sizes[d];
    require_contiguous(*call, input, "input");
    require_contiguous(*call, out, "out");
    if (!same_sizes(input, out) || out.dtype != input.dtype)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "vulkan plugin %s: out must have input's shape and dtype", call->op_name);
    for (tsr_tensor_desc* stat : {&mean, &rstd}) {
      const char* name = stat == &mean ? "mean" : "rstd";
      require_contiguous(*call, *stat, name);
      if (stat->dtype != input.dtype || numel_of(*stat) != rows)
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "vulkan plugin %s: output '%s' must have input's dtype and one "
                          "element per row (%lld), got %lld",
                          call->op_name, name, static_cast<long long>(rows),
                          static_cast<long long>(numel_of(*stat)));
    }
    for (const tsr_tensor_desc* t : {weight, bias}) {
      if (t == nullptr) continue;
      const char* name = t == weight ? "weight" : "bias";
      require_contiguous(*call, *t, name);
      if (((kF32F64 >> t->dtype) & 1) == 0 || numel_of(*t) != n)
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: argument '%s' must be float32 or float64 with %lld elements (the "
                          "normalized shape), got dtype %d and %lld elements",
                          call->op_name, name, static_cast<long long>(n),
                          static_cast<int>(t->dtype), static_cast<long long>(numel_of(*t)));
    }
    if (rows == 0) return;

    RowParams p;
    p.mode = kLayerNorm;
    p.rows = rows;
    p.n = n;
    p.in_step = 1;
    p.out_step = 1;
    p.eps = eps;
    p.ndim = 1;
    p.sizes[0] = rows;
    p.t[0] = operand(out, 0);
    p.t[0].strides[0] = n;
    p.t[1] = operand(input, 0);
    p.t[1].strides[0] = n;
    if (weight) {
      p.flags |= kHasWeight;
      p.t[2] = operand(*weight, 0);
    }
    if (bias) {
      p.flags |= kHasBias;
      p.t[3] = operand(*bias, 0);
    }
    p.t[4] = operand(mean, 0);
    p.t[4].strides[0] = 1;
    p.t[5] = operand(rstd, 0);
    p.t[5].strides[0] = 1;
    dispatch_rows(context, *call, p);
  });
}

// ---- convolution -------------------------------------------------------------------

void require(const tsr_kernel_call& call, bool ok, const char* what) {
  if (!ok) sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: %s", call.op_name, what);
}

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
// in as column K. On lavapipe the direct kernel (nn_conv.comp) runs at
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

tsr_status* convolution_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& input = tensor_arg(*call, 0);
    const tsr_tensor_desc& weight = tensor_arg(*call, 1);
    const tsr_tensor_desc* bias = optional_tensor(*call, 2);
    const tsr_tensor_desc& out = out_at(*call, 0);
    const int k = input.ndim - 2;
    require(*call, k >= 1 && k <= 3 && weight.ndim == input.ndim && out.ndim == input.ndim,
            "input, weight and out must have 3 to 5 dims, the same count");
    if (((kF32F64 >> input.dtype) & 1) == 0)
      sdk::throw_status(TSR_UNIMPLEMENTED,
                        "vulkan plugin %s: 'input' has dtype %s; this kernel takes float32 and "
                        "float64",
                        call->op_name, dtype_label(input.dtype));
    require(*call,
            weight.dtype == input.dtype && out.dtype == input.dtype &&
                (bias == nullptr || bias->dtype == input.dtype),
            "input, weight, bias and out must have one dtype");
    const int64_t* stride = int_list(*call, 3, k, "stride");
    const int64_t* padding = int_list(*call, 4, k, "padding");
    const int64_t* dilation = int_list(*call, 5, k, "dilation");
    const bool transposed = bool_arg(*call, 6);
    const int64_t* output_padding = int_list(*call, 7, k, "output_padding");
    const int64_t groups = int_arg(*call, 8);

    ConvParams p;
    p.batch = input.sizes[0];
    p.c = input.sizes[1];
    p.o = out.sizes[1];
    p.groups = groups;
    p.transposed = transposed;
    require(*call, groups > 0 && p.c % groups == 0 && p.o % groups == 0,
            "groups must be positive and divide the input and output channels");
    require(*call, out.sizes[0] == p.batch, "out's batch size must equal input's");
    const int64_t cg = p.c / groups, og = p.o / groups;
    const bool w_ok = transposed ? (weight.sizes[0] == p.c && weight.sizes[1] == og)
                                 : (weight.sizes[0] == p.o && weight.sizes[1] == cg);
    require(*call, w_ok, "weight's channel dims do not match input, out and groups");
    if (bias) require(*call, bias->ndim == 1 && bias->sizes[0] == p.o, "bias must be 1-d of O");
    const int off = 3 - k;
    for (int i = 0; i < k; ++i) {
      const int64_t in = input.sizes[2 + i], ks = weight.sizes[2 + i], os = out.sizes[2 + i];
      require(
          *call,
          stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0 && output_padding[i] >= 0 && ks > 0,
          "stride and dilation must be > 0, padding and output_padding >= 0");
      const int64_t ext = dilation[i] * (ks - 1) + 1;
      const int64_t expected = transposed
                                   ? (in - 1) * stride[i] - 2 * padding[i] + ext + output_padding[i]
                                   : (in + 2 * padding[i] - ext) / stride[i] + 1;
      require(*call, os == expected && (transposed || in + 2 * padding[i] >= ext),
              "out's spatial sizes do not match the convolution's");
      p.in_size[off + i] = in;
      p.kernel[off + i] = ks;
      p.out_size[off + i] = os;
      p.stride[off + i] = stride[i];
      p.padding[off + i] = padding[i];
      p.dilation[off + i] = dilation[i];
    }
    if (numel_of(out) == 0) return;
    if (numel_of(input) == 0 || numel_of(weight) == 0)
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
  });
}

}  // namespace

void add_nn_kernels(KernelList& out) {
  out.push_back(make_entry("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                           {kFloatingDtypes}, softmax_kernel));
  out.push_back(make_entry("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                           {kFloatingDtypes}, log_softmax_kernel));
  out.push_back(make_entry(
      "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
      "float eps) -> (Tensor, Tensor, Tensor)",
      {kF32F64, kF32F64, kF32F64}, layer_norm_kernel));
  out.push_back(make_entry(
      "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
      "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
      {kF32F64, kF32F64, kF32F64}, convolution_kernel));
}

}  // namespace tessera::vulkan
