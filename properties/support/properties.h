// The property bodies, parameterized by the implementation under test, so that ctest, the
// campaign and the mutant catalogue run exactly the same checks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "generators.h"
#include "qconform/corpus.h"
#include "qconform/implementation.h"

namespace qconform::props {

// Fails the property with the check's report and the case in SPEC text form, and records the
// case as a corpus file (corpus.h) so that the shrunk counterexample can be written as a
// regression. `regression` is evaluated only on failure.
#define QC_CHECK(report, case_text, regression)                                  \
  do {                                                                           \
    const std::string qc_report_ = (report);                                     \
    if (!qc_report_.empty()) {                                                   \
      ::qconform::corpus::record(regression);                                    \
      RC_FAIL(qc_report_ + "\n  case: " + (case_text));                          \
    }                                                                            \
  } while (0)

// Tags and classes of the generated mix (RapidCheck prints their distribution). A test that runs a
// body once per implementation tags only the first run of each case (`tag_cases`), so the
// distribution describes one case, not six concatenated.
inline thread_local bool tag_cases = true;
#define QC_TAG(...)                       \
  do {                                    \
    if (::qconform::props::tag_cases) RC_TAG(__VA_ARGS__); \
  } while (0)
#define QC_CLASSIFY(...)                  \
  do {                                    \
    if (::qconform::props::tag_cases) RC_CLASSIFY(__VA_ARGS__); \
  } while (0)

// Cases an implementation cannot be asked (a lookup table through an ABI without one).
inline bool askable(const Implementation& impl, const checks::QuantizeCase& c) {
  return impl.lookup_tables() || !c.table;
}

inline void quantize(const Implementation& impl) {
  const auto c = *gen::quantize_case({.valid_scheme = false, .exact_counts = false});
  if (!askable(impl, c)) return;
  QC_CLASSIFY(!validate_scheme(c.scheme).ok(), "invalid scheme");
  QC_CLASSIFY(c.scheme.two_level(), "two-level");
  QC_CHECK(checks::quantize(impl, c), checks::describe(c), corpus::quantize_case(c));
}

inline void dequantize(const Implementation& impl) {
  const auto c = *gen::quantize_case();
  if (!askable(impl, c)) return;
  QC_TAG(std::string(info(c.scheme.value).name));
  QC_CHECK(checks::dequantize(impl, c), checks::describe(c), corpus::quantize_case(c));
}

inline void layout(const Implementation& impl) {
  const auto c = *gen::quantize_case();
  if (!askable(impl, c)) return;
  const auto at = *rc::gen::arbitrary<std::size_t>();
  const auto mask = *rc::gen::inRange<int>(1, 256);
  QC_TAG(c.scheme.store.kind == StoreKind::native ? "native" : c.scheme.store.kind == StoreKind::packed_u32 ? "packed_u32" : "packed_native");
  QC_CHECK(checks::layout(impl, c, at, static_cast<std::uint8_t>(mask)), checks::describe(c), corpus::quantize_case(c));
}

inline void calibrate(const Implementation& impl) {
  auto c = *gen::quantize_case({.valid_scheme = false, .exact_counts = false});
  const auto method = *rc::gen::element(Calibration::minmax, Calibration::absmean);
  QC_TAG(method == Calibration::minmax ? "minmax" : "absmean");
  // One case in three: a large magnitude among tiny ones, where a float running sum drops the
  // tiny terms and only an exactly computed mean is right (SPEC §8, order-independence).
  if (*rc::gen::weightedElement<bool>({{1, true}, {2, false}})) {
    const float big = std::ldexp(1.0f, *rc::gen::inRange(-20, 21));
    for (std::size_t i = 0; i < c.data.size(); ++i) {
      c.data[i] = i % 4 == 0 ? big : std::ldexp(static_cast<float>(*rc::gen::inRange(1, 200)), -30) * big;
    }
    QC_TAG("cancellation");
  }
  QC_CHECK(checks::calibrate(impl, c, method), checks::describe(c), corpus::calibrate_case(c, method));
}

inline void round_up(const Implementation& impl) {
  const auto dtype = *gen::scale_dtype(true);
  const float s = *rc::gen::oneOf(gen::hard_scale(dtype == ScaleDtype::ue8m0 ? ScaleDtype::f16 : dtype),
                                  rc::gen::map(rc::gen::arbitrary<std::uint32_t>(), [](std::uint32_t b) {
                                    return std::fabs(gen::from_bits(b));
                                  }));
  QC_TAG(std::string(to_string(dtype)));
  QC_CHECK(checks::round_up(impl, s, dtype), gen::hex_case(s), corpus::round_up_case(s, dtype));
}

inline void minifloat(const Implementation& impl) {
  const Value v = *rc::gen::element(Value::e4m3, Value::e5m2, Value::e2m1);
  const float x = *gen::hard_float(1.0f, v);
  QC_TAG(std::string(info(v).name));
  QC_CHECK(checks::minifloat(impl, x, v), gen::hex_case(x), corpus::minifloat_case(x));
}

inline void error_contract(const Implementation& impl) {
  const auto c = *gen::quantize_case({.valid_scheme = false, .exact_counts = false});
  if (!askable(impl, c)) return;
  const auto want = checks::expected_error(c);
  QC_TAG(want ? std::string(to_string(*want)) : std::string("ok"));
  QC_CHECK(checks::error_contract(impl, c), checks::describe(c), corpus::quantize_case(c));
}

struct Property {
  const char* name;
  void (*body)(const Implementation&);
};

// The differential families, in the order the campaign runs them.
inline const std::vector<Property>& differential() {
  static const std::vector<Property> all{
      {"quantize", &quantize},   {"dequantize", &dequantize}, {"layout", &layout},
      {"calibrate", &calibrate}, {"round-up", &round_up},     {"minifloat", &minifloat},
      {"error-contract", &error_contract},
  };
  return all;
}

}  // namespace qconform::props
