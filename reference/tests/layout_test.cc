// Storage layouts and the serialized form (SPEC §6, §7): hand-derived bytes for every store, an
// independent packer for round trips, serialize/parse both ways and the canonical-bytes rules.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::Bytes;
using qct::cat;
using qct::Codes;
using qct::Floats;
using qct::le_f32;
using qct::le_words;
using qct::scheme;
using qct::table;

Bytes packed(const std::string& text, const Shape& shape, const Codes& codes) {
  auto r = pack(scheme(text), shape, codes);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : Bytes{};
}

// ---------------------------------------------------------------------------------------------
// Independent packer written from SPEC §6.

struct Geometry {
  unsigned bits;
  std::size_t per_unit, unit_bytes;
};

Geometry geometry(const Scheme& s) {
  const unsigned b = info(s.value).bits;
  switch (s.store.kind) {
    case StoreKind::native:
      return {b, 1, 1};
    case StoreKind::packed_u32:
      return {b, 32 / b, 4};
    case StoreKind::packed_native:
      return {b, 8 / b, 1};  // e2m1: two per byte; 8-bit values: one per byte
  }
  return {b, 1, 1};
}

Bytes oracle_pack(const Scheme& s, const Shape& shape, const Codes& codes) {
  const Geometry g = geometry(s);
  const std::size_t rank = shape.size();
  Shape st = shape;
  std::size_t axis = 0;
  if (rank > 0) {
    axis = rank - 1 - static_cast<std::size_t>(s.store.dim);
    if (s.store.kind == StoreKind::native) axis = rank - 1;
    st[axis] = (shape[axis] + g.per_unit - 1) / g.per_unit;
  }
  std::size_t units = 1;
  for (std::size_t d : st) units *= d;
  std::vector<std::uint64_t> acc(units, 0);
  const std::uint64_t mask = (std::uint64_t{1} << g.bits) - 1;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    std::size_t unit = 0, slot = 0;
    if (rank > 0) {
      std::vector<std::size_t> c(rank);
      std::size_t rest = i;
      for (std::size_t d = rank; d-- > 0;) {
        c[d] = rest % shape[d];
        rest /= shape[d];
      }
      slot = c[axis] % g.per_unit;
      c[axis] /= g.per_unit;
      for (std::size_t d = 0; d < rank; ++d) unit = unit * st[d] + c[d];
    }
    acc[unit] |= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(codes[i])) & mask) << (slot * g.bits);
  }
  Bytes out;
  for (std::uint64_t a : acc) {
    for (std::size_t k = 0; k < g.unit_bytes; ++k) out.push_back(static_cast<std::uint8_t>(a >> (8 * k)));
  }
  return out;
}

