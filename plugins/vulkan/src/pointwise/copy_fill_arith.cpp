// copy_fill_arith.cpp - copy_, fill_.Scalar and add/sub/mul/div.Tensor:
// shaders/pointwise/pointwise_strided.comp over any dtype (pair), strides and broadcast.
#include <algorithm>
#include <cstring>

#include "kernel_util.hpp"
#include "raster.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kPointwiseStridedSpirv[] = {
#include "pointwise_strided.spv.inc"
};
const Shader kPointwiseStrided{"pointwise_strided", kPointwiseStridedSpirv,
                               sizeof kPointwiseStridedSpirv, 0, true};
const uint32_t kPointwiseStridedBatchSpirv[] = {
#include "pointwise_strided_batch.spv.inc"
};
const Shader kPointwiseStridedBatch{"pointwise_strided_batch", kPointwiseStridedBatchSpirv,
                                    sizeof kPointwiseStridedBatchSpirv};
const uint32_t kTexelArithSpirv[] = {
#include "texel_arith.spv.inc"
};
const Shader kTexelArith{"texel_arith", kTexelArithSpirv, sizeof kTexelArithSpirv, 2, true};
// Note [Raster stores] (raster.hpp)
const uint32_t kTexelArithFragSpirv[] = {
#include "texel_arith.frag.spv.inc"
};
const Shader kTexelArithFrag{"texel_arith.frag", kTexelArithFragSpirv, sizeof kTexelArithFragSpirv,
                             2};
const uint32_t kTexelCopySpirv[] = {
#include "texel_copy.spv.inc"
};
const Shader kTexelCopy{"texel_copy", kTexelCopySpirv, sizeof kTexelCopySpirv, 1, true};
const uint32_t kTexelCopyFragSpirv[] = {
#include "texel_copy.frag.spv.inc"
};
const Shader kTexelCopyFrag{"texel_copy.frag", kTexelCopyFragSpirv, sizeof kTexelCopyFragSpirv, 1};

// Codes of pointwise_strided.comp (its OP_* constants).
enum class Op : int32_t { kFill = 0, kCopy = 1, kAdd = 2, kSub = 3, kMul = 4, kDiv = 5 };

// pointwise_strided.comp's parameter block (std430, 440 bytes).
struct Params {
  int64_t numel = 0;
  int32_t ndim = 0;
  int32_t op = 0;
  int32_t noperands = 0;
  int32_t pad_ = 0;
  int64_t sizes[8] = {};
  OperandParams t[4];
  double f[2] = {};
  int64_t i[2] = {};
};
static_assert(offsetof(Params, sizes) == 24);
static_assert(offsetof(Params, t) == 88);
static_assert(offsetof(Params, f) == 408);
static_assert(sizeof(Params) == 440);

// texel_arith.glsl's parameter block (std430, 88 bytes).
struct TexelArithParams {
  int64_t n4 = 0;
  int32_t a_texel = 0;
  int32_t b_texel = 0;
  int32_t op = 0;
  float alpha = 1.0f;
  int32_t scalars = 0;
  int32_t cols4 = 0;
  uint64_t a_address = 0;
  uint64_t b_address = 0;
  uint64_t out_address = 0;
  uint64_t out_row = 0;
  int32_t a_row4 = 0;
  int32_t b_row4 = 0;
  RowDivision rows;
  int32_t first = 0;  // the first texel computed (Raster::draw writes it for draws)
  int32_t width = 0;  // draws: texels per image row
};
static_assert(offsetof(TexelArithParams, a_address) == 32 &&
              offsetof(TexelArithParams, rows) == 72 && sizeof(TexelArithParams) == 88);

// texel_copy.glsl's parameter block (std430, 72 bytes).
struct TexelCopyParams {
  int64_t n4 = 0;
  int32_t src_texel = 0;
  int32_t fill = 0;
  uint64_t out_address = 0;
  uint64_t out_row = 0;
  uint32_t pattern[4] = {};
  int32_t cols4 = 0;
  int32_t src_row4 = 0;
  RowDivision rows;
  int32_t first = 0;  // the first texel written (Raster::draw writes it for draws)
  int32_t width = 0;  // draws: texels per image row
};
static_assert(offsetof(TexelCopyParams, pattern) == 32 && offsetof(TexelCopyParams, rows) == 56 &&
              sizeof(TexelCopyParams) == 72);

