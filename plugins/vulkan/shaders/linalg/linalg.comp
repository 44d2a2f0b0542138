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

// Stores row T of a 4x4 block from ACC (columns 0..3), each element only
// where it lies inside the output: T <= rows_left, U <= cols_left. Uses
// c00, crow, ccol, rows_left and cols_left from TILED's scope.
#define STORE_ONE(STORE, ROW, V, U)                                                         \
  if (U <= cols_left) STORE(ROW + uint64_t(U * ccol)).v = V;
#define STORE_ROW(STORE, ACC, T)                                                            \
  if (T <= rows_left) {                                                                     \
    const uint64_t row = c00 + uint64_t(T * crow);                                          \
    STORE_ONE(STORE, row, ACC.x, 0L)                                                        \
    STORE_ONE(STORE, row, ACC.y, 1L)                                                        \
    STORE_ONE(STORE, row, ACC.z, 2L)                                                        \
    STORE_ONE(STORE, row, ACC.w, 3L)                                                        \
  }

// 4x4 register blocks: float32 (vec4, FLOAT32 loads) or float64 (dvec4).
// Element addresses advance by byte strides, no multiplication in the loop.
//
// Note [NVIDIA block edges]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// The rows and columns of a block are the
// block's first one plus a step (min(t, rows_left) rows down, min(u,
// cols_left) columns across), never i0 + t and j0 + u. With both forms in
// the shader, NVIDIA's Vulkan driver (580.159.04, H200) computed
// min(j0 + 1, n - 1) as if it were min(i0 + 1, n - 1): every block with
// i0 != j0 read the wrong columns of `b` and stored to the wrong columns of
// `c` (55 conformance failures in mm, bmm, linear, sdpa, adaptive pooling
// and their gradients; lavapipe was right). The steps have no such twin.
// linalg_texel.comp clamps the same way (its column-major b had the same
// pattern; whether it failed there was not isolated).
#define TILED(NAME, VEC, REF, STORE, ESIZE)                                                 \
  void NAME(Params p) {                                                                     \
    const int64_t rows = (p.m + 3L) / 4L, cols = (p.n + 3L) / 4L;                           \
    const uint64_t total = uint64_t(p.batch * rows * cols);                                 \
    const uint64_t threads = invocations();                                                 \
    const int64_t da = p.a.strides[2] * int64_t(ESIZE), db = p.b.strides[1] * int64_t(ESIZE); \
    const int64_t arow = p.a.strides[1] * int64_t(ESIZE), bcol = p.b.strides[2] * int64_t(ESIZE); \
    const int64_t crow = p.c.strides[1] * int64_t(ESIZE), ccol = p.c.strides[2] * int64_t(ESIZE); \
    for (uint64_t e = global_index(); e < total; e += threads) {                            \
      const int64_t c = int64_t(e % uint64_t(cols));                                        \
      const int64_t rest = int64_t(e / uint64_t(cols));                                     \
      const int64_t r = rest % rows;                                                        \
      const int64_t bi = rest / rows;                                                       \
      const int64_t i0 = r * 4L, j0 = c * 4L;                                               \
      /* rows / columns of the block after its first that lie inside c; */                  \
      /* the loads repeat the last one (reads in range, extras not stored) */               \
      const int64_t rows_left = p.m - 1L - i0, cols_left = p.n - 1L - j0;                   \
      uint64_t a0 = addr(p.a, bi * p.a.strides[0] + i0 * p.a.strides[1], ESIZE);            \
      uint64_t a1 = a0 + uint64_t(min(1L, rows_left) * arow);                               \
      uint64_t a2 = a0 + uint64_t(min(2L, rows_left) * arow);                               \
      uint64_t a3 = a0 + uint64_t(min(3L, rows_left) * arow);                               \
      uint64_t b0 = addr(p.b, bi * p.b.strides[0] + j0 * p.b.strides[2], ESIZE);            \
      uint64_t b1 = b0 + uint64_t(min(1L, cols_left) * bcol);                               \
      uint64_t b2 = b0 + uint64_t(min(2L, cols_left) * bcol);                               \
      uint64_t b3 = b0 + uint64_t(min(3L, cols_left) * bcol);                               \
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
      const uint64_t c00 =                                                                  \
          addr(p.c, bi * p.c.strides[0] + i0 * p.c.strides[1] + j0 * p.c.strides[2], ESIZE); \
      STORE_ROW(STORE, acc0, 0L)                                                            \
      STORE_ROW(STORE, acc1, 1L)                                                            \
      STORE_ROW(STORE, acc2, 2L)                                                            \
      STORE_ROW(STORE, acc3, 3L)                                                            \
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
