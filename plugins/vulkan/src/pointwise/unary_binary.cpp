// unary_binary.cpp - _unary, _binary (function codes of
// tessera/opcodes.h) and where.self: shaders/pointwise/pointwise.comp over any dtype
// the codes are defined for, strides and broadcast. Floating codes compute in
// double on the device (the shader's own double-precision exp, log, sin, erf,
// lgamma, ...), so float64 gets every code too; integers compute in int64 and
// wrap. Integer division by zero raises ZeroDivisionError as PyTorch does
// when the divisor's memory is host-visible (checked after a stream sync);
// otherwise the shader gives 0 there.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_util.hpp"
#include "stream.hpp"
#include "tessera/opcodes.h"

namespace tessera::vulkan {
namespace {

const uint32_t kPointwiseSpirv[] = {
#include "pointwise.spv.inc"
};
const Shader kPointwise{"pointwise", kPointwiseSpirv, sizeof kPointwiseSpirv, 0, true};
const uint32_t kTexelUnarySpirv[] = {
#include "texel_unary.spv.inc"
};
const Shader kTexelUnary{"texel_unary", kTexelUnarySpirv, sizeof kTexelUnarySpirv, 1, true};
const uint32_t kTexelBinarySpirv[] = {
#include "texel_binary.spv.inc"
};
const Shader kTexelBinary{"texel_binary", kTexelBinarySpirv, sizeof kTexelBinarySpirv, 2, true};
const uint32_t kTexelSelectSpirv[] = {
#include "texel_select.spv.inc"
};
const Shader kTexelSelect{"texel_select", kTexelSelectSpirv, sizeof kTexelSelectSpirv, 3, true};

enum class Kind : int32_t { kUnary = 0, kBinary = 1, kWhere = 2 };

// pointwise.comp's parameter block (std430, 472 bytes).
struct Params {
  int64_t numel = 0;
  int32_t ndim = 0;
  int32_t op = 0;
  int32_t noperands = 0;
  int32_t kind = 0;
  int64_t sizes[8] = {};
  OperandParams t[4];
  double f[4] = {};
  int64_t i[4] = {};
};
static_assert(offsetof(Params, sizes) == 24);
static_assert(offsetof(Params, t) == 88);
static_assert(offsetof(Params, f) == 408);
static_assert(offsetof(Params, i) == 440);
static_assert(sizeof(Params) == 472);

// texel_unary.comp's parameter block (std430 push constants, 112 bytes).
struct TexelUnaryParams {
  int64_t n4 = 0;
  int32_t a_texel = 0;
  int32_t cols4 = 0;
  uint64_t out_address = 0;
  uint64_t out_row = 0;
  int32_t a_row4 = 0;
  int32_t pad_ = 0;
  RowDivision rows;
  double f[4] = {};
  int64_t i[4] = {};
};
static_assert(offsetof(TexelUnaryParams, rows) == 40 && offsetof(TexelUnaryParams, f) == 48 &&
              sizeof(TexelUnaryParams) == 112);

// texel_binary.comp's parameter block (std430 push constants, 56 bytes).
struct TexelBinaryParams {
  int64_t n4 = 0;
  int32_t a_texel = 0;
  int32_t b_texel = 0;
  uint64_t out_address = 0;
  uint64_t out_row = 0;
  int32_t a_row4 = 0;
  int32_t b_row4 = 0;
  int32_t cols4 = 0;
  int32_t pad_ = 0;
  RowDivision rows;
};
static_assert(offsetof(TexelBinaryParams, rows) == 48 && sizeof(TexelBinaryParams) == 56);

// The schema name of tensor argument `i` of _unary and _binary (self, other)
// or of where.self (condition, self, other).
const char* tensor_name(Kind kind, int i) {
  static constexpr const char* kCodeNames[] = {"self", "other"};
  static constexpr const char* kWhereNames[] = {"condition", "self", "other"};
  return kind == Kind::kWhere ? kWhereNames[i] : kCodeNames[i];
}

// The parameters over `out` and the tensor arguments `inputs` (argument
// indices), for `kind`.
Params params_over(const tsr_kernel_call& call, Kind kind, std::initializer_list<int> inputs) {
  const tsr_tensor_desc& out = out_arg(call, 0);
  Params p;
  p.kind = static_cast<int32_t>(kind);
  p.ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) p.sizes[d] = out.sizes[d];
  p.numel = sdk::numel(out);
  p.t[0] = operand(out, out.ndim);
  p.noperands = 1;
  for (int a : inputs)
    p.t[p.noperands++] = operand(tensor_arg(call, a, tensor_name(kind, a)), out.ndim);
  return p;
}

int32_t code_arg(const tsr_kernel_call& call, int i, int count) {
  const int64_t code = int_arg(call, i, "op");
  if (code < 0 || code >= count)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: op code %lld out of range",
                      call.op_name, static_cast<long long>(code));
  return static_cast<int32_t>(code);
}

