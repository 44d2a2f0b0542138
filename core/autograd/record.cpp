// record.cpp - the dispatcher's autograd step and the recorded op's node.
#include "autograd/record.h"

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>

#include "autograd/grad_ops.h"
#include "autograd/meta.h"
#include "dispatch/op_api.h"
#include "dispatch/run_op.h"
#include "runtime/custom_op.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {

// "mul.Tensor" -> "MulBackward0", "_log_softmax" -> "LogSoftmaxBackward0";
// built once for every op, so nodes keep a pointer.
const char* node_name_of(const OpDef& op) {
  if (op.custom != nullptr) return op.custom->node_name.c_str();
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const OpDef& def : Registry::get().ops()) {
      std::string name;
      bool upper = true;
      for (char ch : def.schema.name) {
        if (ch == '_') {
          upper = true;
          continue;
        }
        name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
        upper = false;
      }
      out.push_back(name + "Backward0");
    }
    return out;
  }();
  return names[static_cast<size_t>(op.id)].c_str();
}

bool arg_requires_grad(const OpCall& c, int i) {
  const SchemaArg& a = c.op->schema.args[static_cast<size_t>(i)];
  if (a.kind == ArgKind::kTensor) {
    const TensorImpl* t = c.opt_tensor(i);
    return t != nullptr && requires_grad(*t);
  }
  if (a.kind == ArgKind::kTensorList) {
    for (int32_t j = 0; j < c.list_size(i); ++j) {
      const TensorImpl* t = c.list_tensor(i, j);
      if (t != nullptr && requires_grad(*t)) return true;
    }
  }
  return false;
}

}  // namespace

bool needs_recording(const OpCall& c) noexcept {
  if (!grad_enabled()) return false;
  for (int i = 0; i < c.nargs; ++i) {
    if (c.args[i].tag != TSR_VALUE_TENSOR && c.args[i].tag != TSR_VALUE_TENSOR_LIST) continue;
    if (arg_requires_grad(c, i)) return true;
  }
  return false;
}

OpNode::OpNode(const OpCall& c, const Formula& formula)
    : Node(node_name_of(*c.op)), op_(c.op), formula_(&formula), runtime_(c.runtime) {
  const size_t n = c.op->schema.args.size();
  slots_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const tsr_value& v = c.args[i];
    Slot& slot = slots_[i];
    slot.value = v;
    switch (v.tag) {
      case TSR_VALUE_TENSOR: {
        slot.value = tsr_value{};
        slot.value.tag = TSR_VALUE_TENSOR;
        TensorImpl* t = c.tensor(static_cast<int>(i));
        slot.meta = TensorMeta::of(*t);
        if (formula.inputs & arg_bit(static_cast<int>(i))) slot.saved = SavedTensor(t, false, 0);
        if (requires_grad(*t)) {
          slot.needs = true;
          slot.edge = static_cast<int32_t>(next.size());
          next.push_back(gradient_edge(*t));
        }
        break;
      }
      case TSR_VALUE_INT_LIST:
        extra().int_lists.emplace_back(v.u.ints, v.u.ints + v.len);
        slot.value.u.ints = extra_->int_lists.back().data();
        break;
      case TSR_VALUE_FLOAT_LIST:
        extra().float_lists.emplace_back(v.u.floats, v.u.floats + v.len);
        slot.value.u.floats = extra_->float_lists.back().data();
        break;
      case TSR_VALUE_BOOL_LIST:
        extra().bool_lists.emplace_back(v.u.bools, v.u.bools + v.len);
        slot.value.u.bools = extra_->bool_lists.back().data();
        break;
      case TSR_VALUE_STRING:
        extra().strings.emplace_back(v.u.str != nullptr ? v.u.str : "");
        slot.value.u.str = extra_->strings.back().c_str();
        break;
      case TSR_VALUE_TENSOR_LIST: {
        slot.value = tsr_value{};
        slot.value.tag = TSR_VALUE_TENSOR_LIST;
        slot.value.len = v.len;
        ListArg& l = extra().lists.emplace_back();
        l.arg = static_cast<int32_t>(i);
        for (int32_t j = 0; j < v.len; ++j) {
          TensorImpl* t = c.list_tensor(static_cast<int>(i), j);
          l.metas.push_back(t != nullptr ? TensorMeta::of(*t) : TensorMeta{});
          l.saved.push_back(t != nullptr && (formula.inputs & arg_bit(static_cast<int>(i)))
                                ? SavedTensor(t, false, 0)
                                : SavedTensor());
          if (t != nullptr && requires_grad(*t)) {
            slot.needs = true;
            l.edges.push_back(static_cast<int32_t>(next.size()));
            next.push_back(gradient_edge(*t));
          } else {
            l.edges.push_back(-1);
          }
        }
        break;
      }
      default:
        break;
    }
  }
}

