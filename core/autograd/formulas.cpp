// formulas.cpp - the formula table (one entry per op id that has one).
#include "autograd/formulas.h"

#include <cstdlib>
#include <string>

#include "util/error.h"

namespace tsr::autograd {

void FormulaTable::add(OpId id, BackwardFn fn, uint32_t inputs, uint32_t outputs) {
  const size_t i = static_cast<size_t>(id);
  if (by_id_.size() <= i) by_id_.resize(i + 1);
  if (by_id_[i].fn != nullptr)
    throw Error(TSR_INTERNAL, "autograd: two derivative formulas for one op");
  by_id_[i] = Formula{fn, inputs, outputs};
}

void FormulaTable::add_when(OpId id, BackwardFn fn, bool (*applies)(const OpCall&), uint32_t inputs,
                            uint32_t outputs) {
  add(id, fn, inputs, outputs);
  by_id_[static_cast<size_t>(id)].applies = applies;
}

void FormulaTable::add_nondifferentiable(std::initializer_list<OpId> ids) {
  for (OpId id : ids) {
    const size_t i = static_cast<size_t>(id);
    if (by_id_.size() <= i) by_id_.resize(i + 1);
    by_id_[i].nondifferentiable = true;
  }
}

void FormulaTable::add_inplace_variants() {
  // "exp_" / "clamp_min_.Tensor" take their functional form's formula when it
  // has one and the same arguments: recording saves what the target held
  // before the op and rebases the target onto the node (record.cpp).
  const Registry& reg = Registry::get();
  for (const OpDef& op : reg.ops()) {
    const size_t i = static_cast<size_t>(op.id);
    if (op.mutated != 0 || (i < by_id_.size() && (by_id_[i].fn || by_id_[i].nondifferentiable)))
      continue;
    const std::string& base = op.schema.name;
    if (base.size() < 2 || base.back() != '_' || op.schema.args[0].kwarg_only) continue;
    std::string functional = base.substr(0, base.size() - 1);
    if (!op.schema.overload.empty()) functional += "." + op.schema.overload;
    const OpDef* f = reg.find(functional);
    if (f == nullptr || f->schema.args.size() != op.schema.args.size()) continue;
    bool same_kinds = true;
    for (size_t a = 0; a < op.schema.args.size(); ++a)
      same_kinds = same_kinds && f->schema.args[a].kind == op.schema.args[a].kind;
    if (!same_kinds) continue;  // pow_.Scalar is pow.Tensor_Scalar, not pow.Scalar
    const Formula* formula = find(f->id);
    if (formula == nullptr || formula->fn == nullptr || formula->applies != nullptr) continue;
    if (by_id_.size() <= i) by_id_.resize(i + 1);
    by_id_[i] = *formula;
  }
}

void FormulaTable::decompose_listed(const char* names) {
  if (names == nullptr) return;
  const Registry& reg = Registry::get();
  const std::string list = names;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    const OpDef* op = reg.find(name);
    const size_t i = op != nullptr ? static_cast<size_t>(op->id) : 0;
    if (op == nullptr || op->kind != TSR_OP_COMPOSITE || find(op->id) == nullptr)
      throw Error(TSR_INVALID_ARGUMENT,
                  "TESSERA_AUTOGRAD_DECOMPOSE names '" + name +
                      "', which is not a composite op with a derivative formula; list only such "
                      "ops (comma-separated registry names, e.g. index_put,embedding)");
    by_id_[i] = Formula{};
  }
}

const Formula* FormulaTable::find(OpId id) const {
  const size_t i = static_cast<size_t>(id);
  if (i >= by_id_.size()) return nullptr;
  const Formula& f = by_id_[i];
  return f.fn != nullptr || f.nondifferentiable ? &f : nullptr;
}

const Formula* formula_for(OpId id) {
  static const FormulaTable table = [] {
    FormulaTable t;
    add_basic_formulas(t);
    add_indexing_formulas(t);
    add_pointwise_formulas(t);
    add_shape_formulas(t);
    add_nn_formulas(t);
    add_pointwise_special_formulas(t);
    add_reduction_formulas(t);
    t.decompose_listed(std::getenv("TESSERA_AUTOGRAD_DECOMPOSE"));
    t.add_inplace_variants();
    return t;
  }();
  return table.find(id);
}

}  // namespace tsr::autograd
