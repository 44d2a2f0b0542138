// vulkan_device_test - the Vulkan plugin through the C++ frontend, on the
// first Vulkan device (lavapipe here and in CI; the validation layer is on,
// so a validation error fails the op that caused it), for what the
// conformance suite does not cover:
//   - to(device) both ways is bit-exact for every dtype, contiguous or not,
//     and for copies large enough to be split across threads;
//   - mixing cpu:0 and vulkan:0 tensors is an error naming both devices;
//   - the fast paths (Note [Texel fast paths], plugins/vulkan/src/device.hpp)
//     agree with the host exactly for elementwise float32 and to float64
//     accuracy for matmul and convolution, over the layouts, offsets and
//     tails that pick or skip them;
//   - small ops batched into one dispatch keep their program order;
//   - a tensor larger than the 128 MiB storage-buffer range computes right;
//   - a small MLP trained by plain SGD reaches the same loss on vulkan:0 as on
//     cpu:0 (within 1e-4 after 50 steps, from the same initial weights).
// References are host float64 (or exact float) arithmetic, never the plugin.
// The test fails, not skips, when no Vulkan device is present: ctest runs it
// only where the plugin was built, and lavapipe is always installed there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

// ctest runs every gtest with TESSERA_PLUGINS=cpu (cmake/TesseraOptions.cmake);
// this one needs the Vulkan plugin too, with the validation layer counting
// errors. Set before the default runtime loads its plugins (first use).
const bool kEnvironment = [] {
  setenv("TESSERA_PLUGINS", "cpu,vulkan", 1);
  setenv("TESSERA_VULKAN_VALIDATION", "1", 0);
  setenv("XDG_RUNTIME_DIR", "/tmp", 0);
  // See Note [Host copies]: three copy threads, so large copies split in three
  // wherever the test runs (the default follows the hardware threads).
  setenv("TESSERA_VULKAN_COPY_THREADS", "3", 0);
  return true;
}();

using tessera::Device;
using tessera::Tensor;

Device vulkan() {
  for (const Device& d : tessera::devices()) {
    std::ostringstream label;
    label << d;
    if (label.str().rfind("vulkan", 0) == 0) return d;
  }
  ADD_FAILURE() << "no vulkan device: build libtessera-vulkan and install a Vulkan driver "
                   "(mesa-vulkan-drivers)";
  throw std::runtime_error("no vulkan device");
}

// Deterministic floats in [-1, 1).
std::vector<float> values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345u;
  for (auto& e : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    e = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

Tensor host(const std::vector<float>& v, std::vector<int64_t> shape) {
  return tessera::tensor(v, tessera::IntList(shape));
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.cpu().contiguous();
  std::vector<uint8_t> out(static_cast<size_t>(c.numel()) * c.element_size());
  if (!out.empty()) c.copy_to_host(out.data(), out.size());
  return out;
}

// ---------------------------------------------------------------------------
// Copies and devices
// ---------------------------------------------------------------------------

TEST(VulkanDevice, ToDeviceRoundTripsBitExactlyForEveryDtype) {
  const Device dev = vulkan();
  // Bit patterns that conversions would disturb: NaN payloads, -0, subnormals.
  std::vector<uint8_t> raw(4096);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>((i * 131 + 7) ^ (i >> 3));
  const uint32_t nan_payload = 0x7fa5a5a5u, neg_zero = 0x80000000u, subnormal = 0x00000003u;
  std::memcpy(raw.data(), &nan_payload, 4);
  std::memcpy(raw.data() + 4, &neg_zero, 4);
  std::memcpy(raw.data() + 8, &subnormal, 4);
  for (tessera::Dtype dt : {tessera::kBool, tessera::kUInt8, tessera::kInt8, tessera::kInt16,
                            tessera::kInt32, tessera::kInt64, tessera::kFloat16, tessera::kBFloat16,
                            tessera::kFloat32, tessera::kFloat64}) {
    SCOPED_TRACE(tessera::name(dt));
    const int64_t esize = static_cast<int64_t>(tessera::element_size(dt));
    const int64_t n = static_cast<int64_t>(raw.size()) / esize;
    Tensor h = tessera::empty({n}, dt);
    std::vector<uint8_t> src = raw;
    if (dt == tessera::kBool)
      for (auto& b : src) b &= 1;  // bool holds 0 or 1
    h.copy_from_host(src.data(), src.size());
    const Tensor back = h.to(dev).to(tessera::kCPU);
    EXPECT_EQ(bytes_of(back), src);
    // a non-contiguous source both ways: every other element of a 2-d transpose
    const Tensor t = h.reshape({16, n / 16}).t();
    const Tensor on_dev = t.to(dev);
    EXPECT_EQ(bytes_of(on_dev), bytes_of(t));
    EXPECT_EQ(bytes_of(on_dev.t().to(tessera::kCPU).t()), bytes_of(t));
  }
}

// `n` bytes up to vulkan:0 and back, bit for bit, also into and out of
// ranges that start a few bytes into their tensors; nothing next to a
// destination range may change.
void expect_large_copies_bit_exact(int64_t n) {
  const Device dev = vulkan();
  std::vector<uint8_t> src(static_cast<size_t>(n));
  uint32_t x = 2463534242u;
  for (auto& b : src) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x >> 24);
  }
  Tensor h = tessera::empty({n}, tessera::kUInt8);
  h.copy_from_host(src.data(), src.size());
  EXPECT_EQ(bytes_of(h.to(dev)), src);
  // into and out of a device range starting 3 bytes into its allocation
  Tensor padded = tessera::empty({n + 8}, tessera::TensorOptions(dev).dtype(tessera::kUInt8));
  padded.fill_(171);
  Tensor inner = padded.slice(0, 3, 3 + n);
  inner.copy_(h);
  EXPECT_EQ(bytes_of(inner), src);
  const std::vector<uint8_t> all = bytes_of(padded);
  for (size_t i : {size_t{0}, size_t{1}, size_t{2}}) EXPECT_EQ(all[i], 171) << i;
  for (size_t i = static_cast<size_t>(n) + 3; i < all.size(); ++i) EXPECT_EQ(all[i], 171) << i;
  // out of the device into a host range starting 5 bytes into its tensor
  Tensor host_padded = tessera::zeros({n + 8}, tessera::kUInt8);
  host_padded.slice(0, 5, 5 + n).copy_(inner);
  const std::vector<uint8_t> back = bytes_of(host_padded);
  EXPECT_EQ(std::vector<uint8_t>(back.begin() + 5, back.begin() + 5 + n), src);
  EXPECT_EQ(back[4], 0);
  EXPECT_EQ(back[static_cast<size_t>(n) + 5], 0);
}

// Note [Host copies] (plugins/vulkan/src/host_copy.hpp): copies of 4 MiB and
// more are split across three threads (kEnvironment) at 64-byte boundaries
// of the destination. Bytes must arrive exactly, at offsets that are not
// aligned, and nothing next to the destination may change.
TEST(VulkanDevice, LargeHostCopiesSplitAcrossThreadsAreBitExact) {
  expect_large_copies_bit_exact((int64_t{12} << 20) + 77);
}

// Note [Pipelined staging] (plugins/vulkan/src/staging.hpp): copies through
// the two staging buffers in 16 MiB slices, the last one partial. On
// lavapipe this takes the staged path only under TESSERA_VULKAN_UNCACHED=1
// (the ctest vulkan_device_test.uncached); otherwise it is one more large
// mapped copy.
TEST(VulkanDevice, StagedCopiesOverSeveralSlicesAreBitExact) {
  expect_large_copies_bit_exact((int64_t{37} << 20) + 77);
}

