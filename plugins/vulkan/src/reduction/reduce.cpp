// reduce.cpp - _reduce (SUM, PROD, MEAN, AMAX, AMIN, ANY, ALL),
// _arg_reduce (ARGMAX, ARGMIN) and _scan (CUMSUM, CUMPROD, LOGCUMSUMEXP,
// CUMMAX, CUMMIN): shaders/reduction/reduce.comp over every real dtype, any strides,
// ndim <= 8; one invocation per output element, or per chunk of an output
// plus a merge (Note [Reduction strategy]), one invocation per line for
// scans.
// Semantics as abi/tessera/opcodes.h and the CPU plugin: MEAN of integers
// and LOGCUMSUMEXP of non-floating dtypes are refused (UNIMPLEMENTED), as
// are AMAX/AMIN of an empty reduction (the core refuses them first).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

#include "kernel_util.hpp"
#include "stream.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kReduceSpirv[] = {
#include "reduce.spv.inc"
};
const Shader kReduce{"reduce", kReduceSpirv, sizeof kReduceSpirv};

// reduce.comp's KIND_* constants.
enum class Kind : int32_t { kReduce = 0, kArg = 1, kScan = 2 };

// reduce.comp's parameter block (std430, 400 bytes).
struct Params {
  int64_t outputs = 0;  // output elements (reductions) or lines (scans)
  int64_t count = 0;    // reduced elements per output (the line's length)
  int64_t ostride = 0;  // scans: out's stride along dim
  int32_t kind = 0;
  int32_t op = 0;
  int32_t ndim = 0;   // out's dims (keepdim layout)
  int32_t rndim = 0;  // reduced dims
  int32_t wide = 0;   // Phase::kMerge: one workgroup per output (else one invocation)
  int32_t order = 0;  // Phase::kPartial: 0 chunks of an output side by side, 1 outputs side by side
  int64_t sizes[8] = {};
  int64_t rsizes[8] = {};
  int64_t rstrides[8] = {};
  OperandParams t[2];  // t[0] out, t[1] self
  int64_t span = 0;    // scans (Note [lavapipe loop budget]): elements per chunk
  int64_t chunks = 0;  // reductions (Note [Reduction strategy]): chunks per output
  int64_t first = 0;   // scan chunks: the first element along the line
  uint64_t scratch = 0;
  int32_t phase = 0;  // reduce.comp's PHASE_*
  int32_t pad2_ = 0;
};
static_assert(offsetof(Params, sizes) == 48);
static_assert(offsetof(Params, rsizes) == 112);
static_assert(offsetof(Params, rstrides) == 176);
static_assert(offsetof(Params, t) == 240);
static_assert(offsetof(Params, scratch) == 424);
static_assert(sizeof(Params) == 440);

// reduce.comp's PHASE_* constants.
enum class Phase : int32_t { kWhole = 0, kPartial = 1, kMerge = 2, kScan = 3 };
// reduce.comp's SPEC_PHASE: the phase plus one, a merge by workgroups 5.
constexpr int32_t kWholeCode = 1, kPartialCode = 2, kMergeCode = 3, kScanCode = 4,
                  kWideMergeCode = 5;

const char* reduce_code_name(int64_t code) {
  static constexpr const char* names[] = {"SUM", "PROD", "MEAN", "AMAX", "AMIN", "ANY", "ALL"};
  return code >= 0 && code < TSR_REDUCE_CODE_COUNT ? names[code] : "?";
}
const char* scan_code_name(int64_t code) {
  static constexpr const char* names[] = {"CUMSUM", "CUMPROD", "LOGCUMSUMEXP", "CUMMAX", "CUMMIN"};
  return code >= 0 && code < TSR_SCAN_CODE_COUNT ? names[code] : "?";
}

bool is_floating(int32_t dtype) { return ((kFloatingDtypes >> dtype) & 1) != 0; }

