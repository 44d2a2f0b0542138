// nn.comp - the row kernels of the Vulkan plugin's nn family
// (nn/norm.cpp): fused _softmax, _log_softmax and native_layer_norm.
//
// Work is split into rows: the elements along the softmax dim, or the
// flattened normalized dims of layer_norm. Row r is unravelled over `sizes`
// (the row space: the input's sizes with the softmax dim set to 1; for
// layer_norm one dim of `rows`), which gives the offsets of its first input
// and output element through the operands' strides; element i of the row is
// then i * in_step (input) and i * out_step (output) further on. Two modes
// (the host picks, Params.wide; see nn/norm.cpp's wide_rows):
//  - wide: one workgroup per row; lane l handles elements l, l + 256, ...
//    and the lanes' partial results merge through subgroup arithmetic and
//    one shared slot per subgroup (long rows on a GPU);
//  - narrow: one invocation per row, which loops over it (short rows, and
//    on lavapipe nearly every row: its barriers are expensive).
// Loops over rows are grid-stride, so any row count works with any grid.
//
// Softmax (MODE_SOFTMAX, MODE_LOG_SOFTMAX), numerically stable: one pass
// keeps an online (maximum m, sum s of exp(x - m)) pair per lane - a new
// maximum rescales s by exp(m_old - m_new); in wide mode the lanes' maxima
// merge first, then each lane rescales its s to the row's maximum and the
// sums merge. A second pass writes exp(x - m) / s, or x - m - log(s). A row
// with a NaN, or whose maximum is +inf (inf - inf), or that is -inf
// throughout, is NaN everywhere, as in PyTorch (a lane that meets NaN or
// +inf sets its maximum to +inf and stops accumulating). float16,
// bfloat16 and float32 compute in float (exp is this file's, within about
// 1 ulp) with the sum in double; float64 computes in double with this
// file's exp and log (GLSL has them for float only). Results are rounded
// once into the output dtype (float32 for half_to_float).
//
// Layer norm (MODE_LAYER_NORM), float32 and float64, computed in double:
// mean = sum(x) / n, var = sum((x - mean)^2) / n (biased; two passes, no
// cancellation), rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * w + b
// (weight and bias optional, `flags`). mean and rstd are written in the
// input's dtype; an empty row (n = 0) gives NaN for both.
//
// The parameter block must match nn/norm.cpp's struct RowParams.
#version 460
#include "common.glsl"
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

const int MODE_SOFTMAX = 0, MODE_LOG_SOFTMAX = 1, MODE_LAYER_NORM = 2;
const int HAS_WEIGHT = 1, HAS_BIAS = 2;

