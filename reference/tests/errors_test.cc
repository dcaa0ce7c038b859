// Typed errors (SPEC §3, §7, §8): every kind reached through the public API, and the precedence of
// the checks.
#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::Bytes;
using qct::Codes;
using qct::Floats;
using qct::kInf;
using qct::kNaN;
using qct::scheme;
using qct::table;

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

// What an API call came back with, whatever its value type.
struct Outcome {
  bool ok = true;
  ErrorKind kind{};
  std::string message;
  template <class R>
  static Outcome of(const R& r) {
    if (r.ok()) return {};
    return {false, r.kind(), r.error().message};
  }
};

// The seed (shared/seeds/): burn panics "a two-level scheme should have a per-tensor scale".
const char* const kSeedScheme = "value=q8s,store=native,block=4:ue4m3,tensor=f32";
const Floats kEight = {-1.8f, -1.0f, 0.0f, 0.5f, -1.8f, -1.0f, 0.0f, 0.5f};
const Floats kFour = {1.0f, 2.0f, 3.0f, 4.0f};
const Floats kTable4 = {-1.0f, -0.25f, 0.5f, 2.0f};

// One call per error kind, through the public API, that must fail with exactly that kind.
std::map<ErrorKind, std::function<Outcome()>> triggers() {
  std::map<ErrorKind, std::function<Outcome()>> t;
  t[ErrorKind::invalid_scheme] = [] { return Outcome::of(parse_scheme("value=q9")); };
  t[ErrorKind::invalid_block_size] = [] {
    return Outcome::of(quantize(scheme("block=0:f32"), Shape{4}, kFour, Floats{1.0f}, std::nullopt));
  };
  t[ErrorKind::unsupported_scale_dtype] = [] {
    return Outcome::of(quantize(scheme("tensor=ue8m0"), Shape{4}, kFour, Floats{1.0f}, std::nullopt));
  };
  t[ErrorKind::narrow_global_scale] = [] {
    return Outcome::of(quantize(scheme("value=q8s,store=native,block=4:ue4m3,tensor=f16"), Shape{8},
                                kEight, Floats{0.5f, 0.125f}, 3.0f));
  };
  t[ErrorKind::block_scale_too_wide] = [] {
    return Outcome::of(quantize(scheme("value=q8s,store=native,block=4:bf16,tensor=f32"), Shape{8},
                                kEight, Floats{0.5f, 0.125f}, 3.0f));
  };
  t[ErrorKind::unsupported_store] = [] {
    return Outcome::of(quantize(scheme("value=q4s,store=packed_native:0"), Shape{4}, kFour,
                                Floats{1.0f}, std::nullopt));
  };
  t[ErrorKind::unsupported_lookup_scheme] = [] {
    static const Floats big(256, 1.0f);
    return Outcome::of(quantize(scheme("value=e4m3,mode=lookup"), Shape{4}, kFour, Floats{1.0f},
                                std::nullopt, table(big)));
  };
  t[ErrorKind::absmean_two_level] = [] {
    return Outcome::of(calibrate(nvfp4(), Shape{16}, Floats(16, 1.0f), Calibration::absmean));
  };
  t[ErrorKind::missing_global_scale] = [] {
    return Outcome::of(
        quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{0.5f, 0.125f}, std::nullopt));
  };
  t[ErrorKind::unexpected_global_scale] = [] {
    return Outcome::of(
        quantize(scheme("value=q8s,store=native"), Shape{4}, kFour, Floats{1.0f}, 2.0f));
  };
  t[ErrorKind::shape_overflow] = [] {
    return Outcome::of(quantize(Scheme{}, Shape{kSizeMax, 2}, Floats{}, Floats{1.0f}, std::nullopt));
  };
  t[ErrorKind::shape_mismatch] = [] {
    return Outcome::of(quantize(Scheme{}, Shape{4}, Floats{1, 2, 3}, Floats{1.0f}, std::nullopt));
  };
  t[ErrorKind::block_rank_exceeds_tensor] = [] {
    return Outcome::of(quantize(scheme("block=2x4:f32"), Shape{8}, kEight, Floats{1.0f, 1.0f},
                                std::nullopt));
  };
  t[ErrorKind::packing_dim_out_of_range] = [] {
    return Outcome::of(quantize(scheme("store=packed_u32:1"), Shape{8}, kEight, Floats{1.0f},
                                std::nullopt));
  };
  t[ErrorKind::block_not_divisible] = [] {
    return Outcome::of(calibrate(scheme("value=q8s,block=32:f32"), Shape{70}, Floats(70, 1.0f),
                                 Calibration::minmax));
  };
  t[ErrorKind::truncated_buffer] = [] {
    // q8s native [4]: 4 code bytes + one f32 scale = 8 bytes; 7 given.
    return Outcome::of(parse(scheme("value=q8s,store=native"), Shape{4}, Bytes(7, 0)));
  };
  t[ErrorKind::trailing_bytes] = [] {
    return Outcome::of(parse(scheme("value=q8s,store=native"), Shape{4}, Bytes(9, 0)));
  };
  t[ErrorKind::scale_count_mismatch] = [] {
    return Outcome::of(quantize(Scheme{}, Shape{4}, kFour, Floats{1.0f, 1.0f}, std::nullopt));
  };
  t[ErrorKind::invalid_scale] = [] {
    return Outcome::of(quantize(Scheme{}, Shape{4}, kFour, Floats{kNaN}, std::nullopt));
  };
  t[ErrorKind::invalid_global_scale] = [] {
    return Outcome::of(quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{0.5f, 0.125f}, kNaN));
  };
  t[ErrorKind::missing_lookup_table] = [] {
    return Outcome::of(quantize(scheme("value=q2s,mode=lookup"), Shape{4}, kFour, Floats{1.0f},
                                std::nullopt));
  };
  t[ErrorKind::unexpected_lookup_table] = [] {
    return Outcome::of(quantize(scheme("value=q2s"), Shape{4}, kFour, Floats{1.0f}, std::nullopt,
                                table(kTable4)));
  };
  t[ErrorKind::lookup_table_size] = [] {
    static const Floats three = {-1.0f, 0.0f, 1.0f};
    return Outcome::of(quantize(scheme("value=q2s,mode=lookup"), Shape{4}, kFour, Floats{1.0f},
                                std::nullopt, table(three)));
  };
  t[ErrorKind::invalid_lookup_table] = [] {
    static const Floats nan_entry = {-1.0f, kNaN, 0.5f, 2.0f};
    return Outcome::of(quantize(scheme("value=q2s,mode=lookup"), Shape{4}, kFour, Floats{1.0f},
                                std::nullopt, table(nan_entry)));
  };
  t[ErrorKind::invalid_code] = [] {
    // q8s never writes -128 (0x80); scale 1.0f = 0x3F800000 little-endian.
    return Outcome::of(parse(scheme("value=q8s,store=native"), Shape{4},
                             qct::cat({{0x00, 0x80, 0x01, 0x02}, qct::le_f32(1.0f)})));
  };
  t[ErrorKind::nan_input] = [] {
    return Outcome::of(quantize(Scheme{}, Shape{4}, Floats{1, 2, kNaN, 4}, Floats{1.0f}, std::nullopt));
  };
  t[ErrorKind::calibration_overflow] = [] {
    // 2 * FLT_MAX overflows (SPEC §8).
    return Outcome::of(calibrate(scheme("value=q8s"), Shape{2}, Floats{qct::kMax, 1.0f},
                                 Calibration::minmax));
  };
  return t;
}

