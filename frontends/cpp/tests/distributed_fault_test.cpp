// Faults of distributed runs, and bad input through tessera.h's
// process-group calls: every one an error, never a hang or a crash.
//  - bad arguments name the argument (C ABI, one process);
//  - a rank that stops (issues nothing) makes the other fail within the
//    group's timeout, and the group stays failed;
//  - a rank that dies (a child process, _exit mid-run) makes the other fail
//    promptly;
//  - `tessera run` stops every rank when one fails, exits 1 naming it, and
//    leaves no process behind.
// Ranks are threads of this process (two groups over one TCP store) or
// children running this program again with TESSERA_FAULT_ROLE set.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tessera/distributed.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace dist = tessera::distributed;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Outcome {
  tsr_status_code code = TSR_OK;
  std::string message;
};
Outcome take(tsr_status* s) {
  Outcome o;
  if (s != nullptr) {
    o.code = tsr_status_code_of(s);
    o.message = tsr_status_message(s);
    tsr_status_free(s);
  }
  return o;
}

#define EXPECT_BAD(call, want_code, needle)                              \
  do {                                                                   \
    const Outcome o_ = take(call);                                       \
    EXPECT_EQ(o_.code, want_code) << #call << ": " << o_.message;        \
    EXPECT_NE(o_.message.find(needle), std::string::npos) << o_.message; \
  } while (0)

tsr_process_group_options options(int64_t timeout_ms) {
  tsr_process_group_options o{};
  o.struct_size = sizeof o;
  o.timeout_ms = timeout_ms;
  o.check_headers = -1;
  return o;
}

// A TCP store served here and a second client of it.
struct Stores {
  tsr_store* server = nullptr;
  tsr_store* client = nullptr;
  uint16_t port = 0;
  Stores() {
    EXPECT_EQ(take(tsr_store_create_tcp(nullptr, 0, true, 20000, &server)).message, "");
    EXPECT_EQ(take(tsr_store_port(server, &port)).message, "");
    EXPECT_EQ(take(tsr_store_create_tcp("127.0.0.1", port, false, 20000, &client)).message, "");
  }
  ~Stores() {
    tsr_store_destroy(client);
    tsr_store_destroy(server);
  }
};

dist::ProcessGroup make_group(tsr_store* store, int rank, int size, int64_t timeout_ms) {
  tsr_process_group* g = nullptr;
  const tsr_process_group_options o = options(timeout_ms);
  tessera::check(tsr_process_group_create(tessera::default_runtime(), store, rank, size, &o, &g));
  return dist::ProcessGroup::adopt(g);
}

TEST(DistributedBadInput, EveryCallNamesItsArgument) {
  tsr_runtime* rt = tessera::default_runtime();
  tsr_process_group* g = nullptr;
  const tsr_process_group_options o = options(5000);
  EXPECT_BAD(tsr_process_group_create(rt, nullptr, 0, 1, &o, &g), TSR_INVALID_ARGUMENT,
             "argument 'store'");
  Stores s;
  EXPECT_BAD(tsr_process_group_create(rt, s.server, 0, 1, &o, nullptr), TSR_INVALID_ARGUMENT,
             "out_group");
  EXPECT_BAD(tsr_process_group_create(nullptr, s.server, 0, 1, &o, &g), TSR_INVALID_ARGUMENT,
             "runtime");
  EXPECT_BAD(tsr_process_group_create(rt, s.server, 2, 2, &o, &g), TSR_INVALID_ARGUMENT,
             "argument 'rank' is 2");
  EXPECT_BAD(tsr_process_group_create(rt, s.server, 0, 0, &o, &g), TSR_INVALID_ARGUMENT,
             "argument 'world_size' is 0");
  tsr_process_group_options bad = o;
  bad.backend = "carrier-pigeon";
  EXPECT_BAD(tsr_process_group_create(rt, s.server, 0, 1, &bad, &g), TSR_INVALID_ARGUMENT,
             "options.backend is 'carrier-pigeon'");
  bad = o;
  bad.struct_size = 4;
  EXPECT_BAD(tsr_process_group_create(rt, s.server, 0, 1, &bad, &g), TSR_INVALID_ARGUMENT,
             "struct_size 4");
  EXPECT_BAD(tsr_process_group_init(rt, "udp://x:1", 0, 1, &o, &g), TSR_INVALID_ARGUMENT,
             "init_method 'udp://x:1'");
  EXPECT_BAD(tsr_process_group_init(rt, "tcp://localhost:99999", 0, 1, &o, &g),
             TSR_INVALID_ARGUMENT, "not a port");
  EXPECT_EQ(g, nullptr);

  ASSERT_EQ(take(tsr_process_group_create(rt, s.server, 0, 1, &o, &g)).message, "");
  EXPECT_BAD(tsr_all_reduce(g, nullptr, TSR_DIST_SUM, nullptr), TSR_INVALID_ARGUMENT, "'tensor'");
  tessera::Tensor t = tessera::ones({3});
  EXPECT_BAD(tsr_all_reduce(g, t.get(), 9, nullptr), TSR_INVALID_ARGUMENT, "argument 'op' is 9");
  EXPECT_BAD(tsr_send(g, t.get(), 0, nullptr), TSR_INVALID_ARGUMENT, "this rank itself");
  EXPECT_BAD(tsr_all_reduce(nullptr, t.get(), TSR_DIST_SUM, nullptr), TSR_INVALID_ARGUMENT,
             "argument 'group' is NULL");
  tsr_process_group* sub = nullptr;
  EXPECT_BAD(tsr_process_group_new_group(g, nullptr, 2, &o, &sub), TSR_INVALID_ARGUMENT,
             "'ranks' is NULL");
  const int32_t twice[] = {0, 0};
  EXPECT_BAD(tsr_process_group_new_group(g, twice, 2, &o, &sub), TSR_INVALID_ARGUMENT,
             "appears twice");
  EXPECT_BAD(tsr_work_wait(nullptr, 0), TSR_INVALID_ARGUMENT, "'work'");
  // A world of one: every collective is the identity.
  tsr_work* w = nullptr;
  ASSERT_EQ(take(tsr_all_reduce(g, t.get(), TSR_DIST_SUM, &w)).message, "");
  EXPECT_EQ(take(tsr_work_wait(w, -1)).message, "");
  tsr_work_destroy(w);
  EXPECT_EQ(t.sum().item<double>(), 3.0);
  tsr_process_group_destroy(g);
  // A destroyed handle is refused, not used.
  EXPECT_BAD(tsr_all_reduce(g, t.get(), TSR_DIST_SUM, nullptr), TSR_INVALID_ARGUMENT,
             "not a live process group");
}

