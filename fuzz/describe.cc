// Human-readable decoding of fuzz inputs and the reference's answer for them.
#include <bit>
#include <cstdio>
#include <string>

#include "producer.h"
#include "qconform/fuzz_producer.h"

namespace qconform::fuzz {
namespace {

constexpr std::string_view kTargets[] = {"scheme_qparams", "scheme_text", "parse_bytes", "minifloat",
                                         "dequantize",     "calibrate",   "target_bits"};

template <class T>
std::optional<ErrorKind> kind_of(const Result<T>& r) {
  return r.ok() ? std::nullopt : std::optional<ErrorKind>(r.kind());
}

Result<QTensor> run_quant(const QuantCase& c) {
  if (c.scheme.text_error) return *c.scheme.text_error;
  return quantize(c.scheme.scheme, c.shape, c.data, c.scales, c.global, table_of(c.table));
}

Result<QTensor> run_parse(const ParseCase& c) {
  if (c.scheme.text_error) return *c.scheme.text_error;
  return parse(c.scheme.scheme, c.shape, c.bytes, table_of(c.table));
}

Result<std::vector<float>> run_dequant(const DequantCase& c) {
  if (c.scheme.text_error) return *c.scheme.text_error;
  return dequantize(QTensor{c.scheme.scheme, c.shape, c.codes, c.scales, c.global}, table_of(c.table));
}

Result<QParams> run_calib(const CalibCase& c) {
  if (c.scheme.text_error) return *c.scheme.text_error;
  return calibrate(c.scheme.scheme, c.shape, c.data, c.method);
}

std::string codes_text(std::span<const std::int32_t> codes, std::size_t limit = 64) {
  std::string out = "(" + std::to_string(codes.size()) + ")";
  for (std::size_t i = 0; i < codes.size() && i < limit; ++i) out += " " + std::to_string(codes[i]);
  if (codes.size() > limit) out += " ...";
  return out;
}

std::string table_text(const std::optional<std::vector<float>>& t) {
  return t ? describe_floats(*t) : std::string("none");
}

std::string global_text(const std::optional<float>& g) {
  if (!g) return "none";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (0x%08x)", static_cast<double>(*g),
                static_cast<unsigned>(std::bit_cast<std::uint32_t>(*g)));
  return buf;
}

template <class T, class Fn>
std::string result_text(const Result<T>& r, Fn&& ok_text) {
  if (!r.ok()) return "reference: error " + std::string(to_string(r.kind())) + ": " + r.error().message;
  return "reference: ok" + ok_text(r.value());
}

std::string escape(std::span<const std::uint8_t> bytes) {
  std::string out;
  char buf[8];
  for (std::uint8_t b : bytes) {
    if (b >= 0x20 && b < 0x7F && b != '\\' && b != '\'') {
      out += static_cast<char>(b);
    } else {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(b));
      out += buf;
    }
  }
  return out;
}

// A scheme_qparams case and the reference's quantize of it.
std::string quant_text(const QuantCase& c) {
  std::string out = "scheme: " + describe_scheme(c.scheme) + "\n";
  out += "shape:  " + describe_shape(c.shape) + "\n";
  out += "scales: " + describe_floats(c.scales) + "\n";
  out += "global: " + global_text(c.global) + "\n";
  out += "table:  " + table_text(c.table) + "\n";
  out += "data:   " + describe_floats(c.data) + "\n";
  out += result_text(run_quant(c), [](const QTensor& t) {
    return ", codes " + codes_text(t.codes) + "\n  stored scales " + describe_floats(t.scales);
  });
  return out;
}

}  // namespace

std::span<const std::string_view> target_names() noexcept { return kTargets; }

std::optional<ErrorKind> reference_outcome(std::string_view target, std::span<const std::uint8_t> bytes) {
  if (target == "scheme_qparams") return kind_of(run_quant(decode_quant(bytes)));
  if (target == "parse_bytes") return kind_of(run_parse(decode_parse(bytes)));
  if (target == "dequantize") return kind_of(run_dequant(decode_dequant(bytes)));
  if (target == "calibrate") return kind_of(run_calib(decode_calib(bytes)));
  if (target == "target_bits") return kind_of(run_quant(decode_target(bytes).quant));
  if (target == "scheme_text") {
    return kind_of(parse_scheme(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  }
  return std::nullopt;
}

std::string describe(std::span<const std::uint8_t> bytes) { return describe("scheme_qparams", bytes); }

std::string describe(std::string_view target, std::span<const std::uint8_t> bytes) {
  std::string out = "target: " + std::string(target) + " (" + std::to_string(bytes.size()) + " bytes)\n";
  if (target == "scheme_qparams") {
    out += quant_text(decode_quant(bytes));
  } else if (target == "target_bits") {
    const TargetCase c = decode_target(bytes);
    out += "target: " + describe_pick(c) + "\n";
    out += quant_text(c.quant);
  } else if (target == "parse_bytes") {
    const ParseCase c = decode_parse(bytes);
    out += "scheme: " + describe_scheme(c.scheme) + "\n";
    out += "shape:  " + describe_shape(c.shape) + "\n";
    out += "table:  " + table_text(c.table) + "\n";
    char buf[16];
    out += "buffer: (" + std::to_string(c.bytes.size()) + ")";
    for (std::size_t i = 0; i < c.bytes.size() && i < 256; ++i) {
      std::snprintf(buf, sizeof buf, " %02x", static_cast<unsigned>(c.bytes[i]));
      out += buf;
    }
    out += c.bytes.size() > 256 ? " ...\n" : "\n";
    out += result_text(run_parse(c), [](const QTensor& t) {
      return ", codes " + codes_text(t.codes) + "\n  scales " + describe_floats(t.scales) + "\n  global " +
             global_text(t.global);
    });
  } else if (target == "dequantize") {
    const DequantCase c = decode_dequant(bytes);
    out += "scheme: " + describe_scheme(c.scheme) + "\n";
    out += "shape:  " + describe_shape(c.shape) + "\n";
    out += "codes:  " + codes_text(c.codes) + "\n";
    out += "scales: " + describe_floats(c.scales) + "\n";
    out += "global: " + global_text(c.global) + "\n";
    out += "table:  " + table_text(c.table) + "\n";
    out += result_text(run_dequant(c), [](const std::vector<float>& v) { return ", values " + describe_floats(v); });
  } else if (target == "calibrate") {
    const CalibCase c = decode_calib(bytes);
    out += "scheme: " + describe_scheme(c.scheme) + "\n";
    out += "shape:  " + describe_shape(c.shape) + "\n";
    out += std::string("method: ") + (c.method == Calibration::minmax ? "minmax" : "absmean") + "\n";
    out += "data:   " + describe_floats(c.data) + "\n";
    out += result_text(run_calib(c), [](const QParams& q) {
      return ", scales " + describe_floats(q.scales) + "\n  global " + global_text(q.global);
    });
  } else if (target == "scheme_text") {
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    out += "text:   '" + escape(bytes) + "'\n";
    out += result_text(parse_scheme(text), [](const Scheme& s) { return ", prints as " + print_scheme(s); });
  } else if (target == "minifloat") {
    out += "values: " + describe_floats(decode_minifloat_values(bytes));
  } else {
    out = "unknown fuzz target '" + std::string(target) + "'; known:";
    for (std::string_view t : kTargets) out += " " + std::string(t);
  }
  return out;
}

}  // namespace qconform::fuzz
