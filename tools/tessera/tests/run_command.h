// Child processes for the tests of the `tessera` command (cli_test,
// conformance_test, junit_test): one way to run a shell command and read what
// it printed, and one reading of a JUnit file by a conforming XML parser.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tessera::test {

struct CommandResult {
  int exit_code = -1;  // the command's exit status; 128 + N when signal N ended it
  std::string out;     // everything it wrote to stdout
};

// Runs `command` (shell syntax) through /bin/sh and waits for it. stderr is
// left to `command` (append "2>&1" to read it with stdout). Never throws; a
// shell that cannot be started fails the current test (ADD_FAILURE) and
// returns exit_code -1.
CommandResult run_command(const std::string& command);

// junit_summary.py's JSON for the JUnit XML file `file`, read with Python's
// xml.etree (expat): a file that is not well-formed fails. Returns null and
// fails the current test, naming the command and its output, when Python
// could not read it.
nlohmann::json junit_summary(const std::string& file);

}  // namespace tessera::test
