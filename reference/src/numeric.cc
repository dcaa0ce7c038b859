// Number formats (SPEC §2, §5, §7): every conversion works on bit patterns and integers, so its
// result cannot depend on the floating-point environment.
#include "qconform/numeric.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "fpenv.h"
#include "unguarded.h"

namespace qconform {
namespace {

struct MiniFormat {
  unsigned ebits, mbits;
  int bias;
  std::uint32_t max_code;  // magnitude pattern of the largest finite value
};

// e4m3: no Inf, NaN only S.1111.111; e5m2: IEEE-like; e2m1: no Inf/NaN.
constexpr MiniFormat kE4M3{4, 3, 7, 0x7E};
constexpr MiniFormat kE5M2{5, 2, 15, 0x7B};
constexpr MiniFormat kE2M1{2, 1, 1, 0x7};
constexpr MiniFormat kF16{5, 10, 15, 0x7BFF};

const MiniFormat& format_of(Value v) {
  switch (v) {
    case Value::e4m3: return kE4M3;
    case Value::e5m2: return kE5M2;
    default: return kE2M1;
  }
}

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
float float_of(std::uint32_t b) { return std::bit_cast<float>(b); }

// Magnitude code of |x| rounded to nearest-even onto format f, for finite |x| below the format's
// overflow threshold (callers saturate first). Works on the f32 integer significand: the
// result is N quanta of 2^q, and N = 2^mbits carries naturally into the exponent field.
std::uint32_t round_magnitude(std::uint32_t abs_bits, const MiniFormat& f) {
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  const int fexp = static_cast<int>(abs_bits >> 23);
  const std::uint64_t m = fexp == 0 ? (abs_bits & 0x7FFFFFu) : ((abs_bits & 0x7FFFFFu) | 0x800000u);
  const int e = fexp == 0 ? -149 : fexp - 150;  // x = m * 2^e
  if (m == 0) return 0;
  const int E = fexp == 0 ? -127 : fexp - 127;  // floor(log2 x) for normal x
  const bool normal = fexp != 0 && E >= emin;
  const int q = (normal ? E : emin) - static_cast<int>(f.mbits);  // quantum exponent
  const int shift = q - e;
  std::uint64_t n;
  if (shift <= 0) {
    n = m << -shift;  // exact (only for formats with more mantissa bits than f32: never here)
  } else if (shift > 40) {
    n = 0;  // far below half a quantum
  } else {
    n = m >> shift;
    const std::uint64_t rem = m & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  if (!normal) return static_cast<std::uint32_t>(n);  // subnormal field; n == 2^mbits is min normal
  const auto field = static_cast<std::uint32_t>(E + f.bias);
  return (field << f.mbits) + static_cast<std::uint32_t>(n) - (1u << f.mbits);
}

float decode_format(std::uint32_t mag, const MiniFormat& f) {
  const std::uint32_t field = mag >> f.mbits;
  const std::uint32_t mant = mag & ((1u << f.mbits) - 1);
  if (field == 0) return std::ldexp(static_cast<float>(mant), 1 - f.bias - static_cast<int>(f.mbits));
  return std::ldexp(static_cast<float>(mant | (1u << f.mbits)),
                    static_cast<int>(field) - f.bias - static_cast<int>(f.mbits));
}

}  // namespace

std::uint8_t encode_minifloat(float x, Value v) noexcept {
  const MiniFormat& f = format_of(v);
  const std::uint32_t sign_bit = 1u << (f.ebits + f.mbits);
  const std::uint32_t b = bits_of(x);
  const std::uint32_t sign = (b >> 31) ? sign_bit : 0;
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) {  // NaN: never produced by quantize, which reports nan-input first
    if (v == Value::e4m3) return static_cast<std::uint8_t>(sign | 0x7F);
    if (v == Value::e5m2) return static_cast<std::uint8_t>(sign | 0x7E);
    return 0;
  }
  const float max = decode_format(f.max_code, f);
  if (a >= bits_of(max)) return static_cast<std::uint8_t>(sign | f.max_code);  // saturate, Inf too
  return static_cast<std::uint8_t>(sign | round_magnitude(a, f));
}

float decode_minifloat(std::uint8_t code, Value v) noexcept {
  const MiniFormat& f = format_of(v);
  const unsigned width = f.ebits + f.mbits;
  const std::uint32_t c = code & ((1u << (width + 1)) - 1);
  const bool neg = (c >> width) & 1;
  const std::uint32_t mag = c & ((1u << width) - 1);
  float r;
  if (v == Value::e4m3 && mag == 0x7F) {
    r = std::numeric_limits<float>::quiet_NaN();
  } else if (v == Value::e5m2 && (mag >> 2) == 0x1F) {
    r = (mag & 3) ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    r = decode_format(mag, f);
  }
  return neg ? -r : r;
}

bool minifloat_code_is_canonical(std::uint8_t code, Value v) noexcept {
  const MiniFormat& f = format_of(v);
  const unsigned width = f.ebits + f.mbits;
  if (code >> (width + 1)) return false;
  return (code & ((1u << width) - 1)) <= f.max_code;
}

std::uint16_t f32_to_f16(float x) noexcept {
  const std::uint32_t b = bits_of(x);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to Inf
  return static_cast<std::uint16_t>(sign | round_magnitude(a, kF16));
}

float f16_to_f32(std::uint16_t h) noexcept {
  const bool neg = h & 0x8000u;
  const std::uint32_t mag = h & 0x7FFFu;
  float r;
  if ((mag >> 10) == 0x1F) {
    r = (mag & 0x3FF) ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    r = decode_format(mag, kF16);
  }
  return neg ? -r : r;
}

std::uint16_t f32_to_bf16(float x) noexcept {
  const std::uint32_t b = bits_of(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((b >> 16) | 0x40u);
  const std::uint32_t rounded = b + 0x7FFFu + ((b >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float bf16_to_f32(std::uint16_t h) noexcept { return float_of(static_cast<std::uint32_t>(h) << 16); }

Result<float> round_up_scale(float s, ScaleDtype dtype) {
  detail::FpEnvGuard guard;
  return detail::round_up_scale_unguarded(s, dtype);
}

Result<float> detail::round_up_scale_unguarded(float s, ScaleDtype dtype) {
  switch (dtype) {
    case ScaleDtype::f32: return s;
    case ScaleDtype::ue8m0:
      return Error{ErrorKind::unsupported_scale_dtype, "ue8m0 scales have no round-up rule"};
    default: break;
  }
  if (std::isnan(s)) return s;
  const float max = scale_max(dtype);
  if (s >= max) return max;
  // Subnormal ranges have a fixed spacing; s / spacing and the product are exact (powers of 2).
  if (dtype == ScaleDtype::f16 && s < 0x1p-14f) return std::ceil(s * 0x1p24f) * 0x1p-24f;
  if (dtype == ScaleDtype::ue4m3 && s < 0x1p-6f) return std::ceil(s * 0x1p9f) * 0x1p-9f;
  const std::uint32_t step = dtype == ScaleDtype::f16 ? (1u << 13) : dtype == ScaleDtype::bf16 ? (1u << 16) : (1u << 20);
  return float_of((bits_of(s) + step - 1) & ~(step - 1));
}

std::uint32_t encode_scale(float s, ScaleDtype dtype) noexcept {
  switch (dtype) {
    case ScaleDtype::f32: return bits_of(s);
    case ScaleDtype::f16: return f32_to_f16(s);
    case ScaleDtype::bf16: return f32_to_bf16(s);
    case ScaleDtype::ue4m3: return encode_minifloat(s, Value::e4m3) & 0x7Fu;
    case ScaleDtype::ue8m0: {
      if (std::isnan(s)) return 0xFF;
      const std::uint32_t b = bits_of(s) & 0x7FFFFFFFu;
      if (b < 0x00800000u) return 0;  // 2^-127 is the smallest
      return std::min<std::uint32_t>(b >> 23, 0xFE);
    }
  }
  return 0;
}

float decode_scale(std::uint32_t bits, ScaleDtype dtype) noexcept {
  switch (dtype) {
    case ScaleDtype::f32: return float_of(bits);
    case ScaleDtype::f16: return f16_to_f32(static_cast<std::uint16_t>(bits));
    case ScaleDtype::bf16: return bf16_to_f32(static_cast<std::uint16_t>(bits));
    case ScaleDtype::ue4m3: return decode_minifloat(static_cast<std::uint8_t>(bits), Value::e4m3);
    case ScaleDtype::ue8m0: {
      const std::uint32_t e = bits & 0xFFu;
      if (e == 0xFF) return std::numeric_limits<float>::quiet_NaN();
      if (e == 0) return float_of(0x00400000u);  // 2^-127, an f32 subnormal
      return float_of(e << 23);
    }
  }
  return 0.0f;
}

float round_half_away(float y) noexcept {
  if (!(std::fabs(y) < 0x1p23f)) return y;  // integers already, or Inf/NaN
  const float t = std::trunc(y);
  // y - t is exact for |y| < 2^23, so the comparison is on the exact fraction.
  if (std::fabs(y - t) >= 0.5f) return t + std::copysign(1.0f, y);
  return t;
}

}  // namespace qconform
