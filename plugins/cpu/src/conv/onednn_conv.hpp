// onednn_conv.hpp - float32 convolution and transposed convolution through
// oneDNN (2.6), with a cache of primitives keyed by the whole problem.
//
// The source and destination keep the caller's layout (any positive strides,
// NCHW for the core's outputs); oneDNN picks its own layouts (format any:
// nChw8c and blocked weights on AVX2), and reorders convert in and out. A cache
// entry holds the convolution primitive and the three reorder primitives, so a
// repeated call creates nothing: it looks up the entry (one map lookup under a
// mutex), takes the blocked buffers from the caller's scratch allocator and
// runs the reorders and the convolution. The weights are reordered on every
// call (a few microseconds for typical layers): caching reordered weights by
// address would go stale when the caller updates them in place.
//
// Thread safety: run() may be called concurrently; primitives are shared
// read-only. At most kMaxEntries entries are kept (cleared when full).
#ifndef TESSERA_PLUGINS_CPU_CONV_ONEDNN_CONV_HPP_
#define TESSERA_PLUGINS_CPU_CONV_ONEDNN_CONV_HPP_

#include <compare>
#include <cstddef>
#include <cstdint>

namespace tessera::cpu {

// One convolution, sizes > 0. Strides are in elements and positive (the caller
// packs anything else). Weights are PyTorch's: (O, C/groups, k...) or,
// transposed, (C, O/groups, k...).
struct conv_problem {
  int32_t spatial = 2;  // 1..3
  int32_t threads = 1;
  int64_t n = 0, c = 0, o = 0, groups = 1;
  int64_t in[3] = {}, kernel[3] = {}, out[3] = {};
  int64_t stride[3] = {}, padding[3] = {}, dilation[3] = {}, output_padding[3] = {};
  int64_t src_strides[5] = {}, weight_strides[5] = {}, dst_strides[5] = {};
  bool transposed = false, has_bias = false;
  auto operator<=>(const conv_problem&) const = default;
};

// Scratch memory for the blocked buffers: returns `bytes` bytes valid until
// the call returns (the kernel call's scratch allocator).
struct conv_scratch {
  virtual void* get(size_t bytes) = 0;

 protected:
  ~conv_scratch() = default;
};

inline constexpr size_t kMaxConvEntries = 128;

// dst = conv(src, weights) + bias. Returns false when oneDNN has no
// implementation for the problem (the caller falls back to loops). The caller
// has set the calling thread's OpenMP default to p.threads. Exceptions other
// than "unimplemented" propagate (as sdk status errors from the caller's guard).
bool onednn_convolution(const conv_problem& p, const float* src, const float* weights,
                        const float* bias, float* dst, conv_scratch& scratch);

// The gradients of a plain (not transposed) convolution: diff_src =
// d(conv)/d(src) applied to diff_dst (oneDNN's backward data), diff_weights
// and diff_bias (backward weights); a null output is not computed. src,
// weights, diff_dst, diff_src and diff_weights use p's strides (src_strides,
// weight_strides, dst_strides; diff_src those of src, diff_weights those of
// weights); diff_bias is 1-d of O when p.has_bias. Returns false when oneDNN
// has no implementation (the caller decomposes). Threads and exceptions as
// onednn_convolution.
bool onednn_convolution_backward(const conv_problem& p, const float* src, const float* weights,
                                 const float* diff_dst, float* diff_src, float* diff_weights,
                                 float* diff_bias, conv_scratch& scratch);

// Cached entries (tests and diagnostics).
size_t onednn_convolution_cache_size();

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_CONV_ONEDNN_CONV_HPP_
