// dtype_sweep_test.cpp - Ops/GoldenDtype: every golden value case again in the
// other dtypes of its kind, on the conformance suite's device under test.
//
// Note [Dtype sweep]
// ~~~~~~~~~~~~~~~~~~
// The golden cases exercise each op in the dtypes PyTorch's test chose
// (mostly float32 and int64); a device claims more. GoldenDtype reruns every
// value case (not error cases, not ops that write their inputs) with its
// value inputs - the tensors of the case's first non-bool dtype `from`,
// except index-like arguments (index, indices, sorter, target, offsets) -
// made in each other dtype `to` of the same kind: float16, bfloat16, float32,
// float64 for floating cases; uint8, int8, int16, int32, int64 for integer
// ones. Case id ops/<case>__as_<to>. A dtype the device does not claim is a
// skip. What the result is compared with:
//  - floating `to` at least as wide as `from`, and every integer `to` (an
//    integer narrowing runs only when the inputs fit): PyTorch's golden
//    output, with the tolerance of the golden dtype (its rounding dominates);
//    integer results compare exactly after wrapping the golden value to the
//    result's width (two's complement, as the device computes);
//  - floating `to` narrower than `from`: the float64 reference - the same op
//    on cpu:0 in float64, on the inputs rounded to `to` - with `to`'s
//    tolerance applied normwise, atol = rtol * max|expected|: a result
//    computed in `to` carries intermediate roundings of the output's scale,
//    so an element that cancels to near zero is judged on that scale.
// The result dtype must be `to` where the golden result has `from`'s dtype
// (or, for integer cases, the golden int64 of ops that accumulate integers
// in int64), and the golden dtype otherwise.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "conformance/golden/harness.h"
#include "conformance/suite/target.h"

