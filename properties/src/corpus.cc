// Corpus files <-> conformance cases (see corpus.h). The file format is the fuzz producer's
// (fuzz/producer.h), so the fuzz targets and `qconform decode` read what is written here.
#include "qconform/corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <system_error>

#include "producer.h"
#include "qconform/fuzz_producer.h"

namespace qconform::corpus {
namespace {

namespace fs = std::filesystem;

template <class Case, class Decode>
std::optional<File> file_of(const char* target, const Case& c, Decode decode) {
  std::vector<std::uint8_t> bytes = fuzz::encode(c);
  if (!fuzz::same_case(decode(bytes), c)) return std::nullopt;
  std::string text = fuzz::describe(target, bytes);
  return File{target, std::move(bytes), std::move(text)};
}

fuzz::SchemeCase scheme_case(const Scheme& s) { return {s, std::nullopt, std::nullopt}; }

std::uint64_t fnv1a(std::span<const std::uint8_t> b) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t x : b) h = (h ^ x) * 0x100000001b3ull;
  return h;
}

thread_local std::optional<File> recorded;

std::vector<std::uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A scheme the implementation can be given: any model, or for one that takes text, a scheme
// whose canonical text parses back to it.
bool askable_scheme(const Implementation& impl, const fuzz::SchemeCase& s) {
  if (s.text_error) return false;
  if (!impl.text_schemes()) return true;
  const auto back = parse_scheme(print_scheme(s.scheme));
  return back.ok() && back.value() == s.scheme;
}

// The first non-empty report of a sequence of checks.
template <class... Reports>
std::string first(Reports&&... reports) {
  std::string out;
  ((out.empty() ? void(out = reports()) : void()), ...);
  return out;
}

}  // namespace

std::optional<File> quantize_case(const checks::QuantizeCase& c) {
  const fuzz::QuantCase q{scheme_case(c.scheme), c.shape, c.scales, c.global, c.table, c.data};
  return file_of("scheme_qparams", q, fuzz::decode_quant);
}

std::optional<File> calibrate_case(const checks::QuantizeCase& c, Calibration method) {
  const fuzz::CalibCase q{scheme_case(c.scheme), c.shape, method, c.data};
  return file_of("calibrate", q, fuzz::decode_calib);
}

std::optional<File> minifloat_case(float x) {
  const float xs[] = {x};
  std::vector<std::uint8_t> bytes = fuzz::encode_minifloat_values(xs);
  const auto back = fuzz::decode_minifloat_values(bytes);
  if (back.size() != 1 || std::bit_cast<std::uint32_t>(back[0]) != std::bit_cast<std::uint32_t>(x)) return std::nullopt;
  std::string text = fuzz::describe("minifloat", bytes);
  return File{"minifloat", std::move(bytes), std::move(text)};
}

std::optional<File> round_up_case(float s, ScaleDtype dtype) {
  Scheme scheme;
  scheme.value = Value::q8s;
  scheme.store = Store{StoreKind::native, 0};
  scheme.block = BlockLevel{{1}, dtype};
  return quantize_case({scheme, {1}, {1.0f}, {s}, std::nullopt, std::nullopt});
}

std::string write(const File& f, const fs::path& root, const std::string& prefix) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(f.bytes)));
  const fs::path dir = root / f.target;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path p = dir / (prefix + "-" + hash);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(f.bytes.data()), static_cast<std::streamsize>(f.bytes.size()));
  out.close();
  return out ? p.string() : std::string();
}

void record(std::optional<File> f) { recorded = std::move(f); }

std::optional<File> take_recorded() {
  std::optional<File> f = std::move(recorded);
  recorded.reset();
  return f;
}

std::string replay_file(const Implementation& impl, const std::string& target, std::span<const std::uint8_t> bytes,
                        bool* skipped) {
  bool skip = false;
  std::string report;
  if (target == "scheme_qparams") {
    const fuzz::QuantCase q = fuzz::decode_quant(bytes);
    const checks::QuantizeCase c{q.scheme.scheme, q.shape, q.data, q.scales, q.global, q.table};
    skip = !askable_scheme(impl, q.scheme) || (c.table && !impl.lookup_tables());
    if (!skip) {
      report = first([&] { return checks::quantize(impl, c); }, [&] { return checks::error_contract(impl, c); },
                     [&] { return checks::dequantize(impl, c); }, [&] { return checks::layout(impl, c, 0, 0x01); });
    }
  } else if (target == "calibrate") {
    const fuzz::CalibCase q = fuzz::decode_calib(bytes);
    skip = !askable_scheme(impl, q.scheme) || !impl.supports(Op::calibrate);
    if (!skip) report = checks::calibrate(impl, {q.scheme.scheme, q.shape, q.data, {}, std::nullopt, std::nullopt}, q.method);
  } else if (target == "minifloat") {
    skip = !impl.supports(Op::minifloat) && !impl.supports(Op::round_up);
    for (float x : fuzz::decode_minifloat_values(bytes)) {
      if (impl.supports(Op::minifloat)) {
        for (Value v : {Value::e4m3, Value::e5m2, Value::e2m1}) {
          if (report.empty()) report = checks::minifloat(impl, x, v);
        }
      }
      if (impl.supports(Op::round_up)) {
        for (ScaleDtype d : {ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3}) {
          if (report.empty()) report = checks::round_up(impl, std::fabs(x), d);
        }
      }
    }
  } else if (target == "parse_bytes") {
    const fuzz::ParseCase q = fuzz::decode_parse(bytes);
    skip = !askable_scheme(impl, q.scheme) || !(impl.supports(Op::parse) || impl.supports(Op::dequantize)) ||
           (q.table && !impl.lookup_tables());
    if (!skip) {
      report = first([&] { return checks::parse_bytes(impl, q.scheme.scheme, q.shape, q.bytes, table_of(q.table)); },
                     [&] { return checks::dequantize_bytes(impl, q.scheme.scheme, q.shape, q.bytes, table_of(q.table)); });
    }
  } else if (target == "dequantize") {
    const fuzz::DequantCase q = fuzz::decode_dequant(bytes);
    skip = !askable_scheme(impl, q.scheme) || !impl.supports(Op::dequantize) || (q.table && !impl.lookup_tables());
    if (!skip) {
      const QTensor t{q.scheme.scheme, q.shape, q.codes, q.scales, q.global};
      report = checks::dequantize_tensor(impl, t, table_of(q.table));
    }
  } else {
    skip = true;  // scheme_text: the scheme parser is not an operation of an implementation
  }
  if (skipped) *skipped = skip;
  return report;
}

Replay replay(const Implementation& impl, const fs::path& root, std::chrono::steady_clock::time_point deadline) {
  Replay out;
  for (std::string_view target : fuzz::target_names()) {
    const fs::path dir = root / target;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      if (std::chrono::steady_clock::now() >= deadline) {
        out.complete = false;
        return out;
      }
      bool skipped = false;
      const std::vector<std::uint8_t> bytes = read_all(p);
      std::string report = replay_file(impl, std::string(target), bytes, &skipped);
      ++out.files;
      out.skipped += skipped;
      if (!report.empty()) out.failures.push_back({p.string(), std::move(report)});
    }
  }
  return out;
}

}  // namespace qconform::corpus
