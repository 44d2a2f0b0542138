// linalg.comp - mm and bmm: out[b][i][j] = sum_k a[b][i][k] * m[b][k][j].
//
// Any strides (transposed inputs included) and any real non-bool dtype (a, m
// and out share one). Accumulation: double for float64, float for the other
// floating dtypes (rounded once on the store), int64 with two's complement
// wrap for integers.
//
// Two variants, chosen by `tile`:
//  - tile == 1: invocation e computes output element e (row-major over
//    batch x M x N), looping when the grid is smaller than the output;
//  - tile == 4 (float32) or 5 (float64): invocation e computes a 4x4
//    register block of the output (rows 4r..4r+3, columns 4c..4c+3, clipped
//    at the edges), so each loaded element of a and m feeds four
//    multiply-adds; direct 32/64-bit loads, addresses advanced by byte
//    strides.
#version 460
#include "common.glsl"

struct Params {
  int64_t batch;
  int64_t m;  // rows of out
  int64_t n;  // columns of out
  int64_t k;  // the reduced extent
  int tile;
  int pad_;
  Operand a;    // strides: batch, row, column
  Operand b;    // strides: batch, row (k), column
  Operand c;    // the output; strides: batch, row, column
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer F32 { float v; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32W { float v; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer F64 { double v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer F64W { double v; };

uint64_t addr(Operand t, int64_t off, int size) { return t.address + uint64_t(off * int64_t(size)); }

void naive(Params p) {
  const int dtype = p.c.dtype;
  const int size = element_size(dtype);
  const uint64_t total = uint64_t(p.batch * p.m * p.n);
  const uint64_t threads = invocations();
  const int64_t sa_b = p.a.strides[0], sa_r = p.a.strides[1], sa_c = p.a.strides[2];
  const int64_t sb_b = p.b.strides[0], sb_r = p.b.strides[1], sb_c = p.b.strides[2];
  for (uint64_t e = global_index(); e < total; e += threads) {
    const int64_t j = int64_t(e % uint64_t(p.n));
    const int64_t rest = int64_t(e / uint64_t(p.n));
    const int64_t i = rest % p.m;
    const int64_t bi = rest / p.m;
    int64_t ao = bi * sa_b + i * sa_r;
    int64_t bo = bi * sb_b + j * sb_c;
    uint64_t result;
    if (dtype == FLOAT64) {
      double acc = 0.0LF;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        acc += uint64BitsToDouble(B64(addr(p.a, ao, 8)).v) *
               uint64BitsToDouble(B64(addr(p.b, bo, 8)).v);
        ao += sa_c;
        bo += sb_r;
      }
      result = doubleBitsToUint64(acc);
    } else if (dtype == FLOAT32) {
      float acc = 0.0;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        acc += F32(addr(p.a, ao, 4)).v * F32(addr(p.b, bo, 4)).v;
        ao += sa_c;
        bo += sb_r;
      }
      result = uint64_t(floatBitsToUint(acc));
    } else if (is_float(dtype)) {
      float acc = 0.0;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const float x = float(to_double(load_bits(addr(p.a, ao, size), size), dtype));
        const float y = float(to_double(load_bits(addr(p.b, bo, size), size), dtype));
        acc += x * y;
        ao += sa_c;
        bo += sb_r;
      }
      result = from_float(acc, dtype);
    } else {
      int64_t acc = 0L;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        acc += to_int(load_bits(addr(p.a, ao, size), size), dtype) *
               to_int(load_bits(addr(p.b, bo, size), size), dtype);
        ao += sa_c;
        bo += sb_r;
      }
      result = from_int(acc, dtype);
    }
    store_bits(addr(p.c, bi * p.c.strides[0] + i * p.c.strides[1] + j * p.c.strides[2],
                    size),
               size, result);
  }
}