Params params_over(const tsr_tensor_desc& out, Op op) {
  Params p;
  p.op = static_cast<int32_t>(op);
  p.ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) p.sizes[d] = out.sizes[d];
  p.numel = sdk::numel(out);
  p.t[0] = operand(out, out.ndim);
  p.noperands = 1;
  return p;
}

// Moves operand `k` of a 1-D iteration `elements` elements on (stride 0
// operands stay), for the tail after a fast path.
void advance(Params& p, int64_t elements) {
  for (int k = 0; k < p.noperands; ++k)
    p.t[k].address += static_cast<uint64_t>(elements * p.t[k].strides[0] *
                                            static_cast<int64_t>(sdk::element_size(p.t[k].dtype)));
  p.sizes[0] -= elements;
  p.numel -= elements;
}

// Leaves `p` describing what a texel shader over `g` did not cover.
void consume(const TexelGrid& g, Params& p, int64_t esize) {
  if (g.whole)
    p.numel = 0;
  else
    advance(p, g.cols4 * 16 / esize);
}

// Records a texel shader's work over grid `g` (parameter block `t`, whose
// `first` and `width` it writes, and whose output is operand 0 of `p`):
// drawn with `fragment` where the device renders and the output's rows
// follow each other, as far as whole blocks of image rows reach (Note
// [Raster stores], raster.hpp), the rest dispatched with `compute` from
// texel `first` on.
template <class T>
void record_texels(tsr_plugin_context* context, const tsr_kernel_call& call, const TexelGrid& g,
                   const Params& p, const tsr_tensor_desc& out, T& t, const Shader& compute,
                   const Shader& fragment, const VkBufferView* views, uint32_t nviews,
                   const Kernels::Spec& spec) {
  check_validation(*context);
  Device& device = device_at(*context, call.device, call.op_name);
  const auto n4 = static_cast<uint64_t>(t.n4);
  uint64_t drawn = 0;
  if (device.raster && (g.rows == 1 || t.out_row == static_cast<uint64_t>(g.cols4) * 16)) {
    const Block& block = block_of(out);
    drawn = device.raster->draw(call.stream, fragment, &t, sizeof t, views, nviews, spec, block,
                                p.t[0].address - block.address, n4);
  }
  if (drawn < n4) {
    t.first = static_cast<int32_t>(drawn);
    device.kernels->dispatch(call.stream, compute, &t, sizeof t, n4 - drawn, views, nviews, spec);
  }
}

