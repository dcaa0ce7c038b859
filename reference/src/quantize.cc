// Quantize, dequantize, pack/unpack and serialize/parse (SPEC §3, §5, §6, §7).
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "fpenv.h"
#include "text.h"
#include "unguarded.h"
#include "qconform/reference.h"

namespace qconform {
namespace {

using detail::hexf;

std::string at(std::size_t i) { return "[" + std::to_string(i) + "]"; }

bool bad_scale(float s) { return std::isnan(s) || std::isinf(s) || std::signbit(s); }

// -0.0 is taken as +0.0 before anything else (SPEC §3.5).
float unsign_zero(float s) { return s == 0.0f ? 0.0f : s; }

Status check_global_presence(const Scheme& s, bool has_global) {
  if (s.two_level() && !has_global) {
    return Error{ErrorKind::missing_global_scale,
                 "a two-level scheme needs a per-tensor (global) scale: " + print_scheme(s)};
  }
  if (!s.two_level() && has_global) {
    return Error{ErrorKind::unexpected_global_scale, "a one-level scheme takes no global scale: " + print_scheme(s)};
  }
  return {};
}

// invalid-global-scale for the global itself or for g * s'_k overflowing (SPEC §3.5).
Status check_global(std::optional<float> global, std::span<const float> stored) {
  if (!global) return {};
  if (bad_scale(*global)) return Error{ErrorKind::invalid_global_scale, "global scale " + hexf(*global)};
  for (std::size_t k = 0; k < stored.size(); ++k) {
    if (std::isinf(*global * stored[k])) {
      return Error{ErrorKind::invalid_global_scale, "global " + hexf(*global) + " times block scale" + at(k) + " " +
                                                        hexf(stored[k]) + " overflows"};
    }
  }
  return {};
}

Status check_table(const Scheme& s, Table table) {
  if (s.mode == Mode::symmetric) {
    if (table) return Error{ErrorKind::unexpected_lookup_table, "symmetric mode takes no lookup table: " + print_scheme(s)};
    return {};
  }
  if (!table) return Error{ErrorKind::missing_lookup_table, "lookup mode needs a table: " + print_scheme(s)};
  const std::size_t want = std::size_t{1} << info(s.value).bits;
  if (table->size() != want) {
    return Error{ErrorKind::lookup_table_size,
                 "lookup table of " + std::to_string(table->size()) + " entries, " + std::to_string(want) +
                     " needed by " + print_scheme(s)};
  }
  for (std::size_t i = 0; i < table->size(); ++i) {
    if (std::isnan((*table)[i])) return Error{ErrorKind::invalid_lookup_table, "lookup table entry" + at(i) + " is NaN"};
  }
  return {};
}

// Codes quantize can write for this scheme (SPEC §7 canonical codes).
bool code_ok(std::int32_t c, const Scheme& s) {
  const ValueInfo& vi = info(s.value);
  if (s.mode == Mode::lookup) return c >= 0 && c < (1 << vi.bits);
  if (vi.minifloat) return c >= 0 && c < 256 && minifloat_code_is_canonical(static_cast<std::uint8_t>(c), s.value);
  return c >= static_cast<std::int32_t>(vi.lo) && c <= static_cast<std::int32_t>(vi.hi);
}

Status check_codes(const Scheme& s, std::span<const std::int32_t> codes) {
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (!code_ok(codes[i], s)) {
      return Error{ErrorKind::invalid_code, "code" + at(i) + " " + std::to_string(codes[i]) + " is not a " +
                                                std::string(info(s.value).name) + " code quantize writes"};
    }
  }
  return {};
}

// A stored scale is valid when quantize could have stored it: finite, no sign, on the grid.
Status check_stored_scales(const Scheme& s, std::span<const float> stored) {
  for (std::size_t k = 0; k < stored.size(); ++k) {
    const float v = stored[k];
    if (bad_scale(v)) return Error{ErrorKind::invalid_scale, "stored scale" + at(k) + " " + hexf(v)};
    const Result<float> r = detail::round_up_scale_unguarded(v, s.scale_dtype());
    if (!r.ok() || std::bit_cast<std::uint32_t>(r.value()) != std::bit_cast<std::uint32_t>(v)) {
      return Error{ErrorKind::invalid_scale, "stored scale" + at(k) + " " + hexf(v) + " is not on the " +
                                                 std::string(to_string(s.scale_dtype())) + " grid"};
    }
  }
  return {};
}

// The whole of SPEC §3 for an already quantized tensor (dequantize, serialize).
Result<Layout> validate_tensor(const QTensor& t, bool with_table, Table table) {
  if (Status st = validate_scheme(t.scheme); !st.ok()) return st.error();
  if (Status st = check_global_presence(t.scheme, t.global.has_value()); !st.ok()) return st.error();
  Result<Layout> l = make_layout(t.scheme, t.shape, t.codes.size());
  if (!l.ok()) return l;
  if (t.scales.size() != l->scale_count) {
    return Error{ErrorKind::scale_count_mismatch,
                 std::to_string(t.scales.size()) + " stored scales, " + std::to_string(l->scale_count) +
                     " needed by " + print_scheme(t.scheme)};
  }
  if (Status st = check_stored_scales(t.scheme, t.scales); !st.ok()) return st.error();
  if (Status st = check_global(t.global, t.scales); !st.ok()) return st.error();
  if (with_table) {
    if (Status st = check_table(t.scheme, table); !st.ok()) return st.error();
  }
  if (Status st = check_codes(t.scheme, t.codes); !st.ok()) return st.error();
  return l;
}

// Exact comparison of |y - a| and |y - b| for finite y: each difference is held exactly as a
// double-double (TwoSum), so ties are real ties. Returns <0, 0, >0.
int compare_distance(float y, float a, float b) {
  const bool ia = std::isinf(a), ib = std::isinf(b);
  if (ia || ib) return ia == ib ? 0 : (ia ? 1 : -1);
  auto dist = [y](float t, double& hi, double& lo) {
    const double p = y, q = -static_cast<double>(t);
    const double s = p + q;
    const double bb = s - p;
    const double err = (p - (s - bb)) + (q - bb);
    if (s < 0) {
      hi = -s;
      lo = -err;
    } else {
      hi = s;
      lo = err;
    }
  };
  double ha, la, hb, lb;
  dist(a, ha, la);
  dist(b, hb, lb);
  if (ha != hb) return ha < hb ? -1 : 1;
  if (la != lb) return la < lb ? -1 : 1;
  return 0;
}

std::int32_t nearest_index(float y, std::span<const float> table) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < table.size(); ++i) {
    bool better;
    if (std::isinf(y)) {
      // The limit of "nearest" as y grows without bound: the largest (smallest) entry.
      better = y > 0 ? table[i] > table[best] : table[i] < table[best];
    } else {
      better = compare_distance(y, table[i], table[best]) < 0;
    }
    if (better) best = i;
  }
  return static_cast<std::int32_t>(best);
}

