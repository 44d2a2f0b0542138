// CachingAllocator: the core's per-device allocator over a plugin's raw allocator.
//
// Freed blocks are kept in size-class bins and handed out again without a plugin
// call (a fresh tensor per op must not pay a plugin allocation or, for host
// memory, page faults). Sizes are rounded up: to 512 bytes below 1 MiB, to
// 1 MiB above; a request is served by a cached block of exactly its class.
//
// Stream order (Note [Stream-ordered reuse]): a block remembers the stream it
// was last used on. On a synchronous device (no TSR_FEATURE_ASYNC) any cached
// block may be reused at once. On an asynchronous device a block freed on
// stream S is reused at once on S only; other streams get a new block, until S
// is synchronized and destroyed (forget_stream). Event-based cross-stream reuse
// comes with the first asynchronous plugin that needs it. Out of memory: the cache is emptied and
// the allocation retried once; a second failure is RESOURCE_EXHAUSTED naming the sizes.
//
// Thread-safe (one mutex; plugin calls are made outside it where they may be slow).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include <unordered_map>
#include <vector>
#include "util/spin_lock.h"

#include "tessera/plugin.h"
#include "tessera/tessera.h"

namespace tsr {

struct DeviceRecord;

struct Block {
  tsr_plugin_buffer buffer{};
  size_t size = 0;         // rounded size class
  void* stream = nullptr;  // tsr_plugin_stream* of last use (async devices)
};

class CachingAllocator {
 public:
  explicit CachingAllocator(DeviceRecord* device) : device_(device) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Returns a block of at least `nbytes`; throws tsr::Error (RESOURCE_EXHAUSTED).
  Block* allocate(size_t nbytes, void* stream);
  // Returns `block` to the cache. Never throws.
  void free(Block* block) noexcept;
  // Called after `stream` was synchronized and before it is destroyed: its
  // cached blocks become reusable on any stream.
  void forget_stream(void* stream) noexcept;
  // Releases every cached block to the plugin.
  void empty_cache() noexcept;
  tsr_memory_stats stats();
  void reset_peak();

  static size_t round_size(size_t nbytes);

 private:
  DeviceRecord* device_;
  SpinLock mu_;  // critical sections are a few dozen instructions
  // Cached blocks by size class: direct-indexed below 1 MiB (the hot path of
  // small tensors), hashed above.
  static constexpr size_t kSmallBins = (size_t{1} << 20) / 512;
  std::vector<Block*>& bin(size_t size) {
    return size < (size_t{1} << 20) ? small_[size / 512] : large_[size];
  }
  std::vector<Block*> small_[kSmallBins];
  std::unordered_map<size_t, std::vector<Block*>> large_;
  uint64_t allocated_ = 0, reserved_ = 0, peak_ = 0, alloc_count_ = 0, plugin_alloc_count_ = 0;
};

}  // namespace tsr
