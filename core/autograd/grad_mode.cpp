// grad_mode.cpp - the thread-local autograd switches.
#include "autograd/grad_mode.h"

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

bool force_decomposition() noexcept { return t_force_decomposition; }

ForceDecompositionGuard::ForceDecompositionGuard(bool on) noexcept
    : previous_(t_force_decomposition) {
  t_force_decomposition = on;
}

ForceDecompositionGuard::~ForceDecompositionGuard() { t_force_decomposition = previous_; }

}  // namespace tsr::autograd
