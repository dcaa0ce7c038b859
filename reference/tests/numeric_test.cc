// Scalar formats (SPEC §2, §5, §7): scale round-up against an independent grid oracle, minifloat
// encode/decode, f16/bf16 conversions, scale codecs and Rust's f32::round.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::bits;
using qct::from_bits;
using qct::hex;
using qct::kInf;
using qct::kMax;
using qct::kNaN;

float up(float s, ScaleDtype d) {
  auto r = round_up_scale(s, d);
  EXPECT_TRUE(r.ok()) << "round_up_scale(" << hex(s) << ", " << to_string(d) << ") failed";
  return r.ok() ? r.value() : kNaN;
}

float next_up(float x) { return std::nextafter(x, kInf); }
float next_down(float x) { return std::nextafter(x, -kInf); }

// ---------------------------------------------------------------------------------------------
// Independent decoders written from the format definitions (sign, biased exponent, mantissa).

double f16_value(std::uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -mag : mag;
}
double e4m3_value(unsigned c) {  // bias 7, subnormal m * 2^-9
  const int e = (c >> 3) & 15, m = c & 7;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return (c & 0x80) ? -mag : mag;
}
double e5m2_value(unsigned c) {  // bias 15, subnormal m * 2^-16
  const int e = (c >> 2) & 31, m = c & 3;
  const double mag = e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17);
  return (c & 0x80) ? -mag : mag;
}
double e2m1_value(unsigned c) {  // bias 1, subnormal m * 0.5
  const int e = (c >> 1) & 3, m = c & 1;
  const double mag = e == 0 ? 0.5 * m : std::ldexp(2 + m, e - 2);
  return (c & 0x8) ? -mag : mag;
}

// Sorted non-negative finite grid of a scale dtype.
std::vector<float> grid(ScaleDtype d) {
  std::vector<float> g;
  switch (d) {
    case ScaleDtype::f16:
      for (unsigned h = 0; h <= 0x7BFF; ++h) g.push_back(static_cast<float>(f16_value(static_cast<std::uint16_t>(h))));
      break;
    case ScaleDtype::bf16:
      for (unsigned h = 0; h <= 0x7F7F; ++h) g.push_back(from_bits(h << 16));
      break;
    case ScaleDtype::ue4m3:
      for (unsigned c = 0; c <= 0x7E; ++c) g.push_back(static_cast<float>(e4m3_value(c)));
      break;
    default:
      break;
  }
  return g;
}

// SPEC §2: the smallest grid value >= s, saturating at the maximum.
float oracle_up(const std::vector<float>& g, float s) {
  auto it = std::lower_bound(g.begin(), g.end(), s);
  return it == g.end() ? g.back() : *it;
}

// ---------------------------------------------------------------------------------------------
// SPEC §2 scale round-up.

TEST(RoundUp, F32IsIdentity) {
  for (float s : {0.0f, 0x1p-149f, 0x1.fffffcp-127f, 0.3f, 1.0f, 0x1.000002p0f, kMax}) {
    EXPECT_BITS_EQ(s, up(s, ScaleDtype::f32));
  }
}

TEST(RoundUp, F16) {
  const ScaleDtype d = ScaleDtype::f16;
  EXPECT_BITS_EQ(0.0f, up(0.0f, d));
  EXPECT_BITS_EQ(1.0f, up(1.0f, d));
  // One f32 ulp above 1 goes to the next f16, 1 + 2^-10.
  EXPECT_BITS_EQ(0x1.004p0f, up(0x1.000002p0f, d));
  // One f32 ulp below 1 is still in (1 - 2^-11, 1]: 1.
  EXPECT_BITS_EQ(1.0f, up(0x1.fffffep-1f, d));
  // Spacing 2 in [2048, 4096).
  EXPECT_BITS_EQ(2050.0f, up(2049.0f, d));
  // 0.3f = 0x1.333334p-2: f16 spacing there is 2^-12; 0.3f * 4096 = 1228.8..., ceil 1229,
  // 1229 / 4096 = 0x1.334p-2.
  EXPECT_BITS_EQ(0x1.334p-2f, up(0.3f, d));
  // 1/3f = 0x1.555556p-2: the 10-bit mantissa 0x554 plus remainder rounds up to 0x558.
  EXPECT_BITS_EQ(0x1.558p-2f, up(0x1.555556p-2f, d));
  // Saturation at 65504.
  EXPECT_BITS_EQ(65504.0f, up(65504.0f, d));
  EXPECT_BITS_EQ(65504.0f, up(65503.0f, d));
  EXPECT_BITS_EQ(65504.0f, up(65505.0f, d));
  EXPECT_BITS_EQ(65504.0f, up(0x1.ffdffep15f, d));  // just below 65520, the f16 rounding midpoint
  EXPECT_BITS_EQ(65504.0f, up(1e10f, d));
  EXPECT_BITS_EQ(65504.0f, up(kMax, d));
  EXPECT_BITS_EQ(65504.0f, up(kInf, d));
  // Subnormals below 2^-14, spacing 2^-24.
  EXPECT_BITS_EQ(0x1p-24f, up(0x1p-24f, d));
  EXPECT_BITS_EQ(0x1p-24f, up(0x1p-25f, d));
  EXPECT_BITS_EQ(0x1p-24f, up(0x1p-149f, d));       // the smallest f32 subnormal
  EXPECT_BITS_EQ(0x1p-23f, up(0x1.8p-24f, d));      // 1.5 steps -> 2 steps
  EXPECT_BITS_EQ(0x1.ff8p-15f, up(0x1.ff8p-15f, d));  // 1023 * 2^-24, the largest subnormal
  EXPECT_BITS_EQ(0x1p-14f, up(next_up(0x1.ff8p-15f), d));
  EXPECT_BITS_EQ(0x1p-14f, up(0x1p-14f, d));        // the smallest normal
  EXPECT_BITS_EQ(0x1.004p-14f, up(next_up(0x1p-14f), d));
}

