// Tests of `tessera conformance`, run as a child process: it passes the CPU
// plugin, catches a deliberately wrong kernel (with op, dtype, shape class
// and error measure in the report), survives plugins that crash, hang or
// throw, refuses absent plugins and devices, applies expectations
// (unsupported, xfail, xpass), and writes a JUnit report that says what the
// JSON report says.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_command.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using CliRun = tessera::test::CommandResult;

// Runs `[env] tessera conformance <args>` through the shell; stderr joins stdout.
CliRun conformance(const std::string& args, const std::string& env = "") {
  return tessera::test::run_command(env + " '" + TESSERA_CLI_PATH + "' conformance " + args +
                                    " 2>&1");
}

std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) /
                       ("tessera_conformance_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

json report_of(const std::string& dir) {
  std::ifstream in(dir + "/conformance.json");
  return json::parse(in);
}

const json* find_case(const json& report, const std::string& id) {
  for (const json& c : report.at("runs").at(0).at("cases"))
    if (c.at("id") == id) return &c;
  return nullptr;
}

std::string fault_plugin(const std::string& variant) {
  return std::string(TESSERA_TEST_FAULT_PLUGIN_DIR) + "/libtsrtest-" + variant + ".so";
}

TEST(Conformance, TheCpuPluginPassesAndTheReportsAreWritten) {
  const std::string dir = fresh_dir("cpu");
  const CliRun run = conformance("--device cpu:0 --report '" + dir + "'");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("conformance: PASSED"), std::string::npos) << run.out;
  const json r = report_of(dir);
  ASSERT_EQ(r.at("runs").size(), 1u);
  const json& cpu = r.at("runs").at(0);
  EXPECT_EQ(cpu.at("device"), "cpu:0");
  EXPECT_TRUE(cpu.at("ok").get<bool>());
  EXPECT_EQ(cpu.at("plugin").at("sha256").get<std::string>().size(), 64u);
  EXPECT_GT(cpu.at("counts").value("pass", 0), 1000);
  EXPECT_EQ(cpu.at("counts").value("fail", 0), 0);
  for (const char* family : {"abi", "device", "memory", "streams", "copies", "ops", "autograd",
                             "random", "concurrency", "lifecycle", "collectives"}) {
    bool seen = false;
    for (const json& c : cpu.at("cases")) seen |= c.at("family") == family;
    EXPECT_TRUE(seen) << "no case of family " << family;
  }
  std::ifstream html(dir + "/conformance.html");
  std::stringstream text;
  text << html.rdbuf();
  EXPECT_NE(text.str().find("ops: op × dtype"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/conformance.md"));
}

// The collectives family on 3 ranks: sub-groups and a matrix slice pass; an
// all_reduce that is wrong on rank 1 only (TESSERA_CPU_TEST_WRONG_COLLECTIVE)
// fails its cases, naming the rank, though rank 0's own result is right.
TEST(Conformance, CollectivesRunOnSeveralRanksAndAWrongRankFailsTheCase) {
  const std::string filter =
      " --filter 'collectives/all_reduce__float32__sum__*' --filter 'collectives/SubGroups'"
      " --filter 'collectives/broadcast__int64__*' --filter '-collectives/*64MiB'";
  {
    const std::string dir = fresh_dir("coll3");
    const CliRun run = conformance("--device cpu:0 --family collectives --ranks 3" + filter +
                                   " --report '" + dir + "'");
    EXPECT_EQ(run.exit_code, 0) << run.out;
    const json r = report_of(dir);
    EXPECT_EQ(r.at("runs").at(0).at("counts").value("pass", 0), 7) << run.out;
  }
  const std::string dir = fresh_dir("coll-wrong");
  const CliRun run =
      conformance("--device cpu:0 --family collectives" + filter + " --report '" + dir + "'",
                  "TESSERA_CPU_TEST_WRONG_COLLECTIVE=all_reduce");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  const json r = report_of(dir);
  const json* c = find_case(r, "collectives/all_reduce__float32__sum__n1031");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->at("status"), "fail");
  const std::string message = c->value("message", "");
  EXPECT_NE(message.find("on rank 1"), std::string::npos) << message;
  EXPECT_NE(message.find("elements wrong"), std::string::npos) << message;
  const json* b = find_case(r, "collectives/broadcast__int64__n1031");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->at("status"), "pass") << "only all_reduce is wrong";
}

