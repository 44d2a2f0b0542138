// loader_faults_test.cpp - the plugin loader's contract under broken plugins.
//
// Every test feeds the loader one purpose-built defect (core/tests/fault_plugins:
// libtsrtest-<variant>.so, a valid "testdev" plugin compiled with one fault) and
// checks three things: the status of tsr_plugin_load (code and a message naming
// the thing at fault), the load-report entry for the file, and that the runtime
// is still healthy afterwards - the real CPU plugin loads into the same runtime
// and add.Tensor on cpu:0 gives the right numbers. Faults are never fatal: no
// abort, no poisoned runtime, out_ parameters untouched on failure.
//
// Contract sources: abi/tessera/tessera.h (plugins and the load report) and
// abi/tessera/plugin.h (Note [Plugin ABI versioning], Note [Plugin lifetime]).
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tessera/plugin.h"
#include "tessera/tessera.h"
#include "test_support.h"

namespace {

using tsr_test::MentionsNumber;
using tsr_test::Outcome;
using tsr_test::RuntimePtr;
using tsr_test::Take;
using tsr_test::TensorPtr;

// ---------------------------------------------------------------------------
// Small helpers: statuses, runtimes and tensors as values that clean up.
// ---------------------------------------------------------------------------

RuntimePtr MakeRuntime() {
  tsr_runtime_options options{};
  options.struct_size = sizeof options;
  options.skip_default_plugins = true;
  tsr_runtime* runtime = nullptr;
  const Outcome created = Take(tsr_runtime_create(&options, &runtime));
  EXPECT_EQ(created.code, TSR_OK) << created;
  return RuntimePtr(runtime);
}

std::string FaultPlugin(const std::string& variant) {
  return std::string(TESSERA_TEST_FAULT_PLUGIN_DIR) + "/libtsrtest-" + variant + ".so";
}

std::string CpuPlugin() { return std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtessera-cpu.so"; }

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A pointer value no loader returns; lets a test see that a failing call left
// its out_ parameter untouched. Never dereferenced.
tsr_plugin* const kUntouched = reinterpret_cast<tsr_plugin*>(uintptr_t{0x5a5a5a50});

struct ReportEntry {
  tsr_load_event event;
  tsr_status_code code;
  std::string path, plugin, detail;
};

std::ostream& operator<<(std::ostream& os, const ReportEntry& entry) {
  return os << "{event " << entry.event << ", " << tsr_status_code_name(entry.code) << ", path \""
            << entry.path << "\", plugin \"" << entry.plugin << "\", detail \"" << entry.detail
            << "\"}";
}

std::vector<ReportEntry> Report(tsr_runtime* runtime) {
  std::vector<ReportEntry> entries;
  size_t count = 0;
  const Outcome counted = Take(tsr_runtime_load_report_count(runtime, &count));
  EXPECT_EQ(counted.code, TSR_OK) << counted;
  for (size_t i = 0; i < count; ++i) {
    tsr_load_report_entry raw{};
    raw.struct_size = sizeof raw;
    const Outcome got = Take(tsr_runtime_load_report_at(runtime, i, &raw));
    EXPECT_EQ(got.code, TSR_OK) << got;
    if (got.code != TSR_OK) continue;
    entries.push_back({static_cast<tsr_load_event>(raw.event),
                       static_cast<tsr_status_code>(raw.code), raw.path ? raw.path : "<null>",
                       raw.plugin ? raw.plugin : "<null>", raw.detail ? raw.detail : "<null>"});
  }
  return entries;
}

std::string DescribeReport(const std::vector<ReportEntry>& entries) {
  std::string text = "load report (" + std::to_string(entries.size()) + " entries):";
  for (const ReportEntry& entry : entries) {
    std::ostringstream line;
    line << "\n  " << entry;
    text += line.str();
  }
  return text;
}

// Entries of the report that concern `path` (compared by file name: the report
// holds the canonical path, the test the spelled one) and have `event`.
std::vector<ReportEntry> EntriesFor(tsr_runtime* runtime, const std::string& path,
                                    tsr_load_event event) {
  std::vector<ReportEntry> found;
  for (const ReportEntry& entry : Report(runtime)) {
    if (entry.event == event && BaseName(entry.path) == BaseName(path)) found.push_back(entry);
  }
  return found;
}

// Expects exactly one `event` entry for `path` with `code` whose detail
// mentions every string of `mentions`.
void ExpectReportEntry(tsr_runtime* runtime, const std::string& path, tsr_load_event event,
                       tsr_status_code code, const std::vector<std::string>& mentions) {
  const std::vector<ReportEntry> entries = EntriesFor(runtime, path, event);
  ASSERT_EQ(entries.size(), 1u) << "expected one entry of event " << event << " for " << path
                                << "\n"
                                << DescribeReport(Report(runtime));
  EXPECT_EQ(entries[0].code, code) << entries[0];
  for (const std::string& needle : mentions) EXPECT_MENTIONS(entries[0].detail, needle);
}

size_t PluginCount(tsr_runtime* runtime) {
  size_t count = 0;
  const Outcome counted = Take(tsr_runtime_plugin_count(runtime, &count));
  EXPECT_EQ(counted.code, TSR_OK) << counted;
  return count;
}

const tsr_op* FindOp(tsr_runtime* runtime, const char* name) {
  const tsr_op* op = nullptr;
  const Outcome found = Take(tsr_op_find(runtime, name, &op));
  EXPECT_EQ(found.code, TSR_OK) << name << ": " << found;
  return op;
}

TensorPtr FromHost(tsr_runtime* runtime, const std::vector<float>& values, tsr_device device) {
  const int64_t sizes[1] = {static_cast<int64_t>(values.size())};
  tsr_tensor* tensor = nullptr;
  const Outcome made =
      Take(tsr_tensor_from_host(runtime, values.data(), values.size() * sizeof(float), 1, sizes,
                                TSR_FLOAT32, device, &tensor));
  EXPECT_EQ(made.code, TSR_OK) << made;
  return TensorPtr(tensor);
}

std::vector<float> ToHost(const tsr_tensor* tensor, size_t count) {
  std::vector<float> values(count, -1.0f);
  const Outcome copied =
      Take(tsr_tensor_copy_to_host(tensor, values.data(), count * sizeof(float)));
  EXPECT_EQ(copied.code, TSR_OK) << copied;
  return values;
}

// The process keeps working after a fault: the CPU plugin loads into the same
// runtime and add.Tensor on cpu:0 computes.
void ExpectRuntimeStillWorks(tsr_runtime* runtime) {
  SCOPED_TRACE("the runtime must keep working after the fault");
  tsr_plugin* cpu = nullptr;
  const Outcome loaded = Take(tsr_plugin_load(runtime, CpuPlugin().c_str(), &cpu));
  ASSERT_EQ(loaded.code, TSR_OK) << CpuPlugin() << ": " << loaded;
  ASSERT_NE(cpu, nullptr);

  const tsr_device cpu0{TSR_DEVICE_CPU, 0};
  TensorPtr a = FromHost(runtime, {1.0f, 2.0f, 3.0f}, cpu0);
  TensorPtr b = FromHost(runtime, {10.0f, 20.0f, 30.0f}, cpu0);
  ASSERT_TRUE(a && b);
  const tsr_op* add = FindOp(runtime, "add.Tensor");
  ASSERT_NE(add, nullptr);
  tsr_value args[2]{};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = a.get();
  args[1].tag = TSR_VALUE_TENSOR;
  args[1].u.tensor = b.get();
  tsr_value out{};
  const Outcome called = Take(tsr_op_call(add, args, 2, &out, 1));
  ASSERT_EQ(called.code, TSR_OK) << called;
  ASSERT_EQ(out.tag, TSR_VALUE_TENSOR);
  TensorPtr sum(out.u.tensor);
  EXPECT_EQ(ToHost(sum.get(), 3), (std::vector<float>{11.0f, 22.0f, 33.0f}));
}

// Parses "testdev:0" in `runtime`.
Outcome ParseTestdev(tsr_runtime* runtime, tsr_device* device) {
  return Take(tsr_device_parse(runtime, "testdev:0", device));
}

// Loads the fault plugin `variant` and finds its testdev:0.
::testing::AssertionResult LoadTestdev(tsr_runtime* runtime, const std::string& variant,
                                       tsr_plugin** plugin, tsr_device* testdev) {
  const Outcome loaded = Take(tsr_plugin_load(runtime, FaultPlugin(variant).c_str(), plugin));
  if (loaded.code != TSR_OK) return ::testing::AssertionFailure() << "load: " << loaded;
  const Outcome parsed = ParseTestdev(runtime, testdev);
  if (parsed.code != TSR_OK) return ::testing::AssertionFailure() << "testdev:0: " << parsed;
  return ::testing::AssertionSuccess();
}

// fill_.Scalar(self, value) through the boxed call; returns the status.
Outcome Fill(tsr_runtime* runtime, tsr_tensor* self, double value) {
  const tsr_op* fill = FindOp(runtime, "fill_.Scalar");
  if (fill == nullptr) return {TSR_NOT_FOUND, "fill_.Scalar"};
  tsr_value args[2]{};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = self;
  args[1].tag = TSR_VALUE_SCALAR;
  args[1].u.scalar.kind = TSR_FLOAT64;
  args[1].u.scalar.v.f = value;
  tsr_value out{};
  Outcome called = Take(tsr_op_call(fill, args, 2, &out, 1));
  if (called.code == TSR_OK && out.tag == TSR_VALUE_TENSOR) tsr_tensor_release(out.u.tensor);
  return called;
}

// Makes a float32 tensor of 4 elements on testdev:0, fills it with 2.5 by the
// plugin's kernel and reads it back.
void ExpectTestdevComputes(tsr_runtime* runtime) {
  tsr_device testdev{};
  const Outcome parsed = ParseTestdev(runtime, &testdev);
  ASSERT_EQ(parsed.code, TSR_OK) << parsed;
  const int64_t sizes[1] = {4};
  tsr_tensor* raw = nullptr;
  const Outcome made = Take(tsr_tensor_empty(runtime, 1, sizes, TSR_FLOAT32, testdev, &raw));
  ASSERT_EQ(made.code, TSR_OK) << made;
  TensorPtr tensor(raw);
  const Outcome filled = Fill(runtime, tensor.get(), 2.5);
  ASSERT_EQ(filled.code, TSR_OK) << filled;
  EXPECT_EQ(ToHost(tensor.get(), 4), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
}

// Loads `variant`, expecting failure with `code`; checks the out_ parameter, the
// plugin count and that the message mentions every string of `mentions`.
Outcome ExpectLoadFails(tsr_runtime* runtime, const std::string& variant, tsr_status_code code,
                        const std::vector<std::string>& mentions) {
  tsr_plugin* plugin = kUntouched;
  const size_t plugins_before = PluginCount(runtime);
  const Outcome loaded = Take(tsr_plugin_load(runtime, FaultPlugin(variant).c_str(), &plugin));
  EXPECT_EQ(loaded.code, code) << FaultPlugin(variant) << ": " << loaded;
  EXPECT_EQ(plugin, kUntouched) << "a failed load must leave out_plugin untouched";
  EXPECT_EQ(PluginCount(runtime), plugins_before) << "a failed load must leave no plugin behind";
  for (const std::string& needle : mentions) EXPECT_MENTIONS(loaded.message, needle);
  return loaded;
}

// ---------------------------------------------------------------------------
// The good plugin and the successful paths.
// ---------------------------------------------------------------------------

TEST(LoaderFaults, GoodTestPluginLoadsAndRunsItsKernel) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = nullptr;
  const Outcome loaded = Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &plugin));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(PluginCount(runtime.get()), 1u);