TEST(RoundUp, Bf16) {
  const ScaleDtype d = ScaleDtype::bf16;
  EXPECT_BITS_EQ(0.0f, up(0.0f, d));
  EXPECT_BITS_EQ(1.0f, up(1.0f, d));
  EXPECT_BITS_EQ(0x1.02p0f, up(0x1.000002p0f, d));  // 1 + 2^-7
  EXPECT_BITS_EQ(0x1.34p-2f, up(0.3f, d));          // 0x1.333334p-2 up to 7 mantissa bits
  EXPECT_BITS_EQ(0x1.56p-2f, up(0x1.555556p-2f, d));
  // bf16 max is 0x7F7F0000 (SPEC §2).
  const float max = from_bits(0x7F7F0000u);
  EXPECT_BITS_EQ(max, up(max, d));
  EXPECT_BITS_EQ(max, up(from_bits(0x7F7EFFFFu), d));
  EXPECT_BITS_EQ(max, up(from_bits(0x7F7F0001u), d));
  EXPECT_BITS_EQ(max, up(kMax, d));
  EXPECT_BITS_EQ(max, up(kInf, d));
  // No separate subnormal range: the bit step works on f32 subnormals too. The smallest f32
  // subnormal (bits 1) goes to bits 0x00010000 = 2^-133, bf16's smallest subnormal.
  EXPECT_BITS_EQ(from_bits(0x00010000u), up(0x1p-149f, d));
  EXPECT_BITS_EQ(from_bits(0x00010000u), up(from_bits(0x00010000u), d));
  EXPECT_BITS_EQ(from_bits(0x00020000u), up(from_bits(0x00010001u), d));
  // Crossing into the normal range: bits 0x007FFFFF -> 0x00800000 = FLT_MIN.
  EXPECT_BITS_EQ(qct::kMinNormal, up(from_bits(0x007FFFFFu), d));
}

TEST(RoundUp, Ue4m3) {
  const ScaleDtype d = ScaleDtype::ue4m3;
  EXPECT_BITS_EQ(0.0f, up(0.0f, d));
  EXPECT_BITS_EQ(1.0f, up(1.0f, d));
  EXPECT_BITS_EQ(1.125f, up(0x1.000002p0f, d));  // 3 mantissa bits: next after 1 is 1.125
  // 0.3f: spacing 2^-5 in [0.25, 0.5); 0.3f * 32 = 9.6..., ceil 10 -> 0.3125.
  EXPECT_BITS_EQ(0.3125f, up(0.3f, d));
  EXPECT_BITS_EQ(0.34375f, up(0x1.555556p-2f, d));  // 1/3f * 32 = 10.67 -> 11/32
  // Spacing 32 in [256, 448].
  EXPECT_BITS_EQ(416.0f, up(416.0f, d));
  EXPECT_BITS_EQ(448.0f, up(417.0f, d));
  // Saturation at 448.
  EXPECT_BITS_EQ(448.0f, up(447.0f, d));
  EXPECT_BITS_EQ(448.0f, up(448.0f, d));
  EXPECT_BITS_EQ(448.0f, up(449.0f, d));
  EXPECT_BITS_EQ(448.0f, up(500.0f, d));
  EXPECT_BITS_EQ(448.0f, up(kMax, d));
  EXPECT_BITS_EQ(448.0f, up(kInf, d));
  // Subnormals below 2^-6, spacing 2^-9.
  EXPECT_BITS_EQ(0x1p-9f, up(0x1p-9f, d));
  EXPECT_BITS_EQ(0x1p-9f, up(0x1p-10f, d));
  EXPECT_BITS_EQ(0x1p-9f, up(0x1p-149f, d));
  EXPECT_BITS_EQ(0x1p-9f, up(0.001f, d));    // 0.001f * 512 = 0.512 -> 1 step
  EXPECT_BITS_EQ(0x1p-9f, up(7.7e-4f, d));   // 0.394 -> 1 step (burn's "underflow" case)
  EXPECT_BITS_EQ(0x1p-8f, up(next_up(0x1p-9f), d));
  EXPECT_BITS_EQ(0x1.cp-7f, up(0x1.cp-7f, d));  // 7 * 2^-9, the largest subnormal
  EXPECT_BITS_EQ(0x1p-6f, up(next_up(0x1.cp-7f), d));
  EXPECT_BITS_EQ(0x1p-6f, up(next_down(0x1p-6f), d));
  EXPECT_BITS_EQ(0x1p-6f, up(0x1p-6f, d));
  EXPECT_BITS_EQ(0x1.2p-6f, up(next_up(0x1p-6f), d));
}

