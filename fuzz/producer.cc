// The fuzz data producer and its inverse (see producer.h for the format's rules).
#include "producer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace qconform::fuzz {
namespace {

// value() tags from 0xC0 on: boundaries of every format, rounding ties, NaN, ±Inf, ±0,
// subnormals. Tags below 0xC0 read a raw pattern, so raw bits stay the common case.
constexpr std::uint8_t kSpecialTag = 0xC0;
constexpr std::array<std::uint32_t, 64> kSpecials = {
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000,  // ±0, ±1
    0x3F000000, 0xBF000000, 0x3FC00000, 0x40200000,  // ±0.5, 1.5, 2.5
    0xC0200000, 0x3EFFFFFF, 0x7F800000, 0xFF800000,  // -2.5, 0.49999997, ±Inf
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF,  // quiet, negative, signalling, max-payload NaN
    0x00800000, 0x80800000, 0x00000001, 0x80000001,  // ±FLT_MIN, ±smallest subnormal
    0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F0000,  // largest subnormal, ±FLT_MAX, bf16 max
    0x43E00000, 0xC3E00000, 0x43E80000, 0x43F00000,  // ±448 (e4m3 max), 464 (tie to 480), 480
    0x40C00000, 0xC0C00000, 0x40A00000, 0x40400000,  // ±6 (e2m1 max), 5 (e2m1 tie), 3
    0x40E00000, 0x41000000, 0xC1080000, 0x42FE0000,  // 7, 8, -8.5, 127
    0x42FF0000, 0x43000000, 0xC3008000, 0x3C800000,  // 127.5, 128, -128.5, 2^-6 (ue4m3 min normal)
    0x3B000000, 0x3A800000, 0x38800000, 0x33800000,  // 2^-9, 2^-10, 2^-14 (f16 min normal), 2^-24
    0x33000000, 0x477FE000, 0x477FF000, 0x47600000,  // 2^-25, 65504, 65520 (f16 overflow), 57344
    0x47700000, 0x37800000, 0x3E800000, 0x3F400000,  // 61440, 2^-16 (e5m2 min), 0.25, 0.75
    0x3DCCCCCD, 0x3A83126F, 0x7149F2CA, 0x4B000000,  // 0.1, 0.001, 1e30, 2^23
    0x4B7FFFFF, 0x4B800000, 0x3F800001, 0x3F7FFFFF,  // 2^24-1, 2^24, 1 ± ulp
    0x40000000, 0x3FA00000, 0x3F200000, 0x3E000000,  // 2, 1.25, 0.625, 0.125
};
static_assert(kSpecials.size() == 0x100 - kSpecialTag);

unsigned bytes_for(std::uint64_t span) {
  unsigned n = 0;
  while (span != 0) {
    ++n;
    span >>= 8;
  }
  return n;
}

// The natural count of a field (right) and the tag bytes that say "right", "one less",
// "one more" or "explicit": most inputs get the count right and go deep.
constexpr std::uint64_t kCountRightEnd = 0xE0, kCountMinusEnd = 0xF0, kCountExplicit = 0xFF;

std::size_t decode_count(Producer& p, std::size_t right, std::size_t max) {
  const std::uint64_t t = p.range(0, 255);
  if (t < kCountRightEnd) return right;
  if (t < kCountMinusEnd) return right > 0 ? right - 1 : 1;
  if (t < kCountExplicit) return right + 1;
  return static_cast<std::size_t>(p.range(0, max));
}

void encode_count(Writer& w, std::size_t n, std::size_t right, std::size_t max) {
  if (n == right) {
    w.range(0, 0, 255);
  } else if (n + 1 == right || (right == 0 && n == 1)) {
    w.range(kCountRightEnd, 0, 255);
  } else if (n == right + 1) {
    w.range(kCountMinusEnd, 0, 255);
  } else {
    w.range(kCountExplicit, 0, 255);
    w.range(n, 0, max);
  }
}

// Lookup table presence: the tag's common range means "what the mode wants" (none for
// symmetric, 2^bits entries for lookup); then "the other one"; then an explicit size.
constexpr std::uint64_t kTableNaturalEnd = 0xE0, kTableOtherEnd = 0xF0;

struct TableShape {
  bool present = false;
  std::size_t size = 0;
};

std::size_t table_size_for(const SchemeCase& s) {
  return std::size_t{1} << info(s.scheme.value).bits;
}

bool wants_table(const SchemeCase& s) { return !s.text_error && s.scheme.mode == Mode::lookup; }

TableShape decode_table_shape(Producer& p, const SchemeCase& s) {
  const std::uint64_t t = p.range(0, 255);
  const bool natural = t < kTableNaturalEnd;
  if (t < kTableOtherEnd) {
    const bool present = natural == wants_table(s);
    return {present, present ? table_size_for(s) : 0};
  }
  return {true, static_cast<std::size_t>(p.range(0, kMaxTable))};
}

void encode_table_shape(Writer& w, const std::optional<std::vector<float>>& table, const SchemeCase& s) {
  const bool right_size = table && table->size() == table_size_for(s);
  if (!table || right_size) {
    const bool natural = table.has_value() == wants_table(s);
    w.range(natural ? 0 : kTableNaturalEnd, 0, 255);
  } else {
    w.range(kTableOtherEnd, 0, 255);
    w.range(table->size(), 0, kMaxTable);
  }
}

std::optional<std::vector<float>> decode_table_values(Producer& p, const TableShape& ts) {
  if (!ts.present) return std::nullopt;
  std::vector<float> t(ts.size);
  for (float& v : t) v = p.value();
  return t;
}

void encode_values(Writer& w, std::span<const float> xs) {
  for (float x : xs) w.value(x);
}

std::size_t natural_elements(std::span<const std::size_t> shape) {
  const auto n = element_count(shape);
  return n && *n <= kMaxElements ? *n : 0;
}

bool same_floats(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
  }
  return true;
}

