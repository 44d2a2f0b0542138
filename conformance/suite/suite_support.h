// suite_support.h - small helpers the conformance families share: owned
// handles, host<->device tensors, op calls by name. Everything goes through
// the application API (tessera.h) on the device under test.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "target.h"
#include "tessera/tessera.h"

namespace tessera::conformance {

struct TensorDeleter {
  void operator()(tsr_tensor* t) const noexcept { tsr_tensor_release(t); }
};
using TensorPtr = std::unique_ptr<tsr_tensor, TensorDeleter>;

struct StreamDeleter {
  void operator()(tsr_stream* s) const noexcept { tsr_stream_release(s); }
};
using StreamPtr = std::unique_ptr<tsr_stream, StreamDeleter>;

struct EventDeleter {
  void operator()(tsr_event* e) const noexcept { tsr_event_release(e); }
};
using EventPtr = std::unique_ptr<tsr_event, EventDeleter>;

struct GroupDeleter {
  void operator()(tsr_process_group* g) const noexcept { tsr_process_group_destroy(g); }
};
using GroupPtr = std::unique_ptr<tsr_process_group, GroupDeleter>;
struct StoreDeleter {
  void operator()(tsr_store* s) const noexcept { tsr_store_destroy(s); }
};
using StorePtr = std::unique_ptr<tsr_store, StoreDeleter>;
struct WorkDeleter {
  void operator()(tsr_work* w) const noexcept { tsr_work_destroy(w); }
};
using WorkPtr = std::unique_ptr<tsr_work, WorkDeleter>;

// The status's code (TSR_OK for NULL) and message; frees it.
struct Outcome {
  tsr_status_code code = TSR_OK;
  std::string message;
};
inline Outcome outcome(tsr_status* status) {
  Outcome o;
  if (status == nullptr) return o;
  o.code = tsr_status_code_of(status);
  o.message = tsr_status_message(status);
  tsr_status_free(status);
  return o;
}

// A tensor of `dtype` and `shape` on the device under test holding `bytes`.
inline TensorPtr on_device(const void* bytes, size_t nbytes, const std::vector<int64_t>& shape,
                           tsr_dtype dtype) {
  tsr_tensor* t = nullptr;
  check(tsr_tensor_from_host(runtime(), bytes, nbytes, static_cast<int32_t>(shape.size()),
                             shape.data(), dtype, device(), &t),
        "tsr_tensor_from_host");
  return TensorPtr(t);
}

template <class T>
TensorPtr on_device(const std::vector<T>& values, const std::vector<int64_t>& shape,
                    tsr_dtype dtype) {
  return on_device(values.data(), values.size() * sizeof(T), shape, dtype);
}

// The tensor's elements in logical order.
template <class T>
std::vector<T> to_host(tsr_tensor* t) {
  int64_t n = 0;
  check(tsr_tensor_numel(t, &n), "tsr_tensor_numel");
  std::vector<T> out(static_cast<size_t>(n));
  check(tsr_tensor_copy_to_host(t, out.data(), out.size() * sizeof(T)), "tsr_tensor_copy_to_host");
  return out;
}

inline tsr_value tensor_value(tsr_tensor* t) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
inline tsr_value int_value(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
inline tsr_value scalar_value(double f) {
  tsr_value v{};
  v.tag = TSR_VALUE_SCALAR;
  v.u.scalar.kind = TSR_FLOAT64;
  v.u.scalar.v.f = f;
  return v;
}

// Calls op `name` and returns its first result; throws (via check) on error.
inline TensorPtr call(const char* name, std::vector<tsr_value> args) {
  const tsr_op* op = nullptr;
  check(tsr_op_find(runtime(), name, &op), std::string("tsr_op_find(") + name + ")");
  tsr_value outs[4] = {};
  check(tsr_op_call(op, args.data(), args.size(), outs, 4), std::string("op ") + name);
  TensorPtr first(outs[0].tag == TSR_VALUE_TENSOR ? outs[0].u.tensor : nullptr);
  for (int i = 1; i < 4; ++i)
    if (outs[i].tag == TSR_VALUE_TENSOR && outs[i].u.tensor != nullptr)
      tsr_tensor_release(outs[i].u.tensor);
  return first;
}

// Wraps a test body: a std::exception from the helpers fails the case with
// its text instead of aborting the process.
#define TSR_CONFORMANCE_TRY(...)                  \
  try {                                           \
    __VA_ARGS__                                   \
  } catch (const std::exception& conformance_e) { \
    FAIL() << conformance_e.what();               \
  }

}  // namespace tessera::conformance
