// qconform_lookup_benchmarks: lookup mode (SPEC §5), which `qconform bench` does not cover (issue
// 3's cases are symmetric). Quantize to serialized bytes and dequantize from them, per block of 32
// with f16 scales, for a 4-bit table (NF4's 16 levels, QLoRA) and an 8-bit one (256 levels,
// denser near zero), on 16 KiB of `qconform bench`'s f32 data: the reference (quantize +
// serialize, parse + dequantize, as in `qconform bench`) and the optimized implementation on every
// target this CPU supports, in one run. Plain Google Benchmark: --benchmark_filter,
// --benchmark_min_time and the rest apply.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qconform/bench.h"
#include "qconform/optimized.h"
#include "qconform/reference.h"

namespace {

namespace qc = qconform;
namespace opt = qconform::optimized;

constexpr std::size_t kElements = 4096;  // 16 KiB of f32

struct LookupCase {
  qc::Scheme scheme;
  qc::Shape shape{kElements};
  std::vector<float> x, scales, table;
  std::vector<std::uint8_t> bytes;  // the serialized tensor
};

// NF4's levels (QLoRA, normal-float 4-bit), stretched to q4s's range [-8, 7].
std::vector<float> nf4_table() {
  const double nf4[] = {-1.0,     -0.69619, -0.52507, -0.39492, -0.28444, -0.18477, -0.09105, 0.0,
                        0.07959,  0.16093,  0.24611,  0.33792,  0.44071,  0.56262,  0.72295,  1.0};
  std::vector<float> t;
  for (double v : nf4) t.push_back(static_cast<float>(v * 7.5));
  return t;
}

// 256 levels over q8s's range, denser near zero (sinh-spaced).
std::vector<float> dense_table() {
  std::vector<float> t;
  for (int i = 0; i < 256; ++i) t.push_back(static_cast<float>(127.5 * std::sinh(3.0 * (i - 127.5) / 127.5) / std::sinh(3.0)));
  return t;
}

const LookupCase& lookup_case(int bits) {
  static LookupCase cases[2];
  LookupCase& c = cases[bits == 4 ? 0 : 1];
  if (!c.x.empty()) return c;
  c.scheme = qc::parse_scheme(bits == 4 ? "value=q4s,store=packed_u32:0,mode=lookup,block=32:f16"
                                        : "value=q8s,store=packed_u32:0,mode=lookup,block=32:f16")
                 .value();
  c.x.resize(kElements);
  qc::bench::fill_activations(c.x);  // the data of `qconform bench`
  c.table = bits == 4 ? nf4_table() : dense_table();
  c.scales = qc::calibrate(c.scheme, c.shape, c.x, qc::Calibration::minmax).value().scales;
  const qc::QTensor t = qc::quantize(c.scheme, c.shape, c.x, c.scales, std::nullopt, c.table).value();
  c.bytes = qc::serialize(t).value();
  return c;
}

void reference_quantize(benchmark::State& state, int bits) {
  const LookupCase& c = lookup_case(bits);
  for (auto _ : state) {
    qc::Result<qc::QTensor> t = qc::quantize(c.scheme, c.shape, c.x, c.scales, std::nullopt, c.table);
    qc::Result<std::vector<std::uint8_t>> b = qc::serialize(t.value());
    benchmark::DoNotOptimize(b.value().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kElements));
}

void reference_dequantize(benchmark::State& state, int bits) {
  const LookupCase& c = lookup_case(bits);
  for (auto _ : state) {
    qc::Result<qc::QTensor> t = qc::parse(c.scheme, c.shape, c.bytes, c.table);
    qc::Result<std::vector<float>> v = qc::dequantize(t.value(), c.table);
    benchmark::DoNotOptimize(v.value().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kElements));
}

void optimized_quantize(benchmark::State& state, int bits, std::int64_t target) {
  const LookupCase& c = lookup_case(bits);
  std::vector<std::uint8_t> out(c.bytes.size(), 1);
  for (auto _ : state) {
    const qc::Status st = opt::quantize_into(c.scheme, c.shape, c.x, c.scales, std::nullopt, out, c.table, target);
    if (!st.ok()) state.SkipWithError(st.error().message.c_str());
    benchmark::DoNotOptimize(out.data());
  }
  if (out != c.bytes) state.SkipWithError("optimized bytes differ from the reference's");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kElements));
}

void optimized_dequantize(benchmark::State& state, int bits, std::int64_t target) {
  const LookupCase& c = lookup_case(bits);
  std::vector<float> out(kElements, 1.0f);
  for (auto _ : state) {
    const qc::Status st = opt::dequantize_from(c.scheme, c.shape, c.bytes, out, c.table, target);
    if (!st.ok()) state.SkipWithError(st.error().message.c_str());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kElements));
}

}  // namespace

int main(int argc, char** argv) {
  for (int bits : {4, 8}) {
    const std::string tag = "lookup-q" + std::to_string(bits) + "s-b32-f16/16KiB/";
    benchmark::RegisterBenchmark((tag + "quant/reference").c_str(), reference_quantize, bits);
    for (const opt::Target& t : opt::targets()) {
      if (!t.supported) continue;
      benchmark::RegisterBenchmark((tag + "quant/optimized:" + t.name).c_str(), optimized_quantize, bits, t.bits);
    }
    benchmark::RegisterBenchmark((tag + "deq/reference").c_str(), reference_dequantize, bits);
    for (const opt::Target& t : opt::targets()) {
      if (!t.supported) continue;
      benchmark::RegisterBenchmark((tag + "deq/optimized:" + t.name).c_str(), optimized_dequantize, bits, t.bits);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
