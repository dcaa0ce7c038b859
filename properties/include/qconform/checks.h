// Named, reusable conformance checks: one implementation under test against the reference.
// Each returns an empty string when the implementation conforms on the case, else a report
// that prints bits (index, input and scale as hex floats, both outputs as codes).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qconform/implementation.h"

namespace qconform::checks {

struct QuantizeCase {
  Scheme scheme;
  Shape shape;
  std::vector<float> data;
  std::vector<float> scales;
  std::optional<float> global;
  std::optional<std::vector<float>> table;
  [[nodiscard]] Table table_span() const {
    return table_of(table);
  }
};

// The case in SPEC text form with hex floats, replayable by hand.
[[nodiscard]] std::string describe(const QuantizeCase& c);
[[nodiscard]] std::string hex(float x);

// Differential: same error kind, or same codes, stored scales, global and serialized bytes.
[[nodiscard]] std::string quantize(const Implementation& impl, const QuantizeCase& c);
// Differential on dequantize of what the reference quantized (same values as bits).
[[nodiscard]] std::string dequantize(const Implementation& impl, const QuantizeCase& c);
// Differential on pack/unpack and serialize/parse of the reference's quantized tensor, and on
// parse of the same bytes with one byte flipped (same error kind or same tensor).
[[nodiscard]] std::string layout(const Implementation& impl, const QuantizeCase& c, std::size_t flip_at,
                                 std::uint8_t flip_mask);
// Differential on dequantize of any tensor, codes and scales as given (invalid ones included).
[[nodiscard]] std::string dequantize_tensor(const Implementation& impl, const QTensor& t, Table table);
// Differential on dequantize of untrusted bytes (Implementation::dequantize_bytes) against the
// reference's parse then dequantize: same error kind, or the same values bit for bit.
[[nodiscard]] std::string dequantize_bytes(const Implementation& impl, const Scheme& s, std::span<const std::size_t> shape,
                                           std::span<const std::uint8_t> bytes, Table table);
// Differential on parse of untrusted bytes: same error kind, or the same tensor bit for bit.
[[nodiscard]] std::string parse_bytes(const Implementation& impl, const Scheme& s, std::span<const std::size_t> shape,
                                      std::span<const std::uint8_t> bytes, Table table);
[[nodiscard]] std::string calibrate(const Implementation& impl, const QuantizeCase& c, Calibration method);
[[nodiscard]] std::string round_up(const Implementation& impl, float s, ScaleDtype dtype);
[[nodiscard]] std::string minifloat(const Implementation& impl, float x, Value v);

// Oracle: the reference against the exact rational oracle (valid inputs only).
[[nodiscard]] std::string oracle_quantize(const QuantizeCase& c);
[[nodiscard]] std::string oracle_calibrate(const QuantizeCase& c, Calibration method);
[[nodiscard]] std::string oracle_round_up(float s, ScaleDtype dtype);
[[nodiscard]] std::string oracle_minifloat(float x, Value v);

// Error contract: the kind SPEC §3 predicts from independent predicates, checked against the
// implementation (nullopt: the case is valid and must succeed).
[[nodiscard]] std::optional<ErrorKind> expected_error(const QuantizeCase& c);
[[nodiscard]] std::string error_contract(const Implementation& impl, const QuantizeCase& c);

}  // namespace qconform::checks
