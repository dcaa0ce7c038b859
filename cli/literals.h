// Literal arguments of the qconform CLI: floats in strtof syntax, comma lists, shapes, hex bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/reference.h"

namespace qconform::cli {

// A malformed command line (exit status 2), as opposed to a typed qconform::Error (exit 1).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One float in strtof syntax (decimal, hex float, nan, inf, -0). The whole token must be
// consumed; `what` names the argument in the message.
[[nodiscard]] float parse_float(std::string_view token, std::string_view what);

// Comma-separated floats; the empty string is the empty list (`--scales ""`: zero scales).
[[nodiscard]] std::vector<float> parse_float_list(std::string_view text, std::string_view what);

// Whitespace-separated floats, as given on standard input.
[[nodiscard]] std::vector<float> read_floats(std::istream& in);

struct ShapeArg {
  Shape dims;
  // Set when a dim does not fit size_t: a typed shape-overflow, reported in precedence order.
  std::optional<std::string> overflow;
};

// Dims joined by `x` ("2x3", "8", "0x4"); "" or "scalar" is rank 0. Non-digit text is a usage
// error; the rank is not limited here (the library reports more than kMaxRank dims).
[[nodiscard]] ShapeArg parse_shape(std::string_view text);

// Even-length hex, either case.
[[nodiscard]] std::vector<std::uint8_t> parse_hex(std::string_view text);
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);

// User-supplied text made safe for a one-line message: control characters as \xNN, cut after
// max_chars. quote() also wraps it in single quotes.
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_chars = 4096);
[[nodiscard]] std::string quote(std::string_view text, std::size_t max_chars = 64);

}  // namespace qconform::cli
