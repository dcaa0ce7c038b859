// Fuzz target parse_bytes: untrusted serialized bytes for a fuzzed scheme and shape.
//
// Input: the producer's ParseCase (scheme, shape, optional lookup table, then the buffer, whose
// length is usually the layout's exact length; fuzz/producer.h). Invariants, each an abort:
//  - parse never reads outside the buffer (ASan) nor makes an allocation the bytes do not justify
//    (libFuzzer's -malloc_limit_mb in parse_bytes.options);
//  - every implementation gives the same error kind or the same tensor bit for bit;
//  - when the bytes parse, serialize(parse(b)) == b byte for byte (SPEC §7: only canonical bytes
//    parse), and the parsed tensor dequantizes (parse accepted its scales, global, table and
//    codes, so dequantize must too), identically everywhere.
#include <cstddef>
#include <optional>
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

// The allocation-free path must be dequantize(parse(...)) exactly: the same error kind (input
// errors before any complaint about `out`), the same values into an exactly sized buffer, and
// shape-mismatch for one float more.
void check_dequantize_from(const ParseCase& c, std::span<const std::uint8_t> buffer, Table table,
                           const Result<QTensor>& ref) {
  std::optional<Result<std::vector<float>>> want;
  if (ref.ok()) want = dequantize(ref.value(), table);
  for (const Impl& impl : impls()) {
    if (!impl.dequantize_from) continue;
    const auto run = [&](std::span<float> out) {
      return impl.dequantize_from(c.scheme.scheme, c.shape, buffer, out, table);
    };
    if (!ref.ok()) {
      std::vector<float> out;
      const Status st = run(out);
      FUZZ_CHECK(!st.ok() && st.kind() == ref.kind(), impl.name, " dequantize_from gave ", kind_text(st),
                 ", parse gave ", kind_text(ref));
      continue;
    }
    if (!want->ok()) {
      std::vector<float> out(ref->codes.size());
      const Status st = run(out);
      FUZZ_CHECK(!st.ok() && st.kind() == want->kind(), impl.name, " dequantize_from gave ", kind_text(st),
                 ", dequantize(parse(b)) gave ", kind_text(*want));
      continue;
    }
    std::vector<float> out(want->value().size() + 1, 1.5f);
    const Status exact = run(std::span<float>(out).first(want->value().size()));
    FUZZ_CHECK(exact.ok(), impl.name, " dequantize_from failed where dequantize(parse(b)) succeeded: ",
               kind_text(exact));
    out.pop_back();
    FUZZ_CHECK(bits_of(out) == bits_of(want->value()), impl.name,
               " dequantize_from values differ from dequantize(parse(b))");
    out.push_back(1.5f);
    const Status longer = run(out);
    FUZZ_CHECK(!longer.ok() && longer.kind() == ErrorKind::shape_mismatch, impl.name,
               " dequantize_from into one float more gave ", kind_text(longer));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const ParseCase c = decode_parse(input);
  const Context ctx([input] { return describe("parse_bytes", input); });
  if (c.scheme.text_error) {
    FUZZ_CHECK(c.scheme.text_error->kind == ErrorKind::invalid_scheme);
    return 0;
  }
  const Scheme& s = c.scheme.scheme;
  const Table table = table_of(c.table);
  // The buffer parse sees is exactly as long as the bytes: a heap copy of that size, so ASan
  // flags any read past it.
  const std::vector<std::uint8_t> buffer(c.bytes);

  std::vector<Outcome> outs;
  const std::vector<Result<QTensor>> results =
      run_all<QTensor>([&](const Impl& impl) { return impl.parse(s, c.shape, buffer, table); }, outs);
  check_agree("parse", outs);
  const Result<QTensor>& ref = results.front();
  check_dequantize_from(c, buffer, table, ref);
  if (!ref.ok()) {
    FUZZ_CHECK(error_kind_from_string(to_string(ref.kind())) == ref.kind(), "error name round trip");
    return 0;
  }

  std::vector<Outcome> ser_outs;
  const std::vector<Result<std::vector<std::uint8_t>>> sers = run_all<std::vector<std::uint8_t>>(
      [&](const Impl& impl) { return impl.serialize(ref.value()); }, ser_outs);
  check_agree("serialize(parse(b))", ser_outs);
  FUZZ_CHECK(sers.front().ok(), "a parsed tensor does not serialize: ", to_string(sers.front().kind()), ": ",
             sers.front().error().message);
  const std::vector<std::uint8_t>& back = sers.front().value();
  if (back != buffer) {
    std::size_t k = 0;
    while (k < back.size() && k < buffer.size() && back[k] == buffer[k]) ++k;
    FUZZ_CHECK(back == buffer, "serialize(parse(b)) != b: ", back.size(), " vs ", buffer.size(),
               " bytes, first difference at byte ", k, "\n  b     ", hex_bytes(buffer), "\n  again ", hex_bytes(back));
  }

  std::vector<Outcome> deq_outs;
  const std::vector<Result<std::vector<float>>> deqs = run_all<std::vector<float>>(
      [&](const Impl& impl) { return impl.dequantize(ref.value(), table); }, deq_outs);
  check_agree("dequantize(parse(b))", deq_outs);
  FUZZ_CHECK(deqs.front().ok(), "a parsed tensor does not dequantize: ", to_string(deqs.front().kind()), ": ",
             deqs.front().error().message);
  return 0;
}
