// sdk_entries_test.cpp - the SDK's table slots from a plugin's C++ entries
// (plugin_entries.hpp) and its host device (host_device.hpp), through the
// table alone, as the host calls them. No libtessera: the test is the host,
// with a make_status of its own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/plugin.h"
#include "tessera/sdk/host_device.hpp"
#include "tessera/sdk/plugin_entries.hpp"
#include "tessera/sdk/plugin_table.hpp"

// The test host's statuses.
struct tsr_status {
  tsr_status_code code;
  std::string message;
};

struct tsr_plugin_context {
  const tsr_host_api* host = nullptr;
  int shutdowns = 0;
  int* shutdown_count = nullptr;
};

namespace {

namespace sdk = tessera::sdk;

tsr_status* make_status(tsr_status_code code, const char* message) {
  if (code == TSR_OK) return nullptr;
  return new tsr_status{code, message != nullptr ? message : ""};
}

// The host, as a plugin sees it after tsr_plugin_query: sdk::query has
// remembered it (statuses for a NULL context come from it).
const tsr_host_api& test_host() {
  static const tsr_host_api host = [] {
    tsr_host_api h;
    std::memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.abi_major = TSR_PLUGIN_ABI_MAJOR;
    h.abi_minor = TSR_PLUGIN_ABI_MINOR;
    h.make_status = make_status;
    return h;
  }();
  static const tsr_plugin_api* table = sdk::query(&host, "trial", [] {
    tsr_plugin_api t = sdk::plugin_table("trial", "0.0.1", "trial");
    return t;
  });
  (void)table;
  return host;
}

// The status's code and message, freed; OK with "" for NULL.
struct result {
  tsr_status_code code = TSR_OK;
  std::string message;
};
result take(tsr_status* s) {
  if (s == nullptr) return {};
  result r{s->code, s->message};
  delete s;
  return r;
}

int g_shutdowns = 0;

struct trial_traits {
  static constexpr const char* name = "trial";
  static constexpr int32_t device_count = 2;
  static constexpr size_t alignment = 128;
};

// A plugin with the host device's members, its own init and properties, an
// entry that throws a standard exception and one that throws a status.
struct trial_entries : sdk::host_device<trial_traits> {
  static const char* name() noexcept { return "trial"; }
  static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host) {
    auto c = std::make_unique<tsr_plugin_context>();
    c->host = &host;
    return c;
  }
  static void shutdown(tsr_plugin_context&) noexcept { ++g_shutdowns; }
  static tsr_plugin_device_properties device_properties(tsr_plugin_context&, int32_t device) {
    check_device("device_properties", device);
    tsr_plugin_device_properties p{};
    p.struct_size = sizeof p;
    std::strcpy(p.name, "trial device");
    p.total_memory = 12345;
    p.alignment = 128;
    return p;
  }
  static void set_option(tsr_plugin_context&, const char* key, const char*) {
    if (std::strcmp(key, "boom") == 0) throw std::runtime_error("boom went the option");
    sdk::throw_unknown_option("trial", key, "'boom'");
  }
  static sdk::memory_numbers memory_info(tsr_plugin_context&, int32_t) { throw std::bad_alloc(); }
};

// A plugin with nothing but a name: no slot is filled.
struct bare_entries {
  static const char* name() noexcept { return "bare"; }
};

class SdkEntries : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = sdk::plugin_table("trial", "0.0.1", "trial");
    sdk::install_entries<trial_entries>(table_);
    ASSERT_NE(table_.init, nullptr);
    ASSERT_EQ(take(table_.init(&host_, &ctx_)).code, TSR_OK);
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override {
    if (ctx_ != nullptr) table_.shutdown(ctx_);
  }
  const tsr_host_api& host_ = test_host();
  tsr_plugin_api table_;
  tsr_plugin_context* ctx_ = nullptr;
};

TEST(SdkEntriesInstall, FillsOnlyTheSlotsTheEntriesHave) {
  tsr_plugin_api t = sdk::plugin_table("bare", "0.0.1", "bare");
  sdk::install_entries<bare_entries>(t);
  EXPECT_EQ(t.init, nullptr);
  EXPECT_EQ(t.shutdown, nullptr);
  EXPECT_EQ(t.alloc, nullptr);
  EXPECT_EQ(t.set_option, nullptr);
  tsr_plugin_api u = sdk::plugin_table("trial", "0.0.1", "trial");
  sdk::install_entries<trial_entries>(u);
  EXPECT_NE(u.alloc, nullptr);
  EXPECT_NE(u.event_elapsed_ms, nullptr);
  EXPECT_NE(u.set_option, nullptr);
  EXPECT_EQ(u.host_alloc_pinned, nullptr);  // neither the host device nor trial has it
  EXPECT_EQ(u.copy_peer, nullptr);
  EXPECT_EQ(u.kernels, nullptr);
}

