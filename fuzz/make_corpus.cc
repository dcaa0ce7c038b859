// Seed corpus generator and checker for the fuzz targets.
//
//   make_corpus write OUTDIR              writes OUTDIR/<target>/<name> for every seed below
//   make_corpus check CORPUS TARGET...    replays nothing; decodes every file of CORPUS/<target>/
//                                         and fails unless the corpus still reaches every error
//                                         kind and scheme family it must (SPEC §10)
//
// Seeds are written with the producer's own encoder (fuzz/producer.h), each checked to decode
// back to the case it was built from, and each `kind-<error-kind>...` seed checked to give that
// kind in the reference. Names say what a file is: kind-*, family-<value>-<store>-<level>,
// seed-* for the project's seed scenario, edge-* for boundaries; merged finds keep libFuzzer's
// hash names.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "producer.h"
#include "qconform/fuzz_producer.h"
#ifdef QCONFORM_FUZZ_HAVE_OPTIMIZED
#include "qconform/optimized.h"
#include "target_value.h"
#endif

using namespace qconform;
using namespace qconform::fuzz;
namespace fs = std::filesystem;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Seed {
  std::string target;
  std::string name;
  std::vector<std::uint8_t> bytes;
};

std::vector<Seed> g_seeds;
int g_errors = 0;

void problem(const std::string& what) {
  std::fprintf(stderr, "make_corpus: %s\n", what.c_str());
  ++g_errors;
}

std::string kind_name(std::optional<ErrorKind> k) { return k ? std::string(to_string(*k)) : std::string("ok"); }

// The kind a seed's name promises: "kind-<error-kind>..." (the longest matching kind name;
// implementation-fault too, which only target_bits files reach).
std::optional<ErrorKind> promised_kind(std::string_view name) {
  if (!name.starts_with("kind-")) return std::nullopt;
  const std::string_view rest = name.substr(5);
  constexpr std::string_view kFault = "implementation-fault";
  if (rest.starts_with(kFault) && (rest.size() == kFault.size() || rest[kFault.size()] == '-')) {
    return ErrorKind::implementation_fault;
  }
  std::optional<ErrorKind> best;
  std::size_t best_len = 0;
  for (const auto& [kind, text] : kErrorKinds) {
    if (rest.starts_with(text) && (rest.size() == text.size() || rest[text.size()] == '-') && text.size() > best_len) {
      best = kind;
      best_len = text.size();
    }
  }
  return best;
}

// The outcome a file's name speaks of: the reference's, except for target_bits, whose files are
// about the optimized library called with the file's target value (nullopt when it is not built:
// those files are then not checked).
std::optional<std::optional<ErrorKind>> outcome(const std::string& target, std::span<const std::uint8_t> bytes) {
  if (target != "target_bits") return reference_outcome(target, bytes);
#ifdef QCONFORM_FUZZ_HAVE_OPTIMIZED
  const TargetCase c = decode_target(bytes);
  const QuantCase& q = c.quant;
  const Table table = table_of(q.table);
  const Result<QTensor> r =
      optimized::quantize(q.scheme.scheme, q.shape, q.data, q.scales, q.global, table, target_value(c));
  return r.ok() ? std::nullopt : std::optional<ErrorKind>(r.kind());
#else
  return std::nullopt;
#endif
}

// Registers a seed after checking that its outcome is what its name says.
void add(const std::string& target, const std::string& name, std::vector<std::uint8_t> bytes) {
  const std::optional<std::optional<ErrorKind>> checked = outcome(target, bytes);
  if (!checked) {
    g_seeds.push_back(Seed{target, name, std::move(bytes)});
    return;
  }
  const std::optional<ErrorKind> got = *checked;
  if (name.starts_with("kind-")) {
    const std::optional<ErrorKind> want = promised_kind(name);
    if (!want) problem(target + "/" + name + ": the name names no error kind");
    if (got != want) problem(target + "/" + name + ": reference gives " + kind_name(got));
  } else if (name.starts_with("ok-") && got) {
    problem(target + "/" + name + ": reference gives " + kind_name(got));
  }
  for (const Seed& s : g_seeds) {
    if (s.target == target && s.name == name) problem(target + "/" + name + ": duplicate seed name");
  }
  g_seeds.push_back(Seed{target, name, std::move(bytes)});
}

template <class Case, class Decode>
void add_case(const std::string& target, const std::string& name, const Case& c, Decode decode) {
  std::vector<std::uint8_t> bytes = encode(c);
  if (!same_case(decode(std::span<const std::uint8_t>(bytes)), c)) {
    problem(target + "/" + name + ": the encoded case does not decode back to itself");
  }
  add(target, name, std::move(bytes));
}

void add_quant(const std::string& name, const QuantCase& c) { add_case("scheme_qparams", name, c, decode_quant); }
void add_parse(const std::string& name, const ParseCase& c) { add_case("parse_bytes", name, c, decode_parse); }
void add_dequant(const std::string& name, const DequantCase& c) { add_case("dequantize", name, c, decode_dequant); }
void add_calib(const std::string& name, const CalibCase& c) { add_case("calibrate", name, c, decode_calib); }
void add_target(const std::string& name, const TargetCase& c) { add_case("target_bits", name, c, decode_target); }

// ---- schemes ---------------------------------------------------------------------------------

Scheme scheme(Value v, StoreKind k = StoreKind::native, std::uint64_t dim = 0) {
  Scheme s;
  s.value = v;
  s.store = Store{k, dim};
  return s;
}
Scheme with_block(Scheme s, std::vector<std::uint8_t> dims, ScaleDtype d) {
  s.block = BlockLevel{std::move(dims), d};
  return s;
}
Scheme with_tensor(Scheme s, ScaleDtype d) {
  s.tensor = d;
  return s;
}
Scheme as_lookup(Scheme s) {
  s.mode = Mode::lookup;
  return s;
}
SchemeCase model(const Scheme& s) { return SchemeCase{s, std::nullopt, std::nullopt}; }
SchemeCase text(const std::string& t) {
  SchemeCase c;
  c.text = t;
  Result<Scheme> r = parse_scheme(t);
  if (r.ok()) {
    c.scheme = r.value();
  } else {
    c.text_error = r.error();
  }
  return c;
}

