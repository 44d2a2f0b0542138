// tessera/sdk/op_checks.hpp - the host's contract for particular ops, checked
// in one place for every plugin: what kernel_args.hpp's readers cannot know
// from one argument alone (shapes that must agree, arguments the host
// resolves before the call, function codes in range).
//
//   const int dim = sdk::check_index_shape(call, self, index, sdk::int_arg(call, 1, "dim"));
//   const sdk::norm_rows rows = sdk::check_normalized_shape(call, input, normalized_shape);
//   const sdk::convolution_args conv = sdk::read_convolution(call);
//
// Every check throws sdk::status_error(TSR_INVALID_ARGUMENT) naming the op,
// the argument and the value, like the readers; a kernel runs under
// sdk::trampoline (or guard), which turns the throw into a status. The host
// never makes a call these checks reject: they keep a bad call from a buggy
// or foreign host from reading out of bounds.
#ifndef TESSERA_SDK_OP_CHECKS_HPP_
#define TESSERA_SDK_OP_CHECKS_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "tessera/plugin.h"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

// Throws unless argument `index` is None (or absent): for arguments the host
// resolves before the call; `why` says how ("the host applies the sorter
// before the call").
inline void expect_none(const tsr_kernel_call& call, int index, const char* name, const char* why) {
  if (!is_none(call, index)) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: argument '%s' must be None here: %s", op_name(call),
                 name, why);
  }
}

// An int argument holding a function code of a family with `count` codes
// (opcodes.h's *_CODE_COUNT); `family` names the enum in the message
// ("tsr_scatter_op").
inline int32_t code_arg(const tsr_kernel_call& call, int index, const char* name, int32_t count,
                        const char* family) {
  const int64_t code = int_arg(call, index, name);
  if (code < 0 || code >= count) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: argument '%s' = %lld is not a %s", op_name(call), name,
                 static_cast<long long>(code), family);
  }
  return static_cast<int32_t>(code);
}

// ---- gather, _scatter_ ----

// gather and _scatter_: `index` is int64 with self's number of dims,
// index.size(d) <= self.size(d) for d != dim, and dim is a dim of self (the
// host passes 0-d tensors as 1-d and resolves negative dims). Returns dim.
inline int check_index_shape(const tsr_kernel_call& call, const tsr_tensor_desc& self,
                             const tsr_tensor_desc& index, int64_t dim) {
  check_dtype(call, index, "index", TSR_INT64);
  if (index.ndim != self.ndim) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: index has %d dims but self has %d; they must have the same number "
                 "of dimensions",
                 op_name(call), static_cast<int>(index.ndim), static_cast<int>(self.ndim));
  }
  const int d0 = check_dim(call, dim, "self", self);
  for (int d = 0; d < self.ndim; ++d) {
    if (d != d0 && index.sizes[d] > self.sizes[d]) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: index has size %lld in dim %d but self only %lld; index.size(d) "
                   "<= self.size(d) is required for d != dim",
                   op_name(call), static_cast<long long>(index.sizes[d]), d,
                   static_cast<long long>(self.sizes[d]));
    }
  }
  return d0;
}

// _scatter_: `src` has index's number of dims and index.size(d) <= src.size(d).
inline void check_scatter_src(const tsr_kernel_call& call, const tsr_tensor_desc& index,
                              const tsr_tensor_desc& src) {
  if (src.ndim != index.ndim) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: src has %d dims but index has %d", op_name(call),
                 static_cast<int>(src.ndim), static_cast<int>(index.ndim));
  }
  for (int d = 0; d < index.ndim; ++d) {
    if (index.sizes[d] > src.sizes[d]) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: index has size %lld in dim %d but src only %lld; index.size(d) <= "
                   "src.size(d) is required",
                   op_name(call), static_cast<long long>(index.sizes[d]), d,
                   static_cast<long long>(src.sizes[d]));
    }
  }
}

// ---- searchsorted.Tensor ----

