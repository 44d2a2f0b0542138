// Tests of the `tessera` command, run as a child process the way a user runs
// it: the exit code, stdout and stderr are checked separately. The program
// under test is the build tree's bin/tessera (TESSERA_CLI_PATH), which loads
// the CPU plugin from the build tree's lib/tessera/ next to libtessera.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "tessera/plugin.h"

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `tessera <args>` through the shell; `args` is shell syntax.
CliRun run_cli(const std::string& args) {
  // ctest runs the cases as parallel processes: one stderr file per process and call.
  static int calls = 0;
  const std::string err_path = testing::TempDir() + "tessera_cli_test_stderr." +
                               std::to_string(getpid()) + "." + std::to_string(++calls) + ".txt";
  const std::string command =
      std::string("'") + TESSERA_CLI_PATH + "' " + args + " 2>'" + err_path + "'";
  const tessera::test::CommandResult child = tessera::test::run_command(command);
  CliRun run;
  run.exit_code = child.exit_code;
  run.out = child.out;
  run.err = read_file(err_path);
  std::remove(err_path.c_str());
  return run;
}

// For failure messages: everything the child printed.
std::string transcript(const CliRun& run) {
  return "exit code " + std::to_string(run.exit_code) + "\n--- stdout\n" + run.out +
         "--- stderr\n" + run.err;
}

// The plugin ABI the headers define, as the CLI prints it.
const std::string kPluginAbi =
    std::to_string(TSR_PLUGIN_ABI_MAJOR) + "." + std::to_string(TSR_PLUGIN_ABI_MINOR);

TEST(TesseraCli, VersionPrintsLibraryVersionAndPluginAbi) {
  const CliRun run = run_cli("--version");
  EXPECT_EQ(run.exit_code, 0) << transcript(run);
  EXPECT_EQ(run.out, "tessera 0.1.0 (plugin ABI " + kPluginAbi + ")\n") << transcript(run);
}

TEST(TesseraCli, NoCommandPrintsUsageAndExitsTwo) {
  const CliRun run = run_cli("");
  EXPECT_EQ(run.exit_code, 2) << transcript(run);
  EXPECT_NE(run.err.find("devices"), std::string::npos) << transcript(run);
}

TEST(TesseraCli, BadFlagPrintsUsageAndExitsTwo) {
  const CliRun run = run_cli("devices --no-such-flag");
  EXPECT_EQ(run.exit_code, 2) << transcript(run);
  const std::string all = run.out + run.err;
  EXPECT_NE(all.find("--no-such-flag"), std::string::npos) << transcript(run);
  EXPECT_NE(all.find("Usage"), std::string::npos) << transcript(run);
}

TEST(TesseraCli, DevicesListsCpu0AndItsPlugin) {
  const CliRun run = run_cli("devices");
  EXPECT_EQ(run.exit_code, 0) << transcript(run);
  EXPECT_NE(run.out.find("\n  cpu:0  "), std::string::npos) << transcript(run);
  EXPECT_NE(run.out.find("libtessera-cpu.so"), std::string::npos) << transcript(run);
  EXPECT_NE(run.out.find("float32"), std::string::npos) << transcript(run);
}

TEST(TesseraCli, DevicesReportsMissingPluginWithReasonAndSucceeds) {
  const std::string missing = testing::TempDir() + "no-such-dir/libtessera-missing.so";
  const CliRun run = run_cli("devices --plugin '" + missing + "'");
  EXPECT_EQ(run.exit_code, 0) << transcript(run);
  // The load report lists the failure with its reason...
  const size_t line = run.out.find("FAILED " + missing);
  ASSERT_NE(line, std::string::npos) << transcript(run);
  const std::string entry = run.out.substr(line, run.out.find('\n', line) - line);
  EXPECT_NE(entry.find(": NOT_FOUND: "), std::string::npos) << entry;
  // ...the failed call itself is printed on stderr...
  EXPECT_NE(run.err.find("tessera: NOT_FOUND: "), std::string::npos) << transcript(run);
  // ...and the rest of the runtime still works.
  EXPECT_NE(run.out.find("\n  cpu:0  "), std::string::npos) << transcript(run);
}

