/*
 * `tessera conformance` - judges plugins against the contract, case by case,
 * and writes a report a vendor can publish.
 *
 * The plugin code never runs in this process (Note [Conformance process
 * model], conformance/suite/suite_main.cpp): every step - describing a
 * plugin, listing cases, running them - is a tessera-conformance-suite child.
 * Cases run in units (one family of one device, at most kUnitCases cases)
 * under a watchdog that reads the child's event file: a case that outlives
 * --timeout is killed and reported as a failure, a crash fails the case in
 * flight, and the unit restarts with the cases left. Expectations
 * (conformance/expectations/<plugin>.json) turn known gaps into unsupported
 * (not run) and xfail (run; a pass becomes xpass, which fails the run).
 *
 * Exit codes: 0 nothing failed; 1 a case failed or xpassed, a plugin failed
 * to load, or a requested plugin/device is absent; 2 bad usage.
 */
#include <dlfcn.h>
#include <fnmatch.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "child_process.h"
#include "common.h"
#include "conformance_report.h"
#include "tessera/plugin.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kUnitCases = 400;  // cases per child at most (filter length, parallelism)

struct Options {
  std::vector<std::string> plugins;
  std::string plugin_path;
  std::vector<std::string> devices;
  std::vector<std::string> families;
  std::vector<std::string> filters;
  std::vector<std::string> ops;
  std::vector<std::string> dtypes;
  std::string report_dir;
  std::string junit_file;
  std::string expectations_dir;
  int jobs = 0;
  double timeout_s = 120;
  bool skip_xfail = false;
  bool list_only = false;
  bool perf = false;
  std::string baseline;
  std::string save_baseline;
  double perf_threshold = 1.5;
  int ranks = 2;  // processes of a collectives unit
};

std::string this_exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// The suite program: $TESSERA_CONFORMANCE_SUITE, else next to this program.
std::string suite_program() {
  if (const char* env = std::getenv("TESSERA_CONFORMANCE_SUITE")) return env;
  for (const fs::path& p :
       {fs::path(this_exe_dir()) / "tessera-conformance-suite",
        fs::path(this_exe_dir()) / ".." / "bin" / "tessera-conformance-suite"}) {
    if (fs::exists(p)) return fs::canonical(p).string();
  }
  throw Error(TSR_NOT_FOUND, "tessera-conformance-suite not found next to " + this_exe_dir() +
                                 "; set TESSERA_CONFORMANCE_SUITE to its path");
}

// Where libtessera looks for plugins by default: tessera/ next to it.
std::string default_plugin_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&tsr_version_string), &info) && info.dli_fname)
    return (fs::path(info.dli_fname).parent_path() / "tessera").string();
  return {};
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

// Plugin files in the search order tsr_runtime_load_plugins uses.
std::vector<std::string> discover_plugins(const Options& o) {
  std::vector<std::string> dirs = split(o.plugin_path, ':');
  if (const char* env = std::getenv("TESSERA_PLUGIN_PATH"))
    for (const std::string& d : split(env, ':')) dirs.push_back(d);
  dirs.push_back(default_plugin_dir());
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (d.empty() || !fs::is_directory(d, ec)) continue;
    std::vector<std::string> here;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("libtessera-", 0) == 0 && e.path().extension() == ".so")
        here.push_back(fs::canonical(e.path()).string());
    }
    std::sort(here.begin(), here.end());
    for (const std::string& p : here)
      if (seen.insert(p).second) out.push_back(p);
  }
  return out;
}

std::string sha256_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

bool glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// One entry of an expectations file.
struct Expectation {
  std::string pattern;
  std::string reason;
  bool xfail = false;
};

