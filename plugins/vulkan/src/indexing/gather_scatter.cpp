// gather_scatter.cpp - _iota_, gather and _scatter_: shaders/indexing/index.comp over
// any strides. (nonzero, sort.stable and searchsorted.Tensor: indexing/sort.cpp.)
//
// Bounds checks happen on the device: gather and _scatter_ get a 16-byte
// flag block from the call's scratch memory, filled in stream order
// (vkCmdFillBuffer) before the dispatch; an invocation that meets an index
// outside [0, self.size(dim)) never uses it and records it (atomics: the
// lowest bad position, and one bad value). After the dispatch the host
// synchronises the stream and reads the flag (mapped memory, or a staging
// copy), then the index at that position, returning OUT_OF_RANGE "index 7 is
// out of bounds for dimension 0 with size 3" as the CPU plugin does. That is one synchronous
// check per call: correct, not asynchronous. On an error, gather's output
// holds the valid elements only and _scatter_ has applied a prefix of each
// line (lines stop at their first bad index, as on the CPU).
#include <cstring>

#include "kernel_util.hpp"
#include "stream.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kIndexSpirv[] = {
#include "index.spv.inc"
};
const Shader kIndex{"index", kIndexSpirv, sizeof kIndexSpirv, 0, true};

enum Mode : int32_t { kIota = 0, kGather = 1, kScatter = 2 };

// index.comp's parameter block (std430, 408 bytes).
struct Params {
  int64_t numel = 0;
  int32_t ndim = 0;
  int32_t mode = 0;
  int32_t op = 0;
  int32_t dim = 0;
  int64_t sizes[8] = {};
  int64_t limit = 0;
  int64_t mirror_from = 0;
  int64_t istart = 0, istep = 0, iend = 0;
  double fstart = 0, fstep = 0, fend = 0;
  int32_t integer_math = 0;
  int32_t pad_ = 0;
  uint64_t flag = 0;
  OperandParams t[3];
};
static_assert(offsetof(Params, sizes) == 24);
static_assert(offsetof(Params, limit) == 88);
static_assert(offsetof(Params, fstart) == 128);
static_assert(offsetof(Params, flag) == 160);
static_assert(offsetof(Params, t) == 168);
static_assert(sizeof(Params) == 408);

// The device-side bounds flag (index.comp's Flag block).
struct Flag {
  uint32_t unset = 0;     // 0xffffffff until a bad index is seen
  uint32_t position = 0;  // lowest bad position in index's row-major order, clamped
  int64_t value = 0;      // a bad index
};
static_assert(sizeof(Flag) == 16);
constexpr uint32_t kNoPosition = 0xffffffffu, kClamped = 0xfffffffeu;

// A flag block in scratch memory, filled with 0xff bytes in stream order.
Allocation& new_flag(Device& d, const tsr_kernel_call& call) {
  Allocation* a = &scratch(call, sizeof(Flag), "the bounds flag");
  tsr_plugin_stream& s = stream_of(d, call);
  std::lock_guard<std::mutex> lock(s.mu);
  VkCommandBuffer cb = s.record();
  vkCmdFillBuffer(cb, a->block->buffer, a->offset, sizeof(Flag), 0xffffffffu);
  s.command_done();
  return *a;
}

// Waits for the stream and throws OUT_OF_RANGE when the flag was set,
// naming the bad index at the lowest position (read back from `index`) as
// the CPU plugin does.
void check_flag(Device& d, const tsr_kernel_call& call, const Allocation& a,
                const tsr_tensor_desc& index, int64_t dim, int64_t size) {
  tsr_plugin_stream& s = stream_of(d, call);
  Flag flag;
  read_back(d, s, a, 0, &flag, sizeof flag);
  if (flag.unset != 0) return;
  int64_t value = flag.value;
  if (flag.position != kNoPosition && flag.position != kClamped && index.buffer != nullptr) {
    int64_t rest = flag.position, offset = 0;
    for (int k = index.ndim - 1; k >= 0; --k) {
      offset += (rest % index.sizes[k]) * index.strides[k];
      rest /= index.sizes[k];
    }
    const auto& ia = *static_cast<const Allocation*>(index.buffer);
    read_back(d, s, ia, static_cast<uint64_t>(index.byte_offset + offset * 8), &value,
              sizeof value);
  }
  sdk::throw_status(
      TSR_OUT_OF_RANGE, "index %lld is out of bounds for dimension %lld with size %lld",
      static_cast<long long>(value), static_cast<long long>(dim), static_cast<long long>(size));
}

// ---- _iota_ -------------------------------------------------------------------

bool integral_kind(const tsr_scalar& s) { return s.kind == TSR_BOOL || s.kind == TSR_INT64; }

