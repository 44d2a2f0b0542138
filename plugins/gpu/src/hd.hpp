// hd.hpp - what every file of the shared kernel source includes first: the
// host/device markers, and the device runtime header for the GPU flavours.
//
// TSR_HD marks functions that run on the device and on the host (the host
// emulation runs every kernel body through them, and tests call them
// directly); TSR_DEVICE_COMPILER is 1 under nvcc or hipcc, 0 under the host
// compiler (Note [GPU plugin flavours], runtime.hpp).
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_DEVICE_COMPILER 1
#define TSR_HD __host__ __device__
#define TSR_DEVICE __device__
#define TSR_RESTRICT __restrict__
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif
#else
#define TSR_DEVICE_COMPILER 0
#define TSR_HD
#define TSR_DEVICE
#define TSR_RESTRICT __restrict__
#endif
