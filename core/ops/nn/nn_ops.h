// Helpers of the nn family's decompositions (their op calls go through
// ops/shorthands.h): argument checks shared by the nn ops, shapes as
// vectors, filled tensors, and the fused-kernel call. Everything here throws tsr::Error; results
// are new references.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "ops/op_util.h"
#include "ops/shorthands.h"
#include "runtime/runtime.h"
#include "tensor/dtype.h"
#include "util/error.h"

namespace tsr::nn {

inline TensorRef to_dtype(const TensorRef& a, tsr_dtype d) { return cast(a.get(), d); }

// ---- small utilities -------------------------------------------------------
inline std::vector<int64_t> sizes_of(const TensorImpl& t) {
  return std::vector<int64_t>(t.sizes, t.sizes + t.ndim);
}
inline std::string shape_text(const TensorImpl& t) { return shape_str(t.ndim, t.sizes); }
inline std::string shape_text(const std::vector<int64_t>& s) {
  return shape_str(static_cast<int32_t>(s.size()), s.data());
}
// A new tensor of `sizes` like `like` (device) holding `value` everywhere.
inline TensorRef full(Runtime* rt, const TensorImpl& like, tsr_dtype dtype,
                      const std::vector<int64_t>& sizes, double value) {
  TensorRef t =
      new_tensor(rt, like.device(), dtype, static_cast<int32_t>(sizes.size()), sizes.data());
  fill_raw(t.get(), dtype == TSR_BOOL ? scalar_int(value != 0.0) : scalar_float(value));
  return t;
}
// float32 for float16/bfloat16 (reduced-precision inputs compute in float32),
// else the dtype itself.
inline tsr_dtype acc_dtype(tsr_dtype d) {
  return d == TSR_FLOAT16 || d == TSR_BFLOAT16 ? TSR_FLOAT32 : d;
}

// Throws unless `t` is a real floating tensor (argument `arg` of op `op`).
inline void check_floating(const OpDef& op, const TensorImpl& t, const char* arg) {
  if (!is_floating(t.dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' has dtype {}, but the op is only implemented for floating "
         "dtypes (float16, bfloat16, float32, float64); convert it with to()",
         op.name, arg, dtype_name(t.dtype));
}

// The reduction enum of the loss ops: 0 none, 1 mean, 2 sum.
enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };
inline Reduction check_reduction(const OpDef& op, int64_t r) {
  if (r < 0 || r > 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'reduction' = {} is not a valid reduction; use 0 (none), 1 (mean) "
         "or 2 (sum)",
         op.name, r);
  return static_cast<Reduction>(r);
}
// Applies `reduction` to an elementwise loss.
inline TensorRef reduce_loss(const TensorRef& loss, Reduction r) {
  if (r == kMean) return op::mean(loss);
  if (r == kSum) return op::sum(loss);
  return loss;
}

// Calls the fused kernel `k` of `op` with `args` (tensor values given as
// TensorImpl*, converted to descriptors here) writing `outs`.
inline void run_fused(const OpDef& op, const BoundKernel& k, DeviceRecord* dev,
                      std::vector<tsr_value> args, const std::vector<TensorImpl*>& outs) {
  std::vector<tsr_tensor_desc> descs;
  descs.reserve(args.size() + outs.size());
  for (tsr_value& v : args) {
    if (v.tag != TSR_VALUE_TENSOR) continue;
    descs.push_back(reinterpret_cast<TensorImpl*>(v.u.tensor)->desc());
    v.u.desc = &descs.back();
  }
  std::vector<tsr_tensor_desc> out_descs;
  for (TensorImpl* o : outs) out_descs.push_back(o->desc());
  invoke_kernel(op, k, dev, args.data(), static_cast<int32_t>(args.size()), out_descs.data(),
                static_cast<int32_t>(out_descs.size()));
}

}  // namespace tsr::nn
