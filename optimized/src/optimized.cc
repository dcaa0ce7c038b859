// qconform::optimized: per-target kernels compiled for every attainable x86-64 target, and the
// wrappers that validate, pick the target and call them.
//
// Validation: each wrapper runs the same checks as the reference, in a form that is cheap on
// large tensors (no per-scale environment guard, NaN found inside the kernels). The checks only
// need to be sound: whenever one fails, or a kernel reports NaN input or a non-canonical code,
// the call is handed to the reference, whose result (its error, with its kind and message) is
// returned. So errors agree by construction and the fast path never decides an error itself.
//
// Target selection: HWY_EXPORT builds one table of function pointers per kernel, indexed the way
// hwy::ChosenTarget::GetIndex indexes it. Instead of HWY_DYNAMIC_DISPATCH (which reads the one
// process-wide chosen target), `pick` computes that index from the requested target bit, so any
// compiled and supported target can be run from any thread without global mutable state.

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quantize-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quantize-inl.h"

#if HWY_ONCE

#include "fp_guard.h"
#include "kernels.h"
#include "qconform/optimized.h"

namespace qconform::optimized {

HWY_EXPORT(QuantizeRows);
HWY_EXPORT(DequantizeRows);
HWY_EXPORT(CalibrateQuantizeRows);
HWY_EXPORT(AbsMaxRows);
HWY_EXPORT(Scales);
HWY_EXPORT(PackRows);
HWY_EXPORT(UnpackRows);
HWY_EXPORT(LookupQuantizeRows);
HWY_EXPORT(LookupDequantizeRows);
HWY_EXPORT(Ceiling4to1);
HWY_EXPORT(Ceiling1to4);
HWY_EXPORT(TargetOfThisCode);

namespace {

using detail::CodeKind;
using detail::Packing;
using detail::RowGeometry;

// ------------------------------------------------------------------ targets

// hwy::SupportedTargets runs CPUID on every call, which a hypervisor traps (tens of microseconds):
// ask once per process.
std::int64_t cpu_targets() {
  static const std::int64_t t = hwy::SupportedTargets();
  return t;
}

// Targets compiled in: foreach_target.h's (HWY_TARGETS, whose fallback is SCALAR: CMake defines
// HWY_BROKEN_EMU128=1 for this file) and EMU128 from its own translation unit (emu128.cc), when the
// build has it.
#ifndef QCONFORM_EMU128_UNIT
#define QCONFORM_EMU128_UNIT 0
#endif
static_assert((HWY_TARGETS & HWY_EMU128) == 0, "EMU128 comes from emu128.cc, never from foreach_target.h here");
constexpr std::int64_t kCompiled = HWY_TARGETS | (QCONFORM_EMU128_UNIT ? HWY_EMU128 : 0);

bool compiled(std::int64_t bits) { return bits != 0 && std::has_single_bit(static_cast<std::uint64_t>(bits)) && (bits & kCompiled) != 0; }
bool supported(std::int64_t bits) { return compiled(bits) && (cpu_targets() & bits) != 0; }

// The target a call runs on: target 0 is the best supported one; any other value must be a target
// compiled in that this CPU supports, else 0 (the call then returns target_error, never runs code
// the CPU may lack).
std::int64_t resolve(std::int64_t target) {
  if (target == 0) return best_target();
  return supported(target) ? target : 0;
}

Error target_error(std::int64_t target) {
  char text[128];
  std::snprintf(text, sizeof text, "optimized target 0x%llx is %s (targets() lists those that run here)",
                static_cast<unsigned long long>(target), compiled(target) ? "not supported by this CPU" : "not compiled in");
  return Error{ErrorKind::implementation_fault, text};
}

// The HWY_EXPORT table entry of `target`, as hwy::ChosenTarget::GetIndex computes it for a mask
// holding that target alone: the fallback, SCALAR, is the last entry.
template <class F, std::size_t K>
F pick(F const (&table)[K], std::int64_t target) {
  if constexpr (K == 1) {
    (void)target;
    return table[0];
  } else {
    const std::size_t index =
        target == HWY_SCALAR
            ? static_cast<std::size_t>(HWY_MAX_DYNAMIC_TARGETS + 1)
            : hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<std::uint64_t>(HWY_CHOSEN_TARGET_SHIFT(target)));
    return table[index];  // resolve() passed only compiled targets, whose entries are filled
  }
}

// EMU128 from its own unit, through kEmu128Kernels; every other target through the HWY_EXPORT table.
#if QCONFORM_EMU128_UNIT
#define QCONFORM_CALL(FUNC, target) \
  (*((target) == HWY_EMU128 ? detail::kEmu128Kernels.FUNC : pick(HWY_DISPATCH_TABLE(FUNC), (target))))
#else
#define QCONFORM_CALL(FUNC, target) (*pick(HWY_DISPATCH_TABLE(FUNC), (target)))
#endif

// ------------------------------------------------------------------ layouts

RowGeometry geometry(const Layout& l) {
  RowGeometry g;
  if (l.rank == 0) {
    g.rows = 1;
    return g;
  }
  g.n = l.shape[l.rank - 1];
  g.rows = g.n == 0 ? 0 : l.elements / g.n;
  g.outer_rank = l.rank - 1;
  for (std::size_t d = 0; d < g.outer_rank; ++d) g.shape[d] = l.shape[d];
  if (l.block.empty()) {
    g.b = std::max<std::size_t>(g.n, 1);
    for (std::size_t d = 0; d < g.outer_rank; ++d) g.block[d] = 1;  // gstride 0: one scale
  } else {
    g.b = l.block[l.rank - 1];
    std::size_t stride = l.grid[l.rank - 1];
    for (std::size_t d = g.outer_rank; d-- > 0;) {
      g.block[d] = l.block[d];
      g.gstride[d] = stride;
      stride *= l.grid[d];
    }
  }
  return g;
}

// The row layout when storage runs along the last axis (SPEC §6); nullopt for packing along
// another axis, which goes through the reference's pack/unpack.
std::optional<Packing> row_packing(const Layout& l) {
  Packing p;
  p.bits = l.bits;
  const std::size_t n = l.rank == 0 ? 1 : l.shape[l.rank - 1];
  if (l.per_unit == 1) {
    p.per_byte = 1;
    p.row_bytes = n * l.unit_bytes;
    return p;
  }
  if (l.rank > 0 && l.packed_axis != l.rank - 1) return std::nullopt;
  p.per_byte = 8 / l.bits;
  p.row_bytes = (n / l.per_unit + (n % l.per_unit != 0)) * l.unit_bytes;
  return p;
}

CodeKind code_kind(const Scheme& s) {
  if (s.mode == Mode::lookup) return CodeKind::index;
  return info(s.value).minifloat ? CodeKind::minifloat : CodeKind::integer;
}

// The job of PackRows (codes to storage) and UnpackRows (storage to codes) for `s` in rows of
// `geo`; each kernel reads one of the two buffers and writes the other.
detail::PackJob pack_job(const Scheme& s, const RowGeometry& geo, const Packing& pk, const std::int32_t* codes,
                         const std::uint8_t* storage) {
  detail::PackJob job;
  job.geo = geo;
  job.kind = code_kind(s);
  job.value = s.value;
  job.codes = const_cast<std::int32_t*>(codes);
  job.storage = const_cast<std::uint8_t*>(storage);
  job.pack = pk;
  return job;
}

// The job of LookupDequantizeRows: out = eff * table[code], per element (SPEC §5).
detail::LookupJob lookup_dequantize_job(const Scheme& s, const RowGeometry& geo, const float* eff,
                                        std::span<const float> table, const std::int32_t* codes, float* out) {
  detail::LookupJob job;
  job.geo = geo;
  job.eff = eff;
  job.bits = info(s.value).bits;
  job.table = table.data();
  job.codes = const_cast<std::int32_t*>(codes);  // read only
  job.out = out;
  return job;
}

// ------------------------------------------------------------------ checks (SPEC §3)

bool bad_scale(float s) { return std::isnan(s) || std::isinf(s) || std::signbit(s); }
float unsign_zero(float s) { return s == 0.0f ? 0.0f : s; }

bool table_ok(const Scheme& s, Table table) {
  if (s.mode == Mode::symmetric) return !table.has_value();
  if (!table || table->size() != (std::size_t{1} << info(s.value).bits)) return false;
  return std::none_of(table->begin(), table->end(), [](float v) { return std::isnan(v); });
}

bool global_ok(std::optional<float> global, std::span<const float> stored) {
  if (!global) return true;
  if (bad_scale(*global)) return false;
  return std::none_of(stored.begin(), stored.end(), [g = *global](float s) { return std::isinf(g * s); });
}

float effective(float stored, std::optional<float> global) {
  const float eff = global ? *global * stored : stored;
  return eff == 0.0f ? 0.1f : eff;  // burn's valid_scale
}

// Whether the kernels compute the effective scales of each chunk themselves (ChunkScales) instead
// of reading a vector of them made beforehand: in symmetric mode, stored along the rows (where the
// row kernels run), when every row has blocks of its own (no block spans
// two rows, so each scale is computed once) and at least 64 of them (a call per chunk then costs
// little). No O(blocks) vector is then allocated, written and read again (16 MiB each way for
// nvfp4 at 256 MiB), and every scale is still checked: every block holds an element.
bool scales_per_chunk(const Scheme& s, const Layout& l) {
  const RowGeometry g = geometry(l);
  if (s.mode != Mode::symmetric || !row_packing(l)) return false;  // the row kernels' cases only
  if (l.elements == 0 || l.rank == 0 || l.block.empty() || g.n / g.b < 64) return false;
  for (std::size_t d = 0; d < g.outer_rank; ++d) {
    if (g.block[d] != 1) return false;
  }
  return true;
}

// The raw (quantize) or encoded (parse) scales of a layout, with the global, as the kernels'
// per-chunk scale source.
detail::ScaleJob scale_source(const Scheme& s, std::optional<float> global) {
  detail::ScaleJob job;
  job.dtype = s.scale_dtype();
  job.has_global = global.has_value();
  job.global = global.value_or(0.0f);
  return job;
}

// The validation, layout, row geometry and packing of the last (scheme, shape, length) a thread
// asked for, one slot with a data length (quantize) and one without (bytes to parse): all are
// functions of those three alone, so a repeated call (every layer of one shape, every step of a
// loop) skips them, some 140 ns of a 4096-element quantize on the Zen 4 of session 27 (a quarter
// of the call). Only layouts that passed are kept; every per-call input (scales, global, table,
// buffer sizes, the data) is still checked on every call. A plan is used by the call that asked
// for it and by nothing it calls (the reference fallbacks use none), so a later call replacing it
// never pulls it from under a user.
struct LayoutPlan {
  bool valid = false;
  Scheme scheme;
  Dims shape;
  std::optional<std::size_t> len;
  Layout layout;
  std::optional<Packing> pk;  // row_packing(layout)
  RowGeometry geo;            // geometry(layout)
  bool per_chunk = false;     // scales_per_chunk(scheme, layout)
};

// validate_scheme and make_layout(s, shape, len), through this thread's plan; nullptr when either fails.
const LayoutPlan* layout_plan(const Scheme& s, std::span<const std::size_t> shape, std::optional<std::size_t> len) {
  thread_local LayoutPlan plans[2];
  LayoutPlan& p = plans[len.has_value() ? 0 : 1];
  if (p.valid && p.len == len && p.shape == shape && p.scheme == s) return &p;
  p.valid = false;
  if (!validate_scheme(s).ok() || !make_layout_into(s, shape, len, p.layout).ok()) return nullptr;
  p.scheme = s;
  p.shape.assign(shape);  // make_layout checked the rank (at most kMaxRank)
  p.len = len;
  p.pk = row_packing(p.layout);
  p.geo = geometry(p.layout);
  p.per_chunk = scales_per_chunk(s, p.layout);
  p.valid = true;
  return &p;
}

// Floats with room for a few in place: a per-tensor scheme's one effective scale takes no heap
// allocation (a malloc and a free per call were some 6 % of a 16 KiB per-tensor quantize_into).
class SmallFloats {
 public:
  explicit SmallFloats(std::size_t n) : n_(n) {
    if (n > kInline) heap_.resize(n);
  }
  [[nodiscard]] float* data() { return n_ > kInline ? heap_.data() : local_; }
  [[nodiscard]] const float* data() const { return n_ > kInline ? heap_.data() : local_; }
  [[nodiscard]] float operator[](std::size_t k) const { return data()[k]; }

