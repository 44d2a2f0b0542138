// Runtime behaviour through the C ABI that the other suites do not cover:
// sticky asynchronous stream errors (Note [Streams]), streams and events on
// cpu:0, the caching allocator's statistics, and the meta device.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <dlpack/dlpack.h>

#include "tessera/tessera.h"

namespace {

struct Status {
  tsr_status_code code;
  std::string message;
  explicit Status(tsr_status* s) : code(tsr_status_code_of(s)), message(tsr_status_message(s)) {
    tsr_status_free(s);
  }
};

#define ASSERT_OK(expr)                         \
  do {                                          \
    Status st_(expr);                           \
    ASSERT_EQ(st_.code, TSR_OK) << st_.message; \
  } while (0)

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsr_runtime_options o{};
    o.struct_size = sizeof o;
    o.skip_default_plugins = true;
    ASSERT_OK(tsr_runtime_create(&o, &rt_));
    tsr_plugin* cpu = nullptr;
    ASSERT_OK(tsr_plugin_load(rt_, TESSERA_TEST_PLUGIN_DIR "/libtessera-cpu.so", &cpu));
  }
  void TearDown() override { tsr_runtime_destroy(rt_); }

  // Calls fill_.Scalar(t, value) on the calling thread's current stream.
  Status fill(tsr_tensor* t, double value) {
    const tsr_op* op = nullptr;
    Status found(tsr_op_find(rt_, "fill_.Scalar", &op));
    if (found.code != TSR_OK) return found;
    tsr_value args[2] = {};
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].u.tensor = t;
    args[1].tag = TSR_VALUE_FLOAT;
    args[1].u.f = value;
    return Status(tsr_op_call(op, args, 2, nullptr, 0));
  }

  // Loads the asynchronous test device (fill_ with -1 fails "on the device")
  // and makes an n-element float32 tensor on it.
  void load_async_device(int64_t n, tsr_device* dev, tsr_tensor** t) {
    tsr_plugin* plugin = nullptr;
    ASSERT_OK(
        tsr_plugin_load(rt_, TESSERA_TEST_FAULT_PLUGIN_DIR "/libtsrtest-async-fault.so", &plugin));
    ASSERT_OK(tsr_device_parse(rt_, "testdev:0", dev));
    ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, *dev, t));
  }

  tsr_runtime* rt_ = nullptr;
};

TEST_F(RuntimeTest, CpuPluginBindsEveryKernelItRegisters) {
  // Each kernel schema matches its registry op exactly and every family entry
  // claims its codes: a mismatch would leave an op to its decomposition (or
  // missing) and show up here as a rejected kernel.
  tsr_plugin* cpu = nullptr;
  ASSERT_OK(tsr_runtime_plugin_at(rt_, 0, &cpu));
  tsr_plugin_info info{};
  info.struct_size = sizeof info;
  ASSERT_OK(tsr_plugin_get_info(cpu, &info));
  EXPECT_STREQ(info.name, "cpu");
  EXPECT_EQ(info.kernels_rejected, 0);
  EXPECT_GE(info.kernels_bound, 20);  // at least the documented primitive set (docs/primitives.md)
  size_t n = 0;
  ASSERT_OK(tsr_runtime_load_report_count(rt_, &n));
  for (size_t i = 0; i < n; ++i) {
    tsr_load_report_entry e{};
    e.struct_size = sizeof e;
    ASSERT_OK(tsr_runtime_load_report_at(rt_, i, &e));
    EXPECT_NE(e.event, TSR_LOAD_KERNEL_REJECTED) << (e.detail ? e.detail : "");
  }
  // Every primitive of the registry has a CPU kernel for float32.
  size_t ops = 0;
  ASSERT_OK(tsr_op_count(rt_, &ops));
  tsr_device cpu0{};
  for (size_t i = 0; i < ops; ++i) {
    const tsr_op* op = nullptr;
    ASSERT_OK(tsr_op_at(rt_, i, &op));
    tsr_op_kind kind = TSR_OP_VIEW;
    ASSERT_OK(tsr_op_kind_of(op, &kind));
    if (kind != TSR_OP_PRIMITIVE) continue;
    bool has = false;
    for (int dt = 0; dt < TSR_DTYPE_COUNT && !has; ++dt)
      ASSERT_OK(tsr_op_has_kernel(op, cpu0, static_cast<tsr_dtype>(dt), &has));
    EXPECT_TRUE(has) << tsr_op_name(op) << " is a primitive without a CPU kernel";
  }
}

