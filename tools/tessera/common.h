/*
 * Shared plumbing of the `tessera` subcommands. A failed tsr_* call becomes a
 * `tessera::cli::Error` (code + message, the status already freed) thrown by
 * check(); main() prints every uncaught one the same way, "tessera: <CODE>:
 * <message>", and exits with kExitFailure. Also here: the exit codes, the
 * runtime options every subcommand accepts (--plugin, --plugin-path) and the
 * formatters the commands share (device ids, dtype masks, byte counts).
 *
 * Everything goes through the application API (tessera.h); nothing here knows
 * the core's internals.
 */
#ifndef TESSERA_TOOLS_TESSERA_COMMON_H_
#define TESSERA_TOOLS_TESSERA_COMMON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tessera/tessera.h"

namespace tessera::cli {

// Exit codes of the command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // a tsr_* call failed (runtime, query)
inline constexpr int kExitUsage = 2;    // bad usage, or a name (op) that does not exist

// A failed tsr_* call: its code and message. what() is "<CODE>: <message>".
class Error : public std::runtime_error {
 public:
  Error(tsr_status_code code, const std::string& message);
  tsr_status_code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  tsr_status_code code_;
  std::string message_;
};

// Takes ownership of `status` and frees it; throws Error when it is not OK.
void check(tsr_status* status);

// Prints "tessera: <CODE>: <message>" on stderr.
void print_error(const Error& error);

struct RuntimeDeleter {
  void operator()(tsr_runtime* runtime) const noexcept { tsr_runtime_destroy(runtime); }
};
using Runtime = std::unique_ptr<tsr_runtime, RuntimeDeleter>;

// How a subcommand builds its runtime: the default plugin scan, with extra
// directories searched first (--plugin-path), then explicit files (--plugin).
struct RuntimeOptions {
  std::vector<std::string> plugins;
  std::string plugin_path;

  // Adds --plugin and --plugin-path to `command`.
  void add_to(CLI::App& command);
};

// Creates the runtime described by `options`. A --plugin file that fails to
// load is printed on stderr (and is in the runtime's load report) but does not
// fail creation; only tsr_runtime_create's own failure throws Error.
Runtime create_runtime(const RuntimeOptions& options);

// "cpu:0" via tsr_device_format.
std::string device_string(const tsr_runtime* runtime, tsr_device device);

// Every device of `runtime`, in enumeration order.
std::vector<tsr_device> list_devices(const tsr_runtime* runtime);

// "primitive", "composite", "view", "factory"; "kind<N>" for a newer kind.
std::string op_kind_name(tsr_op_kind kind);

// Names of the dtypes set in a TSR_DTYPE_BIT mask, in enum order; a bit this
// library has no name for prints as "dtype<N>".
std::vector<std::string> dtype_names(uint64_t mask);

// Names of TSR_COLLECTIVE_* bits ("all_reduce", ..., "send/recv") and of
// the reduce-op bits of tsr_device_collectives ("sum", ..., "avg").
std::vector<std::string> collective_names(uint32_t bits);
std::vector<std::string> reduce_op_names(uint32_t bits);

// Names of TSR_FEATURE_* bits; unknown bits print as hex.
std::vector<std::string> feature_names(uint32_t features);

// "23.4 GiB", "512.0 MiB", "4096 bytes"; "unknown" for 0.
std::string format_bytes(uint64_t bytes);

// "a b c"; `none` when `words` is empty.
std::string join(const std::vector<std::string>& words, const std::string& none = "none");

// A subcommand registered on the root app; `run` is called when it was chosen
// and returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_devices_command(CLI::App& root);      // devices.cpp
Command add_info_command(CLI::App& root);         // info.cpp
Command add_conformance_command(CLI::App& root);  // conformance.cpp
Command add_run_command(CLI::App& root);          // run.cpp

}  // namespace tessera::cli

#endif  // TESSERA_TOOLS_TESSERA_COMMON_H_
