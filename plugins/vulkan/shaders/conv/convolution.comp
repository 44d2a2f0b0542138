// convolution.comp - direct convolution for conv/convolution.cpp's `convolution`:
// 1 to 3 spatial dims (the host adds leading size-1 dims, so the shader
// always sees 3), stride, padding, dilation, groups, optional bias, plain
// and transposed, float32 and float64, any strides on every operand.
//
// Work item = (n, group, block of OB output channels of that group, z, y,
// x), row-major with x fastest so neighbouring invocations write
// neighbouring elements (grid-stride loop over `items`). An item sums over
// the group's input channels and the kernel taps, for its OB channels at
// once (each input element loaded feeds OB multiply-adds; the last block of
// a group may be partial), starting from the bias, and rounds once.
// Accumulation in float for float32 (as mm does) and double for float64.
//  - plain: input position i = pos * stride - padding + tap * dilation,
//    weight (O, C/groups, k...);
//  - transposed (a gather): output position pos receives input position i
//    through tap t when pos + padding - t * dilation = i * stride,
//    weight (C, O/groups, k...).
// Taps that land outside the input (the zero padding) are skipped.
// Addresses advance by byte strides (64-bit adds) in the inner loop.
//
// The parameter block must match conv/convolution.cpp's struct ConvParams.
#version 460
#include "common.glsl"

