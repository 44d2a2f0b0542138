// einsum: Einstein summation over an equation such as "bij,bjk->bik".
//
// The equation is parsed into one term per operand (labels a-z, A-Z and at
// most one "..." each) and an output term (explicit after "->", or implicit:
// the ellipsis dims, then every label that appears exactly once, in the
// order A..Z a..z). Every dim of every operand gets a global id: ellipsis
// dims are aligned from the right across operands (ids 0..E-1), labels follow.
//
// Each operand is then reduced to distinct ids: repeated labels become a
// diagonal view (as_strided with the summed strides), size-1 dims that
// broadcast against a larger size elsewhere are squeezed away. The operands
// are contracted left to right: for the pair (A, B), ids in both that are
// still needed (by the output or a later operand) are batch dims, ids in both
// that are not are contracted, ids in one operand only are kept (free) or, if
// no longer needed, summed out first. Each pair is one bmm of
// (batch, free_A, contracted) x (batch, contracted, free_B), reached by
// permute + reshape (views when the strides allow). Ids the output lacks are
// summed at the end and the result is permuted into the output's order; like
// PyTorch, the result may be a view of an operand (e.g. "ij->ji").
// The optional `path` argument is accepted and ignored (left-to-right order).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "dispatch/op_api.h"
#include "ops/linalg/linalg_util.h"
#include "ops/op_impls.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

constexpr int kLabels = 52;
constexpr int kEllipsis = -1;

int label_id(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -2;
}

char label_char(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + (id - 26)); }

struct Term {
  std::vector<int> items;  // label ids and kEllipsis, in order
  bool has_ellipsis = false;
  int nlabels() const { return static_cast<int>(items.size()) - (has_ellipsis ? 1 : 0); }
};

struct Equation {
  std::vector<Term> inputs;
  Term output;
  bool explicit_output = false;
};

Equation parse(const std::string& eq, int32_t noperands) {
  Equation e;
  e.inputs.emplace_back();
  Term* cur = &e.inputs.back();
  bool in_output = false;
  const size_t n = eq.size();
  for (size_t i = 0; i < n; ++i) {
    const char ch = eq[i];
    if (ch == ' ') continue;
    if (ch == '.') {
      const std::string where =
          in_output ? std::string("output") : fmt::format("operand {}", e.inputs.size() - 1);
      if (cur->has_ellipsis)
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): found '.' for {} for which an ellipsis was already found",
             where);
      if (i + 2 >= n || eq[i + 1] != '.' || eq[i + 2] != '.')
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): found '.' for {} that is not part of any ellipsis", where);
      cur->items.push_back(kEllipsis);
      cur->has_ellipsis = true;
      i += 2;
      continue;
    }
    if (ch == ',' && !in_output) {
      e.inputs.emplace_back();
      cur = &e.inputs.back();
      continue;
    }
    if (ch == '-' && !in_output && i + 1 < n && eq[i + 1] == '>') {
      in_output = true;
      e.explicit_output = true;
      cur = &e.output;
      ++i;
      continue;
    }
    const int id = label_id(ch);
    if (id < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op 'einsum': einsum(): invalid subscript given at index {} in the equation string, "
           "subscripts must be in [a-zA-Z]",
           i);
    cur->items.push_back(id);
  }
  const int32_t nterms = static_cast<int32_t>(e.inputs.size());
  if (noperands == 0)
    fail(TSR_INVALID_ARGUMENT, "op 'einsum': einsum(): must provide at least one operand");
  if (nterms > noperands)
    fail(TSR_INVALID_ARGUMENT,
         "op 'einsum': einsum(): fewer operands were provided than specified in the equation "
         "({} terms, {} tensors)",
         nterms, noperands);
  if (nterms < noperands)
    fail(TSR_INVALID_ARGUMENT,
         "op 'einsum': einsum(): more operands were provided than specified in the equation "
         "({} terms, {} tensors)",
         nterms, noperands);
  return e;
}

// An operand during contraction: a tensor whose dim d carries global id ids[d].
struct Operand {
  TensorRef t;
  std::vector<int> ids;
};

bool contains(const std::vector<int>& v, int id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

OpId sum_op() {
  constexpr OpId id = OpId::sum_dim_IntList;
  return id;
}

// Sums `x` over the given ids (removing them).
void sum_out(Operand& x, const std::vector<int>& ids) {
  if (ids.empty()) return;
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < x.ids.size(); ++d) {
    if (contains(ids, x.ids[d]))
      dims.push_back(static_cast<int64_t>(d));
    else
      kept.push_back(x.ids[d]);
  }
  if (dims.empty()) return;
  TensorImpl* t = x.t.get();
  x.t = op::call(t->runtime, sum_op(), t, dims, false, t->dtype);
  x.ids = kept;
}