// <dir>/<plugin>.json: {"unsupported": [{"cases", "reason"}], "xfail": [...]}.
std::vector<Expectation> load_expectations(const std::string& file) {
  std::vector<Expectation> out;
  std::ifstream in(file);
  if (!in) return out;
  json doc;
  try {
    doc = json::parse(in);
  } catch (const std::exception& e) {
    throw Error(TSR_INVALID_ARGUMENT, "expectations file " + file + " is not JSON: " + e.what());
  }
  for (const char* kind : {"unsupported", "xfail"}) {
    if (!doc.contains(kind)) continue;
    for (const json& e : doc.at(kind)) {
      Expectation x;
      x.pattern = e.value("cases", "");
      x.reason = e.value("reason", "");
      x.xfail = std::string(kind) == "xfail";
      if (x.pattern.empty() || x.reason.empty())
        throw Error(TSR_INVALID_ARGUMENT, fmt::format("expectations file {}: every {} entry needs "
                                                      "\"cases\" (a glob over case ids) and a "
                                                      "\"reason\"; got {}",
                                                      file, kind, e.dump()));
      out.push_back(x);
    }
  }
  return out;
}

std::string expectations_dir(const Options& o) {
  if (!o.expectations_dir.empty()) return o.expectations_dir;
  for (const fs::path& p :
       {fs::path(this_exe_dir()) / ".." / "share" / "tessera" / "conformance" / "expectations",
        fs::path(TESSERA_SOURCE_DIR) / "conformance" / "expectations"}) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) return fs::canonical(p).string();
  }
  return {};
}

// A unit of work: cases of one family of one device, run by one child at a
// time (restarted after a crash or a hang with the cases left).
struct Unit {
  size_t id = 0;  // position in the runner's list, for file names
  size_t run = 0;
  std::string family;
  std::deque<size_t> pending;                   // indices into the run's cases, not yet reported
  std::map<std::string, size_t> index_of;       // case id -> index
  std::map<std::string, std::string> gtest_of;  // case id -> gtest name
  std::unique_ptr<ChildProcess> child;          // rank 0: its events are read
  std::vector<std::unique_ptr<ChildProcess>> peers;  // collectives: ranks 1 .. N-1
  std::string events_path;
  std::string log_path;
  std::streamoff read_offset = 0;
  std::string in_flight;  // case id started and not ended
  std::chrono::steady_clock::time_point in_flight_since;
  int attempt = 0;
};

class Runner {
 public:
  Runner(const Options& o, Report& report, const std::string& work_dir)
      : o_(o), report_(report), work_dir_(work_dir), suite_(suite_program()) {}

  // Describes the plugins, lists and selects cases. Returns false when a
  // requested plugin or device is absent (already reported on stderr).
  bool prepare() {
    std::vector<std::string> files;
    const bool explicit_plugins = !o_.plugins.empty();
    for (const std::string& p : o_.plugins) {
      std::error_code ec;
      if (!fs::exists(p, ec)) {
        fmt::print(stderr, "tessera conformance: plugin file '{}' does not exist\n", p);
        return false;
      }
      files.push_back(fs::canonical(p).string());
    }
    const std::vector<std::string> installed = discover_plugins(o_);
    if (!explicit_plugins) files = installed;
    if (files.empty()) {
      fmt::print(stderr, "tessera conformance: no plugins found (give --plugin PATH)\n");
      return false;
    }
    for (const std::string& f : installed)
      if (fs::path(f).filename() == "libtessera-cpu.so") cpu_plugin_ = f;
    std::set<std::string> matched_devices;
    for (const std::string& file : files) {
      json d;
      try {
        d = json::parse(
            run_capture({suite_, "--plugin", file, "--describe"}, work_dir_ + "/describe.log", 60));
      } catch (const std::exception& e) {
        add_setup_failure(file, std::string("describing the plugin failed: ") + e.what());
        continue;
      }
      if (!d.value("loaded", false)) {
        bool no_device = d.value("code", "") == "UNAVAILABLE";
        for (const json& r : d.value("load_report", json::array()))
          no_device |= r.value("event", "") == "no_device";
        const std::string why = d.value("error", std::string("did not load"));
        if (no_device && !explicit_plugins) {
          report_.skipped_plugins.push_back({{"path", file}, {"reason", "no device: " + why}});
        } else {
          add_setup_failure(file, why);
        }
        continue;
      }
      const json& p = d.at("plugin");
      const std::string sha256 = sha256_of(file);
      for (const json& dev : d.value("devices", json::array())) {
        const std::string id = dev.value("id", "");
        if (!o_.devices.empty() &&
            std::find(o_.devices.begin(), o_.devices.end(), id) == o_.devices.end())
          continue;
        matched_devices.insert(id);
        DeviceRun run;
        run.plugin = p.value("name", "");
        run.plugin_path = file;
        run.plugin_version = p.value("version", "");
        run.plugin_abi = p.value("abi", "");
        run.plugin_sha256 = sha256;
        run.device = id;
        run.properties = dev;
        report_.runs.push_back(std::move(run));
      }
    }
    bool ok = true;
    for (const std::string& want : o_.devices) {
      if (!matched_devices.count(want)) {
        fmt::print(stderr,
                   "tessera conformance: device '{}' is not among the plugins' devices; `tessera "
                   "devices` lists them\n",
                   want);
        ok = false;
      }
    }
    for (size_t i = 0; i < report_.runs.size(); ++i) select_cases(i);
    return ok;
  }

