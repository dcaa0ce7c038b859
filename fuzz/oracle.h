// Independent re-derivations for the fuzz targets: formats decoded from their definition with
// ldexp in double, nearest and round-up found by searching the codes, blocks found from
// coordinates. Slow and obvious on purpose; nothing here shares code with reference/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace qconform::fuzz::oracle {

// A sign-magnitude binary format: `ebits` exponent bits, `mbits` mantissa bits, `bias`.
struct Format {
  unsigned ebits, mbits;
  int bias;
  enum Special { none, ieee, e4m3 } special;  // ieee: top exponent is Inf/NaN; e4m3: only S.1111.111 NaN
  [[nodiscard]] std::uint32_t sign_bit() const { return 1u << (ebits + mbits); }
  [[nodiscard]] std::uint32_t mag_mask() const { return sign_bit() - 1; }
};

inline constexpr Format kE4M3{4, 3, 7, Format::e4m3};
inline constexpr Format kE5M2{5, 2, 15, Format::ieee};
inline constexpr Format kE2M1{2, 1, 1, Format::none};
inline constexpr Format kF16{5, 10, 15, Format::ieee};
inline constexpr Format kBF16{8, 7, 127, Format::ieee};

[[nodiscard]] inline bool is_finite_mag(std::uint32_t mag, const Format& f) {
  switch (f.special) {
    case Format::none: return true;
    case Format::ieee: return (mag >> f.mbits) != (1u << f.ebits) - 1;
    case Format::e4m3: return mag != f.mag_mask();
  }
  return true;
}

// The largest finite magnitude code.
[[nodiscard]] inline std::uint32_t max_mag(const Format& f) {
  std::uint32_t m = f.mag_mask();
  while (!is_finite_mag(m, f)) --m;
  return m;
}

// Exact value of a finite magnitude code, from the format's definition.
[[nodiscard]] inline double mag_value(std::uint32_t mag, const Format& f) {
  const std::uint32_t e = mag >> f.mbits;
  const std::uint32_t m = mag & ((1u << f.mbits) - 1);
  const int mb = static_cast<int>(f.mbits);
  if (e == 0) return std::ldexp(static_cast<double>(m), 1 - f.bias - mb);
  return std::ldexp(static_cast<double>(m + (1u << f.mbits)), static_cast<int>(e) - f.bias - mb);
}

// Decode of a full pattern (sign included): NaN / ±Inf per the format's rules.
[[nodiscard]] inline double decode(std::uint32_t code, const Format& f) {
  const std::uint32_t mag = code & f.mag_mask();
  const bool neg = (code & f.sign_bit()) != 0;
  double v;
  if (is_finite_mag(mag, f)) {
    v = mag_value(mag, f);
  } else if (f.special == Format::ieee && (mag & ((1u << f.mbits) - 1)) == 0) {
    v = std::numeric_limits<double>::infinity();
  } else {
    v = std::numeric_limits<double>::quiet_NaN();
  }
  return neg ? -v : v;
}

// -1 when a is strictly nearer to x than b, 1 when b is, 0 on a tie. x, a, b >= 0; a + b is
// exact in double for the formats used here, so the midpoint comparison is exact.
[[nodiscard]] inline int nearer(double x, double a, double b) {
  if (a == b) return 0;
  const double mid = (a + b) / 2;
  if (x == mid) return 0;
  const bool a_low = a < b;
  return (x < mid) == a_low ? -1 : 1;
}

// The magnitude code nearest to |x| over every finite code, ties to the even code, saturating
// to the largest finite magnitude (an infinite |x| included). x must not be NaN.
[[nodiscard]] inline std::uint32_t nearest_mag(double ax, const Format& f) {
  const std::uint32_t top = max_mag(f);
  if (std::isinf(ax)) return top;
  std::uint32_t best = 0;
  for (std::uint32_t c = 1; c <= top; ++c) {
    const int r = nearer(ax, mag_value(c, f), mag_value(best, f));
    if (r < 0 || (r == 0 && (c & 1) == 0 && (best & 1) == 1)) best = c;
  }
  return best;
}

// IEEE round-to-nearest-even with overflow (f16, bf16): the nearest over the finite codes and
// the first code past them (2^(emax+1), which is the Inf pattern), found by binary search since
// these formats have too many codes to scan per input. x must not be NaN.
[[nodiscard]] inline std::uint32_t ieee_nearest_code(float x, const Format& f) {
  const double ax = std::fabs(static_cast<double>(x));
  const std::uint32_t limit = max_mag(f) + 1;  // its value is 2^(emax+1); its pattern is Inf
  std::uint32_t mag;
  if (ax >= mag_value(limit, f)) {
    mag = limit;
  } else {
    std::uint32_t lo = 0, hi = limit;  // invariant: value(lo) <= ax < value(hi)
    while (hi - lo > 1) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (mag_value(mid, f) <= ax) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const int r = nearer(ax, mag_value(lo, f), mag_value(hi, f));
    mag = r < 0 || (r == 0 && (lo & 1) == 0) ? lo : hi;
  }
  return std::signbit(x) ? (mag | f.sign_bit()) : mag;
}

// Saturating round-to-nearest-even encode (minifloats): sign kept, -0 kept.
[[nodiscard]] inline std::uint32_t nearest_code(float x, const Format& f) {
  const std::uint32_t mag = nearest_mag(std::fabs(static_cast<double>(x)), f);
  return std::signbit(x) ? (mag | f.sign_bit()) : mag;
}

// SPEC §2: the smallest finite value of the format >= s (s >= 0, not NaN), saturating at the
// largest. Binary search over the magnitude codes, whose values increase with the code.
[[nodiscard]] inline double round_up(double s, const Format& f) {
  const std::uint32_t top = max_mag(f);
  if (s >= mag_value(top, f)) return mag_value(top, f);
  std::uint32_t lo = 0, hi = top;  // invariant: value(hi) >= s
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (mag_value(mid, f) >= s) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return mag_value(hi, f);
}

// Rust's f32::round (half away from zero) computed in double.
[[nodiscard]] inline float round_half_away(float y) {
  if (!(std::fabs(y) < 0x1p23f)) return y;
  const double t = std::floor(std::fabs(static_cast<double>(y)) + 0.5);
  return static_cast<float>(std::copysign(t, static_cast<double>(y)));
}

// Flat block index of row-major element `index` (SPEC §4), from its coordinates.
[[nodiscard]] inline std::size_t block_index(std::span<const std::size_t> shape, std::span<const std::size_t> block,
                                             std::size_t index) {
  const std::size_t r = shape.size();
  std::vector<std::size_t> coord(r);
  for (std::size_t d = r; d-- > 0;) {
    coord[d] = index % shape[d];
    index /= shape[d];
  }
  std::size_t k = 0;
  for (std::size_t d = 0; d < r; ++d) {
    const std::size_t grid = (shape[d] + block[d] - 1) / block[d];
    k = k * grid + coord[d] / block[d];
  }
  return k;
}

}  // namespace qconform::fuzz::oracle
