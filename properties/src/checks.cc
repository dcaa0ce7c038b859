// The conformance checks: compare bits, never values with a tolerance.
#include "qconform/checks.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "qconform/oracle.h"

namespace qconform::checks {
namespace {

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

std::string kind_or_ok(const Error* e) { return e ? std::string(to_string(e->kind)) : std::string("ok"); }

template <class A, class B>
std::string compare_status(const char* op, const std::string& who, const A& ref, const B& got) {
  if (ref.ok() != got.ok() || (!ref.ok() && ref.kind() != got.kind())) {
    return std::string(op) + ": reference gives " + kind_or_ok(ref.ok() ? nullptr : &ref.error()) + ", " + who +
           " gives " + kind_or_ok(got.ok() ? nullptr : &got.error()) +
           (got.ok() ? std::string() : " (" + got.error().message + ")");
  }
  return {};
}

std::string compare_floats(const char* what, const std::vector<float>& ref, const std::vector<float>& got,
                           const std::vector<float>* input = nullptr) {
  if (ref.size() != got.size()) {
    return std::string(what) + ": " + std::to_string(ref.size()) + " vs " + std::to_string(got.size()) + " values";
  }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (bits(ref[i]) != bits(got[i])) {
      return std::string(what) + "[" + std::to_string(i) + "]" +
             (input && i < input->size() ? " input " + hex((*input)[i]) : std::string()) + ": expected " +
             hex(ref[i]) + ", got " + hex(got[i]);
    }
  }
  return {};
}

std::string compare_codes(const std::vector<std::int32_t>& ref, const std::vector<std::int32_t>& got,
                          const QuantizeCase& c, const std::vector<float>& stored) {
  if (ref.size() != got.size()) return "codes: " + std::to_string(ref.size()) + " vs " + std::to_string(got.size());
  Result<Layout> l = make_layout(c.scheme, c.shape);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i] != got[i]) {
      std::string scale;
      if (l.ok() && !stored.empty()) scale = " scale " + hex(stored[block_of(*l, i) % stored.size()]);
      return "code[" + std::to_string(i) + "]" + (i < c.data.size() ? " input " + hex(c.data[i]) : std::string()) + scale +
             (c.global ? " global " + hex(*c.global) : std::string()) + ": expected " + std::to_string(ref[i]) +
             ", got " + std::to_string(got[i]);
    }
  }
  return {};
}

std::string compare_bytes(const char* what, const std::vector<std::uint8_t>& ref, const std::vector<std::uint8_t>& got) {
  if (ref.size() != got.size()) return std::string(what) + ": " + std::to_string(ref.size()) + " vs " + std::to_string(got.size()) + " bytes";
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i] != got[i]) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s: byte[%zu] expected 0x%02x, got 0x%02x", what, i, ref[i], got[i]);
      return buf;
    }
  }
  return {};
}

std::string compare_tensors(const QTensor& ref, const QTensor& got, const QuantizeCase& c) {
  if (auto d = compare_codes(ref.codes, got.codes, c, ref.scales); !d.empty()) return d;
  if (auto d = compare_floats("stored scale", ref.scales, got.scales); !d.empty()) return d;
  if (ref.global.has_value() != got.global.has_value() || (ref.global && bits(*ref.global) != bits(*got.global))) {
    return "global: expected " + (ref.global ? hex(*ref.global) : "none") + ", got " + (got.global ? hex(*got.global) : "none");
  }
  if (!(ref.scheme == got.scheme) || ref.shape != got.shape) return "scheme or shape of the result differ";
  return {};
}

ReferenceImplementation& ref() {
  static ReferenceImplementation r;
  return r;
}

}  // namespace

std::string hex(float x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
  return buf;
}

std::string describe(const QuantizeCase& c) {
  std::ostringstream o;
  o << "scheme=" << print_scheme(c.scheme) << " shape=";
  for (std::size_t i = 0; i < c.shape.size(); ++i) o << (i ? "x" : "") << c.shape[i];
  if (c.shape.empty()) o << "scalar";
  o << " scales=";
  for (std::size_t i = 0; i < c.scales.size(); ++i) o << (i ? "," : "") << hex(c.scales[i]);
  o << " global=" << (c.global ? hex(*c.global) : "none");
  if (c.table) {
    o << " table=";
    for (std::size_t i = 0; i < c.table->size(); ++i) o << (i ? "," : "") << hex((*c.table)[i]);
  }
  o << " data=";
  for (std::size_t i = 0; i < c.data.size(); ++i) o << (i ? " " : "") << hex(c.data[i]);
  return o.str();
}

