// reduce.cu - the reduction primitives: _reduce (SUM, PROD, MEAN, AMAX, AMIN,
// ANY, ALL over a dim list), _arg_reduce (ARGMAX, ARGMIN along one dim), _scan
// (CUMSUM, CUMPROD, LOGCUMSUMEXP, CUMMAX, CUMMIN along one dim) and the fused
// cummax / cummin (values and indices). The fused softmax is in softmax.cu;
// layer norm and cross entropy in nn/norm.cu.
//
// Semantics are the CPU plugin's (plugins/cpu/src/reduce.cpp, reduction/):
//   - sums of floating inputs accumulate in float64 (blocks of 4096 elements
//     added into a float64 total, so long sums stay within an ulp or two),
//     integer sums and products wrap in 64 bits, floating products multiply
//     in float64; AMAX/AMIN compare in compute_t<T> with NaN sticky; MEAN is
//     the float64 sum over the count (NaN for no elements). Bool inputs: SUM
//     and AMAX are ANY, PROD and AMIN are ALL. AMAX/AMIN of nothing is refused.
//   - arg-reductions: the first index of the extreme, the first NaN winning.
//   - scans: floats accumulate in float64 (float16/bfloat16 in float32),
//     integers wrap in 64 bits; LOGCUMSUMEXP is max + log1p(exp(min - max));
//     cummax/cummin indices move to ties (the last index), like PyTorch.
// Work items: _reduce is one output element looping over its reduced
// elements; when there are few outputs and many reduced elements each output
// is split into chunks: pass 1 writes one partial per (output, chunk) into
// scratch (a chunk takes every chunks-th element when the reduced dims are one
// strided run, so adjacent work items read adjacent memory), pass 2 combines
// an output's partials in chunk order (deterministic, and it runs in the host
// emulation too). Arg-reductions and scans are one work item per line.
// Device builds run outputs whose reduced elements are one long contiguous
// run (_reduce, _arg_reduce) with one block per output and a shared-memory
// tree instead (lines.hpp); that path cannot run in the host
// emulation.
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"
#include "reduction/lines.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::gpu {
namespace {

// ---------------------------------------------------------------- _reduce

enum Rop { kSum, kMean, kProd, kAmax, kAmin, kAny, kAll };

// Reduction Op over element type T: accumulator W, output O.
template <int Op, class T>
struct Reducer {
  static constexpr bool kIsSum = Op == kSum || Op == kMean;
  static constexpr bool kLogical = Op == kAny || Op == kAll;
  using W = std::conditional_t<
      kLogical, bool,
      std::conditional_t<(kIsSum || Op == kProd),
                         std::conditional_t<is_integral_v<T>, uint64_t, double>, compute_t<T>>>;
  using O = std::conditional_t<kLogical, bool, T>;