  tsr_plugin_info info{};
  info.struct_size = sizeof info;
  const Outcome got = Take(tsr_plugin_get_info(plugin, &info));
  ASSERT_EQ(got.code, TSR_OK) << got;
  EXPECT_STREQ(info.name, "testdev");
  EXPECT_STREQ(info.version, "0.1.0-test");
  EXPECT_STREQ(info.device_type, "testdev");
  EXPECT_EQ(BaseName(info.path), "libtsrtest-good.so");
  EXPECT_EQ(info.abi_major, unsigned{TSR_PLUGIN_ABI_MAJOR});
  EXPECT_EQ(info.abi_minor, unsigned{TSR_PLUGIN_ABI_MINOR});
  EXPECT_EQ(info.device_count, 1);
  // fill_.Scalar and the plugin's own custom ops tsrtest::twice(_backward).
  EXPECT_EQ(info.kernels_bound, 3);
  EXPECT_EQ(info.kernels_rejected, 0);

  ExpectReportEntry(runtime.get(), FaultPlugin("good"), TSR_LOAD_LOADED, TSR_OK, {});
  const std::vector<ReportEntry> loaded_entries =
      EntriesFor(runtime.get(), FaultPlugin("good"), TSR_LOAD_LOADED);
  if (!loaded_entries.empty()) {
    EXPECT_EQ(loaded_entries[0].plugin, "testdev");
  }