OpNode::Extra& OpNode::extra() {
  if (!extra_) {
    extra_ = std::make_unique<Extra>();
    // Pointers into these vectors' elements must stay valid: one per argument
    // at most.
    const size_t n = slots_.size();
    extra_->int_lists.reserve(n);
    extra_->float_lists.reserve(n);
    extra_->bool_lists.reserve(n);
    extra_->strings.reserve(n);
  }
  return *extra_;
}

const OpNode::ListArg& OpNode::list_arg(int i) const {
  for (const ListArg& l : extra_->lists) {
    if (l.arg == i) return l;
  }
  fail(TSR_INTERNAL, "autograd: {} has no list argument {}", name(), i);
}

std::vector<TensorRef> OpNode::apply(std::vector<TensorRef>&& grads) {
  std::vector<TensorRef> out(next.size());
  BackwardContext ctx(*this, grads, out);
  formula_->fn(ctx);
  return out;
}

void OpNode::release_saved() {
  for (Slot& slot : slots_) slot.saved.release();
  if (extra_) {
    for (ListArg& l : extra_->lists) {
      for (SavedTensor& s : l.saved) s.release();
    }
  }
  for (SavedTensor& s : saved_outputs_) s.release();
}

Runtime* BackwardContext::runtime() const { return node_.runtime_; }
const OpDef& BackwardContext::op() const { return *node_.op_; }

TensorRef BackwardContext::input(int i) const {
  const SchemaArg& a = node_.op_->schema.args[static_cast<size_t>(i)];
  TensorRef t = node_.slots_[static_cast<size_t>(i)].saved.unpack(node_, a.name.c_str());
  if (!t)
    fail(TSR_INTERNAL, "autograd: {} reads argument '{}' but its formula does not save it",
         node_.name(), a.name);
  return t;
}

TensorRef BackwardContext::result(int k) const {
  if (static_cast<size_t>(k) >= node_.saved_outputs_.size())
    fail(TSR_INTERNAL, "autograd: {} reads output {} but its formula does not save it",
         node_.name(), k);
  TensorRef t = node_.saved_outputs_[static_cast<size_t>(k)].unpack(node_, "result");
  if (!t)
    fail(TSR_INTERNAL, "autograd: {} reads output {} but its formula does not save it",
         node_.name(), k);
  return t;
}

const TensorMeta& BackwardContext::input_meta(int i) const {
  return node_.slots_[static_cast<size_t>(i)].meta;
}

const tsr_value& BackwardContext::arg(int i) const {
  return node_.slots_[static_cast<size_t>(i)].value;
}

bool BackwardContext::needs(int i) const { return node_.slots_[static_cast<size_t>(i)].needs; }

int32_t BackwardContext::list_size(int i) const { return arg(i).len; }

const TensorMeta& BackwardContext::list_meta(int i, int32_t j) const {
  return node_.list_arg(i).metas[static_cast<size_t>(j)];
}

TensorRef BackwardContext::list_input(int i, int32_t j) const {
  const SchemaArg& a = node_.op_->schema.args[static_cast<size_t>(i)];
  TensorRef t = node_.list_arg(i).saved[static_cast<size_t>(j)].unpack(node_, a.name.c_str());
  if (!t)
    fail(TSR_INTERNAL, "autograd: {} reads entry {} of '{}' but its formula does not save it",
         node_.name(), j, a.name);
  return t;
}

