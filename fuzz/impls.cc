// The implementation table of the fuzz targets.
#include "impls.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>

#ifdef QCONFORM_FUZZ_HAVE_OPTIMIZED
#include "qconform/optimized.h"
#endif

namespace qconform::fuzz {
namespace {

// QCONFORM_FUZZ_SKIP=name[,name...] leaves out implementations ("optimized:avx2") or optimized
// operations ("quantize_into", "calibrate_quantize_into", "dequantize_from"), so fuzzing can go
// on while a known bug is open; it always says so on stderr, never silently.
[[maybe_unused]] bool skipped(const std::string& name) {
  const char* env = std::getenv("QCONFORM_FUZZ_SKIP");
  if (env == nullptr) return false;
  const std::string list = std::string(",") + env + ",";
  if (list.find("," + name + ",") == std::string::npos) return false;
  static std::vector<std::string> told;
  if (std::find(told.begin(), told.end(), name) == told.end()) {
    std::fprintf(stderr, "qconform fuzz: skipping %s (QCONFORM_FUZZ_SKIP)\n", name.c_str());
    told.push_back(name);
  }
  return true;
}

std::vector<Impl> build() {
  std::vector<Impl> all;
  Impl ref;
  ref.name = "reference";
  ref.quantize = [](const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                    std::span<const float> scales, std::optional<float> global, Table table) {
    return quantize(s, shape, data, scales, global, table);
  };
  ref.dequantize = [](const QTensor& t, Table table) { return dequantize(t, table); };
  ref.calibrate = [](const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                     Calibration m) { return calibrate(s, shape, data, m); };
  ref.serialize = [](const QTensor& t) { return serialize(t); };
  ref.parse = [](const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> bytes,
                 Table table) { return parse(s, shape, bytes, table); };
  ref.pack = [](const Scheme& s, std::span<const std::size_t> shape, std::span<const std::int32_t> codes) {
    return pack(s, shape, codes);
  };
  ref.unpack = [](const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> storage) {
    return unpack(s, shape, storage);
  };
  all.push_back(std::move(ref));
#ifdef QCONFORM_FUZZ_HAVE_OPTIMIZED
  // One row per SIMD target the CPU supports, each call pinned to its target.
  for (const optimized::Target& target : optimized::targets()) {
    if (!target.supported || skipped("optimized:" + target.name)) continue;
    const std::int64_t t = target.bits;
    Impl impl;
    impl.name = "optimized:" + target.name;
    impl.quantize = [t](const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                        std::span<const float> scales, std::optional<float> global, Table table) {
      return optimized::quantize(s, shape, data, scales, global, table, t);
    };
    impl.dequantize = [t](const QTensor& q, Table table) { return optimized::dequantize(q, table, t); };
    impl.calibrate = [t](const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                         Calibration m) { return optimized::calibrate(s, shape, data, m, t); };
    impl.serialize = [t](const QTensor& q) { return optimized::serialize(q, t); };
    impl.parse = [t](const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> bytes,
                     Table table) { return optimized::parse(s, shape, bytes, table, t); };
    impl.pack = [t](const Scheme& s, std::span<const std::size_t> shape, std::span<const std::int32_t> codes) {
      return optimized::pack(s, shape, codes, t);
    };
    impl.unpack = [t](const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> storage) {
      return optimized::unpack(s, shape, storage, t);
    };
    if (!skipped("quantize_into")) impl.quantize_into = [t](const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                             std::span<const float> scales, std::optional<float> global, std::span<std::uint8_t> out,
                             Table table) {
      return optimized::quantize_into(s, shape, data, scales, global, out, table, t);
    };
    if (!skipped("calibrate_quantize_into")) impl.calibrate_quantize_into = [t](const Scheme& s, std::span<const std::size_t> shape,
                                       std::span<const float> data, Calibration m, std::span<std::uint8_t> out) {
      return optimized::calibrate_quantize_into(s, shape, data, m, out, t);
    };
    if (!skipped("dequantize_from")) impl.dequantize_from = [t](const Scheme& s, std::span<const std::size_t> shape,
                               std::span<const std::uint8_t> bytes, std::span<float> out, Table table) {
      return optimized::dequantize_from(s, shape, bytes, out, table, t);
    };
    all.push_back(std::move(impl));
  }
#endif
  return all;
}

}  // namespace

std::vector<std::uint8_t> bits_of(const QTensor& t) {
  std::vector<std::uint8_t> out;
  const std::string scheme = print_scheme(t.scheme);
  out.insert(out.end(), scheme.begin(), scheme.end());
  out.push_back(0);
  put_u32(out, static_cast<std::uint32_t>(t.shape.size()));
  for (std::size_t d : t.shape) {
    put_u32(out, static_cast<std::uint32_t>(d));
    put_u32(out, static_cast<std::uint32_t>(static_cast<std::uint64_t>(d) >> 32));
  }
  put_u32(out, static_cast<std::uint32_t>(t.codes.size()));
  for (std::int32_t c : t.codes) put_u32(out, static_cast<std::uint32_t>(c));
  put_u32(out, static_cast<std::uint32_t>(t.scales.size()));
  for (float s : t.scales) put_f32(out, s);
  out.push_back(t.global ? 1 : 0);
  if (t.global) put_f32(out, *t.global);
  return out;
}

std::vector<std::uint8_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint8_t> out;
  for (float x : v) put_f32(out, x);
  return out;
}

