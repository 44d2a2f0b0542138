// kernel_util.hpp - what the Vulkan plugin's kernel families share: tensors
// as shader operands, the SDK's argument readers for buffer-carrying
// tensors, scratch memory, and table entries.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device.hpp"
#include "kernels.hpp"
#include "memory.hpp"
#include "stream.hpp"
#include "tessera/sdk/sdk.hpp"

namespace tessera::vulkan {

// A tensor as shaders/common.glsl's Operand reads it (std430, 80 bytes).
struct OperandParams {
  uint64_t address = 0;
  int64_t strides[8] = {};
  int32_t dtype = 0;
  int32_t pad_ = 0;
};
static_assert(sizeof(OperandParams) == 80);

// `d` as an operand: the device address of its first element (0 when it has
// no memory) and its first `ndim` strides.
inline OperandParams operand(const tsr_tensor_desc& d, int ndim) {
  OperandParams o;
  const auto* a = static_cast<const Allocation*>(d.buffer);
  o.address = a != nullptr ? a->address() + static_cast<uint64_t>(d.byte_offset) : 0;
  o.dtype = d.dtype;
  for (int k = 0; k < ndim && k < d.ndim; ++k) o.strides[k] = d.strides[k];
  return o;
}

// Merges the dimensions of an elementwise iteration space (`sizes`, `ndim`
// dims, row-major) that every operand walks as one: size-1 dimensions go,
// and dimension d folds into d + 1 when each operand's stride[d] ==
// stride[d + 1] * sizes[d + 1]. `ops[k].strides` are rewritten to match.
// Returns the new ndim (0 for a single element). The shaders unravel an
// element index with one division per dimension, so a contiguous tensor of
// any rank becomes one dimension and costs none (pointwise_strided.comp).
inline int coalesce_dims(int ndim, int64_t* sizes, OperandParams* ops, int nops) {
  int out = 0;  // dims kept so far, in sizes[0..out)
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = out > 0;
    for (int k = 0; merge && k < nops; ++k)
      merge = ops[k].strides[out - 1] == ops[k].strides[d] * sizes[d];
    if (merge) {
      sizes[out - 1] *= sizes[d];
      for (int k = 0; k < nops; ++k) ops[k].strides[out - 1] = ops[k].strides[d];
    } else {
      sizes[out] = sizes[d];
      for (int k = 0; k < nops; ++k) ops[k].strides[out] = ops[k].strides[d];
      ++out;
    }
  }
  for (int d = out; d < ndim; ++d) {
    sizes[d] = 0;
    for (int k = 0; k < nops; ++k) ops[k].strides[d] = 0;
  }
  return out;
}

// Note [Texel fast paths] (device.hpp): the index of `d`'s first byte as a
// 16-byte texel of its block's views, or -1 when the block has no views,
// `d` does not start on a 16-byte boundary, or `nbytes` from its start run
// past the views.
inline int64_t texel_of(const tsr_tensor_desc& d, uint64_t nbytes) {
  const auto* a = static_cast<const Allocation*>(d.buffer);
  if (a == nullptr || a->block->view_f32x4 == VK_NULL_HANDLE || d.byte_offset < 0) return -1;
  const uint64_t start = a->offset + static_cast<uint64_t>(d.byte_offset);
  if (start % 16 != 0 || start + nbytes > a->block->view_bytes) return -1;
  return static_cast<int64_t>(start / 16);
}
// shaders/common.glsl's RowDivision: row_of(i) = floor(i / d) for
// 0 <= i < 2^31 as (i * multiplier) >> shift, multiplier = ceil(2^shift / d)
// and shift = 31 + ceil(log2 d), which is exact over that range (Granlund
// and Montgomery, "Division by invariant integers using multiplication").
// d must be >= 1; single_row() maps every i to row 0.
struct RowDivision {
  uint32_t multiplier = 0;
  uint32_t shift = 0;
  static RowDivision single_row() { return {}; }
  static RowDivision by(uint32_t d) {
    uint32_t log2 = 0;
    while ((uint64_t{1} << log2) < d) ++log2;
    const uint32_t shift = 31 + log2;
    const uint64_t m = ((uint64_t{1} << shift) + d - 1) / d;  // < 2^32 for d >= 1
    return {static_cast<uint32_t>(m), shift};
  }
};
static_assert(sizeof(RowDivision) == 8);

// Note [Texel fast paths] (device.hpp): a coalesced elementwise iteration
// as the texel shaders walk it, `rows` rows of `cols4` 16-byte texels. A
// 1-D iteration is one row holding its whole texels (the tail of numel % 4
// elements is left over); a 2-D one qualifies when every row is whole
// texels. An operand qualifies when its elements within a row are
// contiguous and its rows are whole texels apart (row stride 0 too: one row
// broadcast to all); the output's too, and it must start on a texel of its
// block's views (so must each texel input). `P` is a kernel family's
// parameter block with numel, ndim, sizes and operands t[] (OperandParams).
struct TexelGrid {
  int64_t rows = 0;
  int64_t cols4 = 0;   // texels per row
  bool whole = false;  // covers the iteration (no tail)