TEST(ErrorKinds, EveryKindIsReachedThroughThePublicApi) {
  auto t = triggers();
  for (const auto& [kind, name] : kErrorKinds) {
    auto it = t.find(kind);
    if (it == t.end()) {
      ADD_FAILURE() << "no trigger in this suite reaches error kind " << name;
      continue;
    }
    const Outcome o = it->second();
    if (o.ok) {
      ADD_FAILURE() << "trigger for " << name << " succeeded";
      continue;
    }
    EXPECT_EQ(o.kind, kind) << "trigger for " << name << " gave " << to_string(o.kind) << ": "
                            << o.message;
    EXPECT_FALSE(o.message.empty()) << name << " carries no message";
  }
  EXPECT_EQ(t.size(), std::size(kErrorKinds));
}

TEST(ErrorKinds, NamesAreKebabCaseUniqueAndParseBack) {
  std::set<std::string_view> seen;
  for (const auto& [kind, name] : kErrorKinds) {
    EXPECT_EQ(to_string(kind), name);
    EXPECT_EQ(error_kind_from_string(name), kind) << name;
    EXPECT_TRUE(seen.insert(name).second) << "duplicate name " << name;
    ASSERT_FALSE(name.empty());
    EXPECT_NE(name.front(), '-');
    EXPECT_NE(name.back(), '-');
    for (char c : name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '-') << name;
    }
  }
  EXPECT_EQ(error_kind_from_string("missing_global_scale"), std::nullopt);
  EXPECT_EQ(error_kind_from_string(""), std::nullopt);
  EXPECT_EQ(error_kind_from_string("Missing-Global-Scale"), std::nullopt);
  // The names SPEC §3 spells out, verbatim.
  EXPECT_EQ(to_string(ErrorKind::missing_global_scale), "missing-global-scale");
  EXPECT_EQ(to_string(ErrorKind::shape_overflow), "shape-overflow");
  EXPECT_EQ(to_string(ErrorKind::invalid_code), "invalid-code");
  EXPECT_EQ(to_string(ErrorKind::calibration_overflow), "calibration-overflow");
}