// The codes quantize can write for a value in symmetric mode (SPEC §6, §7).
Codes canonical_codes(Value v) {
  Codes out;
  const ValueInfo& vi = info(v);
  if (!vi.minifloat) {
    for (int c = static_cast<int>(vi.lo); c <= static_cast<int>(vi.hi); ++c) out.push_back(c);
    return out;
  }
  for (unsigned c = 0; c < (1u << vi.bits); ++c) {
    if (v == Value::e4m3 && (c & 0x7F) == 0x7F) continue;
    if (v == Value::e5m2 && (c & 0x7C) == 0x7C) continue;
    out.push_back(static_cast<std::int32_t>(c));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Hand-derived storage bytes.

TEST(Pack, NativeTruncatedTwosComplement) {
  // SPEC §6: integers truncated to their width: q4s -3 = 0b1101 = 0x0D; q8s -1 = 0xFF;
  // q2s -1 = 0b11; q2f -2 = 0b10; q4f -8 = 0x08.
  EXPECT_BYTES_EQ((Bytes{0x0D, 0x03, 0x07, 0x09}), packed("value=q4s,store=native", Shape{4}, Codes{-3, 3, 7, -7}));
  EXPECT_BYTES_EQ((Bytes{0xFF, 0x81, 0x7F, 0x00}), packed("value=q8s,store=native", Shape{4}, Codes{-1, -127, 127, 0}));
  EXPECT_BYTES_EQ((Bytes{0x03, 0x01, 0x00}), packed("value=q2s,store=native", Shape{3}, Codes{-1, 1, 0}));
  EXPECT_BYTES_EQ((Bytes{0x02, 0x03, 0x01}), packed("value=q2f,store=native", Shape{3}, Codes{-2, -1, 1}));
  EXPECT_BYTES_EQ((Bytes{0x08, 0x07}), packed("value=q4f,store=native", Shape{2}, Codes{-8, 7}));
  EXPECT_BYTES_EQ((Bytes{0x80, 0x7F}), packed("value=q8f,store=native", Shape{2}, Codes{-128, 127}));
  // Minifloats: the bit pattern, one per byte.
  EXPECT_BYTES_EQ((Bytes{0x0F, 0x08, 0x01}), packed("value=e2m1,store=native", Shape{3}, Codes{0xF, 0x8, 0x1}));
  EXPECT_BYTES_EQ((Bytes{0xFE, 0x80}), packed("value=e4m3,store=native", Shape{2}, Codes{0xFE, 0x80}));
}

TEST(Pack, BurnI8sToU32) {
  // burn-std should_pack_i8s_to_u32: [-128, 2, -3, 127] -> 2147287680 = 0x7FFD0280.
  // q8f (q8s never stores -128).
  EXPECT_BYTES_EQ(le_words({2147287680u}), packed("value=q8f,store=packed_u32:0", Shape{4}, Codes{-128, 2, -3, 127}));
  // should_pack_i8s_to_u32_padded: 5 values -> [2147287680, 55].
  EXPECT_BYTES_EQ(le_words({2147287680u, 55u}),
                  packed("value=q8f,store=packed_u32:0", Shape{5}, Codes{-128, 2, -3, 127, 55}));
  // should_unpack_u32s_to_i8s(_padded).
  auto u = unpack(scheme("value=q8f,store=packed_u32:0"), Shape{4}, le_words({2147287680u}));
  ASSERT_OK(u);
  EXPECT_CODES_EQ((Codes{-128, 2, -3, 127}), u.value());
  auto p = unpack(scheme("value=q8s,store=packed_u32:0"), Shape{1}, le_words({55u}));
  ASSERT_OK(p);
  EXPECT_CODES_EQ((Codes{55}), p.value());
}

TEST(Pack, BurnQ4sArangeUnpack) {
  // burn-std should_unpack_u32s_to_i8s_arange: 16 words, 128 q4s values.
  const Bytes words = le_words({0u, 286331136u, 286331153u, 572657937u, 572662306u, 857874978u, 858993459u,
                                858993459u, 1145324612u, 1145324612u, 1431655748u, 1431655765u, 1717982549u,
                                1717986918u, 2003199590u, 2004318071u});
  const Codes expected = {
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
      3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5,
      5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
      6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  ASSERT_EQ(expected.size(), 128u);
  auto u = unpack(scheme("value=q4s,store=packed_u32:0"), Shape{128}, words);
  ASSERT_OK(u);
  EXPECT_CODES_EQ(expected, u.value());
  EXPECT_BYTES_EQ(words, packed("value=q4s,store=packed_u32:0", Shape{128}, expected));
}

TEST(Pack, PackedU32PadsEachLine) {
  // SPEC §6 / burn storage_elements: [3, 3] q4s occupies 3 words, not 2. Codes row by row:
  // row 0 [1, 2, 3] -> 0x321; row 1 [4, 5, 6] -> 0x654; row 2 [-1, -2, -3] -> nibbles F, E, D -> 0xDEF.
  const Codes c = {1, 2, 3, 4, 5, 6, -1, -2, -3};
  EXPECT_BYTES_EQ(le_words({0x321u, 0x654u, 0xDEFu}), packed("value=q4s,store=packed_u32:0", Shape{3, 3}, c));
  auto l = make_layout(scheme("value=q4s,store=packed_u32:0"), Shape{3, 3});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().bits, 4u);
  EXPECT_EQ(l.value().per_unit, 8u);
  EXPECT_EQ(l.value().unit_bytes, 4u);
  EXPECT_EQ(l.value().packed_axis, 1u);
  EXPECT_EQ(l.value().storage_shape, (std::vector<std::size_t>{3, 1}));
  EXPECT_EQ(l.value().storage_units, 3u);
  EXPECT_EQ(l.value().storage_bytes, 12u);
  EXPECT_EQ(l.value().scale_bytes, 4u);
  EXPECT_EQ(l.value().global_bytes, 0u);
  EXPECT_EQ(l.value().total_bytes, 16u);
  auto u = unpack(scheme("value=q4s,store=packed_u32:0"), Shape{3, 3}, le_words({0x321u, 0x654u, 0xDEFu}));
  ASSERT_OK(u);
  EXPECT_CODES_EQ(c, u.value());
}

TEST(Pack, PackedU32AlongAnOuterAxis) {
  // packed_u32:1 on [3, 3]: words run along axis r-1-1 = 0; storage shape [1, 3]; word j holds
  // column j: col 0 [1, 4, -1] -> 0xF41, col 1 [2, 5, -2] -> 0xE52, col 2 [3, 6, -3] -> 0xD63.
  const Codes c = {1, 2, 3, 4, 5, 6, -1, -2, -3};
  EXPECT_BYTES_EQ(le_words({0xF41u, 0xE52u, 0xD63u}), packed("value=q4s,store=packed_u32:1", Shape{3, 3}, c));
  auto l = make_layout(scheme("value=q4s,store=packed_u32:1"), Shape{3, 3});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().packed_axis, 0u);
  EXPECT_EQ(l.value().storage_shape, (std::vector<std::size_t>{1, 3}));
  // q8f packed_u32:1 on [5, 2]: axis 0 extent 5 -> 2 words per column; storage [2, 2].
  // word (0, 0) = rows 0..3 of column 0, word (1, 0) = row 4 of column 0.
  const Codes d = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // [[1,2],[3,4],[5,6],[7,8],[9,10]]
  EXPECT_BYTES_EQ(le_words({0x07050301u, 0x08060402u, 0x09u, 0x0Au}),
                  packed("value=q8f,store=packed_u32:1", Shape{5, 2}, d));
}

TEST(Pack, RankZeroIsOneLineOfOneElement) {
  EXPECT_BYTES_EQ(le_words({0x0Du}), packed("value=q4s,store=packed_u32:0", Shape{}, Codes{-3}));
  EXPECT_BYTES_EQ((Bytes{0x0D}), packed("value=q4s,store=native", Shape{}, Codes{-3}));
  EXPECT_BYTES_EQ((Bytes{0x05}), packed("value=e2m1,store=packed_native:0", Shape{}, Codes{0x5}));
  EXPECT_BYTES_EQ(le_words({0x81u}), packed("value=q8s,store=packed_u32:0", Shape{}, Codes{-127}));
  auto l = make_layout(scheme("value=q4s,store=packed_u32:0"), Shape{});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().rank, 0u);
  EXPECT_EQ(l.value().elements, 1u);
  EXPECT_EQ(l.value().storage_bytes, 4u);
}