TEST(DistributedFaults, PeerThatStopsFailsTheOtherWithinTheTimeout) {
  Stores s;
  const int64_t timeout_ms = 1500;
  std::future<dist::ProcessGroup> other =
      std::async(std::launch::async, [&] { return make_group(s.client, 1, 2, timeout_ms); });
  dist::ProcessGroup g = make_group(s.server, 0, 2, timeout_ms);
  dist::ProcessGroup peer = other.get();  // created, and then issues nothing
  tessera::Tensor t = tessera::ones({8});
  const auto start = Clock::now();
  try {
    dist::all_reduce(t, dist::ReduceOp::SUM, g);
    FAIL() << "an all_reduce without its peer completed";
  } catch (const tessera::Error& e) {
    EXPECT_TRUE(e.code() == TSR_DEADLINE_EXCEEDED || e.code() == TSR_UNAVAILABLE)
        << e.code_name() << ": " << e.what();
  }
  const auto took = Clock::now() - start;
  EXPECT_LT(took, 12s) << "the group's timeout is 1.5 s";
  EXPECT_GE(took, 1s);
  // The group is failed from now on, saying why.
  try {
    dist::all_reduce(t, dist::ReduceOp::SUM, g);
    FAIL() << "a failed group ran a collective";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), TSR_FAILED_PRECONDITION) << e.what();
    EXPECT_NE(std::string(e.what()).find("failed earlier"), std::string::npos) << e.what();
  }
}

TEST(DistributedFaults, WaitPastTheTimeoutAbortsTheGroup) {
  // A wait shorter than the group's timeout gives up on its own and aborts
  // the group; the engine's blocked call ends at the group's timeout (Gloo
  // cannot be interrupted), so destroying the group takes at most that.
  Stores s;
  const int64_t timeout_ms = 3000;
  std::future<dist::ProcessGroup> other =
      std::async(std::launch::async, [&] { return make_group(s.client, 1, 2, timeout_ms); });
  dist::ProcessGroup g = make_group(s.server, 0, 2, timeout_ms);
  dist::ProcessGroup peer = other.get();
  tessera::Tensor t = tessera::ones({8});
  dist::Work w = dist::all_reduce(t, dist::ReduceOp::SUM, g, /*async_op=*/true);
  const auto start = Clock::now();
  try {
    w.wait(200ms);
    FAIL() << "a wait without the peer returned";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), TSR_DEADLINE_EXCEEDED) << e.what();
    EXPECT_NE(std::string(e.what()).find("process group is aborted"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(Clock::now() - start, 2900ms) << "the wait's own 0.2 s came first";
  // The aborted group refuses new work at once.
  try {
    dist::all_reduce(t, dist::ReduceOp::SUM, g);
    FAIL() << "an aborted group ran a collective";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), TSR_FAILED_PRECONDITION) << e.what();
  }
}

