// grad_mode.cpp - the thread-local autograd switches.
#include "tensor/grad_mode.h"

#include <atomic>

#include "tensor/tensor_impl.h"

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
thread_local bool t_grad_before_inference = true;
}  // namespace

bool set_inference_mode(bool enabled) noexcept {
  const bool previous = inference_mode();
  if (enabled == previous) return previous;
  if (enabled) {
    t_grad_before_inference = t_grad_enabled;
    t_grad_enabled = false;
  } else {
    t_grad_enabled = t_grad_before_inference;
  }
  set_inference_mode_flag(enabled);
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