  // The grid of `p` for elements of `esize` bytes; rows == 0 when it does
  // not qualify.
  template <class P>
  static TexelGrid of(const P& p, int64_t esize) {
    TexelGrid g;
    if (p.ndim == 1) {
      g.rows = 1;
      g.cols4 = p.numel * esize / 16;
      g.whole = g.cols4 * 16 == p.numel * esize;
    } else if (p.ndim == 2 && p.sizes[1] * esize % 16 == 0) {
      g.rows = p.sizes[0];
      g.cols4 = p.sizes[1] * esize / 16;
      g.whole = true;
    }
    if (g.cols4 == 0 || g.rows * g.cols4 > INT32_MAX) g.rows = 0;
    return g;
  }
  // Operand k's bytes between rows (0 for one row), or -1 when it is not
  // contiguous within rows or its rows are not whole texels apart.
  template <class P>
  int64_t row_bytes(const P& p, int k, int64_t esize) const {
    if (p.t[k].strides[p.ndim - 1] != 1) return -1;
    const int64_t stride = p.ndim == 2 ? p.t[k].strides[0] * esize : 0;
    return stride >= 0 && stride % 16 == 0 ? stride : -1;
  }
  // Operand k's first texel in its block's views, or -1: see row_bytes; the
  // output's (k == 0) rows must not coincide; every texel index must fit in
  // int32 (the shaders' indices). `desc` is the operand's tensor.
  template <class P>
  int64_t first_texel(const P& p, int k, int64_t esize, const tsr_tensor_desc& desc) const {
    const int64_t row = row_bytes(p, k, esize);
    if (row < 0 || (k == 0 && rows > 1 && row == 0) || p.t[k].address % 16 != 0) return -1;
    const int64_t extent = (rows - 1) * row + cols4 * 16;
    const int64_t first = texel_of(desc, static_cast<uint64_t>(extent));
    return first >= 0 && first + extent / 16 <= INT32_MAX ? first : -1;
  }
  RowDivision division() const {
    return rows == 1 ? RowDivision::single_row() : RowDivision::by(static_cast<uint32_t>(cols4));
  }
  // Writes what every texel shader's parameter block `t` takes about the
  // grid and the output (operand 0 of `p`): n4, cols4, rows, out_address,
  // out_row.
  template <class T, class P>
  void describe(T& t, const P& p, int64_t esize) const {
    t.n4 = rows * cols4;
    t.cols4 = static_cast<int32_t>(cols4);
    t.rows = division();
    t.out_address = p.t[0].address;
    t.out_row = static_cast<uint64_t>(row_bytes(p, 0, esize));
  }
};

inline const Block& block_of(const tsr_tensor_desc& d) {
  return *static_cast<const Allocation*>(d.buffer)->block;
}

// Reading a kernel call's arguments: the SDK's readers (tessera/sdk/
// kernel_args.hpp), with tensors checked to carry their allocation in
// tsr_tensor_desc.buffer (Note [Vulkan memory]: kernels reach memory through
// the Allocation, never a host address).
inline const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int i, const char* name) {
  return sdk::tensor_arg<sdk::memory::buffer>(call, i, name);
}
inline const tsr_tensor_desc* optional_tensor_arg(const tsr_kernel_call& call, int i,
                                                  const char* name) {
  return sdk::optional_tensor_arg<sdk::memory::buffer>(call, i, name);
}
inline tsr_tensor_desc& out_arg(const tsr_kernel_call& call, int i) {
  return sdk::out_arg<sdk::memory::buffer>(call, i);
}
using sdk::bool_arg;
using sdk::float_arg;
using sdk::int_arg;
using sdk::int_list_arg;
using sdk::scalar_arg;
using sdk::scalar_double;
using sdk::scalar_int;

// A dtype's name for messages ("a non-floating dtype" outside the floats the
// fused kernels take).
inline const char* dtype_label(int32_t dtype) {
  return sdk::is_floating_dtype(dtype) ? sdk::dtype_name(dtype) : "a non-floating dtype";
}

// The stream a kernel call runs on (NULL: the device's default stream).
inline tsr_plugin_stream& stream_of(Device& d, const tsr_kernel_call& call) {
  return call.stream != nullptr ? *call.stream : *d.default_stream;
}

// The device's kernels, after reporting any pending validation error.
inline Kernels& kernels_of(tsr_plugin_context* context, const tsr_kernel_call& call) {
  check_validation(*context);
  return *device_at(*context, call.device, call.op_name).kernels;
}

// `nbytes` of the core's scratch memory for the duration of the call (freed
// by the core in stream order after the kernel returns): sdk::scratch_buffer,
// whose handle is this plugin's Allocation.
inline Allocation& scratch(const tsr_kernel_call& call, size_t nbytes, const char* what) {
  return *static_cast<Allocation*>(sdk::scratch_buffer(call, nbytes, what).handle);
}

using sdk::kFloatingDtypes;
using sdk::kIntegralDtypes;
using sdk::kNumericDtypes;
using sdk::kRealDtypes;
using sdk::make_entry;

}  // namespace tessera::vulkan

// Embedding a shader (shaders/<family>/<name>.comp), in a family's .cpp:
//   const uint32_t kReduceSpirv[] = {
//   #include "reduce.spv.inc"
//   };
//   const Shader kReduce{"reduce", kReduceSpirv, sizeof kReduceSpirv};
