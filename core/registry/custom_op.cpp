#include "registry/custom_op.h"

#include <algorithm>
#include <cctype>

#include "dispatch/kernel_call.h"
#include "ops/op_util.h"
#include "runtime/stream.h"
#include "tensor/dtype.h"
#include "tensor/geometry.h"
#include "util/error.h"

namespace tsr {

CustomOp::~CustomOp() {
  for (int32_t t = 0; t < TSR_DEVICE_TYPE_MAX; ++t) {
    delete app_kernels[t].load(std::memory_order_relaxed);
    delete kernels[t].load(std::memory_order_relaxed);
  }
  delete backward.load(std::memory_order_relaxed);
}

void CustomOp::add_app_kernel(int32_t device_type, AppKernel k) {
  std::lock_guard<std::mutex> lock(mu);
  const std::vector<AppKernel>* old = app_kernels[device_type].load(std::memory_order_acquire);
  auto next = std::make_unique<std::vector<AppKernel>>();
  if (old) *next = *old;
  next->push_back(k);
  app_kernels[device_type].store(next.release(), std::memory_order_release);
  if (old) retired_app.emplace_back(old);
}

void CustomOp::set_kernels(int32_t device_type, std::unique_ptr<KernelList> list) {
  std::lock_guard<std::mutex> lock(mu);
  const KernelList* old = kernels[device_type].exchange(list.release(), std::memory_order_acq_rel);
  if (old) retired_lists.emplace_back(old);
}

void CustomOp::set_backward(tsr_backward_fn fn, void* context) {
  std::lock_guard<std::mutex> lock(mu);
  const CustomBackward* next = fn ? new CustomBackward{fn, context} : nullptr;
  const CustomBackward* old = backward.exchange(next, std::memory_order_acq_rel);
  if (old) retired_backward.emplace_back(old);
}

std::string custom_schema_problem(const Schema& s) {
  size_t sep = s.name.find("::");
  if (sep == std::string::npos || sep == 0)
    return fmt::format("the name '{}' has no namespace; custom ops live in their own ('myns::{}')",
                       s.name, s.name);
  if (s.name.compare(0, sep, "aten") == 0)
    return "the aten namespace belongs to the operator registry; use your own ('myns::...')";
  if (s.args.size() > static_cast<size_t>(OpCall::kMaxArgs))
    return fmt::format("{} arguments; a custom op takes at most {}", s.args.size(),
                       OpCall::kMaxArgs);
  bool has_tensor = false;
  for (const SchemaArg& a : s.args) {
    if (a.alias_set != 0 || a.is_write)
      return fmt::format(
          "argument '{}' has an alias annotation ({}); custom ops may not write to or alias "
          "their inputs",
          a.name, a.type_text);
    if (a.kind == ArgKind::kTensorList && a.elem_optional)
      return fmt::format("argument '{}': Tensor?[] is not supported in custom ops", a.name);
    if (a.kind == ArgKind::kTensor || a.kind == ArgKind::kTensorList) has_tensor = true;
  }
  if (!has_tensor)
    return "no Tensor argument; a custom op's results live on its tensor arguments' device";
  if (s.returns.empty() || s.returns.size() > static_cast<size_t>(OpCall::kMaxResults))
    return fmt::format("{} results; a custom op returns 1 to {} Tensors", s.returns.size(),
                       OpCall::kMaxResults);
  for (const SchemaReturn& r : s.returns) {
    if (r.kind != ArgKind::kTensor || r.optional || r.alias_set != 0)
      return fmt::format("result type '{}'; custom op results are plain Tensors", r.type_text);
  }
  return "";
}

std::unique_ptr<CustomOp> make_custom_op(Runtime* runtime, Schema schema, OpId id,
                                         tsr_shape_rule_fn shape, void* shape_context,
                                         std::string derivative) {
  auto op = std::make_unique<CustomOp>();
  OpDef& d = op->def;
  d.id = id;
  d.schema = std::move(schema);
  bind_schema_defaults(d.schema);  // op never moves from here on
  d.name = d.schema.full_name();
  d.canonical = d.schema.canonical();
  d.kind = TSR_OP_PRIMITIVE;
  d.fn = run_custom_op;
  d.kernel_op = id;
  d.code = -1;
  d.custom = op.get();
  op->handle = tsr_op{tsr_op::kAlive, runtime, static_cast<uint32_t>(id), &op->def};
  // "asquare::affine" -> "asquare::AffineBackward0", as PyTorch names nodes.
  size_t sep = d.schema.name.rfind("::");
  std::string node = d.schema.name.substr(0, sep + 2);
  bool upper = true;
  for (char ch : d.schema.name.substr(sep + 2)) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    node += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  op->node_name = node + "Backward0";
  op->shape = shape;
  op->shape_context = shape_context;
  op->derivative = std::move(derivative);
  return op;
}

namespace {

// Descriptor arguments of a call: tensors and tensor lists as descriptors,
// everything else as given. With `metadata_only`, data and buffer are NULL.
struct DescArgs {
  tsr_value args[OpCall::kMaxArgs];
  std::vector<tsr_tensor_desc> descs;  // reserved up front: addresses stay put
};

void build_desc_args(const OpCall& c, bool metadata_only, DescArgs& out) {
  size_t count = 0;
  for (int32_t i = 0; i < c.nargs; ++i) {
    if (c.args[i].tag == TSR_VALUE_TENSOR) ++count;
    if (c.args[i].tag == TSR_VALUE_TENSOR_LIST) count += static_cast<size_t>(c.args[i].len);
  }
  out.descs.clear();
  out.descs.reserve(count);
  auto push = [&](TensorImpl* t) {
    tsr_tensor_desc d = t->desc();
    if (metadata_only) {
      d.data = nullptr;
      d.buffer = nullptr;
    }
    out.descs.push_back(d);
    return &out.descs.back();
  };
  for (int32_t i = 0; i < c.nargs; ++i) {
    tsr_value v = c.args[i];
    if (v.tag == TSR_VALUE_TENSOR) {
      v.u.desc = push(c.tensor(i));
    } else if (v.tag == TSR_VALUE_TENSOR_LIST) {
      const tsr_tensor_desc* first = nullptr;
      for (int32_t j = 0; j < v.len; ++j) {
        const tsr_tensor_desc* d = push(c.list_tensor(i, j));
        if (j == 0) first = d;
      }
      v.u.descs = first;
    }
    out.args[i] = v;
  }
}

// The device of the call's tensor arguments; all must share it.
DeviceRecord* device_of_call(const OpCall& c, tsr_dtype& first_dtype) {
  TensorImpl* first = nullptr;
  const char* first_name = nullptr;
  auto visit = [&](TensorImpl* t, const char* name) {
    if (first == nullptr) {
      first = t;
      first_name = name;
      return;
    }
    check_same_device(*c.op, *first, *t, first_name, name);
  };
  for (int32_t i = 0; i < c.nargs; ++i) {
    if (c.args[i].tag == TSR_VALUE_TENSOR) visit(c.tensor(i), c.arg_name(i));
    if (c.args[i].tag == TSR_VALUE_TENSOR_LIST)
      for (int32_t j = 0; j < c.list_size(i); ++j) visit(c.list_tensor(i, j), c.arg_name(i));
  }
  if (first == nullptr)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': every tensor argument is None or empty, so the op has no device; pass at "
         "least one tensor",
         c.op->name);
  first_dtype = first->dtype;
  return first->device();
}

}  // namespace

