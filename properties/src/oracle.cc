// The exact oracle: rationals for every value, rounding decided by comparing exact quantities.
#include "qconform/oracle.h"

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <map>

namespace qconform::oracle {
namespace {

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

cpp_rational pow2(int e) {
  cpp_int one = 1;
  return e >= 0 ? cpp_rational(cpp_int(one << e)) : cpp_rational(cpp_int(1), cpp_int(one << -e));
}

// The exact value of a finite float: frexp splits it into an integer mantissa and an exponent
// without rounding.
cpp_rational exact(float x) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(x), &e);  // x = m * 2^e, |m| in [0.5, 1)
  const auto mi = static_cast<long long>(std::ldexp(m, 53));  // exact: m has <= 24 bits
  return cpp_rational(mi) * pow2(e - 53);
}

// A float from an integer times a power of two, both exact (|n| < 2^25).
float make_float(const cpp_int& n, int e) {
  return std::ldexp(static_cast<float>(static_cast<long long>(n)), e);
}

cpp_int floor_int(const cpp_rational& r) {  // r >= 0
  return boost::multiprecision::numerator(r) / boost::multiprecision::denominator(r);
}

// Round a rational to the nearest f32, ties to even, overflowing to infinity.
float to_f32(const cpp_rational& r) {
  if (r == 0) return 0.0f;
  const bool neg = r < 0;
  const cpp_rational a = neg ? cpp_rational(-r) : r;
  // Find e with 2^e <= a < 2^(e+1) by comparison, starting from a double estimate.
  int e = std::ilogb(a.convert_to<double>());
  if (e < -300 || e > 300) e = 0;
  while (a >= pow2(e + 1)) ++e;
  while (a < pow2(e)) --e;
  const int q = std::max(e, -126) - 23;  // quantum exponent of f32 at a
  const cpp_rational scaled = a / pow2(q);
  cpp_int n = floor_int(scaled);
  const cpp_rational frac = scaled - cpp_rational(n);
  const cpp_rational half(1, 2);
  if (frac > half || (frac == half && (n % 2) == 1)) ++n;
  // n * 2^q beyond FLT_MAX is an overflow: the rounded value would need 2^128.
  const cpp_rational value = cpp_rational(n) * pow2(q);
  if (value >= pow2(128)) return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  // n may be 2^24 after rounding up: still exact as a float.
  const float f = make_float(n, q);
  return neg ? -f : f;
}

struct Format {
  int ebits, mbits, bias;
  bool ieee_specials;  // exponent all-ones is Inf/NaN (e5m2, f16, bf16)
  bool e4m3_nan;       // only S.1111.111 is NaN (e4m3)
};

Format format_of(Value v) {
  switch (v) {
    case Value::e4m3: return {4, 3, 7, false, true};
    case Value::e5m2: return {5, 2, 15, true, false};
    default: return {2, 1, 1, false, false};
  }
}

// Value of a magnitude pattern from its fields; nullopt for Inf/NaN patterns.
std::optional<cpp_rational> field_value(unsigned mag, const Format& f) {
  const unsigned efield = mag >> f.mbits;
  const unsigned mant = mag & ((1u << f.mbits) - 1);
  const unsigned emax_field = (1u << f.ebits) - 1;
  if (f.ieee_specials && efield == emax_field) return std::nullopt;
  if (f.e4m3_nan && efield == emax_field && mant == (1u << f.mbits) - 1) return std::nullopt;
  if (efield == 0) return cpp_rational(mant) * pow2(1 - f.bias - f.mbits);
  return cpp_rational(mant + (1u << f.mbits)) * pow2(static_cast<int>(efield) - f.bias - f.mbits);
}

std::vector<float> enumerate_grid(const Format& f) {
  std::vector<float> out;
  for (unsigned mag = 0; mag < (1u << (f.ebits + f.mbits)); ++mag) {
    if (auto v = field_value(mag, f)) out.push_back(to_f32(*v));  // exactly representable
  }
  std::sort(out.begin(), out.end());
  return out;
}

float scale_max_of(ScaleDtype d) {
  return grid(d).back();
}

}  // namespace

// IEEE gives an exact zero the sign of the operands' sign product; a rational zero has none.
float div(float a, float b) {
  if (a == 0.0f) return std::signbit(a) != std::signbit(b) ? -0.0f : 0.0f;
  return to_f32(exact(a) / exact(b));
}
float mul(float a, float b) {
  if (a == 0.0f || b == 0.0f) return std::signbit(a) != std::signbit(b) ? -0.0f : 0.0f;
  return to_f32(exact(a) * exact(b));
}

