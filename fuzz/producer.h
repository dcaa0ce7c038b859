// The fuzz data producer (zstd's fuzz_data_producer, made two-way): decodes raw fuzzer bytes
// into schemes, shapes, scales and tensors, and encodes a chosen case back to bytes so the seed
// corpus is written by the same format the targets read.
//
// Bytes are read front to back; past the end every read yields zero bits, so any input decodes
// to some case and a short input to the simplest one. Every field ranges over its whole domain,
// invalid values included (block dims 0..255 with 0..7 dims, ue8m0, narrow globals, lookup with
// the wrong store, D beyond the rank, rank 9+, huge dims), because each invalid value must come
// back as its typed error. Counts are usually right and sometimes off by one, so the deep paths
// are reached quickly and the mismatch paths still are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/reference.h"

namespace qconform::fuzz {

// Decoded tensors stay small so a run is fast; only deliberately huge shapes go past this, and
// those must be rejected before anything of their size is allocated.
inline constexpr std::size_t kMaxElements = 4096;
inline constexpr std::size_t kMaxTable = 300;
inline constexpr std::size_t kMaxBuffer = std::size_t{1} << 16;

class Producer {
 public:
  explicit Producer(std::span<const std::uint8_t> data) noexcept : data_(data) {}

  // n little-endian bytes (n <= 8), zero past the end.
  [[nodiscard]] std::uint64_t raw(unsigned n) noexcept;
  // lo + raw % (hi - lo + 1), reading as few bytes as the span needs.
  [[nodiscard]] std::uint64_t range(std::uint64_t lo, std::uint64_t hi) noexcept;
  [[nodiscard]] bool flag() noexcept { return (raw(1) & 1) != 0; }
  // A raw 32-bit pattern: NaN payloads, ±Inf, -0 and subnormals all occur.
  [[nodiscard]] float f32() noexcept;
  // One tag byte: usually a raw pattern follows; tags 0xC0.. pick a special value (boundaries,
  // ties, NaN, ±Inf, ±0, subnormals) so the fuzzer reaches them in one byte.
  [[nodiscard]] float value() noexcept;
  [[nodiscard]] std::string text() noexcept;  // a length byte, then that many characters
  [[nodiscard]] std::span<const std::uint8_t> rest() noexcept;
  [[nodiscard]] std::size_t remaining() const noexcept { return data_.size() - pos_; }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

// The inverse of Producer: each call writes the bytes that the same Producer call reads back.
class Writer {
 public:
  void raw(std::uint64_t v, unsigned n);
  void range(std::uint64_t v, std::uint64_t lo, std::uint64_t hi);
  void flag(bool b) { raw(b ? 1 : 0, 1); }
  void f32(float x);
  void value(float x);  // a special tag when x is one (bit for bit), else a raw pattern
  void text(std::string_view s);
  void bytes(std::span<const std::uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); }
  std::vector<std::uint8_t> out;
};

// The special values behind value()'s tags.
[[nodiscard]] std::span<const std::uint32_t> special_values() noexcept;

// A scheme as the model (any field value) or, rarely, as text that may not parse.
struct SchemeCase {
  Scheme scheme;
  std::optional<std::string> text;     // set when the scheme came as text
  std::optional<Error> text_error;     // parse_scheme's error for that text (invalid-scheme)
};

struct QuantCase {  // scheme_qparams
  SchemeCase scheme;
  Shape shape;
  std::vector<float> scales;
  std::optional<float> global;
  std::optional<std::vector<float>> table;
  std::vector<float> data;
};

struct ParseCase {  // parse_bytes
  SchemeCase scheme;
  Shape shape;
  std::optional<std::vector<float>> table;
  std::vector<std::uint8_t> bytes;
};

struct DequantCase {  // dequantize
  SchemeCase scheme;
  Shape shape;
  std::vector<std::int32_t> codes;
  std::vector<float> scales;
  std::optional<float> global;
  std::optional<std::vector<float>> table;
};

struct CalibCase {  // calibrate
  SchemeCase scheme;
  Shape shape;
  Calibration method = Calibration::minmax;
  std::vector<float> data;
};

// target_bits: which value the optimized library's trailing `target` argument gets, then a
// scheme_qparams case. The pick is a byte (mod 4), the argument 8 bytes; the target maps them to
// a value (fuzz/target_bits.cc): 0, the compiled target with index arg mod their count, one bit
// (1 << arg mod 64), or arg itself.
enum class TargetPick : std::uint8_t { best, compiled, bit, raw };
struct TargetCase {
  TargetPick pick = TargetPick::best;
  std::uint64_t arg = 0;
  QuantCase quant;
};

[[nodiscard]] SchemeCase decode_scheme(Producer& p);
void encode_scheme(Writer& w, const SchemeCase& s);
[[nodiscard]] Shape decode_shape(Producer& p);
void encode_shape(Writer& w, const Shape& shape);

[[nodiscard]] QuantCase decode_quant(std::span<const std::uint8_t> data);
[[nodiscard]] std::vector<std::uint8_t> encode(const QuantCase& c);
[[nodiscard]] ParseCase decode_parse(std::span<const std::uint8_t> data);
[[nodiscard]] std::vector<std::uint8_t> encode(const ParseCase& c);
[[nodiscard]] DequantCase decode_dequant(std::span<const std::uint8_t> data);
[[nodiscard]] std::vector<std::uint8_t> encode(const DequantCase& c);
[[nodiscard]] CalibCase decode_calib(std::span<const std::uint8_t> data);
[[nodiscard]] std::vector<std::uint8_t> encode(const CalibCase& c);
[[nodiscard]] TargetCase decode_target(std::span<const std::uint8_t> data);
[[nodiscard]] std::vector<std::uint8_t> encode(const TargetCase& c);
// minifloat: a run of value()s, at most kMaxMinifloatValues.
inline constexpr std::size_t kMaxMinifloatValues = 64;
[[nodiscard]] std::vector<float> decode_minifloat_values(std::span<const std::uint8_t> data);
[[nodiscard]] std::vector<std::uint8_t> encode_minifloat_values(std::span<const float> xs);

// Bitwise equality of decoded cases (floats by pattern), for the encoder's round-trip check.
[[nodiscard]] bool same_case(const QuantCase& a, const QuantCase& b);
[[nodiscard]] bool same_case(const ParseCase& a, const ParseCase& b);
[[nodiscard]] bool same_case(const DequantCase& a, const DequantCase& b);
[[nodiscard]] bool same_case(const CalibCase& a, const CalibCase& b);
[[nodiscard]] bool same_case(const TargetCase& a, const TargetCase& b);

// Element count of a shape, nullopt on overflow.
[[nodiscard]] std::optional<std::size_t> element_count(std::span<const std::size_t> shape) noexcept;
// The scale count quantize expects for this scheme and shape (1 when it has none to give).
[[nodiscard]] std::size_t expected_scale_count(const Scheme& s, std::span<const std::size_t> shape);

// Text for humans: every part of a case, floats as hex floats with their bit patterns.
[[nodiscard]] std::string describe_scheme(const SchemeCase& s);
[[nodiscard]] std::string describe_shape(std::span<const std::size_t> shape);
[[nodiscard]] std::string describe_floats(std::span<const float> xs, std::size_t limit = 64);
[[nodiscard]] std::string describe_pick(const TargetCase& c);

}  // namespace qconform::fuzz