// The parameter block over `out` (keepdim layout) and `self`, reducing the
// dims flagged in `reduced` (row-major order).
Params params_over(const tsr_tensor_desc& self, const tsr_tensor_desc& out, const bool* reduced,
                   Kind kind, int64_t op) {
  Params p;
  p.kind = static_cast<int32_t>(kind);
  p.op = static_cast<int32_t>(op);
  p.ndim = out.ndim;
  p.t[0] = operand(out, out.ndim);
  p.t[1] = operand(self, self.ndim);
  p.outputs = 1;
  p.count = 1;
  for (int d = 0; d < self.ndim; ++d) {
    if (reduced[d]) {
      p.sizes[d] = 1;
      p.t[0].strides[d] = 0;
      p.t[1].strides[d] = 0;
      p.rsizes[p.rndim] = self.sizes[d];
      p.rstrides[p.rndim++] = self.strides[d];
      p.count *= self.sizes[d];
    } else {
      p.sizes[d] = self.sizes[d];
      p.outputs *= self.sizes[d];
    }
  }
  if (kind != Kind::kScan) {
    // Reduced dims that walk as one merge (size-1 ones go): the row-major
    // order of the elements, and so the order of accumulation, is
    // unchanged, and reduce.comp's one-dim variant finds an element without
    // dividing (a full reduction of a contiguous tensor is one dim).
    int kept = 0;
    for (int k = 0; k < p.rndim; ++k) {
      if (p.rsizes[k] == 1) continue;
      if (kept > 0 && p.rstrides[kept - 1] == p.rstrides[k] * p.rsizes[k]) {
        p.rsizes[kept - 1] *= p.rsizes[k];
        p.rstrides[kept - 1] = p.rstrides[k];
      } else {
        p.rsizes[kept] = p.rsizes[k];
        p.rstrides[kept++] = p.rstrides[k];
      }
    }
    for (int k = kept; k < p.rndim; ++k) p.rsizes[k] = p.rstrides[k] = 0;
    p.rndim = kept;
  }
  return p;
}

// Note [lavapipe loop budget]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// llvmpipe (lavapipe's compiler) bounds every shader invocation to 65535
// loop iterations in all - its guard against infinite loops - and silently
// ends the loops past that: a 6M-element sum came out as the sum of its
// first elements. Every loop iteration counts, nested ones too (reduced_offset
// walks up to 8 dims per element). So no invocation here walks more than
// kLaneIterations elements of a reduction, or kScanSpan of a scan line:
//  - a reduction longer than kLaneIterations per output is split into
//    chunks (Note [Reduction strategy]), each reduced into a 24-byte partial
//    result (double, int64, index) in a scratch allocation, then merged in
//    order: by one invocation per output up to kLaneIterations chunks, by a
//    workgroup per output (256 lanes) beyond;
//  - a scan line longer than kScanSpan runs as consecutive dispatches over
//    kScanSpan-element chunks, each line's running value carried in scratch
//    (exactly as one pass would hold it: double or int64).
// The scratch allocation goes back to the allocator when the stream's work
// completes. The same bound holds on every device, so results do not depend
// on which driver runs them.
constexpr int64_t kLaneIterations = 2048;
constexpr int64_t kScanSpan = 4096;
constexpr uint64_t kPartialBytes = 24;

