// Fuzz target scheme_qparams: any scheme and quantization parameters, every implementation.
//
// Input: the producer's QuantCase (scheme, shape, scales, optional global, optional lookup table,
// data; fuzz/producer.h). Invariants, each an abort when broken:
//  - every implementation (the reference, the optimized library on every SIMD target this CPU
//    supports) gives the same error kind or the same quantized tensor bit for bit;
//  - a valid two-level scheme without a global gives missing-global-scale whatever else is wrong
//    (SPEC §3.2; burn's panic "a two-level scheme should have a per-tensor scale", the project's
//    seed), and unparsable scheme text gives invalid-scheme;
//  - validate_quantize fails exactly when quantize does, with the same kind;
//  - a tensor that quantizes has stored scales equal to round_up_scale of its raw scales, is
//    serialized identically by every implementation to layout.total_bytes bytes (and by the
//    optimized quantize_into, with truncated-buffer / trailing-bytes one byte off), whose storage
//    part is pack(codes) and unpacks to the codes, parses back to itself (parse(serialize(t)) == t)
//    everywhere, and dequantizes identically everywhere.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check.h"
#include "impls.h"
#include "producer.h"
#include "qconform/fuzz_producer.h"

using namespace qconform;
using namespace qconform::fuzz;

namespace {

// The allocation-free path must be serialize(quantize(...)) exactly: the same error kind (input
// errors before any complaint about the buffer), the same bytes into a buffer of exactly the
// serialized length, and truncated-buffer / trailing-bytes for one byte less / more.
void check_quantize_into(const QuantCase& c, Table table, const Result<QTensor>& ref) {
  std::vector<std::uint8_t> want;
  if (ref.ok()) {
    const Result<std::vector<std::uint8_t>> ser = serialize(ref.value());
    FUZZ_CHECK(ser.ok(), "serialize of a quantized tensor failed: ", kind_text(ser));
    want = ser.value();
  }
  for (const Impl& impl : impls()) {
    if (!impl.quantize_into) continue;
    const auto run = [&](std::span<std::uint8_t> out) {
      return impl.quantize_into(c.scheme.scheme, c.shape, c.data, c.scales, c.global, out, table);
    };
    std::vector<std::uint8_t> buf(want.size() + 1, 0xA5);
    if (!ref.ok()) {
      const Status st = run(std::span<std::uint8_t>(buf).first(0));
      FUZZ_CHECK(!st.ok() && st.kind() == ref.kind(), impl.name, " quantize_into gave ", kind_text(st),
                 ", quantize gave ", kind_text(ref));
      continue;
    }
    const Status exact = run(std::span<std::uint8_t>(buf).first(want.size()));
    FUZZ_CHECK(exact.ok(), impl.name, " quantize_into failed where quantize succeeded: ", kind_text(exact));
    FUZZ_CHECK(std::equal(want.begin(), want.end(), buf.begin()), impl.name,
               " quantize_into bytes differ from serialize(quantize(...)):\n  want ", hex_bytes(want), "\n  got  ",
               hex_bytes(std::span<const std::uint8_t>(buf).first(want.size())));
    const Status longer = run(buf);
    FUZZ_CHECK(!longer.ok() && longer.kind() == ErrorKind::trailing_bytes, impl.name,
               " quantize_into into one byte more gave ", kind_text(longer));
    if (!want.empty()) {
      const Status shorter = run(std::span<std::uint8_t>(buf).first(want.size() - 1));
      FUZZ_CHECK(!shorter.ok() && shorter.kind() == ErrorKind::truncated_buffer, impl.name,
                 " quantize_into into one byte less gave ", kind_text(shorter));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const QuantCase c = decode_quant(input);
  const Context ctx([input] { return describe("scheme_qparams", input); });

  if (c.scheme.text_error) {
    FUZZ_CHECK(c.scheme.text_error->kind == ErrorKind::invalid_scheme, "unparsable scheme text gave ",
               to_string(c.scheme.text_error->kind));
    return 0;
  }
  const Scheme& s = c.scheme.scheme;
  const Table table = table_of(c.table);

  std::vector<Outcome> outs;
  const std::vector<Result<QTensor>> results = run_all<QTensor>(
      [&](const Impl& impl) { return impl.quantize(s, c.shape, c.data, c.scales, c.global, table); }, outs);
  check_agree("quantize", outs, [&](const Outcome& a, const Outcome& b) {
    return explain_quantize(results, outs, c.data, c.scales, a, b);
  });
  const Result<QTensor>& ref = results.front();

  if (validate_scheme(s).ok() && s.two_level() && !c.global) {
    FUZZ_CHECK(!ref.ok() && ref.kind() == ErrorKind::missing_global_scale,
               "a valid two-level scheme without a global must give missing-global-scale, got ",
               ref.ok() ? std::string("ok") : std::string(to_string(ref.kind())));
  }
  const Status v = validate_quantize(s, c.shape, c.data, c.scales, c.global, table);
  FUZZ_CHECK(v.ok() == ref.ok() && (v.ok() || v.kind() == ref.kind()), "validate_quantize gave ",
             v.ok() ? std::string("ok") : std::string(to_string(v.kind())), ", quantize gave ",
             ref.ok() ? std::string("ok") : std::string(to_string(ref.kind())));
  check_quantize_into(c, table, ref);
  if (!ref.ok()) {
    FUZZ_CHECK(error_kind_from_string(to_string(ref.kind())) == ref.kind(), "the name of ", to_string(ref.kind()),
               " does not parse back to its kind");
    FUZZ_CHECK(!ref.error().message.empty(), "an error must say what is wrong");
    return 0;
  }

  const QTensor& t = ref.value();
  FUZZ_CHECK(t.codes.size() == c.data.size() && t.scales.size() == c.scales.size());
  for (std::size_t k = 0; k < t.scales.size(); ++k) {
    const float raw = c.scales[k] == 0.0f ? 0.0f : c.scales[k];  // -0.0 is +0.0 (SPEC §3.5)
    const Result<float> up = round_up_scale(raw, s.scale_dtype());
    FUZZ_CHECK(up.ok() && std::bit_cast<std::uint32_t>(up.value()) == std::bit_cast<std::uint32_t>(t.scales[k]),
               "stored scale [", k, "] ", hexf(t.scales[k]), " is not round_up_scale(", hexf(raw), ")");
  }

  // Serialize everywhere: same bytes, exactly the layout's length.
  std::vector<Outcome> ser_outs;
  const std::vector<Result<std::vector<std::uint8_t>>> sers = run_all<std::vector<std::uint8_t>>(
      [&](const Impl& impl) { return impl.serialize(t); }, ser_outs);
  check_agree("serialize", ser_outs);
  const Result<std::vector<std::uint8_t>>& ser = sers.front();
  FUZZ_CHECK(ser.ok(), "serialize of a quantized tensor failed: ", to_string(ser.kind()), ": ", ser.error().message);
  const Result<Layout> l = make_layout(s, c.shape);
  FUZZ_CHECK(l.ok() && l->total_bytes == ser->size(), "serialized ", ser->size(), " bytes, layout says ",
             l.ok() ? l->total_bytes : 0);

  // pack is the value storage that starts the serialized bytes, and unpack inverts it (SPEC §6).
  const std::span<const std::uint8_t> storage = std::span<const std::uint8_t>(ser.value()).first(l->storage_bytes);
  std::vector<Outcome> pack_outs;
  const std::vector<Result<std::vector<std::uint8_t>>> packs = run_all<std::vector<std::uint8_t>>(
      [&](const Impl& impl) { return impl.pack(s, c.shape, t.codes); }, pack_outs);
  check_agree("pack", pack_outs);
  FUZZ_CHECK(packs.front().ok() && std::equal(storage.begin(), storage.end(), packs.front()->begin(),
                                              packs.front()->end()),
             "pack(codes) is not the storage part of serialize(t)");
  std::vector<Outcome> unpack_outs;
  const std::vector<Result<std::vector<std::int32_t>>> unpacks = run_all<std::vector<std::int32_t>>(
      [&](const Impl& impl) { return impl.unpack(s, c.shape, storage); }, unpack_outs);
  check_agree("unpack", unpack_outs);
  FUZZ_CHECK(unpacks.front().ok() && unpacks.front().value() == t.codes, "unpack(pack(codes)) != codes");
  // unpack checks the exact storage length first.
  std::vector<std::uint8_t> longer(storage.begin(), storage.end());
  longer.push_back(0);
  for (const Impl& impl : impls()) {
    const Result<std::vector<std::int32_t>> more = impl.unpack(s, c.shape, longer);
    FUZZ_CHECK(!more.ok() && more.kind() == ErrorKind::trailing_bytes, impl.name, " unpack of one byte more gave ",
               kind_text(more));
    if (!storage.empty()) {
      const Result<std::vector<std::int32_t>> less = impl.unpack(s, c.shape, storage.first(storage.size() - 1));
      FUZZ_CHECK(!less.ok() && less.kind() == ErrorKind::truncated_buffer, impl.name,
                 " unpack of one byte less gave ", kind_text(less));
    }
  }

  // Parse back everywhere: parse(serialize(t)) == t.
  std::vector<Outcome> parse_outs;
  const std::vector<Result<QTensor>> parsed = run_all<QTensor>(
      [&](const Impl& impl) { return impl.parse(s, c.shape, ser.value(), table); }, parse_outs);
  check_agree("parse(serialize(t))", parse_outs);
  FUZZ_CHECK(parsed.front().ok(), "parse(serialize(t)) failed: ", to_string(parsed.front().kind()), ": ",
             parsed.front().error().message);
  FUZZ_CHECK(bits_of(parsed.front().value()) == bits_of(t), "parse(serialize(t)) != t");

  // Dequantize everywhere.
  std::vector<Outcome> deq_outs;
  const std::vector<Result<std::vector<float>>> deqs = run_all<std::vector<float>>(
      [&](const Impl& impl) { return impl.dequantize(t, table); }, deq_outs);
  check_agree("dequantize", deq_outs);
  FUZZ_CHECK(deqs.front().ok(), "dequantize of a quantized tensor failed: ", to_string(deqs.front().kind()), ": ",
             deqs.front().error().message);
  return 0;
}
