#include "registry/registry.h"

#include <algorithm>

#include "registry/op_table.h"
#include "util/error.h"

namespace tsr {

void bind_schema_defaults(Schema& schema) {
  for (SchemaArg& a : schema.args) {
    if (a.default_value.tag == TSR_VALUE_INT_LIST) a.default_value.u.ints = a.default_ints.data();
    // Idempotent: the schema text (default_text) is never changed here.
    if (a.default_value.tag == TSR_VALUE_STRING) a.default_value.u.str = a.default_str.c_str();
  }
}

namespace {

// The positions of the out= schema's write arguments, in order.
std::vector<int32_t> out_positions(const Schema& s) {
  std::vector<int32_t> outs;
  for (size_t i = 0; i < s.args.size(); ++i) {
    if (s.args[i].is_write) outs.push_back(static_cast<int32_t>(i));
  }
  return outs;
}

// Fills def.functional_args for a TSR_OUT op whose functional is `functional`
// (Note [Derived out= overloads], ops/out_variant.h); throws INTERNAL naming
// both schemas when an argument cannot be matched or the outs do not
// correspond to the functional's returns.
void bind_out_variant(OpDef& def, const OpDef& functional) {
  const Schema& s = def.schema;
  const Schema& f = functional.schema;
  auto refuse = [&](const std::string& why) {
    throw Error(TSR_INTERNAL, fmt::format("TSR_OUT op '{}' cannot derive from '{}': {}", def.name,
                                          functional.name, why));
  };
  const std::vector<int32_t> outs = out_positions(s);
  if (outs.empty()) refuse("it has no Tensor(a!) out argument");
  if (outs.size() != f.returns.size())
    refuse(fmt::format("it has {} out arguments but the functional returns {}", outs.size(),
                       f.returns.size()));
  def.functional = functional.id;
  def.functional_args.clear();
  for (const SchemaArg& fa : f.args) {
    int32_t where = kOutArgDefault;
    for (size_t i = 0; i < s.args.size(); ++i) {
      if (!s.args[i].is_write && s.args[i].name == fa.name) where = static_cast<int32_t>(i);
    }
    if (where >= 0) {
      if (s.args[where].kind != fa.kind)
        refuse(fmt::format("argument '{}' is {} here but {} in the functional", fa.name,
                           s.args[where].type_text, fa.type_text));
    } else if (fa.name == "dtype" && fa.kind == ArgKind::kScalarType) {
      where = kOutArgDtype;
    } else if (fa.name == "device" && fa.kind == ArgKind::kDevice) {
      where = kOutArgDevice;
    } else if (!fa.has_default) {
      refuse(
          fmt::format("the functional's argument '{}' has no default and no counterpart", fa.name));
    }
    def.functional_args.push_back(where);
  }
}

OpFunctions g_functions;  // Note [Op implementations are installed]

}  // namespace

bool install_op_functions(const OpFunctions& functions) noexcept {
  g_functions = functions;
  return true;
}

OpFn custom_op_function() {
  if (g_functions.custom == nullptr)
    throw Error(TSR_INTERNAL,
                "no op functions are installed: libtessera was built without its ops layer "
                "(ops/op_functions.cpp installs them at load)");
  return g_functions.custom;
}

Registry::Registry() {
  const std::vector<OpRow>& rows = op_table();
  if (g_functions.by_id == nullptr || g_functions.count != rows.size())
    throw Error(TSR_INTERNAL,
                fmt::format("the op functions installed cover {} ops but the registry has {}: "
                            "libtessera was built without its ops layer, or from mismatched "
                            "op definition files (ops/op_functions.cpp)",
                            g_functions.count, rows.size()));
  ops_.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const OpRow& r = rows[i];
    if (static_cast<size_t>(r.id) != i)
      throw Error(TSR_INTERNAL,
                  fmt::format("op table row {} ('{}') is out of OpId order", i, r.schema));
    OpDef def;
    def.id = r.id;
    def.schema = parse_schema(r.schema);
    def.name = def.schema.full_name();
    def.canonical = def.schema.canonical();
    def.mutated = def.schema.mutated_arg();
    def.kind = r.kind;
    def.fn = g_functions.by_id[i];
    def.kernel_op = r.kernel_op;
    def.code = r.code;
    if (by_name_.count(def.name))
      throw Error(TSR_INTERNAL, fmt::format("op '{}' is defined twice in the op table", def.name));
    by_name_[def.name] = static_cast<uint32_t>(def.id);
    ops_.push_back(std::move(def));
  }
  // Defaults that point into the schema need the final addresses.
  for (OpDef& def : ops_) {
    bind_schema_defaults(def.schema);
    by_name_[def.name] = static_cast<uint32_t>(def.id);
    if (def.schema.overload.empty()) by_name_[def.schema.name] = static_cast<uint32_t>(def.id);
  }
  // TSR_OUT ops find their functional's arguments by name (out_variant.h).
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].functional != OpId::kNone)
      bind_out_variant(ops_[i], ops_[static_cast<size_t>(rows[i].functional)]);
  }
  // A bare name finds its first overload when there is no default overload ("add" -> add.Tensor).
  for (const OpDef& def : ops_)
    if (!by_name_.count(def.schema.name)) by_name_[def.schema.name] = static_cast<uint32_t>(def.id);
}

const Registry& Registry::get() {
  static const Registry* registry = new Registry();  // never destroyed: used at exit
  return *registry;
}

const OpDef* Registry::find(std::string_view name) const {
  std::string key(name);
  if (key.rfind("aten::", 0) == 0) key = key.substr(6);
  auto it = by_name_.find(key);
  return it == by_name_.end() ? nullptr : &ops_[it->second];
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::vector<std::string> Registry::suggest(std::string_view name, size_t n) const {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const OpDef& def : ops_) scored.emplace_back(edit_distance(name, def.name), def.name);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < n; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace tsr
