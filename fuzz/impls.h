// Every implementation the fuzz targets compare: the reference first, then the optimized library
// once per SIMD target this CPU supports (not only the best one, STYLE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check.h"
#include "qconform/reference.h"

namespace qconform::fuzz {

// The operations of SPEC §9 with the reference's signatures.
struct Impl {
  std::string name;
  std::function<Result<QTensor>(const Scheme&, std::span<const std::size_t>, std::span<const float>,
                                std::span<const float>, std::optional<float>, Table)>
      quantize;
  std::function<Result<std::vector<float>>(const QTensor&, Table)> dequantize;
  std::function<Result<QParams>(const Scheme&, std::span<const std::size_t>, std::span<const float>, Calibration)>
      calibrate;
  std::function<Result<std::vector<std::uint8_t>>(const QTensor&)> serialize;
  std::function<Result<QTensor>(const Scheme&, std::span<const std::size_t>, std::span<const std::uint8_t>, Table)>
      parse;
  std::function<Result<std::vector<std::uint8_t>>(const Scheme&, std::span<const std::size_t>,
                                                  std::span<const std::int32_t>)>
      pack;
  std::function<Result<std::vector<std::int32_t>>(const Scheme&, std::span<const std::size_t>,
                                                  std::span<const std::uint8_t>)>
      unpack;
  // The allocation-free compositions of the optimized library (empty for the reference):
  // serialize(quantize(...)), serialize(quantize(calibrate(...))) and dequantize(parse(...)) into
  // a caller's buffer.
  std::function<Status(const Scheme&, std::span<const std::size_t>, std::span<const float>, std::span<const float>,
                       std::optional<float>, std::span<std::uint8_t>, Table)>
      quantize_into;
  std::function<Status(const Scheme&, std::span<const std::size_t>, std::span<const float>, Calibration,
                       std::span<std::uint8_t>)>
      calibrate_quantize_into;
  std::function<Status(const Scheme&, std::span<const std::size_t>, std::span<const std::uint8_t>, std::span<float>,
                       Table)>
      dequantize_from;
};

// Built once: "reference", then "optimized:<target>" for each supported target when the
// optimized library is compiled in (QCONFORM_FUZZ_HAVE_OPTIMIZED).
[[nodiscard]] const std::vector<Impl>& impls();

// Canonical encodings for comparing results bit for bit: floats by pattern, codes as int32 LE.
[[nodiscard]] std::vector<std::uint8_t> bits_of(const QTensor& t);
[[nodiscard]] std::vector<std::uint8_t> bits_of(const std::vector<float>& v);
[[nodiscard]] std::vector<std::uint8_t> bits_of(const QParams& q);
[[nodiscard]] std::vector<std::uint8_t> bits_of(const std::vector<std::uint8_t>& b);
[[nodiscard]] std::vector<std::uint8_t> bits_of(const std::vector<std::int32_t>& codes);

// For two quantize outcomes that differ: the first differing stored scale and the first
// differing code, with the element's input, block, stored scale and global (hex floats).
// `results` and `outcomes` are run_all's, in the same order.
[[nodiscard]] std::string explain_quantize(std::span<const Result<QTensor>> results, std::span<const Outcome> outcomes,
                                           std::span<const float> data, std::span<const float> scales,
                                           const Outcome& a, const Outcome& b);

// "ok" or the error kind's name, for messages.
[[nodiscard]] std::string kind_text(const Status& s);
template <class T>
[[nodiscard]] std::string kind_text(const Result<T>& r) {
  return r.ok() ? std::string("ok") : std::string(to_string(r.kind()));
}

// Runs `call(impl)` on every implementation; the results in impls() order, and their outcomes.
template <class T, class Fn>
[[nodiscard]] std::vector<Result<T>> run_all(Fn&& call, std::vector<Outcome>& outcomes) {
  std::vector<Result<T>> results;
  for (const Impl& impl : impls()) {
    results.push_back(call(impl));
    outcomes.push_back(outcome_of<T>(impl.name, results.back(), [](const T& v) { return bits_of(v); }));
  }
  return results;
}

}  // namespace qconform::fuzz