bool same_opt_float(const std::optional<float>& a, const std::optional<float>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || std::bit_cast<std::uint32_t>(*a) == std::bit_cast<std::uint32_t>(*b);
}

bool same_table(const std::optional<std::vector<float>>& a, const std::optional<std::vector<float>>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || same_floats(*a, *b);
}

bool same_scheme(const SchemeCase& a, const SchemeCase& b) {
  return a.scheme == b.scheme && a.text == b.text && a.text_error.has_value() == b.text_error.has_value();
}

}  // namespace

// ---- Producer / Writer ---------------------------------------------------------------------

std::uint64_t Producer::raw(unsigned n) noexcept {
  std::uint64_t v = 0;
  for (unsigned b = 0; b < n; ++b) {
    const std::uint64_t byte = pos_ < data_.size() ? data_[pos_++] : 0;
    v |= byte << (8 * b);
  }
  return v;
}

std::uint64_t Producer::range(std::uint64_t lo, std::uint64_t hi) noexcept {
  const std::uint64_t span = hi - lo;
  const std::uint64_t r = raw(bytes_for(span));
  return span == std::numeric_limits<std::uint64_t>::max() ? lo + r : lo + r % (span + 1);
}

float Producer::f32() noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(raw(4))); }

float Producer::value() noexcept {
  const auto tag = static_cast<std::uint8_t>(raw(1));
  if (tag >= kSpecialTag) return std::bit_cast<float>(kSpecials[tag - kSpecialTag]);
  return f32();
}

std::string Producer::text() noexcept {
  const std::size_t n = static_cast<std::size_t>(raw(1));
  std::string s;
  for (std::size_t i = 0; i < n && pos_ < data_.size(); ++i) s += static_cast<char>(data_[pos_++]);
  return s;
}

std::span<const std::uint8_t> Producer::rest() noexcept {
  const std::span<const std::uint8_t> r = data_.subspan(pos_);
  pos_ = data_.size();
  return r;
}

void Writer::raw(std::uint64_t v, unsigned n) {
  for (unsigned b = 0; b < n; ++b) out.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
}

void Writer::range(std::uint64_t v, std::uint64_t lo, std::uint64_t hi) { raw(v - lo, bytes_for(hi - lo)); }

