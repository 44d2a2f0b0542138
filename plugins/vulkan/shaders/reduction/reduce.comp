// reduce.comp - the Vulkan plugin's reductions and scans: _reduce (SUM, PROD,
// MEAN, AMAX, AMIN, ANY, ALL over a dim list), _arg_reduce (ARGMAX, ARGMIN
// along one dim) and _scan (CUMSUM, CUMPROD, LOGCUMSUMEXP, CUMMAX, CUMMIN
// along one dim), over any real dtype, ndim <= 8 and any strides.
//
// Reductions (the host picks, Note [Reduction strategy], reduction/reduce.cpp):
//  - PHASE_WHOLE: one invocation per output element walks all of its
//    reduced elements (outputs enough to fill the device, short reductions);
//  - PHASE_PARTIAL then PHASE_MERGE: an output's reduced elements are dealt
//    to `chunks` invocations, chunk c taking elements c, c + chunks, ...
//    (neighbouring chunks read neighbouring elements), each writing a partial
//    result to scratch; then one invocation per output merges its chunks
//    (or, past kLaneIterations chunks, one workgroup per output: lane l
//    takes chunks l, l + 256, ... and the 256 results merge in shared
//    memory). No other mode uses shared memory or barriers.
// Each invocation accumulates in blocks of BLOCK elements (a block's result
// then joins the running one), so a float64 sum's rounding error grows with
// BLOCK + length / BLOCK rather than the length.
// Scans run one invocation per line. An output's index is unravelled over
// `sizes` (out's sizes in the keepdim layout: 1 on reduced dims / the
// scanned dim), giving the offsets of its first input element and of its
// output element; reduced element r is unravelled over `rsizes` (row-major)
// and reached through `rstrides`.
//
// Accumulation (abi/tessera/opcodes.h, as the CPU plugin):
//  - floating dtypes: sums, products and means in double; extremes compare
//    the exact values with NaN sticky; scans of float16/bfloat16 round the
//    running value to float after each step (as PyTorch accumulates them),
//    float32/float64 scans run in double; every output is rounded once;
//  - integers: int64, wrapping (two's complement) on overflow and on store;
//  - bool: SUM/AMAX (CUMSUM/CUMMAX) are a running or, PROD/AMIN (CUMPROD/
//    CUMMIN) a running and;
//  - MEAN of an empty reduction is NaN, SUM 0, PROD 1, ANY false, ALL true;
//  - ARGMAX/ARGMIN: the first index of the extreme value, the first NaN
//    winning over every number;
//  - LOGCUMSUMEXP: max + log1p(exp(min - max)) in double with this file's
//    own exp/log1p (GLSL has none for double), exact for infinities.
//
// The parameter block (Params) is written by the host into the stream's
// parameter buffer just before the dispatch; its device address is the only
// push constant. Layout must match reduction/reduce.cpp's struct Params.
#version 460
#include "common.glsl"

// kinds (reduction/reduce.cpp: enum Kind)
const int KIND_REDUCE = 0, KIND_ARG = 1, KIND_SCAN = 2;
// _reduce codes (tsr_reduce_op)
const int SUM = 0, PROD = 1, MEAN = 2, AMAX = 3, AMIN = 4, ANY = 5, ALL = 6;
// _arg_reduce codes (tsr_arg_reduce_op)
const int ARGMAX = 0, ARGMIN = 1;
// _scan codes (tsr_scan_op)
const int CUMSUM = 0, CUMPROD = 1, LOGCUMSUMEXP = 2, CUMMAX = 3, CUMMIN = 4;

