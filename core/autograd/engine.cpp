// engine.cpp - dependency-driven backward.
#include "autograd/engine.h"

#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autograd/grad_ops.h"
#include "autograd/hooks.h"
#include "autograd/meta.h"
#include "dispatch/op_api.h"
#include "ops/op_util.h"
#include "ops/shorthands.h"
#include "tensor/dtype.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {

struct Capture {
  Node* node;
  uint32_t input_nr;
};

struct Later {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

class GraphTask {
 public:
  GraphTask(bool retain_graph, bool create_graph, const std::vector<Capture>* captures)
      : retain_graph_(retain_graph), create_graph_(create_graph), captures_(captures) {
    if (captures_) captured_.resize(captures_->size());
  }

  void run(const std::vector<Edge>& roots, std::vector<TensorRef>&& root_grads) {
    discover(roots);
    for (size_t i = 0; i < roots.size(); ++i) deliver(roots[i], std::move(root_grads[i]));
    for (const Edge& r : roots) {
      Node* n = r.fn.get();
      if (deps_[n] == 0 && queued_.insert(n).second) ready_.push(n);
    }
    GradModeGuard mode(create_graph_);
    while (!ready_.empty()) {
      Node* node = ready_.top();
      ready_.pop();
      execute(node);
    }
  }

  std::vector<TensorRef>& captured() { return captured_; }

 private:
  // Counts, for every node reachable from the roots, the edges into it; in
  // capture mode also marks which nodes lead to a captured input.
  void discover(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    for (const Edge& r : roots) {
      if (seen_.insert(r.fn.get()).second) stack.push_back(r.fn.get());
    }
    std::vector<Node*> order;
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (const Edge& e : n->next) {
        if (!e.fn) continue;
        ++deps_[e.fn.get()];
        if (seen_.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      }
    }
    if (!captures_) return;
    for (const Capture& c : *captures_) needed_.insert(c.node);
    // A node is needed when one of its next nodes is; iterate to a fixed
    // point (graphs are DAGs, so |order| passes at most).
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node* n : order) {
        if (needed_.count(n)) continue;
        for (const Edge& e : n->next) {
          if (e.fn && needed_.count(e.fn.get())) {
            needed_.insert(n);
            changed = true;
            break;
          }
        }
      }
    }
  }

  void deliver(const Edge& e, TensorRef grad) {
    if (!e.fn || !grad) return;
    std::vector<TensorRef>& buffer = buffers_[e.fn.get()];
    if (buffer.empty()) buffer.resize(e.fn->outputs.size());
    TensorRef& slot = buffer.at(e.input_nr);
    slot = slot ? op::add(slot, grad) : std::move(grad);
  }

  void execute(Node* node) {
    std::vector<TensorRef> grads = std::move(buffers_[node]);
    buffers_.erase(node);
    grads.resize(node->outputs.size());
    run_tensor_hooks(*node, grads);
    if (captures_) {
      for (size_t i = 0; i < captures_->size(); ++i) {
        const Capture& c = (*captures_)[i];
        if (c.node == node && grads[c.input_nr]) captured_[i] = grads[c.input_nr];
      }
    }
    auto* accumulate = dynamic_cast<AccumulateGrad*>(node);
    const bool run = captures_ ? (needed_.count(node) && accumulate == nullptr) : true;
    for (const auto& [k, weak_cell] : node->retained) {
      std::shared_ptr<TensorRef> cell = weak_cell.lock();
      if (!cell || k >= grads.size() || !grads[k]) continue;
      *cell = *cell ? op::add(*cell, grads[k]) : clone_detached(grads[k].get());
    }
    std::vector<TensorRef> out;
    if (run) {
      for (size_t k = 0; k < grads.size(); ++k) {
        if (!grads[k]) grads[k] = zeros_of(runtime_of(grads), node->outputs[k]);
      }
      out = node->apply(std::move(grads));
      if (accumulate != nullptr) accumulate->after_apply();
      if (detect_anomaly()) check_finite(*node, out);
      if (!retain_graph_) node->release_saved();
    }
    for (size_t i = 0; i < node->next.size(); ++i) {
      const Edge& e = node->next[i];
      if (!e.fn) continue;
      if (i < out.size()) deliver(e, std::move(out[i]));
      Node* n = e.fn.get();
      if (--deps_[n] == 0 && queued_.insert(n).second) ready_.push(n);
    }
  }

  // Anomaly mode: a NaN in what a node returned fails, naming the node and
  // the forward op that recorded it.
  static void check_finite(const Node& node, const std::vector<TensorRef>& out) {
    GradModeGuard no_grad(false);
    for (size_t i = 0; i < out.size(); ++i) {
      TensorImpl* g = out[i].get();
      if (g == nullptr || !(is_floating(g->dtype) || is_complex(g->dtype))) continue;
      TensorRef any = op::call(g->runtime, OpId::any, op::call(g->runtime, OpId::isnan, g).get());
      uint8_t flag = 0;
      read_to_host(any.get(), &flag);
      if (flag != 0)
        fail(TSR_FAILED_PRECONDITION,
             "Function '{}' returned nan values in its {}th output (anomaly detection); the "
             "forward op that recorded it was '{}'",
             node.name(), i, node.forward_op());
    }
  }

  static Runtime* runtime_of(const std::vector<TensorRef>& grads) {
    for (const TensorRef& g : grads) {
      if (g) return g->runtime;
    }
    fail(TSR_INTERNAL, "autograd: a node became ready without any gradient");
  }

  bool retain_graph_;
  bool create_graph_;
  const std::vector<Capture>* captures_;
  std::vector<TensorRef> captured_;
  std::unordered_map<Node*, int64_t> deps_;
  std::unordered_set<Node*> seen_;
  std::unordered_set<Node*> needed_;
  std::unordered_set<Node*> queued_;
  std::unordered_map<Node*, std::vector<TensorRef>> buffers_;
  std::priority_queue<Node*, std::vector<Node*>, Later> ready_;
};