// See Note [Pinned host memory]: host memory pinned for vulkan:0 uploads and
// downloads through one transfer command each, bit for bit; ordinary host
// memory keeps its paths; freeing pinned tensors returns the memory.
TEST(VulkanDevice, PinnedHostMemoryCopiesBothWaysBitExactly) {
  const Device dev = vulkan();
  ASSERT_NE(tessera::properties(dev).features & TSR_FEATURE_PINNED_HOST, 0u);
  const Tensor h = host(values(1 << 20, 7), {1024, 1024});
  EXPECT_FALSE(h.is_pinned());
  const Tensor pinned = h.t().pin_memory(dev);  // a transposed source: copied contiguously
  EXPECT_TRUE(pinned.is_pinned());
  EXPECT_TRUE(pinned.is_contiguous());
  EXPECT_EQ(pinned.device(), tessera::kCPU);
  EXPECT_EQ(bytes_of(pinned), bytes_of(h.t()));
  // host (pinned) -> device, computed on, device -> host (pinned)
  const Tensor on_dev = pinned.to(dev);
  EXPECT_EQ(bytes_of(on_dev), bytes_of(h.t()));
  Tensor back = tessera::zeros({1024, 1024}).pin_memory(dev);
  back.copy_(on_dev * 2.0);
  const std::vector<float> got = back.to_vector<float>();
  const Tensor ht = h.t().contiguous();
  const std::vector<float> want = ht.to_vector<float>();
  for (size_t i = 0; i < got.size(); i += 4099) ASSERT_EQ(got[i], want[i] * 2.0f) << i;
  // Many pinned tensors made and dropped: the plugin takes each back.
  for (int k = 0; k < 64; ++k) {
    const Tensor p = host(values(1000 + k, static_cast<uint32_t>(k)), {1000 + k}).pin_memory(dev);
    EXPECT_EQ(bytes_of(p.to(dev)), bytes_of(p));
  }
  // The CPU plugin has no pinned memory: a clear error naming the device.
  try {
    (void)h.pin_memory(tessera::kCPU);
    FAIL() << "pinning for cpu:0 succeeded";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu:0"), std::string::npos) << e.what();
  }
}

TEST(VulkanDevice, MixingDevicesIsAnErrorNamingBoth) {
  const Device dev = vulkan();
  const Tensor a = tessera::ones({4});
  const Tensor b = tessera::ones({4}).to(dev);
  try {
    (void)(a + b);
    FAIL() << "adding a cpu:0 and a vulkan:0 tensor succeeded";
  } catch (const tessera::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("expected all tensors to be on the same device"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
    EXPECT_NE(m.find("vulkan:0"), std::string::npos) << m;
  }
}

// ---------------------------------------------------------------------------
// Elementwise float32: fast path and generic path agree with the host exactly
// ---------------------------------------------------------------------------

TEST(VulkanDevice, Float32ArithmeticMatchesTheHostOverOffsetsAndTails) {
  const Device dev = vulkan();
  const std::vector<float> av = values(1100, 1), bv = values(1100, 2);
  for (int64_t offset : {0, 1, 2, 3, 4, 8}) {
    for (int64_t n : {1, 3, 4, 5, 16, 17, 1023, 1024}) {
      SCOPED_TRACE("offset " + std::to_string(offset) + " n " + std::to_string(n));
      // slices starting `offset` floats into a device allocation: 16-byte
      // aligned (fast path) only when offset % 4 == 0
      const Tensor a = host(av, {1100}).to(dev).slice(0, offset, offset + n);
      const Tensor b = host(bv, {1100}).to(dev).slice(0, offset, offset + n);
      const std::vector<float> sum = (a + b).to_vector<float>();
      const std::vector<float> diff = tessera::sub(a, b, 2.5).to_vector<float>();
      const std::vector<float> prod = (a * b).to_vector<float>();
      const std::vector<float> quot = (a / b).to_vector<float>();
      const std::vector<float> scaled = (a * 3.0).to_vector<float>();
      Tensor filled = tessera::empty({n}, dev);
      filled.fill_(0.375);
      const std::vector<float> fill = filled.to_vector<float>();
      const std::vector<float> copy = a.clone().to_vector<float>();
      for (int64_t i = 0; i < n; ++i) {
        const float x = av[static_cast<size_t>(offset + i)];
        const float y = bv[static_cast<size_t>(offset + i)];
        const auto k = static_cast<size_t>(i);
        EXPECT_EQ(sum[k], x + y) << i;
        EXPECT_EQ(diff[k], x - 2.5f * y) << i;
        EXPECT_EQ(prod[k], x * y) << i;
        EXPECT_EQ(quot[k], x / y) << i;
        EXPECT_EQ(scaled[k], x * 3.0f) << i;
        EXPECT_EQ(fill[k], 0.375f) << i;
        EXPECT_EQ(copy[k], x) << i;
      }
    }
  }
}

// Two-dimensional iterations (pointwise/copy_fill_arith.cpp's TexelGrid): column
// slices of a wider matrix (rows apart by its width), a row broadcast to
// every row (a bias) on either side, fill_ and copy_ into slices. Widths
// that are whole texels take the texel shaders, the others and misaligned
// slices the generic kernel; both must match the host, and nothing outside
// a written slice may change.
TEST(VulkanDevice, Float32RowsSlicesAndRowBroadcastsMatchTheHost) {
  const Device dev = vulkan();
  for (int64_t rows : {1, 3, 7}) {
    for (int64_t cols : {4, 6, 8, 20, 256}) {
      for (int64_t off : {0, 1, 4}) {
        SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " off " +
                     std::to_string(off));
        const int64_t width = cols + 8;
        const std::vector<float> xv = values(rows * width, 3), bv = values(cols, 4);
        const Tensor x = host(xv, {rows, width}).to(dev).slice(1, off, off + cols);
        const Tensor b = host(bv, {cols}).to(dev);
        const std::vector<float> sum = (x + b).to_vector<float>();
        const std::vector<float> rsub = tessera::sub(b, x, 0.5).to_vector<float>();
        const std::vector<float> prod = (x * b).to_vector<float>();
        const std::vector<float> bias_rows = b.expand({rows, cols}).contiguous().to_vector<float>();
        Tensor filled = host(xv, {rows, width}).to(dev);
        filled.slice(1, off, off + cols).fill_(-2.0);
        Tensor copied = tessera::zeros({rows, width}, dev);
        copied.slice(1, off, off + cols).copy_(x);
        const std::vector<float> fill = filled.to_vector<float>();
        const std::vector<float> copy = copied.to_vector<float>();
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < width; ++c) {
            const auto k = static_cast<size_t>(r * width + c);
            const bool inside = c >= off && c < off + cols;
            EXPECT_EQ(fill[k], inside ? -2.0f : xv[k]) << r << "," << c;
            EXPECT_EQ(copy[k], inside ? xv[k] : 0.0f) << r << "," << c;
          }
          for (int64_t c = 0; c < cols; ++c) {
            const float xe = xv[static_cast<size_t>(r * width + off + c)];
            const float be = bv[static_cast<size_t>(c)];
            const auto k = static_cast<size_t>(r * cols + c);
            EXPECT_EQ(sum[k], xe + be) << r << "," << c;
            EXPECT_EQ(rsub[k], be - 0.5f * xe) << r << "," << c;
            EXPECT_EQ(prod[k], xe * be) << r << "," << c;
            EXPECT_EQ(bias_rows[k], be) << r << "," << c;
          }
        }
      }
    }
  }
}

// Note [Raster stores] (raster.hpp): a float32 add/sub/mul/div whose
// contiguous output holds 2^14 texels or more is drawn on lavapipe, whose
// rendering threads flush subnormals to zero; the fragment shader computes
// those texels again exactly. Every result must equal IEEE float32
// arithmetic (float64 arithmetic rounded once, and alpha * b rounded
// first, as PyTorch's add does), bit for bit, -0 included: special values
// (subnormals, the smallest normals, zeros, infinities, NaN, the largest
// floats) meet each other and cancelling pairs, over a 1-D output of 17
// rows of 1024 texels, 5 more and a tail of 3 elements (16 rows drawn:
// whole blocks of 4; the rest computed) read from inputs 8 floats into
// their allocations, and over a 2-D output with a row broadcast.
uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::vector<float> special_values(int64_t n, uint32_t seed, const std::vector<float>& partner) {
  static const float kSpecial[] = {1e-40f,
                                   -1e-40f,
                                   1.4e-45f,
                                   -1.4e-45f,
                                   1.1754942e-38f,
                                   -1.1754942e-38f,
                                   1.17549435e-38f,
                                   -1.17549435e-38f,
                                   7.8886e-31f,
                                   -2.3e-35f,
                                   0.0f,
                                   -0.0f,
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(),
                                   3.4e38f,
                                   -3.4e38f,
                                   2.0f,
                                   0.5f};
  constexpr int kCount = sizeof kSpecial / sizeof kSpecial[0];
  std::vector<float> v = values(n, seed);
  uint32_t x = seed * 747796405u + 2891336453u;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const uint32_t pick = x >> 24;
    auto& e = v[static_cast<size_t>(i)];
    if (pick < 100) {
      e = kSpecial[pick % kCount];
    } else if (pick < 130 && !partner.empty()) {
      // the partner's negation, or one ulp off it: cancellation
      const float p = partner[static_cast<size_t>(i)];
      e = (pick & 1) ? -p : -std::nextafter(p, 1.0f);
    } else if (pick < 160) {
      e *= 1e-36f;  // tiny normals and subnormals from arithmetic
    }
  }
  return v;
}

