// No crash on hostile inputs (SPEC §3, §10): huge and overflowing shapes, rank 9, empty tensors,
// mismatched lengths, random scheme text and random calls. Run under the asan preset, any out-of-
// bounds access or oversized allocation fails here.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::Bytes;
using qct::Codes;
using qct::Floats;
using qct::scheme;
using qct::table;

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
constexpr std::size_t k2p40 = std::size_t{1} << 40;

TEST(Hostile, OverflowingShapesEverywhere) {
  const std::vector<Shape> shapes = {
      {kSizeMax, 2}, {std::size_t{1} << 32, std::size_t{1} << 32}, {3, kSizeMax / 2}, {kSizeMax, kSizeMax, kSizeMax}};
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape.size());
    const Scheme s = scheme("value=q8s,store=native");
    EXPECT_ERROR(make_layout(s, shape), shape_overflow);
    EXPECT_ERROR(quantize(s, shape, Floats{1}, Floats{1}, std::nullopt), shape_overflow);
    EXPECT_ERROR(validate_quantize(s, shape, Floats{1}, Floats{1}, std::nullopt, std::nullopt), shape_overflow);
    EXPECT_ERROR(calibrate(s, shape, Floats{1}, Calibration::minmax), shape_overflow);
    EXPECT_ERROR(pack(s, shape, Codes{1}), shape_overflow);
    EXPECT_ERROR(unpack(s, shape, Bytes{1}), shape_overflow);
    EXPECT_ERROR(parse(s, shape, Bytes{1, 2, 3, 4, 5}), shape_overflow);
    QTensor t;
    t.scheme = s;
    t.shape = shape;
    t.codes = {1};
    t.scales = {1.0f};
    EXPECT_ERROR(dequantize(t), shape_overflow);
    EXPECT_ERROR(serialize(t), shape_overflow);
  }
}

TEST(Hostile, ByteSizeOverflowWithoutElementOverflow) {
  // SIZE_MAX q8 elements fit the count, but packed_u32 needs 2^62 words = 2^64 bytes.
  EXPECT_ERROR(make_layout(scheme("value=q8f,store=packed_u32:0"), Shape{kSizeMax}), shape_overflow);
  // 2^63 one-element blocks: 2^63 f32 scales = 2^65 bytes.
  EXPECT_ERROR(make_layout(scheme("value=q8f,store=native,block=1:f32"), Shape{std::size_t{1} << 63}),
               shape_overflow);
  // SIZE_MAX native bytes plus one f32 scale overflows the total.
  EXPECT_ERROR(make_layout(scheme("value=q8f,store=native"), Shape{kSizeMax}), shape_overflow);
  // 2^61 native elements with one-element f32 blocks: 2^61 + 2^63 bytes, which fits.
  auto l = make_layout(scheme("value=q8f,store=native,block=1:f32"), Shape{std::size_t{1} << 61});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().elements, std::size_t{1} << 61);
  EXPECT_EQ(l.value().scale_count, std::size_t{1} << 61);
  EXPECT_EQ(l.value().total_bytes, (std::size_t{1} << 61) + (std::size_t{1} << 63));
}

TEST(Hostile, RankAboveEight) {
  for (std::size_t rank : {9u, 10u, 64u, 1000u}) {
    const Shape shape(rank, 1);
    EXPECT_ERROR(make_layout(Scheme{}, shape), shape_overflow) << rank;
    EXPECT_ERROR(quantize(Scheme{}, shape, Floats{1}, Floats{1}, std::nullopt), shape_overflow) << rank;
    EXPECT_ERROR(calibrate(Scheme{}, shape, Floats{1}, Calibration::absmean), shape_overflow) << rank;
    EXPECT_ERROR(parse(Scheme{}, shape, Bytes(8, 0)), shape_overflow) << rank;
  }
  // Rank 9 with a zero dim is still too many dims.
  Shape z(9, 2);
  z[4] = 0;
  EXPECT_ERROR(quantize(Scheme{}, z, Floats{}, Floats{1}, std::nullopt), shape_overflow);
  EXPECT_OK(make_layout(Scheme{}, Shape(8, 2)));
}