// Codes to the value storage of SPEC §6. Lines along the packed axis are written unit by unit.
template <class Fn>
void for_each_line(const Layout& l, Fn&& fn) {
  // fn(first element index, element stride, unit index of the line's first unit, unit stride, n)
  // An empty tensor has no lines, however large its other extents (no SIZE_MAX-long loops).
  if (l.per_unit == 1 || l.rank == 0 || l.elements == 0) return;
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < l.packed_axis; ++i) outer *= l.shape[i];
  for (std::size_t i = l.packed_axis + 1; i < l.rank; ++i) inner *= l.shape[i];
  const std::size_t n = l.shape[l.packed_axis];
  const std::size_t units = l.storage_shape[l.packed_axis];
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < inner; ++i) fn(o * n * inner + i, inner, o * units * inner + i, inner, n);
  }
}

std::uint32_t load_unit(const std::uint8_t* p, std::size_t unit_bytes) {
  std::uint32_t v = 0;
  for (std::size_t b = 0; b < unit_bytes; ++b) v |= static_cast<std::uint32_t>(p[b]) << (8 * b);
  return v;
}

void store_unit(std::uint8_t* p, std::size_t unit_bytes, std::uint32_t v) {
  for (std::size_t b = 0; b < unit_bytes; ++b) p[b] = static_cast<std::uint8_t>(v >> (8 * b));
}

