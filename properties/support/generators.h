// RapidCheck generators for qconform: schemes over the whole space (invalid ones included),
// shapes around vector widths, and floats built from bit patterns with a weighted mix of the
// hard cases (ties, ulp neighbours, ±0, subnormals, ±Inf, NaN, clamp bounds, midpoints).
#pragma once

#include <rapidcheck.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

#include "qconform/checks.h"
#include "qconform/oracle.h"

namespace qconform::gen {

inline float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }
inline std::uint32_t to_bits(float x) { return std::bit_cast<std::uint32_t>(x); }
inline float next_up(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }
inline float next_down(float x) { return std::nextafter(x, -std::numeric_limits<float>::infinity()); }

inline std::string hex_case(float x) { return "x=" + checks::hex(x); }

inline rc::Gen<Value> value() { return rc::gen::elementOf(std::vector<Value>{
    Value::q8f, Value::q8s, Value::q4f, Value::q4s, Value::q2f, Value::q2s, Value::e4m3, Value::e5m2, Value::e2m1}); }

inline rc::Gen<ScaleDtype> scale_dtype(bool with_unsupported) {
  std::vector<ScaleDtype> v{ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3};
  if (with_unsupported) v.push_back(ScaleDtype::ue8m0);
  return rc::gen::elementOf(v);
}

// Any scheme, valid or not (weights favour the valid part of the space).
inline rc::Gen<Scheme> any_scheme() {
  return rc::gen::exec([] {
    Scheme s;
    s.value = *value();
    const int store = *rc::gen::weightedElement<int>({{3, 0}, {4, 1}, {2, 2}});
    const std::uint64_t dim = *rc::gen::weightedElement<std::uint64_t>({{12, 0}, {3, 1}, {1, 2}, {1, 7}, {1, 1000}});
    s.store = store == 0 ? Store{StoreKind::native, 0}
              : store == 1 ? Store{StoreKind::packed_u32, dim} : Store{StoreKind::packed_native, dim};
    s.mode = *rc::gen::weightedElement<Mode>({{6, Mode::symmetric}, {1, Mode::lookup}});
    const int levels = *rc::gen::weightedElement<int>({{2, 0}, {3, 1}, {3, 2}, {3, 3}});
    if (levels == 1 || levels == 3) {
      BlockLevel b;
      const std::size_t ndims = *rc::gen::weightedElement<std::size_t>({{8, 1}, {4, 2}, {1, 3}, {1, 6}});
      for (std::size_t i = 0; i < ndims; ++i) {
        b.dims.push_back(*rc::gen::weightedElement<std::uint8_t>(
            {{4, 1}, {3, 2}, {2, 3}, {3, 4}, {2, 7}, {3, 8}, {3, 16}, {3, 32}, {1, 33}, {1, 255}, {1, 0}}));
      }
      canonicalize_block(b.dims);
      b.dtype = *scale_dtype(*rc::gen::weightedElement<bool>({{12, false}, {1, true}}));
      s.block = b;
    }
    if (levels == 2 || levels == 3) {
      s.tensor = levels == 3 ? *rc::gen::weightedElement<ScaleDtype>({{10, ScaleDtype::f32}, {1, ScaleDtype::f16}, {1, ScaleDtype::ue8m0}})
                             : *scale_dtype(*rc::gen::weightedElement<bool>({{12, false}, {1, true}}));
      if (levels == 3 && s.block->dtype != ScaleDtype::ue4m3 && s.block->dtype != ScaleDtype::f16 &&
          *rc::gen::weightedElement<bool>({{4, true}, {1, false}})) {
        s.block->dtype = *rc::gen::element(ScaleDtype::ue4m3, ScaleDtype::f16);
      }
    }
    if (s.mode == Mode::lookup && *rc::gen::weightedElement<bool>({{4, true}, {1, false}})) {
      s.store = Store{StoreKind::packed_u32, s.store.dim};
      if (info(s.value).minifloat) s.value = *rc::gen::element(Value::q8s, Value::q4f, Value::q2s);
    }
    if (s.store.kind == StoreKind::packed_native && !info(s.value).minifloat && info(s.value).bits < 8 &&
        *rc::gen::weightedElement<bool>({{4, true}, {1, false}})) {
      s.store.kind = StoreKind::packed_u32;
    }
    return s;
  });
}

