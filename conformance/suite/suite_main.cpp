// tessera-conformance-suite - the conformance cases for one plugin device.
//
// Note [Conformance process model]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `tessera conformance` (tools/tessera/conformance.cpp) never runs plugin
// code in its own process. It runs this program:
//   --plugin P --describe        JSON: the plugin's info, load report and
//                                devices with their properties;
//   --plugin P --device D --list JSON: every case id with its family, op,
//                                dtype and shape class;
//   --plugin P --device D --events FILE [--gtest_filter=...]
//                                runs cases, appending one JSON line per case
//                                start and end to FILE (written with write(2)
//                                as each happens, so a crash or a hang leaves
//                                the case in flight identifiable).
// The runner watches FILE, kills the child when a case exceeds its time, and
// restarts the rest; a crash or hang becomes that case's failure.
//
// Case ids are "<family>/<name>": the GoogleTest suite name's first part is
// the family (Abi, Device, Memory, Streams, Copies, Ops, Autograd, Random,
// Concurrency, Lifecycle, Perf, Collectives), lower-cased. The collectives
// family runs in several such processes at once, one per rank (Note
// [Conformance collectives] in collectives_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fcntl.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "case_info.h"
#include "target.h"

namespace {

using nlohmann::json;
namespace tc = tessera::conformance;

// Appends JSON lines to a file descriptor as cases start and end.
class EventLog final : public testing::EmptyTestEventListener {
 public:
  explicit EventLog(int fd) : fd_(fd) {}

  void OnTestStart(const testing::TestInfo& info) override {
    start_ = std::chrono::steady_clock::now();
    write_line(json{{"event", "start"}, {"case", tc::case_id(info)}});
  }

  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult& r = *info.result();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
    std::string status = "pass";
    if (r.Skipped()) status = "skip";
    if (r.Failed()) status = "fail";
    std::string message;
    for (int i = 0; i < r.total_part_count(); ++i) {
      const testing::TestPartResult& part = r.GetTestPartResult(i);
      if (part.type() == testing::TestPartResult::kSuccess) continue;
      if (!message.empty()) message += "\n";
      std::string text = part.message();
      if (text.rfind("Failed\n", 0) == 0) text.erase(0, 7);  // FAIL()'s own first line
      message += text;
    }
    if (message.size() > 4000) message = message.substr(0, 4000) + " ...";
    json line{{"event", "end"}, {"case", tc::case_id(info)}, {"status", status}, {"ms", ms}};
    if (!message.empty()) line["message"] = message;
    for (int i = 0; i < r.test_property_count(); ++i) {
      const testing::TestProperty& p = r.GetTestProperty(i);
      if (std::strcmp(p.key(), "error") == 0) line["error"] = std::stod(p.value());
      if (std::strcmp(p.key(), "ms") == 0) line["perf_ms"] = std::stod(p.value());
    }
    write_line(line);
  }

 private:
  void write_line(const json& line) {
    const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

  int fd_;
  std::chrono::steady_clock::time_point start_;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "tessera-conformance-suite: %s\n"
               "usage: tessera-conformance-suite --plugin FILE [--cpu-plugin FILE]\n"
               "         (--describe | --device D (--list | [--events FILE] [gtest flags]))\n"
               "         [--rank R --ranks N --rendezvous FILE] (the collectives family)\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);  // removes the --gtest_* flags
  tc::Target target;
  std::string events;
  std::string victim;
  bool list = false, describe = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
    if (arg == "--plugin") {
      target.plugin_path = value();
    } else if (arg == "--cpu-plugin") {
      target.cpu_plugin = value();
    } else if (arg == "--device") {
      target.device = value();
    } else if (arg == "--events") {
      events = value();
    } else if (arg == "--list") {
      list = true;
    } else if (arg == "--describe") {
      describe = true;
    } else if (arg == "--rank") {
      target.rank = std::atoi(value().c_str());
    } else if (arg == "--ranks") {
      target.ranks = std::atoi(value().c_str());
    } else if (arg == "--rendezvous") {
      target.rendezvous = value();
    } else if (arg == "--victim") {
      victim = value();
    } else {
      return usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  if (target.plugin_path.empty()) return usage("--plugin is required");
  if (describe) {
    tc::set_target(target);
    std::printf("%s\n", tc::describe_plugin().dump(1).c_str());
    return 0;
  }
  if (target.device.empty()) return usage("--device is required");
  if (target.ranks < 1 || target.rank < 0 || target.rank >= target.ranks)
    return usage("--rank R --ranks N needs 0 <= R < N");
  tc::set_target(target);
  if (!victim.empty()) tc::run_victim(victim);
  if (list) {
    std::printf("%s\n", tc::list_cases().dump(1).c_str());
    return 0;
  }
  if (!events.empty()) {
    const int fd = ::open(events.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return usage(("cannot open --events file " + events).c_str());
    testing::UnitTest::GetInstance()->listeners().Append(new EventLog(fd));
  }
  return RUN_ALL_TESTS();
}