// ---------------------------------------------------------------------------------------------
// Precedence of SPEC §3 for quantize, checked through quantize and validate_quantize alike.

Outcome run_quantize(const Scheme& s, const Shape& shape, const Floats& data, const Floats& scales,
                     std::optional<float> global, const std::optional<Floats>& tbl = std::nullopt) {
  Table t = tbl ? table(*tbl) : Table{};
  const Outcome q = Outcome::of(quantize(s, shape, data, scales, global, t));
  const Outcome v = Outcome::of(validate_quantize(s, shape, data, scales, global, t));
  EXPECT_EQ(q.ok, v.ok) << "quantize and validate_quantize disagree on " << print_scheme(s);
  if (!q.ok && !v.ok) {
    EXPECT_EQ(q.kind, v.kind) << "quantize and validate_quantize disagree on " << print_scheme(s);
  }
  return q;
}

::testing::AssertionResult KindIs(const char* o_expr, const char* /*k_expr*/, const Outcome& o, ErrorKind k) {
  if (o.ok) return ::testing::AssertionFailure() << o_expr << " succeeded, expected " << to_string(k);
  if (o.kind != k) {
    return ::testing::AssertionFailure() << o_expr << " failed with " << to_string(o.kind) << " (\"" << o.message
                                         << "\"), expected " << to_string(k);
  }
  return ::testing::AssertionSuccess();
}
#define EXPECT_KIND(outcome, k) EXPECT_PRED_FORMAT2(KindIs, outcome, ErrorKind::k)

TEST(Precedence, SeedCaseIsMissingGlobalScale) {
  // The acceptance case, eight inputs, no global.
  EXPECT_KIND(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{0.5f, 0.125f}, std::nullopt),
              missing_global_scale);
  // And with the global it quantizes.
  EXPECT_TRUE(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{0.5f, 0.125f}, 3.0f).ok);
}