std::string store_name(StoreKind k) {
  switch (k) {
    case StoreKind::native: return "native";
    case StoreKind::packed_u32: return "packed_u32";
    case StoreKind::packed_native: return "packed_native";
  }
  return "?";
}

// ---- data ------------------------------------------------------------------------------------

// n values spread over [-span, span] with a -0.0, rounding ties and (optionally) ±Inf mixed in.
std::vector<float> ramp(std::size_t n, float span, bool infinities = true) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float t = n > 1 ? static_cast<float>(i) / static_cast<float>(n - 1) : 0.5f;
    v[i] = (2.0f * t - 1.0f) * span;
  }
  if (n > 2) v[1] = -0.0f;
  if (n > 4) v[3] = 2.5f;
  if (infinities && n > 6) {
    v[5] = kInf;
    v[n - 2] = -kInf;
  }
  return v;
}

std::vector<float> table_for(Value v) {
  const std::size_t n = std::size_t{1} << info(v).bits;
  std::vector<float> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = (static_cast<float>(i) - static_cast<float>(n) / 2) * 0.5f;
  return t;
}

// A valid QuantCase for scheme s on shape [2, 8] (blocks of 4: a 2x2 grid).
QuantCase family_case(const Scheme& s) {
  QuantCase c;
  c.scheme = model(s);
  c.shape = {2, 8};
  c.data = ramp(16, 3.0f);
  c.scales.assign(expected_scale_count(s, c.shape), 0.05f);
  if (c.scales.size() > 1) c.scales[1] = 0.125f;
  if (s.two_level()) c.global = 0.5f;
  if (s.mode == Mode::lookup) c.table = table_for(s.value);
  return c;
}

// ---- scheme_qparams, parse_bytes, dequantize, calibrate --------------------------------------

struct Level {
  std::string name;
  std::optional<BlockLevel> block;
  std::optional<ScaleDtype> tensor;
};
const std::vector<Level>& levels() {
  static const std::vector<Level> l = {
      {"none", std::nullopt, std::nullopt},
      {"tensor", std::nullopt, ScaleDtype::f32},
      {"block", BlockLevel{{4}, ScaleDtype::f16}, std::nullopt},
      {"two-level", BlockLevel{{4}, ScaleDtype::ue4m3}, ScaleDtype::f32},
  };
  return l;
}

void families() {
  for (const ValueInfo& vi : kValues) {
    for (StoreKind k : {StoreKind::native, StoreKind::packed_u32, StoreKind::packed_native}) {
      for (const Level& lv : levels()) {
        Scheme s = scheme(vi.value, k);
        s.block = lv.block;
        s.tensor = lv.tensor;
        const std::string name = "family-" + std::string(vi.name) + "-" + store_name(k) + "-" + lv.name;
        const QuantCase q = family_case(s);
        add_quant(name, q);
        CalibCase cal{q.scheme, q.shape, Calibration::minmax, q.data};
        for (float& x : cal.data) {
          if (std::isinf(x)) x = 1.0f;
        }
        add_calib(name + "-minmax", cal);
        if (!s.two_level()) {
          cal.method = Calibration::absmean;
          add_calib(name + "-absmean", cal);
        }
        const Result<QTensor> t = quantize(s, q.shape, q.data, q.scales, q.global);
        if (!t.ok()) continue;  // e.g. packed_native with a 4-bit integer: an error seed already
        add_parse(name, ParseCase{q.scheme, q.shape, std::nullopt, serialize(t.value()).value()});
        add_dequant(name, DequantCase{q.scheme, q.shape, t->codes, t->scales, t->global, std::nullopt});
      }
    }
    if (vi.minifloat) continue;
    // Lookup mode: integer values in packed_u32, per tensor and per block.
    for (const Level& lv : levels()) {
      Scheme s = as_lookup(scheme(vi.value, StoreKind::packed_u32));
      s.block = lv.block;
      s.tensor = lv.tensor;
      const std::string name = "family-lookup-" + std::string(vi.name) + "-packed_u32-" + lv.name;
      const QuantCase q = family_case(s);
      add_quant(name, q);
      const Result<QTensor> t = quantize(s, q.shape, q.data, q.scales, q.global, table_of(q.table));
      if (!t.ok()) continue;
      add_parse(name, ParseCase{q.scheme, q.shape, q.table, serialize(t.value()).value()});
      add_dequant(name, DequantCase{q.scheme, q.shape, t->codes, t->scales, t->global, q.table});
    }
  }
}

// One scheme per static error of SPEC §3.1, shared by every target.
struct BadScheme {
  std::string kind_suffix;  // "<error-kind>-<what>"
  SchemeCase scheme;
};
std::vector<BadScheme> bad_schemes() {
  const Scheme q8 = scheme(Value::q8s);
  return {
      {"invalid-scheme-unknown-value", text("value=q9f")},
      {"invalid-scheme-duplicate-key", text("value=q8f,value=q4f")},
      {"invalid-scheme-dim-over-255", text("block=256:f16")},
      {"invalid-block-size-zero-dim", model(with_block(q8, {4, 0}, ScaleDtype::f16))},
      {"invalid-block-size-six-dims", model(with_block(q8, {2, 2, 2, 2, 2, 2}, ScaleDtype::f16))},
      {"invalid-block-size-no-dims", model(with_block(q8, {}, ScaleDtype::f16))},
      {"unsupported-scale-dtype-block-ue8m0", model(with_block(q8, {4}, ScaleDtype::ue8m0))},
      {"unsupported-scale-dtype-tensor-ue8m0", model(with_tensor(q8, ScaleDtype::ue8m0))},
      {"narrow-global-scale-tensor-ue8m0", model(with_tensor(with_block(q8, {4}, ScaleDtype::f16), ScaleDtype::ue8m0))},
      {"narrow-global-scale-f16", model(with_tensor(with_block(q8, {4}, ScaleDtype::ue4m3), ScaleDtype::f16))},
      {"block-scale-too-wide-bf16", model(with_tensor(with_block(q8, {4}, ScaleDtype::bf16), ScaleDtype::f32))},
      {"block-scale-too-wide-f32", model(with_tensor(with_block(q8, {4}, ScaleDtype::f32), ScaleDtype::f32))},
      {"unsupported-store-q4f-packed-native", model(scheme(Value::q4f, StoreKind::packed_native))},
      {"unsupported-lookup-scheme-native", model(as_lookup(scheme(Value::q4s, StoreKind::native)))},
      {"unsupported-lookup-scheme-minifloat", model(as_lookup(scheme(Value::e4m3, StoreKind::packed_u32)))},
  };
}

