// Quantize and dequantize (SPEC §4, §5): ties, clamps, ±Inf, -0, zero scales, stored (rounded)
// scales, two-level arithmetic order, blocks, minifloats and lookup mode.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::Codes;
using qct::Floats;
using qct::hex;
using qct::kInf;
using qct::scheme;
using qct::table;

// Quantize with one f32 scale and return the codes (empty on error, which fails the test).
Codes codes_of(const std::string& text, const Shape& shape, const Floats& x, const Floats& scales,
               std::optional<float> global = std::nullopt, Table t = std::nullopt) {
  auto r = quantize(scheme(text), shape, x, scales, global, t);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value().codes : Codes{};
}

Floats dequantized(const QTensor& t, Table tbl = std::nullopt) {
  auto r = dequantize(t, tbl);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : Floats{};
}

TEST(Rounding, TiesHalfAwayFromZero) {
  // Scale 1: y = x exactly. SPEC §5: round is Rust's f32::round.
  // 0.49999997 = 0x1.fffffep-2 -> 0 (floor(y + 0.5) would wrongly give 1);
  // 2.4999998 = 0x1.3ffffep1 -> 2.
  const Floats x = {0.5f, -2.5f, 0x1.fffffep-2f, 1.5f, -0.5f, 2.5f, -1.5f, 0x1.3ffffep1f,
                    -0x1.fffffep-2f, 126.5f, -126.5f};
  EXPECT_CODES_EQ((Codes{1, -3, 0, 2, -1, 3, -2, 2, 0, 127, -127}),
                  codes_of("value=q8s,store=native", Shape{x.size()}, x, Floats{1.0f}));
}

TEST(Rounding, TieProducedByTheDivision) {
  // 0.75 / 0.5 = 1.5 exactly -> 2; -1.25 / 0.5 = -2.5 -> -3.
  EXPECT_CODES_EQ((Codes{2, -3}),
                  codes_of("value=q8s,store=native", Shape{2}, Floats{0.75f, -1.25f}, Floats{0.5f}));
}

TEST(Rounding, TrueDivisionNotReciprocal) {
  // SPEC §5: y = fl(x / eff), "never x * (1/eff)".
  // s = 0x1.73d134p-5, x = 0x1.227b70p-1: the exact quotient is 12.4999995896..., within half an
  // ulp (2^-21) of 12.5, so fl(x / s) = 12.5 -> 13. With the reciprocal, fl(1/s) = 0x1.60846ep4
  // and fl(x * that) = 0x1.8ffffep3 = 12.4999990 -> 12.
  const float s = 0x1.73d134p-5f, x = 0x1.227b70p-1f;
  auto r = quantize(scheme("value=q8s,store=native"), Shape{1}, Floats{x}, Floats{s}, std::nullopt);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{13}), r.value().codes);
  // Dequantize: fl(s * 13) = 0x1.2e19fap-1.
  EXPECT_FLOATS_EQ((Floats{0x1.2e19fap-1f}), dequantized(r.value()));
}

TEST(Rounding, InfinitiesSaturateAndNegativeZeroIsCodeZero) {
  const Floats x = {kInf, -kInf, -0.0f, 0.0f, -0x1p-149f};
  EXPECT_CODES_EQ((Codes{127, -128, 0, 0, 0}), codes_of("value=q8f,store=native", Shape{5}, x, Floats{1.0f}));
  EXPECT_CODES_EQ((Codes{127, -127, 0, 0, 0}), codes_of("value=q8s,store=native", Shape{5}, x, Floats{1.0f}));
  // e4m3 keeps the sign of -0 (0x80); a negative value that rounds to zero is -0 too.
  EXPECT_CODES_EQ((Codes{0x7E, 0xFE, 0x80, 0x00, 0x80}),
                  codes_of("value=e4m3,store=native", Shape{5}, x, Floats{1.0f}));
}

struct ClampCase {
  const char* value;
  int lo, hi;
};

