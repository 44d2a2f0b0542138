#include "runtime/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "random/generator.h"
#include "registry/custom_op.h"
#include "registry/registry.h"
#include "runtime/stream.h"
#include "util/error.h"

namespace tsr {

namespace {

int log_threshold() {
  static const int level = [] {
    const char* env = std::getenv("TESSERA_LOG_LEVEL");
    if (!env) return static_cast<int>(TSR_LOG_WARNING);
    if (!std::strcmp(env, "debug")) return static_cast<int>(TSR_LOG_DEBUG);
    if (!std::strcmp(env, "info")) return static_cast<int>(TSR_LOG_INFO);
    if (!std::strcmp(env, "error")) return static_cast<int>(TSR_LOG_ERROR);
    if (!std::strcmp(env, "off")) return 99;
    return static_cast<int>(TSR_LOG_WARNING);
  }();
  return level;
}

void host_log(tsr_log_level level, const char* plugin, const char* message) {
  if (static_cast<int>(level) < log_threshold()) return;
  static const char* kNames[] = {"debug", "info", "warning", "error"};
  int l = level >= TSR_LOG_DEBUG && level <= TSR_LOG_ERROR ? level : TSR_LOG_ERROR;
  std::fprintf(stderr, "[tessera %s] plugin %s: %s\n", kNames[l], plugin ? plugin : "?",
               message ? message : "");
}

tsr_status* host_make_status(tsr_status_code code, const char* message) {
  return tsr_status_create(code, message);
}

// Note [Handle validation]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Live user-visible runtime handles: a handle is decoded only if it is in
// this set, so a destroyed or foreign runtime handle is reported, not used.
std::mutex g_runtimes_mu;
std::set<const Runtime*>& live_runtimes() {
  static auto* s = new std::set<const Runtime*>();
  return *s;
}

}  // namespace

Runtime::Runtime() {
  host_api_.struct_size = sizeof(tsr_host_api);
  host_api_.abi_major = TSR_PLUGIN_ABI_MAJOR;
  host_api_.abi_minor = TSR_PLUGIN_ABI_MINOR;
  host_api_.host_version = tsr_version_string();
  host_api_.make_status = host_make_status;
  host_api_.log = host_log;

  device_type_ids_ = {{"cpu", TSR_DEVICE_CPU},
                      {"meta", TSR_DEVICE_META},
                      {"vulkan", TSR_DEVICE_VULKAN},
                      {"cuda", TSR_DEVICE_CUDA},
                      {"hip", TSR_DEVICE_HIP}};
  for (auto& row : device_table_)
    for (auto& cell : row) cell.store(nullptr, std::memory_order_relaxed);

  kernel_table_ = std::make_unique<std::atomic<const KernelList*>[]>(static_cast<size_t>(kOpCount) *
                                                                     TSR_DEVICE_TYPE_MAX);
  for (size_t i = 0; i < static_cast<size_t>(kOpCount) * TSR_DEVICE_TYPE_MAX; ++i)
    kernel_table_[i].store(nullptr, std::memory_order_relaxed);

  const Registry& reg = Registry::get();
  op_handles_.resize(reg.size());
  for (uint32_t i = 0; i < reg.size(); ++i)
    op_handles_[i] = tsr_op{tsr_op::kAlive, this, i, &reg.op(static_cast<OpId>(i))};
  custom_ops_ = std::make_unique<std::atomic<CustomOp*>[]>(kMaxCustomOps);
  for (uint32_t i = 0; i < kMaxCustomOps; ++i) custom_ops_[i].store(nullptr);

  // The built-in meta device: shapes without storage.
  auto meta = std::make_unique<DeviceRecord>();
  meta->runtime = this;
  meta->device = tsr_device{TSR_DEVICE_META, 0};
  meta->is_meta = true;
  meta->label = "meta:0";
  meta->props.struct_size = sizeof(tsr_device_properties);
  meta->props.device = meta->device;
  std::snprintf(meta->props.name, sizeof meta->props.name, "meta (shapes only, no storage)");
  std::snprintf(meta->props.type_name, sizeof meta->props.type_name, "meta");
  std::snprintf(meta->props.plugin, sizeof meta->props.plugin, "core");
  meta->props.dtypes = TSR_DTYPE_MASK_ALL;
  meta->props.alignment = 64;
  meta->default_stream = new Stream();
  meta->default_stream->device = meta.get();
  meta->default_stream->is_default = true;
  meta_ = meta.get();
  device_table_[TSR_DEVICE_META][0].store(meta_, std::memory_order_release);
  device_records_.push_back(std::move(meta));

  std::lock_guard<std::mutex> lock(g_runtimes_mu);
  live_runtimes().insert(this);
}

Runtime::~Runtime() {
  destroy_default_generators(this);  // before their devices go
  // Every storage/stream/event is gone (refs reached zero): shut plugins down.
  for (auto& p : plugins_) {
    if (!p->loaded) continue;
    for (DeviceRecord* d : p->devices) {
      d->allocator->empty_cache();
      if (d->default_stream) {
        delete d->default_stream;
        d->default_stream = nullptr;
      }
    }
    if (p->api.shutdown) p->api.shutdown(p->context);
    p->loaded = false;
  }
  if (meta_) delete meta_->default_stream;
  for (size_t i = 0; i < static_cast<size_t>(kOpCount) * TSR_DEVICE_TYPE_MAX; ++i)
    delete kernel_table_[i].exchange(nullptr, std::memory_order_relaxed);
  for (auto& d : device_records_) d->allocator.reset();
  plugins_.clear();  // unloads the libraries last
}

void Runtime::release() noexcept {
  if (refs.fetch_sub(1, std::memory_order_seq_cst) == 1) maybe_delete();
}

void Runtime::maybe_delete() noexcept {
  // No handle is left, so no plugin can be loaded any more: device_records_ is
  // stable. seq_cst pairs with Storage::release's decrement-then-check.
  for (const auto& d : device_records_)
    if (d->live_storages.load(std::memory_order_seq_cst) != 0) return;
  if (refs.load(std::memory_order_seq_cst) != 0) return;
  if (deleting_.exchange(true, std::memory_order_acq_rel)) return;
  delete this;
}

void runtime_forget_handle(const Runtime* rt) {
  std::lock_guard<std::mutex> lock(g_runtimes_mu);
  live_runtimes().erase(rt);
}

Runtime* runtime_from_handle(const tsr_runtime* handle, const char* arg) {
  if (handle == nullptr)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is NULL; create a runtime with tsr_runtime_create or use "
         "tsr_runtime_default",
         arg);
  auto* rt = reinterpret_cast<const Runtime*>(handle);
  {
    std::lock_guard<std::mutex> lock(g_runtimes_mu);
    if (!live_runtimes().count(rt))
      fail(TSR_INVALID_ARGUMENT,
           "argument '{}' ({}) is not a live runtime (destroyed, or not a runtime handle)", arg,
           static_cast<const void*>(handle));
  }
  return const_cast<Runtime*>(rt);
}

