// Environment property: identical bits under all four rounding modes and FTZ/DAZ.
#include <cfenv>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "support.h"

using namespace qconform;

namespace {

struct Outcome {
  std::vector<std::int32_t> codes;
  std::vector<std::uint32_t> bits;  // stored scales, dequantized values, calibrated scales
  std::string kind;
  bool operator==(const Outcome&) const = default;
};

Outcome run(const checks::QuantizeCase& c) {
  Outcome o;
  const auto q = quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  if (!q.ok()) {
    o.kind = to_string(q.kind());
    return o;
  }
  o.codes = q->codes;
  for (float s : q->scales) o.bits.push_back(std::bit_cast<std::uint32_t>(s));
  if (auto d = dequantize(q.value(), c.table_span()); d.ok()) {
    for (float v : d.value()) o.bits.push_back(std::bit_cast<std::uint32_t>(v));
  }
  for (auto m : {Calibration::minmax, Calibration::absmean}) {
    if (auto k = calibrate(c.scheme, c.shape, c.data, m); k.ok()) {
      for (float v : k->scales) o.bits.push_back(std::bit_cast<std::uint32_t>(v));
    }
  }
  return o;
}

}  // namespace

RC_GTEST_PROP(Environment, RoundingModesAndFlushToZero, ()) {
  const auto c = *gen::quantize_case();
  const Outcome expected = run(c);
  const int mode = *rc::gen::element(FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO);
  const bool ftz = *rc::gen::arbitrary<bool>();
  RC_TAG(mode == FE_TONEAREST ? "nearest" : mode == FE_UPWARD ? "upward" : mode == FE_DOWNWARD ? "downward" : "toward-zero");
  RC_CLASSIFY(ftz, "FTZ+DAZ");
  const int saved_round = std::fegetround();
  std::fesetround(mode);
#if defined(__x86_64__) || defined(__i386__)
  const unsigned saved_csr = _mm_getcsr();
  if (ftz) _mm_setcsr(_mm_getcsr() | 0x8040u);
  const unsigned caller_csr = _mm_getcsr();
#endif
  const int caller_round = std::fegetround();
  const Outcome got = run(c);
  std::vector<Outcome> others;
  for (const auto& impl : test::under_test()) {
    Outcome o;
    const auto q = impl->quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
    if (q.ok()) o.codes = q->codes;
    others.push_back(o);
  }
  const int after_round = std::fegetround();
#if defined(__x86_64__) || defined(__i386__)
  const unsigned after_csr = _mm_getcsr();
  _mm_setcsr(saved_csr);
  RC_ASSERT((after_csr & ~0x3Fu) == (caller_csr & ~0x3Fu));  // the caller's environment is restored
#endif
  std::fesetround(saved_round);
  RC_ASSERT(after_round == caller_round);
  RC_ASSERT(got == expected);
  for (const auto& o : others) {
    if (expected.kind.empty()) RC_ASSERT(o.codes == expected.codes);
  }
}
