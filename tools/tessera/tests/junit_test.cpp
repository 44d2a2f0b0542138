// The JUnit XML rendering of a conformance report (to_junit,
// conformance_report.cpp) on a report made by hand: one case of every status,
// a device that could not be judged, a plugin without a device, and messages
// with markup, quotes, control characters, CR and bytes that are not UTF-8.
// The file is read back with Python's xml.etree (junit_summary.py: expat, a
// conforming parser), so a file that is not well-formed fails; the values are
// compared with strings written out here.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "conformance_report.h"
#include "run_command.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tessera::cli::CaseResult;
using tessera::cli::DeviceRun;
using tessera::cli::Report;

CaseResult a_case(const std::string& id, const std::string& status, const std::string& message,
                  double ms = 0) {
  CaseResult c;
  c.id = id;
  c.family = id.substr(0, id.find('/'));
  c.status = status;
  c.message = message;
  c.ms = ms;
  return c;
}

Report hand_made_report() {
  Report report;
  report.tool_version = "0.1.0";
  report.abi_version = "1.0";
  report.started = "2026-12-01T21:00:00Z";
  report.seconds = 12.5;
  report.command_line = "tessera conformance --junit 'a&b.xml'";
  DeviceRun cpu;
  cpu.plugin = "cpu";
  cpu.plugin_path = "/p/libtessera-cpu.so";
  cpu.plugin_version = "0.1";
  cpu.plugin_abi = "1.0";
  cpu.plugin_sha256 = "ab12";
  cpu.device = "cpu:0";
  cpu.cases = {
      a_case("ops/add_Tensor__plain", "pass", "", 1000),
      a_case("ops/add_Tensor__broadcast", "fail", "values differ <at> [0]: 1.01 & 1\nsecond line",
             2500),
      a_case("ops/mul_Tensor__plain", "xpass", "expected to fail (x) but passed"),
      a_case("ops/div_Tensor__plain", "xfail", "reason \"quoted\"\nvalues differ"),
      a_case("memory/Big", "unsupported", "no 'big' memory\x01\x1f tab\there\rCR"),
      a_case("memory/Small", "skip",
             "bytes: \xff \xc0\xaf \xed\xa0\x80 \xef\xbf\xbf \xe2\x82 | \xc3\xa9 \xe2\x82\xac "
             "\xf0\x9f\x98\x80"),
  };
  DeviceRun bad;
  bad.plugin = "libtessera-bad.so";
  bad.plugin_path = "/p/libtessera-bad.so";
  bad.device = "-";
  bad.setup_error = "dlopen failed: <undefined symbol>\nmore";
  report.runs = {cpu, bad};
  report.skipped_plugins.push_back(
      {{"path", "/p/libtessera-cuda.so"}, {"reason", "no device: UNAVAILABLE: no CUDA driver"}});
  return report;
}