TEST(Rounding, ClampAtEveryIntegerRange) {
  // SPEC §1 ranges. With scale 1: hi + 0.49 rounds to hi, hi + 0.5 rounds to hi + 1 and clamps.
  for (const ClampCase& c : {ClampCase{"q8f", -128, 127}, ClampCase{"q8s", -127, 127},
                             ClampCase{"q4f", -8, 7}, ClampCase{"q4s", -7, 7}, ClampCase{"q2f", -2, 1},
                             ClampCase{"q2s", -1, 1}}) {
    SCOPED_TRACE(c.value);
    const auto lo = static_cast<float>(c.lo), hi = static_cast<float>(c.hi);
    const Floats x = {1000.0f, -1000.0f, kInf, -kInf, hi + 0.25f, lo - 0.25f, hi + 0.5f, lo - 0.5f, hi, lo,
                      1e38f, -1e38f};
    const Codes expected = {c.hi, c.lo, c.hi, c.lo, c.hi, c.lo, c.hi, c.lo, c.hi, c.lo, c.hi, c.lo};
    EXPECT_CODES_EQ(expected, codes_of(std::string("store=native,value=") + c.value, Shape{x.size()}, x,
                                       Floats{1.0f}));
    // Every integer of the range is reached and dequantizes to itself at scale 1.
    Floats all;
    Codes all_codes;
    for (int v = c.lo; v <= c.hi; ++v) {
      all.push_back(static_cast<float>(v));
      all_codes.push_back(v);
    }
    auto r = quantize(scheme(std::string("store=native,value=") + c.value), Shape{all.size()}, all,
                      Floats{1.0f}, std::nullopt);
    ASSERT_OK(r);
    EXPECT_CODES_EQ(all_codes, r.value().codes);
    EXPECT_FLOATS_EQ(all, dequantized(r.value()));
  }
}

TEST(ZeroScale, ReplacedByPointOneAtQuantizeAndDequantize) {
  // SPEC §5 (burn's valid_scale): eff = 0 -> 0.1f = 0x1.99999ap-4 = 0.100000001490116...
  // 0.25 / 0.1f = 2.49999996..., within half an ulp (2^-23) of 2.5, so y = 2.5 -> 3.
  // 1.0 / 0.1f = 9.99999985..., y = 10 exactly after rounding (ulp 2^-20) -> 10.
  auto r = quantize(scheme("value=q8s,store=native"), Shape{3}, Floats{0.25f, 1.0f, -0.0f}, Floats{0.0f},
                    std::nullopt);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{3, 10, 0}), r.value().codes);
  // The stored scale is the rounded input, 0, not the substitute.
  EXPECT_FLOATS_EQ((Floats{0.0f}), r.value().scales);
  // Dequantize: fl(0.1f * 3) = 0x1.333334p-2, fl(0.1f * 10) = 1.0 (0x1.000000p0: 1.00000001490116
  // rounds to 1), fl(0.1f * 0) = 0.
  EXPECT_FLOATS_EQ((Floats{0x1.333334p-2f, 1.0f, 0.0f}), dequantized(r.value()));
}

TEST(ZeroScale, NegativeZeroScaleAndGlobalAreStoredAsPlusZero) {
  // SPEC §3.5: -0.0 is taken as +0.0 before anything else and never stored with its sign.
  auto r = quantize(scheme("value=q8s,store=native"), Shape{1}, Floats{0.25f}, Floats{-0.0f}, std::nullopt);
  ASSERT_OK(r);
  EXPECT_FLOATS_EQ((Floats{0.0f}), r.value().scales);
  EXPECT_CODES_EQ((Codes{3}), r.value().codes);
  auto t = quantize(scheme("value=q8s,store=native,block=2:ue4m3,tensor=f32"), Shape{4},
                    Floats{0.25f, 0.25f, 0.25f, 0.25f}, Floats{-0.0f, 1.0f}, -0.0f);
  ASSERT_OK(t);
  EXPECT_FLOATS_EQ((Floats{0.0f, 1.0f}), t.value().scales);
  ASSERT_TRUE(t.value().global.has_value());
  EXPECT_BITS_EQ(0.0f, *t.value().global);
  // g = +0: eff = 0 * s' = 0 -> 0.1f for both blocks, so 0.25 -> 3 everywhere.
  EXPECT_CODES_EQ((Codes{3, 3, 3, 3}), t.value().codes);
}

TEST(ZeroScale, MinifloatAtZeroScale) {
  // e4m3, eff 0.1f: 0.25 / 0.1f = 2.5 -> e4m3 2.5 = 1.25 * 2^1: exponent 8, mantissa 2 -> 0x42.
  EXPECT_CODES_EQ((Codes{0x42, 0x80}),
                  codes_of("value=e4m3,store=native", Shape{2}, Floats{0.25f, -0.0f}, Floats{0.0f}));
}

// ---------------------------------------------------------------------------------------------
// Stored scales are rounded up (SPEC §2, §5) and quantize divides by them.