inline rc::Gen<Scheme> valid_scheme() {
  return rc::gen::suchThat(any_scheme(), [](const Scheme& s) { return validate_scheme(s).ok(); });
}

// Shapes of rank 0..8 with extents around vector widths and partial blocks, at most ~600
// elements so that the oracle stays fast.
inline rc::Gen<Shape> shape_for(const Scheme& s) {
  return rc::gen::exec([s] {
    const std::size_t min_rank = s.block ? s.block->dims.size() : 0;
    std::size_t rank = *rc::gen::weightedElement<std::size_t>({{1, 0}, {8, 1}, {6, 2}, {3, 3}, {1, 4}, {1, 8}});
    if (*rc::gen::weightedElement<bool>({{10, true}, {1, false}})) rank = std::max(rank, min_rank);
    Shape shape(rank);
    std::size_t total = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t cap = rank >= 4 ? 3 : 80;
      std::size_t n = *rc::gen::weightedElement<std::size_t>(
          {{1, 0}, {6, 1}, {3, 2}, {4, 3}, {3, 4}, {3, 7}, {3, 8}, {3, 9}, {3, 15}, {3, 16}, {3, 17},
           {2, 31}, {2, 32}, {2, 33}, {1, 63}, {1, 64}, {1, 65}, {1, 70}});
      n = std::min(n, cap);
      if (total * std::max<std::size_t>(n, 1) > 600) n = 1;
      total *= std::max<std::size_t>(n, 1);
      shape[i] = n;
    }
    return shape;
  });
}

// Floats from bit patterns, weighted toward the hard cases for a given effective scale.
inline rc::Gen<float> hard_float(float eff, Value v) {
  const float hi = info(v).hi;
  return rc::gen::exec([eff, hi, v] {
    const int kind = *rc::gen::weightedElement<int>({{6, 0}, {5, 1}, {4, 2}, {2, 3}, {1, 4}, {1, 5}, {1, 6},
                                                     {1, 7}, {2, 8}, {2, 9}, {2, 10}});
    const float sign = *rc::gen::arbitrary<bool>() ? -1.0f : 1.0f;
    switch (kind) {
      case 0: {  // any bit pattern, NaN excluded here (NaN has its own weight)
        float x = from_bits(*rc::gen::arbitrary<std::uint32_t>());
        return std::isnan(x) ? 0.0f : x;
      }
      case 1: {  // exact tie (k + 0.5) * eff, computed in double then rounded once
        const int k = *rc::gen::inRange(-130, 130);
        return static_cast<float>((k + 0.5) * static_cast<double>(eff));
      }
      case 2: {  // one ulp either side of a tie
        const int k = *rc::gen::inRange(-130, 130);
        const float t = static_cast<float>((k + 0.5) * static_cast<double>(eff));
        return *rc::gen::arbitrary<bool>() ? next_up(t) : next_down(t);
      }
      case 3: return sign * 0.0f;
      case 4: return sign * from_bits(*rc::gen::inRange<std::uint32_t>(1, 0x800000));  // subnormal
      case 5: return sign * std::numeric_limits<float>::infinity();
      case 6: return sign * 0x1p-149f;  // NaN is injected per case by quantize_case
      case 7: return sign * std::numeric_limits<float>::max();
      case 8: {  // at and beyond the clamp / saturation bounds
        const float bound = static_cast<float>(static_cast<double>(hi) * eff);
        const int w = *rc::gen::inRange(0, 4);
        return sign * (w == 0 ? bound : w == 1 ? next_up(bound) : w == 2 ? next_down(bound) : bound * 4.0f);
      }
      case 9: {  // minifloat midpoints between neighbouring codes, times eff
        if (!info(v).minifloat) return static_cast<float>(*rc::gen::inRange(-130, 130)) * eff;
        const auto c = static_cast<std::uint8_t>(*rc::gen::inRange(0, 1 << (info(v).bits - 1)));
        const double a = decode_minifloat(c, v), b = decode_minifloat(static_cast<std::uint8_t>(c + 1), v);
        if (!std::isfinite(a) || !std::isfinite(b)) return 0.0f;
        return sign * static_cast<float>((a + b) / 2 * static_cast<double>(eff));
      }
      default: {  // ordinary magnitudes around the scale
        return static_cast<float>(*rc::gen::inRange(-100000, 100000)) * 1e-3f * eff;
      }
    }
  });
}

