// acme_plugin.cpp - the ACME sample plugin's table. The "ACME accelerator" is
// host memory and the host CPU, so memory, streams, events and copies are the
// SDK's host_device slots; a vendor replaces them with driver calls one at a
// time. Every entry is a plain C++ member that throws to fail; the SDK's
// install_entries makes the noexcept slots that return the status, so no
// exception crosses the ABI.
#include <array>
#include <cstdio>
#include <memory>

#include "acme.hpp"
#include "tessera/sdk/host_device.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/plugin_entries.hpp"
#include "tessera/sdk/plugin_table.hpp"

namespace acme {
namespace {

struct acme_traits {
  static constexpr const char* name = kName;
  static constexpr int32_t device_count = 1;
  static constexpr size_t alignment = 64;  // bytes; every allocation's base is a multiple
};
using device = sdk::host_device<acme_traits>;

// Feature bits of tsr_plugin_device_properties.features (TSR_FEATURE_* in
// tessera.h, which a plugin does not include; the values are part of the ABI).
constexpr uint32_t kFeatureHostAddressable = 1u << 0;  // tensor data is a host pointer
constexpr uint32_t kFeatureTimestamps = 1u << 2;       // events measure elapsed time

// ACME's entries: the SDK's host_device (memory, streams, events, copies)
// plus init and the device's properties. install_entries (plugin_entries.hpp)
// checks the context and out-pointers and runs each member under a guard.
struct acme_entries : device {
  static const char* name() noexcept { return kName; }

  // A real plugin asks its driver here, and throws TSR_UNAVAILABLE with the
  // driver's reason when the machine has no ACME device.
  static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host) {
    return std::make_unique<tsr_plugin_context>(tsr_plugin_context{&host});
  }

  static tsr_plugin_device_properties device_properties(tsr_plugin_context&, int32_t device) {
    check_device("device_properties", device);
    auto p = sdk::zeroed_struct<tsr_plugin_device_properties>();
    std::snprintf(p.name, sizeof p.name, "ACME sample accelerator (host memory)");
    p.total_memory = device::physical_bytes(_SC_PHYS_PAGES);
    p.max_allocation = p.total_memory;
    p.dtypes = sdk::kRealDtypes;
    p.features = kFeatureHostAddressable | kFeatureTimestamps;
    p.compute_units = 1;
    p.alignment = acme_traits::alignment;
    return p;  // the SDK writes what an older host's smaller struct holds
  }
};

// ---- kernel table: the 20 primitives of docs/primitives.md ----
// Schemas come from the SDK (the registry's exact strings); dtype masks apply
// to the schema's tensor arguments in order; a family entry lists its codes.
// ACME computes in every real dtype (no complex).
using sdk::make_entry;
using sdk::trampoline;
namespace schema = sdk::schema;
constexpr uint64_t kReal = sdk::kRealDtypes;
constexpr uint64_t kNumbers = sdk::kNumericDtypes;
constexpr uint64_t kFloating = sdk::kFloatingDtypes;
constexpr uint64_t kInt64 = sdk::kInt64Dtype;

constexpr auto kKernels = sdk::join_entries(
    std::array{
        make_entry(schema::kCopy, {kReal, kReal}, trampoline<copy_kernel>),
        make_entry(schema::kFill, {kReal}, trampoline<fill_kernel>),
        make_entry(schema::kAdd, {kReal, kReal}, trampoline<add_kernel>),
        make_entry(schema::kSub, {kNumbers, kNumbers}, trampoline<sub_kernel>),
        make_entry(schema::kMul, {kReal, kReal}, trampoline<mul_kernel>),
        make_entry(schema::kDiv, {kFloating, kFloating}, trampoline<div_kernel>),
        make_entry(schema::kMm, {kNumbers, kNumbers}, trampoline<mm_kernel>),
        make_entry(schema::kBmm, {kNumbers, kNumbers}, trampoline<bmm_kernel>),
    },
    // _unary and _binary: one entry per group of dtypes, with the codes the
    // host sends that group (the others convert first: exp of an int tensor
    // runs in float).
    sdk::unary_entries(trampoline<unary_kernel>), sdk::binary_entries(trampoline<binary_kernel>),
    std::array{
        make_entry(schema::kWhere, {sdk::kBoolDtype, kReal, kReal}, trampoline<where_kernel>),
        make_entry(schema::kReduce, {kReal}, trampoline<reduce_kernel>, sdk::kReduceCodes),
        make_entry(schema::kArgReduce, {kReal}, trampoline<arg_reduce_kernel>,
                   sdk::kArgReduceCodes),
        make_entry(schema::kScan, {kReal}, trampoline<scan_kernel>, sdk::kScanCodes),
        make_entry(schema::kIota, {kNumbers}, trampoline<iota_kernel>),
        make_entry(schema::kGather, {kReal, kInt64}, trampoline<gather_kernel>),
        make_entry(schema::kScatter, {kReal, kInt64, kReal}, trampoline<scatter_kernel>,
                   sdk::kScatterCodes),
        // Two-phase: the host asks nonzero_count for the result's size first.
        make_entry(schema::kNonzero, {kReal}, trampoline<nonzero_kernel>, sdk::code_set{},
                   TSR_KERNEL_TWO_PHASE, sdk::size_trampoline<nonzero_count>),
        make_entry(schema::kSort, {kReal}, trampoline<sort_kernel>),
        make_entry(schema::kSearchsorted, {kNumbers, kNumbers, kInt64},
                   trampoline<searchsorted_kernel>),
    });

// random_fill and collectives stay NULL: the core fills random tensors on the
// host (the same Philox bits) and copies them in.
tsr_plugin_api make_table() noexcept {
  tsr_plugin_api t = sdk::plugin_table(kName, "0.1.0", "acme");
  sdk::install_entries<acme_entries>(t);  // every entry but the kernels
  t.kernels = kKernels.data();
  t.kernel_count = kKernels.size();
  return t;
}

}  // namespace
}  // namespace acme

// The one exported symbol. sdk::query refuses hosts of another ABI major
// (their table layout may differ; it logs both versions); older and newer
// minors are fine.
extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(
    const tsr_host_api* host) noexcept {
  return tessera::sdk::query(host, acme::kName, acme::make_table);
}
