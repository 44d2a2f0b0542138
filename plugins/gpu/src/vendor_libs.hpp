// vendor_libs.hpp - cuBLAS and cuDNN for the CUDA flavour, opened at run time.
//
// Nothing links cuBLAS or cuDNN: the first use dlopen()s "libcublas.so.13"
// (then "libcublas.so") and "libcudnn.so.9" (then "libcudnn.so") and looks up
// the few functions the kernels call, typed from the vendor headers so a
// header/library mismatch is a compile error rather than a crash. A missing
// library (or symbol) makes the API null and the kernels take their own
// paths (the tiled GEMM, the convolution functor). The libraries stay open
// for the life of the process.
//
// Handles are per context and per device (a FamilyState in the context's
// `states`, destroyed with the context at shutdown), created on first use.
// A handle is used by one thread at a time: with_cublas/with_cudnn hold the
// handle's lock while `fn` sets up and enqueues its work on the call's stream
// (enqueueing is asynchronous, so the lock is held only for the host side).
//
// Only the CUDA flavour has this file's contents, and only the parts whose
// vendor header the toolkit has (TSR_HAVE_CUBLAS, TSR_HAVE_CUDNN: cuDNN and
// the cuBLAS headers may be packaged apart from nvcc); without one, the
// kernels take their own paths. The other flavours see two zero macros
// (Note [GPU plugin flavours], runtime.hpp).
#pragma once

#if defined(TSR_GPU_CUDA) && __has_include(<cublas_v2.h>)
#define TSR_HAVE_CUBLAS 1
#else
#define TSR_HAVE_CUBLAS 0
#endif
#if defined(TSR_GPU_CUDA) && __has_include(<cudnn.h>)
#define TSR_HAVE_CUDNN 1
#else
#define TSR_HAVE_CUDNN 0
#endif

#if TSR_HAVE_CUBLAS || TSR_HAVE_CUDNN

#include <mutex>

#include "context.hpp"

#if TSR_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#if TSR_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace tessera::gpu::vendor_libs {

#if TSR_HAVE_CUBLAS

// cublasGemmStridedBatchedEx has a C++ overload (a cudaDataType compute
// type) in cublas_api.h, so decltype(&::cublasGemmStridedBatchedEx) is
// ambiguous: the C entry's type is spelled out, and vendor_libs.cpp checks it
// against the header by selecting that overload in an unevaluated context.
using GemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
    void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasSetWorkspace_v2) set_workspace = nullptr;
  GemmStridedBatchedExFn gemm_strided_batched_ex = nullptr;
};

// The process's cuBLAS functions, or null when the library (or one of the
// functions) is absent. Opened once; thread-safe.
const CublasApi* cublas();
// The context's handle for `device`, locked by `lock` and set to `stream`;
// null when the library is absent or the handle could not be made (then it
// is not retried). `device` is made current for the calling thread.
cublasHandle_t cublas_handle(tsr_plugin_context& context, int device, void* stream,
                             std::unique_lock<std::mutex>& lock);

// Runs fn(api, handle) with the handle locked; returns fn's result, or false
// without calling fn when there is no handle.
template <class F>
bool with_cublas(tsr_plugin_context& context, int device, void* stream, F&& fn) {
  std::unique_lock<std::mutex> lock;
  cublasHandle_t h = cublas_handle(context, device, stream, lock);
  if (h == nullptr) return false;
  return fn(*cublas(), h);
}
#endif  // TSR_HAVE_CUBLAS

#if TSR_HAVE_CUDNN
struct CudnnApi {
  decltype(&::cudnnCreate) create = nullptr;
  decltype(&::cudnnDestroy) destroy = nullptr;
  decltype(&::cudnnSetStream) set_stream = nullptr;
  decltype(&::cudnnCreateTensorDescriptor) create_tensor_desc = nullptr;
  decltype(&::cudnnSetTensorNdDescriptor) set_tensor_nd = nullptr;
  decltype(&::cudnnDestroyTensorDescriptor) destroy_tensor_desc = nullptr;
  decltype(&::cudnnCreateFilterDescriptor) create_filter_desc = nullptr;
  decltype(&::cudnnSetFilterNdDescriptor) set_filter_nd = nullptr;
  decltype(&::cudnnDestroyFilterDescriptor) destroy_filter_desc = nullptr;
  decltype(&::cudnnCreateConvolutionDescriptor) create_conv_desc = nullptr;
  decltype(&::cudnnSetConvolutionNdDescriptor) set_conv_nd = nullptr;
  decltype(&::cudnnSetConvolutionGroupCount) set_group_count = nullptr;
  decltype(&::cudnnSetConvolutionMathType) set_conv_math_type = nullptr;
  decltype(&::cudnnDestroyConvolutionDescriptor) destroy_conv_desc = nullptr;
  decltype(&::cudnnGetConvolutionForwardAlgorithm_v7) get_forward_algorithm = nullptr;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) get_forward_workspace = nullptr;
  decltype(&::cudnnConvolutionForward) forward = nullptr;
};

// The process's cuDNN functions, or null when the library (or one of the
// functions) is absent. Opened once; thread-safe.
const CudnnApi* cudnn();
// The context's handle for `device`, locked by `lock` and set to `stream`;
// null when the library is absent or the handle could not be made (then it
// is not retried). `device` is made current for the calling thread.
cudnnHandle_t cudnn_handle(tsr_plugin_context& context, int device, void* stream,
                           std::unique_lock<std::mutex>& lock);
// Runs fn(api, handle) with the handle locked; returns fn's result, or false
// without calling fn when there is no handle.
template <class F>
bool with_cudnn(tsr_plugin_context& context, int device, void* stream, F&& fn) {
  std::unique_lock<std::mutex> lock;
  cudnnHandle_t h = cudnn_handle(context, device, stream, lock);
  if (h == nullptr) return false;
  return fn(*cudnn(), h);
}
#endif  // TSR_HAVE_CUDNN

}  // namespace tessera::gpu::vendor_libs

#endif  // TSR_HAVE_CUBLAS || TSR_HAVE_CUDNN