// The seed scenario (shared/seeds/): burn's panic on a two-level scheme without its global.
QuantCase seed_case() {
  QuantCase c;
  c.scheme = model(with_tensor(with_block(scheme(Value::q8s), {4}, ScaleDtype::ue4m3), ScaleDtype::f32));
  c.shape = {8};
  c.scales = {0.5f, 0.125f};
  c.data = {0.5f, -1.0f, 2.5f, 3.0f, -4.0f, 5.5f, 6.0f, -7.0f};
  return c;
}

void quant_seeds() {
  add_quant("seed-two-level-without-global", seed_case());
  for (const BadScheme& b : bad_schemes()) {
    QuantCase c = family_case(b.scheme.scheme);
    c.scheme = b.scheme;
    add_quant("kind-" + b.kind_suffix, c);
  }
  // Two-level without a global wins over everything after it in SPEC §3.
  {
    QuantCase c = seed_case();
    c.shape = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    c.data = {kNaN};
    c.scales = {kNaN, -1.0f, 3.0f};
    c.table = std::vector<float>{kNaN};
    add_quant("kind-missing-global-scale-whatever-else-is-wrong", c);
    c = seed_case();
    c.scheme = text("nvfp4");
    c.shape = {32};
    c.data = ramp(32, 6.0f);
    c.scales = {1.0f, 2.0f};
    add_quant("kind-missing-global-scale-nvfp4", c);
  }
  const QuantCase base = family_case(scheme(Value::q8s));
  const QuantCase blocked = family_case(with_block(scheme(Value::q8s), {4}, ScaleDtype::f16));
  const QuantCase two = family_case(with_tensor(with_block(scheme(Value::q8s), {4}, ScaleDtype::ue4m3), ScaleDtype::f32));
  QuantCase c;
  c = base;
  c.global = 1.0f;
  add_quant("kind-unexpected-global-scale", c);
  c = base;
  c.shape = {3, 3, 3, 3, 3, 3, 3, 3, 3};
  c.data = {};
  add_quant("kind-shape-overflow-rank-9", c);
  c = base;
  c.shape = {std::size_t{1} << 40, std::size_t{1} << 40};
  c.data = {};
  add_quant("kind-shape-overflow-element-count", c);
  c = base;
  c.shape = {std::size_t{1} << 62};
  c.data = {};
  add_quant("kind-shape-overflow-float-buffer", c);
  c = base;
  c.data.pop_back();
  add_quant("kind-shape-mismatch-one-short", c);
  c = base;
  c.shape = {std::size_t{1} << 40};
  add_quant("kind-shape-mismatch-huge-shape", c);
  c = blocked;
  c.scheme = model(with_block(scheme(Value::q8s), {4, 4, 4}, ScaleDtype::f16));
  add_quant("kind-block-rank-exceeds-tensor", c);
  c = family_case(scheme(Value::q4s, StoreKind::packed_u32, 2));
  add_quant("kind-packing-dim-out-of-range", c);
  c = family_case(scheme(Value::q4s, StoreKind::packed_u32, std::numeric_limits<std::uint64_t>::max()));
  add_quant("kind-packing-dim-out-of-range-huge-d", c);
  c = blocked;
  c.scales.push_back(1.0f);
  add_quant("kind-scale-count-mismatch-block", c);
  c = base;
  c.scales = {1.0f, 1.0f};
  add_quant("kind-scale-count-mismatch-tensor", c);
  c = base;
  c.scales = {kNaN};
  add_quant("kind-invalid-scale-nan", c);
  c = blocked;
  c.scales[2] = -0.5f;
  add_quant("kind-invalid-scale-negative", c);
  c = base;
  c.scales = {kInf};
  add_quant("kind-invalid-scale-inf", c);
  c = two;
  c.global = kNaN;
  add_quant("kind-invalid-global-scale-nan", c);
  c = two;
  c.global = 3e38f;
  c.scales.assign(c.scales.size(), 400.0f);
  add_quant("kind-invalid-global-scale-overflow", c);
  c = family_case(as_lookup(scheme(Value::q4s, StoreKind::packed_u32)));
  c.table.reset();
  add_quant("kind-missing-lookup-table", c);
  c = base;
  c.table = table_for(Value::q8s);
  add_quant("kind-unexpected-lookup-table", c);
  c = family_case(as_lookup(scheme(Value::q4s, StoreKind::packed_u32)));
  c.table->pop_back();
  add_quant("kind-lookup-table-size", c);
  c = family_case(as_lookup(scheme(Value::q2f, StoreKind::packed_u32)));
  (*c.table)[2] = kNaN;
  add_quant("kind-invalid-lookup-table", c);
  c = base;
  c.data[7] = kNaN;
  add_quant("kind-nan-input", c);

  // Edges: rank 0, partial blocks on several axes, packed lines padded on their own, zero and -0
  // scales (0.1f), saturation, rounding ties, subnormal scales, huge y.
  c = family_case(scheme(Value::q4s, StoreKind::packed_u32));
  c.shape = {};
  c.data = {-3.5f};
  add_quant("ok-edge-rank-0-packed", c);
  c = family_case(with_block(scheme(Value::q4f, StoreKind::packed_u32, 1), {2, 3}, ScaleDtype::f16));
  c.shape = {5, 7};
  c.data = ramp(35, 9.0f);
  c.scales.assign(expected_scale_count(c.scheme.scheme, c.shape), 0.75f);
  add_quant("ok-edge-partial-blocks-packed-dim-1", c);
  c = family_case(with_block(scheme(Value::e2m1, StoreKind::packed_native, 0), {3}, ScaleDtype::ue4m3));
  c.shape = {3, 5};
  c.data = ramp(15, 7.0f);
  c.scales.assign(expected_scale_count(c.scheme.scheme, c.shape), 0.001f);
  add_quant("ok-edge-e2m1-odd-lines-subnormal-ue4m3", c);
  c = base;
  c.scales = {-0.0f};
  add_quant("ok-edge-negative-zero-scale", c);
  c = blocked;
  c.scales = {0.0f, 1e-30f, 70000.0f, 3e-8f};
  add_quant("ok-edge-f16-scales-zero-tiny-saturating", c);
  c = family_case(with_block(scheme(Value::e4m3), {8}, ScaleDtype::bf16));
  c.data = {464.0f, -464.0f, 480.0f, 1e30f, -1e-30f, 0x1p-10f, -0x1p-9f, 0.0f,
            17.0f, 1.0625f, 240.0f, 255.0f, -kInf, kInf, 0x1.0p-7f, 3.75f};
  c.scales = {1.0f, 1.0f};
  add_quant("ok-edge-e4m3-ties-and-saturation", c);
  c = family_case(with_block(scheme(Value::e5m2, StoreKind::packed_u32, 1), {2, 2}, ScaleDtype::f32));
  c.data = {57344.0f, 61440.0f, 0x1p-16f, 0x1p-17f, 0x1.8p-17f, -0.0f, 1.0f, 1.125f,
            1.375f, -3.0e4f, 1e38f, -1e38f, 0.3f, 0.7f, 100.0f, 1000.0f};
  c.scales.assign(expected_scale_count(c.scheme.scheme, c.shape), 1.0f);
  add_quant("ok-edge-e5m2-ties-and-saturation", c);
  c = family_case(with_tensor(with_block(scheme(Value::q2s, StoreKind::packed_u32), {2, 4}, ScaleDtype::f16),
                              ScaleDtype::f32));
  c.global = 3e-39f;  // a subnormal global
  c.scales = {1.0f, 65504.0f};
  add_quant("ok-edge-subnormal-global", c);
  c = family_case(as_lookup(scheme(Value::q2f, StoreKind::packed_u32)));
  c.table = std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f};
  c.scales = {1.0f};
  c.data = {0.5f, 1.5f, 2.5f, -1.0f, 4.0f, 0.49999997f, kInf, -kInf, 1.0f, 2.0f, 3.0f, 0.0f, -0.0f, 2.75f, 1e-40f,
            1e30f};
  add_quant("ok-edge-lookup-ties-to-lower-index", c);
  c = family_case(scheme(Value::q8f));
  c.scheme = text("block=1x1x1:f16,value=q8f,store=packed_u32:0");
  c.scales.assign(expected_scale_count(c.scheme.scheme, c.shape), 0.25f);
  add_quant("ok-edge-one-element-blocks-text", c);
}

