// See run_command.h.
#include "run_command.h"

#include <sys/wait.h>

#include <cstdio>

#include <gtest/gtest.h>

namespace tessera::test {

CommandResult run_command(const std::string& command) {
  CommandResult run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed for: " << command;
    return run;
  }
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

nlohmann::json junit_summary(const std::string& file) {
  const std::string command =
      std::string("python3 '") + TESSERA_JUNIT_SUMMARY + "' '" + file + "' 2>&1";
  const CommandResult run = run_command(command);
  if (run.exit_code != 0) {
    ADD_FAILURE() << command << " failed (exit code " << run.exit_code << "): " << run.out;
    return nullptr;
  }
  return nlohmann::json::parse(run.out);
}

}  // namespace tessera::test
