// tessera.h: operator lookup and the boxed call; dtype helpers.
#include "dispatch/op_api.h"
#include "api/guard.h"
#include "autograd/record.h"
#include "dispatch/kernel_call.h"
#include "dispatch/normalise.h"
#include "dispatch/op_call.h"
#include "dispatch/run_op.h"
#include "registry/registry.h"
#include "runtime/custom_op.h"
#include "runtime/runtime.h"
#include "tessera/tessera.h"

using namespace tsr;

namespace {
const tsr_op* op_from_handle(const tsr_op* op, const char* arg) {
  if (op == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; look the op up with tsr_op_find", arg);
  if (op->magic != tsr_op::kAlive)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is not an op handle", arg);
  return op;
}
}  // namespace

extern "C" {

TSR_API tsr_status* tsr_op_find(tsr_runtime* runtime, const char* name, const tsr_op** out_op) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_op, "out_op");
    if (name == nullptr)
      fail(TSR_INVALID_ARGUMENT, "argument 'name' is NULL; pass e.g. \"add.Tensor\"");
    const OpDef* def = Registry::get().find(name);
    if (def == nullptr) {
      if (CustomOp* custom = rt->find_custom_op(name)) {
        *out_op = &custom->handle;
        return;
      }
      auto close = Registry::get().suggest(name, 3);
      fail(TSR_NOT_FOUND,
           "argument 'name': no operator named '{}'; did you mean {}? (`tessera info --ops` "
           "lists them all)",
           name, fmt::format("'{}', '{}' or '{}'", close[0], close[1], close[2]));
    }
    *out_op = rt->op_handle(static_cast<uint32_t>(def->id));
  });
}

TSR_API tsr_status* tsr_op_call(const tsr_op* op, const tsr_value* args, size_t nargs,
                                tsr_value* outs, size_t nouts) {
  return api_guard([&] {
    op = op_from_handle(op, "op");
    if (nouts > 0 && outs == nullptr)
      fail(TSR_INVALID_ARGUMENT, "argument 'outs' is NULL but nouts is {}", nouts);
    OpCall c;
    c.runtime = op->runtime;
    c.op = op->def;
    try {
      normalise_args(c, args, nargs);
      run_op(c);
    } catch (const Error& e) {
      // Every error names the op the application called: a failure inside its
      // decomposition ("op 'convolution': ...") or a shared helper ("shapes
      // ... are not broadcastable") gets the called op in front.
      const std::string& name = c.op->name;
      const std::string base = name.substr(0, name.find('.'));
      if (e.message().find("'" + name + "'") != std::string::npos ||
          e.message().find("'" + base + "'") != std::string::npos)
        throw;
      throw Error(e.code(), fmt::format("op '{}': {}", name, e.message()));
    }
    if (c.returns_list) {
      if (c.list_results.size() > nouts)
        fail(TSR_OUT_OF_RANGE,
             "op '{}' returned {} tensors (a Tensor[] result) but nouts is {}; pass outs with "
             "room for at least {}",
             c.op->name, c.list_results.size(), nouts, c.list_results.size());
      for (size_t i = 0; i < nouts; ++i) {
        tsr_value v{};
        if (i < c.list_results.size()) {
          v.tag = TSR_VALUE_TENSOR;
          v.u.tensor = to_handle(c.list_results[i].take());
        }
        outs[i] = v;
      }
      return;
    }
    for (size_t i = 0; i < nouts; ++i) {
      tsr_value v{};
      if (i < static_cast<size_t>(c.nresults) && c.results[i]) {
        v.tag = TSR_VALUE_TENSOR;
        v.u.tensor = to_handle(c.results[i].take());
      }
      outs[i] = v;
    }
  });
}

TSR_API tsr_status* tsr_runtime_set_op_observer(tsr_runtime* runtime, tsr_op_observer_fn fn,
                                                void* context) {
  return api_guard([&] { runtime_from_handle(runtime, "runtime")->set_observer(fn, context); });
}

TSR_API const char* tsr_op_name(const tsr_op* op) {
  if (op == nullptr || op->magic != tsr_op::kAlive) return "";
  return op->def->name.c_str();
}

TSR_API const char* tsr_op_schema(const tsr_op* op) {
  if (op == nullptr || op->magic != tsr_op::kAlive) return "";
  return op->def->canonical.c_str();
}

TSR_API tsr_status* tsr_op_count(const tsr_runtime* runtime, size_t* out_count) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_count, "out_count");
    *out_count = rt->op_count();
  });
}

TSR_API tsr_status* tsr_op_at(tsr_runtime* runtime, size_t index, const tsr_op** out_op) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_op, "out_op");
    if (index >= rt->op_count())
      fail(TSR_OUT_OF_RANGE, "argument 'index' = {} is out of range: {} ops", index,
           rt->op_count());
    *out_op = rt->op_handle(static_cast<uint32_t>(index));
  });
}

TSR_API tsr_status* tsr_op_kind_of(const tsr_op* op, tsr_op_kind* out_kind) {
  return api_guard([&] {
    op = op_from_handle(op, "op");
    require_out(out_kind, "out_kind");
    *out_kind = op->def->kind;
  });
}

TSR_API tsr_status* tsr_op_autograd_support(const tsr_op* op, tsr_op_autograd* out_support) {
  return api_guard([&] {
    op = op_from_handle(op, "op");
    require_out(out_support, "out_support");
    *out_support = autograd::autograd_support(*op->def);
  });
}

TSR_API tsr_status* tsr_op_has_kernel(const tsr_op* op, tsr_device device, tsr_dtype dtype,
                                      bool* out_kernel) {
  return api_guard([&] {
    op = op_from_handle(op, "op");
    require_out(out_kernel, "out_kernel");
    if (!dtype_valid(dtype))
      fail(TSR_INVALID_ARGUMENT, "argument 'dtype' = {} is not a valid tsr_dtype",
           static_cast<int>(dtype));
    DeviceRecord* d = op->runtime->device(device, "device");
    const OpDef& def = *op->def;
    *out_kernel = false;
    if (def.kernel_op == OpId::kNone || d->is_meta) return;
    if (def.custom != nullptr) {
      if (const auto* app = def.custom->app_kernels[d->device.type].load(std::memory_order_acquire))
        for (const AppKernel& k : *app)
          if (k.dtypes == 0 || (k.dtypes & (uint64_t{1} << dtype))) *out_kernel = true;
    }
    const KernelList* list =
        op->runtime->kernels(static_cast<uint32_t>(def.kernel_op), d->device.type);
    if (!list) return;
    for (const BoundKernel& k : list->kernels)
      if (k.accepts(&dtype, 1, def.code)) *out_kernel = true;
  });
}

TSR_API const char* tsr_dtype_name(tsr_dtype dtype) { return dtype_name(dtype); }

TSR_API size_t tsr_dtype_size(tsr_dtype dtype) { return dtype_size(dtype); }

TSR_API tsr_status* tsr_dtype_promote(tsr_dtype a, tsr_dtype b, tsr_dtype* out_dtype) {
  return api_guard([&] {
    require_out(out_dtype, "out_dtype");
    if (!dtype_valid(a))
      fail(TSR_INVALID_ARGUMENT, "argument 'a' = {} is not a valid tsr_dtype", static_cast<int>(a));
    if (!dtype_valid(b))
      fail(TSR_INVALID_ARGUMENT, "argument 'b' = {} is not a valid tsr_dtype", static_cast<int>(b));
    *out_dtype = promote_types(a, b);
  });
}

}  // extern "C"