  static TSR_HD W identity() {
    if constexpr (kIsSum) {
      return W(0);
    } else if constexpr (Op == kProd) {
      return W(1);
    } else if constexpr (Op == kAny) {
      return false;
    } else if constexpr (Op == kAll) {
      return true;
    } else if constexpr (Op == kAmax) {
      return std::numeric_limits<W>::has_infinity ? -std::numeric_limits<W>::infinity()
                                                  : std::numeric_limits<W>::lowest();
    } else {
      return std::numeric_limits<W>::has_infinity ? std::numeric_limits<W>::infinity()
                                                  : std::numeric_limits<W>::max();
    }
  }
  static TSR_HD W load(const char* p) {
    const T x = *reinterpret_cast<const T*>(p);
    if constexpr (kLogical) {
      return convert<bool>(x);
    } else if constexpr (std::is_same_v<W, uint64_t>) {
      return static_cast<uint64_t>(static_cast<int64_t>(x));
    } else {
      return static_cast<W>(static_cast<compute_t<T>>(x));
    }
  }
  static TSR_HD W combine(W a, W b) {
    if constexpr (kIsSum) {
      return a + b;
    } else if constexpr (Op == kProd) {
      return a * b;
    } else if constexpr (Op == kAny) {
      return a || b;
    } else if constexpr (Op == kAll) {
      return a && b;
    } else if constexpr (Op == kAmax) {
      return (b > a || nan_of(b)) ? b : a;  // NaN is sticky
    } else {
      return (b < a || nan_of(b)) ? b : a;
    }
  }
  static TSR_HD O finish(W w, int64_t count) {
    if constexpr (kLogical) {
      return w;
    } else if constexpr (is_integral_v<T>) {
      return static_cast<T>(w);  // modular
    } else if constexpr (Op == kMean) {
      return convert<T>(w / static_cast<double>(count));
    } else {
      return convert<T>(w);
    }
  }
};

// The reduced dims of one output: `outer` walks every reduced dim but the
// innermost (byte offsets of the input), whose `inner` elements are
// `inner_stride` bytes apart.
struct ReducedDims {
  Indexer<1> outer;
  int64_t inner = 1;
  int64_t inner_stride = 0;
};

// Elements [begin, end) of the reduced iteration order starting at `base`.
// Floating sums add blocks of kBlock elements into the total (cascade).
template <class R>
TSR_HD typename R::W reduce_range(const ReducedDims& rd, const char* base, int64_t begin,
                                  int64_t end) {
  using W = typename R::W;
  constexpr bool kCascade = R::kIsSum && std::is_floating_point_v<W>;
  constexpr int64_t kBlock = 4096;
  W total = R::identity();
  W block = R::identity();
  int64_t in_block = 0;
  int64_t j = begin;
  while (j < end) {
    const int64_t o = j / rd.inner;
    const int64_t k = j - o * rd.inner;
    const int64_t len = (rd.inner - k) < (end - j) ? (rd.inner - k) : (end - j);
    const char* p = base + rd.outer.offset(0, o) + k * rd.inner_stride;
    for (int64_t t = 0; t < len; ++t) {
      const W x = R::load(p + t * rd.inner_stride);
      if constexpr (kCascade) {
        block += x;
        if (++in_block == kBlock) {
          total += block;
          block = W(0);
          in_block = 0;
        }
      } else {
        total = R::combine(total, x);
      }
    }
    j += len;
  }
  if constexpr (kCascade) total += block;
  return total;
}

// Elements first, first + every, ... (< count) of a reduction that is one
// strided run: chunk c of a split reduction takes elements c, c + chunks, ...
// so that adjacent work items read adjacent elements (coalesced on the GPU).
template <class R>
TSR_HD typename R::W reduce_interleaved(const char* base, int64_t stride, int64_t first,
                                        int64_t every, int64_t count) {
  using W = typename R::W;
  constexpr bool kCascade = R::kIsSum && std::is_floating_point_v<W>;
  constexpr int64_t kBlock = 4096;
  W total = R::identity();
  W block = R::identity();
  int64_t in_block = 0;
  for (int64_t j = first; j < count; j += every) {
    const W x = R::load(base + j * stride);
    if constexpr (kCascade) {
      block += x;
      if (++in_block == kBlock) {
        total += block;
        block = W(0);
        in_block = 0;
      }
    } else {
      total = R::combine(total, x);
    }
  }
  if constexpr (kCascade) total += block;
  return total;
}

// Pass 1 (or the only pass): work item i reduces chunk i % chunks of output
// i / chunks; with `partial` null (chunks == 1) it stores the result.
template <int Op, class T>
struct ReduceOp {
  using R = Reducer<Op, T>;
  const char* in;
  char* out;
  Indexer<2> kept;  // operands: input, output
  ReducedDims rd;
  int64_t count;
  int64_t chunks;
  typename R::W* partial;
  TSR_HD void operator()(int64_t i) const {
    const int64_t o = i / chunks;
    const int64_t c = i - o * chunks;
    int64_t off[2];
    kept.offsets(o, off);
    typename R::W w;
    if (partial != nullptr && rd.outer.ndim == 0) {
      w = reduce_interleaved<R>(in + off[0], rd.inner_stride, c, chunks, count);
    } else {
      // count * c fits: count < 2^49 and chunks <= 2^14.
      const int64_t begin = count * c / chunks;
      const int64_t end = count * (c + 1) / chunks;
      w = reduce_range<R>(rd, in + off[0], begin, end);
    }
    if (partial != nullptr) {
      partial[i] = w;
    } else {
      *reinterpret_cast<typename R::O*>(out + off[1]) = R::finish(w, count);
    }
  }
};

// Pass 2: output i combines its partials in chunk order.
template <int Op, class T>
struct ReduceFinishOp {
  using R = Reducer<Op, T>;
  char* out;
  Indexer<2> kept;
  int64_t count;
  int64_t chunks;
  const typename R::W* partial;
  TSR_HD void operator()(int64_t i) const {
    typename R::W w = partial[i * chunks];
    for (int64_t c = 1; c < chunks; ++c) w = R::combine(w, partial[i * chunks + c]);
    *reinterpret_cast<typename R::O*>(out + kept.offset(1, i)) = R::finish(w, count);
  }
};

#if TSR_DEVICE_COMPILER
template <class R>
struct CombineOf {
  __device__ typename R::W operator()(typename R::W a, typename R::W b) const {
    return R::combine(a, b);
  }
};

// Device-only: one block per output whose reduced elements are one long
// contiguous run (row reductions); thread t takes elements t, t +
// kRowThreads, ... (coalesced) and the block combines them in a tree.
template <int Op, class T>
__global__ void reduce_rows_kernel(ReduceOp<Op, T> op) {
  using R = Reducer<Op, T>;
  using W = typename R::W;
  __shared__ W shm[kRowThreads];
  for (int64_t o = blockIdx.x; o < op.kept.numel; o += gridDim.x) {
    int64_t off[2];
    op.kept.offsets(o, off);
    W w = reduce_interleaved<R>(op.in + off[0], op.rd.inner_stride, threadIdx.x, kRowThreads,
                                op.count);
    w = block_reduce(w, shm, CombineOf<R>{});
    if (threadIdx.x == 0)
      *reinterpret_cast<typename R::O*>(op.out + off[1]) = R::finish(w, op.count);
  }
}
#endif

// Chunks per output: split when there are few outputs to share the device
// and each has many elements; each chunk keeps >= kMinChunk elements.
constexpr int64_t kMinChunk = 4096;
constexpr int64_t kTargetItems = 1 << 16;  // work items worth having in flight
constexpr int64_t kMaxChunks = 1 << 14;

int64_t chunks_for(int64_t outputs, int64_t count) {
  if (outputs >= kTargetItems / 4 || count < 2 * kMinChunk) return 1;
  int64_t chunks = count / kMinChunk;
  const int64_t want = (kTargetItems + outputs - 1) / outputs;
  if (chunks > want) chunks = want;
  if (chunks > kMaxChunks) chunks = kMaxChunks;
  return chunks < 2 ? 1 : chunks;
}

template <int Op, class T>
void run_reduce(const Exec& exec, const tsr_kernel_call& call, const char* in, char* out,
                const Indexer<2>& kept, const ReducedDims& rd, int64_t count) {
  using R = Reducer<Op, T>;
  const int64_t outputs = kept.numel;
  const int64_t chunks = chunks_for(outputs, count);
  if (chunks == 1) {
#if TSR_DEVICE_COMPILER
    if (rd.outer.ndim == 0 && count >= kRowMinLength &&
        rd.inner_stride == static_cast<int64_t>(sizeof(T))) {
      reduce_rows_kernel<Op, T><<<row_blocks(exec, outputs), kRowThreads, 0, native_stream(exec)>>>(
          ReduceOp<Op, T>{in, out, kept, rd, count, 1, nullptr});
      check_launch("_reduce");
      return;
    }
#endif
    parallel_for(exec, outputs, ReduceOp<Op, T>{in, out, kept, rd, count, 1, nullptr}, "_reduce");
    return;
  }
  auto* partial = static_cast<typename R::W*>(
      scratch(call, static_cast<size_t>(outputs * chunks) * sizeof(typename R::W)));
  parallel_for(exec, outputs * chunks, ReduceOp<Op, T>{in, out, kept, rd, count, chunks, partial},
               "_reduce");
  parallel_for(exec, outputs, ReduceFinishOp<Op, T>{out, kept, count, chunks, partial}, "_reduce");
}

const char* reduce_code_name(int64_t code) {
  static constexpr const char* names[] = {"SUM", "PROD", "MEAN", "AMAX", "AMIN", "ANY", "ALL"};
  return code >= 0 && code < TSR_REDUCE_CODE_COUNT ? names[code] : "?";
}

tsr_status* reduce_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const int64_t code = int_arg(*call, 1, "op");
    const tsr_tensor_desc& out = out_arg(*call, 0);
    if (code < 0 || code >= TSR_REDUCE_CODE_COUNT)
      sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _reduce code %lld is not implemented",
                        call->op_name, static_cast<long long>(code));
    const bool logical = code == TSR_REDUCE_ANY || code == TSR_REDUCE_ALL;
    sdk::check_dtype(*call, out, "out", logical ? TSR_BOOL : self.dtype);
    if (code == TSR_REDUCE_MEAN && !sdk::is_floating_dtype(self.dtype))
      sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _reduce MEAN is not defined for dtype %s",
                        call->op_name, sdk::dtype_name(self.dtype));
    const sdk::reduced_dims reduced = sdk::reduced_dims_arg(*call, 2, self);
    sdk::check_keepdim(*call, self, out, reduced);
    const sdk::reduction_split split = sdk::split_reduction(self, out, reduced);
    const size_t in_size = sdk::element_size(self.dtype);
    const size_t out_size = sdk::element_size(out.dtype);
    const int64_t* kept_strides[2] = {split.kept_strides[0], split.kept_strides[1]};
    const Indexer<2> kept =
        indexer_of<2>(split.kept_ndim, split.kept_sizes, kept_strides, {in_size, out_size});
    const int64_t* red_strides[1] = {split.reduced_strides};
    const Indexer<1> red =
        indexer_of<1>(split.reduced_ndim, split.reduced_sizes, red_strides, {in_size});
    const int64_t outputs = kept.numel;
    const int64_t count = red.numel;
    if (outputs == 0) return;
    if (count == 0 && (code == TSR_REDUCE_AMAX || code == TSR_REDUCE_AMIN))
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: _reduce %s over an empty reduction has no identity (the core must "
                        "refuse it)",
                        call->op_name, reduce_code_name(code));
    // Split off the innermost reduced dim (a run of contiguous-or-strided loads).
    ReducedDims rd;
    rd.outer = red;
    if (red.ndim >= 1 && count > 0) {
      rd.inner = red.sizes[red.ndim - 1];
      rd.inner_stride = red.strides[0][red.ndim - 1];
      rd.outer.ndim = red.ndim - 1;
      rd.outer.numel = red.numel / rd.inner;
      rd.outer.sizes[red.ndim - 1] = 0;
      rd.outer.strides[0][red.ndim - 1] = 0;
    }
    if (count == 0) rd.outer.ndim = 0;  // never walked (inner = 1 keeps the divisions defined)
    const char* in = data_of(self);
    char* o = data_of(out);
    TSR_GPU_DISPATCH(self.dtype, "_reduce", T, {
      if constexpr (std::is_same_v<T, bool>) {
        if (code == TSR_REDUCE_PROD || code == TSR_REDUCE_AMIN || code == TSR_REDUCE_ALL)
          run_reduce<kAll, T>(exec, *call, in, o, kept, rd, count);
        else
          run_reduce<kAny, T>(exec, *call, in, o, kept, rd, count);
      } else {
        switch (code) {
          case TSR_REDUCE_SUM:
            run_reduce<kSum, T>(exec, *call, in, o, kept, rd, count);
            break;
          case TSR_REDUCE_PROD:
            run_reduce<kProd, T>(exec, *call, in, o, kept, rd, count);
            break;
          case TSR_REDUCE_MEAN:
            if constexpr (is_floating_v<T>)
              run_reduce<kMean, T>(exec, *call, in, o, kept, rd, count);
            break;
          case TSR_REDUCE_AMAX:
            run_reduce<kAmax, T>(exec, *call, in, o, kept, rd, count);
            break;
          case TSR_REDUCE_AMIN:
            run_reduce<kAmin, T>(exec, *call, in, o, kept, rd, count);
            break;
          case TSR_REDUCE_ANY:
            run_reduce<kAny, T>(exec, *call, in, o, kept, rd, count);
            break;
          default:
            run_reduce<kAll, T>(exec, *call, in, o, kept, rd, count);
            break;
        }
      }
    });
  });
}

