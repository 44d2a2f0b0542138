// tile_gemm.hpp - the register micro-tile shared by the device-only tiled
// kernels: matmul.cu's tiled GEMM and conv/convolution.cu's implicit-GEMM convolution.
//
// Shape: a block of kTileThreads threads computes a kTile x kTile output
// tile; per kTileK-wide k slice it stages both operands' slices in shared
// memory as [k][kTile + 1] arrays (the +1 pads away bank conflicts), and each
// thread accumulates the kMicro x kMicro elements (r + 16 i, c + 16 j) of the
// tile, i, j < kMicro, interleaved so a warp's shared-memory reads are
// broadcasts or consecutive. Device compilers only (nvcc, hipcc).
#pragma once

#include "hd.hpp"

#if TSR_DEVICE_COMPILER
namespace tessera::gpu {

constexpr int kTile = 64, kTileK = 16, kMicro = 4, kTileThreads = 256;
static_assert(kMicro * 16 == kTile && 16 * 16 == kTileThreads,
              "a thread's micro-tile interleaves at a stride of 16 rows and columns");

template <class Acc>
using TileSlice = Acc[kTileK][kTile + 1];  // a staged operand slice, [k][row or column]

// acc[i][j] += sum over the slice's k of a[k][r + 16 i] * b[k][c + 16 j].
// Call between the two __syncthreads() that bracket a staged slice.
template <class Acc>
__device__ __forceinline__ void accumulate_micro_tile(const TileSlice<Acc>& a,
                                                      const TileSlice<Acc>& b, int r, int c,
                                                      Acc (&acc)[kMicro][kMicro]) {
#pragma unroll
  for (int kk = 0; kk < kTileK; ++kk) {
    Acc av[kMicro], bv[kMicro];
#pragma unroll
    for (int i = 0; i < kMicro; ++i) av[i] = a[kk][r + 16 * i];
#pragma unroll
    for (int j = 0; j < kMicro; ++j) bv[j] = b[kk][c + 16 * j];
#pragma unroll
    for (int i = 0; i < kMicro; ++i)
#pragma unroll
      for (int j = 0; j < kMicro; ++j) acc[i][j] += av[i] * bv[j];
  }
}

}  // namespace tessera::gpu
#endif  // TSR_DEVICE_COMPILER
