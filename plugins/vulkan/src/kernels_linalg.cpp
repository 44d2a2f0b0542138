// kernels_linalg.cpp - mm and bmm: shaders/linalg.comp over any strides
// (transposed inputs included) and every real non-bool dtype. float32 and
// float64 use the 4x4 register-blocked variants (accumulating in float /
// double); the other dtypes one invocation per output element (accumulating
// in float for float16 and bfloat16, int64 with wrap for integers). (A
// shared-memory 64x64 tiled float32 variant was measured ~1.45x slower than
// the register-blocked one on lavapipe, so it is not used.)
#include "kernel_util.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kLinalgSpirv[] = {
#include "linalg.spv.inc"
};
const Shader kLinalg{"linalg", kLinalgSpirv, sizeof kLinalgSpirv};

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

template <bool Batched>
tsr_status* matmul_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const int rank = Batched ? 3 : 2;
    const tsr_tensor_desc& a = tensor_arg(*call, 0);
    const tsr_tensor_desc& b = tensor_arg(*call, 1);
    if (call->nouts < 1)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: no output", call->op_name);
    const tsr_tensor_desc& out = call->outs[0];
    check_rank(*call, a, rank, "self");
    check_rank(*call, b, rank, "mat2");
    check_rank(*call, out, rank, "out");
    if (((kMatmulDtypes >> out.dtype) & 1) == 0 || a.dtype != out.dtype || b.dtype != out.dtype)
      sdk::throw_status(TSR_UNIMPLEMENTED, "vulkan plugin %s: dtype %d is not supported",
                        call->op_name, static_cast<int>(out.dtype));
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
    uint64_t invocations = elements;
    if (out.dtype == TSR_FLOAT32 || out.dtype == TSR_FLOAT64) {
      p.tile = out.dtype == TSR_FLOAT32 ? 4 : 5;
      invocations = static_cast<uint64_t>(p.batch * ((p.m + 3) / 4) * ((p.n + 3) / 4));
    }
    kernels_of(context, *call).dispatch(call->stream, kLinalg, &p, sizeof p, invocations);
  });
}

}  // namespace

void add_linalg_kernels(KernelList& out) {
  out.push_back(make_entry("mm(Tensor self, Tensor mat2) -> Tensor", {kMatmulDtypes, kMatmulDtypes},
                           matmul_kernel<false>));
  out.push_back(make_entry("bmm(Tensor self, Tensor mat2) -> Tensor",
                           {kMatmulDtypes, kMatmulDtypes}, matmul_kernel<true>));
}

}  // namespace tessera::vulkan
