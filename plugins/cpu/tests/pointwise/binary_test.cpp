// binary_test.cpp - add/sub (with alpha), mul, div for every dtype their masks
// accept, over contiguous, broadcast (stride 0), transposed, flipped, 0-d,
// empty and in-place operands, against a long double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <random>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

enum class op { add, sub, mul, div };

const char* op_schema_name(op o) {
  switch (o) {
    case op::add:
      return "add.Tensor";
    case op::sub:
      return "sub.Tensor";
    case op::mul:
      return "mul.Tensor";
    default:
      return "div.Tensor";
  }
}

bool accepts(op o, tsr_dtype d) {
  if (o == op::sub) return d != TSR_BOOL;
  if (o == op::div) return is_floating(d) || is_complex(d);
  return true;
}

using cld = std::complex<long double>;

// The reference result of `a o (alpha * b)` for dtype d, as an exact value
// before the final rounding (floating) or already wrapped (integers).
ref_value reference(op o, tsr_dtype d, const ref_value& a, const ref_value& b,
                    const ref_value& alpha) {
  if (d == TSR_BOOL) {
    const bool x = a.re != 0, y = b.re != 0, s = alpha.re != 0;
    return ref_value{static_cast<long double>(o == op::add ? (x || (s && y)) : (x && y)), 0};
  }
  if (is_integer(d)) {
    const auto x = static_cast<uint64_t>(static_cast<int64_t>(a.re));
    const auto y = static_cast<uint64_t>(static_cast<int64_t>(b.re));
    const auto s = static_cast<uint64_t>(static_cast<int64_t>(alpha.re));
    uint64_t r = 0;
    switch (o) {
      case op::add:
        r = x + s * y;
        break;
      case op::sub:
        r = x - s * y;
        break;
      default:
        r = x * y;
        break;
    }
    return ref_convert(ref_value{static_cast<long double>(static_cast<int64_t>(r)), 0}, TSR_INT64,
                       d);
  }
  const cld x(a.re, a.im), y(b.re, b.im), s(alpha.re, alpha.im);
  cld r;
  switch (o) {
    case op::add:
      r = x + s * y;
      break;
    case op::sub:
      r = x - s * y;
      break;
    case op::mul:
      r = x * y;
      break;
    default:
      if (!is_complex(d)) {
        r = cld(a.re / b.re, 0);  // real division keeps IEEE inf/NaN semantics
      } else {
        r = x / y;
      }
      break;
  }
  return ref_convert(ref_value{r.real(), r.imag()}, TSR_COMPLEX128, d);
}

ref_value random_value(tsr_dtype d, std::mt19937_64& rng, bool nonzero) {
  unsigned char bytes[16];
  ref_value v;
  if (d == TSR_BOOL) {
    v.re = static_cast<long double>(rng() & 1);
  } else if (is_integer(d)) {
    v.re = static_cast<long double>(static_cast<int64_t>(rng()));  // wraps into d below
  } else {
    std::uniform_real_distribution<double> u(-8.0, 8.0);
    v.re = u(rng);
    v.im = is_complex(d) ? u(rng) : 0;
    if (nonzero && std::fabs(v.re) < 0.25) v.re += 1;
  }
  encode(d, bytes, v);
  return decode(d, bytes);
}

struct case_layout {
  std::string name;
  std::function<host_tensor(tsr_dtype)> self, other;
  std::vector<int64_t> sizes;
};

