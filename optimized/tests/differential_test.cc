// Differential tests: every SIMD target this CPU supports against the reference, bit for bit
// (codes, stored scale bits, serialized bytes, dequantized float bits) or the same error kind.
//
// Each test instance is named after its target and first checks that dispatch really reaches
// that target's code; a full run (no --gtest_filter) also fails if a supported target was never
// exercised. Inputs are deterministic (fixed seeds printed on failure); rerun one case with
// --gtest_filter='Targets/Diff.<Test>/<target>'.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "qconform/optimized.h"
#include "qconform/reference.h"

namespace {

namespace qc = qconform;
namespace opt = qconform::optimized;
using qc::Value;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string hexf(float x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
  return buf;
}
std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

std::vector<std::int64_t> supported_targets() {
  std::vector<std::int64_t> out;
  for (const opt::Target& t : opt::targets()) {
    if (t.supported) out.push_back(t.bits);
  }
  return out;
}

std::set<std::int64_t>& exercised() {
  static std::set<std::int64_t> s;
  return s;
}

// A full run must have gone through every supported target at least once.
class EveryTargetRan : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::GTEST_FLAG(filter) != "*") return;
    for (std::int64_t t : supported_targets()) {
      if (exercised().count(t) == 0) ADD_FAILURE() << "supported target " << opt::target_name(t) << " was never exercised";
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kEnv = ::testing::AddGlobalTestEnvironment(new EveryTargetRan);

qc::Scheme scheme(const std::string& text) {
  qc::Result<qc::Scheme> s = qc::parse_scheme(text);
  if (!s.ok()) ADD_FAILURE() << "bad scheme in test: " << text;
  return s.ok() ? s.value() : qc::Scheme{};
}

std::string describe(const qc::Scheme& s, const qc::Shape& shape) {
  std::ostringstream o;
  o << qc::print_scheme(s) << " shape [";
  for (std::size_t i = 0; i < shape.size(); ++i) o << (i ? "x" : "") << shape[i];
  o << "]";
  return o.str();
}

std::string kind_of(const qc::Error& e) { return std::string(qc::to_string(e.kind)) + " (" + e.message + ")"; }

// ------------------------------------------------------------------ inputs

// Values of y = x / eff that matter for `v`: exact ties, one ulp either side, boundaries.
std::vector<float> edge_ys(Value v) {
  std::vector<float> ys = {0.0f, -0.0f, 0.49999997f, -0.49999997f, 0.5f, -0.5f, 1e30f, -1e30f, 1e-30f, -1e-30f};
  const qc::ValueInfo& vi = qc::info(v);
  auto around = [&ys](float y) {
    ys.push_back(y);
    ys.push_back(std::nextafter(y, kInf));
    ys.push_back(std::nextafter(y, -kInf));
  };
  if (!vi.minifloat) {
    for (int k = static_cast<int>(vi.lo) - 3; k <= static_cast<int>(vi.hi) + 3; ++k) {
      around(static_cast<float>(k));
      around(static_cast<float>(k) + 0.5f);
      ys.push_back(static_cast<float>(k) + 0.25f);
    }
  } else {
    // Every representable magnitude and every midpoint between neighbours (RNE ties).
    std::vector<float> mags;
    for (unsigned c = 0; c < 256; ++c) {
      if (!qc::minifloat_code_is_canonical(static_cast<std::uint8_t>(c), v)) continue;
      const float m = qc::decode_minifloat(static_cast<std::uint8_t>(c), v);
      if (!std::signbit(m)) mags.push_back(m);
    }
    std::sort(mags.begin(), mags.end());
    for (std::size_t i = 0; i < mags.size(); ++i) {
      around(mags[i]);
      around(-mags[i]);
      if (i + 1 < mags.size()) {
        const float mid = (mags[i] + mags[i + 1]) / 2;
        around(mid);
        around(-mid);
      }
    }
    const float mx = vi.hi;
    for (float f : {1.03125f, 1.0625f, 1.09375f, 1.125f, 2.0f, 1e6f}) {
      around(mx * f);
      around(-mx * f);
    }
  }
  return ys;
}

// x values that do not scale: zeros, subnormals, saturation, infinities.
const std::vector<float>& raw_specials() {
  static const std::vector<float> v = {0.0f,  -0.0f,  std::numeric_limits<float>::denorm_min(), -1e-45f, 1e-40f, -1e-39f,
                                       FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, kInf, -kInf, 3.0f, -7.5f};
  return v;
}

// Block scales before round-up: powers of two keep ties exact; the rest stress division.
// Pattern 3 mixes ordinary scales with scales off the kernels' reciprocal path (an effective
// scale below 2^-125 or above 2^125 takes a true division per element).
float pick_scale(std::size_t k, int pattern, std::mt19937& rng) {
  static const float pow2[] = {1.0f, 0.5f, 2.0f, 4.0f, 0.25f, 0x1p-10f, 128.0f, 0.125f};
  static const float odd[] = {0.1f, 3.0f, 0.0f, -0.0f, 1e-42f, 7e-3f, 1.7f, 1000.0f, 1e-20f, 0.3333f};
  static const float extreme[] = {1.0f, 0x1p126f, 0.75f, 1e-40f, 3.0f, 0x1p-130f, 1e38f, 0.01f, 5.0f};
  if (pattern == 0) return pow2[k % std::size(pow2)];
  if (pattern == 1) return odd[k % std::size(odd)];
  if (pattern == 3) return extreme[k % std::size(extreme)];
  std::uniform_real_distribution<float> u(-20.0f, 4.0f);
  return std::exp2(u(rng));
}

struct Case {
  qc::Scheme s;
  qc::Shape shape;
  std::vector<float> buf;  // data starts at buf[offset]: odd offsets misalign it
  std::size_t offset = 0;
  std::size_t count = 0;
  std::vector<float> scales;
  std::optional<float> global;
  std::optional<std::vector<float>> table;
  std::string label;

  [[nodiscard]] std::span<const float> data() const { return std::span<const float>(buf).subspan(offset, count); }
  [[nodiscard]] qc::Table tbl() const { return qc::table_of(table); }
};

// The effective scale of each block of a case, as the reference computes it (1 where the case's
// layout is invalid or a scale cannot be stored).
std::vector<float> block_effs(const Case& c) {
  qc::Result<qc::Layout> l = qc::validate_scheme(c.s).ok() ? qc::make_layout(c.s, c.shape) : qc::Result<qc::Layout>(qc::Error{});
  std::vector<float> eff(l.ok() ? l->scale_count : 1, 1.0f);
  if (l.ok()) {
    for (std::size_t k = 0; k < eff.size() && k < c.scales.size(); ++k) {
      const float raw = c.scales[k] == 0.0f ? 0.0f : c.scales[k];  // -0 as +0
      qc::Result<float> st = qc::round_up_scale(raw, c.s.scale_dtype());
      eff[k] = qc::effective_scale(st.ok() ? st.value() : 1.0f, c.global);
    }
  }
  return eff;
}

// A valid case for `s` and `shape` (when the scheme and shape are valid), deterministic in seed.
Case make_case(const qc::Scheme& s, const qc::Shape& shape, int scale_pattern, std::uint32_t seed, std::size_t offset = 0) {
  Case c;
  c.s = s;
  c.shape = shape;
  c.offset = offset;
  std::mt19937 rng(seed);
  std::ostringstream label;
  label << describe(s, shape) << " scales#" << scale_pattern << " seed " << seed << " offset " << offset;
  c.label = label.str();
  // block_of needs a layout of a valid scheme (a zero block dim would divide by zero).
  qc::Result<qc::Layout> l = qc::validate_scheme(s).ok() ? qc::make_layout(s, shape) : qc::Result<qc::Layout>(qc::Error{});
  std::size_t count = 1;
  for (std::size_t n : shape) count *= n;
  c.count = count;
  c.buf.assign(count + offset + 1, 1234.5f);
  const std::size_t nscales = l.ok() ? l->scale_count : 1;
  for (std::size_t k = 0; k < nscales; ++k) c.scales.push_back(pick_scale(k + seed, scale_pattern, rng));
  if (s.two_level()) c.global = scale_pattern == 0 ? 0.5f : 0.0123f;
  if (s.mode == qc::Mode::lookup) {
    std::vector<float> t(std::size_t{1} << qc::info(s.value).bits);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(static_cast<int>(i) - static_cast<int>(t.size() / 2)) * 0.75f;
    if (t.size() > 2) t[1] = t[2];  // a duplicate entry: ties go to the lower index
    c.table = t;
  }
  const std::vector<float> eff = block_effs(c);
  const std::vector<float> ys = edge_ys(s.value);
  std::uniform_int_distribution<std::size_t> pick(0, ys.size() - 1);
  std::uniform_real_distribution<float> wide(-2.0f * qc::info(s.value).hi, 2.0f * qc::info(s.value).hi);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t k = l.ok() ? qc::block_of(*l, i) : 0;
    float x;
    switch ((i * 5 + seed) % 8) {
      case 0: x = raw_specials()[(i + seed) % raw_specials().size()]; break;
      case 1: x = wide(rng) * eff[k]; break;
      default: x = ys[pick(rng)] * eff[k]; break;
    }
    c.buf[offset + i] = x;
  }
  return c;
}

// ------------------------------------------------------------------ comparisons

void expect_same_floats(const std::vector<float>& want, std::span<const float> got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (bits(want[i]) != bits(got[i])) {
      ADD_FAILURE() << what << " differs at [" << i << "]: reference " << hexf(want[i]) << ", optimized " << hexf(got[i]);
      return;
    }
  }
}

void expect_same_tensor(const qc::QTensor& want, const qc::QTensor& got, const Case& c) {
  EXPECT_EQ(want.scheme, got.scheme);
  EXPECT_EQ(want.shape, got.shape);
  ASSERT_EQ(want.codes.size(), got.codes.size());
  for (std::size_t i = 0; i < want.codes.size(); ++i) {
    if (want.codes[i] != got.codes[i]) {
      qc::Result<qc::Layout> l = qc::make_layout(c.s, c.shape);
      const std::size_t k = l.ok() ? qc::block_of(*l, i) : 0;
      const float stored = k < want.scales.size() ? want.scales[k] : 0.0f;
      const float x = i < c.count ? c.data()[i] : 0.0f;
      ADD_FAILURE() << "code [" << i << "] differs: input " << hexf(x) << " stored scale " << hexf(stored)
                    << " eff " << hexf(qc::effective_scale(stored, want.global)) << " reference code " << want.codes[i]
                    << " optimized code " << got.codes[i];
      return;
    }
  }
  expect_same_floats(want.scales, got.scales, "stored scales");
  ASSERT_EQ(want.global.has_value(), got.global.has_value());
  if (want.global) {
    EXPECT_EQ(bits(*want.global), bits(*got.global)) << "global";
  }
}

template <class T, class U>
void expect_same_result(const qc::Result<T>& want, const qc::Result<U>& got, const std::string& what) {
  ASSERT_EQ(want.ok(), got.ok()) << what << ": reference " << (want.ok() ? "ok" : kind_of(want.error())) << ", optimized "
                                 << (got.ok() ? "ok" : kind_of(got.error()));
  if (!want.ok()) {
    EXPECT_EQ(want.kind(), got.kind()) << what << ": " << kind_of(want.error()) << " vs " << kind_of(got.error());
  }
}

std::size_t expected_bytes(const Case& c) {
  qc::Result<qc::Layout> l = qc::make_layout(c.s, c.shape);
  return l.ok() ? l->total_bytes : 0;
}

// Every operation on one case: quantize (both APIs), serialize, dequantize (both APIs), parse,
// pack/unpack, and the output-size errors of the allocation-free paths.
void check_case(const Case& c, std::int64_t target) {
  SCOPED_TRACE(c.label);
  const qc::Result<qc::QTensor> want = qc::quantize(c.s, c.shape, c.data(), c.scales, c.global, c.tbl());
  const qc::Result<qc::QTensor> got = opt::quantize(c.s, c.shape, c.data(), c.scales, c.global, c.tbl(), target);
  expect_same_result(want, got, "quantize");
  if (!want.ok() || !got.ok()) {
    std::vector<std::uint8_t> out(expected_bytes(c));
    const qc::Status st = opt::quantize_into(c.s, c.shape, c.data(), c.scales, c.global, out, c.tbl(), target);
    if (!want.ok()) {
      ASSERT_FALSE(st.ok()) << "quantize_into accepted what quantize rejects";
      EXPECT_EQ(st.kind(), want.kind()) << "quantize_into: " << kind_of(st.error());
    }
    return;
  }
  expect_same_tensor(*want, *got, c);

  const qc::Result<std::vector<std::uint8_t>> bytes = qc::serialize(*want);
  ASSERT_TRUE(bytes.ok()) << kind_of(bytes.error());
  const qc::Result<std::vector<std::uint8_t>> obytes = opt::serialize(*want, target);
  ASSERT_TRUE(obytes.ok()) << kind_of(obytes.error());
  EXPECT_EQ(*bytes, *obytes) << "serialize";

  std::vector<std::uint8_t> into(bytes->size(), 0xA5);
  const qc::Status st = opt::quantize_into(c.s, c.shape, c.data(), c.scales, c.global, into, c.tbl(), target);
  ASSERT_TRUE(st.ok()) << kind_of(st.error());
  EXPECT_EQ(*bytes, into) << "quantize_into";
  std::vector<std::uint8_t> longer(bytes->size() + 1);
  EXPECT_EQ(opt::quantize_into(c.s, c.shape, c.data(), c.scales, c.global, longer, c.tbl(), target).kind(),
            qc::ErrorKind::trailing_bytes);
  if (!bytes->empty()) {
    std::vector<std::uint8_t> shorter(bytes->size() - 1);
    EXPECT_EQ(opt::quantize_into(c.s, c.shape, c.data(), c.scales, c.global, shorter, c.tbl(), target).kind(),
              qc::ErrorKind::truncated_buffer);
  }

  const qc::Result<std::vector<float>> deq = qc::dequantize(*want, c.tbl());
  ASSERT_TRUE(deq.ok()) << kind_of(deq.error());
  const qc::Result<std::vector<float>> odeq = opt::dequantize(*want, c.tbl(), target);
  expect_same_result(deq, odeq, "dequantize");
  if (odeq.ok()) expect_same_floats(*deq, *odeq, "dequantize");
  std::vector<float> from(c.count, 1234.5f);
  const qc::Status fs = opt::dequantize_from(c.s, c.shape, *bytes, from, c.tbl(), target);
  ASSERT_TRUE(fs.ok()) << kind_of(fs.error());
  expect_same_floats(*deq, from, "dequantize_from");

  const qc::Result<qc::QTensor> parsed = opt::parse(c.s, c.shape, *bytes, c.tbl(), target);
  ASSERT_TRUE(parsed.ok()) << kind_of(parsed.error());
  expect_same_tensor(*want, *parsed, c);

  const std::size_t storage_bytes = qc::make_layout(c.s, c.shape).value().storage_bytes;
  const std::vector<std::uint8_t> storage(bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(storage_bytes));
  const qc::Result<std::vector<std::uint8_t>> packed = opt::pack(c.s, c.shape, want->codes, target);
  ASSERT_TRUE(packed.ok()) << kind_of(packed.error());
  EXPECT_EQ(storage, *packed) << "pack";
  const qc::Result<std::vector<std::int32_t>> unpacked = opt::unpack(c.s, c.shape, storage, target);
  ASSERT_TRUE(unpacked.ok()) << kind_of(unpacked.error());
  EXPECT_EQ(want->codes, *unpacked) << "unpack";
}