void expect_ieee(const std::vector<float>& got, const std::vector<float>& x,
                 const std::vector<float>& y, char op, float alpha, const char* what) {
  ASSERT_EQ(got.size(), x.size());
  int64_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = x[i], b = y[i];
    double r = 0.0;
    if (op == '+' || op == '-') {
      const double t = static_cast<double>(static_cast<float>(static_cast<double>(alpha) * b));
      r = op == '+' ? a + t : a - t;
    } else {
      r = op == '*' ? a * b : a / b;
    }
    const auto want = static_cast<float>(r);
    const bool same =
        std::isnan(want) ? std::isnan(got[i]) : float_bits(want) == float_bits(got[i]);
    if (!same && ++wrong <= 5)
      ADD_FAILURE() << what << " element " << i << ": " << x[i] << " " << op << " " << y[i]
                    << " gave " << got[i] << " (bits " << std::hex << float_bits(got[i])
                    << "), want " << want << " (bits " << float_bits(want) << std::dec << ")";
  }
  EXPECT_EQ(wrong, 0) << what;
}

TEST(VulkanDevice, RasterStoresMatchIeeeArithmeticBitForBit) {
  const Device dev = vulkan();
  // 1-D: 17 rows of 1024 texels, a row of 5, a tail of 3 elements
  const int64_t n = 4 * (17 * 1024 + 5) + 3;
  const std::vector<float> yv = special_values(n + 8, 6, {});
  const std::vector<float> xv = special_values(n + 8, 5, yv);
  // inputs 8 floats into their allocations
  const Tensor x = host(xv, {n + 8}).to(dev).slice(0, 8, n + 8);
  const Tensor y = host(yv, {n + 8}).to(dev).slice(0, 8, n + 8);
  const std::vector<float> xs(xv.begin() + 8, xv.end()), ys(yv.begin() + 8, yv.end());
  expect_ieee((x + y).to_vector<float>(), xs, ys, '+', 1.0f, "add");
  expect_ieee((x - y).to_vector<float>(), xs, ys, '-', 1.0f, "sub");
  expect_ieee(tessera::add(x, y, -0.5).to_vector<float>(), xs, ys, '+', -0.5f, "add alpha -0.5");
  expect_ieee(tessera::sub(x, y, 2.5).to_vector<float>(), xs, ys, '-', 2.5f, "sub alpha 2.5");
  // a subnormal alpha (the rendering threads would read it as zero)
  expect_ieee(tessera::add(x, y, 1e-40).to_vector<float>(), xs, ys, '+', 1e-40f, "add alpha 1e-40");
  expect_ieee((x * y).to_vector<float>(), xs, ys, '*', 1.0f, "mul");
  expect_ieee((x / y).to_vector<float>(), xs, ys, '/', 1.0f, "div");
  // in place into a slice 8 floats into its allocation (the images bound
  // 32 bytes in); the 8 floats before it keep their values
  Tensor z = host(xv, {n + 8}).to(dev);
  z.slice(0, 8, n + 8).add_(y);
  const std::vector<float> zv = z.to_vector<float>();
  for (int k = 0; k < 8; ++k) EXPECT_EQ(float_bits(zv[k]), float_bits(xv[k])) << k;
  expect_ieee(std::vector<float>(zv.begin() + 8, zv.end()), xs, ys, '+', 1.0f, "add_ in place");
  // an output of exactly 16 rows of 1024 texels, all drawn, with 16 floats
  // after it in the same allocation that must keep their values
  const int64_t whole = 16 * 1024 * 4;
  Tensor guarded = host(xv, {n + 8}).to(dev);
  guarded.slice(0, 0, whole).mul_(y.slice(0, 0, whole));
  const std::vector<float> gv = guarded.to_vector<float>();
  for (int64_t k = whole; k < whole + 16; ++k)
    EXPECT_EQ(float_bits(gv[static_cast<size_t>(k)]), float_bits(xv[static_cast<size_t>(k)])) << k;
  expect_ieee(std::vector<float>(gv.begin(), gv.begin() + whole),
              std::vector<float>(xv.begin(), xv.begin() + whole),
              std::vector<float>(ys.begin(), ys.begin() + whole), '*', 1.0f, "mul_ in place");
  // a scalar operand (read through its address, not a texel view)
  const std::vector<float> tiny(xs.size(), 1e-40f);
  expect_ieee((x + 1e-40).to_vector<float>(), xs, tiny, '+', 1.0f, "add scalar");
  expect_ieee((x * 1e-40).to_vector<float>(), xs, tiny, '*', 1.0f, "mul scalar");
  // 2-D: 40 rows of 2048, a row broadcast on either side
  const int64_t rows = 40, cols = 2048;
  const std::vector<float> bv = special_values(cols, 8, {});
  const std::vector<float> mv = special_values(rows * cols, 7, {});
  const Tensor m = host(mv, {rows, cols}).to(dev);
  const Tensor b = host(bv, {cols}).to(dev);
  std::vector<float> brows;
  for (int64_t r = 0; r < rows; ++r) brows.insert(brows.end(), bv.begin(), bv.end());
  expect_ieee((m + b).to_vector<float>(), mv, brows, '+', 1.0f, "bias add");
  expect_ieee((b - m).to_vector<float>(), brows, mv, '-', 1.0f, "bias rsub");
  expect_ieee((m * b).to_vector<float>(), mv, brows, '*', 1.0f, "bias mul");
}

// pointwise.comp takes a specialized pipeline per op once the generic one
// has done enough work for it (Note [Specializing by use], kernels.hpp): a
// tensor past kSpecializeAfter (2^17) elements takes it at once, the small
// one before it the generic variant. A float32 unary or binary op over
// whole texels (numel % 4 == 0, or rows of whole texels) then runs through
// texel_unary.comp / texel_binary.comp. All must match the host, and each other bit for bit, in
// float32 (op and dtype specialized), float64 and int8/16/32 (op only).
std::vector<double> as_doubles(const Tensor& t) {
  return t.cpu().to(tessera::kFloat64).to_vector<double>();
}

