// lifecycle_test.cpp - the CPU plugin's table, devices, allocator, streams,
// events, copies, options, and its answers to bad calls.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <string_view>
#include <thread>

#include "plugin_harness.hpp"

namespace cpu_test {
namespace {

const tsr_plugin_api& api() { return test_plugin::get().api(); }
tsr_plugin_context* ctx() { return test_plugin::get().context(); }

TEST(CpuPluginTable, NamesVersionAndMandatoryEntries) {
  const tsr_plugin_api& a = api();
  EXPECT_EQ(a.struct_size, sizeof(tsr_plugin_api));
  EXPECT_GE(a.struct_size, TSR_PLUGIN_API_MIN_SIZE);
  EXPECT_EQ(a.abi_major, static_cast<uint32_t>(TSR_PLUGIN_ABI_MAJOR));
  EXPECT_EQ(a.abi_minor, static_cast<uint32_t>(TSR_PLUGIN_ABI_MINOR));
  EXPECT_STREQ(a.name, "cpu");
  EXPECT_STREQ(a.device_type, "cpu");
  EXPECT_STREQ(a.version, "0.1.0");
  EXPECT_NE(a.init, nullptr);
  EXPECT_NE(a.shutdown, nullptr);
  EXPECT_NE(a.alloc, nullptr);
  EXPECT_NE(a.event_elapsed_ms, nullptr);
  EXPECT_NE(a.copy_device_to_device, nullptr);
  EXPECT_NE(a.set_option, nullptr);
  EXPECT_NE(a.random_fill, nullptr);  // Philox fills (Note [Random mapping])
  // Collectives where the plugin was built with Gloo (comm/gloo_collectives_test.cpp).
  if (a.collectives != nullptr) {
    EXPECT_EQ(a.collectives->struct_size, sizeof(tsr_plugin_collectives));
    EXPECT_NE(a.collectives->query_caps, nullptr);
    EXPECT_NE(a.collectives->comm_init, nullptr);
    EXPECT_NE(a.collectives->comm_destroy, nullptr);
    EXPECT_EQ(a.collectives->comm_create, nullptr);  // Gloo needs the store: comm_init only
  }
}

TEST(CpuPluginTable, BasicKernelsComeFirstAndEveryEntryIsWellFormed) {
  // The basic primitives (core/registry/defs/basic.def) lead the table in this order; the op
  // families' tables follow. Whether every schema binds to the registry is checked with libtessera
  // (tessera_runtime_test: the CPU plugin loads with no rejected kernel).
  const char* basic[] = {
      "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
      "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "mul.Tensor(Tensor self, Tensor other) -> Tensor",
      "div.Tensor(Tensor self, Tensor other) -> Tensor",
      "mm(Tensor self, Tensor mat2) -> Tensor",
      "bmm(Tensor self, Tensor mat2) -> Tensor",
  };
  ASSERT_GE(api().kernel_count, std::size(basic));
  for (size_t i = 0; i < std::size(basic); ++i) EXPECT_STREQ(api().kernels[i].schema, basic[i]);
  for (size_t i = 0; i < api().kernel_count; ++i) {
    const tsr_kernel_entry& e = api().kernels[i];
    ASSERT_NE(e.schema, nullptr) << "entry " << i;
    EXPECT_EQ(e.struct_size, sizeof(tsr_kernel_entry)) << e.schema;
    EXPECT_NE(e.fn, nullptr) << e.schema;
    EXPECT_EQ((e.flags & TSR_KERNEL_TWO_PHASE) != 0, e.size_fn != nullptr) << e.schema;
    // A family primitive (schema with an `int op` code) claims at least one code.
    if (std::string_view(e.schema).find("int op") != std::string_view::npos) {
      EXPECT_TRUE(e.op_codes[0] != 0 || e.op_codes[1] != 0) << e.schema;
    }
  }
}

TEST(CpuPluginTable, DtypeMasksDescribeWhatEachKernelAccepts) {
  const uint64_t all = TSR_DTYPE_MASK_ALL;
  const uint64_t no_bool = all & ~TSR_DTYPE_BIT(TSR_BOOL);
  const uint64_t floating = TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) |
                            TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64) |
                            TSR_DTYPE_BIT(TSR_COMPLEX64) | TSR_DTYPE_BIT(TSR_COMPLEX128);
  const test_plugin& p = test_plugin::get();
  EXPECT_EQ(p.kernel("copy_").dtype_masks[0], all);
  EXPECT_EQ(p.kernel("copy_").dtype_masks[1], all);
  EXPECT_EQ(p.kernel("add.Tensor").dtype_masks[0], all);
  EXPECT_EQ(p.kernel("sub.Tensor").dtype_masks[0], no_bool);
  EXPECT_EQ(p.kernel("div.Tensor").dtype_masks[1], floating);
  EXPECT_EQ(p.kernel("mm").dtype_masks[0], no_bool);
}