// calibrate, and calibrate_quantize_into against the reference's composition.
void check_calibrate(const qc::Scheme& s, const qc::Shape& shape, std::span<const float> data, qc::Calibration m,
                     std::int64_t target, const std::string& label) {
  SCOPED_TRACE(label + (m == qc::Calibration::minmax ? " minmax" : " absmean"));
  const qc::Result<qc::QParams> want = qc::calibrate(s, shape, data, m);
  const qc::Result<qc::QParams> got = opt::calibrate(s, shape, data, m, target);
  expect_same_result(want, got, "calibrate");
  if (want.ok() && got.ok()) {
    expect_same_floats(want->scales, got->scales, "calibrated scales");
    ASSERT_EQ(want->global.has_value(), got->global.has_value());
    if (want->global) {
      EXPECT_EQ(bits(*want->global), bits(*got->global)) << "calibrated global";
    }
  }
  // The composition: calibrate, quantize, serialize.
  std::optional<qc::Error> err;
  std::vector<std::uint8_t> bytes;
  if (!want.ok()) {
    err = want.error();
  } else {
    const qc::Result<qc::QTensor> t = qc::quantize(s, shape, data, want->scales, want->global);
    if (!t.ok()) {
      err = t.error();
    } else {
      bytes = qc::serialize(*t).value();
    }
  }
  qc::Result<qc::Layout> l = qc::make_layout(s, shape);
  std::vector<std::uint8_t> out(err ? (l.ok() ? l->total_bytes : 0) : bytes.size(), 0x5A);
  const qc::Status st = opt::calibrate_quantize_into(s, shape, data, m, out, target);
  ASSERT_EQ(err.has_value(), !st.ok()) << "calibrate_quantize_into: reference " << (err ? kind_of(*err) : "ok")
                                       << ", optimized " << (st.ok() ? "ok" : kind_of(st.error()));
  if (err) {
    EXPECT_EQ(err->kind, st.kind());
  } else {
    EXPECT_EQ(bytes, out) << "calibrate_quantize_into";
  }
}

// ------------------------------------------------------------------ fixtures

class Diff : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override {
    target_ = GetParam();
    ASSERT_EQ(opt::dispatched_target(target_), target_) << "dispatch did not reach " << opt::target_name(target_);
    exercised().insert(target_);
  }
  std::int64_t target_ = 0;
};

std::string target_param_name(const ::testing::TestParamInfo<std::int64_t>& info) { return opt::target_name(info.param); }

INSTANTIATE_TEST_SUITE_P(Targets, Diff, ::testing::ValuesIn(supported_targets()), target_param_name);

class DiffValue : public ::testing::TestWithParam<std::tuple<std::int64_t, Value>> {
 protected:
  void SetUp() override {
    target_ = std::get<0>(GetParam());
    value_ = std::get<1>(GetParam());
    ASSERT_EQ(opt::dispatched_target(target_), target_) << "dispatch did not reach " << opt::target_name(target_);
    exercised().insert(target_);
  }
  std::int64_t target_ = 0;
  Value value_ = Value::q8f;
};

std::vector<Value> all_values() {
  std::vector<Value> v;
  for (const qc::ValueInfo& vi : qc::kValues) v.push_back(vi.value);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Targets, DiffValue, ::testing::Combine(::testing::ValuesIn(supported_targets()), ::testing::ValuesIn(all_values())),
                         [](const ::testing::TestParamInfo<std::tuple<std::int64_t, Value>>& p) {
                           return opt::target_name(std::get<0>(p.param)) + "_" +
                                  std::string(qc::info(std::get<1>(p.param)).name);
                         });

// The integer values only.
class DiffIntValue : public DiffValue {};

std::vector<Value> int_values() {
  std::vector<Value> v;
  for (const qc::ValueInfo& vi : qc::kValues) {
    if (!vi.minifloat) v.push_back(vi.value);
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Targets, DiffIntValue, ::testing::Combine(::testing::ValuesIn(supported_targets()), ::testing::ValuesIn(int_values())),
                         [](const ::testing::TestParamInfo<std::tuple<std::int64_t, Value>>& p) {
                           return opt::target_name(std::get<0>(p.param)) + "_" +
                                  std::string(qc::info(std::get<1>(p.param)).name);
                         });

// Stores that apply to a value (SPEC §3: packed_native only for 8-bit values and e2m1).
std::vector<std::string> stores_for(Value v) {
  std::vector<std::string> s = {"native", "packed_u32:0", "packed_u32:1"};
  if (qc::info(v).bits == 8 || v == Value::e2m1) {
    s.push_back("packed_native:0");
    s.push_back("packed_native:1");
  }
  return s;
}

// The bytes of a target's vector of floats: 4 on scalar (one lane), 16 on the 128-bit targets, 32 on
// AVX2, 64 on AVX-512 (and anything wider).
std::size_t vector_bytes(std::int64_t target) {
  const std::string tn = opt::target_name(target);
  if (tn == "scalar") return 4;
  if (tn == "emu128" || tn == "ssse3" || tn == "sse4" || tn == "sse2") return 16;
  return tn == "avx2" ? 32 : 64;
}

// ------------------------------------------------------------------ tests

// Edge lengths around every vector width, per-tensor and 1-D blocks (odd, partial, wider than a
// vector), every store, on one row and on several rows.
TEST_P(DiffValue, EdgeLengthsBlocksStores) {
  const std::string v(qc::info(value_).name);
  const std::vector<std::size_t> lengths = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 192};
  const std::vector<std::string> levels = {"", ",block=1:f32", ",block=3:f16", ",block=7:bf16", ",block=16:ue4m3",
                                           ",block=32:f16", ",block=33:f32", ",block=16:ue4m3,tensor=f32"};
  // Every level on the default store; the other stores on a few levels (their packing is the
  // same code whatever the level).
  const std::vector<std::string> few = {",tensor=f32", ",block=7:f16,tensor=f32", ",block=5:bf16"};
  std::uint32_t seed = 1;
  for (const std::string& store : stores_for(value_)) {
    for (const std::string& level : store == "packed_u32:0" ? levels : few) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      for (std::size_t n : lengths) {
        check_case(make_case(s, {n}, static_cast<int>(seed % 3), seed), target_);
        ++seed;
        if (n % 8 == 1) {
          check_case(make_case(s, {3, n}, static_cast<int>(seed % 3), seed), target_);
          ++seed;
        }
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Rows longer than the kernels' 2048-element chunks, with blocks straddling no chunk boundary and
// per-tensor scales across several chunks.
TEST_P(DiffValue, LongRows) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 7001;
  for (const std::string& level : {std::string(""), std::string(",block=32:f16"), std::string(",block=33:f32"),
                                   std::string(",block=5:f16"), std::string(",block=16:ue4m3,tensor=f32")}) {
    const qc::Scheme s = scheme("value=" + v + level);
    for (std::size_t n : {2047u, 2048u, 2049u, 4099u}) {
      check_case(make_case(s, {n}, static_cast<int>(seed % 3), seed), target_);
      ++seed;
    }
    check_case(make_case(s, {2, 2100}, 0, seed++), target_);
  }
}

// Every 1/256 of every binade from 2^-20 to 2^17, with its float neighbours and both signs,
// through quantize: every rounding boundary of every minifloat (midpoints of e2m1 lie on quarter
// binades, of e4m3 on sixteenths), its subnormal range and its saturation, for a scale of 1 (an
// exact reciprocal), one with an inexact reciprocal, and per-block scales. Before this test only
// the exhaustive sweep (not in the default ctest run) covered every boundary of every format.
TEST_P(DiffValue, BinadeSweep) {
  const std::string v(qc::info(value_).name);
  std::vector<float> values;
  for (int e = -20; e <= 17; ++e) {
    for (int m = 0; m < 256; ++m) {
      const float x = std::ldexp(1.0f + static_cast<float>(m) / 256.0f, e);
      for (const float y : {x, std::nextafter(x, 0.0f), std::nextafter(x, kInf)}) {
        values.push_back(y);
        values.push_back(-y);
      }
    }
  }
  const std::size_t n = values.size();  // a multiple of 16 (38 * 256 * 6)
  for (const std::string& level : {std::string(""), std::string(",block=16:f16")}) {
    const qc::Scheme s = scheme("value=" + v + level);
    for (const float scale : {1.0f, 0.7f}) {
      Case c;
      c.s = s;
      c.shape = {n};
      c.buf = values;
      c.count = n;
      const std::size_t blocks = level.empty() ? 1 : n / 16;
      for (std::size_t k = 0; k < blocks; ++k) c.scales.push_back(k % 3 == 2 ? scale * 3.0f : scale);
      c.label = "binade sweep " + qc::print_scheme(s) + " scale " + hexf(scale);
      check_case(c, target_);
    }
  }
}

// Blocks of one vector (4, 8 and 16 elements: a vector of SSE4, AVX2 and AVX-512) in rows of
// many chunks, some blocks of every chunk off the reciprocal path: the kernels' block loop skips
// the per-block test of the reciprocal only when no block of the chunk needs the division.
TEST_P(DiffValue, OneVectorBlocksOffTheReciprocalPath) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 31001;
  for (const char* level : {",block=4:f32", ",block=8:f32", ",block=16:f32"}) {
    const qc::Scheme s = scheme("value=" + v + level);
    check_case(make_case(s, {3, 2112}, 3, seed++), target_);
    check_case(make_case(s, {5000}, 3, seed++), target_);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Smooth data, where groups of four vectors rarely hold a value near a rounding boundary, so that
// the AVX-512 kernels that quantize 64 lanes at once take their register path for most groups
// (codes, saturation, signs, NaN and narrowing on packed lanes): two-level blocks of 16 (nvfp4's
// scheme: AVX3_DL's packed e2m1 kernel), per-tensor and blocks of 64 (the 8-bit minifloats' group
// kernel). Each row also gets groups of their own: 16 of the value type's edge values (ties, their
// neighbours, ±0, saturation); values no boundary is near (beyond every index and saturation
// bound, tiny, -0), which take the register path; and fixed ones (a tie, a value next to one, -0
// and small negatives that round to signed zero, values from 6 to 8 and from 8 up, products below
// the smallest normal float), ±Inf; rows of a partial group, of one and a half chunks and of
// whole chunks; NaN in an otherwise unremarkable group, and in each eighth of one (the
// reference's error; NaN with payloads, see below); and blocks off the reciprocal path (a tiny
// global scale).
TEST_P(DiffValue, SmoothGroups) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 41001;
  const std::vector<float> edges = edge_ys(value_);
  const float fixed[16] = {0.25f, std::nextafter(0.75f, 0.0f), -0.0f, -0.1f, 6.5f, 7.999f, 8.0f, 2e4f,
                           -5.0f, std::nextafter(-1.25f, -kInf), 1e-30f, -1e-38f, 2.5f, -1e30f, 0.0f, 1.75f};
  // (-2e7 and -1.3e7: fl(y + 1.5 * 2^23) is negative and above -1.5 * 2^23, so its pattern less
  // 0x4B400000 wraps as a signed integer; 2e7: at least 2^24.)
  const float far[13] = {2e4f, -1e30f, 7.3f, -9.1f, 1e-30f, -1e-38f, -0.0f, 1e6f, -100.0f, 6.2f, -2e7f, -1.3e7f, 2e7f};
  for (const char* level : {",block=16:ue4m3,tensor=f32", "", ",block=64:f32"}) {
    for (const char* store : {"native", "packed_u32:0"}) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + std::string(store) + level);
      const bool b64 = std::string(level) == ",block=64:f32";  // (blocks divide their axis)
      for (const qc::Shape& shape : {qc::Shape{3, 4096}, qc::Shape{2, 3264}, qc::Shape{4, b64 ? 64u : 48u},
                                     qc::Shape{2, b64 ? 256u : 208u}}) {
        Case c;
        c.s = s;
        c.shape = shape;
        c.count = shape[0] * shape[1];
        c.label = describe(s, shape) + " smooth seed " + std::to_string(seed);
        std::mt19937 rng(seed++);
        std::uniform_real_distribution<float> smooth(-3.0f, 3.0f);
        c.buf.resize(c.count + 1);
        for (std::size_t i = 0; i < c.count; ++i) c.buf[i] = smooth(rng) * (1.0f + static_cast<float>(i % 7));
        const qc::Result<qc::QParams> p = qc::calibrate(s, shape, c.data(), qc::Calibration::minmax);
        ASSERT_TRUE(p.ok()) << kind_of(p.error());
        c.scales = p->scales;
        c.global = p->global;
        const qc::Layout l = qc::make_layout(s, shape).value();
        const std::size_t n = shape[1];
        // Specials y relative to the effective scale of their element's block (x = y * eff).
        auto put = [&](std::size_t i, float y) {
          const qc::Result<float> st = qc::round_up_scale(c.scales[qc::block_of(l, i)], s.scale_dtype());
          c.buf[i] = y * qc::effective_scale(st.ok() ? st.value() : 1.0f, c.global);
        };
        for (std::size_t r = 0; r < shape[0]; ++r) {
          for (std::size_t k = 0; k < 16 && n >= 48; ++k) put(r * n + 32 + k, fixed[k]);
          if (n >= 208) {
            for (std::size_t k = 0; k < 16; ++k) put(r * n + 64 + 4 * k, edges[k * edges.size() / 16]);
            // Values no rounding boundary is near, in a group of their own (elements 128..191),
            // so that they take the register path: beyond every index and saturation bound,
            // between the largest e2m1 values, tiny, -0, and the integer sums' sign regimes.
            for (std::size_t k = 0; k < 13; ++k) put(r * n + 128 + 4 * k, far[k]);
            c.buf[r * n + 200] = kInf;
            c.buf[r * n + 201] = -kInf;
          }
        }
        check_case(c, target_);
        if (n >= 208) {
          // NaN with payloads: the default NaN's pattern, like 0x7FC00000 * r, ends in 21 zero bits
          // and so always looks near a boundary (which takes the per-vector path).
          for (const std::uint32_t pattern : {0x7FC5A5A5u, 0xFF80ABCDu, 0x7FC00000u}) {
            Case with_nan = c;
            with_nan.buf[c.count - n / 2 - 5] = std::bit_cast<float>(pattern);
            check_case(with_nan, target_);
          }
          // One NaN in each eighth of a group of 64 of the last row (every vector of an AVX2 group
          // of four, every half vector of an AVX-512 one): a kernel that tracks NaN for some of a
          // group's vectors only fails here.
          for (std::size_t k = 0; k < 8; ++k) {
            Case with_nan = c;
            with_nan.buf[(c.count - n / 2) / 64 * 64 + 8 * k + 3] = std::bit_cast<float>(0xFFC5A5A5u);
            check_case(with_nan, target_);
          }
          if (s.two_level()) {
            Case off_path = c;  // effective scales below 2^-125: the division per vector
            off_path.global = 0x1p-140f;
            check_case(off_path, target_);
          }
        }
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Rows of 64 blocks or more, whose effective scales the kernels compute chunk by chunk from the
// raw (quantize_into) or encoded (dequantize_from) scales: blocks straddling chunk boundaries and a
// partial last block, and an invalid scale or a global overflow in the first, a middle or the last
// block, which must come back as the reference's error (every scale is checked on that path too).
TEST_P(DiffValue, ScalesPerChunk) {
  const std::string v(qc::info(value_).name);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t seed = 21001;
  const std::vector<std::pair<std::string, qc::Shape>> cases = {
      {",block=16:ue4m3,tensor=f32", {2, 4099}}, {",block=32:f16", {3, 2048}}, {",block=33:bf16", {2, 4099}},
      {",block=5:f32", {2, 333}},                {",block=2x16:f16", {4, 1024}}};
  // (packed_u32:1 packs along the first axis: the scales are then made beforehand.)
  for (const std::string& store : {std::string("native"), std::string("packed_u32:0"), std::string("packed_u32:1")}) {
    for (const auto& [level, shape] : cases) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      const Case base = make_case(s, shape, 0, seed++);
      check_case(base, target_);
      check_case(make_case(s, shape, 1, seed++), target_);
      const std::size_t nscales = base.scales.size();
      for (std::size_t k : {std::size_t{0}, nscales / 2 + 1, nscales - 1}) {
        for (float bad : {nan, -1.0f, kInf, -0.0f, 0.0f}) {
          Case c = base;
          c.scales[k] = bad;
          check_case(c, target_);
        }
        if (s.two_level()) {  // g * stored overflows in block k only
          Case c = base;
          c.global = 1e37f;
          for (float& sc : c.scales) sc = std::min(sc, 1.0f);
          c.scales[k] = 448.0f;
          check_case(c, target_);
        }
      }
      // The same positions in the bytes: a stored scale with its sign bit set, or every bit set.
      const qc::Result<qc::QTensor> t = qc::quantize(base.s, base.shape, base.data(), base.scales, base.global);
      ASSERT_TRUE(t.ok()) << kind_of(t.error());
      const std::vector<std::uint8_t> bytes = qc::serialize(*t).value();
      const qc::Layout l = qc::make_layout(s, shape).value();
      const std::size_t w = qc::scale_bytes(s.scale_dtype());
      for (std::size_t k : {std::size_t{0}, nscales / 2 + 1, nscales - 1}) {
        for (std::uint8_t b : {std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
          std::vector<std::uint8_t> u = bytes;
          if (b == 0x80) {
            u[l.storage_bytes + k * w + w - 1] |= 0x80;
          } else {
            std::fill_n(u.begin() + static_cast<std::ptrdiff_t>(l.storage_bytes + k * w), w, b);
          }
          const qc::Result<qc::QTensor> pw = qc::parse(s, shape, u);
          std::vector<float> out(base.count);
          const qc::Status fs = opt::dequantize_from(s, shape, u, out, std::nullopt, target_);
          ASSERT_EQ(pw.ok(), fs.ok()) << "dequantize_from, scale " << k << ": " << (fs.ok() ? "ok" : kind_of(fs.error()));
          if (!pw.ok()) {
            EXPECT_EQ(pw.kind(), fs.kind());
          } else {
            expect_same_floats(qc::dequantize(*pw).value(), out, "dequantize_from");
          }
        }
      }
    }
  }
}

// N-D blocks (rectangles over several rows), rank 0, ranks up to 4, packing along other axes.
TEST_P(DiffValue, NdBlocksAndRanks) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 9001;
  const std::vector<std::pair<std::string, qc::Shape>> cases = {
      {",block=2x3:f16", {5, 7}},          {",block=2x3:f16", {4, 6}},          {",block=4x32:f32", {9, 70}},
      {",block=3x1x5:bf16", {4, 2, 11}},   {",block=2x2x2:ue4m3", {3, 3, 3, 3}}, {"", {}},
      {",tensor=f32", {}},                 {"", {2, 3, 4, 5}},                  {",block=1x16:f16", {3, 40}},
      {",block=2x16:ue4m3,tensor=f32", {5, 33}}, {",block=7x1:f32", {15, 4}}, {"", {0, 5}}, {",block=4:f32", {3, 0}}};
  for (const std::string& store : stores_for(value_)) {
    for (const auto& [level, shape] : cases) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      for (int pattern = 0; pattern < 3; ++pattern) check_case(make_case(s, shape, pattern, seed++), target_);
    }
    if (store.find(':') != std::string::npos) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store.substr(0, store.find(':')) + ":2,block=2x5:f16");
      check_case(make_case(s, {3, 4, 9}, 0, seed++), target_);
    }
  }
}

