/*
 * child_process.h - running a program as a child with its output in a file,
 * polled without blocking, killed on request. What `tessera conformance`
 * needs to keep plugin code out of its own process (Note [Conformance
 * process model] in conformance/suite/suite_main.cpp).
 */
#ifndef TESSERA_TOOLS_TESSERA_CHILD_PROCESS_H_
#define TESSERA_TOOLS_TESSERA_CHILD_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace tessera::cli {

// How a child ended.
struct ExitInfo {
  bool signaled = false;
  int code = 0;    // exit status when !signaled
  int signal = 0;  // terminating signal when signaled
  // "exit 1", "signal 11 (Segmentation fault)".
  std::string describe() const;
};

// A running child. Invariant: pid > 0 until wait() or poll() reports its
// end; the destructor kills and reaps a child still running.
class ChildProcess {
 public:
  // Starts `argv` (argv[0] a path) with stdin from /dev/null and stdout and
  // stderr appended to `log_path`. Throws std::runtime_error naming the
  // program and errno's text when it cannot start.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit info once the child ended; nullopt while it runs.
  std::optional<ExitInfo> poll();
  // Blocks until the child ends.
  ExitInfo wait();
  // SIGKILL (the child is reaped by the next poll/wait).
  void kill();

 private:
  pid_t pid_ = -1;
  std::optional<ExitInfo> done_;
};

// Runs `argv` to completion with a time limit, returning its stdout (stderr
// goes to `log_path`). Throws std::runtime_error when it cannot start, is
// killed by the limit, or exits non-zero (naming the exit and the log).
std::string run_capture(const std::vector<std::string>& argv, const std::string& log_path,
                        double timeout_s);

}  // namespace tessera::cli

#endif  // TESSERA_TOOLS_TESSERA_CHILD_PROCESS_H_