TEST_F(RuntimeTest, AsyncFailureSticksToItsStreamAndNamesTheOp) {
  tsr_device dev{};
  tsr_tensor* t = nullptr;
  ASSERT_NO_FATAL_FAILURE(load_async_device(4, &dev, &t));

  // The failing work is accepted when enqueued ...
  EXPECT_EQ(fill(t, -1.0).code, TSR_OK);
  // ... and surfaces at the next synchronize, naming the op.
  tsr_stream* stream = nullptr;
  ASSERT_OK(tsr_stream_default(rt_, dev, &stream));
  Status sync(tsr_stream_synchronize(stream));
  EXPECT_EQ(sync.code, TSR_INTERNAL);
  EXPECT_NE(sync.message.find("fill_.Scalar"), std::string::npos) << sync.message;
  EXPECT_NE(sync.message.find("injected asynchronous fault"), std::string::npos);

  // The stream stays failed: the next op and the next synchronize report it.
  Status next(fill(t, 1.0));
  EXPECT_EQ(next.code, TSR_FAILED_PRECONDITION);
  EXPECT_NE(next.message.find("failed earlier"), std::string::npos) << next.message;
  EXPECT_NE(next.message.find("fill_.Scalar"), std::string::npos) << next.message;
  Status again(tsr_stream_synchronize(stream));
  EXPECT_EQ(again.code, TSR_FAILED_PRECONDITION);
  bool done = false;
  EXPECT_EQ(Status(tsr_stream_query(stream, &done)).code, TSR_FAILED_PRECONDITION);

  // Another stream of the same device is unaffected.
  tsr_stream* fresh = nullptr;
  ASSERT_OK(tsr_stream_create(rt_, dev, &fresh));
  ASSERT_OK(tsr_stream_set_current(fresh));
  EXPECT_EQ(fill(t, 2.0).code, TSR_OK);
  ASSERT_OK(tsr_stream_synchronize(fresh));
  std::vector<float> host(4);
  ASSERT_OK(tsr_tensor_copy_to_host(t, host.data(), 16));
  EXPECT_EQ(host, std::vector<float>(4, 2.0f));
  tsr_stream* def = nullptr;
  ASSERT_OK(tsr_stream_default(rt_, dev, &def));
  ASSERT_OK(tsr_stream_set_current(def));  // drops the thread's reference to `fresh`
  tsr_stream_release(fresh);
  tsr_tensor_release(t);
}

TEST_F(RuntimeTest, EventsOnOneStreamMeasureMonotonicElapsedTime) {
  tsr_device cpu{TSR_DEVICE_CPU, 0};
  tsr_stream* s = nullptr;
  ASSERT_OK(tsr_stream_create(rt_, cpu, &s));
  tsr_event *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_OK(tsr_event_create(rt_, cpu, TSR_EVENT_TIMING, &a));
  ASSERT_OK(tsr_event_create(rt_, cpu, TSR_EVENT_TIMING, &b));
  ASSERT_OK(tsr_event_create(rt_, cpu, TSR_EVENT_TIMING, &c));
  ASSERT_OK(tsr_event_record(a, s));
  int64_t n = 1 << 16;
  tsr_tensor* t = nullptr;
  ASSERT_OK(tsr_tensor_zeros(rt_, 1, &n, TSR_FLOAT32, cpu, &t));
  ASSERT_OK(tsr_event_record(b, s));
  ASSERT_OK(tsr_stream_wait_event(s, b));
  ASSERT_OK(tsr_event_record(c, s));
  ASSERT_OK(tsr_event_synchronize(c));
  bool done = false;
  ASSERT_OK(tsr_event_query(c, &done));
  EXPECT_TRUE(done);
  double ab = -1, ac = -1;
  ASSERT_OK(tsr_event_elapsed_ms(a, b, &ab));
  ASSERT_OK(tsr_event_elapsed_ms(a, c, &ac));
  EXPECT_GE(ab, 0.0);
  EXPECT_GE(ac, ab);
  // Without TIMING, elapsed time is refused.
  tsr_event* plain = nullptr;
  ASSERT_OK(tsr_event_create(rt_, cpu, 0, &plain));
  ASSERT_OK(tsr_event_record(plain, s));
  EXPECT_EQ(Status(tsr_event_elapsed_ms(a, plain, &ab)).code, TSR_FAILED_PRECONDITION);
  for (tsr_event* e : {a, b, c, plain}) tsr_event_release(e);
  tsr_stream_release(s);
  tsr_tensor_release(t);
}

