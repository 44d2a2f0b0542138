// host_copy.cpp - see Note [Host copies] in host_copy.hpp.
#include "host_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessera::vulkan {
namespace {

// memcpy with non-temporal stores where the ISA has them (x86-64: SSE2, part
// of the base ISA): a large part would evict the caches anyway, and the
// stores then skip the read for ownership of every destination line.
void stream_copy(std::byte* dst, const std::byte* src, size_t n) noexcept {
#if defined(__SSE2__)
  const size_t head = std::min(n, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, n - i);
  _mm_sfence();  // the streamed stores are visible before the copy returns
#else
  std::memcpy(dst, src, n);
#endif
}

}  // namespace

CopyPool::CopyPool(int threads) {
  const auto n = static_cast<size_t>(std::max(threads, 1));
  parts_.resize(n);
  try {
    for (size_t k = 0; k + 1 < n; ++k) workers_.emplace_back([this, k] { work(k + 1); });
  } catch (...) {
    // No more threads: the copies use the workers that started.
    parts_.resize(workers_.size() + 1);
  }
}

CopyPool::~CopyPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int CopyPool::default_threads() {
  if (const char* env = std::getenv("TESSERA_VULKAN_COPY_THREADS"); env != nullptr) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= 64) return static_cast<int>(v);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, kMaxThreads));
}

void CopyPool::work(size_t index) noexcept {
  unsigned long long seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const Part part = parts_[index];
    lock.unlock();
    if (part.n > 0) stream_copy(part.dst, part.src, part.n);
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

void CopyPool::copy(void* dst, const void* src, size_t n) noexcept {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  if (n < kParallelBytes) {
    std::memcpy(d, s, n);
    return;
  }
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (workers_.empty() || !busy.owns_lock()) {
    stream_copy(d, s, n);
    return;
  }
  // One contiguous part per thread, cut at 64-byte boundaries of dst.
  const size_t threads = parts_.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t begin = 0;
    for (size_t k = 0; k < threads; ++k) {
      size_t end = k + 1 == threads ? n : n / threads * (k + 1);
      if (k + 1 < threads) {
        const auto addr = reinterpret_cast<uintptr_t>(d + end);
        end -= addr % 64;
      }
      parts_[k] = Part{d + begin, s + begin, end - begin};
      begin = end;
    }
    pending_ = threads - 1;
    ++generation_;
  }
  start_.notify_all();
  stream_copy(parts_[0].dst, parts_[0].src, parts_[0].n);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace tessera::vulkan