// searchsorted.Tensor's arguments, read and checked: `side` and `sorter` are
// None (the host folds side into `right` and applies the sorter), self has
// sorted_sequence's dtype, out is int32 (out_int32) or int64 of self's sizes,
// and sorted_sequence is 1-d or shares self's leading dims (per_row).
// Memory: as tensor_arg<Where>.
struct searchsorted_args {
  const tsr_tensor_desc& sorted_sequence;
  const tsr_tensor_desc& self;
  tsr_tensor_desc& out;
  bool out_int32;
  bool right;
  bool per_row;  // sorted_sequence has more than one dim: one boundary list per row
};
template <memory Where = memory::data>
searchsorted_args read_searchsorted(const tsr_kernel_call& call) {
  const tsr_tensor_desc& seq = tensor_arg<Where>(call, 0, "sorted_sequence");
  const tsr_tensor_desc& self = tensor_arg<Where>(call, 1, "self");
  const bool out_int32 = bool_arg(call, 2, "out_int32");
  const bool right = bool_arg(call, 3, "right");
  expect_none(call, 4, "side", "the host folds side into 'right'");
  expect_none(call, 5, "sorter", "the host applies the sorter before the call");
  tsr_tensor_desc& out = out_arg<Where>(call, 0);
  check_dtype(call, self, "self", seq.dtype);
  check_dtype(call, out, "out", out_int32 ? TSR_INT32 : TSR_INT64);
  check_same_sizes(call, out, "out", self, "self");
  if (seq.ndim < 1) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: sorted_sequence must have at least 1 dim",
                 op_name(call));
  }
  const bool per_row = seq.ndim > 1;
  if (per_row) {
    bool ok = seq.ndim == self.ndim;
    for (int d = 0; ok && d + 1 < seq.ndim; ++d) ok = seq.sizes[d] == self.sizes[d];
    if (!ok) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: sorted_sequence must be 1-d or share self's leading dims", op_name(call));
    }
  }
  return {seq, self, out, out_int32, right, per_row};
}

// ---- native_layer_norm ----

// The rows native_layer_norm normalises: `n` elements each (the trailing
// dims, from `axis` on), `rows` of them.
struct norm_rows {
  int axis = 0;
  int64_t n = 1;
  int64_t rows = 1;
};

// Checks that `normalized_shape` is 1 to input.ndim trailing sizes of input.
inline norm_rows check_normalized_shape(const tsr_kernel_call& call, const tsr_tensor_desc& input,
                                        std::span<const int64_t> normalized_shape) {
  norm_rows r;
  const int nshape = static_cast<int>(normalized_shape.size());
  r.axis = input.ndim - nshape;
  if (nshape == 0 || r.axis < 0) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: normalized_shape has %d dims; expected 1 to %d (the input's dims)",
                 op_name(call), nshape, static_cast<int>(input.ndim));
  }
  for (int i = 0; i < nshape; ++i) {
    const int d = r.axis + i;
    if (input.sizes[d] != normalized_shape[i]) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: normalized_shape[%d] = %lld but input has size %lld in dim %d",
                   op_name(call), i, static_cast<long long>(normalized_shape[i]),
                   static_cast<long long>(input.sizes[d]), d);
    }
    r.n *= normalized_shape[i];
  }
  for (int d = 0; d < r.axis; ++d) r.rows *= input.sizes[d];
  return r;
}

// ---- cross_entropy_loss ----

// cross_entropy_loss's class layout: self is (C), (N, C) or (N, C, d1, ...):
// n batches of c classes at d positions each.
struct class_dims {
  int64_t n = 1;
  int64_t c = 1;
  int64_t d = 1;
};

// Checks `reduction` (0 none, 1 mean, 2 sum), that self is not 0-d and that
// target has self's shape without the class dim; returns self's class layout.
inline class_dims check_cross_entropy_target(const tsr_kernel_call& call,
                                             const tsr_tensor_desc& self,
                                             const tsr_tensor_desc& target, int64_t reduction) {
  if (reduction < 0 || reduction > 2) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: reduction %lld is not 0, 1 or 2", op_name(call),
                 static_cast<long long>(reduction));
  }
  if (self.ndim == 0) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'self' is 0-d", op_name(call));
  }
  class_dims r;
  const bool batched = self.ndim >= 2;
  r.n = batched ? self.sizes[0] : 1;
  r.c = batched ? self.sizes[1] : self.sizes[0];
  for (int i = 2; i < self.ndim; ++i) r.d *= self.sizes[i];
  bool shape_ok = target.ndim == (batched ? self.ndim - 1 : 0);
  for (int i = 0; shape_ok && i < target.ndim; ++i) {
    shape_ok = target.sizes[i] == self.sizes[i == 0 ? 0 : i + 1];
  }
  if (!shape_ok) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: argument 'target' (%d dims) does not match self (%d dims): expected "
                 "self's shape without the class dim",
                 op_name(call), static_cast<int>(target.ndim), static_cast<int>(self.ndim));
  }
  return r;
}

// ---- scaled_dot_product_attention ----