 private:
  static constexpr std::size_t kInline = 8;
  std::size_t n_;
  float local_[kInline] = {};
  std::vector<float> heap_;
};

struct Prepared {
  const LayoutPlan* plan = nullptr;
  std::vector<float> stored;
  SmallFloats eff;
  std::optional<float> global;
  bool per_chunk = false;  // scales_per_chunk: eff and stored are empty, the scales unchecked
};

// validate_quantize's checks but the NaN scan, which the kernels do; nullopt when any fails. When
// `out` has the serialized size, the stored scales are encoded into it on the way, and not kept
// as floats (`stored` stays empty: O(blocks) less to allocate and write). With `per_chunk_ok`,
// a case that scales_per_chunk accepts leaves the scales to the kernel.
std::optional<Prepared> prepare_quantize(const Scheme& s, std::span<const std::size_t> shape, std::size_t data_len,
                                         std::span<const float> scales, std::optional<float> global, Table table,
                                         std::int64_t tgt, std::span<std::uint8_t> out = {}, bool per_chunk_ok = false) {
  if (s.two_level() != global.has_value() || !table_ok(s, table)) return std::nullopt;
  const LayoutPlan* lp = layout_plan(s, shape, data_len);
  if (lp == nullptr || scales.size() != lp->layout.scale_count) return std::nullopt;
  const bool encode = out.size() == lp->layout.total_bytes;
  const bool per_chunk = per_chunk_ok && encode && lp->per_chunk;
  const std::size_t keep = per_chunk ? 0 : scales.size();
  Prepared p{lp, std::vector<float>(encode ? 0 : keep), SmallFloats(keep), std::nullopt, per_chunk};
  if (global) {
    p.global = unsign_zero(*global);
    if (bad_scale(*p.global)) return std::nullopt;
  }
  if (per_chunk) return p;
  detail::ScaleJob job = scale_source(s, p.global);
  job.count = scales.size();
  job.raw = scales.data();
  job.stored = encode ? nullptr : p.stored.data();
  job.eff = p.eff.data();
  if (encode) job.out_encoded = out.data() + lp->layout.storage_bytes;
  if (!QCONFORM_CALL(Scales, tgt)(job)) return std::nullopt;
  return p;
}

// validate_tensor's checks (dequantize, serialize) but the codes, which the kernels check.
std::optional<Layout> prepare_tensor(const QTensor& t, bool with_table, Table table) {
  if (!validate_scheme(t.scheme).ok() || t.scheme.two_level() != t.global.has_value()) return std::nullopt;
  Result<Layout> l = make_layout(t.scheme, t.shape, t.codes.size());
  if (!l.ok() || t.scales.size() != l->scale_count) return std::nullopt;
  for (float v : t.scales) {
    if (bad_scale(v) || std::bit_cast<std::uint32_t>(detail::round_up(v, t.scheme.scale_dtype())) != std::bit_cast<std::uint32_t>(v)) {
      return std::nullopt;
    }
  }
  if (!global_ok(t.global, t.scales) || (with_table && !table_ok(t.scheme, table))) return std::nullopt;
  return std::move(l).value();
}

std::uint32_t load_le(const std::uint8_t* p, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t b = 0; b < width; ++b) v |= static_cast<std::uint32_t>(p[b]) << (8 * b);
  return v;
}