std::string quantize(const Implementation& impl, const QuantizeCase& c) {
  const auto r = ref().quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  const auto g = impl.quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  if (auto d = compare_status("quantize", impl.name(), r, g); !d.empty()) return d;
  if (!r.ok()) return {};
  if (auto d = compare_tensors(r.value(), g.value(), c); !d.empty()) return impl.name() + " quantize: " + d;
  if (impl.supports(Op::serialize)) {
    const auto rb = ref().serialize(r.value());
    const auto gb = impl.serialize(g.value());
    if (auto d = compare_status("serialize", impl.name(), rb, gb); !d.empty()) return d;
    if (rb.ok()) return compare_bytes("serialize", rb.value(), gb.value());
  }
  return {};
}

std::string dequantize_tensor(const Implementation& impl, const QTensor& t, Table table) {
  if (!impl.supports(Op::dequantize)) return {};
  const auto r = ref().dequantize(t, table);
  const auto g = impl.dequantize(t, table);
  if (auto d = compare_status("dequantize", impl.name(), r, g); !d.empty()) return d;
  if (!r.ok()) return {};
  if (auto d = compare_floats("dequantized", r.value(), g.value()); !d.empty()) return impl.name() + " " + d;
  return {};
}

std::string dequantize(const Implementation& impl, const QuantizeCase& c) {
  const auto q = ref().quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  if (!q.ok()) return {};
  return dequantize_tensor(impl, q.value(), c.table_span());
}

std::string layout(const Implementation& impl, const QuantizeCase& c, std::size_t flip_at, std::uint8_t flip_mask) {
  const auto q = ref().quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  if (!q.ok()) return {};
  const auto bytes = ref().serialize(q.value());
  if (!bytes.ok()) return "reference cannot serialize its own tensor: " + bytes.error().message;
  const Result<Layout> l = make_layout(c.scheme, c.shape);
  if (impl.supports(Op::pack)) {
    const auto rp = ref().pack(c.scheme, c.shape, q->codes);
    const auto gp = impl.pack(c.scheme, c.shape, q->codes);
    if (auto d = compare_status("pack", impl.name(), rp, gp); !d.empty()) return d;
    if (rp.ok()) {
      if (auto d = compare_bytes("pack", rp.value(), gp.value()); !d.empty()) return d;
    }
  }
  if (impl.supports(Op::unpack) && l.ok()) {
    const std::span<const std::uint8_t> storage(bytes->data(), l->storage_bytes);
    const auto ru = ref().unpack(c.scheme, c.shape, storage);
    const auto gu = impl.unpack(c.scheme, c.shape, storage);
    if (auto d = compare_status("unpack", impl.name(), ru, gu); !d.empty()) return d;
    if (ru.ok() && ru.value() != gu.value()) return "unpack: codes differ";
  }
  if (impl.supports(Op::parse) || impl.supports(Op::dequantize)) {
    std::vector<std::uint8_t> b = bytes.value();
    for (int variant = 0; variant < 3; ++variant) {
      if (variant == 1 && !b.empty()) b[flip_at % b.size()] ^= flip_mask;
      if (variant == 2) b.push_back(flip_mask);
      if (impl.supports(Op::parse)) {
        const auto rp = ref().parse(c.scheme, c.shape, b, c.table_span());
        const auto gp = impl.parse(c.scheme, c.shape, b, c.table_span());
        if (auto d = compare_status("parse", impl.name(), rp, gp); !d.empty()) return d;
        if (rp.ok()) {
          if (auto d = compare_tensors(rp.value(), gp.value(), c); !d.empty()) return "parse: " + d;
        }
      }
      if (auto d = dequantize_bytes(impl, c.scheme, c.shape, b, c.table_span()); !d.empty()) return d;
    }
  }
  return {};
}


