/*
 * conformance_report.h - what `tessera conformance` found, and the report
 * files it writes: conformance.json (everything, for tools), conformance.md
 * (the summary a vendor pastes into a changelog), conformance.html (one
 * self-contained page: per-family table and per-op x dtype matrices) and
 * conformance.junit.xml (JUnit XML, what CI systems read; also --junit FILE).
 * Files are written atomically (temp file, fsync, rename).
 */
#ifndef TESSERA_TOOLS_TESSERA_CONFORMANCE_REPORT_H_
#define TESSERA_TOOLS_TESSERA_CONFORMANCE_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::cli {

// Statuses, in the order reports list them. pass/fail/skip come from the
// case; unsupported/xfail/xpass from the plugin's expectations file.
inline constexpr const char* kStatuses[] = {"pass",  "fail",        "xpass",
                                            "xfail", "unsupported", "skip"};

struct CaseResult {
  std::string id;      // "ops/add_Tensor__broadcast"
  std::string family;  // "ops"
  std::string op;      // "add.Tensor"; empty outside ops/autograd
  std::string dtype;   // "float32"; empty where it does not apply
  std::string shape_class;
  std::string path;  // "kernel", "decomposition", "view", "missing"; "" = not an op case
  std::string status = "skip";
  std::string message;                // why it failed / was skipped, or the expectation's reason
  std::optional<double> error;        // worst error in units of the tolerance
  double ms = 0;                      // the case's wall time
  std::optional<double> perf_ms;      // perf family: the timed call (median)
  std::optional<double> baseline_ms;  // perf family: the baseline's time for it
};

// One plugin device: its identity and every selected case.
struct DeviceRun {
  std::string plugin;  // name
  std::string plugin_path;
  std::string plugin_version;
  std::string plugin_abi;
  std::string plugin_sha256;
  std::string device;  // "cpu:0"
  nlohmann::json properties;
  std::string expectations;  // the expectations file used ("" = none)
  std::string setup_error;   // why the device could not be judged ("" = it was)
  std::vector<CaseResult> cases;

  std::map<std::string, int> counts() const;  // status -> cases
  bool ok() const;                            // no fail, no xpass, no setup error
};

struct Report {
  std::string tool_version;
  std::string abi_version;
  std::string started;  // ISO 8601 UTC
  double seconds = 0;
  std::string command_line;
  std::vector<DeviceRun> runs;
  nlohmann::json skipped_plugins = nlohmann::json::array();  // {path, reason}
};

nlohmann::json to_json(const Report& report);
// to_json as the text of conformance.json. A case's message may hold bytes
// that are not UTF-8 (a kernel's or a driver's own text): each invalid byte
// becomes U+FFFD, so one bad message never costs the whole report.
std::string to_json_text(const Report& report);
std::string to_markdown(const Report& report);
std::string to_html(const Report& report);
// JUnit XML (docs/conformance.md, "JUnit XML"): a <testsuite> per device and
// family, a <testcase> per case; fail and xpass are <failure>, skip,
// unsupported and xfail <skipped>, a device that could not be judged an
// <error>. Text is XML-escaped; control characters become "\xNN" and bytes
// that are not UTF-8 U+FFFD, so any message makes a well-formed file.
std::string to_junit(const Report& report, const std::string& hostname);

// Writes `text` to `path` atomically; throws std::runtime_error naming the
// path and errno's text.
void write_atomically(const std::string& path, const std::string& text);

// The summary table printed at the end of a run (plain text).
std::string summary_table(const Report& report);

}  // namespace tessera::cli

#endif  // TESSERA_TOOLS_TESSERA_CONFORMANCE_REPORT_H_