// See Note [Texel fast paths]: runs the bulk of a 1-D or 2-D iteration (after
// coalescing; TexelGrid says which qualify) through texel_copy.comp or
// texel_arith.comp and leaves `p` describing the rest (numel % 4 elements of
// a 1-D iteration, or all of it when the operands do not qualify), for
// pointwise_strided.comp.
void run_texel_bulk(tsr_plugin_context* context, const tsr_kernel_call& call, Params& p,
                    const tsr_tensor_desc* descs[3]) {
  const Op op = static_cast<Op>(p.op);
  const int32_t dtype = p.t[0].dtype;
  if (op == Op::kFill || op == Op::kCopy) {
    if (op == Op::kCopy && p.t[1].dtype != dtype) return;
    const int64_t esize = static_cast<int64_t>(sdk::element_size(dtype));
    const TexelGrid g = TexelGrid::of(p, esize);
    if (g.rows == 0) return;
    const int64_t out_texel = g.first_texel(p, 0, esize, *descs[0]);
    const int64_t src_texel = op == Op::kCopy ? g.first_texel(p, 1, esize, *descs[1]) : 0;
    if (out_texel < 0 || src_texel < 0) return;
    TexelCopyParams t;
    g.describe(t, p, esize);
    t.src_texel = static_cast<int32_t>(src_texel);
    // fill_ reads no texels: the view is the output's, a placeholder
    VkBufferView view = block_of(*descs[op == Op::kCopy ? 1 : 0]).view_u32x4;
    if (op == Op::kCopy) {
      t.src_row4 = static_cast<int32_t>(g.row_bytes(p, 1, esize) / 16);
    } else {
      t.fill = 1;
      // the value's bits repeated over 16 bytes (esize divides 16)
      const uint64_t bits = static_cast<uint64_t>(p.i[1]);
      unsigned char bytes[16];
      for (int b = 0; b < 16; ++b) bytes[b] = static_cast<unsigned char>(bits >> (8 * (b % esize)));
      std::memcpy(t.pattern, bytes, sizeof bytes);
    }
    record_texels(context, call, g, p, *descs[0], t, kTexelCopy, kTexelCopyFrag, &view, 1,
                  Kernels::Spec{});
    consume(g, p, esize);
    return;
  }
  if (dtype != TSR_FLOAT32 || p.t[1].dtype != TSR_FLOAT32 || p.t[2].dtype != TSR_FLOAT32) return;
  const TexelGrid g = TexelGrid::of(p, 4);
  if (g.rows == 0 || g.first_texel(p, 0, 4, *descs[0]) < 0) return;
  TexelArithParams t;
  g.describe(t, p, 4);
  t.op = p.op;
  t.alpha = static_cast<float>(p.f[0]);
  // A scalar operand reads no texels: its view is the output's, a placeholder.
  const VkBufferView out_view = block_of(*descs[0]).view_u32x4;
  VkBufferView views[2] = {out_view, out_view};
  int32_t* texels[2] = {&t.a_texel, &t.b_texel};
  int32_t* rows4[2] = {&t.a_row4, &t.b_row4};
  for (int k = 1; k < 3; ++k) {
    if (p.t[k].strides[0] == 0 && p.t[k].strides[p.ndim - 1] == 0) {
      t.scalars |= k;  // A_SCALAR = 1, B_SCALAR = 2
      (k == 1 ? t.a_address : t.b_address) = p.t[k].address;
      continue;
    }
    const int64_t texel = g.first_texel(p, k, 4, *descs[k]);
    if (texel < 0) return;
    *texels[k - 1] = static_cast<int32_t>(texel);
    *rows4[k - 1] = static_cast<int32_t>(g.row_bytes(p, k, 4) / 16);
    views[k - 1] = block_of(*descs[k]).view_u32x4;
  }
  const bool alpha_one = (op == Op::kAdd || op == Op::kSub) && t.alpha == 1.0f;
  const Kernels::Spec spec{t.op, t.scalars, alpha_one ? 1 : 0};
  record_texels(context, call, g, p, *descs[0], t, kTexelArith, kTexelArithFrag, views, 2, spec);
  consume(g, p, 4);
}

// pointwise_strided.comp's SPEC_DTYPES for operands that are all float32 (the
// variant whose dtypes are constants); other mixes pass -1.
constexpr int32_t kFloat32Operands = TSR_FLOAT32 | TSR_FLOAT32 << 8 | TSR_FLOAT32 << 16;
bool all_float32(const Params& p) {
  for (int k = 0; k < p.noperands; ++k)
    if (p.t[k].dtype != TSR_FLOAT32) return false;
  return true;
}

// Invocations for `numel` elements of pointwise_strided.comp: at most 2^18 (a
// grid of 1024 workgroups; lavapipe's cost per workgroup outweighs a loop
// over elements - a 40M-element add ran in ~10 s with one invocation per
// element, ~6 s like this), but enough that no invocation loops more than
// 2048 times (Note [lavapipe loop budget], reduction/reduce.cpp).
uint64_t grid_for(int64_t numel) {
  const auto n = static_cast<uint64_t>(numel);
  return std::max<uint64_t>(std::min<uint64_t>(n, uint64_t{1} << 18), (n + 2047) / 2048);
}