std::vector<case_layout> layouts() {
  std::vector<case_layout> out;
  auto contiguous = [](std::vector<int64_t> sizes) {
    return [sizes](tsr_dtype d) { return host_tensor(d, sizes); };
  };
  auto strided = [](std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    return [sizes, strides](tsr_dtype d) { return host_tensor(d, sizes, strides); };
  };
  out.push_back({"contiguous_1d", contiguous({37}), contiguous({37}), {37}});
  out.push_back({"contiguous_3d", contiguous({3, 5, 7}), contiguous({3, 5, 7}), {3, 5, 7}});
  out.push_back({"scalar_other", contiguous({4, 9}), strided({4, 9}, {0, 0}), {4, 9}});
  out.push_back({"scalar_self", strided({33}, {0}), contiguous({33}), {33}});
  out.push_back({"row_broadcast", contiguous({4, 9}), strided({4, 9}, {0, 1}), {4, 9}});
  out.push_back({"column_broadcast", strided({4, 9}, {1, 0}), contiguous({4, 9}), {4, 9}});
  out.push_back({"transposed",
                 [](tsr_dtype d) {
                   return host_tensor::permuted(d, {6, 5}, {1, 0});
                 },
                 contiguous({6, 5}),
                 {6, 5}});
  out.push_back({"flipped", strided({5, 6}, {-6, -1}), strided({5, 6}, {1, 5}), {5, 6}});
  out.push_back({"zero_dim", contiguous({}), contiguous({}), {}});
  out.push_back({"empty", contiguous({0, 4}), contiguous({0, 4}), {0, 4}});
  return out;
}

struct binary_case {
  op o;
  tsr_dtype d;
};

class BinaryOps : public ::testing::TestWithParam<binary_case> {};

std::vector<tsr_scalar> alphas_for(tsr_dtype d) {
  if (d == TSR_BOOL) return {bool_scalar(true), bool_scalar(false)};
  if (is_integer(d)) return {int_scalar(1), int_scalar(3), int_scalar(-2)};
  if (is_complex(d)) return {int_scalar(1), float_scalar(0.5), complex_scalar(0.5, -1.25)};
  return {int_scalar(1), float_scalar(0.5), int_scalar(-3)};
}

ref_value scalar_ref(const tsr_scalar& s) {
  switch (s.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return ref_value{static_cast<long double>(s.v.i), 0};
    case TSR_FLOAT64:
      return ref_value{s.v.f, 0};
    default:
      return ref_value{s.v.c.re, s.v.c.im};
  }
}

// Tolerance for a floating result: the final rounding (half an ulp of the
// result) plus a few roundings of the intermediate terms (alpha * b, complex
// products), which the 16-bit types compute in float32.
long double tolerance(op o, tsr_dtype d, const ref_value& a, const ref_value& b,
                      const ref_value& alpha, const ref_value& expected) {
  if (!is_floating(d) && !is_complex(d)) return 0;
  auto mag = [](const ref_value& v) { return std::hypot(v.re, v.im); };
  long double scale = 0;
  switch (o) {
    case op::add:
    case op::sub:
      scale = mag(a) + mag(alpha) * mag(b);
      break;
    case op::mul:
      scale = mag(a) * mag(b);
      break;
    default:
      scale = mag(a) / mag(b);
      break;
  }
  const bool reduced = d == TSR_FLOAT16 || d == TSR_BFLOAT16;
  const long double compute_u = reduced ? std::ldexp(1.0L, -24) : unit_roundoff(d);
  const long double subnormal = d == TSR_FLOAT16 ? std::ldexp(1.0L, -24) : 0;
  return unit_roundoff(d) * mag(expected) + 8 * compute_u * scale + subnormal;
}

