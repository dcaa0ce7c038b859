// burn's published test vectors (SPEC §12): crates/burn-ndarray/src/ops/quantization.rs and
// crates/burn-backend-tests/tests/tensor/float/quantization/{ops/quantize.rs,data.rs}. The packing
// and layout vectors of burn-std are in layout_test.cc, the calibration ones in calibrate_test.cc.
#include <string>

#include "support.h"

namespace qconform {
namespace {

using qct::Bytes;
using qct::Codes;
using qct::Floats;
using qct::scheme;

// test_int8_symmetric_quantization: SymmetricQuantization::new(-1.8, 0.5, Q8S) has scale
// fl(fl(1.8f + 1.8f) / 254) = 0x1.d06da8p-7, the f32 of the literal 0.014173228 (calibrate_test).
const float kScale = 0.014173228f;
const Floats kX = {-1.8f, -1.0f, 0.0f, 0.5f};
// -1.8f / s = -127 exactly after rounding; -1 / s = -70.56 -> -71; 0.5 / s = 35.28 -> 35.
const Codes kCodes = {-127, -71, 0, 35};
// burn compares the dequantized values to these f32 literals with assert_eq: bit equality.
const Floats kDequantized = {-1.8f, -1.0062993f, 0.0f, 0.496063f};

TEST(BurnVectors, Int8SymmetricQuantization) {
  for (const char* text : {"value=q8s,store=native", "value=q8s", "value=q8s,store=packed_u32:0"}) {
    SCOPED_TRACE(text);
    auto r = quantize(scheme(text), Shape{4}, kX, Floats{kScale}, std::nullopt);
    ASSERT_OK(r);
    EXPECT_CODES_EQ(kCodes, r.value().codes);
    EXPECT_FLOATS_EQ((Floats{kScale}), r.value().scales);
    auto d = dequantize(r.value());
    ASSERT_OK(d);
    EXPECT_FLOATS_EQ(kDequantized, d.value());
  }
  // The literals, spelled out: -0x1.ccccccp0, -0x1.019cd4p0, 0, 0x1.fbf7f0p-2.
  EXPECT_BITS_EQ(-0x1.ccccccp0f, kDequantized[0]);
  EXPECT_BITS_EQ(-0x1.019cd4p0f, kDequantized[1]);
  EXPECT_BITS_EQ(0x1.fbf7f0p-2f, kDequantized[3]);
}

TEST(BurnVectors, Int8SymmetricQuantizationPerBlock) {
  // test_int8_symmetric_quantization_per_block: two blocks of 4 with the same scale.
  Floats x = kX;
  x.insert(x.end(), kX.begin(), kX.end());
  auto r = quantize(scheme("value=q8s,store=native,block=4:f32"), Shape{8}, x, Floats{kScale, kScale}, std::nullopt);
  ASSERT_OK(r);
  Codes c = kCodes;
  c.insert(c.end(), kCodes.begin(), kCodes.end());
  EXPECT_CODES_EQ(c, r.value().codes);
  auto d = dequantize(r.value());
  ASSERT_OK(d);
  Floats e = kDequantized;
  e.insert(e.end(), kDequantized.begin(), kDequantized.end());
  EXPECT_FLOATS_EQ(e, d.value());
}

TEST(BurnVectors, ShouldSupportDequantize) {
  // should_support_dequantize: [-127, -77, -26, 25, 76, 127] at scale 0.1 on [2, 3]. burn compares
  // approximately; exactly, 0.1f = 13421773 * 2^-27 and fl(0.1f * q):
  // -127 -> -12.7000001892 -> -0x1.966666p3; -77 -> -7.7000001147 -> -0x1.eccccep2 (not the
  // f32 of -7.7, -0x1.eccccc p2); -26 -> -2.6000000387 -> -0x1.4ccccep1; 25 -> 2.5000000373 -> 0x1.4p1;
  // 76 -> 7.6000001132 -> 0x1.e66666p2; 127 -> 0x1.966666p3.
  QTensor t;
  t.scheme = scheme("value=q8s,store=native");
  t.shape = {2, 3};
  t.codes = {-127, -77, -26, 25, 76, 127};
  t.scales = {0.1f};
  auto d = dequantize(t);
  ASSERT_OK(d);
  EXPECT_FLOATS_EQ((Floats{-0x1.966666p3f, -0x1.eccccep2f, -0x1.4ccccep1f, 0x1.4p1f, 0x1.e66666p2f, 0x1.966666p3f}),
                   d.value());
}

TEST(BurnVectors, QuantizeDynamicInt8) {
  // should_support_quantize_dynamic_int8 (burn notes these are fully representable): calibrate
  // minmax then quantize: scale 0.1, codes [50, 0, 40, -127].
  const Floats x = {5.0f, 0.0f, 4.0f, -12.7f};
  const Scheme s = scheme("value=q8s");
  auto p = calibrate(s, Shape{4}, x, Calibration::minmax);
  ASSERT_OK(p);
  auto q = quantize(s, Shape{4}, x, p.value().scales, p.value().global);
  ASSERT_OK(q);
  EXPECT_CODES_EQ((Codes{50, 0, 40, -127}), q.value().codes);
  EXPECT_FLOATS_EQ((Floats{0.1f}), q.value().scales);
}

TEST(BurnVectors, DataPerTensorAndPerBlockRoundTrip) {
  // data.rs should_support_per_tensor_symmetric_int8 / per_block: the quantized data survives a
  // serialize/parse round trip unchanged.
  QTensor t;
  t.scheme = scheme("value=q8s");
  t.shape = {4};
  t.codes = kCodes;
  t.scales = {kScale};
  auto b = serialize(t);
  ASSERT_OK(b);
  // One packed word (0x81, 0xB9, 0x00, 0x23), then the f32 scale 0x3C6836D4 little-endian.
  EXPECT_BYTES_EQ((Bytes{0x81, 0xB9, 0x00, 0x23, 0xD4, 0x36, 0x68, 0x3C}), b.value());
  auto p = parse(t.scheme, t.shape, b.value());
  ASSERT_OK(p);
  EXPECT_EQ(p.value(), t);

  QTensor u;
  u.scheme = scheme("value=q8s,block=8:f32");
  u.shape = {16};
  u.codes = {-127, -71, 0, 35, -127, -71, 0, 35, -32, -63, -95, -127, -32, -63, -95, -127};
  u.scales = {0.014173228f, 0.00031496f};
  auto ub = serialize(u);
  ASSERT_OK(ub);
  EXPECT_EQ(ub.value().size(), 16u + 8u);
  auto up = parse(u.scheme, u.shape, ub.value());
  ASSERT_OK(up);
  EXPECT_EQ(up.value(), u);
}

TEST(BurnVectors, SeedPanicIsATypedError) {
  // shared/seeds: burn-ndarray qtensor.rs:156 panics "a two-level scheme should have a per-tensor
  // scale". Same scheme, eight inputs, block scales 0.5 and 0.125, no global.
  auto r = quantize(scheme("value=q8s,store=native,block=4:ue4m3,tensor=f32"), Shape{8},
                    Floats{0, 1, 2, 3, 4, 5, 6, 7}, Floats{0.5f, 0.125f}, std::nullopt);
  ASSERT_ERROR(r, missing_global_scale);
  EXPECT_FALSE(r.error().message.empty());
  // burn-std two_level_scheme_without_a_global_scale_is_rejected (f32 blocks): here that scheme is
  // block-scale-too-wide first (SPEC §3.1), before global presence.
  EXPECT_ERROR(quantize(scheme("value=q8s,store=native,block=4:f32,tensor=f32"), Shape{8}, Floats(8, 0.0f),
                        Floats{0.5f, 0.125f}, std::nullopt),
               block_scale_too_wide);
  // a_narrower_per_tensor_scale_is_rejected.
  EXPECT_ERROR(quantize(scheme("value=q8s,store=native,block=4:ue4m3,tensor=f16"), Shape{8}, Floats(8, 0.0f),
                        Floats{0.5f, 0.125f}, 3.0f),
               narrow_global_scale);
}

}  // namespace
}  // namespace qconform
