// vendor_libs.cpp - opening cuBLAS and cuDNN at run time, and the per-context
// handles (vendor_libs.hpp). CUDA flavour only (and only the libraries whose
// headers the toolkit has); an empty unit otherwise.
#include "vendor_libs.hpp"

#if TSR_HAVE_CUBLAS || TSR_HAVE_CUDNN

#include <dlfcn.h>

#include <cuda_runtime.h>

#include <memory>
#include <vector>

namespace tessera::gpu::vendor_libs {
namespace {

#if TSR_HAVE_CUBLAS
// The C entry GemmStridedBatchedExFn names must exist with exactly that type
// (selecting the overload in an unevaluated operand references no symbol).
static_assert(sizeof(static_cast<GemmStridedBatchedExFn>(&::cublasGemmStridedBatchedEx)) > 0);

void* open_first(const char* const* names) {
  for (const char* const* n = names; *n != nullptr; ++n)
    if (void* lib = ::dlopen(*n, RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

#endif

template <class Fn>
bool load(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(lib, name));
  return out != nullptr;
}

// Opened once per process, never closed: handles of any context may use the
// functions until the process exits.
#if TSR_HAVE_CUBLAS
const CublasApi* load_cublas() {
  static const char* const names[] = {"libcublas.so.13", "libcublas.so", nullptr};
  void* lib = open_first(names);
  if (lib == nullptr) return nullptr;
  static CublasApi api;
  const bool ok = load(lib, "cublasCreate_v2", api.create) &&
                  load(lib, "cublasDestroy_v2", api.destroy) &&
                  load(lib, "cublasSetStream_v2", api.set_stream) &&
                  load(lib, "cublasSetMathMode", api.set_math_mode) &&
                  load(lib, "cublasSetWorkspace_v2", api.set_workspace) &&
                  load(lib, "cublasGemmStridedBatchedEx", api.gemm_strided_batched_ex);
  return ok ? &api : nullptr;
}
#endif

#if TSR_HAVE_CUDNN
const CudnnApi* load_cudnn() {
  static const char* const names[] = {"libcudnn.so.9", "libcudnn.so", nullptr};
  void* lib = open_first(names);
  if (lib == nullptr) return nullptr;
  static CudnnApi api;
  const bool ok = load(lib, "cudnnCreate", api.create) && load(lib, "cudnnDestroy", api.destroy) &&
                  load(lib, "cudnnSetStream", api.set_stream) &&
                  load(lib, "cudnnCreateTensorDescriptor", api.create_tensor_desc) &&
                  load(lib, "cudnnSetTensorNdDescriptor", api.set_tensor_nd) &&
                  load(lib, "cudnnDestroyTensorDescriptor", api.destroy_tensor_desc) &&
                  load(lib, "cudnnCreateFilterDescriptor", api.create_filter_desc) &&
                  load(lib, "cudnnSetFilterNdDescriptor", api.set_filter_nd) &&
                  load(lib, "cudnnDestroyFilterDescriptor", api.destroy_filter_desc) &&
                  load(lib, "cudnnCreateConvolutionDescriptor", api.create_conv_desc) &&
                  load(lib, "cudnnSetConvolutionNdDescriptor", api.set_conv_nd) &&
                  load(lib, "cudnnSetConvolutionGroupCount", api.set_group_count) &&
                  load(lib, "cudnnSetConvolutionMathType", api.set_conv_math_type) &&
                  load(lib, "cudnnDestroyConvolutionDescriptor", api.destroy_conv_desc) &&
                  load(lib, "cudnnGetConvolutionForwardAlgorithm_v7", api.get_forward_algorithm) &&
                  load(lib, "cudnnGetConvolutionForwardWorkspaceSize", api.get_forward_workspace) &&
                  load(lib, "cudnnConvolutionForward", api.forward);
  return ok ? &api : nullptr;
}
#endif

// One device's handles. `tried_*`: creation was attempted (a failure is not
// retried on every call).
struct DeviceHandles {
#if TSR_HAVE_CUBLAS
  std::mutex cublas_mu;
  cublasHandle_t cublas = nullptr;
  bool tried_cublas = false;
#endif
#if TSR_HAVE_CUDNN
  std::mutex cudnn_mu;
  cudnnHandle_t cudnn = nullptr;
  bool tried_cudnn = false;
#endif
};

// The context's handles, one slot per device; destroyed with the context
// (tsr_plugin_context::states, cleared at shutdown after the streams drain).
struct VendorState final : FamilyState {
  int count = 0;
  std::unique_ptr<DeviceHandles[]> devices;
  explicit VendorState(int n) : count(n), devices(new DeviceHandles[static_cast<size_t>(n)]) {}
  ~VendorState() override {
    for (int d = 0; d < count; ++d) {
      DeviceHandles& h = devices[static_cast<size_t>(d)];
#if TSR_HAVE_CUBLAS
      if (h.cublas != nullptr && cudaSetDevice(d) == cudaSuccess)  // else leak, don't crash
        (void)cublas()->destroy(h.cublas);
#endif
#if TSR_HAVE_CUDNN
      if (h.cudnn != nullptr && cudaSetDevice(d) == cudaSuccess) (void)cudnn()->destroy(h.cudnn);
#endif
    }
  }
};

DeviceHandles* handles_of(tsr_plugin_context& context, int device) {
  std::lock_guard<std::mutex> guard(context.state_mu);
  VendorState* state = nullptr;
  for (auto& s : context.states)
    if ((state = dynamic_cast<VendorState*>(s.get())) != nullptr) break;
  if (state == nullptr) {
    auto fresh = std::make_unique<VendorState>(static_cast<int>(context.devices.size()));
    state = fresh.get();
    context.states.push_back(std::move(fresh));
  }
  if (device < 0 || device >= state->count) return nullptr;
  return &state->devices[static_cast<size_t>(device)];
}

}  // namespace

#if TSR_HAVE_CUBLAS
const CublasApi* cublas() {
  static const CublasApi* api = load_cublas();
  return api;
}

cublasHandle_t cublas_handle(tsr_plugin_context& context, int device, void* stream,
                             std::unique_lock<std::mutex>& lock) {
  const CublasApi* api = cublas();
  if (api == nullptr) return nullptr;
  DeviceHandles* h = handles_of(context, device);
  if (h == nullptr || cudaSetDevice(device) != cudaSuccess) return nullptr;
  lock = std::unique_lock<std::mutex>(h->cublas_mu);
  if (!h->tried_cublas) {
    h->tried_cublas = true;
    if (api->create(&h->cublas) != CUBLAS_STATUS_SUCCESS) h->cublas = nullptr;
  }
  if (h->cublas == nullptr ||
      api->set_stream(h->cublas, static_cast<cudaStream_t>(stream)) != CUBLAS_STATUS_SUCCESS) {
    lock = std::unique_lock<std::mutex>();
    return nullptr;
  }
  return h->cublas;
}
#endif  // TSR_HAVE_CUBLAS

#if TSR_HAVE_CUDNN
const CudnnApi* cudnn() {
  static const CudnnApi* api = load_cudnn();
  return api;
}

cudnnHandle_t cudnn_handle(tsr_plugin_context& context, int device, void* stream,
                           std::unique_lock<std::mutex>& lock) {
  const CudnnApi* api = cudnn();
  if (api == nullptr) return nullptr;
  DeviceHandles* h = handles_of(context, device);
  if (h == nullptr || cudaSetDevice(device) != cudaSuccess) return nullptr;
  lock = std::unique_lock<std::mutex>(h->cudnn_mu);
  if (!h->tried_cudnn) {
    h->tried_cudnn = true;
    if (api->create(&h->cudnn) != CUDNN_STATUS_SUCCESS) h->cudnn = nullptr;
  }
  if (h->cudnn == nullptr ||
      api->set_stream(h->cudnn, static_cast<cudaStream_t>(stream)) != CUDNN_STATUS_SUCCESS) {
    lock = std::unique_lock<std::mutex>();
    return nullptr;
  }
  return h->cudnn;
}
#endif  // TSR_HAVE_CUDNN

}  // namespace tessera::gpu::vendor_libs

#endif  // TSR_HAVE_CUBLAS || TSR_HAVE_CUDNN