TEST(VulkanDevice, PointwiseOpsMatchTheHostInTheGenericAndSpecializedVariants) {
  const Device dev = vulkan();
  constexpr int64_t kSmall = 1000, kLarge = (int64_t{3} << 16) + 5;
  std::vector<float> xs = values(kLarge, 11), ys = values(kLarge, 12);
  for (float& v : xs) v *= 4.0f;  // [-4, 4)
  struct Case {
    const char* op;
    int inputs;
    bool positive;  // inputs in [0.25, 4.25)
    double (*ref)(double, double);
  };
  const Case cases[] = {
      {"relu", 1, false, [](double x, double) { return x > 0.0 ? x : 0.0; }},
      {"neg", 1, false, [](double x, double) { return -x; }},
      {"abs", 1, false, [](double x, double) { return std::fabs(x); }},
      {"floor", 1, false, [](double x, double) { return std::floor(x); }},
      {"exp", 1, false, [](double x, double) { return std::exp(x); }},
      {"sigmoid", 1, false, [](double x, double) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"tanh", 1, false, [](double x, double) { return std::tanh(x); }},
      {"sqrt", 1, true, [](double x, double) { return std::sqrt(x); }},
      {"maximum", 2, false, [](double x, double y) { return x > y ? x : y; }},
      {"atan2", 2, false, [](double x, double y) { return std::atan2(x, y); }},
      {"pow.Tensor_Tensor", 2, true, [](double x, double y) { return std::pow(x, y); }},
  };
  for (tessera::Dtype dt :
       {tessera::kFloat32, tessera::kFloat64, tessera::kInt32, tessera::kInt16, tessera::kInt8}) {
    for (const Case& c : cases) {
      const bool integral = dt == tessera::kInt32 || dt == tessera::kInt16 || dt == tessera::kInt8;
      const std::string name = c.op;
      if (integral && name != "relu" && name != "neg" && name != "abs" && name != "maximum")
        continue;
      SCOPED_TRACE(name + " " + tessera::name(dt));
      std::vector<float> a = xs, b = ys;
      if (c.positive)
        for (auto* v : {&a, &b})
          for (float& e : *v) e = std::fabs(e) + 0.25f;
      if (integral)  // -100..100 (int8 too)
        for (auto* v : {&a, &b})
          for (float& e : *v) e *= 25.0f;
      const Tensor ha = host(a, {kLarge}).to(dt), hb = host(b, {kLarge}).to(dt);
      const Tensor da = ha.to(dev), db = hb.to(dev);
      auto run = [&](int64_t n) {
        using tessera::detail::value;
        const Tensor a_n = da.slice(0, 0, n), b_n = db.slice(0, 0, n);
        return as_doubles(c.inputs == 1 ? tessera::call_op(c.op, {value(a_n)})
                                        : tessera::call_op(c.op, {value(a_n), value(b_n)}));
      };
      const std::vector<double> small = run(kSmall), large = run(kLarge);
      const std::vector<double> texels = run(kLarge - 5);  // texel_*.comp for float32
      const std::vector<double> xa = as_doubles(ha), xb = as_doubles(hb);
      for (int64_t i = 0; i < kLarge; ++i) {
        const auto k = static_cast<size_t>(i);
        double want = c.ref(xa[k], xb[k]);
        if (dt == tessera::kFloat32) want = static_cast<float>(want);
        // the shader's double functions are within a few ulps of double
        const double tol =
            integral ? 0.0 : std::fabs(want) * (dt == tessera::kFloat32 ? 0x1p-23 : 1e-14);
        ASSERT_NEAR(large[k], want, tol) << i << " of " << xa[k] << ", " << xb[k];
        if (i < kSmall) {
          ASSERT_EQ(small[k], large[k]) << i;
        }
        if (i < kLarge - 5) {
          ASSERT_EQ(texels[k], large[k]) << i;
        }
      }
    }
  }
  // texel_unary.comp / texel_binary.comp over rows: a column slice of a
  // wider matrix, and a row broadcast to every row
  {
    constexpr int64_t kRows = 512, kWidth = 264, kCols = 256;
    const Tensor wide = host(values(kRows * kWidth, 13), {kRows, kWidth}).to(dev);
    const Tensor slice = wide.slice(1, 4, 4 + kCols);
    const std::vector<float> hv = wide.to_vector<float>();
    const std::vector<float> rv = values(kCols, 14);
    const Tensor row = host(rv, {kCols}).to(dev);
    const std::vector<float> mx =
        tessera::call_op("maximum", {tessera::detail::value(slice), tessera::detail::value(row)})
            .to_vector<float>();
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t c = 0; c < kCols; ++c) {
        const float x = hv[static_cast<size_t>(r * kWidth + 4 + c)];
        const float y = rv[static_cast<size_t>(c)];
        ASSERT_EQ(mx[static_cast<size_t>(r * kCols + c)], x > y ? x : y) << r << "," << c;
      }
    for (const char* op : {"tanh", "relu"}) {
      SCOPED_TRACE(std::string(op) + " over rows");
      const std::vector<float> got =
          tessera::call_op(op, {tessera::detail::value(slice)}).to_vector<float>();
      for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = 0; c < kCols; ++c) {
          const double x = hv[static_cast<size_t>(r * kWidth + 4 + c)];
          const auto want =
              static_cast<float>(std::string(op) == "tanh" ? std::tanh(x) : (x > 0 ? x : 0.0));
          ASSERT_NEAR(got[static_cast<size_t>(r * kCols + c)], want, std::fabs(want) * 0x1p-23)
              << r << "," << c;
        }
    }
  }
  // where.self, the third kind
  const Tensor x = host(xs, {kLarge}).to(dev), y = host(ys, {kLarge}).to(dev);
  const Tensor cond =
      tessera::call_op("gt.Tensor", {tessera::detail::value(x), tessera::detail::value(y)});
  const std::vector<double> got = as_doubles(tessera::call_op(
      "where.self",
      {tessera::detail::value(cond), tessera::detail::value(x), tessera::detail::value(y)}));
  for (int64_t i = 0; i < kLarge; ++i) {
    const auto k = static_cast<size_t>(i);
    ASSERT_EQ(got[k], xs[k] > ys[k] ? xs[k] : ys[k]) << i;
  }
}

// The float32 tests (-> bool) and where.self over a contiguous multiple of
// 16 elements take texel_select.comp (Note [Texel fast paths]) once 2^17
// elements of work made the variant worth compiling: 160,000 elements do
// that in one call. NaN, infinities and signed zeros included; a scalar on
// either side of where, on the right of a test; where copies bits (a NaN
// payload survives). Each result is
// checked against the host and, for the small call that stays on
// pointwise.comp, the two paths must agree.
TEST(VulkanDevice, Float32TestsAndWhereMatchTheHostOnTheTexelPath) {
  const Device dev = vulkan();
  const int64_t n = 160000;
  std::vector<float> av = values(n, 31), bv = values(n, 32);
  const float nan_payload = [] {
    const uint32_t bits = 0x7fa5a5a5u;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }();
  const float specials[] = {nan_payload, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f};
  for (size_t i = 0; i < 6 * 6; ++i) {
    av[i * 7] = specials[i % 6];
    bv[i * 7] = specials[i / 6];
  }
  av[5] = bv[5];  // equal values
  for (int64_t size : {n, int64_t{1600}}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const std::vector<float> ah(av.begin(), av.begin() + size), bh(bv.begin(), bv.begin() + size);
    const Tensor a = host(ah, {size}).to(dev), b = host(bh, {size}).to(dev);
    const auto check_test = [&](const char* name, const Tensor& got, auto ref) {
      const std::vector<uint8_t> bytes = bytes_of(got);
      size_t bad = 0;
      for (size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] != (ref(ah[i], bh[i]) ? 1 : 0) && bad++ == 0)
          ADD_FAILURE() << name << " at " << i << ": " << ah[i] << " vs " << bh[i];
      EXPECT_EQ(bad, 0u) << name;
    };
    check_test("gt", tessera::gt(a, b), [](float x, float y) { return x > y; });
    check_test("ge", tessera::ge(a, b), [](float x, float y) { return x >= y; });
    check_test("lt", tessera::lt(a, b), [](float x, float y) { return x < y; });
    check_test("le", tessera::le(a, b), [](float x, float y) { return x <= y; });
    check_test("eq", tessera::eq(a, b), [](float x, float y) { return x == y; });
    check_test("ne", tessera::ne(a, b), [](float x, float y) { return x != y; });
    check_test("logical_and", tessera::logical_and(a, b),
               [](float x, float y) { return x != 0.0f && y != 0.0f; });
    check_test("gt 0", tessera::gt(a, 0.0), [](float x, float) { return x > 0.0f; });
    // where: bits of the chosen side, a scalar other as relu's backward has
    const Tensor cond = tessera::gt(a, b);
    const std::vector<uint8_t> w = bytes_of(tessera::where(cond, a, b));
    const std::vector<uint8_t> w0 = bytes_of(tessera::where(cond, a, 0.5));
    const std::vector<uint8_t> w1 = bytes_of(tessera::where(cond, -2.0, b));
    size_t bad = 0;
    for (size_t i = 0; i < ah.size(); ++i) {
      const bool c = ah[i] > bh[i];
      const float want = c ? ah[i] : bh[i], want0 = c ? ah[i] : 0.5f, want1 = c ? -2.0f : bh[i];
      if ((std::memcmp(&w[i * 4], &want, 4) != 0 || std::memcmp(&w0[i * 4], &want0, 4) != 0 ||
           std::memcmp(&w1[i * 4], &want1, 4) != 0) &&
          bad++ == 0)
        ADD_FAILURE() << "where at " << i;
    }
    EXPECT_EQ(bad, 0u);
  }
}