// The shader's variant for `p` (its specialization constants): the kind and
// op code always, the dtype when the output and the value inputs are all
// float32 (the condition of where is not a value input). Taken by use (Note
// [Specializing by use], kernels.hpp); kGeneric reads all three from the
// parameters.
constexpr Kernels::Spec kGeneric{-1, -1, -1};
Kernels::Spec spec_of(const Params& p) {
  const int values = p.kind == static_cast<int32_t>(Kind::kWhere) ? 3 : p.noperands;
  bool float32 = true;
  for (int k = 0; k < values; ++k) float32 = float32 && p.t[k].dtype == TSR_FLOAT32;
  return Kernels::Spec{p.kind, p.op, float32 ? TSR_FLOAT32 : -1};
}

// Note [Texel fast paths] (device.hpp): a float32 -> float32 _unary or
// _binary over rows of whole texels (coalesced `p`; TexelGrid) runs through
// texel_unary.comp / texel_binary.comp, specialized on the op, once that
// variant is worth its compile (Note [Specializing by use]; until then
// pointwise.comp runs it). The tests (-> bool) take texel_select.comp
// instead (run_texel_select). False when it
// does not run there (nothing recorded).
bool run_texel(tsr_plugin_context* context, const tsr_kernel_call& call, const Params& p) {
  const bool unary = p.kind == static_cast<int32_t>(Kind::kUnary);
  const bool binary = p.kind == static_cast<int32_t>(Kind::kBinary);
  if (!(unary || binary)) return false;
  for (int k = 0; k < p.noperands; ++k)
    if (p.t[k].dtype != TSR_FLOAT32) return false;
  if (unary && p.op >= TSR_UNARY_LOGICAL_NOT && p.op <= TSR_UNARY_SIGNBIT) return false;
  const TexelGrid g = TexelGrid::of(p, 4);
  if (g.rows == 0 || !g.whole || g.first_texel(p, 0, 4, out_arg(call, 0)) < 0) return false;
  int64_t texels[2] = {0, 0};
  for (int k = 1; k < p.noperands; ++k)
    if ((texels[k - 1] = g.first_texel(
             p, k, 4, tensor_arg(call, k - 1, tensor_name(Kind::kBinary, k - 1)))) < 0)
      return false;
  const Shader& shader = unary ? kTexelUnary : kTexelBinary;
  Kernels& kernels = kernels_of(context, call);
  const auto n4 = static_cast<uint64_t>(g.rows * g.cols4);
  const Kernels::Spec variant{p.op, 0, 0};
  if (kernels.by_use(shader, n4, variant, Kernels::Spec{-1, 0, 0},
                     static_cast<uint64_t>(p.numel)) != variant)
    return false;
  VkBufferView views[2] = {block_of(tensor_arg(call, 0, "self")).view_u32x4, VK_NULL_HANDLE};
  if (unary) {
    TexelUnaryParams t;
    g.describe(t, p, 4);
    t.a_texel = static_cast<int32_t>(texels[0]);
    t.a_row4 = static_cast<int32_t>(g.row_bytes(p, 1, 4) / 16);
    std::memcpy(t.f, p.f, sizeof t.f);
    std::memcpy(t.i, p.i, sizeof t.i);
    kernels.dispatch(call.stream, kTexelUnary, &t, sizeof t, n4, views, 1, variant);
  } else {
    TexelBinaryParams t;
    g.describe(t, p, 4);
    t.a_texel = static_cast<int32_t>(texels[0]);
    t.b_texel = static_cast<int32_t>(texels[1]);
    t.a_row4 = static_cast<int32_t>(g.row_bytes(p, 1, 4) / 16);
    t.b_row4 = static_cast<int32_t>(g.row_bytes(p, 2, 4) / 16);
    views[1] = block_of(tensor_arg(call, 1, "other")).view_u32x4;
    kernels.dispatch(call.stream, kTexelBinary, &t, sizeof t, n4, views, 2, variant);
  }
  return true;
}

// texel_select.comp's parameter block (std430 push constants, 40 bytes).
struct TexelSelectParams {
  int32_t n16 = 0;
  int32_t a_texel = 0;
  int32_t b_texel = 0;
  int32_t c_texel = 0;
  uint64_t out_address = 0;
  uint64_t a_address = 0;
  uint64_t b_address = 0;
};
static_assert(offsetof(TexelSelectParams, out_address) == 16 && sizeof(TexelSelectParams) == 40);

