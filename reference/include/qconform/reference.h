// qconform::reference: the bit-exact scalar quantizer that defines SPEC §1-§8.
//
// Every entry point validates in the order of SPEC §3, returns a typed error instead of
// crashing, and runs under a default floating-point environment whatever the caller's
// (rounding mode, FTZ/DAZ are saved, reset and restored).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "qconform/errors.h"
#include "qconform/numeric.h"
#include "qconform/scheme.h"

namespace qconform {

inline constexpr std::size_t kMaxRank = 8;  // SPEC §10

using Shape = std::vector<std::size_t>;

// Up to kMaxRank extents, held inline: every entry point makes a Layout, and four heap
// vectors of two or three extents each cost a small call more than its arithmetic. Reads like
// a std::vector<std::size_t> (and compares equal to one with the same elements); the sizes
// given to assign and resize must not exceed kMaxRank (make_layout checks the rank first).
class Dims {
 public:
  using value_type = std::size_t;
  using iterator = std::size_t*;
  using const_iterator = const std::size_t*;

  Dims() = default;
  void assign(std::size_t n, std::size_t value) noexcept {
    n_ = std::min(n, kMaxRank);
    std::fill(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(n_), value);
  }
  void assign(std::span<const std::size_t> from) noexcept {
    n_ = std::min(from.size(), kMaxRank);
    std::copy(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n_), v_.begin());
  }
  void resize(std::size_t n) noexcept {  // new extents are 0, as a vector's
    n = std::min(n, kMaxRank);
    if (n > n_) std::fill(v_.begin() + static_cast<std::ptrdiff_t>(n_), v_.begin() + static_cast<std::ptrdiff_t>(n), 0);
    n_ = n;
  }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
  [[nodiscard]] const std::size_t* data() const noexcept { return v_.data(); }
  [[nodiscard]] const_iterator begin() const noexcept { return v_.data(); }
  [[nodiscard]] const_iterator end() const noexcept { return v_.data() + n_; }
  [[nodiscard]] iterator begin() noexcept { return v_.data(); }
  [[nodiscard]] iterator end() noexcept { return v_.data() + n_; }
  [[nodiscard]] std::size_t operator[](std::size_t i) const noexcept { return v_[i]; }
  [[nodiscard]] std::size_t& operator[](std::size_t i) noexcept { return v_[i]; }
  operator std::span<const std::size_t>() const noexcept { return {v_.data(), n_}; }  // NOLINT: as a vector's
  friend bool operator==(const Dims& a, std::span<const std::size_t> b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Dims& a, const Dims& b) noexcept { return a == std::span<const std::size_t>(b); }

 private:
  std::array<std::size_t, kMaxRank> v_{};
  std::size_t n_ = 0;
};

// Sizes that follow from a scheme and a shape (SPEC §4, §6, §7), all overflow-checked.
struct Layout {
  std::size_t rank = 0;
  Dims shape;
  std::size_t elements = 0;
  Dims block;                          // rank-relative block extents (empty: per-tensor)
  Dims grid;                           // scale grid shape, ceil(n_i / b_i)
  std::size_t scale_count = 1;         // 1 per-tensor, else product of grid
  // Packing: units of `unit_bytes` holding `per_unit` codes of `bits` bits along `packed_axis`.
  unsigned bits = 8;
  std::size_t per_unit = 1;
  std::size_t unit_bytes = 1;
  std::size_t packed_axis = 0;         // axis r-1-D (meaningful when per_unit > 1 and rank > 0)
  Dims storage_shape;
  std::size_t storage_units = 0;
  std::size_t storage_bytes = 0;
  std::size_t scale_bytes = 0;         // all stored scales
  std::size_t global_bytes = 0;        // 4 for two-level, else 0
  std::size_t total_bytes = 0;         // serialized length
};

// Shape and data checks of SPEC §3.3 in order: shape-overflow, shape-mismatch (only when
// `data_len` is given), block-rank-exceeds-tensor, packing-dim-out-of-range.
// The scheme must already have passed validate_scheme.
[[nodiscard]] Result<Layout> make_layout(const Scheme& s, std::span<const std::size_t> shape,
                                         std::optional<std::size_t> data_len = std::nullopt);
