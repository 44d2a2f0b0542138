// Grad mode: whether ops record autograd history on this thread.
//
// Thread-local, like PyTorch's: no_grad on one thread does not affect another.
// On by default. The engine turns it off while it runs backward (on when
// create_graph asks for a differentiable backward), and recording turns it off
// while an op with a derivative formula runs, so that op's own inner calls are
// not recorded a second time.
//
// The state lives in the tensor layer, beside inference mode (as c10 keeps
// GradMode below the operators): dispatch and the ops read it, and the
// autograd layer above them sets it.
#pragma once

namespace tsr::autograd {

// Whether ops record history on the calling thread.
bool grad_enabled() noexcept;
// Sets it; returns the previous value.
bool set_grad_enabled(bool enabled) noexcept;

// Sets grad mode for a scope and restores the previous value.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) noexcept : previous_(set_grad_enabled(enabled)) {}
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// Inference mode (tsr_inference_mode_set): turning it on also turns grad
// mode off on this thread, and turning it off restores the grad mode from
// before. Returns the previous setting.
bool set_inference_mode(bool enabled) noexcept;

// Anomaly detection (process-wide, tsr_autograd_set_detect_anomaly).
bool detect_anomaly() noexcept;
void set_detect_anomaly(bool enabled) noexcept;

// While set on a thread, fusable composites (TSR_FUSABLE) run their
// decomposition instead of a plugin's fused kernel: recording sets it when a
// fusable op without its own derivative formula must be differentiated
// through the ops it decomposes into.
bool force_decomposition() noexcept;
class ForceDecompositionGuard {
 public:
  explicit ForceDecompositionGuard(bool on) noexcept;
  ~ForceDecompositionGuard();
  ForceDecompositionGuard(const ForceDecompositionGuard&) = delete;
  ForceDecompositionGuard& operator=(const ForceDecompositionGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tsr::autograd
