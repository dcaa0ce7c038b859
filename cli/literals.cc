#include "literals.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>

namespace qconform::cli {
namespace {

// The C locale's isspace, independent of any locale the process might set.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string one_line(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t n = 0;
  for (char c : text) {
    if (n++ == max_chars) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string quote(std::string_view text, std::size_t max_chars) {
  return "'" + one_line(text, max_chars) + "'";
}

float parse_float(std::string_view token, std::string_view what) {
  // strtof skips leading whitespace and stops at a NUL; both would let a token through that
  // is not entirely a literal, so the token is checked whole.
  const std::string copy(token);
  if (copy.empty() || is_space(copy.front())) {
    throw UsageError(std::string(what) + ": " + quote(token) + " is not a float literal");
  }
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(copy.c_str(), &end);  // ERANGE keeps strtof's value (±inf, 0)
  if (end != copy.c_str() + copy.size()) {
    throw UsageError(std::string(what) + ": " + quote(token) +
                     " is not a float literal (strtof syntax: 1.5, 0x1.8p-3, nan, inf, -0)");
  }
  return v;
}

std::vector<float> parse_float_list(std::string_view text, std::string_view what) {
  std::vector<float> out;
  if (text.empty()) return out;
  std::size_t index = 0;
  for (;;) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    // Spaces around a comma are a typing convenience, not part of a literal.
    while (!item.empty() && is_space(item.front())) item.remove_prefix(1);
    while (!item.empty() && is_space(item.back())) item.remove_suffix(1);
    out.push_back(parse_float(item, std::string(what) + " item " + std::to_string(index)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    ++index;
  }
  return out;
}

std::vector<float> read_floats(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<float> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    out.push_back(parse_float(std::string_view(text).substr(i, j - i),
                              "stdin value " + std::to_string(out.size())));
    i = j;
  }
  return out;
}

ShapeArg parse_shape(std::string_view text) {
  ShapeArg out;
  if (text.empty() || text == "scalar") return out;
  std::size_t index = 0;
  for (;;) {
    const std::size_t sep = text.find('x');
    const std::string_view item = text.substr(0, sep);
    if (item.empty()) {
      throw UsageError("--shape: empty dim " + std::to_string(index) +
                       " (dims are digits joined by 'x', e.g. 2x3; '' or 'scalar' is rank 0)");
    }
    std::size_t dim = 0;
    bool fits = true;
    for (char c : item) {
      if (!is_digit(c)) {
        throw UsageError("--shape: dim " + std::to_string(index) + " " + quote(item) +
                         " is not a decimal number (dims are digits joined by 'x', e.g. 2x3)");
      }
      const auto d = static_cast<std::size_t>(c - '0');
      if (dim > (std::numeric_limits<std::size_t>::max() - d) / 10) {
        fits = false;
      } else if (fits) {
        dim = dim * 10 + d;
      }
    }
    if (!fits && !out.overflow) {
      out.overflow = "dim " + std::to_string(index) + " " + quote(item) +
                     " does not fit size_t (max " +
                     std::to_string(std::numeric_limits<std::size_t>::max()) + ")";
    }
    out.dims.push_back(dim);
    if (sep == std::string_view::npos) break;
    text.remove_prefix(sep + 1);
    ++index;
  }
  return out;
}

std::vector<std::uint8_t> parse_hex(std::string_view text) {
  if (text.size() % 2 != 0) {
    throw UsageError("--bytes: odd number of hex digits (" + std::to_string(text.size()) + ")");
  }
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) {
      throw UsageError("--bytes: " + quote(text.substr(i, 2)) + " at offset " +
                       std::to_string(i) + " is not a hex byte");
    }
    out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
  }
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  }
  return out;
}

}  // namespace qconform::cli