struct Params {
  int64_t rows;      // rows to process
  int64_t n;         // elements per row
  int64_t in_step;   // input stride along the row (elements)
  int64_t out_step;  // output stride along the row
  int mode;
  int ndim;   // dims of the row space (1 to 8)
  int wide;   // 1: a workgroup per row; 0: an invocation per row
  int flags;  // layer_norm: HAS_WEIGHT | HAS_BIAS
  double eps;
  int64_t sizes[8];  // the row space
  // t[0] out, t[1] input, t[2] weight, t[3] bias, t[4] mean, t[5] rstd.
  // Strides of t[0], t[1], t[4], t[5] are over the row space; weight and
  // bias are contiguous rows of n elements.
  Operand t[6];
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// Specialization constants (Kernels::Spec), -1 meaning "read the
// parameters": the mode, FLOAT32 when every operand is float32, and wide
// (0 or 1). The host takes a specialized variant by use (Note [Specializing
// by use], kernels.hpp): lavapipe runs both sides of a branch on a run-time
// value under lane masks, so the generic variant computes every mode, and
// loads at every element size, for each row.
layout(constant_id = 1) const int SPEC_MODE = -1;
layout(constant_id = 2) const int SPEC_DTYPE = -1;
layout(constant_id = 3) const int SPEC_WIDE = -1;
int mode_of(Params p) { return SPEC_MODE >= 0 ? SPEC_MODE : p.mode; }
bool wide_of(Params p) { return SPEC_WIDE >= 0 ? SPEC_WIDE != 0 : p.wide != 0; }
int dtype_of(Operand t) { return SPEC_DTYPE >= 0 ? SPEC_DTYPE : t.dtype; }

// Infinity and NaN (built from bits at run time: GLSL has no constant for them).
#define F_INF uintBitsToFloat(0x7f800000u)
#define D_INF uint64BitsToDouble(0x7ff0000000000000UL)
#define D_NAN uint64BitsToDouble(0x7ff8000000000000UL)
const double LN2_HI = 6.93147180369123816490e-01LF;
const double LN2_LO = 1.90821492927058770002e-10LF;
const double INV_LN2 = 1.44269504088896338700e+00LF;
// 1 / i for exp_d's polynomial.
const double RECIPROCAL[14] = double[14](0.0LF, 1.0LF, 1.0LF / 2.0LF, 1.0LF / 3.0LF, 1.0LF / 4.0LF,
                                         1.0LF / 5.0LF, 1.0LF / 6.0LF, 1.0LF / 7.0LF, 1.0LF / 8.0LF,
                                         1.0LF / 9.0LF, 1.0LF / 10.0LF, 1.0LF / 11.0LF,
                                         1.0LF / 12.0LF, 1.0LF / 13.0LF);

// ---- math -------------------------------------------------------------------

// exp(x) in float: x = k ln2 + r, |r| <= ln2/2 (Cody-Waite), a degree-7
// Taylor polynomial for exp(r) (truncation below 5e-9 relative), scaled by
// 2^k in two steps so subnormal results survive. NaN stays NaN.
float exp_f(float x) {
  if (isnan(x)) return x;
  if (x > 88.8f) return F_INF;
  if (x < -104.0f) return 0.0f;
  const float k = floor(x * 1.44269504f + 0.5f);
  float r = x - k * 0.693359375f;
  r = r + k * 2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int ki = int(k);
  return ldexp(ldexp(p, ki / 2), ki - ki / 2);
}

// exp(x) in double: the same reduction, degree-13 Taylor polynomial
// (truncation below 5e-18 relative).
double exp_d(double x) {
  if (isnan(x)) return x;
  if (x > 709.8LF) return D_INF;
  if (x < -745.2LF) return 0.0LF;
  const double k = floor(x * INV_LN2 + 0.5LF);
  const double r = (x - k * LN2_HI) - k * LN2_LO;
  // Horner: 1 + r/1 (1 + r/2 (1 + ... (1 + r/13))), by reciprocals (no
  // double division in the loop: slow on GPUs).
  double p = 1.0LF;
  for (int i = 13; i >= 1; --i) p = 1.0LF + p * (r * RECIPROCAL[i]);
  const int ki = int(k);
  return ldexp(ldexp(p, ki / 2), ki - ki / 2);
}

// log(x) in double for finite x > 0 (normal): x = m 2^e with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(f), f = (m - 1) / (m + 1), |f| <=
// 0.172, series to f^23 (error below 1e-17 relative).
double log_d(double x) {
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752440LF) {
    m *= 2.0LF;
    e -= 1;
  }
  const double f = (m - 1.0LF) / (m + 1.0LF);
  const double f2 = f * f;
  double sum = 0.0LF, power = f;
  for (int i = 1; i <= 23; i += 2) {
    sum += power / double(i);
    power *= f2;
  }
  return double(e) * LN2_HI + (double(e) * LN2_LO + 2.0LF * sum);
}

// ---- access -----------------------------------------------------------------

// Element `off` of `t` as float (t: float16, bfloat16 or float32) or as
// double (t: float32 or float64), and stores into those dtypes. Written out
// for these dtypes only (not common.glsl's any-dtype conversions) to keep
// the shader small: lavapipe compiles it on first use.
uint64_t at(Operand t, int64_t off, int size) { return t.address + uint64_t(off * int64_t(size)); }