bool BackwardContext::list_needs(int i, int32_t j) const {
  return node_.list_arg(i).edges[static_cast<size_t>(j)] >= 0;
}

void BackwardContext::set_list(int i, int32_t j, TensorRef g) {
  const int32_t e = node_.list_arg(i).edges[static_cast<size_t>(j)];
  if (e < 0 || !g) return;
  out_[static_cast<size_t>(e)] = reduce_to(g.get(), list_meta(i, j), node_.name());
}

int32_t BackwardContext::num_outputs() const { return static_cast<int32_t>(grads_.size()); }

boost::container::small_vector<TensorImpl*, 4> results_of(const OpCall& c) {
  boost::container::small_vector<TensorImpl*, 4> out;
  if (c.returns_list) {
    for (const TensorRef& r : c.list_results) out.push_back(r.get());
  } else {
    for (int32_t k = 0; k < c.nresults; ++k) out.push_back(c.results[k].get());
  }
  return out;
}

void BackwardContext::set(int i, TensorRef g) {
  const int32_t e = node_.slots_[static_cast<size_t>(i)].edge;
  if (e < 0 || !g) return;
  out_[static_cast<size_t>(e)] =
      reduce_to(g.get(), node_.slots_[static_cast<size_t>(i)].meta, node_.name());
}

namespace {

// A view's place in its base's storage, in elements of the base.
struct ViewGeometry {
  int32_t ndim = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t strides[TSR_MAX_DIMS] = {};
  int64_t offset = 0;  // relative to the base's first element
};

// g's region of the view (as_strided over a contiguous copy of g).
TensorRef region_of(TensorImpl* g, const ViewGeometry& v) {
  return op::call(g->runtime, OpId::as_strided, g, op::ints(v.sizes, v.ndim),
                  op::ints(v.strides, v.ndim), v.offset);
}

// The node a base gets when an op writes in place into one of its views
// (PyTorch's CopySlices): the base's gradient outside the view passes
// through, inside it goes through the op's formula, whose gradient for the
// view's old value lands back in the region.
class CopySlices final : public Node {
 public:
  CopySlices(std::shared_ptr<OpNode> inner, int32_t self_edge, const ViewGeometry& view,
             const TensorMeta& base, Edge base_edge)
      : Node(inner->name()), inner_(std::move(inner)), self_edge_(self_edge), view_(view) {
    outputs.push_back(base);
    next.push_back(std::move(base_edge));
    for (size_t i = 0; i < inner_->next.size(); ++i)
      next.push_back(static_cast<int32_t>(i) == self_edge_ ? Edge{} : inner_->next[i]);
  }

  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override {
    TensorImpl* g = grads[0].get();
    TensorRef result = clone_detached(g);
    if (grad_enabled()) result = op::call(g->runtime, OpId::clone, g);
    TensorRef region = region_of(result.get(), view_);
    std::vector<TensorRef> inner_grads;
    inner_grads.push_back(op::call(g->runtime, OpId::clone, region));
    std::vector<TensorRef> inner_out = inner_->apply(std::move(inner_grads));
    TensorRef self_grad =
        self_edge_ >= 0 ? std::move(inner_out[static_cast<size_t>(self_edge_)]) : TensorRef();
    if (self_grad) {
      op::call(g->runtime, OpId::copy_, region, self_grad);
    } else {
      op::call(g->runtime, OpId::fill__Scalar, region, 0.0);
    }
    std::vector<TensorRef> out;
    out.push_back(std::move(result));
    for (size_t i = 0; i < inner_out.size(); ++i)
      out.push_back(static_cast<int32_t>(i) == self_edge_ ? TensorRef() : std::move(inner_out[i]));
    return out;
  }
  void release_saved() override { inner_->release_saved(); }