// Note [Reduction strategy]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A reduction of `count` elements into each of `outputs` outputs is dealt to
// invocations that each walk their elements serially (no shared memory, no
// barriers: lavapipe switches all 256 invocations of a workgroup at every
// barrier, and a workgroup per short output leaves most lanes idle; a sum
// over dim 1 of [8, 17, 384] took 50 ms that way, against 0.25 ms at 16
// elements, one invocation each). One invocation per output when the
// outputs alone give kFillUnits invocations (or the reductions are too short
// to split); otherwise each output's elements are dealt to `chunks`
// invocations, as many as bring the total to kFillUnits but none walking
// fewer than kMinChunk elements (a partial result is a 24-byte store), and
// at least count / kLaneIterations (the loop budget). Chunk c of an output
// takes elements c, c + chunks, c + 2 chunks, ..., so neighbouring
// invocations read neighbouring elements when the reduced dim is contiguous
// (a GPU's loads coalesce); when it is not, neighbouring invocations take
// neighbouring outputs instead (`order`), which are then the contiguous
// ones in layouts like [batch, length, hidden] reduced over length. The
// chunks then merge in order, one invocation per output. kFillUnits is the
// parallelism a device needs: a CPU device (lavapipe) runs a workgroup's
// 256 invocations on one thread, so 8 workgroups keep a few threads busy;
// a GPU wants its whole width (an H200: 132 SMs x 2048 resident threads).
constexpr uint64_t kCpuFillUnits = 2048;
constexpr uint64_t kGpuFillUnits = 131072;
constexpr int64_t kMinChunk = 64;

// kFillUnits for `d`; TESSERA_VULKAN_REDUCE_FILL=gpu takes a GPU's on any
// device (the ctest vulkan_device_test.gpu_reductions: those splits on
// lavapipe).
uint64_t fill_units(const Device& d) {
  static const bool gpu = [] {
    const char* env = std::getenv("TESSERA_VULKAN_REDUCE_FILL");
    return env != nullptr && std::strcmp(env, "gpu") == 0;
  }();
  return d.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !gpu ? kCpuFillUnits
                                                                        : kGpuFillUnits;
}

// Chunks per output (1: one invocation per output, no merge).
int64_t reduction_chunks(int64_t outputs, int64_t count, uint64_t fill_units) {
  int64_t chunks = (count + kLaneIterations - 1) / kLaneIterations;
  if (static_cast<uint64_t>(outputs) < fill_units) {
    const int64_t wanted = static_cast<int64_t>((fill_units + static_cast<uint64_t>(outputs) - 1) /
                                                static_cast<uint64_t>(outputs));
    chunks = std::max(chunks, std::min(wanted, count / kMinChunk));
  }
  return std::max<int64_t>(chunks, 1);
}

// A scratch allocation of `nbytes` for the work about to be recorded on
// `call`'s stream, released once that work completes.
Allocation* scratch_for(tsr_plugin_context* context, const tsr_kernel_call& call, uint64_t nbytes,
                        std::vector<std::function<void()>>& release) {
  Device& d = device_at(*context, call.device, call.op_name);
  Allocation* a = d.allocator->allocate(nbytes);
  release.push_back([&d, a] { d.allocator->release(a); });
  return a;
}

void release_after(tsr_plugin_context* context, const tsr_kernel_call& call,
                   std::vector<std::function<void()>>& release) {
  if (release.empty()) return;
  Device& d = device_at(*context, call.device, call.op_name);
  tsr_plugin_stream& s = stream_of(d, call);
  std::lock_guard<std::mutex> lock(s.mu);
  for (auto& r : release) s.on_complete(std::move(r));
  release.clear();
}