TEST_F(SdkEntries, ShutdownRunsTheMemberOnce) {
  const int before = g_shutdowns;
  table_.shutdown(ctx_);
  ctx_ = nullptr;
  EXPECT_EQ(g_shutdowns, before + 1);
  table_.shutdown(nullptr);  // ignored
  EXPECT_EQ(g_shutdowns, before + 1);
}

TEST_F(SdkEntries, NullContextAndOutPointersNameTheArgument) {
  int32_t count = -1;
  result r = take(table_.device_count(nullptr, &count));
  EXPECT_EQ(r.code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "trial plugin device_count: the context is NULL");
  r = take(table_.device_count(ctx_, nullptr));
  EXPECT_EQ(r.code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "trial plugin device_count: out_count is NULL");
  r = take(table_.alloc(ctx_, 0, 16, nullptr));
  EXPECT_EQ(r.message, "trial plugin alloc: out_buffer is NULL");
  r = take(table_.memory_info(ctx_, 0, nullptr, nullptr));
  EXPECT_EQ(r.message, "trial plugin memory_info: out_free is NULL");
  r = take(table_.event_record(ctx_, 0, nullptr, nullptr));
  EXPECT_EQ(r.message, "trial plugin event_record: event is NULL");
  r = take(table_.set_option(ctx_, nullptr, "1"));
  EXPECT_EQ(r.message, "trial plugin set_option: key is NULL");
  tsr_plugin_context* out = nullptr;
  r = take(table_.init(&host_, nullptr));
  EXPECT_EQ(r.message, "trial plugin init: out_context is NULL");
  EXPECT_EQ(out, nullptr);
}

TEST_F(SdkEntries, ExceptionsBecomeStatuses) {
  result r = take(table_.set_option(ctx_, "boom", "1"));
  EXPECT_EQ(r.code, TSR_INTERNAL);
  EXPECT_NE(r.message.find("boom went the option"), std::string::npos) << r.message;
  r = take(table_.set_option(ctx_, "colour", "red"));
  EXPECT_EQ(r.code, TSR_NOT_FOUND);
  EXPECT_EQ(r.message, "trial plugin has no option 'colour'; its options are 'boom'");
  uint64_t free_bytes = 7, total = 7;
  r = take(table_.memory_info(ctx_, 0, &free_bytes, &total));
  EXPECT_EQ(r.code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(free_bytes, 0u);  // cleared before the member ran
  EXPECT_EQ(total, 0u);
}

TEST_F(SdkEntries, DevicesAndProperties) {
  int32_t count = 0;
  ASSERT_EQ(take(table_.device_count(ctx_, &count)).code, TSR_OK);
  EXPECT_EQ(count, 2);
  tsr_plugin_device_properties p;
  std::memset(&p, 0xab, sizeof p);
  p.struct_size = sizeof p;
  ASSERT_EQ(take(table_.device_properties(ctx_, 1, &p)).code, TSR_OK);
  EXPECT_STREQ(p.name, "trial device");
  EXPECT_EQ(p.total_memory, 12345u);
  EXPECT_EQ(p.struct_size, sizeof p);
  result r = take(table_.device_properties(ctx_, 2, &p));
  EXPECT_EQ(r.code, TSR_OUT_OF_RANGE);
  EXPECT_EQ(r.message,
            "trial plugin device_properties: device index 2 does not exist; the trial plugin has "
            "2 devices, indices 0..1");
  // An older host's smaller struct: only its bytes are written.
  struct {
    tsr_plugin_device_properties p;
    unsigned char guard[8];
  } old_host;
  std::memset(&old_host, 0xcd, sizeof old_host);
  const size_t small = offsetof(tsr_plugin_device_properties, name) + 4;
  old_host.p.struct_size = small;
  ASSERT_EQ(take(table_.device_properties(ctx_, 0, &old_host.p)).code, TSR_OK);
  EXPECT_EQ(old_host.p.struct_size, small);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&old_host.p);
  for (size_t i = small; i < sizeof old_host; ++i) ASSERT_EQ(bytes[i], 0xcd) << "byte " << i;
}