TEST(VulkanDevice, CopiesOfEveryDtypeAcrossTheFastPathMatchTheHost) {
  const Device dev = vulkan();
  for (tessera::Dtype dt :
       {tessera::kUInt8, tessera::kInt16, tessera::kFloat16, tessera::kInt32, tessera::kFloat64}) {
    SCOPED_TRACE(tessera::name(dt));
    const Tensor h = tessera::arange(0, 203, 1, dt);
    const Tensor d = h.to(dev);
    for (int64_t offset : {0, 1, 8}) {
      const Tensor part = d.slice(0, offset, 203);
      EXPECT_EQ(bytes_of(part.clone()), bytes_of(h.slice(0, offset, 203)));
    }
    Tensor z = tessera::empty({203}, tessera::TensorOptions(dev).dtype(dt));
    z.fill_(7);
    EXPECT_EQ(bytes_of(z), bytes_of(tessera::full({203}, 7, dt)));
  }
}

// See Note [Raster stores]: copy_ and fill_ of 2^14 texels or more are drawn on
// lavapipe (texel_copy.frag). They move bits: subnormals, NaN payloads and
// -0 must arrive unchanged (the rendering threads flush subnormals in
// arithmetic, and none may happen here), for byte-sized and 8-byte dtypes,
// at an offset into the source, with a row broadcast, and bytes after the
// output keep their values.
TEST(VulkanDevice, RasterCopiesAndFillsMoveBitsExactly) {
  const Device dev = vulkan();
  // 17 rows of 1024 texels and 5 more of float32 bit patterns, 3 floats of tail
  const int64_t n = 4 * (17 * 1024 + 5) + 3;
  std::vector<float> v = values(n + 8, 9);
  const uint32_t patterns[] = {0x00000001u, 0x807fffffu, 0x7fc12345u, 0xffa00001u, 0x80000000u};
  for (size_t i = 0; i < v.size(); i += 7)
    std::memcpy(&v[i], &patterns[(i / 7) % 5], sizeof(float));
  const Tensor src = host(v, {n + 8}).to(dev).slice(0, 8, n + 8);
  const std::vector<float> want(v.begin() + 8, v.end());
  std::vector<uint8_t> want_bytes(want.size() * sizeof(float));
  std::memcpy(want_bytes.data(), want.data(), want_bytes.size());
  EXPECT_EQ(bytes_of(src.clone()), want_bytes);
  // the same bytes as int8 and as float64
  std::vector<int8_t> i8(want_bytes.size());
  std::memcpy(i8.data(), want_bytes.data(), i8.size());
  const Tensor h8 = tessera::tensor(i8, tessera::IntList({static_cast<int64_t>(i8.size())}));
  EXPECT_EQ(bytes_of(h8.to(dev).clone()), bytes_of(h8));
  std::vector<double> f64(want_bytes.size() / 8);
  std::memcpy(f64.data(), want_bytes.data(), f64.size() * 8);
  const Tensor h64 = tessera::tensor(f64, tessera::IntList({static_cast<int64_t>(f64.size())}));
  EXPECT_EQ(bytes_of(h64.to(dev).clone()), bytes_of(h64));
  // fill_ with a subnormal, into the front of a larger tensor
  const int64_t whole = 16 * 1024 * 4;
  Tensor z = host(v, {n + 8}).to(dev);
  z.slice(0, 0, whole).fill_(1e-40);
  const std::vector<float> zv = z.to_vector<float>();
  for (int64_t i = 0; i < whole; ++i)
    ASSERT_EQ(float_bits(zv[static_cast<size_t>(i)]), float_bits(1e-40f)) << i;
  for (int64_t i = whole; i < n + 8; ++i)
    ASSERT_EQ(float_bits(zv[static_cast<size_t>(i)]), float_bits(v[static_cast<size_t>(i)])) << i;
  // a row broadcast: one row of 2048 floats copied into 40 rows
  const Tensor row = host(std::vector<float>(v.begin(), v.begin() + 2048), {2048}).to(dev);
  Tensor rows = tessera::empty({40, 2048}, tessera::TensorOptions(dev));
  rows.copy_(row.expand({40, 2048}));
  const std::vector<float> rv = rows.to_vector<float>();
  for (int64_t r = 0; r < 40; ++r)
    for (int64_t c = 0; c < 2048; ++c)
      ASSERT_EQ(float_bits(rv[static_cast<size_t>(r * 2048 + c)]),
                float_bits(v[static_cast<size_t>(c)]))
          << r << "," << c;
}

// Thousands of small ops queued back to back: the stream's parameter ring
// (plugins/vulkan/src/stream.hpp) wraps several times, and every op must
// still see its own parameters, in order.
TEST(VulkanDevice, ThousandsOfQueuedSmallOpsKeepTheirParameters) {
  const Device dev = vulkan();
  Tensor acc = tessera::zeros({3}, tessera::TensorOptions(dev).dtype(tessera::kInt64));
  const Tensor one = tessera::ones({3}, tessera::TensorOptions(dev).dtype(tessera::kInt64));
  for (int i = 0; i < 6000; ++i) acc.add_(one, i % 3);  // alpha cycles 0, 1, 2
  EXPECT_EQ(acc.to_vector<int64_t>(), (std::vector<int64_t>{6000, 6000, 6000}));
}

// Note [Small-op batches] (plugins/vulkan/src/kernels.hpp): ops of up to 256
// elements run in batches, one workgroup each, in order. Each op here reads
// an element that another invocation wrote in the op before (the broadcast
// last or first element), and every 37th step a large op (not batched)
// writes what the next small one reads, so a batch that reordered its ops,
// missed a barrier, or ran before or after the large op at the wrong place
// gives different integers than the host recurrence.
TEST(VulkanDevice, SmallOpBatchesKeepProgramOrder) {
  const Device dev = vulkan();
  const auto opts = tessera::TensorOptions(dev).dtype(tessera::kInt64);
  constexpr int64_t n = 256, big = 4096;
  std::vector<int64_t> a(n), b(n), z(big, 0);
  for (int64_t i = 0; i < n; ++i) {
    a[static_cast<size_t>(i)] = i % 7 - 3;
    b[static_cast<size_t>(i)] = (i * 5) % 11 - 5;
  }
  Tensor da = tessera::tensor(a).to(dev), db = tessera::tensor(b).to(dev);
  Tensor dz = tessera::zeros({big}, opts);
  for (int step = 0; step < 600; ++step) {
    // a += b[n - 1]; b -= 2 * a[0]
    da.add_(db.slice(0, n - 1, n));
    db.sub_(da.slice(0, 0, 1), 2);
    const int64_t bl = b[n - 1];
    for (auto& x : a) x += bl;
    const int64_t a0 = a[0];
    for (auto& x : b) x -= 2 * a0;
    if (step % 37 == 0) {
      // z (4096 elements: one dispatch of its own) += b[0]; a += z[0:n]
      dz.add_(db.slice(0, 0, 1));
      da.add_(dz.slice(0, 0, n));
      const int64_t b0 = b[0];
      for (auto& x : z) x += b0;
      for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] += z[static_cast<size_t>(i)];
    }
  }
  EXPECT_EQ(da.to_vector<int64_t>(), a);
  EXPECT_EQ(db.to_vector<int64_t>(), b);
  EXPECT_EQ(dz.to_vector<int64_t>(), z);
}

// ---------------------------------------------------------------------------
// Matmul layouts against float64
// ---------------------------------------------------------------------------

// (m x k) @ (k x n) in float64 from host floats.
std::vector<double> matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                               int64_t n, int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<double>(a[static_cast<size_t>(i * k + p)]) *
             static_cast<double>(b[static_cast<size_t>(p * n + j)]);
      c[static_cast<size_t>(i * n + j)] = s;
    }
  return c;
}

