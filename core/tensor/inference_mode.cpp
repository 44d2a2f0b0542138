// The calling thread's inference-mode flag (tensor_impl.h).
#include "tensor/tensor_impl.h"

namespace tsr {

namespace {
thread_local bool t_inference_mode = false;
}  // namespace

bool inference_mode() noexcept { return t_inference_mode; }

bool set_inference_mode_flag(bool on) noexcept {
  const bool previous = t_inference_mode;
  t_inference_mode = on;
  return previous;
}

}  // namespace tsr
