// Mutants: the reference pipeline rebuilt from public pieces, with one realistic bug each.
#include "mutants.h"

#include <cmath>
#include <limits>

namespace qconform::mutants {
namespace {

float round_to_nearest_grid(float s, ScaleDtype dt) {
  switch (dt) {
    case ScaleDtype::f16: return f16_to_f32(f32_to_f16(s));
    case ScaleDtype::bf16: return bf16_to_f32(f32_to_bf16(s));
    case ScaleDtype::ue4m3: return decode_minifloat(encode_minifloat(s, Value::e4m3), Value::e4m3);
    default: return s;
  }
}

class Mutant : public ReferenceImplementation {
 public:
  explicit Mutant(Kind k) : k_(k) {}
  [[nodiscard]] std::string name() const override {
    return std::string("mutant:") + kCatalogue[static_cast<std::size_t>(k_)].name;
  }

  [[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const float> data, std::span<const float> scales,
                                         std::optional<float> global, Table table) const override {
    if (k_ == Kind::nan_checked_first) {
      for (std::size_t i = 0; i < data.size(); ++i) {
        if (std::isnan(data[i])) return Error{ErrorKind::nan_input, "input is NaN"};
      }
    }
    if (k_ == Kind::missing_global_is_one && s.two_level() && !global) global = 1.0f;
    if (Status st = validate_quantize(s, shape, data, scales, global, table); !st.ok()) return st.error();
    const Layout l = make_layout(s, shape, data.size()).value();
    QTensor t;
    t.scheme = s;
    t.shape.assign(shape.begin(), shape.end());
    if (global) t.global = *global == 0.0f ? 0.0f : *global;
    std::vector<float> eff(scales.size());
    for (std::size_t k = 0; k < scales.size(); ++k) {
      const float raw = scales[k] == 0.0f ? 0.0f : scales[k];
      const float stored = k_ == Kind::scale_rounded_to_nearest ? round_to_nearest_grid(raw, s.scale_dtype())
                                                                 : round_up_scale(raw, s.scale_dtype()).value();
      t.scales.push_back(stored);
      const float divisor = k_ == Kind::divides_by_raw_scale ? raw : stored;
      const float e = t.global ? *t.global * divisor : divisor;
      eff[k] = (e == 0.0f && k_ != Kind::no_zero_scale_guard) ? 0.1f : e;
    }
    const ValueInfo& vi = info(s.value);
    std::size_t block_volume = 1;
    if (s.block) {
      for (auto d : s.block->dims) block_volume *= d;
    }
    for (std::size_t i = 0; i < data.size(); ++i) {
      std::size_t b = block_of(l, i);
      if (k_ == Kind::flat_blocks && s.block) b = std::min(i / block_volume, scales.size() - 1);
      const float y = k_ == Kind::reciprocal_multiply ? data[i] * (1.0f / eff[b]) : data[i] / eff[b];
      t.codes.push_back(code(y, s, vi, table));
    }
    return t;
  }

  [[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table) const override {
    if (k_ != Kind::two_level_global_ignored_in_dequantize || !t.global) return ReferenceImplementation::dequantize(t, table);
    QTensor u = t;
    u.global.reset();
    u.scheme.tensor.reset();
    return ReferenceImplementation::dequantize(u, table);
  }

  [[nodiscard]] Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                                       std::span<const std::int32_t> codes) const override {
    auto r = ReferenceImplementation::pack(s, shape, codes);
    if (!r.ok()) return r;
    return mangle(s, shape, codes, std::move(r).value());
  }

  [[nodiscard]] Result<std::vector<std::uint8_t>> serialize(const QTensor& t) const override {
    auto r = ReferenceImplementation::serialize(t);
    if (!r.ok() || (k_ != Kind::high_nibble_first && k_ != Kind::flat_packing)) return r;
    const Layout l = make_layout(t.scheme, t.shape).value();
    auto bytes = std::move(r).value();
    std::vector<std::uint8_t> storage(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(l.storage_bytes));
    storage = mangle(t.scheme, t.shape, t.codes, std::move(storage));
    std::copy(storage.begin(), storage.end(), bytes.begin());
    return bytes;
  }

  [[nodiscard]] Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                          std::span<const float> data, Calibration method) const override {
    auto r = ReferenceImplementation::calibrate(s, shape, data, method);
    if (k_ != Kind::absmean_float_sum || method != Calibration::absmean || !r.ok()) return r;
    const Layout l = make_layout(s, shape, data.size()).value();
    std::vector<float> sum(l.scale_count, 0.0f);
    std::vector<float> count(l.scale_count, 0.0f);
    for (std::size_t i = 0; i < data.size(); ++i) {
      sum[block_of(l, i)] += std::fabs(data[i]);
      count[block_of(l, i)] += 1.0f;
    }
    QParams out;
    const float range = info(s.value).hi - info(s.value).lo;
    for (std::size_t k = 0; k < l.scale_count; ++k) {
      const float gamma = count[k] > 0 ? sum[k] / count[k] : 0.0f;
      out.scales.push_back(2.0f * gamma / range);
    }
    return out;
  }

