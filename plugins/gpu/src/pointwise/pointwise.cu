// pointwise.cu - add/sub/mul/div.Tensor, _unary, _binary and where.self.
//
// Every kernel is one functor per output element. Operands arrive broadcast
// to out's shape (stride 0 on broadcast dims) and, by the core's type
// promotion, in out's dtype (tessera/opcodes.h; predicates write bool); out
// may alias an input exactly, which is fine since each element is read before
// it is written by the same work item. Two variants per functor:
//  - Contig: every operand contiguous (ix.contiguous()), addressed as plain
//    arrays `out[i] = f(a[i], b[i])`: no index arithmetic, coalesced loads, the
//    path that reaches the device's memory bandwidth;
//  - strided: byte offsets from the coalesced Indexer (indexer.hpp).
// _unary and _binary switch on the op code inside the functor (the code is
// uniform over the launch, so the branch costs nothing on a GPU) instead of
// instantiating a kernel per code. The math per code is pointwise_ops.hpp.
//
// Integer division by zero (remainder, fmod, div_trunc, div_floor) is an
// error reported before anything is written, as in the CPU plugin: a scan of
// `other` raises a flag in scratch memory, read back after the launch.
#include <cmath>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"
#include "pointwise/pointwise_ops.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/dtype_traits.hpp"