const std::vector<float>& grid(ScaleDtype dtype) {
  static const std::vector<float> f16 = enumerate_grid({5, 10, 15, true, false});
  static const std::vector<float> bf16 = enumerate_grid({8, 7, 127, true, false});
  static const std::vector<float> ue4m3 = enumerate_grid({4, 3, 7, false, true});
  switch (dtype) {
    case ScaleDtype::f16: return f16;
    case ScaleDtype::bf16: return bf16;
    default: return ue4m3;
  }
}

float round_up(float s, ScaleDtype dtype) {
  if (dtype == ScaleDtype::f32) return s;
  const auto& g = grid(dtype);
  auto it = std::lower_bound(g.begin(), g.end(), s);  // smallest grid value >= s
  return it == g.end() ? g.back() : *it;
}

std::uint8_t encode_minifloat(float y, Value v) {
  const Format f = format_of(v);
  const unsigned width = static_cast<unsigned>(f.ebits + f.mbits);
  const unsigned sign = std::signbit(y) ? (1u << width) : 0;
  if (std::isinf(y)) {
    unsigned best = 0;
    cpp_rational top = -1;
    for (unsigned mag = 0; mag < (1u << width); ++mag) {
      if (auto val = field_value(mag, f); val && *val > top) {
        top = *val;
        best = mag;
      }
    }
    return static_cast<std::uint8_t>(sign | best);
  }
  const cpp_rational a = abs(exact(y));
  unsigned best = 0;
  cpp_rational best_d = -1;
  for (unsigned mag = 0; mag < (1u << width); ++mag) {
    auto val = field_value(mag, f);
    if (!val) continue;
    const cpp_rational d = abs(*val - a);
    // Nearest; on a tie the even code (mantissa LSB 0). Beyond max the largest value is nearest.
    if (best_d < 0 || d < best_d || (d == best_d && (mag & 1) == 0)) {
      best = mag;
      best_d = d;
    }
  }
  return static_cast<std::uint8_t>(sign | best);
}

float decode_minifloat(std::uint8_t code, Value v) {
  const Format f = format_of(v);
  const unsigned width = static_cast<unsigned>(f.ebits + f.mbits);
  const bool neg = (code >> width) & 1;
  const unsigned mag = code & ((1u << width) - 1);
  auto val = field_value(mag, f);
  float r;
  if (val) {
    r = to_f32(*val);
  } else if (f.ieee_specials && (mag & ((1u << f.mbits) - 1)) == 0) {
    r = std::numeric_limits<float>::infinity();
  } else {
    r = std::numeric_limits<float>::quiet_NaN();
  }
  return neg ? -r : r;
}

std::int32_t integer_code(float y, Value v) {
  const ValueInfo& vi = info(v);
  const cpp_int lo = static_cast<long long>(vi.lo), hi = static_cast<long long>(vi.hi);
  if (std::isinf(y)) return static_cast<std::int32_t>(y > 0 ? vi.hi : vi.lo);
  const cpp_rational r = exact(y);
  const cpp_rational a = abs(r);
  cpp_int n = floor_int(a + cpp_rational(1, 2));  // half away from zero on the magnitude
  if (r < 0) n = -n;
  n = std::clamp(n, lo, hi);
  return static_cast<std::int32_t>(static_cast<long long>(n));
}

namespace {

float effective(float stored, std::optional<float> global) {
  const float eff = global ? mul(*global, stored) : stored;
  return eff == 0.0f ? 0.1f : eff;
}

// Flat block index by coordinates: each element's block is floor(c_i / b_i), row-major.
std::vector<std::size_t> block_indices(const Scheme& s, const Shape& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<std::size_t> out(n, 0);
  if (!s.block) return out;
  const std::size_t r = shape.size();
  std::vector<std::size_t> b(r, 1), grid(r);
  for (std::size_t i = 0; i < s.block->dims.size(); ++i) b[r - s.block->dims.size() + i] = s.block->dims[i];
  for (std::size_t i = 0; i < r; ++i) grid[i] = (shape[i] + b[i] - 1) / b[i];
  std::vector<std::size_t> c(r, 0);
  for (std::size_t e = 0; e < n; ++e) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < r; ++i) k = k * grid[i] + c[i] / b[i];
    out[e] = k;
    for (std::size_t i = r; i-- > 0;) {  // odometer over coordinates
      if (++c[i] < shape[i]) break;
      c[i] = 0;
    }
  }
  return out;
}

