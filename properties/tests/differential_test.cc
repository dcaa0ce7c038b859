// Differential properties: every implementation under test gives the reference's bits or its
// error kind, on every SIMD target separately.
#include "support.h"

using namespace qconform;

RC_GTEST_PROP(Differential, Quantize, ()) {
  const auto c = *gen::quantize_case({.valid_scheme = false, .exact_counts = false});
  RC_CLASSIFY(!validate_scheme(c.scheme).ok(), "invalid scheme");
  RC_CLASSIFY(c.scheme.two_level(), "two-level");
  for (const auto& impl : test::under_test()) QC_CHECK(checks::quantize(*impl, c), checks::describe(c));
}

RC_GTEST_PROP(Differential, Dequantize, ()) {
  const auto c = *gen::quantize_case();
  for (const auto& impl : test::under_test()) QC_CHECK(checks::dequantize(*impl, c), checks::describe(c));
}

RC_GTEST_PROP(Differential, PackUnpackSerializeParse, ()) {
  const auto c = *gen::quantize_case();
  const auto at = *rc::gen::arbitrary<std::size_t>();
  const auto mask = *rc::gen::inRange<int>(1, 256);
  for (const auto& impl : test::under_test()) {
    QC_CHECK(checks::layout(*impl, c, at, static_cast<std::uint8_t>(mask)), checks::describe(c));
  }
}

RC_GTEST_PROP(Differential, Calibrate, ()) {
  const auto c = *gen::quantize_case({.valid_scheme = false, .exact_counts = false});
  const auto method = *rc::gen::element(Calibration::minmax, Calibration::absmean);
  for (const auto& impl : test::under_test()) QC_CHECK(checks::calibrate(*impl, c, method), checks::describe(c));
}

RC_GTEST_PROP(Differential, RoundUpScale, ()) {
  const auto dtype = *gen::scale_dtype(true);
  const float s = *rc::gen::oneOf(gen::hard_scale(dtype == ScaleDtype::ue8m0 ? ScaleDtype::f16 : dtype),
                                  rc::gen::map(rc::gen::arbitrary<std::uint32_t>(), [](std::uint32_t b) {
                                    return std::fabs(gen::from_bits(b));
                                  }));
  for (const auto& impl : test::under_test()) QC_CHECK(checks::round_up(*impl, s, dtype), gen::hex_case(s));
}

RC_GTEST_PROP(Differential, Minifloat, ()) {
  const Value v = *rc::gen::element(Value::e4m3, Value::e5m2, Value::e2m1);
  const float x = *gen::hard_float(1.0f, v);
  for (const auto& impl : test::under_test()) QC_CHECK(checks::minifloat(*impl, x, v), gen::hex_case(x));
}

TEST(Differential, EveryImplementationIsExercised) {
  // A build with the optimized library must put each supported target under test.
  const auto names = implementation_names();
  for (const auto& n : names) {
    if (n == "reference" || n == "optimized") continue;
    bool found = false;
    for (const auto& impl : test::under_test()) found = found || impl->name() == n;
    EXPECT_TRUE(found) << n << " is available but not under test";
  }
  std::printf("implementations under test: %zu\n", test::under_test().size());
}