namespace tessera::gpu {
namespace {

// Byte offsets of element i's operands: i times the element sizes on the
// contiguous path (plain array indexing), the indexer's offsets otherwise
// (one pass over the dims for all operands).
template <bool Contig, int N>
TSR_HD inline void offsets_of(const Indexer<N>& ix, int64_t i, const int (&sizes)[N],
                              int64_t (&off)[N]) {
  if constexpr (Contig) {
    for (int k = 0; k < N; ++k) off[k] = i * sizes[k];
  } else {
    (void)sizes;
    ix.offsets(i, off);
  }
}
template <class T>
TSR_HD inline const T& at(const char* base, int64_t off) {
  return *reinterpret_cast<const T*>(base + off);
}
template <class T>
TSR_HD inline T& at(char* base, int64_t off) {
  return *reinterpret_cast<T*>(base + off);
}

// The host's contract (operands in out's shape and in the computation
// dtype); a violation would make the kernels read out of bounds, so it is an
// INVALID_ARGUMENT with the CPU plugin's messages instead.
void check_operand(const tsr_kernel_call& call, const tsr_tensor_desc& desc, const char* name,
                   const tsr_tensor_desc& out, int32_t dtype) {
  sdk::check_same_sizes(call, desc, name, out, "out");
  sdk::check_dtype(call, desc, name, dtype);
}

// ---- add, sub, mul, div ------------------------------------------------------------

enum class Arith { kAdd, kSub, kMul, kDiv };

template <Arith Op, class T>
constexpr bool arith_supports() {
  if constexpr (Op == Arith::kSub) return !std::is_same_v<T, bool>;
  if constexpr (Op == Arith::kDiv) return is_floating_v<T>;
  return true;
}

// a op (alpha * b) (or a op b without alpha): bool as logical or/and, integers
// wrapping in unsigned types, floats in compute_t<T> rounded once.
template <Arith Op, bool HasAlpha, class T>
TSR_HD inline T arith(T a, T b, compute_t<T> alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    const bool y = HasAlpha ? (alpha && b) : b;
    return Op == Arith::kAdd ? (a || y) : (a && b);
  } else if constexpr (is_integral_v<T>) {
    using W = pw::wrap_t<T>;
    const W x = static_cast<W>(a);
    W y = static_cast<W>(b);
    if constexpr (HasAlpha) y = static_cast<W>(static_cast<W>(alpha) * y);
    if constexpr (Op == Arith::kAdd) return static_cast<T>(x + y);
    if constexpr (Op == Arith::kSub) return static_cast<T>(x - y);
    return static_cast<T>(x * y);
  } else {
    using C = compute_t<T>;
    const C x = static_cast<C>(a);
    C y = static_cast<C>(b);
    if constexpr (HasAlpha) y = alpha * y;
    if constexpr (Op == Arith::kAdd) return T(x + y);
    if constexpr (Op == Arith::kSub) return T(x - y);
    if constexpr (Op == Arith::kMul) return T(x * y);
    return T(x / y);
  }
}

template <Arith Op, bool HasAlpha, bool Contig, class T>
struct ArithOp {
  char* out;
  const char* a;
  const char* b;
  Indexer<3> ix;
  compute_t<T> alpha;
  TSR_HD void operator()(int64_t i) const {
    constexpr int kSizes[3] = {sizeof(T), sizeof(T), sizeof(T)};
    int64_t off[3];
    offsets_of<Contig>(ix, i, kSizes, off);
    at<T>(out, off[0]) = arith<Op, HasAlpha, T>(at<T>(a, off[1]), at<T>(b, off[2]), alpha);
  }
};

// Launches the functor `make(std::true_type)` builds (the contiguous variant)
// when every operand is contiguous, else the one `make(std::false_type)` builds.
template <int N, class Make>
void launch_either(const Exec& exec, const Indexer<N>& ix, const int (&sizes)[N], Make&& make,
                   const char* name) {
  if (ix.contiguous(sizes))
    parallel_for(exec, ix.numel, make(std::true_type{}), name);
  else
    parallel_for(exec, ix.numel, make(std::false_type{}), name);
}

template <Arith Op>
tsr_status* arith_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    constexpr bool kHasAlphaArg = Op == Arith::kAdd || Op == Arith::kSub;
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_tensor_desc& a = tensor_arg(*call, 0, "self");
    const tsr_tensor_desc& b = tensor_arg(*call, 1, "other");
    tsr_scalar alpha{};
    if constexpr (kHasAlphaArg) alpha = scalar_arg(*call, 2, "alpha");
    check_operand(*call, a, "self", out, out.dtype);
    check_operand(*call, b, "other", out, out.dtype);
    const tsr_tensor_desc* descs[3] = {&out, &a, &b};
    const Indexer<3> ix = make_indexer<3>(descs);
    const int esize = static_cast<int>(sdk::element_size(out.dtype));
    const int sizes[3] = {esize, esize, esize};
    TSR_GPU_DISPATCH(out.dtype, call->op_name, T, {
      if constexpr (!arith_supports<Op, T>()) {
        unsupported_dtype(call->op_name, out.dtype);
      } else {
        const bool with_alpha = kHasAlphaArg && !sdk::scalar_is_one(alpha);
        compute_t<T> av{};
        if (kHasAlphaArg) av = sdk::alpha_value<T, compute_t<T>>(*call, alpha);
        if (ix.numel == 0) return;
        char* o = data_of(out);
        const char* pa = data_of(a);
        const char* pb = data_of(b);
        if (with_alpha) {
          launch_either<3>(
              exec, ix, sizes,
              [&](auto contig) {
                return ArithOp<Op, true, decltype(contig)::value, T>{o, pa, pb, ix, av};
              },
              call->op_name);
        } else {
          launch_either<3>(
              exec, ix, sizes,
              [&](auto contig) {
                return ArithOp<Op, false, decltype(contig)::value, T>{o, pa, pb, ix, av};
              },
              call->op_name);
        }
      }
    });
  });
}

// ---- _unary -----------------------------------------------------------------------

// out (T) = f(self (T)) for the non-predicate codes.
template <bool Contig, class T>
struct UnaryOp {
  char* out;
  const char* in;
  Indexer<2> ix;
  int code;
  compute_t<T> p0, p1, p2;
  TSR_HD void operator()(int64_t i) const {
    constexpr int kSizes[2] = {sizeof(T), sizeof(T)};
    int64_t off[2];
    offsets_of<Contig>(ix, i, kSizes, off);
    const T x = at<T>(in, off[1]);
    T r;
    if constexpr (is_floating_v<T>) {
      r = T(pw::unary_floating<compute_t<T>>(code, static_cast<compute_t<T>>(x), p0, p1, p2));
    } else {
      (void)p2;
      r = pw::unary_integer<T>(code, x, p0, p1);
    }
    at<T>(out, off[0]) = r;
  }
};