DeviceRecord* Runtime::device(tsr_device d, const char* arg) const {
  DeviceRecord* rec = find_device(d);
  if (rec) return rec;
  if (d.type < 0 || d.type >= TSR_DEVICE_TYPE_MAX || d.index < 0)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is an invalid device (type {}, index {})", arg,
         d.type, d.index);
  fail(TSR_NOT_FOUND,
       "argument '{}': device {} does not exist in this runtime; list devices with "
       "`tessera devices`",
       arg, format_device(d));
}

std::vector<DeviceRecord*> Runtime::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<DeviceRecord*> out = device_order_;
  out.push_back(meta_);
  return out;
}

std::string Runtime::device_type_name(int32_t type) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, id] : device_type_ids_)
    if (id == type) return name;
  return "type" + std::to_string(type);
}

int32_t Runtime::device_type_id(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = device_type_ids_.find(name);
  return it == device_type_ids_.end() ? -1 : it->second;
}

std::string Runtime::format_device(tsr_device d) const {
  return device_type_name(d.type) + ":" + std::to_string(d.index);
}

int32_t Runtime::assign_device_type(const std::string& name) {
  auto it = device_type_ids_.find(name);
  if (it != device_type_ids_.end()) return it->second;
  std::set<int32_t> used;
  for (auto& [n, id] : device_type_ids_) used.insert(id);
  for (int32_t id = TSR_DEVICE_TYPE_FIRST_DYNAMIC; id < TSR_DEVICE_TYPE_MAX; ++id)
    if (!used.count(id)) {
      device_type_ids_[name] = id;
      return id;
    }
  fail(TSR_RESOURCE_EXHAUSTED, "no device type id left for device type '{}' (at most {} types)",
       name, TSR_DEVICE_TYPE_MAX - TSR_DEVICE_TYPE_FIRST_DYNAMIC);
}

std::vector<PluginRecord*> Runtime::plugins() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PluginRecord*> out;
  for (auto& p : plugins_)
    if (p->loaded) out.push_back(p.get());
  return out;
}