// Root edges and their starting gradients; validates the outputs.
void roots_of(const std::vector<TensorImpl*>& outputs, const std::vector<TensorImpl*>& grad_outputs,
              std::vector<Edge>& edges, std::vector<TensorRef>& grads) {
  if (outputs.empty()) fail(TSR_INVALID_ARGUMENT, "backward/grad: no output tensors given");
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    fail(TSR_INVALID_ARGUMENT, "backward/grad: {} outputs but {} grad_outputs; give one per output",
         outputs.size(), grad_outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorImpl* t = outputs[i];
    if (!requires_grad(*t))
      fail(TSR_INVALID_ARGUMENT,
           "element {} of tensors does not require grad and does not have a grad_fn", i);
    TensorImpl* g = grad_outputs.empty() ? nullptr : grad_outputs[i];
    TensorRef start;
    if (g == nullptr) {
      if (t->numel != 1)
        fail(TSR_INVALID_ARGUMENT,
             "grad can be implicitly created only for scalar outputs: output {} has shape {}; "
             "pass a gradient of that shape",
             i, shape_str(t->ndim, t->sizes));
      start = op::call(OpId::ones_like, t);
    } else {
      bool same = g->ndim == t->ndim;
      for (int32_t d = 0; same && d < t->ndim; ++d) same = g->sizes[d] == t->sizes[d];
      if (!same)
        fail(
            TSR_INVALID_ARGUMENT,
            "Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] has a shape of {}",
            i, shape_str(g->ndim, g->sizes), i, shape_str(t->ndim, t->sizes));
      start = TensorRef::borrow(g);
    }
    edges.push_back(gradient_edge(*t));
    grads.push_back(std::move(start));
  }
}

}  // namespace

namespace {
thread_local std::vector<std::function<void()>>* current_callbacks = nullptr;
}  // namespace

void backward(const std::vector<TensorImpl*>& outputs, const std::vector<TensorImpl*>& grad_outputs,
              bool retain_graph, bool create_graph) {
  std::vector<Edge> edges;
  std::vector<TensorRef> grads;
  roots_of(outputs, grad_outputs, edges, grads);
  GraphTask task(retain_graph, create_graph, nullptr);
  // The callbacks of this backward (queue_callback); restored on the way out
  // so a backward run from a hook keeps its own.
  std::vector<std::function<void()>> callbacks;
  std::vector<std::function<void()>>* outer = std::exchange(current_callbacks, &callbacks);
  struct Restore {
    std::vector<std::function<void()>>* outer;
    ~Restore() { current_callbacks = outer; }
  } restore{outer};
  task.run(edges, std::move(grads));
  // A callback may queue more: run until none is left.
  for (size_t i = 0; i < callbacks.size(); ++i) {
    std::function<void()> fn = std::move(callbacks[i]);
    fn();
  }
}

void queue_callback(std::function<void()> fn) {
  if (current_callbacks == nullptr)
    fail(TSR_FAILED_PRECONDITION,
         "queue_callback: no backward is running on this thread; queue callbacks from a hook "
         "or a custom Function's backward");
  current_callbacks->push_back(std::move(fn));
}

std::vector<TensorRef> grad(const std::vector<TensorImpl*>& outputs,
                            const std::vector<TensorImpl*>& grad_outputs,
                            const std::vector<TensorImpl*>& inputs, bool retain_graph,
                            bool create_graph, bool allow_unused) {
  if (inputs.empty()) fail(TSR_INVALID_ARGUMENT, "grad: no input tensors given");
  std::vector<Capture> captures;
  std::vector<std::shared_ptr<Node>> keep;  // accumulators made for the capture
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!requires_grad(*inputs[i]))
      fail(TSR_INVALID_ARGUMENT, "grad: input {} does not require grad", i);
    Edge e = gradient_edge(*inputs[i]);
    captures.push_back(Capture{e.fn.get(), e.input_nr});
    keep.push_back(std::move(e.fn));
  }
  std::vector<Edge> edges;
  std::vector<TensorRef> grads;
  roots_of(outputs, grad_outputs, edges, grads);
  GraphTask task(retain_graph, create_graph, &captures);
  task.run(edges, std::move(grads));
  std::vector<TensorRef> result = std::move(task.captured());
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i] && !allow_unused)
      fail(TSR_INVALID_ARGUMENT,
           "One of the differentiated Tensors (input {}) appears to not have been used in the "
           "graph. Set allow_unused=True if this is the desired behavior",
           i);
  }
  return result;
}

}  // namespace tsr::autograd