TEST(TesseraCli, DevicesReportsPluginWithoutDeviceAsNoDevice) {
  // A core test fixture: a plugin whose init says UNAVAILABLE.
  const std::string plugin =
      std::string(TESSERA_TEST_FAULT_PLUGIN_DIR) + "/libtsrtest-init-unavailable.so";
  if (!std::filesystem::exists(plugin)) GTEST_SKIP() << plugin << " is not built";
  const CliRun run = run_cli("devices --plugin '" + plugin + "'");
  EXPECT_EQ(run.exit_code, 0) << transcript(run);
  const size_t line = run.out.find("NO_DEVICE " + plugin);
  ASSERT_NE(line, std::string::npos) << transcript(run);
  const std::string entry = run.out.substr(line, run.out.find('\n', line) - line);
  EXPECT_NE(entry.find(": UNAVAILABLE: "), std::string::npos) << entry;
}

TEST(TesseraCli, DevicesJsonParsesAndHasCpu0) {
  const std::string missing = testing::TempDir() + "libtessera-missing.so";
  const CliRun run = run_cli("devices --json --plugin '" + missing + "'");
  ASSERT_EQ(run.exit_code, 0) << transcript(run);
  const nlohmann::json json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << "not JSON:\n" << run.out;
  EXPECT_EQ(json.at("plugin_abi"), kPluginAbi);
  bool has_cpu0 = false;
  for (const auto& device : json.at("devices")) {
    if (device.at("device") == "cpu:0") {
      has_cpu0 = true;
      EXPECT_EQ(device.at("type"), "cpu");
      EXPECT_GT(device.at("alignment").get<int>(), 0);
      const auto& dtypes = device.at("dtypes");
      EXPECT_NE(std::find(dtypes.begin(), dtypes.end(), "float32"), dtypes.end()) << device;
    }
  }
  EXPECT_TRUE(has_cpu0) << json.dump(2);
  EXPECT_FALSE(json.at("plugins").empty()) << json.dump(2);
  bool reported = false;
  for (const auto& entry : json.at("load_report")) {
    if (entry.at("path") == missing) {
      reported = true;
      EXPECT_EQ(entry.at("event"), "FAILED");
      EXPECT_FALSE(entry.at("ok").get<bool>());
      EXPECT_FALSE(entry.at("detail").get<std::string>().empty());
    }
  }
  EXPECT_TRUE(reported) << json.dump(2);
}

TEST(TesseraCli, InfoShowsAddSchemaKindAndCpuFloat32Kernel) {
  const CliRun run = run_cli("info add.Tensor");
  EXPECT_EQ(run.exit_code, 0) << transcript(run);
  EXPECT_NE(run.out.find("schema: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                         "Tensor\n"),
            std::string::npos)
      << transcript(run);
  EXPECT_NE(run.out.find("kind:   primitive\n"), std::string::npos) << transcript(run);
  const size_t line = run.out.find("    cpu:0: ");
  ASSERT_NE(line, std::string::npos) << transcript(run);
  const std::string cpu = run.out.substr(line, run.out.find('\n', line) - line) + " ";
  EXPECT_NE(cpu.find(" float32 "), std::string::npos) << cpu;
}

TEST(TesseraCli, InfoJsonParsesAndListsCpuKernels) {
  const CliRun run = run_cli("info add.Tensor --json");
  ASSERT_EQ(run.exit_code, 0) << transcript(run);
  const nlohmann::json json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << "not JSON:\n" << run.out;
  EXPECT_EQ(json.at("name"), "add.Tensor");
  EXPECT_EQ(json.at("kind"), "primitive");
  EXPECT_EQ(json.at("schema"),
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  const auto& cpu = json.at("kernels").at("cpu:0");
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), "float32"), cpu.end()) << json.dump(2);
}

TEST(TesseraCli, InfoUnknownOpExitsTwoWithStatusMessage) {
  const CliRun run = run_cli("info no_such_op");
  EXPECT_EQ(run.exit_code, 2) << transcript(run);
  EXPECT_NE(run.err.find("tessera: NOT_FOUND: "), std::string::npos) << transcript(run);
  EXPECT_NE(run.err.find("no_such_op"), std::string::npos) << transcript(run);
  EXPECT_EQ(run.out, "") << transcript(run);
}