bool Runtime::is_loaded_plugin(const PluginRecord* plugin) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : plugins_)
    if (p.get() == plugin) return p->loaded;
  return false;
}

void Runtime::report(tsr_load_event event, tsr_status_code code, const std::string& path,
                     const std::string& plugin, const std::string& detail) {
  std::lock_guard<std::mutex> lock(mu_);
  report_.push_back(ReportEntry{event, code, path, plugin, detail});
}

size_t Runtime::report_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_.size();
}

const ReportEntry* Runtime::report_at(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return index < report_.size() ? &report_[index] : nullptr;
}

void Runtime::set_observer(tsr_op_observer_fn fn, void* context) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fn == nullptr) {
    observer_.store(nullptr, std::memory_order_release);
    return;
  }
  observers_.push_back(std::make_unique<Observer>(Observer{fn, context}));
  observer_.store(observers_.back().get(), std::memory_order_release);
}

const KernelList* Runtime::custom_kernels(uint32_t op_index, int32_t type) const noexcept {
  uint32_t i = op_index - kOpCount;
  CustomOp* op = i < kMaxCustomOps ? custom_ops_[i].load(std::memory_order_acquire) : nullptr;
  return op ? op->kernels[type].load(std::memory_order_acquire) : nullptr;
}

const tsr_op* Runtime::custom_handle(uint32_t index) const noexcept {
  uint32_t i = index - kOpCount;
  CustomOp* op = i < kMaxCustomOps ? custom_ops_[i].load(std::memory_order_acquire) : nullptr;
  return op ? &op->handle : nullptr;
}

CustomOp* Runtime::find_custom_op(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = custom_by_name_.find(name);
  return it == custom_by_name_.end() ? nullptr : it->second;
}

CustomOp* Runtime::define_custom_op(const std::string& schema_text, tsr_shape_rule_fn shape,
                                    void* shape_context, const std::string& derivative,
                                    PluginRecord* by) {
  std::lock_guard<std::mutex> lock(mu_);
  return define_custom_op_locked(schema_text, shape, shape_context, derivative, by);
}

CustomOp* Runtime::define_custom_op_locked(const std::string& schema_text, tsr_shape_rule_fn shape,
                                           void* shape_context, const std::string& derivative,
                                           PluginRecord* by) {
  Schema schema;
  try {
    schema = parse_schema(schema_text);
  } catch (const Error& e) {
    fail(TSR_INVALID_ARGUMENT, "custom op schema '{}': {}", schema_text, e.message());
  }
  std::string problem = custom_schema_problem(schema);
  if (!problem.empty())
    fail(TSR_INVALID_ARGUMENT, "custom op schema '{}': {}", schema_text, problem);
  const std::string name = schema.full_name();
  if (Registry::get().find(name) != nullptr)
    fail(TSR_ALREADY_EXISTS, "custom op '{}': the operator registry already has an op of that name",
         name);
  if (auto it = custom_by_name_.find(name); it != custom_by_name_.end())
    fail(TSR_ALREADY_EXISTS, "custom op '{}' is already defined (by {}) with schema '{}'", name,
         it->second->defined_by_name, it->second->def.canonical);
  if (shape == nullptr)
    fail(TSR_INVALID_ARGUMENT, "custom op '{}': the shape rule is NULL; every custom op needs one",
         name);
  uint32_t index = custom_count_.load(std::memory_order_relaxed);
  if (index >= kMaxCustomOps)
    fail(TSR_RESOURCE_EXHAUSTED,
         "custom op '{}': this runtime already has {} custom ops (the most)", name, kMaxCustomOps);
  auto op = make_custom_op(this, std::move(schema), static_cast<OpId>(kOpCount + index), shape,
                           shape_context, derivative);
  op->defined_by = by;
  op->defined_by_name = by ? fmt::format("plugin '{}'", by->name) : std::string("the application");
  CustomOp* raw = op.get();
  custom_owned_.push_back(std::move(op));
  custom_by_name_[name] = raw;
  custom_ops_[index].store(raw, std::memory_order_release);
  custom_count_.store(index + 1, std::memory_order_release);
  return raw;
}

void Runtime::set_kernels(uint32_t op_index, int32_t type, KernelList* list) {
  auto& cell = kernel_table_[static_cast<size_t>(op_index) * TSR_DEVICE_TYPE_MAX + type];
  const KernelList* old = cell.exchange(list, std::memory_order_acq_rel);
  // Readers may still hold `old`: retire it until the runtime dies.
  if (old) retired_kernel_lists_.emplace_back(const_cast<KernelList*>(old));
}

}  // namespace tsr