void Writer::f32(float x) { raw(std::bit_cast<std::uint32_t>(x), 4); }

void Writer::value(float x) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  for (std::size_t i = 0; i < kSpecials.size(); ++i) {
    if (kSpecials[i] == b) {
      raw(kSpecialTag + i, 1);
      return;
    }
  }
  raw(0, 1);
  f32(x);
}

void Writer::text(std::string_view s) {
  raw(std::min<std::size_t>(s.size(), 255), 1);
  for (std::size_t i = 0; i < s.size() && i < 255; ++i) out.push_back(static_cast<std::uint8_t>(s[i]));
}

std::span<const std::uint32_t> special_values() noexcept { return kSpecials; }

// ---- shapes and counts ---------------------------------------------------------------------

std::optional<std::size_t> element_count(std::span<const std::size_t> shape) noexcept {
  std::size_t n = 1;
  for (std::size_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::size_t expected_scale_count(const Scheme& s, std::span<const std::size_t> shape) {
  if (!validate_scheme(s).ok()) return 1;
  const Result<Layout> l = make_layout(s, shape);
  return l.ok() ? l->scale_count : 1;
}

// ---- schemes -------------------------------------------------------------------------------
// head byte: 0x00..0xF7 a model scheme whose value is head % 9; 0xF8.. scheme text.
constexpr std::uint64_t kSchemeTextTag = 0xF8;
constexpr std::uint64_t kDimHugeTag = 0xF0;  // store dim and shape dims: a raw 64-bit value
constexpr std::uint64_t kStoreDimSmall = 10;
constexpr std::uint64_t kRankHugeTag = 250;  // ranks 9.. (shape-overflow)

SchemeCase decode_scheme(Producer& p) {
  SchemeCase c;
  const std::uint64_t head = p.range(0, 255);
  if (head >= kSchemeTextTag) {
    c.text = p.text();
    Result<Scheme> r = parse_scheme(*c.text);
    if (r.ok()) {
      c.scheme = r.value();
    } else {
      c.text_error = r.error();
    }
    return c;
  }
  Scheme& s = c.scheme;
  s.value = static_cast<Value>(head % std::size(kValues));
  s.store.kind = static_cast<StoreKind>(p.range(0, 2));
  const std::uint64_t d = p.range(0, 255);
  s.store.dim = d < kDimHugeTag ? d % kStoreDimSmall : p.raw(8);
  if (s.store.kind == StoreKind::native) s.store.dim = 0;  // native has no D (SPEC §1)
  s.mode = p.flag() ? Mode::lookup : Mode::symmetric;
  if (p.flag()) {
    BlockLevel b;
    const auto n = static_cast<std::size_t>(p.range(0, 7));
    for (std::size_t i = 0; i < n; ++i) b.dims.push_back(static_cast<std::uint8_t>(p.range(0, 255)));
    if (!b.dims.empty()) canonicalize_block(b.dims);  // no dims stays empty: invalid-block-size
    b.dtype = static_cast<ScaleDtype>(p.range(0, 4));
    s.block = std::move(b);
  }
  if (p.flag()) s.tensor = static_cast<ScaleDtype>(p.range(0, 4));
  return c;
}

void encode_scheme(Writer& w, const SchemeCase& c) {
  if (c.text) {
    w.range(kSchemeTextTag, 0, 255);
    w.text(*c.text);
    return;
  }
  const Scheme& s = c.scheme;
  w.range(static_cast<std::uint64_t>(s.value), 0, 255);
  w.range(static_cast<std::uint64_t>(s.store.kind), 0, 2);
  if (s.store.dim < kStoreDimSmall) {
    w.range(s.store.dim, 0, 255);
  } else {
    w.range(kDimHugeTag, 0, 255);
    w.raw(s.store.dim, 8);
  }
  w.flag(s.mode == Mode::lookup);
  w.flag(s.block.has_value());
  if (s.block) {
    w.range(s.block->dims.size(), 0, 7);
    for (std::uint8_t d : s.block->dims) w.range(d, 0, 255);
    w.range(static_cast<std::uint64_t>(s.block->dtype), 0, 4);
  }
  w.flag(s.tensor.has_value());
  if (s.tensor) w.range(static_cast<std::uint64_t>(*s.tensor), 0, 4);
}

Shape decode_shape(Producer& p) {
  const std::uint64_t r = p.range(0, 255);
  const std::size_t rank = r < kRankHugeTag ? r % (kMaxRank + 1) : kMaxRank + 1 + (r - kRankHugeTag);
  Shape shape(rank);
  bool huge = false;
  for (std::size_t& d : shape) {
    const std::uint64_t t = p.range(0, 255);
    if (t < kDimHugeTag) {
      d = t;
    } else {
      d = p.raw(8);
      huge = true;
    }
  }
  // Small dims are shrunk until the tensor fits kMaxElements; only huge dims go past it, and
  // ranks past kMaxRank, which are shape-overflow whatever their dims.
  if (!huge && rank <= kMaxRank) {
    while (element_count(shape).value_or(std::numeric_limits<std::size_t>::max()) > kMaxElements) {
      *std::max_element(shape.begin(), shape.end()) /= 2;
    }
  }
  return shape;
}

void encode_shape(Writer& w, const Shape& shape) {
  w.range(shape.size() <= kMaxRank ? shape.size() : kRankHugeTag + (shape.size() - kMaxRank - 1), 0, 255);
  for (std::size_t d : shape) {
    if (d < kDimHugeTag) {
      w.range(d, 0, 255);
    } else {
      w.range(kDimHugeTag, 0, 255);
      w.raw(d, 8);
    }
  }
}

// ---- scheme_qparams ------------------------------------------------------------------------
// scheme, shape, scale count, global, table shape, data count, then scales, table, data.

QuantCase decode_quant(std::span<const std::uint8_t> data) {
  Producer p(data);
  QuantCase c;
  c.scheme = decode_scheme(p);
  c.shape = decode_shape(p);
  const std::size_t scales = decode_count(p, std::min(expected_scale_count(c.scheme.scheme, c.shape), kMaxElements),
                                          kMaxElements);
  if (p.flag()) c.global = p.value();
  const TableShape ts = decode_table_shape(p, c.scheme);
  const std::size_t n = decode_count(p, natural_elements(c.shape), kMaxElements);
  c.scales.resize(scales);
  for (float& v : c.scales) v = p.value();
  c.table = decode_table_values(p, ts);
  c.data.resize(n);
  for (float& v : c.data) v = p.value();
  return c;
}

std::vector<std::uint8_t> encode(const QuantCase& c) {
  Writer w;
  encode_scheme(w, c.scheme);
  encode_shape(w, c.shape);
  encode_count(w, c.scales.size(), std::min(expected_scale_count(c.scheme.scheme, c.shape), kMaxElements),
               kMaxElements);
  w.flag(c.global.has_value());
  if (c.global) w.value(*c.global);
  encode_table_shape(w, c.table, c.scheme);
  encode_count(w, c.data.size(), natural_elements(c.shape), kMaxElements);
  encode_values(w, c.scales);
  if (c.table) encode_values(w, *c.table);
  encode_values(w, c.data);
  return w.out;
}

bool same_case(const QuantCase& a, const QuantCase& b) {
  return same_scheme(a.scheme, b.scheme) && a.shape == b.shape && same_floats(a.scales, b.scales) &&
         same_opt_float(a.global, b.global) && same_table(a.table, b.table) && same_floats(a.data, b.data);
}

// ---- parse_bytes ---------------------------------------------------------------------------
// scheme, shape, table shape, buffer length, table, then the buffer (zero-padded to its length).

namespace {
std::size_t natural_buffer(const SchemeCase& s, std::span<const std::size_t> shape) {
  if (!validate_scheme(s.scheme).ok()) return 0;
  const Result<Layout> l = make_layout(s.scheme, shape);
  return l.ok() && l->total_bytes <= kMaxBuffer ? l->total_bytes : 0;
}
}  // namespace

ParseCase decode_parse(std::span<const std::uint8_t> data) {
  Producer p(data);
  ParseCase c;
  c.scheme = decode_scheme(p);
  c.shape = decode_shape(p);
  const TableShape ts = decode_table_shape(p, c.scheme);
  const std::size_t n = decode_count(p, natural_buffer(c.scheme, c.shape), kMaxBuffer);
  c.table = decode_table_values(p, ts);
  const std::span<const std::uint8_t> rest = p.rest();
  c.bytes.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(std::min(n, rest.size())));
  c.bytes.resize(n, 0);
  return c;
}

std::vector<std::uint8_t> encode(const ParseCase& c) {
  Writer w;
  encode_scheme(w, c.scheme);
  encode_shape(w, c.shape);
  encode_table_shape(w, c.table, c.scheme);
  encode_count(w, c.bytes.size(), natural_buffer(c.scheme, c.shape), kMaxBuffer);
  if (c.table) encode_values(w, *c.table);
  w.bytes(c.bytes);
  return w.out;
}

bool same_case(const ParseCase& a, const ParseCase& b) {
  return same_scheme(a.scheme, b.scheme) && a.shape == b.shape && same_table(a.table, b.table) && a.bytes == b.bytes;
}

// ---- dequantize ----------------------------------------------------------------------------
// scheme, shape, code count, scale count, global, table shape, snap flag, then scales, table,
// codes (int16 each). With snap set each scale is moved onto its dtype grid first, so the
// fuzzer reaches valid stored scales without guessing grid points.

DequantCase decode_dequant(std::span<const std::uint8_t> data) {
  Producer p(data);
  DequantCase c;
  c.scheme = decode_scheme(p);
  c.shape = decode_shape(p);
  const std::size_t n = decode_count(p, natural_elements(c.shape), kMaxElements);
  const std::size_t scales = decode_count(p, std::min(expected_scale_count(c.scheme.scheme, c.shape), kMaxElements),
                                          kMaxElements);
  if (p.flag()) c.global = p.value();
  const TableShape ts = decode_table_shape(p, c.scheme);
  const bool snap = p.flag();
  c.scales.resize(scales);
  for (float& v : c.scales) {
    v = p.value();
    if (snap && !std::isnan(v)) {
      const Result<float> r = round_up_scale(std::fabs(v), c.scheme.scheme.scale_dtype());
      if (r.ok()) v = r.value();
    }
  }
  c.table = decode_table_values(p, ts);
  c.codes.resize(n);
  for (std::int32_t& code : c.codes) code = static_cast<std::int16_t>(p.raw(2));
  return c;
}

std::vector<std::uint8_t> encode(const DequantCase& c) {
  Writer w;
  encode_scheme(w, c.scheme);
  encode_shape(w, c.shape);
  encode_count(w, c.codes.size(), natural_elements(c.shape), kMaxElements);
  encode_count(w, c.scales.size(), std::min(expected_scale_count(c.scheme.scheme, c.shape), kMaxElements),
               kMaxElements);
  w.flag(c.global.has_value());
  if (c.global) w.value(*c.global);
  encode_table_shape(w, c.table, c.scheme);
  w.flag(false);  // scales are written exactly as they are
  encode_values(w, c.scales);
  if (c.table) encode_values(w, *c.table);
  for (std::int32_t code : c.codes) w.raw(static_cast<std::uint16_t>(code), 2);
  return w.out;
}

bool same_case(const DequantCase& a, const DequantCase& b) {
  return same_scheme(a.scheme, b.scheme) && a.shape == b.shape && a.codes == b.codes &&
         same_floats(a.scales, b.scales) && same_opt_float(a.global, b.global) && same_table(a.table, b.table);
}

// ---- calibrate -----------------------------------------------------------------------------
// scheme, shape, method, data count, then data.

CalibCase decode_calib(std::span<const std::uint8_t> data) {
  Producer p(data);
  CalibCase c;
  c.scheme = decode_scheme(p);
  c.shape = decode_shape(p);
  c.method = p.flag() ? Calibration::absmean : Calibration::minmax;
  const std::size_t n = decode_count(p, natural_elements(c.shape), kMaxElements);
  c.data.resize(n);
  for (float& v : c.data) v = p.value();
  return c;
}

std::vector<std::uint8_t> encode(const CalibCase& c) {
  Writer w;
  encode_scheme(w, c.scheme);
  encode_shape(w, c.shape);
  w.flag(c.method == Calibration::absmean);
  encode_count(w, c.data.size(), natural_elements(c.shape), kMaxElements);
  encode_values(w, c.data);
  return w.out;
}

bool same_case(const CalibCase& a, const CalibCase& b) {
  return same_scheme(a.scheme, b.scheme) && a.shape == b.shape && a.method == b.method &&
         same_floats(a.data, b.data);
}

// ---- target_bits ---------------------------------------------------------------------------
// the pick byte, the argument (8 bytes), then a scheme_qparams case.

TargetCase decode_target(std::span<const std::uint8_t> data) {
  Producer p(data);
  TargetCase c;
  c.pick = static_cast<TargetPick>(p.raw(1) % 4);
  c.arg = p.raw(8);
  c.quant = decode_quant(p.rest());
  return c;
}

std::vector<std::uint8_t> encode(const TargetCase& c) {
  Writer w;
  w.raw(static_cast<std::uint64_t>(c.pick), 1);
  w.raw(c.arg, 8);
  w.bytes(encode(c.quant));
  return w.out;
}

bool same_case(const TargetCase& a, const TargetCase& b) {
  return a.pick == b.pick && a.arg == b.arg && same_case(a.quant, b.quant);
}

std::string describe_pick(const TargetCase& c) {
  char buf[96];
  switch (c.pick) {
    case TargetPick::best: return "0 (the best supported target)";
    case TargetPick::compiled:
      std::snprintf(buf, sizeof buf, "compiled target %llu (mod their count)", static_cast<unsigned long long>(c.arg));
      return buf;
    case TargetPick::bit:
      std::snprintf(buf, sizeof buf, "1 << %llu", static_cast<unsigned long long>(c.arg % 64));
      return buf;
    case TargetPick::raw: break;
  }
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(c.arg));
  return buf;
}

