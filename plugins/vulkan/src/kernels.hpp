// kernels.hpp - compute pipelines and the kernel table of the Vulkan plugin.
//
// Shaders are GLSL compute shaders (shaders/<name>.comp, sharing
// shaders/common.glsl) compiled to SPIR-V at build time by glslc, validated
// with spirv-val and embedded as <name>.spv.inc. Pipelines are created on
// first use, so a process that never computes on the device compiles no
// shader. Kernels reach tensors through device addresses (Note [Vulkan
// memory]) or, on the fast paths, texel buffer views (Note [Texel fast
// paths], device.hpp).
//
// Note [Shader parameters]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Set 0 is a push-descriptor set, pushed whole on every dispatch: binding 0
// a uniform buffer for most shaders; bindings 1..4 storage texel buffers and
// 128 bytes of push constants for the fast paths (lavapipe 22.3 re-reads the
// bindings a push leaves out, from the previous push, whose views may be
// destroyed by then: a crash in its queue thread). A kernel's parameter
// block reaches its shader in one of two ways:
//  - most shaders declare it as a std430 uniform block at binding 0 (`Params
//    p = pc.params`): the host writes it into the stream's parameter buffer
//    (vkCmdUpdateBuffer, in stream order) just before the dispatch and binds
//    that range. lavapipe reads a uniform block with scalar loads, once per
//    SIMD group; the first design passed the block's device address and read
//    it through a buffer reference, which lavapipe turns into a loop over
//    the SIMD lanes for every 8 bytes - for pointwise_strided.comp's 440-byte
//    block that alone cost ~1 us per element;
//  - texel fast-path shaders take theirs (<= 128 bytes) as push constants.
// Kernels live in src/<family>/ (kernels.hpp's list below).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::vulkan {

struct Device;
struct OpBatch;

// An embedded SPIR-V module. Static storage. `texel_bindings` > 0: the
// shader reads/writes that many storage texel buffers (set 0, bindings
// 1..n; Note [Texel fast paths], device.hpp), passed to dispatch as views,
// and takes its parameters as push constants (Note [Shader parameters]).
// `any_workgroup`: the shader is correct at any workgroup size (no shared
// memory, barriers or subgroup operations), so dispatches of fewer than 256
// invocations run as workgroups of 8 or 64 (lavapipe runs a workgroup's
// whole local size even when few invocations are live: a one-element
// dispatch measured 133 us with 256, 27 us with 8).
struct Shader {
  const char* name;
  const uint32_t* code;
  size_t bytes;
  uint32_t texel_bindings = 0;
  bool any_workgroup = false;
};

// The pipelines of one device. Owned by the Device.
class Kernels {
 public:
  static constexpr size_t kMaxParams = 4096;   // the stream's parameter buffer
  static constexpr uint32_t kWorkgroup = 256;  // every shader's local_size_x
  static constexpr uint32_t kMaxTexelBindings = 4;
  static constexpr uint32_t kMaxPushParams = 128;  // Vulkan's guaranteed minimum

  explicit Kernels(Device& device);
  ~Kernels();
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;

  // Records `shader` on `stream` (NULL: the default stream) with the
  // parameter block `params` (nbytes <= kMaxParams, a multiple of 4) over at
  // least `invocations` invocations (workgroups of kWorkgroup, a 2-D grid past
  // 65535 groups; shaders loop when they need more). Nothing when
  // invocations is 0. Throws on Vulkan failure.
  void dispatch(tsr_plugin_stream* stream, const Shader& shader, const void* params, size_t nbytes,
                uint64_t invocations);
  // The same for a shader with texel bindings: views[k] (a block's
  // view_f32x4 or view_u32x4, as the shader declares binding k + 1) is
  // pushed as binding k + 1; `nviews` == shader.texel_bindings; `params`
  // (nbytes <= kMaxPushParams) go in push constants.
  // `spec` (optional): the values of the shader's specialization constants
  // 1..3 (constant_id 0 is the workgroup size). A variant is its own
  // pipeline, so code that branches on them is folded away - lavapipe runs
  // both sides of a branch on a run-time value under a lane mask, gathers
  // included.
  using Spec = std::array<int32_t, 3>;
  void dispatch(tsr_plugin_stream* stream, const Shader& shader, const void* params, size_t nbytes,
                uint64_t invocations, const VkBufferView* views, uint32_t nviews,
                const Spec& spec = {});

