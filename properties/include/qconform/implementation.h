// An implementation under test: whatever answers SPEC §9's operations. The reference, the
// optimized library on one SIMD target, a mutant or a plugin all look alike to the checks.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/reference.h"

namespace qconform {

enum class Op : unsigned {
  quantize = 1u << 0,
  dequantize = 1u << 1,
  calibrate = 1u << 2,
  pack = 1u << 3,
  unpack = 1u << 4,
  serialize = 1u << 5,
  parse = 1u << 6,
  round_up = 1u << 7,
  minifloat = 1u << 8,
  all = (1u << 9) - 1,
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Operations this implementation answers; checks skip the others (a plugin has two).
  [[nodiscard]] virtual unsigned ops() const { return static_cast<unsigned>(Op::all); }
  [[nodiscard]] bool supports(Op op) const { return (ops() & static_cast<unsigned>(op)) != 0; }
  // Whether lookup tables can be passed (the plugin ABI has none).
  [[nodiscard]] virtual bool lookup_tables() const { return true; }
  // Whether schemes reach it as their canonical text (the plugin ABI): a scheme model that no text
  // expresses (a block level with no dims, which only the fuzz producer builds) cannot be asked.
  [[nodiscard]] virtual bool text_schemes() const { return false; }

  [[nodiscard]] virtual Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                                 std::span<const float> data, std::span<const float> scales,
                                                 std::optional<float> global, Table table) const = 0;
  [[nodiscard]] virtual Result<std::vector<float>> dequantize(const QTensor& t, Table table) const = 0;
  [[nodiscard]] virtual Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                                  std::span<const float> data, Calibration method) const = 0;
  [[nodiscard]] virtual Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                                               std::span<const std::int32_t> codes) const = 0;
  [[nodiscard]] virtual Result<std::vector<std::int32_t>> unpack(const Scheme& s, std::span<const std::size_t> shape,
                                                                 std::span<const std::uint8_t> storage) const = 0;
  [[nodiscard]] virtual Result<std::vector<std::uint8_t>> serialize(const QTensor& t) const = 0;
  [[nodiscard]] virtual Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape,
                                              std::span<const std::uint8_t> bytes, Table table) const = 0;
  [[nodiscard]] virtual Result<float> round_up_scale(float s, ScaleDtype dtype) const = 0;
  // Dequantize of untrusted serialized bytes (SPEC §7's parse, then §5), answered with the
  // dequantize operation (Op::dequantize): what a plugin's dequantize is handed. By default this
  // implementation's parse, then its dequantize.
  [[nodiscard]] virtual Result<std::vector<float>> dequantize_bytes(const Scheme& s, std::span<const std::size_t> shape,
                                                                    std::span<const std::uint8_t> bytes,
                                                                    Table table) const {
    Result<QTensor> t = parse(s, shape, bytes, table);
    if (!t.ok()) return t.error();
    return dequantize(t.value(), table);
  }
  [[nodiscard]] virtual std::uint8_t encode_minifloat(float x, Value v) const = 0;
  [[nodiscard]] virtual float decode_minifloat(std::uint8_t code, Value v) const = 0;
};

// The reference behind the interface; mutants derive from it and override one thing.
class ReferenceImplementation : public Implementation {
 public:
  [[nodiscard]] std::string name() const override { return "reference"; }
  [[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const float> data, std::span<const float> scales,
                                         std::optional<float> global, Table table) const override {
    return qconform::quantize(s, shape, data, scales, global, table);
  }
  [[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table) const override {
    return qconform::dequantize(t, table);
  }
  [[nodiscard]] Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                          std::span<const float> data, Calibration method) const override {
    return qconform::calibrate(s, shape, data, method);
  }
  [[nodiscard]] Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                                       std::span<const std::int32_t> codes) const override {
    return qconform::pack(s, shape, codes);
  }
  [[nodiscard]] Result<std::vector<std::int32_t>> unpack(const Scheme& s, std::span<const std::size_t> shape,
                                                         std::span<const std::uint8_t> storage) const override {
    return qconform::unpack(s, shape, storage);
  }
  [[nodiscard]] Result<std::vector<std::uint8_t>> serialize(const QTensor& t) const override {
    return qconform::serialize(t);
  }
  [[nodiscard]] Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape,
                                      std::span<const std::uint8_t> bytes, Table table) const override {
    return qconform::parse(s, shape, bytes, table);
  }
  [[nodiscard]] Result<float> round_up_scale(float s, ScaleDtype dtype) const override {
    return qconform::round_up_scale(s, dtype);
  }
  [[nodiscard]] std::uint8_t encode_minifloat(float x, Value v) const override {
    return qconform::encode_minifloat(x, v);
  }
  [[nodiscard]] float decode_minifloat(std::uint8_t code, Value v) const override {
    return qconform::decode_minifloat(code, v);
  }
};

// Every implementation this build can check: the reference, then (when built) the optimized
// library on each SIMD target this CPU supports, named "optimized:<target>".
[[nodiscard]] std::vector<std::unique_ptr<Implementation>> available_implementations();
// By name: "reference", "optimized" (best target), "optimized:<target>"; nullptr if unknown.
[[nodiscard]] std::unique_ptr<Implementation> make_implementation(std::string_view name);
// Names accepted by make_implementation, for usage messages.
[[nodiscard]] std::vector<std::string> implementation_names();

}  // namespace qconform