TEST(RoundUp, Ue8m0IsUnsupported) {
  EXPECT_ERROR(round_up_scale(1.0f, ScaleDtype::ue8m0), unsupported_scale_dtype);
  EXPECT_ERROR(round_up_scale(0.0f, ScaleDtype::ue8m0), unsupported_scale_dtype);
}

// SPEC §2: "a property must check exactly that against an independent oracle". The oracle is the
// sorted list of every finite non-negative value of the dtype, decoded from the format definition.
TEST(RoundUp, MatchesGridOracle) {
  const unsigned seed = 20240611u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (ScaleDtype d : {ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3}) {
    SCOPED_TRACE(std::string(to_string(d)));
    const std::vector<float> g = grid(d);
    ASSERT_TRUE(std::is_sorted(g.begin(), g.end()));
    ASSERT_BITS_EQ(scale_max(d), g.back());
    std::vector<float> samples;
    for (float v : g) {
      samples.push_back(v);
      if (v > 0) samples.push_back(next_down(v));
      samples.push_back(next_up(v));
    }
    for (std::size_t i = 1; i < g.size(); ++i) samples.push_back(g[i - 1] + (g[i] - g[i - 1]) / 2);
    std::uniform_int_distribution<std::uint32_t> any(0, 0x7F7FFFFFu);
    for (int i = 0; i < 20000; ++i) samples.push_back(from_bits(any(rng)));
    // Up to twice the dtype's max, staying finite and positive.
    std::uniform_int_distribution<std::uint32_t> small(0, std::min(bits(g.back()) + 0x00800000u, 0x7F7FFFFFu));
    for (int i = 0; i < 20000; ++i) samples.push_back(from_bits(small(rng)));
    int failures = 0;
    for (float s : samples) {
      const float expected = oracle_up(g, s);
      auto r = round_up_scale(s, d);
      ASSERT_TRUE(r.ok());
      if (bits(r.value()) != bits(expected) && failures++ < 10) {
        ADD_FAILURE() << "round_up_scale(" << hex(s) << ") = " << hex(r.value()) << ", expected "
                      << hex(expected);
      }
    }
    EXPECT_EQ(failures, 0);
  }
}

TEST(ScaleDtypes, Table) {
  EXPECT_EQ(to_string(ScaleDtype::f32), "f32");
  EXPECT_EQ(to_string(ScaleDtype::f16), "f16");
  EXPECT_EQ(to_string(ScaleDtype::bf16), "bf16");
  EXPECT_EQ(to_string(ScaleDtype::ue8m0), "ue8m0");
  EXPECT_EQ(to_string(ScaleDtype::ue4m3), "ue4m3");
  // SPEC §7: f32 4 bytes, f16/bf16 2, ue4m3 1.
  EXPECT_EQ(scale_bytes(ScaleDtype::f32), 4u);
  EXPECT_EQ(scale_bytes(ScaleDtype::f16), 2u);
  EXPECT_EQ(scale_bytes(ScaleDtype::bf16), 2u);
  EXPECT_EQ(scale_bytes(ScaleDtype::ue8m0), 1u);
  EXPECT_EQ(scale_bytes(ScaleDtype::ue4m3), 1u);
  EXPECT_BITS_EQ(kMax, scale_max(ScaleDtype::f32));
  EXPECT_BITS_EQ(65504.0f, scale_max(ScaleDtype::f16));
  EXPECT_BITS_EQ(from_bits(0x7F7F0000u), scale_max(ScaleDtype::bf16));
  EXPECT_BITS_EQ(448.0f, scale_max(ScaleDtype::ue4m3));
  EXPECT_BITS_EQ(0x1p127f, scale_max(ScaleDtype::ue8m0));  // cubecl: 0x7F000000
}

// ---------------------------------------------------------------------------------------------
// Minifloat values (SPEC §5).