TEST(Pack, PackedNativeE2m1) {
  // Two codes per byte, first in the low nibble, each line padded: [2, 3] -> 2 bytes per row.
  EXPECT_BYTES_EQ((Bytes{0x21, 0x03, 0x54, 0x06}),
                  packed("value=e2m1,store=packed_native:0", Shape{2, 3}, Codes{1, 2, 3, 4, 5, 6}));
  // packed_native:1 on [3, 2]: units along axis 0; storage [2, 2]: (0, j) holds rows 0 and 1,
  // (1, j) holds row 2. [[1,2],[3,4],[5,6]] -> 0x31, 0x42, 0x05, 0x06.
  EXPECT_BYTES_EQ((Bytes{0x31, 0x42, 0x05, 0x06}),
                  packed("value=e2m1,store=packed_native:1", Shape{3, 2}, Codes{1, 2, 3, 4, 5, 6}));
}

TEST(Pack, PackedNativeEightBitIsNative) {
  for (const char* v : {"q8f", "q8s", "e4m3", "e5m2"}) {
    SCOPED_TRACE(v);
    const Value value = scheme(std::string("value=") + v).value;
    const Codes all = canonical_codes(value);
    const Codes c(all.begin(), all.begin() + 6);
    EXPECT_BYTES_EQ(packed(std::string("store=native,value=") + v, Shape{2, 3}, c),
                    packed(std::string("store=packed_native:0,value=") + v, Shape{2, 3}, c));
  }
}

TEST(Pack, Q2sWord) {
  // [-1, 0, 1, -1, 1]: fields 3, 0, 1, 3, 1 at bits 0, 2, 4, 6, 8 -> 3 + 16 + 192 + 256 = 0x1D3.
  EXPECT_BYTES_EQ(le_words({0x1D3u}), packed("value=q2s,store=packed_u32:0", Shape{5}, Codes{-1, 0, 1, -1, 1}));
}

TEST(Pack, PackingDimOutOfRange) {
  // D >= rank for rank >= 1 (SPEC §3.3).
  EXPECT_ERROR(make_layout(scheme("store=packed_u32:1"), Shape{8}), packing_dim_out_of_range);
  EXPECT_ERROR(make_layout(scheme("value=q4s,store=packed_u32:2"), Shape{2, 8}), packing_dim_out_of_range);
  EXPECT_ERROR(make_layout(scheme("value=e2m1,store=packed_native:1"), Shape{8}), packing_dim_out_of_range);
  EXPECT_ERROR(make_layout(scheme("value=e4m3,store=packed_native:3"), Shape{8}), packing_dim_out_of_range);
  EXPECT_ERROR(pack(scheme("store=packed_u32:1"), Shape{4}, Codes{1, 2, 3, 4}), packing_dim_out_of_range);
  EXPECT_ERROR(unpack(scheme("store=packed_u32:1"), Shape{4}, Bytes(4, 0)), packing_dim_out_of_range);
  // Rank 0 takes any D; native has none.
  EXPECT_OK(make_layout(scheme("store=packed_u32:5"), Shape{}));
  EXPECT_OK(make_layout(scheme("store=native"), Shape{8}));
  EXPECT_OK(make_layout(scheme("store=packed_u32:1"), Shape{2, 8}));
}