TEST(Precedence, MissingGlobalBeatsEverythingAfterTheScheme) {
  // SPEC §3.2: every valid two-level scheme without a global yields missing-global-scale,
  // whatever else is wrong with the tensor or the scales.
  const std::vector<std::string> two_level = {
      kSeedScheme,
      "nvfp4",
      "value=q4s,store=packed_u32:0,block=4x2:f16,tensor=f32",
      "value=e5m2,store=packed_native:0,block=2:ue4m3,tensor=f32",
      "value=q2s,mode=lookup,block=4:f16,tensor=f32",
      "value=q8f,store=packed_u32:1,block=8:ue4m3,tensor=f32",
  };
  const Floats big_table(256, 0.0f);
  for (const std::string& text : two_level) {
    SCOPED_TRACE(text);
    const Scheme s = scheme(text);
    ASSERT_TRUE(validate_scheme(s).ok());
    // Wrong scale count.
    EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{1, 1, 1}, std::nullopt), missing_global_scale);
    // No scales at all.
    EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{}, std::nullopt), missing_global_scale);
    // Wrong data length.
    EXPECT_KIND(run_quantize(s, Shape{8}, Floats{1, 2, 3}, Floats{1, 1}, std::nullopt),
                missing_global_scale);
    // Shape overflow and a rank of 9.
    EXPECT_KIND(run_quantize(s, Shape{kSizeMax, kSizeMax}, Floats{}, Floats{}, std::nullopt),
                missing_global_scale);
    EXPECT_KIND(run_quantize(s, Shape(9, 1), Floats{1}, Floats{1}, std::nullopt), missing_global_scale);
    // Rank 0 with a block (block-rank-exceeds-tensor otherwise).
    EXPECT_KIND(run_quantize(s, Shape{}, Floats{1}, Floats{1}, std::nullopt), missing_global_scale);
    // NaN, negative and infinite scales; NaN data.
    EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{kNaN, -1.0f}, std::nullopt), missing_global_scale);
    EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{kInf, kInf}, std::nullopt), missing_global_scale);
    EXPECT_KIND(run_quantize(s, Shape{8}, Floats(8, kNaN), Floats{1, 1}, std::nullopt), missing_global_scale);
    // A table that is wrong for the mode (unexpected for symmetric, wrong size for lookup).
    EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{1, 1}, std::nullopt, Floats{kNaN}),
                missing_global_scale);
    EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{1, 1}, std::nullopt, big_table),
                missing_global_scale);
    // Everything wrong at once.
    EXPECT_KIND(run_quantize(s, Shape{3, 5, 7, 9}, Floats{kNaN}, Floats{kNaN, -0.0f, kInf},
                             std::nullopt, Floats{kNaN, kNaN}),
                missing_global_scale);
  }
}

TEST(Precedence, SchemeErrorsBeatGlobalPresence) {
  // SPEC §3: the static scheme checks come first.
  EXPECT_KIND(run_quantize(scheme("value=q8s,store=native,block=4:ue4m3,tensor=f16"), Shape{8}, kEight,
                           Floats{0.5f, 0.125f}, std::nullopt),
              narrow_global_scale);
  EXPECT_KIND(run_quantize(scheme("value=q8s,store=native,block=4:f32,tensor=f32"), Shape{8}, kEight,
                           Floats{0.5f, 0.125f}, std::nullopt),
              block_scale_too_wide);
  EXPECT_KIND(run_quantize(scheme("value=q8s,store=native,block=0:ue4m3,tensor=f32"), Shape{8}, kEight,
                           Floats{0.5f, 0.125f}, std::nullopt),
              invalid_block_size);
  EXPECT_KIND(run_quantize(scheme("value=q8s,store=native,block=4:ue8m0,tensor=f32"), Shape{8}, kEight,
                           Floats{0.5f, 0.125f}, std::nullopt),
              unsupported_scale_dtype);
  EXPECT_KIND(run_quantize(scheme("value=q4s,store=packed_native:0,block=4:ue4m3,tensor=f32"), Shape{8},
                           kEight, Floats{0.5f, 0.125f}, std::nullopt),
              unsupported_store);
  EXPECT_KIND(run_quantize(scheme("value=e2m1,mode=lookup,block=4:ue4m3,tensor=f32"), Shape{8}, kEight,
                           Floats{0.5f, 0.125f}, std::nullopt),
              unsupported_lookup_scheme);
  // One-level with a global: the scheme error still wins over unexpected-global-scale.
  EXPECT_KIND(run_quantize(scheme("tensor=ue8m0"), Shape{4}, kFour, Floats{1.0f}, 2.0f),
              unsupported_scale_dtype);
  EXPECT_KIND(run_quantize(scheme("value=q2f,store=packed_native:0"), Shape{4}, kFour, Floats{1.0f}, 2.0f),
              unsupported_store);
}

TEST(Precedence, UnexpectedGlobalBeatsShapeScalesAndData) {
  const Scheme s = scheme("value=q8s,store=native,block=4:f16");
  EXPECT_KIND(run_quantize(s, Shape{8}, Floats{1, 2}, Floats{1, 1, 1}, 1.0f), unexpected_global_scale);
  EXPECT_KIND(run_quantize(s, Shape{kSizeMax, 4}, Floats{}, Floats{}, 1.0f), unexpected_global_scale);
  EXPECT_KIND(run_quantize(s, Shape{8}, Floats(8, kNaN), Floats{kNaN, kNaN}, kNaN), unexpected_global_scale);
  EXPECT_KIND(run_quantize(Scheme{}, Shape{4}, kFour, Floats{1.0f}, 0.0f), unexpected_global_scale);
  EXPECT_KIND(run_quantize(Scheme{}, Shape{4}, kFour, Floats{1.0f}, -0.0f), unexpected_global_scale);
}

