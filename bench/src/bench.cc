// The benchmark registry and runner behind `qconform_benchmarks` and `qconform bench`.
//
// One table lists the cases; each runs at three sizes of f32 data (L1, L2, DRAM) for the
// reference, the optimized implementation on every target this CPU supports, and a bandwidth
// ceiling that moves the same bytes with no arithmetic: read 4 bytes and write 1 per element for
// the quantize cases, read 1 and write 4 for the dequantize cases (the mirror image, since a
// dequantizer writes what a quantizer reads). Every row is reported with its ratio to the
// ceiling and to the reference measured in the same run. At the DRAM size each optimized
// iteration is paired with a ceiling pass just before it, and the ratio is the median of the
// iterations' ratios: the host's noise at that size comes in bursts of seconds, which a ceiling
// measured in a benchmark of its own does not share. At the cached sizes every row (ceiling,
// reference, each target) runs as kSlices slices of a fifth of --min-time each, taken in rounds
// (slice 0 of every cached row, then slice 1, ...) so that one row's slices are spread over the
// whole cached part of the run: a slow spell of the host that lasts seconds then lowers at most
// some slices of every row instead of every slice of a few rows. Within a slice, each benchmark
// iteration is a batch of calls of about kBatchSeconds, timed on its own, and the row reports the
// median over all its batches of the time per call (until session 40: its median slice, each a
// mean over the slice, which carried the host's interruptions of a fraction of a millisecond
// that come several times in every slice). The mean over the batches goes to stderr with it.
//
// What is timed is what a user ships: quantize to serialized bytes (quantize_into,
// calibrate_quantize_into) and dequantize from serialized bytes (dequantize_from), into buffers
// allocated and touched beforehand. The reference has no such entry points; its row is the
// composition quantize + serialize (or parse + dequantize), allocations included.
#include "qconform/bench.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "qconform/optimized.h"
#include "qconform/reference.h"

namespace qconform::bench {

std::int64_t batch_calls(double call_seconds) {
  if (!(call_seconds * static_cast<double>(kMaxBatch) > kBatchSeconds)) return kMaxBatch;  // NaN too
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(kBatchSeconds / call_seconds));
}

void fill_activations(std::span<float> v) {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<float>(static_cast<double>(s >> 40) * 0x1p-24);  // [0, 1)
  };
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float g = (next() + next() + next() + next() - 2.0f) * 1.7f;
    v[i] = (i % 997 == 0) ? g * 8.0f : g;
  }
}