// parse's checks up to the codes: exact length, stored scales, global, table. Fills t's global,
// its scales (unless `per_chunk` or `stored` is false) and the effective scales (unless
// `per_chunk`); not its scheme and shape, which only parse needs. With
// `per_chunk` set on entry, a case that scales_per_chunk accepts leaves the scales to the kernel
// (and keeps `per_chunk` set); otherwise it is cleared.
const LayoutPlan* prepare_bytes(const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> bytes,
                                Table table, QTensor& t, std::vector<float>& eff, std::int64_t tgt, bool& per_chunk,
                                bool stored = true) {
  if (!table_ok(s, table)) return nullptr;
  const LayoutPlan* lp = layout_plan(s, shape, std::nullopt);
  if (lp == nullptr || bytes.size() != lp->layout.total_bytes) return nullptr;
  const Layout& l = lp->layout;
  const std::size_t w = scale_bytes(s.scale_dtype());
  if (l.global_bytes) {
    const float g = std::bit_cast<float>(load_le(bytes.data() + l.storage_bytes + l.scale_count * w, 4));
    if (bad_scale(g)) return nullptr;
    t.global = g;
  }
  per_chunk = per_chunk && lp->per_chunk;
  if (per_chunk) return lp;
  if (stored) t.scales.resize(l.scale_count);
  eff.resize(l.scale_count);
  detail::ScaleJob job = scale_source(s, t.global);
  job.count = l.scale_count;
  job.encoded = bytes.data() + l.storage_bytes;
  job.stored = stored ? t.scales.data() : nullptr;
  job.eff = eff.data();
  if (!QCONFORM_CALL(Scales, tgt)(job)) return nullptr;
  return lp;
}

