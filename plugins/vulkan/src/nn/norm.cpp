// norm.cpp - fused _softmax, _log_softmax and native_layer_norm for the
// Vulkan plugin: one row engine (shaders/nn/nn.comp) serves the three, so
// softmax lives here with layer norm rather than under reduction/.
//
// Without these the core runs decompositions (softmax: amax, sub, exp, sum,
// div - five kernels and four temporaries), which are correct but slow. The
// fused kernels read their inputs once or twice:
//  - _softmax / _log_softmax: float16, bfloat16, float32 and float64, any
//    dim, any strides, half_to_float; one workgroup per row (or one
//    invocation per row for many short rows), online max/sum, NaN rows as
//    PyTorch;
//  - native_layer_norm: float32 and float64, contiguous input (the core
//    passes it so), optional weight and bias; mean and rstd as PyTorch
//    (biased variance, rstd = 1 / sqrt(var + eps)).
// The core has no fallback once it has picked a kernel (an UNIMPLEMENTED
// from here would be the op's error), so every entry covers everything its
// dtype masks admit; the argument checks below mirror the CPU plugin's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "kernel_util.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kNnSpirv[] = {
#include "nn.spv.inc"
};
const Shader kNn{"nn", kNnSpirv, sizeof kNnSpirv};

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

void softmax_common(tsr_plugin_context* context, const tsr_kernel_call* call, RowMode mode) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const int64_t dim_arg = int_arg(*call, 1, "dim");
  const bool half_to_float = bool_arg(*call, 2, "half_to_float");
  const tsr_tensor_desc& out = out_arg(*call, 0);
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
  if (!sdk::same_sizes(self, out))
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: out's shape differs from self's; allocate it like self",
                      call->op_name);
  const int64_t rank = self.ndim > 0 ? self.ndim : 1;
  if (dim_arg < -rank || dim_arg >= rank)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: dim %lld is out of range for a tensor of %d dims; use -%lld to %lld",
                      call->op_name, static_cast<long long>(dim_arg), static_cast<int>(self.ndim),
                      static_cast<long long>(rank), static_cast<long long>(rank - 1));
  const int dim = static_cast<int>(dim_arg < 0 ? dim_arg + rank : dim_arg);
  const int64_t numel = sdk::numel(self);
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
}

void softmax_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  softmax_common(context, call, kSoftmax);
}

void log_softmax_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  softmax_common(context, call, kLogSoftmax);
}

// ---- native_layer_norm -----------------------------------------------------------

void layer_norm_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& input = tensor_arg(*call, 0, "input");
  const std::span<const int64_t> ns = int_list_arg(*call, 1, "normalized_shape");
  const tsr_tensor_desc* weight = optional_tensor_arg(*call, 2, "weight");
  const tsr_tensor_desc* bias = optional_tensor_arg(*call, 3, "bias");
  const double eps = float_arg(*call, 4, "eps");
  tsr_tensor_desc& out = out_arg(*call, 0);
  tsr_tensor_desc& mean = out_arg(*call, 1);
  tsr_tensor_desc& rstd = out_arg(*call, 2);
  if (((kF32F64 >> input.dtype) & 1) == 0)
    sdk::throw_status(TSR_UNIMPLEMENTED,
                      "vulkan plugin %s: 'input' has dtype %s; this kernel takes float32 and "
                      "float64",
                      call->op_name, dtype_label(input.dtype));
  const sdk::norm_rows r = sdk::check_normalized_shape(*call, input, ns);
  const int64_t n = r.n, rows = r.rows;
  sdk::check_contiguous(*call, input, "input");
  sdk::check_contiguous(*call, out, "out");
  if (!sdk::same_sizes(input, out) || out.dtype != input.dtype)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: out must have input's shape and dtype", call->op_name);
  for (tsr_tensor_desc* stat : {&mean, &rstd}) {
    const char* name = stat == &mean ? "mean" : "rstd";
    sdk::check_contiguous(*call, *stat, name);
    if (stat->dtype != input.dtype || sdk::numel(*stat) != rows)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "vulkan plugin %s: output '%s' must have input's dtype and one "
                        "element per row (%lld), got %lld",
                        call->op_name, name, static_cast<long long>(rows),
                        static_cast<long long>(sdk::numel(*stat)));
  }
  for (const tsr_tensor_desc* t : {weight, bias}) {
    if (t == nullptr) continue;
    const char* name = t == weight ? "weight" : "bias";
    sdk::check_contiguous(*call, *t, name);
    if (((kF32F64 >> t->dtype) & 1) == 0 || sdk::numel(*t) != n)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: argument '%s' must be float32 or float64 with %lld elements (the "
                        "normalized shape), got dtype %d and %lld elements",
                        call->op_name, name, static_cast<long long>(n), static_cast<int>(t->dtype),
                        static_cast<long long>(sdk::numel(*t)));
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
}

}  // namespace

void add_norm_kernels(KernelList& out) {
  out.push_back(
      make_entry(sdk::schema::kSoftmax, {kFloatingDtypes}, sdk::trampoline<softmax_kernel>));
  out.push_back(
      make_entry(sdk::schema::kLogSoftmax, {kFloatingDtypes}, sdk::trampoline<log_softmax_kernel>));
  out.push_back(make_entry(sdk::schema::kNativeLayerNorm, {kF32F64, kF32F64, kF32F64},
                           sdk::trampoline<layer_norm_kernel>));
}

}  // namespace tessera::vulkan