std::string dequantize_bytes(const Implementation& impl, const Scheme& s, std::span<const std::size_t> shape,
                             std::span<const std::uint8_t> bytes, Table table) {
  if (!impl.supports(Op::dequantize)) return {};
  const auto r = ref().dequantize_bytes(s, shape, bytes, table);
  const auto g = impl.dequantize_bytes(s, shape, bytes, table);
  if (auto d = compare_status("dequantize of bytes", impl.name(), r, g); !d.empty()) return d;
  if (!r.ok()) return {};
  if (auto d = compare_floats("dequantized bytes", r.value(), g.value()); !d.empty()) return impl.name() + " " + d;
  return {};
}

std::string parse_bytes(const Implementation& impl, const Scheme& s, std::span<const std::size_t> shape,
                        std::span<const std::uint8_t> bytes, Table table) {
  if (!impl.supports(Op::parse)) return {};
  const auto r = ref().parse(s, shape, bytes, table);
  const auto g = impl.parse(s, shape, bytes, table);
  if (auto d = compare_status("parse", impl.name(), r, g); !d.empty()) return d;
  if (!r.ok()) return {};
  const QuantizeCase c{s, Shape(shape.begin(), shape.end()), {}, {}, std::nullopt, std::nullopt};
  if (auto d = compare_tensors(r.value(), g.value(), c); !d.empty()) return impl.name() + " parse: " + d;
  return {};
}

std::string calibrate(const Implementation& impl, const QuantizeCase& c, Calibration method) {
  const auto r = ref().calibrate(c.scheme, c.shape, c.data, method);
  const auto g = impl.calibrate(c.scheme, c.shape, c.data, method);
  if (auto d = compare_status("calibrate", impl.name(), r, g); !d.empty()) return d;
  if (!r.ok()) return {};
  if (auto d = compare_floats("calibrated scale", r->scales, g->scales); !d.empty()) return d;
  if (r->global.has_value() != g->global.has_value() || (r->global && bits(*r->global) != bits(*g->global))) {
    return "calibrated global differs";
  }
  return {};
}

std::string round_up(const Implementation& impl, float s, ScaleDtype dtype) {
  const auto r = ref().round_up_scale(s, dtype);
  const auto g = impl.round_up_scale(s, dtype);
  if (auto d = compare_status("round_up", impl.name(), r, g); !d.empty()) return d;
  if (r.ok() && bits(r.value()) != bits(g.value())) {
    return "round_up(" + hex(s) + ", " + std::string(to_string(dtype)) + "): expected " + hex(r.value()) + ", got " + hex(g.value());
  }
  return {};
}

std::string minifloat(const Implementation& impl, float x, Value v) {
  const std::uint8_t r = ref().encode_minifloat(x, v), g = impl.encode_minifloat(x, v);
  if (r != g) {
    return "encode " + std::string(info(v).name) + "(" + hex(x) + "): expected " + std::to_string(r) + ", got " + std::to_string(g);
  }
  const float rd = ref().decode_minifloat(r, v), gd = impl.decode_minifloat(r, v);
  if (bits(rd) != bits(gd) && !(std::isnan(rd) && std::isnan(gd))) {
    return "decode " + std::string(info(v).name) + "(" + std::to_string(r) + "): expected " + hex(rd) + ", got " + hex(gd);
  }
  return {};
}

std::string oracle_quantize(const QuantizeCase& c) {
  const auto r = qconform::quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  if (!r.ok()) return {};  // the oracle speaks only about valid inputs
  const auto o = oracle::quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table ? &*c.table : nullptr);
  if (auto d = compare_floats("stored scale vs oracle", o.scales, r->scales); !d.empty()) return d;
  if (auto d = compare_codes(o.codes, r->codes, c, o.scales); !d.empty()) return "vs oracle: " + d;
  const auto dq = qconform::dequantize(r.value(), c.table_span());
  if (!dq.ok()) return "reference cannot dequantize its own tensor: " + dq.error().message;
  return compare_floats("dequantized vs oracle", oracle::dequantize(r.value(), c.table ? &*c.table : nullptr), dq.value());
}

