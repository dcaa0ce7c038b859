// The campaign engine. Stages share one clock: each gets a share of the budget and stops
// taking new cases when its share is spent.
#include "qconform/campaign.h"

#include <rapidcheck.h>
#include <rapidcheck/detail/Configuration.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>

#include "../../properties/mutants/mutants.h"
#include "properties.h"
#include "qconform/corpus.h"
#include "qconform/fuzz_producer.h"
#include "qconform/implementation.h"
#include "qconform/plugin_host.h"
#include "qconform/vectors.h"

namespace qconform::campaign {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Progress {
  std::ostream& os;
  bool tty;
  Clock::time_point start;
  double budget;
  Clock::time_point last{};
  void update(const std::string& stage, const std::string& impl, std::size_t cases, bool final_line) {
    const double el = since(start);
    if (tty) {
      if (!final_line && std::chrono::duration<double>(Clock::now() - last).count() < 0.2) return;
      last = Clock::now();
      os << "\r\033[K" << std::left << std::setw(11) << stage << ' ' << std::setw(26) << impl << " cases "
         << std::setw(8) << cases << " elapsed " << std::fixed << std::setprecision(1) << el << "s remaining "
         << std::max(0.0, budget - el) << 's' << (final_line ? "\n" : "") << std::flush;
    } else if (final_line) {
      os << stage << ' ' << impl << ": " << cases << " cases, elapsed " << std::fixed << std::setprecision(1) << el
         << "s, remaining " << std::max(0.0, budget - el) << "s\n"
         << std::flush;
    }
  }
};

std::string slug(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  }
  return s;
}

// Runs one property family against one implementation until `seconds` are spent (at least one
// round of `per_round` cases). Returns the cases run and the first failure, if any.
struct FamilyResult {
  std::size_t cases = 0;
  bool failed = false;
  std::size_t cases_to_failure = 0;
  std::string report, reproduce;
  std::optional<corpus::File> file;  // the shrunk case as a corpus file
};

FamilyResult run_family(const props::Property& prop, const Implementation& impl, std::uint64_t seed, double seconds,
                        int per_round) {
  FamilyResult fr;
  (void)corpus::take_recorded();
  const auto start = Clock::now();
  for (int round = 0; round == 0 || since(start) < seconds; ++round) {
    rc::detail::TestParams params;
    params.seed = seed + static_cast<std::uint64_t>(round) * 0x9E3779B97F4A7C15ull;
    params.maxSuccess = per_round;
    params.maxSize = 100;
    rc::detail::TestMetadata meta;
    meta.id = std::string(prop.name) + "/" + impl.name();
    meta.description = meta.id;
    std::size_t runs = 0;
    std::size_t first = 0;
    const auto result = rc::detail::checkTestable(
        [&] {
          ++runs;
          try {
            prop.body(impl);
          } catch (...) {
            if (!first) first = runs;
            throw;
          }
        },
        meta, params);
    rc::detail::FailureResult failure;
    if (result.match(failure)) {
      fr.failed = true;
      fr.cases += first ? first : runs;
      fr.cases_to_failure = fr.cases;
      fr.report = failure.description;
      rc::detail::Configuration cfg;
      cfg.reproduce[meta.id] = failure.reproduce;
      fr.reproduce = rc::detail::configToMinimalString(cfg);
      fr.file = corpus::take_recorded();
      return fr;
    }
    rc::detail::SuccessResult ok;
    fr.cases += result.match(ok) ? static_cast<std::size_t>(ok.numSuccess) : runs;
  }
  return fr;
}