  // See Note [Shader parameters]: the fast paths' push-descriptor set layout
  // (bindings 1..kMaxTexelBindings, storage texel buffers) for `stages`;
  // owned by the caller. Throws on Vulkan failure.
  static VkDescriptorSetLayout make_texel_set(VkDevice device, VkShaderStageFlags stages);
  // Pushes `views` (nviews <= kMaxTexelBindings) as the whole texel set of
  // `layout` on `cb`: every binding, the unused ones repeating views[0]
  // (lavapipe 22.3 re-reads bindings a push leaves out).
  void push_texel_views(VkCommandBuffer cb, VkPipelineBindPoint point, VkPipelineLayout layout,
                        const VkBufferView* views, uint32_t nviews) const;

  // Note [Specializing by use]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~~
  // Specializing a large shader (pointwise.comp: every op code) compiles a
  // pipeline per variant, about 150 ms each on lavapipe, where the generic
  // variant is compiled once; a process that calls many ops on small tensors
  // (the conformance suite) would spend minutes compiling. So a dispatch of
  // `work` units (elements) takes `variant` once it is compiled, or once the
  // generic variant has done kSpecializeAfter units of work in its place
  // for this shader and workgroup size; until then `generic`. That is the
  // ski-rental rule: the work spent waiting costs about what the compile
  // does, so neither choice costs more than twice the better one.
  static constexpr uint64_t kSpecializeAfter = uint64_t{1} << 17;
  Spec by_use(const Shader& shader, uint64_t invocations, const Spec& variant, const Spec& generic,
              uint64_t work);

  // Note [Small-op batches]. Ops up to kBatchElements elements are batched:
  // on lavapipe a batched add costs ~0.11 us per element (one SIMD group
  // runs the generic body) and a dispatch ~45-80 us, so 256 elements cost
  // 29 us batched against 48 dispatched, 1 element 3.1 against 48.
  static constexpr uint64_t kBatchElements = 256;
  static constexpr uint64_t kBatchWork = 4096;  // elements per batch at most
  static constexpr uint32_t kMaxBatchOps = 64;
  // One SIMD group on lavapipe (8 lanes at 256 bits). A workgroup of 64
  // runs its eight groups one after another, switching at every barrier:
  // 7.9 us per queued one-element add, against 3.3 with 8.
  static constexpr uint32_t kBatchWorkgroup = 8;
  // Whether an op of `elements` elements joins its stream's batch.
  bool batches(uint64_t elements) const;
  // Adds an op, `params` (the block of `batch_shader`, nbytes <= kMaxParams,
  // a multiple of 8) over `elements` elements, to the batch of `stream`
  // (NULL: the default stream); records the batch first when the op does
  // not fit. Throws on Vulkan failure.
  void batch(tsr_plugin_stream* stream, const Shader& batch_shader, const void* params,
             size_t nbytes, uint64_t elements);
  // Records `b` (non-empty) on `s` as one dispatch. Call with s.mu held;
  // the stream calls it (tsr_plugin_stream::record_batch).
  void record_batch(tsr_plugin_stream& s, OpBatch& b);

 private:
  VkPipeline pipeline(const Shader& shader, uint32_t local_size, const Spec& spec);
  // See Note [Shader parameters]: pushes `block` as binding 0 (the uniform
  // buffer) of the parameter shaders' set on `cb`.
  void push_params(VkCommandBuffer cb, const VkDescriptorBufferInfo& block) const;
  // The workgroup size of a dispatch of `invocations` (see Shader).
  static uint32_t local_size_for(const Shader& shader, uint64_t invocations);

  Device& device_;
  // See Note [Shader parameters]: the parameter shaders' set (binding 0, a
  // uniform buffer) and the fast paths' (bindings 1..4, texel buffers, plus
  // 128 bytes of push constants).
  VkDescriptorSetLayout uniform_set_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout texel_set_ = VK_NULL_HANDLE;
  VkPipelineLayout uniform_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout texel_layout_ = VK_NULL_HANDLE;
  std::mutex mu_;
  struct Compiled {
    VkShaderModule module = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    bool owns_module = false;  // the first variant of a shader owns the module
  };
  using Key = std::tuple<const uint32_t*, uint32_t, Spec>;
  std::map<Key, Compiled> pipelines_;     // guarded by mu_
  std::map<Key, uint64_t> generic_work_;  // Note [Specializing by use]; guarded by mu_
};

