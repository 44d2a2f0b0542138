// tessera/nn/module.hpp - tessera::nn::Module, the base of every layer and
// model: a tree of named parameters, buffers and child modules, as
// torch.nn.Module.
//
//   struct TinyBlock : tessera::nn::Module {
//     std::shared_ptr<nn::Linear> up = register_module("up", std::make_shared<nn::Linear>(3, 8));
//     Tensor& temperature = register_buffer("temperature", tessera::tensor(2.0f));
//     Tensor forward(const Tensor& x) override { return up->operator()(x) / temperature; }
//   };
//   auto model = std::make_shared<TinyBlock>();
//   Tensor y = (*model)(x);   // forward pre-hooks, forward, forward hooks
//
// Ownership: a module owns its parameters, buffers (one Tensor reference
// each) and children (shared_ptr: a child may sit in several parents, as a
// tied submodule does). Modules are made with std::make_shared and are not
// copyable. `register_parameter` and `register_buffer` return a reference to
// the module's own slot; it stays valid for the module's life, and `to()`
// moves the tensor in place (Tensor::set_data), so a layer's `Tensor&` member,
// a copy of the Tensor, and an optimizer built before `to()` all keep seeing
// the parameter.
//
// Ordering (what PyTorch prints): registration order within a module; the
// recursive listings visit a module before its children, depth first, and
// state_dict lists a module's own parameters and persistent buffers before
// its children's entries. named_parameters/buffers/modules drop repeats of
// the same tensor or module (weight tying) unless asked not to;
// state_dict keeps every name.
//
// Threads: a module is used by one thread at a time (forward calls included,
// since hooks and training flags are plain state).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>

#include <cstdlib>
#endif

#include "tessera/autograd.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tensor.hpp"

namespace tessera::nn {

class Module;

// An ordered name -> tensor list: a state_dict (no two entries share a name).
using StateDict = std::vector<std::pair<std::string, Tensor>>;

// What load_state_dict(strict=false) reports, in the order found.
struct LoadResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

// A pre-hook sees the module and its inputs before forward; returning a value
// replaces the inputs. A forward hook sees inputs and outputs after forward;
// returning a value replaces the outputs.
using ForwardPreHook =
    std::function<std::optional<std::vector<Tensor>>(Module&, const std::vector<Tensor>&)>;
using ForwardHook = std::function<std::optional<std::vector<Tensor>>(
    Module&, const std::vector<Tensor>&, const std::vector<Tensor>&)>;

namespace detail {

// Hooks of one kind, in registration order, keyed by a handle id. Shared with
// the handles (weakly) so a handle outliving its module is harmless.
template <class Hook>
struct HookList {
  std::map<uint64_t, Hook> hooks;
  uint64_t next_id = 0;
};

inline std::string demangle(const char* name) {
#if __has_include(<cxxabi.h>)
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status == 0 && out != nullptr) {
    std::string text(out);
    std::free(out);  // NOLINT(cppcoreguidelines-no-malloc): __cxa_demangle's contract
    const size_t colon = text.rfind("::");
    return colon == std::string::npos ? text : text.substr(colon + 2);
  }
#endif
  return name;
}

inline std::string shape_text(const Tensor& t) {
  std::ostringstream out;
  out << "[";
  const Dims sizes = t.sizes();
  for (size_t k = 0; k < sizes.size(); ++k) out << (k ? ", " : "") << sizes[k];
  out << "]";
  return out.str();
}

}  // namespace detail

