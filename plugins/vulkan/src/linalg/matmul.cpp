// matmul.cpp - mm and bmm: shaders/linalg/linalg.comp over any strides
// (transposed inputs included) and every real non-bool dtype. float32 and
// float64 use the 4x4 register-blocked variants (accumulating in float /
// double); the other dtypes one invocation per output element (accumulating
// in float for float16 and bfloat16, int64 with wrap for integers). (A
// shared-memory 64x64 tiled float32 variant was measured ~1.45x slower than
// the register-blocked one on lavapipe, so it is not used.)
#include <cstdint>

#include "kernel_util.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kLinalgSpirv[] = {
#include "linalg.spv.inc"
};
const Shader kLinalg{"linalg", kLinalgSpirv, sizeof kLinalgSpirv, 0, true};
const uint32_t kLinalgTexelSpirv[] = {
#include "linalg_texel.spv.inc"
};
const Shader kLinalgTexel{"linalg_texel", kLinalgTexelSpirv, sizeof kLinalgTexelSpirv, 3, true};

// linalg_texel.comp's push constants (std430, 60 bytes).
struct TexelParams {
  int32_t batch = 1, m = 0, n = 0, k = 0;
  int32_t a_texel = 0, a_layout = 0, a_batch4 = 0, a_major4 = 0;
  int32_t b_texel = 0, b_layout = 0, b_batch4 = 0, b_major4 = 0;
  int32_t c_texel = 0, c_batch4 = 0, c_row4 = 0;
};
static_assert(sizeof(TexelParams) == 60);

// linalg.comp's parameter block (std430, 280 bytes).
struct Params {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int32_t tile = 1;
  int32_t pad_ = 0;
  OperandParams a;
  OperandParams b;
  OperandParams out;
};
static_assert(offsetof(Params, a) == 40);
static_assert(offsetof(Params, out) == 200);
static_assert(sizeof(Params) == 280);

constexpr uint64_t kMatmulDtypes = kNumericDtypes;

// `d` (2-D, or 3-D when batched) as an operand with strides (batch, row,
// column); batch stride 0 for 2-D.
OperandParams matrix(const tsr_tensor_desc& d, bool batched) {
  OperandParams o = operand(d, d.ndim);
  if (!batched) {
    o.strides[2] = o.strides[1];
    o.strides[1] = o.strides[0];
    o.strides[0] = 0;
  }
  return o;
}

void check_rank(const tsr_kernel_call& call, const tsr_tensor_desc& d, int ndim, const char* what) {
  if (d.ndim != ndim)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: %s has %d dims, expected %d",
                      call.op_name, what, static_cast<int>(d.ndim), ndim);
}

// The bytes from `d`'s first element to the end of its last (as a texel
// range: rounded up to 16).
uint64_t extent_bytes(const tsr_tensor_desc& d) {
  int64_t last = 0;
  for (int k = 0; k < d.ndim; ++k) last += (d.sizes[k] - 1) * d.strides[k];
  return (static_cast<uint64_t>(last + 1) * 4 + 15) / 16 * 16;
}

bool fits_int32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

// See Note [Texel fast paths]: float32 mm/bmm through linalg_texel.comp when the
// layouts qualify (see the shader's header); false (nothing recorded) when
// they do not.
bool run_texel(tsr_plugin_context* context, const tsr_kernel_call& call, const Params& p,
               const tsr_tensor_desc& a, const tsr_tensor_desc& b, const tsr_tensor_desc& out) {
  if (p.k % 4 != 0 || p.n % 4 != 0 || p.k == 0) return false;
  if (!fits_int32(p.batch) || !fits_int32(p.m) || !fits_int32(p.n) || !fits_int32(p.k))
    return false;
  for (const tsr_tensor_desc* d : {&a, &b, &out})
    for (int k = 0; k < d->ndim; ++k)
      if (d->strides[k] < 0) return false;
  const int64_t a_texel = texel_of(a, extent_bytes(a));
  const int64_t b_texel = texel_of(b, extent_bytes(b));
  const int64_t c_texel = texel_of(out, extent_bytes(out));
  if (a_texel < 0 || b_texel < 0 || c_texel < 0) return false;
  // strides as (batch, row, column), batch 0 for mm
  const OperandParams& sa = p.a;
  const OperandParams& sb = p.b;
  const OperandParams& sc = p.out;
  auto quarter = [](int64_t v) { return v % 4 == 0 && fits_int32(v / 4); };
  TexelParams t;
  t.batch = static_cast<int32_t>(p.batch);
  t.m = static_cast<int32_t>(p.m);
  t.n = static_cast<int32_t>(p.n);
  t.k = static_cast<int32_t>(p.k);
  if (!quarter(sa.strides[0]) || !quarter(sb.strides[0]) || !quarter(sc.strides[0])) return false;
  if ((sa.strides[2] == 1 || p.k == 1) && quarter(sa.strides[1])) {
    t.a_layout = 0;
    t.a_major4 = static_cast<int32_t>(sa.strides[1] / 4);
  } else if (sa.strides[1] == 1 && quarter(sa.strides[2]) && p.m % 4 == 0) {
    t.a_layout = 1;
    t.a_major4 = static_cast<int32_t>(sa.strides[2] / 4);
  } else {
    return false;
  }
  if (sb.strides[2] == 1 && quarter(sb.strides[1])) {
    t.b_layout = 0;
    t.b_major4 = static_cast<int32_t>(sb.strides[1] / 4);
  } else if (sb.strides[1] == 1 && quarter(sb.strides[2])) {
    t.b_layout = 1;
    t.b_major4 = static_cast<int32_t>(sb.strides[2] / 4);
  } else {
    return false;
  }
  if (sc.strides[2] != 1 || !quarter(sc.strides[1])) return false;
  t.a_texel = static_cast<int32_t>(a_texel);
  t.b_texel = static_cast<int32_t>(b_texel);
  t.c_texel = static_cast<int32_t>(c_texel);
  t.a_batch4 = static_cast<int32_t>(sa.strides[0] / 4);
  t.b_batch4 = static_cast<int32_t>(sb.strides[0] / 4);
  t.c_batch4 = static_cast<int32_t>(sc.strides[0] / 4);
  t.c_row4 = static_cast<int32_t>(sc.strides[1] / 4);
  const VkBufferView views[3] = {block_of(out).view_f32x4, block_of(a).view_f32x4,
                                 block_of(b).view_f32x4};
  const uint64_t blocks = static_cast<uint64_t>(p.batch) * static_cast<uint64_t>((p.m + 3) / 4) *
                          static_cast<uint64_t>(p.n / 4);
  kernels_of(context, call)
      .dispatch(call.stream, kLinalgTexel, &t, sizeof t, blocks, views, 3,
                Kernels::Spec{t.a_layout, t.b_layout, 0});
  return true;
}