// Checks an attn_mask: bool or float32 (else UNIMPLEMENTED naming plugin
// `plugin`, as throw_unsupported_dtype) of shape (batch, hq, l, s); broadcast
// dims come with stride 0.
inline void check_attn_mask(const tsr_kernel_call& call, const tsr_tensor_desc& mask, int64_t batch,
                            int64_t hq, int64_t l, int64_t s, const char* plugin) {
  if (mask.dtype != TSR_BOOL && mask.dtype != TSR_FLOAT32) {
    throw_unsupported_dtype(call, "attn_mask", mask.dtype, plugin);
  }
  const int64_t expected[4] = {batch, hq, l, s};
  bool ok = mask.ndim == 4;
  for (int i = 0; ok && i < 4; ++i) ok = mask.sizes[i] == expected[i];
  if (!ok) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: argument 'attn_mask' must have shape (B, Hq, L, S) = (%lld, %lld, "
                 "%lld, %lld) (broadcast dims with stride 0)",
                 op_name(call), static_cast<long long>(batch), static_cast<long long>(hq),
                 static_cast<long long>(l), static_cast<long long>(s));
  }
}

// ---- _reduce, _arg_reduce, _scan ----

// Which dims of self a reduction reduces (the host resolves dims: non-negative,
// below ndim, sorted, unique).
struct reduced_dims {
  bool flags[TSR_MAX_DIMS] = {};
};

// The `int[]? dim` argument `index` of a reduction over `self` as flags:
// None (or absent) reduces every dim. Throws INVALID_ARGUMENT for dims the
// host did not resolve.
inline reduced_dims reduced_dims_arg(const tsr_kernel_call& call, int index,
                                     const tsr_tensor_desc& self) {
  reduced_dims r;
  const std::optional<std::span<const int64_t>> dims = optional_int_list_arg(call, index, "dim");
  if (!dims) {
    for (int d = 0; d < self.ndim; ++d) r.flags[d] = true;
    return r;
  }
  int64_t previous = -1;
  for (const int64_t d : *dims) {
    if (d <= previous || d < 0 || d >= self.ndim) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: dim %lld is not valid for a %d-d input (dims must be resolved: "
                   "non-negative, below ndim, sorted and unique)",
                   op_name(call), static_cast<long long>(d), static_cast<int>(self.ndim));
    }
    r.flags[d] = true;
    previous = d;
  }
  return r;
}

// Throws INVALID_ARGUMENT unless `out` has self's sizes with 1 on the reduced
// dims: the keepdim layout every reduction kernel writes (the host reshapes).
inline void check_keepdim(const tsr_kernel_call& call, const tsr_tensor_desc& self,
                          const tsr_tensor_desc& out, const reduced_dims& reduced) {
  if (out.ndim != self.ndim) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: out has %d dims but self has %d; the kernel expects the keepdim layout",
                 op_name(call), static_cast<int>(out.ndim), static_cast<int>(self.ndim));
  }
  for (int d = 0; d < self.ndim; ++d) {
    const int64_t expected = reduced.flags[d] ? 1 : self.sizes[d];
    if (out.sizes[d] != expected) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: out has size %lld in dim %d, expected %lld (keepdim layout)", op_name(call),
                   static_cast<long long>(out.sizes[d]), d, static_cast<long long>(expected));
    }
  }
}

// A reduction's dims split in two, each in order: the kept ones (with self's
// and out's strides, in elements) and the reduced ones (self's strides).
struct reduction_split {
  int kept_ndim = 0;
  int64_t kept_sizes[TSR_MAX_DIMS] = {};
  int64_t kept_strides[2][TSR_MAX_DIMS] = {};  // self, out
  int reduced_ndim = 0;
  int64_t reduced_sizes[TSR_MAX_DIMS] = {};
  int64_t reduced_strides[TSR_MAX_DIMS] = {};  // self
};
inline reduction_split split_reduction(const tsr_tensor_desc& self, const tsr_tensor_desc& out,
                                       const reduced_dims& reduced) noexcept {
  reduction_split r;
  for (int d = 0; d < self.ndim; ++d) {
    if (reduced.flags[d]) {
      r.reduced_sizes[r.reduced_ndim] = self.sizes[d];
      r.reduced_strides[r.reduced_ndim++] = self.strides[d];
    } else {
      r.kept_sizes[r.kept_ndim] = self.sizes[d];
      r.kept_strides[0][r.kept_ndim] = self.strides[d];
      r.kept_strides[1][r.kept_ndim++] = out.strides[d];
    }
  }
  return r;
}

// ---- convolution ----