TEST(TesseraCli, InfoMisspelledOpSuggestsTheCloseName) {
  const CliRun run = run_cli("info add.Tensr");
  EXPECT_EQ(run.exit_code, 2) << transcript(run);
  EXPECT_NE(run.err.find("add.Tensor"), std::string::npos) << transcript(run);
}

TEST(TesseraCli, InfoOpsListsEveryOpWithKindAndSchema) {
  const CliRun run = run_cli("info --ops");
  EXPECT_EQ(run.exit_code, 0) << transcript(run);
  // kind, per-device coverage, schema: the CPU plugin's add.Tensor takes all 12 dtypes.
  EXPECT_NE(run.out.find("primitive  cpu:0 (12 dtypes)          add.Tensor(Tensor self, Tensor "
                         "other, *, Scalar alpha=1) -> Tensor\n"),
            std::string::npos)
      << transcript(run);
  EXPECT_NE(run.out.find("view       every device (view)"), std::string::npos) << transcript(run);
  EXPECT_NE(run.out.find("composite  every device (decomposes)  matmul("), std::string::npos)
      << transcript(run);
  // A member of a function-code family reports its primitive's coverage for its code.
  EXPECT_NE(run.out.find("routed     cpu:0 (4 dtypes)           exp(Tensor self) -> Tensor\n"),
            std::string::npos)
      << transcript(run);
  // A composite with a fused CPU kernel says so beside its decomposition.
  EXPECT_NE(run.out.find("composite  decomposes; fused cpu:0"), std::string::npos)
      << transcript(run);
  // The closing count: the documented primitive set (docs/primitives.md) has 20 ops.
  EXPECT_NE(run.out.find(" 20 primitive, "), std::string::npos) << transcript(run);

  const CliRun json_run = run_cli("info --ops --json");
  ASSERT_EQ(json_run.exit_code, 0) << transcript(json_run);
  const nlohmann::json json = nlohmann::json::parse(json_run.out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << json_run.out;
  bool has_mm = false;
  for (const auto& op : json) {
    if (op.at("name") != "mm") continue;
    has_mm = true;
    const auto& cpu = op.at("coverage").at("cpu:0");
    EXPECT_NE(std::find(cpu.begin(), cpu.end(), "float32"), cpu.end()) << op.dump(2);
  }
  EXPECT_TRUE(has_mm) << json.dump(2);
}

TEST(TesseraCli, InfoCollectivesListsEachDevicesEngineOrItsStaging) {
  const CliRun run = run_cli("info --collectives");
  ASSERT_EQ(run.exit_code, 0) << transcript(run);
  EXPECT_NE(run.out.find("cpu:0: gloo "), std::string::npos) << transcript(run);
  EXPECT_NE(run.out.find("  collectives: all_reduce, broadcast, reduce, all_gather, "
                         "reduce_scatter, gather, scatter, all_to_all, send/recv, barrier\n"),
            std::string::npos)
      << transcript(run);
  EXPECT_NE(run.out.find("  reduce ops:  sum, product, min, max, avg\n"), std::string::npos)
      << transcript(run);
  EXPECT_EQ(run.out.find("meta"), std::string::npos) << "meta tensors have no data to send";
  const CliRun json_run = run_cli("info --collectives --json");
  ASSERT_EQ(json_run.exit_code, 0) << transcript(json_run);
  const nlohmann::json json = nlohmann::json::parse(json_run.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << json_run.out;
  const auto& cpu = json.at("cpu:0");
  EXPECT_TRUE(cpu.at("native").get<bool>());
  EXPECT_EQ(cpu.at("dtypes").size(), 12u) << cpu.dump();
  for (const auto& [id, d] : json.items()) {
    if (!d.at("native").get<bool>()) {
      EXPECT_EQ(d.at("staged_through"), "cpu:0") << id;
    }
  }
}

TEST(TesseraCli, InfoWithoutOpPrintsUsageAndExitsTwo) {
  const CliRun run = run_cli("info");
  EXPECT_EQ(run.exit_code, 2) << transcript(run);
  EXPECT_NE(run.err.find("--ops"), std::string::npos) << transcript(run);
}

}  // namespace
