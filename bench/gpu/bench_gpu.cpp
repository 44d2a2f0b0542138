// bench_gpu - a GPU plugin's device beside the CPU plugin and beside the
// vendor libraries called directly, in one process.
//
// Cases, each run through the C++ frontend on the device under test
// (--device=, default: the first cuda device) and on cpu:0:
//   matmul f32    4096^3 float32, mm.out into a preallocated output; GFLOP/s
//                 (2 n^3 per call)
//   matmul bf16   the same in bfloat16, on each device whose properties list
//                 the dtype
//   add           64M float32 elements, add.out into a preallocated output;
//                 GB/s of traffic (3 x 4 bytes x n: two reads and a write)
//   copy          64M float32 elements, copy_ between two tensors of the same
//                 device; GB/s of traffic (2 x 4 bytes x n: a read and a write)
//   queued        10,000 one-element adds (add.out, preallocated) issued back
//                 to back, then one synchronize; microseconds per op - the
//                 per-op dispatch overhead
//   round trip    one one-element add followed by synchronize; microseconds -
//                 the latency a host that waits after every op sees
// References, in the same process and with the same traffic conventions:
//   cuBLAS        (cuda devices) cublasGemmEx on the same sizes and values,
//                 with the CUDA plugin's numerics (float32 accumulation, no
//                 TF32 unless --allow-tf32, no reduced-precision reductions),
//                 so the ratio measures what the runtime adds, not a choice of
//                 numerics
//   cudart copy   (cuda devices) cudaMemcpyAsync device to device, same size
//   cudart queued (cuda devices) 10,000 cudaMemsetAsync of 4 bytes then one
//                 cudaStreamSynchronize, and one memset + synchronize: the CUDA
//                 runtime's own enqueue cost and round trip, the floor
//   memcpy        (cpu) memcpy of the same size as the copy
// The summary prints the device beside its references with the issue's
// targets (matmul >= 85% of cuBLAS, add >= 80% of the copy bandwidth, <= 5 us
// per queued op), then beside the CPU plugin, as bench_vulkan does.
//
// Timing: Google Benchmark's wall-clock time (UseRealTime); every timed
// iteration issues its work and then synchronizes (tessera::synchronize, or
// cudaStreamSynchronize for the references), so queued work is counted. The
// bandwidth cases issue kBatch ops per iteration so that one synchronize's
// latency (~10 us on a GPU, a few % of a 64M add) does not skew them. Each case
// runs once untimed first (warm-up: allocator caches, cuBLAS heuristics, lazy
// module loading).
//
// cuBLAS and the CUDA runtime are opened at run time (dlopen of
// "libcublas.so.13" then "libcublas.so", "libcudart.so.13" then
// "libcudart.so"), their function pointers typed from <cublas_v2.h> and
// <cuda_runtime_api.h> (a header/library mismatch is a compile error, not a
// crash): the program links neither, and says so when they cannot be opened.
// Built without those headers (TESSERA_BENCH_WITH_CUDA_HEADERS unset) the
// references are left out. Device index N of "cuda:N" is taken to be CUDA
// runtime device N (the CUDA plugin enumerates devices in the runtime's order).
//
// Options (besides Google Benchmark's --benchmark_*):
//   --device=D       the device under test ("cuda:0", "gpuemu:0", "vulkan:0");
//                    default: the first cuda device
//   --plugin=PATH    load this plugin first (repeatable), e.g. the gpuemu plugin,
//                    which is not on the default search path
//   --small          tiny sizes (matmul 64, 64K elements, 100 queued ops): a
//                    smoke test of every case, for CI on the host emulation
//   --matmul-n=N, --numel=N, --queued=N
//                    override one size (after --small)
//   --no-cpu         measure the device (and its references) only
//   --allow-tf32     float32 matmul may use TF32 tensor cores: the plugin
//                    option allow_tf32=1, and CUBLAS_COMPUTE_32F_FAST_TF32 for
//                    the reference
//   --threads=N      the CPU plugin's threads (option "threads")
//   --probe-libs     only say where the CUDA runtime and cuBLAS are opened
//                    from (or why they are not), then exit; needs no device
//   --strict         exit 2 when a case on the device under test could not run
//                    (a missing op or kernel) instead of reporting it only
// The device must exist: without it the program says so and exits 1. Apart
// from --strict, nothing here asserts a time or a target: the summary says
// whether each target is met.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

#if defined(TESSERA_BENCH_WITH_CUDA_HEADERS)
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