  // Runs every unit, o_.jobs at a time.
  void run() {
    size_t total = 0;
    for (const Unit& u : units_) total += u.pending.size();
    total_ = total;
    std::deque<size_t> waiting;
    for (size_t i = 0; i < units_.size(); ++i) waiting.push_back(i);
    std::vector<size_t> active;
    while (!waiting.empty() || !active.empty()) {
      while (!waiting.empty() && static_cast<int>(active.size()) < o_.jobs) {
        start(units_[waiting.front()]);
        active.push_back(waiting.front());
        waiting.pop_front();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      for (size_t k = 0; k < active.size();) {
        if (step(units_[active[k]])) {
          active.erase(active.begin() + static_cast<long>(k));
        } else {
          ++k;
        }
      }
      progress(false);
    }
    progress(true);
  }

 private:
  void add_setup_failure(const std::string& file, const std::string& why) {
    DeviceRun run;
    run.plugin = fs::path(file).filename().string();
    run.plugin_path = file;
    run.plugin_sha256 = sha256_of(file);
    run.device = "-";
    run.setup_error = why;
    report_.runs.push_back(std::move(run));
  }

  bool selected(const json& c) const {
    const std::string id = c.value("id", "");
    const std::string family = c.value("family", "");
    // --perf adds the perf family (alone, without --family); otherwise it
    // runs only when --family names it.
    const bool listed =
        std::find(o_.families.begin(), o_.families.end(), family) != o_.families.end();
    if (family == "perf") {
      if (!o_.perf && !listed) return false;
    } else if (o_.families.empty() ? o_.perf : !listed) {
      return false;
    }
    if (!o_.ops.empty()) {
      const std::string op = c["op"].is_string() ? c["op"].get<std::string>() : "";
      bool any = false;
      for (const std::string& pat : o_.ops) any |= glob(pat, op);
      if (!any) return false;
    }
    if (!o_.dtypes.empty()) {
      const std::string dt = c["dtype"].is_string() ? c["dtype"].get<std::string>() : "";
      if (std::find(o_.dtypes.begin(), o_.dtypes.end(), dt) == o_.dtypes.end()) return false;
    }
    bool positive = false, any_positive = false;
    for (const std::string& f : o_.filters) {
      if (!f.empty() && f[0] == '-') {
        if (glob(f.substr(1), id)) return false;
      } else {
        any_positive = true;
        positive |= glob(f, id);
      }
    }
    return !any_positive || positive;
  }

  void select_cases(size_t r) {
    DeviceRun& run = report_.runs[r];
    json cases;
    try {
      cases = json::parse(run_capture({suite_, "--plugin", run.plugin_path, "--cpu-plugin",
                                       cpu_plugin_, "--device", run.device, "--list"},
                                      work_dir_ + "/list.log", 60));
    } catch (const std::exception& e) {
      run.setup_error = std::string("listing the cases failed: ") + e.what();
      return;
    }
    const std::string dir = expectations_dir(o_);
    std::vector<Expectation> expect;
    if (!dir.empty()) {
      const std::string file = dir + "/" + run.plugin + ".json";
      if (fs::exists(file)) {
        run.expectations = file;
        expect = load_expectations(file);
      }
    }
    std::map<std::string, Unit*> open;  // family -> unit being filled
    for (const json& c : cases) {
      if (!selected(c)) continue;
      CaseResult res;
      res.id = c.value("id", "");
      res.family = c.value("family", "");
      if (c["op"].is_string()) res.op = c["op"];
      if (c["dtype"].is_string()) res.dtype = c["dtype"];
      if (c["shape_class"].is_string()) res.shape_class = c["shape_class"];
      if (c.contains("path") && c["path"].is_string()) res.path = c["path"];
      const Expectation* hit = nullptr;
      for (const Expectation& e : expect)
        if (glob(e.pattern, res.id)) {
          hit = &e;
          break;
        }
      if (hit != nullptr && !hit->xfail) {
        res.status = "unsupported";
        res.message = hit->reason;
      } else if (hit != nullptr && o_.skip_xfail) {
        res.status = "xfail";
        res.message = hit->reason + " (not run: --skip-xfail)";
      }
      if (hit != nullptr && hit->xfail) xfail_reason_[{r, res.id}] = hit->reason;
      const size_t index = run.cases.size();
      const bool to_run = hit == nullptr || (hit->xfail && !o_.skip_xfail);
      run.cases.push_back(std::move(res));
      if (!to_run || o_.list_only) continue;
      Unit*& u = open[run.cases[index].family];
      if (u == nullptr || u->pending.size() >= kUnitCases) {
        units_.emplace_back();
        u = &units_.back();
        u->id = units_.size() - 1;
        u->run = r;
        u->family = run.cases[index].family;
      }
      u->pending.push_back(index);
      u->index_of[run.cases[index].id] = index;
      u->gtest_of[run.cases[index].id] = c.value("gtest", "");
    }
  }

  void start(Unit& u) {
    const DeviceRun& run = report_.runs[u.run];
    const std::string tag = fmt::format("{}-{}-{}-{}", u.run, u.family, u.id, u.attempt++);
    u.events_path = work_dir_ + "/events-" + tag + ".jsonl";
    u.log_path = work_dir_ + "/log-" + tag + ".txt";
    u.read_offset = 0;
    u.in_flight.clear();
    std::string filter = "--gtest_filter=";
    for (size_t i = 0; i < u.pending.size(); ++i) {
      if (i) filter += ":";
      filter += u.gtest_of[run.cases[u.pending[i]].id];
    }
    std::vector<std::string> argv{suite_,      "--plugin", run.plugin_path, "--cpu-plugin",
                                  cpu_plugin_, "--device", run.device};
    u.peers.clear();  // a restart's ranks meet afresh
    if (u.family == "collectives") {
      // Every rank runs the same cases (Note [Conformance collectives]) and
      // meets the others through a file store of its own per attempt.
      // A --report directory may hold an earlier run's files: start afresh.
      const std::string rendezvous = work_dir_ + "/rendezvous-" + tag;
      std::error_code ec;
      fs::remove(rendezvous, ec);
      fs::remove(rendezvous + ".verdicts", ec);
      for (const std::string& a : {std::string("--ranks"), std::to_string(o_.ranks),
                                   std::string("--rendezvous"), rendezvous})
        argv.push_back(a);
      for (int r = 1; r < o_.ranks; ++r) {
        std::vector<std::string> peer = argv;
        peer.insert(peer.end(), {"--rank", std::to_string(r), filter, "--gtest_brief=1"});
        u.peers.push_back(std::make_unique<ChildProcess>(
            peer, work_dir_ + "/log-" + tag + "-rank" + std::to_string(r) + ".txt"));
      }
      argv.insert(argv.end(), {"--rank", "0"});
    }
    argv.insert(argv.end(), {"--events", u.events_path, filter, "--gtest_brief=1"});
    u.child = std::make_unique<ChildProcess>(argv, u.log_path);
  }

  // A collectives unit's rank other than 0 that died abnormally (a signal, or
  // an exit other than the suite's 0 / 1): rank 0 is stopped too, since its
  // case in flight cannot complete, and that case names the rank.
  std::optional<std::string> dead_peer(Unit& u) {
    for (size_t k = 0; k < u.peers.size(); ++k) {
      const std::optional<ExitInfo> e = u.peers[k]->poll();
      if (e && (e->signaled || (e->code != 0 && e->code != 1)))
        return fmt::format("rank {} of {} died ({})", k + 1, o_.ranks, e->describe());
    }
    return std::nullopt;
  }

  // Reads the child's new events. Returns true when the unit is finished.
  bool step(Unit& u) {
    read_events(u);
    if (const std::optional<std::string> peer = dead_peer(u); peer && !u.child->poll()) {
      u.child->kill();
      u.child->wait();
      read_events(u);
      if (u.in_flight.empty() && !u.pending.empty())
        u.in_flight = report_.runs[u.run].cases[u.pending.front()].id;
      fail_in_flight(u, fmt::format("{} during this case; the logs: {}-rank*", *peer, u.log_path));
      return restart_or_finish(u);
    }
    const auto now = std::chrono::steady_clock::now();
    if (!u.in_flight.empty() &&
        std::chrono::duration<double>(now - u.in_flight_since).count() > o_.timeout_s) {
      u.child->kill();
      u.child->wait();
      read_events(u);
      if (!u.in_flight.empty())
        fail_in_flight(u, fmt::format("timed out: still running after {:.0f} s (killed); the "
                                      "suite's log: {}",
                                      o_.timeout_s, u.log_path));
      return restart_or_finish(u);
    }
    const std::optional<ExitInfo> done = u.child->poll();
    if (!done) return false;
    read_events(u);
    if (!u.in_flight.empty()) {
      fail_in_flight(u, fmt::format("the suite process died ({}) during this case; its log: {}",
                                    done->describe(), u.log_path));
    } else if (!u.pending.empty() && (done->signaled || (done->code != 0 && done->code != 1))) {
      // Died before starting the next case: that case takes the blame, so
      // the restart makes progress.
      u.in_flight = report_.runs[u.run].cases[u.pending.front()].id;
      fail_in_flight(u, fmt::format("the suite process died ({}) before this case started; its "
                                    "log: {}",
                                    done->describe(), u.log_path));
    }
    return restart_or_finish(u);
  }

  bool restart_or_finish(Unit& u) {
    if (u.pending.empty()) {
      u.peers.clear();  // done: ranks still finishing are stopped
      return true;
    }
    if (u.attempt > 50) {
      for (size_t i : u.pending) {
        CaseResult& c = report_.runs[u.run].cases[i];
        c.status = "fail";
        c.message = "not run: the suite process kept dying (50 restarts); see " + u.log_path;
      }
      u.pending.clear();
      return true;
    }
    start(u);
    return false;
  }

  void fail_in_flight(Unit& u, const std::string& why) {
    const auto it = u.index_of.find(u.in_flight);
    if (it != u.index_of.end()) {
      finish_case(u, it->second, "fail", why, std::nullopt,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            u.in_flight_since)
                      .count());
    }
    u.in_flight.clear();
  }

