// An independent oracle for the reference: every SPEC step on exact rationals
// (Boost.Multiprecision cpp_rational), rounding by exact comparison, grids by enumeration.
// It shares no arithmetic with reference/: no bit patterns, no float operations besides
// converting exactly representable values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "qconform/reference.h"

namespace qconform::oracle {

// The f32 nearest to a / b (ties to even, overflow to ±Inf), for finite a and finite b != 0.
[[nodiscard]] float div(float a, float b);
// The f32 nearest to a * b.
[[nodiscard]] float mul(float a, float b);

// SPEC §2 by search over the enumerated non-negative grid of `dtype` (f16, bf16, ue4m3).
[[nodiscard]] float round_up(float s, ScaleDtype dtype);
// The sorted non-negative finite values of a scale dtype (f16, bf16, ue4m3), built from the
// format definition (sign, exponent, mantissa fields) in rationals.
[[nodiscard]] const std::vector<float>& grid(ScaleDtype dtype);

// SPEC §5 minifloat conversion by exact distance to every finite value of the format:
// nearest, ties to the even code, beyond ±max saturating, sign of zero kept.
[[nodiscard]] std::uint8_t encode_minifloat(float y, Value v);
// The value of a code from the field definitions (NaN for NaN patterns, ±Inf for e5m2's).
[[nodiscard]] float decode_minifloat(std::uint8_t code, Value v);

// Rust's f32::round on the exact value, then the clamp of SPEC §5 (y not NaN).
[[nodiscard]] std::int32_t integer_code(float y, Value v);

// The whole of SPEC §5 for a tensor whose inputs are valid (no error expected): codes and
// stored scales. Lookup mode by exact distance, ties to the lower index.
struct Quantized {
  std::vector<std::int32_t> codes;
  std::vector<float> scales;
};
[[nodiscard]] Quantized quantize(const Scheme& s, const Shape& shape, const std::vector<float>& data,
                                 const std::vector<float>& scales, std::optional<float> global,
                                 const std::vector<float>* table);
[[nodiscard]] std::vector<float> dequantize(const QTensor& t, const std::vector<float>* table);

// SPEC §8 on exact values; nullopt where the SPEC gives an error (NaN, Inf, 2*alpha overflow).
[[nodiscard]] std::optional<QParams> calibrate(const Scheme& s, const Shape& shape, const std::vector<float>& data,
                                               Calibration method);

}  // namespace qconform::oracle
