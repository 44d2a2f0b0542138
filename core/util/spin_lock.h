// SpinLock: a test-and-test-and-set lock for critical sections of a few dozen
// instructions on hot paths (the caching allocator's bins), where a pthread
// mutex's lock/unlock pair costs more than the work it protects. Never hold it
// across a plugin call or anything that may block.
#pragma once

#include <atomic>
#include <thread>

namespace tsr {

class SpinLock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace tsr