  void read_events(Unit& u) {
    std::ifstream in(u.events_path);
    if (!in) return;
    in.seekg(u.read_offset);
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a partial last line: read it next time
      u.read_offset = in.tellg();
      json e;
      try {
        e = json::parse(line);
      } catch (...) {
        continue;
      }
      const std::string id = e.value("case", "");
      if (e.value("event", "") == "start") {
        u.in_flight = id;
        u.in_flight_since = std::chrono::steady_clock::now();
        continue;
      }
      u.in_flight.clear();
      const auto it = u.index_of.find(id);
      if (it == u.index_of.end()) continue;
      // A worst error or timing that is NaN or infinite arrives as null (JSON
      // has no such numbers): an unbounded error, no timing.
      std::optional<double> error;
      if (e.contains("error"))
        error = e.at("error").is_number() ? e.at("error").get<double>()
                                          : std::numeric_limits<double>::infinity();
      if (e.contains("perf_ms") && e.at("perf_ms").is_number())
        report_.runs[u.run].cases[it->second].perf_ms = e.at("perf_ms").get<double>();
      finish_case(u, it->second, e.value("status", "fail"), e.value("message", ""), error,
                  e.value("ms", 0.0));
    }
  }

  void finish_case(Unit& u, size_t index, const std::string& status, const std::string& message,
                   std::optional<double> error, double ms) {
    CaseResult& c = report_.runs[u.run].cases[index];
    const auto x = xfail_reason_.find({u.run, c.id});
    c.status = status;
    c.message = message;
    if (x != xfail_reason_.end()) {
      if (status == "fail") {
        c.status = "xfail";
        c.message = x->second + "\n" + message;
      } else if (status == "pass") {
        c.status = "xpass";
        c.message = "expected to fail (" + x->second +
                    ") but passed: remove the xfail entry from " + report_.runs[u.run].expectations;
      }
    }
    c.error = error;
    c.ms = ms;
    u.pending.erase(std::remove(u.pending.begin(), u.pending.end(), index), u.pending.end());
    ++done_;
    if (c.status == "fail" || c.status == "xpass") ++failed_;
  }

  void progress(bool final) {
    if (!isatty(2)) return;
    fmt::print(stderr, "\r[{:>5}/{}] {} failed{}", done_, total_, failed_, final ? "\n" : "");
    std::fflush(stderr);
  }

  const Options& o_;
  Report& report_;
  std::string work_dir_;
  std::string suite_;
  std::string cpu_plugin_;
  std::deque<Unit> units_;
  std::map<std::pair<size_t, std::string>, std::string> xfail_reason_;
  size_t total_ = 0, done_ = 0, failed_ = 0;
};