TEST(Hostile, HugeShapeSmallBuffersAllocateNothingBig) {
  // 2^40 elements fit every count but not the buffers handed in: each entry point must say so
  // without allocating for the shape (ASan fails an allocation of that size).
  const Scheme s = scheme("value=q8s,store=native,block=1:f32");
  EXPECT_ERROR(quantize(s, Shape{k2p40}, Floats{1}, Floats{1}, std::nullopt), shape_mismatch);
  EXPECT_ERROR(calibrate(s, Shape{k2p40}, Floats{1}, Calibration::minmax), shape_mismatch);
  EXPECT_ERROR(pack(s, Shape{k2p40}, Codes{1}), shape_mismatch);
  EXPECT_ERROR(unpack(s, Shape{k2p40}, Bytes{1}), truncated_buffer);
  EXPECT_ERROR(parse(s, Shape{k2p40}, Bytes{1, 2, 3}), truncated_buffer);
  QTensor t;
  t.scheme = s;
  t.shape = {k2p40};
  t.codes = {1};
  t.scales = {1.0f};
  EXPECT_ERROR(dequantize(t), shape_mismatch);
  EXPECT_ERROR(serialize(t), shape_mismatch);
}

// Reports a failed check from inside a FinishesWithin child.
bool check(bool ok, const char* what) {
  if (!ok) std::fprintf(stderr, "check failed: %s\n", what);
  return ok;
}

TEST(Hostile, ZeroSizedDimsNextToHugeOnes) {
  // SIZE_MAX x 0 has zero elements: no count and no buffer overflows (SPEC §3.3), so it is an
  // empty tensor, and handling it must not walk SIZE_MAX empty lines.
  EXPECT_TRUE(qct::FinishesWithin(5, [] {
    auto r = quantize(Scheme{}, Shape{kSizeMax, 0}, Floats{}, Floats{1.0f}, std::nullopt);
    if (!check(r.ok(), "quantize [SIZE_MAX, 0] succeeds")) return false;
    if (!check(r.value().codes.empty(), "no codes")) return false;
    auto b = serialize(r.value());
    if (!check(b.ok() && b.value().size() == 4u, "serialized to just the f32 scale")) return false;
    auto p = parse(Scheme{}, Shape{kSizeMax, 0}, b.value());
    return check(p.ok() && p.value() == r.value(), "parses back");
  }));
  // packed_u32:1 on [0, SIZE_MAX]: the lines run along axis 0 and there are SIZE_MAX of them.
  EXPECT_TRUE(qct::FinishesWithin(5, [] {
    const Scheme s = scheme("value=q4s,store=packed_u32:1");
    auto p = pack(s, Shape{0, kSizeMax}, Codes{});
    if (!check(p.ok() && p.value().empty(), "pack [0, SIZE_MAX] gives no bytes")) return false;
    auto u = unpack(s, Shape{0, kSizeMax}, Bytes{});
    return check(u.ok() && u.value().empty(), "unpack [0, SIZE_MAX] gives no codes");
  }));
  EXPECT_TRUE(qct::FinishesWithin(5, [] {
    auto d = dequantize(QTensor{scheme("value=e2m1,store=packed_native:0"), Shape{kSizeMax, 0}, {}, {1.0f}, {}});
    return check(d.ok() && d.value().empty(), "dequantize [SIZE_MAX, 0]");
  }));
}

TEST(Hostile, EmptyTensors) {
  for (const char* text : {"value=q8s", "value=q4s,store=native", "value=e2m1,store=packed_native:0",
                           "value=q2s,store=packed_u32:1"}) {
    for (const Shape& shape : {Shape{0}, Shape{0, 3}, Shape{3, 0}, Shape{2, 0, 5}}) {
      const Scheme s = scheme(text);
      if (s.store.kind != StoreKind::native && s.store.dim >= shape.size()) continue;
      SCOPED_TRACE(std::string(text) + " rank " + std::to_string(shape.size()));
      auto q = quantize(s, shape, Floats{}, Floats{1.0f}, std::nullopt);
      ASSERT_OK(q);
      EXPECT_TRUE(q.value().codes.empty());
      auto d = dequantize(q.value());
      ASSERT_OK(d);
      EXPECT_TRUE(d.value().empty());
      auto p = pack(s, shape, Codes{});
      ASSERT_OK(p);
      EXPECT_TRUE(p.value().empty());
      auto u = unpack(s, shape, Bytes{});
      ASSERT_OK(u);
      EXPECT_TRUE(u.value().empty());
      // Calibrating an empty tensor may succeed or fail, but must not crash.
      (void)calibrate(s, shape, Floats{}, Calibration::minmax).ok();
      (void)calibrate(s, shape, Floats{}, Calibration::absmean).ok();
    }
  }
  // Per-block on an empty tensor: zero blocks, zero scales.
  auto q = quantize(scheme("value=q8s,block=4:f16"), Shape{0}, Floats{}, Floats{}, std::nullopt);
  ASSERT_OK(q);
  EXPECT_TRUE(q.value().scales.empty());
  EXPECT_ERROR(quantize(scheme("value=q8s,block=4:f16"), Shape{0}, Floats{}, Floats{1.0f}, std::nullopt),
               scale_count_mismatch);
}