std::int32_t lookup_index(float y, const std::vector<float>& table) {
  std::size_t best = 0;
  if (std::isinf(y)) {
    for (std::size_t i = 1; i < table.size(); ++i) {
      if (y > 0 ? table[i] > table[best] : table[i] < table[best]) best = i;
    }
    return static_cast<std::int32_t>(best);
  }
  auto dist = [&](float t) -> std::optional<cpp_rational> {
    if (std::isinf(t)) return std::nullopt;  // infinitely far
    return abs(exact(t) - exact(y));
  };
  auto best_d = dist(table[0]);
  for (std::size_t i = 1; i < table.size(); ++i) {
    auto d = dist(table[i]);
    if (d && (!best_d || *d < *best_d)) {
      best = i;
      best_d = d;
    }
  }
  return static_cast<std::int32_t>(best);
}

}  // namespace

Quantized quantize(const Scheme& s, const Shape& shape, const std::vector<float>& data,
                   const std::vector<float>& scales, std::optional<float> global, const std::vector<float>* table) {
  Quantized out;
  const ScaleDtype dt = s.scale_dtype();
  std::vector<float> eff;
  const std::optional<float> g = global ? std::optional<float>(*global == 0.0f ? 0.0f : *global) : std::nullopt;
  for (float sc : scales) {
    const float stored = round_up(sc == 0.0f ? 0.0f : sc, dt);
    out.scales.push_back(stored);
    eff.push_back(effective(stored, g));
  }
  const auto blocks = block_indices(s, shape);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const float x = data[i];
    const float e = eff[blocks[i]];
    float y;
    if (std::isinf(x)) {
      y = x;  // ±Inf / positive finite
    } else {
      y = div(x, e);
    }
    std::int32_t code;
    if (s.mode == Mode::lookup) {
      code = lookup_index(y, *table);
    } else if (info(s.value).minifloat) {
      code = oracle::encode_minifloat(y, s.value);
    } else {
      code = integer_code(y, s.value);
    }
    out.codes.push_back(code);
  }
  return out;
}

std::vector<float> dequantize(const QTensor& t, const std::vector<float>* table) {
  const auto blocks = block_indices(t.scheme, t.shape);
  std::vector<float> out;
  for (std::size_t i = 0; i < t.codes.size(); ++i) {
    const float e = effective(t.scales[blocks[i]], t.global);
    float v;
    if (t.scheme.mode == Mode::lookup) {
      v = (*table)[static_cast<std::size_t>(t.codes[i])];
    } else if (info(t.scheme.value).minifloat) {
      v = oracle::decode_minifloat(static_cast<std::uint8_t>(t.codes[i]), t.scheme.value);
    } else {
      v = static_cast<float>(t.codes[i]);
    }
    out.push_back(std::isinf(v) ? v : mul(e, v));  // e is positive and finite
  }
  return out;
}

std::optional<QParams> calibrate(const Scheme& s, const Shape& shape, const std::vector<float>& data,
                                 Calibration method) {
  for (float x : data) {
    if (std::isnan(x) || std::isinf(x)) return std::nullopt;
  }
  const auto blocks = block_indices(s, shape);
  std::size_t nblocks = 1;
  if (s.block) {
    const std::size_t r = shape.size();
    std::vector<std::size_t> b(r, 1);
    for (std::size_t i = 0; i < s.block->dims.size(); ++i) b[r - s.block->dims.size() + i] = s.block->dims[i];
    for (std::size_t i = 0; i < r; ++i) nblocks *= (shape[i] + b[i] - 1) / b[i];
  }
  std::vector<cpp_rational> acc(nblocks, 0);
  std::vector<std::size_t> count(nblocks, 0);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const cpp_rational a = abs(exact(data[i]));
    if (method == Calibration::minmax) {
      acc[blocks[i]] = std::max(acc[blocks[i]], a);
    } else {
      acc[blocks[i]] += a;
    }
    ++count[blocks[i]];
  }
  const ValueInfo& vi = info(s.value);
  const cpp_rational range = exact(vi.hi) - exact(vi.lo);
  QParams out;
  for (std::size_t k = 0; k < nblocks; ++k) {
    cpp_rational alpha = acc[k];
    if (method == Calibration::absmean && count[k] > 0) alpha /= cpp_rational(count[k]);
    const float alpha_f = to_f32(alpha);  // exact for minmax, the one rounding of the mean
    const float twice = to_f32(exact(alpha_f) * 2);
    if (std::isinf(twice)) return std::nullopt;
    out.scales.push_back(to_f32(exact(twice) / range));
  }
  if (s.two_level()) {
    float top = 0.0f;
    for (float v : out.scales) top = std::max(top, v);
    const float block_max = scale_max_of(s.block->dtype);
    float g = to_f32(exact(top) / exact(block_max));
    g = std::max(g, std::numeric_limits<float>::min());
    for (float& v : out.scales) v = to_f32(exact(v) / exact(g));
    out.global = g;
  }
  return out;
}

}  // namespace qconform::oracle
