// sort_search.comp - searchsorted.Tensor: one invocation per value of self,
// a binary search over its boundary list; any strides, ndim <= 8.
//
// The boundary list of the value at coordinates c is seq's line at c's
// leading coordinates (seq's strides there are 0 when seq is 1-d), `n`
// elements `seq_along` apart. The result is the first i with
//   right == 0: !(b[i] >= v)  is false  (lower bound)
//   right != 0: !(b[i] > v)   is false  (upper bound)
// comparing as the CPU plugin does (floating dtypes as double, exact for every
// one of them; integers as int64), so a NaN value lands after every boundary
// and a NaN boundary counts as below every value. NaNs are recognised by
// their bits, so the comparisons below only ever see ordered values.
// Written into out as int32 or int64 (out's dtype).
#version 460
#include "common.glsl"

// The parameters, copied into the invocation once (main): on lavapipe every
// load through a buffer reference is a loop over the SIMD lanes, so fields
// are not re-read from the block inside loops.
struct Args {
  int64_t numel;      // values (self's elements)
  int64_t n;          // boundaries per list
  int64_t seq_along;  // seq's stride along its last dim
  int ndim;           // self's dims (a 0-d self is given as [1])
  int right;
  int64_t sizes[8];  // self's
  Operand self;
  Operand result;  // int32 or int64, self's shape
  Operand seq;  // strides over self's leading dims (0 for a 1-d seq)
};

struct Params {
  Args args;
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// Whether the bits of floating `dtype` are a NaN (decided on the bits: no
// reliance on how the driver treats NaN in comparisons).
bool nan_bits(uint64_t bits, int dtype) {
  if (dtype == FLOAT64) return (bits & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL;
  if (dtype == FLOAT32) return (bits & 0x7fffffffUL) > 0x7f800000UL;
  if (dtype == FLOAT16) return (bits & 0x7fffUL) > 0x7c00UL;
  if (dtype == BFLOAT16) return (bits & 0x7fffUL) > 0x7f80UL;
  return false;
}

void main() {
  const Args p = pc.params.args;
  const int dtype = p.self.dtype, size = element_size(dtype);
  const bool floating = is_float(dtype);
  const int osize = element_size(p.result.dtype);
  const uint64_t threads = invocations();
  for (uint64_t u = global_index(); u < uint64_t(p.numel); u += threads) {
    int64_t s = 0L, o = 0L, b = 0L;
    int64_t rest = int64_t(u);
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t c = rest % p.sizes[d];
      rest /= p.sizes[d];
      s += c * p.self.strides[d];
      o += c * p.result.strides[d];
      if (d < p.ndim - 1) b += c * p.seq.strides[d];
    }
    const uint64_t vbits = load_bits(element_address(p.self, s), size);
    const double vf = floating ? to_double(vbits, dtype) : 0.0LF;
    const int64_t vi = floating ? 0L : to_int(vbits, dtype);
    // A NaN value compares false with every boundary: it goes right always.
    int64_t lo = nan_bits(vbits, dtype) ? p.n : 0L, hi = p.n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2L;
      const uint64_t mbits = load_bits(element_address(p.seq, b + mid * p.seq_along), size);
      bool go_right;
      if (floating) {
        // A NaN boundary compares false too: go right.
        const double m = to_double(mbits, dtype);
        go_right = nan_bits(mbits, dtype) || (p.right != 0 ? m <= vf : m < vf);
      } else {
        const int64_t m = to_int(mbits, dtype);
        go_right = p.right != 0 ? !(m > vi) : !(m >= vi);
      }
      if (go_right) lo = mid + 1L; else hi = mid;
    }
    store_bits(element_address(p.result, o), osize, uint64_t(lo));
  }
}
