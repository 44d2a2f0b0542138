// tessera/sdk/random_fill.hpp - the checks every plugin's random_fill entry
// (tsr_plugin_api.random_fill, plugin.h) makes before it fills: the call, its
// output and the fill it asks for.
//
//   tsr_status* acme_random_fill(tsr_plugin_context* ctx,
//                                const tsr_random_fill_call* raw) noexcept {
//     return sdk::context_entry(ctx, "acme", "random_fill", [&](tsr_plugin_context& c) {
//       const tsr_random_fill_call& call = sdk::check_random_fill_call("acme", raw);
//       sdk::check_device_index("acme", "random_fill", call.device, 1);
//       const sdk::philox::fill_spec spec = sdk::random_fill_spec("acme", call);
//       ...   // philox::fill(spec, out, 0, n) or the device's own kernel
//     });
//   }
//
// Messages start "<plugin> random_fill: " and say what is wrong; all throw
// sdk::status_error (INVALID_ARGUMENT, or UNIMPLEMENTED for a distribution
// the out dtype does not support).
#ifndef TESSERA_SDK_RANDOM_FILL_HPP_
#define TESSERA_SDK_RANDOM_FILL_HPP_

#include <cstddef>

#include "tessera/plugin.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/philox.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::sdk {

// `call`, checked to be non-NULL with a struct_size that covers the ABI 1.0
// layout.
inline const tsr_random_fill_call& check_random_fill_call(const char* plugin,
                                                          const tsr_random_fill_call* call) {
  constexpr size_t needed = offsetof(tsr_random_fill_call, stream) + sizeof(tsr_plugin_stream*);
  if (call == nullptr) throw_status(TSR_INVALID_ARGUMENT, "%s random_fill: call is NULL", plugin);
  if (call->struct_size < needed) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s random_fill: tsr_random_fill_call.struct_size is %zu, smaller than the "
                 "ABI 1.0 layout (%zu bytes)",
                 plugin, call->struct_size, needed);
  }
  return *call;
}

// The fill `call` asks for, checked: `out` is a valid descriptor (as
// tensor_arg<Where> requires) and contiguous (the host stages other layouts),
// and philox::check accepts the distribution, dtype and parameters.
template <memory Where = memory::data>
philox::fill_spec random_fill_spec(const char* plugin, const tsr_random_fill_call& call) {
  const tsr_tensor_desc* out = call.out;
  if (!is_valid_desc<Where>(out)) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s random_fill: 'out' is %s (a NULL descriptor, a bad dtype or ndim, a "
                 "negative size, or NULL %s with elements)",
                 plugin, out == nullptr ? "NULL" : "not a valid descriptor",
                 Where == memory::buffer ? "buffer" : "data");
  }
  if (!is_contiguous(*out)) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s random_fill: 'out' must be contiguous (the host stages other layouts)",
                 plugin);
  }
  philox::fill_spec spec;
  spec.distribution = call.distribution;
  spec.dtype = out->dtype;
  spec.seed = call.seed;
  spec.offset = call.offset;
  spec.param0 = call.param0;
  spec.param1 = call.param1;
  if (const char* why = philox::check(spec)) {
    throw_status(philox::supports_dtype(spec.distribution, spec.dtype) ? TSR_INVALID_ARGUMENT
                                                                       : TSR_UNIMPLEMENTED,
                 "%s random_fill: cannot fill %s with %s values (param0 %g, param1 %g): %s", plugin,
                 dtype_name(out->dtype), philox::distribution_name(spec.distribution), spec.param0,
                 spec.param1, why);
  }
  return spec;
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_RANDOM_FILL_HPP_