TEST(StoredScales, QuantizeDividesByTheRoundedScale) {
  // ue4m3: 0.3 -> 0.3125. x = 0.46: 0.46 / 0.3125 = 1.472 -> 1 (dividing by the raw 0.3 would give
  // 1.53 -> 2).
  auto r = quantize(scheme("value=q8s,store=native,tensor=ue4m3"), Shape{1}, Floats{0.46f}, Floats{0.3f},
                    std::nullopt);
  ASSERT_OK(r);
  EXPECT_FLOATS_EQ((Floats{0.3125f}), r.value().scales);
  EXPECT_CODES_EQ((Codes{1}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{0.3125f}), dequantized(r.value()));
}

TEST(StoredScales, EveryScaleDtype) {
  // One block per element so each scale is visible. Expected stored values as in numeric_test:
  // f16: 0.3f -> 0x1.334p-2, 1 + 2^-23 -> 1 + 2^-10, 2^-25 -> 2^-24, 1e10 -> 65504.
  // bf16: 0.3f -> 0x1.34p-2, 1 + 2^-23 -> 1 + 2^-7, 2^-149 -> 2^-133, FLT_MAX -> 0x7F7F0000.
  // ue4m3: 0.3f -> 0.3125, 1 + 2^-23 -> 1.125, 0.001 -> 2^-9, 500 -> 448.
  struct Case {
    const char* text;
    Floats raw, stored;
  };
  const Case cases[] = {
      {"value=q8s,store=native,block=1:f32", {0.3f, 0x1.000002p0f, 0x1p-25f, 1e10f},
       {0.3f, 0x1.000002p0f, 0x1p-25f, 1e10f}},
      {"value=q8s,store=native,block=1:f16", {0.3f, 0x1.000002p0f, 0x1p-25f, 1e10f},
       {0x1.334p-2f, 0x1.004p0f, 0x1p-24f, 65504.0f}},
      {"value=q8s,store=native,block=1:bf16", {0.3f, 0x1.000002p0f, 0x1p-149f, qct::kMax},
       {0x1.34p-2f, 0x1.02p0f, 0x1p-133f, qct::from_bits(0x7F7F0000u)}},
      {"value=q8s,store=native,block=1:ue4m3", {0.3f, 0x1.000002p0f, 0.001f, 500.0f},
       {0.3125f, 1.125f, 0x1p-9f, 448.0f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto r = quantize(scheme(c.text), Shape{4}, Floats{0, 0, 0, 0}, c.raw, std::nullopt);
    ASSERT_OK(r);
    EXPECT_FLOATS_EQ(c.stored, r.value().scales);
  }
  // Per-tensor levels round too.
  auto t = quantize(scheme("value=q8s,store=native,tensor=f16"), Shape{1}, Floats{0}, Floats{0.3f},
                    std::nullopt);
  ASSERT_OK(t);
  EXPECT_FLOATS_EQ((Floats{0x1.334p-2f}), t.value().scales);
}

// ---------------------------------------------------------------------------------------------
// Two-level (SPEC §5): eff = fl(g * s'), y = fl(x / eff), x' = fl(eff * decode(q)).

TEST(TwoLevel, SeedSchemeWithGlobal) {
  // eff0 = 3 * 0.5 = 1.5, eff1 = 3 * 0.125 = 0.375 (exact).
  // 1.5/1.5 = 1; 3/1.5 = 2; -1; 0.75/1.5 = 0.5 -> 1; 0.375/0.375 = 1; 0.1875/0.375 = 0.5 -> 1;
  // -0.5625/0.375 = -1.5 -> -2; 100/0.375 = 266.7 -> 127.
  auto r = quantize(scheme("value=q8s,store=native,block=4:ue4m3,tensor=f32"), Shape{8},
                    Floats{1.5f, 3.0f, -1.5f, 0.75f, 0.375f, 0.1875f, -0.5625f, 100.0f},
                    Floats{0.5f, 0.125f}, 3.0f);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{1, 2, -1, 1, 1, 1, -2, 127}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{0.5f, 0.125f}), r.value().scales);
  ASSERT_TRUE(r.value().global.has_value());
  EXPECT_BITS_EQ(3.0f, *r.value().global);
  // 0.375 * 127 = 47.625 exactly.
  EXPECT_FLOATS_EQ((Floats{1.5f, 3.0f, -1.5f, 1.5f, 0.375f, 0.375f, -0.75f, 47.625f}), dequantized(r.value()));
}