TEST_F(RuntimeTest, CachingAllocatorReusesBlocksAndReportsStats) {
  tsr_device cpu{TSR_DEVICE_CPU, 0};
  tsr_memory_stats s0{};
  s0.struct_size = sizeof s0;
  ASSERT_OK(tsr_device_memory_stats(rt_, cpu, &s0));
  int64_t n = 1000;  // 4000 bytes -> the 4096-byte size class
  tsr_tensor* t = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, cpu, &t));
  tsr_memory_stats s1{};
  s1.struct_size = sizeof s1;
  ASSERT_OK(tsr_device_memory_stats(rt_, cpu, &s1));
  EXPECT_EQ(s1.allocated - s0.allocated, 4096u);
  EXPECT_GE(s1.reserved, s1.allocated);
  EXPECT_GE(s1.peak_allocated, s1.allocated);
  tsr_tensor_release(t);
  tsr_memory_stats s2{};
  s2.struct_size = sizeof s2;
  ASSERT_OK(tsr_device_memory_stats(rt_, cpu, &s2));
  EXPECT_EQ(s2.allocated, s0.allocated);
  EXPECT_EQ(s2.reserved, s1.reserved);  // cached, not returned
  // The next allocation of that class comes from the cache, not the plugin.
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, cpu, &t));
  tsr_memory_stats s3{};
  s3.struct_size = sizeof s3;
  ASSERT_OK(tsr_device_memory_stats(rt_, cpu, &s3));
  EXPECT_EQ(s3.plugin_alloc_count, s2.plugin_alloc_count);
  EXPECT_EQ(s3.alloc_count, s2.alloc_count + 1);
  tsr_tensor_release(t);
  ASSERT_OK(tsr_device_empty_cache(rt_, cpu));
  tsr_memory_stats s4{};
  s4.struct_size = sizeof s4;
  ASSERT_OK(tsr_device_memory_stats(rt_, cpu, &s4));
  EXPECT_EQ(s4.reserved, s4.allocated);
}

TEST_F(RuntimeTest, MetaDeviceRunsShapeRulesWithoutStorage) {
  tsr_device meta{};
  ASSERT_OK(tsr_device_parse(rt_, "meta", &meta));
  EXPECT_EQ(meta.type, TSR_DEVICE_META);
  int64_t sa[2] = {3, 1}, sb[1] = {4};
  tsr_tensor *a = nullptr, *b = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 2, sa, TSR_INT32, meta, &a));
  ASSERT_OK(tsr_tensor_empty(rt_, 1, sb, TSR_FLOAT32, meta, &b));
  const tsr_op* add = nullptr;
  ASSERT_OK(tsr_op_find(rt_, "add.Tensor", &add));
  tsr_value args[2] = {};
  args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = a;
  args[1].u.tensor = b;
  tsr_value out{};
  ASSERT_OK(tsr_op_call(add, args, 2, &out, 1));
  tsr_tensor_info info{};
  info.struct_size = sizeof info;
  ASSERT_OK(tsr_tensor_get_info(out.u.tensor, &info));
  EXPECT_EQ(info.ndim, 2);
  EXPECT_EQ(info.sizes[0], 3);
  EXPECT_EQ(info.sizes[1], 4);
  EXPECT_EQ(info.dtype, TSR_FLOAT32);  // int32 + float32 promotes
  EXPECT_EQ(info.device.type, TSR_DEVICE_META);
  // Reading data from meta is refused.
  float host[12];
  EXPECT_EQ(Status(tsr_tensor_copy_to_host(out.u.tensor, host, sizeof host)).code,
            TSR_FAILED_PRECONDITION);
  // Shape errors still happen on meta.
  int64_t sc[2] = {2, 4};  // (3, 1) and (2, 4) do not broadcast
  tsr_tensor* c = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 2, sc, TSR_FLOAT32, meta, &c));
  args[1].u.tensor = c;
  tsr_value bad{};
  EXPECT_EQ(Status(tsr_op_call(add, args, 2, &bad, 1)).code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(bad.tag, TSR_VALUE_NONE);
  for (tsr_tensor* t : {a, b, c, out.u.tensor}) tsr_tensor_release(t);
}

