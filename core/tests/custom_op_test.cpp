// custom_op_test.cpp - custom operators through the C ABI (Note [Custom
// operators] in tessera.h) and the custom-operator program: asquare::affine(x, scale,
// shift) = scale * x + shift with a real kernel, a shape rule and a
// derivative; one opaque op to observers; shape-only on meta; gradients
// correct; plugin-defined ops with a derivative op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "frontend_test_support.h"
#include "tessera/autograd.hpp"
#include "tessera/plugin.h"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::value;
namespace ag = tessera::autograd;
using tsr_test::error_of;
const auto take = tsr_test::status_message;

Tensor f64(const std::vector<double>& v, tessera::IntList shape) {
  return tessera::tensor(v, shape, tessera::TensorOptions().dtype(Dtype::Float64));
}

tsr_value float_value(double f) {
  tsr_value v{};
  v.tag = TSR_VALUE_FLOAT;
  v.u.f = f;
  return v;
}

// A shape rule: one result shaped and typed like tensor argument `Arg`.
template <int Arg>
tsr_status* like_arg(void*, const tsr_value* args, int32_t, int32_t, int32_t* dtypes,
                     int32_t* ndims, int64_t* sizes) {
  const tsr_tensor_desc& x = *args[Arg].u.desc;
  dtypes[0] = x.dtype;
  ndims[0] = x.ndim;
  for (int32_t d = 0; d < x.ndim; ++d) sizes[d] = x.sizes[d];
  return nullptr;
}

// ---- asquare::affine, written the way an application would ----------------

// Result: x's shape and dtype. Rejects non-floating x, naming the argument.
tsr_status* affine_shape(void*, const tsr_value* args, int32_t nargs, int32_t nouts,
                         int32_t* out_dtypes, int32_t* out_ndims, int64_t* out_sizes) {
  if (nargs != 3 || nouts != 1) return tsr_status_create(TSR_INTERNAL, "affine: bad frame");
  const tsr_tensor_desc* x = args[0].u.desc;
  if (x->data != nullptr || x->buffer != nullptr)
    return tsr_status_create(TSR_INTERNAL, "affine: the shape rule saw tensor data");
  if (x->dtype != TSR_FLOAT32 && x->dtype != TSR_FLOAT64)
    return tsr_status_create(TSR_INVALID_ARGUMENT,
                             "argument 'x' must be float32 or float64 (cast it with to())");
  out_dtypes[0] = x->dtype;
  out_ndims[0] = x->ndim;
  for (int32_t d = 0; d < x->ndim; ++d) out_sizes[d] = x->sizes[d];
  return nullptr;
}

template <typename T>
void affine_loop(const tsr_tensor_desc& x, const tsr_tensor_desc& out, double scale, double shift) {
  int64_t numel = 1;
  for (int32_t d = 0; d < out.ndim; ++d) numel *= out.sizes[d];
  int64_t index[TSR_MAX_DIMS] = {};
  for (int64_t n = 0; n < numel; ++n) {
    int64_t xi = 0, oi = 0;
    for (int32_t d = 0; d < out.ndim; ++d) {
      xi += index[d] * x.strides[d];
      oi += index[d] * out.strides[d];
    }
    static_cast<T*>(out.data)[oi] =
        static_cast<T>(scale * static_cast<const T*>(x.data)[xi] + shift);
    for (int32_t d = out.ndim - 1; d >= 0; --d) {
      if (++index[d] < out.sizes[d]) break;
      index[d] = 0;
    }
  }
}

int g_kernel_calls = 0;

tsr_status* affine_cpu_kernel(void*, const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs,
                              int32_t nouts) {
  if (nargs != 3 || nouts != 1) return tsr_status_create(TSR_INTERNAL, "affine: bad frame");
  ++g_kernel_calls;
  const tsr_tensor_desc& x = *args[0].u.desc;
  if (x.dtype == TSR_FLOAT32)
    affine_loop<float>(x, outs[0], args[1].u.f, args[2].u.f);
  else
    affine_loop<double>(x, outs[0], args[1].u.f, args[2].u.f);
  return nullptr;
}