TEST(Pack, WrongLengths) {
  // pack: codes must match the element count; unpack: storage must be exact.
  EXPECT_ERROR(pack(scheme("value=q8s,store=native"), Shape{4}, Codes{1, 2, 3}), shape_mismatch);
  EXPECT_ERROR(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{9}, Bytes(7, 0)), truncated_buffer);
  EXPECT_ERROR(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{9}, Bytes(9, 0)), trailing_bytes);
  EXPECT_OK(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{9}, Bytes(8, 0)));
}

// Every value type x every store it admits, several shapes: pack equals the independent packer
// and unpack inverts it.
TEST(Pack, RoundTripEveryValueAndStore) {
  const std::vector<Shape> shapes = {{}, {1}, {7}, {9}, {3, 5}, {2, 3, 9}, {0}, {4, 0}, {0, 4}, {2, 1, 17}};
  int checked = 0;
  for (const ValueInfo& vi : kValues) {
    const Codes all = canonical_codes(vi.value);
    for (const char* store : {"native", "packed_u32:0", "packed_u32:1", "packed_u32:2", "packed_native:0",
                              "packed_native:1"}) {
      const std::string text = std::string("value=") + std::string(vi.name) + ",store=" + store;
      const Scheme s = scheme(text);
      if (!validate_scheme(s).ok()) continue;  // packed_native with q4/q2
      for (const Shape& shape : shapes) {
        if (!shape.empty() && s.store.kind != StoreKind::native && s.store.dim >= shape.size()) continue;
        SCOPED_TRACE(text + " rank " + std::to_string(shape.size()));
        std::size_t n = 1;
        for (std::size_t d : shape) n *= d;
        Codes codes(n);
        for (std::size_t i = 0; i < n; ++i) codes[i] = all[(i * 7 + 3) % all.size()];
        auto p = pack(s, shape, codes);
        ASSERT_OK(p);
        EXPECT_BYTES_EQ(oracle_pack(s, shape, codes), p.value());
        auto l = make_layout(s, shape);
        ASSERT_OK(l);
        EXPECT_EQ(l.value().storage_bytes, p.value().size());
        auto u = unpack(s, shape, p.value());
        ASSERT_OK(u);
        EXPECT_CODES_EQ(codes, u.value());
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 200);
}

// ---------------------------------------------------------------------------------------------
// Canonical storage: codes quantize never writes are invalid-code (SPEC §7).

TEST(Unpack, NonCanonicalCodes) {
  struct Case {
    const char* text;
    std::uint8_t byte;
    bool valid;
  };
  const Case cases[] = {
      {"value=q8s,store=native", 0x80, false},  {"value=q8s,store=native", 0x81, true},
      {"value=q8f,store=native", 0x80, true},   {"value=q4s,store=native", 0x08, false},
      {"value=q4s,store=native", 0x09, true},   {"value=q4s,store=native", 0x18, false},
      {"value=q4s,store=native", 0xF0, false},  {"value=q4f,store=native", 0x08, true},
      {"value=q4f,store=native", 0x10, false},  {"value=q2s,store=native", 0x02, false},
      {"value=q2s,store=native", 0x03, true},   {"value=q2s,store=native", 0x04, false},
      {"value=q2f,store=native", 0x02, true},   {"value=q2f,store=native", 0x04, false},
      {"value=e4m3,store=native", 0x7F, false}, {"value=e4m3,store=native", 0xFF, false},
      {"value=e4m3,store=native", 0x7E, true},  {"value=e4m3,store=native", 0x80, true},
      {"value=e5m2,store=native", 0x7B, true},  {"value=e5m2,store=native", 0x7C, false},
      {"value=e5m2,store=native", 0x7D, false}, {"value=e5m2,store=native", 0x7E, false},
      {"value=e5m2,store=native", 0x7F, false}, {"value=e5m2,store=native", 0xFC, false},
      {"value=e5m2,store=native", 0xFF, false}, {"value=e2m1,store=native", 0x0F, true},
      {"value=e2m1,store=native", 0x10, false}, {"value=e2m1,store=native", 0x80, false},
  };
  for (const Case& c : cases) {
    auto r = unpack(scheme(c.text), Shape{1}, Bytes{c.byte});
    // The same byte through parse, followed by a valid f32 scale 1.0.
    auto p = parse(scheme(c.text), Shape{1}, cat({{c.byte}, le_f32(1.0f)}));
    if (c.valid) {
      EXPECT_OK(r) << c.text << " byte " << unsigned{c.byte};
      EXPECT_OK(p) << c.text << " byte " << unsigned{c.byte};
    } else {
      EXPECT_ERROR(r, invalid_code) << c.text << " byte " << unsigned{c.byte};
      EXPECT_ERROR(p, invalid_code) << c.text << " byte " << unsigned{c.byte};
    }
  }
  // q8f native: every byte is a code.
  for (unsigned b = 0; b < 256; ++b) {
    EXPECT_OK(unpack(scheme("value=q8f,store=native"), Shape{1}, Bytes{static_cast<std::uint8_t>(b)}));
  }
}

TEST(Unpack, NonzeroPaddingBits) {
  // q4s [3] in one word: nibbles 3..7 are padding.
  EXPECT_OK(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{3}, le_words({0x321u})));
  EXPECT_ERROR(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{3}, le_words({0x1321u})), invalid_code);
  EXPECT_ERROR(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{3}, le_words({0x80000321u})), invalid_code);
  EXPECT_ERROR(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{3}, le_words({0x328u})), invalid_code);  // -8
  // Per-line padding: [3, 3] q4s, padding of row 1 set.
  EXPECT_ERROR(unpack(scheme("value=q4s,store=packed_u32:0"), Shape{3, 3}, le_words({0x321u, 0x10654u, 0xDEFu})),
               invalid_code);
  // q8f [5]: the second word holds one code; its byte 1 is padding.
  EXPECT_ERROR(unpack(scheme("value=q8f,store=packed_u32:0"), Shape{5}, le_words({2147287680u, 0x0137u})),
               invalid_code);
  // e2m1 packed_native [3]: the high nibble of the second byte is padding.
  EXPECT_OK(unpack(scheme("value=e2m1,store=packed_native:0"), Shape{3}, Bytes{0x21, 0x03}));
  EXPECT_ERROR(unpack(scheme("value=e2m1,store=packed_native:0"), Shape{3}, Bytes{0x21, 0x13}), invalid_code);
  // e4m3 packed_u32 with a NaN pattern inside a word.
  EXPECT_ERROR(unpack(scheme("value=e4m3,store=packed_u32:0"), Shape{4}, le_words({0x387F3838u})), invalid_code);
  // q2s: field 2 (-2) is never written.
  EXPECT_ERROR(unpack(scheme("value=q2s,store=packed_u32:0"), Shape{2}, le_words({0x9u})), invalid_code);
  EXPECT_OK(unpack(scheme("value=q2s,store=packed_u32:0"), Shape{2}, le_words({0xDu})));
}