TEST(Precedence, ShapeChecks) {
  // Overflow before the data length (the element count cannot be formed).
  EXPECT_KIND(run_quantize(Scheme{}, Shape{kSizeMax, 2}, Floats(4, 1.0f), Floats{1}, std::nullopt),
              shape_overflow);
  EXPECT_KIND(run_quantize(Scheme{}, Shape{std::size_t{1} << 32, std::size_t{1} << 32}, Floats{1},
                           Floats{1}, std::nullopt),
              shape_overflow);
  // Rank 9 is shape-overflow (SPEC §10) even with one element and matching data.
  EXPECT_KIND(run_quantize(Scheme{}, Shape(9, 1), Floats{1}, Floats{1}, std::nullopt), shape_overflow);
  EXPECT_KIND(run_quantize(scheme("store=native"), Shape(9, 1), Floats{1}, Floats{1}, std::nullopt),
              shape_overflow);
  // Rank 8 is fine.
  EXPECT_TRUE(run_quantize(Scheme{}, Shape(8, 1), Floats{1}, Floats{1}, std::nullopt).ok);
}

TEST(Precedence, ShapeBeatsScaleCount) {
  const Scheme s = scheme("value=q8s,store=native,block=4:f32");
  EXPECT_KIND(run_quantize(s, Shape{8}, Floats(7, 1.0f), Floats{1, 1, 1}, std::nullopt), shape_mismatch);
  EXPECT_KIND(run_quantize(scheme("value=q8s,block=2x4:f32"), Shape{8}, kEight, Floats{1, 1, 1},
                           std::nullopt),
              block_rank_exceeds_tensor);
  EXPECT_KIND(run_quantize(scheme("value=q8s,store=packed_u32:1"), Shape{8}, kEight, Floats{1, 1},
                           std::nullopt),
              packing_dim_out_of_range);
}

TEST(Precedence, ScaleCountBeatsScaleValues) {
  const Scheme s = scheme("value=q8s,store=native,block=4:f32");
  EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{kNaN, kNaN, kNaN}, std::nullopt), scale_count_mismatch);
  EXPECT_KIND(run_quantize(s, Shape{8}, kEight, Floats{-1.0f}, std::nullopt), scale_count_mismatch);
  // Per-tensor takes exactly one scale, even for an empty tensor.
  EXPECT_KIND(run_quantize(Scheme{}, Shape{0}, Floats{}, Floats{}, std::nullopt), scale_count_mismatch);
  EXPECT_KIND(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{kNaN}, kNaN),
              scale_count_mismatch);
}

TEST(Precedence, ScaleValues) {
  const Scheme s = scheme("value=q8s,store=native");
  for (float bad : {kNaN, kInf, -kInf, -1.0f, -qct::from_bits(1)}) {
    EXPECT_KIND(run_quantize(s, Shape{4}, kFour, Floats{bad}, std::nullopt), invalid_scale) << qct::hex(bad);
  }
  // -0.0 is taken as +0.0 (not invalid).
  EXPECT_TRUE(run_quantize(s, Shape{4}, kFour, Floats{-0.0f}, std::nullopt).ok);
  // invalid-scale before invalid-global-scale.
  EXPECT_KIND(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{0.5f, kNaN}, kNaN), invalid_scale);
  for (float bad : {kNaN, kInf, -1.0f}) {
    EXPECT_KIND(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{0.5f, 0.125f}, bad),
                invalid_global_scale)
        << qct::hex(bad);
  }
  // The global times a stored block scale overflowing: 2^127 * 4 = 2^129 > FLT_MAX.
  EXPECT_KIND(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{4.0f, 0.125f}, 0x1p127f),
              invalid_global_scale);
  // 2^125 * 4 = 2^127 is finite.
  EXPECT_TRUE(run_quantize(scheme(kSeedScheme), Shape{8}, kEight, Floats{4.0f, 0.125f}, 0x1p125f).ok);
}

