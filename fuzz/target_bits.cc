// Fuzz target target_bits: any 64-bit value as the optimized library's `target` argument.
//
// Input: the producer's TargetCase (a pick and an argument that give the value: 0, a compiled
// target by index, one bit, or any 64-bit value; then a scheme_qparams case; fuzz/producer.h).
// Invariants, each an abort:
//  - a value that names no target this CPU runs (anything but 0 and the bits of a compiled target
//    the CPU supports) runs nothing: every operation gives implementation-fault, whatever else
//    is wrong with the input, naming the value; the caller's buffers are untouched; both
//    ceilings return false; dispatched_target returns 0;
//  - a runnable value gives the reference's result: quantize's error kind or tensor bit for bit,
//    quantize_into's bytes (serialize of that tensor), calibrate's (minmax) kind or parameters;
//    dispatched_target is the target asked for (best_target() for 0).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "check.h"
#include "impls.h"
#include "producer.h"
#include "qconform/fuzz_producer.h"
#include "qconform/optimized.h"
#include "target_value.h"

using namespace qconform;
using namespace qconform::fuzz;
namespace opt = qconform::optimized;

namespace {

constexpr std::uint8_t kFill = 0x5A;

std::string hex64(std::int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

template <class R>
bool is_fault(const R& r) {
  return !r.ok() && r.kind() == ErrorKind::implementation_fault;
}

// Every operation with an unrunnable target: implementation-fault and nothing written.
void check_unrunnable(const QuantCase& c, const Table& table, std::int64_t t) {
  const Scheme& s = c.scheme.scheme;
  const std::string v = hex64(t);
  const std::size_t n = std::min<std::size_t>(c.data.size(), 64);
  std::vector<std::uint8_t> bytes(n + 8, kFill);
  std::vector<float> floats(n, -1.0f);
  const std::vector<std::int32_t> codes(n, 1);
  const QTensor q{s, c.shape, codes, c.scales, c.global};

  const Result<QTensor> quant = opt::quantize(s, c.shape, c.data, c.scales, c.global, table, t);
  FUZZ_CHECK(is_fault(quant), "quantize on target ", v, " gave ", kind_text(quant));
  FUZZ_CHECK(quant.error().message.find(v) != std::string::npos, "the message does not name ", v, ": ",
             quant.error().message);
  FUZZ_CHECK(is_fault(opt::dequantize(q, table, t)), "dequantize on target ", v);
  FUZZ_CHECK(is_fault(opt::calibrate(s, c.shape, c.data, Calibration::minmax, t)), "calibrate on target ", v);
  FUZZ_CHECK(is_fault(opt::calibrate(s, c.shape, c.data, Calibration::absmean, t)), "calibrate on target ", v);
  FUZZ_CHECK(is_fault(opt::pack(s, c.shape, codes, t)), "pack on target ", v);
  FUZZ_CHECK(is_fault(opt::unpack(s, c.shape, bytes, t)), "unpack on target ", v);
  FUZZ_CHECK(is_fault(opt::serialize(q, t)), "serialize on target ", v);
  FUZZ_CHECK(is_fault(opt::parse(s, c.shape, bytes, table, t)), "parse on target ", v);
  FUZZ_CHECK(is_fault(opt::quantize_into(s, c.shape, c.data, c.scales, c.global, bytes, table, t)),
             "quantize_into on target ", v);
  FUZZ_CHECK(is_fault(opt::calibrate_quantize_into(s, c.shape, c.data, Calibration::minmax, bytes, t)),
             "calibrate_quantize_into on target ", v);
  FUZZ_CHECK(is_fault(opt::dequantize_from(s, c.shape, bytes, floats, table, t)), "dequantize_from on target ", v);
  const std::span<const float> head = std::span<const float>(c.data).first(n);
  FUZZ_CHECK(!opt::ceiling_4to1(head, std::span<std::uint8_t>(bytes).first(n), t), "ceiling_4to1 ran on target ", v);
  FUZZ_CHECK(!opt::ceiling_1to4(std::span<const std::uint8_t>(bytes).first(n), floats, t), "ceiling_1to4 ran on target ",
             v);
  FUZZ_CHECK(opt::dispatched_target(t) == 0, "dispatched_target(", v, ") = ", hex64(opt::dispatched_target(t)));
  FUZZ_CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == kFill; }),
             "a call on target ", v, " wrote to the caller's bytes");
  FUZZ_CHECK(std::all_of(floats.begin(), floats.end(), [](float x) { return x == -1.0f; }), "a call on target ", v,
             " wrote to the caller's floats");
}

// A runnable target gives the reference's answers.
void check_runnable(const QuantCase& c, const Table& table, std::int64_t t) {
  const Scheme& s = c.scheme.scheme;
  const std::string v = hex64(t);
  FUZZ_CHECK(opt::dispatched_target(t) == (t == 0 ? opt::best_target() : t), "dispatched_target(", v, ") = ",
             hex64(opt::dispatched_target(t)));
  const Result<QTensor> ref = quantize(s, c.shape, c.data, c.scales, c.global, table);
  const Result<QTensor> got = opt::quantize(s, c.shape, c.data, c.scales, c.global, table, t);
  FUZZ_CHECK(ref.ok() == got.ok() && (ref.ok() ? bits_of(*ref) == bits_of(*got) : ref.kind() == got.kind()),
             "quantize on target ", v, " gave ", kind_text(got), ", the reference ", kind_text(ref));
  if (ref.ok()) {
    const std::vector<std::uint8_t> want = serialize(*ref).value();
    std::vector<std::uint8_t> buf(want.size(), kFill);
    const Status st = opt::quantize_into(s, c.shape, c.data, c.scales, c.global, buf, table, t);
    FUZZ_CHECK(st.ok() && buf == want, "quantize_into on target ", v, " gave ", kind_text(st), " or other bytes");
  }
  const Result<QParams> rp = calibrate(s, c.shape, c.data, Calibration::minmax);
  const Result<QParams> gp = opt::calibrate(s, c.shape, c.data, Calibration::minmax, t);
  FUZZ_CHECK(rp.ok() == gp.ok() && (rp.ok() ? bits_of(*rp) == bits_of(*gp) : rp.kind() == gp.kind()),
             "calibrate on target ", v, " gave ", kind_text(gp), ", the reference ", kind_text(rp));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const TargetCase c = decode_target(input);
  const Context ctx([input] { return describe("target_bits", input); });
  // Unparsable scheme text leaves the model's default scheme: the target is checked first anyway.
  const Table table = table_of(c.quant.table);
  const std::int64_t t = target_value(c);
  if (runnable(t)) {
    check_runnable(c.quant, table, t);
  } else {
    check_unrunnable(c.quant, table, t);
  }
  return 0;
}