// x permuted so its ids come in `order` (which lists every id of x).
TensorRef permute_to(const Operand& x, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  for (int id : order) perm.push_back(std::find(x.ids.begin(), x.ids.end(), id) - x.ids.begin());
  return op::permute(x.t.get(), op::ints(perm.data(), static_cast<int32_t>(perm.size())));
}

// Contracts a and b; `needed` says which ids must survive.
Operand contract(Runtime* rt, Operand a, Operand b, const std::vector<bool>& needed,
                 const std::vector<int64_t>& size_of) {
  std::vector<int> batch, afree, bfree, summed, a_only_sum, b_only_sum;
  for (int id : a.ids) {
    if (contains(b.ids, id))
      (needed[id] ? batch : summed).push_back(id);
    else
      (needed[id] ? afree : a_only_sum).push_back(id);
  }
  for (int id : b.ids)
    if (!contains(a.ids, id)) (needed[id] ? bfree : b_only_sum).push_back(id);
  sum_out(a, a_only_sum);
  sum_out(b, b_only_sum);
  auto product = [&](const std::vector<int>& ids) {
    int64_t p = 1;
    for (int id : ids) p *= size_of[id];
    return p;
  };
  const int64_t nb = product(batch), pa = product(afree), pb = product(bfree), k = product(summed);
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), afree.begin(), afree.end());
  a_order.insert(a_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), bfree.begin(), bfree.end());
  TensorRef ap = permute_to(a, a_order);
  TensorRef bp = permute_to(b, b_order);
  TensorRef a3 = op::reshape(ap.get(), {nb, pa, k});
  TensorRef b3 = op::reshape(bp.get(), {nb, k, pb});
  TensorRef r = op::call(rt, OpId::bmm, a3, b3);
  Operand out;
  out.ids = batch;
  out.ids.insert(out.ids.end(), afree.begin(), afree.end());
  out.ids.insert(out.ids.end(), bfree.begin(), bfree.end());
  if (out.ids.size() > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT,
         "op 'einsum': an intermediate result would have {} dims; tensors have at most {}",
         out.ids.size(), TSR_MAX_DIMS);
  Shape s;
  for (int id : out.ids) s.sizes[s.ndim++] = size_of[id];
  out.t = op::reshape(r.get(), s);
  return out;
}

}  // namespace