  ExpectTestdevComputes(runtime.get());
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, DefaultScanNeverPicksUpTestPlugins) {
  // The fault plugins are named libtsrtest-*.so precisely so that a scan for
  // libtessera-*.so skips them, even in a directory on the search path.
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  const Outcome scanned =
      Take(tsr_runtime_load_plugins(runtime.get(), TESSERA_TEST_FAULT_PLUGIN_DIR));
  EXPECT_EQ(scanned.code, TSR_OK) << scanned;
  for (const ReportEntry& entry : Report(runtime.get())) {
    EXPECT_EQ(BaseName(entry.path).rfind("libtsrtest-", 0), std::string::npos)
        << "the scan touched a test plugin: " << entry;
  }
  ExpectRuntimeStillWorks(runtime.get());
}

// ---------------------------------------------------------------------------
// One test per fault.
// ---------------------------------------------------------------------------

TEST(LoaderFaults, MissingFileIsReportedNotFatal) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  const std::string path = FaultPlugin("does-not-exist");
  ExpectLoadFails(runtime.get(), "does-not-exist", TSR_NOT_FOUND, {"libtsrtest-does-not-exist.so"});
  ExpectReportEntry(runtime.get(), path, TSR_LOAD_FAILED, TSR_NOT_FOUND, {});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, MissingEntrySymbolIsRefusedNamingTheSymbol) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = kUntouched;
  const Outcome loaded =
      Take(tsr_plugin_load(runtime.get(), FaultPlugin("no-entry").c_str(), &plugin));
  EXPECT_TRUE(loaded.code == TSR_NOT_FOUND || loaded.code == TSR_FAILED_PRECONDITION)
      << "want NOT_FOUND or FAILED_PRECONDITION, got " << loaded;
  EXPECT_EQ(plugin, kUntouched);
  EXPECT_EQ(PluginCount(runtime.get()), 0u);
  EXPECT_MENTIONS(loaded.message, TSR_PLUGIN_ENTRY_SYMBOL);
  EXPECT_MENTIONS(loaded.message, "libtsrtest-no-entry.so");
  ExpectReportEntry(runtime.get(), FaultPlugin("no-entry"), TSR_LOAD_FAILED, loaded.code,
                    {TSR_PLUGIN_ENTRY_SYMBOL});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, WrongAbiMajorIsRefusedNamingBothVersions) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  const Outcome loaded =
      ExpectLoadFails(runtime.get(), "abi-major-next", TSR_FAILED_PRECONDITION, {});
  EXPECT_TRUE(MentionsNumber(loaded.message, TSR_PLUGIN_ABI_MAJOR + 1))
      << "must name the plugin's ABI major " << TSR_PLUGIN_ABI_MAJOR + 1 << ": " << loaded;
  EXPECT_TRUE(MentionsNumber(loaded.message, TSR_PLUGIN_ABI_MAJOR))
      << "must name the host's ABI major " << TSR_PLUGIN_ABI_MAJOR << ": " << loaded;
  ExpectReportEntry(runtime.get(), FaultPlugin("abi-major-next"), TSR_LOAD_FAILED,
                    TSR_FAILED_PRECONDITION, {});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, NewerAbiMinorWithLargerTableIsAcceptedAndTailIgnored) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = nullptr;
  const Outcome loaded =
      Take(tsr_plugin_load(runtime.get(), FaultPlugin("abi-minor-next").c_str(), &plugin));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  ASSERT_NE(plugin, nullptr);
  tsr_plugin_info info{};
  info.struct_size = sizeof info;
  const Outcome got = Take(tsr_plugin_get_info(plugin, &info));
  ASSERT_EQ(got.code, TSR_OK) << got;
  EXPECT_EQ(info.abi_major, unsigned{TSR_PLUGIN_ABI_MAJOR});
  EXPECT_EQ(info.abi_minor, unsigned{TSR_PLUGIN_ABI_MINOR + 1});
  EXPECT_EQ(info.kernels_bound, 3);
  ExpectReportEntry(runtime.get(), FaultPlugin("abi-minor-next"), TSR_LOAD_LOADED, TSR_OK, {});
  ExpectTestdevComputes(runtime.get());
  const Outcome unloaded = Take(tsr_plugin_unload(runtime.get(), plugin));
  EXPECT_EQ(unloaded.code, TSR_OK) << unloaded;
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, TableSmallerThanMinorZeroIsRefusedNamingTheSize) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  const size_t claimed = offsetof(tsr_plugin_api, init);
  const Outcome loaded =
      ExpectLoadFails(runtime.get(), "small-struct", TSR_FAILED_PRECONDITION, {});
  EXPECT_TRUE(MentionsNumber(loaded.message, claimed))
      << "must name the table's struct_size " << claimed << ": " << loaded;
  ExpectReportEntry(runtime.get(), FaultPlugin("small-struct"), TSR_LOAD_FAILED,
                    TSR_FAILED_PRECONDITION, {std::to_string(claimed)});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, InitErrorIsReturnedWithThePluginsCodeAndMessage) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  ExpectLoadFails(runtime.get(), "init-internal", TSR_INTERNAL, {"simulated driver fault 0x2a"});
  ExpectReportEntry(runtime.get(), FaultPlugin("init-internal"), TSR_LOAD_FAILED, TSR_INTERNAL,
                    {"simulated driver fault 0x2a"});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, InitUnavailableIsRecordedAsNoDevice) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  ExpectLoadFails(runtime.get(), "init-unavailable", TSR_UNAVAILABLE,
                  {"no testdev device on this machine"});
  ExpectReportEntry(runtime.get(), FaultPlugin("init-unavailable"), TSR_LOAD_NO_DEVICE,
                    TSR_UNAVAILABLE, {"no testdev device on this machine"});
  tsr_device device{};
  EXPECT_EQ(ParseTestdev(runtime.get(), &device).code, TSR_NOT_FOUND)
      << "a plugin without devices must not leave its device type usable";
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, MissingDependencyKeepsTheDynamicLoadersMessage) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = kUntouched;
  const Outcome loaded =
      Take(tsr_plugin_load(runtime.get(), FaultPlugin("missing-dep").c_str(), &plugin));
  EXPECT_TRUE(loaded.code == TSR_FAILED_PRECONDITION || loaded.code == TSR_NOT_FOUND)
      << "want FAILED_PRECONDITION or NOT_FOUND, got " << loaded;
  EXPECT_EQ(plugin, kUntouched);
  EXPECT_EQ(PluginCount(runtime.get()), 0u);
  // dlerror(): "libtsrtest-dep.so: cannot open shared object file: No such file or directory"
  EXPECT_MENTIONS(loaded.message, "libtsrtest-dep.so");
  EXPECT_MENTIONS(loaded.message, "cannot open shared object file");
  EXPECT_MENTIONS(loaded.message, "libtsrtest-missing-dep.so");
  ExpectReportEntry(runtime.get(), FaultPlugin("missing-dep"), TSR_LOAD_FAILED, loaded.code,
                    {"libtsrtest-dep.so"});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, SameFileTwiceReturnsTheLoadedPlugin) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* first = nullptr;
  tsr_plugin* second = nullptr;
  const Outcome loaded = Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &first));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  const Outcome again = Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &second));
  ASSERT_EQ(again.code, TSR_OK) << again;
  EXPECT_EQ(first, second);
  EXPECT_EQ(PluginCount(runtime.get()), 1u);
  ExpectReportEntry(runtime.get(), FaultPlugin("good"), TSR_LOAD_LOADED, TSR_OK, {});
  ExpectReportEntry(runtime.get(), FaultPlugin("good"), TSR_LOAD_ALREADY_LOADED, TSR_OK, {});
  ExpectTestdevComputes(runtime.get());
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, SameFileUnderAnotherSpellingIsTheSameFile) {
  // tsr_plugin_info.path is the canonical path: "dir/./file" is the file
  // already loaded, not a second plugin claiming its name.
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* first = nullptr;
  tsr_plugin* second = nullptr;
  const std::string spelled = std::string(TESSERA_TEST_FAULT_PLUGIN_DIR) + "/./libtsrtest-good.so";
  const Outcome loaded = Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &first));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  const Outcome again = Take(tsr_plugin_load(runtime.get(), spelled.c_str(), &second));
  EXPECT_EQ(again.code, TSR_OK) << again;
  EXPECT_EQ(first, second);
  EXPECT_EQ(PluginCount(runtime.get()), 1u);
  ExpectReportEntry(runtime.get(), FaultPlugin("good"), TSR_LOAD_ALREADY_LOADED, TSR_OK, {});
}