std::string oracle_calibrate(const QuantizeCase& c, Calibration method) {
  const auto r = qconform::calibrate(c.scheme, c.shape, c.data, method);
  if (!r.ok()) {
    // The oracle agrees that NaN, Inf and an overflowing 2*alpha are errors.
    if (r.kind() == ErrorKind::calibration_overflow || r.kind() == ErrorKind::nan_input) {
      if (oracle::calibrate(c.scheme, c.shape, c.data, method)) return "reference reports " + std::string(to_string(r.kind())) + ", the oracle calibrates";
    }
    return {};
  }
  const auto o = oracle::calibrate(c.scheme, c.shape, c.data, method);
  if (!o) return "the oracle finds an overflow the reference does not";
  if (auto d = compare_floats("calibrated scale vs oracle", o->scales, r->scales); !d.empty()) return d;
  if (o->global.has_value() != r->global.has_value() || (o->global && bits(*o->global) != bits(*r->global))) {
    return "calibrated global vs oracle: expected " + (o->global ? hex(*o->global) : "none") + ", got " +
           (r->global ? hex(*r->global) : "none");
  }
  return {};
}

std::string oracle_round_up(float s, ScaleDtype dtype) {
  const auto r = qconform::round_up_scale(s, dtype);
  if (!r.ok()) return dtype == ScaleDtype::ue8m0 ? std::string() : "round_up failed: " + r.error().message;
  const float o = oracle::round_up(s, dtype);
  if (bits(o) != bits(r.value())) {
    return "round_up(" + hex(s) + ", " + std::string(to_string(dtype)) + "): oracle " + hex(o) + ", reference " + hex(r.value());
  }
  return {};
}

std::string oracle_minifloat(float x, Value v) {
  if (std::isnan(x)) return {};
  const std::uint8_t r = qconform::encode_minifloat(x, v), o = oracle::encode_minifloat(x, v);
  if (r != o) return "encode " + std::string(info(v).name) + "(" + hex(x) + "): oracle " + std::to_string(o) + ", reference " + std::to_string(r);
  const float rd = qconform::decode_minifloat(r, v), od = oracle::decode_minifloat(r, v);
  if (bits(rd) != bits(od)) return "decode " + std::string(info(v).name) + "(" + std::to_string(r) + "): oracle " + hex(od) + ", reference " + hex(rd);
  return {};
}