// d/dx (scale x + shift) = scale: grad * scale through the registry's mul.
tsr_status* affine_backward(void*, const tsr_backward_call* call) {
  if (!call->needs_grad[0]) return nullptr;
  const tsr_op* mul = nullptr;
  if (tsr_status* st = tsr_op_find(tessera::default_runtime(), "mul.Scalar", &mul)) return st;
  tsr_value args[2] = {};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = call->grad_outputs[0];
  args[1].tag = TSR_VALUE_SCALAR;
  args[1].u.scalar.kind = TSR_FLOAT64;
  args[1].u.scalar.v.f = call->args[1].u.f;
  tsr_value out{};
  if (tsr_status* st = tsr_op_call(mul, args, 2, &out, 1)) return st;
  call->grad_inputs[0] = out.u.tensor;
  return nullptr;
}

const char* const kAffineSchema = "asquare::affine(Tensor x, float scale, float shift) -> Tensor";

// Defined once per process (the default runtime keeps it).
const tsr_op* affine_op() {
  static const tsr_op* op = [] {
    tsr_op_def def{};
    def.struct_size = sizeof def;
    def.schema = kAffineSchema;
    def.shape = affine_shape;
    def.backward = affine_backward;
    const tsr_op* out = nullptr;
    tessera::check(tsr_op_define(tessera::default_runtime(), &def, &out));
    tessera::check(tsr_op_register_kernel(out, "cpu",
                                          TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64),
                                          affine_cpu_kernel, nullptr));
    return out;
  }();
  return op;
}

Tensor affine(const Tensor& x, double scale, double shift) {
  tsr_value args[3] = {value(x), float_value(scale), float_value(shift)};
  return tessera::detail::call(affine_op(), args, 3);
}

// Records every op name the dispatcher sees while alive.
class Recorder {
 public:
  Recorder() {
    tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), &Recorder::on, this));
  }
  ~Recorder() { tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr); }
  std::vector<std::string> names() {
    std::lock_guard<std::mutex> lock(mu_);
    return names_;
  }

 private:
  static void on(const tsr_op* op, void* self) {
    auto* r = static_cast<Recorder*>(self);
    std::lock_guard<std::mutex> lock(r->mu_);
    r->names_.push_back(tsr_op_name(op));
  }
  std::mutex mu_;
  std::vector<std::string> names_;
};

// ---------------------------------------------------------------------------

TEST(CustomOp, AffineComputesWithItsKernelOnStridedInputs) {
  Tensor base =
      tessera::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, tessera::TensorOptions().dtype(Dtype::Float32));
  Tensor x = base.transpose(0, 1);  // non-contiguous (3, 2)
  g_kernel_calls = 0;
  Tensor y = affine(x, 2.5, -1.0);
  EXPECT_EQ(g_kernel_calls, 1);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(y.dtype(), Dtype::Float32);
  const std::vector<float> got = y.to_vector<float>();
  const double xs[6] = {1, 4, 2, 5, 3, 6};  // x row-major
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(got[static_cast<size_t>(i)], 2.5 * xs[i] - 1.0);
  // The op is found by name like any other, with its canonical schema.
  const tsr_op* found = nullptr;
  ASSERT_EQ(take(tsr_op_find(tessera::default_runtime(), "asquare::affine", &found)), "");
  EXPECT_EQ(found, affine_op());
  EXPECT_STREQ(tsr_op_schema(found), kAffineSchema);
  bool has = false;
  ASSERT_EQ(take(tsr_op_has_kernel(found, tsr_device{TSR_DEVICE_CPU, 0}, TSR_FLOAT32, &has)), "");
  EXPECT_TRUE(has);
  ASSERT_EQ(take(tsr_op_has_kernel(found, tsr_device{TSR_DEVICE_CPU, 0}, TSR_INT32, &has)), "");
  EXPECT_FALSE(has);
}