// 4x4 register blocks: float32 (vec4, FLOAT32 loads) or float64 (dvec4).
// Element addresses advance by byte strides, no multiplication in the loop.
#define TILED(NAME, VEC, REF, STORE, ESIZE)                                                  \
  void NAME(Params p) {                                                                     \
    const int64_t rows = (p.m + 3L) / 4L, cols = (p.n + 3L) / 4L;                          \
    const uint64_t total = uint64_t(p.batch * rows * cols);                                 \
    const uint64_t threads = invocations();                                                 \
    const int64_t da = p.a.strides[2] * int64_t(ESIZE), db = p.b.strides[1] * int64_t(ESIZE);                 \
    for (uint64_t e = global_index(); e < total; e += threads) {                            \
      const int64_t c = int64_t(e % uint64_t(cols));                                        \
      const int64_t rest = int64_t(e / uint64_t(cols));                                     \
      const int64_t r = rest % rows;                                                        \
      const int64_t bi = rest / rows;                                                       \
      const int64_t i0 = r * 4L, j0 = c * 4L;                                               \
      const uint64_t abase = addr(p.a, bi * p.a.strides[0], ESIZE);                         \
      const uint64_t bbase = addr(p.b, bi * p.b.strides[0], ESIZE);                         \
      /* edges: repeat the last row / column (reads in range, extras not stored) */         \
      uint64_t a0 = abase + uint64_t(min(i0, p.m - 1L) * p.a.strides[1] * int64_t(ESIZE));           \
      uint64_t a1 = abase + uint64_t(min(i0 + 1L, p.m - 1L) * p.a.strides[1] * int64_t(ESIZE));      \
      uint64_t a2 = abase + uint64_t(min(i0 + 2L, p.m - 1L) * p.a.strides[1] * int64_t(ESIZE));      \
      uint64_t a3 = abase + uint64_t(min(i0 + 3L, p.m - 1L) * p.a.strides[1] * int64_t(ESIZE));      \
      uint64_t b0 = bbase + uint64_t(min(j0, p.n - 1L) * p.b.strides[2] * int64_t(ESIZE));           \
      uint64_t b1 = bbase + uint64_t(min(j0 + 1L, p.n - 1L) * p.b.strides[2] * int64_t(ESIZE));      \
      uint64_t b2 = bbase + uint64_t(min(j0 + 2L, p.n - 1L) * p.b.strides[2] * int64_t(ESIZE));      \
      uint64_t b3 = bbase + uint64_t(min(j0 + 3L, p.n - 1L) * p.b.strides[2] * int64_t(ESIZE));      \
      VEC acc0 = VEC(0), acc1 = VEC(0), acc2 = VEC(0), acc3 = VEC(0);                       \
      for (int64_t kk = 0; kk < p.k; ++kk) {                                                \
        const VEC x = VEC(REF(a0).v, REF(a1).v, REF(a2).v, REF(a3).v);                      \
        const VEC y = VEC(REF(b0).v, REF(b1).v, REF(b2).v, REF(b3).v);                      \
        acc0 += x.x * y;                                                                    \
        acc1 += x.y * y;                                                                    \
        acc2 += x.z * y;                                                                    \
        acc3 += x.w * y;                                                                    \
        a0 += uint64_t(da);                                                                 \
        a1 += uint64_t(da);                                                                 \
        a2 += uint64_t(da);                                                                 \
        a3 += uint64_t(da);                                                                 \
        b0 += uint64_t(db);                                                                 \
        b1 += uint64_t(db);                                                                 \
        b2 += uint64_t(db);                                                                 \
        b3 += uint64_t(db);                                                                 \
      }                                                                                     \
      VEC acc[4] = VEC[4](acc0, acc1, acc2, acc3);                                          \
      for (int t = 0; t < 4; ++t) {                                                         \
        const int64_t i = i0 + int64_t(t);                                                  \
        if (i >= p.m) break;                                                                \
        const int64_t row = bi * p.c.strides[0] + i * p.c.strides[1];                       \
        for (int u = 0; u < 4; ++u) {                                                       \
          const int64_t j = j0 + int64_t(u);                                                \
          if (j >= p.n) break;                                                              \
          STORE(addr(p.c, row + j * p.c.strides[2], ESIZE)).v = acc[t][u];                  \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }

TILED(tiled_f32, vec4, F32, F32W, 4)
TILED(tiled_f64, dvec4, F64, F64W, 8)

void main() {
  Params p = pc.params;
  if (p.tile == 4)
    tiled_f32(p);
  else if (p.tile == 5)
    tiled_f64(p);
  else
    naive(p);
}
