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
  int64_t items = 0;  // work items: N * groups * ceil((O / groups) / kConvBlock) * out spatial
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

// Output channels per convolution work item (nn_conv.comp's OB).
constexpr int64_t kConvBlock = 4;

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
    p.items = p.batch * groups * ((og + kConvBlock - 1) / kConvBlock);
    for (int i = 0; i < 3; ++i) p.items *= p.out_size[i];
    kernels_of(context, *call)
        .dispatch(call->stream, kConv, &p, sizeof p, static_cast<uint64_t>(p.items));
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
