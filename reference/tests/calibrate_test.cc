// Calibration (SPEC §8): minmax and absmean, per tensor and per block, the two-level split, the
// exactness of absmean's mean, and the errors.
#include <cstdint>
#include <string>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::Codes;
using qct::Floats;
using qct::kInf;
using qct::kMax;
using qct::kMinNormal;
using qct::scheme;

QParams calibrated(const std::string& text, const Shape& shape, const Floats& x, Calibration m) {
  auto r = calibrate(scheme(text), shape, x, m);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : QParams{};
}

TEST(MinMax, BurnPerTensor) {
  // burn calibration.rs / quantization.rs: [-1.8, -1.0, 0.0, 0.5] q8s. alpha = 1.8f;
  // fl(2 * 1.8f) = 0x1.ccccccp1 (exact doubling), / 254 -> 0x1.d06da8p-7, which is the f32 of
  // burn's literal 0.014173228.
  const QParams p = calibrated("value=q8s", Shape{4}, Floats{-1.8f, -1.0f, 0.0f, 0.5f}, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.d06da8p-7f}), p.scales);
  EXPECT_BITS_EQ(0.014173228f, 0x1.d06da8p-7f);
  EXPECT_FALSE(p.global.has_value());
}

TEST(MinMax, BurnQuantizeDynamic) {
  // burn ops/quantize.rs should_support_quantize_dynamic_int8: [5, 0, 4, -12.7] -> scale 0.1,
  // codes [50, 0, 40, -127]. fl(2 * 12.7f) / 254 = 0x1.99999ap-4 = 0.1f exactly; 5 / 0.1f = 50,
  // 4 / 0.1f = 40 and -12.7f / 0.1f = -127 after rounding.
  const Floats x = {5.0f, 0.0f, 4.0f, -12.7f};
  const QParams p = calibrated("value=q8s,store=native", Shape{4}, x, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0.1f}), p.scales);
  auto q = quantize(scheme("value=q8s,store=native"), Shape{4}, x, p.scales, p.global);
  ASSERT_OK(q);
  EXPECT_CODES_EQ((Codes{50, 0, 40, -127}), q.value().codes);
}

TEST(MinMax, BurnPerBlock) {
  // burn calibration.rs min_max_calibration_range_per_block: block [4] on [4, 4] is [1, 4]; alphas
  // 1.8, 1.8, 0.04, 0.04. 0.04f: fl(2 * 0.04f) / 254 = 0x1.4a429ap-12.
  const Floats x = {-1.8f, -1.0f, 0.0f, 0.5f, 1.8f, 1.0f, 0.0f, -0.5f,
                    0.01f, 0.02f, 0.03f, 0.04f, -0.01f, -0.02f, -0.03f, -0.04f};
  const QParams p = calibrated("value=q8s,block=4:f32", Shape{4, 4}, x, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.d06da8p-7f, 0x1.d06da8p-7f, 0x1.4a429ap-12f, 0x1.4a429ap-12f}), p.scales);
}

TEST(MinMax, RangeOfEveryValueType) {
  // alpha = 1, scale = fl(2 / (hi - lo)): q8f 255, q8s 254, q4f 15, q4s 14, q2f 3, q2s 2,
  // e4m3 896, e5m2 114688, e2m1 12 (minifloats: +-max).
  struct Case {
    const char* value;
    float scale;
  };
  const Case cases[] = {
      {"q8f", 0x1.010102p-7f}, {"q8s", 0x1.020408p-7f}, {"q4f", 0x1.111112p-3f},
      {"q4s", 0x1.24924ap-3f}, {"q2f", 0x1.555556p-1f}, {"q2s", 1.0f},
      {"e4m3", 0x1.24924ap-9f}, {"e5m2", 0x1.24924ap-16f}, {"e2m1", 0x1.555556p-3f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    const QParams p = calibrated(std::string("value=") + c.value, Shape{3}, Floats{-1.0f, 0.5f, 0.25f},
                                 Calibration::minmax);
    EXPECT_FLOATS_EQ((Floats{c.scale}), p.scales);
  }
}

TEST(MinMax, AlphaIsTheLargerMagnitude) {
  // max(|min|, |max|): the positive side wins here; alpha = 3, fl(6 / 254) = fl(3 / 127):
  // 3/127 = 0x1.83060c183...p-6, rounded to 0x1.83060cp-6.
  const QParams p = calibrated("value=q8s", Shape{3}, Floats{-1.0f, 3.0f, 2.0f}, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.83060cp-6f}), p.scales);
  // And the negative side: alpha = 3 from -3.
  const QParams n = calibrated("value=q8s", Shape{3}, Floats{-3.0f, 1.0f, 2.0f}, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.83060cp-6f}), n.scales);
  // All zeros (and -0): alpha = 0, scale +0.
  const QParams z = calibrated("value=q8s", Shape{2}, Floats{-0.0f, 0.0f}, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0.0f}), z.scales);
}

