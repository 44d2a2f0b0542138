// abi_bad_input_test.cpp - every kind of ABI call, given bad input.
//
// The contract (abi/tessera/tessera.h): every argument is validated; a bad one
// yields TSR_INVALID_ARGUMENT (OUT_OF_RANGE for indices and dims, NOT_FOUND for
// absent named things) with a message naming the argument - its parameter name
// as spelled in tessera.h, or the schema's argument name for boxed op calls -
// and nothing crosses the boundary but a status. On failure, out_ parameters
// are untouched. These tests run under AddressSanitizer and UBSan in CI, so
// they never pass an enum value outside its C++ range themselves (tsr_dtype's
// range is 0..15: 12 and 15 are "not a dtype" without undefined behaviour).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "tessera/tessera.h"
#include "test_support.h"

namespace {

using tsr_test::MentionsNumber;
using tsr_test::Outcome;
using tsr_test::RuntimePtr;
using tsr_test::Take;
using tsr_test::TensorPtr;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

std::string WithoutSpaces(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

// EXPECT_BAD(call, code, "name"): `call` returns `code` and its message
// mentions "name". Evaluates to the Outcome for further checks.
#define EXPECT_BAD(call, expected_code, name)                                  \
  [&]() {                                                                      \
    const Outcome outcome_ = Take(call);                                       \
    EXPECT_EQ(outcome_.code, expected_code) << #call << "\n  -> " << outcome_; \
    EXPECT_MENTIONS(outcome_.message, name) << "  (from " << #call << ")";     \
    return outcome_;                                                           \
  }()

// Like EXPECT_BAD but accepts either of two codes where the contract allows both.
#define EXPECT_BAD_EITHER(call, code_a, code_b, name)                      \
  [&]() {                                                                  \
    const Outcome outcome_ = Take(call);                                   \
    EXPECT_TRUE(outcome_.code == code_a || outcome_.code == code_b)        \
        << #call << "\n  want " << tsr_status_code_name(code_a) << " or "  \
        << tsr_status_code_name(code_b) << ", got " << outcome_;           \
    EXPECT_MENTIONS(outcome_.message, name) << "  (from " << #call << ")"; \
    return outcome_;                                                       \
  }()

#define EXPECT_OK(call)                                            \
  do {                                                             \
    const Outcome outcome_ = Take(call);                           \
    ASSERT_EQ(outcome_.code, TSR_OK) << #call << ": " << outcome_; \
  } while (0)

RuntimePtr MakeRuntimeWithCpu() {
  tsr_runtime_options options{};
  options.struct_size = sizeof options;
  options.skip_default_plugins = true;
  tsr_runtime* runtime = nullptr;
  const Outcome created = Take(tsr_runtime_create(&options, &runtime));
  EXPECT_EQ(created.code, TSR_OK) << created;
  if (runtime == nullptr) return nullptr;
  RuntimePtr owned(runtime);
  tsr_plugin* cpu = nullptr;
  const std::string path = std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtessera-cpu.so";
  const Outcome loaded = Take(tsr_plugin_load(runtime, path.c_str(), &cpu));
  EXPECT_EQ(loaded.code, TSR_OK) << path << ": " << loaded;
  return owned;
}

constexpr tsr_device kCpu0{TSR_DEVICE_CPU, 0};
constexpr tsr_device kMeta{TSR_DEVICE_META, 0};
// Not a dtype, yet inside the C++ range of tsr_dtype (see the file comment).
constexpr tsr_dtype kBadDtype = static_cast<tsr_dtype>(TSR_DTYPE_COUNT);
constexpr tsr_dtype kBadDtype15 = static_cast<tsr_dtype>(15);

tsr_value TensorValue(tsr_tensor* tensor) {
  tsr_value value{};
  value.tag = TSR_VALUE_TENSOR;
  value.u.tensor = tensor;
  return value;
}

tsr_value ScalarValue(double number) {
  tsr_value value{};
  value.tag = TSR_VALUE_SCALAR;
  value.u.scalar.kind = TSR_FLOAT64;
  value.u.scalar.v.f = number;
  return value;
}

tsr_value StringValue(const char* text) {
  tsr_value value{};
  value.tag = TSR_VALUE_STRING;
  value.u.str = text;
  return value;
}

// Tests share one runtime with the CPU plugin and a few float32 tensors.
class AbiBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = MakeRuntimeWithCpu();
    ASSERT_TRUE(runtime_);
    m23_ = Make({2, 3});
    v5_ = Make({5});
    ASSERT_TRUE(m23_ && v5_);
  }

  tsr_runtime* rt() const { return runtime_.get(); }

  TensorPtr Make(std::vector<int64_t> sizes, tsr_device device = kCpu0,
                 tsr_dtype dtype = TSR_FLOAT32) {
    tsr_tensor* tensor = nullptr;
    const Outcome made = Take(tsr_tensor_zeros(rt(), static_cast<int32_t>(sizes.size()),
                                               sizes.data(), dtype, device, &tensor));
    EXPECT_EQ(made.code, TSR_OK) << made;
    return TensorPtr(tensor);
  }

  const tsr_op* Op(const char* name) {
    const tsr_op* op = nullptr;
    const Outcome found = Take(tsr_op_find(rt(), name, &op));
    EXPECT_EQ(found.code, TSR_OK) << name << ": " << found;
    return op;
  }

  // Calls `op` and releases any tensor result; returns the status.
  tsr_status* Call(const tsr_op* op, std::vector<tsr_value> args) {
    tsr_value out{};
    tsr_status* status = tsr_op_call(op, args.data(), args.size(), &out, 1);
    if (status == nullptr && out.tag == TSR_VALUE_TENSOR) tsr_tensor_release(out.u.tensor);
    if (status == nullptr) ADD_FAILURE() << tsr_op_name(op) << " unexpectedly succeeded";
    return status;
  }

  RuntimePtr runtime_;
  TensorPtr m23_;  // float32 [2, 3] on cpu:0
  TensorPtr v5_;   // float32 [5] on cpu:0
};

tsr_tensor* const kUntouchedTensor = reinterpret_cast<tsr_tensor*>(uintptr_t{0x7e570050});

// ---------------------------------------------------------------------------
// Status objects and plain helpers
// ---------------------------------------------------------------------------

TEST(AbiStatus, NullStatusIsOkAndFreeingNullIsANoOp) {
  EXPECT_EQ(tsr_status_code_of(nullptr), TSR_OK);
  EXPECT_STREQ(tsr_status_message(nullptr), "");
  tsr_status_free(nullptr);
  EXPECT_EQ(tsr_status_create(TSR_OK, "ignored"), nullptr);
  tsr_status* status = tsr_status_create(TSR_INVALID_ARGUMENT, nullptr);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(tsr_status_code_of(status), TSR_INVALID_ARGUMENT);
  EXPECT_STREQ(tsr_status_message(status), "");
  tsr_status_free(status);
  EXPECT_STREQ(tsr_status_code_name(TSR_FAILED_PRECONDITION), "FAILED_PRECONDITION");
  EXPECT_STREQ(tsr_dtype_name(kBadDtype), "invalid");
  EXPECT_STREQ(tsr_dtype_name(kBadDtype15), "invalid");
  EXPECT_EQ(tsr_dtype_size(kBadDtype), 0u);
}

TEST(AbiStatus, PromoteRejectsNonDtypesAndNullOut) {
  tsr_dtype out = TSR_INT8;
  const Outcome bad_a =
      EXPECT_BAD(tsr_dtype_promote(kBadDtype, TSR_FLOAT32, &out), TSR_INVALID_ARGUMENT, "12");
  EXPECT_EQ(out, TSR_INT8) << "out_dtype must be untouched on failure";
  EXPECT_BAD(tsr_dtype_promote(TSR_FLOAT32, kBadDtype15, &out), TSR_INVALID_ARGUMENT, "15");
  EXPECT_BAD(tsr_dtype_promote(TSR_FLOAT32, TSR_INT8, nullptr), TSR_INVALID_ARGUMENT, "out_dtype");
  (void)bad_a;
}

// ---------------------------------------------------------------------------
// Runtime, plugins, load report, devices
// ---------------------------------------------------------------------------

TEST(AbiRuntime, NullHandlesAndOutsAreNamed) {
  EXPECT_BAD(tsr_runtime_create(nullptr, nullptr), TSR_INVALID_ARGUMENT, "out_runtime");
  EXPECT_BAD(tsr_runtime_default(nullptr), TSR_INVALID_ARGUMENT, "out_runtime");
  tsr_runtime_destroy(nullptr);

  tsr_plugin* plugin = nullptr;
  size_t count = 0;
  EXPECT_BAD(tsr_plugin_load(nullptr, "/nonexistent.so", &plugin), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_runtime_load_plugins(nullptr, nullptr), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_runtime_plugin_count(nullptr, &count), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_runtime_load_report_count(nullptr, &count), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_device_count(nullptr, &count), TSR_INVALID_ARGUMENT, "runtime");
  tsr_device device{};
  EXPECT_BAD(tsr_device_parse(nullptr, "cpu:0", &device), TSR_INVALID_ARGUMENT, "runtime");
  const tsr_op* op = nullptr;
  EXPECT_BAD(tsr_op_find(nullptr, "add.Tensor", &op), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_op_count(nullptr, &count), TSR_INVALID_ARGUMENT, "runtime");
  tsr_plugin_info info{};
  info.struct_size = sizeof info;
  EXPECT_BAD(tsr_plugin_get_info(nullptr, &info), TSR_INVALID_ARGUMENT, "plugin");
}

TEST_F(AbiBadInput, PluginAndReportCallsNameTheirArguments) {
  tsr_plugin* plugin = nullptr;
  EXPECT_BAD(tsr_plugin_load(rt(), nullptr, &plugin), TSR_INVALID_ARGUMENT, "path");
  const std::string cpu = std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtessera-cpu.so";
  EXPECT_BAD(tsr_plugin_load(rt(), cpu.c_str(), nullptr), TSR_INVALID_ARGUMENT, "out_plugin");
  const std::string fresh = std::string(TESSERA_TEST_FAULT_PLUGIN_DIR) + "/libtsrtest-good.so";
  EXPECT_BAD(tsr_plugin_load(rt(), fresh.c_str(), nullptr), TSR_INVALID_ARGUMENT, "out_plugin");
  EXPECT_BAD(tsr_plugin_unload(rt(), nullptr), TSR_INVALID_ARGUMENT, "plugin");
  EXPECT_BAD(tsr_runtime_plugin_count(rt(), nullptr), TSR_INVALID_ARGUMENT, "out_count");

  size_t plugins = 0;
  EXPECT_OK(tsr_runtime_plugin_count(rt(), &plugins));
  tsr_plugin* untouched = reinterpret_cast<tsr_plugin*>(uintptr_t{0x7e570060});
  EXPECT_BAD(tsr_runtime_plugin_at(rt(), plugins, &untouched), TSR_OUT_OF_RANGE, "index");
  EXPECT_EQ(untouched, reinterpret_cast<tsr_plugin*>(uintptr_t{0x7e570060}));
  EXPECT_BAD(tsr_runtime_plugin_at(rt(), 0, nullptr), TSR_INVALID_ARGUMENT, "out_plugin");

  EXPECT_OK(tsr_runtime_plugin_at(rt(), 0, &plugin));
  EXPECT_BAD(tsr_plugin_get_info(plugin, nullptr), TSR_INVALID_ARGUMENT, "out_info");

  size_t entries = 0;
  EXPECT_OK(tsr_runtime_load_report_count(rt(), &entries));
  EXPECT_BAD(tsr_runtime_load_report_count(rt(), nullptr), TSR_INVALID_ARGUMENT, "out_count");
  tsr_load_report_entry entry{};
  entry.struct_size = sizeof entry;
  EXPECT_BAD(tsr_runtime_load_report_at(rt(), entries, &entry), TSR_OUT_OF_RANGE, "index");
  EXPECT_BAD(tsr_runtime_load_report_at(rt(), 0, nullptr), TSR_INVALID_ARGUMENT, "out_entry");
}