template <bool Batched>
void matmul_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const int rank = Batched ? 3 : 2;
  const tsr_tensor_desc& a = tensor_arg(*call, 0, "self");
  const tsr_tensor_desc& b = tensor_arg(*call, 1, "mat2");
  if (call->nouts < 1)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: no output", call->op_name);
  const tsr_tensor_desc& out = out_arg(*call, 0);
  check_rank(*call, a, rank, "self");
  check_rank(*call, b, rank, "mat2");
  check_rank(*call, out, rank, "out");
  if (((kMatmulDtypes >> out.dtype) & 1) == 0 || a.dtype != out.dtype || b.dtype != out.dtype)
    sdk::throw_unsupported_dtype(*call, "out", out.dtype, "vulkan");
  Params p;
  const int o = Batched ? 1 : 0;
  p.batch = Batched ? out.sizes[0] : 1;
  p.m = out.sizes[o];
  p.n = out.sizes[o + 1];
  p.k = a.sizes[o + 1];
  if (a.sizes[o] != p.m || b.sizes[o] != p.k || b.sizes[o + 1] != p.n ||
      (Batched && (a.sizes[0] != p.batch || b.sizes[0] != p.batch)))
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: mismatched shapes", call->op_name);
  p.a = matrix(a, Batched);
  p.b = matrix(b, Batched);
  p.out = matrix(out, Batched);
  const uint64_t elements = static_cast<uint64_t>(p.batch * p.m * p.n);
  if (elements == 0) return;
  if (out.dtype == TSR_FLOAT32 && run_texel(context, *call, p, a, b, out)) return;
  uint64_t invocations = elements;
  if (out.dtype == TSR_FLOAT32 || out.dtype == TSR_FLOAT64) {
    p.tile = out.dtype == TSR_FLOAT32 ? 4 : 5;
    invocations = static_cast<uint64_t>(p.batch * ((p.m + 3) / 4) * ((p.n + 3) / 4));
  }
  kernels_of(context, *call).dispatch(call->stream, kLinalg, &p, sizeof p, invocations);
}

}  // namespace

bool texel_bmm(tsr_plugin_context* context, const tsr_kernel_call& call, const tsr_tensor_desc& a,
               const tsr_tensor_desc& b, const tsr_tensor_desc& out) {
  if (a.ndim != 3 || b.ndim != 3 || out.ndim != 3 || out.dtype != TSR_FLOAT32 ||
      a.dtype != TSR_FLOAT32 || b.dtype != TSR_FLOAT32)
    return false;
  Params p;
  p.batch = out.sizes[0];
  p.m = out.sizes[1];
  p.n = out.sizes[2];
  p.k = a.sizes[2];
  if (a.sizes[1] != p.m || b.sizes[1] != p.k || b.sizes[2] != p.n || a.sizes[0] != p.batch ||
      b.sizes[0] != p.batch || p.batch * p.m * p.n == 0)
    return false;
  p.a = matrix(a, true);
  p.b = matrix(b, true);
  p.out = matrix(out, true);
  return run_texel(context, call, p, a, b, out);
}

void add_matmul_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kMm, {kMatmulDtypes, kMatmulDtypes},
                           sdk::trampoline<matmul_kernel<false>>));
  out.push_back(make_entry(sdk::schema::kBmm, {kMatmulDtypes, kMatmulDtypes},
                           sdk::trampoline<matmul_kernel<true>>));
}

}  // namespace tessera::vulkan