void parse_seeds() {
  for (const BadScheme& b : bad_schemes()) {
    add_parse("kind-" + b.kind_suffix, ParseCase{b.scheme, {2, 8}, std::nullopt, std::vector<std::uint8_t>(24, 0)});
  }
  const Scheme q8 = scheme(Value::q8s);
  const Scheme blocked_f16 = with_block(scheme(Value::q8f), {4}, ScaleDtype::f16);
  const Scheme two = with_tensor(with_block(scheme(Value::q4s, StoreKind::packed_u32), {4}, ScaleDtype::ue4m3),
                                 ScaleDtype::f32);
  auto valid = [](const Scheme& s, const Shape& shape, std::optional<std::vector<float>> table = std::nullopt) {
    QuantCase q = family_case(s);
    q.shape = shape;
    q.data = ramp(element_count(shape).value(), 2.0f);
    q.scales.assign(expected_scale_count(s, shape), 0.0625f);
    const Result<QTensor> t = quantize(s, q.shape, q.data, q.scales, q.global, table_of(table));
    return ParseCase{model(s), shape, table, serialize(t.value()).value()};
  };
  ParseCase c = valid(q8, {2, 8});
  c.shape = {3, 3, 3, 3, 3, 3, 3, 3, 3};
  add_parse("kind-shape-overflow", c);
  c = valid(q8, {2, 8});
  c.shape = {std::size_t{1} << 40, std::size_t{1} << 40};
  add_parse("kind-shape-overflow-element-count", c);
  c = valid(blocked_f16, {2, 8});
  c.scheme = model(with_block(scheme(Value::q8f), {4, 4, 4}, ScaleDtype::f16));
  add_parse("kind-block-rank-exceeds-tensor", c);
  c = valid(scheme(Value::q4s, StoreKind::packed_u32, 1), {2, 8});
  c.shape = {16};
  add_parse("kind-packing-dim-out-of-range", c);
  c = valid(blocked_f16, {2, 8});
  c.scheme = model(with_block(scheme(Value::q8f), {1}, ScaleDtype::f32));
  c.shape = {std::size_t{4000000000000000000}};  // storage + one f32 scale per element > SIZE_MAX
  add_parse("kind-shape-overflow-serialized-size", c);
  c = valid(blocked_f16, {2, 8});
  c.bytes.pop_back();
  add_parse("kind-truncated-buffer", c);
  c = valid(q8, {2, 8});
  c.shape = {std::size_t{1} << 40};
  add_parse("kind-truncated-buffer-huge-shape", c);
  c = valid(blocked_f16, {2, 8});
  c.bytes.push_back(0);
  add_parse("kind-trailing-bytes", c);
  c = valid(blocked_f16, {2, 8});
  c.bytes[16 + 1] |= 0x80;  // sign bit of the first f16 scale
  add_parse("kind-invalid-scale-f16-sign", c);
  c = valid(q8, {2, 8});
  c.bytes[16 + 3] = 0x7F;  // f32 scale 0x7F......: NaN or Inf
  c.bytes[16 + 2] = 0xC0;
  add_parse("kind-invalid-scale-f32-nan", c);
  c = valid(two, {2, 8});
  c.bytes[8] = 0x7F;  // ue4m3 0x7F: NaN
  add_parse("kind-invalid-scale-ue4m3-nan", c);
  c = valid(two, {2, 8});
  c.bytes[c.bytes.size() - 1] = 0xFF;  // global -NaN
  add_parse("kind-invalid-global-scale-nan", c);
  c = valid(two, {2, 8});
  for (std::size_t k = 8; k < 12; ++k) c.bytes[k] = 0x7E;  // block scales 448
  {
    const std::uint32_t g = std::bit_cast<std::uint32_t>(3e38f);
    for (std::size_t b = 0; b < 4; ++b) c.bytes[12 + b] = static_cast<std::uint8_t>(g >> (8 * b));
  }
  add_parse("kind-invalid-global-scale-overflow", c);
  const Scheme lk = as_lookup(scheme(Value::q4s, StoreKind::packed_u32));
  c = valid(lk, {2, 8}, table_for(Value::q4s));
  c.table.reset();
  add_parse("kind-missing-lookup-table", c);
  c = valid(q8, {2, 8});
  c.table = table_for(Value::q8s);
  add_parse("kind-unexpected-lookup-table", c);
  c = valid(lk, {2, 8}, table_for(Value::q4s));
  c.table->push_back(1.0f);
  add_parse("kind-lookup-table-size", c);
  c = valid(lk, {2, 8}, table_for(Value::q4s));
  (*c.table)[0] = kNaN;
  add_parse("kind-invalid-lookup-table", c);
  c = valid(q8, {2, 8});
  c.bytes[0] = 0x80;  // q8s -128
  add_parse("kind-invalid-code-q8s-minus-128", c);
  c = valid(scheme(Value::q4f), {2, 8});
  c.bytes[0] = 0x13;  // a native 4-bit code with bits above its width
  add_parse("kind-invalid-code-native-high-bits", c);
  c = valid(scheme(Value::q4s, StoreKind::packed_u32), {2, 5});
  c.bytes[3] = 0x10;  // padding bits of the first line's word
  add_parse("kind-invalid-code-padding", c);
  c = valid(scheme(Value::e4m3), {2, 8});
  c.bytes[4] = 0xFF;  // e4m3 -NaN
  add_parse("kind-invalid-code-e4m3-nan", c);
  c = valid(scheme(Value::e5m2), {2, 8});
  c.bytes[4] = 0x7C;  // e5m2 +Inf
  add_parse("kind-invalid-code-e5m2-inf", c);
  c = valid(scheme(Value::e2m1, StoreKind::packed_native, 0), {3, 3});
  c.bytes[1] = 0xF0;  // high nibble past the end of a 3-code line
  add_parse("kind-invalid-code-e2m1-padding-nibble", c);
  c = valid(scheme(Value::q2s, StoreKind::packed_u32), {4});
  c.bytes[0] = 0x02;  // q2s -2
  add_parse("kind-invalid-code-q2s-minus-2", c);
  c = valid(scheme(Value::q4s, StoreKind::packed_u32), {});
  add_parse("ok-edge-rank-0", c);
  c = valid(with_block(scheme(Value::q8f, StoreKind::packed_u32, 2), {2, 1, 3}, ScaleDtype::bf16), {3, 4, 5});
  add_parse("ok-edge-packed-dim-2-bf16", c);
}

