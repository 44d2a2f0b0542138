/*
 * Shared plumbing of the `tessera` subcommands (see common.h): turning statuses
 * into exceptions and printed errors, building the runtime from the common
 * plugin options, and the small formatters the commands share.
 */
#include "common.h"

#include "tessera/plugin.h"  // TSR_COLLECTIVE_* bits

#include <array>
#include <cstdio>

#include <fmt/core.h>

namespace tessera::cli {

Error::Error(tsr_status_code code, const std::string& message)
    : std::runtime_error(fmt::format("{}: {}", tsr_status_code_name(code), message)),
      code_(code),
      message_(message) {}

void check(tsr_status* status) {
  if (status == nullptr) return;
  const tsr_status_code code = tsr_status_code_of(status);
  std::string message = tsr_status_message(status);
  tsr_status_free(status);
  throw Error(code, message);
}

void print_error(const Error& error) { fmt::print(stderr, "tessera: {}\n", error.what()); }

void RuntimeOptions::add_to(CLI::App& command) {
  command.add_option("--plugin", plugins, "Also load this plugin file (repeatable)")
      ->type_name("PATH");
  command
      .add_option("--plugin-path", plugin_path,
                  "Directories (':'-separated) searched for plugins before "
                  "TESSERA_PLUGIN_PATH and the install directory")
      ->type_name("DIRS");
}

Runtime create_runtime(const RuntimeOptions& options) {
  tsr_runtime_options runtime_options{};
  runtime_options.struct_size = sizeof runtime_options;
  runtime_options.plugin_path = options.plugin_path.empty() ? nullptr : options.plugin_path.c_str();
  tsr_runtime* raw = nullptr;
  check(tsr_runtime_create(&runtime_options, &raw));
  Runtime runtime(raw);
  for (const std::string& path : options.plugins) {
    tsr_plugin* plugin = nullptr;
    try {
      check(tsr_plugin_load(runtime.get(), path.c_str(), &plugin));
    } catch (const Error& error) {
      print_error(error);  // also in the load report, which the commands show
    }
  }
  return runtime;
}

std::string device_string(const tsr_runtime* runtime, tsr_device device) {
  std::array<char, 64> buffer{};
  check(tsr_device_format(runtime, device, buffer.data(), buffer.size()));
  return buffer.data();
}

std::vector<tsr_device> list_devices(const tsr_runtime* runtime) {
  size_t count = 0;
  check(tsr_device_count(runtime, &count));
  std::vector<tsr_device> devices(count);
  for (size_t i = 0; i < count; ++i) check(tsr_device_at(runtime, i, &devices[i]));
  return devices;
}

std::string op_kind_name(tsr_op_kind kind) {
  switch (kind) {
    case TSR_OP_PRIMITIVE:
      return "primitive";
    case TSR_OP_COMPOSITE:
      return "composite";
    case TSR_OP_VIEW:
      return "view";
    case TSR_OP_FACTORY:
      return "factory";
    case TSR_OP_ROUTED:
      return "routed";
  }
  return fmt::format("kind{}", static_cast<int>(kind));
}

std::vector<std::string> dtype_names(uint64_t mask) {
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if ((mask & (uint64_t{1} << bit)) == 0) continue;
    const std::string name = tsr_dtype_name(static_cast<tsr_dtype>(bit));
    names.push_back(name == "invalid" ? fmt::format("dtype{}", bit) : name);
  }
  return names;
}

std::vector<std::string> collective_names(uint32_t bits) {
  static const std::pair<uint32_t, const char*> names[] = {
      {TSR_COLLECTIVE_ALL_REDUCE, "all_reduce"},
      {TSR_COLLECTIVE_BROADCAST, "broadcast"},
      {TSR_COLLECTIVE_REDUCE, "reduce"},
      {TSR_COLLECTIVE_ALL_GATHER, "all_gather"},
      {TSR_COLLECTIVE_REDUCE_SCATTER, "reduce_scatter"},
      {TSR_COLLECTIVE_GATHER, "gather"},
      {TSR_COLLECTIVE_SCATTER, "scatter"},
      {TSR_COLLECTIVE_ALL_TO_ALL, "all_to_all"},
      {TSR_COLLECTIVE_SEND_RECV, "send/recv"},
      {TSR_COLLECTIVE_BARRIER, "barrier"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : names)
    if ((bits & bit) != 0) out.emplace_back(name);
  return out;
}

std::vector<std::string> reduce_op_names(uint32_t bits) {
  static const char* const names[] = {"sum", "product", "min", "max", "avg"};
  std::vector<std::string> out;
  for (uint32_t i = 0; i < 5; ++i)
    if ((bits & (1u << i)) != 0) out.emplace_back(names[i]);
  return out;
}

std::vector<std::string> feature_names(uint32_t features) {
  struct Feature {
    uint32_t bit;
    const char* name;
  };
  static constexpr Feature kFeatures[] = {
      {TSR_FEATURE_HOST_ADDRESSABLE, "host_addressable"},
      {TSR_FEATURE_ASYNC, "async"},
      {TSR_FEATURE_TIMESTAMPS, "timestamps"},
      {TSR_FEATURE_PINNED_HOST, "pinned_host"},
  };
  std::vector<std::string> names;
  for (const Feature& feature : kFeatures) {
    if ((features & feature.bit) != 0) names.emplace_back(feature.name);
    features &= ~feature.bit;
  }
  if (features != 0) names.push_back(fmt::format("0x{:x}", features));
  return names;
}

std::string format_bytes(uint64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  constexpr double kGiB = kMiB * 1024.0;
  if (bytes == 0) return "unknown";
  if (static_cast<double>(bytes) >= kGiB) {
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
  }
  if (static_cast<double>(bytes) >= kMiB) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / kMiB);
  }
  return fmt::format("{} bytes", bytes);
}

std::string join(const std::vector<std::string>& words, const std::string& none) {
  if (words.empty()) return none;
  std::string joined;
  for (const std::string& word : words) {
    if (!joined.empty()) joined += ' ';
    joined += word;
  }
  return joined;
}

}  // namespace tessera::cli