TEST(VulkanDevice, MatmulOverTransposedAndSlicedLayoutsMatchesFloat64) {
  const Device dev = vulkan();
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{1, 4, 4}, Shape{5, 8, 12}, Shape{33, 20, 16}, Shape{64, 64, 64},
                        Shape{7, 3, 5}, Shape{16, 12, 4}}) {
    const std::vector<float> av = values(s.m * s.k, 3), bv = values(s.k * s.n, 4);
    const std::vector<double> want = matmul_ref(av, bv, s.m, s.n, s.k);
    for (int layout = 0; layout < 4; ++layout) {
      SCOPED_TRACE("m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " +
                   std::to_string(s.k) + " layout " + std::to_string(layout));
      // layout bit 0: a stored transposed; bit 1: b stored transposed
      Tensor a = (layout & 1) ? host(av, {s.m, s.k}).t().contiguous().to(dev).t()
                              : host(av, {s.m, s.k}).to(dev);
      Tensor b = (layout & 2) ? host(bv, {s.k, s.n}).t().contiguous().to(dev).t()
                              : host(bv, {s.k, s.n}).to(dev);
      const std::vector<float> got = tessera::mm(a, b).to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i])) * static_cast<double>(s.k))
            << i;
    }
  }
  // batched, and a column slice of a wider matrix (row stride != n)
  const std::vector<float> av = values(3 * 8 * 12, 5), bv = values(3 * 12 * 24, 6);
  const Tensor a = host(av, {3, 8, 12}).to(dev);
  const Tensor wide = host(bv, {3, 12, 24}).to(dev);
  const Tensor b = wide.slice(2, 4, 20);  // 3 x 12 x 16, row stride 24
  const std::vector<float> got = tessera::bmm(a, b).to_vector<float>();
  const std::vector<float> bh = wide.slice(2, 4, 20).contiguous().to_vector<float>();
  for (int64_t bi = 0; bi < 3; ++bi) {
    const std::vector<float> ab(av.begin() + bi * 96, av.begin() + (bi + 1) * 96);
    const std::vector<float> bb(bh.begin() + bi * 192, bh.begin() + (bi + 1) * 192);
    const std::vector<double> want = matmul_ref(ab, bb, 8, 16, 12);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[static_cast<size_t>(bi) * 128 + i], want[i], 1e-5 * 12) << bi << " " << i;
  }
}

// ---------------------------------------------------------------------------
// Convolution against float64
// ---------------------------------------------------------------------------

// A plain convolution (groups 1) in float64 over host floats: x (N, C,
// spatial...), w (O, C, k...), spatial dims 1 to 3, padded in front to 3.
struct ConvCase {
  std::vector<int64_t> in, kernel;  // spatial sizes
  int64_t n, c, o, stride, padding, dilation;
  bool bias, permuted_input;
};

std::vector<double> conv_ref(const ConvCase& cc, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b) {
  const size_t k = cc.in.size();
  int64_t in[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, os[3] = {1, 1, 1};
  for (size_t i = 0; i < k; ++i) {
    in[3 - k + i] = cc.in[i];
    ks[3 - k + i] = cc.kernel[i];
  }
  for (int i = 0; i < 3; ++i) {
    const bool real = i >= static_cast<int>(3 - k);
    const int64_t pad = real ? cc.padding : 0, st = real ? cc.stride : 1,
                  dil = real ? cc.dilation : 1;
    os[i] = (in[i] + 2 * pad - dil * (ks[i] - 1) - 1) / st + 1;
  }
  const int64_t s = os[0] * os[1] * os[2], taps = ks[0] * ks[1] * ks[2];
  std::vector<double> out(static_cast<size_t>(cc.n * cc.o * s));
  for (int64_t n = 0; n < cc.n; ++n)
    for (int64_t o = 0; o < cc.o; ++o)
      for (int64_t z = 0; z < os[0]; ++z)
        for (int64_t y = 0; y < os[1]; ++y)
          for (int64_t xo = 0; xo < os[2]; ++xo) {
            double acc = cc.bias ? b[static_cast<size_t>(o)] : 0.0;
            for (int64_t c = 0; c < cc.c; ++c)
              for (int64_t kz = 0; kz < ks[0]; ++kz)
                for (int64_t ky = 0; ky < ks[1]; ++ky)
                  for (int64_t kx = 0; kx < ks[2]; ++kx) {
                    const int64_t pz = k >= 3 ? cc.padding : 0, py = k >= 2 ? cc.padding : 0;
                    const int64_t sz = k >= 3 ? cc.stride : 1, sy = k >= 2 ? cc.stride : 1;
                    const int64_t dz = k >= 3 ? cc.dilation : 1, dy = k >= 2 ? cc.dilation : 1;
                    const int64_t iz = z * sz - pz + kz * dz, iy = y * sy - py + ky * dy,
                                  ix = xo * cc.stride - cc.padding + kx * cc.dilation;
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2])
                      continue;
                    const double xv = x[static_cast<size_t>(
                        ((n * cc.c + c) * in[0] + iz) * in[1] * in[2] + iy * in[2] + ix)];
                    const double wv = w[static_cast<size_t>((o * cc.c + c) * taps +
                                                            (kz * ks[1] + ky) * ks[2] + kx)];
                    acc += xv * wv;
                  }
            out[static_cast<size_t>(((n * cc.o + o) * os[0] + z) * os[1] * os[2] + y * os[2] +
                                    xo)] = acc;
          }
  return out;
}

// Note [Convolution through matmul] (plugins/vulkan/src/conv/convolution.cpp):
// float32 convolutions whose output positions per image are a multiple of 4
// run as im2col + the texel matmul, the others through the direct kernel;
// both must match float64, over 1-3 spatial dims, stride, padding,
// dilation, bias or none, and an input that is a permuted view.
TEST(VulkanDevice, ConvolutionsMatchFloat64OnBothPaths) {
  const Device dev = vulkan();
  const std::vector<ConvCase> cases = {
      {{10, 12}, {3, 3}, 2, 3, 8, 1, 1, 1, true, false},     // matmul: S = 120
      {{16, 16}, {3, 3}, 1, 5, 6, 2, 2, 2, false, false},    // matmul: S = 64
      {{12, 8}, {3, 3}, 2, 4, 12, 1, 0, 1, true, true},      // matmul, permuted input: S = 60
      {{9, 9}, {3, 3}, 2, 3, 8, 1, 0, 1, true, false},       // direct: S = 49
      {{64}, {5}, 3, 6, 10, 1, 2, 1, true, false},           // 1-d, matmul: S = 64
      {{6, 6, 8}, {3, 3, 3}, 1, 2, 4, 1, 1, 1, true, false}  // 3-d, matmul: S = 288
  };
  int index = 0;
  for (const ConvCase& cc : cases) {
    SCOPED_TRACE("case " + std::to_string(index++));
    int64_t in_numel = cc.n * cc.c, w_numel = cc.o * cc.c;
    for (int64_t v : cc.in) in_numel *= v;
    for (int64_t v : cc.kernel) w_numel *= v;
    const std::vector<float> x = values(in_numel, 11), w = values(w_numel, 12),
                             b = values(cc.o, 13);
    const std::vector<double> ref = conv_ref(cc, x, w, b);
    std::vector<int64_t> in_shape = {cc.n, cc.c}, w_shape = {cc.o, cc.c};
    in_shape.insert(in_shape.end(), cc.in.begin(), cc.in.end());
    w_shape.insert(w_shape.end(), cc.kernel.begin(), cc.kernel.end());
    Tensor input = host(x, in_shape).to(dev);
    if (cc.permuted_input) {
      // the same values, held channels-last: a permuted (non-contiguous) view
      input = input.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
      ASSERT_FALSE(input.is_contiguous());
    }
    const Tensor weight = host(w, w_shape).to(dev);
    const Tensor bias = cc.bias ? host(b, {cc.o}).to(dev) : Tensor();
    const std::vector<int64_t> k = cc.in;
    std::vector<int64_t> stride(k.size(), cc.stride), padding(k.size(), cc.padding),
        dilation(k.size(), cc.dilation), output_padding(k.size(), 0);
    const std::vector<float> got =
        tessera::convolution(input, weight, bias, tessera::IntList(stride),
                             tessera::IntList(padding), tessera::IntList(dilation), false,
                             tessera::IntList(output_padding), 1)
            .to_vector<float>();
    ASSERT_EQ(got.size(), ref.size());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ref.size(); ++i)
      if (!(std::fabs(got[i] - ref[i]) <= 2e-5 * (1.0 + std::fabs(ref[i])))) {
        if (bad++ == 0) first = i;
      }
    EXPECT_EQ(bad, 0u) << "first at " << first << ": " << got[first] << " vs " << ref[first];
  }
}

// ---------------------------------------------------------------------------
// Past maxStorageBufferRange (128 MiB on lavapipe)
// ---------------------------------------------------------------------------

