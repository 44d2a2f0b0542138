// gather_scatter.cu - gather and _scatter_ over any strides (the CPU plugin's
// indexing/gather_scatter.cpp, restated as functors).
//
//  - gather: one work item per element of index (= out); moves raw elements.
//  - _scatter_: one work item per line (the index positions sharing every
//    coordinate but `dim`). Lines write disjoint lines of self, and a line
//    combines its elements in index order, so ADD/MUL/AMAX/AMIN are exact and
//    deterministic without atomics, as on the CPU. When self is broadcast
//    along another dim (lines would collide) one work item does every line.
// Bad indices: the bounds flag of indexing/index_util.hpp (first bad position
// in the CPU's order: row-major over index for gather, line by line for
// _scatter_, a line stopping at its first bad index).
#include <cstring>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "indexing/index_util.hpp"
#include "kernel_util.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::gpu {
namespace {

// ---- gather / _scatter_ shapes --------------------------------------------------

// A 0-d descriptor as the 1-d tensor of one element the kernels walk.
struct Shape {
  int ndim;
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];
};
Shape shape_of(const tsr_tensor_desc& d) {
  Shape s{};
  s.ndim = d.ndim > 0 ? d.ndim : 1;
  s.sizes[0] = 1;
  s.strides[0] = 0;
  for (int k = 0; k < d.ndim; ++k) {
    s.sizes[k] = d.sizes[k];
    s.strides[k] = d.strides[k];
  }
  return s;
}

// Raw element types by size (gather and assignment move bits).
template <size_t Bytes>
using raw_t = std::conditional_t<
    Bytes == 1, uint8_t,
    std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>>;

// ---- gather -------------------------------------------------------------------

template <class E>
struct GatherOp {
  char* out;
  const char* index;
  const char* self;  // self's `dim` stride is 0 in ix; the index value adds it
  Indexer<3> ix;     // out, index, self over index's shape
  int64_t dim_stride, limit;
  BadFlag* flag;
  TSR_HD void operator()(int64_t i) const {
    int64_t off[3];
    ix.offsets(i, off);
    const int64_t k = *reinterpret_cast<const int64_t*>(index + off[1]);
    if (!index_in_range(k, limit)) {
      record_bad_index(flag, i);
      return;
    }
    *reinterpret_cast<E*>(out + off[0]) =
        *reinterpret_cast<const E*>(self + off[2] + k * dim_stride);
  }
};

tsr_status* gather_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self_desc = tensor_arg(*call, 0, "self");
    const tsr_tensor_desc& index_desc = tensor_arg(*call, 2, "index");
    tsr_tensor_desc& out = out_arg(*call, 0);
    const int64_t dim =
        sdk::check_index_shape(*call, self_desc, index_desc, int_arg(*call, 1, "dim"));
    if (out.dtype != self_desc.dtype)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: out has dtype %d but self %d", call->op_name,
                        static_cast<int>(out.dtype), static_cast<int>(self_desc.dtype));
    if (sdk::numel(index_desc) == 0) return;
    const Shape self = shape_of(self_desc), index = shape_of(index_desc), o = shape_of(out);
    int64_t self_strides[TSR_MAX_DIMS];
    for (int d = 0; d < self.ndim; ++d) self_strides[d] = d == dim ? 0 : self.strides[d];
    const size_t esize = sdk::element_size(self_desc.dtype);
    const int64_t* strides[3] = {o.strides, index.strides, self_strides};
    const size_t esizes[3] = {esize, sizeof(int64_t), esize};
    const Indexer<3> ix = indexer_of<3>(index.ndim, index.sizes, strides, esizes);
    const int64_t dim_stride = self.strides[dim] * static_cast<int64_t>(esize);
    const int64_t limit = self.sizes[dim];
    BadFlag* flag = new_bad_flag(exec, *call);
    auto run = [&](auto tag) {
      using E = decltype(tag);
      parallel_for(exec, ix.numel,
                   GatherOp<E>{data_of(out), data_of(index_desc), data_of(self_desc), ix,
                               dim_stride, limit, flag},
                   "gather");
    };
    switch (esize) {
      case 1:
        run(raw_t<1>{});
        break;
      case 2:
        run(raw_t<2>{});
        break;
      case 4:
        run(raw_t<4>{});
        break;
      case 8:
        run(raw_t<8>{});
        break;
      default:
        unsupported_dtype(call->op_name, self_desc.dtype);
    }
    check_bad_flag(exec, flag, data_of(index_desc), index.ndim, index.sizes, index.strides, dim,
                   limit);
  });
}

// ---- _scatter_ ----------------------------------------------------------------

TSR_HD inline bool is_nan_value(float x) { return x != x; }
TSR_HD inline bool is_nan_value(double x) { return x != x; }

// dst op= src for one element (the CPU plugin's combine): integers wrap;
// floating dtypes compute in compute_t<T> and AMAX/AMIN propagate NaN; bool:
// ADD/AMAX are or, MUL/AMIN and.
template <class T, int Op>
TSR_HD inline T combine(T a, T b) {
  if constexpr (Op == TSR_SCATTER_ASSIGN) {
    return b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return (Op == TSR_SCATTER_ADD || Op == TSR_SCATTER_AMAX) ? (a || b) : (a && b);
  } else if constexpr (is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;
    if constexpr (Op == TSR_SCATTER_ADD)
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (Op == TSR_SCATTER_MUL)
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if constexpr (Op == TSR_SCATTER_AMAX) return a < b ? b : a;
    return b < a ? b : a;  // AMIN
  } else {
    using C = compute_t<T>;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    if constexpr (Op == TSR_SCATTER_ADD) return T(x + y);
    if constexpr (Op == TSR_SCATTER_MUL) return T(x * y);
    if constexpr (Op == TSR_SCATTER_AMAX) return (x > y || is_nan_value(x)) ? a : b;
    return (x < y || is_nan_value(x)) ? a : b;  // AMIN
  }
}