TEST(Minifloat, E2m1DecodesEveryCode) {
  const float expected[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                              -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  for (unsigned c = 0; c < 16; ++c) {
    EXPECT_BITS_EQ(expected[c], decode_minifloat(static_cast<std::uint8_t>(c), Value::e2m1)) << "code " << c;
    EXPECT_TRUE(minifloat_code_is_canonical(static_cast<std::uint8_t>(c), Value::e2m1));
    // Only the low 4 bits are read.
    EXPECT_BITS_EQ(expected[c], decode_minifloat(static_cast<std::uint8_t>(c | 0xF0), Value::e2m1));
  }
}

TEST(Minifloat, E4m3Decode) {
  EXPECT_BITS_EQ(0.0f, decode_minifloat(0x00, Value::e4m3));
  EXPECT_BITS_EQ(-0.0f, decode_minifloat(0x80, Value::e4m3));
  EXPECT_BITS_EQ(0x1p-9f, decode_minifloat(0x01, Value::e4m3));
  EXPECT_BITS_EQ(0x1.cp-7f, decode_minifloat(0x07, Value::e4m3));
  EXPECT_BITS_EQ(0x1p-6f, decode_minifloat(0x08, Value::e4m3));
  EXPECT_BITS_EQ(1.0f, decode_minifloat(0x38, Value::e4m3));
  EXPECT_BITS_EQ(448.0f, decode_minifloat(0x7E, Value::e4m3));
  EXPECT_BITS_EQ(-448.0f, decode_minifloat(0xFE, Value::e4m3));
  EXPECT_TRUE(std::isnan(decode_minifloat(0x7F, Value::e4m3)));
  EXPECT_TRUE(std::isnan(decode_minifloat(0xFF, Value::e4m3)));
  // 0x78..0x7E are finite: e4m3 has no infinity.
  EXPECT_BITS_EQ(256.0f, decode_minifloat(0x78, Value::e4m3));
  for (unsigned c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const bool nan = (c & 0x7F) == 0x7F;
    EXPECT_EQ(minifloat_code_is_canonical(code, Value::e4m3), !nan) << "code " << c;
    if (nan) continue;
    EXPECT_BITS_EQ(static_cast<float>(e4m3_value(c)), decode_minifloat(code, Value::e4m3)) << "code " << c;
  }
}

TEST(Minifloat, E5m2Decode) {
  EXPECT_BITS_EQ(0x1p-16f, decode_minifloat(0x01, Value::e5m2));
  EXPECT_BITS_EQ(0x1p-14f, decode_minifloat(0x04, Value::e5m2));
  EXPECT_BITS_EQ(1.0f, decode_minifloat(0x3C, Value::e5m2));
  EXPECT_BITS_EQ(57344.0f, decode_minifloat(0x7B, Value::e5m2));
  EXPECT_BITS_EQ(-57344.0f, decode_minifloat(0xFB, Value::e5m2));
  EXPECT_BITS_EQ(kInf, decode_minifloat(0x7C, Value::e5m2));
  EXPECT_BITS_EQ(-kInf, decode_minifloat(0xFC, Value::e5m2));
  for (unsigned c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) {
    EXPECT_TRUE(std::isnan(decode_minifloat(static_cast<std::uint8_t>(c), Value::e5m2))) << c;
  }
  for (unsigned c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const bool special = (c & 0x7C) == 0x7C;
    EXPECT_EQ(minifloat_code_is_canonical(code, Value::e5m2), !special) << "code " << c;
    if (special) continue;
    EXPECT_BITS_EQ(static_cast<float>(e5m2_value(c)), decode_minifloat(code, Value::e5m2)) << "code " << c;
  }
}

std::uint8_t enc(float x, Value v) { return encode_minifloat(x, v); }

TEST(Minifloat, E2m1EncodeTiesToEvenAndSaturates) {
  // Codes: 0:0 1:0.5 2:1 3:1.5 4:2 5:3 6:4 7:6, sign bit 8.
  EXPECT_EQ(enc(0.0f, Value::e2m1), 0x0);
  EXPECT_EQ(enc(-0.0f, Value::e2m1), 0x8);  // -0 kept
  EXPECT_EQ(enc(0.25f, Value::e2m1), 0x0);  // tie 0 | 0.5 -> even code 0
  EXPECT_EQ(enc(next_up(0.25f), Value::e2m1), 0x1);
  EXPECT_EQ(enc(0.75f, Value::e2m1), 0x2);  // tie 0.5 | 1 -> code 2 (1.0)
  EXPECT_EQ(enc(1.25f, Value::e2m1), 0x2);  // tie 1 | 1.5 -> code 2
  EXPECT_EQ(enc(1.75f, Value::e2m1), 0x4);  // tie 1.5 | 2 -> code 4
  EXPECT_EQ(enc(2.5f, Value::e2m1), 0x4);   // tie 2 | 3 -> code 4 (2.0)
  EXPECT_EQ(enc(next_up(2.5f), Value::e2m1), 0x5);
  EXPECT_EQ(enc(3.5f, Value::e2m1), 0x6);   // tie 3 | 4 -> code 6 (4.0)
  EXPECT_EQ(enc(5.0f, Value::e2m1), 0x6);   // tie 4 | 6 -> code 6 (4.0)
  EXPECT_EQ(enc(next_up(5.0f), Value::e2m1), 0x7);
  EXPECT_EQ(enc(6.0f, Value::e2m1), 0x7);
  EXPECT_EQ(enc(7.0f, Value::e2m1), 0x7);   // saturate
  EXPECT_EQ(enc(1e30f, Value::e2m1), 0x7);
  EXPECT_EQ(enc(kInf, Value::e2m1), 0x7);
  EXPECT_EQ(enc(-kInf, Value::e2m1), 0xF);
  EXPECT_EQ(enc(-2.5f, Value::e2m1), 0xC);
  EXPECT_EQ(enc(-0.25f, Value::e2m1), 0x8);  // rounds to -0
  EXPECT_EQ(enc(0x1p-149f, Value::e2m1), 0x0);
  EXPECT_EQ(enc(-0x1p-149f, Value::e2m1), 0x8);
  // header: NaN gives 0 for e2m1 (quantize never passes NaN).
  EXPECT_EQ(enc(kNaN, Value::e2m1), 0x0);
}

TEST(Minifloat, E4m3Encode) {
  EXPECT_EQ(enc(1.0f, Value::e4m3), 0x38);
  EXPECT_EQ(enc(-0.0f, Value::e4m3), 0x80);
  EXPECT_EQ(enc(448.0f, Value::e4m3), 0x7E);
  EXPECT_EQ(enc(464.0f, Value::e4m3), 0x7E);  // midpoint to the would-be 480: saturates
  EXPECT_EQ(enc(480.0f, Value::e4m3), 0x7E);
  EXPECT_EQ(enc(1e30f, Value::e4m3), 0x7E);
  EXPECT_EQ(enc(kInf, Value::e4m3), 0x7E);
  EXPECT_EQ(enc(-kInf, Value::e4m3), 0xFE);
  EXPECT_EQ(enc(-464.0f, Value::e4m3), 0xFE);
  // Ties in the normal range: 1 + 1/16 between 1 (0x38) and 1.125 (0x39) -> even 0x38;
  // 1 + 3/16 between 1.125 and 1.25 (0x3A) -> 0x3A.
  EXPECT_EQ(enc(1.0625f, Value::e4m3), 0x38);
  EXPECT_EQ(enc(next_up(1.0625f), Value::e4m3), 0x39);
  EXPECT_EQ(enc(1.1875f, Value::e4m3), 0x3A);
  EXPECT_EQ(enc(next_down(1.1875f), Value::e4m3), 0x39);
  // Subnormals: min 2^-9; half of it is a tie with 0 -> 0; 1.5 * 2^-9 -> 2 * 2^-9 (even).
  EXPECT_EQ(enc(0x1p-9f, Value::e4m3), 0x01);
  EXPECT_EQ(enc(0x1p-10f, Value::e4m3), 0x00);
  EXPECT_EQ(enc(next_up(0x1p-10f), Value::e4m3), 0x01);
  EXPECT_EQ(enc(0x1.8p-9f, Value::e4m3), 0x02);
  EXPECT_EQ(enc(0x1.4p-8f, Value::e4m3), 0x02);  // 2.5 * 2^-9 -> 2 (even)
  EXPECT_EQ(enc(-0x1p-11f, Value::e4m3), 0x80);  // rounds to -0, sign kept
  EXPECT_EQ(enc(0x1p-149f, Value::e4m3), 0x00);
  // Subnormal / normal boundary: 7.5 * 2^-9 is a tie between 7 * 2^-9 (0x07) and 2^-6 (0x08).
  EXPECT_EQ(enc(0x1.ep-7f, Value::e4m3), 0x08);
  EXPECT_EQ(enc(0x1p-6f, Value::e4m3), 0x08);
  // header: NaN gives 0x7F.
  EXPECT_EQ(enc(kNaN, Value::e4m3), 0x7F);
}

TEST(Minifloat, E5m2Encode) {
  EXPECT_EQ(enc(1.0f, Value::e5m2), 0x3C);
  EXPECT_EQ(enc(-0.0f, Value::e5m2), 0x80);
  EXPECT_EQ(enc(57344.0f, Value::e5m2), 0x7B);
  EXPECT_EQ(enc(61440.0f, Value::e5m2), 0x7B);  // midpoint to 65536 (would be Inf): saturates
  EXPECT_EQ(enc(65536.0f, Value::e5m2), 0x7B);
  EXPECT_EQ(enc(kInf, Value::e5m2), 0x7B);
  EXPECT_EQ(enc(-kInf, Value::e5m2), 0xFB);
  EXPECT_EQ(enc(0x1p-16f, Value::e5m2), 0x01);
  EXPECT_EQ(enc(0x1p-17f, Value::e5m2), 0x00);   // tie with 0 -> even
  EXPECT_EQ(enc(0x1.8p-16f, Value::e5m2), 0x02); // tie 1 | 2 steps -> 2
  EXPECT_EQ(enc(1.125f, Value::e5m2), 0x3C);     // tie 1 | 1.25 -> even 0x3C
  EXPECT_EQ(enc(1.375f, Value::e5m2), 0x3E);     // tie 1.25 | 1.5 -> 0x3E
  // header: NaN gives 0x7E.
  EXPECT_EQ(enc(kNaN, Value::e5m2), 0x7E);
}

// Independent nearest-even encoder over the sorted value list. Comparing 2|x| with lo + hi is
// exact in double for every f32 x and every grid pair of these formats.
std::uint8_t oracle_encode(float x, const std::vector<double>& values, unsigned sign_bit) {
  const bool neg = std::signbit(x);
  const double a = std::fabs(static_cast<double>(x));
  std::size_t code;
  if (a >= values.back()) {
    code = values.size() - 1;
  } else {
    const auto it = std::upper_bound(values.begin(), values.end(), a);  // first > a
    const std::size_t hi = static_cast<std::size_t>(it - values.begin());
    const std::size_t lo = hi - 1;
    const double twice = 2 * a, mid2 = values[lo] + values[hi];
    if (values[lo] == a || twice < mid2) code = lo;
    else if (twice > mid2) code = hi;
    else code = (lo % 2 == 0) ? lo : hi;
  }
  return static_cast<std::uint8_t>(code | (neg ? sign_bit : 0u));
}

TEST(Minifloat, EncodeMatchesNearestEvenOracle) {
  const unsigned seed = 7u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  struct Fmt {
    Value v;
    unsigned max_code, sign_bit;
    double (*value)(unsigned);
  };
  for (const Fmt& f : {Fmt{Value::e4m3, 0x7E, 0x80, e4m3_value}, Fmt{Value::e5m2, 0x7B, 0x80, e5m2_value},
                       Fmt{Value::e2m1, 0x7, 0x8, e2m1_value}}) {
    SCOPED_TRACE(std::string(info(f.v).name));
    std::vector<double> values;
    for (unsigned c = 0; c <= f.max_code; ++c) values.push_back(f.value(c));
    ASSERT_TRUE(std::is_sorted(values.begin(), values.end()));
    std::vector<float> samples = {0.0f, kInf, qct::kMinNormal, 0x1p-149f, kMax};
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<float>(values[i]);
      samples.insert(samples.end(), {v, next_up(v), next_down(v)});
      if (i + 1 < values.size()) {
        const auto mid = static_cast<float>((values[i] + values[i + 1]) / 2);  // exact
        samples.insert(samples.end(), {mid, next_up(mid), next_down(mid)});
      }
    }
    const auto top = static_cast<float>(values.back());
    samples.insert(samples.end(), {top * 1.0625f, top * 1.125f, top * 2});
    std::uniform_int_distribution<std::uint32_t> any(0, 0x7F800000u);
    for (int i = 0; i < 20000; ++i) samples.push_back(from_bits(any(rng)));
    int failures = 0;
    for (float s : samples) {
      for (float x : {s, -s}) {
        const std::uint8_t expected = oracle_encode(x, values, f.sign_bit);
        const std::uint8_t got = encode_minifloat(x, f.v);
        if (got != expected && failures++ < 10) {
          ADD_FAILURE() << "encode(" << hex(x) << ") = 0x" << std::hex << unsigned{got} << ", expected 0x"
                        << unsigned{expected};
        }
      }
    }
    EXPECT_EQ(failures, 0);
    // Every canonical code round-trips through decode.
    for (unsigned c = 0; c < (f.sign_bit << 1); ++c) {
      const auto code = static_cast<std::uint8_t>(c);
      if (!minifloat_code_is_canonical(code, f.v)) continue;
      EXPECT_EQ(encode_minifloat(decode_minifloat(code, f.v), f.v), code) << "code " << c;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// f16 / bf16 conversions and scale codecs (SPEC §7).

TEST(HalfFloats, F16Encode) {
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16(0x1.002p0f), 0x3C00);  // tie 1 | 1 + 2^-10 -> even
  EXPECT_EQ(f32_to_f16(0x1.006p0f), 0x3C02);  // tie -> even 0x3C02
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(0x1.ffdffep15f), 0x7BFF);  // just below 65520
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);        // RNE overflows to Inf
  EXPECT_EQ(f32_to_f16(kInf), 0x7C00);
  EXPECT_EQ(f32_to_f16(-kInf), 0xFC00);
  EXPECT_EQ(f32_to_f16(0x1p-14f), 0x0400);
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001);
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);        // tie with 0 -> even
  EXPECT_EQ(f32_to_f16(next_up(0x1p-25f)), 0x0001);
  EXPECT_EQ(f32_to_f16(0x1.8p-24f), 0x0002);      // tie 1 | 2 -> 2
  EXPECT_EQ(f32_to_f16(0x1p-149f), 0x0000);
  const std::uint16_t n = f32_to_f16(kNaN);
  EXPECT_EQ(n & 0x7C00, 0x7C00);
  EXPECT_NE(n & 0x03FF, 0);
}