bool is_binary_test(int32_t code) {
  return code >= TSR_BINARY_LOGICAL_AND && code <= TSR_BINARY_GE;
}

// Note [Texel fast paths] (device.hpp): a float32 test (_binary's
// comparisons and logical codes, -> bool) or a float32 where.self over one
// contiguous run of a multiple of 16 elements runs through
// texel_select.comp, sixteen elements per invocation (a bool texel's worth),
// either value input possibly a broadcast scalar; taken by use like the
// other texel variants. relu's backward is one of each (gt_Scalar, where).
// False when it does not run there (nothing recorded).
bool run_texel_select(tsr_plugin_context* context, const tsr_kernel_call& call, const Params& p) {
  const bool where = p.kind == static_cast<int32_t>(Kind::kWhere);
  const bool test = p.kind == static_cast<int32_t>(Kind::kBinary) && is_binary_test(p.op);
  if (!where && !test) return false;
  if (p.t[0].dtype != (where ? TSR_FLOAT32 : TSR_BOOL) || p.t[1].dtype != TSR_FLOAT32 ||
      p.t[2].dtype != TSR_FLOAT32 || (where && p.t[3].dtype != TSR_BOOL))
    return false;
  if (p.ndim != 1 || p.numel == 0 || p.numel % 16 != 0 || p.numel / 16 > INT32_MAX) return false;
  const auto n = static_cast<uint64_t>(p.numel);
  const tsr_tensor_desc& out = out_arg(call, 0);
  const tsr_tensor_desc& a = tensor_arg(call, where ? 1 : 0, "self");
  const tsr_tensor_desc& b = tensor_arg(call, where ? 2 : 1, "other");
  if (p.t[0].strides[0] != 1 || texel_of(out, n * (where ? 4 : 1)) < 0) return false;
  TexelSelectParams t;
  t.n16 = static_cast<int32_t>(p.numel / 16);
  t.out_address = p.t[0].address;
  // A scalar input reads no texels: its view is the output's, a placeholder.
  const VkBufferView placeholder = block_of(out).view_u32x4;
  VkBufferView views[3] = {placeholder, placeholder, placeholder};
  int32_t scalars = 0;
  const tsr_tensor_desc* inputs[2] = {&a, &b};
  int32_t* texels[2] = {&t.a_texel, &t.b_texel};
  uint64_t* addresses[2] = {&t.a_address, &t.b_address};
  for (int k = 0; k < 2; ++k) {
    const OperandParams& o = p.t[k + 1];
    if (o.strides[0] == 0) {
      scalars |= k + 1;
      *addresses[k] = o.address;
      continue;
    }
    const int64_t texel = o.strides[0] == 1 ? texel_of(*inputs[k], n * 4) : -1;
    if (texel < 0) return false;
    *texels[k] = static_cast<int32_t>(texel);
    views[k] = block_of(*inputs[k]).view_u32x4;
  }
  if (where) {
    const tsr_tensor_desc& c = tensor_arg(call, 0, "condition");
    const int64_t texel = p.t[3].strides[0] == 1 ? texel_of(c, n) : -1;
    if (texel < 0) return false;
    t.c_texel = static_cast<int32_t>(texel);
    views[2] = block_of(c).view_u32x4;
  }
  Kernels& kernels = kernels_of(context, call);
  const Kernels::Spec variant{where ? 1 : 0, where ? 0 : p.op, scalars};
  if (kernels.by_use(kTexelSelect, n / 16, variant, Kernels::Spec{-1, 0, 0}, n) != variant)
    return false;
  kernels.dispatch(call.stream, kTexelSelect, &t, sizeof t, n / 16, views, 3, variant);
  return true;
}

void run(tsr_plugin_context* context, const tsr_kernel_call& call, Params p) {
  p.ndim = coalesce_dims(p.ndim, p.sizes, p.t, p.noperands);
  if (run_texel_select(context, call, p) || run_texel(context, call, p)) return;
  Kernels& kernels = kernels_of(context, call);
  const auto n = static_cast<uint64_t>(p.numel);
  kernels.dispatch(call.stream, kPointwise, &p, sizeof p, n, nullptr, 0,
                   kernels.by_use(kPointwise, n, spec_of(p), kGeneric, n));
}

