// plugin_harness.cpp - the test host, plugin loading and host tensors.
#include "plugin_harness.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>

// Under AddressSanitizer, let the allocator return NULL for the absurd sizes the
// allocator tests request (instead of aborting), as the real one does.
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}

namespace cpu_test {
namespace {

std::mutex g_log_mutex;
std::vector<std::string> g_log;

tsr_status* test_make_status(tsr_status_code code, const char* message) {
  if (code == TSR_OK) return nullptr;
  return new tsr_status{code, message ? message : ""};
}

void test_log(tsr_log_level, const char* plugin, const char* message) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back(std::string(plugin ? plugin : "?") + ": " + (message ? message : ""));
}

}  // namespace

const tsr_host_api& test_host() {
  static const tsr_host_api host = [] {
    tsr_host_api h{};
    h.struct_size = sizeof(tsr_host_api);
    h.abi_major = TSR_PLUGIN_ABI_MAJOR;
    h.abi_minor = TSR_PLUGIN_ABI_MINOR;
    h.host_version = "0.1.0-test";
    h.make_status = test_make_status;
    h.log = test_log;
    return h;
  }();
  return host;
}

std::vector<std::string> logged_messages() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_log;
}

test_plugin& test_plugin::get() {
  static test_plugin* plugin = [] {
    auto* p = new test_plugin;
    const std::string path = std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtessera-cpu.so";
    p->library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (p->library_ == nullptr) {
      std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), dlerror());
      std::abort();
    }
    auto query = reinterpret_cast<tsr_plugin_query_fn>(dlsym(p->library_, TSR_PLUGIN_ENTRY_SYMBOL));
    if (query == nullptr) {
      std::fprintf(stderr, "%s does not export %s\n", path.c_str(), TSR_PLUGIN_ENTRY_SYMBOL);
      std::abort();
    }
    p->api_ = query(&test_host());
    if (p->api_ == nullptr) {
      std::fprintf(stderr, "tsr_plugin_query returned NULL\n");
      std::abort();
    }
    status_ptr s(p->api_->init(&test_host(), &p->context_));
    if (s) {
      std::fprintf(stderr, "init failed: %s\n", s->message.c_str());
      std::abort();
    }
    // At least two threads, so the parallel paths run even on a 1-core machine.
    s.reset(p->api_->set_option(p->context_, "threads", "2"));
    if (s) {
      std::fprintf(stderr, "set_option(threads) failed: %s\n", s->message.c_str());
      std::abort();
    }
    return p;
  }();
  return *plugin;
}

isa_scope::isa_scope(const char* isa) {
  const test_plugin& p = test_plugin::get();
  const status_ptr s(p.api().set_option(p.context(), "isa", isa));
  if (s) {
    std::fprintf(stderr, "set_option(isa, %s) failed: %s\n", isa, s->message.c_str());
    std::abort();
  }
}

isa_scope::~isa_scope() {
  const test_plugin& p = test_plugin::get();
  status_ptr(p.api().set_option(p.context(), "isa", "auto"));
}

std::vector<const char*> all_isas() { return {"baseline", "avx2", "avx512"}; }

namespace {

// The "flags" line of /proc/cpuinfo's first processor, with a space at each
// end so that " name " finds whole flags; empty where it cannot be read.
std::string cpuinfo_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
  }
  return {};
}

// __builtin_cpu_supports for the flags the isa values need (the builtin takes
// only a literal).
bool cpu_supports(const std::string& flag) {
#if defined(__x86_64__)
  if (flag == "avx2") return __builtin_cpu_supports("avx2");
  if (flag == "fma") return __builtin_cpu_supports("fma");
  if (flag == "avx512f") return __builtin_cpu_supports("avx512f");
  if (flag == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (flag == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (flag == "avx512vl") return __builtin_cpu_supports("avx512vl");
#endif
  (void)flag;
  return false;
}

}  // namespace

std::string isa_unavailable_reason(const char* isa) {
  std::vector<const char*> needed;
  bool supported = true;
  const std::string name = isa;
  if (name == "avx2" || name == "avx512") needed = {"avx2", "fma"};
  if (name == "avx512") {
    for (const char* flag : {"avx512f", "avx512bw", "avx512dq", "avx512vl"}) needed.push_back(flag);
  }
  for (const char* flag : needed) supported = supported && cpu_supports(flag);
  if (supported) return {};
  const std::string flags = cpuinfo_flags();
  std::string missing;
  for (const char* flag : needed) {
    if (flags.find(std::string(" ") + flag + " ") == std::string::npos) {
      missing += missing.empty() ? "" : ", ";
      missing += flag;
    }
  }
  if (missing.empty()) {
    return "isa '" + name + "': /proc/cpuinfo lists its flags but the processor or OS does not " +
           "enable them (__builtin_cpu_supports says no)";
  }
  return "isa '" + name + "': this processor lacks " + missing + " (not in /proc/cpuinfo flags)";
}

std::vector<const char*> available_isas() {
  std::vector<const char*> out;
  for (const char* isa : all_isas()) {
    if (isa_unavailable_reason(isa).empty()) out.push_back(isa);
  }
  return out;
}

const tsr_kernel_entry& test_plugin::kernel(const std::string& op_name) const {
  const std::string prefix = op_name + "(";
  for (size_t i = 0; i < api_->kernel_count; ++i) {
    if (std::strncmp(api_->kernels[i].schema, prefix.c_str(), prefix.size()) == 0) {
      return api_->kernels[i];
    }
  }
  throw std::runtime_error("no kernel " + op_name);
}

status_ptr test_plugin::call(const std::string& op_name, const std::vector<tsr_value>& args,
                             std::vector<tsr_tensor_desc>& outs) const {
  const tsr_kernel_entry& entry = kernel(op_name);
  tsr_kernel_call call{};
  call.struct_size = sizeof call;
  call.op_name = op_name.c_str();
  call.device = 0;
  call.nargs = static_cast<int32_t>(args.size());
  call.nouts = static_cast<int32_t>(outs.size());
  call.args = args.data();
  call.outs = outs.data();
  call.stream = nullptr;
  call.kernel_data = entry.kernel_data;
  return status_ptr(entry.fn(context_, &call));
}

namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

}  // namespace

