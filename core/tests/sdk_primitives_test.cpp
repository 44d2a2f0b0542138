// The plugin SDK's copy of the primitive set (tessera/sdk/primitives.hpp) is
// the registry's: every schema string a plugin table takes from the SDK binds,
// the SDK lists every primitive the registry has, and its fused-kernel schemas
// are registry ops too. (The code domains need no test of their own: the
// core's dtype rules read them from the same header.)
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tessera/sdk/primitives.hpp"
#include "tessera/tessera.h"

namespace {

std::string take(tsr_status* s) {
  std::string message = s == nullptr ? "" : tsr_status_message(s);
  tsr_status_free(s);
  return message;
}

class SdkPrimitives : public ::testing::Test {
 protected:
  void SetUp() override {
    tsr_runtime_options o{};
    o.struct_size = sizeof o;
    o.skip_default_plugins = true;
    ASSERT_EQ(take(tsr_runtime_create(&o, &rt_)), "");
  }
  void TearDown() override { tsr_runtime_destroy(rt_); }
  tsr_runtime* rt_ = nullptr;
};

TEST_F(SdkPrimitives, EverySdkSchemaIsTheRegistrysPrimitiveSchema) {
  for (const auto& p : tessera::sdk::kPrimitiveSchemas) {
    const tsr_op* op = nullptr;
    ASSERT_EQ(take(tsr_op_find(rt_, p.name, &op)), "") << p.name;
    EXPECT_STREQ(tsr_op_schema(op), p.schema) << p.name;
    tsr_op_kind kind = TSR_OP_COMPOSITE;
    ASSERT_EQ(take(tsr_op_kind_of(op, &kind)), "");
    EXPECT_EQ(kind, TSR_OP_PRIMITIVE) << p.name;
  }
}

TEST_F(SdkPrimitives, TheSdkListsEveryPrimitiveOfTheRegistry) {
  std::set<std::string> sdk;
  for (const auto& p : tessera::sdk::kPrimitiveSchemas) sdk.insert(p.name);
  size_t count = 0;
  ASSERT_EQ(take(tsr_op_count(rt_, &count)), "");
  size_t primitives = 0;
  for (size_t i = 0; i < count; ++i) {
    const tsr_op* op = nullptr;
    ASSERT_EQ(take(tsr_op_at(rt_, i, &op)), "");
    tsr_op_kind kind = TSR_OP_COMPOSITE;
    ASSERT_EQ(take(tsr_op_kind_of(op, &kind)), "");
    if (kind != TSR_OP_PRIMITIVE) continue;
    ++primitives;
    EXPECT_TRUE(sdk.count(tsr_op_name(op))) << tsr_op_name(op) << " is missing from the SDK";
  }
  EXPECT_EQ(primitives, sdk.size());
}

TEST_F(SdkPrimitives, FusedKernelSchemasAreRegistryOps) {
  for (const auto& p : tessera::sdk::kFusedSchemas) {
    const tsr_op* op = nullptr;
    ASSERT_EQ(take(tsr_op_find(rt_, p.name, &op)), "") << p.name;
    EXPECT_STREQ(tsr_op_schema(op), p.schema) << p.name;
  }
}

}  // namespace
