// index.comp - _iota_, gather and _scatter_ (mode), any strides, ndim <= 8.
//
//  - IOTA: element e of t[0] in row-major order (e < numel) becomes
//    start + e * step, or end - (numel - 1 - e) * step for e >= mirror_from
//    (linspace's symmetric form). int64 arithmetic with wrap when
//    integer_math, else double converted once (to integers: truncation
//    toward zero saturating at the int64 range, then modulo the width).
//  - GATHER: t[0] = out, t[1] = index (int64), t[2] = self; invocation per
//    element of index's shape (`sizes`): out[p] = self[p, p[dim] = index[p]],
//    raw bits.
//  - SCATTER: t[0] = self, t[1] = index, t[2] = src; invocation per line of
//    index (every position sharing the coordinates other than `dim`): it
//    walks the line in order, so duplicates are combined serially in index
//    order (ADD/MUL/AMAX/AMIN exact and deterministic, ASSIGN keeps the
//    last), and distinct lines never write the same element of self.
// Bounds: an index outside [0, limit) is not used; an invocation that sees
// one stops (its line, for scatter) and records it into the flag block
// (filled with 0xff bytes by the host): `unset` becomes 0 and `value` the
// bad index for the first to get there (atomic compare-and-swap), and
// `position` the lowest bad position in index's row-major order (atomicMin,
// clamped to 0xfffffffe) so the host can report the same index as the CPU
// plugin. The host reads the flag after the dispatch.
#version 460
#include "common.glsl"

const int MODE_IOTA = 0, MODE_GATHER = 1, MODE_SCATTER = 2;
const int SC_ASSIGN = 0, SC_ADD = 1, SC_MUL = 2, SC_AMAX = 3, SC_AMIN = 4;

struct Params {
  int64_t numel;  // iota: elements; gather: index elements; scatter: lines
  int ndim;
  int mode;
  int op;   // scatter code
  int dim;  // gather / scatter
  int64_t sizes[8];  // iota: out's; gather / scatter: index's
  int64_t limit;     // self.size(dim)
  int64_t mirror_from;
  int64_t istart, istep, iend;
  double fstart, fstep, fend;
  int integer_math;
  int pad_;
  uint64_t flag;  // address of the Flag block
  Operand t[3];
};

layout(buffer_reference, std430, buffer_reference_align = 8) buffer Flag {
  uint unset;     // 0xffffffff until a bad index is seen, then 0
  uint position;  // lowest bad position (row-major over index), clamped
  int64_t value;  // the bad index the first reporter saw
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

void report(Params p, int64_t position, int64_t value) {
  atomicMin(Flag(p.flag).position, uint(min(position, 0xfffffffeL)));
  if (atomicCompSwap(Flag(p.flag).unset, 0xffffffffu, 0u) == 0xffffffffu)
    Flag(p.flag).value = value;
}

uint64_t at(Operand t, int64_t off) {
  return t.address + uint64_t(off * int64_t(element_size(t.dtype)));
}

bool in_range(int64_t i, int64_t limit) { return uint64_t(i) < uint64_t(limit); }

uint64_t iota_value(Params p, int64_t i, int dtype) {
  const int64_t last = p.numel - 1L;
  if (p.integer_math != 0) {
    const int64_t v = i < p.mirror_from ? p.istart + i * p.istep : p.iend - (last - i) * p.istep;
    return from_int(v, dtype);
  }
  double v;
  if (i < p.mirror_from)
    v = p.fstart + double(i) * p.fstep;
  else
    v = p.fend - double(last - i) * p.fstep;
  if (is_float(dtype)) return from_double(v, dtype);
  int64_t w;
  if (isnan(v))
    w = 0L;
  else if (v >= 9223372036854775808.0LF)
    w = 0x7fffffffffffffffL;
  else if (v < -9223372036854775808.0LF)
    w = int64_t(0x8000000000000000UL);
  else
    w = int64_t(v);
  return uint64_t(w);  // store_bits keeps the low bytes
}

void iota(Params p) {
  const int dtype = p.t[0].dtype;
  const int size = element_size(dtype);
  const uint64_t threads = invocations();
  for (uint64_t e = global_index(); e < uint64_t(p.numel); e += threads) {
    int64_t off = 0L;
    int64_t rest = int64_t(e);
    for (int d = p.ndim - 1; d >= 0; --d) {
      off += (rest % p.sizes[d]) * p.t[0].strides[d];
      rest /= p.sizes[d];
    }
    store_bits(at(p.t[0], off), size, iota_value(p, int64_t(e), dtype));
  }
}

void gather(Params p) {
  const int size = element_size(p.t[0].dtype);
  const uint64_t threads = invocations();
  for (uint64_t e = global_index(); e < uint64_t(p.numel); e += threads) {
    int64_t o = 0L, x = 0L, s = 0L;
    int64_t rest = int64_t(e);
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t c = rest % p.sizes[d];
      rest /= p.sizes[d];
      o += c * p.t[0].strides[d];
      x += c * p.t[1].strides[d];
      if (d != p.dim) s += c * p.t[2].strides[d];
    }
    const int64_t i = int64_t(B64(at(p.t[1], x)).v);
    if (!in_range(i, p.limit)) {
      report(p, int64_t(e), i);
      continue;
    }
    s += i * p.t[2].strides[p.dim];
    store_bits(at(p.t[0], o), size, load_bits(at(p.t[2], s), size));
  }
}

