// Fuzz target dequantize: fuzzed codes, stored scales, global and table, valid or not.
//
// Input: the producer's DequantCase (scheme, shape, int16 codes, stored scales — snapped onto
// their dtype grid when its flag is set — optional global, optional table; fuzz/producer.h).
// Invariants, each an abort:
//  - every implementation gives the same error kind or the same values bit for bit;
//  - a successful dequantize equals an independent recomputation (fuzz/oracle.h): element i
//    takes the block found from its coordinates (SPEC §4), eff = fl(g * s) or s, 0 -> 0.1f, and
//    x' = fl(eff * value(code)) with the code decoded from the format's definition (SPEC §5);
//  - a tensor that dequantizes also serializes and parses back to itself.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check.h"
#include "impls.h"
#include "oracle.h"
#include "producer.h"
#include "qconform/fuzz_producer.h"

using namespace qconform;
using namespace qconform::fuzz;

namespace {

float code_value(std::int32_t code, const Scheme& s, const Table& table) {
  if (s.mode == Mode::lookup) return (*table)[static_cast<std::size_t>(code)];
  switch (s.value) {
    case Value::e4m3: return static_cast<float>(oracle::decode(static_cast<std::uint32_t>(code), oracle::kE4M3));
    case Value::e5m2: return static_cast<float>(oracle::decode(static_cast<std::uint32_t>(code), oracle::kE5M2));
    case Value::e2m1: return static_cast<float>(oracle::decode(static_cast<std::uint32_t>(code), oracle::kE2M1));
    default: return static_cast<float>(code);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const DequantCase c = decode_dequant(input);
  const Context ctx([input] { return describe("dequantize", input); });
  if (c.scheme.text_error) {
    FUZZ_CHECK(c.scheme.text_error->kind == ErrorKind::invalid_scheme);
    return 0;
  }
  const Scheme& s = c.scheme.scheme;
  const Table table = table_of(c.table);
  const QTensor t{s, c.shape, c.codes, c.scales, c.global};

  std::vector<Outcome> outs;
  const std::vector<Result<std::vector<float>>> results =
      run_all<std::vector<float>>([&](const Impl& impl) { return impl.dequantize(t, table); }, outs);
  check_agree("dequantize", outs);
  const Result<std::vector<float>>& ref = results.front();
  if (!ref.ok()) return 0;

  // Independent recomputation.
  const std::vector<float>& got = ref.value();
  FUZZ_CHECK(got.size() == c.codes.size());
  const std::size_t r = c.shape.size();
  std::vector<std::size_t> block(r, 1);
  if (s.block) {
    FUZZ_CHECK(s.block->dims.size() <= r, "a block wider than the tensor dequantized");
    for (std::size_t i = 0; i < s.block->dims.size(); ++i) block[r - s.block->dims.size() + i] = s.block->dims[i];
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::size_t k = s.block ? oracle::block_index(c.shape, block, i) : 0;
    FUZZ_CHECK(k < c.scales.size(), "element ", i, " maps to block ", k, " of ", c.scales.size());
    float eff = c.global ? *c.global * c.scales[k] : c.scales[k];
    if (eff == 0.0f) eff = 0.1f;
    const float value = code_value(c.codes[i], s, table);
    const float want = eff * value;
    // The reference's per-element entry points give the same pieces.
    FUZZ_CHECK(std::bit_cast<std::uint32_t>(effective_scale(c.scales[k], c.global)) ==
                   std::bit_cast<std::uint32_t>(eff),
               "effective_scale(", hexf(c.scales[k]), ") = ", hexf(effective_scale(c.scales[k], c.global)));
    const float dv = decode_value(c.codes[i], s.value, s.mode, table);
    FUZZ_CHECK(std::bit_cast<std::uint32_t>(dv) == std::bit_cast<std::uint32_t>(value), "decode_value(", c.codes[i],
               ") = ", hexf(dv), ", the definition gives ", hexf(value));
    FUZZ_CHECK(std::bit_cast<std::uint32_t>(want) == std::bit_cast<std::uint32_t>(got[i]), "element [", i,
               "] code ", c.codes[i], ", block ", k, ", scale ", hexf(c.scales[k]), ": dequantize gave ",
               hexf(got[i]), ", the definition gives ", hexf(want));
  }

  const Result<std::vector<std::uint8_t>> ser = serialize(t);
  FUZZ_CHECK(ser.ok(), "a tensor that dequantizes does not serialize: ", to_string(ser.kind()), ": ",
             ser.error().message);
  const Result<QTensor> back = parse(s, c.shape, ser.value(), table);
  FUZZ_CHECK(back.ok() && bits_of(back.value()) == bits_of(t), "parse(serialize(t)) != t for a valid tensor");
  return 0;
}
