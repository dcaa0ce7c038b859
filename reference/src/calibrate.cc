// Calibration (SPEC §8): minmax and absmean, per tensor or per block, and two-level splitting.
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "fpenv.h"
#include "text.h"
#include "qconform/reference.h"

namespace qconform {
namespace {

using detail::hexf;

__extension__ typedef unsigned __int128 u128;

// An exact sum of |x| over f32 values in units of 2^-149 (f32's smallest subnormal): each term
// is below 2^277 and at most 2^64 terms are added, so 384 bits never overflow. The mean is then
// rounded once, which makes absmean independent of summation order.
class ExactSum {
 public:
  void add(float x) {
    const std::uint32_t b = std::bit_cast<std::uint32_t>(x) & 0x7FFFFFFFu;
    const std::uint32_t exp = b >> 23;
    const std::uint64_t m = exp == 0 ? (b & 0x7FFFFFu) : ((b & 0x7FFFFFu) | 0x800000u);
    const unsigned shift = exp == 0 ? 0 : exp - 1;
    std::size_t limb = shift / 64;
    u128 carry = static_cast<u128>(m) << (shift % 64);
    while (carry != 0 && limb < kLimbs) {
      const u128 s = static_cast<u128>(w_[limb]) + static_cast<std::uint64_t>(carry);
      w_[limb] = static_cast<std::uint64_t>(s);
      carry = (carry >> 64) + (s >> 64);
      ++limb;
    }
    ++count_;
  }

  // The mean rounded to nearest-even f32 (count 0 gives 0).
  [[nodiscard]] float mean() const {
    if (count_ == 0) return 0.0f;
    std::array<std::uint64_t, kLimbs> q{};
    u128 rem = 0;
    for (std::size_t i = kLimbs; i-- > 0;) {
      const u128 cur = (rem << 64) | w_[i];
      q[i] = static_cast<std::uint64_t>(cur / count_);
      rem = cur % count_;
    }
    const bool rem_nonzero = rem != 0;
    int len = 0;
    for (std::size_t i = kLimbs; i-- > 0;) {
      if (q[i]) {
        len = static_cast<int>(i * 64) + 64 - std::countl_zero(q[i]);
        break;
      }
    }
    auto bit = [&](int pos) -> bool {
      return pos >= 0 && ((q[static_cast<std::size_t>(pos) / 64] >> (pos % 64)) & 1);
    };
    auto any_below = [&](int pos) -> bool {  // any bit at positions < pos
      for (int i = 0; i < pos; ++i) {
        if (bit(i)) return true;
      }
      return false;
    };
    std::uint64_t n;
    int sh = 0;
    if (len <= 24) {
      n = q[0];
      const u128 twice = rem * 2;
      if (twice > count_ || (twice == count_ && (n & 1))) ++n;
    } else {
      sh = len - 24;
      n = 0;
      for (int i = 23; i >= 0; --i) n = (n << 1) | bit(sh + i);
      const bool guard = bit(sh - 1);
      const bool sticky = rem_nonzero || any_below(sh - 1);
      if (guard && (sticky || (n & 1))) ++n;
      if (n == (std::uint64_t{1} << 24)) {
        n >>= 1;
        ++sh;
      }
    }
    // For N < 2^24 quanta of 2^(sh-149), the f32 pattern is N + sh * 2^23.
    return std::bit_cast<float>(static_cast<std::uint32_t>(n + (static_cast<std::uint64_t>(sh) << 23)));
  }

 private:
  static constexpr std::size_t kLimbs = 6;
  std::array<std::uint64_t, kLimbs> w_{};
  std::uint64_t count_ = 0;
};

}  // namespace

Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                          Calibration method) {
  detail::FpEnvGuard guard;
  if (Status st = validate_scheme(s); !st.ok()) return st.error();
  if (method == Calibration::absmean && s.two_level()) {
    return Error{ErrorKind::absmean_two_level,
                 "absmean has no two-level form (a mean per block cannot be split by a per-tensor scale): " +
                     print_scheme(s)};
  }
  Result<Layout> lr = make_layout(s, shape, data.size());
  if (!lr.ok()) return lr.error();
  const Layout& l = *lr;
  for (std::size_t i = 0; i < l.rank && s.block; ++i) {
    if (l.shape[i] % l.block[i] != 0) {
      return Error{ErrorKind::block_not_divisible, "axis " + std::to_string(i) + " of extent " +
                                                       std::to_string(l.shape[i]) + " is not a multiple of block " +
                                                       std::to_string(l.block[i])};
    }
  }
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (std::isnan(data[i])) return Error{ErrorKind::nan_input, "input[" + std::to_string(i) + "] is NaN"};
  }
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (std::isinf(data[i])) {
      return Error{ErrorKind::calibration_overflow, "input[" + std::to_string(i) + "] is " + hexf(data[i])};
    }
  }

  std::vector<float> alpha(l.scale_count, 0.0f);
  if (method == Calibration::minmax) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      float& a = alpha[block_of(l, i)];
      a = std::max(a, std::fabs(data[i]));
    }
  } else {
    std::vector<ExactSum> sums(l.scale_count);
    for (std::size_t i = 0; i < data.size(); ++i) sums[block_of(l, i)].add(data[i]);
    for (std::size_t k = 0; k < l.scale_count; ++k) alpha[k] = sums[k].mean();
  }

  const ValueInfo& vi = info(s.value);
  const float range = vi.hi - vi.lo;  // exact: 255, 254, 15, 14, 3, 2, 896, 114688, 12
  QParams out;
  out.scales.resize(l.scale_count);
  for (std::size_t k = 0; k < l.scale_count; ++k) {
    const float twice = 2.0f * alpha[k];
    if (std::isinf(twice)) {
      return Error{ErrorKind::calibration_overflow,
                   "2 * alpha overflows for " + std::string(s.block ? "block" : "tensor") + " [" + std::to_string(k) +
                       "], alpha " + hexf(alpha[k])};
    }
    out.scales[k] = twice / range;
  }
  if (s.two_level()) out.global = split_two_level(out.scales, s.block->dtype);
  return out;
}

float split_two_level(std::span<float> scales, ScaleDtype block_dtype) noexcept {
  detail::FpEnvGuard guard;
  float top = 0.0f;
  for (float v : scales) top = std::max(top, v);
  const float g = std::max(top / scale_max(block_dtype), std::numeric_limits<float>::min());
  for (float& v : scales) v = v / g;
  return g;
}

}  // namespace qconform