TEST(LoaderFaults, TwoFilesClaimingOneNameRefuseTheSecond) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* first = nullptr;
  const Outcome loaded = Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &first));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  ExpectLoadFails(runtime.get(), "same-name", TSR_ALREADY_EXISTS, {"testdev"});
  ExpectReportEntry(runtime.get(), FaultPlugin("same-name"), TSR_LOAD_FAILED, TSR_ALREADY_EXISTS,
                    {"testdev"});
  // The first plugin is unaffected.
  ExpectTestdevComputes(runtime.get());
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, SchemaMismatchRejectsOnlyThatKernel) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = nullptr;
  const Outcome loaded =
      Take(tsr_plugin_load(runtime.get(), FaultPlugin("schema-mismatch").c_str(), &plugin));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  ASSERT_NE(plugin, nullptr);

  const std::vector<ReportEntry> rejected =
      EntriesFor(runtime.get(), FaultPlugin("schema-mismatch"), TSR_LOAD_KERNEL_REJECTED);
  bool mismatch_listed = false;
  bool custom_op_listed = false;
  for (const ReportEntry& entry : rejected) {
    EXPECT_NE(entry.code, TSR_OK) << entry;
    EXPECT_EQ(entry.plugin, "testdev") << entry;
    if (entry.detail.find("fill_.Scalar") != std::string::npos &&
        entry.detail.find("int extra") != std::string::npos) {
      mismatch_listed = true;
    }
    if (entry.detail.find("tsrtest_custom_op") != std::string::npos) custom_op_listed = true;
  }
  EXPECT_TRUE(mismatch_listed)
      << "want a KERNEL_REJECTED entry naming fill_.Scalar and the plugin's schema "
         "(\"... Scalar value, int extra) ...\")\n"
      << DescribeReport(Report(runtime.get()));
  EXPECT_TRUE(custom_op_listed)
      << "want a KERNEL_REJECTED entry naming the unknown op tsrtest_custom_op\n"
      << DescribeReport(Report(runtime.get()));
  EXPECT_EQ(rejected.size(), 2u) << DescribeReport(Report(runtime.get()));

  tsr_plugin_info info{};
  info.struct_size = sizeof info;
  const Outcome got = Take(tsr_plugin_get_info(plugin, &info));
  ASSERT_EQ(got.code, TSR_OK) << got;
  EXPECT_EQ(info.kernels_bound, 3);
  EXPECT_EQ(info.kernels_rejected, 2);

  tsr_device testdev{};
  const Outcome parsed = ParseTestdev(runtime.get(), &testdev);
  ASSERT_EQ(parsed.code, TSR_OK) << parsed;
  const tsr_op* fill = FindOp(runtime.get(), "fill_.Scalar");
  ASSERT_NE(fill, nullptr);
  bool has_kernel = false;
  const Outcome asked = Take(tsr_op_has_kernel(fill, testdev, TSR_FLOAT32, &has_kernel));
  ASSERT_EQ(asked.code, TSR_OK) << asked;
  EXPECT_TRUE(has_kernel) << "the correct fill_.Scalar entry must still be bound";
  const Outcome asked64 = Take(tsr_op_has_kernel(fill, testdev, TSR_FLOAT64, &has_kernel));
  ASSERT_EQ(asked64.code, TSR_OK) << asked64;
  EXPECT_FALSE(has_kernel) << "the kernel's dtype mask is float32 only";

  ExpectTestdevComputes(runtime.get());
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, NullMandatorySlotIsRefusedNamingTheSlot) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  ExpectLoadFails(runtime.get(), "null-alloc", TSR_FAILED_PRECONDITION, {"alloc"});
  ExpectReportEntry(runtime.get(), FaultPlugin("null-alloc"), TSR_LOAD_FAILED,
                    TSR_FAILED_PRECONDITION, {"alloc"});
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, UnloadWhileATensorIsAliveIsRefusedThenSucceeds) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = nullptr;
  const Outcome loaded = Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &plugin));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  tsr_device testdev{};
  const Outcome parsed = ParseTestdev(runtime.get(), &testdev);
  ASSERT_EQ(parsed.code, TSR_OK) << parsed;

  const int64_t sizes[2] = {2, 3};
  tsr_tensor* raw = nullptr;
  const Outcome made = Take(tsr_tensor_empty(runtime.get(), 2, sizes, TSR_FLOAT32, testdev, &raw));
  ASSERT_EQ(made.code, TSR_OK) << made;
  TensorPtr tensor(raw);

  const Outcome refused = Take(tsr_plugin_unload(runtime.get(), plugin));
  EXPECT_EQ(refused.code, TSR_FAILED_PRECONDITION) << refused;
  EXPECT_MENTIONS(refused.message, "storage");
  EXPECT_EQ(PluginCount(runtime.get()), 1u);
  EXPECT_TRUE(EntriesFor(runtime.get(), FaultPlugin("good"), TSR_LOAD_UNLOADED).empty());

  // Still usable after the refusal.
  const Outcome filled = Fill(runtime.get(), tensor.get(), 7.0);
  EXPECT_EQ(filled.code, TSR_OK) << filled;
  EXPECT_EQ(ToHost(tensor.get(), 6), std::vector<float>(6, 7.0f));

  tensor.reset();
  const Outcome unloaded = Take(tsr_plugin_unload(runtime.get(), plugin));
  EXPECT_EQ(unloaded.code, TSR_OK) << unloaded;
  EXPECT_EQ(PluginCount(runtime.get()), 0u);
  ExpectReportEntry(runtime.get(), FaultPlugin("good"), TSR_LOAD_UNLOADED, TSR_OK, {});
  EXPECT_EQ(ParseTestdev(runtime.get(), &testdev).code, TSR_NOT_FOUND)
      << "an unloaded plugin's devices are gone";
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, UnloadRacingTensorCreationNeverReachesAFreedPlugin) {
  // One thread makes and drops tensors on testdev:0 while another unloads its
  // plugin. Each creation either works, or finds the device gone (NOT_FOUND)
  // or being unloaded (FAILED_PRECONDITION); each unload either works or is
  // refused because a tensor is alive. Nothing reaches the plugin's freed
  // context or its closed library (Note [Unload against use]).
  for (int round = 0; round < 24; ++round) {
    RuntimePtr runtime = MakeRuntime();
    ASSERT_TRUE(runtime);
    tsr_plugin* plugin = nullptr;
    tsr_device testdev{};
    ASSERT_TRUE(LoadTestdev(runtime.get(), "good", &plugin, &testdev));
    std::atomic<bool> stop{false};
    std::atomic<int> made{0};
    std::vector<Outcome> unexpected;
    std::thread maker([&] {
      const int64_t sizes[1] = {64};
      while (!stop.load()) {
        tsr_tensor* tensor = nullptr;
        const Outcome outcome =
            Take(tsr_tensor_empty(runtime.get(), 1, sizes, TSR_FLOAT32, testdev, &tensor));
        if (outcome.code == TSR_OK) {
          made.fetch_add(1);
          tsr_tensor_release(tensor);
        } else if (outcome.code != TSR_NOT_FOUND && outcome.code != TSR_FAILED_PRECONDITION &&
                   unexpected.size() < 4) {
          unexpected.push_back(outcome);
        }
      }
    });
    while (made.load() < 1 + round % 8) std::this_thread::yield();
    Outcome unloaded;
    for (int attempt = 0; attempt < 1000000; ++attempt) {
      unloaded = Take(tsr_plugin_unload(runtime.get(), plugin));
      if (unloaded.code != TSR_FAILED_PRECONDITION) break;
    }
    stop.store(true);
    maker.join();
    EXPECT_EQ(unloaded.code, TSR_OK) << unloaded;
    for (const Outcome& outcome : unexpected) ADD_FAILURE() << "tensor creation: " << outcome;
  }
}