TEST_F(RuntimeTest, MissingKernelNamesOpDeviceAndDtype) {
  // The test device has only a float32 fill_ kernel: add.Tensor is missing.
  tsr_plugin* plugin = nullptr;
  ASSERT_OK(tsr_plugin_load(rt_, TESSERA_TEST_FAULT_PLUGIN_DIR "/libtsrtest-good.so", &plugin));
  tsr_device dev{};
  ASSERT_OK(tsr_device_parse(rt_, "testdev:0", &dev));
  int64_t n = 2;
  tsr_tensor *a = nullptr, *i = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, dev, &a));
  const tsr_op* add = nullptr;
  ASSERT_OK(tsr_op_find(rt_, "add.Tensor", &add));
  tsr_value args[2] = {};
  args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = args[1].u.tensor = a;
  tsr_value out{};
  Status st(tsr_op_call(add, args, 2, &out, 1));
  EXPECT_EQ(st.code, TSR_UNIMPLEMENTED);
  EXPECT_NE(st.message.find("add.Tensor"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("testdev:0"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("float32"), std::string::npos) << st.message;
  // fill_ exists for float32 only: int32 names its dtype.
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_INT32, dev, &i));
  Status fi(fill(i, 1.0));
  EXPECT_EQ(fi.code, TSR_UNIMPLEMENTED);
  EXPECT_NE(fi.message.find("int32"), std::string::npos) << fi.message;
  tsr_tensor_release(a);
  tsr_tensor_release(i);
}

TEST_F(RuntimeTest, TensorsMoveBetweenDevicesWithConversion) {
  tsr_plugin* plugin = nullptr;
  ASSERT_OK(tsr_plugin_load(rt_, TESSERA_TEST_FAULT_PLUGIN_DIR "/libtsrtest-good.so", &plugin));
  tsr_device dev{}, cpu{TSR_DEVICE_CPU, 0};
  ASSERT_OK(tsr_device_parse(rt_, "testdev:0", &dev));
  int64_t sizes[2] = {2, 3};
  float data[6] = {0, 1, 2, 3, 4, 5};
  tsr_tensor *a = nullptr, *at = nullptr, *on_dev = nullptr, *back = nullptr;
  ASSERT_OK(tsr_tensor_from_host(rt_, data, sizeof data, 2, sizes, TSR_FLOAT32, cpu, &a));
  ASSERT_OK(tsr_tensor_transpose(a, 0, 1, &at));  // non-contiguous source
  ASSERT_OK(tsr_tensor_to_device(at, dev, &on_dev));
  ASSERT_OK(tsr_tensor_to_device(on_dev, cpu, &back));
  float host[6];
  ASSERT_OK(tsr_tensor_copy_to_host(back, host, sizeof host));
  const float want[6] = {0, 3, 1, 4, 2, 5};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(host[k], want[k]) << k;
  for (tsr_tensor* t : {a, at, on_dev, back}) tsr_tensor_release(t);
}

struct BlobState {
  int deleted = 0;
  void* seen = nullptr;
};
void count_delete(void* data, void* ctx) {
  auto* s = static_cast<BlobState*>(ctx);
  ++s->deleted;
  s->seen = data;
}

TEST_F(RuntimeTest, FromBlobSharesUserMemoryAndRunsTheDeleterOnce) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  BlobState state;
  int64_t sizes[2] = {2, 3};
  tsr_tensor* t = nullptr;
  ASSERT_OK(tsr_tensor_from_blob(rt_, data, 2, sizes, nullptr, TSR_FLOAT32,
                                 tsr_device{TSR_DEVICE_CPU, 0}, count_delete, &state, &t));
  void* p = nullptr;
  ASSERT_OK(tsr_tensor_data_ptr(t, &p));
  EXPECT_EQ(p, static_cast<void*>(data));  // no copy
  ASSERT_EQ(fill(t, 7.0).code, TSR_OK);
  EXPECT_EQ(data[5], 7.0f);  // writes land in the user's buffer
  tsr_tensor* view = nullptr;
  ASSERT_OK(tsr_tensor_transpose(t, 0, 1, &view));
  tsr_tensor_release(t);
  EXPECT_EQ(state.deleted, 0);  // the view keeps the storage alive
  tsr_tensor_release(view);
  EXPECT_EQ(state.deleted, 1);
  EXPECT_EQ(state.seen, static_cast<void*>(data));
}