// Input that starts at an odd float offset inside a larger buffer.
TEST_P(DiffValue, MisalignedInput) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 11001;
  for (const std::string& level : {std::string(""), std::string(",block=32:f16"), std::string(",block=7:f32")}) {
    const qc::Scheme s = scheme("value=" + v + ",store=packed_u32:0" + level);
    for (std::size_t offset : {1u, 3u, 5u}) {
      for (std::size_t n : {17u, 64u, 131u}) check_case(make_case(s, {n}, 0, seed++, offset), target_);
    }
  }
}

// Every byte value, in every store, at the start, middle and end of a storage of whole vectors
// and a tail: dequantize_from agrees with parse + dequantize on the floats or on the error, and
// dequantize on every code from -300 to 300.
TEST_P(DiffValue, EveryByteAndCode) {
  const std::string v(qc::info(value_).name);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::string& store : stores_for(value_)) {
    const qc::Scheme s = scheme("value=" + v + ",store=" + store + ",block=16:f32");
    const qc::Shape shape{2, 67};
    const std::vector<float> zeros(2 * 67, 0.0f);
    const std::vector<float> scales(2 * 5, 0.75f);
    const qc::Result<qc::QTensor> t = qc::quantize(s, shape, zeros, scales, std::nullopt);
    if (!t.ok()) continue;  // packing along an axis the shape cannot take
    const std::vector<std::uint8_t> bytes = qc::serialize(*t).value();
    const qc::Layout lay = qc::make_layout(s, shape, zeros.size()).value();
    SCOPED_TRACE(describe(s, shape));
    std::vector<float> out(zeros.size(), nan);
    for (std::size_t at : {std::size_t{0}, lay.storage_bytes / 2, lay.storage_bytes - 1}) {
      for (int b = 0; b < 256; ++b) {
        std::vector<std::uint8_t> in = bytes;
        in[at] = static_cast<std::uint8_t>(b);
        const qc::Result<qc::QTensor> parsed = qc::parse(s, shape, in);
        const qc::Status st = opt::dequantize_from(s, shape, in, out, std::nullopt, target_);
        ASSERT_EQ(parsed.ok(), st.ok()) << "byte " << b << " at " << at;
        if (!parsed.ok()) {
          EXPECT_EQ(parsed.kind(), st.kind()) << "byte " << b << " at " << at;
          continue;
        }
        expect_same_floats(qc::dequantize(*parsed).value(), out, "byte " + std::to_string(b) + " at " + std::to_string(at));
      }
    }
    for (std::int32_t code = -300; code <= 300; ++code) {
      qc::QTensor u = *t;
      for (std::size_t i = 0; i < u.codes.size(); i += 13) u.codes[i] = code;
      const qc::Result<std::vector<float>> dw = qc::dequantize(u);
      const qc::Result<std::vector<float>> dg = opt::dequantize(u, std::nullopt, target_);
      expect_same_result(dw, dg, "code " + std::to_string(code));
      if (dw.ok() && dg.ok()) expect_same_floats(*dw, *dg, "code " + std::to_string(code));
    }
  }
}

// Lookup mode: the kernels find a code by thresholds derived from the table, which must give the
// reference's nearest entry (exact distances, ties to the lower index) for every y. So each table
// below is queried at its entries, at every midpoint between neighbouring distinct entries and the
// floats next to it, at zeros, infinities and random values; the tables hold duplicates, -0 and +0,
// infinite entries (and nothing else), neighbouring floats, subnormals and magnitudes far apart,
// in no particular order, and last distinct values in ascending order (no index). Per tensor (scale 1: y = x), in blocks of 3 with odd scales, two-level,
// and the make_case grid on short lengths.
TEST_P(DiffValue, LookupMode) {
  if (qc::info(value_).minifloat) GTEST_SKIP() << "lookup mode takes integer values only";
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 13001;
  for (const std::string& level : {std::string(""), std::string(",block=8:f16")}) {
    const qc::Scheme s = scheme("value=" + v + ",store=packed_u32:0,mode=lookup" + level);
    for (std::size_t n : {1u, 16u, 33u}) check_case(make_case(s, {n}, 0, seed++), target_);
  }

  const std::size_t size = std::size_t{1} << qc::info(value_).bits;
  const float one_up = std::nextafter(1.0f, 2.0f), two_up = std::nextafter(one_up, 2.0f);
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<std::vector<float>> motifs = {
      {0.5f, -1.0f, 0.5f, 2.0f, -0.0f, 0.0f, 7.0f, -3.25f},
      {kInf, 1.0f, -kInf, -2.0f, 1.0f, kInf, 0.75f, -0.0f},
      {kInf, -kInf, kInf, -kInf},
      {-kInf, 3.0f, kInf, 3.0f},
      {one_up, 1.0f, two_up, tiny, -tiny, 0.0f, 2 * tiny, -FLT_MIN},
      {1e30f, -1e-30f, FLT_MAX, -FLT_MAX, 3e-38f, 1e-45f, -1e20f, 5e-39f},
      {-0.0f, 0.0f, 0.0f, -0.0f}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (std::size_t m = 0; m <= motifs.size() + 1; ++m) {
    std::vector<float> table(size);
    for (std::size_t i = 0; i < size; ++i) {
      // The motif, then (in 16- and 256-entry tables) random values, some of them repeated; last,
      // distinct values in ascending order, unevenly spaced (steps 0.5 to 0.875), which the kernels
      // take without their index (it is the identity).
      if (m == motifs.size() + 1) {
        table[i] = static_cast<float>(static_cast<int>(i) - static_cast<int>(size / 2)) * 0.75f + static_cast<float>(i % 3) * 0.125f;
      } else if (m == 2) {
        table[i] = i % 3 == 0 ? -kInf : kInf;  // infinite entries only: every finite y gets index 0
      } else if (m < motifs.size() && i < motifs[m].size()) {
        table[i] = motifs[m][i];
      } else {
        table[i] = i > 0 && i % 5 == 0 ? table[i / 2] : std::round(normal(rng) * 8.0f) / 8.0f;
      }
    }
    std::vector<float> sorted;
    for (float t : table) {
      if (std::isfinite(t)) sorted.push_back(t);
    }
    std::sort(sorted.begin(), sorted.end());
    std::vector<float> ys = {0.0f, -0.0f, kInf, -kInf, FLT_MAX, -FLT_MAX, tiny, -tiny};
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      ys.push_back(sorted[i]);
      if (i + 1 == sorted.size() || sorted[i] == sorted[i + 1]) continue;
      float mid = static_cast<float>((static_cast<double>(sorted[i]) + static_cast<double>(sorted[i + 1])) / 2);
      for (int k = 0; k < 2; ++k) mid = std::nextafter(mid, -kInf);
      for (int k = 0; k < 5; ++k, mid = std::nextafter(mid, kInf)) ys.push_back(mid);
    }
    for (int k = 0; k < 64; ++k) ys.push_back(normal(rng) * (k % 2 == 0 ? 1.0f : 64.0f));
    std::shuffle(ys.begin() + 8, ys.end(), rng);
    // Rows long enough to cross the kernels' chunk of 2048 elements.
    std::vector<float> data;
    while (data.size() < 2 * 2100) data.insert(data.end(), ys.begin(), ys.end());
    data.resize(2 * 2100 + 5);
    struct Variant {
      std::string level;
      qc::Shape shape;
      std::vector<float> scales;
      std::optional<float> global;
    };
    const std::vector<Variant> variants = {
        {"", {2, 2102}, {1.0f}, std::nullopt},
        {",block=3:f32", {4205}, {1.0f, 0.3f, 3.0f, 1e-20f, 0.0f, 7e-3f, 2.0f}, std::nullopt},
        {",block=16:ue4m3,tensor=f32", {4205}, {2.0f, 0.5f, 1.5f}, 0.5f}};
    for (const Variant& var : variants) {
      Case c;
      c.s = scheme("value=" + v + ",store=packed_u32:0,mode=lookup" + var.level);
      c.shape = var.shape;
      c.count = data.size();
      c.buf = data;
      const qc::Result<qc::Layout> l = qc::make_layout(c.s, c.shape);
      ASSERT_TRUE(l.ok());
      for (std::size_t k = 0; k < l->scale_count; ++k) c.scales.push_back(var.scales[k % var.scales.size()]);
      c.global = var.global;
      c.table = table;
      c.label = "table " + std::to_string(m) + " " + describe(c.s, c.shape);
      check_case(c, target_);
    }
  }
}

// Lookup-mode bytes, changed one byte at a time, cut short and made longer, with the table given,
// missing, of the wrong size, holding a NaN or infinite entries: parse and dequantize_from must
// reject exactly what the reference's parse (then dequantize) rejects, with its kind, and
// otherwise give its codes and floats. dequantize_from decodes lookup bytes straight into its
// output (optimized.cc), so its checks of scale patterns, the global and the table are its own.
TEST_P(DiffValue, LookupBytes) {
  if (qc::info(value_).minifloat) GTEST_SKIP() << "lookup mode takes integer values only";
  const std::string v(qc::info(value_).name);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t seed = 21001;
  for (const std::string& level : {std::string(""), std::string(",block=4:ue4m3"), std::string(",block=3:f16,tensor=f32")}) {
    const qc::Scheme s = scheme("value=" + v + ",store=packed_u32:0,mode=lookup" + level);
    Case c = make_case(s, {2, 9}, 0, seed++);
    for (float& x : c.buf) {
      if (std::isnan(x)) x = 0.0f;
    }
    const qc::Result<qc::QTensor> t = qc::quantize(c.s, c.shape, c.data(), c.scales, c.global, c.tbl());
    ASSERT_TRUE(t.ok()) << c.label << ": " << kind_of(t.error());
    const std::vector<std::uint8_t> bytes = qc::serialize(*t).value();
    std::vector<std::vector<std::uint8_t>> variants = {bytes, std::vector<std::uint8_t>(bytes.begin(), bytes.end() - 1)};
    variants.push_back(bytes);
    variants.back().push_back(0);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      for (int b : {0xFF, 0x80, 0x7C, 0x08, 0x00}) {
        variants.push_back(bytes);
        variants.back()[i] = static_cast<std::uint8_t>(b);
      }
    }
    std::vector<std::optional<std::vector<float>>> tables = {c.table, std::nullopt};
    tables.push_back(c.table);
    tables.back()->pop_back();  // lookup-table-size
    tables.push_back(c.table);
    (*tables.back())[1] = nan;  // invalid-lookup-table
    tables.push_back(c.table);
    tables.back()->front() = -kInf;  // valid: infinite values come out
    tables.back()->back() = kInf;
    for (const std::optional<std::vector<float>>& table : tables) {
      const qc::Table tb = qc::table_of(table);
      for (const std::vector<std::uint8_t>& u : variants) {
        SCOPED_TRACE(c.label + ", " + std::to_string(u.size()) + " bytes, table of " +
                     (table ? std::to_string(table->size()) : std::string("none")));
        const qc::Result<qc::QTensor> pw = qc::parse(c.s, c.shape, u, tb);
        const qc::Result<qc::QTensor> pg = opt::parse(c.s, c.shape, u, tb, target_);
        expect_same_result(pw, pg, "parse");
        if (pw.ok() && pg.ok()) expect_same_tensor(*pw, *pg, c);
        qc::Result<std::vector<float>> want = pw.ok() ? qc::dequantize(*pw, tb) : qc::Result<std::vector<float>>(pw.error());
        std::vector<float> out(c.count, 1234.5f);
        const qc::Status fs = opt::dequantize_from(c.s, c.shape, u, out, tb, target_);
        ASSERT_EQ(want.ok(), fs.ok()) << "dequantize_from: " << (fs.ok() ? "ok" : kind_of(fs.error()));
        if (!want.ok()) {
          EXPECT_EQ(want.kind(), fs.kind()) << "dequantize_from";
        } else {
          expect_same_floats(*want, out, "dequantize_from");
          std::vector<float> longer(c.count + 1);  // shape-mismatch on the output, after the inputs
          EXPECT_EQ(opt::dequantize_from(c.s, c.shape, u, longer, tb, target_).kind(), qc::ErrorKind::shape_mismatch);
        }
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Calibration, minmax and absmean, per tensor, per block and two-level, and the fused path.
TEST_P(DiffValue, Calibrate) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 15001;
  const std::vector<std::pair<std::string, qc::Shape>> cases = {
      {"", {0}},    {"", {1}},   {"", {37}},   {",block=32:f16", {64}},  {",block=32:f16", {3, 96}},
      {",block=3:f32", {2, 9}},  {",block=16:ue4m3,tensor=f32", {2, 32}}, {",block=2x4:bf16", {4, 8}},
      {",block=32:f16", {40}},   {",block=16:ue4m3", {33, 16}}, {",block=1:f16", {5}}, {",block=32:f16", {2100}},
      {",block=4:bf16", {3, 40}}, {",block=8:f32", {2, 24}}};
  for (const std::string& store : {std::string("packed_u32:0"), std::string("native"), std::string("packed_u32:1")}) {
    for (const auto& [level, shape] : cases) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      for (int variant = 0; variant < 8; ++variant) {
        Case c = make_case(s, shape, 0, seed++);
        std::vector<float> data(c.data().begin(), c.data().end());
        // Variant 0: as generated (may hold ±Inf: calibration-overflow). 1 and up: finite only
        // (variant 6 may overflow to ±Inf again).
        // 2: finite with a NaN late (nan-input). 3: FLT_MAX (2 * alpha overflows).
        if (variant >= 1) {
          for (float& x : data) {
            if (!std::isfinite(x)) x = 1.5f;
          }
        }
        if (variant == 2 && !data.empty()) data[data.size() * 2 / 3] = std::numeric_limits<float>::quiet_NaN();
        if (variant == 3 && !data.empty()) data[data.size() / 2] = -FLT_MAX;
        // 4, 5: tiny data, so scales fall in the subnormal ranges of f16 and ue4m3 (and of f32).
        if (variant == 4 || variant == 5) {
          for (float& x : data) x *= variant == 4 ? 1e-6f : 1e-38f;
        }
        // 6, 7: large data, so f16 and ue4m3 scales saturate at their maximum (all blocks, or
        // only the blocks holding the largest values), and codes then clamp.
        if (variant >= 6) {
          for (std::size_t i = 0; i < data.size(); ++i) data[i] *= variant == 6 ? 1e9f : (i % 3 == 0 ? 3e4f : 1.0f);
        }
        for (qc::Calibration m : {qc::Calibration::minmax, qc::Calibration::absmean}) {
          check_calibrate(s, shape, data, m, target_, c.label + " variant " + std::to_string(variant));
        }
      }
    }
  }
}

// The fused calibrate+quantize of integer values decides each code from one rounded sum
// (quantize-inl.h, kCalibrated) and must send every lane near a tie to the division. Each block's
// maximum |x| is range / 2 * 2^e, so its scale is exactly 2^e (in every scale dtype that holds it)
// and x / s is exact: the blocks hold exact ties k + 1/2 of both signs, their float neighbours,
// values a few grid steps (2^-14) off a tie, and the block maximum itself (y = +-range / 2, a tie
// for full-range values). The expected bytes are the reference's calibrate, quantize, serialize.
TEST_P(DiffIntValue, CalibratedTies) {
  const qc::ValueInfo& vi = qc::info(value_);
  const std::string v(vi.name);
  const float half_range = (vi.hi - vi.lo) / 2.0f;
  std::mt19937 rng(19001);
  // Block 48 is a whole number of vectors but not a power of two of them on every target (the
  // block maxima's runtime-width path), as 64 is on the 4-lane targets.
  for (const std::string& level : {std::string(",block=32:f16"), std::string(",block=16:ue4m3"), std::string(",block=64:bf16"),
                                   std::string(",block=48:f16"), std::string(",block=32:f32"),
                                   std::string(",block=16:ue4m3,tensor=f32")}) {
    for (const std::string& store : {std::string("packed_u32:0"), std::string("native")}) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      const std::size_t b = s.block->dims[0];
      const std::size_t blocks = 160;  // rows of more than 64 blocks take the per-chunk paths too
      std::vector<float> data(blocks * b);
      for (std::size_t j = 0; j < blocks; ++j) {
        const int e = static_cast<int>(j % 7) - 3;  // scales 2^-3 .. 2^3
        const float scale = std::ldexp(1.0f, e);
        float* blk = data.data() + j * b;
        for (std::size_t i = 0; i < b; ++i) {
          const float k = static_cast<float>(rng() % static_cast<unsigned>(vi.hi)) + 0.5f;  // a tie below hi
          float y = k;
          switch ((i + j) % 6) {
            case 0: break;
            case 1: y = std::nextafter(k, 0.0f); break;
            case 2: y = std::nextafter(k, 1e9f); break;
            case 3: y = k + static_cast<float>(static_cast<int>(rng() % 9) - 4) * 0x1p-14f; break;
            case 4: y = k - 0.5f; break;  // an integer
            default: y = std::ldexp(static_cast<float>(rng() % 65536), -16) * vi.hi; break;
          }
          blk[i] = ((rng() & 1) != 0 ? -y : y) * scale;
        }
        blk[(j * 5) % b] = ((j & 1) != 0 ? -half_range : half_range) * scale;  // the block maximum
      }
      check_calibrate(s, {blocks * b}, data, qc::Calibration::minmax, target_, "ties " + qc::print_scheme(s));
      check_calibrate(s, {4, blocks * b / 4}, data, qc::Calibration::minmax, target_, "ties rows " + qc::print_scheme(s));
    }
  }
}