TEST(LoaderFaults, RefusedUnloadNeverFailsAConcurrentMaker) {
  // A tensor is held alive, so every unload below is refused; a maker on
  // another thread must never see FAILED_PRECONDITION from those refusals
  // (Note [Unload against use]: a maker that meets an unload still counting
  // waits for its decision instead of failing).
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = nullptr;
  tsr_device testdev{};
  ASSERT_TRUE(LoadTestdev(runtime.get(), "good", &plugin, &testdev));
  const int64_t sizes[1] = {16};
  tsr_tensor* raw = nullptr;
  ASSERT_EQ(Take(tsr_tensor_empty(runtime.get(), 1, sizes, TSR_FLOAT32, testdev, &raw)).code,
            TSR_OK);
  TensorPtr held(raw);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> made{0};
  std::vector<Outcome> failures;
  std::thread maker([&] {
    while (!stop.load()) {
      tsr_tensor* tensor = nullptr;
      const Outcome outcome =
          Take(tsr_tensor_empty(runtime.get(), 1, sizes, TSR_FLOAT32, testdev, &tensor));
      if (outcome.code == TSR_OK) {
        made.fetch_add(1);
        tsr_tensor_release(tensor);
      } else if (failures.size() < 4) {
        failures.push_back(outcome);
      }
    }
  });
  int refused = 0;
  for (int attempt = 0; attempt < 20000; ++attempt)
    if (Take(tsr_plugin_unload(runtime.get(), plugin)).code == TSR_FAILED_PRECONDITION) ++refused;
  stop.store(true);
  maker.join();
  EXPECT_EQ(refused, 20000) << "a live tensor refuses every unload";
  EXPECT_GT(made.load(), 0);
  for (const Outcome& outcome : failures) ADD_FAILURE() << "tensor creation: " << outcome;
  held.reset();
  EXPECT_EQ(Take(tsr_plugin_unload(runtime.get(), plugin)).code, TSR_OK);
}

