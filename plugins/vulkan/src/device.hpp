// device.hpp - the plugin context (one per init) and its Vulkan devices.
//
// One Tessera device per Vulkan physical device with a compute queue and the
// features the kernels need (buffer device address, 64-bit integers,
// timeline semaphores); devices without them are listed in the log with the
// missing feature and skipped. No Vulkan loader, no driver or no usable device
// makes init return UNAVAILABLE with the reason.
//
// Validation: TESSERA_VULKAN_VALIDATION=1 enables VK_LAYER_KHRONOS_validation
// with a debug-utils messenger that counts errors; each error is logged and
// turns the next stream synchronisation or kernel call of the plugin into an
// INTERNAL status naming it, so a test that provokes one fails.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host_copy.hpp"
#include "memory.hpp"
#include "tessera/plugin.h"

namespace tessera::vulkan {

class Kernels;
class Raster;
class StagingPool;

struct Device {
  tsr_plugin_context* context = nullptr;  // borrowed: owns this device
  int32_t index = 0;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mu;  // vkQueueSubmit needs the queue externally synchronised
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory_properties{};
  uint32_t device_memory_type = 0;    // where tensors live
  uint32_t staging_memory_type = 0;   // host-visible, host-coherent
  bool device_memory_mapped = false;  // device_memory_type is host-visible
  // Note [Uncached device memory]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  // Device_memory_type is host-visible but
  // not host-cached (a discrete GPU's resizable BAR: NVIDIA's H200 exposes
  // all 140 GiB so). The host writes it at full speed (write-combined) but
  // reads it one uncached PCIe transaction at a time: 64 MiB took 1.7 s
  // (0.04 GB/s). Host reads of more than kDirectUncachedRead bytes go
  // through a cached staging buffer instead (reads_directly()).
  bool device_memory_cached = true;
  static constexpr uint64_t kDirectUncachedRead = 1024;
  // Whether the host reads `nbytes` of mapped tensor memory in place.
  bool reads_directly(uint64_t nbytes) const noexcept {
    return device_memory_cached || nbytes <= kDirectUncachedRead;
  }
  uint64_t heap_size = 0;
  uint64_t max_allocation = 0;
  uint64_t dtypes = 0;  // TSR_DTYPE_BIT mask the kernels support here
  uint32_t subgroup_size = 0;
  bool timestamps = false;
  // Note [Texel fast paths]
  // ~~~~~~~~~~~~~~~~~~~~~~~
  // Storage texel buffers of R32G32B32A32_SFLOAT /
  // _UINT are supported, so blocks carry 16-byte-texel views (memory.hpp)
  // and kernels may take the vectorised paths (kernels.hpp: Kernels::dispatch
  // with views). On by default; TESSERA_VULKAN_TEXEL=0 turns them off.
  bool texel_views = false;
  // Note [Small-op batches] (kernels.hpp): on where device memory is
  // host-visible (the parameter ring exists); TESSERA_VULKAN_BATCH=0 turns
  // it off.
  bool small_op_batches = false;
  // Note [Output-channel blocks]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  // Output channels per work item of the
  // direct convolution (convolution.comp's OB, a specialization constant). 4 on
  // a CPU device (lavapipe: each input element loaded feeds four
  // multiply-adds); 1 elsewhere, because NVIDIA's Vulkan driver (580.159,
  // H200) lost the stores of some blocks with 4 (all output channels from
  // 16 of a 32-channel float64 3x3 convolution, the fifth of five in the
  // 4x4-kernel convolution a 1x1 convolution's weight gradient runs); with
  // 1 the conformance convolutions pass there. The cause in the driver is not
  // known. With 1 the shader still makes its four multiply-adds per input
  // element (three on the same weight, never stored): the form that was
  // checked there. TESSERA_VULKAN_CONV_BLOCK=1 or 4 chooses (tests of both on
  // lavapipe).
  int32_t conv_block = 4;
  uint64_t max_texel_elements = 0;  // maxTexelBufferElements
  // Note [Raster stores] (raster.hpp): elementwise outputs drawn instead of
  // computed; null where the device does not take that path.
  std::unique_ptr<Raster> raster;
  // The stages and accesses of the stream's barriers (Note [Vulkan
  // streams], stream.hpp): compute and transfer, plus fragment shading and
  // color attachments where `raster` draws.
  VkPipelineStageFlags barrier_stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkAccessFlags barrier_access = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                                 VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  // VK_KHR_push_descriptor (required): parameter blocks and texel views.
  PFN_vkCmdPushDescriptorSetKHR push_descriptor = nullptr;
  std::unique_ptr<Allocator> allocator;
  std::unique_ptr<tsr_plugin_stream> default_stream;
  std::unique_ptr<Kernels> kernels;
  // Note [Pipelined staging] (staging.hpp): host <-> device copies through
  // staging buffers.
  std::unique_ptr<StagingPool> staging;
  // Every live stream of this device (the default one too), so freeing
  // memory can first finish the work that may still use it.
  std::mutex streams_mu;
  std::vector<tsr_plugin_stream*> streams;

