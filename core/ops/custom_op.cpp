// run_custom_op: how every custom op runs (runtime/custom_op.h): its shape
// rule on metadata, then the first kernel that takes the call - application
// kernels before plugin kernels.
#include <string>
#include <vector>

#include "dispatch/kernel_call.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/custom_op.h"
#include "runtime/stream.h"
#include "tensor/dtype.h"
#include "tensor/geometry.h"
#include "util/error.h"

namespace tsr {

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