void einsum(OpCall& c) {
  const std::string equation = c.args[0].u.str;
  const int32_t n = c.list_size(1);
  Equation eq = parse(equation, n);
  std::vector<TensorImpl*> tensors(static_cast<size_t>(n));
  for (int32_t j = 0; j < n; ++j) {
    tensors[j] = c.list_tensor(1, j);
    if (tensors[j] == nullptr)
      fail(TSR_INVALID_ARGUMENT, "op 'einsum': operand {} is None; pass tensors only", j);
    if (j > 0) {
      check_same_device(*c.op, *tensors[0], *tensors[j], "tensors[0]",
                        fmt::format("tensors[{}]", j).c_str());
      if (tensors[j]->dtype != tensors[0]->dtype)
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': expected all operands to have the same dtype, but operand {} is {} "
             "and operand 0 is {}; convert them with to()",
             j, dtype_name(tensors[j]->dtype), dtype_name(tensors[0]->dtype));
    }
  }
  if (tensors[0]->dtype == TSR_BOOL)
    fail(TSR_UNIMPLEMENTED,
         "op 'einsum': not implemented for dtype bool; convert the operands with to()");

  // Ellipsis dims per operand and the widest.
  std::vector<int> ell(static_cast<size_t>(n), 0);
  int E = 0;
  for (int32_t j = 0; j < n; ++j) {
    const Term& term = eq.inputs[j];
    const int32_t nd = tensors[j]->ndim;
    if (term.has_ellipsis) {
      if (term.nlabels() > nd)
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): the number of subscripts in the equation ({}) is more than "
             "the number of dimensions ({}) for operand {}",
             term.nlabels(), nd, j);
      ell[j] = nd - term.nlabels();
      E = std::max(E, ell[j]);
    } else if (term.nlabels() != nd) {
      fail(TSR_INVALID_ARGUMENT,
           "op 'einsum': einsum(): the number of subscripts in the equation ({}) does not match "
           "the number of dimensions ({}) for operand {} and no ellipsis was given",
           term.nlabels(), nd, j);
    }
  }

  // Label counts and the output term.
  std::array<int, kLabels> count{};
  bool any_ellipsis = false;
  for (const Term& term : eq.inputs) {
    any_ellipsis = any_ellipsis || term.has_ellipsis;
    for (int id : term.items)
      if (id != kEllipsis) ++count[id];
  }
  std::vector<int> out_items;
  if (eq.explicit_output) {
    std::array<bool, kLabels> seen{};
    for (int id : eq.output.items) {
      if (id == kEllipsis) {
        out_items.push_back(id);
        continue;
      }
      if (count[id] == 0)
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): output subscript {} does not appear in the equation for any "
             "input operand",
             label_char(id));
      if (seen[id])
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): output subscript {} appears more than once in the output",
             label_char(id));
      seen[id] = true;
      out_items.push_back(id);
    }
  } else {
    if (any_ellipsis) out_items.push_back(kEllipsis);
    for (int id = 0; id < kLabels; ++id)
      if (count[id] == 1) out_items.push_back(id);
  }

  // Global ids: ellipsis dims 0..E-1, label l -> E + l.
  const int nids = E + kLabels;
  std::vector<int64_t> size_of(static_cast<size_t>(nids), -1);
  std::vector<int> out_ids;
  for (int item : out_items) {
    if (item == kEllipsis)
      for (int e = 0; e < E; ++e) out_ids.push_back(e);
    else
      out_ids.push_back(E + item);
  }

  // Per operand: ids per dim, diagonals of repeated labels.
  std::vector<Operand> ops(static_cast<size_t>(n));
  for (int32_t j = 0; j < n; ++j) {
    TensorImpl* t = tensors[j];
    std::vector<int> dim_ids;
    for (int item : eq.inputs[j].items) {
      if (item == kEllipsis)
        for (int e = 0; e < ell[j]; ++e) dim_ids.push_back(E - ell[j] + e);
      else
        dim_ids.push_back(E + item);
    }
    std::vector<int> ids;
    std::vector<int64_t> sizes, strides;
    for (size_t d = 0; d < dim_ids.size(); ++d) {
      auto at = std::find(ids.begin(), ids.end(), dim_ids[d]);
      if (at == ids.end()) {
        ids.push_back(dim_ids[d]);
        sizes.push_back(t->sizes[d]);
        strides.push_back(t->strides[d]);
        continue;
      }
      const size_t k = static_cast<size_t>(at - ids.begin());
      if (sizes[k] != t->sizes[d])
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): subscript {} is repeated for operand {} but the sizes don't "
             "match, {} != {}",
             label_char(dim_ids[d] - E), j, sizes[k], t->sizes[d]);
      strides[k] += t->strides[d];
    }
    if (ids.size() == static_cast<size_t>(t->ndim))
      ops[j].t = TensorRef::borrow(t);
    else
      ops[j].t =
          op::as_strided(t, op::ints(sizes.data(), static_cast<int32_t>(ids.size())),
                         op::ints(strides.data(), static_cast<int32_t>(ids.size())), t->offset);
    ops[j].ids = ids;
    // Sizes must agree or broadcast (1).
    for (size_t d = 0; d < ids.size(); ++d) {
      int64_t& known = size_of[ids[d]];
      const int64_t s = sizes[d];
      if (known == -1 || known == 1) {
        known = s;
      } else if (s != known && s != 1) {
        if (ids[d] < E)
          fail(TSR_INVALID_ARGUMENT,
               "op 'einsum': einsum(): the ellipsis dimensions of operand {} (size {}) do not "
               "broadcast with the size {} seen before",
               j, s, known);
        fail(TSR_INVALID_ARGUMENT,
             "op 'einsum': einsum(): subscript {} has size {} for operand {} which does not "
             "broadcast with previously seen size {}",
             label_char(ids[d] - E), s, j, known);
      }
    }
  }
  // Size-1 dims that broadcast against a larger size are dropped (a view).
  for (Operand& x : ops) {
    std::vector<int> kept;
    std::vector<int64_t> sizes, strides;
    for (size_t d = 0; d < x.ids.size(); ++d) {
      if (x.t->sizes[d] == 1 && size_of[x.ids[d]] != 1) continue;
      kept.push_back(x.ids[d]);
      sizes.push_back(x.t->sizes[d]);
      strides.push_back(x.t->strides[d]);
    }
    if (kept.size() != x.ids.size()) {
      TensorImpl* t = x.t.get();
      x.t = op::as_strided(t, op::ints(sizes.data(), static_cast<int32_t>(kept.size())),
                           op::ints(strides.data(), static_cast<int32_t>(kept.size())), t->offset);
      x.ids = kept;
    }
  }

  // Left-to-right contraction.
  Operand cur = ops[0];
  for (int32_t j = 1; j < n; ++j) {
    std::vector<bool> needed(static_cast<size_t>(nids), false);
    for (int id : out_ids) needed[id] = true;
    for (int32_t k = j + 1; k < n; ++k)
      for (int id : ops[k].ids) needed[id] = true;
    cur = contract(c.runtime, std::move(cur), ops[j], needed, size_of);
  }
  std::vector<int> drop;
  for (int id : cur.ids)
    if (!contains(out_ids, id)) drop.push_back(id);
  sum_out(cur, drop);
  // Output ids missing from cur had size 1 everywhere and were never dropped,
  // so cur holds exactly the output ids.
  c.set_result(permute_to(cur, out_ids));
}

}  // namespace tsr::ops