namespace {

using tessera::Device;
using tessera::Tensor;

// ---------------------------------------------------------------------------
// Sizes and options
// ---------------------------------------------------------------------------

struct Sizes {
  int64_t matmul_n = 4096;
  int64_t numel = int64_t{64} << 20;  // add and copy, float32
  int64_t queued = 10000;
};
Sizes g_sizes;
bool g_allow_tf32 = false;

// Ops per timed iteration of the bandwidth cases (add, copy; see the header).
constexpr int kBatch = 10;

// Deterministic values in [-1, 1).
std::vector<float> host_values(int64_t numel, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(numel));
  uint32_t x = seed * 2654435761u + 1u;
  for (auto& e : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    e = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

Tensor input(std::vector<int64_t> shape, uint32_t seed, Device device,
             tessera::Dtype dtype = tessera::kFloat32) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  Tensor host = tessera::tensor(host_values(numel, seed), tessera::IntList(shape));
  if (dtype != tessera::kFloat32) host = host.to(dtype);
  return host.to(device);
}

// Why a case could not run, by "case/device" (or "case/reference").
std::map<std::string, std::string>& skipped() {
  static std::map<std::string, std::string> reasons;
  return reasons;
}

void skip(benchmark::State& state, const std::string& key, const std::string& why) {
  skipped()[key] = why;
  state.SkipWithError(why.c_str());
}

void rate(benchmark::State& state, const char* unit, double per_iteration) {
  state.counters[unit] = benchmark::Counter(
      per_iteration * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void time_per_op(benchmark::State& state, int64_t ops_per_iteration) {
  state.counters["us/op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * ops_per_iteration) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ---------------------------------------------------------------------------
// Tessera cases
// ---------------------------------------------------------------------------

// Runs `setup()`'s body as the timed loop, synchronizing `device` after each
// iteration; a tessera::Error skips the case with its message.
template <class Setup>
void run_case(benchmark::State& state, const std::string& key, Device device, Setup&& setup) {
  try {
    std::function<void()> body = setup();
    body();  // warm up and fail early
    tessera::synchronize(device);
    for (auto _ : state) {
      body();
      tessera::synchronize(device);
    }
  } catch (const tessera::Error& error) {
    skip(state, key, std::string(error.code_name()) + ": " + error.what());
  }
}

void BM_Matmul(benchmark::State& state, const std::string& key, Device device,
               tessera::Dtype dtype) {
  const int64_t n = g_sizes.matmul_n;
  run_case(state, key, device, [&] {
    Tensor a = input({n, n}, 3, device, dtype);
    Tensor b = input({n, n}, 4, device, dtype);
    Tensor c = tessera::empty({n, n}, tessera::TensorOptions().dtype(dtype).device(device));
    return std::function<void()>([=]() mutable { tessera::mm_out(c, a, b); });
  });
  const double nd = static_cast<double>(n);
  rate(state, "GFLOP/s", 2.0 * nd * nd * nd);
}

void BM_Add(benchmark::State& state, const std::string& key, Device device) {
  const int64_t n = g_sizes.numel;
  run_case(state, key, device, [&] {
    Tensor a = input({n}, 1, device);
    Tensor b = input({n}, 2, device);
    Tensor out = tessera::empty({n}, device);
    return std::function<void()>([=]() mutable {
      for (int i = 0; i < kBatch; ++i) tessera::add_out(out, a, b);
    });
  });
  rate(state, "GB/s", 3.0 * sizeof(float) * static_cast<double>(n) * kBatch);
}

void BM_Copy(benchmark::State& state, const std::string& key, Device device) {
  const int64_t n = g_sizes.numel;
  run_case(state, key, device, [&] {
    Tensor src = input({n}, 5, device);
    Tensor dst = tessera::empty({n}, device);
    return std::function<void()>([=]() mutable {
      for (int i = 0; i < kBatch; ++i) dst.copy_(src);
    });
  });
  rate(state, "GB/s", 2.0 * sizeof(float) * static_cast<double>(n) * kBatch);
}

void BM_Queued(benchmark::State& state, const std::string& key, Device device) {
  const int64_t count = g_sizes.queued;
  run_case(state, key, device, [&] {
    Tensor a = input({1}, 1, device);
    Tensor b = input({1}, 2, device);
    Tensor out = tessera::empty({1}, device);
    return std::function<void()>([=]() mutable {
      for (int64_t i = 0; i < count; ++i) tessera::add_out(out, a, b);
    });
  });
  time_per_op(state, count);
}

void BM_RoundTrip(benchmark::State& state, const std::string& key, Device device) {
  run_case(state, key, device, [&] {
    Tensor a = input({1}, 1, device);
    Tensor b = input({1}, 2, device);
    Tensor out = tessera::empty({1}, device);
    return std::function<void()>([=]() mutable { tessera::add_out(out, a, b); });
  });
  time_per_op(state, 1);
}

// The CPU's copy bandwidth, counted as the copy case counts it (read + write).
void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(g_sizes.numel) * sizeof(float);
  std::vector<char> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  rate(state, "GB/s", 2.0 * static_cast<double>(bytes));
}

// ---------------------------------------------------------------------------
// Direct CUDA references (cuBLAS, the CUDA runtime), opened at run time
// ---------------------------------------------------------------------------

// Why the direct references are absent, when they are (printed in the summary).
std::string g_cuda_absent;

#if defined(TESSERA_BENCH_WITH_CUDA_HEADERS)

// The symbol a name stands for once the headers' macros are applied
// (cublasCreate -> cublasCreate_v2; the per-thread-stream variants).
#define TSR_BENCH_STR_(x) #x
#define TSR_BENCH_SYMBOL(x) TSR_BENCH_STR_(x)

// cublasGemmEx has a C++ overload (a cudaDataType compute type) in
// cublas_api.h, so decltype(&::cublasGemmEx) is ambiguous: the C entry's type
// is spelled out and checked against the header by selecting that overload
// in an unevaluated operand (as plugins/gpu/src/vendor_libs.cpp does).
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
static_assert(sizeof(static_cast<GemmExFn>(&::cublasGemmEx)) > 0);

struct CudartApi {
  decltype(&::cudaGetErrorName) error_name = nullptr;
  decltype(&::cudaRuntimeGetVersion) runtime_version = nullptr;
  decltype(&::cudaSetDevice) set_device = nullptr;
  decltype(&::cudaMalloc) alloc = nullptr;
  decltype(&::cudaFree) release = nullptr;
  decltype(&::cudaMemcpy) copy = nullptr;
  decltype(&::cudaMemcpyAsync) copy_async = nullptr;
  decltype(&::cudaMemsetAsync) set_async = nullptr;
  decltype(&::cudaStreamCreateWithFlags) stream_create = nullptr;
  decltype(&::cudaStreamSynchronize) stream_synchronize = nullptr;
};

struct CublasApi {
  decltype(&::cublasCreate) create = nullptr;
  decltype(&::cublasSetStream) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  GemmExFn gemm_ex = nullptr;
};

void* open_first(std::initializer_list<const char*> names, std::string* why) {
  for (const char* name : names) {
    if (void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* error = ::dlerror();
    if (!why->empty()) *why += "; ";
    *why += error != nullptr ? error : name;
  }
  return nullptr;
}

template <class Fn>
bool load(void* lib, const char* symbol, Fn& out, std::string* why) {
  out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  if (out == nullptr) *why = std::string("no symbol ") + symbol;
  return out != nullptr;
}
#define TSR_BENCH_LOAD(lib, api, field, name, why) \
  load(lib, TSR_BENCH_SYMBOL(name), (api).field, why)

// The process's CUDA runtime / cuBLAS, or null (with the reason in `why`).
// Opened once; never closed.
const CudartApi* cudart(std::string* why) {
  static std::string reason;
  static const CudartApi* api = []() -> const CudartApi* {
    void* lib = open_first({"libcudart.so.13", "libcudart.so"}, &reason);
    if (lib == nullptr) return nullptr;
    static CudartApi a;
    const bool ok = TSR_BENCH_LOAD(lib, a, error_name, cudaGetErrorName, &reason) &&
                    TSR_BENCH_LOAD(lib, a, runtime_version, cudaRuntimeGetVersion, &reason) &&
                    TSR_BENCH_LOAD(lib, a, set_device, cudaSetDevice, &reason) &&
                    TSR_BENCH_LOAD(lib, a, alloc, cudaMalloc, &reason) &&
                    TSR_BENCH_LOAD(lib, a, release, cudaFree, &reason) &&
                    TSR_BENCH_LOAD(lib, a, copy, cudaMemcpy, &reason) &&
                    TSR_BENCH_LOAD(lib, a, copy_async, cudaMemcpyAsync, &reason) &&
                    TSR_BENCH_LOAD(lib, a, set_async, cudaMemsetAsync, &reason) &&
                    TSR_BENCH_LOAD(lib, a, stream_create, cudaStreamCreateWithFlags, &reason) &&
                    TSR_BENCH_LOAD(lib, a, stream_synchronize, cudaStreamSynchronize, &reason);
    return ok ? &a : nullptr;
  }();
  if (api == nullptr) *why = "CUDA runtime not loaded: " + reason;
  return api;
}

const CublasApi* cublas(std::string* why) {
  static std::string reason;
  static const CublasApi* api = []() -> const CublasApi* {
    void* lib = open_first({"libcublas.so.13", "libcublas.so"}, &reason);
    if (lib == nullptr) return nullptr;
    static CublasApi a;
    const bool ok = TSR_BENCH_LOAD(lib, a, create, cublasCreate, &reason) &&
                    TSR_BENCH_LOAD(lib, a, set_stream, cublasSetStream, &reason) &&
                    TSR_BENCH_LOAD(lib, a, set_math_mode, cublasSetMathMode, &reason) &&
                    load(lib, "cublasGemmEx", a.gemm_ex, &reason);
    return ok ? &a : nullptr;
  }();
  if (api == nullptr) *why = "cuBLAS not loaded: " + reason;
  return api;
}

// A CUDA runtime error, as "call: cudaErrorName".
struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_cuda(const CudartApi& rt, cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw CudaFailure(std::string(call) + ": " + rt.error_name(e));
}
void check_cublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaFailure(std::string(call) + ": cublasStatus_t " +
                      std::to_string(static_cast<int>(s)));
}

// Device memory of the CUDA runtime, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer(const CudartApi& rt, size_t bytes) : rt_(&rt) {
    check_cuda(rt, rt.alloc(&ptr_, bytes), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) rt_->release(ptr_);
  }
  void* get() const { return ptr_; }

 private:
  const CudartApi* rt_;
  void* ptr_ = nullptr;
};

// The reference's stream on the device under test (made once, never destroyed:
// the process ends soon after).
cudaStream_t reference_stream(const CudartApi& rt, int device) {
  static std::map<int, cudaStream_t> streams;
  check_cuda(rt, rt.set_device(device), "cudaSetDevice");
  auto it = streams.find(device);
  if (it != streams.end()) return it->second;
  cudaStream_t s = nullptr;
  check_cuda(rt, rt.stream_create(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  streams.emplace(device, s);
  return s;
}

// float -> bfloat16 bits, rounding to nearest even (inputs are finite).
uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// An n x n matrix of host_values(n * n, seed) in `dtype` on the device.
std::unique_ptr<DeviceBuffer> upload_matrix(const CudartApi& rt, int64_t n, uint32_t seed,
                                            bool bf16) {
  const std::vector<float> v = host_values(n * n, seed);
  const size_t count = v.size();
  auto buffer = std::make_unique<DeviceBuffer>(rt, count * (bf16 ? 2 : 4));
  if (bf16) {
    std::vector<uint16_t> h(count);
    for (size_t i = 0; i < count; ++i) h[i] = to_bf16(v[i]);
    check_cuda(rt, rt.copy(buffer->get(), h.data(), count * 2, cudaMemcpyHostToDevice),
               "cudaMemcpy");
  } else {
    check_cuda(rt, rt.copy(buffer->get(), v.data(), count * 4, cudaMemcpyHostToDevice),
               "cudaMemcpy");
  }
  return buffer;
}

// Runs `setup()`'s body (which enqueues on the returned stream) as the timed
// loop, synchronizing the stream after each iteration; a missing library or a
// CUDA error skips the case with its message.
template <class Setup>
void run_reference(benchmark::State& state, const std::string& key, Setup&& setup) {
  std::string why;
  const CudartApi* rt = cudart(&why);
  if (rt == nullptr) return skip(state, key, why);
  try {
    cudaStream_t stream = nullptr;
    std::function<void()> body = setup(*rt, &stream);
    body();
    check_cuda(*rt, rt->stream_synchronize(stream), "cudaStreamSynchronize");
    for (auto _ : state) {
      body();
      check_cuda(*rt, rt->stream_synchronize(stream), "cudaStreamSynchronize");
    }
  } catch (const CudaFailure& failure) {
    skip(state, key, failure.what());
  }
}

void BM_CublasMatmul(benchmark::State& state, const std::string& key, int device, bool bf16) {
  const int64_t n = g_sizes.matmul_n;
  std::shared_ptr<DeviceBuffer> a, b, c;  // outlive the loop, freed after it
  run_reference(state, key, [&](const CudartApi& rt, cudaStream_t* stream) {
    std::string why;
    const CublasApi* blas = cublas(&why);
    if (blas == nullptr) throw CudaFailure(why);
    *stream = reference_stream(rt, device);
    static std::map<int, cublasHandle_t> handles;  // one per device, never destroyed
    cublasHandle_t& h = handles[device];
    if (h == nullptr) check_cublas(blas->create(&h), "cublasCreate");
    check_cublas(blas->set_stream(h, *stream), "cublasSetStream");
    // The CUDA plugin's numerics (linalg/matmul.cu): float32 accumulation throughout.
    check_cublas(blas->set_math_mode(h, static_cast<cublasMath_t>(
                                            CUBLAS_DEFAULT_MATH |
                                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
                 "cublasSetMathMode");
    a = upload_matrix(rt, n, 3, bf16);
    b = upload_matrix(rt, n, 4, bf16);
    c = std::make_shared<DeviceBuffer>(rt, static_cast<size_t>(n * n) * (bf16 ? 2 : 4));
    const cudaDataType type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute =
        !bf16 && g_allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const int ni = static_cast<int>(n);
    return std::function<void()>([=] {
      const float one = 1.0f, zero = 0.0f;
      check_cublas(
          blas->gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, a->get(), type, ni, b->get(),
                        type, ni, &zero, c->get(), type, ni, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    });
  });
  const double nd = static_cast<double>(n);
  rate(state, "GFLOP/s", 2.0 * nd * nd * nd);
}

void BM_CudartCopy(benchmark::State& state, const std::string& key, int device) {
  const size_t bytes = static_cast<size_t>(g_sizes.numel) * sizeof(float);
  std::shared_ptr<DeviceBuffer> src, dst;
  run_reference(state, key, [&](const CudartApi& rt, cudaStream_t* stream) {
    *stream = reference_stream(rt, device);
    src = std::make_shared<DeviceBuffer>(rt, bytes);
    dst = std::make_shared<DeviceBuffer>(rt, bytes);
    check_cuda(rt, rt.set_async(src->get(), 0x3c, bytes, *stream), "cudaMemsetAsync");
    const cudaStream_t s = *stream;
    const CudartApi* api = &rt;
    return std::function<void()>([=] {
      for (int i = 0; i < kBatch; ++i)
        check_cuda(*api,
                   api->copy_async(dst->get(), src->get(), bytes, cudaMemcpyDeviceToDevice, s),
                   "cudaMemcpyAsync");
    });
  });
  rate(state, "GB/s", 2.0 * static_cast<double>(bytes) * kBatch);
}

// `count` 4-byte cudaMemsetAsync per iteration: the runtime's enqueue cost
// (count = the queued case's) or, with count 1, its round trip.
void BM_CudartMemset(benchmark::State& state, const std::string& key, int device, int64_t count) {
  std::shared_ptr<DeviceBuffer> word;
  run_reference(state, key, [&](const CudartApi& rt, cudaStream_t* stream) {
    *stream = reference_stream(rt, device);
    word = std::make_shared<DeviceBuffer>(rt, sizeof(float));
    const cudaStream_t s = *stream;
    const CudartApi* api = &rt;
    return std::function<void()>([=] {
      for (int64_t i = 0; i < count; ++i)
        check_cuda(*api, api->set_async(word->get(), 0, sizeof(float), s), "cudaMemsetAsync");
    });
  });
  time_per_op(state, count);
}

// The file a loaded function comes from.
std::string library_of(const void* fn) {
  Dl_info info{};
  if (fn != nullptr && ::dladdr(fn, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "?";
}

// One line per library: where it was opened from (and the runtime's
// version), or why not. Needs no device.
std::string describe_libraries() {
  std::string text, why;
  if (const CudartApi* rt = cudart(&why)) {
    int v = 0;
    text += "  CUDA runtime " + library_of(reinterpret_cast<const void*>(rt->set_device));
    if (rt->runtime_version(&v) == cudaSuccess)
      text += " (version " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) + ")";
    text += "\n";
  } else {
    text += "  " + why + "\n";
  }
  why.clear();
  if (const CublasApi* blas = cublas(&why))
    text += "  cuBLAS " + library_of(reinterpret_cast<const void*>(blas->gemm_ex)) + "\n";
  else
    text += "  " + why + "\n";
  return text;
}

#endif  // TESSERA_BENCH_WITH_CUDA_HEADERS

// ---------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------

// Keeps each run's counters while the console reporter prints as usual.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      for (const auto& [name, counter] : run.counters)
        results_[run.run_name.function_name][name] = counter.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // The counter of the benchmark registered as `name` (exactly).
  std::optional<double> get(const std::string& name, const char* counter) const {
    auto it = results_.find(name);
    if (it == results_.end()) return std::nullopt;
    auto c = it->second.find(counter);
    if (c == it->second.end()) return std::nullopt;
    return c->second;
  }

 private:
  std::map<std::string, std::map<std::string, double>> results_;
};

std::string fmt_value(std::optional<double> v, const char* unit) {
  if (!v) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f %s", *v, unit);
  return buffer;
}

// One row of the device-versus-reference table. `higher_is_better`: the
// ratio is device/reference, else reference/device. `min_ratio` (> 0): the
// target on the ratio; `max_value` (> 0): a target on the device's value.
struct Row {
  const char* label;
  std::string name;  // registered benchmark name of the device's case
  const char* counter;
  std::string ref_label;
  std::string ref_name;
  bool higher_is_better = true;
  double min_ratio = 0;
  double max_value = 0;
};

void print_reference_row(const SummaryReporter& r, const Row& row) {
  const auto dev = r.get(row.name, row.counter);
  const auto ref = row.ref_name.empty() ? std::nullopt : r.get(row.ref_name, row.counter);
  const std::string reference = row.ref_label + " " + fmt_value(ref, row.counter);
  std::printf("  %-17s %-22s %-38s", row.label, fmt_value(dev, row.counter).c_str(),
              reference.c_str());
  std::optional<double> ratio;
  if (dev && ref && *dev > 0 && *ref > 0) ratio = row.higher_is_better ? *dev / *ref : *ref / *dev;
  if (ratio)
    std::printf(" %6.3f", *ratio);
  else
    std::printf(" %6s", "-");
  if (row.min_ratio > 0) {
    std::printf("   target ratio >= %.2f: %s", row.min_ratio,
                !ratio                    ? "not measured"
                : *ratio >= row.min_ratio ? "met"
                                          : "MISSED");
  } else if (row.max_value > 0) {
    std::printf("   target <= %.0f %s: %s", row.max_value, row.counter,
                !dev                    ? "not measured"
                : *dev <= row.max_value ? "met"
                                        : "MISSED");
  }
  std::printf("\n");
}

void print_cpu_row(const SummaryReporter& r, const char* label, const std::string& dev_name,
                   const std::string& cpu_name, const char* counter, bool lower_is_better) {
  const auto dev = r.get(dev_name, counter);
  const auto cpu = r.get(cpu_name, counter);
  std::printf("  %-17s %-22s %-22s", label, fmt_value(dev, counter).c_str(),
              fmt_value(cpu, counter).c_str());
  if (dev && cpu && *dev > 0 && *cpu > 0)
    std::printf(" %.3f", lower_is_better ? *cpu / *dev : *dev / *cpu);
  std::printf("\n");
}

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

// Removes every --name=VALUE (and a bare --name, as "") from argv; returns the values.
std::vector<std::string> take_flags(int* argc, char** argv, const char* name) {
  std::vector<std::string> found;
  const size_t len = std::strlen(name);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
      found.emplace_back(argv[i] + len + 1);
    else if (std::strcmp(argv[i], name) == 0)
      found.emplace_back();
    else
      argv[kept++] = argv[i];
  }
  *argc = kept;
  return found;
}

std::optional<std::string> take_flag(int* argc, char** argv, const char* name) {
  std::vector<std::string> all = take_flags(argc, argv, name);
  if (all.empty()) return std::nullopt;
  return all.back();
}

// 67108864 -> "64M", 65536 -> "64K", 1000 -> "1000".
std::string count_label(int64_t n) {
  if (n % (int64_t{1} << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n % (int64_t{1} << 10) == 0) return std::to_string(n >> 10) + "K";
  return std::to_string(n);
}

bool lists_dtype(const tsr_device_properties& props, tsr_dtype dtype) {
  return (props.dtypes & TSR_DTYPE_BIT(dtype)) != 0;
}

// The plugins that failed to load, and why (after "no such device").
void print_load_failures() {
  for (const tessera::LoadReportEntry& e : tessera::load_report())
    if (e.code != TSR_OK)
      std::fprintf(stderr, "  plugin %s: %s\n", e.path.c_str(), e.detail.c_str());
}

template <class Fn>
void register_case(const std::string& name, benchmark::TimeUnit unit, Fn&& fn) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Fn>(fn))->Unit(unit)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  const auto device_flag = take_flag(&argc, argv, "--device");
  const auto plugins = take_flags(&argc, argv, "--plugin");
  const auto threads = take_flag(&argc, argv, "--threads");
  const bool small = take_flag(&argc, argv, "--small").has_value();
  const bool no_cpu = take_flag(&argc, argv, "--no-cpu").has_value();
  const bool strict = take_flag(&argc, argv, "--strict").has_value();
  g_allow_tf32 = take_flag(&argc, argv, "--allow-tf32").has_value();
  if (take_flag(&argc, argv, "--probe-libs")) {
#if defined(TESSERA_BENCH_WITH_CUDA_HEADERS)
    std::printf("bench_gpu: direct references (dlopen):\n%s", describe_libraries().c_str());
#else
    std::printf("bench_gpu: built without the CUDA headers: no direct references\n");
#endif
    return 0;
  }
  if (small) g_sizes = Sizes{64, int64_t{1} << 16, 100};
  for (auto [flag, field] :
       {std::pair{"--matmul-n", &g_sizes.matmul_n}, std::pair{"--numel", &g_sizes.numel},
        std::pair{"--queued", &g_sizes.queued}}) {
    if (const auto v = take_flag(&argc, argv, flag)) {
      *field = std::atoll(v->c_str());
      if (*field < 1) {
        std::fprintf(stderr, "bench_gpu: %s=%s: expected a positive integer\n", flag, v->c_str());
        return 1;
      }
    }
  }

  try {
    for (const std::string& path : plugins) {
      tsr_plugin* plugin = nullptr;
      tessera::check(tsr_plugin_load(tessera::default_runtime(), path.c_str(), &plugin));
    }
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "bench_gpu: cannot load a --plugin: %s: %s\n", error.code_name(),
                 error.what());
    return 1;
  }

  std::optional<Device> device;
  if (device_flag) {
    if (!tessera::has_device(device_flag->c_str())) {
      std::fprintf(stderr, "bench_gpu: no device \"%s\" (see `tessera devices`)\n",
                   device_flag->c_str());
      print_load_failures();
      return 1;
    }
    device = Device(*device_flag);
  } else {
    for (const Device& d : tessera::devices()) {
      if (d.str().rfind("cuda:", 0) == 0) {
        device = d;
        break;
      }
    }
    if (!device) {
      std::fprintf(stderr,
                   "bench_gpu: no cuda device (is libtessera-cuda built and a driver present? "
                   "see `tessera devices`; --device= picks another device)\n");
      print_load_failures();
      return 1;
    }
  }
  const std::string dev = device->str();
  const bool is_cuda = dev.rfind("cuda:", 0) == 0;
  const bool with_cpu = !no_cpu && !device->is_cpu();
  if (threads) tessera::set_option(tessera::kCPU, "threads", *threads);
  if (g_allow_tf32) {
    try {
      tessera::set_option(*device, "allow_tf32", "1");
    } catch (const tessera::Error& error) {
      std::fprintf(stderr, "bench_gpu: --allow-tf32: %s\n", error.what());
      return 1;
    }
  }
  const tsr_device_properties props = tessera::properties(*device);
  const tsr_device_properties cpu_props = tessera::properties(tessera::kCPU);
  const bool dev_bf16 = lists_dtype(props, TSR_BFLOAT16);
  const bool cpu_bf16 = lists_dtype(cpu_props, TSR_BFLOAT16);

  // Tessera cases, the device under test first.
  std::vector<Device> sides{*device};
  if (with_cpu) sides.push_back(tessera::kCPU);
  for (const Device& d : sides) {
    const std::string s = d.str();
    const bool bf16 = d.is_cpu() ? cpu_bf16 : dev_bf16;
    const std::string mm = "BM_MatmulF32/" + s, mmh = "BM_MatmulBF16/" + s, add = "BM_Add/" + s,
                      copy = "BM_Copy/" + s, queued = "BM_Queued/" + s, trip = "BM_RoundTrip/" + s;
    register_case(mm, benchmark::kMillisecond,
                  [=](benchmark::State& st) { BM_Matmul(st, mm, d, tessera::kFloat32); });
    if (bf16)
      register_case(mmh, benchmark::kMillisecond,
                    [=](benchmark::State& st) { BM_Matmul(st, mmh, d, tessera::kBFloat16); });
    register_case(add, benchmark::kMillisecond, [=](benchmark::State& st) { BM_Add(st, add, d); });
    register_case(copy, benchmark::kMillisecond,
                  [=](benchmark::State& st) { BM_Copy(st, copy, d); });
    register_case(queued, benchmark::kMillisecond,
                  [=](benchmark::State& st) { BM_Queued(st, queued, d); });
    register_case(trip, benchmark::kMicrosecond,
                  [=](benchmark::State& st) { BM_RoundTrip(st, trip, d); });
  }
  if (with_cpu)
    register_case("BM_Memcpy/cpu:0", benchmark::kMillisecond,
                  [](benchmark::State& st) { BM_Memcpy(st); });

  // Direct references on a cuda device.
  if (!is_cuda) {
    g_cuda_absent = "the direct cuBLAS / CUDA runtime references run for cuda devices only";
  } else {
#if defined(TESSERA_BENCH_WITH_CUDA_HEADERS)
    const int index = device->index();
    register_case("BM_CublasMatmulF32/" + dev, benchmark::kMillisecond, [=](benchmark::State& st) {
      BM_CublasMatmul(st, "BM_CublasMatmulF32/" + dev, index, false);
    });
    if (dev_bf16)
      register_case("BM_CublasMatmulBF16/" + dev, benchmark::kMillisecond,
                    [=](benchmark::State& st) {
                      BM_CublasMatmul(st, "BM_CublasMatmulBF16/" + dev, index, true);
                    });
    register_case("BM_CudartCopy/" + dev, benchmark::kMillisecond,
                  [=](benchmark::State& st) { BM_CudartCopy(st, "BM_CudartCopy/" + dev, index); });
    register_case("BM_CudartQueued/" + dev, benchmark::kMillisecond, [=](benchmark::State& st) {
      BM_CudartMemset(st, "BM_CudartQueued/" + dev, index, g_sizes.queued);
    });
    register_case("BM_CudartRoundTrip/" + dev, benchmark::kMicrosecond, [=](benchmark::State& st) {
      BM_CudartMemset(st, "BM_CudartRoundTrip/" + dev, index, 1);
    });
#else
    g_cuda_absent =
        "built without <cublas_v2.h> / <cuda_runtime_api.h>: no direct cuBLAS / CUDA runtime "
        "references";
#endif
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // ---- summary ----
  const int64_t n = g_sizes.matmul_n;
  std::printf("\n%s: %s (%s plugin, %d compute units, %.1f GiB)%s\n", dev.c_str(), props.name,
              props.plugin, props.compute_units,
              static_cast<double>(props.total_memory) / (1 << 30),
              g_allow_tf32 ? "; float32 matmul may use TF32" : "");
#if defined(TESSERA_BENCH_WITH_CUDA_HEADERS)
  if (is_cuda) std::printf("direct references (dlopen):\n%s", describe_libraries().c_str());
#endif
  if (!g_cuda_absent.empty()) std::printf("direct references: %s\n", g_cuda_absent.c_str());

  char mm_label[32], mmh_label[32], add_label[32], copy_label[32], queued_label[32];
  std::snprintf(mm_label, sizeof mm_label, "matmul %lld f32", static_cast<long long>(n));
  std::snprintf(mmh_label, sizeof mmh_label, "matmul %lld bf16", static_cast<long long>(n));
  std::snprintf(add_label, sizeof add_label, "add %s", count_label(g_sizes.numel).c_str());
  std::snprintf(copy_label, sizeof copy_label, "copy_ %s", count_label(g_sizes.numel).c_str());
  std::snprintf(queued_label, sizeof queued_label, "queued x%lld",
                static_cast<long long>(g_sizes.queued));
  // The copy bandwidth add is judged against: the CUDA runtime's own copy
  // when it was measured, else the device's copy_ through Tessera.
  const bool have_cudart_copy = reporter.get("BM_CudartCopy/" + dev, "GB/s").has_value();
  const std::string copy_ref = have_cudart_copy ? "BM_CudartCopy/" + dev : "BM_Copy/" + dev;

  std::printf("\n  %-17s %-22s %-38s %6s\n", "case", dev.c_str(), "reference", "ratio");
  std::vector<Row> rows = {
      {mm_label, "BM_MatmulF32/" + dev, "GFLOP/s", "cuBLAS", "BM_CublasMatmulF32/" + dev, true,
       0.85, 0},
      {mmh_label, "BM_MatmulBF16/" + dev, "GFLOP/s", "cuBLAS", "BM_CublasMatmulBF16/" + dev, true,
       0.85, 0},
      {add_label, "BM_Add/" + dev, "GB/s", have_cudart_copy ? "cudaMemcpy D2D" : "copy_ (tessera)",
       copy_ref, true, 0.80, 0},
      {copy_label, "BM_Copy/" + dev, "GB/s", "cudaMemcpy D2D", "BM_CudartCopy/" + dev, true, 0, 0},
      {queued_label, "BM_Queued/" + dev, "us/op", "cudaMemsetAsync", "BM_CudartQueued/" + dev,
       false, 0, 5.0},
      {"round trip", "BM_RoundTrip/" + dev, "us/op", "memset + sync", "BM_CudartRoundTrip/" + dev,
       false, 0, 0},
  };
  if (!dev_bf16) rows.erase(rows.begin() + 1);  // no bfloat16 on the device
  for (const Row& row : rows) print_reference_row(reporter, row);

  if (with_cpu) {
    std::printf("\n%s beside cpu:0 (%s; cpu plugin threads: %s)\n", dev.c_str(), cpu_props.name,
                threads ? threads->c_str() : "default");
    std::printf("\n  %-17s %-22s %-22s %s\n", "case", dev.c_str(), "cpu:0", "device/cpu");
    print_cpu_row(reporter, mm_label, "BM_MatmulF32/" + dev, "BM_MatmulF32/cpu:0", "GFLOP/s",
                  false);
    if (dev_bf16 || cpu_bf16)
      print_cpu_row(reporter, mmh_label, "BM_MatmulBF16/" + dev, "BM_MatmulBF16/cpu:0", "GFLOP/s",
                    false);
    print_cpu_row(reporter, add_label, "BM_Add/" + dev, "BM_Add/cpu:0", "GB/s", false);
    print_cpu_row(reporter, copy_label, "BM_Copy/" + dev, "BM_Copy/cpu:0", "GB/s", false);
    print_cpu_row(reporter, queued_label, "BM_Queued/" + dev, "BM_Queued/cpu:0", "us/op", true);
    print_cpu_row(reporter, "round trip", "BM_RoundTrip/" + dev, "BM_RoundTrip/cpu:0", "us/op",
                  true);
    if (const auto mc = reporter.get("BM_Memcpy/cpu:0", "GB/s"))
      std::printf("  %-17s memcpy on the host: %.2f GB/s (traffic, read + write)\n", copy_label,
                  *mc);
  }
  bool device_case_skipped = false;
  for (const auto& [name, why] : skipped()) {
    std::printf("  skipped %s: %s\n", name.c_str(), why.c_str());
    const bool reference = name.rfind("BM_Cu", 0) == 0;
    if (!reference && name.size() > dev.size() &&
        name.compare(name.size() - dev.size(), dev.size(), dev) == 0)
      device_case_skipped = true;
  }
  if (strict && device_case_skipped) {
    std::printf("bench_gpu: --strict: a case on %s could not run\n", dev.c_str());
    return 2;
  }
  return 0;
}
