// vendor.hpp - the CUDA / HIP runtime under one spelling, for the files of
// the GPU flavours that call the runtime (runtime_gpu.cpp, launch.hpp).
// GPU_SYM(Malloc) is cudaMalloc or hipMalloc; the types whose names differ
// by more than the prefix get aliases here. Never included by the host
// emulation (Note [GPU plugin flavours], runtime.hpp).
#pragma once

#if defined(TSR_GPU_HIP)
#include <hip/hip_runtime.h>
#define GPU_SYM(x) hip##x
namespace tessera::gpu::vendor {
using Error = hipError_t;
using Stream = hipStream_t;
using Event = hipEvent_t;
using DeviceProp = hipDeviceProp_t;
inline constexpr Error kNoDevice = hipErrorNoDevice;
inline constexpr Error kInsufficientDriver = hipErrorInsufficientDriver;
inline constexpr Error kOutOfMemory = hipErrorOutOfMemory;
}  // namespace tessera::gpu::vendor
#elif defined(TSR_GPU_CUDA)
#include <cuda_runtime.h>
#define GPU_SYM(x) cuda##x
namespace tessera::gpu::vendor {
using Error = cudaError_t;
using Stream = cudaStream_t;
using Event = cudaEvent_t;
using DeviceProp = cudaDeviceProp;
inline constexpr Error kNoDevice = cudaErrorNoDevice;
inline constexpr Error kInsufficientDriver = cudaErrorInsufficientDriver;
inline constexpr Error kOutOfMemory = cudaErrorMemoryAllocation;
}  // namespace tessera::gpu::vendor
#else
#error "vendor.hpp is for the CUDA and HIP flavours (define TSR_GPU_CUDA or TSR_GPU_HIP)"
#endif
