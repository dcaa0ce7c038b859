// Scheme text (SPEC §1): canonical print, parse in any order, presets, canonical blocks, and every
// malformed text rejected as invalid-scheme.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support.h"

namespace qconform {
namespace {

using qct::scheme;

TEST(SchemeText, DefaultsArePrinted) {
  // SPEC §1: defaults q8f, packed_u32:0, symmetric, no levels; "defaults printed".
  EXPECT_EQ(print_scheme(Scheme{}), "value=q8f,store=packed_u32:0,mode=symmetric");
  const Scheme d{};
  EXPECT_EQ(d.value, Value::q8f);
  EXPECT_EQ(d.store.kind, StoreKind::packed_u32);
  EXPECT_EQ(d.store.dim, 0u);
  EXPECT_EQ(d.mode, Mode::symmetric);
  EXPECT_FALSE(d.block.has_value());
  EXPECT_FALSE(d.tensor.has_value());
}

TEST(SchemeText, OmittedItemsTakeDefaults) {
  auto r = parse_scheme("value=q4s");
  ASSERT_OK(r);
  Scheme expected{};
  expected.value = Value::q4s;
  EXPECT_EQ(r.value(), expected);
  EXPECT_EQ(print_scheme(r.value()), "value=q4s,store=packed_u32:0,mode=symmetric");
}

TEST(SchemeText, SpecExampleIsCanonical) {
  // The example of SPEC §1, already in canonical order.
  const std::string text = "value=q4s,store=packed_u32:0,mode=symmetric,block=4x32:f16,tensor=f32";
  auto r = parse_scheme(text);
  ASSERT_OK(r);
  const Scheme& s = r.value();
  EXPECT_EQ(s.value, Value::q4s);
  EXPECT_EQ(s.store, (Store{StoreKind::packed_u32, 0}));
  EXPECT_EQ(s.mode, Mode::symmetric);
  ASSERT_TRUE(s.block.has_value());
  EXPECT_EQ(s.block->dims, (std::vector<std::uint8_t>{4, 32}));
  EXPECT_EQ(s.block->dtype, ScaleDtype::f16);
  EXPECT_EQ(s.tensor, ScaleDtype::f32);
  EXPECT_TRUE(s.two_level());
  EXPECT_EQ(s.scale_dtype(), ScaleDtype::f16);
  EXPECT_EQ(print_scheme(s), text);
}

TEST(SchemeText, KeysInAnyOrder) {
  const Scheme a = scheme("value=e2m1,store=packed_native:0,mode=symmetric,block=16:ue4m3,tensor=f32");
  EXPECT_EQ(scheme("tensor=f32,block=16:ue4m3,mode=symmetric,store=packed_native:0,value=e2m1"), a);
  EXPECT_EQ(scheme("block=16:ue4m3,value=e2m1,tensor=f32,store=packed_native:0"), a);
  EXPECT_EQ(scheme("mode=lookup,value=q2s"), scheme("value=q2s,mode=lookup"));
}

TEST(SchemeText, Nvfp4Preset) {
  // SPEC §1: nvfp4 = value=e2m1,store=packed_native:0,block=16:ue4m3,tensor=f32.
  Scheme expected{};
  expected.value = Value::e2m1;
  expected.store = Store{StoreKind::packed_native, 0};
  expected.mode = Mode::symmetric;
  expected.block = BlockLevel{{16}, ScaleDtype::ue4m3};
  expected.tensor = ScaleDtype::f32;
  EXPECT_EQ(nvfp4(), expected);
  auto r = parse_scheme("nvfp4");
  ASSERT_OK(r);
  EXPECT_EQ(r.value(), expected);
  EXPECT_EQ(print_scheme(expected),
            "value=e2m1,store=packed_native:0,mode=symmetric,block=16:ue4m3,tensor=f32");
  EXPECT_TRUE(validate_scheme(expected).ok());
}

TEST(SchemeText, StoreForms) {
  // `:D` optional for the packed stores (default 0), ASCII digits.
  EXPECT_EQ(scheme("store=packed_u32").store, (Store{StoreKind::packed_u32, 0}));
  EXPECT_EQ(scheme("store=packed_u32:3").store, (Store{StoreKind::packed_u32, 3}));
  EXPECT_EQ(scheme("store=packed_native").store, (Store{StoreKind::packed_native, 0}));
  EXPECT_EQ(scheme("store=packed_native:1").store, (Store{StoreKind::packed_native, 1}));
  EXPECT_EQ(scheme("store=native").store.kind, StoreKind::native);
  EXPECT_EQ(print_scheme(scheme("store=packed_u32")), "value=q8f,store=packed_u32:0,mode=symmetric");
  EXPECT_EQ(print_scheme(scheme("store=native")), "value=q8f,store=native,mode=symmetric");
  EXPECT_EQ(print_scheme(scheme("store=packed_native:2")),
            "value=q8f,store=packed_native:2,mode=symmetric");
  // Leading zeros are still ASCII digits: 007 is 7.
  EXPECT_EQ(scheme("store=packed_u32:007").store, (Store{StoreKind::packed_u32, 7}));
}

TEST(SchemeText, HugePackingDimSaturates) {
  // scheme.h: a D wider than 64 bits saturates to UINT64_MAX (packing-dim-out-of-range later).
  auto r = parse_scheme("store=packed_u32:123456789012345678901234567890");
  ASSERT_OK(r);
  EXPECT_EQ(r.value().store.dim, UINT64_MAX);
  auto q = quantize(r.value(), Shape{4}, qct::Floats{1, 2, 3, 4}, qct::Floats{1.0f}, std::nullopt);
  EXPECT_ERROR(q, packing_dim_out_of_range);
  // 2^64 - 1 itself is digits that fit.
  auto m = parse_scheme("store=packed_u32:18446744073709551615");
  ASSERT_OK(m);
  EXPECT_EQ(m.value().store.dim, UINT64_MAX);
}

TEST(SchemeText, CanonicalBlockDims) {
  // SPEC §1: leading 1s are dropped (1x32 is 32); scheme.h: "1x1" is "1".
  EXPECT_EQ(scheme("block=1x32:f32"), scheme("block=32:f32"));
  EXPECT_EQ(scheme("block=1x1x32:f16").block->dims, (std::vector<std::uint8_t>{32}));
  EXPECT_EQ(scheme("block=1x1:f32").block->dims, (std::vector<std::uint8_t>{1}));
  EXPECT_EQ(scheme("block=1:f32").block->dims, (std::vector<std::uint8_t>{1}));
  EXPECT_EQ(scheme("block=1x4x1:f32").block->dims, (std::vector<std::uint8_t>{4, 1}));
  EXPECT_EQ(scheme("block=4x1:f32").block->dims, (std::vector<std::uint8_t>{4, 1}));
  EXPECT_EQ(print_scheme(scheme("block=1x1x2x3:bf16")),
            "value=q8f,store=packed_u32:0,mode=symmetric,block=2x3:bf16");
  // 255 is the largest dim; leading-zero digits are digits.
  EXPECT_EQ(scheme("block=255:f32").block->dims, (std::vector<std::uint8_t>{255}));
  EXPECT_EQ(scheme("block=004:f32").block->dims, (std::vector<std::uint8_t>{4}));
  // Six dims with a leading 1 canonicalize to five, which is valid (SPEC §3.1 counts after).
  const Scheme six = scheme("block=1x2x2x2x2x2:f32");
  EXPECT_EQ(six.block->dims, (std::vector<std::uint8_t>{2, 2, 2, 2, 2}));
  EXPECT_TRUE(validate_scheme(six).ok());
}

TEST(SchemeText, CanonicalizeBlockInPlace) {
  std::vector<std::uint8_t> a{1, 1, 32};
  canonicalize_block(a);
  EXPECT_EQ(a, (std::vector<std::uint8_t>{32}));
  std::vector<std::uint8_t> b{1, 1};
  canonicalize_block(b);
  EXPECT_EQ(b, (std::vector<std::uint8_t>{1}));
  std::vector<std::uint8_t> c{2, 1, 3};
  canonicalize_block(c);
  EXPECT_EQ(c, (std::vector<std::uint8_t>{2, 1, 3}));
  std::vector<std::uint8_t> d{1, 0, 4};
  canonicalize_block(d);
  EXPECT_EQ(d, (std::vector<std::uint8_t>{0, 4}));
}

TEST(SchemeText, ZeroAndTooManyDimsParseButFailValidation) {
  // scheme.h: a zero dim or more than 5 dims is invalid-block-size at validation, not at parse.
  const Scheme zero = scheme("block=0:f32");
  ASSERT_TRUE(zero.block.has_value());
  EXPECT_EQ(zero.block->dims, (std::vector<std::uint8_t>{0}));
  EXPECT_ERROR(validate_scheme(zero), invalid_block_size);
  EXPECT_ERROR(validate_scheme(scheme("block=4x0x2:f32")), invalid_block_size);
  EXPECT_ERROR(validate_scheme(scheme("block=2x2x2x2x2x2:f32")), invalid_block_size);
  // "0x10" is the digits 0 and 10 joined by x: dims [0, 10].
  const Scheme hexish = scheme("block=0x10:f32");
  EXPECT_EQ(hexish.block->dims, (std::vector<std::uint8_t>{0, 10}));
  EXPECT_ERROR(validate_scheme(hexish), invalid_block_size);
}

TEST(SchemeText, ScaleDtypesParse) {
  EXPECT_EQ(scheme("tensor=f32").tensor, ScaleDtype::f32);
  EXPECT_EQ(scheme("tensor=f16").tensor, ScaleDtype::f16);
  EXPECT_EQ(scheme("tensor=bf16").tensor, ScaleDtype::bf16);
  EXPECT_EQ(scheme("tensor=ue8m0").tensor, ScaleDtype::ue8m0);  // parses; rejected at validation
  EXPECT_EQ(scheme("tensor=ue4m3").tensor, ScaleDtype::ue4m3);
  EXPECT_EQ(scheme("block=8:ue8m0").block->dtype, ScaleDtype::ue8m0);
  EXPECT_EQ(scheme("tensor=f16").scale_dtype(), ScaleDtype::f16);
  EXPECT_EQ(Scheme{}.scale_dtype(), ScaleDtype::f32);  // no level: f32
  EXPECT_FALSE(scheme("tensor=f16").two_level());
  EXPECT_FALSE(scheme("block=4:f16").two_level());
}

TEST(SchemeText, EveryValueName) {
  for (const ValueInfo& v : kValues) {
    const std::string text = "value=" + std::string(v.name);
    auto r = parse_scheme(text);
    ASSERT_OK(r) << text;
    EXPECT_EQ(r.value().value, v.value) << text;
  }
  // SPEC §1 ranges, transcribed.
  EXPECT_EQ(info(Value::q8f).lo, -128.0f);
  EXPECT_EQ(info(Value::q8s).lo, -127.0f);
  EXPECT_EQ(info(Value::q4f).lo, -8.0f);
  EXPECT_EQ(info(Value::q4s).hi, 7.0f);
  EXPECT_EQ(info(Value::q2f).lo, -2.0f);
  EXPECT_EQ(info(Value::q2f).hi, 1.0f);
  EXPECT_EQ(info(Value::q2s).lo, -1.0f);
  EXPECT_EQ(info(Value::e4m3).hi, 448.0f);
  EXPECT_EQ(info(Value::e5m2).hi, 57344.0f);
  EXPECT_EQ(info(Value::e2m1).bits, 4u);
}

// Every scheme the model can hold prints to a text that parses back to it (SPEC §1).
TEST(SchemeText, ParsePrintRoundTrip) {
  const std::vector<Store> stores = {{StoreKind::native, 0},      {StoreKind::packed_u32, 0},
                                     {StoreKind::packed_u32, 1},  {StoreKind::packed_u32, 7},
                                     {StoreKind::packed_native, 0}, {StoreKind::packed_native, 2},
                                     {StoreKind::packed_u32, UINT64_MAX}};
  const std::vector<std::optional<BlockLevel>> blocks = {
      std::nullopt,
      BlockLevel{{32}, ScaleDtype::f32},
      BlockLevel{{1}, ScaleDtype::f16},
      BlockLevel{{4, 32}, ScaleDtype::bf16},
      BlockLevel{{2, 1, 255}, ScaleDtype::ue4m3},
      BlockLevel{{16}, ScaleDtype::ue8m0},
      BlockLevel{{3, 3, 3, 3, 3}, ScaleDtype::f16},
      BlockLevel{{0}, ScaleDtype::f32},              // invalid at validation, still printable
      BlockLevel{{2, 2, 2, 2, 2, 2}, ScaleDtype::f32},  // six dims: likewise
  };
  const std::vector<std::optional<ScaleDtype>> tensors = {
      std::nullopt, ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0,
      ScaleDtype::ue4m3};
  int count = 0;
  for (const ValueInfo& v : kValues) {
    for (const Store& st : stores) {
      for (Mode m : {Mode::symmetric, Mode::lookup}) {
        for (const auto& b : blocks) {
          for (const auto& t : tensors) {
            Scheme s{};
            s.value = v.value;
            s.store = st;
            s.mode = m;
            s.block = b;
            s.tensor = t;
            const std::string text = print_scheme(s);
            auto r = parse_scheme(text);
            ASSERT_OK(r) << text;
            ASSERT_EQ(r.value(), s) << text;
            ASSERT_EQ(print_scheme(r.value()), text);
            ++count;
          }
        }
      }
    }
  }
  EXPECT_EQ(count, 9 * 7 * 2 * 9 * 6);
}

TEST(SchemeText, PrintIsCanonicalOrder) {
  Scheme s{};
  s.value = Value::e4m3;
  s.store = Store{StoreKind::native, 0};
  s.mode = Mode::lookup;
  s.block = BlockLevel{{2, 8}, ScaleDtype::f16};
  s.tensor = ScaleDtype::f32;
  EXPECT_EQ(print_scheme(s), "value=e4m3,store=native,mode=lookup,block=2x8:f16,tensor=f32");
  Scheme t{};
  t.tensor = ScaleDtype::bf16;
  EXPECT_EQ(print_scheme(t), "value=q8f,store=packed_u32:0,mode=symmetric,tensor=bf16");
}

// Anything but the grammar of SPEC §1 is invalid-scheme.
TEST(SchemeText, MalformedIsInvalidScheme) {
  const std::vector<std::string> bad = {
      "value=q9",                        // unknown value
      "value=Q8S",                       // case matters
      "VALUE=q8s",
      "foo=1",                           // unknown key
      "value=q8s,foo=1",
      "value=q8s,value=q8s",             // duplicate key, even with the same value
      "mode=symmetric,mode=lookup",
      "tensor=f32,tensor=f32",
      "block=4:f32,block=4:f32",
      "value",                           // no '='
      "value=",                          // empty value
      "=q8s",
      "value==q8s",
      "value=q8s=q8s",
      "value=q8s,",                      // trailing comma
      ",value=q8s",                      // leading comma
      "value=q8s,,mode=lookup",          // empty item
      ",",
      " value=q8s",                      // whitespace is not trimmed
      "value=q8s ",
      "value = q8s",
      "value=q8s, mode=lookup",
      "store=native:0",                  // native takes no :D
      "store=native:",
      "store=packed_u32:",               // empty D
      "store=packed_u32:-1",
      "store=packed_u32:+1",
      "store=packed_u32:1x",
      "store=packed_u32:0x1",
      "store=packed_u32: 1",
      "store=packed_u32:1:2",
      "store=packed",
      "store=packed_u16:0",
      "mode=asymmetric",
      "mode=",
      "tensor=f64",
      "tensor=F32",
      "tensor=",
      "tensor=f32:f32",
      "block=:f32",                      // empty dims
      "block=x4:f32",
      "block=4x:f32",
      "block=4xx4:f32",
      "block=4X4:f32",
      "block=4*4:f32",
      "block=+4:f32",
      "block=-4:f32",
      "block= 4:f32",
      "block=256:f32",                   // a dim over 255
      "block=1x256:f32",
      "block=0256:f32",
      "block=99999999999999999999999999:f32",
      "block=4:f64",
      "block=4:",
      "block=4:f32:f16",
      "block=4,f32",
      "block=4:f32,",
      "nvfp4,",
      "nvfp4,value=q8s",                 // the preset stands alone
      "value=q8s,nvfp4",
      "NVFP4",
      "nvfp4 ",
  };
  for (const std::string& text : bad) {
    EXPECT_ERROR(parse_scheme(text), invalid_scheme) << "text: \"" << text << "\"";
  }
  // Embedded NUL and non-ASCII bytes.
  EXPECT_ERROR(parse_scheme(std::string_view("value=q8s\0", 10)), invalid_scheme);
  EXPECT_ERROR(parse_scheme(std::string_view("value=q8s,\0mode=lookup", 22)), invalid_scheme);
  EXPECT_ERROR(parse_scheme("block=\xd9\xa4:f32"), invalid_scheme);  // Arabic-Indic digit four
}

TEST(SchemeText, InvalidSchemeMessageIsNotEmpty) {
  auto r = parse_scheme("value=q9");
  ASSERT_ERROR(r, invalid_scheme);
  EXPECT_FALSE(r.error().message.empty());
}

TEST(SchemeValidation, StaticChecksInOrder) {
  // SPEC §3.1, one rule at a time.
  EXPECT_TRUE(validate_scheme(Scheme{}).ok());
  EXPECT_ERROR(validate_scheme(scheme("block=0:f32")), invalid_block_size);
  EXPECT_ERROR(validate_scheme(scheme("tensor=ue8m0")), unsupported_scale_dtype);
  EXPECT_ERROR(validate_scheme(scheme("block=4:ue8m0")), unsupported_scale_dtype);
  EXPECT_ERROR(validate_scheme(scheme("block=4:ue4m3,tensor=f16")), narrow_global_scale);
  EXPECT_ERROR(validate_scheme(scheme("block=4:ue4m3,tensor=ue4m3")), narrow_global_scale);
  EXPECT_ERROR(validate_scheme(scheme("block=4:f32,tensor=f32")), block_scale_too_wide);
  EXPECT_ERROR(validate_scheme(scheme("block=4:bf16,tensor=f32")), block_scale_too_wide);
  EXPECT_TRUE(validate_scheme(scheme("block=4:f16,tensor=f32")).ok());   // 65504 is allowed
  EXPECT_TRUE(validate_scheme(scheme("block=4:ue4m3,tensor=f32")).ok());
  for (const char* v : {"q4f", "q4s", "q2f", "q2s"}) {
    EXPECT_ERROR(validate_scheme(scheme(std::string("store=packed_native:0,value=") + v)),
                 unsupported_store)
        << v;
  }
  for (const char* v : {"q8f", "q8s", "e4m3", "e5m2", "e2m1"}) {
    EXPECT_TRUE(validate_scheme(scheme(std::string("store=packed_native:0,value=") + v)).ok()) << v;
  }
  EXPECT_ERROR(validate_scheme(scheme("mode=lookup,store=native")), unsupported_lookup_scheme);
  EXPECT_ERROR(validate_scheme(scheme("mode=lookup,store=packed_native:0")),
               unsupported_lookup_scheme);
  for (const char* v : {"e4m3", "e5m2", "e2m1"}) {
    EXPECT_ERROR(validate_scheme(scheme(std::string("mode=lookup,value=") + v)),
                 unsupported_lookup_scheme)
        << v;
  }
  EXPECT_TRUE(validate_scheme(scheme("mode=lookup,value=q4s")).ok());
  EXPECT_TRUE(validate_scheme(scheme("mode=lookup,value=q8f,store=packed_u32:1")).ok());
}

TEST(SchemeValidation, StaticPrecedence) {
  // invalid-block-size before unsupported-scale-dtype before narrow-global-scale before
  // block-scale-too-wide before unsupported-store before unsupported-lookup-scheme (SPEC §3.1).
  EXPECT_ERROR(validate_scheme(scheme("block=0:ue8m0,tensor=f16")), invalid_block_size);
  EXPECT_ERROR(validate_scheme(scheme("block=4:ue8m0,tensor=f16")), unsupported_scale_dtype);
  EXPECT_ERROR(validate_scheme(scheme("block=4:ue8m0,tensor=f32")), unsupported_scale_dtype);
  // SPEC §1 "the scale dtype" is the innermost level's: a ue8m0 tensor level over a block level
  // is the global's dtype, which §3.1 checks as narrow-global-scale.
  EXPECT_ERROR(validate_scheme(scheme("block=4:f16,tensor=ue8m0")), narrow_global_scale);
  EXPECT_ERROR(validate_scheme(scheme("block=4:f32,tensor=ue8m0")), narrow_global_scale);
  EXPECT_ERROR(validate_scheme(scheme("block=4:f32,tensor=f16")), narrow_global_scale);
  EXPECT_ERROR(validate_scheme(scheme("value=q4s,store=packed_native:0,block=4:f32,tensor=f32")),
               block_scale_too_wide);
  EXPECT_ERROR(validate_scheme(scheme("value=q4s,store=packed_native:0,mode=lookup")),
               unsupported_store);
}

}  // namespace
}  // namespace qconform