// out (bool) = test(self (T)) for the predicate codes.
template <bool Contig, class T>
struct UnaryTestOp {
  char* out;
  const char* in;
  Indexer<2> ix;
  int code;
  TSR_HD void operator()(int64_t i) const {
    constexpr int kSizes[2] = {sizeof(bool), sizeof(T)};
    int64_t off[2];
    offsets_of<Contig>(ix, i, kSizes, off);
    at<bool>(out, off[0]) =
        pw::unary_test<compute_t<T>>(code, static_cast<compute_t<T>>(at<T>(in, off[1])));
  }
};

// A parameter Scalar converted to T with copy_ semantics (the CPU plugin's
// scalar_convert).
template <class T>
T scalar_to(const tsr_scalar& s) {
  switch (s.kind) {
    case TSR_BOOL:
      return convert<T>(s.v.i != 0);
    case TSR_INT64:
      return convert<T>(s.v.i);
    default:
      return convert<T>(s.kind == TSR_FLOAT64 ? s.v.f : s.v.c.re);
  }
}

// The op code argument, checked against the family's range.
int code_arg(const tsr_kernel_call& call, int index, int count, const char* family) {
  const int64_t code = int_arg(call, index, "op");
  if (code < 0 || code >= count)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'op' = %lld is not a %s code (0 to %d)",
                      call.op_name, static_cast<long long>(code), family, count - 1);
  return static_cast<int>(code);
}

tsr_status* unary_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const int code = code_arg(*call, 1, TSR_UNARY_CODE_COUNT, "tsr_unary_op");
    const tsr_scalar p[3] = {scalar_arg(*call, 2, "p0"), scalar_arg(*call, 3, "p1"),
                             scalar_arg(*call, 4, "p2")};
    check_operand(*call, self, "self", out, self.dtype);
    check_operand(*call, out, "out", out, pw::unary_predicate(code) ? TSR_BOOL : self.dtype);
    const tsr_tensor_desc* descs[2] = {&out, &self};
    const Indexer<2> ix = make_indexer<2>(descs);
    if (ix.numel == 0) return;
    const int sizes[2] = {static_cast<int>(sdk::element_size(out.dtype)),
                          static_cast<int>(sdk::element_size(self.dtype))};
    char* o = data_of(out);
    const char* in = data_of(self);
    TSR_GPU_DISPATCH(self.dtype, call->op_name, T, {
      using C = compute_t<T>;
      if (pw::unary_predicate(code)) {
        launch_either<2>(
            exec, ix, sizes,
            [&](auto contig) {
              return UnaryTestOp<decltype(contig)::value, T>{o, in, ix, code};
            },
            call->op_name);
      } else {
        C p0 = scalar_to<C>(p[0]), p1 = scalar_to<C>(p[1]), p2 = scalar_to<C>(p[2]);
        if constexpr (is_floating_v<T>) {
          if (code == TSR_UNARY_ROUND) {  // p0 = 10^|decimals|, p1 = sign(decimals)
            const int64_t decimals =
                p[0].kind == TSR_FLOAT64 ? static_cast<int64_t>(p[0].v.f) : p[0].v.i;
            const int64_t mag = decimals < 0 ? -decimals : decimals;
            p0 = static_cast<C>(std::pow(C(10), static_cast<C>(mag)));
            p1 = C(decimals > 0 ? 1 : (decimals < 0 ? -1 : 0));
          }
        }
        launch_either<2>(
            exec, ix, sizes,
            [&](auto contig) {
              return UnaryOp<decltype(contig)::value, T>{o, in, ix, code, p0, p1, p2};
            },
            call->op_name);
      }
    });
  });
}

// ---- _binary -----------------------------------------------------------------------

