// gpuemu_device_test.cpp - the GPU plugins' device layer through the C++
// frontend on the host emulation (libtessera-gpuemu, two devices): copies
// between two devices of one plugin (plugin ABI 1.2 copy_peer) bit for bit,
// with a transposed source and a dtype change on the way, and the
// mixed-device error between them. Expected values come from the CPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

// ctest runs every gtest with TESSERA_PLUGINS=cpu; this one needs gpuemu,
// which lives outside the default plugin directory (it is not a product
// plugin). Set before the default runtime loads its plugins (first use).
const bool kEnvironment = [] {
  setenv("TESSERA_PLUGINS", "cpu,gpuemu", 1);
  setenv("TESSERA_PLUGIN_PATH", TESSERA_TEST_PLUGIN_DIR ":" TESSERA_GPUEMU_DIR, 1);
  return true;
}();

using tessera::Device;
using tessera::Tensor;

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.cpu().contiguous();
  std::vector<uint8_t> out(static_cast<size_t>(c.numel()) * c.element_size());
  if (!out.empty()) c.copy_to_host(out.data(), out.size());
  return out;
}

Device emu(int index) { return Device("gpuemu:" + std::to_string(index)); }

TEST(GpuEmuDevice, TwoDevicesAreListed) {
  int count = 0;
  for (const Device& d : tessera::devices()) {
    std::ostringstream label;
    label << d;
    if (label.str().rfind("gpuemu:", 0) == 0) ++count;
  }
  EXPECT_EQ(count, 2);
}

TEST(GpuEmuDevice, CopiesBetweenDevicesOfThePluginAreBitExact) {
  std::vector<uint8_t> raw(4096);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>((i * 197 + 3) ^ (i >> 4));
  const uint32_t nan_payload = 0x7fc12345u;
  std::memcpy(raw.data(), &nan_payload, 4);
  for (tessera::Dtype dt : {tessera::kUInt8, tessera::kInt32, tessera::kInt64, tessera::kFloat16,
                            tessera::kFloat32, tessera::kFloat64}) {
    SCOPED_TRACE(tessera::name(dt));
    const int64_t n = static_cast<int64_t>(raw.size() / tessera::element_size(dt));
    Tensor h = tessera::empty({n}, dt);
    h.copy_from_host(raw.data(), raw.size());
    const Tensor on1 = h.to(emu(0)).to(emu(1));
    EXPECT_EQ(on1.device(), emu(1));
    EXPECT_EQ(bytes_of(on1), raw);
    // a transposed source on device 0: made contiguous there, then copied
    const Tensor t = h.reshape({8, n / 8}).t();
    EXPECT_EQ(bytes_of(t.to(emu(0)).to(emu(1))), bytes_of(t));
  }
}

TEST(GpuEmuDevice, CopyIntoAnotherDeviceConvertsDtypes) {
  const std::vector<float> v = {1.5f, -2.25f, 3.0e38f, -0.0f, 7.0f, 1e-3f};
  const Tensor h = tessera::tensor(v, tessera::IntList({2, 3}));
  Tensor dst = tessera::zeros({2, 3}, tessera::kFloat64).to(emu(1));
  dst.copy_(h.to(emu(0)));
  const std::vector<double> got = dst.to_vector<double>();
  ASSERT_EQ(got.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(got[i], static_cast<double>(v[i])) << i;
}

TEST(GpuEmuDevice, OpsAcrossTheTwoDevicesNameBoth) {
  const Tensor a = tessera::ones({4}).to(emu(0));
  const Tensor b = tessera::ones({4}).to(emu(1));
  try {
    (void)(a + b);
    FAIL() << "adding tensors on two devices succeeded";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("gpuemu:0"), std::string::npos) << m;
    EXPECT_NE(m.find("gpuemu:1"), std::string::npos) << m;
  }
}

}  // namespace