TEST(HalfFloats, F16DecodeEveryPattern) {
  for (unsigned h = 0; h < 0x10000; ++h) {
    const auto p = static_cast<std::uint16_t>(h);
    const float got = f16_to_f32(p);
    if ((h & 0x7C00) == 0x7C00) {
      if (h & 0x03FF) {
        EXPECT_TRUE(std::isnan(got)) << h;
      } else {
        EXPECT_BITS_EQ((h & 0x8000) ? -kInf : kInf, got);
      }
      continue;
    }
    ASSERT_BITS_EQ(static_cast<float>(f16_value(p)), got) << "pattern 0x" << std::hex << h;
    // Exact values round-trip through the encoder.
    ASSERT_EQ(f32_to_f16(got), p);
  }
}

TEST(HalfFloats, Bf16) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(0x1.01p0f), 0x3F80);  // tie 1 | 1 + 2^-7 -> even
  EXPECT_EQ(f32_to_bf16(0x1.03p0f), 0x3F82);  // tie 0x3F81 | 0x3F82 -> even
  EXPECT_EQ(f32_to_bf16(kMax), 0x7F80);       // above the last midpoint: Inf
  EXPECT_EQ(f32_to_bf16(from_bits(0x7F7F0000u)), 0x7F7F);
  EXPECT_EQ(f32_to_bf16(0x1p-149f), 0x0000);
  EXPECT_EQ(f32_to_bf16(from_bits(0x00008000u)), 0x0000);  // tie -> even
  EXPECT_EQ(f32_to_bf16(from_bits(0x00018000u)), 0x0002);  // tie -> even
  EXPECT_EQ(f32_to_bf16(from_bits(0x00010000u)), 0x0001);
  const std::uint16_t n = f32_to_bf16(kNaN);
  EXPECT_EQ(n & 0x7F80, 0x7F80);
  EXPECT_NE(n & 0x007F, 0);
  for (unsigned h = 0; h < 0x10000; ++h) {
    const auto p = static_cast<std::uint16_t>(h);
    const float got = bf16_to_f32(p);
    if ((h & 0x7F80) == 0x7F80 && (h & 0x7F)) {
      EXPECT_TRUE(std::isnan(got));
      continue;
    }
    ASSERT_EQ(bits(got), h << 16) << "pattern 0x" << std::hex << h;
    ASSERT_EQ(f32_to_bf16(got), p);
  }
}