namespace tessera::golden {
namespace {

struct DtypeParam {
  int index;
  tsr_dtype from;
  tsr_dtype to;
};

bool is_int(tsr_dtype d) {
  return d == TSR_UINT8 || d == TSR_INT8 || d == TSR_INT16 || d == TSR_INT32 || d == TSR_INT64;
}

int bit_width(tsr_dtype d) {
  switch (d) {
    case TSR_UINT8:
    case TSR_INT8:
      return 8;
    case TSR_INT16:
    case TSR_FLOAT16:
    case TSR_BFLOAT16:
      return 16;
    case TSR_INT32:
    case TSR_FLOAT32:
      return 32;
    default:
      return 64;
  }
}

// `v` wrapped to the width of integer dtype `d` (bool: v != 0).
int64_t wrap_to(int64_t v, tsr_dtype d) {
  const auto u = static_cast<uint64_t>(v);
  switch (d) {
    case TSR_BOOL:
      return v != 0;
    case TSR_UINT8:
      return static_cast<int64_t>(u & 0xffu);
    case TSR_INT8:
      return static_cast<int8_t>(static_cast<uint8_t>(u));
    case TSR_INT16:
      return static_cast<int16_t>(static_cast<uint16_t>(u));
    case TSR_INT32:
      return static_cast<int32_t>(static_cast<uint32_t>(u));
    default:
      return v;
  }
}

bool fits(int64_t v, tsr_dtype d) { return wrap_to(v, d) == v; }

// Significand bits (float) or width (integer): `to` is narrower than `from`
// when it holds fewer (bfloat16 is narrower than float16).
int precision_bits(tsr_dtype d) {
  switch (d) {
    case TSR_FLOAT16:
      return 11;
    case TSR_BFLOAT16:
      return 8;
    case TSR_FLOAT32:
      return 24;
    case TSR_FLOAT64:
      return 53;
    default:
      return bit_width(d);
  }
}

// Cases whose expected value depends on the dtype's range, not only on the
// values: the golden output is right for the golden dtype alone.
const std::pair<const char*, const char*> kDtypeRangeDependent[] = {
    {"nan_to_num__default", "inf becomes the largest value of the dtype"},
    {"nan_to_num__float16", "inf becomes the largest value of the dtype"},
};

// The result dtype of `op` for value inputs of dtype `to` whose golden case
// (in dtype `from`) gave `golden`.
tsr_dtype expected_result_dtype(const std::string& op, tsr_dtype from, tsr_dtype to,
                                tsr_dtype golden) {
  // PyTorch's legacy rule: any/all of uint8 give uint8, of any other dtype bool.
  if (op.rfind("any", 0) == 0 || op.rfind("all", 0) == 0)
    return to == TSR_UINT8 ? TSR_UINT8 : TSR_BOOL;
  return golden == from ? to : golden;
}

// Tensors of the case's top-level arguments and lists, each with its
// argument index.
std::vector<std::pair<size_t, const json*>> tensor_args(const json& spec) {
  std::vector<std::pair<size_t, const json*>> out;
  const json& args = spec.at("args");
  for (size_t i = 0; i < args.size(); ++i) {
    const json& a = args[i];
    if (!a.is_object() || a.size() != 1) continue;
    if (a.contains("tensor")) out.emplace_back(i, &a.at("tensor"));
    if (a.contains("tensors"))
      for (const json& t : a.at("tensors"))
        if (!t.is_null()) out.emplace_back(i, &t);
  }
  return out;
}

std::vector<DtypeParam> dtype_params() {
  std::vector<DtypeParam> out;
  const GoldenFile& f = golden_file();
  if (!f.error.empty()) return out;  // Ops/Golden reports the file
  constexpr tsr_dtype kFloats[] = {TSR_FLOAT16, TSR_BFLOAT16, TSR_FLOAT32, TSR_FLOAT64};
  constexpr tsr_dtype kInts[] = {TSR_UINT8, TSR_INT8, TSR_INT16, TSR_INT32, TSR_INT64};
  for (size_t i = 0; i < f.cases.size(); ++i) {
    const json& spec = f.cases[i];
    const json& expect = spec.at("expect");
    if (expect.value("raises", false) || expect.contains("mutated")) continue;
    std::vector<tsr_dtype> dtypes;
    for (const auto& [arg, t] : tensor_args(spec))
      dtypes.push_back(dtype_named(t->at("dtype").get<std::string>()));
    tsr_dtype from = TSR_BOOL;
    for (tsr_dtype d : dtypes)
      if (from == TSR_BOOL && d != TSR_BOOL) from = d;
    if (is_float(from)) {
      bool mixed = false;  // type promotion cases keep their dtypes
      for (tsr_dtype d : dtypes) mixed |= is_float(d) && d != from;
      if (mixed) continue;
      for (tsr_dtype to : kFloats)
        if (to != from) out.push_back({static_cast<int>(i), from, to});
    } else if (is_int(from)) {
      for (tsr_dtype to : kInts)
        if (to != from) out.push_back({static_cast<int>(i), from, to});
    }
  }
  return out;
}

std::string dtype_param_name(const testing::TestParamInfo<DtypeParam>& info) {
  return golden_file().cases[static_cast<size_t>(info.param.index)].at("name").get<std::string>() +
         "__as_" + tsr_dtype_name(info.param.to);
}

// Whether argument declaration `decl` ("Tensor index", "Tensor? sorter=None")
// names an index-like tensor, which keeps its dtype.
bool index_like(const std::string& decl) {
  std::string name = decl.substr(0, decl.find('='));
  name = name.substr(name.rfind(' ') + 1);
  static const char* const kNames[] = {"index", "indices", "sorter", "target", "offsets"};
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

struct SweepScope {
  SweepScope(tsr_dtype from, tsr_dtype to) {
    sweep() = Sweep{};
    sweep().active = true;
    sweep().from = from;
    sweep().to = to;
  }
  ~SweepScope() {
    sweep() = Sweep{};
    sweep_value_args().clear();
  }
};

// Calls `op` and returns its tensor results; a failed call throws.
std::vector<TensorPtr> call_op(const tsr_op* op, Call& call, const std::string& what) {
  constexpr size_t kMaxOuts = 16;
  tsr_value outs[kMaxOuts] = {};
  tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts);
  std::vector<TensorPtr> results;
  for (const tsr_value& out : outs)
    if (out.tag == TSR_VALUE_TENSOR && out.u.tensor != nullptr) results.emplace_back(out.u.tensor);
  check(status, what);
  return results;
}

class GoldenDtype : public testing::TestWithParam<DtypeParam> {};

TEST_P(GoldenDtype, Case) {
  const DtypeParam p = GetParam();
  worst_error() = 0;
  const json& spec = golden_file().cases[static_cast<size_t>(p.index)];
  const std::string op_name = spec.at("op").get<std::string>();
  SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ") with its " +
               tsr_dtype_name(p.from) + " inputs as " + tsr_dtype_name(p.to));
  try {
    if (!(tessera::conformance::properties().dtypes & TSR_DTYPE_BIT(p.to)))
      GTEST_SKIP() << "the device does not claim " << tsr_dtype_name(p.to);
    for (const auto& [name, why] : kDtypeRangeDependent)
      if (spec.at("name").get<std::string>() == name) GTEST_SKIP() << why;
    const tsr_op* op = nullptr;
    check(tsr_op_find(runtime(), op_name.c_str(), &op), "tsr_op_find");
    const std::vector<std::string> decls = schema_args(op);
    std::vector<bool> value_args;
    for (size_t i = 0; i < spec.at("args").size(); ++i)
      value_args.push_back(is_float(p.from) || i >= decls.size() || !index_like(decls[i]));
    if (is_int(p.to)) {
      for (const auto& [arg, t] : tensor_args(spec)) {
        if (!value_args[arg] || dtype_named(t->at("dtype").get<std::string>()) != p.from) continue;
        for (const json& v : t->at("data"))
          if (!fits(v.get<int64_t>(), p.to))
            GTEST_SKIP() << "input value " << v.get<int64_t>() << " does not fit "
                         << tsr_dtype_name(p.to);
      }
    }
    SweepScope scope(p.from, p.to);
    sweep_value_args() = value_args;
    Call call;
    build_args(spec, call);
    place_factory_on_target(op, call);
    const std::vector<TensorPtr> results = call_op(op, call, "the call");

    const json& outputs = spec.at("expect").at("outputs");
    ASSERT_EQ(results.size(), outputs.size()) << "number of tensor results";
    const bool loose = spec.value("tolerance", std::string()) == "loose";
    const bool narrowing = is_float(p.from) && precision_bits(p.to) < precision_bits(p.from);
    std::vector<TensorPtr> reference;
    if (narrowing) {
      sweep().reference = true;
      Call ref_call;
      build_args(spec, ref_call);
      reference = call_op(op, ref_call, "the float64 reference on cpu:0");
      sweep().reference = false;
      ASSERT_EQ(reference.size(), results.size()) << "number of reference results";
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].is_null()) continue;
      const HostTensor actual = read(results[i].get());
      const tsr_dtype golden = dtype_named(outputs[i].at("dtype").get<std::string>());
      const tsr_dtype want = expected_result_dtype(op_name, p.from, p.to, golden);
      if (actual.dtype != want && !(is_int(p.from) && actual.dtype == golden)) {
        ADD_FAILURE() << "result " << i << ": dtype " << tsr_dtype_name(actual.dtype)
                      << ", expected " << tsr_dtype_name(want);
        continue;
      }
      if (is_float(actual.dtype) != is_float(golden)) continue;  // reported above
      std::vector<int64_t> shape = int_list(outputs[i].at("shape"));
      std::vector<double> floats;
      std::vector<int64_t> ints;
      Tolerance tol{0, 0};
      if (narrowing) {
        const HostTensor ref = read(reference[i].get());
        floats = ref.floats;
        ints = ref.ints;
        shape = ref.shape;
        tol = loose ? tessera::conformance::loose(actual.dtype)
                    : tessera::conformance::tolerance(actual.dtype);
      } else {
        for (const json& v : outputs[i].at("data")) {
          if (is_float(golden)) {
            floats.push_back(round_to(number(v), golden));
          } else {
            ints.push_back(wrap_to(v.get<int64_t>(), actual.dtype));
          }
        }
        // Golden integers computed in a narrower `from` wrapped there: compare
        // the result's low bits, wrapped the same way (two's complement ring
        // ops commute with the wrap; other ops only meet it when the golden
        // did not overflow, and then the wrap changes nothing).
        if (golden == p.from && is_int(golden) && is_int(actual.dtype) &&
            bit_width(actual.dtype) > bit_width(golden)) {
          HostTensor low = actual;
          for (int64_t& v : low.ints) v = wrap_to(v, golden);
          for (size_t k = 0; k < ints.size(); ++k)
            ints[k] = outputs[i].at("data")[k].get<int64_t>();
          const std::string why = compare_values(low, shape, floats, ints, tol, false);
          if (!why.empty())
            ADD_FAILURE() << "result " << i << " (wrapped to " << tsr_dtype_name(golden)
                          << "): " << why;
          continue;
        }
        tol = loose ? tessera::conformance::loose(golden) : tessera::conformance::tolerance(golden);
      }
      const std::string why = compare_values(actual, shape, floats, ints, tol, narrowing);
      if (!why.empty()) ADD_FAILURE() << "result " << i << ": " << why;
    }
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "bad golden case: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GoldenDtype, testing::ValuesIn(dtype_params()), dtype_param_name);

}  // namespace
}  // namespace tessera::golden