TEST_F(RuntimeTest, DlpackRoundTripSharesMemoryAndKeepsStrides) {
  int64_t sizes[2] = {3, 4};
  std::vector<double> values(12);
  for (int k = 0; k < 12; ++k) values[k] = k * 0.5;
  tsr_tensor *base = nullptr, *t = nullptr;
  ASSERT_OK(tsr_tensor_from_host(rt_, values.data(), 12 * sizeof(double), 2, sizes, TSR_FLOAT64,
                                 tsr_device{TSR_DEVICE_CPU, 0}, &base));
  ASSERT_OK(tsr_tensor_transpose(base, 0, 1, &t));  // strides (1, 4)
  DLManagedTensor* managed = nullptr;
  ASSERT_OK(tsr_tensor_to_dlpack(t, &managed));
  ASSERT_NE(managed, nullptr);
  EXPECT_EQ(managed->dl_tensor.ndim, 2);
  EXPECT_EQ(managed->dl_tensor.shape[0], 4);
  EXPECT_EQ(managed->dl_tensor.strides[0], 1);
  EXPECT_EQ(managed->dl_tensor.strides[1], 4);
  EXPECT_EQ(managed->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(managed->dl_tensor.dtype.bits, 64);
  tsr_tensor_release(t);
  tsr_tensor_release(base);  // the export keeps the storage alive
  const double* d = static_cast<const double*>(managed->dl_tensor.data);
  EXPECT_EQ(d[5], 2.5);
  // Import it back: no copy, same strides, and the DLPack deleter runs once.
  tsr_tensor* back = nullptr;
  ASSERT_OK(tsr_tensor_from_dlpack(rt_, managed, &back));
  tsr_tensor_info info{};
  info.struct_size = sizeof info;
  ASSERT_OK(tsr_tensor_get_info(back, &info));
  EXPECT_EQ(info.strides[0], 1);
  EXPECT_EQ(info.strides[1], 4);
  EXPECT_EQ(info.dtype, TSR_FLOAT64);
  tsr_scalar item{};
  tsr_tensor *row = nullptr, *el = nullptr;
  ASSERT_OK(tsr_tensor_select(back, 0, 1, &row));  // back[1] = base[:, 1] = 0.5, 2.5, 4.5
  ASSERT_OK(tsr_tensor_select(row, 0, 1, &el));
  ASSERT_OK(tsr_tensor_item(el, &item));
  EXPECT_EQ(item.kind, TSR_FLOAT64);
  EXPECT_EQ(item.v.f, 2.5);
  for (tsr_tensor* x : {back, row, el}) tsr_tensor_release(x);
}

void record_op(const tsr_op* op, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(tsr_op_name(op));
}

TEST_F(RuntimeTest, ObserverSeesEveryDispatcherCrossingOfADecomposition) {
  std::vector<std::string> seen;
  ASSERT_OK(tsr_runtime_set_op_observer(rt_, record_op, &seen));
  int64_t sm[2] = {2, 3}, sv[1] = {3};
  tsr_device cpu{TSR_DEVICE_CPU, 0};
  tsr_tensor *m = nullptr, *v = nullptr;
  ASSERT_OK(tsr_tensor_zeros(rt_, 2, sm, TSR_FLOAT32, cpu, &m));
  ASSERT_OK(tsr_tensor_zeros(rt_, 1, sv, TSR_FLOAT32, cpu, &v));
  seen.clear();
  const tsr_op* matmul = nullptr;
  ASSERT_OK(tsr_op_find(rt_, "matmul", &matmul));
  tsr_value args[2] = {};
  args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = m;
  args[1].u.tensor = v;
  tsr_value out{};
  ASSERT_OK(tsr_op_call(matmul, args, 2, &out, 1));
  // matrix @ vector = mm(m, v.unsqueeze(1)).squeeze(-1), as torch.matmul does.
  const std::vector<std::string> want = {"matmul", "unsqueeze", "mm", "squeeze.dim"};
  EXPECT_EQ(seen, want);
  ASSERT_OK(tsr_runtime_set_op_observer(rt_, nullptr, nullptr));
  seen.clear();
  tsr_tensor* out2 = nullptr;
  ASSERT_OK(tsr_tensor_transpose(m, 0, 1, &out2));
  EXPECT_TRUE(seen.empty());
  for (tsr_tensor* t : {m, v, out.u.tensor, out2}) tsr_tensor_release(t);
}

TEST_F(RuntimeTest, CachingAllocatorGivesAnotherStreamsBlockOnlyAfterItsEvent) {
  // See Note [Stream-ordered reuse]: on this asynchronous test device an event
  // completes when the stream it was recorded on is next synchronized.
  tsr_plugin* plugin = nullptr;
  ASSERT_OK(
      tsr_plugin_load(rt_, TESSERA_TEST_FAULT_PLUGIN_DIR "/libtsrtest-async-events.so", &plugin));
  tsr_device dev{};
  ASSERT_OK(tsr_device_parse(rt_, "testdev:0", &dev));
  auto plugin_allocs = [&](uint64_t* out) {
    tsr_memory_stats s{};
    s.struct_size = sizeof s;
    ASSERT_OK(tsr_device_memory_stats(rt_, dev, &s));
    *out = s.plugin_alloc_count;
  };
  int64_t n = 1000;
  tsr_tensor* t = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, dev, &t));  // default stream
  tsr_tensor_release(t);  // cached, last used on the default stream
  tsr_stream* def = nullptr;
  ASSERT_OK(tsr_stream_default(rt_, dev, &def));
  tsr_stream* side = nullptr;
  ASSERT_OK(tsr_stream_create(rt_, dev, &side));
  ASSERT_OK(tsr_stream_set_current(side));
  uint64_t a0 = 0, a1 = 0, a2 = 0;
  ASSERT_NO_FATAL_FAILURE(plugin_allocs(&a0));
  // The default stream's work may still use the block: `side` gets a new one.
  tsr_tensor* u1 = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, dev, &u1));
  ASSERT_NO_FATAL_FAILURE(plugin_allocs(&a1));
  EXPECT_EQ(a1, a0 + 1);
  // Once the event recorded on the default stream completes, the block goes
  // to `side` without a plugin allocation and without a synchronize of `side`.
  ASSERT_OK(tsr_stream_synchronize(def));
  tsr_tensor* u2 = nullptr;
  ASSERT_OK(tsr_tensor_empty(rt_, 1, &n, TSR_FLOAT32, dev, &u2));
  ASSERT_NO_FATAL_FAILURE(plugin_allocs(&a2));
  EXPECT_EQ(a2, a1);
  tsr_tensor_release(u1);
  tsr_tensor_release(u2);
  ASSERT_OK(tsr_stream_set_current(def));
  tsr_stream_release(side);
}

