// ObjectPool<T>: recycles fixed-size objects without returning them to malloc.
//
// Two reasons: speed (a fresh tensor per op must cost nanoseconds: a thread-local
// free list serves most requests without a lock or an atomic), and handle safety
// (Note [Generational handles]): a released tsr_tensor's memory stays a tensor
// object forever, so checking a stale handle's generation tag reads valid memory.
// Objects are constructed/destroyed by the caller (placement new / explicit dtor).
//
// The per-thread cache is a plain array in initial-exec TLS (no __tls_get_addr
// call, no guard variable); a second thread_local with a destructor, touched
// once per thread, hands the cache back to the global list when the thread ends.
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
  // Raw storage for one T; never null (throws std::bad_alloc). Fresh memory is
  // zeroed, so a pooled object's header reads as "never used".
  static void* acquire() {
    Local& local = local_;
    if (local.count > 0) return local.items[--local.count];
    refill(local);
    if (local.count > 0) return local.items[--local.count];
    void* p = ::operator new(sizeof(T), std::align_val_t(alignof(T) < 16 ? 16 : alignof(T)));
    std::memset(p, 0, sizeof(T));
    return p;
  }

  // Returns storage of a destroyed T to the pool. A thread that only ever
  // recycles (a worker releasing the tensors of the tasks it ran) registers its
  // flusher here: without it, what the thread cached was lost when it ended.
  static void recycle(void* p) {
    Local& local = local_;
    if (!local.registered) register_thread(local);
    if (local.count == kCapacity) spill(local);
    local.items[local.count++] = p;
  }

 private:
  static constexpr unsigned kCapacity = 128;
  static constexpr unsigned kBatch = 64;
  struct Local {
    void* items[kCapacity];
    unsigned count;
    bool registered;
  };
  struct Global {
    std::mutex mu;
    std::vector<void*> items;
  };
  struct Flusher {
    ~Flusher() {
      Local& local = local_;
      if (local.count == 0) return;
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      g.items.insert(g.items.end(), local.items, local.items + local.count);
      local.count = 0;
    }
  };

  static void register_thread(Local& local) {
    if (local.registered) return;
    local.registered = true;
    thread_local Flusher flusher;
    (void)flusher;
  }
  static void refill(Local& local) {
    register_thread(local);
    Global& g = global();
    std::lock_guard<std::mutex> lock(g.mu);
    unsigned n = g.items.size() < kBatch ? static_cast<unsigned>(g.items.size()) : kBatch;
    for (unsigned i = 0; i < n; ++i) {
      local.items[local.count++] = g.items.back();
      g.items.pop_back();
    }
  }
  static void spill(Local& local) {
    register_thread(local);
    Global& g = global();
    std::lock_guard<std::mutex> lock(g.mu);
    g.items.insert(g.items.end(), local.items + local.count - kBatch, local.items + local.count);
    local.count -= kBatch;
  }
  static Global& global() {
    static Global* g = new Global();  // never destroyed: objects outlive static teardown
    return *g;
  }
  static thread_local Local local_ __attribute__((tls_model("initial-exec")));
};

template <typename T>
thread_local typename ObjectPool<T>::Local ObjectPool<T>::local_;

}  // namespace tsr