namespace {

namespace opt = qconform::optimized;

enum class Op : std::uint8_t { calibrate_quantize, quantize, dequantize };

struct CaseDef {
  const char* name;
  const char* scheme;
  Op op;
};

// The cases of issue 3: name, scheme, operation. Adding a case is one line.
#define QCONFORM_BENCH_CASES(X)                                                                    \
  X("calq-q8s-b32-f16", "value=q8s,block=32:f16", calibrate_quantize) /* what ggml's Q8_0 does */   \
  X("quant-q8s-tensor", "value=q8s", quantize)                                                     \
  X("quant-q4s-2lvl-b32", "value=q4s,store=packed_u32:0,block=32:ue4m3,tensor=f32", quantize)      \
  X("quant-nvfp4", "nvfp4", quantize)                                                              \
  X("quant-e4m3-tensor", "value=e4m3", quantize)                                                   \
  X("deq-q8s-b32-f16", "value=q8s,block=32:f16", dequantize)                                       \
  X("deq-q8s-tensor", "value=q8s", dequantize)                                                     \
  X("deq-q4s-2lvl-b32", "value=q4s,store=packed_u32:0,block=32:ue4m3,tensor=f32", dequantize)      \
  X("deq-nvfp4", "nvfp4", dequantize)                                                              \
  X("deq-e4m3-tensor", "value=e4m3", dequantize)

constexpr CaseDef kCases[] = {
#define QCONFORM_X(name, scheme, op) {name, scheme, Op::op},
    QCONFORM_BENCH_CASES(QCONFORM_X)
#undef QCONFORM_X
};

struct SizeDef {
  const char* label;
  std::size_t bytes;  // of f32 data
  bool dram;
};
constexpr SizeDef kSizes[] = {{"16KiB", std::size_t{16} << 10, false},
                              {"512KiB", std::size_t{512} << 10, false},
                              {"256MiB", std::size_t{256} << 20, true}};
constexpr std::size_t kRow = 4096;  // last extent of every benchmark tensor
// Iterations of each optimized row at the DRAM size, each paired with a ceiling pass; odd, so
// that the median is one of them.
constexpr int kPairedIterations = 11;
// Slices of each row at the cached sizes, taken in rounds over the run; odd, as above.
constexpr int kSlices = 5;
// Within a slice, batches of kBatchSeconds (bench.h): the host's interruptions come more often
// than every millisecond (session 41: 10 to 15 % of 0.34 ms windows of calibrate+quantize at 512
// KiB took 10 % longer or more), so a mean over a slice of 60 ms carries them whatever the slice,
// while most batches of 50 us see none.

enum class ImplKind : std::uint8_t { ceiling, reference, optimized };

struct Row {
  std::size_t c = 0, z = 0;
  ImplKind kind = ImplKind::reference;
  std::int64_t target = 0;
  std::string impl, target_name, name;
  std::optional<double> seconds;  // per call (at the cached sizes the median batch's)
  std::vector<double> slices;     // seconds per iteration of each slice (one at the DRAM size)
  std::vector<double> calls;      // cached sizes: seconds per call of each batch
  double batched_seconds = 0;     // cached sizes: the batches' total time
  std::int64_t batched_calls = 0; // and calls (their mean, on stderr)
  std::vector<double> paired;     // DRAM, optimized: ceiling time / own time, per iteration
  std::string error;
};

// Data of one size, and the prepared inputs of one case at that size; rebuilt when the running
// benchmark moves on (benchmarks run in registration order: size, then case, then impl).
struct Prepared {
  std::size_t c = SIZE_MAX, z = SIZE_MAX;
  Scheme scheme;
  Shape shape;
  std::vector<float> scales;
  std::optional<float> global;
  Placed<std::uint8_t> bytes;  // the serialized tensor (dequantize input)
  Placed<std::uint8_t> out;    // quantize output, touched
  std::string error;
};

struct SizeData {
  std::size_t z = SIZE_MAX;
  Placed<float> input;
  Placed<std::uint8_t> u8;  // ceiling buffers, touched
  Placed<float> f32;        // dequantize output and ceiling buffer, touched
};

SizeData g_size;
Prepared g_prep;
std::size_t g_offset = 0;  // of every buffer past a 64-byte boundary (run's `offset`)

SizeData& size_data(std::size_t z) {
  if (g_size.z != z) {
    g_size = SizeData{};
    const std::size_t n = kSizes[z].bytes / sizeof(float);
    g_size.input = Placed<float>(n, g_offset);
    fill_activations(g_size.input);
    g_size.u8 = Placed<std::uint8_t>(n, g_offset);
    std::fill_n(g_size.u8.data(), n, std::uint8_t{1});
    g_size.f32 = Placed<float>(n, g_offset);
    std::fill_n(g_size.f32.data(), n, 1.0f);
    g_size.z = z;
  }
  return g_size;
}

Prepared& prepare(std::size_t c, std::size_t z) {
  SizeData& d = size_data(z);
  if (g_prep.c == c && g_prep.z == z) return g_prep;
  g_prep = Prepared{};
  g_prep.c = c;
  g_prep.z = z;
  Result<Scheme> s = parse_scheme(kCases[c].scheme);
  if (!s.ok()) {
    g_prep.error = s.error().message;
    return g_prep;
  }
  g_prep.scheme = s.value();
  const std::size_t n = d.input.size();
  g_prep.shape = {n / kRow, kRow};
  Result<QParams> p = opt::calibrate(g_prep.scheme, g_prep.shape, d.input, Calibration::minmax);
  Result<Layout> l = make_layout(g_prep.scheme, g_prep.shape, n);
  if (!p.ok() || !l.ok()) {
    g_prep.error = !p.ok() ? p.error().message : l.error().message;
    return g_prep;
  }
  g_prep.scales = p->scales;
  g_prep.global = p->global;
  g_prep.out = Placed<std::uint8_t>(l->total_bytes, g_offset);
  std::fill_n(g_prep.out.data(), l->total_bytes, std::uint8_t{1});
  g_prep.bytes = Placed<std::uint8_t>(l->total_bytes, g_offset);
  std::fill_n(g_prep.bytes.data(), l->total_bytes, std::uint8_t{0});
  const Status st = opt::quantize_into(g_prep.scheme, g_prep.shape, d.input, g_prep.scales, g_prep.global, g_prep.bytes);
  if (!st.ok()) g_prep.error = st.error().message;
  return g_prep;
}

// One pass of the case's bandwidth ceiling over the size's buffers.
void ceiling_pass(Op op, SizeData& d) {
  if (op == Op::dequantize) {
    static_cast<void>(opt::ceiling_1to4(d.u8, d.f32));  // target 0 (the best one) always runs
    benchmark::DoNotOptimize(d.f32.data());
  } else {
    static_cast<void>(opt::ceiling_4to1(d.input, d.u8));
    benchmark::DoNotOptimize(d.u8.data());
  }
  benchmark::ClobberMemory();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

void run_one(benchmark::State& state, Row& row) {
  SizeData& d = size_data(row.z);
  Prepared& p = prepare(row.c, row.z);
  if (!p.error.empty()) {
    state.SkipWithError(p.error.c_str());
    return;
  }
  const Op op = kCases[row.c].op;
  auto reference = [&] {
    if (op == Op::dequantize) {
      Result<QTensor> t = parse(p.scheme, p.shape, p.bytes);
      Result<std::vector<float>> v = dequantize(t.value());
      benchmark::DoNotOptimize(v.value().data());
    } else {
      std::vector<float> scales = p.scales;
      std::optional<float> global = p.global;
      if (op == Op::calibrate_quantize) {
        QParams q = calibrate(p.scheme, p.shape, d.input, Calibration::minmax).value();
        scales = std::move(q.scales);
        global = q.global;
      }
      Result<QTensor> t = quantize(p.scheme, p.shape, d.input, scales, global);
      Result<std::vector<std::uint8_t>> b = serialize(t.value());
      benchmark::DoNotOptimize(b.value().data());
    }
    benchmark::ClobberMemory();
  };
  auto optimized = [&]() -> Status {
    switch (op) {
      case Op::calibrate_quantize:
        return opt::calibrate_quantize_into(p.scheme, p.shape, d.input, Calibration::minmax, p.out, row.target);
      case Op::quantize:
        return opt::quantize_into(p.scheme, p.shape, d.input, p.scales, p.global, p.out, std::nullopt, row.target);
      case Op::dequantize:
        return opt::dequantize_from(p.scheme, p.shape, p.bytes, d.f32, std::nullopt, row.target);
    }
    return {};
  };
  if (row.kind == ImplKind::optimized) {
    if (const Status st = optimized(); !st.ok()) {
      state.SkipWithError(st.error().message.c_str());
      return;
    }
  }
  auto call = [&] {
    switch (row.kind) {
      case ImplKind::ceiling: ceiling_pass(op, d); break;
      case ImplKind::reference: reference(); break;
      case ImplKind::optimized:
        benchmark::DoNotOptimize(optimized().ok());
        benchmark::ClobberMemory();
        break;
    }
  };
  using Clock = std::chrono::steady_clock;
  if (!kSizes[row.z].dram) {
    // Batches of about kBatchSeconds, sized from one timed call after a warm-up call (for an
    // optimized row, the checked call above).
    if (row.kind != ImplKind::optimized) call();
    const Clock::time_point w0 = Clock::now();
    call();
    const double one = std::chrono::duration<double>(Clock::now() - w0).count();
    const std::int64_t k = batch_calls(one);
    for (auto _ : state) {
      const Clock::time_point b0 = Clock::now();
      for (std::int64_t i = 0; i < k; ++i) call();
      const double t = std::chrono::duration<double>(Clock::now() - b0).count();
      state.SetIterationTime(t);
      row.calls.push_back(t / static_cast<double>(k));
      row.batched_seconds += t;
      row.batched_calls += k;
    }
    return;
  }
  if (row.kind != ImplKind::optimized) {
    for (auto _ : state) call();
    return;
  }
  // At the DRAM size each optimized iteration follows a ceiling pass, untimed by the benchmark.
  row.paired.clear();
  for (auto _ : state) {
    state.PauseTiming();
    const Clock::time_point c0 = Clock::now();
    ceiling_pass(op, d);
    const Clock::time_point c1 = Clock::now();
    state.ResumeTiming();
    const Clock::time_point k0 = Clock::now();
    call();
    const Clock::time_point k1 = Clock::now();
    row.paired.push_back(std::chrono::duration<double>(c1 - c0) / std::chrono::duration<double>(k1 - k0));
  }
}

class Collector : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(std::map<std::string, Row*>& rows) : rows_(rows) {}
  bool ReportContext(const Context&) override { return true; }
  // Called once per slice.
  void ReportRuns(const std::vector<Run>& runs) override {
    Row* row = nullptr;
    for (const Run& r : runs) {
      auto it = rows_.find(r.run_name.function_name);
      if (it == rows_.end() || r.run_type != Run::RT_Iteration) continue;
      row = it->second;
      if (r.error_occurred) {
        row->error = r.error_message;
      } else if (r.iterations > 0) {
        row->slices.push_back(r.real_accumulated_time / static_cast<double>(r.iterations));
      }
    }
    if (row == nullptr) return;
    const bool dram = kSizes[row->z].dram;
    if (row->error.empty() && !row->slices.empty()) {
      if (dram) {
        row->seconds = median(row->slices);
      } else if (!row->calls.empty()) {
        row->seconds = median(row->calls);
      }
    }
    const std::size_t slices = dram ? 1 : static_cast<std::size_t>(kSlices);
    if (!row->error.empty() || row->slices.size() == slices) {
      std::string what = row->seconds ? std::to_string(*row->seconds * 1e9 / elements(*row)) + " ns/element"
                                      : "error: " + row->error;
      if (row->seconds && !dram && row->batched_calls > 0) {
        // The mean over every batch too: what the host's interruptions add.
        what += " (mean " +
                std::to_string(row->batched_seconds / static_cast<double>(row->batched_calls) * 1e9 / elements(*row)) +
                ")";
      }
      std::fprintf(stderr, "  %-44s %s\n", row->name.c_str(), what.c_str());
    }
  }
  static double elements(const Row& row) { return static_cast<double>(kSizes[row.z].bytes / sizeof(float)); }

 private:
  std::map<std::string, Row*>& rows_;
};

std::string json_number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

}  // namespace