TEST(TwoLevel, EffectiveScaleIsRoundedOnceBeforeTheDivision) {
  // g = 0x1.e2737cp0, s' = 1.625 (on the ue4m3 grid). g * s' = 102758227 / 2^25 =
  // 0x1.87fdd4cp1, which rounds to eff = 0x1.87fdd4p1. x = 0x1.05d68cp8:
  // x / eff = 85.49999696..., within half an ulp (2^-18) of 85.5 -> y = 85.5 -> 86.
  // Dividing in two steps instead, fl(fl(x / g) / s') = 0x1.55fffep6 -> 85 (so does x / s' / g).
  const float g = 0x1.e2737cp0f, x = 0x1.05d68cp8f;
  auto r = quantize(scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32"), Shape{2}, Floats{x, -x},
                    Floats{1.625f, 1.625f}, g);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{86, -86}), r.value().codes);
  // x' = fl(eff * 86) = 0x1.075e8ap8.
  EXPECT_FLOATS_EQ((Floats{0x1.075e8ap8f, -0x1.075e8ap8f}), dequantized(r.value()));
}

TEST(TwoLevel, DequantizeMultipliesTheRoundedEffectiveScale) {
  // Same g, s' = 1.625, code 5: fl(eff * 5) = 0x1.e9fd48p3, while fl(g * fl(s' * 5)) would be
  // 0x1.e9fd4ap3.
  QTensor t;
  t.scheme = scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32");
  t.shape = {1};
  t.codes = {5};
  t.scales = {1.625f};
  t.global = 0x1.e2737cp0f;
  EXPECT_FLOATS_EQ((Floats{0x1.e9fd48p3f}), dequantized(t));
}

TEST(TwoLevel, ZeroEffectiveScaleIsPointOne) {
  // g * s' = 0 (s' = 0) and g * s' underflowing to 0 both become 0.1f.
  // s' = 2^-9 (ue4m3), g = 2^-140: the product 2^-149 is the smallest subnormal, not 0: eff = 2^-149,
  // x = 2^-149 -> y = 1.
  auto r = quantize(scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32"), Shape{2},
                    Floats{0.25f, 0x1p-149f}, Floats{0.0f, 0x1p-9f}, 0x1p-140f);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{3, 1}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{0x1.333334p-2f, 0x1p-149f}), dequantized(r.value()));
  // g = 2^-149, s' = 2^-9: the product underflows to 0 -> 0.1f; 0.25 -> 3.
  auto u = quantize(scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32"), Shape{1}, Floats{0.25f},
                    Floats{0x1p-9f}, 0x1p-149f);
  ASSERT_OK(u);
  EXPECT_CODES_EQ((Codes{3}), u.value().codes);
}

TEST(TwoLevel, Nvfp4) {
  // nvfp4 with s = 1, g = 1: e2m1 RNE of the inputs.
  // 0->0 0.25->0 0.5->1 0.75->2 1->2 1.25->2 1.5->3 1.75->4 2->4 2.5->4 3->5 3.5->6 4->6 5->6 6->7 7->7
  const Floats x = {0, 0.25f, 0.5f, 0.75f, 1, 1.25f, 1.5f, 1.75f, 2, 2.5f, 3, 3.5f, 4, 5, 6, 7};
  auto r = quantize(nvfp4(), Shape{16}, x, Floats{1.0f}, 1.0f);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 6, 7, 7}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{0, 0, 0.5f, 1, 1, 1, 1.5f, 2, 2, 2, 3, 4, 4, 4, 6, 6}), dequantized(r.value()));
  // With g = 0.5 and s = 2 (eff = 1) the result is identical.
  auto h = quantize(nvfp4(), Shape{16}, x, Floats{2.0f}, 0.5f);
  ASSERT_OK(h);
  EXPECT_CODES_EQ(r.value().codes, h.value().codes);
}

// ---------------------------------------------------------------------------------------------
// Minifloat quantize (SPEC §5).

TEST(MinifloatQuantize, E4m3) {
  const Floats x = {448, 464, 1e30f, kInf, -kInf, 0x1p-9f, 0x1p-10f, -0.0f, 0x1.8p-9f, 1.0625f};
  auto r = quantize(scheme("value=e4m3,store=native"), Shape{x.size()}, x, Floats{1.0f}, std::nullopt);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x01, 0x00, 0x80, 0x02, 0x38}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{448, 448, 448, 448, -448, 0x1p-9f, 0, -0.0f, 0x1p-8f, 1}), dequantized(r.value()));
  // Scale 2: 896 / 2 = 448 -> 0x7E; dequantize 2 * 448 = 896.
  auto s = quantize(scheme("value=e4m3,store=native"), Shape{2}, Floats{896, -3}, Floats{2.0f}, std::nullopt);
  ASSERT_OK(s);
  EXPECT_CODES_EQ((Codes{0x7E, 0xBC}), s.value().codes);  // -1.5 = 0xBC
  EXPECT_FLOATS_EQ((Floats{896, -3}), dequantized(s.value()));
}