// ----------------------------------------------------------- _arg_reduce

// x replaces the current best: strictly more extreme, or the first NaN.
template <bool Max, class C>
TSR_HD inline bool better(C x, C best) {
  if constexpr (Max) {
    return x > best || (nan_of(x) && !nan_of(best));
  } else {
    return x < best || (nan_of(x) && !nan_of(best));
  }
}

template <bool Max, class T>
struct ArgReduceOp {
  const char* in;
  char* out;
  Lines<2> l;
  TSR_HD void operator()(int64_t i) const {
    using C = compute_t<T>;
    int64_t off[2];
    l.ix.offsets(i, off);
    const char* p = in + off[0];
    C best = static_cast<C>(*reinterpret_cast<const T*>(p));
    int64_t index = 0;
    for (int64_t k = 1; k < l.n; ++k) {
      const C x = static_cast<C>(*reinterpret_cast<const T*>(p + k * l.step[0]));
      if (better<Max>(x, best)) {
        best = x;
        index = k;
      }
    }
    *reinterpret_cast<int64_t*>(out + off[1]) = index;
  }
};

#if TSR_DEVICE_COMPILER
// Device-only: one block per long contiguous line. Every thread starts from
// element 0 (a real element, so a thread with nothing else to read cannot
// win wrongly), scans its elements in increasing order keeping the first
// extreme, and the block tree keeps the more extreme value or, when neither
// is better (equal, or both NaN), the smaller index.
template <bool Max, class T>
__global__ void arg_reduce_rows_kernel(ArgReduceOp<Max, T> op) {
  using C = compute_t<T>;
  __shared__ C best_s[kRowThreads];
  __shared__ int64_t index_s[kRowThreads];
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t line = blockIdx.x; line < op.l.ix.numel; line += gridDim.x) {
    int64_t off[2];
    op.l.ix.offsets(line, off);
    const char* p = op.in + off[0];
    C best = static_cast<C>(*reinterpret_cast<const T*>(p));
    int64_t index = 0;
    for (int64_t k = t; k < op.l.n; k += kRowThreads) {
      const C x = static_cast<C>(*reinterpret_cast<const T*>(p + k * op.l.step[0]));
      if (better<Max>(x, best)) {
        best = x;
        index = k;
      }
    }
    best_s[t] = best;
    index_s[t] = index;
    __syncthreads();
    for (int w = kRowThreads / 2; w > 0; w /= 2) {
      if (t < w) {
        const C a = best_s[t], b = best_s[t + w];
        const int64_t ia = index_s[t], ib = index_s[t + w];
        if (better<Max>(b, a) || (!better<Max>(a, b) && ib < ia)) {
          best_s[t] = b;
          index_s[t] = ib;
        }
      }
      __syncthreads();
    }
    if (t == 0) *reinterpret_cast<int64_t*>(op.out + off[1]) = index_s[0];
    __syncthreads();  // the arrays are reused by the next line
  }
}
#endif

