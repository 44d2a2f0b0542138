// formulas.cpp - the formula table (one entry per op id that has one).
#include "autograd/formulas.h"

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

const Formula* FormulaTable::find(OpId id) const {
  const size_t i = static_cast<size_t>(id);
  if (i >= by_id_.size()) return nullptr;
  const Formula& f = by_id_[i];
  return f.fn != nullptr || f.nondifferentiable ? &f : nullptr;
}

const Formula* formula_for(OpId id) {
  static const FormulaTable table = [] {
    FormulaTable t;
    add_spine_formulas(t);
    add_indexing_formulas(t);
    add_pointwise_formulas(t);
    add_shape_formulas(t);
    add_nn_formulas(t);
    add_special_formulas(t);
    return t;
  }();
  return table.find(id);
}

}  // namespace tsr::autograd
