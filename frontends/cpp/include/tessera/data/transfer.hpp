// tessera/data/transfer.hpp - moving a batch to the DataLoader's target
// device.
//
// Transfer<B>::apply(batch, device, pin_memory) moves every tensor of a batch
// (Tensor, std::vector, std::tuple, std::pair, Example, nested) to `device`
// with Tensor::to; numbers stay as they are. A batch type it does not know
// is refused at run time, and only when a non-CPU device is asked for.
//
// Note [Pinned staging]
// ~~~~~~~~~~~~~~~~~~~~~
// As PyTorch's pin_memory, host batches bound for a
// device are staged in host memory pinned for it (Tensor::pin_memory,
// tsr_tensor_pin_memory) when the device's plugin offers pinned memory
// (TSR_FEATURE_PINNED_HOST): the copy to the device is then one transfer from
// that memory, without the plugin's own staging. The staging runs where the
// batch is made - in the worker threads when there are workers - so it
// overlaps the training step. A device without pinned memory gets a
// contiguous host batch (its plugin reads host memory directly or stages it).
#pragma once

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/data/example.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"

namespace tessera::data {

namespace detail {

// Host staging before a copy to `device` (Note [Pinned staging]).
inline Tensor stage_on_host(const Tensor& t, Device device) {
  Tensor host = t.device().is_cpu() ? t : t.cpu();
  if (host.is_pinned()) return host;
  if ((properties(device).features & TSR_FEATURE_PINNED_HOST) != 0) return host.pin_memory(device);
  return host.contiguous();
}

}  // namespace detail

// Unknown batch types: refused when a transfer is asked for.
template <class B>
struct Transfer {
  static void apply(B&, Device device, bool) {
    tessera::detail::throw_error(
        TSR_UNIMPLEMENTED,
        "DataLoader: options.device = " + device.str() +
            " but the batch type has no known tensors to move; move them in the collate "
            "function, or specialise tessera::data::Transfer for the batch type");
  }
};

template <>
struct Transfer<Tensor> {
  static void apply(Tensor& batch, Device device, bool pin_memory) {
    if (!batch.defined() || batch.device() == device) return;
    if (pin_memory) batch = detail::stage_on_host(batch, device);
    batch = batch.to(device);
  }
};

template <class B>
requires std::is_arithmetic_v<B>
struct Transfer<B> {
  static void apply(B&, Device, bool) {}
};

template <class B>
struct Transfer<std::vector<B>> {
  static void apply(std::vector<B>& batch, Device device, bool pin_memory) {
    for (B& field : batch) Transfer<B>::apply(field, device, pin_memory);
  }
};

template <class... Bs>
struct Transfer<std::tuple<Bs...>> {
  static void apply(std::tuple<Bs...>& batch, Device device, bool pin_memory) {
    std::apply([&](Bs&... fields) { (Transfer<Bs>::apply(fields, device, pin_memory), ...); },
               batch);
  }
};

template <class A, class B>
struct Transfer<std::pair<A, B>> {
  static void apply(std::pair<A, B>& batch, Device device, bool pin_memory) {
    Transfer<A>::apply(batch.first, device, pin_memory);
    Transfer<B>::apply(batch.second, device, pin_memory);
  }
};

template <class D, class T>
struct Transfer<Example<D, T>> {
  static void apply(Example<D, T>& batch, Device device, bool pin_memory) {
    Transfer<D>::apply(batch.data, device, pin_memory);
    Transfer<T>::apply(batch.target, device, pin_memory);
  }
};

// Moves every tensor of `batch` to `device`, in place (see the file comment).
template <class B>
void move_to_device(B& batch, Device device, bool pin_memory = false) {
  Transfer<B>::apply(batch, device, pin_memory);
}

}  // namespace tessera::data