TEST(MinifloatQuantize, E5m2) {
  const Floats x = {57344, 61440, kInf, 0x1p-16f, 0x1p-17f, 0x1.8p-16f, -1};
  auto r = quantize(scheme("value=e5m2,store=native"), Shape{x.size()}, x, Floats{1.0f}, std::nullopt);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{0x7B, 0x7B, 0x7B, 0x01, 0x00, 0x02, 0xBC}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{57344, 57344, 57344, 0x1p-16f, 0, 0x1p-15f, -1}), dequantized(r.value()));
}

TEST(MinifloatQuantize, E2m1) {
  // Scale 0.5: 1.25 / 0.5 = 2.5 -> tie -> 2 (code 4); -2.5 / 0.5 = -5 -> tie 4 | 6 -> -4 (0xE).
  auto r = quantize(scheme("value=e2m1,store=native"), Shape{3}, Floats{1.25f, -2.5f, 100},
                    Floats{0.5f}, std::nullopt);
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{0x4, 0xE, 0x7}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{1.0f, -2.0f, 3.0f}), dequantized(r.value()));
}

// ---------------------------------------------------------------------------------------------
// Blocks (SPEC §4).

TEST(Blocks, PartialBlockTakesAScale) {
  // 70 / 32 -> 3 blocks; the third holds elements 64..69. Data 8 with scales 1, 2, 4.
  auto r = quantize(scheme("value=q8s,store=native,block=32:f32"), Shape{70}, Floats(70, 8.0f),
                    Floats{1, 2, 4}, std::nullopt);
  ASSERT_OK(r);
  Codes expected(70, 8);
  for (std::size_t i = 32; i < 64; ++i) expected[i] = 4;
  for (std::size_t i = 64; i < 70; ++i) expected[i] = 2;
  EXPECT_CODES_EQ(expected, r.value().codes);
  EXPECT_ERROR(quantize(scheme("value=q8s,store=native,block=32:f32"), Shape{70}, Floats(70, 8.0f),
                        Floats{1, 2}, std::nullopt),
               scale_count_mismatch);
  auto l = make_layout(scheme("value=q8s,store=native,block=32:f32"), Shape{70});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().grid, (std::vector<std::size_t>{3}));
  EXPECT_EQ(l.value().scale_count, 3u);
}

TEST(Blocks, RankEightLayoutHoldsEveryExtent) {
  // kMaxRank dims, a block of as many (SPEC §4) and packing along the last axis (SPEC §6):
  // grid ceil(n_i / b_i) = [2, 2, 1, 2, 3, 1, 2, 2], 96 scales; 7 codes of 4 bits per line
  // take one u32 unit.
  const Scheme s = scheme("value=q4s,store=packed_u32:0,block=1x2x1x3x2x1x1x4:f32");
  auto l = make_layout(s, Shape{2, 3, 1, 4, 5, 1, 2, 7});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().rank, 8u);
  EXPECT_EQ(l.value().shape, (std::vector<std::size_t>{2, 3, 1, 4, 5, 1, 2, 7}));
  EXPECT_EQ(l.value().block, (std::vector<std::size_t>{1, 2, 1, 3, 2, 1, 1, 4}));
  EXPECT_EQ(l.value().grid, (std::vector<std::size_t>{2, 2, 1, 2, 3, 1, 2, 2}));
  EXPECT_EQ(l.value().scale_count, 96u);
  EXPECT_EQ(l.value().storage_shape, (std::vector<std::size_t>{2, 3, 1, 4, 5, 1, 2, 1}));
  EXPECT_EQ(l.value().storage_bytes, 2u * 3 * 4 * 5 * 2 * 4);
  // A copy is the same layout, and the shapes read as their own extents.
  const Layout copy = l.value();
  EXPECT_EQ(copy.grid, l.value().grid);
  EXPECT_EQ(std::vector<std::size_t>(copy.shape.begin(), copy.shape.end()), (std::vector<std::size_t>{2, 3, 1, 4, 5, 1, 2, 7}));
  // One dim more is shape-overflow, whatever the block.
  EXPECT_ERROR(make_layout(s, Shape{1, 2, 3, 1, 4, 5, 1, 2, 7}), shape_overflow);
}