struct Params {
  int64_t outputs;  // output elements (reductions) or lines (scans)
  int64_t count;    // reduced elements per output (the line's length)
  int64_t ostride;  // scans: out's stride along the scanned dim
  int kind;
  int op;
  int ndim;   // dims of out (keepdim layout)
  int rndim;  // reduced dims
  int wide;   // PHASE_MERGE: one workgroup per output (else one invocation)
  // PHASE_PARTIAL: invocation u is chunk u % chunks of output u / chunks
  // (0), or chunk u / outputs of output u % outputs (1)
  int order;
  int64_t sizes[8];     // out's sizes (1 on reduced dims)
  int64_t rsizes[8];    // sizes of the reduced dims, outer first
  int64_t rstrides[8];  // self's strides along them
  Operand t[2];         // t[0] out, t[1] self; strides over out's dims
  // Note [lavapipe loop budget] (reduction/reduce.cpp): long reductions and
  // scans are split so that no invocation runs more than a few thousand loop
  // iterations.
  int64_t span;      // PHASE_SCAN: elements per chunk
  int64_t chunks;    // chunks per output (PHASE_PARTIAL, PHASE_MERGE)
  int64_t first;     // PHASE_SCAN: the chunk's first element along the line
  uint64_t scratch;  // partial results (PHASE_PARTIAL/MERGE) or scan carries, 24 bytes each
  int phase;
  int pad2_;
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// Specialization constants (Kernels::Spec), -1 meaning "read the
// parameters": the kind, the op code, and SPEC_SELF: self's dtype when it
// is float32 (else 255: read it) plus ONE_DIM when one dim is reduced
// (rndim 1: no division to find an element) and the phase (SPEC_PHASE).
// The host takes a specialized variant by use (Note [Specializing by use],
// kernels.hpp): lavapipe runs every branch on a run-time value under lane
// masks, so the generic variant merges each element with every op and
// loads it at every element size.
layout(constant_id = 1) const int SPEC_KIND = -1;
layout(constant_id = 2) const int SPEC_OP = -1;
layout(constant_id = 3) const int SPEC_SELF = -1;
const int ONE_DIM = 256;
int kind_of(Params p) { return SPEC_KIND >= 0 ? SPEC_KIND : p.kind; }
int op_of(Params p) { return SPEC_OP >= 0 ? SPEC_OP : p.op; }
int self_dtype(Params p) {
  return SPEC_SELF >= 0 && (SPEC_SELF & 255) != 255 ? (SPEC_SELF & 255) : p.t[1].dtype;
}
const bool SPEC_ONE_DIM = SPEC_SELF >= 0 && (SPEC_SELF & ONE_DIM) != 0;
// SPEC_SELF's bits 9-11: the phase plus one (PHASE_MERGE with `wide` as 5),
// 0 meaning "read it": a variant runs one phase's code only.

// Params.phase
const int PHASE_WHOLE = 0;    // each output (line) in one dispatch
const int PHASE_PARTIAL = 1;  // chunk c of output o -> scratch[o * chunks + c]
const int PHASE_MERGE = 2;    // output o: merge scratch[o * chunks ...] in order
const int PHASE_SCAN = 3;     // elements [first, first + span) of each line, carry in scratch[line]
const int SPEC_PHASE = SPEC_SELF >= 0 ? (SPEC_SELF >> 9) & 7 : 0;
int phase_of(Params p) {
  return SPEC_PHASE > 0 ? (SPEC_PHASE == 5 ? PHASE_MERGE : SPEC_PHASE - 1) : p.phase;
}
bool wide_merge(Params p) { return SPEC_PHASE > 0 ? SPEC_PHASE == 5 : p.wide != 0; }

const double LN2_HI = 6.93147180369123816490e-01LF;
const double LN2_LO = 1.90821492927058770002e-10LF;
const double INV_LN2 = 1.44269504088896338700e+00LF;

double nan_double() { return uint64BitsToDouble(0x7ff8000000000000UL); }
double inf_double() { return uint64BitsToDouble(0x7ff0000000000000UL); }

// exp(x) for x <= 0 (double): x = k ln2 + r, |r| <= ln2/2, Taylor series of
// exp(r) to degree 16 (error below 1e-17 relative), scaled by 2^k.
double exp_nonpositive(double x) {
  if (x < -745.2LF) return 0.0LF;
  const double k = floor(x * INV_LN2 + 0.5LF);
  const double r = (x - k * LN2_HI) - k * LN2_LO;
  double term = 1.0LF, sum = 1.0LF;
  for (int n = 1; n <= 16; ++n) {
    term *= r / double(n);
    sum += term;
  }
  const int ki = int(k);
  // 2^k in two steps: ldexp's exponent may reach -1075 (subnormal results).
  return ldexp(ldexp(sum, ki / 2), ki - ki / 2);
}

// log1p(y) for 0 <= y <= 1 (double): 2 atanh(s), s = y / (2 + y) <= 1/3,
// series to s^49 (error below 1e-17 relative); exact at y = 0.
double log1p_unit(double y) {
  const double s = y / (2.0LF + y);
  const double s2 = s * s;
  double power = s, sum = 0.0LF;
  for (int n = 1; n <= 49; n += 2) {
    sum += power / double(n);
    power *= s2;
  }
  return 2.0LF * sum;
}

// log(exp(a) + exp(b)), stable; -inf is its identity, NaN propagates.
double log_add_exp(double a, double b) {
  if (isnan(a) || isnan(b)) return nan_double();
  const double hi = max(a, b), lo = min(a, b);
  if (lo == -inf_double() || hi == inf_double()) return hi;
  return hi + log1p_unit(exp_nonpositive(lo - hi));
}

bool is_reduced_float(int dtype) { return dtype == FLOAT16 || dtype == BFLOAT16; }

// A partial result: `f` (floating) or `i` (integers; ANY/ALL 0/1), and for
// ARGMAX/ARGMIN the index `idx` of the best element (-1: none yet).
struct Acc {
  double f;
  int64_t i;
  int64_t idx;
};

// The effective code: kind * 16 + op, bool reductions mapped to ANY/ALL.
int effective_op(int kind, int op, int dtype) {
  if (kind == KIND_REDUCE && dtype == BOOL) {
    if (op == SUM || op == AMAX)
      op = ANY;
    else if (op == PROD || op == AMIN)
      op = ALL;
  }
  return kind * 16 + op;
}
const int R_SUM = SUM, R_PROD = PROD, R_MEAN = MEAN, R_AMAX = AMAX, R_AMIN = AMIN, R_ANY = ANY,
          R_ALL = ALL, A_MAX = 16 + ARGMAX, A_MIN = 16 + ARGMIN;

Acc identity(int eop) {
  Acc a;
  a.f = 0.0LF;
  a.i = 0L;
  a.idx = -1L;
  if (eop == R_PROD || eop == R_ALL) {
    a.f = 1.0LF;
    a.i = 1L;
  } else if (eop == R_AMAX) {
    a.f = -inf_double();
    a.i = int64_t(0x8000000000000000UL);
  } else if (eop == R_AMIN) {
    a.f = inf_double();
    a.i = int64_t(0x7fffffffffffffffUL);
  }
  return a;
}

// Element `r` of the reduction (its bits as `dtype`) as a partial result.
Acc element(int eop, uint64_t bits, int dtype, int64_t r) {
  Acc a;
  a.idx = r;
  a.f = 0.0LF;
  a.i = 0L;
  if (eop == R_ANY || eop == R_ALL) {
    a.i = (is_float(dtype) ? to_double(bits, dtype) != 0.0LF : bits != 0UL) ? 1L : 0L;
  } else if (is_float(dtype)) {
    a.f = to_double(bits, dtype);
  } else {
    a.i = to_int(bits, dtype);
  }
  return a;
}

// b is the better candidate of an arg reduction than a: more extreme, the
// first NaN, or equal (both NaN) with a lower index.
bool arg_better(bool is_max, bool fl, Acc a, Acc b) {
  if (b.idx < 0L) return false;
  if (a.idx < 0L) return true;
  if (fl) {
    const bool an = isnan(a.f), bn = isnan(b.f);
    if (an || bn) return an && bn ? b.idx < a.idx : bn;
    if (a.f == b.f) return b.idx < a.idx;
    return is_max ? b.f > a.f : b.f < a.f;
  }
  if (a.i == b.i) return b.idx < a.idx;
  return is_max ? b.i > a.i : b.i < a.i;
}

// a combined with b (b later in the reduction order, or any order for
// commutative codes). Integers wrap; NaN is sticky for AMAX/AMIN.
Acc merge(int eop, bool fl, Acc a, Acc b) {
  if (eop == A_MAX || eop == A_MIN) return arg_better(eop == A_MAX, fl, a, b) ? b : a;
  if (eop == R_ANY)
    a.i = (a.i != 0L || b.i != 0L) ? 1L : 0L;
  else if (eop == R_ALL)
    a.i = (a.i != 0L && b.i != 0L) ? 1L : 0L;
  else if (fl) {
    if (eop == R_SUM || eop == R_MEAN)
      a.f += b.f;
    else if (eop == R_PROD)
      a.f *= b.f;
    else if (eop == R_AMAX)
      a.f = (b.f > a.f || isnan(b.f)) ? b.f : a.f;
    else
      a.f = (b.f < a.f || isnan(b.f)) ? b.f : a.f;
  } else {
    if (eop == R_SUM || eop == R_MEAN)
      a.i += b.i;
    else if (eop == R_PROD)
      a.i *= b.i;
    else if (eop == R_AMAX)
      a.i = max(a.i, b.i);
    else
      a.i = min(a.i, b.i);
  }
  return a;
}

// Offset (elements of self) of reduced element r, row-major over rsizes.
int64_t reduced_offset(Params p, int64_t r) {
  if (SPEC_ONE_DIM) return r * p.rstrides[0];
  int64_t off = 0L;
  for (int d = p.rndim - 1; d >= 0; --d) {
    const int64_t s = p.rsizes[d];
    off += (r % s) * p.rstrides[d];
    r /= s;
  }
  return off;
}

// Elements first, first + step, ... (below end) of the reduction starting
// at in_off, merged in blocks of BLOCK (see the top of this file).
const int64_t BLOCK = 64L;
Acc reduce_range(Params p, int eop, int64_t in_off, int64_t first, int64_t end, int64_t step) {
  const int dtype = self_dtype(p);
  const int size = element_size(dtype);
  const bool fl = is_float(dtype);
  Acc acc = identity(eop);
  // a float32 self's sum in double needs no blocks: over kLaneIterations
  // elements its rounding error stays below 2^-42 of the sum of magnitudes
  // (one block is one loop less for lavapipe's lane masks)
  const int64_t block_size = dtype == FLOAT32 ? end : BLOCK;
  for (int64_t b = first; b < end; b += step * block_size) {
    const int64_t block_end = min(end, b + step * block_size);
    Acc block = identity(eop);
    for (int64_t r = b; r < block_end; r += step) {
      const uint64_t bits = load_bits(element_address(p.t[1], in_off + reduced_offset(p, r)), size);
      block = merge(eop, fl, block, element(eop, bits, dtype, r));
    }
    acc = merge(eop, fl, acc, block);
  }
  return acc;
}

void store_result(Params p, int eop, Acc acc, uint64_t out_addr) {
  const int out_dtype = p.t[0].dtype;
  uint64_t result;
  if (eop == A_MAX || eop == A_MIN) {
    result = uint64_t(max(acc.idx, 0L));
  } else if (eop == R_ANY || eop == R_ALL) {
    result = from_int(acc.i, out_dtype);
  } else if (is_float(self_dtype(p))) {
    double f = acc.f;
    if (eop == R_MEAN) f = p.count == 0L ? nan_double() : f / double(p.count);
    result = from_double(f, out_dtype);
  } else {
    result = from_int(acc.i, out_dtype);
  }
  store_bits(out_addr, element_size(out_dtype), result);
}

// Offsets of output e's first input element and of its output element.
void output_offsets(Params p, int64_t e, out int64_t in_off, out int64_t out_off) {
  in_off = 0L;
  out_off = 0L;
  for (int d = p.ndim - 1; d >= 0; --d) {
    const int64_t s = p.sizes[d];
    const int64_t i = e % s;
    e /= s;
    out_off += i * p.t[0].strides[d];
    in_off += i * p.t[1].strides[d];
  }
}

layout(buffer_reference, std430, buffer_reference_align = 8) buffer AccRef {
  double f;
  int64_t i;
  int64_t idx;
};
AccRef partial(Params p, uint64_t k) { return AccRef(p.scratch + k * 24UL); }
Acc load_partial(Params p, uint64_t k) {
  AccRef r = partial(p, k);
  Acc a;
  a.f = r.f;
  a.i = r.i;
  a.idx = r.idx;
  return a;
}

// Output o's partial results c = first, first + step, ... (below chunks),
// in order, merged in blocks of BLOCK.
Acc merge_partials(Params p, int eop, uint64_t o, int64_t first, int64_t step) {
  const bool fl = is_float(self_dtype(p));
  const uint64_t base = o * uint64_t(p.chunks);
  Acc acc = identity(eop);
  for (int64_t b = first; b < p.chunks; b += step * BLOCK) {
    const int64_t block_end = min(p.chunks, b + step * BLOCK);
    Acc block = identity(eop);
    for (int64_t c = b; c < block_end; c += step)
      block = merge(eop, fl, block, load_partial(p, base + uint64_t(c)));
    acc = merge(eop, fl, acc, block);
  }
  return acc;
}

shared double s_f[256];
shared int64_t s_i[256];
shared int64_t s_idx[256];

void scan_one(Params p, int64_t in_off, int64_t out_off, AccRef carry) {
  const int dtype = self_dtype(p);
  const int size = element_size(dtype);
  const bool fl = is_float(dtype);
  const bool narrow = is_reduced_float(dtype);
  int op = op_of(p);
  double facc = 0.0LF;
  int64_t iacc = 0L;
  int64_t begin = 0L, end = p.count;
  if (phase_of(p) == PHASE_SCAN) {
    begin = p.first;
    end = min(p.count, p.first + p.span);
    if (begin > 0L) {
      facc = carry.f;
      iacc = carry.i;
    }
  }
  for (int64_t k = begin; k < end; ++k) {
    const uint64_t bits = load_bits(element_address(p.t[1], in_off + k * p.rstrides[0]), size);
    uint64_t result;
    if (dtype == BOOL) {
      const int64_t x = bits != 0UL ? 1L : 0L;
      if (k == 0L)
        iacc = x;
      else if (op == CUMPROD || op == CUMMIN)
        iacc = iacc & x;
      else
        iacc = iacc | x;
      result = uint64_t(iacc);
    } else if (fl) {
      const double x = to_double(bits, dtype);
      if (k == 0L) {
        facc = x;
      } else if (op == CUMSUM) {
        facc += x;
      } else if (op == CUMPROD) {
        facc *= x;
      } else if (op == CUMMAX) {
        facc = (x > facc || isnan(x)) ? x : facc;
      } else if (op == CUMMIN) {
        facc = (x < facc || isnan(x)) ? x : facc;
      } else {
        facc = log_add_exp(facc, x);
      }
      if (narrow) facc = double(float(facc));  // float16/bfloat16 accumulate in float
      result = from_double(facc, dtype);
    } else {
      const int64_t x = to_int(bits, dtype);
      if (k == 0L)
        iacc = x;
      else if (op == CUMSUM)
        iacc += x;
      else if (op == CUMPROD)
        iacc *= x;
      else if (op == CUMMAX)
        iacc = max(iacc, x);
      else
        iacc = min(iacc, x);
      result = from_int(iacc, dtype);
    }
    store_bits(element_address(p.t[0], out_off + k * p.ostride), size, result);
  }
  if (phase_of(p) == PHASE_SCAN) {
    carry.f = facc;
    carry.i = iacc;
  }
}

void main() {
  Params p = pc.params;
  const int eop = effective_op(kind_of(p), op_of(p), self_dtype(p));
  if (kind_of(p) == KIND_SCAN) {
    const uint64_t threads = invocations();
    for (uint64_t e = global_index(); e < uint64_t(p.outputs); e += threads) {
      int64_t in_off, out_off;
      output_offsets(p, int64_t(e), in_off, out_off);
      scan_one(p, in_off, out_off, partial(p, e));
    }
    return;
  }
  const int phase = phase_of(p);
  if (phase == PHASE_MERGE && wide_merge(p)) {
    // One workgroup per output: lane l merges chunks l, l + 256, ..., then
    // the 256 results merge in shared memory (a tree; lanes hold increasing
    // chunk ranges, so arg ties keep the first index).
    const uint lane = gl_LocalInvocationID.x;
    const bool fl = is_float(self_dtype(p));
    const uint64_t groups = invocations() / WORKGROUP;
    for (uint64_t o = global_index() / WORKGROUP; o < uint64_t(p.outputs); o += groups) {
      int64_t in_off, out_off;
      output_offsets(p, int64_t(o), in_off, out_off);
      Acc acc = merge_partials(p, eop, o, int64_t(lane), int64_t(WORKGROUP));
      s_f[lane] = acc.f;
      s_i[lane] = acc.i;
      s_idx[lane] = acc.idx;
      barrier();
      for (uint width = 128u; width >= 1u; width /= 2u) {
        if (lane < width) {
          Acc a, b;
          a.f = s_f[lane];
          a.i = s_i[lane];
          a.idx = s_idx[lane];
          b.f = s_f[lane + width];
          b.i = s_i[lane + width];
          b.idx = s_idx[lane + width];
          a = merge(eop, fl, a, b);
          s_f[lane] = a.f;
          s_i[lane] = a.i;
          s_idx[lane] = a.idx;
        }
        barrier();
      }
      if (lane == 0u) {
        acc.f = s_f[0];
        acc.i = s_i[0];
        acc.idx = s_idx[0];
        store_result(p, eop, acc, element_address(p.t[0], out_off));
      }
      barrier();
    }
    return;
  }
  const uint64_t threads = invocations();
  const uint64_t units =
      uint64_t(p.outputs) * (phase == PHASE_PARTIAL ? uint64_t(p.chunks) : 1UL);
  for (uint64_t u = global_index(); u < units; u += threads) {
    if (phase == PHASE_PARTIAL) {
      const uint64_t chunks = uint64_t(p.chunks), outputs = uint64_t(p.outputs);
      const uint64_t o = p.order == 0 ? u / chunks : u % outputs;
      const uint64_t c = p.order == 0 ? u % chunks : u / outputs;
      int64_t in_off, out_off;
      output_offsets(p, int64_t(o), in_off, out_off);
      const Acc acc = reduce_range(p, eop, in_off, int64_t(c), p.count, p.chunks);
      AccRef r = partial(p, o * chunks + c);
      r.f = acc.f;
      r.i = acc.i;
      r.idx = acc.idx;
    } else {
      int64_t in_off, out_off;
      output_offsets(p, int64_t(u), in_off, out_off);
      const Acc acc = phase == PHASE_MERGE ? merge_partials(p, eop, u, 0L, 1L)
                                             : reduce_range(p, eop, in_off, 0L, p.count, 1L);
      store_result(p, eop, acc, element_address(p.t[0], out_off));
    }
  }
}
