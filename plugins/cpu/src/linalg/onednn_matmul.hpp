// onednn_matmul.hpp - float32 (batched) matmul through oneDNN's matmul
// primitive, with a small cache of primitives keyed by shape and strides.
//
// Operands are strided views; oneDNN reads transposed inputs (column-major
// matrices) directly, so `a.t()` needs no copy. A primitive is created once per
// (shape, strides, thread count) and reused: repeated calls cost one lookup under
// a mutex plus oneDNN's execution. The cache holds at most kMaxEntries entries
// (cleared when full). Shapes oneDNN refuses are remembered too, and run()
// returns false for them so the caller can fall back.
//
// Thread safety: run() may be called concurrently; primitives are shared
// read-only. Exceptions from oneDNN other than "unsupported" propagate.
#ifndef TESSERA_PLUGINS_CPU_ONEDNN_MATMUL_HPP_
#define TESSERA_PLUGINS_CPU_ONEDNN_MATMUL_HPP_

#include <cstdint>
#include <memory>

namespace tessera::cpu {

// A (batch, rows, cols) float32 operand with element strides. Borrowed data.
struct f32_matrix {
  float* data = nullptr;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
};

class onednn_matmul {
 public:
  static constexpr size_t kMaxEntries = 256;

  // Creates the CPU engine; throws (dnnl::error) if oneDNN cannot start.
  onednn_matmul();
  ~onednn_matmul();
  onednn_matmul(const onednn_matmul&) = delete;
  onednn_matmul& operator=(const onednn_matmul&) = delete;

  // c = a · b for every batch, with `threads` OpenMP threads (the caller has set
  // the calling thread's OpenMP default to it). Requirements, checked by the
  // caller: sizes > 0, a is (B, n, k), b is (B, k, m), c is (B, n, m); every
  // matrix is plain (row- or column-major, strides > 0) and c is row-major.
  // Returns false when oneDNN has no implementation for these strides.
  bool run(const f32_matrix& a, const f32_matrix& b, const f32_matrix& c, int threads);

  // Number of cached entries (tests and diagnostics).
  size_t cache_size() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_ONEDNN_MATMUL_HPP_