struct Params {
  int64_t items;   // work items: N * groups * ceil((O / groups) / OB) * out spatial
  int64_t batch;   // N
  int64_t c;       // input channels
  int64_t o;       // output channels
  int64_t groups;
  int64_t bias_stride;
  int64_t in_size[3];  // spatial sizes, outer first; missing dims are 1
  int64_t kernel[3];
  int64_t out_size[3];
  int64_t stride[3];
  int64_t padding[3];
  int64_t dilation[3];
  int transposed;
  int has_bias;
  // t[0] out, t[1] input, t[2] weight: strides over (N or C, C or O, z, y, x);
  // t[3] bias (its own stride: bias_stride).
  Operand t[4];
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32 { float v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer F64 { double v; };

// Output channels per work item: Device::conv_block, a specialization
// constant (Note [Output-channel blocks]): 4 on lavapipe, 1 on GPUs.
layout(constant_id = 1) const int OB = 4;

// The input coordinate that tap `t` of dim `d` reads for output coordinate
// `pos`, or -1 when it reads none (padding, or a transposed stride gap).
int64_t source(Params p, int d, int64_t pos, int64_t t) {
  int64_t i;
  if (p.transposed == 0) {
    i = pos * p.stride[d] - p.padding[d] + t * p.dilation[d];
  } else {
    const int64_t u = pos + p.padding[d] - t * p.dilation[d];
    if (u < 0L || u % p.stride[d] != 0L) return -1L;
    i = u / p.stride[d];
  }
  return i < p.in_size[d] ? i : -1L;  // i < 0 stays negative
}

// conv_<T>(p): the whole loop for element type T (float or double), stored
// in buffer reference type BUF of SIZE bytes. A macro because GLSL has no
// templates; comments inside use the block form.
#define DEFINE_CONV(NAME, T, BUF, SIZE)                                                       \
  void NAME(Params p) {                                                                       \
    const Operand y = p.t[0], x = p.t[1], w = p.t[2];                                         \
    const int64_t og = p.o / p.groups, cg = p.c / p.groups;                                   \
    const int64_t blocks = (og + OB - 1) / OB;                                                \
    /* per input channel and per output channel of the block, in bytes */                     \
    const int64_t xcs = x.strides[1] * SIZE;                                                  \
    const int64_t wcs = (p.transposed == 0 ? w.strides[1] : w.strides[0]) * SIZE;             \
    const int64_t wos = (p.transposed == 0 ? w.strides[0] : w.strides[1]) * SIZE;             \
    const uint64_t threads = invocations();                                                   \
    for (uint64_t e = global_index(); e < uint64_t(p.items); e += threads) {                  \
      int64_t rest = int64_t(e);                                                              \
      const int64_t pos2 = rest % p.out_size[2];                                              \
      rest /= p.out_size[2];                                                                  \
      const int64_t pos1 = rest % p.out_size[1];                                              \
      rest /= p.out_size[1];                                                                  \
      const int64_t pos0 = rest % p.out_size[0];                                              \
      rest /= p.out_size[0];                                                                  \
      const int64_t blk = rest % blocks;                                                      \
      rest /= blocks;                                                                         \
      const int64_t grp = rest % p.groups;                                                    \
      const int64_t nb = rest / p.groups;                                                     \
      const int64_t oc0 = grp * og + blk * OB;                                                \
      const int cnt = int(min(int64_t(OB), og - blk * OB));                                   \
      const uint64_t ba = p.t[3].address + uint64_t(oc0 * p.bias_stride * SIZE);              \
      const uint64_t bs = uint64_t(p.bias_stride * SIZE);                                     \
      const bool hb = p.has_bias != 0;                                                        \
      T acc0 = hb ? BUF(ba).v : T(0);                                                         \
      T acc1 = hb && cnt > 1 ? BUF(ba + bs).v : T(0);                                         \
      T acc2 = hb && cnt > 2 ? BUF(ba + 2UL * bs).v : T(0);                                   \
      T acc3 = hb && cnt > 3 ? BUF(ba + 3UL * bs).v : T(0);                                   \
      const int64_t xbase = nb * x.strides[0] + grp * cg * x.strides[1];                      \
      const int64_t wbase = p.transposed == 0                                                 \
                                ? oc0 * w.strides[0]                                          \
                                : grp * cg * w.strides[0] + blk * OB * w.strides[1];          \
      for (int64_t k0 = 0L; k0 < p.kernel[0]; ++k0) {                                         \
        const int64_t i0 = source(p, 0, pos0, k0);                                            \
        if (i0 < 0L) continue;                                                                \
        for (int64_t k1 = 0L; k1 < p.kernel[1]; ++k1) {                                       \
          const int64_t i1 = source(p, 1, pos1, k1);                                          \
          if (i1 < 0L) continue;                                                              \
          for (int64_t k2 = 0L; k2 < p.kernel[2]; ++k2) {                                     \
            const int64_t i2 = source(p, 2, pos2, k2);                                        \
            if (i2 < 0L) continue;                                                            \
            uint64_t xa = x.address + uint64_t((xbase + i0 * x.strides[2] + i1 * x.strides[3] + \
                                                i2 * x.strides[4]) * SIZE);                   \
            uint64_t wa = w.address + uint64_t((wbase + k0 * w.strides[2] + k1 * w.strides[3] + \
                                                k2 * w.strides[4]) * SIZE);                   \
            /* a partial block repeats its last channel (read, never stored) */               \
            const uint64_t w1 = uint64_t(min(cnt - 1, 1) * wos);                              \
            const uint64_t w2 = uint64_t(min(cnt - 1, 2) * wos);                              \
            const uint64_t w3 = uint64_t(min(cnt - 1, 3) * wos);                              \
            for (int64_t ci = 0L; ci < cg; ++ci) {                                            \
              const T xv = BUF(xa).v;                                                         \
              acc0 += xv * BUF(wa).v;                                                         \
              acc1 += xv * BUF(wa + w1).v;                                                    \
              acc2 += xv * BUF(wa + w2).v;                                                    \
              acc3 += xv * BUF(wa + w3).v;                                                    \
              xa += uint64_t(xcs);                                                            \
              wa += uint64_t(wcs);                                                            \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
      const int64_t yo = nb * y.strides[0] + oc0 * y.strides[1] + pos0 * y.strides[2] +       \
                         pos1 * y.strides[3] + pos2 * y.strides[4];                           \
      const uint64_t ya = y.address + uint64_t(yo * SIZE), ys = uint64_t(y.strides[1] * SIZE); \
      BUF(ya).v = acc0;                                                                       \
      if (cnt > 1) BUF(ya + ys).v = acc1;                                                     \
      if (cnt > 2) BUF(ya + 2UL * ys).v = acc2;                                               \
      if (cnt > 3) BUF(ya + 3UL * ys).v = acc3;                                               \
    }                                                                                         \
  }

DEFINE_CONV(conv_f32, float, F32, 4L)
DEFINE_CONV(conv_f64, double, F64, 8L)

void main() {
  Params p = pc.params;
  if (p.t[0].dtype == FLOAT64)
    conv_f64(p);
  else
    conv_f32(p);
}