TEST(Hostile, LengthMismatches) {
  const Scheme s = scheme("value=q4s,store=packed_u32:0,block=2:f16");
  EXPECT_ERROR(quantize(s, Shape{4}, Floats{1, 2, 3, 4, 5}, Floats{1, 1}, std::nullopt), shape_mismatch);
  EXPECT_ERROR(quantize(s, Shape{4}, Floats{}, Floats{1, 1}, std::nullopt), shape_mismatch);
  EXPECT_ERROR(calibrate(s, Shape{4}, Floats{1, 2, 3}, Calibration::minmax), shape_mismatch);
  EXPECT_ERROR(pack(s, Shape{4}, Codes{1, 2, 3, 4, 5}), shape_mismatch);
  QTensor t;
  t.scheme = s;
  t.shape = {4};
  t.codes = {1, 2, 3};
  t.scales = {1, 1};
  EXPECT_ERROR(dequantize(t), shape_mismatch);
  EXPECT_ERROR(serialize(t), shape_mismatch);
  t.codes = {1, 2, 3, 4};
  t.scales = {1};
  EXPECT_ERROR(dequantize(t), scale_count_mismatch);
  EXPECT_ERROR(serialize(t), scale_count_mismatch);
}

TEST(Hostile, RandomSchemeTextNeverCrashesAndRoundTrips) {
  const unsigned seed = 4242u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::string alphabet = "value=store=mode=block=tensor=q8fsq4q2e4m3e5m2e2m1nativepacked_u32:native0123456789x,:"
                               "f32f16bf16ue8m0ue4m3symmetriclookupnvfp4 \t-+";
  const std::vector<std::string> seeds = {
      "value=q4s,store=packed_u32:0,mode=symmetric,block=4x32:f16,tensor=f32", "nvfp4",
      "value=e5m2,store=native,mode=lookup,block=1x1x255:ue4m3", "store=packed_native:3,tensor=bf16"};
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text = seeds[static_cast<std::size_t>(iter) % seeds.size()];
    const int edits = 1 + iter % 4;
    for (int e = 0; e < edits; ++e) {
      std::uniform_int_distribution<std::size_t> pos(0, text.size());
      const std::size_t p = pos(rng);
      switch (rng() % 3) {
        case 0:
          text.insert(p, 1, alphabet[pick(rng)]);
          break;
        case 1:
          if (p < text.size()) text.erase(p, 1);
          break;
        default:
          if (p < text.size()) text[p] = alphabet[pick(rng)];
          break;
      }
    }
    auto r = parse_scheme(text);
    if (!r.ok()) {
      ASSERT_EQ(r.kind(), ErrorKind::invalid_scheme) << text;
      continue;
    }
    ++parsed;
    const std::string printed = print_scheme(r.value());
    auto again = parse_scheme(printed);
    ASSERT_OK(again) << text << " printed as " << printed;
    ASSERT_EQ(again.value(), r.value()) << text << " printed as " << printed;
    (void)validate_scheme(r.value()).ok();
  }
  EXPECT_GT(parsed, 100);
}