// ---------------------------------------------------------------------------------------------
// Serialized layout (SPEC §7).

QTensor make(const std::string& text, Shape shape, Codes codes, Floats scales,
             std::optional<float> global = std::nullopt) {
  QTensor t;
  t.scheme = scheme(text);
  t.shape = std::move(shape);
  t.codes = std::move(codes);
  t.scales = std::move(scales);
  t.global = global;
  return t;
}

Bytes serialized(const QTensor& t) {
  auto r = serialize(t);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : Bytes{};
}

void expect_round_trip(const QTensor& t, const Bytes& expected_bytes, Table tbl = std::nullopt) {
  const Bytes b = serialized(t);
  EXPECT_BYTES_EQ(expected_bytes, b);
  auto p = parse(t.scheme, t.shape, b, tbl);
  ASSERT_OK(p);
  EXPECT_EQ(p.value(), t);
  EXPECT_CODES_EQ(t.codes, p.value().codes);
  EXPECT_FLOATS_EQ(t.scales, p.value().scales);
  EXPECT_BYTES_EQ(b, serialized(p.value()));
}

TEST(Serialize, BurnTwoLevelLayout) {
  // burn-std should_pack_unpack_two_level_scales: 8 values, two ue4m3 block scales
  // (0.5 = 0x30, 0.125 = 0x20), f32 global 3.0 = 0x40400000: 8 + 2 + 4 bytes.
  // burn uses Q8S with a -128 code, which q8s never writes here; q8f carries the same bytes.
  const QTensor t = make("value=q8f,store=native,block=4:ue4m3,tensor=f32", {8}, {0, 25, 51, 76, 102, 127, -128, -1},
                         {0.5f, 0.125f}, 3.0f);
  const Bytes expected = cat({{0x00, 0x19, 0x33, 0x4C, 0x66, 0x7F, 0x80, 0xFF}, {0x30, 0x20}, le_f32(3.0f)});
  ASSERT_EQ(expected.size(), 8u + 2u + 4u);
  expect_round_trip(t, expected);
  // The q8s scheme with -127 in place of -128.
  const QTensor s = make("value=q8s,store=native,block=4:ue4m3,tensor=f32", {8}, {0, 25, 51, 76, 102, 127, -127, -1},
                         {0.5f, 0.125f}, 3.0f);
  expect_round_trip(s, cat({{0x00, 0x19, 0x33, 0x4C, 0x66, 0x7F, 0x81, 0xFF}, {0x30, 0x20}, le_f32(3.0f)}));
  auto l = make_layout(s.scheme, Shape{8});
  ASSERT_OK(l);
  EXPECT_EQ(l.value().storage_bytes, 8u);
  EXPECT_EQ(l.value().scale_bytes, 2u);
  EXPECT_EQ(l.value().global_bytes, 4u);
  EXPECT_EQ(l.value().total_bytes, 14u);
}