TEST(CpuPluginQuery, RefusesAnotherAbiMajorAndLogsBothVersions) {
  auto query = reinterpret_cast<tsr_plugin_query_fn>(
      dlsym(test_plugin::get().library(), TSR_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(query, nullptr);
  tsr_host_api host = test_host();
  host.abi_major = TSR_PLUGIN_ABI_MAJOR + 1;
  host.abi_minor = 7;
  const size_t logged_before = logged_messages().size();
  EXPECT_EQ(query(&host), nullptr);
  const auto log = logged_messages();
  ASSERT_EQ(log.size(), logged_before + 1);
  const std::string own =
      std::to_string(TSR_PLUGIN_ABI_MAJOR) + "." + std::to_string(TSR_PLUGIN_ABI_MINOR);
  EXPECT_NE(log.back().find(own), std::string::npos) << log.back();
  EXPECT_NE(log.back().find("2.7"), std::string::npos) << log.back();
  EXPECT_EQ(query(nullptr), nullptr);
}

TEST(CpuPluginDevice, OneDeviceWithHostAddressableProperties) {
  int32_t count = -1;
  EXPECT_EQ(status_ptr(api().device_count(ctx(), &count)), nullptr);
  EXPECT_EQ(count, 1);
  tsr_plugin_device_properties props{};
  props.struct_size = sizeof props;
  EXPECT_EQ(status_ptr(api().device_properties(ctx(), 0, &props)), nullptr);
  EXPECT_EQ(props.struct_size, sizeof props);
  EXPECT_GT(std::strlen(props.name), 0u);
  EXPECT_GT(props.total_memory, 0u);
  EXPECT_EQ(props.dtypes, TSR_DTYPE_MASK_ALL);
  EXPECT_EQ(props.features, (1u << 0) | (1u << 2));  // HOST_ADDRESSABLE | TIMESTAMPS
  EXPECT_GE(props.compute_units, 1);
  EXPECT_EQ(props.alignment, 64u);
  EXPECT_EQ(props.max_allocation, 0u);
  EXPECT_EQ(code_of(status_ptr(api().device_properties(ctx(), 1, &props))), TSR_OUT_OF_RANGE);
}

TEST(CpuPluginDevice, PropertiesWriteOnlyInsideTheHostsStructSize) {
  tsr_plugin_device_properties props;
  std::memset(&props, 0xAB, sizeof props);
  props.struct_size = offsetof(tsr_plugin_device_properties, total_memory);
  EXPECT_EQ(status_ptr(api().device_properties(ctx(), 0, &props)), nullptr);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&props);
  for (size_t i = props.struct_size; i < sizeof props; ++i) ASSERT_EQ(bytes[i], 0xAB) << i;
}

TEST(CpuPluginAllocator, AllocationsAreAlignedWritableAndFreed) {
  for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4096}, size_t{1} << 20}) {
    tsr_plugin_buffer buffer{};
    ASSERT_EQ(status_ptr(api().alloc(ctx(), 0, n, &buffer)), nullptr);
    ASSERT_NE(buffer.handle, nullptr);
    EXPECT_EQ(buffer.handle, buffer.data);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data) % 64, 0u);
    std::memset(buffer.data, 0x5A, n);
    api().free(ctx(), 0, buffer);
  }
}

