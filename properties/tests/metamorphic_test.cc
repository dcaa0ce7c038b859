// Metamorphic properties of the reference (and each implementation under test through the
// differential checks): symmetry, scaling, idempotence, monotonicity, error bound, round trips.
#include <cfloat>

#include "support.h"

using namespace qconform;

namespace {

Scheme per_tensor(Value v, StoreKind store = StoreKind::native) {
  Scheme s;
  s.value = v;
  s.store = Store{store, 0};
  return s;
}

}  // namespace

RC_GTEST_PROP(Metamorphic, NegationFlipsTheCode, ()) {
  const Value v = *rc::gen::element(Value::q8s, Value::q4s, Value::q2s, Value::e4m3, Value::e5m2, Value::e2m1);
  const float scale = *gen::hard_scale(ScaleDtype::f32);
  const float x = *gen::hard_float(scale == 0.0f ? 0.1f : scale, v);
  RC_PRE(!std::isnan(x));
  RC_TAG(std::string(info(v).name));
  const Shape shape{1};
  const std::vector<float> sc{scale};
  const auto a = quantize(per_tensor(v), shape, std::vector<float>{x}, sc, std::nullopt);
  const auto b = quantize(per_tensor(v), shape, std::vector<float>{-x}, sc, std::nullopt);
  RC_ASSERT(a.ok() && b.ok());
  if (info(v).minifloat) {
    RC_ASSERT(a->codes[0] == (b->codes[0] ^ (1 << (info(v).bits - 1))));
  } else {
    RC_ASSERT(a->codes[0] == -b->codes[0]);
  }
}

RC_GTEST_PROP(Metamorphic, PowerOfTwoScalingKeepsCodes, ()) {
  const Value v = *gen::value();
  const int k = *rc::gen::inRange(-20, 21);
  const float scale = static_cast<float>(*rc::gen::inRange(1, 1 << 20)) * 0x1p-16f;
  const float x = *gen::hard_float(scale, v);
  // Away from under- and overflow: every operand and the quotient stay normal after scaling.
  RC_PRE(std::isfinite(x) && (x == 0.0f || (std::fabs(x) > 0x1p-100f && std::fabs(x) < 0x1p100f)));
  RC_TAG(std::string(info(v).name));
  const Shape shape{1};
  const auto a = quantize(per_tensor(v), shape, std::vector<float>{x}, std::vector<float>{scale}, std::nullopt);
  const auto b = quantize(per_tensor(v), shape, std::vector<float>{std::ldexp(x, k)},
                          std::vector<float>{std::ldexp(scale, k)}, std::nullopt);
  RC_ASSERT(a.ok() && b.ok());
  RC_ASSERT(a->codes == b->codes);
}

RC_GTEST_PROP(Metamorphic, RequantizingTheDequantizedGivesTheCodes, ()) {
  auto c = *gen::quantize_case({.valid_scheme = true, .exact_counts = true, .allow_nan = false});
  RC_PRE(c.scheme.mode == Mode::symmetric);
  RC_TAG(std::string(info(c.scheme.value).name));
  const auto q = quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  RC_PRE(q.ok());
  const auto x = dequantize(q.value());
  RC_ASSERT(x.ok());
  for (float v : x.value()) RC_PRE(std::isfinite(v));  // away from overflow
  // Requantize with the stored scales (already on the grid, so rounding up leaves them).
  const auto q2 = quantize(c.scheme, c.shape, x.value(), q->scales, q->global, c.table_span());
  RC_ASSERT(q2.ok());
  for (std::size_t i = 0; i < q->codes.size(); ++i) {
    if (info(c.scheme.value).minifloat) {
      // -0 and +0 both dequantize to a zero whose sign survives, so codes match exactly.
      RC_ASSERT(q->codes[i] == q2->codes[i]);
    } else {
      RC_ASSERT(q->codes[i] == q2->codes[i]);
    }
  }
}

