// iota.cu - _iota_ over any strides (the CPU plugin's factory/iota.cpp,
// restated as functors): one work item per element, start + i * step, or
// end - (n-1-i) * step from n / 2 on when `end` is given; integer outputs
// with integral scalars in wrapping int64, everything else in double.
#include <cstdint>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"

namespace tessera::gpu {
namespace {

TSR_HD inline int64_t saturate_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// The CPU's from_double: floats round once; integers truncate, saturate at
// the int64 range, then wrap to the width.
template <class T>
TSR_HD inline T iota_from_double(double v) {
  if constexpr (is_reduced_float_v<T>) {
    return T(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(saturate_to_int64(v));
  }
}

template <class T>
struct IotaIntOp {
  char* out;
  Indexer<1> ix;
  uint64_t start, step, end;
  int64_t last, mirror_from;
  TSR_HD void operator()(int64_t i) const {
    const uint64_t v = i < mirror_from ? start + static_cast<uint64_t>(i) * step
                                       : end - static_cast<uint64_t>(last - i) * step;
    *reinterpret_cast<T*>(out + ix.offset(0, i)) = static_cast<T>(static_cast<int64_t>(v));
  }
};

template <class T>
struct IotaRealOp {
  char* out;
  Indexer<1> ix;
  double start, step, end;
  int64_t last, mirror_from;
  TSR_HD void operator()(int64_t i) const {
    double v;
    if (i < mirror_from) {
      const double offset = static_cast<double>(i) * step;
      v = start + offset;
    } else {
      const double offset = static_cast<double>(last - i) * step;
      v = end - offset;
    }
    *reinterpret_cast<T*>(out + ix.offset(0, i)) = iota_from_double<T>(v);
  }
};

bool integral_kind(const tsr_scalar& s) { return s.kind == TSR_BOOL || s.kind == TSR_INT64; }

tsr_status* iota_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_scalar start = scalar_arg(*call, 1, "start");
    const tsr_scalar step = scalar_arg(*call, 2, "step");
    const tsr_scalar* end = optional_scalar_arg(*call, 3, "end");
    for (const tsr_scalar* s : {&start, &step, end}) {
      if (s != nullptr && s->kind == TSR_COMPLEX128)
        sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: start, step and end must be real, not complex",
                          call->op_name);
    }
    if (((kNumericDtypes >> out.dtype) & 1) == 0) unsupported_dtype(call->op_name, out.dtype);
    const tsr_tensor_desc* descs[1] = {&out};
    const Indexer<1> ix = make_indexer<1>(descs);
    const int64_t n = ix.numel;
    if (n == 0) return;
    const int64_t mirror_from = end != nullptr ? n / 2 : n;
    const bool integer_math = ((kFloatingDtypes >> out.dtype) & 1) == 0 && integral_kind(start) &&
                              integral_kind(step) && (end == nullptr || integral_kind(*end));
    TSR_GPU_DISPATCH(out.dtype, "_iota_", T, {
      if constexpr (is_integral_v<T>) {
        if (integer_math) {
          parallel_for(exec, n,
                       IotaIntOp<T>{data_of(out), ix, static_cast<uint64_t>(start.v.i),
                                    static_cast<uint64_t>(step.v.i),
                                    static_cast<uint64_t>(end != nullptr ? end->v.i : 0), n - 1,
                                    mirror_from},
                       "_iota_");
          return;
        }
      }
      if constexpr (!std::is_same_v<T, bool>) {
        parallel_for(exec, n,
                     IotaRealOp<T>{data_of(out), ix, scalar_double(start), scalar_double(step),
                                   end != nullptr ? scalar_double(*end) : 0.0, n - 1, mirror_from},
                     "_iota_");
      }
    });
  });
}

}  // namespace

void add_iota_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kIota, {kNumericDtypes}, iota_kernel));
}

}  // namespace tessera::gpu
