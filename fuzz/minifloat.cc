// Fuzz target minifloat: raw bit patterns through every number format of SPEC §2 and §5.
//
// Input: a run of floats (producer value(): raw patterns or special values). For each x, checked
// against an independent oracle (fuzz/oracle.h) that searches the codes of each format:
//  - encode_minifloat (e4m3, e5m2, e2m1): the code minimizing |decode(c) - x| exactly over all
//    finite codes of x's sign, ties to the even code, saturating (±Inf too), -0 kept; decode of
//    it is that value; every canonical code decodes and re-encodes to itself;
//  - round_up_scale: the smallest f16 / bf16 / ue4m3 value >= |x|, saturating; f32 unchanged;
//    ue8m0 is unsupported-scale-dtype; encode_scale/decode_scale round-trip every grid value and
//    every canonical stored pattern, and decode_scale matches the format's definition;
//  - f32_to_f16 / f32_to_bf16 are IEEE nearest-even with overflow to Inf; round_half_away is
//    Rust's f32::round.
// Then every implementation quantizes the xs with a unit scale for every value type (codes must
// be the oracle's) and rounds them up as block scales of every dtype (stored scales must be the
// oracle's), and all implementations must agree. Aborts on the first mismatch.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "check.h"
#include "impls.h"
#include "oracle.h"
#include "producer.h"
#include "qconform/fuzz_producer.h"

using namespace qconform;
using namespace qconform::fuzz;

