// Results must not depend on the caller's floating-point environment (issue 2, §2): the same bits
// under every rounding mode and with FTZ/DAZ set, and the caller's environment left as it was.
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "support.h"

namespace qconform {
namespace {

using qct::bits;
using qct::Codes;
using qct::Floats;
using qct::scheme;

struct Env {
  int round = 0;
  unsigned csr = 0;
  bool operator==(const Env&) const = default;
};

Env current_env() {
  Env e;
  e.round = std::fegetround();
#if defined(__x86_64__)
  e.csr = _mm_getcsr();
#endif
  return e;
}

std::string describe(const Env& e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "round %d, mxcsr 0x%04x", e.round, e.csr);
  return buf;
}

constexpr bool kEntry = true;    // a reference.h entry point: also leaves the exception flags alone
constexpr bool kHelper = false;  // a scalar helper: only its results and the control bits count

void clear_flags() {
  std::feclearexcept(FE_ALL_EXCEPT);
#if defined(__x86_64__)
  _mm_setcsr(_mm_getcsr() & ~0x3Fu);
#endif
}

// Runs a representative set of operations and records every output bit pattern (errors as
// 0xEEEE0000 | kind). After each operation the control state (rounding mode, FTZ/DAZ, masks) must be
// the one it was called in; after an entry point the sticky exception flags too (fpenv.cc restores
// the whole MXCSR word: "exception flags raised here are not the caller's business").
class Recorder {
 public:
  std::vector<std::uint32_t> out;
  std::vector<std::string> env_changes;
  std::vector<std::string> flag_changes;