template <bool Contig, class T>
struct BinaryOp {
  char* out;
  const char* a;
  const char* b;
  Indexer<3> ix;
  int code;
  TSR_HD void operator()(int64_t i) const {
    constexpr int kSizes[3] = {sizeof(T), sizeof(T), sizeof(T)};
    int64_t off[3];
    offsets_of<Contig>(ix, i, kSizes, off);
    const T x = at<T>(a, off[1]);
    const T y = at<T>(b, off[2]);
    T r;
    if constexpr (is_floating_v<T>) {
      using C = compute_t<T>;
      r = T(pw::binary_floating<C>(code, static_cast<C>(x), static_cast<C>(y)));
    } else {
      r = pw::binary_integer<T>(code, x, y);
    }
    at<T>(out, off[0]) = r;
  }
};

template <bool Contig, class T>
struct BinaryTestOp {
  char* out;
  const char* a;
  const char* b;
  Indexer<3> ix;
  int code;
  TSR_HD void operator()(int64_t i) const {
    using C = compute_t<T>;
    constexpr int kSizes[3] = {sizeof(bool), sizeof(T), sizeof(T)};
    int64_t off[3];
    offsets_of<Contig>(ix, i, kSizes, off);
    at<bool>(out, off[0]) = pw::binary_test<C>(code, static_cast<C>(at<T>(a, off[1])),
                                               static_cast<C>(at<T>(b, off[2])));
  }
};

// Raises *flag where an element is zero (every writer stores the same 1).
template <class T>
struct ZeroScanOp {
  const char* p;
  Indexer<1> ix;
  int* flag;
  TSR_HD void operator()(int64_t i) const {
    if (*reinterpret_cast<const T*>(p + ix.offset(0, i)) == T(0)) *flag = 1;
  }
};

template <class T>
bool has_zero(const Exec& exec, const tsr_kernel_call& call, const tsr_tensor_desc& d) {
  const tsr_tensor_desc* descs[1] = {&d};
  const Indexer<1> ix = make_indexer<1>(descs);
  if (ix.numel == 0) return false;
  int* flag = static_cast<int*>(scratch(call, sizeof(int)));
  memset_async(exec.device, flag, 0, sizeof(int), exec.stream);
  parallel_for(exec, ix.numel, ZeroScanOp<T>{data_of(d), ix, flag}, "zero scan");
  int host = 0;
  read_back(exec, &host, flag, sizeof(int));
  return host != 0;
}

bool integer_division(int code) {
  return code == TSR_BINARY_REMAINDER || code == TSR_BINARY_FMOD || code == TSR_BINARY_DIV_TRUNC ||
         code == TSR_BINARY_DIV_FLOOR;
}

tsr_status* binary_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_tensor_desc& a = tensor_arg(*call, 0, "self");
    const tsr_tensor_desc& b = tensor_arg(*call, 1, "other");
    const int code = code_arg(*call, 2, TSR_BINARY_CODE_COUNT, "tsr_binary_op");
    (void)scalar_arg(*call, 3, "p0");
    check_operand(*call, a, "self", out, a.dtype);
    check_operand(*call, b, "other", out, a.dtype);
    check_operand(*call, out, "out", out, pw::binary_predicate(code) ? TSR_BOOL : a.dtype);
    const tsr_tensor_desc* descs[3] = {&out, &a, &b};
    const Indexer<3> ix = make_indexer<3>(descs);
    if (ix.numel == 0) return;
    const int esize = static_cast<int>(sdk::element_size(a.dtype));
    const int sizes[3] = {static_cast<int>(sdk::element_size(out.dtype)), esize, esize};
    char* o = data_of(out);
    const char* pa = data_of(a);
    const char* pb = data_of(b);
    TSR_GPU_DISPATCH(a.dtype, call->op_name, T, {
      if (pw::binary_predicate(code)) {
        launch_either<3>(
            exec, ix, sizes,
            [&](auto contig) {
              return BinaryTestOp<decltype(contig)::value, T>{o, pa, pb, ix, code};
            },
            call->op_name);
      } else {
        if constexpr (is_integral_v<T>) {
          if (integer_division(code) && has_zero<T>(exec, *call, b))
            sdk::throw_status(TSR_INVALID_ARGUMENT,
                              "%s: ZeroDivisionError: integer division or modulo by zero "
                              "(argument 'other' has a zero element); use floating-point inputs "
                              "to get inf/nan",
                              call->op_name);
        }
        launch_either<3>(
            exec, ix, sizes,
            [&](auto contig) {
              return BinaryOp<decltype(contig)::value, T>{o, pa, pb, ix, code};
            },
            call->op_name);
      }
    });
  });
}