TEST(Junit, EveryStatusAndMessageSurvivesAConformingXmlParser) {
  const std::string xml = tessera::cli::to_junit(hand_made_report(), "host<&>");
  for (char c : xml) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b >= 0x20 || c == '\n' || c == '\t') << "raw control byte " << int(b);
  }
  const std::string file =
      (fs::path(testing::TempDir()) / ("junit_test_" + std::to_string(getpid()) + ".xml")).string();
  std::ofstream(file, std::ios::binary) << xml;
  const json s = tessera::test::junit_summary(file);
  fs::remove(file);
  ASSERT_FALSE(s.is_null());

  EXPECT_EQ(s.at("tag"), "testsuites");
  const json& root = s.at("attrib");
  EXPECT_EQ(root.at("name"), "tessera conformance --junit 'a&b.xml'");
  EXPECT_EQ(root.at("tests"), "8");
  EXPECT_EQ(root.at("failures"), "2");
  EXPECT_EQ(root.at("errors"), "1");
  EXPECT_EQ(root.at("skipped"), "4");
  EXPECT_EQ(root.at("time"), "12.500");
  EXPECT_EQ(root.at("timestamp"), "2026-12-01T21:00:00");

  // Suites in family order per device, then the setup failure, then the
  // plugins without a device; each suite's counts are its children's.
  const std::vector<std::string> names = {"cpu:0.memory", "cpu:0.ops", "libtessera-bad.so.setup",
                                          "plugins"};
  ASSERT_EQ(s.at("suites").size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const json& suite = s.at("suites").at(i);
    EXPECT_EQ(suite.at("tag"), "testsuite");
    EXPECT_EQ(suite.at("attrib").at("name"), names[i]);
    EXPECT_TRUE(suite.at("unknown").empty()) << suite.dump();
    EXPECT_EQ(suite.at("attrib").at("hostname"), "host<&>");
    for (const char* count : {"tests", "failures", "errors", "skipped"})
      EXPECT_EQ(suite.at("attrib").at(count),
                std::to_string(suite.at("counted").at(count).get<int>()))
          << names[i] << " " << count;
  }
  const json& ops = s.at("suites").at(1);
  EXPECT_EQ(ops.at("attrib").at("tests"), "4");
  EXPECT_EQ(ops.at("attrib").at("failures"), "2");
  EXPECT_EQ(ops.at("attrib").at("skipped"), "1");
  EXPECT_EQ(ops.at("attrib").at("time"), "3.500");
  EXPECT_EQ(ops.at("properties").at("plugin"), "cpu");
  EXPECT_EQ(ops.at("properties").at("device"), "cpu:0");
  EXPECT_EQ(ops.at("properties").at("plugin_sha256"), "ab12");
  EXPECT_EQ(ops.at("properties").at("expectations"), "none");

  std::map<std::string, json> cases;  // "classname/name" -> case
  for (const json& c : s.at("cases")) {
    EXPECT_EQ(c.at("results").get<int>(), c.at("outcome") == "pass" ? 0 : 1) << c.dump();
    EXPECT_TRUE(c.at("attrib").contains("time")) << c.dump();
    const std::string key = c.at("attrib").at("classname").get<std::string>() + "/" +
                            c.at("attrib").at("name").get<std::string>();
    EXPECT_TRUE(cases.emplace(key, c).second) << "twice: " << key;
  }
  ASSERT_EQ(cases.size(), 8u);
  const auto& pass = cases.at("cpu:0.ops/add_Tensor__plain");
  EXPECT_EQ(pass.at("outcome"), "pass");
  EXPECT_EQ(pass.at("attrib").at("time"), "1.000");

  const auto& fail = cases.at("cpu:0.ops/add_Tensor__broadcast");
  EXPECT_EQ(fail.at("outcome"), "failure");
  EXPECT_EQ(fail.at("type"), "fail");
  EXPECT_EQ(fail.at("message"), "values differ <at> [0]: 1.01 & 1\nsecond line");
  EXPECT_EQ(fail.at("text"), "values differ <at> [0]: 1.01 & 1\nsecond line");
  EXPECT_EQ(fail.at("attrib").at("time"), "2.500");

  const auto& xpass = cases.at("cpu:0.ops/mul_Tensor__plain");
  EXPECT_EQ(xpass.at("outcome"), "failure");
  EXPECT_EQ(xpass.at("type"), "xpass");
  EXPECT_EQ(xpass.at("message"), "expected to fail (x) but passed");

  const auto& xfail = cases.at("cpu:0.ops/div_Tensor__plain");
  EXPECT_EQ(xfail.at("outcome"), "skipped");
  EXPECT_EQ(xfail.at("message"), "xfail: reason \"quoted\"\nvalues differ");
  EXPECT_EQ(xfail.at("text"), "reason \"quoted\"\nvalues differ");

  // Control characters as text, tab and CR kept (attribute and content).
  const auto& unsupported = cases.at("cpu:0.memory/Big");
  EXPECT_EQ(unsupported.at("outcome"), "skipped");
  EXPECT_EQ(unsupported.at("message"), "unsupported: no 'big' memory\\x01\\x1F tab\there\rCR");
  EXPECT_EQ(unsupported.at("text"), "no 'big' memory\\x01\\x1F tab\there\rCR");

  // Each byte of an invalid sequence (a stray byte, an overlong form, a
  // surrogate, U+FFFF, a truncated sequence) is U+FFFD; valid UTF-8 stays.
  const std::string r = "\xef\xbf\xbd";
  const auto& skip = cases.at("cpu:0.memory/Small");
  EXPECT_EQ(skip.at("outcome"), "skipped");
  EXPECT_EQ(skip.at("message"), "skip: bytes: " + r + " " + r + r + " " + r + r + r + " " + r + r +
                                    r + " " + r + r + " | \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");

  const auto& setup = cases.at("libtessera-bad.so/setup");
  EXPECT_EQ(setup.at("outcome"), "error");
  EXPECT_EQ(setup.at("type"), "setup");
  EXPECT_EQ(setup.at("message"), "dlopen failed: <undefined symbol>\nmore");
  EXPECT_EQ(setup.at("text"), "dlopen failed: <undefined symbol>\nmore");

  const auto& cuda = cases.at("plugins//p/libtessera-cuda.so");
  EXPECT_EQ(cuda.at("outcome"), "skipped");
  EXPECT_EQ(cuda.at("message"), "skip: no device: UNAVAILABLE: no CUDA driver");
}

// The JSON report of the same cases: dumping it must not throw on the bytes
// that are not UTF-8 (nlohmann's default handler does); they read back as
// U+FFFD while valid UTF-8 stays.
TEST(ConformanceJson, MessagesThatAreNotUtf8AreReplacedNotThrown) {
  std::string text;
  ASSERT_NO_THROW(text = tessera::cli::to_json_text(hand_made_report()));
  const json report = json::parse(text);
  const std::string r = "\xef\xbf\xbd";
  bool found = false;
  for (const json& run : report.at("runs"))
    for (const json& c : run.at("cases"))
      if (c.at("id") == "memory/Small") {
        found = true;
        const std::string m = c.at("message");
        const std::string valid_tail = " | \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
        EXPECT_EQ(m.rfind("bytes: " + r, 0), 0u) << m;
        ASSERT_GE(m.size(), valid_tail.size());
        EXPECT_EQ(m.substr(m.size() - valid_tail.size()), valid_tail) << m;
        EXPECT_EQ(m.find('\xff'), std::string::npos) << m;
      }
  EXPECT_TRUE(found) << text;
}

}  // namespace
