#include "runtime/caching_allocator.h"

#include <algorithm>

#include "runtime/device.h"
#include "runtime/stream.h"
#include "util/error.h"

namespace tsr {

size_t CachingAllocator::round_size(size_t nbytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{1} << 20;
  if (nbytes == 0) return kSmall;
  if (nbytes < kLarge) return (nbytes + kSmall - 1) / kSmall * kSmall;
  return (nbytes + kLarge - 1) / kLarge * kLarge;
}

CachingAllocator::~CachingAllocator() {
  empty_cache();
  destroy_events();
}

Block* CachingAllocator::allocate(size_t nbytes, void* stream) {
  if (nbytes > (size_t{1} << 62))
    fail(TSR_RESOURCE_EXHAUSTED, "cannot allocate {} bytes on {}: larger than any device memory",
         nbytes, device_->label);
  size_t size = round_size(nbytes);
  {
    std::lock_guard<SpinLock> lock(mu_);
    std::vector<Block*>& bin = this->bin(size);
    if (!bin.empty()) {
      // On an asynchronous device only a block last used on this stream (or on a
      // stream since synchronized and destroyed) may be reused at once (Note
      // [Stream-ordered reuse]); any block is fine on a synchronous device.
      size_t pick = bin.size();
      if (!device_->async) {
        pick = bin.size() - 1;
      } else {
        for (size_t i = bin.size(); i-- > 0;)
          if (bin[i]->stream == stream || bin[i]->stream == nullptr) {
            pick = i;
            break;
          }
      }
      if (pick < bin.size()) {
        Block* b = bin[pick];
        bin[pick] = bin.back();
        bin.pop_back();
        if (b->released != nullptr) {  // not needed on its own stream
          event_pool_.push_back(b->released);
          b->released = nullptr;
        }
        b->stream = stream;
        allocated_ += size;
        peak_ = std::max(peak_, allocated_);
        ++alloc_count_;
        return b;
      }
    }
  }
  if (device_->async) {
    if (Block* b = take_released(size, stream)) {
      std::lock_guard<SpinLock> lock(mu_);
      b->stream = stream;
      allocated_ += size;
      peak_ = std::max(peak_, allocated_);
      ++alloc_count_;
      return b;
    }
  }
  const tsr_plugin_api& api = device_->plugin->api;
  tsr_plugin_buffer buffer{};
  tsr_status* st = api.alloc(device_->plugin->context, device_->plugin_index, size, &buffer);
  if (st != nullptr && tsr_status_code_of(st) == TSR_RESOURCE_EXHAUSTED) {
    tsr_status_free(st);
    empty_cache();
    st = api.alloc(device_->plugin->context, device_->plugin_index, size, &buffer);
  }
  if (st != nullptr) {
    tsr_memory_stats s = stats();
    std::string msg = fmt::format(
        "out of memory on {}: tried to allocate {} bytes ({} requested); {} bytes allocated, {} "
        "reserved; the cache was emptied and the allocation retried once: {}",
        device_->label, size, nbytes, s.allocated, s.reserved, tsr_status_message(st));
    tsr_status_code code = tsr_status_code_of(st);
    tsr_status_free(st);
    throw Error(code, msg);
  }
  Block* b = new Block{buffer, size, stream};
  std::lock_guard<SpinLock> lock(mu_);
  allocated_ += size;
  reserved_ += size;
  peak_ = std::max(peak_, allocated_);
  ++alloc_count_;
  ++plugin_alloc_count_;
  return b;
}

void CachingAllocator::free(Block* block) noexcept {
  std::lock_guard<SpinLock> lock(mu_);
  allocated_ -= block->size;
  try {
    bin(block->size).push_back(block);
  } catch (...) {  // out of host memory: give the block back instead of caching it
    reserved_ -= block->size;
    device_->plugin->api.free(device_->plugin->context, device_->plugin_index, block->buffer);
    delete block;
  }
}

Block* CachingAllocator::take_released(size_t size, void* stream) {
  constexpr size_t kProbe = 4;  // blocks examined per allocation, at most
  Block* candidates[kProbe];
  size_t n = 0;
  {
    std::lock_guard<SpinLock> lock(mu_);
    std::vector<Block*>& bin = this->bin(size);
    for (size_t i = bin.size(); i-- > 0 && n < kProbe;) {
      Block* b = bin[i];
      // A stream that is being destroyed synchronizes and then hands its
      // blocks to everyone (forget_stream); leave those alone meanwhile.
      if (b->stream == nullptr || b->stream == stream ||
          !static_cast<Stream*>(b->stream)->try_retain())
        continue;
      candidates[n++] = b;
      bin[i] = bin.back();
      bin.pop_back();
    }
  }
  const tsr_plugin_api& api = device_->plugin->api;
  tsr_plugin_context* context = device_->plugin->context;
  const int32_t index = device_->plugin_index;
  Block* found = nullptr;
  for (size_t k = 0; k < n; ++k) {
    Block* c = candidates[k];
    auto* owner = static_cast<Stream*>(c->stream);
    if (found == nullptr) {
      if (c->released == nullptr) {
        if (tsr_plugin_event* e = pooled_event()) {
          if (tsr_status* st = api.event_record(context, index, e, owner->plugin_stream)) {
            tsr_status_free(st);
            recycle_event(e);
          } else {
            c->released = e;
          }
        }
      }
      bool done = false;
      if (c->released != nullptr) {
        if (tsr_status* st = api.event_query(context, index, c->released, &done)) {
          tsr_status_free(st);  // a failed stream keeps its blocks; its error is sticky
          done = false;
        }
      }
      if (done) {
        recycle_event(c->released);
        c->released = nullptr;
        found = c;
        owner->release();
        continue;
      }
    }
    {
      std::lock_guard<SpinLock> lock(mu_);
      try {
        bin(c->size).push_back(c);
        c = nullptr;
      } catch (...) {  // out of host memory: give the block back instead
        reserved_ -= c->size;
      }
    }
    if (c != nullptr) {
      if (c->released != nullptr) api.event_destroy(context, index, c->released);
      api.free(context, index, c->buffer);
      delete c;
    }
    owner->release();
  }
  return found;
}

tsr_plugin_event* CachingAllocator::pooled_event() {
  {
    std::lock_guard<SpinLock> lock(mu_);
    if (!event_pool_.empty()) {
      tsr_plugin_event* e = event_pool_.back();
      event_pool_.pop_back();
      return e;
    }
  }
  tsr_plugin_event* e = nullptr;
  const tsr_plugin_api& api = device_->plugin->api;
  if (tsr_status* st = api.event_create(device_->plugin->context, device_->plugin_index, 0, &e)) {
    tsr_status_free(st);
    return nullptr;
  }
  return e;
}

void CachingAllocator::recycle_event(tsr_plugin_event* e) noexcept {
  if (e == nullptr) return;
  {
    std::lock_guard<SpinLock> lock(mu_);
    try {
      event_pool_.push_back(e);
      return;
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of host memory, destroy it below
    }
  }
  device_->plugin->api.event_destroy(device_->plugin->context, device_->plugin_index, e);
}

void CachingAllocator::destroy_events() noexcept {
  std::vector<tsr_plugin_event*> events;
  {
    std::lock_guard<SpinLock> lock(mu_);
    events.swap(event_pool_);
  }
  for (tsr_plugin_event* e : events)
    device_->plugin->api.event_destroy(device_->plugin->context, device_->plugin_index, e);
}

void CachingAllocator::forget_stream(void* stream) noexcept {
  std::lock_guard<SpinLock> lock(mu_);
  auto forget = [&](std::vector<Block*>& bin) {
    for (Block* b : bin)
      if (b->stream == stream) {
        b->stream = nullptr;
        if (b->released != nullptr) {
          try {
            event_pool_.push_back(b->released);
            b->released = nullptr;
          } catch (...) {  // NOLINT(bugprone-empty-catch): kept; destroyed with the block
          }
        }
      }
  };
  for (auto& bin : small_) forget(bin);
  for (auto& [size, bin] : large_) forget(bin);
}

void CachingAllocator::empty_cache() noexcept {
  std::vector<Block*> blocks;
  {
    std::lock_guard<SpinLock> lock(mu_);
    auto take = [&](std::vector<Block*>& bin) {
      for (Block* b : bin) reserved_ -= b->size;
      blocks.insert(blocks.end(), bin.begin(), bin.end());
      bin.clear();
    };
    for (auto& bin : small_) take(bin);
    for (auto& [size, bin] : large_) take(bin);
    large_.clear();
  }
  for (Block* b : blocks) {
    if (b->released != nullptr)
      device_->plugin->api.event_destroy(device_->plugin->context, device_->plugin_index,
                                         b->released);
    device_->plugin->api.free(device_->plugin->context, device_->plugin_index, b->buffer);
    delete b;
  }
}

tsr_memory_stats CachingAllocator::stats() {
  std::lock_guard<SpinLock> lock(mu_);
  tsr_memory_stats s{};
  s.struct_size = sizeof s;
  s.allocated = allocated_;
  s.reserved = reserved_;
  s.peak_allocated = peak_;
  s.alloc_count = alloc_count_;
  s.plugin_alloc_count = plugin_alloc_count_;
  return s;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<SpinLock> lock(mu_);
  peak_ = allocated_;
}

}  // namespace tsr