// Stored scales (unless `scales_done`) and global after the value storage (SPEC §7).
void write_scales(const Scheme& s, const Layout& l, std::span<const float> stored, std::optional<float> global,
                  std::span<std::uint8_t> out, bool scales_done = false) {
  const ScaleDtype dt = s.scale_dtype();
  const std::size_t w = scale_bytes(dt);
  std::uint8_t* p = out.data() + l.storage_bytes;
  if (!scales_done) {
    for (std::size_t k = 0; k < stored.size(); ++k) detail::store_le(p + k * w, encode_scale(stored[k], dt), w);
  }
  if (global) detail::store_le(p + l.scale_count * w, std::bit_cast<std::uint32_t>(*global), 4);
}

// Codes that are known canonical to the value storage. False when the kernel saw a bad code.
bool write_storage(const Scheme& s, const Layout& l, std::span<const std::int32_t> codes, std::span<std::uint8_t> out,
                   std::int64_t tgt) {
  if (const std::optional<Packing> p = row_packing(l)) {
    return QCONFORM_CALL(PackRows, tgt)(pack_job(s, geometry(l), *p, codes.data(), out.data()));
  }
  Result<std::vector<std::uint8_t>> packed = qconform::pack(s, l.shape, codes);
  if (!packed.ok()) return false;
  std::copy(packed->begin(), packed->end(), out.begin());
  return true;
}

// ------------------------------------------------------------------ lookup mode (SPEC §5)

// The reference's nearest entry (exact distances, ties to the lower index) as thresholds on y, so
// that a kernel finds a code by a binary search instead of comparing y with every entry. For a
// finite y only finite entries can be nearest (an infinite one is farther than any finite one;
// a table of infinite entries alone gives index 0), and equal entries (-0 and +0 among them) are
// equally near every y, so the lowest index among them is the one chosen. With the distinct finite
// values v_0 < ... < v_(m-1) and rep_j the lowest index holding v_j, the choice between two
// neighbours v_j and v_(j+1) turns from v_j to v_(j+1) as y crosses their midpoint (at the
// midpoint itself: the lower of the two indices), and midpoints increase with j. So the code of a
// finite y is rep_K with K the number of thresholds T_j <= y, T_j the least float y at which the
// pair's choice is v_(j+1). Each T_j is found by asking the reference itself (quantize_value with
// the two-entry table of the pair, in index order) near the midpoint, then bisecting: the
// thresholds are the reference's decisions, not a second implementation of its comparison. ±Inf
// y take the reference's codes for them (the largest or smallest entry, Inf included).
struct LookupTables {
  std::vector<float> table;            // the table they were built for, compared by bits
  std::vector<float> thresholds;       // 2^bits - 1, ascending, +Inf after the last T_j
  std::vector<std::int32_t> index;     // 2^bits: rep_K for K < m, then rep_(m-1) (or 0)
  std::int32_t pos_inf = 0, neg_inf = 0;
  bool identity = false;               // index[K] == K (a table of distinct finite values, ascending)
};

// Floats in the order of their values, -0 and +0 one key.
std::int64_t float_key(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  return (u >> 31) != 0 ? -static_cast<std::int64_t>(u & 0x7FFFFFFFu) : static_cast<std::int64_t>(u);
}
float key_float(std::int64_t k) {
  return k >= 0 ? std::bit_cast<float>(static_cast<std::uint32_t>(k)) : std::bit_cast<float>(0x80000000u | static_cast<std::uint32_t>(-k));
}