template <bool Max, class T>
void run_arg_reduce(const Exec& exec, const ArgReduceOp<Max, T>& op) {
#if TSR_DEVICE_COMPILER
  if (op.l.n >= kRowMinLength && op.l.step[0] == static_cast<int64_t>(sizeof(T))) {
    arg_reduce_rows_kernel<Max, T>
        <<<row_blocks(exec, op.l.ix.numel), kRowThreads, 0, native_stream(exec)>>>(op);
    check_launch("_arg_reduce");
    return;
  }
#endif
  parallel_for(exec, op.l.ix.numel, op, "_arg_reduce");
}

tsr_status* arg_reduce_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const int64_t code = int_arg(*call, 1, "op");
    const int dim = resolved_dim(*call, 2, self.ndim);
    const tsr_tensor_desc& out = out_arg(*call, 0);
    if (code != TSR_ARG_REDUCE_ARGMAX && code != TSR_ARG_REDUCE_ARGMIN)
      sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _arg_reduce code %lld is not implemented",
                        call->op_name, static_cast<long long>(code));
    sdk::check_dtype(*call, out, "out", TSR_INT64);
    bool shape_ok = out.ndim == self.ndim;
    for (int d = 0; shape_ok && d < self.ndim; ++d)
      shape_ok = out.sizes[d] == (d == dim ? 1 : self.sizes[d]);
    if (!shape_ok)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: out must have self's shape with size 1 along dim %d (keepdim layout)",
                        call->op_name, dim);
    const tsr_tensor_desc* descs[2] = {&self, &out};
    const Lines<2> l = make_lines<2>(descs, dim);
    if (l.ix.numel == 0) return;
    if (l.n == 0)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: _arg_reduce along the empty dim %d has no result (the core must "
                        "refuse it)",
                        call->op_name, dim);
    TSR_GPU_DISPATCH(self.dtype, "_arg_reduce", T, {
      if (code == TSR_ARG_REDUCE_ARGMAX)
        run_arg_reduce(exec, ArgReduceOp<true, T>{data_of(self), data_of(out), l});
      else
        run_arg_reduce(exec, ArgReduceOp<false, T>{data_of(self), data_of(out), l});
    });
  });
}