host_tensor::host_tensor(tsr_dtype dtype, std::vector<int64_t> sizes)
    : host_tensor(dtype, sizes, contiguous_strides(sizes)) {}

host_tensor::host_tensor(tsr_dtype dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides)
    : sizes_(std::move(sizes)) {
  int64_t lo = 0, hi = 0;
  bool empty = false;
  for (size_t d = 0; d < sizes_.size(); ++d) {
    if (sizes_[d] == 0) empty = true;
    const int64_t extent = (sizes_[d] - 1) * strides[d];
    if (extent < 0)
      lo += extent;
    else
      hi += extent;
  }
  if (empty) lo = hi = 0;
  const size_t elem = size_of(dtype);
  const size_t bytes = static_cast<size_t>(hi - lo + 1) * elem;
  const size_t rounded = (bytes + 63) / 64 * 64;
  storage_.reset(static_cast<unsigned char*>(std::aligned_alloc(64, rounded)), std::free);
  std::memset(storage_.get(), 0, rounded);
  desc_.dtype = dtype;
  desc_.ndim = static_cast<int32_t>(sizes_.size());
  for (size_t d = 0; d < sizes_.size(); ++d) {
    desc_.sizes[d] = sizes_[d];
    desc_.strides[d] = strides[d];
  }
  desc_.buffer = storage_.get();
  desc_.byte_offset = -lo * static_cast<int64_t>(elem);
  desc_.data = storage_.get() + desc_.byte_offset;
  desc_.device = tsr_device{TSR_DEVICE_CPU, 0};
}

host_tensor host_tensor::permuted(tsr_dtype dtype, std::vector<int64_t> sizes,
                                  const std::vector<int>& perm) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = perm.size(); i-- > 0;) {
    strides[perm[i]] = s;
    s *= std::max<int64_t>(sizes[perm[i]], 1);
  }
  return host_tensor(dtype, std::move(sizes), std::move(strides));
}

int64_t host_tensor::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  return n;
}

void* host_tensor::address(const std::vector<int64_t>& index) const {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * desc_.strides[d];
  return static_cast<char*>(desc_.data) + offset * static_cast<int64_t>(size_of(dtype()));
}

ref_value host_tensor::get(const std::vector<int64_t>& index) const {
  return decode(dtype(), address(index));
}

void host_tensor::set(const std::vector<int64_t>& index, const ref_value& value) {
  encode(dtype(), address(index), value);
}

tsr_value tensor_value(const host_tensor& t) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.desc = &t.desc();
  return v;
}

tsr_value scalar_value(const tsr_scalar& s) {
  tsr_value v{};
  v.tag = TSR_VALUE_SCALAR;
  v.u.scalar = s;
  return v;
}

tsr_value bool_value(bool b) {
  tsr_value v{};
  v.tag = TSR_VALUE_BOOL;
  v.u.b = b ? 1 : 0;
  return v;
}

tsr_value int_list_value(const std::vector<int64_t>& ints) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT_LIST;
  v.len = static_cast<int32_t>(ints.size());
  v.u.ints = ints.data();
  return v;
}

tsr_value none_value() { return tsr_value{}; }

tsr_scalar int_scalar(int64_t i) {
  tsr_scalar s{};
  s.kind = TSR_INT64;
  s.v.i = i;
  return s;
}

tsr_scalar float_scalar(double f) {
  tsr_scalar s{};
  s.kind = TSR_FLOAT64;
  s.v.f = f;
  return s;
}

tsr_scalar bool_scalar(bool b) {
  tsr_scalar s{};
  s.kind = TSR_BOOL;
  s.v.i = b ? 1 : 0;
  return s;
}

tsr_scalar complex_scalar(double re, double im) {
  tsr_scalar s{};
  s.kind = TSR_COMPLEX128;
  s.v.c.re = re;
  s.v.c.im = im;
  return s;
}

}  // namespace cpu_test
