// kernels_linalg.cpp - mm (n,k)·(k,m) and bmm (b,n,k)·(b,k,m).
//
// One dtype for inputs and output (never bool). The triple loop accumulates
// in double (rounded once) or wrapping int64; k == 0 gives zeros. linear,
// matmul, einsum, convolution (im2col) and attention all run through it.
#include "acme.hpp"

namespace acme {
template <class V>
static void matmul_typed(const tsr_tensor_desc& a, const tsr_tensor_desc& b,
                         const tsr_tensor_desc& out, bool batched) {
  const int r = batched ? 1 : 0;  // the first matrix dim
  const int64_t batches = batched ? out.sizes[0] : 1;
  const int64_t n = out.sizes[r], m = out.sizes[r + 1], k_size = a.sizes[r + 1];
  int64_t ia[3] = {}, ib[3] = {}, io[3] = {};
  for (int64_t batch = 0; batch < batches; ++batch) {
    ia[0] = ib[0] = io[0] = batch;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        V acc{};
        for (int64_t k = 0; k < k_size; ++k) {
          ia[r] = i, ia[r + 1] = k;
          ib[r] = k, ib[r + 1] = j;
          acc = plus(acc, times(load<V>(a, offset(a, ia)), load<V>(b, offset(b, ib))));
        }
        io[r] = i, io[r + 1] = j;
        store(out, offset(out, io), acc);
      }
    }
  }
}

static void matmul(const tsr_kernel_call& call, int ndim) {
  const tsr_tensor_desc& a = tensor_arg(call, 0, "self");
  const tsr_tensor_desc& b = tensor_arg(call, 1, "mat2");
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_dtype(call, b, "mat2", a.dtype);
  check_dtype(call, out, "out", a.dtype);
  if (a.dtype == TSR_BOOL) throw_unsupported_dtype(call, "self", a.dtype, kName);
  const int r = ndim - 2;
  bool ok = a.ndim == ndim && b.ndim == ndim && out.ndim == ndim && a.sizes[r + 1] == b.sizes[r] &&
            out.sizes[r] == a.sizes[r] && out.sizes[r + 1] == b.sizes[r + 1];
  if (ok && ndim == 3) ok = a.sizes[0] == out.sizes[0] && b.sizes[0] == out.sizes[0];
  if (!ok) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: operands must be %d-d with matching inner sizes ((b,) n, k) x ((b,) k, m) -> "
                 "((b,) n, m)",
                 op_name(call), ndim);
  }
  with_number_type(a.dtype, [&](auto v) { matmul_typed<decltype(v)>(a, b, out, ndim == 3); });
}

void mm_kernel(const tsr_kernel_call& call) { matmul(call, 2); }
void bmm_kernel(const tsr_kernel_call& call) { matmul(call, 3); }

}  // namespace acme