TEST(CustomOp, ObserversSeeOneOpaqueCall) {
  Tensor x = f64({1, 2, 3}, {3});
  affine_op();
  std::vector<std::string> seen;
  {
    Recorder rec;
    Tensor y = affine(x, 2.0, 1.0);
    seen = rec.names();
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"asquare::affine"}));
}

TEST(CustomOp, RunsShapeOnlyOnTheMetaDevice) {
  Tensor x = tessera::empty({4, 5}, tessera::TensorOptions().dtype(Dtype::Float32).device("meta"));
  g_kernel_calls = 0;
  Tensor y = affine(x, 3.0, 0.0);
  EXPECT_EQ(g_kernel_calls, 0);
  EXPECT_EQ(y.device().str(), "meta:0");
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{4, 5}));
  // Autograd runs on meta too: the derivative's ops run shape-only.
  Tensor xm = tessera::empty({4, 5}, tessera::TensorOptions().dtype(Dtype::Float32).device("meta"));
  xm.requires_grad_();
  Tensor g = ag::grad({affine(xm, 3.0, 0.0).sum()}, {xm})[0];
  EXPECT_EQ(g.device().str(), "meta:0");
  EXPECT_EQ(g.sizes(), (std::vector<int64_t>{4, 5}));
}

TEST(CustomOp, ShapeRuleErrorsNameTheOp) {
  Tensor i = tessera::tensor({1, 2}, {2}, tessera::TensorOptions().dtype(Dtype::Int64));
  const std::string m = error_of([&] { affine(i, 1.0, 0.0); });
  EXPECT_NE(m.find("asquare::affine"), std::string::npos) << m;
  EXPECT_NE(m.find("argument 'x' must be float32 or float64"), std::string::npos) << m;
}

TEST(CustomOp, GradientsAreCorrect) {
  Tensor x = f64({0.5, -1.0, 2.0, 3.0}, {2, 2});
  x.requires_grad_();
  Tensor y = affine(x, 1.5, 0.25);
  EXPECT_EQ(y.grad_fn_name(), "asquare::AffineBackward0");
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1.5, 1.5, 1.5, 1.5}));
  // gradcheck through a chain, and second order (the callback's mul is recorded).
  Tensor a = f64({0.3, -0.7, 1.1}, {3});
  a.requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return affine(in[0] * in[0], -2.0, 0.5); };
  EXPECT_EQ(ag::gradcheck(fn, {a}), "");
  EXPECT_EQ(ag::gradgradcheck(fn, {a}), "");
}

