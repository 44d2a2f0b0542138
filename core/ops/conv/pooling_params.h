// pooling_params.h - the argument readers and window rules shared by the
// pooling ops (pooling.cpp) and their backward ops (pooling_backward.cpp).
// Core-internal; the rules are PyTorch 2.15's (see pooling.cpp's header).
#ifndef TESSERA_CORE_OPS_CONV_POOLING_PARAMS_H_
#define TESSERA_CORE_OPS_CONV_POOLING_PARAMS_H_

#include <cstdint>

#include "ops/op_impls.h"
#include "runtime/runtime.h"
#include "tensor/geometry.h"

namespace tsr::ops::pool_detail {

// A 2-d max/avg pool resolved to two entries per parameter, with the input's
// (N, C, H, W) (N = 1 for 3-d input, `batched` false) and the output's size.
struct Pool2d {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;
  int64_t n = 1, c = 1, h = 1, w = 1, oh = 1, ow = 1;
  bool batched = true;
};

// Reads and validates (self, kernel_size, stride, padding, ...) at argument
// `self_arg` onwards (kernel_size at self_arg + 1, stride and padding
// after it), dilation at `dilation_arg` (< 0 when the op has none) and
// ceil_mode at `ceil_arg`. Throws INVALID_ARGUMENT with PyTorch's messages.
Pool2d pool_params(const OpCall& c, int self_arg, const char* name, int dilation_arg, int ceil_arg);

// An adaptive pool: input (N, C, H, W) (N = 1 for 3-d input) and output size.
struct Adaptive {
  int64_t n = 1, c = 1, h = 1, w = 1, oh = 0, ow = 0;
  bool batched = true;
};

// Reads and validates self (argument `self_arg`) and the output size
// (oh, ow) of an adaptive pool; `size_arg` names the argument the size
// came from in messages.
Adaptive adaptive_params(const OpCall& c, int self_arg, int64_t oh, int64_t ow, const char* name,
                         int size_arg);

// Adaptive window i of `out` over `in`: [start, end).
inline int64_t window_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
inline int64_t window_end(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

// PyTorch's avg_pool2d divisor of output (oh, ow): divisor_override when
// `has_divisor`, else the window clipped to the padded input
// (count_include_pad) or the in-bounds element count; 1 for a window with
// no in-bounds element (its sum is 0).
int64_t avg_divisor(const Pool2d& p, int64_t oh, int64_t ow, bool count_include_pad,
                    bool has_divisor, int64_t divisor);

// The (in, out) transpose of the (out, in) matrix with 1/len over each
// adaptive window, in `dtype` on `dev`.
TensorRef averaging_matrix_t(Runtime* rt, DeviceRecord* dev, tsr_dtype dtype, int64_t in,
                             int64_t out);

// Throws UNIMPLEMENTED unless x is floating (or int64 when allowed).
void check_floating(const OpDef& op, const TensorImpl& x, const char* torch_name, bool allow_int64);

// x as (N, C, H, W) (a view with a batch dim of 1 for 3-d x).
TensorRef batched4(TensorImpl* x);
// r without its batch dim unless `batched`.
TensorRef unbatch(TensorRef r, bool batched);
Shape nchw(int64_t n, int64_t c, int64_t h, int64_t w);

}  // namespace tsr::ops::pool_detail

#endif  // TESSERA_CORE_OPS_CONV_POOLING_PARAMS_H_