// Reductions as Note [Reduction strategy], scans one invocation per line
// (long lines in chunks, Note [lavapipe loop budget]).
void run(tsr_plugin_context* context, const tsr_kernel_call& call, Params p) {
  if (p.outputs == 0) return;
  Kernels& kernels = kernels_of(context, call);
  // Note [Specializing by use] (kernels.hpp): kind and op, self's dtype when
  // it is float32, whether one dim is reduced, and the phase (reduce.comp's
  // SPEC_SELF); the work is the elements read. kReduce always runs
  // workgroups of 256.
  const int32_t self_bits =
      (p.t[1].dtype == TSR_FLOAT32 ? TSR_FLOAT32 : 255) | (p.rndim == 1 ? 256 : 0);
  auto spec = [&](int32_t phase_code, uint64_t work) {
    return kernels.by_use(kReduce, Kernels::kWorkgroup,
                          Kernels::Spec{p.kind, p.op, self_bits | (phase_code << 9)},
                          Kernels::Spec{-1, -1, -1}, work);
  };
  const uint64_t outputs = static_cast<uint64_t>(p.outputs);
  const uint64_t elements = outputs * static_cast<uint64_t>(p.count);
  std::vector<std::function<void()>> release;
  try {
    if (p.kind == static_cast<int32_t>(Kind::kScan)) {
      if (p.count <= kScanSpan) {
        kernels.dispatch(call.stream, kReduce, &p, sizeof p, outputs, nullptr, 0,
                         spec(kWholeCode, elements));
      } else {
        p.scratch = scratch_for(context, call, outputs * kPartialBytes, release)->address();
        p.phase = static_cast<int32_t>(Phase::kScan);
        p.span = kScanSpan;
        for (p.first = 0; p.first < p.count; p.first += kScanSpan)
          kernels.dispatch(call.stream, kReduce, &p, sizeof p, outputs, nullptr, 0,
                           spec(kScanCode, outputs * static_cast<uint64_t>(kScanSpan)));
      }
    } else {
      const int64_t chunks = reduction_chunks(
          p.outputs, p.count, fill_units(device_at(*context, call.device, call.op_name)));
      if (chunks == 1) {
        kernels.dispatch(call.stream, kReduce, &p, sizeof p, outputs, nullptr, 0,
                         spec(kWholeCode, elements));
      } else {
        p.chunks = chunks;
        const uint64_t units = outputs * static_cast<uint64_t>(chunks);
        p.scratch = scratch_for(context, call, units * kPartialBytes, release)->address();
        p.phase = static_cast<int32_t>(Phase::kPartial);
        p.order = p.rndim > 0 && p.rstrides[p.rndim - 1] == 1 ? 0 : 1;
        kernels.dispatch(call.stream, kReduce, &p, sizeof p, units, nullptr, 0,
                         spec(kPartialCode, elements));
        p.phase = static_cast<int32_t>(Phase::kMerge);
        p.wide = chunks > kLaneIterations ? 1 : 0;
        kernels.dispatch(call.stream, kReduce, &p, sizeof p,
                         outputs * (p.wide != 0 ? Kernels::kWorkgroup : 1), nullptr, 0,
                         spec(p.wide != 0 ? kWideMergeCode : kMergeCode, units));
      }
    }
  } catch (...) {
    release_after(context, call, release);
    throw;
  }
  release_after(context, call, release);
}

// `dim` of _arg_reduce / _scan resolved against self (0-d: 0 or -1 allowed).
int resolve_dim(const tsr_kernel_call& call, const tsr_tensor_desc& self, int64_t dim) {
  const int64_t n = self.ndim == 0 ? 1 : self.ndim;
  if (dim < -n || dim >= n)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: 'dim' %lld is out of range for a %d-d 'self'",
                      call.op_name, static_cast<long long>(dim), static_cast<int>(self.ndim));
  return static_cast<int>(dim < 0 ? dim + n : dim);
}

void reduce_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const int64_t code = int_arg(*call, 1, "op");
  (void)bool_arg(*call, 3, "keepdim");  // the core reshapes: out is keepdim-shaped
  if (call->nouts < 1)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: no 'out'", call->op_name);
  const tsr_tensor_desc& out = out_arg(*call, 0);
  if (code < 0 || code >= TSR_REDUCE_CODE_COUNT)
    sdk::throw_status(TSR_UNIMPLEMENTED, "vulkan plugin %s: 'op' %lld is not a _reduce code",
                      call->op_name, static_cast<long long>(code));
  const bool logical = code == TSR_REDUCE_ANY || code == TSR_REDUCE_ALL;
  sdk::check_dtype(*call, out, "out", logical ? TSR_BOOL : self.dtype);
  if (code == TSR_REDUCE_MEAN && !is_floating(self.dtype))
    sdk::throw_status(TSR_UNIMPLEMENTED,
                      "vulkan plugin %s: _reduce MEAN is not defined for 'self' dtype %d",
                      call->op_name, static_cast<int>(self.dtype));
  const sdk::reduced_dims reduced = sdk::reduced_dims_arg(*call, 2, self);
  sdk::check_keepdim(*call, self, out, reduced);
  const Params p = params_over(self, out, reduced.flags, Kind::kReduce, code);
  if (p.outputs > 0 && p.count == 0 && (code == TSR_REDUCE_AMAX || code == TSR_REDUCE_AMIN))
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: _reduce %s over an empty reduction has no identity",
                      call->op_name, reduce_code_name(code));
  run(context, *call, p);
}