TEST(Serialize, BurnPerTensorAndUe4m3Blocks) {
  // should_pack_unpack_quantization_parameters_per_tensor_symmetric: [2, 3] q8s native, scale
  // 0.03937008 (an f32 scale is stored as its own bits).
  const float scale = 0.03937008f;
  const QTensor t = make("value=q8s,store=native", {2, 3}, {0, 25, 51, 76, 102, 127}, {scale});
  expect_round_trip(t, cat({{0, 25, 51, 76, 102, 127}, le_f32(scale)}));
  // should_pack_unpack_ue4m3_block_scales (q8s: -127 in place of -128).
  const QTensor u = make("value=q8s,store=native,block=4:ue4m3", {8}, {0, 25, 51, 76, 102, 127, -127, -1},
                         {0.5f, 0.125f});
  expect_round_trip(u, Bytes{0x00, 0x19, 0x33, 0x4C, 0x66, 0x7F, 0x81, 0xFF, 0x30, 0x20});
}

TEST(Serialize, BurnPerBlockDataVector) {
  // burn data.rs should_support_per_block_symmetric_int8: [16] q8s, block 8 f32, default store
  // packed_u32:0: 4 words then two f32 scales.
  const Codes c = {-127, -71, 0, 35, -127, -71, 0, 35, -32, -63, -95, -127, -32, -63, -95, -127};
  const QTensor t = make("value=q8s,block=8:f32", {16}, c, {0.014173228f, 0.00031496f});
  // Bytes of the codes in order (-127 = 0x81, -71 = 0xB9, 35 = 0x23, -32 = 0xE0, -63 = 0xC1, -95 = 0xA1).
  const Bytes storage = {0x81, 0xB9, 0x00, 0x23, 0x81, 0xB9, 0x00, 0x23,
                         0xE0, 0xC1, 0xA1, 0x81, 0xE0, 0xC1, 0xA1, 0x81};
  expect_round_trip(t, cat({storage, le_f32(0.014173228f), le_f32(0.00031496f)}));
}

TEST(Serialize, Nvfp4) {
  // 16 e2m1 codes in 8 bytes (low nibble first), ue4m3 1.0 = 0x38, global 1.0f.
  const QTensor t = make("nvfp4", {16}, {0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 6, 7, 7}, {1.0f}, 1.0f);
  expect_round_trip(t, cat({{0x00, 0x21, 0x22, 0x43, 0x44, 0x65, 0x66, 0x77}, {0x38}, le_f32(1.0f)}));
}

TEST(Serialize, EveryScaleDtype) {
  // Scale 1.0 at each dtype, little-endian: f32 0x3F800000, f16 0x3C00, bf16 0x3F80, ue4m3 0x38.
  expect_round_trip(make("value=q8s,store=native,block=2:f32", {2}, {1, -1}, {1.0f}),
                    Bytes{0x01, 0xFF, 0x00, 0x00, 0x80, 0x3F});
  expect_round_trip(make("value=q8s,store=native,block=2:f16", {2}, {1, -1}, {1.0f}), Bytes{0x01, 0xFF, 0x00, 0x3C});
  expect_round_trip(make("value=q8s,store=native,block=2:bf16", {2}, {1, -1}, {1.0f}), Bytes{0x01, 0xFF, 0x80, 0x3F});
  expect_round_trip(make("value=q8s,store=native,block=2:ue4m3", {2}, {1, -1}, {1.0f}), Bytes{0x01, 0xFF, 0x38});
  expect_round_trip(make("value=q8s,store=native,tensor=f16", {2}, {1, -1}, {65504.0f}), Bytes{0x01, 0xFF, 0xFF, 0x7B});
  expect_round_trip(make("value=q8s,store=native,tensor=bf16", {1}, {1}, {0x1p-133f}), Bytes{0x01, 0x01, 0x00});
  expect_round_trip(make("value=q8s,store=native,block=1:ue4m3", {2}, {1, 1}, {0x1p-9f, 448.0f}),
                    Bytes{0x01, 0x01, 0x01, 0x7E});
  // A zero scale is stored as +0.
  expect_round_trip(make("value=q8s,store=native", {1}, {0}, {0.0f}), Bytes{0x00, 0x00, 0x00, 0x00, 0x00});
  // Two-level with f16 blocks: 2 bytes per block then the f32 global.
  expect_round_trip(make("value=q4s,store=packed_u32:0,block=2:f16,tensor=f32", {3}, {7, -7, 1}, {2.0f, 0.5f}, 0.25f),
                    cat({le_words({0x197u}), {0x00, 0x40, 0x00, 0x38}, le_f32(0.25f)}));
}