TEST(CustomOp, SeedObservationLinearAffineSquareMean) {
  // The custom-operator program: forward + backward of linear, the custom op, square and
  // mean, as an operator-recording observer sees it.
  Tensor x = tessera::tensor({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, {2, 3},
                             tessera::TensorOptions().dtype(Dtype::Float32));
  Tensor w = tessera::tensor({1.0, -1.0, 0.5, 2.0, 0.0, -0.5, 0.25, 1.0, 1.0, -2.0, 0.1, 0.3},
                             {4, 3}, tessera::TensorOptions().dtype(Dtype::Float32));
  Tensor b =
      tessera::tensor({0.1, 0.2, 0.3, 0.4}, {4}, tessera::TensorOptions().dtype(Dtype::Float32));
  w.requires_grad_();
  b.requires_grad_();
  affine_op();
  std::vector<std::string> fwd, bwd;
  {
    Recorder rec;
    Tensor h = tessera::call_op("linear", {value(x), value(w), value(b)});
    Tensor y = affine(h, 2.0, 0.5);
    Tensor loss = tessera::call_op("mean", {value(tessera::call_op("square", {value(y)}))});
    fwd = rec.names();
    loss.backward();
    bwd = rec.names();
    bwd.erase(bwd.begin(), bwd.begin() + static_cast<ptrdiff_t>(fwd.size()));
  }
  std::map<std::string, int> distinct;
  std::string listing;
  for (const auto& n : fwd) {
    ++distinct[n];
    listing += "  fwd " + n + "\n";
  }
  for (const auto& n : bwd) {
    ++distinct[n];
    listing += "  bwd " + n + "\n";
  }
  std::printf(
      "linear + asquare::affine + square + mean, forward and backward: %zu dispatches, "
      "%zu distinct overloads\n%s",
      fwd.size() + bwd.size(), distinct.size(), listing.c_str());
  // Forward: linear decomposes (transpose + addmm on a 2-d input, as in
  // PyTorch); the custom op is one opaque call; then square and mean.
  ASSERT_GE(fwd.size(), 5u);
  EXPECT_EQ(fwd.front(), "linear");
  EXPECT_NE(std::find(fwd.begin(), fwd.end(), "addmm"), fwd.end()) << listing;
  EXPECT_EQ(std::count(fwd.begin(), fwd.end(), "asquare::affine"), 1) << listing;
  auto pos = [&](const std::vector<std::string>& v, const char* n) {
    return std::find(v.begin(), v.end(), n) - v.begin();
  };
  EXPECT_LT(pos(fwd, "addmm"), pos(fwd, "asquare::affine"));
  EXPECT_LT(pos(fwd, "asquare::affine"), pos(fwd, "square"));
  EXPECT_LT(pos(fwd, "square"), pos(fwd, "mean"));
  // Backward: the custom op's derivative ran as registry ops (its mul), and
  // the addmm gradients are matrix products.
  EXPECT_EQ(std::count(bwd.begin(), bwd.end(), "asquare::affine"), 0) << listing;
  EXPECT_NE(std::find(bwd.begin(), bwd.end(), "mul.Scalar"), bwd.end()) << listing;
  EXPECT_NE(std::find(bwd.begin(), bwd.end(), "mm"), bwd.end()) << listing;
  // The gradients against float64 math: loss = mean((2 (x w^T + b) + 0.5)^2).
  const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
  const std::vector<float> bv = b.to_vector<float>();
  std::vector<double> gw(12, 0.0), gb(4, 0.0);
  for (int r = 0; r < 2; ++r)
    for (int o = 0; o < 4; ++o) {
      double h = bv[static_cast<size_t>(o)];
      for (int k = 0; k < 3; ++k)
        h += static_cast<double>(xv[static_cast<size_t>(r * 3 + k)]) *
             wv[static_cast<size_t>(o * 3 + k)];
      const double y = 2.0 * h + 0.5;
      const double dh = 2.0 * y / 8.0 * 2.0;  // d mean / dy * dy/dh
      gb[static_cast<size_t>(o)] += dh;
      for (int k = 0; k < 3; ++k)
        gw[static_cast<size_t>(o * 3 + k)] += dh * xv[static_cast<size_t>(r * 3 + k)];
    }
  const std::vector<float> gwv = w.grad().to_vector<float>(), gbv = b.grad().to_vector<float>();
  for (size_t i = 0; i < 12; ++i) EXPECT_NEAR(gwv[i], gw[i], 1e-5) << i;
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(gbv[i], gb[i], 1e-5) << i;
}

TEST(CustomOp, NoKernelNamesOpDeviceAndDtype) {
  tsr_op_def def{};
  def.struct_size = sizeof def;
  def.schema = "asquare::nokernel(Tensor x) -> Tensor";
  def.shape = like_arg<0>;
  const tsr_op* op = nullptr;
  ASSERT_EQ(take(tsr_op_define(tessera::default_runtime(), &def, &op)), "");
  Tensor x = f64({1, 2}, {2});
  tsr_value args[1] = {value(x)};
  const std::string m = error_of([&] { tessera::detail::call(op, args, 1); });
  EXPECT_NE(m.find("asquare::nokernel"), std::string::npos) << m;
  EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
  EXPECT_NE(m.find("float64"), std::string::npos) << m;
  // Meta still works: shape only.
  Tensor xm = tessera::empty({3}, tessera::TensorOptions().device("meta"));
  tsr_value margs[1] = {value(xm)};
  EXPECT_EQ(tessera::detail::call(op, margs, 1).sizes(), (std::vector<int64_t>{3}));
  // Without a derivative, backward fails naming the op.
  Tensor xg = tessera::empty({3}, tessera::TensorOptions().device("meta"));
  xg.requires_grad_();
  tsr_value gargs[1] = {value(xg)};
  Tensor yg = tessera::detail::call(op, gargs, 1);
  const std::string mb = error_of([&] { ag::grad({yg.sum()}, {xg}); });
  EXPECT_NE(mb.find("derivative of custom op 'asquare::nokernel' is not implemented"),
            std::string::npos)
      << mb;
}

TEST(CustomOp, BadDefinitionsAreRefusedWithTheReason) {
  tsr_runtime* rt = tessera::default_runtime();
  auto define = [&](const char* schema) {
    tsr_op_def def{};
    def.struct_size = sizeof def;
    def.schema = schema;
    def.shape = affine_shape;
    const tsr_op* op = nullptr;
    return take(tsr_op_define(rt, &def, &op));
  };
  EXPECT_NE(define("affine(Tensor x) -> Tensor").find("no namespace"), std::string::npos);
  EXPECT_NE(define("aten::myop(Tensor x) -> Tensor").find("aten namespace"), std::string::npos);
  EXPECT_NE(define("ns::inplace(Tensor(a!) x) -> Tensor(a!)").find("alias annotation"),
            std::string::npos);
  EXPECT_NE(define("ns::notensor(int n) -> Tensor").find("no Tensor argument"), std::string::npos);
  EXPECT_NE(define("ns::intret(Tensor x) -> int").find("plain Tensors"), std::string::npos);
  EXPECT_NE(define("ns::broken(Tensor x -> Tensor").find("custom op schema"), std::string::npos);
  affine_op();
  EXPECT_NE(define(kAffineSchema).find("already defined"), std::string::npos);
  EXPECT_NE(define("add.Tensor(Tensor self, Tensor other) -> Tensor").find("no namespace"),
            std::string::npos);
  tsr_op_def def{};
  def.struct_size = sizeof def;
  def.schema = "ns::noshape(Tensor x) -> Tensor";
  const tsr_op* op = nullptr;
  EXPECT_NE(take(tsr_op_define(rt, &def, &op)).find("'def->shape' is NULL"), std::string::npos);
  EXPECT_NE(take(tsr_op_define(rt, nullptr, &op)).find("'def' is NULL"), std::string::npos);
  const tsr_op* mm = nullptr;
  ASSERT_EQ(take(tsr_op_find(rt, "mm", &mm)), "");
  EXPECT_NE(take(tsr_op_register_kernel(mm, "cpu", 0, affine_cpu_kernel, nullptr))
                .find("only on custom ops"),
            std::string::npos);
  EXPECT_NE(take(tsr_op_register_kernel(affine_op(), "nosuchdev", 0, affine_cpu_kernel, nullptr))
                .find("'nosuchdev'"),
            std::string::npos);
  EXPECT_NE(take(tsr_op_set_backward(mm, affine_backward, nullptr)).find("only on custom ops"),
            std::string::npos);
}

// A derivative given as an op (how plugins register theirs): the backward op
// takes (grad, forward args...) and returns one gradient per tensor argument.
tsr_status* scale_backward_kernel(void*, const tsr_value* args, int32_t, tsr_tensor_desc* outs,
                                  int32_t) {
  // asquare::scale_backward(Tensor grad, Tensor x, float scale) -> Tensor = grad * scale
  affine_loop<double>(*args[0].u.desc, outs[0], args[2].u.f, 0.0);
  return nullptr;
}
tsr_status* scale_kernel(void*, const tsr_value* args, int32_t, tsr_tensor_desc* outs, int32_t) {
  affine_loop<double>(*args[0].u.desc, outs[0], args[1].u.f, 0.0);
  return nullptr;
}

TEST(CustomOp, ADerivativeOpDifferentiates) {
  tsr_runtime* rt = tessera::default_runtime();
  tsr_op_def bdef{};
  bdef.struct_size = sizeof bdef;
  bdef.schema = "asquare::scale_backward(Tensor grad, Tensor x, float scale) -> Tensor";
  bdef.shape = like_arg<1>;
  const tsr_op* bop = nullptr;
  ASSERT_EQ(take(tsr_op_define(rt, &bdef, &bop)), "");
  ASSERT_EQ(take(tsr_op_register_kernel(bop, "cpu", TSR_DTYPE_BIT(TSR_FLOAT64),
                                        scale_backward_kernel, nullptr)),
            "");
  tsr_op_def def{};
  def.struct_size = sizeof def;
  def.schema = "asquare::scale(Tensor x, float scale) -> Tensor";
  def.shape = like_arg<0>;
  def.derivative = "asquare::scale_backward";
  const tsr_op* op = nullptr;
  ASSERT_EQ(take(tsr_op_define(rt, &def, &op)), "");
  ASSERT_EQ(
      take(tsr_op_register_kernel(op, "cpu", TSR_DTYPE_BIT(TSR_FLOAT64), scale_kernel, nullptr)),
      "");
  Tensor x = f64({1.0, -2.0, 0.5}, {3});
  x.requires_grad_();
  tsr_value args[2] = {value(x), float_value(-3.0)};
  Tensor y = tessera::detail::call(op, args, 2);
  std::vector<std::string> seen;
  {
    Recorder rec;
    (y * y).sum().backward();
    seen = rec.names();
  }
  EXPECT_NE(std::find(seen.begin(), seen.end(), "asquare::scale_backward"), seen.end());
  // d/dx sum((-3x)^2) = 18 x
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{18.0, -36.0, 9.0}));
}