TEST(Conformance, RanksOutOfRangeIsBadUsage) {
  EXPECT_EQ(conformance("--family collectives --ranks 0").exit_code, 2);
}

// The add.Tensor cases on cpu:0 with TESSERA_CPU_TEST_WRONG_KERNEL=`wrong`
// (plugins/cpu/src/wrong_kernel.cpp): the run must fail; returns the
// report's case ops/add_Tensor__transposed (null if absent).
json wrong_add_case(const std::string& wrong) {
  const std::string dir = fresh_dir("wrong-" + wrong.substr(wrong.find(':') + 1));
  const CliRun run =
      conformance("--device cpu:0 --family ops --op add.Tensor --report '" + dir + "'",
                  "TESSERA_CPU_TEST_WRONG_KERNEL=" + wrong);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("conformance: FAILED"), std::string::npos) << run.out;
  const json r = report_of(dir);
  const json* c = find_case(r, "ops/add_Tensor__transposed");
  return c != nullptr ? *c : json();
}

TEST(Conformance, AWrongKernelIsCaughtWithOpDtypeShapeClassAndError) {
  const json found = wrong_add_case("add.Tensor");
  ASSERT_FALSE(found.is_null());
  const json* c = &found;
  EXPECT_EQ(c->at("status"), "fail");
  EXPECT_EQ(c->at("op"), "add.Tensor");
  EXPECT_EQ(c->at("dtype"), "float32");
  EXPECT_EQ(c->at("shape_class"), "non-contiguous");
  EXPECT_GT(c->at("error").get<double>(), 1.0) << "the error measure is in tolerance units";
  EXPECT_NE(c->at("message").get<std::string>().find("values differ"), std::string::npos);
}

// A NaN result has no finite error: the suite reports it as null (JSON has
// no NaN), and the run still finishes, with the case failed and its error
// unbounded in the report (the tool once stopped on it with a JSON type
// error and wrote no report).
TEST(Conformance, AKernelThatWritesNanFailsItsCaseAndTheRunFinishes) {
  const json found = wrong_add_case("add.Tensor:nan");
  ASSERT_FALSE(found.is_null());
  const json* c = &found;
  EXPECT_EQ(c->at("status"), "fail");
  ASSERT_TRUE(c->contains("error"));
  EXPECT_TRUE(c->at("error").is_null()) << "an unbounded error is written as null";
}

// The report of a run on fault plugin `variant`, which must fail.
json fault_run(const std::string& variant, const std::string& args) {
  const std::string dir = fresh_dir(variant);
  const CliRun run =
      conformance("--plugin '" + fault_plugin(variant) + "' " + args + " --report '" + dir + "'");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  return report_of(dir);
}