// ---- where.self ----------------------------------------------------------------------

// out = cond ? x : y, moving bits (U is an unsigned type of the element size).
template <bool Contig, class U>
struct WhereOp {
  char* out;
  const char* cond;
  const char* x;
  const char* y;
  Indexer<4> ix;
  TSR_HD void operator()(int64_t i) const {
    constexpr int kSizes[4] = {sizeof(U), 1, sizeof(U), sizeof(U)};
    int64_t off[4];
    offsets_of<Contig>(ix, i, kSizes, off);
    at<U>(out, off[0]) = at<uint8_t>(cond, off[1]) != 0 ? at<U>(x, off[2]) : at<U>(y, off[3]);
  }
};

tsr_status* where_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_tensor_desc& cond = tensor_arg(*call, 0, "condition");
    const tsr_tensor_desc& x = tensor_arg(*call, 1, "self");
    const tsr_tensor_desc& y = tensor_arg(*call, 2, "other");
    check_operand(*call, cond, "condition", out, TSR_BOOL);
    check_operand(*call, x, "self", out, out.dtype);
    check_operand(*call, y, "other", out, out.dtype);
    const tsr_tensor_desc* descs[4] = {&out, &cond, &x, &y};
    const Indexer<4> ix = make_indexer<4>(descs);
    if (ix.numel == 0) return;
    const int esize = static_cast<int>(sdk::element_size(out.dtype));
    const int sizes[4] = {esize, 1, esize, esize};
    char* o = data_of(out);
    const char* pc = data_of(cond);
    const char* px = data_of(x);
    const char* py = data_of(y);
    const auto go = [&](auto tag) {
      using U = decltype(tag);
      launch_either<4>(
          exec, ix, sizes,
          [&](auto contig) {
            return WhereOp<decltype(contig)::value, U>{o, pc, px, py, ix};
          },
          "where.self");
    };
    switch (esize) {
      case 1:
        return go(uint8_t{});
      case 2:
        return go(uint16_t{});
      case 4:
        return go(uint32_t{});
      case 8:
        return go(uint64_t{});
      default:
        unsupported_dtype("where.self", out.dtype);
    }
  });
}

}  // namespace

// The entries mirror the CPU plugin's pointwise_table.cpp and kernel_table.cpp:
// _unary/_binary split by the dtypes each group of codes is defined for.
void add_pointwise_kernels(KernelList& out) {
  out.push_back(
      make_entry(sdk::schema::kAdd, {kRealDtypes, kRealDtypes}, arith_kernel<Arith::kAdd>));
  out.push_back(
      make_entry(sdk::schema::kSub, {kNumericDtypes, kNumericDtypes}, arith_kernel<Arith::kSub>));
  out.push_back(
      make_entry(sdk::schema::kMul, {kRealDtypes, kRealDtypes}, arith_kernel<Arith::kMul>));
  out.push_back(
      make_entry(sdk::schema::kDiv, {kFloatingDtypes, kFloatingDtypes}, arith_kernel<Arith::kDiv>));

  // _unary and _binary, one entry per group of input dtypes with the codes
  // the core calls that group with (sdk/kernel_entry.hpp).
  for (const tsr_kernel_entry& e : sdk::unary_entries(unary_kernel)) out.push_back(e);
  for (const tsr_kernel_entry& e : sdk::binary_entries(binary_kernel)) out.push_back(e);
  out.push_back(
      make_entry(sdk::schema::kWhere, {sdk::kBoolDtype, kRealDtypes, kRealDtypes}, where_kernel));
}

}  // namespace tessera::gpu
