// The plugin host: a correct plugin conforms; crashing, overflowing, hanging and wrong plugins
// are reported as nonconformance while this process keeps running.
#include <gtest/gtest.h>

#include "qconform/checks.h"
#include "qconform/plugin_host.h"

using namespace qconform;

namespace {

checks::QuantizeCase q8s_ties() {
  checks::QuantizeCase c;
  c.scheme = parse_scheme("value=q8s,store=native").value();
  c.shape = {6};
  c.data = {0.5f, -2.5f, 1.5f, 0.49999997f, 3.5f, -0.5f};  // exact ties at scale 1 (SPEC §5)
  c.scales = {1.0f};
  return c;
}

checks::QuantizeCase q4s_two_level() {
  checks::QuantizeCase c;
  c.scheme = parse_scheme("value=q4s,store=packed_u32:0,block=4:ue4m3,tensor=f32").value();
  c.shape = {2, 5};
  c.data = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5};
  c.scales = {0.5f, 0.25f, 1.0f, 0.125f};
  c.global = 2.0f;
  return c;
}

}  // namespace

TEST(PluginHost, ExamplePluginConforms) {
  auto p = load_plugin(QCONFORM_EXAMPLE_PLUGIN);
  ASSERT_TRUE(p.impl) << p.error;
  EXPECT_EQ(p.impl->name(), "plugin:example-reference");
  for (const auto& c : {q8s_ties(), q4s_two_level()}) {
    EXPECT_EQ(checks::quantize(*p.impl, c), "");
    EXPECT_EQ(checks::dequantize(*p.impl, c), "");
    EXPECT_EQ(checks::error_contract(*p.impl, c), "");
  }
  auto seed = q4s_two_level();
  seed.global.reset();  // the seed: missing-global-scale through the plugin too
  EXPECT_EQ(checks::error_contract(*p.impl, seed), "");
}

TEST(PluginHost, CrashIsAFaultAndTheWorkerRestarts) {
  auto p = load_plugin(QCONFORM_BUGGY_PLUGIN_1);
  ASSERT_TRUE(p.impl) << p.error;
  const auto c = q4s_two_level();
  const auto r = p.impl->quantize(c.scheme, c.shape, c.data, c.scales, c.global, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.kind(), ErrorKind::implementation_fault);
  EXPECT_NE(r.error().message.find("signal"), std::string::npos) << r.error().message;
  EXPECT_NE(checks::quantize(*p.impl, c), "");
  // After the crash a new worker serves the next call.
  EXPECT_EQ(checks::quantize(*p.impl, q8s_ties()), "");
}

TEST(PluginHost, WritingPastCapacityIsCaught) {
  auto p = load_plugin(QCONFORM_BUGGY_PLUGIN_2);
  ASSERT_TRUE(p.impl) << p.error;
  const auto c = q8s_ties();
  const auto r = p.impl->quantize(c.scheme, c.shape, c.data, c.scales, c.global, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.kind(), ErrorKind::implementation_fault);
  EXPECT_NE(r.error().message.find("past out_capacity"), std::string::npos) << r.error().message;
}

TEST(PluginHost, WrongRoundingIsANonconformanceWithBits) {
  auto p = load_plugin(QCONFORM_BUGGY_PLUGIN_3);
  ASSERT_TRUE(p.impl) << p.error;
  const std::string report = checks::quantize(*p.impl, q8s_ties());
  EXPECT_NE(report.find("code[0]"), std::string::npos) << report;  // 0.5 -> 0 instead of 1
}

TEST(PluginHost, HangIsATimeout) {
  auto p = load_plugin(QCONFORM_BUGGY_PLUGIN_4, 300);
  ASSERT_TRUE(p.impl) << p.error;
  const auto c = q8s_ties();
  const auto r = p.impl->quantize(c.scheme, c.shape, c.data, c.scales, c.global, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.kind(), ErrorKind::implementation_fault);
}

TEST(PluginHost, UnknownErrorKindIsAFault) {
  auto p = load_plugin(QCONFORM_BUGGY_PLUGIN_5);
  ASSERT_TRUE(p.impl) << p.error;
  auto c = q8s_ties();
  c.scales = {-1.0f};
  const auto r = p.impl->quantize(c.scheme, c.shape, c.data, c.scales, c.global, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.kind(), ErrorKind::implementation_fault);
}

TEST(PluginHost, MissingFileIsALoadError) {
  auto p = load_plugin("/nonexistent/libnothing.so");
  EXPECT_FALSE(p.impl);
  EXPECT_NE(p.error.find("dlopen"), std::string::npos) << p.error;
}