// --perf: compares timings with the baseline file ({"devices": {"cpu:0":
// {"perf/mm__float32": 0.56, ...}}}): a case slower than threshold x its
// baseline fails. Then writes --save-baseline from this run's timings.
void apply_baseline(const Options& o, Report& report) {
  if (!o.baseline.empty()) {
    std::ifstream in(o.baseline);
    if (!in) throw Error(TSR_NOT_FOUND, "--baseline " + o.baseline + " cannot be read");
    json base;
    try {
      base = json::parse(in);
    } catch (const std::exception& e) {
      throw Error(TSR_INVALID_ARGUMENT, "--baseline " + o.baseline + " is not JSON: " + e.what());
    }
    for (DeviceRun& r : report.runs) {
      const json devices = base.value("devices", json::object());
      if (!devices.contains(r.device)) continue;
      for (CaseResult& c : r.cases) {
        if (!c.perf_ms || !devices.at(r.device).contains(c.id)) continue;
        c.baseline_ms = devices.at(r.device).at(c.id).get<double>();
        const double ratio = *c.perf_ms / std::max(*c.baseline_ms, 1e-6);
        if (c.status == "pass" && ratio > o.perf_threshold) {
          c.status = "fail";
          c.message = fmt::format(
              "performance regression: {:.3f} ms, baseline {:.3f} ms ({:.2f}x; the threshold is "
              "{:.2f}x, --perf-threshold)",
              *c.perf_ms, *c.baseline_ms, ratio, o.perf_threshold);
        }
      }
    }
  }
  if (!o.save_baseline.empty()) {
    json devices = json::object();
    for (const DeviceRun& r : report.runs)
      for (const CaseResult& c : r.cases)
        if (c.perf_ms) devices[r.device][c.id] = *c.perf_ms;
    write_atomically(o.save_baseline,
                     json{{"tool_version", report.tool_version},
                          {"started", report.started},
                          {"about", "tessera conformance --perf timings (ms, median of 5)"},
                          {"devices", devices}}
                             .dump(1) +
                         "\n");
  }
}