void arg_reduce_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const int64_t code = int_arg(*call, 1, "op");
  const int64_t dim_arg = int_arg(*call, 2, "dim");
  (void)bool_arg(*call, 3, "keepdim");
  if (call->nouts < 1)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: no 'out'", call->op_name);
  const tsr_tensor_desc& out = out_arg(*call, 0);
  if (code < 0 || code >= TSR_ARG_REDUCE_CODE_COUNT)
    sdk::throw_status(TSR_UNIMPLEMENTED, "vulkan plugin %s: 'op' %lld is not an _arg_reduce code",
                      call->op_name, static_cast<long long>(code));
  sdk::check_dtype(*call, out, "out", TSR_INT64);
  const int dim = resolve_dim(*call, self, dim_arg);
  sdk::reduced_dims reduced;
  if (self.ndim > 0) reduced.flags[dim] = true;
  sdk::check_keepdim(*call, self, out, reduced);
  const Params p = params_over(self, out, reduced.flags, Kind::kArg, code);
  if (p.outputs > 0 && p.count == 0)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: 'self' is empty along 'dim' %d (no extreme value)",
                      call->op_name, dim);
  run(context, *call, p);
}

void scan_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const int64_t code = int_arg(*call, 1, "op");
  const int64_t dim_arg = int_arg(*call, 2, "dim");
  if (call->nouts < 1)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: no 'out'", call->op_name);
  const tsr_tensor_desc& out = out_arg(*call, 0);
  if (code < 0 || code >= TSR_SCAN_CODE_COUNT)
    sdk::throw_status(TSR_UNIMPLEMENTED, "vulkan plugin %s: 'op' %lld is not a _scan code",
                      call->op_name, static_cast<long long>(code));
  sdk::check_dtype(*call, out, "out", self.dtype);
  if (code == TSR_SCAN_LOGCUMSUMEXP && !is_floating(self.dtype))
    sdk::throw_status(TSR_UNIMPLEMENTED,
                      "vulkan plugin %s: _scan %s is not defined for 'self' dtype %d",
                      call->op_name, scan_code_name(code), static_cast<int>(self.dtype));
  const int dim = resolve_dim(*call, self, dim_arg);
  sdk::check_keepdim(*call, self, out, sdk::reduced_dims{});  // same shape
  sdk::reduced_dims reduced;
  if (self.ndim > 0) reduced.flags[dim] = true;
  Params p = params_over(self, out, reduced.flags, Kind::kScan, code);
  if (self.ndim > 0) p.ostride = out.strides[dim];
  run(context, *call, p);
}

}  // namespace

void add_reduce_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kReduce, {kRealDtypes}, sdk::trampoline<reduce_kernel>,
                           sdk::kReduceCodes));
  out.push_back(make_entry(sdk::schema::kArgReduce, {kRealDtypes},
                           sdk::trampoline<arg_reduce_kernel>, sdk::kArgReduceCodes));
  out.push_back(
      make_entry(sdk::schema::kScan, {kRealDtypes}, sdk::trampoline<scan_kernel>, sdk::kScanCodes));
}

}  // namespace tessera::vulkan
