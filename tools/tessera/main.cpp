/*
 * The `tessera` command: entry point. Parses the command line with CLI11,
 * answers --version ("tessera 0.1.0 (plugin ABI 1.0)": the library's version
 * and the plugin ABI this tool was built against), and runs the chosen
 * subcommand (devices.cpp, info.cpp). Exit codes (common.h): 0 success, 1 a
 * runtime call failed, 2 bad usage or an unknown name. No exception escapes: a
 * failed tsr_* call prints "tessera: <CODE>: <message>", a bad flag prints the
 * error and CLI11's usage text.
 */
#include <cstdio>
#include <exception>
#include <vector>

#include <fmt/core.h>

#include "common.h"
#include "tessera/plugin.h"

namespace {

int run(int argc, char** argv) {
  using namespace tessera::cli;
  CLI::App app{"tessera: inspect the Tessera tensor runtime - plugins, devices, operators",
               "tessera"};
  app.failure_message(CLI::FailureMessage::help);
  app.footer(
      "Plugins are searched in --plugin-path, then TESSERA_PLUGIN_PATH, then the tessera/\n"
      "directory next to libtessera.\n"
      "Exit codes: 0 success, 1 a runtime call failed, 2 bad usage or an unknown name.");
  app.add_flag_callback(
      "--version",
      [] {
        fmt::print("tessera {} (plugin ABI {}.{})\n", tsr_version_string(), TSR_PLUGIN_ABI_MAJOR,
                   TSR_PLUGIN_ABI_MINOR);
        throw CLI::Success();
      },
      "Print the library version and plugin ABI, then exit");

  const std::vector<Command> commands = {add_devices_command(app), add_info_command(app),
                                         add_conformance_command(app), add_run_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  fmt::print(stderr, "tessera: a command is required\n{}", app.help());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const tessera::cli::Error& error) {
    tessera::cli::print_error(error);
  } catch (const std::exception& error) {
    fmt::print(stderr, "tessera: INTERNAL: {}\n", error.what());
  }
  return tessera::cli::kExitFailure;
}
