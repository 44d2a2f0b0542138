// tensor_probe - PyTorch's facts about views, strides, copies and versions, on Tessera.
//
// Runs the seed's probe through the C++ frontend,
//
//   base = arange(12, float32).reshape({3, 4});  columns = base[:, ::2]
//   transposed = base.t();  flattened = transposed.reshape(-1)
//   cloned = columns.clone();  detached = base.detach()
//
// prints the table and the observations the way the seed shows them, from
// what the runtime reports, and checks every fact against the seed's
// (PyTorch's) answer. Exit status: 0 when all facts match, 1 when one
// differs (each difference is listed on stderr), 2 when a call fails.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Tensor;
using tessera::indexing::None;
using tessera::indexing::Slice;

// Collects the facts that differ from the seed.
class Checker {
 public:
  void expect(bool ok, const std::string& fact) {
    ++checked_;
    if (!ok) mismatches_.push_back(fact);
  }
  void expect_eq(const std::string& actual, const std::string& expected, const std::string& what) {
    expect(actual == expected, what + ": got " + actual + ", the seed has " + expected);
  }
  int checked() const { return checked_; }
  const std::vector<std::string>& mismatches() const { return mismatches_; }

 private:
  int checked_ = 0;
  std::vector<std::string> mismatches_;
};

const char* yes_no(bool value) { return value ? "yes" : "no"; }

struct Row {
  const char* name;
  Tensor tensor;
  // The seed's answer.
  const char* shape;
  const char* stride;
  bool contiguous;
  bool shares;
};

void print_table(const std::vector<Row>& rows, const Tensor& base, Checker& check) {
  std::printf("| name | shape | stride | contiguous | shares base storage |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    const std::string shape = row.tensor.sizes().str();
    const std::string stride = row.tensor.strides().str();
    const bool contiguous = row.tensor.is_contiguous();
    const bool shares = row.tensor.is_same_storage(base);
    // The seed marks the one surprising "no": reshape of a transposed tensor copies.
    const bool reshaped = std::string(row.name).find("reshape") != std::string::npos;
    const std::string shares_text =
        !shares && reshaped ? "**no** (reshape had to copy)" : yes_no(shares);
    std::printf("| %s | %s | %s | %s | %s |\n", row.name, shape.c_str(), stride.c_str(),
                yes_no(contiguous), shares_text.c_str());
    check.expect_eq(shape, row.shape, std::string(row.name) + " shape");
    check.expect_eq(stride, row.stride, std::string(row.name) + " stride");
    check.expect_eq(yes_no(contiguous), yes_no(row.contiguous),
                    std::string(row.name) + " contiguous");
    check.expect_eq(yes_no(shares), yes_no(row.shares),
                    std::string(row.name) + " shares base storage");
  }
}