std::vector<std::uint8_t> pack_codes(const Layout& l, std::span<const std::int32_t> codes) {
  std::vector<std::uint8_t> out(l.storage_bytes, 0);
  const std::uint32_t mask = (l.bits == 32) ? ~0u : ((1u << l.bits) - 1);
  if (l.per_unit == 1) {
    for (std::size_t i = 0; i < codes.size(); ++i) out[i] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(codes[i]) & mask);
    return out;
  }
  if (l.rank == 0) {
    store_unit(out.data(), l.unit_bytes, static_cast<std::uint32_t>(codes[0]) & mask);
    return out;
  }
  for_each_line(l, [&](std::size_t e0, std::size_t es, std::size_t u0, std::size_t us, std::size_t n) {
    for (std::size_t c = 0; c < n; ++c) {
      std::uint8_t* p = out.data() + (u0 + (c / l.per_unit) * us) * l.unit_bytes;
      const std::uint32_t field = static_cast<std::uint32_t>(codes[e0 + c * es]) & mask;
      store_unit(p, l.unit_bytes, load_unit(p, l.unit_bytes) | field << ((c % l.per_unit) * l.bits));
    }
  });
  return out;
}

std::int32_t field_to_code(std::uint32_t field, const Scheme& s) {
  const ValueInfo& vi = info(s.value);
  if (s.mode == Mode::lookup || vi.minifloat) return static_cast<std::int32_t>(field);
  const std::uint32_t sign = 1u << (vi.bits - 1);
  return static_cast<std::int32_t>(field ^ sign) - static_cast<std::int32_t>(sign);  // sign-extend
}

Result<std::vector<std::int32_t>> unpack_codes(const Scheme& s, const Layout& l, std::span<const std::uint8_t> st) {
  std::vector<std::int32_t> codes(l.elements);
  const std::uint32_t mask = (1u << l.bits) - 1;
  auto padding = [](std::size_t unit) {
    return Error{ErrorKind::invalid_code, "nonzero padding bits in storage unit" + at(unit)};
  };
  if (l.per_unit == 1) {
    for (std::size_t i = 0; i < l.elements; ++i) {
      if (st[i] & ~mask) {
        return Error{ErrorKind::invalid_code, "byte" + at(i) + " has bits above the " + std::to_string(l.bits) + "-bit code"};
      }
      codes[i] = field_to_code(st[i], s);
    }
  } else if (l.rank == 0) {
    const std::uint32_t u = load_unit(st.data(), l.unit_bytes);
    if (u & ~mask) return padding(0);
    codes[0] = field_to_code(u, s);
  } else {
    std::optional<Error> err;
    for_each_line(l, [&](std::size_t e0, std::size_t es, std::size_t u0, std::size_t us, std::size_t n) {
      if (err) return;
      const std::size_t units = n / l.per_unit + (n % l.per_unit != 0);
      for (std::size_t u = 0; u < units; ++u) {
        const std::size_t unit = u0 + u * us;
        const std::uint32_t v = load_unit(st.data() + unit * l.unit_bytes, l.unit_bytes);
        const std::size_t used = std::min(l.per_unit, n - u * l.per_unit);
        if (used < l.per_unit && (v >> (used * l.bits)) != 0) {
          err = padding(unit);
          return;
        }
        for (std::size_t k = 0; k < used; ++k) {
          codes[e0 + (u * l.per_unit + k) * es] = field_to_code((v >> (k * l.bits)) & mask, s);
        }
      }
    });
    if (err) return *err;
  }
  if (Status cs = check_codes(s, codes); !cs.ok()) return cs.error();
  return codes;
}

std::vector<std::uint8_t> serialize_unchecked(const QTensor& t, const Layout& l) {
  std::vector<std::uint8_t> out = pack_codes(l, t.codes);
  out.reserve(l.total_bytes);
  const std::size_t w = scale_bytes(t.scheme.scale_dtype());
  for (float s : t.scales) {
    const std::uint32_t e = encode_scale(s, t.scheme.scale_dtype());
    for (std::size_t b = 0; b < w; ++b) out.push_back(static_cast<std::uint8_t>(e >> (8 * b)));
  }
  if (t.global) {
    const auto g = std::bit_cast<std::uint32_t>(*t.global);
    for (std::size_t b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(g >> (8 * b)));
  }
  return out;
}

float eff_of(float stored, std::optional<float> global) {
  const float eff = global ? *global * stored : stored;
  return eff == 0.0f ? 0.1f : eff;  // burn's valid_scale
}

