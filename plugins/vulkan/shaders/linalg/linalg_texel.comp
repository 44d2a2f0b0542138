// linalg_texel.comp - float32 mm / bmm through storage texel buffers (Note
// [Texel fast paths], device.hpp): each invocation computes a 4x4 block of
// the output, reading a and m four k-steps at a time as 16-byte texels, so
// eight vector gathers feed 64 multiply-adds (the buffer-reference variant in
// linalg.comp needs eight per-lane loops for 16).
//
// Layouts (texel units: strides divided by 4; the host checks every
// condition and otherwise uses linalg.comp):
//  - a row-major (a_layout 0): a[i][k..k+3] is one texel; rows past m clamp
//    to the last (read, never stored). a column-major (1): a[i..i+3][k] is
//    one texel (m % 4 == 0).
//  - b row-major (b_layout 0): b[k][j..j+3] is one texel (n % 4 == 0). b
//    column-major (1): b[k..k+3][j] is one texel; columns past n clamp.
//  - out row-major, n % 4 == 0: out[i][j..j+3] is one texel.
//  - k % 4 == 0.
// Accumulation: float, in k order, as linalg.comp's float32 variant.
//
// Note [Loops outside branches]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Lavapipe runs a loop under a lane mask and
// writes every value the loop carries (here 16 accumulators and two
// addresses) through selects with the lane masks, on every iteration. So the
// loop here sits under no branch: invocations past the end compute the last
// block again and only the stores test `index < total`. Measured on 1024^3
// in alternating runs (2 lavapipe threads): the loop without the division
// `kk / 4` went from 19.3-19.9 to 20.7-21.4 GFLOP/s (loop body 743 -> 683
// instructions in the JIT code), and moving the `if` to the stores to
// 22.9-23.9 (675 instructions: the gain is not in the count, and which
// instructions it saved is not known).
//
// Layout must match linalg/matmul.cpp's TexelParams.
#version 460
#include "common.glsl"

layout(set = 0, binding = 1, rgba32f) uniform writeonly imageBuffer C;
layout(set = 0, binding = 2, rgba32f) uniform readonly imageBuffer A;
layout(set = 0, binding = 3, rgba32f) uniform readonly imageBuffer B;

// The layouts are specialization constants (Kernels::Spec): one pipeline per
// combination, so the loop holds only its own four-plus-four gathers (a
// run-time branch would run all sixteen under lane masks on lavapipe).
layout(constant_id = 1) const int A_LAYOUT = 0;
layout(constant_id = 2) const int B_LAYOUT = 0;

layout(push_constant, std430) uniform Params {
  int batch;
  int m;
  int n;
  int k;
  int a_texel, a_layout, a_batch4, a_major4;  // a_layout: A_LAYOUT; a_major4: row stride / 4 (row-major) or column stride / 4
  int b_texel, b_layout, b_batch4, b_major4;  // b_layout: B_LAYOUT; b_major4: row stride / 4 (row-major) or column stride / 4
  int c_texel, c_batch4, c_row4;
} p;

void main() {
  const int rows = (p.m + 3) / 4, cols = p.n / 4 + ((p.n & 3) != 0 ? 1 : 0);
  const uint64_t total = uint64_t(p.batch) * uint64_t(rows) * uint64_t(cols);
  // One block per invocation, no grid-stride loop: the host dispatches one
  // invocation per block (total >= 1), and on lavapipe a loop costs more
  // than it saves. Invocations past the end compute the last block again and
  // store nothing: the loop sits under no branch, because lavapipe blends
  // every loop-carried value with each enclosing branch's lane mask on every
  // iteration (Note [Loops outside branches]).
  const uint64_t index = global_index();
  const bool live = index < total;
  const uint64_t e = live ? index : total - 1;
  const int c = int(e % uint64_t(cols));
  const uint64_t rest = e / uint64_t(cols);
  const int r = int(rest % uint64_t(rows));
  const int bi = int(rest / uint64_t(rows));
  const int i0 = r * 4, j0 = c * 4;
  const int abase = p.a_texel + bi * p.a_batch4;
  const int bbase = p.b_texel + bi * p.b_batch4;
  // rows / columns of the block after its first that lie inside the output
  const int rows_left = p.m - 1 - i0, cols_left = p.n - 1 - j0;
  // per-row (a row-major) / per-column (b column-major) texel addresses at
  // k = 0: the first plus a clamped step, never i0 + t / j0 + t (Note
  // [NVIDIA block edges], linalg.comp)
  const ivec4 steps = ivec4(0, 1, 2, 3);
  ivec4 arow = (i0 + min(steps, ivec4(rows_left))) * p.a_major4 + abase;
  ivec4 bcol = (j0 + min(steps, ivec4(cols_left))) * p.b_major4 + bbase;
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
  // Texel addresses step by one texel (row-major a, column-major b) or by
  // four rows / columns (the others) per iteration: no division in the loop.
  int at = abase + i0 / 4, bt = bbase + j0 / 4;
  const int k4 = p.k / 4;
  for (int kt = 0; kt < k4; ++kt) {
    // x[s] = a[i0..i0+3][4 kt + s]
    mat4 x;
    if (A_LAYOUT == 0) {
      x = transpose(mat4(imageLoad(A, arow.x + kt), imageLoad(A, arow.y + kt),
                         imageLoad(A, arow.z + kt), imageLoad(A, arow.w + kt)));
    } else {
      x = mat4(imageLoad(A, at), imageLoad(A, at + p.a_major4), imageLoad(A, at + 2 * p.a_major4),
               imageLoad(A, at + 3 * p.a_major4));
      at += 4 * p.a_major4;
    }
    // y[s] = b[4 kt + s][j0..j0+3]
    mat4 y;
    if (B_LAYOUT == 0) {
      y = mat4(imageLoad(B, bt), imageLoad(B, bt + p.b_major4), imageLoad(B, bt + 2 * p.b_major4),
               imageLoad(B, bt + 3 * p.b_major4));
      bt += 4 * p.b_major4;
    } else {
      y = transpose(mat4(imageLoad(B, bcol.x + kt), imageLoad(B, bcol.y + kt),
                         imageLoad(B, bcol.z + kt), imageLoad(B, bcol.w + kt)));
    }
    for (int s = 0; s < 4; ++s) {
      acc0 += x[s].x * y[s];
      acc1 += x[s].y * y[s];
      acc2 += x[s].z * y[s];
      acc3 += x[s].w * y[s];
    }
  }
  const int c0 = p.c_texel + bi * p.c_batch4 + j0 / 4 + i0 * p.c_row4;
  if (!live) return;
  imageStore(C, c0, acc0);
  if (rows_left >= 1) imageStore(C, c0 + p.c_row4, acc1);
  if (rows_left >= 2) imageStore(C, c0 + 2 * p.c_row4, acc2);
  if (rows_left >= 3) imageStore(C, c0 + 3 * p.c_row4, acc3);
}