// make_layout_into fills a Layout that held another one (rank 8, blocks, packing) exactly as
// make_layout builds a fresh one, field by field, and fails with the same kind in the same order.
TEST(Blocks, LayoutIntoOverwritesEverything) {
  const Scheme big = scheme("value=q4s,store=packed_u32:0,block=1x2x1x3x2x1x1x4:f32");
  const Shape big_shape{2, 3, 1, 4, 5, 1, 2, 7};
  auto same = [](const Layout& a, const Layout& b) {
    auto v = [](const Dims& d) { return std::vector<std::size_t>(d.begin(), d.end()); };
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(v(a.shape), v(b.shape));
    EXPECT_EQ(a.elements, b.elements);
    EXPECT_EQ(v(a.block), v(b.block));
    EXPECT_EQ(v(a.grid), v(b.grid));
    EXPECT_EQ(a.scale_count, b.scale_count);
    EXPECT_EQ(a.bits, b.bits);
    EXPECT_EQ(a.per_unit, b.per_unit);
    EXPECT_EQ(a.unit_bytes, b.unit_bytes);
    EXPECT_EQ(a.packed_axis, b.packed_axis);
    EXPECT_EQ(v(a.storage_shape), v(b.storage_shape));
    EXPECT_EQ(a.storage_units, b.storage_units);
    EXPECT_EQ(a.storage_bytes, b.storage_bytes);
    EXPECT_EQ(a.scale_bytes, b.scale_bytes);
    EXPECT_EQ(a.global_bytes, b.global_bytes);
    EXPECT_EQ(a.total_bytes, b.total_bytes);
  };
  const std::vector<std::pair<std::string, Shape>> cases = {
      {"value=q8s", {4096}},                                   // per-tensor: no block, no grid
      {"value=q8s,store=native,block=32:f16", {3, 64}},
      {"value=e2m1,store=packed_native:0,block=16:ue4m3,tensor=f32", {5, 48}},
      {"value=q2s,store=packed_u32:1,block=2x4:bf16", {6, 8}},
      {"value=q8f", {}},                                       // rank 0
      {"value=q4s,block=8:f16", {0, 16}}};                     // empty
  for (const auto& [text, shape] : cases) {
    SCOPED_TRACE(text);
    Layout l;
    ASSERT_TRUE(make_layout_into(big, big_shape, std::nullopt, l).ok());
    ASSERT_TRUE(make_layout_into(scheme(text), shape, std::nullopt, l).ok());
    auto fresh = make_layout(scheme(text), shape);
    ASSERT_OK(fresh);
    same(l, fresh.value());
  }
  // The same errors as make_layout, data length first among the shape checks' peers.
  Layout l;
  const Scheme q = scheme("value=q8s,block=2x32:f16");
  EXPECT_EQ(make_layout_into(q, Shape{1, 2, 3, 4, 5, 6, 7, 8, 9}, std::nullopt, l).kind(), ErrorKind::shape_overflow);
  EXPECT_EQ(make_layout_into(q, Shape{4, 64}, 255, l).kind(), ErrorKind::shape_mismatch);
  EXPECT_EQ(make_layout_into(q, Shape{64}, std::nullopt, l).kind(), ErrorKind::block_rank_exceeds_tensor);
  EXPECT_EQ(make_layout_into(scheme("value=q8s,store=packed_u32:2"), Shape{4, 64}, std::nullopt, l).kind(),
            ErrorKind::packing_dim_out_of_range);
}