TEST_F(AbiBadInput, UnknownDevicesAreNotFound) {
  tsr_device device{TSR_DEVICE_HIP, 3};
  const Outcome vulkan =
      EXPECT_BAD(tsr_device_parse(rt(), "vulkan:7", &device), TSR_NOT_FOUND, "vulkan:7");
  EXPECT_EQ(device.type, TSR_DEVICE_HIP) << "out_device must be untouched on failure";
  EXPECT_BAD(tsr_device_parse(rt(), "cpu:99", &device), TSR_NOT_FOUND, "cpu:99");
  EXPECT_BAD(tsr_device_parse(rt(), "warp-drive", &device), TSR_NOT_FOUND, "warp-drive");
  EXPECT_BAD(tsr_device_parse(rt(), nullptr, &device), TSR_INVALID_ARGUMENT, "text");
  EXPECT_BAD(tsr_device_parse(rt(), "cpu:0", nullptr), TSR_INVALID_ARGUMENT, "out_device");
  (void)vulkan;

  size_t count = 0;
  EXPECT_OK(tsr_device_count(rt(), &count));
  EXPECT_BAD(tsr_device_at(rt(), count, &device), TSR_OUT_OF_RANGE, "index");
  EXPECT_BAD(tsr_device_count(rt(), nullptr), TSR_INVALID_ARGUMENT, "out_count");

  // A device value with no device behind it, at every kind of call taking one.
  const tsr_device vulkan7{TSR_DEVICE_VULKAN, 7};
  const tsr_device cpu99{TSR_DEVICE_CPU, 99};
  const tsr_device bad_type{TSR_DEVICE_TYPE_MAX + 5, 0};
  tsr_device_properties properties{};
  properties.struct_size = sizeof properties;
  EXPECT_BAD_EITHER(tsr_device_get_properties(rt(), vulkan7, &properties), TSR_NOT_FOUND,
                    TSR_INVALID_ARGUMENT, "device");
  EXPECT_BAD_EITHER(tsr_device_get_properties(rt(), cpu99, &properties), TSR_NOT_FOUND,
                    TSR_INVALID_ARGUMENT, "device");
  EXPECT_BAD_EITHER(tsr_device_get_properties(rt(), bad_type, &properties), TSR_NOT_FOUND,
                    TSR_INVALID_ARGUMENT, "device");
  EXPECT_BAD(tsr_device_get_properties(rt(), kCpu0, nullptr), TSR_INVALID_ARGUMENT,
             "out_properties");
  tsr_memory_stats stats{};
  stats.struct_size = sizeof stats;
  EXPECT_BAD_EITHER(tsr_device_memory_stats(rt(), vulkan7, &stats), TSR_NOT_FOUND,
                    TSR_INVALID_ARGUMENT, "device");
  EXPECT_BAD(tsr_device_memory_stats(rt(), kCpu0, nullptr), TSR_INVALID_ARGUMENT, "out_stats");
  EXPECT_BAD_EITHER(tsr_device_synchronize(rt(), vulkan7), TSR_NOT_FOUND, TSR_INVALID_ARGUMENT,
                    "device");
  EXPECT_BAD(tsr_device_set_option(rt(), kCpu0, nullptr, "2"), TSR_INVALID_ARGUMENT, "key");
  EXPECT_BAD(tsr_device_set_option(rt(), kCpu0, "threads", nullptr), TSR_INVALID_ARGUMENT, "value");
  char buffer[32];
  EXPECT_BAD(tsr_device_format(rt(), kCpu0, nullptr, sizeof buffer), TSR_INVALID_ARGUMENT,
             "buffer");

  tsr_tensor* tensor = kUntouchedTensor;
  const int64_t sizes[1] = {4};
  EXPECT_BAD_EITHER(tsr_tensor_empty(rt(), 1, sizes, TSR_FLOAT32, vulkan7, &tensor), TSR_NOT_FOUND,
                    TSR_INVALID_ARGUMENT, "device");
  EXPECT_EQ(tensor, kUntouchedTensor);
  EXPECT_BAD_EITHER(tsr_tensor_to_device(m23_.get(), cpu99, &tensor), TSR_NOT_FOUND,
                    TSR_INVALID_ARGUMENT, "device");
  EXPECT_EQ(tensor, kUntouchedTensor);
  tsr_stream* stream = nullptr;
  EXPECT_BAD_EITHER(tsr_stream_create(rt(), vulkan7, &stream), TSR_NOT_FOUND, TSR_INVALID_ARGUMENT,
                    "device");
  tsr_event* event = nullptr;
  EXPECT_BAD_EITHER(tsr_event_create(rt(), vulkan7, 0, &event), TSR_NOT_FOUND, TSR_INVALID_ARGUMENT,
                    "device");
}

// ---------------------------------------------------------------------------
// Streams and events
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, StreamAndEventCallsRejectNullHandles) {
  tsr_stream_release(nullptr);
  tsr_event_release(nullptr);
  bool done = false;
  double ms = 0;
  tsr_device device{};
  EXPECT_BAD(tsr_stream_create(nullptr, kCpu0, nullptr), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_stream_create(rt(), kCpu0, nullptr), TSR_INVALID_ARGUMENT, "out_stream");
  EXPECT_BAD(tsr_stream_default(rt(), kCpu0, nullptr), TSR_INVALID_ARGUMENT, "out_stream");
  EXPECT_BAD(tsr_stream_current(rt(), kCpu0, nullptr), TSR_INVALID_ARGUMENT, "out_stream");
  EXPECT_BAD(tsr_stream_set_current(nullptr), TSR_INVALID_ARGUMENT, "stream");
  EXPECT_BAD(tsr_stream_get_device(nullptr, &device), TSR_INVALID_ARGUMENT, "stream");
  EXPECT_BAD(tsr_stream_synchronize(nullptr), TSR_INVALID_ARGUMENT, "stream");
  EXPECT_BAD(tsr_stream_query(nullptr, &done), TSR_INVALID_ARGUMENT, "stream");
  EXPECT_BAD(tsr_stream_wait_event(nullptr, nullptr), TSR_INVALID_ARGUMENT, "stream");
  EXPECT_BAD(tsr_event_create(nullptr, kCpu0, 0, nullptr), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_event_create(rt(), kCpu0, 0, nullptr), TSR_INVALID_ARGUMENT, "out_event");
  EXPECT_BAD(tsr_event_record(nullptr, nullptr), TSR_INVALID_ARGUMENT, "event");
  EXPECT_BAD(tsr_event_query(nullptr, &done), TSR_INVALID_ARGUMENT, "event");
  EXPECT_BAD(tsr_event_synchronize(nullptr), TSR_INVALID_ARGUMENT, "event");
  EXPECT_BAD(tsr_event_elapsed_ms(nullptr, nullptr, &ms), TSR_INVALID_ARGUMENT, "start");

  tsr_stream* stream = nullptr;
  EXPECT_OK(tsr_stream_create(rt(), kCpu0, &stream));
  std::unique_ptr<tsr_stream, void (*)(tsr_stream*)> stream_owner(stream, tsr_stream_release);
  tsr_event* event = nullptr;
  EXPECT_OK(tsr_event_create(rt(), kCpu0, TSR_EVENT_TIMING, &event));
  std::unique_ptr<tsr_event, void (*)(tsr_event*)> event_owner(event, tsr_event_release);

  EXPECT_BAD(tsr_stream_get_device(stream, nullptr), TSR_INVALID_ARGUMENT, "out_device");
  EXPECT_BAD(tsr_stream_query(stream, nullptr), TSR_INVALID_ARGUMENT, "out_done");
  EXPECT_BAD(tsr_stream_wait_event(stream, nullptr), TSR_INVALID_ARGUMENT, "event");
  EXPECT_BAD(tsr_event_query(event, nullptr), TSR_INVALID_ARGUMENT, "out_done");
  EXPECT_OK(tsr_event_record(event, stream));
  EXPECT_BAD(tsr_event_elapsed_ms(event, nullptr, &ms), TSR_INVALID_ARGUMENT, "end");
  EXPECT_BAD(tsr_event_elapsed_ms(event, event, nullptr), TSR_INVALID_ARGUMENT, "out_ms");

  // Events of two devices cannot be compared.
  tsr_event* meta_event = nullptr;
  const Outcome meta_made = Take(tsr_event_create(rt(), kMeta, TSR_EVENT_TIMING, &meta_event));
  if (meta_made.code == TSR_OK) {
    std::unique_ptr<tsr_event, void (*)(tsr_event*)> meta_owner(meta_event, tsr_event_release);
    EXPECT_BAD_EITHER(tsr_event_elapsed_ms(event, meta_event, &ms), TSR_INVALID_ARGUMENT,
                      TSR_FAILED_PRECONDITION, "end");
  }
}

