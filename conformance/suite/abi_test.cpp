// abi_test - family "abi": the plugin's exported table judged directly,
// without the core's loader in between (the loader forgives nothing here
// either, but a vendor should see which rule their table breaks).
//
// The library is opened with Boost.DLL and queried with a host table built
// here; statuses the plugin makes are tsr_status_create'd ones, freed here.
// This family never creates the suite's runtime (target.h), so the plugin's
// init runs only in these cases.
#define BOOST_DLL_USE_STD_FS 1
#include <gtest/gtest.h>

#include <boost/dll/shared_library.hpp>

#include <cstring>
#include <memory>
#include <string>

#include "suite_support.h"
#include "tessera/plugin.h"

namespace tessera::conformance {
namespace {

// Whether `s` is non-empty and made only of [a-z0-9] and the characters in
// `extra` (std::regex trips GCC 12's -Wmaybe-uninitialized under ASan).
bool well_formed(const char* s, const char* extra) {
  if (s == nullptr || *s == '\0') return false;
  for (; *s != '\0'; ++s) {
    const bool ok =
        (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || std::strchr(extra, *s) != nullptr;
    if (!ok) return false;
  }
  return true;
}

tsr_status* make_status(tsr_status_code code, const char* message) {
  return code == TSR_OK ? nullptr : tsr_status_create(code, message != nullptr ? message : "");
}
void log_message(tsr_log_level, const char*, const char*) {}

tsr_host_api host_api(uint32_t major = TSR_PLUGIN_ABI_MAJOR, uint32_t minor = TSR_PLUGIN_ABI_MINOR,
                      size_t struct_size = sizeof(tsr_host_api)) {
  tsr_host_api h{};
  h.struct_size = struct_size;
  h.abi_major = major;
  h.abi_minor = minor;
  h.host_version = tsr_version_string();
  h.make_status = make_status;
  h.log = log_message;
  return h;
}

// The library under test, opened once per case.
class Abi : public testing::Test {
 protected:
  void SetUp() override {
    try {
      lib_.load(target().plugin_path,
                static_cast<boost::dll::load_mode::type>(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
    } catch (const std::exception& e) {
      FAIL() << "cannot open " << target().plugin_path << ": " << e.what();
    }
  }
  bool has_entry() const { return lib_.is_loaded() && lib_.has(TSR_PLUGIN_ENTRY_SYMBOL); }
  const tsr_plugin_api* query(const tsr_host_api& host) {
    auto fn = lib_.get<const tsr_plugin_api*(const tsr_host_api*)>(TSR_PLUGIN_ENTRY_SYMBOL);
    return fn(&host);
  }
  // The table for this host, or a failure.
  const tsr_plugin_api* table() {
    if (!has_entry()) return nullptr;
    host_ = host_api();
    return query(host_);
  }

  // Calls init; false after skipping (UNAVAILABLE: no device here) or
  // failing the case (any other error).
  bool init(const tsr_plugin_api* t, tsr_plugin_context** ctx) {
    const Outcome o = outcome(t->init(&host_, ctx));
    if (o.code == TSR_UNAVAILABLE) {
      [&] { GTEST_SKIP() << "no device here: " << o.message; }();
      return false;
    }
    EXPECT_EQ(o.code, TSR_OK) << "init: " << o.message;
    return o.code == TSR_OK;
  }

  boost::dll::shared_library lib_;
  tsr_host_api host_{};
};

TEST_F(Abi, EntrySymbolIsExported) {
  ASSERT_TRUE(has_entry()) << "the library exports no '" << TSR_PLUGIN_ENTRY_SYMBOL
                           << "' (declare it extern \"C\" TSR_PLUGIN_EXPORT)";
}

TEST_F(Abi, TableHasThisMajorVersionAndAtLeastTheMinimumSize) {
  const tsr_plugin_api* t = table();
  ASSERT_NE(t, nullptr) << "tsr_plugin_query returned NULL for a host of ABI "
                        << TSR_PLUGIN_ABI_MAJOR << "." << TSR_PLUGIN_ABI_MINOR;
  EXPECT_EQ(t->abi_major, static_cast<uint32_t>(TSR_PLUGIN_ABI_MAJOR));
  EXPECT_GE(t->struct_size, TSR_PLUGIN_API_MIN_SIZE)
      << "struct_size must cover at least the ABI 1.0 table";
  ASSERT_NE(t->name, nullptr);
  EXPECT_TRUE(well_formed(t->name, "_-")) << "name '" << t->name << "' is not [a-z0-9_-]+";
  ASSERT_NE(t->device_type, nullptr);
  EXPECT_TRUE(well_formed(t->device_type, "_"))
      << "device_type '" << t->device_type << "' is not [a-z0-9_]+";
  ASSERT_NE(t->version, nullptr);
  EXPECT_GT(std::strlen(t->version), 0u) << "version must not be empty";
}

TEST_F(Abi, EveryMandatorySlotIsPresent) {
  const tsr_plugin_api* t = table();
  ASSERT_NE(t, nullptr);
#define TSR_MANDATORY(slot) EXPECT_NE(reinterpret_cast<const void*>(t->slot), nullptr) << #slot;
  TSR_MANDATORY(init)
  TSR_MANDATORY(shutdown)
  TSR_MANDATORY(device_count)
  TSR_MANDATORY(device_properties)
  TSR_MANDATORY(alloc)
  TSR_MANDATORY(free)
  TSR_MANDATORY(memory_info)
  TSR_MANDATORY(stream_create)
  TSR_MANDATORY(stream_destroy)
  TSR_MANDATORY(stream_synchronize)
  TSR_MANDATORY(stream_query)
  TSR_MANDATORY(event_create)
  TSR_MANDATORY(event_destroy)
  TSR_MANDATORY(event_record)
  TSR_MANDATORY(stream_wait_event)
  TSR_MANDATORY(event_query)
  TSR_MANDATORY(event_synchronize)
  TSR_MANDATORY(event_elapsed_ms)
  TSR_MANDATORY(copy_host_to_device)
  TSR_MANDATORY(copy_device_to_host)
  TSR_MANDATORY(copy_device_to_device)
#undef TSR_MANDATORY
  if (t->kernel_count > 0) {
    EXPECT_NE(t->kernels, nullptr) << "kernel_count > 0 with kernels NULL";
  }
}

TEST_F(Abi, KernelEntriesAreWellFormed) {
  const tsr_plugin_api* t = table();
  ASSERT_NE(t, nullptr);
  for (size_t i = 0; i < t->kernel_count; ++i) {
    const tsr_kernel_entry& k = t->kernels[i];
    SCOPED_TRACE("kernel entry " + std::to_string(i));
    EXPECT_GE(k.struct_size, offsetof(tsr_kernel_entry, kernel_data) + sizeof(void*));
    ASSERT_NE(k.schema, nullptr);
    EXPECT_NE(k.fn, nullptr) << k.schema;
    if (k.flags & TSR_KERNEL_TWO_PHASE) {
      EXPECT_NE(k.size_fn, nullptr) << k.schema << ": TWO_PHASE without size_fn";
    }
  }
}

TEST_F(Abi, OpDefinitionsAreWellFormed) {
  const tsr_plugin_api* t = table();
  ASSERT_NE(t, nullptr);
  if (t->struct_size < offsetof(tsr_plugin_api, op_def_count) + sizeof(size_t))
    GTEST_SKIP() << "an ABI 1.0 table: no op definitions";
  if (t->op_def_count > 0) {
    ASSERT_NE(t->op_defs, nullptr);
  }
  for (size_t i = 0; i < t->op_def_count; ++i) {
    const tsr_plugin_op_def& d = t->op_defs[i];
    ASSERT_NE(d.schema, nullptr) << "op_defs[" << i << "]";
    EXPECT_NE(std::strstr(d.schema, "::"), nullptr) << d.schema << ": needs a namespace";
    EXPECT_NE(d.shape, nullptr) << d.schema << ": no shape rule";
  }
}

// Version negotiation, the host side older: a host of minor 0 with a
// minor-0-sized host table still gets a usable table (or a clean NULL).
TEST_F(Abi, AnOlderMinorHostIsServedOrRefusedCleanly) {
  ASSERT_TRUE(has_entry());
  const tsr_host_api old_host = host_api(TSR_PLUGIN_ABI_MAJOR, 0);
  const tsr_plugin_api* t = query(old_host);
  if (t == nullptr) GTEST_SKIP() << "the plugin refuses hosts of minor 0 (allowed)";
  EXPECT_EQ(t->abi_major, static_cast<uint32_t>(TSR_PLUGIN_ABI_MAJOR));
  EXPECT_GE(t->struct_size, TSR_PLUGIN_API_MIN_SIZE);
}

// The host side newer: a host of the next major either gets NULL or a table
// declaring the plugin's own major (which that host would refuse) - never a
// crash, never a table claiming the host's unknown major.
TEST_F(Abi, AHostOfAnotherMajorIsNotServedAsIfCompatible) {
  ASSERT_TRUE(has_entry());
  const tsr_host_api future = host_api(TSR_PLUGIN_ABI_MAJOR + 1, 0, sizeof(tsr_host_api) + 64);
  const tsr_plugin_api* t = query(future);
  if (t != nullptr) {
    EXPECT_EQ(t->abi_major, static_cast<uint32_t>(TSR_PLUGIN_ABI_MAJOR))
        << "the table must state the major the plugin was built with";
  }
}

// init -> device_count -> device_properties -> shutdown on the raw table.
TEST_F(Abi, InitEnumeratesDevicesAndShutsDown) {
  const tsr_plugin_api* t = table();
  ASSERT_NE(t, nullptr);
  tsr_plugin_context* ctx = nullptr;
  if (!init(t, &ctx)) return;  // skipped (no device) or failed
  int32_t count = -1;
  const Outcome c = outcome(t->device_count(ctx, &count));
  EXPECT_EQ(c.code, TSR_OK) << c.message;
  EXPECT_GE(count, 1) << "init succeeded, so there must be a device";
  for (int32_t d = 0; d < count; ++d) {
    tsr_plugin_device_properties p{};
    p.struct_size = sizeof(p);
    const Outcome o = outcome(t->device_properties(ctx, d, &p));
    EXPECT_EQ(o.code, TSR_OK) << "device " << d << ": " << o.message;
    EXPECT_GT(std::strlen(p.name), 0u) << "device " << d << " has no name";
    EXPECT_GE(p.alignment, 1u);
  }
  tsr_plugin_device_properties p{};
  p.struct_size = sizeof(p);
  const Outcome bad = outcome(t->device_properties(ctx, count, &p));
  EXPECT_NE(bad.code, TSR_OK) << "device index " << count << " (one past the end) was accepted";
  t->shutdown(ctx);
}

TEST_F(Abi, OptionalSlotsAreNullOrWorking) {
  const tsr_plugin_api* t = table();
  ASSERT_NE(t, nullptr);
  tsr_plugin_context* ctx = nullptr;
  if (!init(t, &ctx)) return;  // skipped (no device) or failed
  if (t->set_option != nullptr) {
    const Outcome o = outcome(t->set_option(ctx, "tessera.conformance.no_such_key", "1"));
    EXPECT_EQ(o.code, TSR_NOT_FOUND) << "an unknown option key must be NOT_FOUND: " << o.message;
  }
  EXPECT_EQ(t->host_alloc_pinned == nullptr, t->host_free_pinned == nullptr)
      << "host_alloc_pinned and host_free_pinned come as a pair";
  if (t->host_alloc_pinned != nullptr && t->host_free_pinned != nullptr) {
    void* p = nullptr;
    const Outcome o = outcome(t->host_alloc_pinned(ctx, 4096, &p));
    EXPECT_EQ(o.code, TSR_OK) << o.message;
    if (p != nullptr) {
      std::memset(p, 0x5a, 4096);  // must be writable host memory
      t->host_free_pinned(ctx, p);
    }
  }
  // alloc of 0 bytes succeeds (the handle may be NULL) and frees cleanly.
  tsr_plugin_buffer b{};
  const Outcome zero = outcome(t->alloc(ctx, 0, 0, &b));
  EXPECT_EQ(zero.code, TSR_OK) << "alloc(0 bytes): " << zero.message;
  if (zero.code == TSR_OK) t->free(ctx, 0, b);
  t->shutdown(ctx);
}

}  // namespace
}  // namespace tessera::conformance
