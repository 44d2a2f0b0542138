// tessera.h's key/value stores: handles over tsr::dist::Store
// (distributed/store.h, Note [Store semantics]).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/guard.h"
#include "api/store_handle.h"
#include "distributed/store.h"
#include "tessera/tessera.h"

namespace {

using tsr::fail;
using tsr::dist::milliseconds;

tsr::dist::Store& store_of(const tsr_store* store) {
  if (store == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument 'store' is NULL; pass a store from tsr_store_create_*");
  if (store->magic != tsr_store::kMagic)
    fail(TSR_INVALID_ARGUMENT,
         "argument 'store' is not a live store (destroyed, or not a tsr_store*)");
  return *store->impl;
}

const char* key_of(const char* key, const char* name) {
  if (key == nullptr) fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass a key", name);
  return key;
}

milliseconds timeout_of(const tsr::dist::Store& s, int64_t timeout_ms) {
  return timeout_ms < 0 ? s.default_timeout() : milliseconds(timeout_ms);
}

milliseconds create_timeout(int64_t timeout_ms) {
  if (timeout_ms == 0)
    fail(TSR_INVALID_ARGUMENT,
         "argument 'timeout_ms' is 0; give a positive timeout, or < 0 for 300 s (PyTorch's)");
  return timeout_ms < 0 ? milliseconds(300000) : milliseconds(timeout_ms);
}

std::vector<std::string> keys_of(const char* const* keys, size_t count) {
  if (keys == nullptr && count > 0)
    fail(TSR_INVALID_ARGUMENT, "argument 'keys' is NULL with count {}", count);
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'keys[{}]' is NULL", i);
    out.emplace_back(keys[i]);
  }
  return out;
}

tsr_store* make_handle(std::shared_ptr<tsr::dist::Store> impl) {
  auto* h = new tsr_store;
  h->impl = std::move(impl);
  return h;
}

}  // namespace

TSR_API tsr_status* tsr_store_create_tcp(const char* host, uint16_t port, bool is_server,
                                         int64_t timeout_ms, tsr_store** out_store) {
  return tsr::api_guard([&] {
    tsr::require_out(out_store, "out_store");
    *out_store = nullptr;
    if (host == nullptr && !is_server)
      fail(TSR_INVALID_ARGUMENT, "argument 'host' is NULL; give the server's address");
    *out_store = make_handle(tsr::dist::tcp_store(host != nullptr ? host : "", port, is_server,
                                                  create_timeout(timeout_ms)));
  });
}

TSR_API tsr_status* tsr_store_create_file(const char* path, int64_t timeout_ms,
                                          tsr_store** out_store) {
  return tsr::api_guard([&] {
    tsr::require_out(out_store, "out_store");
    *out_store = nullptr;
    if (path == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'path' is NULL; give a file path");
    *out_store = make_handle(tsr::dist::file_store(path, create_timeout(timeout_ms)));
  });
}

TSR_API tsr_status* tsr_store_create_prefix(tsr_store* base, const char* prefix,
                                            tsr_store** out_store) {
  return tsr::api_guard([&] {
    tsr::require_out(out_store, "out_store");
    *out_store = nullptr;
    store_of(base);
    if (prefix == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'prefix' is NULL");
    *out_store = make_handle(tsr::dist::prefix_store(base->impl, prefix));
  });
}

TSR_API void tsr_store_destroy(tsr_store* store) {
  if (store == nullptr || store->magic != tsr_store::kMagic) return;
  store->magic = 0;
  delete store;
}

TSR_API tsr_status* tsr_store_set(tsr_store* store, const char* key, const void* value,
                                  size_t size) {
  return tsr::api_guard([&] {
    tsr::dist::Store& s = store_of(store);
    if (value == nullptr && size > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'value' is NULL with size {}", size);
    s.set(key_of(key, "key"),
          size == 0 ? std::string() : std::string(static_cast<const char*>(value), size));
  });
}

TSR_API tsr_status* tsr_store_get(tsr_store* store, const char* key, int64_t timeout_ms,
                                  void* buffer, size_t capacity, size_t* out_size) {
  return tsr::api_guard([&] {
    tsr::dist::Store& s = store_of(store);
    if (buffer == nullptr && capacity > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'buffer' is NULL with capacity {}", capacity);
    const std::string value = s.get(key_of(key, "key"), timeout_of(s, timeout_ms));
    if (out_size != nullptr) *out_size = value.size();
    if (buffer == nullptr) return;
    if (value.size() > capacity)
      fail(TSR_OUT_OF_RANGE,
           "key '{}' holds {} bytes but the buffer has {}; pass a buffer of its size "
           "(out_size)",
           key, value.size(), capacity);
    if (!value.empty()) std::memcpy(buffer, value.data(), value.size());
  });
}

TSR_API tsr_status* tsr_store_wait(tsr_store* store, const char* const* keys, size_t count,
                                   int64_t timeout_ms) {
  return tsr::api_guard([&] {
    tsr::dist::Store& s = store_of(store);
    s.wait(keys_of(keys, count), timeout_of(s, timeout_ms));
  });
}

TSR_API tsr_status* tsr_store_add(tsr_store* store, const char* key, int64_t delta,
                                  int64_t* out_value) {
  return tsr::api_guard([&] {
    tsr::dist::Store& s = store_of(store);
    const int64_t v = s.add(key_of(key, "key"), delta);
    if (out_value != nullptr) *out_value = v;
  });
}

TSR_API tsr_status* tsr_store_check(tsr_store* store, const char* const* keys, size_t count,
                                    bool* out_all) {
  return tsr::api_guard([&] {
    tsr::dist::Store& s = store_of(store);
    tsr::require_out(out_all, "out_all");
    *out_all = s.check(keys_of(keys, count));
  });
}

TSR_API tsr_status* tsr_store_port(const tsr_store* store, uint16_t* out_port) {
  return tsr::api_guard([&] {
    const tsr::dist::Store& s = store_of(store);
    tsr::require_out(out_port, "out_port");
    *out_port = tsr::dist::tcp_store_port(s);
  });
}