float load_f(Operand t, int64_t off) {
  if (dtype_of(t) == FLOAT32) return uintBitsToFloat(B32(at(t, off, 4)).v);
  const uint h = uint(B16(at(t, off, 2)).v);
  return dtype_of(t) == FLOAT16 ? unpackHalf2x16(h).x : uintBitsToFloat(h << 16);
}
double load_d(Operand t, int64_t off) {
  if (dtype_of(t) == FLOAT64) return uint64BitsToDouble(B64(at(t, off, 8)).v);
  return double(uintBitsToFloat(B32(at(t, off, 4)).v));
}
void store_f(Operand t, int64_t off, float v) {
  if (dtype_of(t) == FLOAT32)
    B32(at(t, off, 4)).v = floatBitsToUint(v);
  else
    B16(at(t, off, 2)).v =
        uint16_t(dtype_of(t) == FLOAT16 ? packHalf2x16(vec2(v, 0.0f)) & 0xffffu : bf16_bits(v));
}
void store_d(Operand t, int64_t off, double v) {
  if (dtype_of(t) == FLOAT64)
    B64(at(t, off, 8)).v = doubleBitsToUint64(v);
  else
    B32(at(t, off, 4)).v = floatBitsToUint(float(v));
}

// Offsets of row r's first element in out (x), input (y), mean (z) and
// rstd (w): r unravelled over the row space.
i64vec4 row_offsets(Params p, int64_t r) {
  i64vec4 o = i64vec4(0L);
  int64_t rest = r;
  for (int d = p.ndim - 1; d >= 0; --d) {
    const int64_t c = rest % p.sizes[d];
    rest /= p.sizes[d];
    o += c * i64vec4(p.t[0].strides[d], p.t[1].strides[d], p.t[4].strides[d], p.t[5].strides[d]);
  }
  return o;
}

// ---- merging partial results across a workgroup --------------------------------

// Wide mode only (all 256 lanes must call these, in uniform control flow).
// Subgroup arithmetic first, then one shared slot per subgroup that every
// lane reads back in the same order (deterministic). `slot` (0 or 1) picks
// one of two slot arrays: consecutive merges alternate, so one barrier per
// merge suffices - a slot array is rewritten only after the other merge's
// barrier, which every lane reaches after its last read of it.
shared double s_part[2 * 256];

double group_sum(double v, uint slot) {
  const double part = subgroupAdd(v);
  if (subgroupElect()) s_part[slot * 256u + gl_SubgroupID] = part;
  barrier();
  double total = 0.0LF;
  for (uint i = 0u; i < gl_NumSubgroups; ++i) total += s_part[slot * 256u + i];
  return total;
}

double group_max(double v, uint slot) {
  const double part = subgroupMax(v);
  if (subgroupElect()) s_part[slot * 256u + gl_SubgroupID] = part;
  barrier();
  double m = -D_INF;
  for (uint i = 0u; i < gl_NumSubgroups; ++i) m = max(m, s_part[slot * 256u + i]);
  return m;
}

// ---- softmax ----------------------------------------------------------------

// One row in float (float16, bfloat16, float32 inputs). `lane` of `lanes`.
void softmax_row_f(Params p, i64vec4 o, uint lane, uint lanes, bool wide, bool log_mode) {
  const Operand x = p.t[1], y = p.t[0];
  float m = -F_INF;  // this lane's maximum; +inf once a NaN is seen
  double s = 0.0LF;  // sum of exp(x - m) over this lane's elements
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) {
    const float v = load_f(x, o.y + i * p.in_step);
    if (isnan(v) || v == F_INF) {
      m = F_INF;  // the row is NaN: stop accumulating
    } else if (v > m) {
      s = s * double(exp_f(m - v)) + 1.0LF;  // m = -inf: exp gives 0
      m = v;
    } else if (m != -F_INF && m != F_INF) {
      s += double(exp_f(v - m));
    }
  }
  // The row's maximum; infinite means a NaN row (a NaN, an infinite
  // maximum, or -inf throughout).
  const double mx = wide ? group_max(double(m), 0u) : double(m);
  const bool bad = isinf(mx);
  if (!bad) s = m == -F_INF ? 0.0LF : s * double(exp_f(float(double(m) - mx)));
  if (wide) s = group_sum(s, 1u);
  const float mf = float(mx);
  const float scale = bad ? 0.0f : (log_mode ? mf + float(log_d(s)) : float(1.0LF / s));
  const float qnan = uintBitsToFloat(0x7fc00000u);
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) {
    float r = qnan;
    if (!bad) {
      const float v = load_f(x, o.y + i * p.in_step);
      r = log_mode ? v - scale : exp_f(v - mf) * scale;
    }
    store_f(y, o.x + i * p.out_step, r);
  }
}