// convolution's arguments, read and checked (the registry's schema,
// primitives.hpp schema::kConvolution): input (N, C, *in), weight
// (O, C/groups, *kernel) or transposed (C, O/groups, *kernel), an optional 1-d
// bias of O, out (N, O, *out) with 1 to 3 spatial dims, all of input's dtype;
// stride, padding, dilation and output_padding one value per spatial dim
// (the host resolves single values), stride and dilation > 0, padding and
// output_padding >= 0, groups dividing C and O, and out's spatial sizes those
// the parameters give. Which dtypes run, and empty operands, are the plugin's.
// The spatial arrays hold `spatial` entries. Memory: as tensor_arg<Where>.
struct convolution_args {
  const tsr_tensor_desc* input = nullptr;
  const tsr_tensor_desc* weight = nullptr;
  const tsr_tensor_desc* bias = nullptr;  // NULL: None
  tsr_tensor_desc* output = nullptr;
  int spatial = 0;  // 1..3
  int64_t n = 0, c = 0, o = 0, groups = 1;
  bool transposed = false;
  int64_t in[3] = {}, kernel[3] = {}, out[3] = {};
  int64_t stride[3] = {}, padding[3] = {}, dilation[3] = {}, output_padding[3] = {};
};

namespace detail {
inline void conv_require(const tsr_kernel_call& call, bool ok, const char* what) {
  if (!ok) throw_status(TSR_INVALID_ARGUMENT, "%s: %s", op_name(call), what);
}
inline void spatial_list(const tsr_kernel_call& call, int index, const char* name, int n,
                         int64_t* out) {
  const std::span<const int64_t> list = int_list_arg(call, index, name);
  if (static_cast<int>(list.size()) != n) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: argument '%s' must be a list of %d ints (one per spatial dim); the "
                 "host resolves single values",
                 op_name(call), name, n);
  }
  for (int i = 0; i < n; ++i) out[i] = list[i];
}
}  // namespace detail

template <memory Where = memory::data>
convolution_args read_convolution(const tsr_kernel_call& call) {
  convolution_args a;
  const tsr_tensor_desc& input = tensor_arg<Where>(call, 0, "input");
  const tsr_tensor_desc& weight = tensor_arg<Where>(call, 1, "weight");
  const tsr_tensor_desc* bias = optional_tensor_arg<Where>(call, 2, "bias");
  tsr_tensor_desc& out = out_arg<Where>(call, 0);
  a.input = &input;
  a.weight = &weight;
  a.bias = bias;
  a.output = &out;
  const int k = input.ndim - 2;
  detail::conv_require(call,
                       k >= 1 && k <= 3 && weight.ndim == input.ndim && out.ndim == input.ndim,
                       "input, weight and out must have 3 to 5 dims, the same count");
  check_dtype(call, weight, "weight", input.dtype);
  check_dtype(call, out, "out", input.dtype);
  if (bias != nullptr) check_dtype(call, *bias, "bias", input.dtype);
  a.spatial = k;
  detail::spatial_list(call, 3, "stride", k, a.stride);
  detail::spatial_list(call, 4, "padding", k, a.padding);
  detail::spatial_list(call, 5, "dilation", k, a.dilation);
  a.transposed = bool_arg(call, 6, "transposed");
  detail::spatial_list(call, 7, "output_padding", k, a.output_padding);
  a.groups = int_arg(call, 8, "groups");
  a.n = input.sizes[0];
  a.c = input.sizes[1];
  a.o = out.sizes[1];
  detail::conv_require(call, a.groups > 0 && a.c % a.groups == 0 && a.o % a.groups == 0,
                       "groups must divide the input and output channels");
  detail::conv_require(call, out.sizes[0] == a.n, "out's batch must equal input's");
  const int64_t cg = a.c / a.groups, og = a.o / a.groups;
  const bool weight_ok = a.transposed ? (weight.sizes[0] == a.c && weight.sizes[1] == og)
                                      : (weight.sizes[0] == a.o && weight.sizes[1] == cg);
  detail::conv_require(call, weight_ok, "weight's channel dims do not match input, out and groups");
  if (bias != nullptr) {
    detail::conv_require(call, bias->ndim == 1 && bias->sizes[0] == a.o, "bias must be 1-d of O");
  }
  for (int i = 0; i < k; ++i) {
    a.in[i] = input.sizes[2 + i];
    a.kernel[i] = weight.sizes[2 + i];
    a.out[i] = out.sizes[2 + i];
    detail::conv_require(call,
                         a.stride[i] > 0 && a.dilation[i] > 0 && a.padding[i] >= 0 &&
                             a.output_padding[i] >= 0 && a.kernel[i] > 0,
                         "stride and dilation must be > 0, padding and output_padding >= 0");
    const int64_t extent = a.dilation[i] * (a.kernel[i] - 1) + 1;
    const int64_t expected =
        a.transposed ? (a.in[i] - 1) * a.stride[i] - 2 * a.padding[i] + extent + a.output_padding[i]
                     : (a.in[i] + 2 * a.padding[i] - extent) / a.stride[i] + 1;
    detail::conv_require(
        call, a.out[i] == expected && (a.transposed || a.in[i] + 2 * a.padding[i] >= extent),
        "out's spatial sizes do not match the convolution's");
  }
  return a;
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_OP_CHECKS_HPP_
