// How the CLI prints: JSON whose floats read back to the exact f32 bits, and one-line errors.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qconform/errors.h"

namespace qconform::cli {

// Exit statuses of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;     // a typed qconform::Error
inline constexpr int kExitUsage = 2;     // a malformed command line
inline constexpr int kExitInternal = 3;  // out of memory or a bug: never an abort

// The number type is float, so a value is stored exactly; keys keep the documented order.
// print_json writes the floats itself (exact_float_text), not nlohmann's dump.
using Json = nlohmann::basic_json<nlohmann::ordered_map, std::vector, std::string, bool,
                                  std::int64_t, std::uint64_t, float>;

// A finite float as a JSON number (-0.0 keeps its sign); NaN as "nan", ±Inf as "inf"/"-inf".
[[nodiscard]] Json json_float(float x);
[[nodiscard]] Json json_floats(std::span<const float> xs);

// The shortest decimal that reads back to x's exact bits both as an f32 (strtof) and as a
// double rounded to f32. nlohmann's shortest output fails the second for one f32 pair
// (±0x15ae43fd prints 7.038531e-26, a double-rounding trap), so every result is checked.
// -0.0 prints as -0.0, integral values with ".0".
[[nodiscard]] std::string exact_float_text(float x);

// The text json_float prints, without quotes: used by the human-readable tables too.
[[nodiscard]] std::string format_float(float x);

// JSON text of j on one line, floats through exact_float_text; invalid UTF-8 in user text is
// replaced, never an exception.
[[nodiscard]] std::string json_text(const Json& j);

// One JSON object on stdout.
void print_json(const Json& j);

// `qconform: error: KIND: message` on stderr, and `{"error":{...}}` on stdout with --json.
// Returns kExitError.
int report(const Error& e, bool json);

// `qconform: usage error: message` on stderr. Returns kExitUsage.
int report_usage(const std::string& message);

}  // namespace qconform::cli