// ---------------------------------------------------------------------------
// Tensor creation
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, CreationRejectsBadShapesAndNamesThem) {
  tsr_tensor* tensor = kUntouchedTensor;
  const int64_t good[2] = {2, 3};
  const int64_t negative[2] = {2, -3};
  const int64_t nine[TSR_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};

  EXPECT_BAD(tsr_tensor_empty(nullptr, 2, good, TSR_FLOAT32, kCpu0, &tensor), TSR_INVALID_ARGUMENT,
             "runtime");
  EXPECT_BAD(tsr_tensor_empty(rt(), 2, good, TSR_FLOAT32, kCpu0, nullptr), TSR_INVALID_ARGUMENT,
             "out_tensor");
  EXPECT_BAD(tsr_tensor_empty(rt(), 2, nullptr, TSR_FLOAT32, kCpu0, &tensor), TSR_INVALID_ARGUMENT,
             "sizes");
  const Outcome neg = EXPECT_BAD(tsr_tensor_empty(rt(), 2, negative, TSR_FLOAT32, kCpu0, &tensor),
                                 TSR_INVALID_ARGUMENT, "sizes");
  EXPECT_TRUE(MentionsNumber(neg.message, -3) || neg.message.find("-3") != std::string::npos)
      << "must name the bad value -3: " << neg;
  EXPECT_BAD(tsr_tensor_empty(rt(), -1, good, TSR_FLOAT32, kCpu0, &tensor), TSR_INVALID_ARGUMENT,
             "ndim");
  const Outcome too_many =
      EXPECT_BAD(tsr_tensor_empty(rt(), TSR_MAX_DIMS + 1, nine, TSR_FLOAT32, kCpu0, &tensor),
                 TSR_INVALID_ARGUMENT, "ndim");
  EXPECT_TRUE(MentionsNumber(too_many.message, TSR_MAX_DIMS))
      << "must name the limit " << TSR_MAX_DIMS << ": " << too_many;
  EXPECT_BAD(tsr_tensor_empty(rt(), 2, good, kBadDtype, kCpu0, &tensor), TSR_INVALID_ARGUMENT,
             "dtype");
  EXPECT_BAD(tsr_tensor_zeros(rt(), 2, negative, TSR_FLOAT32, kCpu0, &tensor), TSR_INVALID_ARGUMENT,
             "sizes");
  EXPECT_BAD(tsr_tensor_zeros(rt(), TSR_MAX_DIMS + 1, nine, TSR_FLOAT32, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "ndim");
  EXPECT_EQ(tensor, kUntouchedTensor) << "out_tensor must be untouched on failure";
}

TEST_F(AbiBadInput, CreationRejectsSizesWhoseProductOrByteSizeOverflows) {
  tsr_tensor* tensor = kUntouchedTensor;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // numel = 2^62 * 4 overflows int64.
  const int64_t numel_overflow[2] = {int64_t{1} << 62, 4};
  EXPECT_BAD(tsr_tensor_empty(rt(), 2, numel_overflow, TSR_FLOAT32, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "sizes");
  // Each factor fits, and so would the product were it not for the third.
  const int64_t three_way[3] = {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 2};
  EXPECT_BAD(tsr_tensor_zeros(rt(), 3, three_way, TSR_INT8, kCpu0, &tensor), TSR_INVALID_ARGUMENT,
             "sizes");
  // numel fits in int64, numel * 8 bytes does not.
  const int64_t bytes_overflow[1] = {kMax / 4};
  EXPECT_BAD(tsr_tensor_empty(rt(), 1, bytes_overflow, TSR_FLOAT64, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "sizes");
  // The same through explicit strides: the addressed extent overflows.
  const int64_t sizes[2] = {2, 2};
  const int64_t strides[2] = {kMax / 2, 1};
  EXPECT_BAD(tsr_tensor_empty_strided(rt(), 2, sizes, strides, TSR_FLOAT32, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "strides");
  EXPECT_EQ(tensor, kUntouchedTensor);
}

TEST_F(AbiBadInput, StridedCreationRejectsBadStrides) {
  tsr_tensor* tensor = kUntouchedTensor;
  const int64_t sizes[2] = {2, 3};
  const int64_t negative[2] = {3, -1};
  EXPECT_BAD(tsr_tensor_empty_strided(rt(), 2, sizes, nullptr, TSR_FLOAT32, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "strides");
  EXPECT_BAD(tsr_tensor_empty_strided(rt(), 2, sizes, negative, TSR_FLOAT32, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "strides");
  EXPECT_EQ(tensor, kUntouchedTensor);
}

TEST_F(AbiBadInput, FromHostChecksDataAndByteCount) {
  tsr_tensor* tensor = kUntouchedTensor;
  const int64_t sizes[2] = {2, 3};
  const float data[6] = {1, 2, 3, 4, 5, 6};
  EXPECT_BAD(
      tsr_tensor_from_host(rt(), nullptr, sizeof data, 2, sizes, TSR_FLOAT32, kCpu0, &tensor),
      TSR_INVALID_ARGUMENT, "data");
  const Outcome short_count = EXPECT_BAD(
      tsr_tensor_from_host(rt(), data, sizeof data - 4, 2, sizes, TSR_FLOAT32, kCpu0, &tensor),
      TSR_INVALID_ARGUMENT, "nbytes");
  EXPECT_TRUE(MentionsNumber(short_count.message, 20) && MentionsNumber(short_count.message, 24))
      << "must name the given (20) and the needed (24) byte counts: " << short_count;
  EXPECT_BAD(tsr_tensor_from_host(rt(), data, sizeof data, 2, sizes, TSR_FLOAT32, kCpu0, nullptr),
             TSR_INVALID_ARGUMENT, "out_tensor");
  EXPECT_BAD(tsr_tensor_from_host(rt(), data, sizeof data, 2, sizes, kBadDtype, kCpu0, &tensor),
             TSR_INVALID_ARGUMENT, "dtype");
  EXPECT_EQ(tensor, kUntouchedTensor);
}

struct DeleterLog {
  int calls = 0;
  void* data = nullptr;
};

void CountingDeleter(void* data, void* context) {
  auto* log = static_cast<DeleterLog*>(context);
  log->calls++;
  log->data = data;
}

TEST_F(AbiBadInput, FromBlobRunsTheDeleterAtOnceWhenItFails) {
  float storage[4] = {};
  const int64_t sizes[1] = {4};
  tsr_tensor* tensor = kUntouchedTensor;

  DeleterLog null_data;
  EXPECT_BAD(tsr_tensor_from_blob(rt(), nullptr, 1, sizes, nullptr, TSR_FLOAT32, kCpu0,
                                  CountingDeleter, &null_data, &tensor),
             TSR_INVALID_ARGUMENT, "data");
  EXPECT_EQ(null_data.calls, 1) << "the deleter runs at once if from_blob fails";

  DeleterLog bad_dtype;
  EXPECT_BAD(tsr_tensor_from_blob(rt(), storage, 1, sizes, nullptr, kBadDtype, kCpu0,
                                  CountingDeleter, &bad_dtype, &tensor),
             TSR_INVALID_ARGUMENT, "dtype");
  EXPECT_EQ(bad_dtype.calls, 1);
  EXPECT_EQ(bad_dtype.data, static_cast<void*>(storage));

  DeleterLog bad_ndim;
  EXPECT_BAD(tsr_tensor_from_blob(rt(), storage, TSR_MAX_DIMS + 1, sizes, nullptr, TSR_FLOAT32,
                                  kCpu0, CountingDeleter, &bad_ndim, &tensor),
             TSR_INVALID_ARGUMENT, "ndim");
  EXPECT_EQ(bad_ndim.calls, 1);

  DeleterLog no_out;
  EXPECT_BAD(tsr_tensor_from_blob(rt(), storage, 1, sizes, nullptr, TSR_FLOAT32, kCpu0,
                                  CountingDeleter, &no_out, nullptr),
             TSR_INVALID_ARGUMENT, "out_tensor");
  EXPECT_EQ(no_out.calls, 1);
  EXPECT_EQ(tensor, kUntouchedTensor);
}

TEST_F(AbiBadInput, DlpackCallsRejectNull) {
  tsr_tensor* tensor = kUntouchedTensor;
  EXPECT_BAD(tsr_tensor_from_dlpack(rt(), nullptr, &tensor), TSR_INVALID_ARGUMENT, "managed");
  EXPECT_BAD(tsr_tensor_to_dlpack(nullptr, nullptr), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_to_dlpack(m23_.get(), nullptr), TSR_INVALID_ARGUMENT, "out_managed");
  EXPECT_EQ(tensor, kUntouchedTensor);
}

// ---------------------------------------------------------------------------
// Metadata: NULL tensors and NULL outs at every accessor
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, AccessorsNameNullTensorAndNullOut) {
  tsr_tensor_retain(nullptr);
  tsr_tensor_release(nullptr);
  tsr_tensor* t = m23_.get();
  tsr_tensor_info info{};
  info.struct_size = sizeof info;
  tsr_dtype dtype{};
  tsr_device device{};
  int32_t ndim = 0;
  int64_t values[TSR_MAX_DIMS] = {};
  int64_t scalar = 0;
  bool flag = false;
  uint64_t id = 0;
  void* data = nullptr;
  tsr_tensor_desc desc{};
  tsr_scalar item{};

  EXPECT_BAD(tsr_tensor_get_info(nullptr, &info), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_get_info(t, nullptr), TSR_INVALID_ARGUMENT, "out_info");
  EXPECT_BAD(tsr_tensor_dtype(nullptr, &dtype), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_dtype(t, nullptr), TSR_INVALID_ARGUMENT, "out_dtype");
  EXPECT_BAD(tsr_tensor_device(nullptr, &device), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_device(t, nullptr), TSR_INVALID_ARGUMENT, "out_device");
  EXPECT_BAD(tsr_tensor_ndim(nullptr, &ndim), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_ndim(t, nullptr), TSR_INVALID_ARGUMENT, "out_ndim");
  EXPECT_BAD(tsr_tensor_sizes(nullptr, values), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_sizes(t, nullptr), TSR_INVALID_ARGUMENT, "out_sizes");
  EXPECT_BAD(tsr_tensor_strides(nullptr, values), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_strides(t, nullptr), TSR_INVALID_ARGUMENT, "out_strides");
  EXPECT_BAD(tsr_tensor_storage_offset(nullptr, &scalar), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_storage_offset(t, nullptr), TSR_INVALID_ARGUMENT, "out_offset");
  EXPECT_BAD(tsr_tensor_numel(nullptr, &scalar), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_numel(t, nullptr), TSR_INVALID_ARGUMENT, "out_numel");
  EXPECT_BAD(tsr_tensor_is_contiguous(nullptr, TSR_CONTIGUOUS_FORMAT, &flag), TSR_INVALID_ARGUMENT,
             "tensor");
  EXPECT_BAD(tsr_tensor_is_contiguous(t, TSR_CONTIGUOUS_FORMAT, nullptr), TSR_INVALID_ARGUMENT,
             "out_contiguous");
  EXPECT_BAD(tsr_tensor_storage_id(nullptr, &id), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_storage_id(t, nullptr), TSR_INVALID_ARGUMENT, "out_id");
  EXPECT_BAD(tsr_tensor_version(nullptr, &id), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_version(t, nullptr), TSR_INVALID_ARGUMENT, "out_version");
  EXPECT_BAD(tsr_tensor_data_ptr(nullptr, &data), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_data_ptr(t, nullptr), TSR_INVALID_ARGUMENT, "out_data");
  EXPECT_BAD(tsr_tensor_describe(nullptr, &desc), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_describe(t, nullptr), TSR_INVALID_ARGUMENT, "out_desc");
  EXPECT_BAD(tsr_tensor_item(nullptr, &item), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_item(t, nullptr), TSR_INVALID_ARGUMENT, "out_value");
}

TEST_F(AbiBadInput, SetDataNamesItsArgumentsAndRefusesNonLeavesAndIntegerData) {
  tsr_tensor* t = m23_.get();
  EXPECT_BAD(tsr_tensor_set_data(nullptr, t), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_set_data(t, nullptr), TSR_INVALID_ARGUMENT, "data");
  // A tensor that requires grad cannot take integer data.
  ASSERT_EQ(Take(tsr_tensor_set_requires_grad(t, 1)).code, TSR_OK);
  TensorPtr ints = Make({4}, kCpu0, TSR_INT64);
  EXPECT_BAD(tsr_tensor_set_data(t, ints.get()), TSR_INVALID_ARGUMENT, "data");
  // A non-leaf (an op's result) is refused; the message says to detach.
  tsr_value args[1] = {};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = t;
  tsr_value out{};
  ASSERT_EQ(Take(tsr_op_call(Op("neg"), args, 1, &out, 1)).code, TSR_OK);
  TensorPtr negated(out.u.tensor);
  const Outcome o =
      EXPECT_BAD(tsr_tensor_set_data(negated.get(), v5_.get()), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_MENTIONS(o.message, "detach");
  // Failed calls change nothing: still (2, 3) float32.
  int64_t sizes[TSR_MAX_DIMS] = {};
  ASSERT_EQ(Take(tsr_tensor_sizes(t, sizes)).code, TSR_OK);
  EXPECT_EQ(sizes[0], 2);
  EXPECT_EQ(sizes[1], 3);
}

TEST_F(AbiBadInput, PinMemoryNamesItsArgumentsAndADeviceWithoutPinning) {
  tsr_tensor* pinned = kUntouchedTensor;
  EXPECT_BAD(tsr_tensor_pin_memory(nullptr, kCpu0, &pinned), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_pin_memory(m23_.get(), kCpu0, nullptr), TSR_INVALID_ARGUMENT, "out_tensor");
  // The CPU plugin has no pinned allocator: UNIMPLEMENTED, naming the device.
  EXPECT_BAD(tsr_tensor_pin_memory(m23_.get(), kCpu0, &pinned), TSR_UNIMPLEMENTED, "cpu:0");
  EXPECT_EQ(pinned, kUntouchedTensor);
  int32_t is_pinned = -1;
  EXPECT_BAD(tsr_tensor_is_pinned(nullptr, &is_pinned), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_is_pinned(m23_.get(), nullptr), TSR_INVALID_ARGUMENT, "out_pinned");
  ASSERT_EQ(Take(tsr_tensor_is_pinned(m23_.get(), &is_pinned)).code, TSR_OK);
  EXPECT_EQ(is_pinned, 0);
}

TEST_F(AbiBadInput, ItemOfAManyElementTensorIsRefused) {
  tsr_scalar item{};
  const Outcome outcome =
      EXPECT_BAD(tsr_tensor_item(m23_.get(), &item), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_TRUE(MentionsNumber(outcome.message, 6)) << "must name the element count 6: " << outcome;
}

TEST_F(AbiBadInput, DataPtrOfMetaTensorIsAFailedPrecondition) {
  TensorPtr meta = Make({2, 3}, kMeta);
  ASSERT_TRUE(meta);
  void* data = reinterpret_cast<void*>(uintptr_t{0x7e570070});
  EXPECT_BAD(tsr_tensor_data_ptr(meta.get(), &data), TSR_FAILED_PRECONDITION, "meta");
  EXPECT_EQ(data, reinterpret_cast<void*>(uintptr_t{0x7e570070}));
}

// ---------------------------------------------------------------------------
// Released (stale) handles
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, ReleasedTensorHandleIsDetected) {
  TensorPtr doomed = Make({4});
  ASSERT_TRUE(doomed);
  tsr_tensor* stale = doomed.release();
  tsr_tensor_release(stale);  // the last reference: the handle is now stale

  tsr_tensor_info info{};
  info.struct_size = sizeof info;
  EXPECT_BAD(tsr_tensor_get_info(stale, &info), TSR_INVALID_ARGUMENT, "tensor");
  int64_t numel = 0;
  EXPECT_BAD(tsr_tensor_numel(stale, &numel), TSR_INVALID_ARGUMENT, "tensor");
  float host[4];
  EXPECT_BAD(tsr_tensor_copy_to_host(stale, host, sizeof host), TSR_INVALID_ARGUMENT, "tensor");
  tsr_tensor* view = kUntouchedTensor;
  EXPECT_BAD(tsr_tensor_transpose(stale, 0, 0, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_EQ(view, kUntouchedTensor);

  TensorPtr live = Make({4});
  ASSERT_TRUE(live);
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_BAD(Call(add, {TensorValue(stale), TensorValue(live.get())}), TSR_INVALID_ARGUMENT,
             "self");
  EXPECT_BAD(Call(add, {TensorValue(live.get()), TensorValue(stale)}), TSR_INVALID_ARGUMENT,
             "other");
}

TEST_F(AbiBadInput, StaleHandleIsNotConfusedWithAReusedSlot) {
  // Release one tensor, then make many: whichever slot the core reuses, the old
  // handle must stay stale while the new ones work.
  TensorPtr doomed = Make({3});
  ASSERT_TRUE(doomed);
  tsr_tensor* stale = doomed.release();
  tsr_tensor_release(stale);
  std::vector<TensorPtr> fresh;
  for (int i = 0; i < 64; ++i) fresh.push_back(Make({3}));
  int64_t numel = 0;
  EXPECT_BAD(tsr_tensor_numel(stale, &numel), TSR_INVALID_ARGUMENT, "tensor");
  for (const TensorPtr& tensor : fresh) {
    ASSERT_TRUE(tensor);
    EXPECT_NE(tensor.get(), stale) << "a new tensor got the stale handle's value";
    EXPECT_OK(tsr_tensor_numel(tensor.get(), &numel));
    EXPECT_EQ(numel, 3);
  }
}

// ---------------------------------------------------------------------------
// Views: dims and indices out of range, incompatible sizes
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, ViewCallsRejectNullTensorAndNullOut) {
  tsr_tensor* view = kUntouchedTensor;
  const int64_t sizes[1] = {6};
  const int64_t dims[2] = {1, 0};
  EXPECT_BAD(tsr_tensor_view(nullptr, 1, sizes, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_view(m23_.get(), 1, sizes, nullptr), TSR_INVALID_ARGUMENT, "out_view");
  EXPECT_BAD(tsr_tensor_view(m23_.get(), 1, nullptr, &view), TSR_INVALID_ARGUMENT, "sizes");
  EXPECT_BAD(tsr_tensor_reshape(nullptr, 1, sizes, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_reshape(m23_.get(), 1, sizes, nullptr), TSR_INVALID_ARGUMENT, "out_tensor");
  EXPECT_BAD(tsr_tensor_transpose(nullptr, 0, 1, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_transpose(m23_.get(), 0, 1, nullptr), TSR_INVALID_ARGUMENT, "out_view");
  EXPECT_BAD(tsr_tensor_permute(nullptr, 2, dims, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_permute(m23_.get(), 2, nullptr, &view), TSR_INVALID_ARGUMENT, "dims");
  EXPECT_BAD(tsr_tensor_slice(nullptr, 0, 0, 1, 1, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_select(nullptr, 0, 0, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_expand(nullptr, 1, sizes, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_squeeze(nullptr, 0, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_unsqueeze(nullptr, 0, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_as_strided(nullptr, 1, sizes, sizes, 0, &view), TSR_INVALID_ARGUMENT,
             "tensor");
  EXPECT_BAD(tsr_tensor_detach(nullptr, &view), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_detach(m23_.get(), nullptr), TSR_INVALID_ARGUMENT, "out_view");
  EXPECT_EQ(view, kUntouchedTensor);
}

TEST_F(AbiBadInput, DimsOutOfRangeAreOutOfRange) {
  tsr_tensor* view = kUntouchedTensor;
  tsr_tensor* t = m23_.get();  // [2, 3]: valid dims -2 .. 1
  EXPECT_BAD(tsr_tensor_transpose(t, 0, 2, &view), TSR_OUT_OF_RANGE, "dim1");
  EXPECT_BAD(tsr_tensor_transpose(t, -3, 1, &view), TSR_OUT_OF_RANGE, "dim0");
  EXPECT_BAD(tsr_tensor_select(t, 2, 0, &view), TSR_OUT_OF_RANGE, "dim");
  EXPECT_BAD(tsr_tensor_select(t, -3, 0, &view), TSR_OUT_OF_RANGE, "dim");
  EXPECT_BAD(tsr_tensor_slice(t, 2, 0, 1, 1, &view), TSR_OUT_OF_RANGE, "dim");
  EXPECT_BAD(tsr_tensor_squeeze(t, 2, &view), TSR_OUT_OF_RANGE, "dim");
  EXPECT_BAD(tsr_tensor_squeeze(t, -3, &view), TSR_OUT_OF_RANGE, "dim");
  // unsqueeze of a 2-d tensor accepts -3 .. 2.
  EXPECT_BAD(tsr_tensor_unsqueeze(t, 3, &view), TSR_OUT_OF_RANGE, "dim");
  EXPECT_BAD(tsr_tensor_unsqueeze(t, -4, &view), TSR_OUT_OF_RANGE, "dim");
  const int64_t far_dims[2] = {0, 2};
  EXPECT_BAD(tsr_tensor_permute(t, 2, far_dims, &view), TSR_OUT_OF_RANGE, "dims");
  EXPECT_EQ(view, kUntouchedTensor);
}

TEST_F(AbiBadInput, SelectIndexOutOfRangeIsOutOfRange) {
  tsr_tensor* view = kUntouchedTensor;
  const Outcome high =
      EXPECT_BAD(tsr_tensor_select(m23_.get(), 1, 3, &view), TSR_OUT_OF_RANGE, "index");
  EXPECT_TRUE(MentionsNumber(high.message, 3)) << high;
  EXPECT_BAD(tsr_tensor_select(m23_.get(), 1, -4, &view), TSR_OUT_OF_RANGE, "index");
  EXPECT_BAD(tsr_tensor_select(m23_.get(), 0, 2, &view), TSR_OUT_OF_RANGE, "index");
  EXPECT_EQ(view, kUntouchedTensor);
}

TEST_F(AbiBadInput, PermuteRejectsDuplicateDimsAndWrongCount) {
  tsr_tensor* view = kUntouchedTensor;
  const int64_t duplicate[2] = {0, 0};
  const int64_t duplicate_negative[2] = {1, -1};
  const int64_t one[1] = {0};
  EXPECT_BAD(tsr_tensor_permute(m23_.get(), 2, duplicate, &view), TSR_INVALID_ARGUMENT, "dims");
  EXPECT_BAD(tsr_tensor_permute(m23_.get(), 2, duplicate_negative, &view), TSR_INVALID_ARGUMENT,
             "dims");
  EXPECT_BAD(tsr_tensor_permute(m23_.get(), 1, one, &view), TSR_INVALID_ARGUMENT, "dims");
  EXPECT_EQ(view, kUntouchedTensor);
}

TEST_F(AbiBadInput, SliceRejectsNonPositiveStep) {
  tsr_tensor* view = kUntouchedTensor;
  EXPECT_BAD(tsr_tensor_slice(m23_.get(), 1, 0, 3, 0, &view), TSR_INVALID_ARGUMENT, "step");
  EXPECT_BAD(tsr_tensor_slice(m23_.get(), 1, 0, 3, -1, &view), TSR_INVALID_ARGUMENT, "step");
  EXPECT_EQ(view, kUntouchedTensor);
}

TEST_F(AbiBadInput, ViewWithIncompatibleSizeIsRefused) {
  tsr_tensor* view = kUntouchedTensor;
  const int64_t seven[1] = {7};
  const Outcome wrong_numel =
      EXPECT_BAD(tsr_tensor_view(m23_.get(), 1, seven, &view), TSR_INVALID_ARGUMENT, "size");
  EXPECT_TRUE(MentionsNumber(wrong_numel.message, 7) && MentionsNumber(wrong_numel.message, 6))
      << "must name the requested 7 and the actual 6 elements: " << wrong_numel;
  const int64_t two_inferred[2] = {-1, -1};
  EXPECT_BAD(tsr_tensor_view(m23_.get(), 2, two_inferred, &view), TSR_INVALID_ARGUMENT, "size");
  const int64_t negative[2] = {-2, 3};
  EXPECT_BAD(tsr_tensor_view(m23_.get(), 2, negative, &view), TSR_INVALID_ARGUMENT, "size");
  const int64_t nine[TSR_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 2, 3};
  EXPECT_BAD(tsr_tensor_view(m23_.get(), TSR_MAX_DIMS + 1, nine, &view), TSR_INVALID_ARGUMENT,
             "ndim");

  // A transposed [3, 2] tensor has strides (1, 3): flattening it needs a copy.
  tsr_tensor* transposed = nullptr;
  EXPECT_OK(tsr_tensor_transpose(m23_.get(), 0, 1, &transposed));
  TensorPtr owner(transposed);
  const int64_t flat[1] = {6};
  const Outcome strided =
      EXPECT_BAD(tsr_tensor_view(transposed, 1, flat, &view), TSR_INVALID_ARGUMENT, "reshape");
  (void)strided;
  EXPECT_EQ(view, kUntouchedTensor);
  // ... which reshape does.
  tsr_tensor* reshaped = nullptr;
  EXPECT_OK(tsr_tensor_reshape(transposed, 1, flat, &reshaped));
  tsr_tensor_release(reshaped);
}

TEST_F(AbiBadInput, ExpandToIncompatibleSizeIsRefused) {
  tsr_tensor* view = kUntouchedTensor;
  const int64_t four[1] = {4};  // [5] cannot expand to [4]
  EXPECT_BAD(tsr_tensor_expand(v5_.get(), 1, four, &view), TSR_INVALID_ARGUMENT, "size");
  const int64_t fewer[1] = {3};  // [2, 3] cannot expand to fewer dims
  EXPECT_BAD(tsr_tensor_expand(m23_.get(), 1, fewer, &view), TSR_INVALID_ARGUMENT, "size");
  EXPECT_EQ(view, kUntouchedTensor);
}

TEST_F(AbiBadInput, AsStridedOutsideTheStorageIsRefused) {
  tsr_tensor* view = kUntouchedTensor;
  const int64_t sizes[1] = {7};  // storage holds 6 elements
  const int64_t strides[1] = {1};
  EXPECT_BAD_EITHER(tsr_tensor_as_strided(m23_.get(), 1, sizes, strides, 0, &view),
                    TSR_INVALID_ARGUMENT, TSR_OUT_OF_RANGE, "storage");
  const int64_t negative_stride[1] = {-1};
  const int64_t one[1] = {1};
  EXPECT_BAD(tsr_tensor_as_strided(m23_.get(), 1, one, negative_stride, 0, &view),
             TSR_INVALID_ARGUMENT, "strides");
  EXPECT_EQ(view, kUntouchedTensor);
}

// ---------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, HostCopiesCheckPointersAndByteCounts) {
  float host[6] = {};
  const Outcome short_dst = EXPECT_BAD(tsr_tensor_copy_to_host(m23_.get(), host, 5 * sizeof(float)),
                                       TSR_INVALID_ARGUMENT, "nbytes");
  EXPECT_TRUE(MentionsNumber(short_dst.message, 20) && MentionsNumber(short_dst.message, 24))
      << "must name the given (20) and the needed (24) byte counts: " << short_dst;
  EXPECT_BAD(tsr_tensor_copy_to_host(m23_.get(), host, 7 * sizeof(float)), TSR_INVALID_ARGUMENT,
             "nbytes");
  EXPECT_BAD(tsr_tensor_copy_to_host(m23_.get(), nullptr, sizeof host), TSR_INVALID_ARGUMENT,
             "dst");
  EXPECT_BAD(tsr_tensor_copy_to_host(nullptr, host, sizeof host), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_copy_from_host(m23_.get(), host, 5 * sizeof(float)), TSR_INVALID_ARGUMENT,
             "nbytes");
  EXPECT_BAD(tsr_tensor_copy_from_host(m23_.get(), nullptr, sizeof host), TSR_INVALID_ARGUMENT,
             "src");
  EXPECT_BAD(tsr_tensor_copy_from_host(nullptr, host, sizeof host), TSR_INVALID_ARGUMENT, "tensor");
}

TEST_F(AbiBadInput, TensorCopyAndConversionsCheckTheirArguments) {
  tsr_tensor* out = kUntouchedTensor;
  EXPECT_BAD(tsr_tensor_copy_(nullptr, m23_.get()), TSR_INVALID_ARGUMENT, "dst");
  EXPECT_BAD(tsr_tensor_copy_(m23_.get(), nullptr), TSR_INVALID_ARGUMENT, "src");
  // [5] does not broadcast to [2, 3]: like add, the message names both shapes.
  const Outcome shapes = Take(tsr_tensor_copy_(m23_.get(), v5_.get()));
  EXPECT_EQ(shapes.code, TSR_INVALID_ARGUMENT) << shapes;
  EXPECT_MENTIONS(WithoutSpaces(shapes.message), "2,3") << "must name dst's shape [2, 3]";
  EXPECT_TRUE(MentionsNumber(shapes.message, 5)) << "must name src's shape [5]: " << shapes;
  EXPECT_BAD(tsr_tensor_to_dtype(m23_.get(), kBadDtype, &out), TSR_INVALID_ARGUMENT, "dtype");
  EXPECT_BAD(tsr_tensor_to_dtype(m23_.get(), TSR_FLOAT64, nullptr), TSR_INVALID_ARGUMENT,
             "out_tensor");
  EXPECT_BAD(tsr_tensor_to_device(nullptr, kCpu0, &out), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_to_device(m23_.get(), kCpu0, nullptr), TSR_INVALID_ARGUMENT, "out_tensor");
  EXPECT_EQ(out, kUntouchedTensor);
}

// ---------------------------------------------------------------------------
// Operators: lookup and boxed calls
// ---------------------------------------------------------------------------

TEST_F(AbiBadInput, UnknownOpIsNotFoundAndSuggestsTheClosest) {
  const tsr_op* op = reinterpret_cast<const tsr_op*>(uintptr_t{0x7e570080});
  EXPECT_BAD(tsr_op_find(rt(), "no_such_op_anywhere", &op), TSR_NOT_FOUND, "no_such_op_anywhere");
  const Outcome typo = EXPECT_BAD(tsr_op_find(rt(), "add.Tensr", &op), TSR_NOT_FOUND, "add.Tensr");
  EXPECT_MENTIONS(typo.message, "add.Tensor");
  EXPECT_BAD(tsr_op_find(rt(), "add.NoSuchOverload", &op), TSR_NOT_FOUND, "add.NoSuchOverload");
  EXPECT_EQ(op, reinterpret_cast<const tsr_op*>(uintptr_t{0x7e570080}));
  EXPECT_BAD(tsr_op_find(rt(), nullptr, &op), TSR_INVALID_ARGUMENT, "name");
  EXPECT_BAD(tsr_op_find(rt(), "add.Tensor", nullptr), TSR_INVALID_ARGUMENT, "out_op");

  size_t count = 0;
  EXPECT_OK(tsr_op_count(rt(), &count));
  EXPECT_BAD(tsr_op_at(rt(), count, &op), TSR_OUT_OF_RANGE, "index");
  EXPECT_BAD(tsr_op_count(rt(), nullptr), TSR_INVALID_ARGUMENT, "out_count");
}

TEST_F(AbiBadInput, OpQueriesRejectNull) {
  tsr_op_kind kind{};
  bool has = false;
  EXPECT_BAD(tsr_op_kind_of(nullptr, &kind), TSR_INVALID_ARGUMENT, "op");
  EXPECT_BAD(tsr_op_has_kernel(nullptr, kCpu0, TSR_FLOAT32, &has), TSR_INVALID_ARGUMENT, "op");
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_BAD(tsr_op_kind_of(add, nullptr), TSR_INVALID_ARGUMENT, "out_kind");
  EXPECT_BAD(tsr_op_has_kernel(add, kCpu0, TSR_FLOAT32, nullptr), TSR_INVALID_ARGUMENT,
             "out_kernel");
  EXPECT_BAD(tsr_op_has_kernel(add, kCpu0, kBadDtype, &has), TSR_INVALID_ARGUMENT, "dtype");
}

TEST_F(AbiBadInput, OpCallRejectsNullOpArgsAndOuts) {
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  tsr_value args[2] = {TensorValue(m23_.get()), TensorValue(m23_.get())};
  tsr_value out{};
  EXPECT_BAD(tsr_op_call(nullptr, args, 2, &out, 1), TSR_INVALID_ARGUMENT, "op");
  EXPECT_BAD(tsr_op_call(add, nullptr, 2, &out, 1), TSR_INVALID_ARGUMENT, "args");
  EXPECT_BAD(tsr_op_call(add, args, 2, nullptr, 1), TSR_INVALID_ARGUMENT, "outs");
  EXPECT_EQ(out.tag, TSR_VALUE_NONE) << "outs must be untouched on failure";
}

TEST_F(AbiBadInput, OpCallNamesTheArgumentOfTheWrongType) {
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  const Outcome string_other =
      EXPECT_BAD(Call(add, {TensorValue(m23_.get()), StringValue("not a tensor")}),
                 TSR_INVALID_ARGUMENT, "other");
  EXPECT_MENTIONS(string_other.message, "Tensor");
  EXPECT_BAD(Call(add, {StringValue("x"), TensorValue(m23_.get())}), TSR_INVALID_ARGUMENT, "self");
  EXPECT_BAD(Call(add, {TensorValue(m23_.get()), TensorValue(m23_.get()), StringValue("2")}),
             TSR_INVALID_ARGUMENT, "alpha");
  // A tensor tag with no tensor behind it.
  EXPECT_BAD(Call(add, {TensorValue(m23_.get()), TensorValue(nullptr)}), TSR_INVALID_ARGUMENT,
             "other");
  // A tag outside the enum.
  tsr_value garbage{};
  garbage.tag = 99;
  EXPECT_BAD(Call(add, {TensorValue(m23_.get()), garbage}), TSR_INVALID_ARGUMENT, "other");
  // None for a non-optional Tensor.
  EXPECT_BAD(Call(add, {TensorValue(m23_.get()), tsr_value{}}), TSR_INVALID_ARGUMENT, "other");

  const tsr_op* add_scalar = Op("add.Scalar");
  ASSERT_NE(add_scalar, nullptr);
  EXPECT_BAD(Call(add_scalar, {TensorValue(m23_.get()), StringValue("2.5")}), TSR_INVALID_ARGUMENT,
             "other");
  // A Scalar whose kind is not one of bool/int64/float64/complex128.
  tsr_value bad_scalar = ScalarValue(1.0);
  bad_scalar.u.scalar.kind = TSR_INT8;
  EXPECT_BAD(Call(add_scalar, {TensorValue(m23_.get()), bad_scalar}), TSR_INVALID_ARGUMENT,
             "other");

  const tsr_op* sum = Op("sum.dim_IntList");
  ASSERT_NE(sum, nullptr);
  tsr_value dims{};
  dims.tag = TSR_VALUE_INT_LIST;
  dims.len = -1;
  const int64_t dim_values[1] = {0};
  dims.u.ints = dim_values;
  EXPECT_BAD(Call(sum, {TensorValue(m23_.get()), dims}), TSR_INVALID_ARGUMENT, "dim");
  dims.len = 1;
  dims.u.ints = nullptr;
  EXPECT_BAD(Call(sum, {TensorValue(m23_.get()), dims}), TSR_INVALID_ARGUMENT, "dim");
  const int64_t far_dim[1] = {5};
  dims.u.ints = far_dim;
  EXPECT_BAD(Call(sum, {TensorValue(m23_.get()), dims}), TSR_OUT_OF_RANGE, "dim");
}

TEST_F(AbiBadInput, OpCallRejectsTooManyAndTooFewArguments) {
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  const Outcome too_many = EXPECT_BAD(Call(add, {TensorValue(m23_.get()), TensorValue(m23_.get()),
                                                 ScalarValue(1.0), ScalarValue(2.0)}),
                                      TSR_INVALID_ARGUMENT, "add.Tensor");
  EXPECT_TRUE(MentionsNumber(too_many.message, 4)) << "must name the 4 given: " << too_many;
  EXPECT_BAD(Call(add, {TensorValue(m23_.get())}), TSR_INVALID_ARGUMENT, "other");
  EXPECT_BAD(Call(add, {}), TSR_INVALID_ARGUMENT, "self");
}

TEST_F(AbiBadInput, AddOfNonBroadcastableShapesNamesBothShapes) {
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  // [2, 3] + [5]
  const Outcome outcome = Take(Call(add, {TensorValue(m23_.get()), TensorValue(v5_.get())}));
  EXPECT_EQ(outcome.code, TSR_INVALID_ARGUMENT) << outcome;
  const std::string compact = WithoutSpaces(outcome.message);
  EXPECT_MENTIONS(compact, "2,3") << "must name self's shape [2, 3]";
  EXPECT_TRUE(MentionsNumber(outcome.message, 5)) << "must name other's shape [5]: " << outcome;
}

TEST_F(AbiBadInput, MmWithMismatchedInnerDimsIsRefused) {
  const tsr_op* mm = Op("mm");
  ASSERT_NE(mm, nullptr);
  TensorPtr m45 = Make({4, 5});
  ASSERT_TRUE(m45);
  const Outcome inner = EXPECT_BAD(Call(mm, {TensorValue(m23_.get()), TensorValue(m45.get())}),
                                   TSR_INVALID_ARGUMENT, "mat2");
  EXPECT_TRUE(MentionsNumber(inner.message, 3) && MentionsNumber(inner.message, 4))
      << "must name both inner sizes 3 and 4: " << inner;
  EXPECT_BAD(Call(mm, {TensorValue(v5_.get()), TensorValue(m45.get())}), TSR_INVALID_ARGUMENT,
             "self");
}

TEST_F(AbiBadInput, TensorsOfTwoRuntimesCannotMeetInOneOp) {
  RuntimePtr other_runtime = MakeRuntimeWithCpu();
  ASSERT_TRUE(other_runtime);
  tsr_tensor* foreign = nullptr;
  const int64_t sizes[2] = {2, 3};
  EXPECT_OK(tsr_tensor_zeros(other_runtime.get(), 2, sizes, TSR_FLOAT32, kCpu0, &foreign));
  TensorPtr foreign_owner(foreign);
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  const Outcome mixed = EXPECT_BAD(Call(add, {TensorValue(m23_.get()), TensorValue(foreign)}),
                                   TSR_INVALID_ARGUMENT, "other");
  EXPECT_MENTIONS(mixed.message, "runtime");
  EXPECT_BAD(tsr_tensor_copy_(m23_.get(), foreign), TSR_INVALID_ARGUMENT, "src");
}

TEST_F(AbiBadInput, TensorsOfTwoDevicesCannotMeetInOneOp) {
  TensorPtr meta = Make({2, 3}, kMeta);
  ASSERT_TRUE(meta);
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  // As PyTorch: the message names the two devices (rather than an argument).
  const Outcome mixed = EXPECT_BAD(Call(add, {TensorValue(m23_.get()), TensorValue(meta.get())}),
                                   TSR_INVALID_ARGUMENT, "cpu:0");
  EXPECT_MENTIONS(mixed.message, "meta");
}

TEST_F(AbiBadInput, InPlaceWriteToAnExpandedTensorIsRefused) {
  TensorPtr one = Make({1});
  ASSERT_TRUE(one);
  tsr_tensor* expanded = nullptr;
  const int64_t sizes[1] = {4};
  EXPECT_OK(tsr_tensor_expand(one.get(), 1, sizes, &expanded));
  TensorPtr owner(expanded);
  const tsr_op* fill = Op("fill_.Scalar");
  ASSERT_NE(fill, nullptr);
  // PyTorch's wording, which names the fix (clone) rather than the argument.
  EXPECT_BAD(Call(fill, {TensorValue(expanded), ScalarValue(1.0)}), TSR_INVALID_ARGUMENT,
             "single memory location");
}

// ---------------------------------------------------------------------------
// Custom operators, hooks, custom functions, inference mode
// ---------------------------------------------------------------------------

tsr_status* SameShapeRule(void*, const tsr_value* args, int32_t, int32_t, int32_t* dtypes,
                          int32_t* ndims, int64_t* sizes) {
  dtypes[0] = args[0].u.desc->dtype;
  ndims[0] = args[0].u.desc->ndim;
  for (int32_t d = 0; d < ndims[0]; ++d) sizes[d] = args[0].u.desc->sizes[d];
  return nullptr;
}

TEST_F(AbiBadInput, CustomOpCallsNameTheirBadArgument) {
  tsr_op_def def{};
  def.struct_size = sizeof def;
  def.schema = "badinput::same(Tensor x) -> Tensor";
  def.shape = SameShapeRule;
  const tsr_op* op = nullptr;
  EXPECT_BAD(tsr_op_define(nullptr, &def, &op), TSR_INVALID_ARGUMENT, "runtime");
  EXPECT_BAD(tsr_op_define(rt(), nullptr, &op), TSR_INVALID_ARGUMENT, "def");
  EXPECT_BAD(tsr_op_define(rt(), &def, nullptr), TSR_INVALID_ARGUMENT, "out_op");
  tsr_op_def small = def;
  small.struct_size = 8;
  EXPECT_BAD(tsr_op_define(rt(), &small, &op), TSR_INVALID_ARGUMENT, "struct_size");
  tsr_op_def no_schema = def;
  no_schema.schema = nullptr;
  EXPECT_BAD(tsr_op_define(rt(), &no_schema, &op), TSR_INVALID_ARGUMENT, "def->schema");
  tsr_op_def garbled = def;
  garbled.schema = "badinput::(((";
  EXPECT_BAD(tsr_op_define(rt(), &garbled, &op), TSR_INVALID_ARGUMENT, "schema");
  EXPECT_EQ(op, nullptr);  // untouched by every refusal
  EXPECT_OK(tsr_op_define(rt(), &def, &op));
  EXPECT_BAD(tsr_op_define(rt(), &def, &op), TSR_ALREADY_EXISTS, "badinput::same");
  auto kernel = [](void*, const tsr_value*, int32_t, tsr_tensor_desc*, int32_t) -> tsr_status* {
    return nullptr;
  };
  EXPECT_BAD(tsr_op_register_kernel(nullptr, "cpu", 0, kernel, nullptr), TSR_INVALID_ARGUMENT,
             "op");
  EXPECT_BAD(tsr_op_register_kernel(op, nullptr, 0, kernel, nullptr), TSR_INVALID_ARGUMENT,
             "device_type");
  EXPECT_BAD(tsr_op_register_kernel(op, "meta", 0, kernel, nullptr), TSR_INVALID_ARGUMENT,
             "device_type");
  EXPECT_BAD(tsr_op_register_kernel(op, "cpu", 0, nullptr, nullptr), TSR_INVALID_ARGUMENT, "fn");
  EXPECT_BAD(tsr_op_set_backward(nullptr, nullptr, nullptr), TSR_INVALID_ARGUMENT, "op");
  tsr_op_autograd support{};
  EXPECT_BAD(tsr_op_autograd_support(nullptr, &support), TSR_INVALID_ARGUMENT, "op");
  EXPECT_BAD(tsr_op_autograd_support(op, nullptr), TSR_INVALID_ARGUMENT, "out_support");
  // Calling it: a wrong argument type is named like any op's.
  tsr_value out{};
  tsr_value bad = StringValue("x");
  EXPECT_BAD(tsr_op_call(op, &bad, 1, &out, 1), TSR_INVALID_ARGUMENT, "x");
}

TEST_F(AbiBadInput, HookCallsNameTheirBadArgument) {
  auto hook = [](void*, tsr_tensor*, tsr_tensor**) -> tsr_status* { return nullptr; };
  uint64_t handle = 0;
  EXPECT_BAD(tsr_tensor_register_hook(nullptr, hook, nullptr, nullptr, &handle),
             TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_register_hook(m23_.get(), nullptr, nullptr, nullptr, &handle),
             TSR_INVALID_ARGUMENT, "fn");
  EXPECT_BAD(tsr_tensor_register_hook(m23_.get(), hook, nullptr, nullptr, nullptr),
             TSR_INVALID_ARGUMENT, "out_handle");
  // m23_ does not require grad: a precondition, named with the fix.
  EXPECT_BAD(tsr_tensor_register_hook(m23_.get(), hook, nullptr, nullptr, &handle),
             TSR_FAILED_PRECONDITION, "requires_grad_");
  EXPECT_BAD(tsr_tensor_remove_hook(m23_.get(), 12345), TSR_NOT_FOUND, "handle");
  EXPECT_BAD(tsr_tensor_remove_hook(nullptr, 1), TSR_INVALID_ARGUMENT, "tensor");
}

TEST_F(AbiBadInput, CustomFunctionCallsNameTheirBadArgument) {
  auto forward = [](void*, tsr_function_ctx*, const tsr_value*, int32_t, tsr_tensor**,
                    int32_t) -> tsr_status* { return nullptr; };  // leaves outs NULL
  auto backward = [](void*, tsr_function_ctx*, tsr_tensor* const*, int32_t, tsr_tensor**,
                     int32_t) -> tsr_status* { return nullptr; };
  tsr_function_def def{};
  def.struct_size = sizeof def;
  def.name = "Bad";
  def.forward = forward;
  def.backward = backward;
  tsr_value arg = TensorValue(m23_.get());
  tsr_tensor* out = nullptr;
  EXPECT_BAD(tsr_function_apply(nullptr, &arg, 1, &out, 1), TSR_INVALID_ARGUMENT, "def");
  tsr_function_def unnamed = def;
  unnamed.name = nullptr;
  EXPECT_BAD(tsr_function_apply(&unnamed, &arg, 1, &out, 1), TSR_INVALID_ARGUMENT, "def->name");
  tsr_function_def no_backward = def;
  no_backward.backward = nullptr;
  EXPECT_BAD(tsr_function_apply(&no_backward, &arg, 1, &out, 1), TSR_INVALID_ARGUMENT,
             "def->backward");
  EXPECT_BAD(tsr_function_apply(&def, nullptr, 1, &out, 1), TSR_INVALID_ARGUMENT, "args");
  EXPECT_BAD(tsr_function_apply(&def, &arg, 1, &out, 0), TSR_INVALID_ARGUMENT, "nouts");
  // A forward that returns nothing is named.
  EXPECT_BAD(tsr_function_apply(&def, &arg, 1, &out, 1), TSR_INVALID_ARGUMENT, "outs[0]");
  EXPECT_EQ(out, nullptr);
  int32_t count = 0;
  EXPECT_BAD(tsr_function_ctx_saved_count(nullptr, &count), TSR_INVALID_ARGUMENT, "ctx");
  tsr_tensor* t = m23_.get();
  EXPECT_BAD(tsr_function_ctx_save_for_backward(nullptr, 1, &t), TSR_INVALID_ARGUMENT, "ctx");
  EXPECT_BAD(tsr_function_ctx_mark_dirty(nullptr, 1, &t), TSR_INVALID_ARGUMENT, "ctx");
  EXPECT_BAD(tsr_function_ctx_mark_non_differentiable(nullptr, 1, &t), TSR_INVALID_ARGUMENT, "ctx");
  EXPECT_BAD(tsr_function_ctx_saved(nullptr, 0, &t), TSR_INVALID_ARGUMENT, "ctx");
  int32_t needs = 0;
  EXPECT_BAD(tsr_function_ctx_needs_input_grad(nullptr, 0, &needs), TSR_INVALID_ARGUMENT, "ctx");
}

TEST_F(AbiBadInput, InferenceModeCallsNameTheirBadArgument) {
  int32_t is_inference = 0;
  EXPECT_BAD(tsr_tensor_is_inference(nullptr, &is_inference), TSR_INVALID_ARGUMENT, "tensor");
  EXPECT_BAD(tsr_tensor_is_inference(m23_.get(), nullptr), TSR_INVALID_ARGUMENT,
             "out_is_inference");
  EXPECT_OK(tsr_inference_mode_set(0, nullptr));  // NULL out_previous is allowed
  EXPECT_EQ(tsr_inference_mode_enabled(), 0);
}

// ---------------------------------------------------------------------------
// Hostile sizes, offsets and handles (Note [Checked size arithmetic])
// ---------------------------------------------------------------------------

constexpr int64_t kTwo62 = int64_t{1} << 62;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

tsr_value IntValue(int64_t number) {
  tsr_value value{};
  value.tag = TSR_VALUE_INT;
  value.u.i = number;
  return value;
}

// `numbers` must outlive the value (a temporary lives to the end of the call).
tsr_value IntListValue(const std::vector<int64_t>& numbers) {
  tsr_value value{};
  value.tag = TSR_VALUE_INT_LIST;
  value.len = static_cast<int32_t>(numbers.size());
  value.u.ints = numbers.data();
  return value;
}

TEST_F(AbiBadInput, FactoryLengthsWhoseByteCountOverflowsAreRefused) {
  // 2^62 + 1 float32 elements: the byte count wraps to 4 bytes unchecked.
  const int64_t steps = kTwo62 + 1;
  const Outcome lin =
      EXPECT_BAD(Call(Op("linspace"), {ScalarValue(0), ScalarValue(1), IntValue(steps)}),
                 TSR_INVALID_ARGUMENT, "steps");
  EXPECT_TRUE(MentionsNumber(lin.message, steps)) << lin;
  EXPECT_BAD(Call(Op("logspace"), {ScalarValue(0), ScalarValue(1), IntValue(steps)}),
             TSR_INVALID_ARGUMENT, "steps");
  const Outcome perm =
      EXPECT_BAD(Call(Op("randperm"), {IntValue(steps)}), TSR_INVALID_ARGUMENT, "argument 'n'");
  EXPECT_TRUE(MentionsNumber(perm.message, steps)) << perm;
  // diag of a vector with diagonal -2^62: a (5 + 2^62)^2 result.
  const Outcome diag = EXPECT_BAD(Call(Op("diag"), {TensorValue(v5_.get()), IntValue(-kTwo62)}),
                                  TSR_INVALID_ARGUMENT, "diagonal");
  EXPECT_TRUE(MentionsNumber(diag.message, -kTwo62)) << diag;
  EXPECT_BAD(
      Call(Op("diag"), {TensorValue(v5_.get()), IntValue(std::numeric_limits<int64_t>::min())}),
      TSR_INVALID_ARGUMENT, "diagonal");
}

TEST_F(AbiBadInput, FactorySizesWithAZeroDimStillHaveTheirStridesChecked) {
  // numel is 0, but the strides of [0, 16, 2^62 + 1, 3] overflow int64.
  const std::vector<int64_t> sizes = {0, 16, kTwo62 + 1, 3};
  for (const char* name : {"zeros", "empty.memory_format", "ones"}) {
    const Outcome refused =
        EXPECT_BAD(Call(Op(name), {IntListValue(sizes)}), TSR_INVALID_ARGUMENT, "size");
    EXPECT_MENTIONS(refused.message, "4611686018427387905");
  }
}

TEST_F(AbiBadInput, ExtentsThatWrapInt64AreRefusedAtEveryEntry) {
  // (2-1) * (2^63-1) * 2 + (2-1) * 2 = 2^64: the extent wraps to 1 element, so
  // an unchecked view of a 1-element storage would reach far outside it.
  const int64_t sizes[3] = {2, 2, 2};
  const int64_t strides[3] = {kInt64Max, kInt64Max, 2};
  TensorPtr one = Make({1});
  ASSERT_TRUE(one);
  tsr_tensor* view = kUntouchedTensor;
  EXPECT_BAD(tsr_tensor_as_strided(one.get(), 3, sizes, strides, 0, &view), TSR_INVALID_ARGUMENT,
             "stride");
  EXPECT_BAD(tsr_tensor_empty_strided(rt(), 3, sizes, strides, TSR_FLOAT32, kCpu0, &view),
             TSR_INVALID_ARGUMENT, "strides");
  float blob[1] = {};
  DeleterLog log;
  EXPECT_BAD(tsr_tensor_from_blob(rt(), blob, 3, sizes, strides, TSR_FLOAT32, kCpu0,
                                  CountingDeleter, &log, &view),
             TSR_INVALID_ARGUMENT, "strides");
  EXPECT_EQ(log.calls, 1);
  // An offset that pushes a fitting extent past int64.
  const int64_t one_size[1] = {2};
  const int64_t unit[1] = {1};
  EXPECT_BAD(tsr_tensor_as_strided(one.get(), 1, one_size, unit, kInt64Max, &view),
             TSR_INVALID_ARGUMENT, "stride");
  // as_strided's own out-of-bounds message computes its byte count safely.
  const int64_t big[1] = {kInt64Max / 2};
  const Outcome far = EXPECT_BAD(tsr_tensor_as_strided(one.get(), 1, one_size, big, 0, &view),
                                 TSR_INVALID_ARGUMENT, "stride");
  EXPECT_EQ(view, kUntouchedTensor);
  (void)far;
}

struct DlpackHolder {
  DLManagedTensor managed{};
  int64_t shape[3] = {};
  int64_t strides[3] = {};
  float data[4] = {};
  int deleted = 0;
};

TEST_F(AbiBadInput, DlpackImportChecksOffsetAndExtent) {
  auto make = [](DlpackHolder& h, int32_t ndim) {
    h.managed.dl_tensor.data = h.data;
    h.managed.dl_tensor.device = DLDevice{kDLCPU, 0};
    h.managed.dl_tensor.ndim = ndim;
    h.managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    h.managed.dl_tensor.shape = h.shape;
    h.managed.dl_tensor.strides = h.strides;
    h.managed.manager_ctx = &h;
    h.managed.deleter = [](DLManagedTensor* m) {
      static_cast<DlpackHolder*>(m->manager_ctx)->deleted++;
    };
  };
  tsr_tensor* tensor = kUntouchedTensor;
  // byte_offset above INT64_MAX would become a negative storage offset.
  DlpackHolder high;
  make(high, 1);
  high.shape[0] = 1;
  high.strides[0] = 1;
  high.managed.dl_tensor.byte_offset = uint64_t{1} << 63;
  const Outcome offset = EXPECT_BAD(tsr_tensor_from_dlpack(rt(), &high.managed, &tensor),
                                    TSR_OUT_OF_RANGE, "byte_offset");
  EXPECT_MENTIONS(offset.message, "9223372036854775808");
  // Below INT64_MAX, but past any user address: never the producer's memory.
  DlpackHolder far;
  make(far, 1);
  far.shape[0] = 1;
  far.strides[0] = 1;
  far.managed.dl_tensor.byte_offset = uint64_t{1} << 60;
  EXPECT_BAD(tsr_tensor_from_dlpack(rt(), &far.managed, &tensor), TSR_OUT_OF_RANGE, "managed");
  // Strides whose extent wraps int64 (see ExtentsThatWrapInt64AreRefusedAtEveryEntry).
  DlpackHolder wrap;
  make(wrap, 3);
  for (int d = 0; d < 3; ++d) wrap.shape[d] = 2;
  wrap.strides[0] = wrap.strides[1] = kInt64Max;
  wrap.strides[2] = 2;
  EXPECT_BAD(tsr_tensor_from_dlpack(rt(), &wrap.managed, &tensor), TSR_INVALID_ARGUMENT, "strides");
  EXPECT_EQ(tensor, kUntouchedTensor);
}

TEST_F(AbiBadInput, ShapeOpArithmeticNeverOverflows) {
  // slice with a huge step: ceil(3 / step) = 1 element per row (PyTorch).
  tsr_tensor* view = nullptr;
  EXPECT_OK(tsr_tensor_slice(m23_.get(), 1, 0, 3, kInt64Max, &view));
  TensorPtr sliced(view);
  int64_t numel = -1;
  EXPECT_OK(tsr_tensor_numel(sliced.get(), &numel));
  EXPECT_EQ(numel, 2);
  // chunk into INT64_MAX chunks: ceil(5 / chunks) = 1, so 5 pieces of 1.
  const tsr_op* chunk = Op("chunk");
  ASSERT_NE(chunk, nullptr);
  tsr_value args[2] = {TensorValue(v5_.get()), IntValue(kInt64Max)};
  tsr_value outs[6] = {};
  EXPECT_OK(tsr_op_call(chunk, args, 2, outs, 6));
  int pieces = 0;
  for (tsr_value& out : outs)
    if (out.tag == TSR_VALUE_TENSOR) {
      ++pieces;
      tsr_tensor_release(out.u.tensor);
    }
  EXPECT_EQ(pieces, 5);
  // split_with_sizes whose sizes only sum to 5 after wrapping int64.
  EXPECT_BAD(Call(Op("split_with_sizes"),
                  {TensorValue(v5_.get()), IntListValue({kInt64Max, kInt64Max, 7})}),
             TSR_INVALID_ARGUMENT, "split_sizes");
  // repeat / tile: [2, 3] repeated 2^62 times along dim 1 overflows the size.
  const Outcome rep =
      EXPECT_BAD(Call(Op("repeat"), {TensorValue(m23_.get()), IntListValue({1, kTwo62})}),
                 TSR_INVALID_ARGUMENT, "repeats");
  EXPECT_TRUE(MentionsNumber(rep.message, kTwo62)) << rep;
  EXPECT_BAD(Call(Op("tile"), {TensorValue(m23_.get()), IntListValue({kTwo62, 1})}),
             TSR_INVALID_ARGUMENT, "repeats");
  // unflatten sizes whose product wraps to 5.
  EXPECT_BAD(Call(Op("unflatten.int"),
                  {TensorValue(v5_.get()), IntValue(0), IntListValue({kTwo62, 4, 5})}),
             TSR_INVALID_ARGUMENT, "sizes");
  // expand: stride 0 keeps storage small, but numel must fit int64.
  TensorPtr ones = Make({1, 1});
  ASSERT_TRUE(ones);
  const int64_t huge[2] = {kTwo62, 8};
  EXPECT_BAD(tsr_tensor_expand(ones.get(), 2, huge, &view), TSR_INVALID_ARGUMENT, "size");
  // Adaptive pools: an output size whose windows overflow.
  TensorPtr image = Make({1, 2, 4, 4});
  ASSERT_TRUE(image);
  EXPECT_BAD(
      Call(Op("adaptive_avg_pool2d"), {TensorValue(image.get()), IntListValue({kTwo62, kTwo62})}),
      TSR_INVALID_ARGUMENT, "output_size");
  EXPECT_BAD(Call(Op("adaptive_max_pool2d"), {TensorValue(image.get()), IntListValue({kTwo62, 2})}),
             TSR_INVALID_ARGUMENT, "output_size");
}

TEST_F(AbiBadInput, ViewsOfAnEmptyTensorWithHugeStridesStayDefined) {
  // as_strided accepts any stride for zero elements; views of that tensor must
  // not overflow computing theirs (UBSan would name the line).
  TensorPtr one = Make({1});
  ASSERT_TRUE(one);
  const int64_t sizes[2] = {0, 4};
  const int64_t strides[2] = {1, kTwo62};
  tsr_tensor* empty = nullptr;
  EXPECT_OK(tsr_tensor_as_strided(one.get(), 2, sizes, strides, 0, &empty));
  TensorPtr owner(empty);
  tsr_tensor* view = nullptr;
  EXPECT_OK(tsr_tensor_unsqueeze(empty, 1, &view));
  tsr_tensor_release(view);
  EXPECT_OK(tsr_tensor_slice(empty, 1, 1, 4, 2, &view));
  tsr_tensor_release(view);
  EXPECT_OK(tsr_tensor_select(empty, 1, 3, &view));
  tsr_tensor_release(view);
}

TEST_F(AbiBadInput, ReductionOverAnEmptyDimGivesTheIdentity) {
  TensorPtr empty = Make({0, 3});
  ASSERT_TRUE(empty);
  const tsr_op* sum = Op("sum.dim_IntList");
  ASSERT_NE(sum, nullptr);
  const std::vector<int64_t> dim0 = {0};
  tsr_value args[2] = {TensorValue(empty.get()), IntListValue(dim0)};
  tsr_value out{};
  EXPECT_OK(tsr_op_call(sum, args, 2, &out, 1));
  ASSERT_EQ(out.tag, TSR_VALUE_TENSOR);
  TensorPtr result(out.u.tensor);
  float host[3] = {-1, -1, -1};
  EXPECT_OK(tsr_tensor_copy_to_host(result.get(), host, sizeof host));
  for (float v : host) EXPECT_EQ(v, 0.0f);
  const tsr_op* prod = Op("prod.dim_int");
  ASSERT_NE(prod, nullptr);
  tsr_value pargs[2] = {TensorValue(empty.get()), IntValue(0)};
  EXPECT_OK(tsr_op_call(prod, pargs, 2, &out, 1));
  TensorPtr product(out.u.tensor);
  EXPECT_OK(tsr_tensor_copy_to_host(product.get(), host, sizeof host));
  for (float v : host) EXPECT_EQ(v, 1.0f);
}

TEST_F(AbiBadInput, SchemaListLengthsAndStrDefaultsAreChecked) {
  tsr_op_def def{};
  def.struct_size = sizeof def;
  def.shape = SameShapeRule;
  const tsr_op* op = nullptr;
  // N beyond int32, and N large enough to fill ~800 MB of defaults.
  def.schema = "badinput::wide(Tensor x, int[3000000000] b) -> Tensor";
  const Outcome wide = EXPECT_BAD(tsr_op_define(rt(), &def, &op), TSR_INVALID_ARGUMENT, "schema");
  EXPECT_MENTIONS(wide.message, "int[]");
  def.schema = "badinput::filled(Tensor x, int[98765432] b=1) -> Tensor";
  EXPECT_BAD(tsr_op_define(rt(), &def, &op), TSR_INVALID_ARGUMENT, "schema");
  def.schema = "badinput::big_default(Tensor x, int b=99999999999999999999) -> Tensor";
  EXPECT_BAD(tsr_op_define(rt(), &def, &op), TSR_INVALID_ARGUMENT, "schema");
  EXPECT_EQ(op, nullptr);
  // A str default keeps its quotes in the reported schema.
  def.schema = "badinput::quoted(Tensor x, str reduction='mean') -> Tensor";
  EXPECT_OK(tsr_op_define(rt(), &def, &op));
  ASSERT_NE(op, nullptr);
  EXPECT_MENTIONS(std::string(tsr_op_schema(op)), "str reduction='mean'");
  const tsr_op* found = Op("badinput::quoted");
  ASSERT_NE(found, nullptr);
  EXPECT_MENTIONS(std::string(tsr_op_schema(found)), "str reduction='mean'");
}

TEST_F(AbiBadInput, AStaleHandleNeverEqualsALiveOneHoweverOftenItsSlotIsReused) {
  // The 16-bit generation of a slot reused 65,536 times would come back to the
  // stale handle's value; the slot is retired instead.
  TensorPtr first = Make({2});
  ASSERT_TRUE(first);
  tsr_tensor* stale = first.release();
  tsr_tensor_release(stale);
  const int64_t sizes[1] = {2};
  int equal = 0;
  for (int i = 0; i < 70000; ++i) {
    tsr_tensor* fresh = nullptr;
    ASSERT_EQ(tsr_tensor_empty(rt(), 1, sizes, TSR_FLOAT32, kCpu0, &fresh), nullptr);
    equal += fresh == stale;
    tsr_tensor_release(fresh);
  }
  EXPECT_EQ(equal, 0) << "a new tensor got the stale handle's value";
  int64_t numel = 0;
  EXPECT_BAD(tsr_tensor_numel(stale, &numel), TSR_INVALID_ARGUMENT, "tensor");
  tsr_tensor_release(stale);  // a double release frees nothing and never crashes
}

TEST_F(AbiBadInput, TheRuntimeStillComputesAfterAllThat) {
  // A battery of bad calls, then a correct one: nothing sticks.
  const tsr_op* add = Op("add.Tensor");
  ASSERT_NE(add, nullptr);
  for (int i = 0; i < 100; ++i) {
    tsr_status_free(tsr_op_call(add, nullptr, 2, nullptr, 1));
    tsr_value bad[2] = {TensorValue(m23_.get()), StringValue("x")};
    tsr_value out{};
    tsr_status_free(tsr_op_call(add, bad, 2, &out, 1));
  }
  const float values[3] = {1, 2, 3};
  const int64_t sizes[1] = {3};
  tsr_tensor* a = nullptr;
  EXPECT_OK(tsr_tensor_from_host(rt(), values, sizeof values, 1, sizes, TSR_FLOAT32, kCpu0, &a));
  TensorPtr a_owner(a);
  tsr_value args[2] = {TensorValue(a), TensorValue(a)};
  tsr_value out{};
  EXPECT_OK(tsr_op_call(add, args, 2, &out, 1));
  ASSERT_EQ(out.tag, TSR_VALUE_TENSOR);
  TensorPtr sum(out.u.tensor);
  float host[3] = {};
  EXPECT_OK(tsr_tensor_copy_to_host(sum.get(), host, sizeof host));
  EXPECT_EQ(host[0], 2.0f);
  EXPECT_EQ(host[1], 4.0f);
  EXPECT_EQ(host[2], 6.0f);
}

}  // namespace