TEST(MinMax, ReturnsRawScalesBeforeRoundUp) {
  // Header: calibrate returns the raw scales; quantize rounds them. With an f16 level the raw
  // 0x1.d06da8p-7 is not on the f16 grid (spacing 2^-17 there): it comes back unchanged.
  const QParams p = calibrated("value=q8s,tensor=f16", Shape{4}, Floats{-1.8f, -1.0f, 0.0f, 0.5f},
                               Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.d06da8p-7f}), p.scales);
}

TEST(MinMax, OverflowBoundary) {
  // 2 * 0x1.fffffep126 = FLT_MAX, finite: scale fl(FLT_MAX / 254) = 0x1.020408p120.
  const QParams p = calibrated("value=q8s", Shape{1}, Floats{-0x1.fffffep126f}, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.020408p120f}), p.scales);
  // 2 * 2^127 overflows.
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{1}, Floats{0x1p127f}, Calibration::minmax), calibration_overflow);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{1}, Floats{-kMax}, Calibration::minmax), calibration_overflow);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{1}, Floats{kInf}, Calibration::minmax), calibration_overflow);
}

TEST(MinMax, BlockNotDivisible) {
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=32:f32"), Shape{70}, Floats(70, 1.0f), Calibration::minmax),
               block_not_divisible);
  // Rank-relative: [1, 4] on [4, 6].
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=4:f32"), Shape{4, 6}, Floats(24, 1.0f), Calibration::absmean),
               block_not_divisible);
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=3x1:f32"), Shape{4, 6}, Floats(24, 1.0f), Calibration::minmax),
               block_not_divisible);
  // Quantize with the same scheme and shape takes partial blocks.
  EXPECT_OK(quantize(scheme("value=q8s,block=32:f32"), Shape{70}, Floats(70, 1.0f), Floats{1, 1, 1}, std::nullopt));
}

// ---------------------------------------------------------------------------------------------
// Two-level: g = max(fl(max_k s_k / max(block dtype)), FLT_MIN), s_k = fl(s_k / g).

TEST(TwoLevel, Nvfp4) {
  // Block 0 max |x| 6 -> s0 = fl(12 / 12) = 1; block 1 max 3 -> s1 = 0.5.
  // g = fl(1 / 448) = 0x1.24924ap-9; s0 / g = 0x1.bffffep8 (447.99997), s1 / g = 0x1.bffffep7.
  Floats x(32, 0.5f);
  x[5] = -6.0f;
  x[20] = 3.0f;
  const QParams p = calibrated("nvfp4", Shape{32}, x, Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.bffffep8f, 0x1.bffffep7f}), p.scales);
  ASSERT_TRUE(p.global.has_value());
  EXPECT_BITS_EQ(0x1.24924ap-9f, *p.global);
  // quantize rounds 447.99997 up to 448 on the ue4m3 grid and 223.99998 to 224.
  auto q = quantize(nvfp4(), Shape{32}, x, p.scales, p.global);
  ASSERT_OK(q);
  EXPECT_FLOATS_EQ((Floats{448.0f, 224.0f}), q.value().scales);
}

TEST(TwoLevel, F16Blocks) {
  // Same block scales with f16 blocks: g = fl(1 / 65504) = 0x1.002004p-16;
  // 1 / g = 0x1.ffcp15 (65472), 0.5 / g = 0x1.ffcp14.
  // q2s: hi - lo = 2, so s = alpha: block maxima 1 and 0.5.
  const QParams p = calibrated("value=q2s,block=2:f16,tensor=f32", Shape{4}, Floats{1.0f, -0.25f, 0.5f, 0.0f},
                               Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.ffcp15f, 0x1.ffcp14f}), p.scales);
  ASSERT_TRUE(p.global.has_value());
  EXPECT_BITS_EQ(0x1.002004p-16f, *p.global);
}

TEST(TwoLevel, GlobalIsAtLeastFltMin) {
  // All zeros: 0 / 448 = 0 -> FLT_MIN; scales 0 / FLT_MIN = 0.
  const QParams z = calibrated("nvfp4", Shape{16}, Floats(16, 0.0f), Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0.0f}), z.scales);
  ASSERT_TRUE(z.global.has_value());
  EXPECT_BITS_EQ(kMinNormal, *z.global);
  // Tiny: alpha 2^-120, s = fl(2^-119 / 254) = 0x1.020408p-127 (subnormal); s / 448 is
  // 0x1.26ep-136 < FLT_MIN -> g = FLT_MIN; s / FLT_MIN = 0x1.020408p-1.
  const QParams t = calibrated("value=q8s,block=2:ue4m3,tensor=f32", Shape{2}, Floats{0x1p-120f, 0.0f},
                               Calibration::minmax);
  EXPECT_FLOATS_EQ((Floats{0x1.020408p-1f}), t.scales);
  ASSERT_TRUE(t.global.has_value());
  EXPECT_BITS_EQ(kMinNormal, *t.global);
}

