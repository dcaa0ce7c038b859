// Error-contract properties: each kind of SPEC §3 exactly when its condition holds, in order.
#include "support.h"

using namespace qconform;

RC_GTEST_PROP(ErrorContract, KindsInOrder, ()) {
  const auto c = *gen::quantize_case({.valid_scheme = false, .exact_counts = false});
  const auto want = checks::expected_error(c);
  RC_TAG(want ? std::string(to_string(*want)) : std::string("ok"));
  ReferenceImplementation ref;
  QC_CHECK(checks::error_contract(ref, c), checks::describe(c), corpus::quantize_case(c));
  for (const auto& impl : test::under_test()) QC_CHECK(checks::error_contract(*impl, c), checks::describe(c), corpus::quantize_case(c));
}

// The seed: a valid two-level scheme without a global is missing-global-scale, whatever else
// is wrong with the tensor, the scales, the table or the data.
RC_GTEST_PROP(ErrorContract, TwoLevelWithoutGlobalIsMissingGlobalScale, ()) {
  auto c = *gen::quantize_case({.valid_scheme = true, .exact_counts = false});
  RC_PRE(c.scheme.two_level());
  RC_TAG(std::string(info(c.scheme.value).name));
  c.global.reset();
  if (*rc::gen::arbitrary<bool>()) c.data.push_back(std::numeric_limits<float>::quiet_NaN());
  if (*rc::gen::arbitrary<bool>()) c.scales.push_back(-1.0f);
  if (*rc::gen::arbitrary<bool>()) c.shape.push_back(*rc::gen::inRange<std::size_t>(0, 1000));
  if (*rc::gen::arbitrary<bool>()) c.table = std::vector<float>{std::numeric_limits<float>::quiet_NaN()};
  for (const auto& impl : test::under_test()) {
    const auto r = impl->quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
    RC_ASSERT(!r.ok());
    RC_ASSERT(r.kind() == ErrorKind::missing_global_scale);
  }
  const auto r = qconform::quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  RC_ASSERT(!r.ok());
  RC_ASSERT(r.kind() == ErrorKind::missing_global_scale);
}

// Any scheme text: an invalid-scheme error or a scheme whose canonical print parses back.
RC_GTEST_PROP(ErrorContract, SchemeTextRoundTrip, (const Scheme& s)) {
  RC_TAG(std::string(info(s.value).name));
  const std::string text = print_scheme(s);
  const auto back = parse_scheme(text);
  RC_ASSERT(back.ok());
  RC_ASSERT(back.value() == s);
  RC_ASSERT(print_scheme(back.value()) == text);
}

RC_GTEST_PROP(ErrorContract, ArbitraryTextNeverCrashes, ()) {
  const auto text = *rc::gen::oneOf(rc::gen::arbitrary<std::string>(),
                                    rc::gen::map(rc::gen::arbitrary<Scheme>(), [](const Scheme& s) {
                                      std::string t = print_scheme(s);
                                      return t.substr(0, t.size() / 2) + "x" + t.substr(t.size() / 2);
                                    }));
  const auto r = parse_scheme(text);
  RC_TAG(r.ok() ? "parses" : "invalid-scheme");
  if (!r.ok()) {
    RC_ASSERT(r.kind() == ErrorKind::invalid_scheme);
  } else {
    RC_ASSERT(parse_scheme(print_scheme(r.value())).value() == r.value());
  }
}
