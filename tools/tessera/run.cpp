/*
 * `tessera run`: the launcher of a distributed program, in the manner of
 * torchrun. Starts -n local ranks of PROGRAM with PyTorch's env:// variables
 * (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * GROUP_RANK), prefixes every line a rank prints with "[rankN]: ", forwards
 * SIGINT / SIGTERM / SIGHUP to the ranks, and when one rank fails stops the
 * others (SIGTERM, then SIGKILL after --grace seconds) and exits 1 naming the
 * rank and how it ended. Several hosts: run `tessera run` on each with
 * --nnodes, --node-rank and rank 0's --master-addr / --master-port.
 *
 * Note [Launcher process model]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Each rank is a child in its own process group (setpgid), so a signal
 * reaches the rank and anything it started, and no rank outlives the
 * launcher's stop: the launcher waits for every child it started before it
 * exits. A rank's stdout and stderr are pipes the launcher reads with
 * poll(); partial lines are held until their newline (or the rank's end), so
 * two ranks' lines never interleave within a line. Signals arrive through a
 * self-pipe, so the loop that reads output also sees them.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "child_process.h"
#include "common.h"

namespace tessera::cli {
namespace {

struct Options {
  int nproc = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free port (one node only)
  double grace_s = 5;
  bool no_prefix = false;
  std::vector<std::string> program;
};

int signal_pipe[2] = {-1, -1};

void on_signal(int signo) {
  const unsigned char b = static_cast<unsigned char>(signo);
  [[maybe_unused]] ssize_t n = ::write(signal_pipe[1], &b, 1);
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(TSR_UNAVAILABLE, fmt::format("socket: {}", std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(TSR_UNAVAILABLE, fmt::format("could not find a free port: {}", std::strerror(e)));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Rank {
  int rank = 0;
  int local_rank = 0;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  std::string out_buf, err_buf;
  std::optional<ExitInfo> exit;
};

ExitInfo exit_info(int status) {
  ExitInfo info;
  if (WIFSIGNALED(status)) {
    info.signaled = true;
    info.signal = WTERMSIG(status);
  } else {
    info.code = WEXITSTATUS(status);
  }
  return info;
}

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

pid_t spawn(const std::vector<std::string>& program, const std::vector<std::string>& env,
            int* out_fd, int* err_fd) {
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0)
    throw Error(TSR_UNAVAILABLE, fmt::format("pipe: {}", std::strerror(errno)));
  set_cloexec(out[0]);
  set_cloexec(err[0]);
  std::vector<char*> argv;
  for (const std::string& a : program) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(TSR_UNAVAILABLE, fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::close(err[0]);
    ::close(err[1]);
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    ::execvp(argv[0], argv.data());
    fmt::print(stderr, "tessera run: cannot start '{}': {}\n", program[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with a signal sent before the child ran
  ::close(out[1]);
  ::close(err[1]);
  *out_fd = out[0];
  *err_fd = err[0];
  return pid;
}

// Prints the complete lines of `buf` (all of it when `flush`) with the prefix.
void emit(std::string& buf, std::FILE* to, const std::string& prefix, bool flush) {
  size_t start = 0;
  for (;;) {
    const size_t nl = buf.find('\n', start);
    if (nl == std::string::npos) break;
    fmt::print(to, "{}{}\n", prefix, std::string_view(buf).substr(start, nl - start));
    start = nl + 1;
  }
  buf.erase(0, start);
  if (flush && !buf.empty()) {
    fmt::print(to, "{}{}\n", prefix, buf);
    buf.clear();
  }
  std::fflush(to);
}

// Reads what is there; false at EOF (the fd is closed and set to -1).
bool drain(int& fd, std::string& buf) {
  char chunk[65536];
  const ssize_t n = ::read(fd, chunk, sizeof chunk);
  if (n > 0) {
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  ::close(fd);
  fd = -1;
  return false;
}

int launch(const Options& o) {
  if (o.program.empty())
    throw Error(TSR_INVALID_ARGUMENT,
                "tessera run: give the program after --: tessera run -n 2 -- ./train");
  if (o.nproc < 1)
    throw Error(TSR_INVALID_ARGUMENT, fmt::format("-n is {}; give at least 1", o.nproc));
  if (o.nnodes < 1 || o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw Error(TSR_INVALID_ARGUMENT,
                fmt::format("--node-rank {} of --nnodes {}: need 0 <= node-rank < nnodes",
                            o.node_rank, o.nnodes));
  if (o.nnodes > 1 && o.master_port == 0)
    throw Error(
        TSR_INVALID_ARGUMENT,
        "--nnodes > 1 needs --master-port (and --master-addr): every host must name the same port");
  const int port = o.master_port != 0 ? o.master_port : free_port();
  const int world = o.nproc * o.nnodes;

  if (::pipe(signal_pipe) != 0) throw Error(TSR_UNAVAILABLE, "pipe for signals failed");
  set_cloexec(signal_pipe[0]);
  set_cloexec(signal_pipe[1]);
  ::fcntl(signal_pipe[0], F_SETFL, O_NONBLOCK);
  ::fcntl(signal_pipe[1], F_SETFL, O_NONBLOCK);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::vector<Rank> ranks(static_cast<size_t>(o.nproc));
  for (int i = 0; i < o.nproc; ++i) {
    Rank& r = ranks[static_cast<size_t>(i)];
    r.local_rank = i;
    r.rank = o.node_rank * o.nproc + i;
    const std::vector<std::string> env = {
        "MASTER_ADDR=" + o.master_addr,
        fmt::format("MASTER_PORT={}", port),
        fmt::format("WORLD_SIZE={}", world),
        fmt::format("RANK={}", r.rank),
        fmt::format("LOCAL_RANK={}", i),
        fmt::format("LOCAL_WORLD_SIZE={}", o.nproc),
        fmt::format("GROUP_RANK={}", o.node_rank),
    };
    r.pid = spawn(o.program, env, &r.out_fd, &r.err_fd);
  }

  using clock = std::chrono::steady_clock;
  std::optional<clock::time_point> stop_at;  // when SIGKILL follows the SIGTERM
  int failed_rank = -1;
  std::string failure;
  int stop_signal = 0;
  auto signal_all = [&](int signo) {
    for (const Rank& r : ranks)
      if (!r.exit) ::kill(-r.pid, signo);
  };
  auto begin_stop = [&] {
    if (stop_at) return;
    signal_all(SIGTERM);
    stop_at = clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.grace_s * 1000));
  };

  for (;;) {
    bool open = false;
    for (const Rank& r : ranks) open = open || r.out_fd >= 0 || r.err_fd >= 0 || !r.exit;
    if (!open) break;
    std::vector<pollfd> fds;
    fds.push_back({signal_pipe[0], POLLIN, 0});
    for (const Rank& r : ranks) {
      if (r.out_fd >= 0) fds.push_back({r.out_fd, POLLIN, 0});
      if (r.err_fd >= 0) fds.push_back({r.err_fd, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 100);
    if (fds[0].revents & POLLIN) {
      unsigned char b = 0;
      while (::read(signal_pipe[0], &b, 1) == 1) {
        stop_signal = b;
        signal_all(b);  // forwarded as is; a second one escalates below
      }
      if (!stop_at)
        stop_at = clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.grace_s * 1000));
    }
    for (Rank& r : ranks) {
      const std::string prefix = o.no_prefix ? "" : fmt::format("[rank{}]: ", r.rank);
      for (const pollfd& p : fds) {
        if (p.revents == 0 || p.fd == signal_pipe[0]) continue;
        if (p.fd == r.out_fd) {
          if (!drain(r.out_fd, r.out_buf)) emit(r.out_buf, stdout, prefix, true);
          emit(r.out_buf, stdout, prefix, false);
        } else if (p.fd == r.err_fd) {
          if (!drain(r.err_fd, r.err_buf)) emit(r.err_buf, stderr, prefix, true);
          emit(r.err_buf, stderr, prefix, false);
        }
      }
      if (!r.exit) {
        int status = 0;
        const pid_t got = ::waitpid(r.pid, &status, WNOHANG);
        if (got == r.pid) {
          r.exit = exit_info(status);
          // Anything the rank started stops with it.
          ::kill(-r.pid, SIGKILL);
          const bool ok = !r.exit->signaled && r.exit->code == 0;
          if (!ok && failed_rank < 0 && stop_signal == 0) {
            failed_rank = r.rank;
            failure = r.exit->describe();
            fmt::print(stderr,
                       "tessera run: rank {} (local rank {}, pid {}) failed: {}; stopping the "
                       "other ranks\n",
                       r.rank, r.local_rank, r.pid, failure);
            begin_stop();
          }
        }
      }
    }
    if (stop_at && clock::now() >= *stop_at) {
      signal_all(SIGKILL);
      stop_at = clock::time_point::max();
    }
  }
  ::close(signal_pipe[0]);
  ::close(signal_pipe[1]);
  if (failed_rank >= 0) {
    fmt::print(stderr, "tessera run: FAILED: rank {} ended with {} (world size {})\n", failed_rank,
               failure, world);
    return kExitFailure;
  }
  if (stop_signal != 0) {
    fmt::print(stderr, "tessera run: stopped by signal {} ({})\n", stop_signal,
               ::strsignal(stop_signal));
    return 128 + stop_signal;
  }
  return kExitOk;
}

}  // namespace

Command add_run_command(CLI::App& root) {
  auto options = std::make_shared<Options>();
  CLI::App* command = root.add_subcommand(
      "run", "Launch a distributed program: N local ranks with env:// variables (as torchrun)");
  command->add_option("-n,--nproc-per-node", options->nproc, "Ranks to start on this host")
      ->check(CLI::PositiveNumber);
  command->add_option("--nnodes", options->nnodes, "Hosts taking part (default 1)");
  command->add_option("--node-rank", options->node_rank, "This host's index, 0 .. nnodes-1");
  command->add_option("--master-addr", options->master_addr,
                      "Rank 0's host, where the TCP store runs (default 127.0.0.1)");
  command->add_option("--master-port", options->master_port,
                      "The store's port (default: a free port; needed with --nnodes > 1)");
  command->add_option("--grace", options->grace_s,
                      "Seconds between SIGTERM and SIGKILL when stopping ranks (default 5)");
  command->add_flag("--no-prefix", options->no_prefix, "Do not prefix output lines with [rankN]:");
  command->add_option("PROGRAM", options->program, "The program and its arguments, after --")
      ->required();
  command->positionals_at_end();
  command->footer(
      "Every rank gets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
      "GROUP_RANK. Exit: 0 when every rank exits 0; 1 naming the first rank that failed; 128+N\n"
      "when stopped by signal N.");
  return {command, [options] { return launch(*options); }};
}

}  // namespace tessera::cli