// The command as typed, for the reports: /proc/self/cmdline, program name
// shortened to "tessera".
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string line = "tessera";
  bool first = true;
  for (std::string arg; std::getline(in, arg, '\0');) {
    if (!first) line += " " + arg;
    first = false;
  }
  return line;
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// The host name for the JUnit report ("" when it cannot be read).
std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

// --junit FILE must be writable where it is asked for: refused before the
// run rather than after it.
void check_junit_path(const std::string& file) {
  const fs::path path(file);
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error(TSR_INVALID_ARGUMENT, "--junit " + file +
                                          " is a directory; give a file name, e.g. " +
                                          (path / "conformance.junit.xml").string());
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(dir, ec))
    throw Error(TSR_INVALID_ARGUMENT, "--junit " + file + ": directory " + dir.string() +
                                          " does not exist; create it first");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(TSR_INVALID_ARGUMENT,
                "--junit " + file + ": directory " + dir.string() + " is not writable");
}

int run_conformance(const Options& options, const std::string& command_line) {
  Options o = options;
  if (!o.junit_file.empty() && !o.list_only) check_junit_path(o.junit_file);
  if (o.jobs <= 0) o.jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
  // Each child gets its share of the cores unless the user said otherwise.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    const unsigned share =
        std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(o.jobs));
    setenv("OMP_NUM_THREADS", std::to_string(share).c_str(), 0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Report report;
  report.tool_version = tsr_version_string();
  report.abi_version = fmt::format("{}.{}", TSR_PLUGIN_ABI_MAJOR, TSR_PLUGIN_ABI_MINOR);
  report.started = now_iso();
  report.command_line = command_line;

  std::string work_dir = o.report_dir;
  bool temporary = false;
  if (work_dir.empty()) {
    char tmpl[] = "/tmp/tessera-conformance-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw Error(TSR_INTERNAL, "cannot create a temporary directory");
    work_dir = tmpl;
    temporary = true;
  } else {
    std::error_code ec;
    fs::create_directories(fs::path(work_dir) / "logs", ec);
    if (ec)
      throw Error(TSR_INVALID_ARGUMENT, "cannot create --report " + work_dir + ": " + ec.message());
  }
  const std::string logs = temporary ? work_dir : work_dir + "/logs";

  Runner runner(o, report, logs);
  const bool found = runner.prepare();
  if (o.list_only) {
    for (const DeviceRun& r : report.runs)
      for (const CaseResult& c : r.cases)
        fmt::print("{}\t{}\t{}\t{}\t{}\n", r.device, c.id, c.op, c.dtype,
                   c.status == "skip" ? "" : c.status);
    return found ? kExitOk : kExitFailure;
  }
  runner.run();
  if (o.perf) apply_baseline(o, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  fmt::print("{}", summary_table(report));
  bool ok = found;
  for (const DeviceRun& r : report.runs) ok &= r.ok();
  int shown = 0, hidden = 0;
  for (const DeviceRun& r : report.runs) {
    if (!r.setup_error.empty())
      fmt::print("SETUP {} ({}): {}\n", r.device, r.plugin, r.setup_error);
    for (const CaseResult& c : r.cases) {
      if (c.status != "fail" && c.status != "xpass") continue;
      if (shown++ >= 20) {
        ++hidden;
        continue;
      }
      fmt::print("{} {} {}: {}\n", c.status == "fail" ? "FAIL " : "XPASS", r.device, c.id,
                 c.message.substr(0, c.message.find('\n')));
    }
  }
  if (hidden > 0) fmt::print("... and {} more (the report lists them all)\n", hidden);
  const std::string junit =
      o.report_dir.empty() && o.junit_file.empty() ? "" : to_junit(report, host_name());
  if (!o.junit_file.empty()) {
    write_atomically(o.junit_file, junit);
    fmt::print("junit: {}\n", o.junit_file);
  }
  if (!o.report_dir.empty()) {
    write_atomically(o.report_dir + "/conformance.json", to_json_text(report));
    write_atomically(o.report_dir + "/conformance.md", to_markdown(report));
    write_atomically(o.report_dir + "/conformance.html", to_html(report));
    write_atomically(o.report_dir + "/conformance.junit.xml", junit);
    fmt::print("report: {}/conformance.{{json,md,html,junit.xml}}\n", o.report_dir);
  } else {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  }
  size_t cases = 0;
  for (const DeviceRun& r : report.runs) cases += r.cases.size();
  fmt::print("conformance: {} on {} device(s), {} cases, {:.1f} s\n", ok ? "PASSED" : "FAILED",
             report.runs.size(), cases, report.seconds);
  return ok ? kExitOk : kExitFailure;
}

}  // namespace

