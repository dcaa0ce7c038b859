#include "output.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <iostream>

#include "literals.h"

namespace qconform::cli {

Json json_float(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return Json(x);
}

Json json_floats(std::span<const float> xs) {
  Json a = Json::array();
  for (float x : xs) a.push_back(json_float(x));
  return a;
}

namespace {

bool reads_back(const std::string& text, float x) {
  const float via_float = std::strtof(text.c_str(), nullptr);
  const auto via_double = static_cast<float>(std::strtod(text.c_str(), nullptr));
  return std::bit_cast<std::uint32_t>(via_float) == std::bit_cast<std::uint32_t>(x) &&
         std::bit_cast<std::uint32_t>(via_double) == std::bit_cast<std::uint32_t>(x);
}

void write_json(const Json& j, std::string& out) {
  switch (j.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : j.items()) {
        if (!first) out += ',';
        first = false;
        out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
        out += ':';
        write_json(value, out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& value : j) {
        if (!first) out += ',';
        first = false;
        write_json(value, out);
      }
      out += ']';
      return;
    }
    case Json::value_t::number_float:
      out += exact_float_text(j.get<float>());
      return;
    default:
      out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
  }
}

}  // namespace

std::string exact_float_text(float x) {
  std::string text = Json(x).dump();
  if (reads_back(text, x)) return text;
  // At 9 significant digits the decimal is far closer to x than to any rounding midpoint, so
  // the loop always ends.
  for (int digits = 1; digits <= 9; ++digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    text = buf;
    if (reads_back(text, x)) break;
  }
  return text;
}

std::string format_float(float x) {
  if (std::isnan(x) || std::isinf(x)) return json_float(x).get<std::string>();
  return exact_float_text(x);
}

std::string json_text(const Json& j) {
  std::string out;
  write_json(j, out);
  return out;
}

void print_json(const Json& j) {
  std::cout << json_text(j) << '\n';
  std::cout.flush();
}

int report(const Error& e, bool json) {
  const std::string_view kind = to_string(e.kind);
  if (json) {
    Json j;
    j["error"]["kind"] = std::string(kind);
    j["error"]["message"] = e.message;
    print_json(j);
  }
  // The message may echo user text (a scheme); stderr keeps it to one line.
  std::cerr << "qconform: error: " << kind << ": " << one_line(e.message) << '\n';
  return kExitError;
}

int report_usage(const std::string& message) {
  std::cerr << "qconform: usage error: " << one_line(message) << '\n';
  return kExitUsage;
}

}  // namespace qconform::cli