// ----------------------------------------------------------------- _scan

template <class T>
using scan_acc_t = std::conditional_t<
    std::is_same_v<T, bool>, bool,
    std::conditional_t<is_integral_v<T>, uint64_t,
                       std::conditional_t<is_reduced_float_v<T>, float, double>>>;

template <int Code, class T>
struct Scanner {
  static constexpr bool kExtreme = Code == TSR_SCAN_CUMMAX || Code == TSR_SCAN_CUMMIN;
  using A = std::conditional_t<kExtreme, compute_t<T>, scan_acc_t<T>>;

  static TSR_HD A load(const char* p) {
    const T x = *reinterpret_cast<const T*>(p);
    if constexpr (std::is_same_v<A, uint64_t>) {
      return static_cast<uint64_t>(static_cast<int64_t>(x));
    } else {
      return static_cast<A>(static_cast<compute_t<T>>(x));
    }
  }
  static TSR_HD A step(A acc, A x) {
    if constexpr (std::is_same_v<T, bool>) {
      if constexpr (Code == TSR_SCAN_CUMPROD || Code == TSR_SCAN_CUMMIN) {
        return acc && x;
      } else {
        return acc || x;
      }
    } else if constexpr (Code == TSR_SCAN_CUMSUM) {
      return acc + x;
    } else if constexpr (Code == TSR_SCAN_CUMPROD) {
      return acc * x;
    } else if constexpr (Code == TSR_SCAN_CUMMAX) {
      return (x > acc || nan_of(x)) ? x : acc;
    } else if constexpr (Code == TSR_SCAN_CUMMIN) {
      return (x < acc || nan_of(x)) ? x : acc;
    } else if constexpr (std::is_floating_point_v<A>) {  // LOGCUMSUMEXP
      if (nan_of(acc) || nan_of(x)) return std::numeric_limits<A>::quiet_NaN();
      const A hi = acc > x ? acc : x;
      const A lo = acc > x ? x : acc;
      if (lo == -std::numeric_limits<A>::infinity() || hi == std::numeric_limits<A>::infinity())
        return hi;
      return hi + log1p_of(exp_of(lo - hi));
    } else {
      return acc;
    }
  }
  static TSR_HD void store(char* p, A acc) {
    if constexpr (std::is_same_v<A, uint64_t>) {
      *reinterpret_cast<T*>(p) = static_cast<T>(acc);  // modular
    } else {
      *reinterpret_cast<T*>(p) = convert<T>(acc);
    }
  }
};