void unary_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  Params p = params_over(*call, Kind::kUnary, {0});
  p.op = code_arg(*call, 1, TSR_UNARY_CODE_COUNT);
  for (int k = 0; k < 3; ++k) {
    static constexpr const char* kNames[] = {"p0", "p1", "p2"};
    const tsr_scalar s = scalar_arg(*call, 2 + k, kNames[k]);
    p.f[k] = scalar_double(s);
    p.i[k] = scalar_int(s);
  }
  run(context, *call, p);
}

// True when integer tensor `d` has a zero element, once the stream's queued
// work is done. The host scans the bytes the tensor spans: in place where
// it reads them directly (mapped, cached memory), else a copy read back
// through staging (Device::reads_directly; unmapped or uncached memory, as
// on a discrete GPU): one download of the divisor per integer division
// there, the price of raising PyTorch's ZeroDivisionError on every device.
bool has_zero(tsr_plugin_context* context, const tsr_kernel_call& call, const tsr_tensor_desc& d) {
  const auto* a = static_cast<const Allocation*>(d.buffer);
  const int64_t n = sdk::numel(d);
  if (a == nullptr || n == 0) return false;
  Device& device = device_at(*context, call.device, call.op_name);
  tsr_plugin_stream& s = call.stream != nullptr ? *call.stream : *device.default_stream;
  int64_t size = 8;
  switch (d.dtype) {
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8:
      size = 1;
      break;
    case TSR_INT16:
      size = 2;
      break;
    case TSR_INT32:
      size = 4;
      break;
    default:
      break;
  }
  // the elements' offsets span [lo, hi] (strides may be 0 or negative)
  int64_t lo = 0, hi = 0;
  for (int k = 0; k < d.ndim; ++k) {
    const int64_t reach = (d.sizes[k] - 1) * d.strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  const uint64_t first = static_cast<uint64_t>(d.byte_offset + lo * size);
  const uint64_t span = static_cast<uint64_t>((hi - lo + 1) * size);
  std::vector<std::byte> copy;
  const std::byte* base = nullptr;
  if (a->host() != nullptr && device.reads_directly(span)) {
    s.synchronize();
    base = a->host() + first;
  } else {
    copy.resize(span);
    read_back(device, s, *a, first, copy.data(), span);
    base = copy.data();
  }
  base -= lo * size;  // element offsets count from the tensor's first element
  int64_t index[8] = {};
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int k = 0; k < d.ndim; ++k) off += index[k] * d.strides[k];
    uint64_t bits = 0;
    std::memcpy(&bits, base + off * size, static_cast<size_t>(size));
    if (bits == 0) return true;
    for (int k = d.ndim - 1; k >= 0; --k) {
      if (++index[k] < d.sizes[k]) break;
      index[k] = 0;
    }
  }
  return false;
}

bool integer_division(int32_t code) {
  return code == TSR_BINARY_REMAINDER || code == TSR_BINARY_FMOD || code == TSR_BINARY_DIV_TRUNC ||
         code == TSR_BINARY_DIV_FLOOR;
}

void binary_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  Params p = params_over(*call, Kind::kBinary, {0, 1});
  p.op = code_arg(*call, 2, TSR_BINARY_CODE_COUNT);
  const tsr_tensor_desc& other = tensor_arg(*call, 1, "other");
  if (integer_division(p.op) && other.dtype != TSR_FLOAT16 && other.dtype != TSR_BFLOAT16 &&
      other.dtype != TSR_FLOAT32 && other.dtype != TSR_FLOAT64 && has_zero(context, *call, other))
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: ZeroDivisionError: integer division or modulo by zero (argument "
                      "'other' has a zero element); use floating-point inputs to get inf/nan",
                      call->op_name);
  const tsr_scalar s = scalar_arg(*call, 3, "p0");
  p.f[0] = scalar_double(s);
  p.i[0] = scalar_int(s);
  run(context, *call, p);
}

// where.self: operands out, self, other, condition.
void where_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  run(context, *call, params_over(*call, Kind::kWhere, {1, 2, 0}));
}

}  // namespace

void add_unary_binary_kernels(KernelList& out) {
  // _unary and _binary, one entry per group of input dtypes with the codes
  // the core calls that group with (sdk/kernel_entry.hpp).
  for (const tsr_kernel_entry& e : sdk::unary_entries(sdk::trampoline<unary_kernel>))
    out.push_back(e);
  for (const tsr_kernel_entry& e : sdk::binary_entries(sdk::trampoline<binary_kernel>))
    out.push_back(e);
  out.push_back(make_entry(sdk::schema::kWhere, {sdk::kBoolDtype, kRealDtypes, kRealDtypes},
                           sdk::trampoline<where_kernel>));
}

}  // namespace tessera::vulkan