std::vector<std::uint8_t> bits_of(const QParams& q) {
  std::vector<std::uint8_t> out = bits_of(q.scales);
  out.push_back(q.global ? 1 : 0);
  if (q.global) put_f32(out, *q.global);
  return out;
}

std::vector<std::uint8_t> bits_of(const std::vector<std::uint8_t>& b) { return b; }

std::string explain_quantize(std::span<const Result<QTensor>> results, std::span<const Outcome> outcomes,
                             std::span<const float> data, std::span<const float> scales, const Outcome& a,
                             const Outcome& b) {
  const QTensor* ta = nullptr;
  const QTensor* tb = nullptr;
  for (std::size_t i = 0; i < outcomes.size() && i < results.size(); ++i) {
    if (&outcomes[i] == &a && results[i].ok()) ta = &results[i].value();
    if (&outcomes[i] == &b && results[i].ok()) tb = &results[i].value();
  }
  if (!ta || !tb) return {};
  std::string out;
  for (std::size_t k = 0; k < ta->scales.size() && k < tb->scales.size(); ++k) {
    if (std::bit_cast<std::uint32_t>(ta->scales[k]) != std::bit_cast<std::uint32_t>(tb->scales[k])) {
      out += cat("    stored scale [", k, "]: raw ", k < scales.size() ? hexf(scales[k]) : std::string("?"), " -> ",
                 hexf(ta->scales[k]), " vs ", hexf(tb->scales[k]), "\n");
      break;
    }
  }
  const Result<Layout> l = make_layout(ta->scheme, ta->shape, ta->codes.size());
  for (std::size_t i = 0; i < ta->codes.size() && i < tb->codes.size(); ++i) {
    if (ta->codes[i] == tb->codes[i]) continue;
    const std::size_t k = l.ok() ? block_of(*l, i) : 0;
    out += cat("    element [", i, "] x = ", i < data.size() ? hexf(data[i]) : std::string("?"), ", block ", k,
               ", stored scale ", k < ta->scales.size() ? hexf(ta->scales[k]) : std::string("?"), ", global ",
               ta->global ? hexf(*ta->global) : std::string("none"), ": code ", ta->codes[i], " vs ", tb->codes[i],
               "\n");
    break;
  }
  return out;
}

std::vector<std::uint8_t> bits_of(const std::vector<std::int32_t>& codes) {
  std::vector<std::uint8_t> out;
  for (std::int32_t c : codes) put_u32(out, static_cast<std::uint32_t>(c));
  return out;
}

std::string kind_text(const Status& s) { return s.ok() ? std::string("ok") : std::string(to_string(s.kind())); }

const std::vector<Impl>& impls() {
  static const std::vector<Impl> all = build();
  return all;
}

}  // namespace qconform::fuzz
