#include "tensor/dtype.h"

namespace tsr {

const char* dtype_name(tsr_dtype d) {
  switch (d) {
    case TSR_BOOL:
      return "bool";
    case TSR_UINT8:
      return "uint8";
    case TSR_INT8:
      return "int8";
    case TSR_INT16:
      return "int16";
    case TSR_INT32:
      return "int32";
    case TSR_INT64:
      return "int64";
    case TSR_FLOAT16:
      return "float16";
    case TSR_BFLOAT16:
      return "bfloat16";
    case TSR_FLOAT32:
      return "float32";
    case TSR_FLOAT64:
      return "float64";
    case TSR_COMPLEX64:
      return "complex64";
    case TSR_COMPLEX128:
      return "complex128";
    default:
      return "invalid";
  }
}

int dtype_category(tsr_dtype d) {
  if (d == TSR_BOOL) return 0;
  if (is_integral(d, false)) return 1;
  if (is_floating(d)) return 2;
  return 3;
}

tsr_dtype to_complex(tsr_dtype d) {
  if (d == TSR_FLOAT64 || d == TSR_COMPLEX128) return TSR_COMPLEX128;
  return TSR_COMPLEX64;
}

namespace {
// Rank of signed integers by width.
int int_rank(tsr_dtype d) {
  switch (d) {
    case TSR_INT8:
      return 1;
    case TSR_INT16:
      return 2;
    case TSR_INT32:
      return 3;
    case TSR_INT64:
      return 4;
    default:
      return 0;
  }
}
int float_rank(tsr_dtype d) {  // f16 and bf16 share rank 1 and meet at float32
  switch (d) {
    case TSR_FLOAT16:
    case TSR_BFLOAT16:
      return 1;
    case TSR_FLOAT32:
      return 2;
    case TSR_FLOAT64:
      return 3;
    default:
      return 0;
  }
}
}  // namespace

tsr_dtype promote_types(tsr_dtype a, tsr_dtype b) {
  if (a == b) return a;
  if (a == TSR_BOOL) return b;
  if (b == TSR_BOOL) return a;
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca == 1 && cb == 1) {
    if (a == TSR_UINT8 || b == TSR_UINT8) {
      tsr_dtype other = a == TSR_UINT8 ? b : a;
      return other == TSR_INT8 ? TSR_INT16 : other;  // uint8 fits in int16+
    }
    return int_rank(a) > int_rank(b) ? a : b;
  }
  if (ca == 3 || cb == 3) {
    // complex128 wins; complex64 with float64 becomes complex128.
    if (a == TSR_COMPLEX128 || b == TSR_COMPLEX128) return TSR_COMPLEX128;
    if (a == TSR_FLOAT64 || b == TSR_FLOAT64) return TSR_COMPLEX128;
    return TSR_COMPLEX64;
  }
  if (ca == 2 && cb == 2) {
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == rb) return TSR_FLOAT32;  // float16 with bfloat16
    return ra > rb ? a : b;
  }
  return ca == 2 ? a : b;  // integral with floating
}

bool can_cast(tsr_dtype from, tsr_dtype to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != TSR_BOOL && to == TSR_BOOL) return false;
  return true;
}

tsr_dtype scalar_kind_of(tsr_dtype d) {
  switch (dtype_category(d)) {
    case 0:
      return TSR_BOOL;
    case 1:
      return TSR_INT64;
    case 2:
      return TSR_FLOAT64;
    default:
      return TSR_COMPLEX128;
  }
}

namespace {
int32_t promote_skip_none(int32_t a, int32_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return promote_types(static_cast<tsr_dtype>(a), static_cast<tsr_dtype>(b));
}
int32_t combine_categories(int32_t higher, int32_t lower) {
  if (higher >= 0 && is_complex(static_cast<tsr_dtype>(higher))) return higher;
  if (lower >= 0 && is_complex(static_cast<tsr_dtype>(lower))) {
    if (higher >= 0 && is_floating(static_cast<tsr_dtype>(higher)))
      return to_complex(static_cast<tsr_dtype>(higher));
    return lower;
  }
  if (higher >= 0 && is_floating(static_cast<tsr_dtype>(higher))) return higher;
  if (higher == TSR_BOOL || (lower >= 0 && is_floating(static_cast<tsr_dtype>(lower))))
    return promote_skip_none(higher, lower);
  if (higher >= 0) return higher;
  return lower;
}
}  // namespace

void ResultType::add_tensor(tsr_dtype dtype, int32_t ndim) {
  if (ndim > 0)
    dim_ = promote_skip_none(dim_, dtype);
  else
    zero_ = promote_skip_none(zero_, dtype);
}

void ResultType::add_scalar(tsr_dtype kind) {
  tsr_dtype d = kind;
  if (kind == TSR_FLOAT64) d = kDefaultFloat;
  if (kind == TSR_COMPLEX128) d = kDefaultComplex;
  wrapped_ = promote_skip_none(wrapped_, d);
}

tsr_dtype ResultType::result() const {
  int32_t r = combine_categories(dim_, combine_categories(zero_, wrapped_));
  return r < 0 ? kDefaultFloat : static_cast<tsr_dtype>(r);
}

}  // namespace tsr