TEST_P(BinaryOps, MatchesTheReferenceOnEveryLayout) {
  const auto [o, d] = GetParam();
  std::mt19937_64 rng(1234 + static_cast<int>(o) * 100 + d);
  const bool has_alpha = o == op::add || o == op::sub;
  for (const case_layout& layout : layouts()) {
    for (const tsr_scalar& alpha :
         has_alpha ? alphas_for(d) : std::vector<tsr_scalar>{int_scalar(1)}) {
      SCOPED_TRACE(layout.name + " alpha " + to_string(scalar_ref(alpha)));
      host_tensor a = layout.self(d), b = layout.other(d);
      for_each_index(layout.sizes, [&](const auto& i) {
        a.set(i, random_value(d, rng, false));
        b.set(i, random_value(d, rng, o == op::div));
      });
      for (bool in_place : {false, true}) {
        host_tensor out = in_place ? a : host_tensor(d, layout.sizes);
        // A self broadcast with stride 0 is not writable: no in-place call.
        if (in_place && (layout.name == "scalar_self" || layout.name == "column_broadcast"))
          continue;
        host_tensor a_before(d, layout.sizes);
        for_each_index(layout.sizes, [&](const auto& i) { a_before.set(i, a.get(i)); });
        std::vector<tsr_value> args = {tensor_value(a), tensor_value(b)};
        if (has_alpha) args.push_back(scalar_value(alpha));
        std::vector<tsr_tensor_desc> outs = {out.desc()};
        const status_ptr s = test_plugin::get().call(op_schema_name(o), args, outs);
        ASSERT_EQ(s, nullptr) << message_of(s);
        for_each_index(layout.sizes, [&](const auto& i) {
          const ref_value expected = reference(o, d, a_before.get(i), b.get(i), scalar_ref(alpha));
          const ref_value got = out.get(i);
          const long double tol =
              tolerance(o, d, a_before.get(i), b.get(i), scalar_ref(alpha), expected);
          ASSERT_TRUE(near_value(got, expected, tol))
              << op_schema_name(o) << " " << name_of(d) << (in_place ? " in place" : "") << ": "
              << to_string(a_before.get(i)) << ", " << to_string(b.get(i)) << " -> got "
              << to_string(got) << " expected " << to_string(expected);
        });
        // Restore self for the next round.
        for_each_index(layout.sizes, [&](const auto& i) { a.set(i, a_before.get(i)); });
      }
    }
  }
}

std::vector<binary_case> all_cases() {
  std::vector<binary_case> out;
  for (op o : {op::add, op::sub, op::mul, op::div}) {
    for (tsr_dtype d : all_dtypes()) {
      if (accepts(o, d)) out.push_back({o, d});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(OpsAndDtypes, BinaryOps, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           std::string name = op_schema_name(info.param.o);
                           name = name.substr(0, name.find('.'));
                           return name + "_" + name_of(info.param.d);
                         });

TEST(Binary, BoolSubIsUnimplemented) {
  host_tensor a(TSR_BOOL, {3});
  std::vector<tsr_tensor_desc> outs = {a.desc()};
  EXPECT_EQ(
      code_of(test_plugin::get().call(
          "sub.Tensor", {tensor_value(a), tensor_value(a), scalar_value(int_scalar(1))}, outs)),
      TSR_UNIMPLEMENTED);
}

TEST(Binary, LargeOperandsUseEveryPathCorrectly) {
  // Above the parallel threshold: contiguous, scalar-broadcast and strided.
  const int64_t rows = 512, cols = 300;
  for (tsr_dtype d : {TSR_FLOAT32, TSR_INT32, TSR_FLOAT16}) {
    host_tensor a(d, {rows, cols});
    host_tensor b_full(d, {rows, cols});
    host_tensor b_scalar(d, {rows, cols}, {0, 0});
    host_tensor b_transposed = host_tensor::permuted(d, {rows, cols}, {1, 0});
    std::mt19937_64 rng(99);
    for_each_index(a.sizes(), [&](const auto& i) {
      a.set(i, random_value(d, rng, false));
      b_full.set(i, random_value(d, rng, false));
      b_transposed.set(i, random_value(d, rng, false));
    });
    b_scalar.set({0, 0}, ref_value{3, 0});
    for (const host_tensor* b : {&b_full, &b_scalar, &b_transposed}) {
      host_tensor out(d, {rows, cols});
      std::vector<tsr_tensor_desc> outs = {out.desc()};
      ASSERT_EQ(
          test_plugin::get().call(
              "add.Tensor", {tensor_value(a), tensor_value(*b), scalar_value(int_scalar(1))}, outs),
          nullptr);
      for_each_index(a.sizes(), [&](const auto& i) {
        const ref_value expected = reference(op::add, d, a.get(i), b->get(i), ref_value{1, 0});
        const long double tol =
            tolerance(op::add, d, a.get(i), b->get(i), ref_value{1, 0}, expected);
        ASSERT_TRUE(near_value(out.get(i), expected, tol))
            << name_of(d) << " at " << i[0] << "," << i[1];
      });
    }
  }
}

}  // namespace
}  // namespace cpu_test