std::int32_t code_of(float y, Value v, Mode m, Table table) {
  if (m == Mode::lookup) return table && !table->empty() && !std::isnan(y) ? nearest_index(y, *table) : 0;
  const ValueInfo& vi = info(v);
  if (vi.minifloat) return encode_minifloat(y, v);
  if (std::isnan(y)) return 0;
  if (y >= vi.hi) return static_cast<std::int32_t>(vi.hi);
  if (y <= vi.lo) return static_cast<std::int32_t>(vi.lo);
  return static_cast<std::int32_t>(round_half_away(y));
}

float value_of(std::int32_t code, Value v, Mode m, Table table) {
  if (m == Mode::lookup) {
    return table && code >= 0 && static_cast<std::size_t>(code) < table->size() ? (*table)[static_cast<std::size_t>(code)]
                                                                                 : std::numeric_limits<float>::quiet_NaN();
  }
  if (info(v).minifloat) return decode_minifloat(static_cast<std::uint8_t>(code), v);
  return static_cast<float>(code);
}

}  // namespace

// The public per-element helpers run under the default environment like every entry point;
// the loops below call the unguarded forms inside one guard per call.
float effective_scale(float stored, std::optional<float> global) noexcept {
  detail::FpEnvGuard guard;
  return eff_of(stored, global);
}

std::int32_t quantize_value(float y, Value v, Mode m, Table table) noexcept {
  detail::FpEnvGuard guard;
  return code_of(y, v, m, table);
}

float decode_value(std::int32_t code, Value v, Mode m, Table table) noexcept {
  detail::FpEnvGuard guard;
  return value_of(code, v, m, table);
}

Status validate_quantize(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                         std::span<const float> scales, std::optional<float> global, Table table) {
  detail::FpEnvGuard guard;
  if (Status st = validate_scheme(s); !st.ok()) return st;
  if (Status st = check_global_presence(s, global.has_value()); !st.ok()) return st;
  Result<Layout> l = make_layout(s, shape, data.size());
  if (!l.ok()) return l.error();
  if (scales.size() != l->scale_count) {
    return Error{ErrorKind::scale_count_mismatch, std::to_string(scales.size()) + " scales given, " +
                                                      std::to_string(l->scale_count) + " needed by " + print_scheme(s)};
  }
  std::vector<float> stored(scales.size());
  for (std::size_t k = 0; k < scales.size(); ++k) {
    const float v = unsign_zero(scales[k]);
    if (bad_scale(v)) return Error{ErrorKind::invalid_scale, "scale" + at(k) + " " + hexf(scales[k])};
    stored[k] = detail::round_up_scale_unguarded(v, s.scale_dtype()).value();
  }
  if (Status st = check_global(global ? std::optional<float>(unsign_zero(*global)) : std::nullopt, stored); !st.ok()) {
    return st;
  }
  if (Status st = check_table(s, table); !st.ok()) return st;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (std::isnan(data[i])) return Error{ErrorKind::nan_input, "input" + at(i) + " is NaN"};
  }
  return {};
}

Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                         std::span<const float> scales, std::optional<float> global, Table table) {
  if (Status st = validate_quantize(s, shape, data, scales, global, table); !st.ok()) return st.error();
  detail::FpEnvGuard guard;
  const Layout l = make_layout(s, shape, data.size()).value();
  QTensor t;
  t.scheme = s;
  t.shape.assign(shape.begin(), shape.end());
  if (global) t.global = unsign_zero(*global);
  t.scales.resize(scales.size());
  std::vector<float> eff(scales.size());
  for (std::size_t k = 0; k < scales.size(); ++k) {
    t.scales[k] = detail::round_up_scale_unguarded(unsign_zero(scales[k]), s.scale_dtype()).value();
    eff[k] = eff_of(t.scales[k], t.global);
  }
  t.codes.resize(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const float y = data[i] / eff[block_of(l, i)];  // a true division, never x * (1/eff)
    t.codes[i] = code_of(y, s.value, s.mode, table);
  }
  return t;
}