  template <class F>
  void op(const char* name, bool entry_point, F&& f) {
    clear_flags();
    const Env before = current_env();
    f();
    const Env after = current_env();
    if (before.round != after.round || (before.csr & ~0x3Fu) != (after.csr & ~0x3Fu)) {
      env_changes.push_back(std::string(name) + ": " + describe(before) + " -> " + describe(after));
    }
    const bool flags_raised = std::fetestexcept(FE_ALL_EXCEPT) != 0 || (after.csr & 0x3Fu) != 0;
    if (entry_point && flags_raised) flag_changes.push_back(std::string(name) + ": " + describe(after));
  }
  void put(std::uint32_t v) { out.push_back(v); }
  void put(float v) { out.push_back(bits(v)); }
  void put(std::uint8_t v) { out.push_back(v); }
  template <class T>
  void put_result(const Result<T>& r) {
    if (!r.ok()) {
      out.push_back(0xEEEE0000u | static_cast<std::uint32_t>(r.kind()));
      return;
    }
    if constexpr (std::is_same_v<T, QTensor>) {
      for (std::int32_t c : r.value().codes) out.push_back(static_cast<std::uint32_t>(c));
      for (float s : r.value().scales) put(s);
      put(r.value().global.value_or(-1.0f));
    } else if constexpr (std::is_same_v<T, std::vector<float>>) {
      for (float v : r.value()) put(v);
    } else if constexpr (std::is_same_v<T, QParams>) {
      for (float s : r.value().scales) put(s);
      put(r.value().global.value_or(-1.0f));
    } else if constexpr (std::is_same_v<T, float>) {
      put(r.value());
    } else if constexpr (std::is_same_v<T, std::vector<std::uint8_t>>) {
      for (std::uint8_t b : r.value()) out.push_back(b);
    }
  }
};

QTensor tensor(const char* text, Shape shape, Codes codes, Floats scales, std::optional<float> g = std::nullopt) {
  QTensor t;
  t.scheme = scheme(text);
  t.shape = std::move(shape);
  t.codes = std::move(codes);
  t.scales = std::move(scales);
  t.global = g;
  return t;
}

Recorder run_all(bool helpers_only = false) {
  Recorder r;
  if (helpers_only) {
    // The per-element helpers of reference.h are entry points too (reference.h: every entry point
    // runs under a default environment).
    r.op("effective_scale", kHelper, [&] {
      r.put(effective_scale(0x1p-100f, 0x1p-100f));  // underflows to 0 -> 0.1f
      r.put(effective_scale(0x1p-9f, 0x1p-140f));    // 2^-149, subnormal
      r.put(effective_scale(1.625f, 0x1.e2737cp0f)); // inexact product
    });
    r.op("quantize_value / decode_value", kHelper, [&] {
      static const Floats t = {-1.0f, -0x1.99999ap-4f, 0x1.555556p-2f, 3.0f};
      for (float y : {0x1.0p-3f, 0x1.2p-1f, -0x1.1p-1f, 1.7f, 0x1p-149f})
        r.put(static_cast<std::uint32_t>(quantize_value(y, Value::q2s, Mode::lookup, qct::table(t))));
      r.put(decode_value(2, Value::q2s, Mode::lookup, qct::table(t)));
      r.put(static_cast<std::uint32_t>(quantize_value(0x1.fffffep-2f, Value::q8s, Mode::symmetric, std::nullopt)));
      r.put(static_cast<std::uint32_t>(quantize_value(0x1p-10f, Value::e4m3, Mode::symmetric, std::nullopt)));
      r.put(decode_value(0x01, Value::e5m2, Mode::symmetric, std::nullopt));
    });
    return r;
  }
  // Ties, and a quotient within half an ulp of a tie (quantize_test TrueDivisionNotReciprocal).
  r.op("quantize ties", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native"), Shape{6},
                          Floats{0.5f, -2.5f, 0x1.fffffep-2f, 0x1.227b70p-1f, 1.0f, -0x1.227b70p-1f},
                          Floats{1.0f}, std::nullopt));
  });
  r.op("quantize near-tie division", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native"), Shape{2}, Floats{0x1.227b70p-1f, 1.0f},
                          Floats{0x1.73d134p-5f}, std::nullopt));
  });
  // Subnormal scale and data: 2^-149 / 2^-148 = 0.5 -> 1; 3 * 2^-149 / 2^-148 = 1.5 -> 2.
  r.op("quantize subnormals", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native"), Shape{3}, Floats{0x1p-149f, 0x1.8p-148f, 0x1p-140f},
                          Floats{0x1p-148f}, std::nullopt));
  });
  r.op("quantize zero scale", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native"), Shape{2}, Floats{0.25f, 1.0f}, Floats{0.0f}, std::nullopt));
  });
  r.op("quantize two-level", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32"), Shape{2},
                          Floats{0x1.05d68cp8f, 0x1p-149f}, Floats{1.625f, 0x1p-9f}, 0x1.e2737cp0f));
  });
  r.op("quantize two-level underflow", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native,block=1:ue4m3,tensor=f32"), Shape{1}, Floats{0.25f},
                          Floats{0x1p-9f}, 0x1p-149f));
  });
  r.op("quantize e4m3 subnormals", kEntry, [&] {
    r.put_result(quantize(scheme("value=e4m3,store=native"), Shape{5},
                          Floats{0x1p-10f, 0x1.8p-9f, 464.0f, 1.0625f, -0x1p-11f}, Floats{1.0f}, std::nullopt));
  });
  r.op("quantize e4m3 subnormal scale", kEntry, [&] {
    r.put_result(quantize(scheme("value=e4m3,store=native"), Shape{2}, Floats{0x1p-140f, 0x1.4p-146f},
                          Floats{0x1p-140f}, std::nullopt));
  });
  r.op("quantize f16 scale round-up", kEntry, [&] {
    r.put_result(quantize(scheme("value=q8s,store=native,block=1:f16"), Shape{3}, Floats{1.0f, 1.0f, 0x1p-20f},
                          Floats{0.3f, 0x1p-25f, 0x1.8p-24f}, std::nullopt));
  });
  r.op("quantize e2m1 nvfp4", kEntry, [&] {
    r.put_result(quantize(nvfp4(), Shape{16}, Floats{0, 0.25f, 0.5f, 0.75f, 1, 1.25f, 1.5f, 1.75f, 2, 2.5f, 3, 3.5f, 4, 5, 6, 7},
                          Floats{0.3f}, 0x1.000002p0f));
  });
  r.op("dequantize", kEntry, [&] {
    r.put_result(dequantize(tensor("value=q8s,store=native", {2}, {13, -127}, {0x1.73d134p-5f})));
  });
  r.op("dequantize subnormal", kEntry, [&] {
    r.put_result(dequantize(tensor("value=q8s,store=native", {2}, {3, -1}, {0x1p-148f})));
  });
  r.op("dequantize two-level", kEntry, [&] {
    r.put_result(dequantize(tensor("value=q8s,store=native,block=1:ue4m3,tensor=f32", {1}, {5}, {1.625f}, 0x1.e2737cp0f)));
  });
  r.op("dequantize e5m2 subnormal", kEntry, [&] {
    r.put_result(dequantize(tensor("value=e5m2,store=native", {2}, {0x01, 0x83}, {0x1p-120f})));
  });
  r.op("calibrate absmean", kEntry, [&] {
    r.put_result(calibrate(scheme("value=q2s"), Shape{4}, Floats{-4.0f, 0x1p-22f, -0x1p-78f, 0.0f},
                           Calibration::absmean));
  });
  r.op("calibrate absmean float-sum", kEntry, [&] {
    Floats x(257, 0x1p-30f);
    x[0] = 1.0f;
    r.put_result(calibrate(scheme("value=q8s"), Shape{257}, x, Calibration::absmean));
  });
  r.op("calibrate minmax", kEntry, [&] {
    r.put_result(calibrate(scheme("value=q8s"), Shape{4}, Floats{-1.8f, -1.0f, 0.0f, 0.5f}, Calibration::minmax));
  });
  r.op("calibrate two-level tiny", kEntry, [&] {
    r.put_result(calibrate(scheme("value=q8s,block=2:ue4m3,tensor=f32"), Shape{2}, Floats{0x1p-120f, 0.0f},
                           Calibration::minmax));
  });
  r.op("calibrate nvfp4", kEntry, [&] {
    Floats x(32, 0.5f);
    x[5] = -6.0f;
    x[20] = 3.0f;
    r.put_result(calibrate(nvfp4(), Shape{32}, x, Calibration::minmax));
  });
  r.op("round_up_scale", kEntry, [&] {
    for (float s : {0x1p-25f, 0x1.8p-24f, 0.3f, 0x1.000002p0f, 65505.0f}) r.put_result(round_up_scale(s, ScaleDtype::f16));
    for (float s : {0x1p-149f, 0.3f, 0x1.000002p0f}) r.put_result(round_up_scale(s, ScaleDtype::bf16));
    for (float s : {0.001f, 0x1p-149f, 0.3f, 0x1.000002p0f, 449.0f}) r.put_result(round_up_scale(s, ScaleDtype::ue4m3));
  });
  r.op("minifloat encode", kHelper, [&] {
    for (float x : {0x1p-10f, 0x1.8p-9f, 464.0f, 1.0625f, -0x1p-11f, 0x1p-149f}) r.put(encode_minifloat(x, Value::e4m3));
    for (float x : {0x1p-17f, 0x1.8p-16f, 61440.0f, 1.125f}) r.put(encode_minifloat(x, Value::e5m2));
    for (float x : {0.25f, 2.5f, 5.0f, 0.75f}) r.put(encode_minifloat(x, Value::e2m1));
  });
  r.op("minifloat decode", kHelper, [&] {
    r.put(decode_minifloat(0x01, Value::e4m3));
    r.put(decode_minifloat(0x01, Value::e5m2));
  });
  r.op("half conversions", kHelper, [&] {
    r.put(std::uint32_t{f32_to_f16(0x1p-25f)});
    r.put(std::uint32_t{f32_to_f16(0x1.8p-24f)});
    r.put(std::uint32_t{f32_to_f16(0x1.002p0f)});
    r.put(std::uint32_t{f32_to_f16(65520.0f)});
    r.put(std::uint32_t{f32_to_bf16(qct::from_bits(0x00018000u))});
    r.put(std::uint32_t{f32_to_bf16(0x1.01p0f)});
    r.put(f16_to_f32(0x0001));
    r.put(bf16_to_f32(0x0001));
  });
  r.op("round_half_away", kHelper, [&] {
    for (float y : {0x1.fffffep-2f, 0.5f, -2.5f, 0x1.fffffep22f, -0x1p-149f}) r.put(round_half_away(y));
  });
  r.op("pack/unpack", kEntry, [&] {
    const Scheme s = scheme("value=q4s,store=packed_u32:1");
    auto p = pack(s, Shape{3, 3}, Codes{1, 2, 3, 4, 5, 6, -1, -2, -3});
    r.put_result(p);
    if (p.ok()) {
      auto u = unpack(s, Shape{3, 3}, p.value());
      if (u.ok()) {
        for (std::int32_t c : u.value()) r.put(static_cast<std::uint32_t>(c));
      }
    }
  });
  r.op("validate_quantize", kEntry, [&] {
    const Status st = validate_quantize(scheme("value=q8s"), Shape{2}, Floats{1.0f, qct::kNaN}, Floats{0x1p-149f},
                                        std::nullopt, std::nullopt);
    r.put(st.ok() ? 0u : static_cast<std::uint32_t>(st.kind()));
  });
  r.op("serialize/parse", kEntry, [&] {
    const QTensor t = tensor("value=q8s,store=native,block=1:f16", {2}, {1, -1}, {0x1p-24f, 0x1.334p-2f});
    auto b = serialize(t);
    r.put_result(b);
    if (b.ok()) r.put_result(parse(t.scheme, t.shape, b.value()));
  });
  return r;
}