void iota_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& out = out_arg(*call, 0);
  const tsr_scalar start = scalar_arg(*call, 1, "start");
  const tsr_scalar step = scalar_arg(*call, 2, "step");
  const bool has_end = !sdk::is_none(*call, 3);
  const tsr_scalar end = has_end ? scalar_arg(*call, 3, "end") : tsr_scalar{};
  if (((kNumericDtypes >> out.dtype) & 1) == 0)
    sdk::throw_unsupported_dtype(*call, "self", out.dtype, "vulkan");
  if (start.kind == TSR_COMPLEX128 || step.kind == TSR_COMPLEX128 ||
      (has_end && end.kind == TSR_COMPLEX128))
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: start, step and end must be real, not complex",
                      call->op_name);
  if (out.ndim > 8)
    sdk::throw_status(TSR_UNIMPLEMENTED, "vulkan plugin %s: more than 8 dims", call->op_name);
  Params p;
  p.mode = kIota;
  p.ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) p.sizes[d] = out.sizes[d];
  p.numel = sdk::numel(out);
  if (p.numel == 0) return;
  p.mirror_from = has_end ? p.numel / 2 : p.numel;
  const bool floating = ((kFloatingDtypes >> out.dtype) & 1) != 0;
  p.integer_math =
      !floating && integral_kind(start) && integral_kind(step) && (!has_end || integral_kind(end));
  p.istart = scalar_int(start);
  p.istep = scalar_int(step);
  p.iend = has_end ? scalar_int(end) : 0;
  p.fstart = scalar_double(start);
  p.fstep = scalar_double(step);
  p.fend = has_end ? scalar_double(end) : 0.0;
  p.t[0] = operand(out, out.ndim);
  kernels_of(context, *call)
      .dispatch(call->stream, kIndex, &p, sizeof p, static_cast<uint64_t>(p.numel), nullptr, 0,
                Kernels::Spec{p.mode, 0, 0});
}

// ---- gather / _scatter_ ----------------------------------------------------------

// Shapes shared by gather and _scatter_ (sdk::check_index_shape), within
// the shader's 8 dims; returns dim.
int64_t check_index(const tsr_kernel_call& call, const tsr_tensor_desc& self,
                    const tsr_tensor_desc& index, int64_t dim) {
  const int d = sdk::check_index_shape(call, self, index, dim);
  if (self.ndim > 8)
    sdk::throw_status(TSR_UNIMPLEMENTED, "vulkan plugin %s: more than 8 dims", call.op_name);
  return d;
}

// The shape part of the parameters: index's sizes (0-d as one element).
void index_shape(Params& p, const tsr_tensor_desc& self, const tsr_tensor_desc& index,
                 int64_t dim) {
  p.ndim = index.ndim > 0 ? index.ndim : 1;
  p.sizes[0] = 1;
  for (int d = 0; d < index.ndim; ++d) p.sizes[d] = index.sizes[d];
  p.dim = static_cast<int32_t>(dim);
  p.limit = self.ndim > 0 ? self.sizes[dim] : 1;
}

// Dispatches index.comp with operands (out, index, third) - third is self for
// gather and src for _scatter_ - and a fresh bounds flag, then throws
// OUT_OF_RANGE if an index was out of bounds (check_flag).
void dispatch_checked(tsr_plugin_context* context, const tsr_kernel_call& call, Params& p,
                      const tsr_tensor_desc& out, const tsr_tensor_desc& index,
                      const tsr_tensor_desc& third) {
  const int n = p.ndim;
  p.t[0] = operand(out, n);
  p.t[1] = operand(index, n);
  p.t[2] = operand(third, n);
  Kernels& kernels = kernels_of(context, call);
  Device& d = device_at(*context, call.device, call.op_name);
  Allocation& flag = new_flag(d, call);
  p.flag = flag.address();
  kernels.dispatch(call.stream, kIndex, &p, sizeof p, static_cast<uint64_t>(p.numel), nullptr, 0,
                   Kernels::Spec{p.mode, 0, 0});
  check_flag(d, call, flag, index, p.dim, p.limit);
}

void gather_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const tsr_tensor_desc& index = tensor_arg(*call, 2, "index");
  const tsr_tensor_desc& out = out_arg(*call, 0);
  const int64_t dim = check_index(*call, self, index, int_arg(*call, 1, "dim"));
  if (out.dtype != self.dtype || ((kRealDtypes >> out.dtype) & 1) == 0)
    sdk::throw_unsupported_dtype(*call, "out", out.dtype, "vulkan");
  Params p;
  p.mode = kGather;
  index_shape(p, self, index, dim);
  p.numel = sdk::numel(index);
  if (p.numel == 0) return;
  dispatch_checked(context, *call, p, out, index, self);
}

void scatter_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const tsr_tensor_desc& index = tensor_arg(*call, 2, "index");
  const tsr_tensor_desc& src = tensor_arg(*call, 3, "src");
  const int64_t code = sdk::code_arg(*call, 4, "op", TSR_SCATTER_CODE_COUNT, "tsr_scatter_op");
  const tsr_tensor_desc& out = out_arg(*call, 0);
  const int64_t dim = check_index(*call, self, index, int_arg(*call, 1, "dim"));
  if (src.dtype != self.dtype || out.dtype != self.dtype || ((kRealDtypes >> self.dtype) & 1) == 0)
    sdk::throw_unsupported_dtype(*call, "self", self.dtype, "vulkan");
  sdk::check_scatter_src(*call, index, src);
  Params p;
  p.mode = kScatter;
  p.op = static_cast<int32_t>(code);
  index_shape(p, self, index, dim);
  const int64_t len = p.sizes[dim];
  if (sdk::numel(index) == 0 || len == 0) return;
  p.numel = sdk::numel(index) / len;                     // lines
  dispatch_checked(context, *call, p, out, index, src);  // out aliases self
}

}  // namespace

void add_gather_scatter_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kIota, {kNumericDtypes}, sdk::trampoline<iota_kernel>));
  out.push_back(make_entry(sdk::schema::kGather, {kRealDtypes, sdk::kInt64Dtype},
                           sdk::trampoline<gather_kernel>));
  out.push_back(make_entry(sdk::schema::kScatter, {kRealDtypes, sdk::kInt64Dtype, kRealDtypes},
                           sdk::trampoline<scatter_kernel>, sdk::kScatterCodes));
}

}  // namespace tessera::vulkan