void dequant_seeds() {
  {
    const QuantCase s = seed_case();
    const Result<QTensor> t = quantize(s.scheme.scheme, s.shape, s.data, s.scales, 1.0f);
    add_dequant("seed-two-level-without-global",
                DequantCase{s.scheme, s.shape, t->codes, t->scales, std::nullopt, std::nullopt});
  }
  for (const BadScheme& b : bad_schemes()) {
    add_dequant("kind-" + b.kind_suffix,
                DequantCase{b.scheme, {2, 8}, std::vector<std::int32_t>(16, 1), {1.0f}, std::nullopt, std::nullopt});
  }
  auto valid = [](const Scheme& s, std::optional<std::vector<float>> table = std::nullopt) {
    const QuantCase q = family_case(s);
    const Result<QTensor> t = quantize(s, q.shape, q.data, q.scales, q.global, table_of(table));
    return DequantCase{q.scheme, q.shape, t->codes, t->scales, t->global, table};
  };
  const Scheme q8 = scheme(Value::q8s);
  const Scheme blocked = with_block(scheme(Value::q8f), {4}, ScaleDtype::f16);
  const Scheme two = with_tensor(with_block(scheme(Value::q8f), {4}, ScaleDtype::ue4m3), ScaleDtype::f32);
  const Scheme lk = as_lookup(scheme(Value::q4s, StoreKind::packed_u32));
  DequantCase c = valid(q8);
  c.global = 1.0f;
  add_dequant("kind-unexpected-global-scale", c);
  c = valid(q8);
  c.shape = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  add_dequant("kind-shape-overflow", c);
  c = valid(q8);
  c.codes.push_back(0);
  add_dequant("kind-shape-mismatch", c);
  c = valid(blocked);
  c.scheme = model(with_block(scheme(Value::q8f), {4, 4, 4}, ScaleDtype::f16));
  add_dequant("kind-block-rank-exceeds-tensor", c);
  c = valid(scheme(Value::q8f, StoreKind::packed_u32, 0));
  c.scheme = model(scheme(Value::q8f, StoreKind::packed_u32, 5));
  add_dequant("kind-packing-dim-out-of-range", c);
  c = valid(blocked);
  c.scales.pop_back();
  add_dequant("kind-scale-count-mismatch", c);
  c = valid(blocked);
  c.scales[0] = 0.3f;  // not on the f16 grid: no quantize could have stored it
  add_dequant("kind-invalid-scale-off-grid", c);
  c = valid(q8);
  c.scales = {-0.0f};
  add_dequant("kind-invalid-scale-negative-zero", c);
  c = valid(two);
  c.global = -1.0f;
  add_dequant("kind-invalid-global-scale", c);
  c = valid(lk, table_for(Value::q4s));
  c.table.reset();
  add_dequant("kind-missing-lookup-table", c);
  c = valid(q8);
  c.table = table_for(Value::q8s);
  add_dequant("kind-unexpected-lookup-table", c);
  c = valid(lk, table_for(Value::q4s));
  c.table->resize(3);
  add_dequant("kind-lookup-table-size", c);
  c = valid(lk, table_for(Value::q4s));
  (*c.table)[15] = kNaN;
  add_dequant("kind-invalid-lookup-table", c);
  c = valid(q8);
  c.codes[3] = -128;
  add_dequant("kind-invalid-code-q8s", c);
  c = valid(scheme(Value::e4m3));
  c.codes[0] = 0x7F;
  add_dequant("kind-invalid-code-e4m3-nan", c);
  c = valid(lk, table_for(Value::q4s));
  c.codes[0] = 16;
  add_dequant("kind-invalid-code-lookup-index", c);
}