// `descs`: the output and the tensor inputs, as p.t[0..noperands).
void run(tsr_plugin_context* context, const tsr_kernel_call& call, Params p,
         const tsr_tensor_desc* descs[3]) {
  p.ndim = coalesce_dims(p.ndim, p.sizes, p.t, p.noperands);
  Kernels& kernels = kernels_of(context, call);
  const auto small = [&] { return kernels.batches(static_cast<uint64_t>(p.numel)); };
  if (!small()) run_texel_bulk(context, call, p, descs);
  if (p.numel == 0) return;
  // See Note [Small-op batches]: a small op, or the tail of a texel path
  if (small()) {
    kernels.batch(call.stream, kPointwiseStridedBatch, &p, sizeof p,
                  static_cast<uint64_t>(p.numel));
    return;
  }
  kernels.dispatch(call.stream, kPointwiseStrided, &p, sizeof p, grid_for(p.numel), nullptr, 0,
                   Kernels::Spec{p.op, all_float32(p) ? kFloat32Operands : -1, 0});
}

// The bits of `value` stored as `dtype` (fill_).
uint64_t scalar_bits(const tsr_scalar& s, int32_t dtype) {
  const double f = scalar_double(s);
  const int64_t i = scalar_int(s);
  const bool integral = s.kind == TSR_BOOL || s.kind == TSR_INT64;
  switch (dtype) {
    case TSR_BOOL:
      return f != 0.0 || (integral && i != 0) ? 1 : 0;
    case TSR_FLOAT64: {
      uint64_t b;
      std::memcpy(&b, &f, 8);
      return b;
    }
    case TSR_FLOAT32: {
      const float x = static_cast<float>(f);
      uint32_t b;
      std::memcpy(&b, &x, 4);
      return b;
    }
    case TSR_FLOAT16:
      return sdk::half(f).bits;
    case TSR_BFLOAT16:
      return sdk::bfloat16(f).bits;
    default:
      return static_cast<uint64_t>(integral ? i : static_cast<int64_t>(f));
  }
}

void fill_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& out = out_arg(*call, 0);
  Params p = params_over(out, Op::kFill);
  p.i[1] = static_cast<int64_t>(scalar_bits(scalar_arg(*call, 1, "value"), out.dtype));
  const tsr_tensor_desc* descs[3] = {&out, nullptr, nullptr};
  run(context, *call, p, descs);
}

void copy_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& out = out_arg(*call, 0);
  Params p = params_over(out, Op::kCopy);
  const tsr_tensor_desc& src = tensor_arg(*call, 1, "src");
  p.t[1] = operand(src, out.ndim);
  p.noperands = 2;
  const tsr_tensor_desc* descs[3] = {&out, &src, nullptr};
  run(context, *call, p, descs);
}

template <Op K>
void arith_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& out = out_arg(*call, 0);
  Params p = params_over(out, K);
  const tsr_tensor_desc& a = tensor_arg(*call, 0, "self");
  const tsr_tensor_desc& b = tensor_arg(*call, 1, "other");
  p.t[1] = operand(a, out.ndim);
  p.t[2] = operand(b, out.ndim);
  p.noperands = 3;
  p.f[0] = 1.0;
  p.i[0] = 1;
  if (K == Op::kAdd || K == Op::kSub) {
    const tsr_scalar alpha = scalar_arg(*call, 2, "alpha");
    p.f[0] = scalar_double(alpha);
    p.i[0] = scalar_int(alpha);
  }
  const tsr_tensor_desc* descs[3] = {&out, &a, &b};
  run(context, *call, p, descs);
}

}  // namespace

void add_copy_fill_arith_kernels(KernelList& out) {
  out.push_back(
      make_entry(sdk::schema::kCopy, {kRealDtypes, kRealDtypes}, sdk::trampoline<copy_kernel>));
  out.push_back(make_entry(sdk::schema::kFill, {kRealDtypes}, sdk::trampoline<fill_kernel>));
  out.push_back(make_entry(sdk::schema::kAdd, {kRealDtypes, kRealDtypes},
                           sdk::trampoline<arith_kernel<Op::kAdd>>));
  out.push_back(make_entry(sdk::schema::kSub, {kNumericDtypes, kNumericDtypes},
                           sdk::trampoline<arith_kernel<Op::kSub>>));
  out.push_back(make_entry(sdk::schema::kMul, {kRealDtypes, kRealDtypes},
                           sdk::trampoline<arith_kernel<Op::kMul>>));
  out.push_back(make_entry(sdk::schema::kDiv, {kFloatingDtypes, kFloatingDtypes},
                           sdk::trampoline<arith_kernel<Op::kDiv>>));
}

}  // namespace tessera::vulkan
