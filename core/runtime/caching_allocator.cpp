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

CachingAllocator::~CachingAllocator() { empty_cache(); }

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
        b->stream = stream;
        allocated_ += size;
        peak_ = std::max(peak_, allocated_);
        ++alloc_count_;
        return b;
      }
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

void CachingAllocator::forget_stream(void* stream) noexcept {
  std::lock_guard<SpinLock> lock(mu_);
  auto forget = [&](std::vector<Block*>& bin) {
    for (Block* b : bin)
      if (b->stream == stream) b->stream = nullptr;
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