  // Note [Timeline semaphores outlive their streams]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  // A stream's timeline semaphore is not destroyed with the stream: it goes
  // back to this pool and the next new stream continues it from its current
  // value; the pool is destroyed with the device, after drain_queue_thread().
  // Two reasons:
  //  - an event is (semaphore, value) and may outlive the stream it was
  //    recorded on (as in PyTorch), so waiting on it must stay valid;
  //  - Mesa's common queue code (lavapipe 22.3) releases a submission's
  //    references to the timelines it waited on only after the submission's
  //    own signal is visible. A host that waits for the consumer stream and
  //    then destroys the producer stream's semaphore races with that release:
  //    the queue thread then writes into the freed timeline (a SIGSEGV in
  //    lavapipe's queue thread, 8 runs in 60 of the conformance `streams`
  //    family on a loaded machine; gdb put the fault in the release of a
  //    timeline point whose owner's free list held garbage).
  // Takes a timeline from the pool (or creates one); *value is its current
  // value, where the new stream's submissions continue. Throws on failure.
  VkSemaphore take_timeline(uint64_t* value);
  // Gives `timeline` back to the pool. Everything signalled on it must have
  // completed.
  void give_back_timeline(VkSemaphore timeline) noexcept;
  // Waits until the queue has finished with every earlier submission,
  // including the bookkeeping a submit thread does after signalling: an
  // empty submission with a fence, which a submit thread handles only after
  // it has finished with the ones before it.
  void drain_queue_thread() noexcept;
  std::mutex timelines_mu;
  std::vector<VkSemaphore> spare_timelines;  // owned, guarded by timelines_mu

  ~Device();
  // Submits and waits for the work of every stream of this device.
  void synchronize_all();
  // A host-visible staging buffer of `nbytes`, for copies where device memory
  // is not mapped. Owned by the caller (destroy_staging).
  struct Staging {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
  };
  Staging create_staging(VkDeviceSize nbytes);
  void destroy_staging(Staging& s) noexcept;
};

// memcpy(dst, src, n) between host memory and mapped device or staging
// memory, through the context's CopyPool when large (Note [Host copies]).
// Never throws.
void host_copy(tsr_plugin_context& context, void* dst, const void* src, size_t n) noexcept;

// Throws when the plugin recorded a validation error not yet reported.
void check_validation(tsr_plugin_context& context);

}  // namespace tessera::vulkan

// The plugin context, one per successful init. Owns the instance, the
// messenger and the devices (destroyed in reverse order by shutdown).
// Note [Pinned host memory]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Host_alloc_pinned hands out host-visible,
// mapped memory of device 0 backed by a transfer buffer (a staging buffer
// that lives until host_free_pinned). A copy between such memory and device
// 0 is one vkCmdCopyBuffer enqueued on the stream - no staging buffer, no
// memcpy, no host wait before it - which is what pinning buys on a discrete
// GPU; other devices (and other host memory) take the usual paths.
struct PinnedBlock {
  tessera::vulkan::Device* device = nullptr;  // the device whose buffer maps it
  tessera::vulkan::Device::Staging staging;   // owned
  uint64_t nbytes = 0;
};

struct tsr_plugin_context {
  const tsr_host_api* host = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<tessera::vulkan::Device>> devices;
  // Pinned blocks by mapped address (Note [Pinned host memory]).
  std::mutex pinned_mu;
  std::map<const std::byte*, PinnedBlock> pinned;  // guarded by pinned_mu
  // Note [Host copies] (host_copy.hpp): created by the first copy that
  // needs it (host_copy()).
  std::mutex copy_pool_mu;
  std::unique_ptr<tessera::vulkan::CopyPool> copy_pool;  // guarded by copy_pool_mu
  std::atomic<uint64_t> validation_errors{0};
  std::atomic<uint64_t> validation_reported{0};
  std::mutex validation_mu;
  std::string last_validation_error;  // guarded by validation_mu
};

namespace tessera::vulkan {
// Creates the instance and devices into `context` (set host first). Throws
// UNAVAILABLE with the reason when there is no usable device.
void create_devices(tsr_plugin_context& context);
// Waits for and destroys everything create_devices made. Never throws.
void destroy_devices(tsr_plugin_context& context) noexcept;
// The device at `index`, or throws INVALID_ARGUMENT naming the index.
Device& device_at(tsr_plugin_context& context, int32_t index, const char* entry);
}  // namespace tessera::vulkan