void run_custom_op(OpCall& c) {
  CustomOp& op = *c.op->custom;
  if (op.orphaned.load(std::memory_order_acquire))
    fail(TSR_FAILED_PRECONDITION,
         "op '{}' was defined by {}, which has been unloaded; reload the plugin in a new runtime "
         "to use it",
         c.op->name, op.defined_by_name);
  tsr_dtype first_dtype = TSR_FLOAT32;
  DeviceRecord* dev = device_of_call(c, first_dtype);

  // Shape rule on metadata only.
  const int32_t nouts = static_cast<int32_t>(c.op->schema.returns.size());
  DescArgs meta;
  build_desc_args(c, true, meta);
  int32_t dtypes[OpCall::kMaxResults] = {};
  int32_t ndims[OpCall::kMaxResults] = {};
  int64_t sizes[OpCall::kMaxResults * TSR_MAX_DIMS] = {};
  for (int32_t k = 0; k < nouts; ++k) dtypes[k] = -1;
  tsr_status* st = nullptr;
  try {
    st = op.shape(op.shape_context, meta.args, c.nargs, nouts, dtypes, ndims, sizes);
  } catch (...) {
    st = tsr_status_create(TSR_INTERNAL,
                           "the shape rule threw a C++ exception (it must return a "
                           "status)");
  }
  if (st) {
    tsr_status_code code = tsr_status_code_of(st);
    std::string msg = fmt::format("op '{}': {}", c.op->name, tsr_status_message(st));
    tsr_status_free(st);
    throw Error(code, msg);
  }
  TensorRef results[OpCall::kMaxResults];
  tsr_tensor_desc outs[OpCall::kMaxResults];
  for (int32_t k = 0; k < nouts; ++k) {
    if (!dtype_valid(dtypes[k]))
      fail(TSR_INTERNAL,
           "op '{}': its shape rule gave result {} the dtype {}, which is not a "
           "tsr_dtype (the rule must set every result's dtype)",
           c.op->name, k, dtypes[k]);
    if (ndims[k] < 0 || ndims[k] > TSR_MAX_DIMS)
      fail(TSR_INTERNAL, "op '{}': its shape rule gave result {} ndim {} (must be 0..{})",
           c.op->name, k, ndims[k], TSR_MAX_DIMS);
    const int64_t* sz = sizes + static_cast<size_t>(k) * TSR_MAX_DIMS;
    check_sizes(ndims[k], sz, dtype_size(static_cast<tsr_dtype>(dtypes[k])), "shape rule result");
    results[k] = new_tensor(c.runtime, dev, static_cast<tsr_dtype>(dtypes[k]), ndims[k], sz);
    outs[k] = results[k]->desc();
  }

  if (!dev->is_meta) {
    DescArgs real;
    build_desc_args(c, false, real);
    bool done = false;
    if (const std::vector<AppKernel>* app =
            op.app_kernels[dev->device.type].load(std::memory_order_acquire)) {
      for (const AppKernel& k : *app) {
        if (k.dtypes != 0 && !(k.dtypes & (uint64_t{1} << first_dtype))) continue;
        // The kernel reads and writes on the host now: let the stream reach here.
        current_stream(dev)->synchronize();
        try {
          st = k.fn(k.context, real.args, c.nargs, outs, nouts);
        } catch (...) {
          st = tsr_status_create(TSR_INTERNAL,
                                 "the kernel threw a C++ exception (kernels must "
                                 "return statuses)");
        }
        if (st) {
          tsr_status_code code = tsr_status_code_of(st);
          std::string msg = fmt::format("op '{}' on {} (application kernel): {}", c.op->name,
                                        dev->label, tsr_status_message(st));
          tsr_status_free(st);
          throw Error(code, msg);
        }
        done = true;
        break;
      }
    }
    if (!done) {
      tsr_dtype tensor_dtypes[TSR_KERNEL_MAX_TENSOR_ARGS];
      int32_t n = 0;
      for (int32_t i = 0; i < c.nargs && n < TSR_KERNEL_MAX_TENSOR_ARGS; ++i) {
        const SchemaArg& a = c.op->schema.args[static_cast<size_t>(i)];
        if (a.kind != ArgKind::kTensor) continue;
        tensor_dtypes[n++] = c.args[i].tag == TSR_VALUE_TENSOR ? c.tensor(i)->dtype : first_dtype;
      }
      const BoundKernel& k = find_kernel(*c.op, c.op->id, dev, tensor_dtypes, n);
      invoke_kernel(*c.op, k, dev, real.args, c.nargs, outs, nouts);
    }
  }
  for (int32_t k = 0; k < nouts; ++k) c.set_result(std::move(results[k]));
}

}  // namespace tsr
