// pointwise_strided.glsl - the generic strided pointwise kernel's parameter
// block and body, shared by pointwise_strided.comp (one op per dispatch) and
// pointwise_strided_batch.comp (a batch of small ops in one dispatch; Note
// [Small-op batches], kernels.hpp).
//
// fill, copy (any dtype pair) and the arithmetic primitives, over tensors of
// any dtype, ndim <= 8 and any strides (0 for broadcast): the caller's
// invocation handles elements first, first + threads, ... of the output in
// row-major order, unravels the element's index over `sizes` and reaches
// each operand at address + sum(index_d * stride_d) * element size through
// buffer references (no descriptors, no maxStorageBufferRange bound). Values
// are computed in double for float64 outputs, in float for the other
// floating dtypes (as PyTorch computes float16/bfloat16) and in int64 for
// integers and bool, then stored with one rounding (floats, round to nearest
// even) or two's complement wrap.
//
// Params' layout must match pointwise/copy_fill_arith.cpp's struct Params. Include
// this file twice: first with ELEMENTWISE_PARAMS defined (the constants and
// Params), then, after declaring the uniform block and defining
//   p            the Params to run, named in uniform memory (not a copy:
//                lavapipe reads uniform data with scalar loads, but a local
//                copy indexed by loop counters lives in per-invocation memory
//                it reaches one SIMD lane at a time),
//   ELEM_OP      its op code (a constant where the variant fixes it), and
//   ELEM_DTYPES  the dtypes of t[0..2], 8 bits each, or -1: read from p,
// without it (the body, pointwise_strided_run).
#ifdef ELEMENTWISE_PARAMS
// op codes (pointwise/copy_fill_arith.cpp: enum class Op)
const int OP_FILL = 0, OP_COPY = 1, OP_ADD = 2, OP_SUB = 3, OP_MUL = 4, OP_DIV = 5;

struct Params {
  int64_t numel;
  int ndim;
  int op;
  int noperands;  // out + inputs
  int pad_;
  int64_t sizes[8];
  Operand t[4];  // t[0] the output, t[1..] the inputs
  double f[2];   // scalars: alpha (floating), ...
  int64_t i[2];  // scalars: alpha (integer), fill bits, ...
};

#else
void pointwise_strided_run(uint64_t first, uint64_t threads) {
  const bool spec_dtypes = ELEM_DTYPES >= 0;
  const int out_dtype = spec_dtypes ? ELEM_DTYPES & 255 : p.t[0].dtype;
  const int out_size = element_size(out_dtype);
  const bool small = p.numel <= 0xffffffffL;
  for (uint64_t e = first; e < uint64_t(p.numel); e += threads) {
    // Element offsets of the output and the (up to two) inputs: scalars, not
    // an array - lavapipe keeps a dynamically indexed local array in memory
    // it reaches one SIMD lane at a time.
    int64_t off0 = 0L, off1 = 0L, off2 = 0L;
    // Unravel e over sizes (the host coalesced the dims, so a contiguous
    // operand set has ndim 1): one division per dimension but the outermost,
    // in 32 bits when the element count allows (64-bit division is a
    // library call on most devices, lavapipe included).
    int64_t rest = int64_t(e);
    if (small) {
      uint r = uint(e);
      for (int d = p.ndim - 1; d > 0; --d) {
        const uint s = uint(p.sizes[d]);
        const uint q = r / s;
        const int64_t idx = int64_t(r - q * s);
        r = q;
        off0 += idx * p.t[0].strides[d];
        off1 += idx * p.t[1].strides[d];
        off2 += idx * p.t[2].strides[d];
      }
      rest = int64_t(r);
    } else {
      for (int d = p.ndim - 1; d > 0; --d) {
        const int64_t s = p.sizes[d];
        const int64_t q = rest / s;
        const int64_t idx = rest - q * s;
        rest = q;
        off0 += idx * p.t[0].strides[d];
        off1 += idx * p.t[1].strides[d];
        off2 += idx * p.t[2].strides[d];
      }
    }
    if (p.ndim > 0) {
      off0 += rest * p.t[0].strides[0];
      off1 += rest * p.t[1].strides[0];
      off2 += rest * p.t[2].strides[0];
    }
    const uint64_t out_addr = p.t[0].address + uint64_t(off0 * out_size);
    if (ELEM_OP == OP_FILL) {
      store_bits(out_addr, out_size, uint64_t(p.i[1]));
      continue;
    }
    const int a_dtype = spec_dtypes ? (ELEM_DTYPES >> 8) & 255 : p.t[1].dtype;
    const uint64_t a = load_bits(p.t[1].address + uint64_t(off1 * element_size(a_dtype)),
                                 element_size(a_dtype));
    uint64_t result;
    if (ELEM_OP == OP_COPY) {
      if (out_dtype == a_dtype) {
        result = a;  // bits, as they are: NaN payloads, signaling NaNs, -0 survive
      } else if (is_float(out_dtype) || is_float(a_dtype)) {
        // float -> float16/bfloat16/float32 rounds through float; every
        // other pair (to integers and bool too) goes through double.
        if (!is_float(out_dtype) || out_dtype == FLOAT64 || a_dtype == FLOAT64 ||
            !is_float(a_dtype))
          result = from_double(to_double(a, a_dtype), out_dtype);
        else
          result = from_float(float(to_double(a, a_dtype)), out_dtype);
      } else {
        result = from_int(to_int(a, a_dtype), out_dtype);
      }
    } else {
      const int b_dtype = spec_dtypes ? (ELEM_DTYPES >> 16) & 255 : p.t[2].dtype;
      const uint64_t b = load_bits(p.t[2].address + uint64_t(off2 * element_size(b_dtype)),
                                   element_size(b_dtype));
      if (out_dtype == FLOAT64) {
        const double x = to_double(a, a_dtype), y = to_double(b, b_dtype), alpha = p.f[0];
        double r = 0.0LF;
        if (ELEM_OP == OP_ADD) r = x + alpha * y;
        else if (ELEM_OP == OP_SUB) r = x - alpha * y;
        else if (ELEM_OP == OP_MUL) r = x * y;
        else r = x / y;
        result = from_double(r, out_dtype);
      } else if (is_float(out_dtype)) {
        const float x = float(to_double(a, a_dtype)), y = float(to_double(b, b_dtype));
        const float alpha = float(p.f[0]);
        float r = 0.0;
        if (ELEM_OP == OP_ADD) r = x + alpha * y;
        else if (ELEM_OP == OP_SUB) r = x - alpha * y;
        else if (ELEM_OP == OP_MUL) r = x * y;
        else r = x / y;
        result = from_float(r, out_dtype);
      } else {
        const int64_t x = to_int(a, a_dtype), y = to_int(b, b_dtype), alpha = p.i[0];
        int64_t r = 0L;
        if (ELEM_OP == OP_ADD) r = x + alpha * y;
        else if (ELEM_OP == OP_SUB) r = x - alpha * y;
        else r = x * y;
        if (out_dtype == BOOL) {
          // bool arithmetic is logical: add = or, mul = and
          r = ELEM_OP == OP_MUL ? ((x != 0L && y != 0L) ? 1L : 0L) : ((x != 0L || y != 0L) ? 1L : 0L);
        }
        result = from_int(r, out_dtype);
      }
    }
    store_bits(out_addr, out_size, result);
  }
}
#endif
