// softmax.cu - fused _softmax and _log_softmax (floating dtypes, any
// strides), with the CPU plugin's semantics (plugins/cpu/src/reduction/
// softmax.cpp): one work item per line along `dim`: m = max (NaN sticky), the
// sum of exp(x - m) in float64, then exp(x - m) / sum or x - m - log(sum);
// computed in float32 (float64 for float64 inputs), rounded once (into
// float32 when half_to_float). A NaN or infinite maximum makes the line NaN.
// Device builds (TSR_DEVICE_COMPILER) run long lines (>= kRowMinLength
// elements, contiguous along dim) with one block of kRowThreads threads per
// line and shared-memory tree reductions instead (reduction/lines.hpp); the
// same arithmetic in another order. That path cannot run in the host
// emulation.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"
#include "reduction/lines.hpp"

namespace tessera::gpu {
namespace {

template <bool Log, class T, class O>
struct SoftmaxOp {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const char* in;
  char* out;
  Lines<2> l;
  TSR_HD void operator()(int64_t i) const {
    int64_t off[2];
    l.ix.offsets(i, off);
    const char* x = in + off[0];
    char* y = out + off[1];
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t k = 0; k < l.n; ++k) {
      const C v = static_cast<C>(*reinterpret_cast<const T*>(x + k * l.step[0]));
      m = (v > m || v != v) ? v : m;
    }
    double s = 0;
    for (int64_t k = 0; k < l.n; ++k) {
      const C v = static_cast<C>(*reinterpret_cast<const T*>(x + k * l.step[0]));
      s += static_cast<double>(exp_of(v - m));
    }
    const C shift = Log ? m + static_cast<C>(log_of(s)) : static_cast<C>(1.0 / s);
    for (int64_t k = 0; k < l.n; ++k) {
      const C v = static_cast<C>(*reinterpret_cast<const T*>(x + k * l.step[0]));
      const C r = Log ? v - shift : exp_of(v - m) * shift;
      *reinterpret_cast<O*>(y + k * l.step[1]) = convert<O>(r);
    }
  }
};

#if TSR_DEVICE_COMPILER
// Device-only: one block of kRowThreads threads per long line (lines.hpp).
template <bool Log, class T, class O>
__global__ void softmax_rows_kernel(SoftmaxOp<Log, T, O> op) {
  using C = typename SoftmaxOp<Log, T, O>::C;
  __shared__ double shm[kRowThreads];
  const int64_t n = op.l.n;
  for (int64_t line = blockIdx.x; line < op.l.ix.numel; line += gridDim.x) {
    int64_t off[2];
    op.l.ix.offsets(line, off);
    const char* x = op.in + off[0];
    char* y = op.out + off[1];
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t k = threadIdx.x; k < n; k += kRowThreads) {
      const C v = static_cast<C>(*reinterpret_cast<const T*>(x + k * op.l.step[0]));
      m = (v > m || v != v) ? v : m;
    }
    m = static_cast<C>(block_reduce(static_cast<double>(m), shm, MaxSticky{}));
    double s = 0;
    for (int64_t k = threadIdx.x; k < n; k += kRowThreads) {
      const C v = static_cast<C>(*reinterpret_cast<const T*>(x + k * op.l.step[0]));
      s += static_cast<double>(exp_of(v - m));
    }
    s = block_reduce(s, shm, Plus{});
    const C shift = Log ? m + static_cast<C>(log_of(s)) : static_cast<C>(1.0 / s);
    for (int64_t k = threadIdx.x; k < n; k += kRowThreads) {
      const C v = static_cast<C>(*reinterpret_cast<const T*>(x + k * op.l.step[0]));
      const C r = Log ? v - shift : exp_of(v - m) * shift;
      *reinterpret_cast<O*>(y + k * op.l.step[1]) = convert<O>(r);
    }
  }
}

#endif  // TSR_DEVICE_COMPILER

// Runs a softmax over its lines: the functor per line, or (device builds)
// one block per long contiguous line.
template <bool Log, class T, class O>
void run_softmax(const Exec& exec, const SoftmaxOp<Log, T, O>& op, const char* name) {
#if TSR_DEVICE_COMPILER
  if (op.l.n >= kRowMinLength && op.l.step[0] == static_cast<int64_t>(sizeof(T))) {
    softmax_rows_kernel<Log, T, O>
        <<<row_blocks(exec, op.l.ix.numel), kRowThreads, 0, native_stream(exec)>>>(op);
    check_launch(name);
    return;
  }
#endif
  parallel_for(exec, op.l.ix.numel, op, name);
}

template <bool Log>
tsr_status* softmax_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const char* name = Log ? "_log_softmax" : "_softmax";
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const int dim = resolved_dim(*call, 1, self.ndim);
    const bool half_to_float = bool_arg(*call, 2, "half_to_float");
    const tsr_tensor_desc& out = out_arg(*call, 0);
    if (!sdk::is_floating_dtype(self.dtype)) unsupported_dtype(name, self.dtype);
    const bool reduced = self.dtype == TSR_FLOAT16 || self.dtype == TSR_BFLOAT16;
    if (half_to_float && !reduced)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: half_to_float needs a float16 or bfloat16 input, got %s",
                        call->op_name, sdk::dtype_name(self.dtype));
    sdk::check_dtype(*call, out, "out", half_to_float ? TSR_FLOAT32 : self.dtype);
    sdk::check_same_sizes(*call, out, "out", self, "self");
    const tsr_tensor_desc* descs[2] = {&self, &out};
    const Lines<2> l = make_lines<2>(descs, dim);
    if (l.ix.numel == 0 || l.n == 0) return;
    TSR_GPU_DISPATCH(self.dtype, name, T, {
      if constexpr (is_floating_v<T>) {
        if (half_to_float) {
          if constexpr (is_reduced_float_v<T>)
            run_softmax(exec, SoftmaxOp<Log, T, float>{data_of(self), data_of(out), l}, name);
        } else {
          run_softmax(exec, SoftmaxOp<Log, T, T>{data_of(self), data_of(out), l}, name);
        }
      }
    });
  });
}

}  // namespace

void add_softmax_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kSoftmax, {kFloatingDtypes}, softmax_kernel<false>));
  out.push_back(make_entry(sdk::schema::kLogSoftmax, {kFloatingDtypes}, softmax_kernel<true>));
}

}  // namespace tessera::gpu