// The least float y > a (finite, a < b) at which the reference picks b out of {a, b}.
float pair_threshold(float a, std::int32_t ia, float b, std::int32_t ib) {
  const float pair[2] = {ia < ib ? a : b, ia < ib ? b : a};
  const std::int32_t pick_b = ia < ib ? 1 : 0;
  auto picks_b = [&](std::int64_t k) {
    return quantize_value(key_float(k), Value::q8s, Mode::lookup, std::span<const float>(pair, 2)) == pick_b;
  };
  std::int64_t lo = float_key(a), hi = float_key(b);  // picks a at lo, b at hi
  // Start next to the midpoint (exact but for the final rounding to float), then widen.
  const std::int64_t guess =
      std::clamp(float_key(static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5)), lo + 1, hi);
  if (picks_b(guess)) {
    hi = guess;
    for (std::int64_t step = 1; hi - step > lo; step *= 2) {
      if (!picks_b(hi - step)) {
        lo = hi - step;
        break;
      }
      hi -= step;
    }
  } else {
    lo = guess;
    for (std::int64_t step = 1; lo + step < hi; step *= 2) {
      if (picks_b(lo + step)) {
        hi = lo + step;
        break;
      }
      lo += step;
    }
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (picks_b(mid) ? hi : lo) = mid;
  }
  return key_float(hi);
}

// The thresholds of `table` (validated: 2^bits entries, no NaN), kept per thread for the last
// table asked for (a model quantizes many tensors with one table). The caller uses the result
// before its next call, so a later call replacing it never changes it under a user.
const LookupTables& lookup_tables(std::span<const float> table) {
  thread_local LookupTables lt;
  if (lt.table.size() == table.size() && std::memcmp(lt.table.data(), table.data(), table.size_bytes()) == 0) return lt;
  lt.table.assign(table.begin(), table.end());
  std::vector<std::pair<float, std::int32_t>> v;  // (value, lowest index holding it), ascending
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (std::isfinite(table[i])) v.emplace_back(table[i], static_cast<std::int32_t>(i));
  }
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  v.erase(std::unique(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first == y.first; }), v.end());
  lt.thresholds.assign(table.size() - 1, std::numeric_limits<float>::infinity());
  lt.index.assign(table.size(), v.empty() ? 0 : v.back().second);
  for (std::size_t j = 0; j < v.size(); ++j) {
    lt.index[j] = v[j].second;
    if (j + 1 < v.size()) lt.thresholds[j] = pair_threshold(v[j].first, v[j].second, v[j + 1].first, v[j + 1].second);
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  lt.identity = true;
  for (std::size_t k = 0; k < lt.index.size(); ++k) lt.identity = lt.identity && lt.index[k] == static_cast<std::int32_t>(k);
  lt.pos_inf = quantize_value(kInf, Value::q8s, Mode::lookup, table);
  lt.neg_inf = quantize_value(-kInf, Value::q8s, Mode::lookup, table);
  return lt;
}

// Codes of a validated quantize.
bool quantize_codes(const Scheme& s, const Prepared& p, std::span<const float> data, Table table, std::int32_t* codes,
                    std::int64_t tgt) {
  const RowGeometry& g = p.plan->geo;
  if (s.mode == Mode::lookup) {
    const LookupTables& lt = lookup_tables(*table);
    detail::LookupJob job;
    job.geo = g;
    job.eff = p.eff.data();
    job.bits = info(s.value).bits;
    job.x = data.data();
    job.thresholds = lt.thresholds.data();
    job.index = lt.index.data();
    job.index_is_identity = lt.identity;
    job.pos_inf = lt.pos_inf;
    job.neg_inf = lt.neg_inf;
    job.codes = codes;
    return QCONFORM_CALL(LookupQuantizeRows, tgt)(job);
  }
  detail::QuantizeJob job;
  job.x = data.data();
  job.geo = g;
  job.eff = p.eff.data();
  job.value = s.value;
  job.codes = codes;
  return QCONFORM_CALL(QuantizeRows, tgt)(job);
}

Status size_error(std::size_t have, std::size_t want, std::string_view what) {
  return Error{have < want ? ErrorKind::truncated_buffer : ErrorKind::trailing_bytes,
               std::string(what) + " of " + std::to_string(have) + " bytes, " + std::to_string(want) + " expected"};
}

Status status_of(const Result<QTensor>& r) { return r.ok() ? Status{} : Status{r.error()}; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// ------------------------------------------------------------------ targets

std::vector<Target> targets() {
  std::vector<Target> out;
  for (std::int64_t rest = kCompiled; rest != 0; rest &= rest - 1) {
    const std::int64_t bit = rest & -rest;
    out.push_back({bit, target_name(bit), supported(bit)});
  }
  return out;
}

std::optional<std::int64_t> find_target(std::string_view name) {
  const std::string want = lower(name);
  for (const Target& t : targets()) {
    if (t.name == want && t.supported) return t.bits;
  }
  return std::nullopt;
}

std::int64_t best_target() {
  const std::int64_t avail = cpu_targets() & kCompiled;
  return avail & -avail;  // lower bits are better targets
}

std::string target_name(std::int64_t bits) { return compiled(bits) ? lower(hwy::TargetName(bits)) : "unknown"; }

std::int64_t dispatched_target(std::int64_t target) {
  const std::int64_t tgt = resolve(target);
  return tgt == 0 ? 0 : QCONFORM_CALL(TargetOfThisCode, tgt)();
}

// ------------------------------------------------------------------ operations

Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                         std::span<const float> scales, std::optional<float> global, Table table, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  std::optional<Prepared> p = prepare_quantize(s, shape, data.size(), scales, global, table, tgt);
  if (!p) return qconform::quantize(s, shape, data, scales, global, table);
  QTensor t;
  t.scheme = s;
  t.shape.assign(shape.begin(), shape.end());
  t.codes.resize(data.size());
  if (!quantize_codes(s, *p, data, table, t.codes.data(), tgt)) return qconform::quantize(s, shape, data, scales, global, table);
  t.scales = std::move(p->stored);
  t.global = p->global;
  return t;
}