// self op= src, as bits of `dtype`.
uint64_t combine(int op, uint64_t a, uint64_t b, int dtype) {
  if (dtype == FLOAT64) {
    const double x = uint64BitsToDouble(a), y = uint64BitsToDouble(b);
    if (op == SC_ADD) return doubleBitsToUint64(x + y);
    if (op == SC_MUL) return doubleBitsToUint64(x * y);
    if (op == SC_AMAX) return (x > y || isnan(x)) ? a : b;
    return (x < y || isnan(x)) ? a : b;
  }
  if (is_float(dtype)) {
    const float x = float(to_double(a, dtype)), y = float(to_double(b, dtype));
    if (op == SC_ADD) return from_float(x + y, dtype);
    if (op == SC_MUL) return from_float(x * y, dtype);
    if (op == SC_AMAX) return (x > y || isnan(x)) ? a : b;
    return (x < y || isnan(x)) ? a : b;
  }
  const int64_t x = to_int(a, dtype), y = to_int(b, dtype);
  if (op == SC_ADD) return from_int(x + y, dtype);
  if (op == SC_MUL) return from_int(x * y, dtype);
  if (op == SC_AMAX) return x < y ? b : a;
  return y < x ? b : a;
}

void scatter(Params p) {
  const int dtype = p.t[0].dtype;
  const int size = element_size(dtype);
  const uint64_t threads = invocations();
  const int64_t len = p.sizes[p.dim];
  for (uint64_t e = global_index(); e < uint64_t(p.numel); e += threads) {
    int64_t o = 0L, x = 0L, s = 0L;
    int64_t rest = int64_t(e);
    int64_t pos = 0L, scale = 1L, dim_scale = 1L;  // row-major position over index
    for (int d = p.ndim - 1; d >= 0; --d) {
      if (d == p.dim) {
        dim_scale = scale;
        scale *= p.sizes[d];
        continue;
      }
      const int64_t c = rest % p.sizes[d];
      rest /= p.sizes[d];
      o += c * p.t[0].strides[d];
      x += c * p.t[1].strides[d];
      s += c * p.t[2].strides[d];
      pos += c * scale;
      scale *= p.sizes[d];
    }
    for (int64_t j = 0L; j < len; ++j) {
      const int64_t i = int64_t(B64(at(p.t[1], x + j * p.t[1].strides[p.dim])).v);
      if (!in_range(i, p.limit)) {
        report(p, pos + j * dim_scale, i);
        break;
      }
      const uint64_t dst = at(p.t[0], o + i * p.t[0].strides[p.dim]);
      const uint64_t b = load_bits(at(p.t[2], s + j * p.t[2].strides[p.dim]), size);
      if (p.op == SC_ASSIGN)
        store_bits(dst, size, b);
      else
        store_bits(dst, size, combine(p.op, load_bits(dst, size), b, dtype));
    }
  }
}

// The mode as a specialization constant (Kernels::Spec, always set by the
// host): lavapipe runs both sides of a branch on a run-time value under lane
// masks, so a run-time choice ran all three loops for every element.
layout(constant_id = 1) const int SPEC_MODE = MODE_IOTA;

void main() {
  Params p = pc.params;
  if (SPEC_MODE == MODE_IOTA)
    iota(p);
  else if (SPEC_MODE == MODE_GATHER)
    gather(p);
  else
    scatter(p);
}