// Note [Small-op batches]
// ~~~~~~~~~~~~~~~~~~~~~~~
// On lavapipe a dispatch costs a hand-off to its worker threads and back
// (~60-90 us on our VM, bench_vulkan's *handoff* row), whatever it computes,
// and on a GPU a dispatch plus the barrier that orders it costs a few us. A
// program that issues many small ops (optimizer steps over small
// parameters, the per-op overhead benchmark) pays that per op. So where the
// stream has a parameter ring (host-visible device memory: lavapipe,
// integrated GPUs), an op of at most kBatchElements elements of a shader
// that has a batch form (pointwise_strided.comp: pointwise_strided_batch.comp) is not
// dispatched: its parameter block joins the stream's pending batch
// (OpBatch). The batch is one dispatch of one workgroup that runs its ops in
// order, a workgroup barrier after each. It is work recorded on the stream
// in every sense that matters: anything else recorded on the stream, and
// every flush (synchronize, events, host copies, waits, frees), records the
// batch first, so stream order, events and memory reuse are unchanged. It is
// also recorded when full: kMaxBatchOps ops (fewer if maxUniformBufferRange
// is smaller) or kBatchWork elements, which bounds the serial work one
// workgroup takes on. An error while recording a batch (the ops already
// reported success) makes the stream's error sticky. TESSERA_VULKAN_BATCH=0
// turns batching off (to compare).
struct OpBatch {
  const Shader* shader = nullptr;  // static storage; null when empty
  uint32_t block_bytes = 0;        // each op's parameter block
  uint32_t max_ops = 0;
  uint32_t count = 0;
  uint64_t elements = 0;
  // An 8-byte header (count, padding), then `count` parameter blocks: the
  // shader's uniform block.
  std::vector<std::byte> blocks;
};

using KernelList = std::vector<tsr_kernel_entry>;
// Kernels live in src/<family>/<name>.cpp, the families named as the
// core's (core/ops/); each file adds its entries through add_<name>_kernels().
// pointwise/: copy_, fill_.Scalar, add/sub/mul/div.Tensor
// (copy_fill_arith.cpp); _unary, _binary, where.self (unary_binary.cpp)
void add_copy_fill_arith_kernels(KernelList& out);
void add_unary_binary_kernels(KernelList& out);
// reduction/: _reduce, _arg_reduce, _scan (reduce.cpp)
void add_reduce_kernels(KernelList& out);
// linalg/: mm, bmm (matmul.cpp)
void add_matmul_kernels(KernelList& out);
// indexing/: _iota_ (with gather: one shader), gather, _scatter_
// (gather_scatter.cpp); nonzero, sort.stable, searchsorted.Tensor (sort.cpp)
void add_gather_scatter_kernels(KernelList& out);
void add_sort_kernels(KernelList& out);
// nn/: fused _softmax, _log_softmax, native_layer_norm (norm.cpp)
void add_norm_kernels(KernelList& out);
// conv/: fused convolution (convolution.cpp)
void add_convolution_kernels(KernelList& out);

// float32 out = a @ b through linalg_texel.comp (Note [Texel fast paths],
// device.hpp) over 3-D descriptors (batch, rows, columns) the caller builds,
// a batch stride of 0 sharing one matrix; false, with nothing recorded, when
// the layouts do not qualify (linalg/matmul.cpp). Note [Convolution through
// matmul] (conv/convolution.cpp) uses it.
bool texel_bmm(tsr_plugin_context* context, const tsr_kernel_call& call, const tsr_tensor_desc& a,
               const tsr_tensor_desc& b, const tsr_tensor_desc& out);

// tsr_plugin_api.random_fill: Philox4x32-10 fills on the device, bit-identical
// to the CPU plugin (factory/random.cpp). NULL: the core fills on the host.
using RandomFillFn = tsr_status* (*)(tsr_plugin_context*, const tsr_random_fill_call*) noexcept;
RandomFillFn random_fill_kernel();

// The kernel table: every family's entries. Static storage.
const tsr_kernel_entry* kernel_table(size_t* count);

}  // namespace tessera::vulkan
