#include "impls.h"

#if QCONFORM_HAVE_OPTIMIZED
#include "qconform/optimized.h"
#endif

namespace qconform::cli {
namespace {

// The reference has one target; these adapters only drop the `target` argument.
Result<QTensor> ref_quantize(const Scheme& s, std::span<const std::size_t> shape,
                             std::span<const float> data, std::span<const float> scales,
                             std::optional<float> global, Table table, std::int64_t) {
  return qconform::quantize(s, shape, data, scales, global, table);
}
Result<std::vector<float>> ref_dequantize(const QTensor& t, Table table, std::int64_t) {
  return qconform::dequantize(t, table);
}
Result<QParams> ref_calibrate(const Scheme& s, std::span<const std::size_t> shape,
                              std::span<const float> data, Calibration m, std::int64_t) {
  return qconform::calibrate(s, shape, data, m);
}
Result<std::vector<std::uint8_t>> ref_serialize(const QTensor& t, std::int64_t) {
  return qconform::serialize(t);
}
Result<QTensor> ref_parse(const Scheme& s, std::span<const std::size_t> shape,
                          std::span<const std::uint8_t> bytes, Table table, std::int64_t) {
  return qconform::parse(s, shape, bytes, table);
}

#if QCONFORM_HAVE_OPTIMIZED
std::vector<Variant> optimized_variants() {
  std::vector<Variant> out;
  for (const auto& t : optimized::targets()) out.push_back({t.name, t.bits, t.supported});
  return out;
}
#endif

// One row per implementation. The SIMD one joins as
//   {"optimized", &optimized_variants, {&optimized::quantize, &optimized::dequantize,
//    &optimized::calibrate, &optimized::serialize, &optimized::parse}},
// with optimized_variants() mapping optimized::targets() to {name, bits, supported}, which makes
// `optimized` (best target) and the supported `optimized:avx2`, `optimized:emu128`, ... selectable.
const Backend kBackends[] = {
    {"reference", nullptr,
     {&ref_quantize, &ref_dequantize, &ref_calibrate, &ref_serialize, &ref_parse}},
#if QCONFORM_HAVE_OPTIMIZED
    {"optimized", &optimized_variants,
     {&optimized::quantize, &optimized::dequantize, &optimized::calibrate, &optimized::serialize, &optimized::parse}},
#endif
};

}  // namespace

std::vector<Impl> impls() {
  std::vector<Impl> out;
  for (const Backend& b : kBackends) {
    out.push_back(Impl{std::string(b.name), 0, &b.ops, nullptr});
    if (b.variants == nullptr) continue;
    for (const Variant& v : b.variants()) {
      if (!v.supported) continue;
      out.push_back(Impl{std::string(b.name) + ":" + v.name, v.target, &b.ops, nullptr});
    }
  }
  return out;
}

std::optional<Impl> find_impl(std::string_view name) {
  for (Impl& impl : impls()) {
    if (impl.name == name) return std::move(impl);
  }
  return std::nullopt;
}

std::string known_impls() {
  std::string out;
  for (const Impl& impl : impls()) out += (out.empty() ? "" : ", ") + impl.name;
  return out;
}

TargetReport target_report() {
  TargetReport r;
  for (const Backend& b : kBackends) {
    if (b.variants == nullptr) continue;
    for (const Variant& v : b.variants()) {
      const std::string name = std::string(b.name) + ":" + v.name;
      r.compiled.push_back(name);
      if (v.supported) r.supported.push_back(name);
    }
  }
  return r;
}

}  // namespace qconform::cli