TEST_F(RuntimeTest, DeviceSynchronizeCoversEveryStreamOfTheDevice) {
  tsr_device dev{};
  tsr_tensor* t = nullptr;
  ASSERT_NO_FATAL_FAILURE(load_async_device(2, &dev, &t));
  tsr_stream* side = nullptr;
  ASSERT_OK(tsr_stream_create(rt_, dev, &side));
  ASSERT_OK(tsr_stream_set_current(side));
  EXPECT_EQ(fill(t, -1.0).code, TSR_OK);  // fails "on the device", on `side`
  tsr_stream* def = nullptr;
  ASSERT_OK(tsr_stream_default(rt_, dev, &def));
  ASSERT_OK(tsr_stream_set_current(def));
  // The default stream itself is fine; the device-wide synchronize still
  // reaches the failed work on `side`.
  ASSERT_OK(tsr_stream_synchronize(def));
  Status st(tsr_device_synchronize(rt_, dev));
  EXPECT_NE(st.code, TSR_OK);
  EXPECT_NE(st.message.find("fill_.Scalar"), std::string::npos) << st.message;
  tsr_stream_release(side);
  tsr_tensor_release(t);
}

TEST_F(RuntimeTest, OpsFromSeveralThreadsAtOnceStayCorrect) {
  // Fresh tensors, the caching allocator, the object pools and the op handles
  // are shared by every thread; each thread checks its own results.
  const tsr_op* add = nullptr;
  ASSERT_OK(tsr_op_find(rt_, "add.Tensor", &add));
  constexpr int kThreads = 4, kIters = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      int64_t n = 1 + w * 37;  // different size classes per thread
      std::vector<float> x(static_cast<size_t>(n), static_cast<float>(w));
      tsr_tensor* a = nullptr;
      tsr_status* st = tsr_tensor_from_host(rt_, x.data(), x.size() * 4, 1, &n, TSR_FLOAT32,
                                            tsr_device{TSR_DEVICE_CPU, 0}, &a);
      if (st) {
        tsr_status_free(st);
        ++failures;
        return;
      }
      std::vector<float> host(x.size());
      for (int i = 0; i < kIters; ++i) {
        tsr_value args[2] = {};
        args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
        args[0].u.tensor = args[1].u.tensor = a;
        tsr_value out{};
        st = tsr_op_call(add, args, 2, &out, 1);
        if (st) {
          tsr_status_free(st);
          ++failures;
          break;
        }
        if (i % 100 == 0) {
          tsr_status_free(tsr_tensor_copy_to_host(out.u.tensor, host.data(), host.size() * 4));
          for (float v : host)
            if (v != 2.0f * static_cast<float>(w)) ++failures;
        }
        tsr_tensor_release(out.u.tensor);
      }
      tsr_tensor_release(a);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  tsr_memory_stats s{};
  s.struct_size = sizeof s;
  ASSERT_OK(tsr_device_memory_stats(rt_, tsr_device{TSR_DEVICE_CPU, 0}, &s));
  EXPECT_EQ(s.allocated, 0u);  // every block came back
}