Status quantize_into(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                     std::span<const float> scales, std::optional<float> global, std::span<std::uint8_t> out, Table table,
                     std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  std::optional<Prepared> p = prepare_quantize(s, shape, data.size(), scales, global, table, tgt, out, /*per_chunk_ok=*/true);
  if (!p) return status_of(qconform::quantize(s, shape, data, scales, global, table));
  const Layout& l = p->plan->layout;
  if (out.size() != l.total_bytes) {
    // The size of `out` is reported after every check of the inputs (nan-input included).
    if (Status st = qconform::validate_quantize(s, shape, data, scales, global, table); !st.ok()) return st;
    return size_error(out.size(), l.total_bytes, "output buffer");
  }
  const std::optional<Packing>& pk = p->plan->pk;
  if (pk && s.mode == Mode::symmetric) {
    detail::QuantizeJob job;
    job.x = data.data();
    job.geo = p->plan->geo;
    job.eff = p->eff.data();
    job.value = s.value;
    job.storage = out.data();
    job.pack = *pk;
    detail::ScaleJob src = scale_source(s, p->global);
    if (p->per_chunk) {
      src.raw = scales.data();
      src.out_encoded = out.data() + l.storage_bytes;
      job.scale_src = &src;
    }
    if (!QCONFORM_CALL(QuantizeRows, tgt)(job)) return status_of(qconform::quantize(s, shape, data, scales, global, table));
  } else {
    std::vector<std::int32_t> codes(data.size());
    if (!quantize_codes(s, *p, data, table, codes.data(), tgt) || !write_storage(s, l, codes, out, tgt)) {
      return status_of(qconform::quantize(s, shape, data, scales, global, table));
    }
  }
  write_scales(s, l, p->stored, p->global, out, /*scales_done=*/true);
  return {};
}

namespace {

// The one-pass calibrate+quantize plan of the last (scheme, shape, length) a thread ran it on: its
// validation, layout and row geometry are a function of those three alone, so a repeated call
// (every layer of one shape, every step of a loop) skips them. The validation ran, and passed, on
// the first call; nothing else is cached. Only plans that passed are stored.
struct OnePassPlan {
  bool valid = false;
  Scheme scheme;
  Dims shape;
  std::size_t len = 0;
  std::size_t total_bytes = 0;
  std::size_t storage_bytes = 0;
  detail::CalibrateQuantizeJob job;  // everything but the three pointers
};

// Builds the plan when the one pass applies: one-level per-block minmax whose block lies inside
// one row and divides it, on a layout packed along the last axis. Validation, layout, packing and
// geometry come from layout_plan (the same slot quantize_into uses).
bool make_one_pass_plan(const Scheme& s, std::span<const std::size_t> shape, std::size_t len, OnePassPlan& plan) {
  plan.valid = false;
  if (!s.block || s.tensor || s.mode != Mode::symmetric || s.block->dims.size() != 1) return false;
  const LayoutPlan* lp = layout_plan(s, shape, len);
  if (lp == nullptr || lp->layout.rank < 1 || !lp->pk || lp->geo.n % lp->geo.b != 0) return false;
  plan.scheme = s;
  plan.shape.assign(shape);
  plan.len = len;
  plan.total_bytes = lp->layout.total_bytes;
  plan.storage_bytes = lp->layout.storage_bytes;
  plan.job = detail::CalibrateQuantizeJob{};
  plan.job.geo = lp->geo;
  plan.job.value = s.value;
  plan.job.dtype = s.scale_dtype();
  plan.job.pack = *lp->pk;
  plan.valid = true;
  return true;
}

}  // namespace

Status calibrate_quantize_into(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                               Calibration method, std::span<std::uint8_t> out, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  if (method == Calibration::minmax) {
    thread_local OnePassPlan plan;
    const bool hit = plan.valid && plan.len == data.size() && plan.shape == shape && plan.scheme == s;
    if (hit || make_one_pass_plan(s, shape, data.size(), plan)) {
      if (out.size() == plan.total_bytes) {
        // The plan's own job (this thread's), not a copy: its row geometry is some 250 bytes.
        detail::CalibrateQuantizeJob& job = plan.job;
        job.x = data.data();
        job.storage = out.data();
        job.scales = out.data() + plan.storage_bytes;
        if (QCONFORM_CALL(CalibrateQuantizeRows, tgt)(job)) return {};
      }
    }
  }
  Result<QParams> params = calibrate(s, shape, data, method, tgt);
  if (!params.ok()) return params.error();
  return quantize_into(s, shape, data, params->scales, params->global, out, std::nullopt, tgt);
}

Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape, std::span<const float> data,
                          Calibration method, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  auto reference = [&] { return qconform::calibrate(s, shape, data, method); };
  // absmean's exactly rounded mean is the reference's own (SPEC §8 allows no other rounding).
  if (method == Calibration::absmean || !validate_scheme(s).ok()) return reference();
  Result<Layout> lr = make_layout(s, shape, data.size());
  if (!lr.ok()) return reference();
  const Layout& l = *lr;
  for (std::size_t i = 0; i < l.rank && s.block; ++i) {
    if (l.shape[i] % l.block[i] != 0) return reference();
  }
  std::vector<std::uint32_t> amax(l.scale_count, 0);
  detail::AbsMaxJob job;
  job.x = data.data();
  job.geo = geometry(l);
  job.amax = amax.data();
  QCONFORM_CALL(AbsMaxRows, tgt)(job);
  const ValueInfo& vi = info(s.value);
  const float range = vi.hi - vi.lo;
  QParams out;
  out.scales.resize(l.scale_count);
  for (std::size_t k = 0; k < l.scale_count; ++k) {
    if (amax[k] >= 0x7F800000u) return reference();  // NaN or ±Inf: the reference orders the errors
    const float twice = 2.0f * std::bit_cast<float>(amax[k]);
    if (std::isinf(twice)) return reference();
    out.scales[k] = twice / range;
  }
  if (s.two_level()) out.global = split_two_level(out.scales, s.block->dtype);
  return out;
}