TEST(Serialize, EmptyTensor) {
  // Per-tensor: no value bytes, one scale. Per-block on [0]: no blocks, no scales.
  expect_round_trip(make("value=q8s", {0}, {}, {1.0f}), le_f32(1.0f));
  expect_round_trip(make("value=q8s,block=4:f32", {0}, {}, {}), Bytes{});
  expect_round_trip(make("value=q4s,block=4:f16,tensor=f32", {3, 0}, {}, {}, 2.0f), le_f32(2.0f));
  expect_round_trip(make("value=q4s,store=packed_u32:1", {0, 3}, {}, {1.0f}), le_f32(1.0f));
}

TEST(Serialize, LookupIndices) {
  // q4s lookup: indices 0..15 are all valid codes (8 would be -8 in symmetric mode).
  const Floats t16(16, 0.5f);
  const QTensor t = make("value=q4s,mode=lookup", {3}, {8, 15, 0}, {1.0f});
  expect_round_trip(t, cat({le_words({0x0F8u}), le_f32(1.0f)}), table(t16));
}

// ---------------------------------------------------------------------------------------------
// parse: non-canonical scales and globals (SPEC §7).

TEST(Parse, InvalidStoredScales) {
  struct Case {
    const char* text;
    Bytes scale;
    bool valid;
  };
  const Case cases[] = {
      {"value=q8s,store=native", le_f32(qct::kNaN), false},
      {"value=q8s,store=native", le_f32(qct::kInf), false},
      {"value=q8s,store=native", le_f32(-1.0f), false},
      {"value=q8s,store=native", le_f32(-0.0f), false},
      {"value=q8s,store=native", le_f32(0x1p-149f), true},
      {"value=q8s,store=native", le_f32(qct::kMax), true},
      {"value=q8s,store=native,tensor=f16", {0x00, 0x80}, false},  // -0.0
      {"value=q8s,store=native,tensor=f16", {0x00, 0x7C}, false},  // Inf
      {"value=q8s,store=native,tensor=f16", {0x00, 0x7E}, false},  // NaN
      {"value=q8s,store=native,tensor=f16", {0x00, 0xBC}, false},  // -1
      {"value=q8s,store=native,tensor=f16", {0xFF, 0x7B}, true},   // 65504
      {"value=q8s,store=native,tensor=f16", {0x01, 0x00}, true},   // 2^-24
      {"value=q8s,store=native,tensor=bf16", {0x00, 0x80}, false},
      {"value=q8s,store=native,tensor=bf16", {0x80, 0x7F}, false},  // Inf
      {"value=q8s,store=native,tensor=bf16", {0xC0, 0x7F}, false},  // NaN
      {"value=q8s,store=native,tensor=bf16", {0x80, 0xBF}, false},  // -1
      {"value=q8s,store=native,tensor=bf16", {0x7F, 0x7F}, true},
      {"value=q8s,store=native,block=1:ue4m3", {0x7F}, false},  // NaN pattern
      {"value=q8s,store=native,block=1:ue4m3", {0x80}, false},  // sign bit
      {"value=q8s,store=native,block=1:ue4m3", {0xB8}, false},
      {"value=q8s,store=native,block=1:ue4m3", {0xFF}, false},
      {"value=q8s,store=native,block=1:ue4m3", {0x7E}, true},
      {"value=q8s,store=native,block=1:ue4m3", {0x00}, true},
  };
  for (const Case& c : cases) {
    const Bytes b = cat({{0x05}, c.scale});
    auto r = parse(scheme(c.text), Shape{1}, b);
    if (c.valid) {
      EXPECT_OK(r) << c.text << " " << qct::hex_bytes(c.scale);
    } else {
      EXPECT_ERROR(r, invalid_scale) << c.text << " " << qct::hex_bytes(c.scale);
    }
  }
}

TEST(Parse, InvalidGlobal) {
  const Scheme s = scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32");
  for (float g : {qct::kNaN, qct::kInf, -1.0f, -0.0f, -qct::kInf}) {
    EXPECT_ERROR(parse(s, Shape{1}, cat({{0x05, 0x38}, le_f32(g)})), invalid_global_scale) << qct::hex(g);
  }
  // 2^127 * 4 (ue4m3 0x48 = 4.0) overflows; 2^127 * 1 (0x38) does not.
  EXPECT_ERROR(parse(s, Shape{1}, cat({{0x05, 0x48}, le_f32(0x1p127f)})), invalid_global_scale);
  EXPECT_OK(parse(s, Shape{1}, cat({{0x05, 0x38}, le_f32(0x1p127f)})));
  EXPECT_OK(parse(s, Shape{1}, cat({{0x05, 0x38}, le_f32(0.0f)})));
}

