// tessera/sdk/plugin_table.hpp - the plugin's side of loading: its
// tsr_plugin_api table, its tsr_plugin_query, guarded non-kernel entries, the
// argument checks they share, and option parsing.
//
//   tsr_plugin_api make_table() noexcept {
//     tsr_plugin_api t = sdk::plugin_table("acme", "0.1.0", "acme");
//     t.init = acme_init;
//     ...
//     return t;
//   }
//   extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(
//       const tsr_host_api* host) noexcept {
//     return sdk::query(host, "acme", make_table);
//   }
//
//   tsr_status* acme_alloc(tsr_plugin_context* ctx, int32_t device, size_t n,
//                          tsr_plugin_buffer* out) noexcept {
//     return sdk::context_entry(ctx, "acme", "alloc", [&](tsr_plugin_context& c) {
//       sdk::check_device_index("acme", "alloc", device, 1);
//       sdk::check_not_null("acme", "alloc", "out_buffer", out);
//       ...   // may throw sdk::status_error
//     });
//   }
//
// query() refuses a host whose tsr_host_api is smaller than ABI 1.0's or has
// no make_status (silently: there is no way to report), and a host of another
// ABI major (logging both versions through host->log); otherwise it remembers
// the host (query_host(), for statuses when a caller passes a NULL context)
// and returns the table make_table() built on the first query. Messages of
// the checks name the plugin, the entry and the value.
#ifndef TESSERA_SDK_PLUGIN_TABLE_HPP_
#define TESSERA_SDK_PLUGIN_TABLE_HPP_

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "tessera/plugin.h"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

// A zeroed table with the header fields set: struct_size, this build's ABI
// version, the plugin's name (log lines, TESSERA_PLUGINS), version string and
// device type (the "acme" of acme:0). The strings must have static storage.
inline tsr_plugin_api plugin_table(const char* name, const char* version,
                                   const char* device_type) noexcept {
  tsr_plugin_api t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof(tsr_plugin_api);
  t.abi_major = TSR_PLUGIN_ABI_MAJOR;
  t.abi_minor = TSR_PLUGIN_ABI_MINOR;
  t.name = name;
  t.version = version;
  t.device_type = device_type;
  return t;
}

namespace detail {
inline std::atomic<const tsr_host_api*>& query_host_slot() noexcept {
  static std::atomic<const tsr_host_api*> host{nullptr};
  return host;
}
}  // namespace detail

// The host callbacks the last successful query() was given. Borrowed (valid
// until the plugin is unloaded); NULL before the first query.
inline const tsr_host_api* query_host() noexcept {
  return detail::query_host_slot().load(std::memory_order_acquire);
}

// The body of tsr_plugin_query (see the top of the file). `make_table` is
// called once, on the first successful query. Never throws (make_table must
// not either).
template <class MakeTable>
const tsr_plugin_api* query(const tsr_host_api* host, const char* plugin,
                            MakeTable&& make_table) noexcept {
  constexpr size_t needed = offsetof(tsr_host_api, log) + sizeof(host->log);
  if (host == nullptr || host->struct_size < needed || host->make_status == nullptr) {
    return nullptr;
  }
  if (host->abi_major != TSR_PLUGIN_ABI_MAJOR) {
    status_maker(host).logf(TSR_LOG_ERROR, plugin,
                            "the %s plugin speaks plugin ABI %d.%d but the host speaks %u.%u; "
                            "rebuild the plugin against the host's abi/ headers",
                            plugin, TSR_PLUGIN_ABI_MAJOR, TSR_PLUGIN_ABI_MINOR, host->abi_major,
                            host->abi_minor);
    return nullptr;
  }
  detail::query_host_slot().store(host, std::memory_order_release);
  static const tsr_plugin_api table = make_table();
  return &table;
}

// Runs f(*context) under guard (status.hpp) for a non-kernel entry named
// `entry` of plugin `plugin`: rejects a NULL context, returns f's status (NULL
// when f returns void) and turns every exception into a status. Never throws.
template <class Context, class F>
tsr_status* context_entry(Context* context, const char* plugin, const char* entry, F&& f) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : query_host();
  return guard(host, [&] {
    if (context == nullptr) {
      throw_status(TSR_INVALID_ARGUMENT, "%s plugin %s: the context is NULL", plugin, entry);
    }
    return f(*context);
  });
}