RC_GTEST_PROP(Metamorphic, MonotonicInX, ()) {
  const Value v = *gen::value();
  const float scale = *gen::hard_scale(ScaleDtype::f32);
  float a = *gen::hard_float(scale == 0.0f ? 0.1f : scale, v);
  float b = *gen::hard_float(scale == 0.0f ? 0.1f : scale, v);
  RC_PRE(!std::isnan(a) && !std::isnan(b));
  if (b < a) std::swap(a, b);
  RC_TAG(std::string(info(v).name));
  const auto q = quantize(per_tensor(v), Shape{2}, std::vector<float>{a, b}, std::vector<float>{scale}, std::nullopt);
  RC_ASSERT(q.ok());
  const float da = decode_value(q->codes[0], v, Mode::symmetric, std::nullopt);
  const float db = decode_value(q->codes[1], v, Mode::symmetric, std::nullopt);
  RC_ASSERT(da <= db);
}

RC_GTEST_PROP(Metamorphic, ErrorAtMostHalfAStepInsideTheRange, ()) {
  const Value v = *rc::gen::element(Value::q8f, Value::q8s, Value::q4f, Value::q4s, Value::q2f, Value::q2s);
  const float scale = static_cast<float>(*rc::gen::inRange(1, 1 << 24)) * 0x1p-20f;
  const float x = *gen::hard_float(scale, v);
  RC_PRE(std::isfinite(x) && std::fabs(x) < 0x1p100f);
  const double lo = static_cast<double>(info(v).lo) * scale, hi = static_cast<double>(info(v).hi) * scale;
  RC_PRE(static_cast<double>(x) >= lo && static_cast<double>(x) <= hi);
  RC_TAG(std::string(info(v).name));
  const auto q = quantize(per_tensor(v), Shape{1}, std::vector<float>{x}, std::vector<float>{scale}, std::nullopt);
  RC_ASSERT(q.ok());
  const auto xd = dequantize(q.value());
  RC_ASSERT(xd.ok());
  // Half a step, plus the two roundings of fl(x / eff) and fl(eff * q): each moves the result by
  // at most half an f32 ulp of a value no larger than max(|x|, |x'|) + scale.
  const double xp = static_cast<double>(xd.value()[0]);
  const double err = std::fabs(static_cast<double>(x) - xp);
  const double slack = 0x1p-22 * (std::max(std::fabs(static_cast<double>(x)), std::fabs(xp)) + static_cast<double>(scale));
  RC_ASSERT(err <= static_cast<double>(scale) * 0.5 + slack);
}

RC_GTEST_PROP(Metamorphic, PackUnpackRoundTrip, ()) {
  const auto c = *gen::quantize_case({.valid_scheme = true, .exact_counts = true, .allow_nan = false});
  const auto q = quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  RC_PRE(q.ok());
  RC_TAG(std::string(info(c.scheme.value).name));
  const auto packed = pack(c.scheme, c.shape, q->codes);
  RC_ASSERT(packed.ok());
  const auto back = unpack(c.scheme, c.shape, packed.value());
  RC_ASSERT(back.ok());
  RC_ASSERT(back.value() == q->codes);
}

RC_GTEST_PROP(Metamorphic, SerializeParseRoundTrip, ()) {
  const auto c = *gen::quantize_case({.valid_scheme = true, .exact_counts = true, .allow_nan = false});
  const auto q = quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  RC_PRE(q.ok());
  RC_TAG(std::string(info(c.scheme.value).name));
  const auto bytes = serialize(q.value());
  RC_ASSERT(bytes.ok());
  const auto t = parse(c.scheme, c.shape, bytes.value(), c.table_span());
  RC_ASSERT(t.ok());
  RC_ASSERT(t.value() == q.value());
  // And any byte string that parses serializes back to itself.
  auto b = bytes.value();
  if (!b.empty()) b[*rc::gen::inRange<std::size_t>(0, b.size())] ^= static_cast<std::uint8_t>(*rc::gen::inRange(1, 256));
  const auto t2 = parse(c.scheme, c.shape, b, c.table_span());
  if (t2.ok()) RC_ASSERT(serialize(t2.value()).value() == b);
}