 private:
  std::shared_ptr<OpNode> inner_;
  int32_t self_edge_;  // index of the view's own edge in inner_->next, or -1
  ViewGeometry view_;
};

// A view whose base was rebased: its gradient is the base's, restricted to
// the region (zeros elsewhere go back to the base).
class ViewOfBase final : public Node {
 public:
  ViewOfBase(const ViewGeometry& view, const TensorMeta& base, Edge base_edge,
             const TensorMeta& self)
      : Node("AsStridedBackward0"), view_(view), base_(base) {
    outputs.push_back(self);
    next.push_back(std::move(base_edge));
  }
  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override {
    TensorImpl* g = grads[0].get();
    TensorRef z = zeros_of(g->runtime, base_);
    TensorRef region = region_of(z.get(), view_);
    op::call(g->runtime, OpId::copy_, region, g);
    std::vector<TensorRef> out;
    out.push_back(std::move(z));
    return out;
  }

 private:
  ViewGeometry view_;
  TensorMeta base_;
};

// Gives c's floating outputs (only those without history, or all) a
// NotImplementedNode naming the op, with edges to the inputs that require
// grad so that backward reaches it and fails rather than treating the inputs
// as unused.
// Outputs that PyTorch declares non-differentiable (derivatives.yaml's
// output_differentiability): the saved statistics of the fused norms. They
// never require grad (from a decomposition they come back detached) and are
// no graph cut. Bit k: result k.
uint32_t nondifferentiable_results(OpId id) {
  switch (id) {
    case OpId::native_layer_norm:
    case OpId::native_batch_norm:
      return (1u << 1) | (1u << 2);
    case OpId::scaled_dot_product_attention_forward:
      return 1u << 1;  // logsumexp
    default:
      return 0;
  }
}

bool attach_failing_node(OpCall& c, bool only_without_history, uint32_t skip = 0) {
  std::shared_ptr<Node> node;
  uint32_t k = 0;
  for (TensorImpl* r : results_of(c)) {
    if (skip & (1u << k++)) continue;
    if (r == nullptr || !is_differentiable_dtype(r->dtype)) continue;
    if (only_without_history && requires_grad(*r)) continue;
    if (!node) {
      node = std::make_shared<NotImplementedNode>(c.op->name);
      for (int i = 0; i < c.nargs; ++i) {
        if (c.args[i].tag == TSR_VALUE_TENSOR && c.tensor(i) != nullptr &&
            requires_grad(*c.tensor(i)))
          node->next.push_back(gradient_edge(*c.tensor(i)));
      }
    }
    node->outputs.push_back(TensorMeta::of(*r));
    set_history(*r, node, static_cast<uint32_t>(node->outputs.size() - 1));
  }
  return node != nullptr;
}

// Note [Composite reachability]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A composite without a formula is differentiated through the ops it
// decomposes into. One of those that bypasses run_op (a direct kernel call,
// a raw copy) cuts the graph; when the output keeps another path (through
// another input) nothing would notice, and the bypassed input would get a
// silently missing gradient (index_put's `values` once did). So every input
// that requires grad must be reachable from the outputs through the nodes
// the composite created (those numbered from next_sequence_nr() at its
// start), or the op declares it non-differentiable below; else the call
// fails. The walk visits only the composite's own nodes, so it costs in
// proportion to the ops it recorded. TESSERA_AUTOGRAD_REACHABILITY=0 turns
// it off (for measuring it; it is on by default).

// Tensor arguments of composites that PyTorch does not differentiate (no
// derivative, or declared non_differentiable in derivatives.yaml); bit i:
// schema argument i.
uint32_t nondifferentiable_args(OpId id) {
  switch (id) {
    case OpId::batch_norm:
    case OpId::native_batch_norm:
      // running_mean, running_var: updated in place without history
      // (derivatives.yaml: non_differentiable).
      return arg_bit(3) | arg_bit(4);
    case OpId::native_layer_norm_backward:
      return arg_bit(6);  // bias: the gradients do not depend on it ("bias: Tensor()")
    default:
      return 0;
  }
}

bool reachability_check_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TESSERA_AUTOGRAD_REACHABILITY");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
}