std::optional<ErrorKind> expected_error(const QuantizeCase& c) {
  const Scheme& s = c.scheme;
  const ValueInfo& vi = info(s.value);
  const bool two = s.block.has_value() && s.tensor.has_value();
  // §3.1, from the scheme's fields.
  if (s.block && (s.block->dims.empty() || s.block->dims.size() > 5)) return ErrorKind::invalid_block_size;
  if (s.block) {
    for (auto d : s.block->dims) {
      if (d == 0) return ErrorKind::invalid_block_size;
    }
  }
  // SPEC §1: "the scale dtype" is the innermost level's (block if present, else tensor).
  const std::optional<ScaleDtype> innermost = s.block ? std::optional(s.block->dtype) : s.tensor;
  if (innermost == ScaleDtype::ue8m0) return ErrorKind::unsupported_scale_dtype;
  if (two && *s.tensor != ScaleDtype::f32) return ErrorKind::narrow_global_scale;
  if (two && (s.block->dtype == ScaleDtype::f32 || s.block->dtype == ScaleDtype::bf16)) return ErrorKind::block_scale_too_wide;
  if (s.store.kind == StoreKind::packed_native && !vi.minifloat && vi.bits < 8) return ErrorKind::unsupported_store;
  if (s.mode == Mode::lookup && (s.store.kind != StoreKind::packed_u32 || vi.minifloat)) return ErrorKind::unsupported_lookup_scheme;
  // §3.2
  if (two && !c.global) return ErrorKind::missing_global_scale;
  if (!two && c.global) return ErrorKind::unexpected_global_scale;
  // §3.3 with 128-bit sizes: every buffer of the tensor must be addressable.
  if (c.shape.size() > 8) return ErrorKind::shape_overflow;
  __extension__ typedef unsigned __int128 u128;
  u128 n = 1;
  bool empty = false;
  for (auto d : c.shape) empty = empty || d == 0;
  for (auto d : c.shape) {
    if (empty) {
      n = 0;
      break;
    }
    n *= d;
    if (n > SIZE_MAX) return ErrorKind::shape_overflow;
  }
  if (n * 4 > SIZE_MAX) return ErrorKind::shape_overflow;
  {
    // The serialized size: value storage (each packed line padded on its own), scales, global.
    const std::size_t per = s.store.kind == StoreKind::packed_u32 ? 32 / vi.bits
                            : s.store.kind == StoreKind::packed_native ? 8 / vi.bits : 1;
    const std::size_t unit = s.store.kind == StoreKind::packed_u32 ? 4 : 1;
    u128 storage = n;
    if (per > 1 && c.shape.empty()) storage = 1;
    if (per > 1 && !c.shape.empty() && s.store.dim < c.shape.size()) {
      storage = n == 0 ? 0 : 1;
      const std::size_t axis = c.shape.size() - 1 - static_cast<std::size_t>(s.store.dim);
      for (std::size_t i = 0; i < c.shape.size() && n != 0; ++i) storage *= i == axis ? (c.shape[i] + per - 1) / per : c.shape[i];
    }
    u128 scales = 1;
    if (s.block && s.block->dims.size() <= c.shape.size() && n != 0) {
      const std::size_t r = c.shape.size(), k = s.block->dims.size();
      for (std::size_t i = 0; i < r; ++i) {
        const std::size_t b = i + k >= r ? s.block->dims[i + k - r] : 1;
        scales *= (c.shape[i] + b - 1) / b;
      }
    }
    const std::size_t width = scale_bytes(s.scale_dtype());
    if (storage * unit > SIZE_MAX || scales * 4 > SIZE_MAX || storage * unit + scales * width + (two ? 4 : 0) > SIZE_MAX) {
      return ErrorKind::shape_overflow;
    }
  }
  if (c.data.size() != n) return ErrorKind::shape_mismatch;
  if (s.block && s.block->dims.size() > c.shape.size()) return ErrorKind::block_rank_exceeds_tensor;
  if (s.store.kind != StoreKind::native && !c.shape.empty() && s.store.dim >= c.shape.size()) {
    return ErrorKind::packing_dim_out_of_range;
  }
  // §3.4
  std::size_t blocks = 1;
  if (s.block) {
    const std::size_t r = c.shape.size(), k = s.block->dims.size();
    for (std::size_t i = 0; i < r; ++i) {
      const std::size_t b = i + k >= r ? s.block->dims[i + k - r] : 1;
      blocks *= (c.shape[i] + b - 1) / b;
    }
  }
  if (c.scales.size() != blocks) return ErrorKind::scale_count_mismatch;
  // §3.5
  for (float v : c.scales) {
    if (std::isnan(v) || std::isinf(v) || v < 0) return ErrorKind::invalid_scale;
  }
  if (c.global) {
    const float g = *c.global;
    if (std::isnan(g) || std::isinf(g) || g < 0) return ErrorKind::invalid_global_scale;
    for (float v : c.scales) {
      if (std::isinf(oracle::mul(g, oracle::round_up(v == 0.0f ? 0.0f : v, s.scale_dtype())))) return ErrorKind::invalid_global_scale;
    }
  }
  // §3.6
  if (s.mode == Mode::symmetric && c.table) return ErrorKind::unexpected_lookup_table;
  if (s.mode == Mode::lookup) {
    if (!c.table) return ErrorKind::missing_lookup_table;
    if (c.table->size() != (std::size_t{1} << vi.bits)) return ErrorKind::lookup_table_size;
    for (float t : *c.table) {
      if (std::isnan(t)) return ErrorKind::invalid_lookup_table;
    }
  }
  // §3.7
  for (float x : c.data) {
    if (std::isnan(x)) return ErrorKind::nan_input;
  }
  return std::nullopt;
}

std::string error_contract(const Implementation& impl, const QuantizeCase& c) {
  const auto want = expected_error(c);
  const auto got = impl.quantize(c.scheme, c.shape, c.data, c.scales, c.global, c.table_span());
  if (want.has_value() != !got.ok() || (want && got.kind() != *want)) {
    return "error contract: SPEC §3 predicts " + (want ? std::string(to_string(*want)) : std::string("success")) + ", " +
           impl.name() + " gives " + (got.ok() ? std::string("success") : std::string(to_string(got.kind())) + " (" + got.error().message + ")");
  }
  // The seed: every valid two-level scheme without a global is missing-global-scale.
  if (validate_scheme(c.scheme).ok() && c.scheme.two_level() && !c.global &&
      (got.ok() || got.kind() != ErrorKind::missing_global_scale)) {
    return "seed property: a valid two-level scheme without a global must give missing-global-scale";
  }
  return {};
}

}  // namespace qconform::checks