// Removes one hook; removing twice, or after the module is gone, does nothing.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::function<void()> remove) : remove_(std::move(remove)) {}  // NOLINT
  void remove() {
    if (remove_) std::exchange(remove_, nullptr)();
  }

 private:
  std::function<void()> remove_;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name used in messages and printing ("Linear"); by default the
  // C++ class name without namespaces.
  virtual std::string type_name() const { return detail::demangle(typeid(*this).name()); }
  // The text between the parentheses of this module's one-line print
  // ("in_features=3, out_features=8, bias=True"); empty by default.
  virtual std::string extra_repr() const { return {}; }

  // The computation of a module with one tensor input and output. Modules
  // with other signatures define their own call operator and leave this one
  // throwing.
  virtual Tensor forward(const Tensor& input) {
    (void)input;
    tessera::detail::throw_error(
        TSR_UNIMPLEMENTED,
        type_name() + " has no forward(const Tensor&); call the forward it defines");
  }
  // forward with the hooks around it: what a model's user calls.
  Tensor operator()(const Tensor& input) {
    return invoke({input},
                  [this](const std::vector<Tensor>& in) {
                    return std::vector<Tensor>{forward(in.at(0))};
                  })
        .at(0);
  }

  // --- registration ----------------------------------------------------
  // Registers `tensor` as parameter `name` (a leaf sharing its data, with
  // requires_grad set); an undefined tensor registers an absent parameter
  // (PyTorch's None: listed nowhere). Returns the module's slot.
  Tensor& register_parameter(const std::string& name, const Tensor& tensor,
                             bool requires_grad = true) {
    check_new_name(name, "parameter");
    Tensor p;
    if (tensor.defined()) {
      // A leaf is kept as is, so registering one module's parameter in
      // another ties the two; a computed tensor is detached first.
      p = tensor.is_leaf() ? tensor : tensor.detach();
      if (p.requires_grad() != requires_grad) p.requires_grad_(requires_grad);
    }
    parameters_.push_back({name, std::make_unique<Tensor>(std::move(p)), true});
    return *parameters_.back().tensor;
  }
  // Registers a buffer: state that is not trained (running statistics, a
  // temperature). A persistent buffer is part of state_dict.
  Tensor& register_buffer(const std::string& name, const Tensor& tensor, bool persistent = true) {
    check_new_name(name, "buffer");
    buffers_.push_back({name, std::make_unique<Tensor>(tensor), persistent});
    return *buffers_.back().tensor;
  }
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    check_new_name(name, "module");
    if (module == nullptr)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "register_module: module '" + name +
                                                             "' is null; pass a module "
                                                             "made with std::make_shared");
    children_.emplace_back(name, module);
    return module;
  }

  // The slot of an own parameter or buffer, or of a child; throws NOT_FOUND.
  Tensor& parameter(const std::string& name) { return slot(parameters_, name, "parameter"); }
  Tensor& buffer(const std::string& name) { return slot(buffers_, name, "buffer"); }
  std::shared_ptr<Module> child(const std::string& name) const {
    for (const auto& [n, m] : children_)
      if (n == name) return m;
    tessera::detail::throw_error(TSR_NOT_FOUND,
                                 type_name() + " has no child module '" + name + "'");
  }

  // --- queries ---------------------------------------------------------
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const {
    return children_;
  }
  std::vector<std::shared_ptr<Module>> children() const {
    std::vector<std::shared_ptr<Module>> out;
    for (const auto& [name, m] : children_) out.push_back(m);
    return out;
  }
  // This module (name "") and every descendant, depth first, parents first.
  std::vector<std::pair<std::string, Module*>> named_modules(const std::string& prefix = "",
                                                             bool remove_duplicate = true) {
    std::vector<std::pair<std::string, Module*>> out;
    std::unordered_set<const Module*> seen;
    collect_modules(prefix, remove_duplicate ? &seen : nullptr, out);
    return out;
  }
  std::vector<Module*> modules() {
    std::vector<Module*> out;
    for (const auto& [name, m] : named_modules()) out.push_back(m);
    return out;
  }
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true,
                                                               bool remove_duplicate = true) {
    return named_members(&Module::parameters_, recurse, remove_duplicate, false);
  }
  std::vector<Tensor> parameters(bool recurse = true) {
    return values_of(named_parameters(recurse));
  }
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true,
                                                            bool remove_duplicate = true) {
    return named_members(&Module::buffers_, recurse, remove_duplicate, false);
  }
  std::vector<Tensor> buffers(bool recurse = true) { return values_of(named_buffers(recurse)); }

  // --- modes -------------------------------------------------------------
  // Training mode for this module and its descendants (Dropout and BatchNorm
  // read it); eval() is train(false). Autograd is unaffected.
  Module& train(bool on = true) {
    for (Module* m : modules()) m->training_ = on;
    return *this;
  }
  Module& eval() { return train(false); }
  bool is_training() const noexcept { return training_; }

  // Calls fn on every descendant, children before their parent, then on this
  // module (PyTorch's apply order); each module once.
  Module& apply(const std::function<void(Module&)>& fn) {
    std::unordered_set<const Module*> seen;
    apply_once(fn, seen);
    return *this;
  }

  // Moves every parameter and buffer (and parameter gradients) to `device`,
  // in place (Tensor::set_data): references to them stay valid. to(dtype)
  // converts the floating-point ones only, as PyTorch does.
  Module& to(Device device) {
    return convert([device](const Tensor& t) { return t.to(device); }, false);
  }
  Module& to(Dtype dtype) {
    return convert([dtype](const Tensor& t) { return t.to(dtype); }, true);
  }
  Module& to(Device device, Dtype dtype) {
    to(device);
    return to(dtype);
  }

  // Clears (set_to_none) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true) {
    for (Tensor& p : parameters()) {
      if (set_to_none) {
        p.set_grad(Tensor());
      } else if (Tensor g = p.grad(); g.defined()) {
        p.set_grad(g.detach().zero_());
      }
    }
  }

  // --- hooks -------------------------------------------------------------
  RemovableHandle register_forward_pre_hook(ForwardPreHook hook) {
    return add_hook(pre_hooks_, std::move(hook));
  }
  RemovableHandle register_forward_hook(ForwardHook hook) {
    return add_hook(forward_hooks_, std::move(hook));
  }

  // --- state -------------------------------------------------------------
  // Every parameter and persistent buffer by dotted name, own entries before
  // children's; the tensors are detached and share the module's storage.
  StateDict state_dict(const std::string& prefix = "") const {
    StateDict out;
    collect_state(prefix, out);
    return out;
  }
  // Copies matching entries into the parameters and persistent buffers
  // (without recording autograd). A shape mismatch always fails, naming the
  // key and both shapes; with strict, missing or unexpected keys fail too
  // (one message listing them all); otherwise they are returned.
  LoadResult load_state_dict(const StateDict& state, bool strict = true) {
    std::unordered_map<std::string, const Tensor*> by_name;
    for (const auto& [name, tensor] : state) {
      if (!by_name.emplace(name, &tensor).second)
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "load_state_dict: key '" + name +
                                                               "' appears twice in state_dict");
    }
    std::vector<std::pair<std::string, Tensor*>> targets;
    collect_slots("", targets);
    LoadResult result;
    std::vector<std::string> errors;
    std::unordered_set<std::string> used;
    autograd::NoGradGuard no_grad;
    for (auto& [key, slot] : targets) {
      auto it = by_name.find(key);
      if (it == by_name.end()) {
        result.missing_keys.push_back(key);
        continue;
      }
      used.insert(key);
      const Tensor& value = *it->second;
      if (!value.defined()) {
        errors.push_back("key '" + key + "' holds an undefined tensor");
      } else if (value.sizes() != slot->sizes()) {
        errors.push_back("size mismatch for " + key + ": copying a param with shape " +
                         detail::shape_text(value) +
                         " from checkpoint, the shape in current "
                         "model is " +
                         detail::shape_text(*slot) + ".");
      } else if (!value.is_same(*slot)) {
        slot->copy_(value);
      }
    }
    for (const auto& [name, tensor] : state)
      if (!used.count(name)) result.unexpected_keys.push_back(name);
    if (strict) {
      if (!result.missing_keys.empty())
        errors.insert(errors.begin(),
                      "Missing key(s) in state_dict: " + quoted(result.missing_keys));
      if (!result.unexpected_keys.empty())
        errors.push_back("Unexpected key(s) in state_dict: " + quoted(result.unexpected_keys));
    }
    if (!errors.empty()) {
      std::string message = "Error(s) in loading state_dict for " + type_name() + ":";
      for (const auto& e : errors) message += "\n\t" + e;
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, message);
    }
    return result;
  }

  // PyTorch's print: "TinyBlock(\n  (up): Linear(in_features=3, ...)\n ...)".
  std::string repr() const {
    std::string out = type_name() + "(";
    const std::string extra = extra_repr();
    if (children_.empty()) return out + extra + ")";
    if (!extra.empty()) out += "\n  " + extra;
    for (const auto& [name, m] : children_) {
      std::string child = m->repr();
      std::string indented;
      for (char c : child) {
        indented += c;
        if (c == '\n') indented += "  ";
      }
      out += "\n  (" + name + "): " + indented;
    }
    return out + "\n)";
  }

 protected:
  // Runs the pre-hooks, `forward`, then the forward hooks, in registration
  // order: the call operators of modules with any signature use it.
  std::vector<Tensor> invoke(
      std::vector<Tensor> inputs,
      const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& forward_fn) {
    // Copies: a hook may remove itself (or another) while running.
    const auto pre = pre_hooks_->hooks;
    for (const auto& [id, hook] : pre) {
      if (auto replaced = hook(*this, inputs)) inputs = std::move(*replaced);
    }
    std::vector<Tensor> outputs = forward_fn(inputs);
    const auto post = forward_hooks_->hooks;
    for (const auto& [id, hook] : post) {
      if (auto replaced = hook(*this, inputs, outputs)) outputs = std::move(*replaced);
    }
    return outputs;
  }

 private:
  // One parameter or buffer. The tensor lives behind a pointer so references
  // returned by register_* survive later registrations.
  struct Slot {
    std::string name;
    std::unique_ptr<Tensor> tensor;
    bool persistent;  // buffers: part of state_dict
  };

  void check_new_name(const std::string& name, const char* kind) const {
    if (name.empty() || name.find('.') != std::string::npos)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   std::string("register_") + kind + ": name '" + name +
                                       "' must be non-empty and contain no '.'");
    auto taken = [&](const auto& list) {
      for (const auto& e : list)
        if (e.name == name) return true;
      return false;
    };
    bool child_taken = false;
    for (const auto& [n, m] : children_) child_taken = child_taken || n == name;
    if (taken(parameters_) || taken(buffers_) || child_taken)
      tessera::detail::throw_error(TSR_ALREADY_EXISTS, std::string("register_") + kind +
                                                           ": attribute '" + name +
                                                           "' already exists in " + type_name());
  }

  Tensor& slot(std::vector<Slot>& list, const std::string& name, const char* kind) {
    for (auto& e : list)
      if (e.name == name) return *e.tensor;
    tessera::detail::throw_error(TSR_NOT_FOUND,
                                 type_name() + " has no " + kind + " '" + name + "'");
  }

  static std::vector<Tensor> values_of(const std::vector<std::pair<std::string, Tensor>>& named) {
    std::vector<Tensor> out;
    out.reserve(named.size());
    for (const auto& [name, t] : named) out.push_back(t);
    return out;
  }

  static std::string quoted(const std::vector<std::string>& keys) {
    std::string out;
    for (size_t k = 0; k < keys.size(); ++k) out += (k ? ", \"" : "\"") + keys[k] + "\"";
    return out + ".";
  }

  void collect_modules(const std::string& prefix, std::unordered_set<const Module*>* seen,
                       std::vector<std::pair<std::string, Module*>>& out) {
    if (seen != nullptr && !seen->insert(this).second) return;
    out.emplace_back(prefix, this);
    for (const auto& [name, m] : children_)
      m->collect_modules(prefix.empty() ? name : prefix + "." + name, seen, out);
  }

  std::vector<std::pair<std::string, Tensor>> named_members(std::vector<Slot> Module::*list,
                                                            bool recurse, bool remove_duplicate,
                                                            bool persistent_only) {
    std::vector<std::pair<std::string, Tensor>> out;
    std::unordered_set<tsr_tensor*> seen;
    const auto mods = recurse ? named_modules("", remove_duplicate)
                              : std::vector<std::pair<std::string, Module*>>{{"", this}};
    for (const auto& [prefix, m] : mods) {
      for (const Slot& s : m->*list) {
        if (!s.tensor->defined() || (persistent_only && !s.persistent)) continue;
        if (remove_duplicate && !seen.insert(s.tensor->get()).second) continue;
        out.emplace_back(prefix.empty() ? s.name : prefix + "." + s.name, *s.tensor);
      }
    }
    return out;
  }

  void collect_state(const std::string& prefix, StateDict& out) const {
    for (const Slot& s : parameters_)
      if (s.tensor->defined()) out.emplace_back(prefix + s.name, s.tensor->detach());
    for (const Slot& s : buffers_)
      if (s.tensor->defined() && s.persistent)
        out.emplace_back(prefix + s.name, s.tensor->detach());
    for (const auto& [name, m] : children_) m->collect_state(prefix + name + ".", out);
  }

  void collect_slots(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out) {
    for (Slot& s : parameters_)
      if (s.tensor->defined()) out.emplace_back(prefix + s.name, s.tensor.get());
    for (Slot& s : buffers_)
      if (s.tensor->defined() && s.persistent) out.emplace_back(prefix + s.name, s.tensor.get());
    for (const auto& [name, m] : children_) m->collect_slots(prefix + name + ".", out);
  }

  void apply_once(const std::function<void(Module&)>& fn, std::unordered_set<const Module*>& seen) {
    if (!seen.insert(this).second) return;
    for (const auto& [name, m] : children_) m->apply_once(fn, seen);
    fn(*this);
  }

  // Replaces the data of every distinct parameter and buffer (and parameter
  // gradient) with fn(data); `floating_only` skips integer and bool tensors.
  Module& convert(const std::function<Tensor(const Tensor&)>& fn, bool floating_only) {
    autograd::NoGradGuard no_grad;
    std::unordered_set<tsr_tensor*> done;
    auto move = [&](Tensor& t) {
      if (!t.defined() || !done.insert(t.get()).second) return;
      if (floating_only && !is_floating_point(t.dtype())) return;
      Tensor grad = t.grad();
      t.set_data(fn(t));
      if (grad.defined()) t.set_grad(fn(grad));
    };
    for (Module* m : modules()) {
      for (Slot& s : m->parameters_) move(*s.tensor);
      for (Slot& s : m->buffers_) move(*s.tensor);
    }
    return *this;
  }

  template <class Hook>
  RemovableHandle add_hook(const std::shared_ptr<detail::HookList<Hook>>& list, Hook hook) {
    if (!hook)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "register hook: the hook is empty");
    const uint64_t id = list->next_id++;
    list->hooks.emplace(id, std::move(hook));
    std::weak_ptr<detail::HookList<Hook>> weak = list;
    return RemovableHandle([weak, id] {
      if (auto l = weak.lock()) l->hooks.erase(id);
    });
  }

  std::vector<Slot> parameters_;
  std::vector<Slot> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  std::shared_ptr<detail::HookList<ForwardPreHook>> pre_hooks_ =
      std::make_shared<detail::HookList<ForwardPreHook>>();
  std::shared_ptr<detail::HookList<ForwardHook>> forward_hooks_ =
      std::make_shared<detail::HookList<ForwardHook>>();
};

inline std::ostream& operator<<(std::ostream& out, const Module& module) {
  return out << module.repr();
}

}  // namespace tessera::nn