// Random calls: whatever comes back, quantize and validate_quantize agree, and a successful result
// is self-consistent (code count, serialize/parse round trip, dequantize).
TEST(Hostile, RandomCallsAreConsistent) {
  const unsigned seed = 777u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<std::string> schemes = {
      "value=q8f",
      "value=q8s,store=native,block=2:f16",
      "value=q4s,store=packed_u32:1,block=2x3:ue4m3",
      "value=q2f,store=packed_u32:0,block=1x2:bf16,tensor=f32",
      "nvfp4",
      "value=e4m3,store=native,tensor=ue4m3",
      "value=e5m2,store=packed_native:0,block=3:f16,tensor=f32",
      "value=q2s,mode=lookup,block=2:f32",
      "value=q4f,mode=lookup,store=packed_u32:1",
      "value=q8s,block=0:f32",
      "value=q8s,tensor=ue8m0",
  };
  const Floats specials = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, qct::kInf, -qct::kInf,
                           0x1p-149f, qct::kMax, 1e-30f, 448.0f, 6.0f, 0x1.fffffep-2f};
  const Floats scale_specials = {0.0f, -0.0f, 1.0f, 0.5f, 0x1p-149f, 1e-30f, 448.0f, 6.0f, 0x1.fffffep-2f};
  const Floats bad = {qct::kNaN, -1.0f, qct::kInf, -0x1p-149f};
  auto any_float = [&]() -> float {
    if (rng() % 3 == 0) return specials[rng() % specials.size()];
    return std::uniform_real_distribution<float>(-8.0f, 8.0f)(rng);
  };
  auto any_scale = [&]() -> float {
    if (rng() % 3 == 0) return scale_specials[rng() % scale_specials.size()];
    return std::uniform_real_distribution<float>(0.0f, 4.0f)(rng);
  };
  int ok_count = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const Scheme s = scheme(schemes[rng() % schemes.size()]);
    const std::size_t rank = rng() % 4;
    Shape shape(rank);
    for (auto& d : shape) d = rng() % 6;
    // make_layout requires a valid scheme.
    std::optional<Layout> layout;
    if (validate_scheme(s).ok()) {
      auto l = make_layout(s, shape);
      if (l.ok()) layout = l.value();
    }
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    if (rng() % 10 == 0) n += 1;  // a length mismatch now and then
    Floats data(n);
    for (auto& v : data) v = any_float();
    if (n > 0 && rng() % 10 == 0) data[rng() % n] = qct::kNaN;
    std::size_t scale_count = layout ? layout->scale_count : 1 + rng() % 3;
    if (rng() % 10 == 0) scale_count += 1;
    Floats scales(scale_count);
    for (auto& v : scales) v = any_scale();
    if (scale_count > 0 && rng() % 10 == 0) scales[rng() % scale_count] = bad[rng() % bad.size()];
    std::optional<float> global;
    if (s.two_level() ? rng() % 10 != 0 : rng() % 10 == 0) {
      global = rng() % 10 == 0 ? bad[rng() % bad.size()] : any_scale();
    }
    Floats tbl_data;
    Table tbl;
    if (s.mode == Mode::lookup ? rng() % 10 != 0 : rng() % 10 == 0) {
      tbl_data.resize(std::size_t{1} << info(s.value).bits);
      if (rng() % 10 == 0) tbl_data.pop_back();
      for (auto& v : tbl_data) v = any_float();
      if (rng() % 10 == 0) tbl_data[0] = qct::kNaN;
      tbl = table(tbl_data);
    }
    auto q = quantize(s, shape, data, scales, global, tbl);
    auto v = validate_quantize(s, shape, data, scales, global, tbl);
    ASSERT_EQ(q.ok(), v.ok()) << print_scheme(s);
    if (!q.ok()) {
      ASSERT_EQ(q.kind(), v.kind()) << print_scheme(s) << ": " << q.error().message;
      continue;
    }
    ++ok_count;
    const QTensor& t = q.value();
    ASSERT_TRUE(layout.has_value());
    ASSERT_EQ(t.codes.size(), layout->elements);
    ASSERT_EQ(t.scales.size(), layout->scale_count);
    for (float sc : t.scales) ASSERT_FALSE(std::signbit(sc)) << qct::hex(sc);
    auto b = serialize(t);
    ASSERT_OK(b);
    ASSERT_EQ(b.value().size(), layout->total_bytes);
    auto p = parse(s, shape, b.value(), tbl);
    ASSERT_OK(p);
    ASSERT_EQ(p.value(), t);
    ASSERT_OK(dequantize(t, tbl));
  }
  EXPECT_GT(ok_count, 300);
}

}  // namespace
}  // namespace qconform