// Spot checks that anchor the default-environment results to SPEC values (derived in
// quantize_test, numeric_test and calibrate_test), so the comparisons below compare right answers.
TEST(FpEnv, DefaultEnvironmentResults) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  auto q = quantize(scheme("value=q8s,store=native"), Shape{3}, Floats{0x1p-149f, 0x1.8p-148f, 0x1p-140f},
                    Floats{0x1p-148f}, std::nullopt);
  ASSERT_OK(q);
  EXPECT_CODES_EQ((Codes{1, 2, 127}), q.value().codes);
  auto d = quantize(scheme("value=q8s,store=native"), Shape{1}, Floats{0x1.227b70p-1f}, Floats{0x1.73d134p-5f},
                    std::nullopt);
  ASSERT_OK(d);
  EXPECT_CODES_EQ((Codes{13}), d.value().codes);
  auto deq = dequantize(tensor("value=q8s,store=native", {2}, {3, -1}, {0x1p-148f}));
  ASSERT_OK(deq);
  EXPECT_FLOATS_EQ((Floats{0x1.8p-147f, -0x1p-148f}), deq.value());
  EXPECT_BITS_EQ(0.1f, effective_scale(0x1p-100f, 0x1p-100f));
  EXPECT_BITS_EQ(0x1p-149f, effective_scale(0x1p-9f, 0x1p-140f));
  EXPECT_EQ(encode_minifloat(0x1p-10f, Value::e4m3), 0x00);
  EXPECT_EQ(encode_minifloat(0x1.8p-9f, Value::e4m3), 0x02);
  auto bf = round_up_scale(0x1p-149f, ScaleDtype::bf16);
  ASSERT_OK(bf);
  EXPECT_BITS_EQ(0x1p-133f, bf.value());
}