// ---- minifloat -----------------------------------------------------------------------------

std::vector<float> decode_minifloat_values(std::span<const std::uint8_t> data) {
  Producer p(data);
  std::vector<float> xs;
  while (p.remaining() > 0 && xs.size() < kMaxMinifloatValues) xs.push_back(p.value());
  return xs;
}

std::vector<std::uint8_t> encode_minifloat_values(std::span<const float> xs) {
  Writer w;
  encode_values(w, xs);
  return w.out;
}

// ---- descriptions --------------------------------------------------------------------------

std::string describe_scheme(const SchemeCase& s) {
  std::string out;
  if (s.text) {
    out = "text '" + *s.text + "'";
    if (s.text_error) return out + " -> " + std::string(to_string(s.text_error->kind)) + ": " + s.text_error->message;
    out += " -> ";
  }
  out += print_scheme(s.scheme);
  if (s.scheme.block && s.scheme.block->dims.empty()) out += "  (block with no dims: not expressible as text)";
  const Status v = validate_scheme(s.scheme);
  out += v.ok() ? "  [valid" : "  [" + std::string(to_string(v.kind()));
  out += s.scheme.two_level() ? ", two-level]" : "]";
  return out;
}

std::string describe_shape(std::span<const std::size_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += "]";
  const auto n = element_count(shape);
  out += n ? " (" + std::to_string(*n) + " elements)" : " (element count overflows)";
  return out;
}

std::string describe_floats(std::span<const float> xs, std::size_t limit) {
  std::string out = "(" + std::to_string(xs.size()) + ")";
  char buf[80];
  for (std::size_t i = 0; i < xs.size() && i < limit; ++i) {
    std::snprintf(buf, sizeof buf, "\n    [%zu] %a (0x%08x)", i, static_cast<double>(xs[i]),
                  static_cast<unsigned>(std::bit_cast<std::uint32_t>(xs[i])));
    out += buf;
  }
  if (xs.size() > limit) out += "\n    ...";
  return out;
}

}  // namespace qconform::fuzz