// target_bits: any 64-bit target value. Only values whose meaning is the same on every machine
// and compiler: 0, and values that are never a target (Highway's x86 targets are single bits 7 to
// 12, 61 and 62; bit 63 is never used).
void target_seeds() {
  const QuantCase blocked = family_case(with_block(scheme(Value::q8s), {4}, ScaleDtype::f16));
  add_target("ok-best-target-q8s-block", TargetCase{TargetPick::best, 0, blocked});
  add_target("kind-missing-global-scale-best-target", TargetCase{TargetPick::best, 0, seed_case()});
  add_target("kind-implementation-fault-minus-one", TargetCase{TargetPick::raw, ~std::uint64_t{0}, blocked});
  add_target("kind-implementation-fault-two-bits", TargetCase{TargetPick::raw, (1u << 9) | (1u << 11), blocked});
  add_target("kind-implementation-fault-bit-63", TargetCase{TargetPick::bit, 63, blocked});
  add_target("kind-implementation-fault-reserved-bit-0", TargetCase{TargetPick::bit, 0, blocked});
  // The target is checked before the scheme: no missing-global-scale here.
  add_target("kind-implementation-fault-whatever-else-is-wrong",
             TargetCase{TargetPick::raw, ~std::uint64_t{0}, seed_case()});
}

void calib_seeds() {
  for (const BadScheme& b : bad_schemes()) {
    add_calib("kind-" + b.kind_suffix, CalibCase{b.scheme, {2, 8}, Calibration::minmax, ramp(16, 1.0f, false)});
  }
  const Scheme blocked = with_block(scheme(Value::q8s), {4}, ScaleDtype::f16);
  const Scheme two = with_tensor(with_block(scheme(Value::e2m1, StoreKind::packed_native), {4}, ScaleDtype::ue4m3),
                                 ScaleDtype::f32);
  const CalibCase base{model(blocked), {2, 8}, Calibration::minmax, ramp(16, 1.0f, false)};
  CalibCase c = base;
  c.scheme = model(two);
  c.method = Calibration::absmean;
  add_calib("kind-absmean-two-level", c);
  c = base;
  c.shape = {1, 1, 1, 1, 1, 1, 1, 1, 16};
  add_calib("kind-shape-overflow", c);
  c = base;
  c.data.pop_back();
  add_calib("kind-shape-mismatch", c);
  c = base;
  c.shape = {16};
  c.scheme = model(with_block(scheme(Value::q8s), {4, 4}, ScaleDtype::f16));
  add_calib("kind-block-rank-exceeds-tensor", c);
  c = base;
  c.scheme = model(scheme(Value::q4f, StoreKind::packed_u32, 2));
  add_calib("kind-packing-dim-out-of-range", c);
  c = base;
  c.shape = {2, 8};
  c.scheme = model(with_block(scheme(Value::q8s), {3}, ScaleDtype::f16));
  add_calib("kind-block-not-divisible", c);
  // `from` with element i set to v.
  const auto planted = [](const CalibCase& from, std::size_t i, float v, const std::string& name) {
    CalibCase k = from;
    k.data[i] = v;
    add_calib(name, k);
  };
  planted(base, 4, kNaN, "kind-nan-input");
  planted(base, 4, -kInf, "kind-calibration-overflow-inf-input");
  planted(base, 4, 3e38f, "kind-calibration-overflow-twice-alpha");
  c = base;
  c.method = Calibration::absmean;
  c.data = {1e-45f, 1e-45f, 3e38f, 3e38f, 0.1f, 0.2f, 0.3f, 0.4f, 1.0f, 1.0f, 1.0f, 2.0f, -0.0f, 0.0f, 0.0f, 0.0f};
  add_calib("ok-edge-absmean-exact-mean", c);
  c = base;
  c.scheme = model(two);
  c.data.assign(16, 0.0f);
  add_calib("ok-edge-two-level-all-zero-global-flt-min", c);
  c = base;
  c.scheme = model(with_tensor(with_block(scheme(Value::q8f), {2, 2}, ScaleDtype::f16), ScaleDtype::f32));
  c.data = ramp(16, 1e30f, false);
  add_calib("ok-edge-two-level-huge", c);
  c = base;
  c.scheme = model(with_block(scheme(Value::e2m1, StoreKind::packed_native), {4}, ScaleDtype::ue4m3));
  c.data = {0.5f, -0.5f, 0.25f, 6.0f, 3.0f, -1.5f, 0.75f, 0.0f, -0.0f, 1e-3f, 2.0f, 4.0f, 5.0f, -6.0f, 1.0f, 0.125f};
  add_calib("ok-edge-e2m1-smallest-subnormal", c);
  // An exact mean half-way between 0x1.fffffep0 and 2: ties to even carries into the exponent.
  c = base;
  c.scheme = model(scheme(Value::q8f));
  c.method = Calibration::absmean;
  c.shape = {2};
  c.data = {2.0f, 0x1.fffffep0f};
  add_calib("ok-edge-absmean-mean-rounds-up-to-a-power-of-two", c);
  // Blocks of whole vectors on every target (32 elements), 16 of them and more: the one-pass
  // kernels' own ways out (calibrate_quantize_into into a buffer of the layout's size). Their
  // block maxima may miss a quiet NaN that has a larger neighbour (AVX-512's vrangeps); the codes
  // pass finds it. An infinity, a signaling NaN or a NaN alone is found by the maxima.
  const Scheme b32 = with_block(scheme(Value::q8s), {32}, ScaleDtype::f16);
  const CalibCase wide{model(b32), {2, 512}, Calibration::minmax, ramp(1024, 1.0f, false)};
  planted(wide, 700, kNaN, "kind-nan-input-block32-quiet-among-larger");
  // A quiet NaN whose payload sets bits 2 to 13: its codes-pass sum looks like no tie (session 25's
  // fuzz find, 0xFFE0003F in a q2s packed_u32 block with bf16 scales).
  planted(wide, 700, std::bit_cast<float>(0x7FC5A5A5u), "kind-nan-input-block32-quiet-payload");
  planted(wide, 33, -kNaN, "kind-nan-input-block32-negative-quiet");
  planted(wide, 511, std::bit_cast<float>(0x7FA00000u), "kind-nan-input-block32-signaling");
  planted(wide, 1023, kInf, "kind-calibration-overflow-inf-input-block32");
  planted(wide, 64, -3e38f, "kind-calibration-overflow-twice-alpha-block32");
  // A stored f16 scale saturates at 65504 (2 * alpha / 254 above it): those codes clamp.
  planted(wide, 100, 1e7f, "ok-edge-block32-saturated-f16-scale");
  c = wide;
  c.scheme = model(with_block(scheme(Value::q4s, StoreKind::packed_u32), {32}, ScaleDtype::bf16));
  planted(c, 900, -kNaN, "kind-nan-input-block32-q4s-bf16");
  c.scheme = model(with_block(scheme(Value::q2s, StoreKind::packed_u32), {32}, ScaleDtype::bf16));
  planted(c, 248, std::bit_cast<float>(0xFFE0003Fu), "kind-nan-input-block32-q2s-bf16-negative-payload");
}