void expect_same(const Recorder& base, const Recorder& got, const char* env) {
  ASSERT_EQ(base.out.size(), got.out.size()) << env;
  int shown = 0;
  for (std::size_t i = 0; i < base.out.size(); ++i) {
    if (base.out[i] != got.out[i] && shown++ < 20) {
      ADD_FAILURE() << env << ": output " << i << " is 0x" << std::hex << got.out[i] << " ("
                    << qct::hex(qct::from_bits(got.out[i])) << "), default environment gives 0x" << base.out[i]
                    << " (" << qct::hex(qct::from_bits(base.out[i])) << ")";
    }
  }
  for (const std::string& c : got.env_changes) ADD_FAILURE() << env << ": caller environment changed by " << c;
}

TEST(FpEnv, SameBitsUnderEveryRoundingMode) {
  const Recorder base = run_all();
  ASSERT_GT(base.out.size(), 100u);
  for (const std::string& c : base.env_changes) ADD_FAILURE() << "default: environment changed by " << c;
  const struct {
    int mode;
    const char* name;
  } modes[] = {{FE_TONEAREST, "FE_TONEAREST"}, {FE_UPWARD, "FE_UPWARD"}, {FE_DOWNWARD, "FE_DOWNWARD"},
               {FE_TOWARDZERO, "FE_TOWARDZERO"}};
  for (const auto& m : modes) {
    ASSERT_EQ(std::fesetround(m.mode), 0) << m.name;
    const Recorder got = run_all();
    const int after = std::fegetround();
    std::fesetround(FE_TONEAREST);
    EXPECT_EQ(after, m.mode) << m.name << ": rounding mode not restored";
    expect_same(base, got, m.name);
  }
}

