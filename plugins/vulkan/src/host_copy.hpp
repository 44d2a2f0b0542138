// host_copy.hpp - copies between host memory and mapped device memory, split
// across threads when large.
//
// Note [Host copies]
// ~~~~~~~~~~~~~~~~~~
// Where device memory is host-visible (lavapipe, integrated GPUs) a host <->
// device copy is a CPU copy on the calling thread, after the stream has
// synchronised. One thread's memcpy of 64 MiB moves 6-8 GB/s on our VM, but
// the memory system takes far more from two threads at once (bench_vulkan's
// memcpy rows: 19-24 GB/s for two halves on two threads). So a copy of at
// least kParallelBytes is cut into one contiguous part per copy thread,
// 64-byte aligned, and the parts run at once: the caller takes the first,
// workers of a CopyPool the others. Large parts are copied with
// non-temporal stores (x86-64; memcpy elsewhere): they skip the read for
// ownership of each destination line, and a part that large would evict
// the caches anyway. 64 MiB upload/download on lavapipe: 7.7/7.2 GB/s with
// one memcpy, 17-25 split in two, 28-30 split with streaming stores
// (alternating runs). The workers are created by the first large copy and
// sleep between copies; waking one costs a cross-core hand-off (~40 us
// here), small beside 4 MiB (~0.6 ms on one thread). A copy that finds the
// pool busy (another host thread's copy) runs on its own thread.
// TESSERA_VULKAN_COPY_THREADS=N sets the threads (1: no workers); the
// default is the hardware threads, at most kMaxThreads. As with any thread
// pool, a child forked after the first large copy has no workers: a Vulkan
// device does not survive fork() either.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::vulkan {

class CopyPool {
 public:
  static constexpr size_t kParallelBytes = size_t{4} << 20;
  static constexpr int kMaxThreads = 4;

  // `threads` copy threads in all (the caller counts as one), at least 1.
  explicit CopyPool(int threads);
  ~CopyPool();  // joins the workers
  CopyPool(const CopyPool&) = delete;
  CopyPool& operator=(const CopyPool&) = delete;

  // The threads from TESSERA_VULKAN_COPY_THREADS, or the default.
  static int default_threads();

  // memcpy(dst, src, n); split across the threads, with streaming stores,
  // when n >= kParallelBytes.
  // The ranges must not overlap. Returns once every byte is copied. Never
  // throws.
  void copy(void* dst, const void* src, size_t n) noexcept;

 private:
  struct Part {
    std::byte* dst = nullptr;
    const std::byte* src = nullptr;
    size_t n = 0;
  };
  void work(size_t index) noexcept;  // worker `index`'s loop

  std::mutex busy_;  // held by the copy using the workers
  std::mutex mu_;
  std::condition_variable start_, done_;
  std::vector<Part> parts_;            // guarded by mu_: parts_[k + 1] is worker k's
  unsigned long long generation_ = 0;  // guarded by mu_: bumped per copy
  size_t pending_ = 0;                 // guarded by mu_: parts not yet done
  bool stop_ = false;                  // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace tessera::vulkan