Result<std::vector<float>> dequantize(const QTensor& t, Table table, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  const std::optional<Layout> l = prepare_tensor(t, true, table);
  if (!l) return qconform::dequantize(t, table);
  std::vector<float> eff(t.scales.size());
  for (std::size_t k = 0; k < eff.size(); ++k) eff[k] = effective(t.scales[k], t.global);
  std::vector<float> out(t.codes.size());
  const RowGeometry g = geometry(*l);
  if (t.scheme.mode == Mode::lookup) {
    const detail::LookupJob job = lookup_dequantize_job(t.scheme, g, eff.data(), *table, t.codes.data(), out.data());
    if (!QCONFORM_CALL(LookupDequantizeRows, tgt)(job)) return qconform::dequantize(t, table);
    return out;
  }
  detail::DequantizeJob job;
  job.geo = g;
  job.eff = eff.data();
  job.value = t.scheme.value;
  job.codes = t.codes.data();
  job.out = out.data();
  if (!QCONFORM_CALL(DequantizeRows, tgt)(job)) return qconform::dequantize(t, table);
  return out;
}

Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                       std::span<const std::int32_t> codes, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  if (!validate_scheme(s).ok()) return qconform::pack(s, shape, codes);
  Result<Layout> l = make_layout(s, shape, codes.size());
  if (!l.ok() || !row_packing(*l)) return qconform::pack(s, shape, codes);
  std::vector<std::uint8_t> out(l->storage_bytes);
  if (!write_storage(s, *l, codes, out, tgt)) return qconform::pack(s, shape, codes);
  return out;
}

Result<std::vector<std::int32_t>> unpack(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const std::uint8_t> storage, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  if (!validate_scheme(s).ok()) return qconform::unpack(s, shape, storage);
  Result<Layout> l = make_layout(s, shape);
  if (!l.ok() || storage.size() != l->storage_bytes) return qconform::unpack(s, shape, storage);
  const std::optional<Packing> pk = row_packing(*l);
  if (!pk) return qconform::unpack(s, shape, storage);
  std::vector<std::int32_t> codes(l->elements);
  const detail::PackJob job = pack_job(s, geometry(*l), *pk, codes.data(), storage.data());
  if (!QCONFORM_CALL(UnpackRows, tgt)(job)) return qconform::unpack(s, shape, storage);
  return codes;
}

Result<std::vector<std::uint8_t>> serialize(const QTensor& t, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  const std::optional<Layout> l = prepare_tensor(t, false, std::nullopt);
  if (!l) return qconform::serialize(t);
  std::vector<std::uint8_t> out(l->total_bytes);
  if (!write_storage(t.scheme, *l, t.codes, out, tgt)) return qconform::serialize(t);
  write_scales(t.scheme, *l, t.scales, t.global, out);
  return out;
}

Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> bytes,
                      Table table, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  QTensor t;
  std::vector<float> eff;
  bool per_chunk = false;
  const LayoutPlan* lp = prepare_bytes(s, shape, bytes, table, t, eff, tgt, per_chunk);
  if (lp == nullptr || !lp->pk) return qconform::parse(s, shape, bytes, table);
  t.scheme = s;
  t.shape.assign(shape.begin(), shape.end());
  t.codes.resize(lp->layout.elements);
  const detail::PackJob job = pack_job(s, lp->geo, *lp->pk, t.codes.data(), bytes.data());
  if (!QCONFORM_CALL(UnpackRows, tgt)(job)) return qconform::parse(s, shape, bytes, table);
  return t;
}