TEST(FpEnv, EntryPointsLeaveExceptionFlagsAlone) {
  const Recorder r = run_all();
  for (const std::string& c : r.flag_changes) ADD_FAILURE() << "exception flags left raised by " << c;
}

TEST(FpEnv, PerElementHelpersUnderEveryRoundingMode) {
  const Recorder base = run_all(true);
  ASSERT_GT(base.out.size(), 3u);
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    std::fesetround(mode);
    const Recorder got = run_all(true);
    std::fesetround(FE_TONEAREST);
    expect_same(base, got, mode == FE_UPWARD ? "FE_UPWARD" : mode == FE_DOWNWARD ? "FE_DOWNWARD" : "FE_TOWARDZERO");
  }
#if defined(__x86_64__)
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);
  const Recorder got = run_all(true);
  _mm_setcsr(saved);
  expect_same(base, got, "FTZ+DAZ");
#endif
}

#if defined(__x86_64__)
TEST(FpEnv, SameBitsWithFtzAndDaz) {
  const Recorder base = run_all();
  const unsigned saved = _mm_getcsr();
  // FTZ (bit 15) and DAZ (bit 6), alone and with each directed rounding mode.
  const struct {
    int mode;
    const char* name;
  } modes[] = {{FE_TONEAREST, "FTZ+DAZ"}, {FE_UPWARD, "FTZ+DAZ FE_UPWARD"}, {FE_DOWNWARD, "FTZ+DAZ FE_DOWNWARD"},
               {FE_TOWARDZERO, "FTZ+DAZ FE_TOWARDZERO"}};
  for (const auto& m : modes) {
    std::fesetround(m.mode);
    _mm_setcsr(_mm_getcsr() | 0x8040u);
    const unsigned set = _mm_getcsr();
    const Recorder got = run_all();
    const unsigned after = _mm_getcsr();
    const int round_after = std::fegetround();
    _mm_setcsr(saved);
    std::fesetround(FE_TONEAREST);
    EXPECT_EQ(after & ~0x3Fu, set & ~0x3Fu) << m.name << ": MXCSR control bits not restored";
    EXPECT_EQ(round_after, m.mode) << m.name;
    expect_same(base, got, m.name);
  }
  EXPECT_EQ(_mm_getcsr(), saved);
}

// Volatile operands and a volatile store: the arithmetic is a side effect the optimizer keeps in
// place between the environment changes around it.
volatile float g_sink;
[[gnu::noinline]] float mul(float a, float b) {
  volatile float va = a, vb = b;
  const float r = va * vb;
  g_sink = r;
  return r;
}

TEST(FpEnv, FtzDazWouldChangeTheseResults) {
  // The test above can fail: with DAZ set, plain arithmetic reads a subnormal input as 0.
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);
  const float flushed = mul(0x1p-149f, 0x1p120f);
  _mm_setcsr(saved);
  const float kept = mul(0x1p-149f, 0x1p120f);
  EXPECT_BITS_EQ(0.0f, flushed);
  EXPECT_BITS_EQ(0x1p-29f, kept);
}
#endif

volatile float g_sink_div;
[[gnu::noinline]] float divide(float a, float b) {
  volatile float va = a, vb = b;
  const float r = va / vb;
  g_sink_div = r;
  return r;
}

TEST(FpEnv, DirectedRoundingWouldChangeTheseResults) {
  // fl(x / s) for the near-tie pair is 12.5 to nearest and just below 12.5 rounding down.
  std::fesetround(FE_DOWNWARD);
  const float down = divide(0x1.227b70p-1f, 0x1.73d134p-5f);
  std::fesetround(FE_TONEAREST);
  const float near = divide(0x1.227b70p-1f, 0x1.73d134p-5f);
  EXPECT_BITS_EQ(12.5f, near);
  EXPECT_BITS_EQ(0x1.8ffffep3f, down);
}

}  // namespace
}  // namespace qconform