Command add_conformance_command(CLI::App& root) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = root.add_subcommand(
      "conformance",
      "Judge plugins against the contract, case by case, each in a watched child process");
  cmd->add_option("--plugin", options->plugins,
                  "Plugin file to judge (repeatable); default: every installed plugin")
      ->type_name("PATH");
  cmd->add_option("--plugin-path", options->plugin_path,
                  "Directories (':'-separated) searched for plugins first")
      ->type_name("DIRS");
  cmd->add_option("--device", options->devices,
                  "Device to judge, e.g. cpu:0 (repeatable); default: every device")
      ->type_name("DEVICE");
  cmd->add_option("--family", options->families,
                  "Only these families (repeatable): abi device memory streams copies ops "
                  "autograd random concurrency lifecycle collectives");
  cmd->add_option("--ranks", options->ranks,
                  "Processes the collectives family runs in, one per rank (default 2)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--filter", options->filters,
                  "Glob over case ids like ops/add_Tensor__*; a leading '-' excludes (repeatable)");
  cmd->add_option("--op", options->ops, "Only cases of these ops (globs, repeatable)");
  cmd->add_option("--dtype", options->dtypes, "Only cases of these dtypes (repeatable)");
  cmd->add_option("--report", options->report_dir,
                  "Write conformance.json, .md, .html and .junit.xml (and the suite's logs) here")
      ->type_name("DIR");
  cmd->add_option("--junit", options->junit_file,
                  "Write a JUnit XML report (one testcase per case; CI systems read it) to FILE")
      ->type_name("FILE");
  cmd->add_option("--expectations", options->expectations_dir,
                  "Directory of <plugin>.json expectation files (default: the installed ones)")
      ->type_name("DIR");
  cmd->add_option("--jobs,-j", options->jobs, "Child processes at once (default: cores / 2)");
  cmd->add_option("--timeout", options->timeout_s, "Seconds one case may run (default 120)");
  cmd->add_flag("--skip-xfail", options->skip_xfail,
                "Do not run xfail cases (by default they run, and a pass is an XPASS failure)");
  cmd->add_flag("--list", options->list_only, "List the selected cases and exit");
  cmd->add_flag("--perf", options->perf,
                "Perf mode: time representative ops on large inputs (family perf)");
  cmd->add_option("--baseline", options->baseline,
                  "--perf: timings to compare with (a file --save-baseline wrote)")
      ->type_name("FILE");
  cmd->add_option("--save-baseline", options->save_baseline,
                  "--perf: write this run's timings as a baseline file")
      ->type_name("FILE");
  cmd->add_option("--perf-threshold", options->perf_threshold,
                  "--perf: a case slower than this times its baseline fails (default 1.5)");
  return Command{cmd, [options] { return run_conformance(*options, command_line()); }};
}

}  // namespace tessera::cli
