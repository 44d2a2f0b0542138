// tessera/nn/container.hpp - Sequential, ModuleList, ModuleDict and
// ParameterList (torch.nn): modules that hold other modules or parameters
// under generated ("0", "1", ...) or given names.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/nn/module.hpp"

namespace tessera::nn {

// Calls its children in order, each on the previous one's output.
class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
    for (const auto& m : modules) push_back(m);
  }
  // Named children, as Sequential(OrderedDict(...)).
  explicit Sequential(std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules) {
    for (auto& [name, m] : modules) register_module(name, m);
  }
  void push_back(std::shared_ptr<Module> module) {
    register_module(std::to_string(children().size()), std::move(module));
  }
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> operator[](size_t index) const { return at(index); }
  std::shared_ptr<Module> at(size_t index) const {
    const auto kids = children();
    if (index >= kids.size())
      tessera::detail::throw_error(TSR_OUT_OF_RANGE, "Sequential: index " + std::to_string(index) +
                                                         " is out of range for " +
                                                         std::to_string(kids.size()) + " modules");
    return kids[index];
  }
  std::string type_name() const override { return "Sequential"; }
  Tensor forward(const Tensor& input) override {
    Tensor x = input;
    for (const auto& m : children()) x = (*m)(x);
    return x;
  }
};

// An indexable list of modules (registered, so their parameters are the
// list's); it has no forward of its own.
class ModuleList : public Module {
 public:
  ModuleList() = default;
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules) {
    for (const auto& m : modules) push_back(m);
  }
  void push_back(std::shared_ptr<Module> module) {
    items_.push_back(register_module(std::to_string(items_.size()), std::move(module)));
  }
  size_t size() const { return items_.size(); }
  std::shared_ptr<Module> operator[](size_t index) const {
    if (index >= items_.size())
      tessera::detail::throw_error(
          TSR_OUT_OF_RANGE, "ModuleList: index " + std::to_string(index) + " is out of range for " +
                                std::to_string(items_.size()) + " modules");
    return items_[index];
  }
  auto begin() const { return items_.cbegin(); }
  auto end() const { return items_.cend(); }
  std::string type_name() const override { return "ModuleList"; }

 private:
  std::vector<std::shared_ptr<Module>> items_;  // the children, in order
};

// Modules by name, in insertion order.
class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  explicit ModuleDict(std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules) {
    for (auto& [name, m] : modules) insert(name, m);
  }
  void insert(const std::string& key, std::shared_ptr<Module> module) {
    register_module(key, std::move(module));
  }
  bool contains(const std::string& key) const {
    for (const auto& [name, m] : named_children())
      if (name == key) return true;
    return false;
  }
  std::shared_ptr<Module> operator[](const std::string& key) const { return child(key); }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [name, m] : named_children()) out.push_back(name);
    return out;
  }
  size_t size() const { return named_children().size(); }
  std::string type_name() const override { return "ModuleDict"; }
};

// Parameters named "0", "1", ...
class ParameterList : public Module {
 public:
  ParameterList() = default;
  ParameterList(std::initializer_list<Tensor> parameters) {
    for (const auto& p : parameters) append(p);
  }
  Tensor& append(const Tensor& parameter) {
    Tensor& slot = register_parameter(std::to_string(size_), parameter);
    ++size_;
    return slot;
  }
  size_t size() const { return size_; }
  Tensor& operator[](size_t index) {
    if (index >= size_)
      tessera::detail::throw_error(
          TSR_OUT_OF_RANGE, "ParameterList: index " + std::to_string(index) +
                                " is out of range for " + std::to_string(size_) + " parameters");
    return parameter(std::to_string(index));
  }
  std::string type_name() const override { return "ParameterList"; }

 private:
  size_t size_ = 0;  // parameters appended; their names are 0 .. size_ - 1
};

}  // namespace tessera::nn
