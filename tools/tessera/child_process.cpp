/*
 * child_process.cpp - posix_spawn, waitpid(WNOHANG), SIGKILL.
 */
#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tessera::cli {
namespace {

ExitInfo decode(int status) {
  ExitInfo e;
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  } else {
    e.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return e;
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& stdout_path,
            const std::string& stderr_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

std::string ExitInfo::describe() const {
  if (!signaled) return "exit " + std::to_string(code);
  const char* name = strsignal(signal);
  return "signal " + std::to_string(signal) + " (" + (name != nullptr ? name : "?") + ")";
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path)
    : pid_(spawn(argv, log_path, log_path)) {}

ChildProcess::~ChildProcess() {
  if (done_ || pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::optional<ExitInfo> ChildProcess::poll() {
  if (done_) return done_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) done_ = decode(status);
  return done_;
}

ExitInfo ChildProcess::wait() {
  while (!done_) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_) done_ = decode(status);
    if (r < 0 && errno != EINTR) done_ = ExitInfo{false, -1, 0};
  }
  return *done_;
}

void ChildProcess::kill() {
  if (!done_ && pid_ > 0) ::kill(pid_, SIGKILL);
}

std::string run_capture(const std::vector<std::string>& argv, const std::string& log_path,
                        double timeout_s) {
  const std::string out_path = log_path + ".stdout";
  ::unlink(out_path.c_str());
  pid_t pid = spawn(argv, out_path, log_path);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw std::runtime_error("waitpid failed for " + argv[0]);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
        timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw std::runtime_error(argv[0] + " " + (argv.size() > 1 ? argv[1] : "") +
                               " did not finish within " + std::to_string(timeout_s) +
                               " s (killed); its log: " + log_path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream in(out_path);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(out_path.c_str());
  const ExitInfo e = decode(status);
  if (e.signaled || e.code != 0)
    throw std::runtime_error(argv[0] + " ended with " + e.describe() + "; its log: " + log_path);
  return text.str();
}

}  // namespace tessera::cli