TEST_F(SdkEntries, HostDeviceMemoryAndCopies) {
  tsr_plugin_buffer b{reinterpret_cast<void*>(1), reinterpret_cast<void*>(1)};
  ASSERT_EQ(take(table_.alloc(ctx_, 1, 0, &b)).code, TSR_OK);
  EXPECT_EQ(b.handle, nullptr);  // 0 bytes: NULL
  for (size_t n : {size_t{1}, size_t{1000}, size_t{3} << 20}) {
    ASSERT_EQ(take(table_.alloc(ctx_, 0, n, &b)).code, TSR_OK);
    const size_t align = n >= (size_t{2} << 20) ? (size_t{2} << 20) : 128;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % align, 0u) << n;
    std::vector<unsigned char> in(n), out(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
    ASSERT_EQ(take(table_.copy_host_to_device(ctx_, 0, nullptr, in.data(), b, 0, n)).code, TSR_OK);
    ASSERT_EQ(take(table_.copy_device_to_host(ctx_, 0, nullptr, b, 0, out.data(), n)).code, TSR_OK);
    EXPECT_EQ(in, out);
    table_.free(ctx_, 0, b);
  }
  // More than the machine has is refused up front.
  result r = take(table_.alloc(ctx_, 0, SIZE_MAX / 2, &b));
  EXPECT_EQ(r.code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(r.message.find("trial:0 could not allocate"), std::string::npos) << r.message;
  EXPECT_EQ(b.handle, nullptr);
  // Overlapping device-to-device copies are memmoves.
  ASSERT_EQ(take(table_.alloc(ctx_, 0, 8, &b)).code, TSR_OK);
  const unsigned char digits[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_EQ(take(table_.copy_host_to_device(ctx_, 0, nullptr, digits, b, 0, 8)).code, TSR_OK);
  ASSERT_EQ(take(table_.copy_device_to_device(ctx_, 0, nullptr, b, 0, b, 2, 6)).code, TSR_OK);
  const unsigned char* d = static_cast<const unsigned char*>(b.data);
  EXPECT_EQ(std::vector<unsigned char>(d, d + 8),
            (std::vector<unsigned char>{0, 1, 0, 1, 2, 3, 4, 5}));
  r = take(table_.copy_host_to_device(ctx_, 0, nullptr, nullptr, b, 0, 4));
  EXPECT_EQ(r.code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(r.message,
            "trial plugin copy_host_to_device: the source is NULL for a copy of 4 bytes; pass a "
            "valid buffer");
  EXPECT_EQ(take(table_.copy_host_to_device(ctx_, 0, nullptr, nullptr, b, 0, 0)).code, TSR_OK);
  r = take(table_.copy_device_to_host(ctx_, 3, nullptr, b, 0, nullptr, 0));
  EXPECT_EQ(r.code, TSR_OUT_OF_RANGE);
  table_.free(ctx_, 0, b);
  table_.free(ctx_, 0, tsr_plugin_buffer{nullptr, nullptr});  // NULL: nothing
}

TEST_F(SdkEntries, HostDeviceStreamsAndEvents) {
  tsr_plugin_stream* s = nullptr;
  ASSERT_EQ(take(table_.stream_create(ctx_, 1, &s)).code, TSR_OK);
  ASSERT_NE(s, nullptr);
  bool done = false;
  ASSERT_EQ(take(table_.stream_query(ctx_, 1, s, &done)).code, TSR_OK);
  EXPECT_TRUE(done);
  tsr_plugin_event* a = nullptr;
  tsr_plugin_event* b = nullptr;
  ASSERT_EQ(take(table_.event_create(ctx_, 1, 0, &a)).code, TSR_OK);
  ASSERT_EQ(take(table_.event_create(ctx_, 1, 0, &b)).code, TSR_OK);
  double ms = -1;
  result r = take(table_.event_elapsed_ms(ctx_, 1, a, b, &ms));
  EXPECT_EQ(r.code, TSR_FAILED_PRECONDITION);
  EXPECT_EQ(r.message,
            "trial plugin event_elapsed_ms: the start event was never recorded; record both "
            "events on a stream first");
  EXPECT_EQ(ms, 0.0);
  ASSERT_EQ(take(table_.event_record(ctx_, 1, a, s)).code, TSR_OK);
  r = take(table_.event_elapsed_ms(ctx_, 1, a, b, &ms));
  EXPECT_NE(r.message.find("the end event"), std::string::npos) << r.message;
  ASSERT_EQ(take(table_.event_record(ctx_, 1, b, s)).code, TSR_OK);
  ASSERT_EQ(take(table_.event_elapsed_ms(ctx_, 1, a, b, &ms)).code, TSR_OK);
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 60e3);
  ASSERT_EQ(take(table_.event_query(ctx_, 1, a, &done)).code, TSR_OK);
  EXPECT_TRUE(done);
  EXPECT_EQ(take(table_.stream_wait_event(ctx_, 1, s, a)).code, TSR_OK);
  EXPECT_EQ(take(table_.event_synchronize(ctx_, 1, a)).code, TSR_OK);
  EXPECT_EQ(take(table_.stream_synchronize(ctx_, 1, nullptr)).code, TSR_OK);
  table_.event_destroy(ctx_, 1, a);
  table_.event_destroy(ctx_, 1, b);
  table_.stream_destroy(ctx_, 1, s);
  table_.stream_destroy(ctx_, 1, nullptr);  // ignored
}

}  // namespace