void text_seeds() {
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"ok-nvfp4", "nvfp4"},
      {"ok-empty-is-default", ""},
      {"ok-full", "value=q4s,store=packed_u32:0,mode=symmetric,block=4x32:f16,tensor=f32"},
      {"ok-any-order", "tensor=f32,block=16:ue4m3,store=packed_native:0,value=e2m1"},
      {"ok-leading-ones", "block=1x1x32:bf16"},
      {"ok-all-ones", "block=1x1:f32"},
      {"ok-lookup", "value=q2f,mode=lookup,store=packed_u32:3"},
      {"ok-huge-d", "store=packed_u32:99999999999999999999999"},
      {"ok-store-default-d", "store=packed_native"},
      {"ok-block-zero-dim", "block=0x4:ue8m0"},
      {"ok-five-dims", "block=2x3x4x5x6:f16"},
      {"kind-invalid-scheme-unknown-key", "values=q8f"},
      {"kind-invalid-scheme-unknown-value", "value=q16"},
      {"kind-invalid-scheme-duplicate", "mode=lookup,mode=lookup"},
      {"kind-invalid-scheme-native-d", "store=native:0"},
      {"kind-invalid-scheme-bad-d", "store=packed_u32:x"},
      {"kind-invalid-scheme-empty-d", "store=packed_u32:"},
      {"kind-invalid-scheme-block-no-dtype", "block=4"},
      {"kind-invalid-scheme-block-empty-dim", "block=4x:f32"},
      {"kind-invalid-scheme-block-256", "block=256:f32"},
      {"kind-invalid-scheme-block-bad-dtype", "block=4:f8"},
      {"kind-invalid-scheme-tensor-bad-dtype", "tensor=e4m3"},
      {"kind-invalid-scheme-empty-item", "value=q8f,"},
      {"kind-invalid-scheme-no-equals", "q8f"},
      {"kind-invalid-scheme-nvfp4-plus", "nvfp4,tensor=f32"},
      {"kind-invalid-scheme-mode", "mode=asymmetric"},
      {"kind-invalid-scheme-store", "store=packed_u8:0"},
  };
  for (const auto& [name, t] : texts) add("scheme_text", name, std::vector<std::uint8_t>(t.begin(), t.end()));
  for (const ValueInfo& vi : kValues) {
    for (StoreKind k : {StoreKind::native, StoreKind::packed_u32, StoreKind::packed_native}) {
      for (const Level& lv : levels()) {
        Scheme s = scheme(vi.value, k, k == StoreKind::native ? 0 : 1);
        s.block = lv.block;
        s.tensor = lv.tensor;
        const std::string t = print_scheme(s);
        add("scheme_text", "family-" + std::string(vi.name) + "-" + store_name(k) + "-" + lv.name,
            std::vector<std::uint8_t>(t.begin(), t.end()));
      }
    }
  }
}

void minifloat_seeds() {
  std::vector<float> specials;
  for (std::uint32_t b : special_values()) specials.push_back(std::bit_cast<float>(b));
  add("minifloat", "edge-specials", encode_minifloat_values(specials));
  // Every code of each minifloat and the midpoints between neighbours (the ties), 64 per file.
  struct Fmt {
    std::string name;
    Value v;
    unsigned codes;
  };
  for (const Fmt& f : {Fmt{"e4m3", Value::e4m3, 0x7F}, Fmt{"e5m2", Value::e5m2, 0x7C}, Fmt{"e2m1", Value::e2m1, 8}}) {
    std::vector<float> xs;
    for (unsigned c = 0; c < f.codes; ++c) {
      const float a = decode_minifloat(static_cast<std::uint8_t>(c), f.v);
      xs.push_back(a);
      if (c + 1 < f.codes) {
        const float b = decode_minifloat(static_cast<std::uint8_t>(c + 1), f.v);
        xs.push_back(-(a + (b - a) / 2));
      }
    }
    for (std::size_t i = 0, part = 0; i < xs.size(); i += kMaxMinifloatValues, ++part) {
      const std::size_t n = std::min(kMaxMinifloatValues, xs.size() - i);
      add("minifloat", "edge-" + f.name + "-codes-and-ties-" + std::to_string(part),
          encode_minifloat_values(std::span<const float>(xs).subspan(i, n)));
    }
  }
  // f16 and bf16 neighbourhoods: subnormal boundary, max, overflow threshold.
  const std::vector<float> f16 = {0x1p-24f, 0x1.8p-25f, 0x1p-25f, 0x1.000002p-25f, 0x1.ff8p-15f, 0x1p-14f,
                                  0x1.004p-14f, 65504.0f, 65519.996f, 65520.0f, 65536.0f, 0x1.ffep15f,
                                  0x1.0008p0f, 0x1.0018p0f, 0x1.001p0f, 0x1.7ffffep0f};
  add("minifloat", "edge-f16-neighbourhoods", encode_minifloat_values(f16));
  const std::vector<float> bf = {0x1.fep127f, 0x1.ff0p127f, 0x1.ff8p127f, 0x1.fefffep127f, 0x1.008p0f,
                                 0x1.018p0f,  0x1.00fffep0f, 0x1p-133f,  0x1.8p-134f, 0x1p-126f};
  add("minifloat", "edge-bf16-neighbourhoods", encode_minifloat_values(bf));
  const std::vector<float> rounds = {0.5f, 1.5f, -2.5f, 0.49999997f, -0.49999997f, 8388607.5f, 8388608.0f,
                                     -8388607.5f, 4194303.5f, 126.5f, -127.5f, 7.5f, -7.5f, 1.5f, -1.5f, 0.0f};
  add("minifloat", "edge-round-half-away", encode_minifloat_values(rounds));
}