TEST(CpuPluginAllocator, ZeroBytesSucceedWithNullHandle) {
  tsr_plugin_buffer buffer{reinterpret_cast<void*>(1), reinterpret_cast<void*>(1)};
  EXPECT_EQ(status_ptr(api().alloc(ctx(), 0, 0, &buffer)), nullptr);
  EXPECT_EQ(buffer.handle, nullptr);
  EXPECT_EQ(buffer.data, nullptr);
  api().free(ctx(), 0, buffer);  // no-op
}

TEST(CpuPluginAllocator, AbsurdSizesAreResourceExhaustedNamingTheSize) {
  for (size_t n : {size_t{1} << 62, ~size_t{0}, ~size_t{0} - 10}) {
    tsr_plugin_buffer buffer{};
    const status_ptr s(api().alloc(ctx(), 0, n, &buffer));
    ASSERT_EQ(code_of(s), TSR_RESOURCE_EXHAUSTED);
    EXPECT_NE(message_of(s).find(std::to_string(n)), std::string::npos) << message_of(s);
  }
}

TEST(CpuPluginAllocator, MemoryInfoReportsFreeBelowTotal) {
  uint64_t free_bytes = 0, total = 0;
  EXPECT_EQ(status_ptr(api().memory_info(ctx(), 0, &free_bytes, &total)), nullptr);
  EXPECT_GT(total, 0u);
  EXPECT_LE(free_bytes, total);
}

TEST(CpuPluginCopies, HostDeviceCopiesHonourOffsets) {
  tsr_plugin_buffer a{}, b{};
  ASSERT_EQ(status_ptr(api().alloc(ctx(), 0, 256, &a)), nullptr);
  ASSERT_EQ(status_ptr(api().alloc(ctx(), 0, 256, &b)), nullptr);
  unsigned char host[100];
  for (int i = 0; i < 100; ++i) host[i] = static_cast<unsigned char>(i + 1);
  EXPECT_EQ(status_ptr(api().copy_host_to_device(ctx(), 0, nullptr, host, a, 10, 100)), nullptr);
  EXPECT_EQ(status_ptr(api().copy_device_to_device(ctx(), 0, nullptr, a, 20, b, 5, 50)), nullptr);
  unsigned char back[50] = {};
  EXPECT_EQ(status_ptr(api().copy_device_to_host(ctx(), 0, nullptr, b, 5, back, 50)), nullptr);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(back[i], host[10 + i]) << i;
  EXPECT_EQ(status_ptr(api().copy_host_to_device(ctx(), 0, nullptr, host, a, 0, 0)), nullptr);
  EXPECT_EQ(code_of(status_ptr(api().copy_host_to_device(ctx(), 0, nullptr, nullptr, a, 0, 8))),
            TSR_INVALID_ARGUMENT);
  api().free(ctx(), 0, a);
  api().free(ctx(), 0, b);
}

TEST(CpuPluginStreams, StreamsAreImmediatelyDone) {
  tsr_plugin_stream* stream = nullptr;
  ASSERT_EQ(status_ptr(api().stream_create(ctx(), 0, &stream)), nullptr);
  ASSERT_NE(stream, nullptr);
  bool done = false;
  EXPECT_EQ(status_ptr(api().stream_query(ctx(), 0, stream, &done)), nullptr);
  EXPECT_TRUE(done);
  EXPECT_EQ(status_ptr(api().stream_synchronize(ctx(), 0, stream)), nullptr);
  EXPECT_EQ(status_ptr(api().stream_synchronize(ctx(), 0, nullptr)), nullptr);  // default
  api().stream_destroy(ctx(), 0, stream);
}