// Throws INVALID_ARGUMENT "<plugin> plugin <entry>: <what> is NULL" for a NULL
// pointer argument.
inline void check_not_null(const char* plugin, const char* entry, const char* what,
                           const void* pointer) {
  if (pointer == nullptr) {
    throw_status(TSR_INVALID_ARGUMENT, "%s plugin %s: %s is NULL", plugin, entry, what);
  }
}

// Throws OUT_OF_RANGE unless 0 <= device < count.
inline void check_device_index(const char* plugin, const char* entry, int32_t device,
                               int32_t count) {
  if (device >= 0 && device < count) return;
  if (count == 1) {
    throw_status(TSR_OUT_OF_RANGE,
                 "%s plugin %s: device index %d does not exist; the %s plugin has one device, "
                 "index 0",
                 plugin, entry, static_cast<int>(device), plugin);
  }
  throw_status(TSR_OUT_OF_RANGE,
               "%s plugin %s: device index %d does not exist; the %s plugin has %d devices, "
               "indices 0..%d",
               plugin, entry, static_cast<int>(device), plugin, static_cast<int>(count),
               static_cast<int>(count) - 1);
}

// A zeroed ABI struct with its struct_size set to this build's size: the
// start of every table, properties and caps struct a plugin fills.
template <class T>
T zeroed_struct() noexcept {
  T value;
  std::memset(&value, 0, sizeof value);
  value.struct_size = sizeof value;
  return value;
}

// Copies `value` into the host's `out`, writing only the bytes the host knows
// (out->struct_size, which an older host sets smaller; 0 reads as this
// build's size); struct_size is left as the host set it. For output structs
// the host passes in (device properties, collective caps).
template <class T>
void write_sized(const T& value, T* out) noexcept {
  size_t size = out->struct_size;
  if (size == 0 || size > sizeof value) size = sizeof value;
  T copy = value;
  copy.struct_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &copy, size);
}

inline void write_device_properties(const tsr_plugin_device_properties& properties,
                                    tsr_plugin_device_properties* out) noexcept {
  write_sized(properties, out);
}

// ---- options (tsr_plugin_api.set_option) ----

// The value of option `key` as an integer in [lo, hi]; throws INVALID_ARGUMENT
// otherwise ("<plugin> plugin option '<key>' must be an integer in lo..hi,
// got '<text>'"). NULL reads as "".
inline long long int_option(const char* plugin, const char* key, const char* text, long long lo,
                            long long hi) {
  if (text == nullptr) text = "";
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < lo || value > hi) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s plugin option '%s' must be an integer in %lld..%lld, got '%s'", plugin, key,
                 lo, hi, text);
  }
  return value;
}

// The value of option `key` as a bool: "1"/"true" or "0"/"false"; throws
// INVALID_ARGUMENT otherwise.
inline bool bool_option(const char* plugin, const char* key, const char* text) {
  if (text == nullptr) text = "";
  if (std::strcmp(text, "1") == 0 || std::strcmp(text, "true") == 0) return true;
  if (std::strcmp(text, "0") == 0 || std::strcmp(text, "false") == 0) return false;
  throw_status(TSR_INVALID_ARGUMENT, "%s plugin option '%s' must be 1, 0, true or false, got '%s'",
               plugin, key, text);
}

// The index of `text` among `choices`; throws INVALID_ARGUMENT naming them
// all otherwise ("... must be 'auto', 'avx2' or 'baseline', got 'x'").
inline size_t choice_option(const char* plugin, const char* key, const char* text,
                            std::initializer_list<const char*> choices) {
  if (text == nullptr) text = "";
  size_t i = 0;
  std::string names;
  for (const char* choice : choices) {
    if (std::strcmp(text, choice) == 0) return i;
    if (i > 0) names += i + 1 == choices.size() ? " or " : ", ";
    names += std::string("'") + choice + "'";
    ++i;
  }
  throw_status(TSR_INVALID_ARGUMENT, "%s plugin option '%s' must be %s, got '%s'", plugin, key,
               names.c_str(), text);
}

// Throws NOT_FOUND for an option the plugin does not have; `known` lists its
// options for the message ("'threads' and 'isa'").
[[noreturn]] inline void throw_unknown_option(const char* plugin, const char* key,
                                              const char* known) {
  throw_status(TSR_NOT_FOUND, "%s plugin has no option '%s'; its options are %s", plugin, key,
               known);
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_PLUGIN_TABLE_HPP_