TEST(VulkanDevice, TensorsLargerThanTheStorageBufferRangeCompute) {
  const Device dev = vulkan();
  constexpr int64_t n = int64_t{40} << 20;  // 160 MiB of float32
  std::vector<float> hv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    hv[static_cast<size_t>(i)] = static_cast<float>(i % 1000) - 500.0f;
  const Tensor x = host(hv, {n}).to(dev);
  const Tensor y = x * 2.0 + 1.0;  // every byte, past 128 MiB too (the fast path)
  const std::vector<float> yv = y.to_vector<float>();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i)
    mismatches += yv[static_cast<size_t>(i)] != hv[static_cast<size_t>(i)] * 2.0f + 1.0f;
  EXPECT_EQ(mismatches, 0);
  // a strided view over all 160 MiB, misaligned: the generic path, whose
  // offsets run past 128 MiB
  const Tensor sparse = x.slice(0, 1, n, 4099);
  const std::vector<float> sv = (sparse + sparse).to_vector<float>();
  ASSERT_EQ(static_cast<int64_t>(sv.size()), (n - 2) / 4099 + 1);
  for (size_t k = 0; k < sv.size(); ++k) ASSERT_EQ(sv[k], hv[1 + k * 4099] * 2.0f) << k;
  // a reduction over all of it (exact: integers below 2^24 in magnitude per
  // step, accumulated in double)
  double want = 0;
  for (float v : hv) want += v;
  EXPECT_EQ(tessera::sum(x).item<double>(), want);
}

// Note [lavapipe loop budget] (plugins/vulkan/src/reduction/reduce.cpp): long
// reductions and scans run in chunks; exact integer references.
TEST(VulkanDevice, LongReductionsAndScansAreExact) {
  const Device dev = vulkan();
  constexpr int64_t n = 3000000;  // 256 lanes x 2048 elements = 524288 per chunk
  const Tensor r = tessera::arange(0, n, 1, tessera::kInt64).to(dev);
  EXPECT_EQ(tessera::sum(r).item<int64_t>(), n * (n - 1) / 2);
  // a reduction over two of three dims, long enough to split, 4 outputs
  const Tensor r3 = r.reshape({4, 1000, 750});
  const std::vector<int64_t> per_row = tessera::sum(r3, {1, 2}).to_vector<int64_t>();
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t lo = i * 750000, hi = lo + 750000;
    EXPECT_EQ(per_row[static_cast<size_t>(i)], (hi * (hi - 1) - lo * (lo - 1)) / 2) << i;
  }
  // argmax: the first of two equal maxima, both in late chunks
  std::vector<float> v(static_cast<size_t>(n), 0.0f);
  v[2100000] = 5.0f;
  v[2900000] = 5.0f;
  EXPECT_EQ(tessera::argmax(host(v, {n}).to(dev)).item<int64_t>(), 2100000);
  // a scan over 200,000 elements (49 chunks of 4096)
  const Tensor ones = tessera::ones({200000}, tessera::TensorOptions(dev).dtype(tessera::kInt32));
  const std::vector<int64_t> c = tessera::cumsum(ones, 0, tessera::kInt64).to_vector<int64_t>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < 200000; ++i) wrong += c[static_cast<size_t>(i)] != i + 1;
  EXPECT_EQ(wrong, 0);
}

// float32's unit in the last place at |v| (subnormal spacing below the
// smallest normal).
double ulp32(double v) {
  v = std::fabs(v);
  if (v < 0x1p-126) return 0x1p-149;
  int e = 0;
  std::frexp(v, &e);  // v = m 2^e, 0.5 <= m < 1
  return std::ldexp(1.0, e - 24);
}

// Note [Reduction strategy] (plugins/vulkan/src/reduction/reduce.cpp): every
// reduced length from 1 to 1024 (both sides of each switch between one
// invocation per output and chunks plus a merge), for few and many outputs,
// a strided reduced dim and a contiguous one, float32 and float64 sums,
// means and argmax with ties, against host float64 (float32: within one ulp
// of the float64 sum, since the device accumulates in double and rounds
// once; float64: within 1e-15 of the sum of magnitudes).
TEST(VulkanDevice, ReductionsOverEveryLengthMatchFloat64) {
  const Device dev = vulkan();
  constexpr int64_t kMax = 1024;
  struct Layout {
    const char* name;
    std::vector<int64_t> shape;  // kMax at `dim`
    int64_t dim;
  };
  // [2, L, 3] over dim 1: 6 outputs, reduced stride 3; [5, L] over dim 1:
  // contiguous rows; [24, L, 128] over dim 1: 3072 outputs (a masked mean
  // pooling's [batch, length, hidden])
  const std::vector<Layout> layouts = {
      {"[2,L,3] dim 1", {2, kMax, 3}, 1},
      {"[5,L] dim 1", {5, kMax}, 1},
      {"[24,L,128] dim 1", {24, kMax, 128}, 1},
  };
  for (const Layout& lay : layouts) {
    int64_t numel = 1;
    for (int64_t s : lay.shape) numel *= s;
    std::vector<float> hv = values(numel, 31);
    // ties for argmax: values on a coarse grid
    for (float& e : hv) e = std::round(e * 8.0f) / 8.0f + (e > 0.9f ? 0.0f : e * 1e-3f);
    const Tensor hx = host(hv, lay.shape);
    const Tensor dx = hx.to(dev);
    const Tensor hx64 = hx.to(tessera::kFloat64) * (1.0 / 3.0);
    const Tensor dx64 = hx64.to(dev);
    const std::vector<double> h64 = hx64.to_vector<double>();
    const bool many = lay.shape[0] == 24;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < lay.dim; ++d) outer *= lay.shape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(lay.dim) + 1; d < lay.shape.size(); ++d)
      inner *= lay.shape[d];
    for (int64_t len = 1; len <= kMax; ++len) {
      // every length up to 160 (the switches at 16 | 17 and 128), then the
      // neighbours of each multiple of 64 (where a chunk count changes) and
      // every 16th
      const int64_t dense = many ? 40 : 160;
      if (len > dense && len % 16 != 0 && (len + 1) % 64 > 2) continue;
      const Tensor x = dx.slice(lay.dim, 0, len), x64 = dx64.slice(lay.dim, 0, len);
      const std::vector<float> sum = tessera::sum(x, {lay.dim}).to_vector<float>();
      const std::vector<float> mean = tessera::mean(x, {lay.dim}).to_vector<float>();
      const std::vector<double> sum64 = tessera::sum(x64, {lay.dim}).to_vector<double>();
      const std::vector<int64_t> arg = tessera::argmax(x, lay.dim).to_vector<int64_t>();
      ASSERT_EQ(static_cast<int64_t>(sum.size()), outer * inner);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double ref = 0, ref64 = 0, mag64 = 0;
          int64_t best = 0;
          for (int64_t r = 0; r < len; ++r) {
            const size_t k = static_cast<size_t>((o * kMax + r) * inner + i);
            ref += hv[k];
            ref64 += h64[k];
            mag64 += std::fabs(h64[k]);
            if (hv[k] > hv[static_cast<size_t>((o * kMax + best) * inner + i)]) best = r;
          }
          const size_t e = static_cast<size_t>(o * inner + i);
          // one ulp, or the double sum's own rounding where the sum cancels
          const double slack = 1e-15 * mag64 * 3.0;
          ASSERT_LE(std::fabs(sum[e] - ref), std::max(ulp32(ref), slack))
              << lay.name << " L=" << len << " " << e;
          const double m = ref / static_cast<double>(len);
          ASSERT_LE(std::fabs(mean[e] - m), std::max(ulp32(m), slack / static_cast<double>(len)))
              << lay.name << " L=" << len << " " << e;
          ASSERT_LE(std::fabs(sum64[e] - ref64), 1e-15 * mag64)
              << lay.name << " L=" << len << " " << e;
          ASSERT_EQ(arg[e], best) << lay.name << " L=" << len << " " << e;
        }
    }
  }
  // one output over lengths around the chunk counts that change (a chunk
  // is at least 64 elements, at most 2048; past 2048 chunks the merge takes
  // a workgroup): int64, exact
  for (int64_t n : {int64_t{127}, int64_t{128}, int64_t{129}, int64_t{4095}, int64_t{4097},
                    int64_t{131071}, int64_t{131073}, int64_t{2048} * 2048 + 1}) {
    const Tensor r = tessera::arange(0, n, 1, tessera::kInt64).to(dev);
    EXPECT_EQ(tessera::sum(r).item<int64_t>(), n * (n - 1) / 2) << n;
  }
}