TEST_F(RuntimeTest, ReleasedStreamAndEventHandlesAreRefusedNotUsed) {
  tsr_device cpu{TSR_DEVICE_CPU, 0};
  tsr_stream* s = nullptr;
  tsr_event* e = nullptr;
  ASSERT_OK(tsr_stream_create(rt_, cpu, &s));
  ASSERT_OK(tsr_event_create(rt_, cpu, 0, &e));
  tsr_stream_release(s);
  tsr_event_release(e);
  Status ss(tsr_stream_synchronize(s));
  EXPECT_EQ(ss.code, TSR_INVALID_ARGUMENT);
  EXPECT_NE(ss.message.find("stream"), std::string::npos) << ss.message;
  bool done = false;
  Status es(tsr_event_query(e, &done));
  EXPECT_EQ(es.code, TSR_INVALID_ARGUMENT);
  EXPECT_NE(es.message.find("event"), std::string::npos) << es.message;
  tsr_stream_release(s);  // a second release is ignored
  tsr_event_release(e);
}

TEST(RuntimeLifetime, TensorsOutliveTheirRuntimeHandle) {
  tsr_runtime_options o{};
  o.struct_size = sizeof o;
  o.skip_default_plugins = true;
  tsr_runtime* rt = nullptr;
  ASSERT_OK(tsr_runtime_create(&o, &rt));
  tsr_plugin* cpu = nullptr;
  ASSERT_OK(tsr_plugin_load(rt, TESSERA_TEST_PLUGIN_DIR "/libtessera-cpu.so", &cpu));
  const tsr_op* add = nullptr;
  ASSERT_OK(tsr_op_find(rt, "add.Tensor", &add));
  int64_t n = 3;
  float x[3] = {1, 2, 3};
  tsr_tensor* a = nullptr;
  ASSERT_OK(
      tsr_tensor_from_host(rt, x, sizeof x, 1, &n, TSR_FLOAT32, tsr_device{TSR_DEVICE_CPU, 0}, &a));
  tsr_runtime_destroy(rt);
  // The handle is gone ...
  size_t count = 0;
  EXPECT_EQ(Status(tsr_device_count(rt, &count)).code, TSR_INVALID_ARGUMENT);
  // ... but the tensor, its storage and the runtime behind it live on.
  tsr_value args[2] = {};
  args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = args[1].u.tensor = a;
  tsr_value out{};
  ASSERT_OK(tsr_op_call(add, args, 2, &out, 1));
  float host[3];
  ASSERT_OK(tsr_tensor_copy_to_host(out.u.tensor, host, sizeof host));
  EXPECT_EQ(host[2], 6.0f);
  tsr_tensor_release(out.u.tensor);
  tsr_tensor_release(a);  // the last storage: the runtime is torn down here
}

}  // namespace