// Writes the finding's report as a .txt file and, when the case has one, its corpus file under
// regressions_dir/<fuzz target>/, and sets f.file and f.corpus_file.
void write_reproducer(const Options& o, Finding& f, std::size_t n, const std::optional<corpus::File>& file) {
  if (o.regressions_dir.empty()) return;
  std::error_code ec;
  fs::create_directories(o.regressions_dir, ec);
  if (file) {
    f.corpus_file = corpus::write(*file, o.regressions_dir, slug(f.impl) + "-" + slug(f.check));
    f.report += "\n  as a " + file->target + " corpus file:\n" + file->text;
  }
  const fs::path p = fs::path(o.regressions_dir) / (slug(f.impl) + "-" + slug(f.check) + "-" + std::to_string(n) + ".txt");
  std::ofstream out(p);
  out << "# qconform nonconformance (" << f.stage << ", " << f.check << ")\n# implementation: " << f.impl << "\n";
  if (!f.reproduce.empty()) out << "# rerun: RC_PARAMS=\"" << f.reproduce << "\"\n";
  if (!f.corpus_file.empty()) {
    // A written case names its fuzz target; a corpus or crash file sits in its target's folder.
    const std::string target = file ? file->target : fs::path(f.corpus_file).parent_path().filename().string();
    out << "# corpus file: " << f.corpus_file << " (a " << target << " input: in corpus/" << target
        << "/, `ctest -L corpus` replays it)\n";
  }
  out << f.report << "\n";
  out.close();
  if (out) f.file = p.string();
}