// Note [erf for narrow floats] (plugins/vulkan/shaders/pointwise/pointwise_math.glsl):
// erf, erfc and gelu of float32 over a dense sweep of float32 bit patterns
// (every 509th; erfinv every 4093rd: subnormals, tails, the split at 0.5,
// erfc's float32 underflow near 10.06) against glibc's double erf/erfc
// (erfinv: the long double root of erf(x) = y), within one float32 ulp; on
// the texel path (contiguous) and pointwise.comp (a strided view). gelu's
// backward (autograd's erf and exp) against the float64 derivative.
TEST(VulkanDevice, ErfFamilyOfFloat32IsWithinOneUlp) {
  const Device dev = vulkan();
  std::vector<float> xs;
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 509u) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (std::fabs(f) > 20.0f) break;  // erf is +-1 and erfc 0 or 2 well before
    xs.push_back(f);
    xs.push_back(-f);
  }
  for (int i = 0; i <= 200000; ++i)
    xs.push_back(-11.0f + 22.0f * static_cast<float>(i) / 200000.0f);
  for (float f : {0.0f, -0.0f, 0.5f, -0.5f, std::nextafter(0.5f, 0.0f), 10.1f, 10.06f, 30.0f,
                  -30.0f, 1e30f, -1e30f})
    xs.push_back(f);
  while (xs.size() % 4 != 0) xs.push_back(1.0f);
  const int64_t n = static_cast<int64_t>(xs.size());
  const Tensor dx = host(xs, {n}).to(dev);
  auto check = [&](const char* op, const Tensor& in, const std::vector<float>& x, auto&& ref) {
    const std::vector<float> got =
        tessera::call_op(op, {tessera::detail::value(in)}).to_vector<float>();
    ASSERT_EQ(got.size(), x.size());
    double worst = 0;
    float worst_x = 0;
    for (size_t k = 0; k < x.size(); ++k) {
      const double want = ref(static_cast<double>(x[k]));
      const double err = std::fabs(static_cast<double>(got[k]) - want) / ulp32(want);
      ASSERT_LE(err, 1.0) << op << "(" << x[k] << ") = " << got[k] << ", want " << want;
      if (err > worst) {
        worst = err;
        worst_x = x[k];
      }
    }
    std::printf("%s over %zu float32: worst %.3f ulp at %.9g\n", op, x.size(), worst, worst_x);
  };
  const auto gelu_ref = [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); };
  // texel_unary.comp
  check("erf", dx, xs, [](double v) { return std::erf(v); });
  check("erfc", dx, xs, [](double v) { return std::erfc(v); });
  check("gelu", dx, xs, gelu_ref);
  // pointwise.comp: every 29th element
  {
    const Tensor strided = dx.slice(0, 0, n, 29);
    std::vector<float> sx;
    for (size_t k = 0; k < xs.size(); k += 29) sx.push_back(xs[k]);
    check("erf", strided, sx, [](double v) { return std::erf(v); });
    check("erfc", strided, sx, [](double v) { return std::erfc(v); });
    check("gelu", strided, sx, gelu_ref);
  }
  // erfinv over float32 y in (-1, 1): every 4093rd bit pattern below 1 (the
  // tail near 1 included) and its negation
  {
    std::vector<float> ys;
    for (uint32_t bits = 0; bits < 0x3f800000u; bits += 4093u) {
      float f;
      std::memcpy(&f, &bits, sizeof f);
      ys.push_back(f);
      ys.push_back(-f);
    }
    for (float f : {std::nextafter(1.0f, 0.0f), -std::nextafter(1.0f, 0.0f), 0.5f, -0.5f})
      ys.push_back(f);
    while (ys.size() % 4 != 0) ys.push_back(0.25f);
    const Tensor dy = host(ys, {static_cast<int64_t>(ys.size())}).to(dev);
    // the root of erf(x) = |y| by bisection in double on [0, 6], then two
    // long double Newton steps (erfc past 0.5, where 1 - y is exact)
    check("erfinv", dy, ys, [](double y) {
      const double a = std::fabs(y);
      if (a == 0.0) return y;
      double lo = 0.0, hi = 6.0;
      for (int i = 0; i < 60; ++i) {
        const double mid = 0.5 * (lo + hi);
        const bool below = a > 0.5 ? std::erfc(mid) > 1.0 - a : std::erf(mid) < a;
        if (below)
          lo = mid;
        else
          hi = mid;
      }
      long double x = 0.5L * (lo + hi);
      for (int i = 0; i < 2; ++i) {
        const long double slope =
            2.0L / std::sqrt(3.14159265358979323846264338327950288L) * std::exp(-x * x);
        x += a > 0.5 ? (std::erfc(x) - (1.0L - a)) / slope : -(std::erf(x) - a) / slope;
      }
      return std::copysign(static_cast<double>(x), y);
    });
  }
  // gelu's backward: g (Phi(x) + x phi(x)), as autograd composes it from
  // erf, exp, mul and add in float32 (each op rounding, so a tolerance
  // rather than ulps)
  {
    std::vector<float> gx;
    for (int i = 0; i <= 40000; ++i)
      gx.push_back(-12.0f + 24.0f * static_cast<float>(i) / 40000.0f);
    while (gx.size() % 4 != 0) gx.push_back(0.0f);
    const std::vector<float> gv = values(static_cast<int64_t>(gx.size()), 41);
    const int64_t m = static_cast<int64_t>(gx.size());
    Tensor x = host(gx, {m}).to(dev).requires_grad_();
    const Tensor g = host(gv, {m}).to(dev);
    tessera::gelu(x).backward(g);
    const std::vector<float> got = x.grad().to_vector<float>();
    for (size_t k = 0; k < gx.size(); ++k) {
      const double v = gx[k];
      const double d = 0.5 * std::erfc(-v / std::sqrt(2.0)) +
                       v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * 3.14159265358979323846);
      const double want = gv[k] * d;
      ASSERT_NEAR(got[k], want, 1e-6 + 1e-5 * std::fabs(want)) << "gelu backward at " << v;
    }
  }
}

// ---------------------------------------------------------------------------
// Training: a small MLP, plain SGD written with ops
// ---------------------------------------------------------------------------

// Trains a 16-32-32-4 tanh MLP on a fixed regression batch for `steps` SGD
// steps on `device`; returns the loss after each step.
std::vector<double> train_mlp(Device device, int steps) {
  const std::vector<float> xv = values(64 * 16, 11), tv = values(64 * 4, 12);
  const Tensor x = host(xv, {64, 16}).to(device);
  const Tensor target = host(tv, {64, 4}).to(device);
  // the same initial weights on both devices: made on the host from one seed
  auto param = [&](int64_t rows, int64_t cols, uint32_t seed) {
    std::vector<float> w = values(rows * cols, seed);
    const float scale = 1.0f / std::sqrt(static_cast<float>(rows));
    for (auto& e : w) e *= scale;
    return host(w, {rows, cols}).to(device).requires_grad_();
  };
  Tensor w1 = param(16, 32, 21), b1 = param(1, 32, 22);
  Tensor w2 = param(32, 32, 23), b2 = param(1, 32, 24);
  Tensor w3 = param(32, 4, 25), b3 = param(1, 4, 26);
  std::vector<Tensor> params = {w1, b1, w2, b2, w3, b3};
  std::vector<double> losses;
  const double lr = 0.1;
  for (int step = 0; step < steps; ++step) {
    const Tensor h1 = tessera::tanh(tessera::matmul(x, w1) + b1);
    const Tensor h2 = tessera::relu(tessera::matmul(h1, w2) + b2);
    const Tensor y = tessera::matmul(h2, w3) + b3;
    const Tensor loss = tessera::mse_loss(y, target);
    loss.backward();
    {
      tessera::autograd::NoGradGuard no_grad;
      for (Tensor& p : params) {
        p.sub_(p.grad(), lr);
        p.grad().zero_();
      }
    }
    losses.push_back(loss.item<double>());
  }
  return losses;
}

TEST(VulkanDevice, MlpTrainsToTheSameLossAsOnCpu) {
  const Device dev = vulkan();
  const std::vector<double> cpu = train_mlp(tessera::kCPU, 50);
  const std::vector<double> vk = train_mlp(dev, 50);
  ASSERT_EQ(cpu.size(), vk.size());
  EXPECT_LT(cpu.back(), cpu.front() * 0.9) << "the MLP did not train on cpu:0";
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(vk[i], cpu[i], 1e-4) << "step " << i;
  std::printf("MLP loss after 50 SGD steps: cpu:0 %.8f, vulkan:0 %.8f (start %.6f)\n", cpu.back(),
              vk.back(), cpu.front());
}

}  // namespace