TEST(Precedence, ScaleValuesBeatTableAndTableBeatsData) {
  const Scheme lk = scheme("value=q2s,mode=lookup");
  const Floats three = {-1.0f, 0.0f, 1.0f};
  const Floats three_nan = {-1.0f, kNaN, 1.0f};
  // Scale values before the table.
  EXPECT_KIND(run_quantize(lk, Shape{4}, kFour, Floats{kNaN}, std::nullopt), invalid_scale);
  EXPECT_KIND(run_quantize(lk, Shape{4}, kFour, Floats{-2.0f}, std::nullopt, three), invalid_scale);
  EXPECT_KIND(run_quantize(scheme("value=q2s,mode=lookup,block=2:f16,tensor=f32"), Shape{4}, kFour,
                           Floats{1, 1}, kInf),
              invalid_global_scale);
  // Table before the input values.
  const Floats nan_data = {kNaN, 1, 2, 3};
  EXPECT_KIND(run_quantize(lk, Shape{4}, nan_data, Floats{1}, std::nullopt), missing_lookup_table);
  EXPECT_KIND(run_quantize(lk, Shape{4}, nan_data, Floats{1}, std::nullopt, three), lookup_table_size);
  EXPECT_KIND(run_quantize(lk, Shape{4}, nan_data, Floats{1}, std::nullopt, Floats{0, 1, kNaN, 3}),
              invalid_lookup_table);
  EXPECT_KIND(run_quantize(scheme("value=q2s"), Shape{4}, nan_data, Floats{1}, std::nullopt, kTable4),
              unexpected_lookup_table);
  // The size rule comes before the NaN-entry rule.
  EXPECT_KIND(run_quantize(lk, Shape{4}, kFour, Floats{1}, std::nullopt, three_nan), lookup_table_size);
  // 2^bits entries: 4 for q2, 16 for q4, 256 for q8.
  EXPECT_KIND(run_quantize(scheme("value=q4s,mode=lookup"), Shape{4}, kFour, Floats{1}, std::nullopt,
                           kTable4),
              lookup_table_size);
  EXPECT_TRUE(run_quantize(scheme("value=q4s,mode=lookup"), Shape{4}, kFour, Floats{1}, std::nullopt,
                           Floats(16, 0.0f))
                  .ok);
  EXPECT_KIND(run_quantize(scheme("value=q8s,mode=lookup"), Shape{4}, kFour, Floats{1}, std::nullopt,
                           Floats(255, 0.0f)),
              lookup_table_size);
  EXPECT_TRUE(run_quantize(scheme("value=q8s,mode=lookup"), Shape{4}, kFour, Floats{1}, std::nullopt,
                           Floats(256, 0.0f))
                  .ok);
  // An empty table given is not a missing table.
  EXPECT_KIND(run_quantize(lk, Shape{4}, kFour, Floats{1}, std::nullopt, Floats{}), lookup_table_size);
}

TEST(Precedence, NanInputIsLastAndNamesTheFirstNan) {
  auto r = quantize(scheme("value=q8s"), Shape{5}, Floats{1, 2, 3, kNaN, -kNaN}, Floats{1}, std::nullopt);
  ASSERT_ERROR(r, nan_input);
  // SPEC §3.7: the first NaN element, index 3.
  EXPECT_NE(r.error().message.find('3'), std::string::npos) << r.error().message;
  // ±Inf is allowed (saturates).
  EXPECT_TRUE(run_quantize(scheme("value=q8s"), Shape{2}, Floats{kInf, -kInf}, Floats{1}, std::nullopt).ok);
}

// ---------------------------------------------------------------------------------------------
// dequantize validates its QTensor like parse does.

QTensor seed_tensor() {
  QTensor t;
  t.scheme = scheme(kSeedScheme);
  t.shape = {8};
  t.codes = {1, 2, -1, 1, 1, 1, -2, 127};
  t.scales = {0.5f, 0.125f};
  t.global = 3.0f;
  return t;
}