// Every corpus file through the checks, against one implementation (corpus.h).
Row corpus_stage(const Options& o, const Implementation& impl, double seconds, std::vector<Finding>& findings) {
  Row row{"corpus", impl.name()};
  const auto t0 = Clock::now();
  const auto r = corpus::replay(impl, o.corpus_dir, t0 + std::chrono::duration_cast<Clock::duration>(
                                                             std::chrono::duration<double>(seconds)));
  row.checks = fuzz::target_names().size();
  row.cases = r.files - r.skipped;
  row.failures = r.failures.size();
  for (std::size_t k = 0; k < r.failures.size() && k < 5; ++k) {
    const fs::path p(r.failures[k].file);
    Finding f{"corpus", impl.name(), p.parent_path().filename().string() + "/" + p.filename().string(),
              r.failures[k].report, "", "", r.failures[k].file};
    write_reproducer(o, f, findings.size(), std::nullopt);
    findings.push_back(f);
  }
  row.seconds = since(t0);
  return row;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// libFuzzer binaries answer -help=1 with their flags; the replay main does not.
bool is_libfuzzer(const fs::path& bin) {
  if (!fs::is_regular_file(bin)) return false;
  const fs::path log = fs::temp_directory_path() / ("qconform-fuzz-help-" + std::to_string(::getpid()));
  const int rc = std::system((quote(bin.string()) + " -help=1 >" + quote(log.string()) + " 2>&1").c_str());
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove(log, ec);
  return rc == 0 && text.find("max_total_time") != std::string::npos;
}

// A short libFuzzer session per fuzz target (each compares the reference with the optimized
// library on every supported target). New inputs go to a temporary directory; crashes to
// regressions_dir/crashes/<target>/, and each one is a finding.
std::vector<Row> fuzz_stage(const Options& o, const std::vector<fs::path>& bins, double seconds, Progress& progress,
                            std::vector<Finding>& findings) {
  std::vector<Row> rows;
  const int each = std::max(1, static_cast<int>(seconds / static_cast<double>(bins.size()) - 1.0));
  const fs::path work = fs::temp_directory_path() / ("qconform-fuzz-" + std::to_string(::getpid()));
  for (const auto& bin : bins) {
    const std::string target = bin.filename().string();
    Row row{"fuzz", target};
    row.checks = 1;
    const auto t0 = Clock::now();
    std::error_code ec;
    const fs::path fresh = work / target, log = work / (target + ".log");
    const fs::path crashes = fs::path(o.regressions_dir.empty() ? "." : o.regressions_dir) / "crashes" / target;
    fs::create_directories(fresh, ec);
    fs::create_directories(crashes, ec);
    std::string cmd = quote(bin.string()) + " -max_total_time=" + std::to_string(each) +
                      " -print_final_stats=1 -artifact_prefix=" + quote(crashes.string() + "/");
    // The target's options file (OSS-Fuzz's format: "key = value" lines under [libfuzzer]).
    std::ifstream opts(bin.string() + ".options");
    for (std::string opt; std::getline(opts, opt);) {
      const auto eq = opt.find('=');
      if (opt.empty() || opt[0] == '[' || opt[0] == '#' || eq == std::string::npos) continue;
      auto trim = [](std::string t) {
        t.erase(0, t.find_first_not_of(" \t"));
        t.erase(t.find_last_not_of(" \t\r") + 1);
        return t;
      };
      const std::string key = trim(opt.substr(0, eq)), value = trim(opt.substr(eq + 1));
      if (key == "dict") {
        cmd += " -dict=" + quote((bin.parent_path() / value).string());
      } else if (!key.empty() && key != "max_total_time" && key != "artifact_prefix") {
        cmd += " -" + key + "=" + quote(value);
      }
    }
    cmd += " " + quote(fresh.string());
    if (!o.corpus_dir.empty() && fs::is_directory(fs::path(o.corpus_dir) / target)) {
      cmd += " " + quote((fs::path(o.corpus_dir) / target).string());
    }
    cmd += " >" + quote(log.string()) + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(log);
    std::string line, tail;
    std::vector<std::string> lines;
    while (std::getline(in, line)) {
      if (line.rfind("stat::number_of_executed_units:", 0) == 0) row.cases = std::stoull(line.substr(31));
      lines.push_back(line);
    }
    if (rc != 0) {
      ++row.failures;
      for (std::size_t k = lines.size() > 40 ? lines.size() - 40 : 0; k < lines.size(); ++k) tail += "  " + lines[k] + "\n";
      Finding f{"fuzz", "reference+optimized", target, "libFuzzer exited with status " + std::to_string(rc) + ":\n" + tail, "", "", ""};
      for (const auto& e : fs::directory_iterator(crashes, ec)) f.corpus_file = e.path().string();
      write_reproducer(o, f, findings.size(), std::nullopt);
      findings.push_back(f);
    }
    row.seconds = since(t0);
    progress.update("fuzz", target, row.cases, true);
    rows.push_back(row);
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  return rows;
}

// The exhaustive sweep that fits: consecutive f32 patterns from a seeded offset through the
// minifloat conversions (scale 1) and q8s division/rounding, until the time share is spent.
Row sweep(const Implementation& impl, std::uint64_t seed, double seconds, std::vector<Finding>& findings,
          std::optional<corpus::File>& sweep_case) {
  Row row{"exhaustive", impl.name()};
  const auto start = Clock::now();
  if (!impl.supports(Op::quantize)) return row;
  std::vector<std::pair<Scheme, float>> schemes;
  for (const char* v : {"e4m3", "e5m2", "e2m1"}) schemes.push_back({parse_scheme(std::string("value=") + v + ",store=native").value(), 1.0f});
  schemes.push_back({parse_scheme("value=q8s,store=native").value(), 0x1p-3f});
  schemes.push_back({parse_scheme("value=q4s,store=native").value(), 0.0137f});
  constexpr std::size_t kChunk = 4096;
  const Shape shape{kChunk};
  std::vector<float> data(kChunk);
  std::uint32_t at = static_cast<std::uint32_t>(seed * 4096);
  row.checks = schemes.size();
  while (since(start) < seconds && row.cases < (std::uint64_t{1} << 32)) {
    for (std::size_t i = 0; i < kChunk; ++i) {
      const float x = std::bit_cast<float>(at + static_cast<std::uint32_t>(i));
      data[i] = std::isnan(x) ? 0.0f : x;
    }
    for (const auto& [s, scale] : schemes) {
      const std::vector<float> sc{scale};
      const auto r = quantize(s, shape, data, sc, std::nullopt);
      const auto g = impl.quantize(s, shape, data, sc, std::nullopt, std::nullopt);
      if (r.ok() != g.ok() || (r.ok() && r->codes != g->codes)) {
        ++row.failures;
        if (row.failures == 1) {
          std::size_t i = 0;
          while (r.ok() && g.ok() && i < kChunk && r->codes[i] == g->codes[i]) ++i;
          std::ostringstream rep;
          const float x = data[i < kChunk ? i : 0];
          sweep_case = corpus::quantize_case({s, {1}, {x}, {scale}, std::nullopt, std::nullopt});
          rep << "exhaustive " << print_scheme(s) << " scale " << checks::hex(scale) << ": ";
          if (r.ok() && g.ok() && i < kChunk) {
            rep << "input " << checks::hex(data[i]) << " expected code " << r->codes[i] << ", got " << g->codes[i];
          } else {
            rep << "reference " << (r.ok() ? "ok" : to_string(r.kind())) << ", got " << (g.ok() ? "ok" : to_string(g.kind()));
          }
          findings.push_back({"exhaustive", impl.name(), "sweep", rep.str(), "", "", ""});
        }
      }
    }
    row.cases += kChunk;
    at += kChunk;
  }
  row.seconds = since(start);
  return row;
}

}  // namespace

Report run(const Options& o, std::ostream& progress_os) {
  Report rep;
  const auto start = Clock::now();
  rep.seed = o.seed ? o.seed : static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) | 1;
  Progress progress{progress_os, o.progress_tty, start, o.budget_seconds};

  // Implementations under test.
  std::vector<std::unique_ptr<Implementation>> impls;
  std::vector<std::string> descriptions;
  if (o.self_test) {
    for (const auto& e : mutants::kCatalogue) {
      impls.push_back(mutants::make(e.kind));
      descriptions.push_back(e.description);
    }
  } else if (o.impls.empty()) {
    for (auto& i : available_implementations()) {
      if (i->name() != "reference") impls.push_back(std::move(i));
    }
    if (impls.empty()) {
      impls.push_back(std::make_unique<ReferenceImplementation>());
      rep.notes.push_back("no optimized targets in this build: the reference is checked against itself and the oracle");
    }
  } else {
    for (const auto& name : o.impls) {
      if (auto i = make_implementation(name)) {
        impls.push_back(std::move(i));
      } else if (name.find('/') != std::string::npos || name.ends_with(".so")) {
        auto p = load_plugin(name);
        if (!p.impl) {
          rep.notes.push_back("cannot load plugin " + name + ": " + p.error);
          rep.exit_code = 2;
          return rep;
        }
        impls.push_back(std::move(p.impl));
      } else {
        rep.notes.push_back("unknown implementation '" + name + "'");
        rep.exit_code = 2;
        return rep;
      }
    }
  }

  const double budget = std::max(1.0, o.budget_seconds);
  const double n = static_cast<double>(impls.size());

  // libFuzzer sessions need the fuzz build (scripts/fuzz build) and test the built-in
  // implementations, so they run only when those are what is under test.
  std::vector<fs::path> fuzz_bins;
  const bool builtin = !o.self_test && std::all_of(o.impls.begin(), o.impls.end(), [](const std::string& name) {
    return name.rfind("optimized", 0) == 0 || name == "reference";
  });
  if (builtin && !o.fuzz_dir.empty()) {
    for (std::string_view t : fuzz::target_names()) {
      if (is_libfuzzer(fs::path(o.fuzz_dir) / t)) fuzz_bins.push_back(fs::path(o.fuzz_dir) / t);
    }
  }
  if (!o.self_test && fuzz_bins.empty()) {
    rep.notes.push_back(builtin ? "fuzz stage skipped: no libFuzzer build" +
                                      (o.fuzz_dir.empty() ? std::string() : " in " + o.fuzz_dir) +
                                      " (`scripts/fuzz build` makes one)"
                                : "fuzz stage skipped: the fuzz targets test the built-in implementations only");
  }
  if (!o.self_test && (o.corpus_dir.empty() || !fs::is_directory(o.corpus_dir))) {
    rep.notes.push_back("corpus stage skipped: no corpus directory (--corpus DIR)");
  }
  // Shares of the budget: the fuzz sessions a fixed part; per implementation, the corpus a tenth,
  // the properties most of the rest, the exhaustive sweep a fifth (the golden vectors are quick).
  // A libFuzzer session costs about a second beyond its -max_total_time (start-up and the seed
  // corpus), so each target gets its share less that second, and none when under one remains.
  constexpr double kFuzzPart = 0.2, kFuzzOverhead = 1.0;
  if (!fuzz_bins.empty() && kFuzzPart * budget / static_cast<double>(fuzz_bins.size()) - kFuzzOverhead < 1.0) {
    rep.notes.push_back("fuzz stage skipped: a budget of " + std::to_string(static_cast<int>(budget)) +
                        " s leaves under a second per fuzz target (--budget 60 or more runs it)");
    fuzz_bins.clear();
  }
  const double fuzz_share = fuzz_bins.empty() ? 0.0 : kFuzzPart * budget;
  const double per_impl = (budget - fuzz_share) / n;
  const double corpus_share = o.self_test ? 0.0 : 0.1 * per_impl;
  const double prop_share = (o.self_test ? 0.95 : 0.65) * per_impl;
  const double sweep_share = o.self_test ? 0.0 : 0.2 * per_impl;

  // Golden vectors exported from the reference, replayed against each implementation.
  const fs::path vec_dir = fs::temp_directory_path() / ("qconform-vectors-" + std::to_string(::getpid()));
  if (!o.self_test) {
    if (auto err = vectors::export_to(vec_dir.string()); !err.empty()) rep.notes.push_back("vectors: " + err);
  }

  for (std::size_t idx = 0; idx < impls.size(); ++idx) {
    const Implementation& impl = *impls[idx];
    if (!o.self_test) {
      const auto t0 = Clock::now();
      const auto v = vectors::verify(vec_dir.string(), impl);
      Row row{"vectors", impl.name(), 3, v.checked, v.failures.size(), since(t0)};
      for (std::size_t k = 0; k < v.failures.size() && k < 5; ++k) {
        Finding f{"vectors", impl.name(), v.failures[k].file + ":" + std::to_string(v.failures[k].line), v.failures[k].detail, "", "", ""};
        write_reproducer(o, f, rep.findings.size(), std::nullopt);
        rep.findings.push_back(f);
      }
      rep.rows.push_back(row);
      progress.update("vectors", impl.name(), v.checked, true);
      if (!o.corpus_dir.empty() && fs::is_directory(o.corpus_dir)) {
        rep.rows.push_back(corpus_stage(o, impl, corpus_share, rep.findings));
        progress.update("corpus", impl.name(), rep.rows.back().cases, true);
      }
    }

    // Properties: every differential family, the error contract included.
    Row row{"properties", impl.name()};
    const auto t0 = Clock::now();
    Kill kill{impl.name(), o.self_test ? descriptions[idx] : "", "-", 0};
    const auto& families = props::differential();
    for (std::size_t k = 0; k < families.size(); ++k) {
      const auto& prop = families[k];
      const double share = prop_share / static_cast<double>(families.size());
      const auto fr = run_family(prop, impl, rep.seed + k * 7919 + idx * 104729, share, 100);
      ++row.checks;
      row.cases += fr.cases;
      kill.cases += fr.failed ? fr.cases_to_failure : fr.cases;
      progress.update("properties", impl.name(), row.cases, false);
      if (fr.failed) {
        ++row.failures;
        if (o.self_test) {
          kill.killed_by = prop.name;
          break;
        }
        Finding f{"properties", impl.name(), prop.name, fr.report, fr.reproduce, "", ""};
        write_reproducer(o, f, rep.findings.size(), fr.file);
        rep.findings.push_back(f);
      }
    }
    row.seconds = since(t0);
    rep.rows.push_back(row);
    progress.update("properties", impl.name(), row.cases, true);
    if (o.self_test) {
      rep.kills.push_back(kill);
      continue;
    }
    std::optional<corpus::File> sweep_case;
    rep.rows.push_back(sweep(impl, rep.seed, sweep_share, rep.findings, sweep_case));
    if (sweep_case) write_reproducer(o, rep.findings.back(), rep.findings.size() - 1, sweep_case);
    progress.update("exhaustive", impl.name(), rep.rows.back().cases, true);
  }
  if (!fuzz_bins.empty()) {
    for (auto& row : fuzz_stage(o, fuzz_bins, fuzz_share, progress, rep.findings)) rep.rows.push_back(row);
  }
  std::error_code ec;
  fs::remove_all(vec_dir, ec);

  if (o.self_test) {
    std::size_t survived = 0;
    for (const auto& k : rep.kills) survived += k.killed_by == "-";
    rep.exit_code = survived ? 1 : 0;
    if (survived) rep.notes.push_back(std::to_string(survived) + " mutants survived");
  } else {
    rep.exit_code = rep.findings.empty() ? 0 : 1;
  }
  rep.seconds = since(start);
  return rep;
}

