// kernels_elementwise.cpp - copy_, fill_.Scalar and add/sub/mul/div.Tensor:
// shaders/elementwise.comp over any dtype (pair), strides and broadcast.
#include <cstring>

#include "kernel_util.hpp"
#include "tessera/sdk/half.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kElementwiseSpirv[] = {
#include "elementwise.spv.inc"
};
const Shader kElementwise{"elementwise", kElementwiseSpirv, sizeof kElementwiseSpirv};

// Codes of elementwise.comp (its OP_* constants).
enum class Op : int32_t { kFill = 0, kCopy = 1, kAdd = 2, kSub = 3, kMul = 4, kDiv = 5 };

// elementwise.comp's parameter block (std430, 440 bytes).
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

Params params_over(const tsr_tensor_desc& out, Op op) {
  Params p;
  p.op = static_cast<int32_t>(op);
  p.ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) p.sizes[d] = out.sizes[d];
  p.numel = numel_of(out);
  p.t[0] = operand(out, out.ndim);
  p.noperands = 1;
  return p;
}

void run(tsr_plugin_context* context, const tsr_kernel_call& call, const Params& p) {
  kernels_of(context, call)
      .dispatch(call.stream, kElementwise, &p, sizeof p, static_cast<uint64_t>(p.numel));
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

tsr_status* fill_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& out = call->outs[0];
    Params p = params_over(out, Op::kFill);
    p.i[1] = static_cast<int64_t>(scalar_bits(scalar_arg(*call, 1), out.dtype));
    run(context, *call, p);
  });
}

tsr_status* copy_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& out = call->outs[0];
    Params p = params_over(out, Op::kCopy);
    p.t[1] = operand(tensor_arg(*call, 1), out.ndim);
    p.noperands = 2;
    run(context, *call, p);
  });
}

template <Op K>
tsr_status* arith_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& out = call->outs[0];
    Params p = params_over(out, K);
    p.t[1] = operand(tensor_arg(*call, 0), out.ndim);
    p.t[2] = operand(tensor_arg(*call, 1), out.ndim);
    p.noperands = 3;
    p.f[0] = 1.0;
    p.i[0] = 1;
    if (K == Op::kAdd || K == Op::kSub) {
      const tsr_scalar alpha = scalar_arg(*call, 2);
      p.f[0] = scalar_double(alpha);
      p.i[0] = scalar_int(alpha);
    }
    run(context, *call, p);
  });
}

}  // namespace

void add_elementwise_kernels(KernelList& out) {
  out.push_back(
      make_entry("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
                 {kRealDtypes, kRealDtypes}, copy_kernel));
  out.push_back(make_entry("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
                           {kRealDtypes}, fill_kernel));
  out.push_back(make_entry("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                           {kRealDtypes, kRealDtypes}, arith_kernel<Op::kAdd>));
  out.push_back(make_entry("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                           {kNumericDtypes, kNumericDtypes}, arith_kernel<Op::kSub>));
  out.push_back(make_entry("mul.Tensor(Tensor self, Tensor other) -> Tensor",
                           {kRealDtypes, kRealDtypes}, arith_kernel<Op::kMul>));
  out.push_back(make_entry("div.Tensor(Tensor self, Tensor other) -> Tensor",
                           {kFloatingDtypes, kFloatingDtypes}, arith_kernel<Op::kDiv>));
}

}  // namespace tessera::vulkan