TEST(ScaleCodec, EncodeDecode) {
  EXPECT_EQ(encode_scale(1.0f, ScaleDtype::f32), 0x3F800000u);
  EXPECT_EQ(encode_scale(1.0f, ScaleDtype::f16), 0x3C00u);
  EXPECT_EQ(encode_scale(1.0f, ScaleDtype::bf16), 0x3F80u);
  EXPECT_EQ(encode_scale(1.0f, ScaleDtype::ue4m3), 0x38u);
  EXPECT_EQ(encode_scale(448.0f, ScaleDtype::ue4m3), 0x7Eu);
  EXPECT_EQ(encode_scale(0.5f, ScaleDtype::ue4m3), 0x30u);
  EXPECT_EQ(encode_scale(0.125f, ScaleDtype::ue4m3), 0x20u);
  EXPECT_EQ(encode_scale(0x1p-9f, ScaleDtype::ue4m3), 0x01u);
  EXPECT_EQ(encode_scale(65504.0f, ScaleDtype::f16), 0x7BFFu);
  EXPECT_EQ(encode_scale(1.0f, ScaleDtype::ue8m0), 127u);
  EXPECT_EQ(encode_scale(0x1p-9f, ScaleDtype::ue8m0), 118u);
  EXPECT_BITS_EQ(1.0f, decode_scale(0x3F800000u, ScaleDtype::f32));
  EXPECT_BITS_EQ(1.0f, decode_scale(0x3C00u, ScaleDtype::f16));
  EXPECT_BITS_EQ(1.0f, decode_scale(0x3F80u, ScaleDtype::bf16));
  EXPECT_BITS_EQ(448.0f, decode_scale(0x7Eu, ScaleDtype::ue4m3));
  EXPECT_BITS_EQ(0x1p-9f, decode_scale(0x01u, ScaleDtype::ue4m3));
  // ue8m0: 2^(b - 127), 0xFF NaN.
  EXPECT_BITS_EQ(1.0f, decode_scale(127u, ScaleDtype::ue8m0));
  EXPECT_BITS_EQ(2.0f, decode_scale(128u, ScaleDtype::ue8m0));
  EXPECT_BITS_EQ(0x1p127f, decode_scale(254u, ScaleDtype::ue8m0));
  EXPECT_BITS_EQ(0x1p-127f, decode_scale(0u, ScaleDtype::ue8m0));
  EXPECT_TRUE(std::isnan(decode_scale(0xFFu, ScaleDtype::ue8m0)));
  // Every rounded-up value survives the codec (burn: scale_to_dtype_survives_the_codec).
  for (ScaleDtype d : {ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3}) {
    for (float s : {0.5f, 0.3f, 1.0f / 3.0f, 500.0f, 1e-3f, 7.7e-4f, 0.0f, 0x1p-149f}) {
      const float r = up(s, d);
      EXPECT_BITS_EQ(r, decode_scale(encode_scale(r, d), d)) << to_string(d) << " " << hex(s);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rust's f32::round: half away from zero on the exact value (SPEC §5).

TEST(RoundHalfAway, Ties) {
  EXPECT_BITS_EQ(1.0f, round_half_away(0.5f));
  EXPECT_BITS_EQ(-1.0f, round_half_away(-0.5f));
  EXPECT_BITS_EQ(2.0f, round_half_away(1.5f));
  EXPECT_BITS_EQ(3.0f, round_half_away(2.5f));
  EXPECT_BITS_EQ(-3.0f, round_half_away(-2.5f));
  // 0.49999997 = 0x1.fffffep-2: below the tie; floor(x + 0.5) would give 1.
  EXPECT_BITS_EQ(0.0f, round_half_away(0x1.fffffep-2f));
  EXPECT_BITS_EQ(-0.0f, round_half_away(-0x1.fffffep-2f));  // sign kept, like Rust
  EXPECT_BITS_EQ(-0.0f, round_half_away(-0.4f));
  EXPECT_BITS_EQ(0.0f, round_half_away(0.0f));
  EXPECT_BITS_EQ(-0.0f, round_half_away(-0.0f));
  EXPECT_BITS_EQ(0.0f, round_half_away(0x1p-149f));
  EXPECT_BITS_EQ(1.0f, round_half_away(0.7f));
  // 8388607.5 = 0x1.fffffep22 is an exact tie: away -> 8388608.
  EXPECT_BITS_EQ(8388608.0f, round_half_away(0x1.fffffep22f));
  EXPECT_BITS_EQ(-8388608.0f, round_half_away(-0x1.fffffep22f));
  EXPECT_BITS_EQ(0x1.000002p23f, round_half_away(0x1.000002p23f));  // already an integer
  EXPECT_BITS_EQ(1e30f, round_half_away(1e30f));
  EXPECT_BITS_EQ(kInf, round_half_away(kInf));
  EXPECT_BITS_EQ(-kInf, round_half_away(-kInf));
  EXPECT_TRUE(std::isnan(round_half_away(kNaN)));
}

// ---------------------------------------------------------------------------------------------
// Per-value helpers of reference.h.

TEST(ValueHelpers, QuantizeValueAndDecodeValue) {
  EXPECT_EQ(quantize_value(0.5f, Value::q8s, Mode::symmetric, std::nullopt), 1);
  EXPECT_EQ(quantize_value(-2.5f, Value::q8s, Mode::symmetric, std::nullopt), -3);
  EXPECT_EQ(quantize_value(200.0f, Value::q8f, Mode::symmetric, std::nullopt), 127);
  EXPECT_EQ(quantize_value(-200.0f, Value::q8f, Mode::symmetric, std::nullopt), -128);
  EXPECT_EQ(quantize_value(-200.0f, Value::q8s, Mode::symmetric, std::nullopt), -127);
  EXPECT_EQ(quantize_value(-kInf, Value::q4f, Mode::symmetric, std::nullopt), -8);
  EXPECT_EQ(quantize_value(kInf, Value::q2f, Mode::symmetric, std::nullopt), 1);
  EXPECT_EQ(quantize_value(448.0f, Value::e4m3, Mode::symmetric, std::nullopt), 0x7E);
  EXPECT_EQ(quantize_value(-0.0f, Value::e4m3, Mode::symmetric, std::nullopt), 0x80);
  EXPECT_EQ(quantize_value(-6.0f, Value::e2m1, Mode::symmetric, std::nullopt), 0xF);
  EXPECT_BITS_EQ(-127.0f, decode_value(-127, Value::q8s, Mode::symmetric, std::nullopt));
  EXPECT_BITS_EQ(-8.0f, decode_value(-8, Value::q4f, Mode::symmetric, std::nullopt));
  EXPECT_BITS_EQ(448.0f, decode_value(0x7E, Value::e4m3, Mode::symmetric, std::nullopt));
  EXPECT_BITS_EQ(-0.0f, decode_value(0x80, Value::e4m3, Mode::symmetric, std::nullopt));
  EXPECT_BITS_EQ(-6.0f, decode_value(0xF, Value::e2m1, Mode::symmetric, std::nullopt));
  const std::vector<float> t = {-1.0f, -0.25f, 0.5f, 2.0f};
  EXPECT_EQ(quantize_value(0.125f, Value::q2s, Mode::lookup, qct::table(t)), 1);  // tie -> lower index
  EXPECT_EQ(quantize_value(0.2f, Value::q2s, Mode::lookup, qct::table(t)), 2);
  EXPECT_BITS_EQ(2.0f, decode_value(3, Value::q2s, Mode::lookup, qct::table(t)));
  // Effective scale (SPEC §5): 0 becomes 0.1f, two-level multiplies.
  EXPECT_BITS_EQ(0.1f, effective_scale(0.0f, std::nullopt));
  EXPECT_BITS_EQ(0.1f, effective_scale(0.0f, 3.0f));
  EXPECT_BITS_EQ(0.1f, effective_scale(0.5f, 0.0f));
  EXPECT_BITS_EQ(1.5f, effective_scale(0.5f, 3.0f));
  EXPECT_BITS_EQ(0.25f, effective_scale(0.25f, std::nullopt));
  // 2^-100 * 2^-100 underflows to 0 in f32, which is then the 0.1f substitute.
  EXPECT_BITS_EQ(0.1f, effective_scale(0x1p-100f, 0x1p-100f));
}

}  // namespace
}  // namespace qconform