Status dequantize_from(const Scheme& s, std::span<const std::size_t> shape, std::span<const std::uint8_t> bytes,
                       std::span<float> out, Table table, std::int64_t target) {
  detail::FpGuard guard;
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return target_error(target);
  auto composed = [&]() -> Status {
    Result<QTensor> t = parse(s, shape, bytes, table, tgt);
    if (!t.ok()) return t.error();
    Result<std::vector<float>> v = dequantize(*t, table, tgt);
    if (!v.ok()) return v.error();
    if (out.size() != v->size()) {
      return Error{ErrorKind::shape_mismatch,
                   "output of " + std::to_string(out.size()) + " floats, " + std::to_string(v->size()) + " expected"};
    }
    std::copy(v->begin(), v->end(), out.begin());
    return {};
  };
  QTensor t;
  std::vector<float> eff;
  bool per_chunk = s.mode == Mode::symmetric;
  const LayoutPlan* lp = prepare_bytes(s, shape, bytes, table, t, eff, tgt, per_chunk, /*stored=*/false);
  if (lp == nullptr || out.size() != lp->layout.elements || !lp->pk) return composed();
  if (s.mode == Mode::lookup) {
    // parse's unpack, then dequantize's kernel straight into `out` (prepare_bytes checked the
    // table, the stored scales and the global, and computed the effective scales).
    std::vector<std::int32_t> codes(lp->layout.elements);
    if (!QCONFORM_CALL(UnpackRows, tgt)(pack_job(s, lp->geo, *lp->pk, codes.data(), bytes.data()))) return composed();
    const detail::LookupJob job = lookup_dequantize_job(s, lp->geo, eff.data(), *table, codes.data(), out.data());
    if (!QCONFORM_CALL(LookupDequantizeRows, tgt)(job)) return composed();
    return {};
  }
  detail::DequantizeJob job;
  job.geo = lp->geo;
  job.eff = eff.data();
  detail::ScaleJob src = scale_source(s, t.global);
  if (per_chunk) {
    src.encoded = bytes.data() + lp->layout.storage_bytes;
    job.scale_src = &src;
  }
  job.value = s.value;
  job.storage = bytes.data();
  job.pack = *lp->pk;
  job.out = out.data();
  if (!QCONFORM_CALL(DequantizeRows, tgt)(job)) return composed();
  return {};
}

bool ceiling_4to1(std::span<const float> in, std::span<std::uint8_t> out, std::int64_t target) {
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return false;
  QCONFORM_CALL(Ceiling4to1, tgt)(in.data(), out.data(), std::min(in.size(), out.size()));
  return true;
}

bool ceiling_1to4(std::span<const std::uint8_t> in, std::span<float> out, std::int64_t target) {
  const std::int64_t tgt = resolve(target);
  if (tgt == 0) return false;
  QCONFORM_CALL(Ceiling1to4, tgt)(in.data(), out.data(), std::min(in.size(), out.size()));
  return true;
}

// ------------------------------------------------------------------ far and chunk prefetches

namespace {

// What CPUID says of the CPU's maker and family. Asked once per process (a hypervisor traps
// CPUID, as cpu_targets says).
struct CpuMaker {
  char vendor[13] = {};  // "GenuineIntel", "AuthenticAMD", ...; empty when CPUID is not there
  unsigned family = 0;   // the base family (leaf 1, EAX bits 8 to 11), plus, when that is 15, the
                         // extended family (bits 20 to 27)
};

const CpuMaker& cpu_maker() {
  static const CpuMaker maker = [] {
    CpuMaker m;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d) == 0) return m;
    std::memcpy(m.vendor, &b, 4);
    std::memcpy(m.vendor + 4, &d, 4);
    std::memcpy(m.vendor + 8, &c, 4);
    if (__get_cpuid(1, &a, &b, &c, &d) != 0) {
      const unsigned base = (a >> 8) & 0xF;
      m.family = base == 0xF ? base + ((a >> 20) & 0xFF) : base;
    }
#endif
    return m;
  }();
  return maker;
}

bool intel_cpu() { return std::strcmp(cpu_maker().vendor, "GenuineIntel") == 0; }

// AMD family 26 is Zen 5.
bool amd_zen5_or_later() { return std::strcmp(cpu_maker().vendor, "AuthenticAMD") == 0 && cpu_maker().family >= 26; }

std::uint8_t far_state(bool on) { return on ? 1 : 2; }

// g_chunk_prefetch's value for `automatic` on this CPU (kernels.h).
std::uint8_t chunk_automatic() { return amd_zen5_or_later() ? 1 : 2; }

}  // namespace

void set_far_prefetch(FarPrefetch mode) {
  const bool on = mode == FarPrefetch::on || (mode == FarPrefetch::automatic && intel_cpu());
  detail::g_far_prefetch.store(far_state(on), std::memory_order_relaxed);
}

bool far_prefetch() { return detail::FarPrefetchOn(); }

void set_chunk_prefetch(ChunkPrefetch mode) {
  const std::uint8_t m = mode == ChunkPrefetch::l1 ? 3 : mode == ChunkPrefetch::l2 ? 2 : chunk_automatic();
  detail::g_chunk_prefetch.store(m, std::memory_order_relaxed);
}

bool chunk_prefetch_l1(std::int64_t target) {
  return detail::ChunkPrefetchL1(resolve(target));
}

namespace detail {

bool DecideFarPrefetch() {
  std::uint8_t expected = 0;
  // A set_far_prefetch that came first stays.
  g_far_prefetch.compare_exchange_strong(expected, far_state(intel_cpu()), std::memory_order_relaxed);
  return g_far_prefetch.load(std::memory_order_relaxed) == 1;
}

std::uint8_t DecideChunkPrefetch() {
  std::uint8_t expected = 0;
  // A set_chunk_prefetch that came first stays.
  g_chunk_prefetch.compare_exchange_strong(expected, chunk_automatic(), std::memory_order_relaxed);
  return g_chunk_prefetch.load(std::memory_order_relaxed);
}

}  // namespace detail

}  // namespace qconform::optimized

#endif  // HWY_ONCE