// serialize(parse(b)) == b for every b that parses (SPEC §7), over random bytes.
TEST(Parse, WhateverParsesSerializesBack) {
  const unsigned seed = 1234u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::vector<std::pair<std::string, Shape>> cases = {
      {"value=q8s,store=native", {3}},
      {"value=q4s,store=packed_u32:0", {3}},
      {"value=q2f,store=packed_u32:1,block=2:f16", {3, 2}},
      {"value=e4m3,store=native,block=2:ue4m3,tensor=f32", {4}},
      {"value=e5m2,store=packed_u32:0,tensor=bf16", {2}},
      {"nvfp4", {5}},
      {"value=e2m1,store=native,block=1:ue4m3", {2}},
      {"value=q4f,store=native,block=2:ue4m3", {2}},
  };
  int parsed = 0;
  for (const auto& [text, shape] : cases) {
    SCOPED_TRACE(text);
    const Scheme s = scheme(text);
    auto l = make_layout(s, shape);
    ASSERT_OK(l);
    for (int iter = 0; iter < 4000; ++iter) {
      Bytes b(l.value().total_bytes);
      for (auto& x : b) x = static_cast<std::uint8_t>(byte(rng));
      // Bias towards small codes / scales so that a good share parses.
      if (iter % 2) {
        for (std::size_t i = 0; i < l.value().storage_bytes; ++i) b[i] &= 0x11;
        for (std::size_t i = l.value().storage_bytes; i < b.size(); ++i) b[i] &= 0x3F;
      }
      auto p = parse(s, shape, b);
      if (!p.ok()) {
        const ErrorKind k = p.kind();
        EXPECT_TRUE(k == ErrorKind::invalid_code || k == ErrorKind::invalid_scale ||
                    k == ErrorKind::invalid_global_scale)
            << to_string(k);
        continue;
      }
      ++parsed;
      auto back = serialize(p.value());
      ASSERT_OK(back);
      ASSERT_EQ(back.value(), b) << qct::hex_bytes(b);
    }
  }
  EXPECT_GT(parsed, 1000);
}

// parse(serialize(t)) == t for tensors produced by quantize.
TEST(Serialize, QuantizedTensorsRoundTrip) {
  const unsigned seed = 99u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-4.0f, 4.0f);
  const std::vector<std::pair<std::string, Shape>> cases = {
      {"value=q8f", {2, 5}},
      {"value=q8s,store=native,block=4:f16", {9}},
      {"value=q4s,store=packed_u32:1,block=2x2:bf16", {3, 5}},
      {"value=q4f,store=packed_u32:0,block=3:ue4m3,tensor=f32", {7}},
      {"value=q2s,store=packed_u32:0,tensor=f16", {2, 2, 5}},
      {"value=q2f,store=native", {6}},
      {"value=e4m3,store=packed_u32:0,block=2:ue4m3,tensor=f32", {2, 3}},
      {"value=e5m2,store=packed_native:0,block=5:f16", {11}},
      {"nvfp4", {2, 20}},
      {"value=e2m1,store=packed_native:1,block=2x1:ue4m3", {3, 3}},
  };
  for (const auto& [text, shape] : cases) {
    SCOPED_TRACE(text);
    const Scheme s = scheme(text);
    auto l = make_layout(s, shape);
    ASSERT_OK(l);
    Floats x(l.value().elements);
    for (auto& v : x) v = val(rng);
    Floats scales(l.value().scale_count);
    for (auto& v : scales) v = std::fabs(val(rng)) / 4 + 0.01f;
    std::optional<float> g;
    if (s.two_level()) g = 0.75f;
    auto q = quantize(s, shape, x, scales, g);
    ASSERT_OK(q);
    auto b = serialize(q.value());
    ASSERT_OK(b);
    EXPECT_EQ(b.value().size(), l.value().total_bytes);
    auto p = parse(s, shape, b.value());
    ASSERT_OK(p);
    EXPECT_EQ(p.value(), q.value());
    auto b2 = serialize(p.value());
    ASSERT_OK(b2);
    EXPECT_BYTES_EQ(b.value(), b2.value());
    // Dequantize agrees before and after the round trip.
    auto d1 = dequantize(q.value());
    auto d2 = dequantize(p.value());
    ASSERT_OK(d1);
    ASSERT_OK(d2);
    EXPECT_FLOATS_EQ(d1.value(), d2.value());
  }
}

}  // namespace
}  // namespace qconform
