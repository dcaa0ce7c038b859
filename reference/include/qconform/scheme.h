// The quantization scheme of SPEC §1: model, canonical text form and the static checks of §3.1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/errors.h"

namespace qconform {

// X-macro registry of value types: id, text name, bits, integer range lo/hi (minifloats: ±max),
// is-minifloat. Adding a value type is one line here plus its codec in numeric.cc.
#define QCONFORM_VALUES(X)                     \
  X(q8f, "q8f", 8, -128.0f, 127.0f, false)     \
  X(q8s, "q8s", 8, -127.0f, 127.0f, false)     \
  X(q4f, "q4f", 4, -8.0f, 7.0f, false)         \
  X(q4s, "q4s", 4, -7.0f, 7.0f, false)         \
  X(q2f, "q2f", 2, -2.0f, 1.0f, false)         \
  X(q2s, "q2s", 2, -1.0f, 1.0f, false)         \
  X(e4m3, "e4m3", 8, -448.0f, 448.0f, true)    \
  X(e5m2, "e5m2", 8, -57344.0f, 57344.0f, true) \
  X(e2m1, "e2m1", 4, -6.0f, 6.0f, true)

enum class Value : std::uint8_t {
#define QCONFORM_X(id, name, bits, lo, hi, mf) id,
  QCONFORM_VALUES(QCONFORM_X)
#undef QCONFORM_X
};

struct ValueInfo {
  Value value;
  std::string_view name;
  unsigned bits;
  float lo, hi;  // integer clamp bounds; for minifloats the saturation bounds ±max
  bool minifloat;
};

inline constexpr ValueInfo kValues[] = {
#define QCONFORM_X(id, name, bits, lo, hi, mf) {Value::id, name, bits, lo, hi, mf},
    QCONFORM_VALUES(QCONFORM_X)
#undef QCONFORM_X
};

[[nodiscard]] constexpr const ValueInfo& info(Value v) noexcept {
  return kValues[static_cast<std::size_t>(v)];
}

#define QCONFORM_SCALE_DTYPES(X) \
  X(f32, "f32", 4)               \
  X(f16, "f16", 2)               \
  X(bf16, "bf16", 2)             \
  X(ue8m0, "ue8m0", 1)           \
  X(ue4m3, "ue4m3", 1)

enum class ScaleDtype : std::uint8_t {
#define QCONFORM_X(id, name, bytes) id,
  QCONFORM_SCALE_DTYPES(QCONFORM_X)
#undef QCONFORM_X
};

[[nodiscard]] std::string_view to_string(ScaleDtype d) noexcept;
[[nodiscard]] std::size_t scale_bytes(ScaleDtype d) noexcept;  // stored width of one scale
[[nodiscard]] float scale_max(ScaleDtype d) noexcept;          // largest finite value

enum class StoreKind : std::uint8_t { native, packed_u32, packed_native };
enum class Mode : std::uint8_t { symmetric, lookup };

struct Store {
  StoreKind kind = StoreKind::packed_u32;
  // Packed dimension counted from the innermost axis. Text wider than 64 bits saturates to
  // UINT64_MAX, which no tensor has, so it is reported as packing-dim-out-of-range.
  std::uint64_t dim = 0;
  friend bool operator==(const Store&, const Store&) = default;
};

struct BlockLevel {
  // Canonical: no leading 1s, at least one dim ("1x1" is "1"). Dims are 0..255 as parsed;
  // a zero dim or more than 5 dims is invalid-block-size at validation, not at parse.
  std::vector<std::uint8_t> dims;
  ScaleDtype dtype = ScaleDtype::f32;
  friend bool operator==(const BlockLevel&, const BlockLevel&) = default;
};

struct Scheme {
  Value value = Value::q8f;
  Store store{};
  Mode mode = Mode::symmetric;
  std::optional<BlockLevel> block;
  std::optional<ScaleDtype> tensor;
  friend bool operator==(const Scheme&, const Scheme&) = default;

  [[nodiscard]] bool two_level() const noexcept { return block.has_value() && tensor.has_value(); }
  // The innermost level's dtype: block if present, else tensor, else f32.
  [[nodiscard]] ScaleDtype scale_dtype() const noexcept {
    return block ? block->dtype : tensor.value_or(ScaleDtype::f32);
  }
};

// Canonicalize block dims in place: drop leading 1s, keep at least one dim.
void canonicalize_block(std::vector<std::uint8_t>& dims);

// The `nvfp4` preset: value=e2m1,store=packed_native:0,block=16:ue4m3,tensor=f32.
[[nodiscard]] Scheme nvfp4();

// Text form of SPEC §1. Anything malformed is invalid-scheme.
[[nodiscard]] Result<Scheme> parse_scheme(std::string_view text);
// Canonical text: value, store, mode, block, tensor; defaults printed.
[[nodiscard]] std::string print_scheme(const Scheme& s);

// The static checks of SPEC §3.1, in order.
[[nodiscard]] Status validate_scheme(const Scheme& s);

}  // namespace qconform