// Scales on, just above and just below each dtype's grid points, zero, subnormal, above max.
inline rc::Gen<float> hard_scale(ScaleDtype dtype) {
  return rc::gen::exec([dtype] {
    const int kind = *rc::gen::weightedElement<int>({{6, 0}, {3, 1}, {3, 2}, {1, 3}, {1, 4}, {1, 5}, {4, 6}});
    const std::vector<float>& grid = oracle::grid(dtype == ScaleDtype::f32 ? ScaleDtype::f16 : dtype);
    const float point = grid[*rc::gen::inRange<std::size_t>(1, grid.size())];
    switch (kind) {
      case 0: return point;
      case 1: return next_up(point);
      case 2: return next_down(point);
      case 3: return 0.0f;
      case 4: return from_bits(*rc::gen::inRange<std::uint32_t>(1, 0x800000));
      case 5: return grid.back() * 2.0f;
      default: return static_cast<float>(*rc::gen::inRange(1, 100000)) * 1e-4f;
    }
  });
}

struct CaseOptions {
  bool valid_scheme = true;   // only schemes that pass validate_scheme
  bool exact_counts = true;   // data length and scale count match
  bool allow_nan = true;
};

inline rc::Gen<checks::QuantizeCase> quantize_case(CaseOptions opt = {}) {
  return rc::gen::exec([opt] {
    checks::QuantizeCase c;
    c.scheme = opt.valid_scheme ? *valid_scheme() : *any_scheme();
    c.shape = *shape_for(c.scheme);
    const Result<Layout> l = make_layout(c.scheme, c.shape);
    std::size_t n = 1;
    for (auto d : c.shape) n *= d;
    std::size_t scale_count = l.ok() ? l->scale_count : 1;
    if (!opt.exact_counts && *rc::gen::weightedElement<bool>({{1, true}, {8, false}})) {
      scale_count = scale_count + 1 - 2 * (*rc::gen::arbitrary<bool>() && scale_count > 0);
    }
    const ScaleDtype dt = c.scheme.scale_dtype();
    for (std::size_t k = 0; k < scale_count; ++k) c.scales.push_back(*hard_scale(dt));
    if (c.scheme.two_level()) {
      c.global = *rc::gen::weightedElement<float>({{6, 1.0f}, {3, 0x1p-10f}, {2, 3.0f}, {1, 0.0f}, {1, 0x1p-126f}});
    }
    // The seed scenario (a two-level scheme without its global) gets a real share of the cases.
    if (!opt.exact_counts && c.global && *rc::gen::weightedElement<bool>({{1, true}, {2, false}})) c.global.reset();
    if (!opt.exact_counts && !c.scheme.two_level() && *rc::gen::weightedElement<bool>({{1, true}, {12, false}})) {
      c.global = 1.0f;
    }
    if (c.scheme.mode == Mode::lookup) {
      std::vector<float> table;
      const std::size_t size = std::size_t{1} << info(c.scheme.value).bits;
      for (std::size_t i = 0; i < size; ++i) {
        // Mostly integers and halves (whose midpoints the data's ties hit), with infinities, -0,
        // the float just above an integer (thresholds between neighbouring floats) and any
        // finite pattern (thresholds anywhere).
        const auto k = static_cast<float>(static_cast<int>(i) - static_cast<int>(size / 2));
        std::uint32_t bits = *rc::gen::arbitrary<std::uint32_t>();
        if ((bits & 0x7F800000u) == 0x7F800000u) bits &= 0xBFFFFFFFu;  // NaN and Inf to finite
        table.push_back(*rc::gen::weightedElement<float>({{8, k},
                                                          {2, static_cast<float>(i) * 0.5f},
                                                          {1, -std::numeric_limits<float>::infinity()},
                                                          {1, std::numeric_limits<float>::infinity()},
                                                          {1, -0.0f},
                                                          {1, next_up(k)},
                                                          {1, from_bits(bits)}}));
      }
      c.table = table;
    }
    float eff_hint = 1.0f;
    if (!c.scales.empty()) {
      const Result<float> r = round_up_scale(std::fabs(c.scales[0]), dt);
      if (r.ok()) eff_hint = effective_scale(r.value(), c.global);
    }
    std::size_t len = n;
    if (!opt.exact_counts && *rc::gen::weightedElement<bool>({{1, true}, {10, false}})) len = n + 1;
    for (std::size_t i = 0; i < len; ++i) {
      c.data.push_back(*hard_float(std::isfinite(eff_hint) && eff_hint > 0 ? eff_hint : 1.0f, c.scheme.value));
    }
    // One case in eight carries a NaN somewhere (nan-input), so later error kinds stay reachable.
    if (opt.allow_nan && !c.data.empty() && *rc::gen::weightedElement<bool>({{1, true}, {7, false}})) {
      c.data[*rc::gen::inRange<std::size_t>(0, c.data.size())] = std::numeric_limits<float>::quiet_NaN();
    }
    // Some invalid scales and globals, so §3.5 is reached.
    if (!opt.exact_counts && !c.scales.empty() && *rc::gen::weightedElement<bool>({{1, true}, {9, false}})) {
      c.scales[*rc::gen::inRange<std::size_t>(0, c.scales.size())] =
          *rc::gen::element(-1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), -0.0f);
    }
    if (!opt.exact_counts && c.global && *rc::gen::weightedElement<bool>({{1, true}, {6, false}})) {
      c.global = *rc::gen::element(-2.0f, std::numeric_limits<float>::infinity(), 0x1p127f, -0.0f);
    }
    if (!opt.exact_counts && *rc::gen::weightedElement<bool>({{1, true}, {12, false}})) {
      if (c.table) {
        c.table->resize(*rc::gen::element<std::size_t>(0, 3, c.table->size()));
        if (!c.table->empty()) (*c.table)[0] = std::numeric_limits<float>::quiet_NaN();
      } else {
        c.table = std::vector<float>{0.0f};
      }
    }
    return c;
  });
}

}  // namespace qconform::gen

namespace rc {

template <>
struct Arbitrary<qconform::Scheme> {
  static Gen<qconform::Scheme> arbitrary() { return qconform::gen::any_scheme(); }
};

template <>
struct Arbitrary<qconform::checks::QuantizeCase> {
  static Gen<qconform::checks::QuantizeCase> arbitrary() { return qconform::gen::quantize_case(); }
};

}  // namespace rc

namespace qconform {
inline void showValue(const Scheme& s, std::ostream& os) { os << print_scheme(s); }
inline void showValue(Value v, std::ostream& os) { os << info(v).name; }
inline void showValue(ScaleDtype d, std::ostream& os) { os << to_string(d); }
inline void showValue(Calibration m, std::ostream& os) { os << (m == Calibration::minmax ? "minmax" : "absmean"); }
namespace checks {
inline void showValue(const QuantizeCase& c, std::ostream& os) { os << describe(c); }
}  // namespace checks
}  // namespace qconform