TEST(DequantizeValidation, RejectsWhatParseWouldReject) {
  ASSERT_OK(dequantize(seed_tensor()));
  {
    QTensor t = seed_tensor();
    t.global.reset();
    EXPECT_ERROR(dequantize(t), missing_global_scale);
  }
  {
    QTensor t = seed_tensor();
    t.codes.pop_back();
    EXPECT_ERROR(dequantize(t), shape_mismatch);
  }
  {
    QTensor t = seed_tensor();
    t.scales.push_back(1.0f);
    EXPECT_ERROR(dequantize(t), scale_count_mismatch);
  }
  {
    QTensor t = seed_tensor();
    t.scales[1] = kNaN;
    EXPECT_ERROR(dequantize(t), invalid_scale);
  }
  {
    // A stored scale or global never carries a sign (SPEC §3.5, §7): -0.0 is rejected here,
    // as parse rejects its bytes, where quantize takes a -0.0 input scale as +0.0.
    QTensor t = seed_tensor();
    t.scales[1] = -0.0f;
    EXPECT_ERROR(dequantize(t), invalid_scale);
    t = seed_tensor();
    t.global = -0.0f;
    EXPECT_ERROR(dequantize(t), invalid_global_scale);
  }
  {
    QTensor t = seed_tensor();
    t.global = 0x1p127f;
    t.scales[0] = 4.0f;  // 2^127 * 4 overflows
    EXPECT_ERROR(dequantize(t), invalid_global_scale);
  }
  {
    QTensor t = seed_tensor();
    t.codes[3] = -128;  // q8s never writes -128
    EXPECT_ERROR(dequantize(t), invalid_code);
  }
  {
    QTensor t = seed_tensor();
    t.codes[0] = 128;  // outside any 8-bit integer
    EXPECT_ERROR(dequantize(t), invalid_code);
  }
  {
    QTensor t = seed_tensor();
    t.scheme = scheme("value=q8s,store=native,block=4:ue4m3,tensor=f16");
    EXPECT_ERROR(dequantize(t), narrow_global_scale);
  }
  {
    QTensor t;
    t.scheme = scheme("value=e4m3,store=native");
    t.shape = {2};
    t.codes = {0x38, 0x7F};  // 1.0, NaN
    t.scales = {1.0f};
    EXPECT_ERROR(dequantize(t), invalid_code);
    t.codes = {0x38, 0x100};
    EXPECT_ERROR(dequantize(t), invalid_code);
    t.codes = {0x38, -1};
    EXPECT_ERROR(dequantize(t), invalid_code);
  }
  {
    QTensor t;
    t.scheme = scheme("value=q2s,mode=lookup");
    t.shape = {2};
    t.codes = {0, 3};
    t.scales = {1.0f};
    EXPECT_ERROR(dequantize(t), missing_lookup_table);
    EXPECT_OK(dequantize(t, table(kTable4)));
    t.codes = {0, 4};  // index past a 4-entry table
    EXPECT_ERROR(dequantize(t, table(kTable4)), invalid_code);
    t.codes = {0, -1};
    EXPECT_ERROR(dequantize(t, table(kTable4)), invalid_code);
  }
}

// ---------------------------------------------------------------------------------------------
// parse (SPEC §7): length first, then stored scales, global, codes.

TEST(ParsePrecedence, LengthBeforeAnything) {
  const Scheme s = scheme(kSeedScheme);
  // Valid: 8 code bytes, ue4m3 0.5 = 0x30 and 0.125 = 0x20, global 3.0f.
  const Bytes good = qct::cat({{0, 1, 2, 3, 4, 5, 6, 7}, {0x30, 0x20}, qct::le_f32(3.0f)});
  ASSERT_OK(parse(s, Shape{8}, good));
  // Bad code (0x80), bad scale (0x7F), bad global (NaN), and one byte short / long.
  const Bytes all_bad = qct::cat({{0x80, 1, 2, 3, 4, 5, 6, 7}, {0x7F, 0xFF}, qct::le_f32(kNaN)});
  Bytes shorter(all_bad.begin(), all_bad.end() - 1);
  Bytes longer = all_bad;
  longer.push_back(0);
  EXPECT_ERROR(parse(s, Shape{8}, shorter), truncated_buffer);
  EXPECT_ERROR(parse(s, Shape{8}, longer), trailing_bytes);
  EXPECT_ERROR(parse(s, Shape{8}, Bytes{}), truncated_buffer);
  // Right length: the scale is reported before the global and the codes.
  EXPECT_ERROR(parse(s, Shape{8}, all_bad), invalid_scale);
  // Scales fixed: the global before the codes.
  Bytes bad_global = all_bad;
  bad_global[8] = 0x30;
  bad_global[9] = 0x20;
  EXPECT_ERROR(parse(s, Shape{8}, bad_global), invalid_global_scale);
  // Global fixed: the code.
  Bytes bad_code = qct::cat({{0x80, 1, 2, 3, 4, 5, 6, 7}, {0x30, 0x20}, qct::le_f32(3.0f)});
  EXPECT_ERROR(parse(s, Shape{8}, bad_code), invalid_code);
}

