// streams_copies_test - families "streams" (ordering, cross-stream waits,
// query/synchronize, elapsed time) and "copies" (host<->device<->device,
// strided, offsets, large) on the device under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "suite_support.h"

namespace tessera::conformance {
namespace {

StreamPtr new_stream() {
  tsr_stream* s = nullptr;
  check(tsr_stream_create(runtime(), device(), &s), "tsr_stream_create");
  return StreamPtr(s);
}

EventPtr new_event(uint32_t flags = 0) {
  tsr_event* e = nullptr;
  check(tsr_event_create(runtime(), device(), flags, &e), "tsr_event_create");
  return EventPtr(e);
}

// Makes `s` current on this thread for the scope, then the default again.
struct CurrentStream {
  explicit CurrentStream(tsr_stream* s) { check(tsr_stream_set_current(s), "set_current"); }
  ~CurrentStream() {
    tsr_stream* d = nullptr;
    tsr_status_free(tsr_stream_default(runtime(), device(), &d));
    if (d != nullptr) tsr_status_free(tsr_stream_set_current(d));
  }
};

// x <- x * 2 + 1, `n` times, in place on the current stream.
void chain(tsr_tensor* x, int n) {
  for (int i = 0; i < n; ++i) {
    call("mul_.Scalar", {tensor_value(x), scalar_value(2.0)});  // the result (x again) is dropped
    call("add_.Scalar", {tensor_value(x), scalar_value(1.0)});
  }
}

TEST(Streams, WorkOnOneStreamRunsInOrder){TSR_CONFORMANCE_TRY({
  StreamPtr s = new_stream();
  std::vector<float> v(1 << 16, 0.0f);
  TensorPtr x = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
  {
    CurrentStream current(s.get());
    chain(x.get(), 10);  // 0 -> 1 -> 3 -> ... -> 2^10 - 1: any reordering shows
  }
  check(tsr_stream_synchronize(s.get()), "tsr_stream_synchronize");
  const std::vector<float> got = to_host<float>(x.get());
  EXPECT_EQ(got.front(), 1023.0f);
  EXPECT_EQ(got.back(), 1023.0f);
})}

TEST(Streams, AStreamWaitingOnAnEventSeesTheOtherStreamsWork){TSR_CONFORMANCE_TRY({
  StreamPtr producer = new_stream();
  StreamPtr consumer = new_stream();
  EventPtr done = new_event();
  std::vector<float> v(1 << 18, 0.0f);
  TensorPtr x = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
  {
    CurrentStream current(producer.get());
    chain(x.get(), 8);
  }
  check(tsr_event_record(done.get(), producer.get()), "tsr_event_record");
  check(tsr_stream_wait_event(consumer.get(), done.get()), "tsr_stream_wait_event");
  TensorPtr y;
  {
    CurrentStream current(consumer.get());
    y = call("sum", {tensor_value(x.get())});
  }
  check(tsr_stream_synchronize(consumer.get()), "tsr_stream_synchronize");
  EXPECT_EQ(to_host<float>(y.get())[0], 255.0f * static_cast<float>(v.size()));
})}

// An event may outlive the stream it was recorded on (as in PyTorch): it
// still completes, answers queries, and another stream can wait on it.
TEST(Streams, AnEventOutlivesTheStreamItRecorded){TSR_CONFORMANCE_TRY({
  std::vector<float> v(1 << 16, 0.0f);
  TensorPtr x = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
  EventPtr e = new_event();
  {
    StreamPtr s = new_stream();
    {
      CurrentStream current(s.get());
      chain(x.get(), 3);  // 0 -> 7
    }
    check(tsr_event_record(e.get(), s.get()), "tsr_event_record");
  }  // the stream is released here, the event is not
  check(tsr_event_synchronize(e.get()), "tsr_event_synchronize");
  bool done = false;
  check(tsr_event_query(e.get(), &done), "tsr_event_query");
  EXPECT_TRUE(done) << "event not done after tsr_event_synchronize";
  StreamPtr later = new_stream();
  check(tsr_stream_wait_event(later.get(), e.get()), "tsr_stream_wait_event");
  {
    CurrentStream current(later.get());
    chain(x.get(), 1);  // 7 -> 15
  }
  check(tsr_stream_synchronize(later.get()), "tsr_stream_synchronize");
  const std::vector<float> got = to_host<float>(x.get());
  EXPECT_EQ(got.front(), 15.0f);
  EXPECT_EQ(got.back(), 15.0f);
})}

// Streams created and released around cross-stream waits, many times over:
// releasing the producer right after the consumer's work is seen done must
// be safe (lavapipe's queue thread still held the producer's timeline then;
// Note [Timeline semaphores outlive their streams] in the Vulkan plugin).
// The producer doubles x and the consumer subtracts one, so x stays 1 only
// when every consumer ran after its producer.
TEST(Streams, StreamsComeAndGoAroundCrossStreamWaits){TSR_CONFORMANCE_TRY({
  std::vector<float> v(1 << 12, 1.0f);
  TensorPtr x = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
  for (int round = 0; round < 40; ++round) {
    StreamPtr producer = new_stream();
    StreamPtr consumer = new_stream();
    EventPtr done = new_event();
    {
      CurrentStream current(producer.get());
      call("mul_.Scalar", {tensor_value(x.get()), scalar_value(2.0)});
    }
    check(tsr_event_record(done.get(), producer.get()), "tsr_event_record");
    check(tsr_stream_wait_event(consumer.get(), done.get()), "tsr_stream_wait_event");
    {
      CurrentStream current(consumer.get());
      call("add_.Scalar", {tensor_value(x.get()), scalar_value(-1.0)});
    }
    check(tsr_stream_synchronize(consumer.get()), "tsr_stream_synchronize");
  }
  const std::vector<float> got = to_host<float>(x.get());
  EXPECT_EQ(got.front(), 1.0f);
  EXPECT_EQ(got.back(), 1.0f);
})}

TEST(Streams, QueryAndSynchronizeAgree){TSR_CONFORMANCE_TRY({
  StreamPtr s = new_stream();
  EventPtr e = new_event();
  std::vector<float> v(1 << 16, 1.0f);
  TensorPtr x = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
  {
    CurrentStream current(s.get());
    chain(x.get(), 4);
  }
  check(tsr_event_record(e.get(), s.get()), "tsr_event_record");
  check(tsr_event_synchronize(e.get()), "tsr_event_synchronize");
  bool done = false;
  check(tsr_event_query(e.get(), &done), "tsr_event_query");
  EXPECT_TRUE(done) << "event not done after tsr_event_synchronize";
  check(tsr_stream_synchronize(s.get()), "tsr_stream_synchronize");
  done = false;
  check(tsr_stream_query(s.get(), &done), "tsr_stream_query");
  EXPECT_TRUE(done) << "stream not done after tsr_stream_synchronize";
})}

TEST(Streams, ElapsedTimeIsMonotonic){TSR_CONFORMANCE_TRY({
  if (!(properties().features & TSR_FEATURE_TIMESTAMPS))
    GTEST_SKIP() << "the device does not claim TSR_FEATURE_TIMESTAMPS";
  StreamPtr s = new_stream();
  EventPtr e0 = new_event(TSR_EVENT_TIMING), e1 = new_event(TSR_EVENT_TIMING),
           e2 = new_event(TSR_EVENT_TIMING);
  std::vector<float> v(1 << 18, 1.0f);
  TensorPtr x = on_device(v, {static_cast<int64_t>(v.size())}, TSR_FLOAT32);
  check(tsr_event_record(e0.get(), s.get()), "record e0");
  {
    CurrentStream current(s.get());
    chain(x.get(), 4);
    check(tsr_event_record(e1.get(), s.get()), "record e1");
    chain(x.get(), 4);
  }
  check(tsr_event_record(e2.get(), s.get()), "record e2");
  check(tsr_event_synchronize(e2.get()), "tsr_event_synchronize");
  double t01 = -1, t02 = -1, t12 = -1;
  check(tsr_event_elapsed_ms(e0.get(), e1.get(), &t01), "elapsed e0 e1");
  check(tsr_event_elapsed_ms(e0.get(), e2.get(), &t02), "elapsed e0 e2");
  check(tsr_event_elapsed_ms(e1.get(), e2.get(), &t12), "elapsed e1 e2");
  EXPECT_GE(t01, 0.0);
  EXPECT_GE(t12, 0.0);
  EXPECT_GE(t02, t01);
  EXPECT_GE(t02, t12);
})}

TEST(Copies, EveryClaimedDtypeRoundTripsBitExactly){TSR_CONFORMANCE_TRY({
  for (int d = 0; d < TSR_DTYPE_COUNT; ++d) {
    const tsr_dtype dtype = static_cast<tsr_dtype>(d);
    if (!(properties().dtypes & TSR_DTYPE_BIT(dtype))) continue;
    const size_t size = tsr_dtype_size(dtype);
    const int64_t n = 1031;
    std::vector<uint8_t> bytes(static_cast<size_t>(n) * size);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 17);
    if (dtype == TSR_BOOL)
      for (uint8_t& b : bytes) b &= 1;
    TensorPtr t = on_device(bytes.data(), bytes.size(), {n}, dtype);
    std::vector<uint8_t> back(bytes.size());
    check(tsr_tensor_copy_to_host(t.get(), back.data(), back.size()), "copy to host");
    EXPECT_TRUE(back == bytes) << tsr_dtype_name(dtype) << " changed on the round trip";
  }
})}

TEST(Copies, DeviceToDeviceCopiesAreExact){TSR_CONFORMANCE_TRY({
  std::vector<int64_t> v(4099);
  std::iota(v.begin(), v.end(), -2000);
  TensorPtr a = on_device(v, {static_cast<int64_t>(v.size())}, TSR_INT64);
  TensorPtr b = call("clone", {tensor_value(a.get())});
  TensorPtr c = call("zeros_like", {tensor_value(a.get())});
  check(tsr_tensor_copy_(c.get(), b.get()), "tsr_tensor_copy_");
  EXPECT_EQ(to_host<int64_t>(c.get()), v);
})}

TEST(Copies, StridedViewsAndOffsetsCopyInLogicalOrder){TSR_CONFORMANCE_TRY({
  std::vector<float> v(6 * 7);
  std::iota(v.begin(), v.end(), 0.0f);
  TensorPtr a = on_device(v, {6, 7}, TSR_FLOAT32);
  tsr_tensor* view = nullptr;
  check(tsr_tensor_transpose(a.get(), 0, 1, &view), "transpose");
  TensorPtr t(view);
  check(tsr_tensor_slice(t.get(), 0, 1, 6, 2, &view), "slice");  // rows 1,3,5 of the 7x6
  TensorPtr s(view);
  const std::vector<float> got = to_host<float>(s.get());
  std::vector<float> want;
  for (int r = 1; r < 6; r += 2)
    for (int c = 0; c < 6; ++c) want.push_back(static_cast<float>(c * 7 + r));
  EXPECT_EQ(got, want) << "copy of a transposed, sliced view (offset 1, strides 2 and 7)";
  // A write into the strided view lands in the right elements of the base.
  std::vector<float> ones(want.size(), -1.0f);
  TensorPtr src = on_device(ones, {3, 6}, TSR_FLOAT32);
  check(tsr_tensor_copy_(s.get(), src.get()), "copy_ into the view");
  const std::vector<float> base = to_host<float>(a.get());
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 7; ++j) {
      const bool written = j % 2 == 1 && j < 6;
      EXPECT_EQ(base[static_cast<size_t>(i * 7 + j)],
                written ? -1.0f : static_cast<float>(i * 7 + j))
          << "base element (" << i << ", " << j << ")";
    }
})}

TEST(Copies, CopiesPastTheLargestAllocationAreChunkedOrRefusedCleanly) {
  TSR_CONFORMANCE_TRY({
    const uint64_t limit = properties().max_allocation;
    if (limit == 0 || limit > (uint64_t{3} << 30))
      GTEST_SKIP() << "no allocation limit below 3 GiB to step past (max_allocation " << limit
                   << ")";
    const int64_t n = static_cast<int64_t>(limit) + 4096;
    const int64_t sizes[1] = {n};
    tsr_tensor* t = nullptr;
    const Outcome o = outcome(tsr_tensor_empty(runtime(), 1, sizes, TSR_UINT8, device(), &t));
    TensorPtr big(t);
    if (o.code != TSR_OK) {
      EXPECT_TRUE(o.code == TSR_RESOURCE_EXHAUSTED || o.code == TSR_INVALID_ARGUMENT)
          << tsr_status_code_name(o.code) << ": " << o.message;
      return;
    }
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i ^ (i >> 20));
    check(tsr_tensor_copy_from_host(big.get(), v.data(), v.size()), "copy past the limit in");
    EXPECT_TRUE(to_host<uint8_t>(big.get()) == v) << "copy past the limit";
  })
}

}  // namespace
}  // namespace tessera::conformance