void print(const Report& r, std::ostream& out) {
  out << "\nqconform campaign, seed " << r.seed << "\n\n";
  out << std::left << std::setw(12) << "stage" << std::setw(28) << "implementation" << std::right << std::setw(8) << "checks"
      << std::setw(12) << "cases" << std::setw(10) << "failures" << std::setw(10) << "time" << "\n";
  for (const auto& row : r.rows) {
    out << std::left << std::setw(12) << row.stage << std::setw(28) << row.impl << std::right << std::setw(8) << row.checks
        << std::setw(12) << row.cases << std::setw(10) << row.failures << std::setw(9) << std::fixed << std::setprecision(1)
        << row.seconds << "s\n";
  }
  if (!r.kills.empty()) {
    out << "\nmutant kill table\n";
    for (const auto& k : r.kills) {
      out << "  " << std::left << std::setw(46) << k.mutant << ' ' << std::setw(16) << k.killed_by << std::right << std::setw(6)
          << k.cases << " cases  " << k.description << "\n";
    }
  }
  for (const auto& f : r.findings) {
    out << "\nNONCONFORMANCE [" << f.stage << "] " << f.impl << " (" << f.check << ")\n" << f.report << "\n";
    if (!f.reproduce.empty()) out << "  rerun: qconform run --seed " << r.seed << "   or RC_PARAMS=\"" << f.reproduce << "\"\n";
    if (!f.corpus_file.empty()) {
      out << "  corpus file: " << f.corpus_file << "  (qconform decode --target <fuzz target> FILE prints it; copy it into corpus/<fuzz target>/ to keep it)\n";
    }
    if (!f.file.empty()) out << "  report written to " << f.file << "\n";
  }
  for (const auto& n : r.notes) out << "\nnote: " << n << "\n";
  const char* verdict = !r.kills.empty() ? (r.exit_code == 0 ? "SELF-TEST PASSED: every mutant killed" : "SELF-TEST FAILED: a mutant survived")
                        : r.exit_code == 0 ? "CONFORMANT" : r.exit_code == 1 ? "NONCONFORMANT" : "USAGE ERROR";
  out << "\n" << verdict << " ("
      << std::fixed << std::setprecision(1) << r.seconds << "s)\n";
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json j{{"seed", r.seed}, {"exit_code", r.exit_code}, {"seconds", r.seconds},
                   {"conformant", r.exit_code == 0}};
  j["stages"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    j["stages"].push_back({{"stage", row.stage}, {"impl", row.impl}, {"checks", row.checks}, {"cases", row.cases},
                           {"failures", row.failures}, {"seconds", row.seconds}});
  }
  j["nonconformances"] = nlohmann::json::array();
  for (const auto& f : r.findings) {
    j["nonconformances"].push_back({{"stage", f.stage}, {"impl", f.impl}, {"check", f.check}, {"report", f.report},
                                    {"reproduce", f.reproduce}, {"file", f.file}, {"corpus_file", f.corpus_file}});
  }
  if (!r.kills.empty()) {
    j["mutants"] = nlohmann::json::array();
    for (const auto& k : r.kills) j["mutants"].push_back({{"mutant", k.mutant}, {"killed_by", k.killed_by}, {"cases", k.cases}});
  }
  j["notes"] = r.notes;
  return j;
}

}  // namespace qconform::campaign