// Quantize with given scales, whose codes AVX-512 computes by the clamped grid (GridCodes, kClamp):
// per-tensor and blocks of 1, 2, 4 and 8 vectors (and 48 and 192, 3 and 12 vectors, which take
// QuantizeChunk's loops there), one per byte and (4-bit) two per byte, two-level, on rows of two
// chunks and more with a tail of one vector, and of whole groups. Most values y = x / eff lie
// away from ties, so that most groups of four vectors take the register path: inside every
// code's interval, at the points the sums are clamped to (lo - 1/4, hi + 1/4), between those
// and the clamping ties (hi + 0.4, hi + 0.6: the sums clamp, the codes too), beyond (hi + 1,
// lo - 1, far), ±Inf, ±0 and subnormal x. Every other group also holds one value at or near a
// tie (lo - 1/2 and hi + 1/2 among them, which clamp; a float either side, 2^-13 off), which
// sends it down the division path. Scales: powers of two (exact ties), others, and blocks off
// the reciprocal path (tiny and huge).
TEST_P(DiffIntValue, GivenScaleGroups) {
  const qc::ValueInfo& vi = qc::info(value_);
  const std::string v(vi.name);
  std::vector<float> far = {vi.lo - 0.25f, vi.hi + 0.25f, vi.hi + 0.4f, vi.hi + 0.6f, vi.lo - 0.4f, vi.lo - 0.6f,
                            vi.hi + 1.0f,  vi.lo - 1.0f,  300.0f,       -300.0f,      1e30f,        -1e30f,
                            0.0f,          -0.0f,         0x1p-20f};
  std::vector<float> ties;  // (lo - 1/2 and hi + 1/2 among them: the ties of lo and hi)
  for (int code = static_cast<int>(vi.lo); code <= static_cast<int>(vi.hi); ++code) {
    const float k = static_cast<float>(code);
    far.insert(far.end(), {k, k + 0.25f, k - 0.25f, k + 0.4f, k - 0.4f});
    for (const float y : {k + 0.5f, k - 0.5f}) {
      ties.insert(ties.end(), {y, std::nextafter(y, kInf), std::nextafter(y, -kInf), y + 0x1p-13f, y - 0x1p-13f});
    }
  }
  const std::vector<float> raws = {kInf, -kInf, 1e-40f, -1e-45f, FLT_MAX, -FLT_MAX};
  std::mt19937 rng(47001);
  std::uint32_t seed = 47100;
  for (const std::string& level : {std::string(""), std::string(",block=16:ue4m3"), std::string(",block=32:f16"),
                                   std::string(",block=64:bf16"), std::string(",block=128:f32"), std::string(",block=48:f16"),
                                   std::string(",block=192:f32"), std::string(",block=32:ue4m3,tensor=f32")}) {
    for (const std::string& store : {std::string("native"), std::string("packed_u32:0")}) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      for (const qc::Shape& shape : {qc::Shape{4096 + 1024 + 16}, qc::Shape{3, 2048 + 256}}) {
        for (int pattern : {0, 1, 3}) {
          Case c = make_case(s, shape, pattern, seed++);
          const std::vector<float> eff = block_effs(c);
          const qc::Layout l = qc::make_layout(s, shape).value();
          for (std::size_t i = 0; i < c.count; ++i) {
            const float e = eff[qc::block_of(l, i)];
            float x = far[rng() % far.size()] * e;
            if (i % 61 == 7) x = raws[(i / 61) % raws.size()];
            if (i % 128 == 77) x = ties[rng() % ties.size()] * e;
            c.buf[c.offset + i] = x;
          }
          check_case(c, target_);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Blocks whose calibrated f16 or ue4m3 scale saturates at the dtype's maximum, on finite data far
// below 2 * alpha's overflow: their codes clamp, which the fused calibrate+quantize must see
// (quantize-inl.h, CalibratedScaleVec: quotient > kScaleMax) and code by the clamping path, while
// the chunk's other blocks are ordinary. Planted per block: a quotient of four times the maximum,
// exactly the maximum (stored as it is: not saturated), one float above it, and one float below.
// In every other group of 16 blocks (one AVX-512 vector of maxima) also an all-zero block (stored
// scale 0, pattern 0, effective 0.1) and one whose quotient lies in the dtype's subnormal range:
// those groups take CalibratedScaleVec's subnormal path, the others its common one. Rows of 2048
// elements (the four-vector loops and more than one chunk on the narrow targets).
TEST_P(DiffIntValue, CalibratedScaleEdges) {
  const qc::ValueInfo& vi = qc::info(value_);
  const std::string v(vi.name);
  const float half_range = (vi.hi - vi.lo) / 2.0f;
  std::mt19937 rng(27001);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (const auto& [level, dmax] : {std::pair<std::string, float>{",block=32:f16", 65504.0f}, {",block=128:f16", 65504.0f},
                                    {",block=16:ue4m3", 448.0f}, {",block=64:ue4m3", 448.0f}}) {
    // Half the smallest normal of the dtype: a subnormal stored scale.
    const float sub = dmax > 1000.0f ? 0x1p-15f : 0x1p-7f;
    for (const std::string& store : {std::string("packed_u32:0"), std::string("native")}) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      const std::size_t b = s.block->dims[0];
      const qc::Shape shape{3, 2048};
      std::vector<float> data(shape[0] * shape[1]);
      for (std::size_t j = 0; j < data.size() / b; ++j) {
        float* blk = data.data() + j * b;
        for (std::size_t i = 0; i < b; ++i) blk[i] = unit(rng) * 3.0f;
        // alpha = half_range * quotient: fl(2 alpha / range) is the quotient planted (2 alpha and the
        // division exact for the first two; the reference decides the neighbours).
        const float at_max = half_range * dmax;
        float alpha = 0.0f;
        const bool odd_group = (j / 16) % 2 == 1;
        if (odd_group && j % 16 == 9) {
          std::fill(blk, blk + b, 0.0f);
          continue;
        }
        if (odd_group && j % 16 == 12) {
          alpha = half_range * sub;
        } else {
          switch (j % 6) {
            case 1: alpha = 4.0f * at_max; break;
            case 2: alpha = at_max; break;
            case 3: alpha = std::nextafter(at_max, 1e30f); break;
            case 4: alpha = std::nextafter(at_max, 0.0f); break;
            default: continue;  // an ordinary block
          }
        }
        for (std::size_t i = 0; i < b; ++i) blk[i] *= alpha / 3.0f;  // |x| below alpha
        blk[(j * 7) % b] = (j & 1) != 0 ? -alpha : alpha;
      }
      check_calibrate(s, shape, data, qc::Calibration::minmax, target_, "scale edges " + qc::print_scheme(s));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The fused calibrate+quantize of integers codes whole blocks four vectors at a time
// (quantize-inl.h, CalibratedCodes): one check of all 64 (AVX-512) lanes, then the four vectors'
// fields merged into one store; a single lane near a tie sends the four through the per-vector
// path. Blocks are 1 to 32 vectors wide on some target (4 to 128 elements), rows hold a number of
// vectors of every residue mod 4 (the per-vector tail), and more than one chunk. Every block's
// scale is exactly 2^e (its maximum is range / 2 * 2^e), its other values lie well away from a
// tie, and single exact ties are planted at rotating places: each vector of a step, its first,
// middle and last lane. The expected bytes are the reference's calibrate, quantize, serialize.
TEST_P(DiffIntValue, CalibratedFourVectorSteps) {
  const qc::ValueInfo& vi = qc::info(value_);
  const std::string v(vi.name);
  const float half_range = (vi.hi - vi.lo) / 2.0f;
  std::mt19937 rng(23001);
  for (const std::size_t b : {std::size_t{4}, std::size_t{8}, std::size_t{16}, std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
    for (const char* dtype : {"f16", "ue4m3", "bf16", "f32"}) {
      const qc::Scheme s = scheme("value=" + v + ",block=" + std::to_string(b) + ":" + dtype);
      // Rows of 4096 + b * {0, 1, 2, 3} / 4-ish elements: whole blocks, vector counts of every residue.
      for (const std::size_t extra : {std::size_t{0}, b, 2 * b, 3 * b, 5 * b}) {
        const std::size_t n = 4096 + extra;
        std::vector<float> data(2 * n);
        std::size_t planted = 0;
        for (std::size_t j = 0; j < data.size() / b; ++j) {
          const float scale = std::ldexp(1.0f, static_cast<int>(j % 5) - 2);  // 2^-2 .. 2^2
          float* blk = data.data() + j * b;
          for (std::size_t i = 0; i < b; ++i) {
            // |y| = k + f, f in [0.1, 0.4] or [0.6, 0.9]: far from a tie, below the maximum.
            const float k = static_cast<float>(rng() % static_cast<unsigned>(vi.hi));
            const float f = 0.1f + static_cast<float>(rng() % 4096) / 4096.0f * 0.3f + ((rng() & 1) != 0 ? 0.5f : 0.0f);
            const float y = std::min(k + f, half_range - 0.25f);
            blk[i] = ((rng() & 1) != 0 ? -y : y) * scale;
          }
          blk[(j * 7) % b] = ((j & 1) != 0 ? -half_range : half_range) * scale;  // the block maximum
          if (j % 3 == 1 && vi.hi >= 1.0f) {
            // One exact tie, k + 1/2 below hi, at a place that moves through vectors and lanes.
            const std::size_t at = (planted * 37 + (planted % 3) * (b / 2)) % b;
            if (at != (j * 7) % b) {
              const float k = static_cast<float>(rng() % static_cast<unsigned>(vi.hi));
              blk[at] = ((planted & 1) != 0 ? -(k + 0.5f) : k + 0.5f) * scale;
              ++planted;
            }
          }
        }
        check_calibrate(s, {2, n}, data, qc::Calibration::minmax, target_, "steps " + qc::print_scheme(s) + " n " + std::to_string(n));
      }
    }
  }
}

// The fused calibration takes the dtype's subnormal scale range only for the groups of blocks
// that reach it (quantize-inl.h, CalibratedScaleVec): f16 below 2^-14 and ue4m3 below 2^-6, one
// block of a group, a whole group, every other group, and scales exactly at the threshold or one
// float below it. Every value type, every scale dtype.
TEST_P(DiffValue, CalibratedScaleRanges) {
  const qc::ValueInfo& vi = qc::info(value_);
  const std::string v(vi.name);
  const float half_range = (vi.hi - vi.lo) / 2.0f;
  std::mt19937 rng(24001);
  for (const char* dtype : {"f16", "ue4m3", "bf16", "f32"}) {
    const float threshold = std::string(dtype) == "ue4m3" ? 0x1p-6f : 0x1p-14f;
    for (const std::size_t b : {std::size_t{16}, std::size_t{32}}) {
      const qc::Scheme s = scheme("value=" + v + ",store=native,block=" + std::to_string(b) + ":" + dtype);
      const std::size_t blocks = 256;  // 16 groups of 16 blocks, 4 chunks of 64 blocks at b = 32
      for (int pattern = 0; pattern < 5; ++pattern) {
        std::vector<float> data(blocks * b);
        for (std::size_t j = 0; j < blocks; ++j) {
          const std::size_t group = j / 16;
          bool sub = false;
          switch (pattern) {
            case 0: sub = j % 16 == 5; break;       // one block of every group
            case 1: sub = group == 3; break;        // one whole group
            case 2: sub = group % 2 == 0; break;    // every other group
            default: sub = j % 16 == 15 && group % 3 == 0; break;
          }
          // The block's scale: well below the threshold, exactly at it (pattern 3) or one float
          // below it (pattern 4) when `sub`; else a normal one.
          float scale = 0.75f * std::ldexp(1.0f, static_cast<int>(j % 9) - 4);
          if (sub) scale = pattern == 3 ? threshold : pattern == 4 ? std::nextafter(threshold, 0.0f) : threshold * 0.3f;
          float* blk = data.data() + j * b;
          for (std::size_t i = 0; i < b; ++i) blk[i] = (static_cast<float>(rng() % 2001) / 1000.0f - 1.0f) * half_range * scale;
          blk[(j * 3) % b] = half_range * scale;  // its maximum: the calibrated scale is `scale` rounded
        }
        check_calibrate(s, {blocks * b}, data, qc::Calibration::minmax, target_,
                        "scale ranges " + qc::print_scheme(s) + " pattern " + std::to_string(pattern));
      }
    }
  }
}

// NaN, ±Inf and a 2 * alpha overflow in the fused calibration, in the first block, the middle of
// a group, the last whole group of a chunk (whose scales are computed after the loads of the
// group before them) and the blocks after the last whole group: the reference's error kind each
// time (nan-input before calibration-overflow, wherever they are). Quiet NaNs of both signs: on
// AVX-512 a block's maximum can miss one (vrangeps), and the codes pass must find it, also when
// its payload sets bits 2 to 13, which makes its sum look like no tie (found by the calibrate fuzz
// target in session 25: 0xFFE0003F among larger values, q2s packed_u32, bf16 scales). Blocks of
// 16 and 32 elements (1 and 2 AVX-512 vectors: the grouped codes) and of 48 (3: the per-vector
// codes).
TEST_P(DiffValue, CalibratedGroupsRejectBadValues) {
  const std::string v(qc::info(value_).name);
  std::mt19937 rng(25001);
  const std::vector<float> bads = {std::numeric_limits<float>::quiet_NaN(),
                                   -std::numeric_limits<float>::quiet_NaN(),
                                   std::bit_cast<float>(0x7FC5A5A5u),
                                   std::bit_cast<float>(0xFFE0003Fu),
                                   std::bit_cast<float>(0x7FC00FFCu),
                                   kInf,
                                   -kInf,
                                   -FLT_MAX,
                                   FLT_MAX};
  for (const std::size_t b : {std::size_t{16}, std::size_t{32}, std::size_t{48}}) {
    const qc::Scheme s = scheme("value=" + v + ",block=" + std::to_string(b) + ":f16");
    const std::size_t blocks = 64 + 16 + 5;  // a whole chunk at b = 32, one more group, 5 more blocks
    std::vector<float> clean(blocks * b);
    for (float& x : clean) x = static_cast<float>(rng() % 2001) / 100.0f - 10.0f;
    const std::vector<std::size_t> places = {0, 7 * b + 3, 63 * b + b - 1, 64 * b, 79 * b + 1, blocks * b - 1};
    for (const std::size_t at : places) {
      for (const float bad : bads) {
        std::vector<float> data = clean;
        data[at] = bad;
        check_calibrate(s, {blocks * b}, data, qc::Calibration::minmax, target_,
                        "bad " + hexf(bad) + " at " + std::to_string(at) + " " + qc::print_scheme(s));
        if (std::isinf(bad)) {
          data[(at + blocks * b / 2) % data.size()] = std::numeric_limits<float>::quiet_NaN();  // and a NaN elsewhere
          check_calibrate(s, {blocks * b}, data, qc::Calibration::minmax, target_,
                          "bad " + hexf(bad) + " at " + std::to_string(at) + " and NaN " + qc::print_scheme(s));
        }
      }
    }
  }
}

// Input at every float offset from a 64-byte boundary, above the size from which the fused
// calibration's maxima pass loads aligned vectors on AVX-512 (quantize-inl.h, kAlignedMaximaBytes:
// a block then spans the last 16 - o lanes of one aligned vector and the first o of another, and
// the tensor's first and last groups take unaligned loads). Rows of 3072: the aligned vectors
// straddle rows. Blocks of 1, 2, 4 and 8 vectors on AVX-512, each block's scale far from its
// neighbours' (a maximum taken from the wrong block shows in the scales) and its maximum at a
// place that moves through the block; then NaN (quiet, signaling), ±Inf and FLT_MAX at the
// tensor's first and last elements and at the lanes next to an aligned boundary.
TEST_P(DiffValue, CalibrateMisalignedInput) {
  const std::string v(qc::info(value_).name);
  const float half_range = (qc::info(value_).hi - qc::info(value_).lo) / 2.0f;
  std::mt19937 rng(39001);
  const qc::Shape shape = {3, 3072};
  const std::size_t count = 3 * 3072;
  std::vector<float> buf(count + 64);
  const std::size_t base = (64 - reinterpret_cast<std::uintptr_t>(buf.data()) % 64) % 64 / sizeof(float);
  for (const std::size_t b : {std::size_t{16}, std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
    const qc::Scheme s = scheme("value=" + v + ",block=" + std::to_string(b) + ":f16");
    std::vector<float> clean(count);
    for (std::size_t j = 0; j < count / b; ++j) {
      const float scale = std::ldexp(1.0f, static_cast<int>((j * 5) % 13) - 6);
      float* blk = clean.data() + j * b;
      for (std::size_t i = 0; i < b; ++i) blk[i] = (static_cast<float>(rng() % 2001) / 1000.0f - 1.0f) * half_range * scale;
      blk[(j * 7) % b] = (j % 2 == 0 ? 1.5f : -1.5f) * half_range * scale;  // the block's maximum
    }
    for (std::size_t o = 0; o < 16; ++o) {
      float* x = buf.data() + base + o;
      std::copy(clean.begin(), clean.end(), x);
      const std::span<const float> data(x, count);
      const std::string label = qc::print_scheme(s) + " offset " + std::to_string(o);
      check_calibrate(s, shape, data, qc::Calibration::minmax, target_, label);
      const std::vector<std::pair<std::size_t, float>> bads = {
          {0, std::bit_cast<float>(0x7F800001u)},         // a signaling NaN, first element
          {count - 1, kInf},                              // the last element
          {b - 1, std::numeric_limits<float>::quiet_NaN()},  // block 0's last: lane o - 1 of its last vector
          {b - std::max<std::size_t>(o, 1), FLT_MAX},         // its first there (2 * alpha overflows)
          {(16 - o) % 16 + b, -kInf},                     // lane 0 of an aligned vector
          {(31 - o) % 16 + 2 * b, std::bit_cast<float>(0xFFC00FFCu)},  // the last lane before one
          {3072 + (16 - o) % 16, FLT_MAX}};               // the second row
      for (const auto& [at, bad] : bads) {
        x[at] = bad;
        check_calibrate(s, shape, data, qc::Calibration::minmax, target_, label + " bad " + hexf(bad) + " at " + std::to_string(at));
        x[at] = clean[at];
      }
    }
  }
}

// calibrate_quantize_into keeps the plan of its last (scheme, shape, length): a run of calls on one
// length, each changing one thing the plan depends on (the shape's split, the block, its dtype,
// the value, the store, a second level, the calibration) or none (new data, a new buffer), with
// the reference's bytes or error each time, and a wrong buffer size after a plan was made.
TEST_P(Diff, CalibratedPlanReuse) {
  std::mt19937 rng(26001);
  auto fresh = [&](const qc::Shape& shape) {
    std::size_t n = 1;
    for (const std::size_t e : shape) n *= e;
    std::vector<float> d(n);
    for (float& x : d) x = static_cast<float>(static_cast<int>(rng() % 4001) - 2000) / 64.0f;
    return d;
  };
  struct Step {
    std::string scheme;
    qc::Shape shape;
    qc::Calibration m = qc::Calibration::minmax;
  };
  const std::vector<Step> steps = {
      {"value=q8s,block=32:f16", {4, 64}},
      {"value=q8s,block=32:f16", {4, 64}},  // the same plan, new data
      {"value=q8s,block=32:f16", {8, 32}},
      {"value=q8s,block=32:f16", {2, 128}},
      {"value=q8s,block=32:f16", {256}},
      {"value=q8s,block=32:bf16", {256}},  // the same size, another scale encoding
      {"value=q8s,block=16:f16", {256}},
      {"value=q8s,block=16:bf16", {256}},
      {"value=q8s,block=16:f32", {256}},
      {"value=q4s,block=16:f32", {256}},
      {"value=q4s,store=native,block=16:f32", {256}},
      {"value=q4s,store=packed_native:0,block=16:f32", {256}},
      {"value=q4s,store=packed_native:0,block=16:f32", {256}, qc::Calibration::absmean},
      {"value=q4s,store=packed_native:0,block=16:f32", {256}},
      {"value=q4s,store=packed_native:0,block=16:ue4m3,tensor=f32", {256}},
      {"value=e2m1,store=packed_native:0,block=16:ue4m3", {256}},
      {"value=e2m1,store=packed_native:0,block=16:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:0,block=8:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:0,block=2x8:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:0,block=8:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:0,block=32:ue4m3", {16, 16}},  // a block wider than the row
      {"value=e2m1,store=packed_native:0,block=16:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:1,block=16:ue4m3", {16, 16}},  // packed across rows
      {"value=e4m3,block=16:ue4m3", {16, 16}},
      {"value=e4m3", {16, 16}},
      {"value=q8s,block=32:f16", {256}},
      // Two shapes of one length whose layouts have the same size and different bytes: rows of
      // 12 codes take one u32 each, rows of 24 take two.
      {"value=q2s,block=12:f32", {8, 12}},
      {"value=q2s,block=12:f32", {4, 24}},
      {"value=q2s,block=12:f32", {8, 12}},
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::vector<float> data = fresh(steps[i].shape);
    check_calibrate(scheme(steps[i].scheme), steps[i].shape, data, steps[i].m, target_,
                    "step " + std::to_string(i) + " " + steps[i].scheme);
  }
  // After the last step's plan: a buffer a byte short, then a byte long, then the right one.
  const qc::Scheme s = scheme(steps.back().scheme);
  const std::vector<float> data = fresh(steps.back().shape);
  const std::size_t want = qc::make_layout(s, steps.back().shape).value().total_bytes;
  for (const std::size_t size : {want - 1, want + 1}) {
    std::vector<std::uint8_t> out(size, 0x5A);
    const qc::Status st = opt::calibrate_quantize_into(s, steps.back().shape, data, qc::Calibration::minmax, out, target_);
    ASSERT_FALSE(st.ok()) << size;
    EXPECT_EQ(size < want ? qc::ErrorKind::truncated_buffer : qc::ErrorKind::trailing_bytes, st.kind());
  }
  check_calibrate(s, steps.back().shape, data, qc::Calibration::minmax, target_, "after the size errors");
}

// quantize, quantize_into, parse and dequantize_from keep the validation and layout of their last
// (scheme, shape, length) (optimized.cc's LayoutPlan): a run of cases, each changing one thing a
// layout depends on (the shape's split at one length, the block, its dtype, the value, the store,
// a second level, the mode) or none (new data and scales), every operation compared with the
// reference each time; then, after a plan was made, the same scheme and shape with one element
// short and one too many, too few scales, and a scheme that fails validation, each with the
// reference's error, and the plan's case again.
TEST_P(Diff, LayoutPlanReuse) {
  struct Step {
    std::string scheme;
    qc::Shape shape;
  };
  const std::vector<Step> steps = {
      {"value=q8s,block=32:f16", {4, 64}},
      {"value=q8s,block=32:f16", {4, 64}},  // the same plan, new data and scales
      {"value=q8s,block=32:f16", {8, 32}},
      {"value=q8s,block=32:f16", {256}},
      {"value=q8s,block=32:bf16", {256}},  // the same size, another scale encoding
      {"value=q8s,block=16:f16", {256}},
      {"value=q8s", {256}},
      {"value=q8f", {256}},
      {"value=q4s,block=16:f32", {256}},
      {"value=q4s,store=native,block=16:f32", {256}},
      {"value=q4s,block=16:ue4m3,tensor=f32", {256}},
      {"value=q4s,mode=lookup,block=16:ue4m3,tensor=f32", {256}},
      {"value=e2m1,store=packed_native:0,block=16:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:0,block=2x8:ue4m3", {16, 16}},
      {"value=e2m1,store=packed_native:1,block=16:ue4m3", {16, 16}},  // packed across rows
      {"value=e4m3,block=16:ue4m3", {16, 16}},
      {"value=e4m3", {16, 16}},
      {"value=e4m3", {256}},
      // Two shapes of one length whose layouts have the same size and different bytes: rows of
      // 12 codes take one u32 each, rows of 24 take two.
      {"value=q2s,block=12:f32", {8, 12}},
      {"value=q2s,block=12:f32", {4, 24}},
      {"value=q2s,block=12:f32", {8, 12}},
  };
  // nan-input is the data's error, not the plan's.
  auto without_nan = [](Case& c) {
    std::replace_if(c.buf.begin(), c.buf.end(), [](float x) { return std::isnan(x); }, 0.0f);
  };
  std::uint32_t seed = 27001;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i) + " " + steps[i].scheme);
    Case c = make_case(scheme(steps[i].scheme), steps[i].shape, static_cast<int>(i % 3), seed++);
    without_nan(c);
    ASSERT_TRUE(qc::quantize(c.s, c.shape, c.data(), c.scales, c.global, c.tbl()).ok()) << "every step is a valid case";
    check_case(c, target_);
  }
  // After the last step's plans: inputs that share the plan's scheme and shape but not its checks.
  const Step& last = steps.back();
  Case c = make_case(scheme(last.scheme), last.shape, 0, seed++);
  without_nan(c);
  const std::size_t want_bytes = expected_bytes(c);
  for (const std::size_t len : {c.count - 1, c.count + 1}) {
    std::vector<float> data(len, 0.25f);
    std::vector<std::uint8_t> out(want_bytes);
    const qc::Result<qc::QTensor> want = qc::quantize(c.s, c.shape, data, c.scales, c.global);
    ASSERT_FALSE(want.ok()) << len;
    expect_same_result(want, opt::quantize(c.s, c.shape, data, c.scales, c.global, std::nullopt, target_), "quantize, length");
    const qc::Status st = opt::quantize_into(c.s, c.shape, data, c.scales, c.global, out, std::nullopt, target_);
    ASSERT_FALSE(st.ok()) << len;
    EXPECT_EQ(want.kind(), st.kind()) << "quantize_into, length " << len;
  }
  {
    const std::vector<float> fewer(c.scales.begin(), c.scales.end() - 1);
    std::vector<std::uint8_t> out(want_bytes);
    const qc::Result<qc::QTensor> want = qc::quantize(c.s, c.shape, c.data(), fewer, c.global);
    ASSERT_FALSE(want.ok());
    const qc::Status st = opt::quantize_into(c.s, c.shape, c.data(), fewer, c.global, out, std::nullopt, target_);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(want.kind(), st.kind()) << "quantize_into, one scale short";
  }
  const qc::Result<std::vector<std::uint8_t>> bytes = qc::serialize(qc::quantize(c.s, c.shape, c.data(), c.scales, c.global).value());
  ASSERT_TRUE(bytes.ok());
  {
    // Another shape of the same length: the bytes parse there too (rows of 24, not 12), or not.
    const qc::Shape other = {4, 24};
    const qc::Result<qc::QTensor> want = qc::parse(c.s, other, *bytes);
    const qc::Result<qc::QTensor> got = opt::parse(c.s, other, *bytes, std::nullopt, target_);
    expect_same_result(want, got, "parse, another shape");
    if (want.ok() && got.ok()) {
      EXPECT_EQ(want->codes, got->codes) << "parse, another shape";
    }
    std::vector<float> from(c.count);
    const qc::Status st = opt::dequantize_from(c.s, other, *bytes, from, std::nullopt, target_);
    const qc::Result<std::vector<float>> deq = want.ok() ? qc::dequantize(*want) : qc::Result<std::vector<float>>(want.error());
    ASSERT_EQ(deq.ok(), st.ok()) << "dequantize_from, another shape";
    if (deq.ok()) expect_same_floats(*deq, from, "dequantize_from, another shape");
  }
  {
    // The plan's scheme and shape with a block dtype that validate_scheme rejects.
    qc::Scheme bad = c.s;
    bad.block->dtype = qc::ScaleDtype::ue8m0;
    std::vector<std::uint8_t> out(want_bytes);
    const qc::Result<qc::QTensor> want = qc::quantize(bad, c.shape, c.data(), c.scales, c.global);
    ASSERT_FALSE(want.ok());
    const qc::Status st = opt::quantize_into(bad, c.shape, c.data(), c.scales, c.global, out, std::nullopt, target_);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(want.kind(), st.kind()) << "quantize_into, invalid scheme";
    const qc::Result<qc::QTensor> pwant = qc::parse(bad, c.shape, *bytes);
    ASSERT_FALSE(pwant.ok());
    std::vector<float> from(c.count);
    const qc::Status fs = opt::dequantize_from(bad, c.shape, *bytes, from, std::nullopt, target_);
    ASSERT_FALSE(fs.ok());
    EXPECT_EQ(pwant.kind(), fs.kind()) << "dequantize_from, invalid scheme";
  }
  check_case(c, target_);
}

// Every error kind quantize can return, with the reference's kind.
TEST_P(DiffValue, QuantizeErrors) {
  const std::string v(qc::info(value_).name);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t seed = 17001;
  for (const std::string& level : {std::string(""), std::string(",block=8:f16"), std::string(",block=16:ue4m3,tensor=f32")}) {
    const qc::Scheme s = scheme("value=" + v + level);
    for (std::size_t n : {1u, 16u, 37u}) {
      const Case base = make_case(s, {n}, 0, seed++);
      for (std::size_t pos : {std::size_t{0}, n / 2, n - 1}) {  // nan-input anywhere
        Case c = base;
        c.buf[c.offset + pos] = nan;
        check_case(c, target_);
      }
      for (float bad : {nan, -1.0f, kInf, -kInf, -0.0f}) {  // invalid-scale (or fine for -0.0)
        Case c = base;
        c.scales[c.scales.size() / 2] = bad;
        check_case(c, target_);
      }
      {
        Case c = base;  // scale-count-mismatch
        c.scales.push_back(1.0f);
        check_case(c, target_);
      }
      {
        Case c = base;  // shape-mismatch
        c.count -= 1;
        check_case(c, target_);
      }
      {
        Case c = base;  // missing or unexpected global
        c.global = c.global ? std::nullopt : std::optional<float>(1.0f);
        check_case(c, target_);
      }
      if (s.two_level()) {
        for (float g : {nan, -0.5f, kInf, FLT_MAX, -0.0f, 0.0f}) {  // invalid-global-scale, overflow, zero
          Case c = base;
          c.global = g;
          check_case(c, target_);
        }
      }
      {
        Case c = base;  // unexpected-lookup-table
        c.table = std::vector<float>(std::size_t{1} << qc::info(value_).bits, 0.0f);
        check_case(c, target_);
      }
    }
  }
  // Static scheme errors and shape errors reach the reference's validation order.
  for (const std::string& text : {"value=" + v + ",block=0:f16", "value=" + v + ",block=4:ue8m0",
                                  "value=" + v + ",block=4:f16,tensor=f16", "value=" + v + ",block=4:f32,tensor=f32",
                                  "value=" + v + ",store=packed_native:0", "value=" + v + ",mode=lookup,store=native",
                                  "value=" + v + ",block=2x2:f16", "value=" + v + ",store=packed_u32:3"}) {
    const qc::Scheme s = scheme(text);
    check_case(make_case(s, {8}, 0, seed++), target_);
  }
  {
    Case c = make_case(scheme("value=" + v), {2, 2, 2, 2, 2, 2, 2, 2, 2}, 0, seed++);  // rank 9: shape-overflow
    check_case(c, target_);
  }
  if (!qc::info(value_).minifloat) {
    const qc::Scheme s = scheme("value=" + v + ",mode=lookup");
    Case c = make_case(s, {9}, 0, seed++);
    Case none = c;
    none.table.reset();  // missing-lookup-table
    check_case(none, target_);
    Case small = c;
    small.table->pop_back();  // lookup-table-size
    check_case(small, target_);
    Case bad = c;
    (*bad.table)[0] = nan;  // invalid-lookup-table
    check_case(bad, target_);
  }
}

// Non-canonical tensors and bytes: dequantize, serialize, pack, unpack, parse and dequantize_from
// must reject exactly what the reference rejects, with its kind.
TEST_P(DiffValue, CorruptTensorsAndBytes) {
  const std::string v(qc::info(value_).name);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t seed = 19001;
  for (const std::string& store : stores_for(value_)) {
    for (const std::string& level : {std::string(""), std::string(",block=4:ue4m3"), std::string(",block=3:f16,tensor=f32")}) {
      const qc::Scheme s = scheme("value=" + v + ",store=" + store + level);
      for (const qc::Shape& shape : {qc::Shape{2, 7}}) {
        Case c = make_case(s, shape, 0, seed++);
        for (float& x : c.buf) {
          if (std::isnan(x)) x = 0.0f;
        }
        const qc::Result<qc::QTensor> t = qc::quantize(c.s, c.shape, c.data(), c.scales, c.global);
        if (!t.ok()) continue;  // e.g. packing dim out of range on rank 1
        const std::vector<std::uint8_t> bytes = qc::serialize(*t).value();
        SCOPED_TRACE(c.label);
        // Tensors with one part off the canonical set.
        std::vector<qc::QTensor> bad;
        for (std::int32_t code : {-129, -128, -9, -8, -3, -2, -1, 8, 15, 16, 127, 128, 255, 256, 0x7F, 0x7E, 0xFF, 0x7C, 0x87}) {
          qc::QTensor u = *t;
          u.codes[u.codes.size() / 2] = code;
          bad.push_back(u);
        }
        for (float sc : {-0.0f, nan, kInf, -1.0f, 0.3f, 1e-45f}) {
          qc::QTensor u = *t;
          u.scales[0] = sc;
          bad.push_back(u);
        }
        if (t->global) {
          for (float g : {-0.0f, nan, kInf, FLT_MAX}) {
            qc::QTensor u = *t;
            u.global = g;
            bad.push_back(u);
          }
        }
        {
          qc::QTensor u = *t;
          u.codes.push_back(0);
          bad.push_back(u);
        }
        for (const qc::QTensor& u : bad) {
          const qc::Result<std::vector<float>> dw = qc::dequantize(u);
          const qc::Result<std::vector<float>> dg = opt::dequantize(u, std::nullopt, target_);
          expect_same_result(dw, dg, "dequantize");
          if (dw.ok() && dg.ok()) expect_same_floats(*dw, *dg, "dequantize");
          const qc::Result<std::vector<std::uint8_t>> sw = qc::serialize(u);
          const qc::Result<std::vector<std::uint8_t>> sg = opt::serialize(u, target_);
          expect_same_result(sw, sg, "serialize");
          if (sw.ok() && sg.ok()) {
            EXPECT_EQ(*sw, *sg);
          }
          const qc::Result<std::vector<std::uint8_t>> pw = qc::pack(u.scheme, u.shape, u.codes);
          const qc::Result<std::vector<std::uint8_t>> pg = opt::pack(u.scheme, u.shape, u.codes, target_);
          expect_same_result(pw, pg, "pack");
          if (pw.ok() && pg.ok()) {
            EXPECT_EQ(*pw, *pg);
          }
        }
        // Bytes with one byte changed, each position, a few values; and wrong lengths.
        std::vector<std::vector<std::uint8_t>> variants;
        for (std::size_t i = 0; i < bytes.size(); ++i) {
          for (int b : {0xFF, 0x80, 0x0F, 0x08}) {
            std::vector<std::uint8_t> u = bytes;
            u[i] = static_cast<std::uint8_t>(b);
            variants.push_back(u);
          }
        }
        variants.push_back(std::vector<std::uint8_t>(bytes.begin(), bytes.end() - 1));
        std::vector<std::uint8_t> longer = bytes;
        longer.push_back(0);
        variants.push_back(longer);
        const std::size_t storage_bytes = qc::make_layout(c.s, c.shape).value().storage_bytes;
        for (const std::vector<std::uint8_t>& u : variants) {
          const qc::Result<qc::QTensor> pw = qc::parse(c.s, c.shape, u);
          const qc::Result<qc::QTensor> pg = opt::parse(c.s, c.shape, u, std::nullopt, target_);
          expect_same_result(pw, pg, "parse");
          if (pw.ok() && pg.ok()) expect_same_tensor(*pw, *pg, c);
          std::vector<float> out(c.count);
          const qc::Status fs = opt::dequantize_from(c.s, c.shape, u, out, std::nullopt, target_);
          ASSERT_EQ(pw.ok(), fs.ok()) << "dequantize_from: " << (fs.ok() ? "ok" : kind_of(fs.error()));
          if (!pw.ok()) {
            EXPECT_EQ(pw.kind(), fs.kind());
          } else {
            expect_same_floats(qc::dequantize(*pw).value(), out, "dequantize_from");
          }
          if (u.size() >= storage_bytes) {
            const std::span<const std::uint8_t> st(u.data(), std::min(u.size(), storage_bytes + (u.size() > bytes.size())));
            const qc::Result<std::vector<std::int32_t>> uw = qc::unpack(c.s, c.shape, st);
            const qc::Result<std::vector<std::int32_t>> ug = opt::unpack(c.s, c.shape, st, target_);
            expect_same_result(uw, ug, "unpack");
            if (uw.ok() && ug.ok()) {
              EXPECT_EQ(*uw, *ug);
            }
          }
          if (::testing::Test::HasFatalFailure()) return;
        }
        {
          std::vector<float> out(c.count + 1);  // shape-mismatch on the output, after the inputs
          EXPECT_EQ(opt::dequantize_from(c.s, c.shape, bytes, out, std::nullopt, target_).kind(), qc::ErrorKind::shape_mismatch);
        }
      }
    }
  }
}

// Stored bytes whose global times a stored block scale overflows (invalid-global-scale, SPEC
// §3.5, §7), or comes near it: dequantize_from computes those products per chunk from the stored
// patterns (ue4m3's with the global multiplied by 2^8 first on AVX2), and must find the overflow
// where the reference does and give its floats everywhere else.
TEST_P(DiffValue, DequantizeFromGlobalNearOverflow) {
  const std::string v(qc::info(value_).name);
  std::uint32_t seed = 23001;
  for (const std::string& level : {std::string("block=16:ue4m3,tensor=f32"), std::string("block=3:f16,tensor=f32"),
                                   std::string("block=32:ue4m3,tensor=f32")}) {
    const qc::Scheme s = scheme("value=" + v + ",store=" + stores_for(value_).front() + "," + level);
    const qc::Shape shape{3, 96};
    Case c = make_case(s, shape, 0, seed++);
    for (float& x : c.buf) {
      if (std::isnan(x)) x = 0.0f;
    }
    const qc::Result<qc::QTensor> t = qc::quantize(c.s, c.shape, c.data(), c.scales, c.global);
    ASSERT_TRUE(t.ok()) << describe(s, shape);
    const std::vector<std::uint8_t> bytes = qc::serialize(*t).value();
    SCOPED_TRACE(describe(s, shape));
    const qc::Layout lay = qc::make_layout(c.s, c.shape).value();
    const std::size_t w = qc::scale_bytes(s.scale_dtype());
    // The largest finite stored pattern (448 in ue4m3, 65504 in f16), little-endian.
    const std::uint32_t largest = s.scale_dtype() == qc::ScaleDtype::ue4m3 ? 0x7Eu : 0x7BFFu;
    for (const bool widest : {false, true}) {
      for (const float g : {FLT_MAX, 0x1p121f, 0x1p120f, 0x1.fffffep119f, 0x1p119f, 0x1p112f, 0x1p111f, 1e30f, 3.0f, 0x1p-149f}) {
        std::vector<std::uint8_t> u = bytes;
        const std::uint32_t gb = std::bit_cast<std::uint32_t>(g);
        for (std::size_t b = 0; b < 4; ++b) u[u.size() - 4 + b] = static_cast<std::uint8_t>(gb >> (8 * b));
        if (widest) {  // the first and the last stored scale at the dtype's largest value
          for (const std::size_t k : {std::size_t{0}, lay.scale_count - 1}) {
            for (std::size_t b = 0; b < w; ++b) u[lay.storage_bytes + k * w + b] = static_cast<std::uint8_t>(largest >> (8 * b));
          }
        }
        const qc::Result<qc::QTensor> pw = qc::parse(c.s, c.shape, u);
        std::vector<float> out(c.count);
        const qc::Status fs = opt::dequantize_from(c.s, c.shape, u, out, std::nullopt, target_);
        const std::string what = "global " + std::to_string(g) + (widest ? " with the largest scales" : "");
        ASSERT_EQ(pw.ok(), fs.ok()) << what << ": " << (fs.ok() ? "ok" : kind_of(fs.error()));
        if (!pw.ok()) {
          EXPECT_EQ(pw.kind(), fs.kind()) << what;
        } else {
          expect_same_floats(qc::dequantize(*pw).value(), out, what);
        }
      }
    }
  }
}

// Outputs of 16 MiB and more are written with streaming stores (dequantize_from, dequantize and
// the 1-to-4 ceiling): straight from the registers for rows of whole vectors (rotated when the
// output is not vector-aligned), through L1 for the others. The same floats as the reference's,
// nothing written outside the output, and its errors for non-canonical codes and bytes. The bytes
// are serialized by the reference from random data; each case runs at three offsets from a 64-byte
// boundary, so every vector width meets an aligned output, one a float past alignment and one a
// float short of it.
TEST_P(Diff, StreamedLargeOutputs) {
  struct Large {
    qc::Scheme s;
    qc::Shape shape;
    int bad_byte;           // a byte value that is not canonical storage for the scheme (-1: none)
    std::int32_t bad_code;  // a code that is not canonical for the value
    qc::QTensor t;
    std::vector<std::uint8_t> bytes;
    std::vector<float> want;
  };
  static const std::vector<Large> cases = [] {
    struct Spec {
      const char* text;
      qc::Shape shape;
      int bad_byte;
      std::int32_t bad_code;
    };
    const Spec specs[] = {
        {"value=q4s,store=packed_u32:0,block=32:f16", {1023, 4128}, 0x88, -8},  // blocks of 2 vectors (AVX-512)
        {"value=e4m3", {4194311}, 0x7F, 0x7F},                                // one row, not whole vectors
        {"value=e4m3", {4100, 1040}, 0xFF, 0xFF},                             // per-tensor, 65 vectors a row
        {"nvfp4", {2048, 2048}, -1, 16},  // every e2m1 byte is canonical
        {"value=q8s,block=8:f16", {2048, 2056}, 0x80, -128},  // whole vectors on 8 and 4 lanes only
        {"value=q8s,block=64:bf16", {1024, 4096}, 0x80, -128},
        {"value=q4s,store=native,block=64:f32", {2048, 2048}, 0x10, 16},  // a bit above the width
        {"value=q2s,store=native", {2048, 2048}, 0x02, -2},
        {"value=e5m2", {2048, 2048}, 0xFC, 0x7C},  // -Inf; +Inf in the codes
        // f16 decode with a scale per vector, or per two (AVX-512; AVX2 per two and four).
        {"value=e4m3,block=16:f16", {1024, 4096}, 0xFF, 0xFF},
        {"value=e5m2,block=32:bf16", {1024, 4096}, 0x7D, 0x7D},  // NaN
    };
    std::vector<Large> out;
    for (const Spec& spec : specs) {
      Large l{scheme(spec.text), spec.shape, spec.bad_byte, spec.bad_code, {}, {}, {}};
      const std::size_t count = spec.shape.size() == 1 ? spec.shape[0] : spec.shape[0] * spec.shape[1];
      std::mt19937 rng(77);
      std::normal_distribution<float> dist(0.0f, 3.0f);
      std::vector<float> data(count);
      for (float& x : data) x = dist(rng);
      const qc::Result<qc::QParams> cal = qc::calibrate(l.s, spec.shape, data, qc::Calibration::minmax);
      if (!cal.ok()) {
        ADD_FAILURE() << spec.text << ": " << kind_of(cal.error());
        continue;
      }
      const qc::QParams& p = *cal;
      l.t = qc::quantize(l.s, spec.shape, data, p.scales, p.global).value();
      l.bytes = qc::serialize(l.t).value();
      l.want = qc::dequantize(l.t).value();
      out.push_back(std::move(l));
    }
    return out;
  }();
  for (const Large& l : cases) {
    SCOPED_TRACE(describe(l.s, l.shape));
    std::vector<float> buf(l.want.size() + 64, 1234.5f);
    std::size_t base = 0;
    while (reinterpret_cast<std::uintptr_t>(buf.data() + base) % 64 != 0) ++base;
    // Aligned, a float past, a float short, and half a vector past (a separate path).
    std::vector<std::size_t> offsets = {0, 1, 15};
    if (const std::size_t vb = vector_bytes(target_); vb > sizeof(float)) offsets.push_back(vb / 2 / sizeof(float));
    for (const std::size_t off : offsets) {
      SCOPED_TRACE("output offset " + std::to_string(off));
      std::fill(buf.begin(), buf.end(), 1234.5f);
      const std::span<float> out(buf.data() + base + off, l.want.size());
      ASSERT_TRUE(opt::dequantize_from(l.s, l.shape, l.bytes, out, std::nullopt, target_).ok());
      expect_same_floats(l.want, out, "dequantize_from");
      for (std::size_t i = 0; i < buf.size(); ++i) {
        if (i >= base + off && i < base + off + l.want.size()) continue;
        ASSERT_EQ(bits(buf[i]), bits(1234.5f)) << "written outside the output, at " << i;
      }
    }
    const qc::Result<std::vector<float>> from_codes = opt::dequantize(l.t, std::nullopt, target_);
    ASSERT_TRUE(from_codes.ok());
    expect_same_floats(l.want, *from_codes, "dequantize");
    // A code off the canonical set in the codes, and in the middle and at the end of the storage.
    qc::QTensor u = l.t;
    u.codes[u.codes.size() / 2 + 5] = l.bad_code;
    expect_same_result(qc::dequantize(u), opt::dequantize(u, std::nullopt, target_), "dequantize, non-canonical code");
    // Corrupted bytes: parse rejects them with `kind`, and dequantize_from with parse's error.
    auto expect_rejected = [&](const std::vector<std::uint8_t>& bad, qc::ErrorKind kind, const std::string& where) {
      const std::span<float> out(buf.data() + base + 1, l.want.size());
      const qc::Result<qc::QTensor> want = qc::parse(l.s, l.shape, bad);
      const qc::Status got = opt::dequantize_from(l.s, l.shape, bad, out, std::nullopt, target_);
      ASSERT_FALSE(want.ok()) << where;
      EXPECT_EQ(want.kind(), kind) << where;
      ASSERT_FALSE(got.ok()) << where;
      EXPECT_EQ(got.kind(), want.kind()) << where;
    };
    // A stored scale with its sign bit set (SPEC §7: invalid-scale in every scale dtype), the
    // last one and one in the middle: the kernel stops mid-stream and the reference reports it.
    const qc::Layout lay = qc::make_layout(l.s, l.shape, l.want.size()).value();
    const std::size_t w = lay.scale_bytes / lay.scale_count;
    for (std::size_t k : {lay.scale_count / 2, lay.scale_count - 1}) {
      std::vector<std::uint8_t> bad = l.bytes;
      bad[lay.storage_bytes + k * w + w - 1] |= 0x80;
      expect_rejected(bad, qc::ErrorKind::invalid_scale, "scale " + std::to_string(k));
    }
    if (l.bad_byte < 0) continue;
    // In the middle, at each quarter of a 64-byte group of fields (the direct path checks one-byte
    // fields a vector of bytes at a time), and at the end.
    const std::size_t mid = lay.storage_bytes / 2 / 64 * 64;
    for (std::size_t at : {mid, mid + 17, mid + 40, mid + 63, lay.storage_bytes - 1}) {
      std::vector<std::uint8_t> bad = l.bytes;
      bad[at] = static_cast<std::uint8_t>(l.bad_byte);
      expect_rejected(bad, qc::ErrorKind::invalid_code, "byte " + std::to_string(at));  // SPEC §7
    }
  }
  const std::size_t n = (std::size_t{16} << 20) / sizeof(float) + 5;
  std::vector<std::uint8_t> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::uint8_t>(i * 7 + 1);
  std::vector<float> buf(n + 1, 0.0f);
  ASSERT_TRUE(opt::ceiling_1to4(in, std::span<float>(buf.data() + 1, n), target_));
  for (std::size_t i = 0; i < n; ++i) {
    if (bits(buf[i + 1]) != in[i]) {
      ADD_FAILURE() << "ceiling_1to4 [" << i << "]: " << bits(buf[i + 1]) << ", want " << int{in[i]};
      break;
    }
  }
}

// Sets a process-wide prefetch switch (`kSet`: opt::set_far_prefetch, opt::set_chunk_prefetch)
// for a scope, then back to automatic.
template <class Mode, void (*kSet)(Mode)>
struct SwitchScope {
  explicit SwitchScope(Mode mode) { kSet(mode); }
  ~SwitchScope() { kSet(Mode::automatic); }
  SwitchScope(const SwitchScope&) = delete;
  SwitchScope& operator=(const SwitchScope&) = delete;
};
using FarPrefetchScope = SwitchScope<opt::FarPrefetch, opt::set_far_prefetch>;
using ChunkPrefetchScope = SwitchScope<opt::ChunkPrefetch, opt::set_chunk_prefetch>;

// The value of the first line of /proc/cpuinfo named `field` ("vendor_id", "cpu family"),
// without the blanks before it; empty when there is none (not Linux, or no such line).
std::string cpuinfo_field(std::string_view field) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with(field)) continue;
    std::string value = line.substr(line.find(':') + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return {};
}

// Diff.LargeStorage's inputs: storage of 16 MiB and more, where quantize_into and the fused
// calibrate_quantize_into stream their stores. The data are normal with the given sigma.
struct LargeSpec {
  const char* text;
  qc::Shape shape;
  float sigma;
};
const LargeSpec kLargeSpecs[] = {
    {"value=q8s,block=32:f16", {4100, 4096}, 3.0f},                // the fused codes, rows of whole vectors
    {"value=q8s,block=32:f16", {4099, 4128}, 3.0f},                // rows 32 bytes past a vector
    {"value=q8s", {4097, 4098}, 3.0f},                             // u32 words: 2 padding bytes a row
    {"value=q4s,store=packed_u32:0,block=20:ue4m3,tensor=f32", {8193, 4100}, 3.0f},  // packed, padded
    {"value=e4m3", {4100, 4096}, 3.0f},                            // per-tensor minifloat (unfused)
    {"value=e4m3,block=16:ue4m3", {4097, 4112}, 3.0f},             // fused, minifloat codes
    // Per-tensor integers in rows of whole groups (AVX2 streams them from the registers), with a
    // scale below 2^-125: the division path.
    {"value=q8s,store=native", {4096, 4128}, 0x1p-125f},
    // 4-bit fields in rows of whole 64-element pairs of groups (AVX2 streams them from the
    // registers): e2m1 blocks of 16, and q4s two-level with every block on the division path.
    {"nvfp4", {2048, 16384}, 3.0f},
    {"value=q4s,store=packed_u32:0,block=32:ue4m3,tensor=f32", {2048, 16384}, 0x1p-125f},
};

// The spec's data, normal with its sigma, into `data`: a pool of 2^16 draws picked by a 64-bit
// xorshift per element (a draw of std::normal_distribution per element had been a third of an
// instance's time, and the stream is what this test is about).
void large_data(const LargeSpec& spec, std::vector<float>& data) {
  std::mt19937 rng(88);
  std::normal_distribution<float> dist(0.0f, spec.sigma);
  std::vector<float> pool(std::size_t{1} << 16);
  for (float& x : pool) x = dist(rng);
  data.resize(spec.shape[0] * spec.shape[1]);
  std::uint64_t state = 0x9E3779B97F4A7C15u;
  for (float& x : data) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    x = pool[state >> 48];
  }
}

// The reference's answers for one spec's data: its minmax calibration, the serialized bytes of
// quantize with those parameters, and its errors for the data with a NaN near the end, here.
std::size_t large_nan_at(const LargeSpec& spec) { return spec.shape[0] * spec.shape[1] - 70; }

struct LargeReference {
  qc::QParams p;
  std::vector<std::uint8_t> want;
  qc::ErrorKind calibrate_error = qc::ErrorKind::nan_input, quantize_error = qc::ErrorKind::nan_input;
};

std::optional<LargeReference> large_reference(const LargeSpec& spec, std::vector<float>& data) {
  const qc::Scheme s = scheme(spec.text);
  LargeReference r;
  const qc::Result<qc::QParams> cal = qc::calibrate(s, spec.shape, data, qc::Calibration::minmax);
  if (!cal.ok()) {
    ADD_FAILURE() << spec.text << ": " << kind_of(cal.error());
    return std::nullopt;
  }
  r.p = *cal;
  const qc::Result<qc::QTensor> q = qc::quantize(s, spec.shape, data, r.p.scales, r.p.global);
  if (!q.ok()) {
    ADD_FAILURE() << spec.text << ": " << kind_of(q.error());
    return std::nullopt;
  }
  r.want = qc::serialize(*q).value();
  const std::size_t nan_at = large_nan_at(spec);
  const float kept = data[nan_at];
  data[nan_at] = std::numeric_limits<float>::quiet_NaN();
  const qc::Result<qc::QParams> cw = qc::calibrate(s, spec.shape, data, qc::Calibration::minmax);
  const qc::Result<qc::QTensor> qw = qc::quantize(s, spec.shape, data, r.p.scales, r.p.global);
  data[nan_at] = kept;
  if (cw.ok() || qw.ok()) {
    ADD_FAILURE() << spec.text << ": the reference took a NaN";
    return std::nullopt;
  }
  r.calibrate_error = cw.kind();
  r.quantize_error = qw.kind();
  return r;
}

// The reference's answers for every spec, in kLargeSpecs' order (one short per failure reported).
std::vector<LargeReference> compute_large_references() {
  std::vector<LargeReference> out;
  std::vector<float> data;
  for (const LargeSpec& spec : kLargeSpecs) {
    large_data(spec, data);
    if (std::optional<LargeReference> r = large_reference(spec, data)) out.push_back(std::move(*r));
  }
  return out;
}

// The reference's answers for every spec cost a minute of CPU time (most of ten under the asan
// preset), and ctest runs Diff.LargeStorage once per target, each in a process of its own. So
// ctest computes them once per run: the test LargeStorageReference.Write (a fixture setup, see
// CMakeLists.txt) writes them to the file named by QCONFORM_LARGE_STORAGE_REFERENCE, the
// instances read it, and a cleanup test removes it. Without the variable, or when the file does
// not hold what kLargeSpecs describe, an instance computes them itself.
constexpr char kLargeMagic[8] = {'Q', 'C', 'L', 'S', 'R', 'E', 'F', '1'};

template <typename T>
void put(std::FILE* f, const T& v) {
  std::fwrite(&v, sizeof v, 1, f);
}
template <typename T>
bool get(std::FILE* f, T& v) {
  return std::fread(&v, sizeof v, 1, f) == 1;
}

bool write_large_references(const char* path, const std::vector<LargeReference>& refs) {
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return false;
  std::fwrite(kLargeMagic, 1, sizeof kLargeMagic, f);
  put(f, std::uint64_t{refs.size()});
  for (const LargeReference& r : refs) {
    put(f, std::uint64_t{r.want.size()});
    std::fwrite(r.want.data(), 1, r.want.size(), f);
    put(f, std::uint64_t{r.p.scales.size()});
    std::fwrite(r.p.scales.data(), sizeof(float), r.p.scales.size(), f);
    put(f, std::uint8_t{r.p.global.has_value()});
    put(f, r.p.global.value_or(0.0f));
    put(f, static_cast<std::uint32_t>(r.calibrate_error));
    put(f, static_cast<std::uint32_t>(r.quantize_error));
  }
  const bool ok = std::ferror(f) == 0;
  return std::fclose(f) == 0 && ok;
}

// The file's answers when it holds one per spec, each of the sizes the spec's layout gives.
std::optional<std::vector<LargeReference>> read_large_references(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return std::nullopt;
  std::vector<LargeReference> refs;
  char magic[sizeof kLargeMagic] = {};
  std::uint64_t count = 0;
  bool ok = std::fread(magic, 1, sizeof magic, f) == sizeof magic && std::equal(magic, magic + sizeof magic, kLargeMagic) &&
            get(f, count) && count == std::size(kLargeSpecs);
  for (std::size_t i = 0; ok && i < count; ++i) {
    const qc::Layout lay = qc::make_layout(scheme(kLargeSpecs[i].text), kLargeSpecs[i].shape).value();
    LargeReference r;
    std::uint64_t n = 0, scales = 0;
    std::uint8_t has_global = 0;
    float global = 0.0f;
    std::uint32_t ce = 0, qe = 0;
    ok = get(f, n) && n == lay.total_bytes;
    if (!ok) break;
    r.want.resize(n);
    ok = std::fread(r.want.data(), 1, n, f) == n && get(f, scales) && scales == lay.scale_count;
    if (!ok) break;
    r.p.scales.resize(scales);
    ok = std::fread(r.p.scales.data(), sizeof(float), scales, f) == scales && get(f, has_global) && get(f, global) &&
         get(f, ce) && get(f, qe);
    if (has_global != 0) r.p.global = global;
    r.calibrate_error = static_cast<qc::ErrorKind>(ce);
    r.quantize_error = static_cast<qc::ErrorKind>(qe);
    refs.push_back(std::move(r));
  }
  ok = ok && std::fgetc(f) == EOF;
  std::fclose(f);
  if (!ok) return std::nullopt;
  return refs;
}

// The fixture setup of ctest's Diff.LargeStorage instances (CMakeLists.txt); skipped when run
// outside it, where each instance computes the reference's answers itself.
TEST(LargeStorageReference, Write) {
  const char* path = std::getenv("QCONFORM_LARGE_STORAGE_REFERENCE");
  if (path == nullptr) GTEST_SKIP() << "QCONFORM_LARGE_STORAGE_REFERENCE is not set (ctest sets it)";
  const std::vector<LargeReference> refs = compute_large_references();
  ASSERT_EQ(refs.size(), std::size(kLargeSpecs));
  ASSERT_TRUE(write_large_references(path, refs)) << path;
  const std::optional<std::vector<LargeReference>> back = read_large_references(path);
  ASSERT_TRUE(back.has_value()) << path << " does not read back";
  for (std::size_t i = 0; i < refs.size(); ++i) ASSERT_TRUE((*back)[i].want == refs[i].want) << kLargeSpecs[i].text;
}

// Storage of 16 MiB and more is written with streaming stores (quantize_into, the fused
// calibrate_quantize_into and the 4-to-1 ceiling): whole aligned vectors, each once, the bytes
// before the first aligned address and after the last one plain. The fused q8 codes on AVX-512
// and AVX2, and AVX2's quantize of one-byte fields in rows of whole groups and of packed 4-bit
// fields in rows of whole pairs of groups, go straight from the registers (spliced when the
// output is not vector-aligned; on AVX2 only at 16 bytes past), everything else through L1 a
// chunk at a time, carrying the bytes short of a vector from chunk to chunk and row to row
// (padding included). The reference's bytes, nothing written outside the
// output, at offsets from a 64-byte boundary that meet every vector width aligned, half a 32-byte
// vector past, a byte past and a byte short of alignment (of these, on each target, one per
// remainder modulo its vector: scalar's is a byte, so one offset), and the error of a NaN near the end
// after most of the stream is out. One instance per target, as the other tests (until session 31
// one test looped over every target: with emu128 added, under the asan preset it outran ctest's
// hour); the reference's answers come from LargeStorageReference.Write's file under ctest, and
// are computed once per process otherwise.
TEST_P(Diff, LargeStorage) {
  static const std::vector<LargeReference> refs = [] {
    if (const char* path = std::getenv("QCONFORM_LARGE_STORAGE_REFERENCE"); path != nullptr) {
      if (std::optional<std::vector<LargeReference>> from_file = read_large_references(path)) return std::move(*from_file);
      std::printf("%s does not hold the reference's answers: computing them\n", path);
    }
    return compute_large_references();
  }();
  ASSERT_EQ(refs.size(), std::size(kLargeSpecs));
  // The stream's alignment is to the target's vector of bytes (scalar: one byte, the 128-bit
  // targets: 16), so offsets with the same remainder take the same path: each remainder once.
  const std::size_t vec = opt::target_name(target_) == "scalar" ? 1 : vector_bytes(target_);
  std::vector<std::size_t> offsets;
  for (const std::size_t off : {0, 1, 16, 63}) {
    if (std::none_of(offsets.begin(), offsets.end(), [&](std::size_t o) { return o % vec == off % vec; })) {
      offsets.push_back(off);
    }
  }
  std::vector<float> data;          // one spec's at a time, in buffers reused from spec to spec:
  std::vector<std::uint8_t> buf;    // first touches of fresh pages had cost as much as the data
  for (std::size_t c = 0; c < std::size(kLargeSpecs); ++c) {
    const qc::Scheme s = scheme(kLargeSpecs[c].text);
    const qc::Shape& shape = kLargeSpecs[c].shape;
    const LargeReference& ref = refs[c];
    SCOPED_TRACE(describe(s, shape));
    ASSERT_GE(qc::make_layout(s, shape).value().storage_bytes, std::size_t{16} << 20);
    large_data(kLargeSpecs[c], data);
    const std::vector<std::uint8_t>& want = ref.want;
    buf.assign(want.size() + 128, 0xA5);
    std::size_t base = 0;
    while (reinterpret_cast<std::uintptr_t>(buf.data() + base) % 64 != 0) ++base;
    for (const std::size_t off : offsets) {
      SCOPED_TRACE("output offset " + std::to_string(off));
      const std::span<std::uint8_t> out(buf.data() + base + off, want.size());
      auto check = [&](const qc::Status& st, const char* what) {
        ASSERT_TRUE(st.ok()) << what << ": " << kind_of(st.error());
        if (!std::equal(want.begin(), want.end(), out.begin())) {
          const auto diff = std::mismatch(want.begin(), want.end(), out.begin());
          ADD_FAILURE() << what << ": byte " << (diff.first - want.begin()) << " is " << int{*diff.second} << ", want "
                        << int{*diff.first};
        }
        for (std::size_t i = 0; i < base + off; ++i) ASSERT_EQ(buf[i], 0xA5) << what << " wrote before the output, at " << i;
        for (std::size_t i = base + off + want.size(); i < buf.size(); ++i) {
          ASSERT_EQ(buf[i], 0xA5) << what << " wrote after the output, at " << i;
        }
      };
      // quantize_into's loops with far prefetches and without (whichever this CPU takes by default,
      // every CPU runs both).
      for (const opt::FarPrefetch far : {opt::FarPrefetch::on, opt::FarPrefetch::off}) {
        const FarPrefetchScope scope(far);
        std::fill(buf.begin(), buf.end(), 0xA5);
        check(opt::quantize_into(s, shape, data, ref.p.scales, ref.p.global, out, std::nullopt, target_),
              far == opt::FarPrefetch::on ? "quantize_into, far prefetches on" : "quantize_into, far prefetches off");
      }
      // calibrate_quantize_into's codes pass with its next-chunk prefetches into L1 and into L2.
      for (const opt::ChunkPrefetch level : {opt::ChunkPrefetch::l1, opt::ChunkPrefetch::l2}) {
        const ChunkPrefetchScope scope(level);
        std::fill(buf.begin(), buf.end(), 0xA5);
        check(opt::calibrate_quantize_into(s, shape, data, qc::Calibration::minmax, out, target_),
              level == opt::ChunkPrefetch::l1 ? "calibrate_quantize_into, next chunk into L1"
                                              : "calibrate_quantize_into, next chunk into L2");
      }
    }
    // A NaN near the end: most of the stream has gone out, and the reference's error comes back.
    data[large_nan_at(kLargeSpecs[c])] = std::numeric_limits<float>::quiet_NaN();
    const std::span<std::uint8_t> out(buf.data() + base + 1, want.size());
    const qc::Status bc = opt::calibrate_quantize_into(s, shape, data, qc::Calibration::minmax, out, target_);
    const qc::Status bq = opt::quantize_into(s, shape, data, ref.p.scales, ref.p.global, out, std::nullopt, target_);
    ASSERT_FALSE(bc.ok());
    EXPECT_EQ(ref.calibrate_error, bc.kind());
    ASSERT_FALSE(bq.ok());
    EXPECT_EQ(ref.quantize_error, bq.kind());
  }
  // The 4-to-1 ceiling: the low byte of each element (below 256: U8FromU32's precondition), a byte
  // past alignment.
  const std::size_t n = (std::size_t{16} << 20) + 5;
  std::vector<float> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>((i * 7 + 1) & 0xFF));
  for (const opt::FarPrefetch far : {opt::FarPrefetch::on, opt::FarPrefetch::off}) {
    const FarPrefetchScope scope(far);
    SCOPED_TRACE(far == opt::FarPrefetch::on ? "far prefetches on" : "far prefetches off");
    std::vector<std::uint8_t> cb(n + 2, 0xA5);
    ASSERT_TRUE(opt::ceiling_4to1(in, std::span<std::uint8_t>(cb.data() + 1, n), target_));
    ASSERT_EQ(cb[0], 0xA5);
    ASSERT_EQ(cb[n + 1], 0xA5);
    for (std::size_t i = 0; i < n; ++i) {
      if (cb[i + 1] != static_cast<std::uint8_t>(i * 7 + 1)) {
        ADD_FAILURE() << "ceiling_4to1 [" << i << "]: " << int{cb[i + 1]} << ", want " << ((i * 7 + 1) & 0xFF);
        break;
      }
    }
  }
}

// The far prefetches' switch: on and off as set, and `automatic` on exactly for Intel CPUs, as
// the kernel's /proc/cpuinfo names the vendor (Linux; elsewhere that part is skipped).
TEST(FarPrefetch, Modes) {
  {
    const FarPrefetchScope on(opt::FarPrefetch::on);
    EXPECT_TRUE(opt::far_prefetch());
    const FarPrefetchScope off(opt::FarPrefetch::off);
    EXPECT_FALSE(opt::far_prefetch());
  }
  const std::string vendor = cpuinfo_field("vendor_id");
  if (vendor.empty()) GTEST_SKIP() << "no vendor_id in /proc/cpuinfo";
  EXPECT_EQ(opt::far_prefetch(), vendor == "GenuineIntel") << "vendor " << vendor;
}

// The next-chunk prefetches' switch: l1 and l2 on every supported target as set, and `automatic`
// L1 exactly on the AVX-512 targets (avx3, avx3_dl) of AMD CPUs of family 26 and later, as the
// kernel's /proc/cpuinfo names vendor and family (Linux; elsewhere that part is skipped).
TEST(ChunkPrefetch, Modes) {
  std::vector<std::int64_t> supported;
  for (const opt::Target& t : opt::targets()) {
    if (t.supported) supported.push_back(t.bits);
  }
  ASSERT_FALSE(supported.empty());
  {
    const ChunkPrefetchScope l1(opt::ChunkPrefetch::l1);
    for (const std::int64_t t : supported) EXPECT_TRUE(opt::chunk_prefetch_l1(t)) << opt::target_name(t);
    EXPECT_TRUE(opt::chunk_prefetch_l1());
    const ChunkPrefetchScope l2(opt::ChunkPrefetch::l2);
    for (const std::int64_t t : supported) EXPECT_FALSE(opt::chunk_prefetch_l1(t)) << opt::target_name(t);
    EXPECT_FALSE(opt::chunk_prefetch_l1());
  }
  const std::string vendor = cpuinfo_field("vendor_id"), family = cpuinfo_field("cpu family");
  if (vendor.empty() || family.empty()) GTEST_SKIP() << "no vendor_id or cpu family in /proc/cpuinfo";
  const bool zen5 = vendor == "AuthenticAMD" && std::stoi(family) >= 26;
  for (const std::int64_t t : supported) {
    const std::string name = opt::target_name(t);
    EXPECT_EQ(opt::chunk_prefetch_l1(t), zen5 && (name == "avx3" || name == "avx3_dl"))
        << name << ", vendor " << vendor << ", family " << family;
  }
}

// The fused calibrate+quantize on inputs between L1's and kFarPrefetchBytes' sizes (64 KiB to 16
// MiB), which no other test reaches: chunks of 4096 elements up to 2 MiB of input and of 2048
// above, the maxima pass's aligned loads of input that is not 64-byte aligned (4 bytes past a
// 16-byte boundary), and, from 64 KiB, the codes pass's prefetch of the whole next chunk where the
// chunk prefetch goes into L1 (quantize-inl.h, kNearChunkPrefetchBytes): just under and at 64 KiB,
// rows of whole and partial chunks, and just past 2 MiB, with both switch settings. The bytes are
// the reference's calibrate, quantize and serialize; then a NaN in the last chunk gives the
// reference's error.
TEST_P(Diff, MidSizeCalibrateQuantize) {
  const std::vector<std::pair<std::string, qc::Shape>> cases = {
      {"value=q8s,block=32:f16", {1, 16352}},        // 64 KiB less a block
      {"value=q8s,block=32:f16", {1, 16384}},        // 64 KiB
      {"value=q8s,block=32:f16", {16, 1056}},        // rows shorter than a chunk
      {"value=q8s,block=64:bf16", {3, 8288}},        // two whole chunks and a partial one per row
      {"value=q4s,block=32:ue4m3", {5, 6144}},       // packed two per byte, a chunk and a half
      {"value=q8s,block=32:f16", {2, 262240}},       // just past 2 MiB: chunks of 2048
  };
  std::mt19937 rng(49001);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> buf;
  for (const auto& [text, shape] : cases) {
    const qc::Scheme s = scheme(text);
    const std::size_t count = shape[0] * shape[1];
    buf.assign(count + 1, 0.0f);
    for (std::size_t i = 0; i < count; ++i) buf[i + 1] = dist(rng) * static_cast<float>(1 + i % 5);
    // x 4 bytes past the vector's start (std::vector's storage is 16-byte aligned at least).
    std::span<float> data(buf.data() + 1, count);
    for (const opt::ChunkPrefetch level : {opt::ChunkPrefetch::l1, opt::ChunkPrefetch::l2}) {
      const ChunkPrefetchScope scope(level);
      const std::string label = describe(s, shape) + (level == opt::ChunkPrefetch::l1 ? ", next chunk into L1" : ", into L2");
      check_calibrate(s, shape, data, qc::Calibration::minmax, target_, label);
      data[count - 40] = std::numeric_limits<float>::quiet_NaN();
      check_calibrate(s, shape, data, qc::Calibration::minmax, target_, label + ", NaN late");
      data[count - 40] = 1.0f;
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Results do not depend on the caller's MXCSR (rounding mode, FTZ, DAZ), and the caller gets it
// back bit for bit, exception flags included: a flag a call raises (every quantize here raises
// inexact) is cleared again when the caller had it clear, and the caller's own flags stay set,
// whether or not the caller's mode was already the default one (where the guard leaves MXCSR be).
TEST_P(Diff, CallerFloatingPointEnvironment) {
#if defined(__x86_64__) || defined(__i386__)
  const qc::Scheme s = scheme("value=e4m3,block=8:f16");
  const Case c = make_case(s, {256}, 1, 42);
  const qc::QTensor want = qc::quantize(c.s, c.shape, c.data(), c.scales, c.global).value();
  const std::vector<float> deq = qc::dequantize(want).value();
  std::vector<float> cdata(256);  // finite (the case's data may hold NaN or ±Inf, which calibrate rejects)
  for (std::size_t i = 0; i < cdata.size(); ++i) cdata[i] = static_cast<float>(i % 7) / 3.0f - 1.0f;
  cdata[5] = 1e-41f;  // a subnormal input
  const qc::QParams wcal = qc::calibrate(s, c.shape, cdata, qc::Calibration::minmax).value();
  const std::vector<std::uint8_t> wbytes =
      qc::serialize(qc::quantize(s, c.shape, cdata, wcal.scales, wcal.global).value()).value();
  std::vector<std::uint8_t> out(wbytes.size());
  const unsigned saved = _mm_getcsr();
  for (unsigned csr : {0x1F80u /* default, flags clear */, 0x1FBFu /* default, every flag set */,
                       0x1FA0u /* default, inexact set */, 0x9FC0u /* FTZ+DAZ */, 0x7F80u /* toward zero */,
                       0x3F80u /* down */, 0xDFC0u /* all */, 0x7FBFu /* toward zero, every flag set */}) {
    _mm_setcsr(csr);
    const qc::Result<qc::QTensor> got = opt::quantize(c.s, c.shape, c.data(), c.scales, c.global, std::nullopt, target_);
    const qc::Result<std::vector<float>> gdeq = opt::dequantize(want, std::nullopt, target_);
    const qc::Result<qc::QParams> cal = opt::calibrate(s, c.shape, std::vector<float>(256, 1e-39f), qc::Calibration::minmax, target_);
    const qc::Status cq = opt::calibrate_quantize_into(s, c.shape, cdata, qc::Calibration::minmax, out, target_);
    const unsigned after = _mm_getcsr();
    _mm_setcsr(saved);
    EXPECT_EQ(after, csr) << "MXCSR 0x" << std::hex << csr << " came back as 0x" << after;
    ASSERT_TRUE(got.ok() && gdeq.ok() && cal.ok() && cq.ok());
    expect_same_tensor(want, *got, c);
    expect_same_floats(deq, *gdeq, "dequantize under MXCSR " + std::to_string(csr));
    expect_same_floats(qc::calibrate(s, c.shape, std::vector<float>(256, 1e-39f), qc::Calibration::minmax).value().scales,
                       cal->scales, "calibrate under MXCSR");
    EXPECT_EQ(out, wbytes) << "calibrate_quantize_into under MXCSR " << csr;
  }
#else
  GTEST_SKIP() << "MXCSR is x86 only";
#endif
}

// Targets are listed, named, found and dispatched consistently.
TEST_P(Diff, TargetRegistry) {
  EXPECT_EQ(opt::find_target(opt::target_name(target_)), target_);
  std::string upper = opt::target_name(target_);
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(opt::find_target(upper), target_);
  bool listed = false;
  for (const opt::Target& t : opt::targets()) listed = listed || (t.bits == target_ && t.supported);
  EXPECT_TRUE(listed);
}

TEST(Targets, BestIsSupportedAndListed) {
  const std::vector<opt::Target> ts = opt::targets();
  ASSERT_FALSE(ts.empty());
  const std::int64_t best = opt::best_target();
  EXPECT_EQ(opt::dispatched_target(0), best);
  EXPECT_FALSE(opt::find_target("no-such-target").has_value());
  for (std::size_t i = 0; i + 1 < ts.size(); ++i) EXPECT_LT(ts[i].bits, ts[i + 1].bits) << "best first";
  for (const opt::Target& t : ts) {
    if (t.supported) {
      EXPECT_LE(best, t.bits);
    } else {
      EXPECT_FALSE(opt::find_target(t.name).has_value()) << t.name << " is not supported here";
    }
  }
}

// Both portable fallbacks are compiled in and run on every x86-64 CPU: SCALAR (optimized.cc) and,
// in every build but the libFuzzer and OSS-Fuzz ones, EMU128 (emu128.cc, issue 3's
// `optimized:emu128`), each found by name and dispatched to itself.
TEST(Targets, PortableFallbacks) {
  std::vector<std::string> want = {"scalar"};
#if QCONFORM_EMU128_UNIT
  want.push_back("emu128");
#endif
  for (const std::string& name : want) {
    const std::optional<std::int64_t> t = opt::find_target(name);
    ASSERT_TRUE(t.has_value()) << name << " is not compiled in or not supported";
    EXPECT_EQ(opt::target_name(*t), name);
    EXPECT_EQ(opt::dispatched_target(*t), *t) << name;
  }
}

// A target that cannot run here (never compiled in: no bit, two bits, a bit no x86 build has;
// and every compiled target this CPU lacks) runs nothing and returns implementation_fault from
// every operation, never a crash (the library had aborted until session 21).
TEST(Targets, UnrunnableTargetIsATypedError) {
  std::vector<std::int64_t> bad = {-1, 3, std::int64_t{1} << 40, opt::best_target() | (std::int64_t{1} << 62) | 1};
  for (const opt::Target& t : opt::targets()) {
    if (!t.supported) bad.push_back(t.bits);
  }
  const qc::Scheme s = qc::parse_scheme("value=q8s,block=4:f32").value();
  const std::vector<std::size_t> shape = {8};
  const std::vector<float> data = {1, -2, 3, -4, 5, -6, 7, -8};
  const qc::QParams p = qc::calibrate(s, shape, data, qc::Calibration::minmax).value();
  const qc::QTensor q = qc::quantize(s, shape, data, p.scales, p.global).value();
  const std::vector<std::uint8_t> bytes = qc::serialize(q).value();
  std::vector<std::uint8_t> out(bytes.size());
  std::vector<float> fout(data.size());
  const auto fault = [](const auto& r) { return !r.ok() && r.error().kind == qc::ErrorKind::implementation_fault; };
  for (const std::int64_t t : bad) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(fault(opt::quantize(s, shape, data, p.scales, p.global, std::nullopt, t)));
    EXPECT_TRUE(fault(opt::dequantize(q, std::nullopt, t)));
    EXPECT_TRUE(fault(opt::calibrate(s, shape, data, qc::Calibration::minmax, t)));
    EXPECT_TRUE(fault(opt::pack(s, shape, q.codes, t)));
    EXPECT_TRUE(fault(opt::unpack(s, shape, std::span<const std::uint8_t>(bytes).first(8), t)));
    EXPECT_TRUE(fault(opt::serialize(q, t)));
    EXPECT_TRUE(fault(opt::parse(s, shape, bytes, std::nullopt, t)));
    EXPECT_TRUE(fault(opt::quantize_into(s, shape, data, p.scales, p.global, out, std::nullopt, t)));
    EXPECT_TRUE(fault(opt::calibrate_quantize_into(s, shape, data, qc::Calibration::minmax, out, t)));
    EXPECT_TRUE(fault(opt::dequantize_from(s, shape, bytes, fout, std::nullopt, t)));
    EXPECT_EQ(opt::dispatched_target(t), 0);
    EXPECT_FALSE(opt::ceiling_4to1(data, out, t));
    EXPECT_FALSE(opt::ceiling_1to4(bytes, fout, t));
  }
  // The same calls on target 0 run (the inputs are valid).
  EXPECT_TRUE(opt::quantize(s, shape, data, p.scales, p.global).ok());
  EXPECT_TRUE(opt::quantize_into(s, shape, data, p.scales, p.global, out).ok());
  EXPECT_TRUE(opt::ceiling_4to1(data, out));
}

}  // namespace