TEST(LoaderFaults, FailedStreamAndEventCreationLeaveUnloadPossible) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  tsr_plugin* plugin = nullptr;
  tsr_device testdev{};
  ASSERT_TRUE(LoadTestdev(runtime.get(), "stream-fail", &plugin, &testdev));
  for (int i = 0; i < 3; ++i) {
    tsr_stream* stream = nullptr;
    const Outcome s = Take(tsr_stream_create(runtime.get(), testdev, &stream));
    EXPECT_EQ(s.code, TSR_RESOURCE_EXHAUSTED) << s;
    EXPECT_MENTIONS(s.message, "no stream slots left");
    EXPECT_EQ(stream, nullptr);
    tsr_event* event = nullptr;
    const Outcome e = Take(tsr_event_create(runtime.get(), testdev, 0, &event));
    EXPECT_EQ(e.code, TSR_RESOURCE_EXHAUSTED) << e;
    EXPECT_MENTIONS(e.message, "no event slots left");
    EXPECT_EQ(event, nullptr);
  }
  const Outcome unloaded = Take(tsr_plugin_unload(runtime.get(), plugin));
  EXPECT_EQ(unloaded.code, TSR_OK) << unloaded << " (a failed make kept the live count raised)";
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, LoadUnloadReloadCyclesWork) {
  RuntimePtr runtime = MakeRuntime();
  ASSERT_TRUE(runtime);
  for (int cycle = 0; cycle < 10; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    tsr_plugin* plugin = nullptr;
    const Outcome loaded =
        Take(tsr_plugin_load(runtime.get(), FaultPlugin("good").c_str(), &plugin));
    ASSERT_EQ(loaded.code, TSR_OK) << loaded;
    ASSERT_EQ(PluginCount(runtime.get()), 1u);
    ExpectTestdevComputes(runtime.get());
    const Outcome unloaded = Take(tsr_plugin_unload(runtime.get(), plugin));
    ASSERT_EQ(unloaded.code, TSR_OK) << unloaded;
    ASSERT_EQ(PluginCount(runtime.get()), 0u);
  }
  EXPECT_EQ(EntriesFor(runtime.get(), FaultPlugin("good"), TSR_LOAD_LOADED).size(), 10u);
  EXPECT_EQ(EntriesFor(runtime.get(), FaultPlugin("good"), TSR_LOAD_UNLOADED).size(), 10u);
  ExpectRuntimeStillWorks(runtime.get());
}