// One row in double (float64).
void softmax_row_d(Params p, i64vec4 o, uint lane, uint lanes, bool wide, bool log_mode) {
  const Operand x = p.t[1], y = p.t[0];
  double m = -D_INF;  // as softmax_row_f
  double s = 0.0LF;
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) {
    const double v = load_d(x, o.y + i * p.in_step);
    if (isnan(v) || v == D_INF) {
      m = D_INF;
    } else if (v > m) {
      s = s * exp_d(m - v) + 1.0LF;
      m = v;
    } else if (m != -D_INF && m != D_INF) {
      s += exp_d(v - m);
    }
  }
  const double mx = wide ? group_max(m, 0u) : m;
  const bool bad = isinf(mx);
  if (!bad) s = m == -D_INF ? 0.0LF : s * exp_d(m - mx);
  if (wide) s = group_sum(s, 1u);
  const double scale = bad ? 0.0LF : (log_mode ? mx + log_d(s) : 1.0LF / s);
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) {
    double r = D_NAN;
    if (!bad) {
      const double v = load_d(x, o.y + i * p.in_step);
      r = log_mode ? v - scale : exp_d(v - mx) * scale;
    }
    store_d(y, o.x + i * p.out_step, r);
  }
}

// ---- layer norm --------------------------------------------------------------

void layer_norm_row(Params p, i64vec4 o, uint lane, uint lanes, bool wide) {
  const Operand x = p.t[1], y = p.t[0];
  double sum = 0.0LF;
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) sum += load_d(x, o.y + i * p.in_step);
  if (wide) sum = group_sum(sum, 0u);
  const double mean = sum / double(p.n);
  double sq = 0.0LF;
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) {
    const double d = load_d(x, o.y + i * p.in_step) - mean;
    sq += d * d;
  }
  if (wide) sq = group_sum(sq, 1u);
  const double rstd = 1.0LF / sqrt(sq / double(p.n) + p.eps);
  if (lane == 0u) {
    store_d(p.t[4], o.z, p.n > 0L ? mean : D_NAN);
    store_d(p.t[5], o.w, p.n > 0L ? rstd : D_NAN);
  }
  const bool has_w = (p.flags & HAS_WEIGHT) != 0, has_b = (p.flags & HAS_BIAS) != 0;
  for (int64_t i = int64_t(lane); i < p.n; i += int64_t(lanes)) {
    double r = (load_d(x, o.y + i * p.in_step) - mean) * rstd;
    if (has_w) r *= load_d(p.t[2], i);
    if (has_b) r += load_d(p.t[3], i);
    store_d(y, o.x + i * p.out_step, r);
  }
}

// ---- entry --------------------------------------------------------------------

void run_row(Params p, int64_t r, uint lane, uint lanes, bool wide) {
  const i64vec4 o = row_offsets(p, r);
  const int mode = mode_of(p);
  if (mode == MODE_LAYER_NORM)
    layer_norm_row(p, o, lane, lanes, wide);
  else if (dtype_of(p.t[1]) == FLOAT64)
    softmax_row_d(p, o, lane, lanes, wide, mode == MODE_LOG_SOFTMAX);
  else
    softmax_row_f(p, o, lane, lanes, wide, mode == MODE_LOG_SOFTMAX);
}

void main() {
  Params p = pc.params;
  if (wide_of(p)) {
    // The loop bound is uniform across the workgroup, so every lane reaches
    // the same barriers.
    const int64_t groups = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y);
    const int64_t group = int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x) +
                          int64_t(gl_WorkGroupID.x);
    for (int64_t r = group; r < p.rows; r += groups)
      run_row(p, r, gl_LocalInvocationID.x, 256u, true);
  } else {
    const int64_t threads = int64_t(invocations());
    for (int64_t r = int64_t(global_index()); r < p.rows; r += threads) run_row(p, r, 0u, 1u, false);
  }
}