// "<status>: <message>" of case `id`, or "absent".
std::string outcome_of(const json& report, const std::string& id) {
  const json* c = find_case(report, id);
  if (c == nullptr) return "absent";
  return c->at("status").get<std::string>() + ": " + c->value("message", "");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Conformance, CrashesHangsAndEscapingExceptionsFailTheirCaseAndTheRunGoesOn) {
  const std::string full = "--filter 'ops/full__*'";
  // full__float_value reaches the plugin's fill_ kernel; the full__ cases
  // after it run in the restarted child (they fail for want of kernels).
  json r = fault_run("kernel-crash", full);
  std::string o = outcome_of(r, "ops/full__float_value");
  // "died (signal 11 (Segmentation fault))"; under a sanitizer, which
  // catches the signal itself, "died (exit 1)".
  EXPECT_TRUE(has(o, "fail: ") && has(o, "the suite process died")) << o;
  o = outcome_of(r, "ops/full__int_value_int64");
  EXPECT_TRUE(has(o, "fail: ") && has(o, "UNIMPLEMENTED")) << o;

  r = fault_run("kernel-hang", full + " --timeout 2");
  o = outcome_of(r, "ops/full__float_value");
  EXPECT_TRUE(has(o, "fail: ") && has(o, "timed out")) << o;
  EXPECT_TRUE(has(outcome_of(r, "ops/full__bool_value"), "UNIMPLEMENTED"));

  r = fault_run("kernel-throws", full);
  o = outcome_of(r, "ops/full__float_value");
  EXPECT_TRUE(has(o, "fail: ")) << o;

  r = fault_run("alloc-oom", "--family memory");
  o = outcome_of(r, "memory/OddSizesRoundTripExactly");
  EXPECT_TRUE(has(o, "fail: ") && has(o, "RESOURCE_EXHAUSTED")) << o;

  r = fault_run("short-copy", "--family memory");
  o = outcome_of(r, "memory/OddSizesRoundTripExactly");
  EXPECT_TRUE(has(o, "fail: ")) << o;

  // A size function one row over: the core refuses a report past its shape
  // rule (a 0-d input has at most one nonzero); within the rule, the wrong
  // result shape is caught against the golden value.
  r = fault_run("wrong-sizes", "--filter 'ops/nonzero__*'");
  o = outcome_of(r, "ops/nonzero__0d");
  EXPECT_TRUE(has(o, "fail: ") && has(o, "reported sizes [2, 0]") && has(o, "n <= 1")) << o;
  o = outcome_of(r, "ops/nonzero__2d");
  EXPECT_TRUE(has(o, "fail: ") && has(o, "shape")) << o;

  r = fault_run("bad-properties", "--family device");
  o = outcome_of(r, "device/PropertiesAreSane");
  EXPECT_TRUE(has(o, "fail: ") && has(o, "alignment 24")) << o;
}

TEST(Conformance, AnAbsentPluginOrDeviceIsAnErrorNotAVacuousPass) {
  CliRun run = conformance("--plugin /nonexistent/libtessera-nothing.so");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("does not exist"), std::string::npos) << run.out;
  run = conformance("--device cpu:7 --family device");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("cpu:7"), std::string::npos) << run.out;
  run = conformance("--plugin '" + fault_plugin("init-unavailable") + "'");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("UNAVAILABLE"), std::string::npos) << run.out;
}

TEST(Conformance, ExpectationsMakeUnsupportedXfailAndXpass) {
  const std::string exp = fresh_dir("expectations");
  {
    std::ofstream f(exp + "/cpu.json");
    f << R"({"unsupported": [{"cases": "ops/sub_Tensor__*", "reason": "test: sub is out of scope"}],
             "xfail": [{"cases": "ops/add_Tensor__transposed", "reason": "test: add is wrong"}]})";
  }
  const std::string args =
      "--device cpu:0 --filter ops/add_Tensor__transposed --filter 'ops/sub_Tensor__*' "
      "--expectations '" +
      exp + "' --report '";
  // add passes although it is listed as xfail: XPASS, the run fails.
  std::string dir = fresh_dir("xpass");
  CliRun run = conformance(args + dir + "'");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  json r = report_of(dir);
  const json* add = find_case(r, "ops/add_Tensor__transposed");
  const json* sub = find_case(r, "ops/sub_Tensor__float32");
  ASSERT_TRUE(add != nullptr && sub != nullptr);
  EXPECT_EQ(add->at("status"), "xpass");
  EXPECT_EQ(sub->at("status"), "unsupported");
  EXPECT_EQ(sub->at("message"), "test: sub is out of scope");
  // With add really wrong, the failures are expected: XFAIL, the run passes.
  dir = fresh_dir("xfail");
  run = conformance(args + dir + "'", "TESSERA_CPU_TEST_WRONG_KERNEL=add.Tensor");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  r = report_of(dir);
  add = find_case(r, "ops/add_Tensor__transposed");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->at("status"), "xfail");
}