TEST(Blocks, TwoDimensionalBlocksAreRectangles) {
  // Shape [4, 8], block 2x4 -> grid [2, 2]. Element (1, 5) (flat 13) is in block (0, 1) = 1;
  // (2, 3) (flat 19) in block (1, 0) = 2; (3, 7) (flat 31) in block 3.
  const Scheme s = scheme("value=q8s,store=native,block=2x4:f32");
  auto l = make_layout(s, Shape{4, 8});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().block, (std::vector<std::size_t>{2, 4}));
  EXPECT_EQ(l.value().grid, (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(l.value().scale_count, 4u);
  EXPECT_EQ(block_of(l.value(), 13), 1u);
  EXPECT_EQ(block_of(l.value(), 19), 2u);
  EXPECT_EQ(block_of(l.value(), 31), 3u);
  EXPECT_EQ(block_of(l.value(), 4), 1u);
  EXPECT_EQ(block_of(l.value(), 8), 0u);  // (1, 0)
  // Data 16 everywhere with scales 1, 2, 4, 8.
  auto r = quantize(s, Shape{4, 8}, Floats(32, 16.0f), Floats{1, 2, 4, 8}, std::nullopt);
  ASSERT_OK(r);
  Codes expected(32);
  for (std::size_t i = 0; i < 32; ++i) {
    const std::size_t row = i / 8, col = i % 8;
    const std::size_t block = (row / 2) * 2 + col / 4;
    expected[i] = 16 >> block;  // 16, 8, 4, 2
  }
  EXPECT_CODES_EQ(expected, r.value().codes);
}

TEST(Blocks, PartialTwoDimensionalGrid) {
  // Shape [3, 5], block 2x2 -> grid [2, 3]; element (2, 4) (flat 14) in block (1, 2) = 5.
  auto l = make_layout(scheme("value=q8s,store=native,block=2x2:f16"), Shape{3, 5});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().grid, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(l.value().scale_count, 6u);
  EXPECT_EQ(block_of(l.value(), 14), 5u);
  EXPECT_EQ(block_of(l.value(), 10), 3u);  // (2, 0)
  EXPECT_EQ(block_of(l.value(), 9), 2u);   // (1, 4)
}

TEST(Blocks, RankRelative) {
  // block=32 on [8, 64] is [1, 32]: grid [8, 2], 16 scales.
  auto l = make_layout(scheme("value=q8s,block=32:f32"), Shape{8, 64});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().block, (std::vector<std::size_t>{1, 32}));
  EXPECT_EQ(l.value().grid, (std::vector<std::size_t>{8, 2}));
  EXPECT_EQ(l.value().scale_count, 16u);
  EXPECT_EQ(block_of(l.value(), 64 + 33), 3u);  // (1, 33) -> block (1, 1)
  // "1x32" is "32".
  auto c = make_layout(scheme("value=q8s,block=1x32:f32"), Shape{8, 64});
  ASSERT_OK(c);
  EXPECT_EQ(c.value().grid, l.value().grid);
  // block=1 (the canonical all-ones block) on [4, 8]: 32 blocks of one element.
  auto one = make_layout(scheme("value=q8s,block=1x1:f32"), Shape{4, 8});
  ASSERT_OK(one);
  EXPECT_EQ(one.value().block, (std::vector<std::size_t>{1, 1}));
  EXPECT_EQ(one.value().scale_count, 32u);
  // Per-tensor: one scale, no block.
  auto pt = make_layout(scheme("value=q8s"), Shape{4, 8});
  ASSERT_OK(pt);
  EXPECT_EQ(pt.value().scale_count, 1u);
  EXPECT_TRUE(pt.value().block.empty());
}

TEST(Blocks, BlockRankExceedsTensor) {
  EXPECT_ERROR(make_layout(scheme("value=q8s,block=2x4:f32"), Shape{8}), block_rank_exceeds_tensor);
  EXPECT_ERROR(make_layout(scheme("value=q8s,block=4:f32"), Shape{}), block_rank_exceeds_tensor);
  // Equal rank is fine.
  EXPECT_OK(make_layout(scheme("value=q8s,block=2x4:f32"), Shape{2, 8}));
}

TEST(Blocks, BurnBlocksThatDoNotSpanTheTrailingDim) {
  // burn ops/quantize.rs should_quantize_blocks_that_do_not_span_the_trailing_dim: [4, 8] in [2, 4]
  // blocks of one magnitude each. Calibrated scales fl(fl(2m)/254): 1 -> 0x1.020408p-7,
  // 10 -> 0x1.42850ap-4, 100 -> 0x1.93264cp-1, 1000 -> 0x1.f7efe0p2; each m / s rounds to 127 and
  // fl(127 * s) is m again.
  Floats x(32);
  const float mags[4] = {1, 10, 100, 1000};
  for (std::size_t i = 0; i < 32; ++i) x[i] = mags[(i / 16) * 2 + (i % 8) / 4];
  const Scheme s = scheme("value=q8s,block=2x4:f32");
  auto p = calibrate(s, Shape{4, 8}, x, Calibration::minmax);
  ASSERT_OK(p);
  EXPECT_FLOATS_EQ((Floats{0x1.020408p-7f, 0x1.42850ap-4f, 0x1.93264cp-1f, 0x1.f7efe0p2f}), p.value().scales);
  auto r = quantize(s, Shape{4, 8}, x, p.value().scales, p.value().global);
  ASSERT_OK(r);
  EXPECT_CODES_EQ(Codes(32, 127), r.value().codes);
  EXPECT_FLOATS_EQ(x, dequantized(r.value()));
}

