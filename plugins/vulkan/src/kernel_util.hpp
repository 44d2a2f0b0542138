// kernel_util.hpp - what the Vulkan plugin's kernel families share: reading
// a kernel call's arguments, tensors as shader operands, and table entries.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device.hpp"
#include "kernels.hpp"
#include "memory.hpp"
#include "stream.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/status.hpp"

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
// any rank becomes one dimension and costs none (elementwise.comp).
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

inline int64_t numel_of(const tsr_tensor_desc& d) {
  int64_t n = 1;
  for (int k = 0; k < d.ndim; ++k) n *= d.sizes[k];
  return n;
}

inline const tsr_value& arg_at(const tsr_kernel_call& call, int i, int32_t tag, const char* what) {
  if (i >= call.nargs || call.args[i].tag != tag)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: argument %d is not %s", call.op_name,
                      i, what);
  return call.args[i];
}
inline const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int i) {
  const tsr_value& v = arg_at(call, i, TSR_VALUE_TENSOR, "a tensor");
  if (v.u.desc == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: argument %d is NULL", call.op_name,
                      i);
  return *v.u.desc;
}
inline tsr_scalar scalar_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_SCALAR, "a Scalar").u.scalar;
}
inline int64_t int_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_INT, "an int").u.i;
}
inline bool bool_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_BOOL, "a bool").u.b != 0;
}
inline double scalar_double(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128 ? s.v.f : static_cast<double>(s.v.i);
}
inline int64_t scalar_int(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128 ? static_cast<int64_t>(s.v.f) : s.v.i;
}

// What the fused kernels (nn/, conv/) read and check.
inline const char* dtype_label(int32_t dtype) {
  switch (dtype) {
    case TSR_FLOAT16:
      return "float16";
    case TSR_BFLOAT16:
      return "bfloat16";
    case TSR_FLOAT32:
      return "float32";
    case TSR_FLOAT64:
      return "float64";
    default:
      return "a non-floating dtype";
  }
}

inline tsr_tensor_desc& out_at(const tsr_kernel_call& call, int i) {
  if (call.nouts <= i || call.outs == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: expected %d outputs, got %d",
                      call.op_name, i + 1, static_cast<int>(call.nouts));
  return call.outs[i];
}

// Tensor argument i, or NULL when it is None.
inline const tsr_tensor_desc* optional_tensor(const tsr_kernel_call& call, int i) {
  if (i < call.nargs && call.args[i].tag == TSR_VALUE_NONE) return nullptr;
  return &tensor_arg(call, i);
}

inline double float_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_FLOAT, "a float").u.f;
}

// An int list argument of exactly `n` entries (the core resolves single values).
inline const int64_t* int_list(const tsr_kernel_call& call, int i, int n, const char* name) {
  const tsr_value& v = arg_at(call, i, TSR_VALUE_INT_LIST, "an int list");
  if (v.len != n)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument '%s' has %d entries; expected %d (one per spatial dim)",
                      call.op_name, name, static_cast<int>(v.len), n);
  return v.u.ints;
}

inline bool same_sizes(const tsr_tensor_desc& a, const tsr_tensor_desc& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.sizes[d] != b.sizes[d]) return false;
  return true;
}

// Row-major contiguous (strides of size-1 dims are free).
inline bool contiguous(const tsr_tensor_desc& d) {
  int64_t expected = 1;
  for (int k = d.ndim - 1; k >= 0; --k) {
    if (d.sizes[k] != 1 && d.strides[k] != expected) return false;
    expected *= d.sizes[k];
  }
  return true;
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
// by the core in stream order after the kernel returns); `what` names it in
// the RESOURCE_EXHAUSTED message.
inline Allocation& scratch(const tsr_kernel_call& call, size_t nbytes, const char* what) {
  if (call.scratch == nullptr)
    sdk::throw_status(TSR_INTERNAL, "vulkan plugin %s: no scratch allocator", call.op_name);
  tsr_plugin_buffer buffer{};
  if (tsr_status* status = call.scratch(call.scratch_context, nbytes, &buffer)) {
    (void)status;  // the host owns it; report our own message
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                      "vulkan plugin %s: no scratch memory for %s (%zu bytes)", call.op_name, what,
                      nbytes);
  }
  return *static_cast<Allocation*>(buffer.handle);
}

using sdk::kFloatingDtypes;
using sdk::kIntegralDtypes;
using sdk::kNumericDtypes;
using sdk::kRealDtypes;
using sdk::make_entry;

}  // namespace tessera::vulkan

// Embedding a shader (shaders/<name>.comp), in a family's .cpp:
//   const uint32_t kReduceSpirv[] = {
//   #include "reduce.spv.inc"
//   };
//   const Shader kReduce{"reduce", kReduceSpirv, sizeof kReduceSpirv};
