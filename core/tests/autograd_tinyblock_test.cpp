// autograd_tinyblock_test.cpp - the TinyBlock model, built from ops
// (linear, layer_norm, gelu, dropout's mask, division by a buffer,
// cross_entropy), forward and backward in float32 against PyTorch 1.13's
// values for the same parameters, input and dropout mask
// (conformance/golden/golden_tinyblock.json, from gen_autograd_golden.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::value;

nlohmann::json golden() {
  std::ifstream f(TESSERA_TINYBLOCK_GOLDEN);
  return nlohmann::json::parse(f);
}

Tensor from_json(const nlohmann::json& j) {
  const std::vector<double> values = j["values"].get<std::vector<double>>();
  const std::vector<int64_t> shape = j["shape"].get<std::vector<int64_t>>();
  return tessera::tensor(values, tessera::IntList(shape.data(), shape.size()),
                         tessera::TensorOptions().dtype(Dtype::Float32));
}

void expect_close(const Tensor& actual, const nlohmann::json& expected, const std::string& what) {
  const std::vector<double> a = actual.to_vector<double>();
  const std::vector<double> e = expected["values"].get<std::vector<double>>();
  ASSERT_EQ(a.size(), e.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], e[i], 1e-5 + 1e-5 * std::fabs(e[i])) << what << " [" << i << "]";
}

TEST(TinyBlock, ForwardAndGradientsMatchPyTorch) {
  const nlohmann::json g = golden();
  std::map<std::string, Tensor> p;
  for (const auto& [name, j] : g["params"].items()) {
    p[name] = from_json(j);
    p[name].requires_grad_();
  }
  Tensor x = from_json(g["x"]);
  Tensor mask = from_json(g["mask"]);
  const std::vector<int64_t> target_values = g["target"].get<std::vector<int64_t>>();
  Tensor target = tessera::tensor(target_values, tessera::IntList(4));
  const double keep = 1.0 - g["dropout_p"].get<double>();
  Tensor temperature = tessera::tensor(std::vector<double>{g["temperature"].get<double>()}, {},
                                       tessera::TensorOptions().dtype(Dtype::Float32));

  // h = up(x); h = gelu(norm(h)); h = dropout(h); logits = down(h) / temperature
  Tensor h = tessera::call_op("linear", {value(x), value(p["up.weight"]), value(p["up.bias"])});
  const int64_t normalized = 8;
  h = tessera::call_op("layer_norm", {value(h), value(tessera::IntList(normalized)),
                                      value(p["norm.weight"]), value(p["norm.bias"])});
  h = tessera::call_op("gelu", {value(h), value("none")});
  h = tessera::call_op("div.Scalar",
                       {value(tessera::call_op("mul.Tensor", {value(h), value(mask)})),
                        value(tessera::Scalar(keep))});
  Tensor logits = tessera::call_op(
      "div.Tensor", {value(tessera::call_op(
                         "linear", {value(h), value(p["down.weight"]), value(p["down.bias"])})),
                     value(temperature)});
  Tensor loss = tessera::call_op("cross_entropy_loss", {value(logits), value(target)});
  expect_close(logits, g["logits"], "logits");
  EXPECT_NEAR(loss.item<double>(), g["loss"].get<double>(), 1e-5);
  EXPECT_FALSE(temperature.requires_grad()) << "a buffer takes no gradient";

  loss.backward();
  for (const auto& [name, j] : g["grads"].items()) {
    Tensor grad = p[name].grad();
    ASSERT_TRUE(grad.defined()) << name;
    expect_close(grad, j, "grad of " + name);
  }
  EXPECT_FALSE(temperature.grad().defined());
}

}  // namespace
