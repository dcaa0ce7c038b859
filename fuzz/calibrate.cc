// Fuzz target calibrate: fuzzed tensors and schemes through minmax and absmean calibration.
//
// Input: the producer's CalibCase (scheme, shape, method, data; fuzz/producer.h). Invariants,
// each an abort:
//  - every implementation gives the same error kind or the same scales and global bit for bit;
//  - successful calibration gives parameters quantize accepts (SPEC §8 feeds §5): finite
//    non-negative scales, a global exactly when the scheme is two-level and then >= FLT_MIN, and
//    quantize of the same data with them succeeds (lookup schemes get a zero table of the right
//    size) identically on every implementation.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check.h"
#include "impls.h"
#include "producer.h"
#include "qconform/fuzz_producer.h"

using namespace qconform;
using namespace qconform::fuzz;

namespace {

// The one-pass path must be serialize(quantize(s, shape, data, calibrate(...))) exactly (no
// table: lookup schemes give missing-lookup-table), with trailing-bytes for one byte more.
void check_calibrate_quantize_into(const CalibCase& c, const Result<QParams>& ref) {
  const Scheme& s = c.scheme.scheme;
  std::optional<Error> want_error;
  std::vector<std::uint8_t> want;
  if (!ref.ok()) {
    want_error = ref.error();
  } else {
    const Result<QTensor> q = quantize(s, c.shape, c.data, ref->scales, ref->global);
    if (!q.ok()) {
      want_error = q.error();
    } else {
      want = serialize(q.value()).value();
    }
  }
  for (const Impl& impl : impls()) {
    if (!impl.calibrate_quantize_into) continue;
    std::vector<std::uint8_t> buf(want.size() + 1, 0x5A);
    const auto run = [&](std::span<std::uint8_t> out) {
      return impl.calibrate_quantize_into(s, c.shape, c.data, c.method, out);
    };
    if (want_error) {
      const Status st = run(std::span<std::uint8_t>(buf).first(0));
      FUZZ_CHECK(!st.ok() && st.kind() == want_error->kind, impl.name, " calibrate_quantize_into gave ",
                 kind_text(st), ", the composition gives ", to_string(want_error->kind));
      // Into a buffer of the layout's size too: an error of the data itself (nan-input,
      // calibration-overflow) is then found by the one-pass kernels, where a buffer of the wrong
      // size sends the call to the reference before any kernel runs.
      const Result<Layout> layout = validate_scheme(s).ok() ? make_layout(s, c.shape, c.data.size())
                                                            : Result<Layout>(want_error.value());
      if (layout.ok()) {  // (its element count is then the data's, which the decoder bounds)
        std::vector<std::uint8_t> sized(layout->total_bytes, 0x5A);
        const Status full = run(sized);
        FUZZ_CHECK(!full.ok() && full.kind() == want_error->kind, impl.name,
                   " calibrate_quantize_into into a buffer of the layout's size gave ", kind_text(full),
                   ", the composition gives ", to_string(want_error->kind));
      }
      continue;
    }
    const Status exact = run(std::span<std::uint8_t>(buf).first(want.size()));
    FUZZ_CHECK(exact.ok(), impl.name, " calibrate_quantize_into failed where the composition succeeds: ",
               kind_text(exact));
    FUZZ_CHECK(std::equal(want.begin(), want.end(), buf.begin()), impl.name,
               " calibrate_quantize_into bytes differ:\n  want ", hex_bytes(want), "\n  got  ",
               hex_bytes(std::span<const std::uint8_t>(buf).first(want.size())));
    const Status longer = run(buf);
    FUZZ_CHECK(!longer.ok() && longer.kind() == ErrorKind::trailing_bytes, impl.name,
               " calibrate_quantize_into into one byte more gave ", kind_text(longer));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const CalibCase c = decode_calib(input);
  const Context ctx([input] { return describe("calibrate", input); });
  if (c.scheme.text_error) {
    FUZZ_CHECK(c.scheme.text_error->kind == ErrorKind::invalid_scheme);
    return 0;
  }
  const Scheme& s = c.scheme.scheme;

  std::vector<Outcome> outs;
  const std::vector<Result<QParams>> results = run_all<QParams>(
      [&](const Impl& impl) { return impl.calibrate(s, c.shape, c.data, c.method); }, outs);
  check_agree(c.method == Calibration::minmax ? "calibrate minmax" : "calibrate absmean", outs);
  const Result<QParams>& ref = results.front();
  check_calibrate_quantize_into(c, ref);
  if (!ref.ok()) return 0;

  const QParams& q = ref.value();
  FUZZ_CHECK(q.global.has_value() == s.two_level(), "global present: ", q.global.has_value(),
             ", two-level: ", s.two_level());
  if (q.global) {
    FUZZ_CHECK(std::isfinite(*q.global) && *q.global >= std::numeric_limits<float>::min(), "global ",
               hexf(*q.global));
  }
  for (std::size_t k = 0; k < q.scales.size(); ++k) {
    FUZZ_CHECK(std::isfinite(q.scales[k]) && !std::signbit(q.scales[k]), "scale [", k, "] ", hexf(q.scales[k]));
  }

  std::vector<float> zeros;
  Table table = std::nullopt;
  if (s.mode == Mode::lookup) {
    zeros.assign(std::size_t{1} << info(s.value).bits, 0.0f);
    table = std::span<const float>(zeros);
  }
  std::vector<Outcome> quant_outs;
  const std::vector<Result<QTensor>> quants = run_all<QTensor>(
      [&](const Impl& impl) { return impl.quantize(s, c.shape, c.data, q.scales, q.global, table); }, quant_outs);
  check_agree("quantize with calibrated parameters", quant_outs, [&](const Outcome& a, const Outcome& b) {
    return explain_quantize(quants, quant_outs, c.data, q.scales, a, b);
  });
  FUZZ_CHECK(quants.front().ok(), "calibrated parameters rejected by quantize: ", to_string(quants.front().kind()),
             ": ", quants.front().error().message);
  return 0;
}
