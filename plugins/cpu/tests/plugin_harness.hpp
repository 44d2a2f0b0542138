// plugin_harness.hpp - loading libtessera-cpu.so under a test host, and host
// tensors to hand its kernels.
//
// The tests do not link libtessera: the test host's make_status creates a
// test-local `struct tsr_status` (code + message) that the tests own and free
// with free_status(). test_plugin::get() dlopens the plugin from
// TESSERA_TEST_PLUGIN_DIR once per process, queries and inits it, and keeps it
// loaded until exit. `host_tensor` owns zeroed, 64-byte aligned storage and a
// descriptor with arbitrary sizes, strides (negative and zero included) and
// offset; its element accessors go through the test's own reference codecs
// (reference.hpp), never through plugin code.
#ifndef TESSERA_PLUGINS_CPU_TESTS_PLUGIN_HARNESS_HPP_
#define TESSERA_PLUGINS_CPU_TESTS_PLUGIN_HARNESS_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reference.hpp"
#include "tessera/plugin.h"

// The test host's status type (the ABI leaves it opaque).
struct tsr_status {
  tsr_status_code code;
  std::string message;
};

namespace cpu_test {

// Owns a status; NULL = OK.
struct status_deleter {
  void operator()(tsr_status* status) const noexcept { delete status; }
};
using status_ptr = std::unique_ptr<tsr_status, status_deleter>;

inline tsr_status_code code_of(const status_ptr& s) { return s ? s->code : TSR_OK; }
inline std::string message_of(const status_ptr& s) { return s ? s->message : std::string(); }

// The host callbacks the tests give the plugin.
const tsr_host_api& test_host();
// Log lines the plugin sent through test_host().log, oldest first.
std::vector<std::string> logged_messages();

class test_plugin {
 public:
  // The loaded, initialised plugin (loaded on first use; a failure aborts the
  // test with a message).
  static test_plugin& get();

  const tsr_plugin_api& api() const { return *api_; }
  tsr_plugin_context* context() const { return context_; }
  void* library() const { return library_; }

  // The kernel entry whose schema starts with `op_name` + "(".
  const tsr_kernel_entry& kernel(const std::string& op_name) const;

  // Calls kernel `op_name` on `args`, writing `outs`; returns its status.
  status_ptr call(const std::string& op_name, const std::vector<tsr_value>& args,
                  std::vector<tsr_tensor_desc>& outs) const;

 private:
  test_plugin() = default;
  void* library_ = nullptr;
  const tsr_plugin_api* api_ = nullptr;
  tsr_plugin_context* context_ = nullptr;
};

// Sets the plugin's "isa" option ("baseline", "avx2" or "avx512") for the
// scope and restores "auto" afterwards, so a test can check every body of the
// loops that have per-ISA variants (plugins/cpu/src/isa.hpp).
class isa_scope {
 public:
  explicit isa_scope(const char* isa);
  ~isa_scope();
  isa_scope(const isa_scope&) = delete;
  isa_scope& operator=(const isa_scope&) = delete;
};

// Every "isa" value naming a body: "baseline", "avx2", "avx512".
std::vector<const char*> all_isas();

// Why this processor cannot run `isa`'s bodies - the extensions it lacks, as
// /proc/cpuinfo's flags show them - or "" when it can.
std::string isa_unavailable_reason(const char* isa);

// The "isa" values this processor runs: "baseline", plus "avx2" where it has
// AVX2 and FMA, plus "avx512" where it also has AVX-512 F, BW, DQ and VL.
std::vector<const char*> available_isas();

// A tensor in host memory with its descriptor.
class host_tensor {
 public:
  // Contiguous (row-major) tensor of `sizes`.
  host_tensor(tsr_dtype dtype, std::vector<int64_t> sizes);
  // Arbitrary element strides (may be 0 or negative); storage covers exactly
  // the addressed elements and `data` points at element (0, ..., 0).
  host_tensor(tsr_dtype dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides);

  // A transposed-storage tensor: allocated contiguous in the order `perm`
  // (perm[0] outermost), viewed with `sizes` - e.g. {1, 0} is a column-major
  // matrix.
  static host_tensor permuted(tsr_dtype dtype, std::vector<int64_t> sizes,
                              const std::vector<int>& perm);

  const tsr_tensor_desc& desc() const { return desc_; }
  tsr_tensor_desc& desc() { return desc_; }
  tsr_dtype dtype() const { return static_cast<tsr_dtype>(desc_.dtype); }
  int ndim() const { return desc_.ndim; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t numel() const;

  // Element at a multi-index (decoded by reference.hpp).
  ref_value get(const std::vector<int64_t>& index) const;
  void set(const std::vector<int64_t>& index, const ref_value& value);
  // Address of an element.
  void* address(const std::vector<int64_t>& index) const;

 private:
  std::shared_ptr<unsigned char> storage_;
  std::vector<int64_t> sizes_;
  tsr_tensor_desc desc_{};
};

// Calls f(index) for every multi-index of `sizes` in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& sizes, F&& f) {
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  std::vector<int64_t> index(sizes.size(), 0);
  for (;;) {
    f(static_cast<const std::vector<int64_t>&>(index));
    int d = static_cast<int>(sizes.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Boxed values for kernel calls (pointers borrowed from the arguments).
tsr_value tensor_value(const host_tensor& t);
tsr_value scalar_value(const tsr_scalar& s);
tsr_value bool_value(bool b);
tsr_value int_list_value(const std::vector<int64_t>& ints);
tsr_value none_value();
tsr_scalar int_scalar(int64_t i);
tsr_scalar float_scalar(double f);
tsr_scalar bool_scalar(bool b);
tsr_scalar complex_scalar(double re, double im);

}  // namespace cpu_test

#endif  // TESSERA_PLUGINS_CPU_TESTS_PLUGIN_HARNESS_HPP_