std::string text_of(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A control character in a JUnit message reads as the text \xNN (XML 1.0 has
// no way to carry it).
std::string junit_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 && c != '\n' && c != '\t' && c != '\r') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", b);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

// The ops family's add and sub cases with add's kernel wrong (its float
// cases fail), one add case expected to fail (xfail) and sub unsupported
// with a reason full of markup: the JUnit file, read back by a conforming
// XML parser, has one testcase per case of the JSON report with the same
// outcome, counts that agree, and the messages intact.
TEST(Conformance, TheJunitReportHasEveryCaseWithTheJsonReportsOutcomeAndMessage) {
  const std::string exp = fresh_dir("junit-expectations");
  const std::string reason = "test: sub <is> \"out\" & 'of' scope\nsecond\x01line";
  {
    std::ofstream f(exp + "/cpu.json");
    f << R"({"unsupported": [{"cases": "ops/sub_Tensor__*",
                               "reason": "test: sub <is> \"out\" & 'of' scope\nsecond\u0001line"}],
             "xfail": [{"cases": "ops/add_Tensor__transposed", "reason": "test: add is wrong"}]})";
  }
  const std::string dir = fresh_dir("junit");
  const std::string ci = dir + "/ci";
  fs::create_directories(ci);
  const std::string junit = ci + "/tessera.junit.xml";
  const CliRun run = conformance(
      "--device cpu:0 --family ops --op add.Tensor --op sub.Tensor "
      "--expectations '" +
          exp + "' --report '" + dir + "' --junit '" + junit + "'",
      "TESSERA_CPU_TEST_WRONG_KERNEL=add.Tensor");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("junit: " + junit), std::string::npos) << run.out;
  // Written through a temporary file renamed into place: nothing else is left.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(ci)) files += entry.path() == junit ? 1 : 100;
  EXPECT_EQ(files, 1u) << "the --junit directory holds other files than " << junit;
  EXPECT_EQ(text_of(junit), text_of(dir + "/conformance.junit.xml"));

  const json r = report_of(dir);
  const json s = tessera::test::junit_summary(junit);
  ASSERT_FALSE(s.is_null());
  ASSERT_EQ(s.at("tag"), "testsuites");
  for (const json& suite : s.at("suites")) {
    EXPECT_EQ(suite.at("tag"), "testsuite");
    EXPECT_TRUE(suite.at("unknown").empty()) << suite.dump();
    for (const char* count : {"tests", "failures", "errors", "skipped"})
      EXPECT_EQ(suite.at("attrib").at(count).get<std::string>(),
                std::to_string(suite.at("counted").at(count).get<int>()))
          << suite.at("attrib").at("name") << " " << count;
  }
  std::map<std::string, json> cases;  // classname/name -> testcase
  for (const json& c : s.at("cases"))
    EXPECT_TRUE(cases
                    .emplace(c.at("attrib").at("classname").get<std::string>() + "/" +
                                 c.at("attrib").at("name").get<std::string>(),
                             c)
                    .second)
        << "two testcases " << c.dump();

  ASSERT_EQ(r.at("runs").size(), 1u);
  const json& cpu = r.at("runs").at(0);
  std::map<std::string, int> outcomes;  // JUnit outcome -> cases
  for (const json& c : cpu.at("cases")) {
    const std::string family = c.at("family"), id = c.at("id"), status = c.at("status");
    const std::string key = "cpu:0." + family + "/" + id.substr(family.size() + 1);
    const auto it = cases.find(key);
    ASSERT_NE(it, cases.end()) << "no testcase " << key << " for " << id;
    const json x = it->second;
    cases.erase(it);
    const std::string message = c.value("message", "");
    EXPECT_TRUE(x.at("attrib").contains("time")) << key;
    ++outcomes[x.at("outcome").get<std::string>()];
    if (status == "pass") {
      EXPECT_EQ(x.at("outcome"), "pass") << key;
    } else if (status == "fail" || status == "xpass") {
      EXPECT_EQ(x.at("outcome"), "failure") << key;
      EXPECT_EQ(x.at("type"), status) << key;
      EXPECT_EQ(x.at("message"), junit_text(message)) << key;
      EXPECT_EQ(x.at("text"), junit_text(message)) << key;
    } else {
      EXPECT_EQ(x.at("outcome"), "skipped") << key;
      EXPECT_EQ(x.at("message"), junit_text(status + ": " + message)) << key;
      EXPECT_EQ(x.at("text"), junit_text(message)) << key;
    }
  }
  // What is left are the discovered plugins without a device here.
  for (const auto& [key, x] : cases) EXPECT_EQ(x.at("attrib").at("classname"), "plugins") << key;
  EXPECT_EQ(cases.size(), r.at("skipped_plugins").size());

  const json& counts = cpu.at("counts");
  EXPECT_GT(counts.value("pass", 0), 0);
  EXPECT_GT(counts.value("fail", 0), 0);
  EXPECT_EQ(counts.value("xfail", 0), 1);
  EXPECT_GT(counts.value("unsupported", 0), 0);
  EXPECT_EQ(outcomes["pass"], counts.value("pass", 0));
  EXPECT_EQ(outcomes["failure"], counts.value("fail", 0) + counts.value("xpass", 0));
  EXPECT_EQ(outcomes["skipped"],
            counts.value("skip", 0) + counts.value("unsupported", 0) + counts.value("xfail", 0));
  const json& root = s.at("attrib");
  EXPECT_EQ(root.at("tests"),
            std::to_string(cpu.at("cases").size() + r.at("skipped_plugins").size()));
  EXPECT_EQ(root.at("failures"), std::to_string(outcomes["failure"]));
  EXPECT_EQ(root.at("errors"), "0");

  // The messages themselves, as written here: the wrong values', the
  // expectations' reasons.
  const json* sub = find_case(r, "ops/sub_Tensor__float32");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->at("message"), reason);
  int values_differ = 0;
  for (const json& c : s.at("cases")) {
    const std::string name = c.at("attrib").at("name");
    if (c.at("outcome") == "failure")
      values_differ +=
          c.at("message").get<std::string>().find("values differ") != std::string::npos;
    if (name == "sub_Tensor__float32") {
      EXPECT_EQ(c.at("message"),
                "unsupported: test: sub <is> \"out\" & 'of' scope\nsecond\\x01line");
      EXPECT_EQ(c.at("text"), "test: sub <is> \"out\" & 'of' scope\nsecond\\x01line");
    } else if (name == "add_Tensor__transposed") {
      EXPECT_EQ(c.at("message").get<std::string>().rfind("xfail: test: add is wrong\n", 0), 0u);
      EXPECT_NE(c.at("text").get<std::string>().find("values differ"), std::string::npos);
    }
  }
  EXPECT_GT(values_differ, 0) << "no failure says 'values differ'";
}