namespace {

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

bool same_float(float a, float b) { return std::isnan(a) ? std::isnan(b) : bits(a) == bits(b); }

struct Mini {
  Value value;
  const oracle::Format* f;
};
const Mini kMinis[] = {{Value::e4m3, &oracle::kE4M3}, {Value::e5m2, &oracle::kE5M2}, {Value::e2m1, &oracle::kE2M1}};

struct Dtype {
  ScaleDtype dtype;
  const oracle::Format* f;  // null: f32
};
const Dtype kDtypes[] = {{ScaleDtype::f32, nullptr},
                         {ScaleDtype::f16, &oracle::kF16},
                         {ScaleDtype::bf16, &oracle::kBF16},
                         {ScaleDtype::ue4m3, &oracle::kE4M3}};

void check_minifloats(float x) {
  for (const Mini& m : kMinis) {
    const std::string_view name = info(m.value).name;
    if (std::isnan(x)) {
      // NaN (never quantized: nan-input comes first) encodes to the format's NaN, or 0 in e2m1.
      const std::uint8_t got = encode_minifloat(x, m.value);
      const float dec = decode_minifloat(got, m.value);
      FUZZ_CHECK(m.value == Value::e2m1 ? got == 0 : std::isnan(dec), name, " encode of NaN gave 0x", std::hex,
                 unsigned{got});
    } else {
      const std::uint32_t want = oracle::nearest_code(x, *m.f);
      FUZZ_CHECK(static_cast<std::uint32_t>(quantize_value(x, m.value, Mode::symmetric, std::nullopt)) == want,
                 name, " quantize_value of ", hexf(x));
      const std::uint8_t got = encode_minifloat(x, m.value);
      FUZZ_CHECK(got == want, name, " encode of ", hexf(x), ": code 0x", std::hex, unsigned{got}, ", nearest is 0x",
                 want);
      const float dec = decode_minifloat(got, m.value);
      FUZZ_CHECK(same_float(dec, static_cast<float>(oracle::decode(want, *m.f))), name, " decode of code 0x",
                 std::hex, want, " gave ", hexf(dec));
    }
    // Every pattern of the format's width (taken from x's low bits) decodes by definition; the
    // canonical ones (finite, no stray bits) re-encode to themselves.
    const std::uint32_t width_mask = (m.f->sign_bit() << 1) - 1;
    const auto code = static_cast<std::uint8_t>(bits(x) & width_mask);
    const float dec = decode_minifloat(code, m.value);
    FUZZ_CHECK(same_float(dec, static_cast<float>(oracle::decode(code, *m.f))), name, " decode of 0x", std::hex,
               unsigned{code}, " gave ", hexf(dec));
    const bool canonical = oracle::is_finite_mag(code & m.f->mag_mask(), *m.f);
    FUZZ_CHECK(minifloat_code_is_canonical(code, m.value) == canonical, name, " code 0x", std::hex, unsigned{code},
               " canonical should be ", canonical);
    const auto stray = static_cast<std::uint8_t>((bits(x) >> 8) & 0xFF);
    if ((stray & ~width_mask & 0xFF) != 0) {
      FUZZ_CHECK(!minifloat_code_is_canonical(stray, m.value), name, " code 0x", std::hex, unsigned{stray},
                 " has bits above the width yet is canonical");
    }
    if (canonical) {
      FUZZ_CHECK(encode_minifloat(dec, m.value) == code, name, " code 0x", std::hex, unsigned{code},
                 " does not re-encode to itself");
    }
  }
}

void check_scales(float x) {
  if (!std::isnan(x)) {
    const float s = std::fabs(x);
    for (const Dtype& d : kDtypes) {
      const Result<float> r = round_up_scale(s, d.dtype);
      FUZZ_CHECK(r.ok(), "round_up_scale(", hexf(s), ", ", to_string(d.dtype), ") failed");
      const float want = d.f ? static_cast<float>(oracle::round_up(s, *d.f)) : s;
      FUZZ_CHECK(bits(r.value()) == bits(want), "round_up_scale(", hexf(s), ", ", to_string(d.dtype), ") = ",
                 hexf(r.value()), ", the smallest value >= s is ", hexf(want));
      const float back = decode_scale(encode_scale(r.value(), d.dtype), d.dtype);
      FUZZ_CHECK(bits(back) == bits(r.value()), to_string(d.dtype), " grid value ", hexf(r.value()),
                 " does not survive encode_scale/decode_scale: ", hexf(back));
    }
    const Result<float> e8 = round_up_scale(s, ScaleDtype::ue8m0);
    FUZZ_CHECK(!e8.ok() && e8.kind() == ErrorKind::unsupported_scale_dtype, "ue8m0 round-up must be unsupported");
  }

  // Stored patterns, from x's bits: decode by definition, canonical ones re-encode.
  const std::uint32_t p16 = bits(x) & 0xFFFF, p8 = bits(x) & 0xFF;
  const float f16 = decode_scale(p16, ScaleDtype::f16);
  FUZZ_CHECK(same_float(f16, static_cast<float>(oracle::decode(p16, oracle::kF16))), "f16 decode of 0x", std::hex,
             p16);
  if (!std::isnan(f16)) FUZZ_CHECK(encode_scale(f16, ScaleDtype::f16) == p16, "f16 0x", std::hex, p16);
  const float bf = decode_scale(p16, ScaleDtype::bf16);
  FUZZ_CHECK(same_float(bf, static_cast<float>(oracle::decode(p16, oracle::kBF16))), "bf16 decode of 0x", std::hex,
             p16);
  if (!std::isnan(bf)) FUZZ_CHECK(encode_scale(bf, ScaleDtype::bf16) == p16, "bf16 0x", std::hex, p16);
  const float u43 = decode_scale(p8, ScaleDtype::ue4m3);
  FUZZ_CHECK(same_float(u43, static_cast<float>(oracle::decode(p8, oracle::kE4M3))), "ue4m3 decode of 0x", std::hex,
             p8);
  if (p8 < 0x7F) FUZZ_CHECK(encode_scale(u43, ScaleDtype::ue4m3) == p8, "ue4m3 0x", std::hex, p8);
  const float e8 = decode_scale(p8, ScaleDtype::ue8m0);
  const float e8_want = p8 == 0xFF ? std::numeric_limits<float>::quiet_NaN()
                                   : static_cast<float>(std::ldexp(1.0, static_cast<int>(p8) - 127));
  FUZZ_CHECK(same_float(e8, e8_want), "ue8m0 decode of 0x", std::hex, p8, " gave ", hexf(e8));
  if (p8 != 0xFF) FUZZ_CHECK(encode_scale(e8, ScaleDtype::ue8m0) == p8, "ue8m0 0x", std::hex, p8);
}

void check_conversions(float x) {
  if (!std::isnan(x)) {
    FUZZ_CHECK(f32_to_f16(x) == oracle::ieee_nearest_code(x, oracle::kF16), "f32_to_f16(", hexf(x), ") = 0x",
               std::hex, f32_to_f16(x), ", nearest-even is 0x", oracle::ieee_nearest_code(x, oracle::kF16));
    FUZZ_CHECK(f32_to_bf16(x) == oracle::ieee_nearest_code(x, oracle::kBF16), "f32_to_bf16(", hexf(x), ") = 0x",
               std::hex, f32_to_bf16(x), ", nearest-even is 0x", oracle::ieee_nearest_code(x, oracle::kBF16));
  } else {
    FUZZ_CHECK(std::isnan(f16_to_f32(f32_to_f16(x))) && std::isnan(bf16_to_f32(f32_to_bf16(x))),
               "NaN must stay NaN in f16/bf16");
  }
  const float r = round_half_away(x);
  FUZZ_CHECK(same_float(r, oracle::round_half_away(x)), "round_half_away(", hexf(x), ") = ", hexf(r),
             ", Rust's f32::round gives ", hexf(oracle::round_half_away(x)));
}

// Every implementation quantizes xs with a unit per-tensor scale for every value type (y = x / 1
// exactly, so the codes are the formats' own conversions) and stores |xs| as block scales of
// every dtype (one element per block, so each stored scale is a round-up).
void check_implementations(std::span<const float> xs) {
  std::vector<float> finite(xs.begin(), xs.end());
  for (float& v : finite) {
    if (std::isnan(v)) v = 0.0f;
  }
  const Shape shape{finite.size()};
  const std::vector<float> unit{1.0f};
  for (const ValueInfo& vi : kValues) {
    Scheme s;
    s.value = vi.value;
    s.store = Store{StoreKind::native, 0};
    std::vector<Outcome> outs;
    const std::vector<Result<QTensor>> rs = run_all<QTensor>(
        [&](const Impl& impl) { return impl.quantize(s, shape, finite, unit, std::nullopt, std::nullopt); }, outs);
    check_agree(cat("quantize ", vi.name, " with a unit scale"), outs, [&](const Outcome& a, const Outcome& b) {
      return explain_quantize(rs, outs, finite, unit, a, b);
    });
    FUZZ_CHECK(rs.front().ok(), "unit-scale quantize failed: ", rs.front().error().message);
    const QTensor& t = rs.front().value();
    for (std::size_t i = 0; i < finite.size(); ++i) {
      std::int32_t want;
      if (vi.minifloat) {
        const Mini* m = nullptr;
        for (const Mini& mm : kMinis) {
          if (mm.value == vi.value) m = &mm;
        }
        want = static_cast<std::int32_t>(oracle::nearest_code(finite[i], *m->f));
      } else {
        // SPEC §5: clamp(round(y), lo, hi), with ±Inf saturating.
        want = static_cast<std::int32_t>(std::clamp(oracle::round_half_away(finite[i]), vi.lo, vi.hi));
      }
      FUZZ_CHECK(t.codes[i] == want, vi.name, " quantize of ", hexf(finite[i]), " with scale 1: code ", t.codes[i],
                 ", expected ", want);
    }
    std::vector<Outcome> deq_outs;
    const std::vector<Result<std::vector<float>>> ds = run_all<std::vector<float>>(
        [&](const Impl& impl) { return impl.dequantize(t, std::nullopt); }, deq_outs);
    check_agree(cat("dequantize ", vi.name, " with a unit scale"), deq_outs);
  }

  std::vector<float> scales(finite);
  for (float& v : scales) v = std::isinf(v) ? 0.0f : std::fabs(v);
  const std::vector<float> zeros(finite.size(), 0.0f);
  for (const Dtype& d : kDtypes) {
    Scheme s;
    s.store = Store{StoreKind::native, 0};
    s.block = BlockLevel{{1}, d.dtype};
    std::vector<Outcome> outs;
    const std::vector<Result<QTensor>> rs = run_all<QTensor>(
        [&](const Impl& impl) { return impl.quantize(s, shape, zeros, scales, std::nullopt, std::nullopt); }, outs);
    check_agree(cat("block scales of dtype ", to_string(d.dtype)), outs, [&](const Outcome& a, const Outcome& b) {
      return explain_quantize(rs, outs, zeros, scales, a, b);
    });
    FUZZ_CHECK(rs.front().ok(), "block-scale quantize failed: ", rs.front().error().message);
    for (std::size_t k = 0; k < scales.size(); ++k) {
      const float want = d.f ? static_cast<float>(oracle::round_up(scales[k], *d.f)) : scales[k];
      FUZZ_CHECK(bits(rs.front().value().scales[k]) == bits(want), to_string(d.dtype), " stored scale of ",
                 hexf(scales[k]), " is ", hexf(rs.front().value().scales[k]), ", expected ", hexf(want));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const Context ctx([input] { return describe("minifloat", input); });
  const std::vector<float> xs = decode_minifloat_values(input);
  for (float x : xs) {
    const Context one([input, x] { return describe("minifloat", input) + "\nfailing value: " + hexf(x); });
    check_minifloats(x);
    check_scales(x);
    check_conversions(x);
  }
  if (!xs.empty()) check_implementations(xs);
  return 0;
}