TEST(ParsePrecedence, SchemeAndShapeBeforeLength) {
  EXPECT_ERROR(parse(scheme("value=q8s,store=native,block=4:ue4m3,tensor=f16"), Shape{8}, Bytes(3, 0)),
               narrow_global_scale);
  EXPECT_ERROR(parse(scheme("value=q8s,block=2x4:f32"), Shape{8}, Bytes(3, 0)), block_rank_exceeds_tensor);
  EXPECT_ERROR(parse(Scheme{}, Shape{kSizeMax, 3}, Bytes(3, 0)), shape_overflow);
  EXPECT_ERROR(parse(scheme("store=packed_u32:2"), Shape{2, 2}, Bytes(3, 0)), packing_dim_out_of_range);
}

TEST(ParsePrecedence, LookupTableBeforeCodes) {
  // q2s lookup packed_u32:0, shape [4]: one word, then one f32 scale.
  const Scheme s = scheme("value=q2s,mode=lookup");
  const Bytes b = qct::cat({qct::le_words({0xE4}), qct::le_f32(1.0f)});
  EXPECT_ERROR(parse(s, Shape{4}, b), missing_lookup_table);
  const Floats t3 = {0, 1, 2};
  EXPECT_ERROR(parse(s, Shape{4}, b, table(t3)), lookup_table_size);
  // A nonzero padding bit (bit 8) is still invalid-code once the table is right.
  const Bytes pad = qct::cat({qct::le_words({0x1E4}), qct::le_f32(1.0f)});
  const Floats t4 = {0, 1, 2, 3};
  EXPECT_ERROR(parse(s, Shape{4}, pad, table(t4)), invalid_code);
  EXPECT_OK(parse(s, Shape{4}, b, table(t4)));
}

// ---------------------------------------------------------------------------------------------
// calibrate.

TEST(CalibratePrecedence, Order) {
  // Scheme checks first, even before absmean-two-level.
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=4:ue4m3,tensor=f16"), Shape{8}, kEight,
                         Calibration::absmean),
               narrow_global_scale);
  EXPECT_ERROR(calibrate(scheme(kSeedScheme), Shape{8}, kEight, Calibration::absmean), absmean_two_level);
  // absmean-two-level is a property of the scheme: it beats the shape and the data.
  EXPECT_ERROR(calibrate(scheme(kSeedScheme), Shape{7}, Floats{kNaN}, Calibration::absmean),
               absmean_two_level);
  // Shape before values.
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{4}, Floats{1, 2, 3}, Calibration::minmax), shape_mismatch);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{kSizeMax, 2}, Floats{}, Calibration::minmax),
               shape_overflow);
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=2x4:f32"), Shape{8}, kEight, Calibration::minmax),
               block_rank_exceeds_tensor);
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=32:f32"), Shape{70}, Floats(70, kNaN), Calibration::minmax),
               block_not_divisible);
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=32:f32"), Shape{70}, Floats(70, kInf), Calibration::absmean),
               block_not_divisible);
  // Values.
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{3}, Floats{1, kNaN, 2}, Calibration::minmax), nan_input);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{3}, Floats{1, kNaN, 2}, Calibration::absmean), nan_input);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{2}, Floats{kInf, 1}, Calibration::minmax),
               calibration_overflow);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{2}, Floats{1, -kInf}, Calibration::minmax),
               calibration_overflow);
  EXPECT_ERROR(calibrate(scheme("value=q8s"), Shape{2}, Floats{1, -kInf}, Calibration::absmean),
               calibration_overflow);
  EXPECT_ERROR(calibrate(scheme("value=q8s,block=2:f32"), Shape{4}, Floats{1, 2, 0x1p127f, 3},
                         Calibration::minmax),
               calibration_overflow);
}

}  // namespace
}  // namespace qconform
