// Dtype facts and PyTorch's type promotion rules.
//
// promote_types follows torch.promote_types exactly for our 12 dtypes (checked
// pair by pair against golden values in core/tests). ResultType follows
// at::native::result_type: operands are ranked dimensioned tensors > 0-d
// tensors > wrapped numbers (Python scalars), and a lower rank changes the
// result only when it is of a higher category (bool < integral < floating <
// complex).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/types.h"

namespace tsr {

constexpr tsr_dtype kDefaultFloat = TSR_FLOAT32;
constexpr tsr_dtype kDefaultComplex = TSR_COMPLEX64;

inline bool dtype_valid(int32_t d) { return d >= 0 && d < TSR_DTYPE_COUNT; }
inline size_t dtype_size(tsr_dtype d) {
  constexpr unsigned char kSizes[TSR_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return static_cast<unsigned>(d) < TSR_DTYPE_COUNT ? kSizes[d] : 0;
}
const char* dtype_name(tsr_dtype d);
inline bool is_complex(tsr_dtype d) { return d == TSR_COMPLEX64 || d == TSR_COMPLEX128; }
inline bool is_floating(tsr_dtype d) {
  return d == TSR_FLOAT16 || d == TSR_BFLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64;
}
inline bool is_integral(tsr_dtype d, bool include_bool) {
  return (d >= TSR_UINT8 && d <= TSR_INT64) || (include_bool && d == TSR_BOOL);
}
// 0 bool, 1 integral, 2 floating, 3 complex.
int dtype_category(tsr_dtype d);

tsr_dtype promote_types(tsr_dtype a, tsr_dtype b);
// PyTorch's canCast: whether a result of `from` may be written to `to`
// (no complex -> non-complex, no floating -> integral, no non-bool -> bool).
bool can_cast(tsr_dtype from, tsr_dtype to);
// The scalar kind of a dtype: TSR_BOOL, TSR_INT64, TSR_FLOAT64 or TSR_COMPLEX128.
tsr_dtype scalar_kind_of(tsr_dtype d);
tsr_dtype to_complex(tsr_dtype d);

// Accumulates operands into a result dtype (ResultTypeState).
class ResultType {
 public:
  void add_tensor(tsr_dtype dtype, int32_t ndim);
  // A Python-number-like scalar of kind TSR_BOOL/TSR_INT64/TSR_FLOAT64/TSR_COMPLEX128.
  void add_scalar(tsr_dtype kind);
  tsr_dtype result() const;

 private:
  static constexpr int32_t kNone = -1;
  int32_t dim_ = kNone, zero_ = kNone, wrapped_ = kNone;
};

}  // namespace tsr