// ---- check -----------------------------------------------------------------------------------

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int check(const fs::path& corpus, const std::vector<std::string>& targets) {
  // The registry in fuzz/CMakeLists.txt and describe()'s decoders must list the same targets.
  const std::span<const std::string_view> known = target_names();
  if (!std::equal(targets.begin(), targets.end(), known.begin(), known.end())) {
    std::string k;
    for (std::string_view t : known) k += " " + std::string(t);
    problem("fuzz/CMakeLists.txt registers other targets than describe() decodes:" + k);
  }

  std::map<std::string, std::map<std::string, int>> seen;  // target -> outcome -> files
  std::set<std::string> families;                          // value-store-level of scheme_qparams files
  for (const std::string& t : targets) {
    const fs::path dir = corpus / t;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    if (files.empty()) problem(dir.string() + ": no corpus files");
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      const std::vector<std::uint8_t> bytes = read_file(f);
      const std::optional<std::optional<ErrorKind>> checked = outcome(t, bytes);
      if (!checked) continue;
      const std::optional<ErrorKind> got = *checked;
      const char* who = t == "target_bits" ? "the optimized library gives " : "reference gives ";
      seen[t][kind_name(got)] += 1;
      const std::string name = f.filename().string();
      if (name.starts_with("kind-") && promised_kind(name) != got) {
        problem(f.string() + ": named " + kind_name(promised_kind(name)) + ", " + who + kind_name(got));
      }
      if (name.starts_with("ok-") && got) problem(f.string() + ": named ok, " + who + kind_name(got));
      if (t == "scheme_qparams") {
        const QuantCase c = decode_quant(bytes);
        if (!c.scheme.text_error) {
          const Scheme& s = c.scheme.scheme;
          const char* level = s.two_level() ? "two-level" : s.block ? "block" : s.tensor ? "tensor" : "none";
          families.insert(std::string(info(s.value).name) + "-" + store_name(s.store.kind) + "-" + level);
        }
      }
    }
  }
  if (std::find(targets.begin(), targets.end(), "scheme_qparams") != targets.end() &&
      !fs::exists(corpus / "scheme_qparams" / "seed-two-level-without-global")) {
    problem("corpus/scheme_qparams/seed-two-level-without-global is missing: the project's seed scenario");
  }

  // The table: every kind against every target.
  std::printf("%-28s", "outcome");
  for (const std::string& t : targets) std::printf(" %14.14s", t.c_str());
  std::printf("\n");
  std::vector<std::string> rows{"ok"};
  for (const auto& [kind, name] : kErrorKinds) rows.emplace_back(name);
  rows.emplace_back(to_string(ErrorKind::implementation_fault));
  for (const std::string& row : rows) {
    std::printf("%-28s", row.c_str());
    for (const std::string& t : targets) {
      const auto it = seen[t].find(row);
      std::printf(" %14d", it == seen[t].end() ? 0 : it->second);
    }
    std::printf("\n");
  }
  std::printf("%-28s", "files");
  for (const std::string& t : targets) {
    int n = 0;
    for (const auto& [k, v] : seen[t]) n += v;
    std::printf(" %14d", n);
  }
  std::printf("\n");

  // SPEC §10: every error path is reached by a corpus file of scheme_qparams, parse_bytes or
  // calibrate (the targets that see every stage of validation).
  for (const auto& [kind, name] : kErrorKinds) {
    const std::string k(name);
    if (!seen["scheme_qparams"].count(k) && !seen["parse_bytes"].count(k) && !seen["calibrate"].count(k)) {
      problem("no corpus file of scheme_qparams, parse_bytes or calibrate reaches " + k);
    }
  }
  // The optimized library's own kind: an unrunnable target value (target_bits).
#ifdef QCONFORM_FUZZ_HAVE_OPTIMIZED
  if (std::find(targets.begin(), targets.end(), "target_bits") != targets.end() &&
      !seen["target_bits"].count(std::string(to_string(ErrorKind::implementation_fault)))) {
    problem("no corpus file of target_bits reaches implementation-fault");
  }
#endif
  // Every scheme family (value x store x level) is in scheme_qparams's corpus.
  for (const ValueInfo& vi : kValues) {
    for (StoreKind k : {StoreKind::native, StoreKind::packed_u32, StoreKind::packed_native}) {
      for (const char* level : {"none", "tensor", "block", "two-level"}) {
        const std::string f = std::string(vi.name) + "-" + store_name(k) + "-" + level;
        if (!families.count(f)) problem("no scheme_qparams corpus file of the family " + f);
      }
    }
  }
  if (g_errors == 0) std::printf("corpus check passed: %zu targets\n", targets.size());
  return g_errors == 0 ? 0 : 1;
}

int write(const fs::path& out) {
  families();
  quant_seeds();
  parse_seeds();
  dequant_seeds();
  calib_seeds();
  target_seeds();
  text_seeds();
  minifloat_seeds();
  if (g_errors) return 1;
  std::map<std::string, int> per_target;
  for (const Seed& s : g_seeds) {
    fs::create_directories(out / s.target);
    std::ofstream f(out / s.target / s.name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(s.bytes.data()), static_cast<std::streamsize>(s.bytes.size()));
    if (!f) problem("cannot write " + (out / s.target / s.name).string());
    per_target[s.target] += 1;
  }
  for (const auto& [t, n] : per_target) std::printf("%-16s %d seeds\n", t.c_str(), n);
  return g_errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "write") return write(args[1]);
  if (args.size() >= 3 && args[0] == "check") {
    return check(args[1], std::vector<std::string>(args.begin() + 2, args.end()));
  }
  std::fprintf(stderr,
               "usage: make_corpus write OUTDIR\n"
               "       make_corpus check CORPUS_DIR TARGET...\n");
  return 2;
}