  [[nodiscard]] std::uint8_t encode_minifloat(float x, Value v) const override {
    return mini(x, v);
  }

 private:
  std::uint8_t mini(float y, Value v) const {
    std::uint8_t c = qconform::encode_minifloat(y, v);
    const unsigned sign = 1u << (info(v).bits - 1);
    if (k_ == Kind::e4m3_not_saturating && v == Value::e4m3 && std::fabs(y) >= 464.0f) c = static_cast<std::uint8_t>((c & sign) | 0x7F);
    if (k_ == Kind::drops_negative_zero && (c & ~sign) == 0) c = 0;
    return c;
  }

  std::int32_t code(float y, const Scheme& s, const ValueInfo& vi, Table table) const {
    if (s.mode == Mode::lookup) {
      if (k_ != Kind::lookup_ties_to_upper) return quantize_value(y, s.value, s.mode, table);
      std::size_t best = 0;
      double best_d = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < table->size(); ++i) {
        const double d = std::fabs(static_cast<double>(y) - static_cast<double>((*table)[i]));
        if (d <= best_d) {
          best = i;
          best_d = d;
        }
      }
      return static_cast<std::int32_t>(best);
    }
    if (vi.minifloat) return mini(y, s.value);
    const float lo = (k_ == Kind::q8s_clamps_to_minus_128 && s.value == Value::q8s) ? -128.0f : vi.lo;
    if (std::isnan(y)) return 0;
    if (y >= vi.hi) return static_cast<std::int32_t>(vi.hi);
    if (y <= lo) return static_cast<std::int32_t>(lo);
    float r;
    switch (k_) {
      case Kind::ties_to_even: r = std::nearbyint(y); break;
      case Kind::floor_plus_half: r = std::floor(y + 0.5f); break;
      default: r = round_half_away(y); break;
    }
    return static_cast<std::int32_t>(r);
  }

  std::vector<std::uint8_t> mangle(const Scheme& s, std::span<const std::size_t> shape,
                                   std::span<const std::int32_t> codes, std::vector<std::uint8_t> storage) const {
    const Layout l = make_layout(s, shape).value();
    if (l.per_unit == 1 || l.rank == 0) return storage;
    const std::uint32_t mask = (1u << l.bits) - 1;
    if (k_ == Kind::high_nibble_first) {
      for (std::size_t u = 0; u < l.storage_units; ++u) {
        std::uint32_t v = 0, out = 0;
        for (std::size_t b = 0; b < l.unit_bytes; ++b) v |= static_cast<std::uint32_t>(storage[u * l.unit_bytes + b]) << (8 * b);
        for (std::size_t k = 0; k < l.per_unit; ++k) out |= ((v >> (k * l.bits)) & mask) << ((l.per_unit - 1 - k) * l.bits);
        for (std::size_t b = 0; b < l.unit_bytes; ++b) storage[u * l.unit_bytes + b] = static_cast<std::uint8_t>(out >> (8 * b));
      }
    } else if (k_ == Kind::flat_packing) {
      std::fill(storage.begin(), storage.end(), 0);
      for (std::size_t i = 0; i < codes.size(); ++i) {
        const std::size_t u = i / l.per_unit, k = i % l.per_unit;
        if ((u + 1) * l.unit_bytes > storage.size()) break;
        std::uint32_t v = 0;
        for (std::size_t b = 0; b < l.unit_bytes; ++b) v |= static_cast<std::uint32_t>(storage[u * l.unit_bytes + b]) << (8 * b);
        v |= (static_cast<std::uint32_t>(codes[i]) & mask) << (k * l.bits);
        for (std::size_t b = 0; b < l.unit_bytes; ++b) storage[u * l.unit_bytes + b] = static_cast<std::uint8_t>(v >> (8 * b));
      }
    }
    return storage;
  }

  Kind k_;
};

}  // namespace

std::unique_ptr<Implementation> make(Kind kind) { return std::make_unique<Mutant>(kind); }

}  // namespace qconform::mutants
