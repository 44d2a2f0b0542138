// grad_mode.cpp - the thread-local autograd switches.
#include "autograd/grad_mode.h"

#include <atomic>

namespace tsr::autograd {
namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_force_decomposition = false;
}  // namespace

bool grad_enabled() noexcept { return t_grad_enabled; }

bool set_grad_enabled(bool enabled) noexcept {
  const bool previous = t_grad_enabled;
  t_grad_enabled = enabled;
  return previous;
}

namespace {
std::atomic<bool> g_detect_anomaly{false};
}  // namespace

bool detect_anomaly() noexcept { return g_detect_anomaly.load(std::memory_order_relaxed); }
void set_detect_anomaly(bool enabled) noexcept {
  g_detect_anomaly.store(enabled, std::memory_order_relaxed);
}

bool force_decomposition() noexcept { return t_force_decomposition; }

ForceDecompositionGuard::ForceDecompositionGuard(bool on) noexcept
    : previous_(t_force_decomposition) {
  t_force_decomposition = on;
}

ForceDecompositionGuard::~ForceDecompositionGuard() { t_force_decomposition = previous_; }

}  // namespace tsr::autograd
