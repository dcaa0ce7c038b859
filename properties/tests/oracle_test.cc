// Oracle properties: the reference against exact rational arithmetic (Boost.Multiprecision).
#include "support.h"

using namespace qconform;

RC_GTEST_PROP(Oracle, Quantize, ()) {
  const auto c = *gen::quantize_case({.valid_scheme = true, .exact_counts = true, .allow_nan = false});
  RC_CLASSIFY(info(c.scheme.value).minifloat, "minifloat");
  RC_CLASSIFY(c.scheme.mode == Mode::lookup, "lookup");
  RC_CLASSIFY(c.scheme.block.has_value(), "per-block");
  RC_CLASSIFY(c.scheme.two_level(), "two-level");
  QC_CHECK(checks::oracle_quantize(c), checks::describe(c), corpus::quantize_case(c));
}

RC_GTEST_PROP(Oracle, Calibrate, ()) {
  auto c = *gen::quantize_case({.valid_scheme = true, .exact_counts = true, .allow_nan = false});
  const auto method = *rc::gen::element(Calibration::minmax, Calibration::absmean);
  RC_TAG(method == Calibration::minmax ? "minmax" : "absmean");
  QC_CHECK(checks::oracle_calibrate(c, method), checks::describe(c), corpus::calibrate_case(c, method));
}

RC_GTEST_PROP(Oracle, RoundUpScale, ()) {
  const auto dtype = *rc::gen::element(ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3);
  const float s = *rc::gen::oneOf(gen::hard_scale(dtype), rc::gen::map(rc::gen::arbitrary<std::uint32_t>(), [](std::uint32_t b) {
    const float x = std::fabs(gen::from_bits(b));
    return std::isnan(x) ? 0.0f : x;
  }));
  RC_CLASSIFY(s == 0.0f, "zero");
  RC_CLASSIFY(s > 0.0f && s < 0x1p-126f, "f32 subnormal");
  QC_CHECK(checks::oracle_round_up(s, dtype), gen::hex_case(s), corpus::round_up_case(s, dtype));
}

RC_GTEST_PROP(Oracle, Minifloat, ()) {
  const Value v = *rc::gen::element(Value::e4m3, Value::e5m2, Value::e2m1);
  const float x = *gen::hard_float(*rc::gen::element(1.0f, 0.25f, 8.0f), v);
  RC_CLASSIFY(std::isinf(x), "inf");
  RC_CLASSIFY(x == 0.0f, "zero");
  QC_CHECK(checks::oracle_minifloat(x, v), gen::hex_case(x), corpus::minifloat_case(x));
}