template <int Code, class T>
struct ScanOp {
  using S = Scanner<Code, T>;
  const char* in;
  char* out;
  Lines<2> l;
  TSR_HD void operator()(int64_t i) const {
    int64_t off[2];
    l.ix.offsets(i, off);
    const char* x = in + off[0];
    char* y = out + off[1];
    typename S::A acc = S::load(x);
    S::store(y, acc);
    for (int64_t k = 1; k < l.n; ++k) {
      acc = S::step(acc, S::load(x + k * l.step[0]));
      S::store(y + k * l.step[1], acc);
    }
  }
};

const char* scan_code_name(int64_t code) {
  static constexpr const char* names[] = {"CUMSUM", "CUMPROD", "LOGCUMSUMEXP", "CUMMAX", "CUMMIN"};
  return code >= 0 && code < TSR_SCAN_CODE_COUNT ? names[code] : "?";
}

tsr_status* scan_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const int64_t code = int_arg(*call, 1, "op");
    const int dim = resolved_dim(*call, 2, self.ndim);
    const tsr_tensor_desc& out = out_arg(*call, 0);
    if (code < 0 || code >= TSR_SCAN_CODE_COUNT)
      sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _scan code %lld is not implemented", call->op_name,
                        static_cast<long long>(code));
    sdk::check_dtype(*call, out, "out", self.dtype);
    sdk::check_same_sizes(*call, out, "out", self, "self");
    if (code == TSR_SCAN_LOGCUMSUMEXP && !sdk::is_floating_dtype(self.dtype))
      sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _scan %s is not defined for dtype %s",
                        call->op_name, scan_code_name(code), sdk::dtype_name(self.dtype));
    const tsr_tensor_desc* descs[2] = {&self, &out};
    const Lines<2> l = make_lines<2>(descs, dim);
    if (l.ix.numel == 0 || l.n == 0) return;
    const char* in = data_of(self);
    char* o = data_of(out);
    TSR_GPU_DISPATCH(self.dtype, "_scan", T, {
      switch (code) {
        case TSR_SCAN_CUMSUM:
          parallel_for(exec, l.ix.numel, ScanOp<TSR_SCAN_CUMSUM, T>{in, o, l}, "_scan");
          break;
        case TSR_SCAN_CUMPROD:
          parallel_for(exec, l.ix.numel, ScanOp<TSR_SCAN_CUMPROD, T>{in, o, l}, "_scan");
          break;
        case TSR_SCAN_LOGCUMSUMEXP:
          if constexpr (is_floating_v<T>)
            parallel_for(exec, l.ix.numel, ScanOp<TSR_SCAN_LOGCUMSUMEXP, T>{in, o, l}, "_scan");
          break;
        case TSR_SCAN_CUMMAX:
          parallel_for(exec, l.ix.numel, ScanOp<TSR_SCAN_CUMMAX, T>{in, o, l}, "_scan");
          break;
        default:
          parallel_for(exec, l.ix.numel, ScanOp<TSR_SCAN_CUMMIN, T>{in, o, l}, "_scan");
          break;
      }
    });
  });
}