// ---------------------------------------------------------------------------------------------
// absmean (BitNet b1.58): gamma = the exact mean of |x|, rounded once.

TEST(AbsMean, BurnPerTensor) {
  // burn abs_mean_calibration_range_per_tensor: [-0.9, -0.3, 0, 0.6] -> gamma ~ 0.45. Exactly:
  // (0.9f + 0.3f + 0.6f) / 4 rounds to 0x1.ccccccp-2 (= 0.45f). q2s: scale = fl(2 gamma) / 2 = gamma.
  const QParams p = calibrated("value=q2s", Shape{4}, Floats{-0.9f, -0.3f, 0.0f, 0.6f}, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{0x1.ccccccp-2f}), p.scales);
}

TEST(AbsMean, BurnPerBlock) {
  // burn abs_mean_calibration_range_per_block: blocks [-0.9, -0.3, 0, 0.6] and [0.1, 0.2, 0.3, 0.4]:
  // the second mean (0.1f + 0.2f + 0.3f + 0.4f) / 4 rounds to 0.25 exactly.
  const QParams p = calibrated("value=q2s,block=4:f32", Shape{2, 4},
                               Floats{-0.9f, -0.3f, 0.0f, 0.6f, 0.1f, 0.2f, 0.3f, 0.4f}, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{0x1.ccccccp-2f, 0.25f}), p.scales);
}

TEST(AbsMean, MeanIsExactNotAFloatSum) {
  // [1, then 256 x 2^-30]: the exact mean is (1 + 2^-22) / 257, which rounds to 0x1.fe0206p-9. A
  // float running sum loses every 2^-30 (1 + 2^-30 rounds to 1) and gives 1/257 = 0x1.fe01fep-9.
  Floats x(257, 0x1p-30f);
  x[0] = 1.0f;
  const QParams p = calibrated("value=q2s", Shape{257}, x, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{0x1.fe0206p-9f}), p.scales);
  // Same values, 1.0 last: order-independent.
  Floats y(257, -0x1p-30f);
  y[256] = -1.0f;
  const QParams q = calibrated("value=q2s", Shape{257}, y, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{0x1.fe0206p-9f}), q.scales);
}

TEST(AbsMean, MeanIsExactNotADoubleSum) {
  // [-4, 2^-22, -2^-78, 0]: the exact mean is 1 + 2^-24 + 2^-80, just above the midpoint between 1
  // and 1 + 2^-23, so it rounds up to 0x1.000002p0. A double (or x87 long double) sum drops 2^-78
  // next to 4, lands exactly on the midpoint and rounds to even, 1.0.
  for (const Floats& x : {Floats{-4.0f, 0x1p-22f, -0x1p-78f, 0.0f}, Floats{0.0f, -0x1p-78f, 0x1p-22f, -4.0f},
                          Floats{-0x1p-78f, 0.0f, -4.0f, 0x1p-22f}}) {
    const QParams p = calibrated("value=q2s", Shape{4}, x, Calibration::absmean);
    EXPECT_FLOATS_EQ((Floats{0x1.000002p0f}), p.scales);
  }
  // Per block, the same in block 1 of two.
  const QParams b = calibrated("value=q2s,block=4:f32", Shape{2, 4},
                               Floats{1, 1, 1, 1, -4.0f, 0x1p-22f, -0x1p-78f, 0.0f}, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{1.0f, 0x1.000002p0f}), b.scales);
}

TEST(AbsMean, ThenAsMinMax) {
  // q8s: scale = fl(fl(2 gamma) / 254). gamma = 0x1.fe0206p-9 (above) -> 0x1.01030ap-15.
  Floats x(257, 0x1p-30f);
  x[0] = 1.0f;
  const QParams p = calibrated("value=q8s", Shape{257}, x, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{0x1.01030ap-15f}), p.scales);
  // Zeros: gamma 0, scale 0.
  const QParams z = calibrated("value=q8s", Shape{3}, Floats{0.0f, -0.0f, 0.0f}, Calibration::absmean);
  EXPECT_FLOATS_EQ((Floats{0.0f}), z.scales);
}

TEST(AbsMean, Errors) {
  EXPECT_ERROR(calibrate(nvfp4(), Shape{16}, Floats(16, 1.0f), Calibration::absmean), absmean_two_level);
  EXPECT_ERROR(calibrate(scheme("value=q2s"), Shape{2}, Floats{1.0f, qct::kNaN}, Calibration::absmean), nan_input);
  EXPECT_ERROR(calibrate(scheme("value=q2s"), Shape{2}, Floats{1.0f, kInf}, Calibration::absmean),
               calibration_overflow);
  // Minmax on the same two-level scheme is fine.
  EXPECT_OK(calibrate(nvfp4(), Shape{16}, Floats(16, 1.0f), Calibration::minmax));
}

}  // namespace
}  // namespace qconform
