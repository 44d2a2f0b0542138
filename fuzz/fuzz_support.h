// Shared pieces of the fuzz targets (fuzz/README.md): a reader that turns the
// fuzzer's bytes into arguments, biased toward the values that break size
// arithmetic, and one runtime per process with the CPU plugin loaded.
//
// Every target is a libFuzzer entry point, LLVMFuzzerTestOneInput. Built with
// clang (scripts/run-fuzz) it is fuzzed; built by the project's own compiler
// it is linked with replay_main.cpp and runs its stored corpus as a ctest, so
// the ASan + UBSan build checks every stored input inside the core too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "tessera/tessera.h"

namespace tsr_fuzz {

// Reads the input front to back; past the end every read returns zeros.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t left() const { return pos_ < size_ ? size_ - pos_ : 0; }
  const uint8_t* rest() const { return data_ + (pos_ < size_ ? pos_ : size_); }

  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(byte() | (byte() << 8)); }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{byte()} << (8 * i);
    return v;
  }

  // An int64 for a size, stride, offset, index or count: small values (the
  // common, valid case) or ones near the edges of int64 (>= 2^59 in magnitude:
  // the overflow cases). Never a mid-sized value, so a fuzzed call cannot ask
  // for gigabytes of real memory: the huge ones are refused, or their
  // allocation fails at once.
  int64_t size_like() {
    const uint8_t kind = byte();
    if (kind < 160) return kind % 9;         // 0 .. 8
    if (kind < 176) return -(kind % 4) - 1;  // -1 .. -4
    static constexpr int64_t kEdges[] = {
        int64_t{1} << 62,
        (int64_t{1} << 62) + 1,
        std::numeric_limits<int64_t>::max(),
        std::numeric_limits<int64_t>::max() - 1,
        std::numeric_limits<int64_t>::max() / 2,
        std::numeric_limits<int64_t>::max() / 3 + 1,
        std::numeric_limits<int64_t>::min(),
        std::numeric_limits<int64_t>::min() + 1,
        -(int64_t{1} << 62),
        6148914691236517207,  // 3 times this is 2^64 + 5
        int64_t{1} << 61,
        (int64_t{1} << 63) / 5 + 1,
        4611686018427387903,
        -1000,
    };
    return kEdges[kind % (sizeof kEdges / sizeof kEdges[0])];
  }

  double real() {
    static constexpr double kValues[] = {0.0,
                                         1.0,
                                         -1.0,
                                         0.5,
                                         2.0,
                                         1e30,
                                         -1e30,
                                         3.0,
                                         1e-30,
                                         std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN()};
    return kValues[byte() % (sizeof kValues / sizeof kValues[0])];
  }

  // At most `max` bytes as text (no NUL inside).
  std::string text(size_t max) {
    size_t n = byte() % (max + 1);
    std::string s;
    while (n-- > 0 && !empty()) {
      const char c = static_cast<char>(byte());
      if (c != '\0') s.push_back(c);
    }
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The process's runtime: the CPU plugin from TESSERA_FUZZ_PLUGIN_DIR (or the
// directory compiled in) plus the built-in meta device. Never destroyed.
inline tsr_runtime* runtime() {
  static tsr_runtime* rt = [] {
    tsr_runtime_options options{};
    options.struct_size = sizeof options;
    options.skip_default_plugins = true;
    tsr_runtime* r = nullptr;
    if (tsr_status* st = tsr_runtime_create(&options, &r)) {
      std::fprintf(stderr, "fuzz: tsr_runtime_create: %s\n", tsr_status_message(st));
      std::abort();
    }
    const char* dir = std::getenv("TESSERA_FUZZ_PLUGIN_DIR");
#ifdef TESSERA_FUZZ_PLUGIN_DIR
    if (dir == nullptr) dir = TESSERA_FUZZ_PLUGIN_DIR;
#endif
    if (dir == nullptr) {
      std::fprintf(stderr,
                   "fuzz: set TESSERA_FUZZ_PLUGIN_DIR to the folder of libtessera-cpu.so\n");
      std::abort();
    }
    const std::string path = std::string(dir) + "/libtessera-cpu.so";
    tsr_plugin* plugin = nullptr;
    if (tsr_status* st = tsr_plugin_load(r, path.c_str(), &plugin)) {
      std::fprintf(stderr, "fuzz: loading %s: %s\n", path.c_str(), tsr_status_message(st));
      std::abort();
    }
    return r;
  }();
  return rt;
}

// A status from a fuzzed call: an error is an expected answer to bad input,
// but never one that says the core itself broke.
inline void expect_handled(tsr_status* status, const char* call) {
  if (status == nullptr) return;
  const tsr_status_code code = tsr_status_code_of(status);
  if (code == TSR_INTERNAL || code == TSR_UNKNOWN) {
    std::fprintf(stderr, "fuzz: %s returned %s: %s\n", call, tsr_status_code_name(code),
                 tsr_status_message(status));
    std::abort();
  }
  tsr_status_free(status);
}

}  // namespace tsr_fuzz
