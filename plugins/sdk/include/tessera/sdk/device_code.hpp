// tessera/sdk/device_code.hpp - TSR_SDK_HD, the mark on SDK functions that
// device code may call too.
//
// Compiled by nvcc or hipcc (a GPU plugin's kernels, plugins/gpu) a function
// marked TSR_SDK_HD is __host__ __device__; under a host compiler the mark is
// empty. The marked functions use only what both sides have: no exceptions,
// no allocation, the C math functions (::log, ::erf ...) and constexpr
// constants.
#ifndef TESSERA_SDK_DEVICE_CODE_HPP_
#define TESSERA_SDK_DEVICE_CODE_HPP_

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_SDK_HD __host__ __device__
#else
#define TSR_SDK_HD
#endif

#endif  // TESSERA_SDK_DEVICE_CODE_HPP_