int run() {
  Checker check;

  const Tensor base = tessera::arange(12, tessera::kFloat32).reshape({3, 4});
  const Tensor columns = base.index({Slice(), Slice(None, None, 2)});
  const Tensor transposed = base.t();
  const Tensor flattened = transposed.reshape(-1);
  const Tensor cloned = columns.clone();
  Tensor detached = base.detach();

  std::printf("base = tessera::arange(12, kFloat32).reshape({3, 4})\n");
  std::printf("transposed = base.t()\n");
  std::printf("flattened = transposed.reshape(-1)\n\n");
  print_table({{"base", base, "(3, 4)", "(4, 1)", true, true},
               {"columns = base[:, ::2]", columns, "(3, 2)", "(4, 2)", false, true},
               {"transposed = base.t()", transposed, "(4, 3)", "(1, 4)", false, true},
               {"flattened = transposed.reshape(-1)", flattened, "(12,)", "(1,)", true, false},
               {"cloned = columns.clone()", cloned, "(3, 2)", "(2, 1)", true, false},
               {"detached = base.detach()", detached, "(3, 4)", "(4, 1)", true, true}},
              base, check);
  std::printf("\n");

  // Expand, then write in place.
  Tensor expanded = tessera::tensor({1.0}).expand(4);
  const std::string expanded_stride = expanded.strides().str();
  std::string rejection = "(accepted)";
  try {
    expanded.add_(1);
  } catch (const tessera::Error& error) {
    rejection = error.what();
  }
  std::printf(
      "- `tensor({1.0}).expand(4)` has stride %s; `expanded.add_(1)` is rejected:\n  \"%s\"\n",
      expanded_stride.c_str(), rejection.c_str());
  check.expect_eq(expanded_stride, "(0,)", "expand(4) stride");
  const std::string overlap =
      "unsupported operation: more than one element of the written-to tensor refers to a "
      "single memory location";
  check.expect(
      rejection.find(overlap) != std::string::npos,
      "expanded.add_(1) rejection: got \"" + rejection + "\", the seed has \"" + overlap + "\"");

  // Mutate through detached: base sees it and the shared version moves 0 -> 1.
  const uint64_t version_before = base.version();
  detached[0][0].fill_(99);
  const uint64_t version_after = base.version();
  const double corner = base[0][0].item<double>();
  std::printf(
      "- Mutating `detached` changes `base[0,0]` (to %g in the probe) and bumps the shared "
      "version\n  counter %llu → %llu.\n",
      corner, static_cast<unsigned long long>(version_before),
      static_cast<unsigned long long>(version_after));
  check.expect(corner == 99.0, "base[0,0] after detached[0,0] = 99: got " + std::to_string(corner));
  check.expect(version_before == 0 && version_after == 1,
               "version counter: got " + std::to_string(version_before) + " → " +
                   std::to_string(version_after) + ", the seed has 0 → 1");

  // Dtype inference.
  const tessera::Dtype integer = tessera::tensor({1, 2, 3}).dtype();
  const tessera::Dtype floating = tessera::tensor({1.0, 2.0}).dtype();
  const tessera::Dtype default_dtype = tessera::empty({1}).dtype();
  std::printf("- Integer data gives %s, float data %s; default dtype %s.\n", tessera::name(integer),
              tessera::name(floating), tessera::name(default_dtype));
  check.expect_eq(tessera::name(integer), "int64", "dtype of integer data");
  check.expect_eq(tessera::name(floating), "float32", "dtype of float data");
  check.expect_eq(tessera::name(default_dtype), "float32", "default dtype");

  // Strides of a doubly strided view and of a 3-d tensor.
  const Tensor x = tessera::empty({4, 5});
  const std::string every_second =
      x.index({Slice(None, None, 2), Slice(None, None, 2)}).strides().str();
  const std::string cube = tessera::empty({2, 3, 4}).strides().str();
  std::printf(
      "- `x[::2, ::2]` of a (4,5) tensor has strides %s; a (2,3,4) tensor has\n  strides %s.\n",
      every_second.c_str(), cube.c_str());
  check.expect_eq(every_second, "(10, 2)", "x[::2, ::2] strides");
  check.expect_eq(cube, "(12, 4, 1)", "(2,3,4) strides");

  // Broadcasting.
  const Tensor row = tessera::tensor({1.0, 2.0, 3.0});
  const Tensor column = tessera::tensor({10.0, 20.0, 30.0}, {3, 1});
  const Tensor sum = row + column;
  const std::string broadcast = sum.sizes().str();
  std::printf("- Broadcasting: %s + %s gives %s.\n", row.sizes().str().c_str(),
              column.sizes().str().c_str(), broadcast.c_str());
  check.expect_eq(broadcast, "(3, 3)", "(3,) + (3,1) shape");
  const std::vector<float> values = sum.to_vector<float>();
  bool values_ok = values.size() == 9;
  for (size_t i = 0; values_ok && i < 9; ++i) {
    values_ok = values[i] == static_cast<float>(10 * (i / 3 + 1) + (i % 3 + 1));
  }
  check.expect(values_ok, "(3,) + (3,1) values: got " + sum.str());

  std::printf("\n");
  if (!check.mismatches().empty()) {
    for (const std::string& mismatch : check.mismatches()) {
      std::fprintf(stderr, "tensor_probe: MISMATCH %s\n", mismatch.c_str());
    }
    std::fprintf(stderr, "tensor_probe: %zu of %d facts differ from PyTorch's\n",
                 check.mismatches().size(), check.checked());
    return 1;
  }
  std::printf("all %d facts match PyTorch's\n", check.checked());
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "tensor_probe: %s: %s\n", error.code_name(), error.what());
    try {
      for (const auto& entry : tessera::load_report()) {
        std::fprintf(stderr, "  plugin load: %s %s: %s\n", entry.path.c_str(),
                     tsr_status_code_name(entry.code), entry.detail.c_str());
      }
    } catch (const std::exception&) {
      // The runtime itself is unavailable; the first message says why.
    }
    return 2;
  }
}