// ------------------------------------------------------ cummax / cummin

template <bool Max, class T>
struct CumExtremeOp {
  const char* in;
  char* values;
  char* indices;
  Lines<3> l;
  TSR_HD void operator()(int64_t i) const {
    using C = compute_t<T>;
    int64_t off[3];
    l.ix.offsets(i, off);
    const char* x = in + off[0];
    char* v = values + off[1];
    char* ix = indices + off[2];
    C best = static_cast<C>(*reinterpret_cast<const T*>(x));
    int64_t index = 0;
    for (int64_t k = 0; k < l.n; ++k) {
      const C c = static_cast<C>(*reinterpret_cast<const T*>(x + k * l.step[0]));
      const bool take = Max ? (c >= best || nan_of(c)) : (c <= best || nan_of(c));
      if (k == 0 || take) {
        best = c;
        index = k;
      }
      *reinterpret_cast<T*>(v + k * l.step[1]) = static_cast<T>(best);
      *reinterpret_cast<int64_t*>(ix + k * l.step[2]) = index;
    }
  }
};

template <bool Max>
tsr_status* cum_extreme_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const int dim = resolved_dim(*call, 1, self.ndim);
    const tsr_tensor_desc& values = out_arg(*call, 0);
    const tsr_tensor_desc& indices = out_arg(*call, 1);
    sdk::check_dtype(*call, values, "values", self.dtype);
    sdk::check_dtype(*call, indices, "indices", TSR_INT64);
    sdk::check_same_sizes(*call, values, "values", self, "self");
    sdk::check_same_sizes(*call, indices, "indices", self, "self");
    const tsr_tensor_desc* descs[3] = {&self, &values, &indices};
    const Lines<3> l = make_lines<3>(descs, dim);
    if (l.ix.numel == 0 || l.n == 0) return;
    TSR_GPU_DISPATCH(self.dtype, Max ? "cummax" : "cummin", T, {
      parallel_for(exec, l.ix.numel,
                   CumExtremeOp<Max, T>{data_of(self), data_of(values), data_of(indices), l},
                   Max ? "cummax" : "cummin");
    });
  });
}

}  // namespace

void add_reduce_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kReduce, {kRealDtypes}, reduce_kernel, sdk::kReduceCodes));
  out.push_back(
      make_entry(sdk::schema::kArgReduce, {kRealDtypes}, arg_reduce_kernel, sdk::kArgReduceCodes));
  out.push_back(make_entry(sdk::schema::kScan, {kRealDtypes}, scan_kernel, sdk::kScanCodes));
  out.push_back(make_entry(sdk::schema::kCummax, {kRealDtypes}, cum_extreme_kernel<true>));
  out.push_back(make_entry(sdk::schema::kCummin, {kRealDtypes}, cum_extreme_kernel<false>));
}

}  // namespace tessera::gpu