// ---------------------------------------------------------------------------------------------
// Lookup mode (SPEC §5).

TEST(Lookup, NearestEntryTiesToLowerIndex) {
  const Floats t = {-1.0f, -0.25f, 0.5f, 2.0f};
  // -2 -> 0; -0.625 is the midpoint of -1 and -0.25 -> lower index 0; -0.6 -> 1 (0.35 vs 0.4);
  // 0.125 midpoint of -0.25 and 0.5 -> 1; 1.25 midpoint of 0.5 and 2 -> 2; 100 -> 3; 0.5 -> 2.
  const Floats x = {-2.0f, -0.625f, -0.6f, 0.125f, 1.25f, 100.0f, 0.5f, -0.0f};
  auto r = quantize(scheme("value=q2s,mode=lookup"), Shape{x.size()}, x, Floats{1.0f}, std::nullopt, table(t));
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{0, 0, 1, 1, 2, 3, 2, 1}), r.value().codes);
  // decode = table[i], times eff = 1.
  EXPECT_FLOATS_EQ((Floats{-1, -1, -0.25f, -0.25f, 0.5f, 2, 0.5f, -0.25f}), dequantized(r.value(), table(t)));
}

TEST(Lookup, LowerIndexNotLowerValue) {
  // Unsorted table: 1.25 is equally far from 2 (index 0) and 0.5 (index 2) -> index 0.
  const Floats t = {2.0f, -1.0f, 0.5f, -0.25f};
  auto r = quantize(scheme("value=q2f,mode=lookup"), Shape{3}, Floats{1.25f, 0.125f, -5}, Floats{1.0f},
                    std::nullopt, table(t));
  ASSERT_OK(r);
  // 0.125: midpoint of 0.5 (index 2) and -0.25 (index 3) -> 2. -5 -> -1 (index 1).
  EXPECT_CODES_EQ((Codes{0, 2, 1}), r.value().codes);
  // Duplicate entries: the first.
  const Floats dup = {0.0f, 0.0f, 1.0f, 1.0f};
  auto d = quantize(scheme("value=q2f,mode=lookup"), Shape{2}, Floats{0.0f, 1.0f}, Floats{1.0f}, std::nullopt,
                    table(dup));
  ASSERT_OK(d);
  EXPECT_CODES_EQ((Codes{0, 2}), d.value().codes);
}

TEST(Lookup, ScaleDividesFirstAndMultipliesBack) {
  // eff = 0.5: y = x / 0.5. x = 1 -> y = 2 -> index 3; x = -0.1 -> y = -0.2 -> nearest -0.25 (1).
  // Dequantize: 0.5 * 2 = 1, 0.5 * -0.25 = -0.125.
  const Floats t = {-1.0f, -0.25f, 0.5f, 2.0f};
  auto r = quantize(scheme("value=q2s,mode=lookup"), Shape{2}, Floats{1.0f, -0.1f}, Floats{0.5f}, std::nullopt,
                    table(t));
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{3, 1}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{1.0f, -0.125f}), dequantized(r.value(), table(t)));
}

TEST(Lookup, EightBitTableIndicesAreUnsigned) {
  // q8s lookup: 256 entries, table[i] = i. Codes are indices 0..255 (no -128 rule).
  Floats t(256);
  for (std::size_t i = 0; i < 256; ++i) t[i] = static_cast<float>(i);
  auto r = quantize(scheme("value=q8s,mode=lookup"), Shape{4}, Floats{0, 128, 255, 300}, Floats{1.0f},
                    std::nullopt, table(t));
  ASSERT_OK(r);
  EXPECT_CODES_EQ((Codes{0, 128, 255, 255}), r.value().codes);
  EXPECT_FLOATS_EQ((Floats{0, 128, 255, 255}), dequantized(r.value(), table(t)));
}

TEST(Lookup, InfinityInputIsAllowed) {
  // ±Inf is not nan-input; the result must be an in-range index.
  const Floats t = {-1.0f, -0.25f, 0.5f, 2.0f};
  auto r = quantize(scheme("value=q2s,mode=lookup"), Shape{2}, Floats{kInf, -kInf}, Floats{1.0f}, std::nullopt,
                    table(t));
  ASSERT_OK(r);
  for (std::int32_t c : r.value().codes) {
    EXPECT_GE(c, 0);
    EXPECT_LT(c, 4);
  }
}

}  // namespace
}  // namespace qconform
