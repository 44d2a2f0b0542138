// ObjectPool<T>: recycles fixed-size objects without returning them to malloc.
//
// Two reasons: speed (a fresh tensor per op must cost nanoseconds: a thread-local
// free list serves most requests without a lock), and handle safety (Note
// [Generational handles]): a released tsr_tensor's memory stays a tensor object
// forever, so checking a stale handle's generation tag reads valid memory.
// Objects are constructed/destroyed by the caller (placement new / explicit dtor).
#pragma once

#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace tsr {

template <typename T>
class ObjectPool {
 public:
  // Raw storage for one T; never null (throws std::bad_alloc).
  static void* acquire() {
    Local& local = local_cache();
    if (!local.items.empty()) {
      void* p = local.items.back();
      local.items.pop_back();
      return p;
    }
    {
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      if (!g.items.empty()) {
        // Take a batch to amortise the lock.
        size_t n = g.items.size() < kBatch ? g.items.size() : kBatch;
        local.items.insert(local.items.end(), g.items.end() - n, g.items.end());
        g.items.resize(g.items.size() - n);
      }
    }
    if (!local.items.empty()) {
      void* p = local.items.back();
      local.items.pop_back();
      return p;
    }
    // Fresh memory is zeroed so a pooled object's header reads as "never used".
    void* p = ::operator new(sizeof(T), std::align_val_t(alignof(T) < 16 ? 16 : alignof(T)));
    std::memset(p, 0, sizeof(T));
    return p;
  }

  // Returns storage of a destroyed T to the pool.
  static void recycle(void* p) {
    Local& local = local_cache();
    local.items.push_back(p);
    if (local.items.size() > 2 * kBatch) {
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      g.items.insert(g.items.end(), local.items.end() - kBatch, local.items.end());
      local.items.resize(local.items.size() - kBatch);
    }
  }

 private:
  static constexpr size_t kBatch = 64;
  struct Global {
    std::mutex mu;
    std::vector<void*> items;
  };
  struct Local {
    std::vector<void*> items;
    ~Local() {
      if (items.empty()) return;
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      g.items.insert(g.items.end(), items.begin(), items.end());
    }
  };
  static Global& global() {
    static Global* g = new Global();  // never destroyed: objects outlive static teardown
    return *g;
  }
  static Local& local_cache() {
    thread_local Local local;
    return local;
  }
};

}  // namespace tsr