// Where each input that requires grad sends its gradient: a non-leaf's
// grad_fn and output_nr, taken before the composite runs (an in-place
// composite rebases its target); a leaf's accumulator, read after it ran (a
// leaf keeps its history: in-place writes to it are refused).
struct InputEdge {
  const Node* fn;
  uint32_t input_nr;
  TensorImpl* leaf;  // non-null: fn is resolved after the composite ran
  int32_t arg;       // schema argument
  int32_t entry;     // entry of a Tensor[] argument, or -1
  bool reached;
};
using InputEdges = boost::container::small_vector<InputEdge, 4>;

InputEdges input_edges(const OpCall& c) {
  InputEdges out;
  const uint32_t skip = nondifferentiable_args(c.op->id);
  auto add = [&](TensorImpl* t, int32_t arg, int32_t entry) {
    if (t == nullptr || !requires_grad(*t)) return;
    const AutogradMeta& m = *t->autograd;
    if (m.grad_fn)
      out.push_back(InputEdge{m.grad_fn.get(), m.output_nr, nullptr, arg, entry, false});
    else
      out.push_back(InputEdge{nullptr, 0, t, arg, entry, false});
  };
  for (int i = 0; i < c.nargs; ++i) {
    if (i < 32 && (skip & arg_bit(i))) continue;
    if (c.args[i].tag == TSR_VALUE_TENSOR) {
      add(c.opt_tensor(i), i, -1);
    } else if (c.args[i].tag == TSR_VALUE_TENSOR_LIST) {
      for (int32_t j = 0; j < c.list_size(i); ++j) add(c.list_tensor(i, j), i, j);
    }
  }
  return out;
}

// Fails naming the first input of `inputs` that no node created since
// `first_new` leads to from c's outputs (Note [Composite reachability]).
void check_inputs_reached(const OpCall& c, InputEdges& inputs, uint64_t first_new) {
  for (InputEdge& in : inputs) {
    if (in.leaf == nullptr) continue;
    AutogradMeta& m = *in.leaf->autograd;
    std::lock_guard<std::mutex> lock(m.mu);
    in.fn = m.grad_accumulator.get();  // null: no recorded op used the leaf
  }
  size_t left = inputs.size();
  auto reach = [&](const Node* fn, uint32_t nr) {
    for (InputEdge& in : inputs) {
      if (!in.reached && in.fn == fn && in.input_nr == nr) {
        in.reached = true;
        --left;
      }
    }
  };
  // Visited marks for the composite's own nodes, one bit per sequence number.
  const uint64_t end = next_sequence_nr();
  boost::container::small_vector<uint64_t, 8> visited((end - first_new + 63) / 64, 0);
  boost::container::small_vector<const Node*, 16> stack;
  auto visit = [&](const Node* fn, uint32_t nr) {
    reach(fn, nr);
    const uint64_t seq = fn->sequence_nr();
    if (seq < first_new || seq >= end) return;
    uint64_t& word = visited[(seq - first_new) / 64];
    const uint64_t bit = uint64_t{1} << ((seq - first_new) % 64);
    if (word & bit) return;
    word |= bit;
    stack.push_back(fn);
  };
  bool any_output = false;
  for (TensorImpl* r : results_of(c)) {
    if (r == nullptr || r->autograd == nullptr || !r->autograd->grad_fn) continue;
    any_output = true;
    visit(r->autograd->grad_fn.get(), r->autograd->output_nr);
  }
  if (!any_output) return;  // nothing to differentiate (integer results)
  while (left > 0 && !stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const Edge& e : node->next)
      if (e.fn) visit(e.fn.get(), e.input_nr);
  }
  if (left == 0) return;
  for (const InputEdge& in : inputs) {
    if (in.reached) continue;
    const std::string& name = c.op->schema.args[static_cast<size_t>(in.arg)].name;
    const std::string what = in.entry < 0
                                 ? "'" + name + "'"
                                 : "entry " + std::to_string(in.entry) + " of '" + name + "'";
    fail(TSR_INTERNAL,
         "op '{}': argument {} requires grad, but the ops its decomposition recorded do not lead "
         "to it, so its gradient would silently be missing (a graph cut inside the op); give the "
         "op a derivative formula, or declare the argument non-differentiable "
         "(nondifferentiable_args in core/autograd/record.cpp); as a stopgap, call it on a "
         "detached argument or under no_grad",
         c.op->name, what);
  }
}

}  // namespace