TEST(Conformance, AJunitFileInAMissingDirectoryIsRefusedBeforeTheRun) {
  const CliRun run = conformance("--device cpu:0 --junit /nonexistent-dir/tessera.junit.xml");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("/nonexistent-dir does not exist"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("conformance: "), std::string::npos) << "the suite ran: " << run.out;
}

TEST(Conformance, PerfModeTimesOpsAndFailsRegressionsAgainstABaseline) {
  const std::string dir = fresh_dir("perf");
  const std::string base = dir + "/baseline.json";
  CliRun run = conformance("--device cpu:0 --perf --filter 'perf/*__float32' --save-baseline '" +
                           base + "' --report '" + dir + "'");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  const json r = report_of(dir);
  const json* mm = find_case(r, "perf/mm__float32");
  ASSERT_NE(mm, nullptr);
  EXPECT_GT(mm->at("perf_ms").get<double>(), 0.0);
  std::ifstream saved(base);
  const json b = json::parse(saved);
  EXPECT_GT(b.at("devices").at("cpu:0").at("perf/mm__float32").get<double>(), 0.0);
  // Any time is a regression against a threshold of 1e-9 x the baseline...
  run = conformance("--device cpu:0 --perf --filter 'perf/mm__float32' --baseline '" + base +
                    "' --perf-threshold 1e-9");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("performance regression"), std::string::npos) << run.out;
  // ... and none against 1e9 x.
  run = conformance("--device cpu:0 --perf --filter 'perf/mm__float32' --baseline '" + base +
                    "' --perf-threshold 1e9");
  EXPECT_EQ(run.exit_code, 0) << run.out;
}

// A device without float64 gradchecks in float32 (eps 1e-3 relative to the
// value, atol and rtol 1e-2); forced here on the CPU, every case holds or is
// skipped with its reason.
TEST(Conformance, Float32GradchecksHoldOnTheCpu) {
  const CliRun run =
      conformance("--device cpu:0 --family autograd", "TESSERA_CONFORMANCE_GRAD_DTYPE=float32");
  EXPECT_EQ(run.exit_code, 0) << run.out;
}

}  // namespace
