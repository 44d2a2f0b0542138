// OpObserverSlot: a runtime's op observer (tsr_runtime_set_op_observer),
// read on every op call.
//
// Synchronization (Note [Runtime locking] in runtime.h): get() is a
// lock-free read; set() is called with the runtime's mutex held. Every
// observer ever set stays valid until the runtime dies, so a call that read
// the old one may finish with it.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "tessera/tessera.h"

namespace tsr {

struct OpObserver {
  tsr_op_observer_fn fn;
  void* context;
};

class OpObserverSlot {
 public:
  // The current observer, or null.
  const OpObserver* get() const noexcept { return current_.load(std::memory_order_acquire); }
  // Installs `fn` with `context`; a null `fn` removes the observer.
  void set(tsr_op_observer_fn fn, void* context) {
    if (fn == nullptr) {
      current_.store(nullptr, std::memory_order_release);
      return;
    }
    retired_.push_back(std::make_unique<OpObserver>(OpObserver{fn, context}));
    current_.store(retired_.back().get(), std::memory_order_release);
  }

 private:
  std::atomic<const OpObserver*> current_{nullptr};
  std::vector<std::unique_ptr<OpObserver>> retired_;  // every one set, the current one too
};

}  // namespace tsr