// Work item w handles lines [w * per_item, (w + 1) * per_item).
template <class T, int Op>
struct ScatterOp {
  char* out;
  const char* index;
  const char* src;
  Indexer<3> lines;  // out, index, src over the dims other than `dim`
  int64_t line_count, per_item, len;
  int64_t dim_stride, index_stride, src_stride;  // bytes along `dim` (out: per index value)
  int64_t limit;
  BadFlag* flag;
  TSR_HD void operator()(int64_t w) const {
    const int64_t first = w * per_item;
    const int64_t last = first + per_item < line_count ? first + per_item : line_count;
    for (int64_t line = first; line < last; ++line) {
      int64_t off[3];
      lines.offsets(line, off);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t k = *reinterpret_cast<const int64_t*>(index + off[1] + j * index_stride);
        if (!index_in_range(k, limit)) {
          record_bad_index(flag, line * len + j);
          break;  // the rest of the line is not applied, as on the CPU
        }
        T* dst = reinterpret_cast<T*>(out + off[0] + k * dim_stride);
        const T b = *reinterpret_cast<const T*>(src + off[2] + j * src_stride);
        if constexpr (Op == TSR_SCATTER_ASSIGN) {
          *dst = b;
        } else {
          *dst = combine<T, Op>(*dst, b);
        }
      }
    }
  }
};

tsr_status* scatter_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self_desc = tensor_arg(*call, 0, "self");
    const tsr_tensor_desc& index_desc = tensor_arg(*call, 2, "index");
    const tsr_tensor_desc& src_desc = tensor_arg(*call, 3, "src");
    const int64_t code = sdk::code_arg(*call, 4, "op", TSR_SCATTER_CODE_COUNT, "tsr_scatter_op");
    tsr_tensor_desc& out = out_arg(*call, 0);
    const int64_t dim =
        sdk::check_index_shape(*call, self_desc, index_desc, int_arg(*call, 1, "dim"));
    if (src_desc.dtype != self_desc.dtype || out.dtype != self_desc.dtype)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: src and out must have self's dtype %d",
                        call->op_name, static_cast<int>(self_desc.dtype));
    sdk::check_scatter_src(*call, index_desc, src_desc);
    if (sdk::numel(index_desc) == 0) return;

    const Shape o = shape_of(out), index = shape_of(index_desc), src = shape_of(src_desc);
    const size_t esize = sdk::element_size(self_desc.dtype);
    // The lines: index's dims but `dim`, in order; then `dim` (the positions
    // of the bounds flag, and the CPU's order).
    sdk::dim_lines<3> l =
        sdk::lines_along<3>(dim, index.ndim, index.sizes, {o.strides, index.strides, src.strides});
    const bool parallel_safe = !l.overlaps(0);  // else lines would collide
    const Indexer<3> lines = indexer_of(l, {esize, sizeof(int64_t), esize});
    const int64_t line_count = lines.numel;
    const int64_t per_item = parallel_safe ? 1 : line_count;
    const int64_t items = (line_count + per_item - 1) / per_item;
    const int64_t len = index.sizes[dim];
    const int64_t dim_stride = o.strides[dim] * static_cast<int64_t>(esize);
    const int64_t limit = o.sizes[dim];
    BadFlag* flag = new_bad_flag(exec, *call);
    TSR_GPU_DISPATCH(self_desc.dtype, "_scatter_", T, {
      auto run = [&](auto op) {
        constexpr int Op = decltype(op)::value;
        parallel_for(exec, items,
                     ScatterOp<T, Op>{data_of(out), data_of(index_desc), data_of(src_desc), lines,
                                      line_count, per_item, len, dim_stride,
                                      index.strides[dim] * static_cast<int64_t>(sizeof(int64_t)),
                                      src.strides[dim] * static_cast<int64_t>(esize), limit, flag},
                     "_scatter_");
      };
      switch (code) {
        case TSR_SCATTER_ASSIGN:
          run(std::integral_constant<int, TSR_SCATTER_ASSIGN>{});
          break;
        case TSR_SCATTER_ADD:
          run(std::integral_constant<int, TSR_SCATTER_ADD>{});
          break;
        case TSR_SCATTER_MUL:
          run(std::integral_constant<int, TSR_SCATTER_MUL>{});
          break;
        case TSR_SCATTER_AMAX:
          run(std::integral_constant<int, TSR_SCATTER_AMAX>{});
          break;
        default:
          run(std::integral_constant<int, TSR_SCATTER_AMIN>{});
          break;
      }
    });
    // The bad position is over (other dims..., dim) of index.
    l.sizes[l.ndim] = len;
    l.strides[1][l.ndim] = index.strides[dim];
    check_bad_flag(exec, flag, data_of(index_desc), l.ndim + 1, l.sizes, l.strides[1], dim, limit);
  });
}

}  // namespace

void add_gather_scatter_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kGather, {kRealDtypes, sdk::kInt64Dtype}, gather_kernel));
  out.push_back(make_entry(sdk::schema::kScatter, {kRealDtypes, sdk::kInt64Dtype, kRealDtypes},
                           scatter_kernel, sdk::kScatterCodes));
}

}  // namespace tessera::gpu
