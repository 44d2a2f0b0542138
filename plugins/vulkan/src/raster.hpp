// raster.hpp - elementwise results written by the rasterizer on CPU devices.
//
// Note [Raster stores]
// ~~~~~~~~~~~~~~~~~~~~
// lavapipe compiles every store of a compute shader into a loop over the
// SIMD lanes: each lane's value stored on its own after the vectors are
// spilled to the stack (Note [Texel fast paths], device.hpp: ~60% of a
// float32 add's time). Its fragment shading writes a color attachment with
// vector stores instead. So on lavapipe (its queue renders), an
// elementwise fast path with a contiguous output (texel_arith: float32
// add/sub/mul/div; texel_copy: copy_ and fill_ of one dtype) draws instead
// of dispatching: the output's memory gets a
// linear R32G32B32A32_UINT image over it (one image per draw, bound to
// the block's VkDeviceMemory at the output's offset), one triangle covers
// it (raster.vert), and the fragment shader computes the texel of its
// pixel (gl_FragCoord: texel first + y * width + x) with the same GLSL as
// the compute shader and returns its bits as the color.
//
// lavapipe shades and stores 4x4 pixel blocks and pads a linear image's
// rows to 64 bytes and its height to 4 rows, so a partial block may be
// stored whole, over bytes past the output that other work may be writing.
// So draws cover whole blocks only, and an image's memory requirements
// must be exactly the output's bytes: images kWidth texels wide (narrower,
// a multiple of 4, for small outputs) and a multiple of 4 rows high, at
// most max_rows_ rows per draw. The texels after the last whole block of
// rows are computed (texel_arith.comp from `first`).
//
// lavapipe's rendering threads flush subnormal inputs and results to zero
// (x86 DAZ/FTZ; its compute threads do not, and it offers no
// denormPreserve), so the fragment shaders compute such texels again,
// exactly (raster.glsl): results are bit for bit those of the compute path.
// The 16M-float add of bench_vulkan: 4.5-4.6 GB/s computed, 6.1-6.4 drawn
// (alternating runs; docs/vulkan.md has the probe's figures).
//
// Images, views and framebuffers are made per draw and destroyed when the
// stream completes the work (tsr_plugin_stream::on_complete). The stream's
// barriers include the color-attachment stage on such a device (Device::
// barrier_stages), so draws order with dispatches and copies as one
// dispatch does with another. TESSERA_VULKAN_RASTER=0 turns the path off;
// =all takes it for every output size, in many small draws (tests: the
// conformance suite's ops family runs so).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "kernels.hpp"
#include "memory.hpp"
#include "tessera/plugin.h"

namespace tessera::vulkan {

struct Device;

class Raster {
 public:
  static constexpr uint32_t kWidth = 1024;  // texels per image row at most
  static constexpr uint32_t kBlock = 4;     // lavapipe's pixel blocks: 4 x 4
  // Outputs of fewer texels are computed: a draw costs an image, a view and
  // a framebuffer, and below this size the compute shader is as fast.
  static constexpr uint64_t kMinTexels = uint64_t{1} << 14;
  static constexpr VkFormat kFormat = VK_FORMAT_R32G32B32A32_UINT;

  // "" when `physical` is lavapipe, its queue `family` renders and it can
  // render into linear images over tensor memory; else why not.
  static std::string unusable_reason(VkPhysicalDevice physical, uint32_t family,
                                     const VkPhysicalDeviceProperties& properties);

  // Borrows `device` (created, with its kernels), which must outlive this.
  // `all_sizes`: outputs of any size draw their whole blocks, in images of
  // at most 16 texels by 8 rows, many draws per op (tests:
  // TESSERA_VULKAN_RASTER=all).
  // Throws on Vulkan failure.
  Raster(Device& device, bool all_sizes);
  ~Raster();
  Raster(const Raster&) = delete;
  Raster& operator=(const Raster&) = delete;

  // Records `fragment` on `stream` (NULL: the default stream) drawing the
  // first texels of [0, n4) of a contiguous output that starts at byte
  // `offset` of `out` (16-byte aligned): as many as whole blocks of image
  // rows cover, none below the size threshold. Returns how many (the
  // caller computes the rest); 0, having recorded nothing, also when the
  // output's memory cannot take the images. `params` (nbytes <=
  // Kernels::kMaxPushParams, a multiple of 8) is the shader's push-constant
  // block, whose last 8 bytes are (first texel, width) and are written here
  // for each draw; `views` are pushed as texel bindings 1..nviews, `spec` as
  // specialization constants 1..3. Throws on Vulkan failure.
  uint64_t draw(tsr_plugin_stream* stream, const Shader& fragment, void* params, size_t nbytes,
                const VkBufferView* views, uint32_t nviews, const Kernels::Spec& spec,
                const Block& out, VkDeviceSize offset, uint64_t n4);

 private:
  // One image over the output, its view and framebuffer; owned.
  struct Target {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    uint32_t width = 0;
    uint32_t height = 0;
    uint64_t first = 0;  // its first texel in the output
  };
  // A target of width x height texels at byte `at` of `out`; false (nothing
  // made) when the memory cannot take it.
  bool make_target(const Block& out, VkDeviceSize at, uint32_t width, uint32_t height, Target& t);
  void destroy_target(const Target& t) noexcept;
  VkPipeline pipeline(const Shader& fragment, const Kernels::Spec& spec);
  // Destroys everything this made (the constructor's failure path too).
  void release() noexcept;

  Device& device_;
  uint64_t min_texels_ = kMinTexels;
  uint32_t max_width_ = kWidth;  // texels per image row at most
  uint32_t max_rows_ = 0;        // rows per draw: the framebuffer and image limits
  VkDescriptorSetLayout set_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkRenderPass pass_ = VK_NULL_HANDLE;
  VkShaderModule vertex_ = VK_NULL_HANDLE;
  std::mutex mu_;
  // guarded by mu_; owned
  std::map<const uint32_t*, VkShaderModule> modules_;
  std::map<std::pair<const uint32_t*, Kernels::Spec>, VkPipeline> pipelines_;
};

}  // namespace tessera::vulkan