void record_view_write(OpCall& c, const Formula& formula, int32_t mutated) {
  const OpDef& op = *c.op;
  TensorImpl* view = c.tensor(mutated);
  TensorImpl* base = view->view_base;
  if (requires_grad(*base) && is_leaf(*base))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': a view of a leaf tensor that requires grad is being used in an in-place "
         "operation; do it under no_grad, or on a clone",
         op.name);
  if (!base->contiguous)
    fail(TSR_UNIMPLEMENTED,
         "op '{}': writing in place into a view of a non-contiguous base cannot be "
         "differentiated; make the base contiguous first",
         op.name);
  ViewGeometry geometry;
  geometry.ndim = view->ndim;
  for (int32_t d = 0; d < view->ndim; ++d) {
    geometry.sizes[d] = view->sizes[d];
    geometry.strides[d] = view->strides[d];
  }
  geometry.offset = view->offset - base->offset;
  auto inner = std::make_shared<OpNode>(c, formula);
  if (formula.inputs & arg_bit(mutated)) {
    inner->slots_[static_cast<size_t>(mutated)].saved =
        SavedTensor(clone_detached(view).get(), false, 0);
  }
  {
    GradModeGuard no_grad(false);
    ForceDecompositionGuard fused_ok(false);
    op.fn(c);
  }
  const int32_t self_edge = inner->slots_[static_cast<size_t>(mutated)].edge;
  Edge base_edge = requires_grad(*base) ? gradient_edge(*base) : Edge{};
  const TensorMeta base_meta = TensorMeta::of(*base);
  auto node = std::make_shared<CopySlices>(inner, self_edge, geometry, base_meta, base_edge);
  set_history(*base, node, 0);
  auto view_node =
      std::make_shared<ViewOfBase>(geometry, base_meta, Edge{node, 0}, TensorMeta::of(*view));
  set_history(*view, view_node, 0);
}

tsr_op_autograd autograd_support(const OpDef& op) {
  if (op.custom != nullptr) return TSR_AUTOGRAD_FORMULA;
  if (const Formula* f = formula_for(op.id))
    return f->nondifferentiable ? TSR_AUTOGRAD_NOT_DIFFERENTIABLE : TSR_AUTOGRAD_FORMULA;
  const int32_t mutated = op.mutated;
  if (op.functional != OpId::kNone ||
      (mutated >= 0 && op.schema.args[static_cast<size_t>(mutated)].kwarg_only))
    return TSR_AUTOGRAD_OUT_VARIANT;
  if (op.kind == TSR_OP_COMPOSITE) return TSR_AUTOGRAD_DECOMPOSES;
  return TSR_AUTOGRAD_MISSING;
}