TEST(LoaderFaults, FaultsInOneRuntimeLeaveAnotherUntouched) {
  // A runtime with the good plugin loaded, and a second runtime fed every
  // failing variant: the first still computes, the second still works.
  RuntimePtr healthy = MakeRuntime();
  RuntimePtr battered = MakeRuntime();
  ASSERT_TRUE(healthy && battered);
  tsr_plugin* plugin = nullptr;
  const Outcome loaded = Take(tsr_plugin_load(healthy.get(), FaultPlugin("good").c_str(), &plugin));
  ASSERT_EQ(loaded.code, TSR_OK) << loaded;
  for (const char* variant : {"does-not-exist", "no-entry", "abi-major-next", "small-struct",
                              "init-internal", "init-unavailable", "missing-dep", "null-alloc"}) {
    tsr_plugin* ignored = kUntouched;
    const Outcome failed =
        Take(tsr_plugin_load(battered.get(), FaultPlugin(variant).c_str(), &ignored));
    EXPECT_NE(failed.code, TSR_OK) << variant;
    EXPECT_EQ(ignored, kUntouched) << variant;
  }
  EXPECT_EQ(PluginCount(battered.get()), 0u);
  EXPECT_EQ(Report(battered.get()).size(), 8u) << DescribeReport(Report(battered.get()));
  ExpectTestdevComputes(healthy.get());
  ExpectRuntimeStillWorks(battered.get());
}

}  // namespace