TEST(CpuPluginEvents, ElapsedTimeBetweenRecordedEventsIsNonNegative) {
  tsr_plugin_event* start = nullptr;
  tsr_plugin_event* end = nullptr;
  ASSERT_EQ(status_ptr(api().event_create(ctx(), 0, 1u, &start)), nullptr);
  ASSERT_EQ(status_ptr(api().event_create(ctx(), 0, 1u, &end)), nullptr);
  double ms = -1;
  EXPECT_EQ(code_of(status_ptr(api().event_elapsed_ms(ctx(), 0, start, end, &ms))),
            TSR_FAILED_PRECONDITION);
  EXPECT_EQ(status_ptr(api().event_record(ctx(), 0, start, nullptr)), nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(status_ptr(api().event_record(ctx(), 0, end, nullptr)), nullptr);
  bool done = false;
  EXPECT_EQ(status_ptr(api().event_query(ctx(), 0, end, &done)), nullptr);
  EXPECT_TRUE(done);
  EXPECT_EQ(status_ptr(api().event_synchronize(ctx(), 0, end)), nullptr);
  EXPECT_EQ(status_ptr(api().stream_wait_event(ctx(), 0, nullptr, end)), nullptr);
  EXPECT_EQ(status_ptr(api().event_elapsed_ms(ctx(), 0, start, end, &ms)), nullptr);
  EXPECT_GE(ms, 1.5);
  EXPECT_LT(ms, 10000.0);
  EXPECT_EQ(status_ptr(api().event_elapsed_ms(ctx(), 0, start, start, &ms)), nullptr);
  EXPECT_EQ(ms, 0.0);
  api().event_destroy(ctx(), 0, start);
  api().event_destroy(ctx(), 0, end);
}

TEST(CpuPluginOptions, ThreadsIsAcceptedAndUnknownKeysAreNotFound) {
  EXPECT_EQ(status_ptr(api().set_option(ctx(), "threads", "1")), nullptr);
  const status_ptr unknown(api().set_option(ctx(), "fast_math", "1"));
  EXPECT_EQ(code_of(unknown), TSR_NOT_FOUND);
  EXPECT_NE(message_of(unknown).find("fast_math"), std::string::npos);
  EXPECT_EQ(code_of(status_ptr(api().set_option(ctx(), "threads", "zero"))), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(status_ptr(api().set_option(ctx(), "threads", "0"))), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(status_ptr(api().set_option(ctx(), nullptr, "1"))), TSR_INVALID_ARGUMENT);
  const int threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  EXPECT_EQ(status_ptr(api().set_option(ctx(), "threads", std::to_string(threads).c_str())),
            nullptr);
}

TEST(CpuPluginOptions, IsaSelectsTheLoopBodiesAndRefusesUnknownValues) {
  for (const char* isa : {"auto", "baseline"}) {
    EXPECT_EQ(status_ptr(api().set_option(ctx(), "isa", isa)), nullptr) << isa;
  }
  for (const char* isa : {"avx2", "avx512"}) {
    const status_ptr s(api().set_option(ctx(), "isa", isa));
    if (isa_unavailable_reason(isa).empty()) {
      EXPECT_EQ(s, nullptr) << message_of(s);
    } else {
      EXPECT_EQ(code_of(s), TSR_FAILED_PRECONDITION) << isa;
      EXPECT_NE(message_of(s).find(std::string(isa) == "avx2" ? "AVX2" : "AVX-512"),
                std::string::npos)
          << message_of(s);
    }
  }
  const status_ptr bad(api().set_option(ctx(), "isa", "avx10"));
  EXPECT_EQ(code_of(bad), TSR_INVALID_ARGUMENT);
  EXPECT_NE(message_of(bad).find("'avx10'"), std::string::npos) << message_of(bad);
  for (const char* listed : {"'auto'", "'avx512'", "'avx2'", "'baseline'"}) {
    EXPECT_NE(message_of(bad).find(listed), std::string::npos) << message_of(bad);
  }
  EXPECT_EQ(code_of(status_ptr(api().set_option(ctx(), "isa", nullptr))), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(status_ptr(api().set_option(ctx(), "isa", "auto")), nullptr);
}

TEST(CpuPluginBadCalls, NullContextsAndOutputsAreInvalidArguments) {
  int32_t count = 0;
  EXPECT_EQ(code_of(status_ptr(api().device_count(nullptr, &count))), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(status_ptr(api().device_count(ctx(), nullptr))), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(status_ptr(api().alloc(ctx(), 0, 8, nullptr))), TSR_INVALID_ARGUMENT);
  tsr_plugin_buffer buffer{};
  EXPECT_EQ(code_of(status_ptr(api().alloc(ctx(), 3, 8, &buffer))), TSR_OUT_OF_RANGE);
  EXPECT_EQ(code_of(status_ptr(api().event_record(ctx(), 0, nullptr, nullptr))),
            TSR_INVALID_ARGUMENT);
}

TEST(CpuPluginBadCalls, KernelsRejectMalformedCallsWithoutCrashing) {
  const test_plugin& p = test_plugin::get();
  for (size_t i = 0; i < p.api().kernel_count; ++i) {
    const tsr_kernel_entry& k = p.api().kernels[i];
    SCOPED_TRACE(k.schema);
    // NULL call, NULL context.
    EXPECT_EQ(code_of(status_ptr(k.fn(p.context(), nullptr))), TSR_INVALID_ARGUMENT);
    tsr_kernel_call call{};
    call.struct_size = sizeof call;
    EXPECT_EQ(code_of(status_ptr(k.fn(nullptr, &call))), TSR_INVALID_ARGUMENT);
    // Wrong argument count.
    call.op_name = "test";
    EXPECT_EQ(code_of(status_ptr(k.fn(p.context(), &call))), TSR_INVALID_ARGUMENT);
    // Right counts, NULL descriptors everywhere.
    tsr_value args[4] = {};
    for (auto& a : args) a.tag = TSR_VALUE_TENSOR;
    tsr_tensor_desc outs[1] = {};
    outs[0].dtype = 99;
    call.args = args;
    call.outs = outs;
    call.nouts = 1;
    for (int n = 1; n <= 4; ++n) {
      call.nargs = n;
      EXPECT_EQ(code_of(status_ptr(k.fn(p.context(), &call))), TSR_INVALID_ARGUMENT) << n;
    }
    // Too small a struct.
    call.struct_size = 8;
    EXPECT_EQ(code_of(status_ptr(k.fn(p.context(), &call))), TSR_INVALID_ARGUMENT);
  }
}

TEST(CpuPluginBadCalls, KernelsRejectMismatchedShapesAndDtypes) {
  host_tensor a(TSR_FLOAT32, {2, 3}), b(TSR_FLOAT32, {3, 2}), out(TSR_FLOAT32, {2, 3});
  host_tensor d(TSR_FLOAT64, {2, 3});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  const test_plugin& p = test_plugin::get();
  EXPECT_EQ(code_of(p.call("mul.Tensor", {tensor_value(a), tensor_value(b)}, outs)),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(p.call("mul.Tensor", {tensor_value(a), tensor_value(d)}, outs)),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(p.call("mm", {tensor_value(a), tensor_value(a)}, outs)), TSR_INVALID_ARGUMENT);
  host_tensor null_data = a;
  null_data.desc().data = nullptr;
  EXPECT_EQ(code_of(p.call("mul.Tensor", {tensor_value(a), tensor_value(null_data)}, outs)),
            TSR_INVALID_ARGUMENT);
  host_tensor ints(TSR_INT32, {2, 3});
  std::vector<tsr_tensor_desc> int_outs = {ints.desc()};
  EXPECT_EQ(code_of(p.call("div.Tensor", {tensor_value(ints), tensor_value(ints)}, int_outs)),
            TSR_UNIMPLEMENTED);
  // Float alpha for integer tensors is refused, as in PyTorch.
  EXPECT_EQ(
      code_of(p.call("add.Tensor",
                     {tensor_value(ints), tensor_value(ints), scalar_value(float_scalar(0.5))},
                     int_outs)),
      TSR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace cpu_test