void record_and_run(OpCall& c) {
  const OpDef& op = *c.op;
  const Formula* formula = op.custom ? &custom_formula() : formula_for(op.id);
  if (formula != nullptr && formula->applies != nullptr && !formula->applies(c)) formula = nullptr;
  const int32_t mutated = op.mutated;
  if (formula == nullptr) {
    const bool out_overload =
        op.functional != OpId::kNone ||
        (mutated >= 0 && op.schema.args[static_cast<size_t>(mutated)].kwarg_only);
    if (out_overload)
      fail(TSR_INVALID_ARGUMENT,
           "{}(): functions with out=... arguments don't support automatic differentiation, but "
           "one of the arguments requires grad; call it under no_grad or use the functional form",
           op.name);
    if (mutated >= 0 && op.kind != TSR_OP_COMPOSITE)
      fail(TSR_UNIMPLEMENTED,
           "op '{}' writes in place and its derivative is not implemented; use the out-of-place "
           "form, or call it under no_grad",
           op.name);
    if (op.kind == TSR_OP_COMPOSITE) {
      const bool check = reachability_check_enabled();
      InputEdges inputs;
      if (check) inputs = input_edges(c);
      const uint64_t first_new = next_sequence_nr();
      {
        ForceDecompositionGuard decompose(true);
        op.fn(c);
      }
      const uint32_t nondifferentiable = c.returns_list ? 0 : nondifferentiable_results(op.id);
      for (int32_t k = 0; k < c.nresults; ++k)
        if ((nondifferentiable & (1u << k)) && c.results[k])
          c.results[k] = detached(c.results[k].get());
      // A composite that built an output without recorded ops (an alias made
      // directly, a raw copy) would silently cut the graph; such an output
      // gets a node that fails in backward naming the composite instead.
      const bool attached =
          attach_failing_node(c, /*only_without_history=*/true, nondifferentiable);
      // With a failing node every input is reached (backward fails loudly).
      if (check && !attached && !inputs.empty()) check_inputs_reached(c, inputs, first_new);
      return;
    }
    {
      GradModeGuard no_grad(false);
      op.fn(c);
    }
    attach_failing_node(c, /*only_without_history=*/false);
    return;
  }

  if (formula->nondifferentiable) {
    GradModeGuard no_grad(false);
    op.fn(c);
    return;
  }

  // An op with a formula.
  TensorImpl* target = mutated >= 0 ? c.tensor(mutated) : nullptr;
  if (target != nullptr) {
    if (requires_grad(*target) && is_leaf(*target))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': a leaf tensor that requires grad is being used in an in-place operation; "
           "do it under no_grad, or on a clone",
           op.name);
    if (target->view_base != nullptr) {
      record_view_write(c, *formula, mutated);
      return;
    }
  }
  auto node = std::make_shared<OpNode>(c, *formula);
  if (target != nullptr) {
    // The formula needs the values the target had before the op overwrites
    // it (also where another argument is the target itself, x.mul_(x)); a
    // saved reference to the target would also be a cycle once the target's
    // grad_fn is this node.
    TensorRef before;
    for (size_t i = 0; i < node->slots_.size(); ++i) {
      OpNode::Slot& slot = node->slots_[i];
      const bool is_target = static_cast<int32_t>(i) == mutated;
      if (!(is_target && (formula->inputs & arg_bit(mutated))) && !slot.saved.holds(target))
        continue;
      if (!before) before = clone_detached(target);
      slot.saved = SavedTensor(before.get(), false, 0);
    }
  }
  {
    // An op with a formula runs its fastest path (its fused kernel) even
    // inside a composite that is being differentiated through its
    // decomposition (layer_norm -> native_layer_norm).
    GradModeGuard no_grad(false);
    ForceDecompositionGuard fused_ok(false);
    op.fn(c);
  }
  const auto results = results_of(c);
  for (TensorImpl* r : results)
    node->outputs.push_back(r != nullptr ? TensorMeta::of(*r) : TensorMeta{});
  for (size_t k = 0; k < results.size(); ++k) {
    TensorImpl* r = results[k];
    if (r == nullptr) continue;
    if (k < 32 && (formula->outputs & arg_bit(static_cast<int>(k)))) {
      node->saved_outputs_.resize(k + 1);
      node->saved_outputs_[k] = SavedTensor(r, true, static_cast<uint32_t>(k));
    }
    // An op that returned one of its inputs unchanged (contiguous of a
    // contiguous tensor) leaves that tensor's history alone.
    bool is_input = false;
    for (int i = 0; i < c.nargs && !is_input; ++i)
      is_input = i != mutated && c.args[i].tag == TSR_VALUE_TENSOR && c.tensor(i) == r;
    const bool differentiable =
        c.returns_list || k >= 32 || !(nondifferentiable_results(op.id) & (1u << k));
    if (is_differentiable_dtype(r->dtype) && !is_input && differentiable)
      set_history(*r, node, static_cast<uint32_t>(k));
  }
}

namespace {
// Installed while the library loads (Note [Recording hook]).
const bool kRecordingHookInstalled =
    (install_recording_hook({&needs_recording, &record_and_run}), true);
}  // namespace

}  // namespace tsr::autograd