// make_layout into `out` (whatever it held before), with the same checks and first error: no
// copy of the Layout, for callers that make one per call of a fast path. On an error `out` is
// unspecified.
[[nodiscard]] Status make_layout_into(const Scheme& s, std::span<const std::size_t> shape,
                                      std::optional<std::size_t> data_len, Layout& out);

// Flat block index (row-major over the grid) of row-major element `index` (SPEC §4).
[[nodiscard]] std::size_t block_of(const Layout& l, std::size_t index) noexcept;

struct QParams {
  std::vector<float> scales;
  std::optional<float> global;
};

// A quantized tensor: one code per element (signed integer for integer values, the unsigned
// bit pattern for minifloats, the table index in lookup mode) and the *stored* scales.
struct QTensor {
  Scheme scheme;
  Shape shape;
  std::vector<std::int32_t> codes;
  std::vector<float> scales;
  std::optional<float> global;
  friend bool operator==(const QTensor&, const QTensor&) = default;
};

using Table = std::optional<std::span<const float>>;

// The Table viewing an optional owned table (none when it is absent): what every caller that
// keeps its table as std::optional<std::vector<float>> (decoded cases, test cases, the CLI) passes.
[[nodiscard]] inline Table table_of(const std::optional<std::vector<float>>& t) noexcept {
  return t ? Table(std::span<const float>(*t)) : std::nullopt;
}

// The full validation of SPEC §3 for quantize, in order (scheme, global presence, shape and data,
// scale count, scale values, lookup table, input values). Shared by every implementation.
[[nodiscard]] Status validate_quantize(const Scheme& s, std::span<const std::size_t> shape,
                                       std::span<const float> data, std::span<const float> scales,
                                       std::optional<float> global, Table table);

// SPEC §5. `scales` are the raw scales (rounded up here); -0.0 is taken as +0.0.
[[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                       std::span<const float> data, std::span<const float> scales,
                                       std::optional<float> global, Table table = std::nullopt);

// SPEC §5: x' = fl(eff * decode(q)). Validates the tensor like parse does (scales, global,
// table, codes), so any QTensor is safe to pass.
[[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table = std::nullopt);

// SPEC §6: codes to value storage bytes and back. unpack rejects non-canonical storage
// (invalid-code); `storage` must be exactly layout.storage_bytes long.
[[nodiscard]] Result<std::vector<std::uint8_t>> pack(const Scheme& s,
                                                     std::span<const std::size_t> shape,
                                                     std::span<const std::int32_t> codes);
[[nodiscard]] Result<std::vector<std::int32_t>> unpack(const Scheme& s,
                                                       std::span<const std::size_t> shape,
                                                       std::span<const std::uint8_t> storage);

// SPEC §7: [value storage][scales][global].
[[nodiscard]] Result<std::vector<std::uint8_t>> serialize(const QTensor& t);
// Untrusted bytes: exact length first, then stored scales, global, lookup table, codes.
[[nodiscard]] Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape,
                                    std::span<const std::uint8_t> bytes, Table table = std::nullopt);

enum class Calibration : std::uint8_t { minmax, absmean };

// SPEC §8. Returns the raw scales (before round-up) and, for two-level, the global.
[[nodiscard]] Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                        std::span<const float> data, Calibration method);

// The two-level split of SPEC §8: g = max(fl(max_k scale_k / max(block dtype)), FLT_MIN), then
// scale_k = fl(scale_k / g) in place. Returns g. Shared by every implementation's calibrate.
[[nodiscard]] float split_two_level(std::span<float> scales, ScaleDtype block_dtype) noexcept;

// Effective scale of SPEC §5 from a stored scale and optional global (0 becomes 0.1f).
[[nodiscard]] float effective_scale(float stored, std::optional<float> global) noexcept;

// Quantize one value y = fl(x / eff) to its code (integer, minifloat or table index).
[[nodiscard]] std::int32_t quantize_value(float y, Value v, Mode m, Table table) noexcept;
// Decode one code to the value multiplied by eff in dequantize.
[[nodiscard]] float decode_value(std::int32_t code, Value v, Mode m, Table table) noexcept;

}  // namespace qconform