// The child roles (this program run again).
int child_main(const std::string& role) {
  if (role == "die") {
    // Rank 1 of a world of 2: one good all_reduce, then gone mid-run.
    dist::InitOptions o;
    o.timeout = 30s;
    dist::init_process_group("gloo", o);
    tessera::Tensor t = tessera::ones({1024});
    dist::all_reduce(t);
    std::fflush(stdout);
    ::_exit(7);
  }
  if (role == "launcher") {
    // Under `tessera run -n 3`: rank 1 fails; the others block in an all_reduce
    // that can never complete until the launcher stops them.
    std::printf("pid %d\n", static_cast<int>(::getpid()));
    std::fflush(stdout);
    dist::InitOptions o;
    o.timeout = 600s;
    dist::init_process_group("gloo", o);
    if (dist::get_rank() == 1) ::_exit(3);
    tessera::Tensor t = tessera::ones({4});
    dist::all_reduce(t);
    return 0;
  }
  std::fprintf(stderr, "unknown TESSERA_FAULT_ROLE '%s'\n", role.c_str());
  return 2;
}

std::string self_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

TEST(DistributedFaults, PeerThatDiesFailsTheOtherPromptly) {
  Stores s;
  // Everything the child needs is made before fork (only execve after it).
  const std::string self = self_path();
  std::vector<std::string> env_strings = {"TESSERA_FAULT_ROLE=die", "MASTER_ADDR=127.0.0.1",
                                          "MASTER_PORT=" + std::to_string(s.port), "RANK=1",
                                          "WORLD_SIZE=2"};
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(self.c_str()), nullptr};
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execve(self.c_str(), argv, envp.data());
    ::_exit(127);
  }
  // Rank 0 over the store served here (env:// would serve it in rank 0).
  tsr_process_group* raw = nullptr;
  const tsr_process_group_options o = options(30000);
  // init_process_group's join counter: rank 0 joins through the store too.
  int64_t joined = 0;
  ASSERT_EQ(take(tsr_store_add(s.server, "init/joined", 1, &joined)).message, "");
  if (joined == 2) {
    ASSERT_EQ(take(tsr_store_set(s.server, "init/done", "1", 1)).message, "");
  }
  const char* const done_key[] = {"init/done"};
  ASSERT_EQ(take(tsr_store_wait(s.server, done_key, 1, 20000)).message, "");
  ASSERT_EQ(
      take(tsr_process_group_create(tessera::default_runtime(), s.server, 0, 2, &o, &raw)).message,
      "");
  dist::ProcessGroup g = dist::ProcessGroup::adopt(raw);
  tessera::Tensor t = tessera::ones({1024});
  dist::all_reduce(t, dist::ReduceOp::SUM, g);
  EXPECT_EQ(t.sum().item<double>(), 2048.0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  const auto start = Clock::now();
  try {
    dist::all_reduce(t, dist::ReduceOp::SUM, g);
    FAIL() << "an all_reduce with a dead peer completed";
  } catch (const tessera::Error& e) {
    EXPECT_TRUE(e.code() == TSR_UNAVAILABLE || e.code() == TSR_DEADLINE_EXCEEDED)
        << e.code_name() << ": " << e.what();
    std::printf("error seen by rank 0: %s: %s\n", e.code_name(), e.what());
  }
  EXPECT_LT(Clock::now() - start, 35s);
}

TEST(DistributedFaults, LauncherStopsEveryRankWhenOneFails) {
  const std::string cmd = std::string("TESSERA_FAULT_ROLE=launcher ") + TESSERA_CLI_PATH +
                          " run -n 3 --grace 2 -- " + self_path() + " 2>&1";
  const auto start = Clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = ::pclose(p);
  EXPECT_LT(Clock::now() - start, 60s);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("tessera run: FAILED: rank 1 ended with exit 3 (world size 3)"),
            std::string::npos)
      << out;
  // Every rank's output came prefixed, and none of them outlived the launcher.
  int pids = 0;
  for (size_t at = out.find("]: pid "); at != std::string::npos; at = out.find("]: pid ", at + 1)) {
    const int pid = std::atoi(out.c_str() + at + 7);
    ++pids;
    EXPECT_NE(::kill(pid, 0), 0) << "rank process " << pid << " is still alive";
  }
  EXPECT_EQ(pids, 3) << out;
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(out.find("[rank" + std::to_string(r) + "]: pid "), std::string::npos) << out;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* role = std::getenv("TESSERA_FAULT_ROLE")) return child_main(role);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