Result<std::vector<float>> dequantize(const QTensor& t, Table table) {
  detail::FpEnvGuard guard;
  Result<Layout> l = validate_tensor(t, true, table);
  if (!l.ok()) return l.error();
  std::vector<float> out(t.codes.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float eff = eff_of(t.scales[block_of(*l, i)], t.global);
    out[i] = eff * value_of(t.codes[i], t.scheme.value, t.scheme.mode, table);
  }
  return out;
}

Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                       std::span<const std::int32_t> codes) {
  if (Status st = validate_scheme(s); !st.ok()) return st.error();
  Result<Layout> l = make_layout(s, shape, codes.size());
  if (!l.ok()) return l.error();
  if (Status st = check_codes(s, codes); !st.ok()) return st.error();
  return pack_codes(*l, codes);
}

Result<std::vector<std::int32_t>> unpack(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const std::uint8_t> storage) {
  if (Status st = validate_scheme(s); !st.ok()) return st.error();
  Result<Layout> l = make_layout(s, shape);
  if (!l.ok()) return l.error();
  if (storage.size() < l->storage_bytes) {
    return Error{ErrorKind::truncated_buffer, std::to_string(storage.size()) + " storage bytes, " +
                                                  std::to_string(l->storage_bytes) + " expected"};
  }
  if (storage.size() > l->storage_bytes) {
    return Error{ErrorKind::trailing_bytes, std::to_string(storage.size()) + " storage bytes, " +
                                                std::to_string(l->storage_bytes) + " expected"};
  }
  return unpack_codes(s, *l, storage);
}

Result<std::vector<std::uint8_t>> serialize(const QTensor& t) {
  detail::FpEnvGuard guard;
  Result<Layout> l = validate_tensor(t, false, std::nullopt);
  if (!l.ok()) return l.error();
  return serialize_unchecked(t, *l);
}

Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> bytes,
                      Table table) {
  detail::FpEnvGuard guard;
  if (Status st = validate_scheme(s); !st.ok()) return st.error();
  Result<Layout> lr = make_layout(s, shape);
  if (!lr.ok()) return lr.error();
  const Layout& l = *lr;
  // Exact length before touching anything (SPEC §7).
  if (bytes.size() < l.total_bytes) {
    return Error{ErrorKind::truncated_buffer,
                 std::to_string(bytes.size()) + " bytes, " + std::to_string(l.total_bytes) + " expected for " + print_scheme(s)};
  }
  if (bytes.size() > l.total_bytes) {
    return Error{ErrorKind::trailing_bytes,
                 std::to_string(bytes.size()) + " bytes, " + std::to_string(l.total_bytes) + " expected for " + print_scheme(s)};
  }
  QTensor t;
  t.scheme = s;
  t.shape.assign(shape.begin(), shape.end());
  const ScaleDtype dt = s.scale_dtype();
  const std::size_t w = scale_bytes(dt);
  const std::uint8_t* p = bytes.data() + l.storage_bytes;
  t.scales.resize(l.scale_count);
  for (std::size_t k = 0; k < l.scale_count; ++k) {
    const std::uint32_t e = load_unit(p + k * w, w);
    const float v = decode_scale(e, dt);
    // A sign bit (even on zero) or a NaN/Inf pattern is not canonical: serialize never writes it.
    const std::uint32_t sign = dt == ScaleDtype::f32 ? 0x80000000u : (w == 2 ? 0x8000u : 0x80u);
    if ((e & sign) || bad_scale(v)) {
      return Error{ErrorKind::invalid_scale, "stored scale" + at(k) + " pattern 0x" + [&] {
        char b[16];
        std::snprintf(b, sizeof b, "%0*x", static_cast<int>(2 * w), e);
        return std::string(b);
      }()};
    }
    t.scales[k] = v;
  }
  if (l.global_bytes) {
    const float g = std::bit_cast<float>(load_unit(p + l.scale_count * w, 4));
    if (std::signbit(g) || bad_scale(g)) return Error{ErrorKind::invalid_global_scale, "stored global " + hexf(g)};
    t.global = g;
  }
  if (Status st = check_global(t.global, t.scales); !st.ok()) return st.error();
  if (Status st = check_table(s, table); !st.ok()) return st.error();
  Result<std::vector<std::int32_t>> codes = unpack_codes(s, l, bytes.first(l.storage_bytes));
  if (!codes.ok()) return codes.error();
  t.codes = std::move(codes).value();
  return t;
}

}  // namespace qconform
