// Scalar number formats of SPEC §2 and §5: scale round-up, minifloat and scale codecs.
#pragma once

#include <cstdint>

#include "qconform/errors.h"
#include "qconform/scheme.h"

namespace qconform {

// SPEC §2: the smallest value of `dtype` that is >= s, saturating at the dtype max.
// s must be >= 0 and not NaN (validation guarantees it); ue8m0 is unsupported-scale-dtype.
[[nodiscard]] Result<float> round_up_scale(float s, ScaleDtype dtype);

// Minifloat values (e4m3, e5m2, e2m1): round-to-nearest-even on the exact value, saturating to
// ±max (±Inf included), -0 kept. NaN input gives the format's NaN pattern where it has one
// (e4m3 0x7F, e5m2 0x7E) and 0 for e2m1; quantize never passes NaN (nan-input comes first).
// Returns the bit pattern in the low `bits` bits. `v` must be a minifloat value.
[[nodiscard]] std::uint8_t encode_minifloat(float x, Value v) noexcept;
// Exact decode of a bit pattern (only the low `bits` bits are read). e4m3 S.1111.111 is NaN;
// e5m2 exponent 31 is ±Inf / NaN.
[[nodiscard]] float decode_minifloat(std::uint8_t code, Value v) noexcept;
// True for the patterns quantize can write: not NaN, not Inf.
[[nodiscard]] bool minifloat_code_is_canonical(std::uint8_t code, Value v) noexcept;

// Scale storage codecs (SPEC §7): the little-endian width of scale_bytes(dtype).
// encode expects a value already on the dtype grid (round_up_scale's output); it rounds to
// nearest-even otherwise. ue4m3 is the e4m3 pattern with sign 0. ue8m0 decodes as 2^(b-127),
// 0xFF NaN, and encodes only for decode round-trips (exact powers of two).
[[nodiscard]] std::uint32_t encode_scale(float s, ScaleDtype dtype) noexcept;
[[nodiscard]] float decode_scale(std::uint32_t bits, ScaleDtype dtype) noexcept;

// IEEE binary16 and bfloat16 conversions (round-to-nearest-even, exact decode).
[[nodiscard]] std::uint16_t f32_to_f16(float x) noexcept;
[[nodiscard]] float f16_to_f32(std::uint16_t h) noexcept;
[[nodiscard]] std::uint16_t f32_to_bf16(float x) noexcept;
[[nodiscard]] float bf16_to_f32(std::uint16_t h) noexcept;

// Rust's f32::round: half away from zero, on the exact value.
[[nodiscard]] float round_half_away(float y) noexcept;

}  // namespace qconform