int run(bool json, double min_time_seconds, std::string_view filter, std::size_t offset) {
  if (offset % 4 != 0 || offset > kMaxOffset) {
    std::fprintf(stderr, "qconform bench: the offset must be a multiple of 4 from 0 to %zu bytes, not %zu\n", kMaxOffset,
                 offset);
    return 1;
  }
  static bool initialized = false;
  if (!initialized) {
    int argc = 1;
    char arg0[] = "qconform_bench";
    char* argv[] = {arg0, nullptr};
    benchmark::Initialize(&argc, argv);
    initialized = true;
  }
  benchmark::ClearRegisteredBenchmarks();
  std::vector<std::unique_ptr<Row>> rows;
  std::map<std::string, Row*> by_name;
  std::vector<opt::Target> targets;
  for (const opt::Target& t : opt::targets()) {
    if (t.supported) targets.push_back(t);
  }
  for (std::size_t z = 0; z < std::size(kSizes); ++z) {
    for (std::size_t c = 0; c < std::size(kCases); ++c) {
      auto add = [&](ImplKind kind, std::int64_t target, std::string impl, std::string tname) {
        auto row = std::make_unique<Row>();
        row->c = c;
        row->z = z;
        row->kind = kind;
        row->target = target;
        row->impl = std::move(impl);
        row->target_name = std::move(tname);
        row->name = std::string(kCases[c].name) + "/" + kSizes[z].label + "/" + row->impl +
                    (row->target_name.empty() ? "" : ":" + row->target_name);
        rows.push_back(std::move(row));
      };
      add(ImplKind::ceiling, 0, "ceiling", opt::target_name(opt::best_target()));
      add(ImplKind::reference, 0, "reference", "");
      for (const opt::Target& t : targets) add(ImplKind::optimized, t.bits, "optimized", t.name);
    }
  }
  // The filter picks rows by their name "<case>/<size>/<impl>[:<target>]" (a slice's benchmark
  // name adds "#<slice>").
  std::regex pick;
  try {
    pick = std::regex(filter.empty() ? std::string(".") : std::string(filter));
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "qconform bench: bad filter '%.*s': %s\n", static_cast<int>(filter.size()), filter.data(),
                 e.what());
    return 1;
  }
  std::erase_if(rows, [&](const std::unique_ptr<Row>& r) { return !std::regex_search(r->name, pick); });
  // Registration order is run order: the cached rows' slices in rounds, then the DRAM rows.
  auto enroll = [&](Row* r, const std::string& name) {
    benchmark::internal::Benchmark* b =
        benchmark::RegisterBenchmark(name.c_str(), [r](benchmark::State& st) { run_one(st, *r); });
    if (kSizes[r->z].dram) {
      b->UseRealTime();
    } else {
      b->UseManualTime();  // the batches' own times (run_one)
    }
    b->Unit(benchmark::kNanosecond);
    by_name[name] = r;
    return b;
  };
  for (int slice = 0; slice < kSlices; ++slice) {
    for (const auto& r : rows) {
      if (kSizes[r->z].dram) continue;
      enroll(r.get(), r->name + "#" + std::to_string(slice))->MinTime(min_time_seconds / kSlices);
    }
  }
  for (const auto& r : rows) {
    // kPairedIterations: with 5, the median ratio of one case was 0.72, 0.87 and 0.97 in three
    // full runs on the Zen 5 of session 28 (bench/README.md).
    if (!kSizes[r->z].dram) continue;
    const int iterations = r->kind == ImplKind::reference ? 1 : r->kind == ImplKind::optimized ? kPairedIterations : 4;
    enroll(r.get(), r->name)->Iterations(iterations);
  }
  g_prep = Prepared{};
  g_size = SizeData{};
  g_offset = offset;
  std::string chunk;  // each target's level, as "avx2 l2"
  for (const opt::Target& t : targets) {
    chunk += (chunk.empty() ? "" : ", ") + opt::target_name(t.bits) + (opt::chunk_prefetch_l1(t.bits) ? " l1" : " l2");
  }
  std::fprintf(stderr,
               "qconform bench: buffers %zu bytes past a 64-byte boundary; far prefetches %s; next-chunk prefetch "
               "level: %s\n",
               offset, opt::far_prefetch() ? "on" : "off", chunk.c_str());
  Collector collector(by_name);
  const std::size_t ran = rows.empty() ? 0 : benchmark::RunSpecifiedBenchmarks(&collector, std::string("all"));
  g_prep = Prepared{};
  g_size = SizeData{};
  if (ran == 0) {
    std::fprintf(stderr, "qconform bench: no benchmark matches '%.*s'\n", static_cast<int>(filter.size()), filter.data());
    return 1;
  }

  // Ratios within the run: the ceiling and the reference of the same case and size.
  auto find = [&](std::size_t c, std::size_t z, ImplKind kind) -> std::optional<double> {
    for (const auto& r : rows) {
      if (r->c == c && r->z == z && r->kind == kind) return r->seconds;
    }
    return std::nullopt;
  };
  bool failed = false;
  if (json) std::printf("[\n");
  else {
    std::printf("%-20s %-7s %-10s %-8s %12s %9s %10s %11s\n", "case", "size", "impl", "target", "ns/element", "GB/s",
                "x ceiling", "x reference");
  }
  bool first = true;
  for (const auto& r : rows) {
    if (!r->seconds && r->error.empty()) continue;  // filtered out
    failed = failed || !r->error.empty();
    const double n = static_cast<double>(kSizes[r->z].bytes / sizeof(float));
    std::optional<double> ns, gbs, to_ceiling, to_reference;
    if (r->seconds && *r->seconds > 0) {
      ns = *r->seconds * 1e9 / n;
      gbs = static_cast<double>(kSizes[r->z].bytes) / *r->seconds / 1e9;
      if (!r->paired.empty()) {
        to_ceiling = median(r->paired);
      } else if (const auto ce = find(r->c, r->z, ImplKind::ceiling)) {
        to_ceiling = *ce / *r->seconds;
      }
      if (const auto re = find(r->c, r->z, ImplKind::reference)) to_reference = *re / *r->seconds;
    }
    if (json) {
      std::printf("%s  {\"case\": \"%s\", \"bytes\": %zu, \"impl\": \"%s\", \"target\": %s, \"ns_per_element\": %s, "
                  "\"gb_per_s\": %s, \"ratio_to_ceiling\": %s, \"ratio_to_reference\": %s%s}",
                  first ? "" : ",\n", kCases[r->c].name, kSizes[r->z].bytes, r->impl.c_str(),
                  r->target_name.empty() ? "null" : ("\"" + r->target_name + "\"").c_str(), json_number(ns).c_str(),
                  json_number(gbs).c_str(), json_number(to_ceiling).c_str(), json_number(to_reference).c_str(),
                  r->error.empty() ? "" : (", \"error\": \"" + r->error + "\"").c_str());
      first = false;
    } else {
      auto f = [](std::optional<double> v, const char* fmt) {
        char buf[32];
        if (!v) return std::string("-");
        std::snprintf(buf, sizeof buf, fmt, *v);
        return std::string(buf);
      };
      std::printf("%-20s %-7s %-10s %-8s %12s %9s %10s %11s%s\n", kCases[r->c].name, kSizes[r->z].label, r->impl.c_str(),
                  r->target_name.empty() ? "-" : r->target_name.c_str(), f(ns, "%.4f").c_str(), f(gbs, "%.2f").c_str(),
                  f(to_ceiling, "%.3f").c_str(), f(to_reference, "%.1f").c_str(),
                  r->error.empty() ? "" : ("  error: " + r->error).c_str());
    }
  }
  if (json) std::printf("\n]\n");
  benchmark::ClearRegisteredBenchmarks();
  return failed ? 1 : 0;
}

}  // namespace qconform::bench