// ---- a plugin-defined custom op (the testdev plugin, ABI 1.1 op_defs) -------

TEST(CustomOp, PluginDefinedOpsRunAndDifferentiateThroughTheirDerivativeOp) {
  tsr_runtime_options options{};
  options.struct_size = sizeof options;
  options.skip_default_plugins = true;
  tsr_runtime* rt = nullptr;
  ASSERT_EQ(take(tsr_runtime_create(&options, &rt)), "");
  tsr_plugin* plugin = nullptr;
  ASSERT_EQ(take(tsr_plugin_load(rt, TESSERA_TEST_FAULT_PLUGIN_DIR "/libtsrtest-good.so", &plugin)),
            "");
  tsr_plugin* cpu_plugin = nullptr;
  ASSERT_EQ(take(tsr_plugin_load(rt, TESSERA_TEST_PLUGIN_DIR "/libtessera-cpu.so", &cpu_plugin)),
            "");
  const tsr_op* twice = nullptr;
  ASSERT_EQ(take(tsr_op_find(rt, "tsrtest::twice", &twice)), "");
  tsr_device dev{};
  ASSERT_EQ(take(tsr_device_parse(rt, "testdev:0", &dev)), "");
  const float host[4] = {1.f, -2.f, 3.5f, 0.25f};
  const int64_t sizes[1] = {4};
  tsr_tensor* x = nullptr;
  ASSERT_EQ(take(tsr_tensor_empty(rt, 1, sizes, TSR_FLOAT32, dev, &x)), "");
  ASSERT_EQ(take(tsr_tensor_copy_from_host(x, host, sizeof host)), "");
  ASSERT_EQ(take(tsr_tensor_set_requires_grad(x, 1)), "");
  tsr_value arg{};
  arg.tag = TSR_VALUE_TENSOR;
  arg.u.tensor = x;
  tsr_value out{};
  ASSERT_EQ(take(tsr_op_call(twice, &arg, 1, &out, 1)), "");
  float got[4] = {};
  ASSERT_EQ(take(tsr_tensor_copy_to_host(out.u.tensor, got, sizeof got)), "");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], 2.f * host[i]);
  const char* name = nullptr;
  ASSERT_EQ(take(tsr_tensor_grad_fn_name(out.u.tensor, &name)), "");
  EXPECT_STREQ(name, "tsrtest::TwiceBackward0");
  // backward with an upstream gradient of ones: tsrtest::twice_backward gives 2s.
  tsr_tensor* ones = nullptr;
  ASSERT_EQ(take(tsr_tensor_empty(rt, 1, sizes, TSR_FLOAT32, dev, &ones)), "");
  const float one[4] = {1.f, 1.f, 1.f, 1.f};
  ASSERT_EQ(take(tsr_tensor_copy_from_host(ones, one, sizeof one)), "");
  // (grad(), not backward(): accumulating into .grad would copy_, a kernel
  // this minimal device does not have.)
  tsr_tensor* grad = nullptr;
  ASSERT_EQ(take(tsr_autograd_grad(1, &out.u.tensor, &ones, 1, &x, 0, 0, 0, &grad)), "");
  ASSERT_NE(grad, nullptr);
  ASSERT_EQ(take(tsr_tensor_copy_to_host(grad, got, sizeof got)), "");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], 2.f);
  tsr_tensor_release(grad);
  tsr_tensor_release(out.u.tensor);
  // Across devices: a CPU leaf moved to testdev, doubled there; its gradient
  // is computed on testdev and comes back to the CPU.
  tsr_device cpu{};
  ASSERT_EQ(take(tsr_device_parse(rt, "cpu:0", &cpu)), "");
  tsr_tensor* c = nullptr;
  ASSERT_EQ(take(tsr_tensor_empty(rt, 1, sizes, TSR_FLOAT32, cpu, &c)), "");
  ASSERT_EQ(take(tsr_tensor_copy_from_host(c, host, sizeof host)), "");
  ASSERT_EQ(take(tsr_tensor_set_requires_grad(c, 1)), "");
  tsr_tensor* moved = nullptr;
  ASSERT_EQ(take(tsr_tensor_to_device(c, dev, &moved)), "");
  arg.u.tensor = moved;
  ASSERT_EQ(take(tsr_op_call(twice, &arg, 1, &out, 1)), "");
  tsr_tensor* cgrad = nullptr;
  ASSERT_EQ(take(tsr_autograd_grad(1, &out.u.tensor, &ones, 1, &c, 0, 0, 0, &cgrad)), "");
  tsr_tensor_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(take(tsr_tensor_get_info(cgrad, &info)), "");
  EXPECT_EQ(info.device.type, cpu.type);
  ASSERT_EQ(take(tsr_tensor_copy_to_host(cgrad, got, sizeof got)), "");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], 2.f);
  tsr_tensor_release(cgrad);
  tsr_tensor_release(out.u.tensor);
  tsr_tensor_release(moved);
  tsr_tensor_release(c);
  tsr_tensor_release(ones);
  tsr_tensor_release(x);
  // Unloaded, the op stays defined but refuses to run, naming the plugin.
  ASSERT_EQ(take(tsr_plugin_unload(rt, plugin)), "");
  tsr_tensor* meta = nullptr;
  ASSERT_EQ(
      take(tsr_tensor_empty(rt, 1, sizes, TSR_FLOAT32, tsr_device{TSR_DEVICE_META, 0}, &meta)), "");
  arg.u.tensor = meta;
  const std::string m = take(tsr_op_call(twice, &arg, 1, &out, 1));
  EXPECT_NE(m.find("plugin 'testdev'"), std::string::npos) << m;
  EXPECT_NE(m.find("unloaded"), std::string::npos) << m;
  tsr_tensor_release(meta);
  tsr_runtime_destroy(rt);
}

}  // namespace
