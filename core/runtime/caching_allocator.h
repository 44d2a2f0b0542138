// CachingAllocator: the core's per-device allocator over a plugin's raw allocator.
//
// Freed blocks are kept in size-class bins and handed out again without a plugin
// call (a fresh tensor per op must not pay a plugin allocation or, for host
// memory, page faults). Sizes are rounded up: to 512 bytes below 1 MiB, to
// 1 MiB above; a request is served by a cached block of exactly its class.
//
// Note [Stream-ordered reuse]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Stream order: a block remembers the stream it
// was last used on. On a synchronous device (no TSR_FEATURE_ASYNC) any cached
// block may be reused at once. On an asynchronous device a block freed on
// stream S is reused at once on S only (S runs in order). Another stream T
// reuses it only after an event recorded on S after the free has completed:
// when T finds no block of its own in the size class, the allocator records
// such an event on S for a cached block of S (once per block; the event then
// covers the block's last use) and queries it; the block goes to T when the
// event is done, now or at a later allocation. Until then T gets a new block,
// so T never waits for S and no false dependency between streams is made (as
// PyTorch's allocator, which keeps per-stream pools, but without stranding a
// freed block on a stream that goes idle). A stream synchronized and
// destroyed gives its blocks to every stream (forget_stream). Events come
// from a per-device pool; the plugin calls happen outside the lock.
// Out of memory: the cache is emptied and the allocation retried once; a
// second failure is RESOURCE_EXHAUSTED naming the sizes.
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
  void* stream = nullptr;  // the core Stream* of last use (async devices); null: any
  // Cached blocks on async devices only: an event recorded on `stream` after
  // the block was freed (null until another stream wants the block); once it
  // completes, any stream may reuse the block.
  tsr_plugin_event* released = nullptr;
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
  // See Note [Stream-ordered reuse]: a cached block of another stream whose
  // release event has completed (recording one where missing), taken out of
  // its bin; null when none is ready. Examines at most a few blocks.
  Block* take_released(size_t size, void* stream);
  tsr_plugin_event* pooled_event();                  // null when the plugin cannot make one
  void recycle_event(tsr_plugin_event* e) noexcept;  // back to the pool
  void destroy_events() noexcept;

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
  std::vector<tsr_plugin_event*> event_pool_;  // guarded by mu_; owned (plugin events)
};

}  // namespace tsr
