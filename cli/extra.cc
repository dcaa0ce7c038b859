// The campaign and tooling subcommands. Exit statuses: 0 conformant / done, 1 nonconformant or a
// failed check, 2 usage errors (as everywhere in the CLI).
#include "extra.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "qconform/campaign.h"
#include "qconform/implementation.h"
#include "qconform/plugin_host.h"
#include "qconform/vectors.h"
#if QCONFORM_HAVE_BENCH
#include "qconform/bench.h"
#endif
#if QCONFORM_HAVE_FUZZ_PRODUCER
#include "qconform/fuzz_producer.h"
#endif

namespace qconform::cli {
namespace {

namespace fs = std::filesystem;

// The repository's corpus/: found upwards from the working directory, else the source tree
// this binary was built from.
std::string find_corpus() {
  for (fs::path p = fs::current_path(); !p.empty(); p = p.parent_path()) {
    if (fs::is_directory(p / "corpus" / "scheme_qparams")) return (p / "corpus").string();
    if (p == p.parent_path()) break;
  }
#ifdef QCONFORM_SOURCE_DIR
  if (fs::is_directory(fs::path(QCONFORM_SOURCE_DIR) / "corpus")) return (fs::path(QCONFORM_SOURCE_DIR) / "corpus").string();
#endif
  return {};
}

// The libFuzzer build of `scripts/fuzz build`, beside the corpus.
std::string find_fuzz_dir(const std::string& corpus) {
  if (corpus.empty()) return {};
  const fs::path bin = fs::path(corpus).parent_path() / "build" / "fuzz-clang" / "fuzz" / "bin";
  return fs::is_directory(bin) ? bin.string() : std::string();
}

std::unique_ptr<Implementation> resolve(const std::string& name, std::string& why) {
  if (auto i = make_implementation(name)) return i;
  if (name.find('/') != std::string::npos || name.ends_with(".so")) {
    auto p = load_plugin(name);
    if (!p.impl) why = "cannot load plugin " + name + ": " + p.error;
    return std::move(p.impl);
  }
  why = "unknown implementation '" + name + "'";
  return nullptr;
}

struct Commands final : Extra {
  CLI::App* run = nullptr;
  CLI::App* vectors = nullptr;
  CLI::App* vexport = nullptr;
  CLI::App* vverify = nullptr;
  CLI::App* bench = nullptr;
  CLI::App* decode = nullptr;

  campaign::Options opt;
  std::vector<std::string> impls;
  bool json = false;
  std::string dir, impl = "optimized", file, target = "scheme_qparams", filter;
  double min_time = 0.1;
  std::size_t offset = 0;
  std::string far_prefetch = "auto";
  std::string chunk_prefetch = "auto";

  int dispatch() override {
    if (run && run->parsed()) return do_run();
    if (vexport && vexport->parsed()) return do_export();
    if (vverify && vverify->parsed()) return do_verify();
    if (bench && bench->parsed()) return do_bench();
    if (decode && decode->parsed()) return do_decode();
    return -1;
  }

  int do_run() {
    opt.impls = impls;
    opt.progress_tty = ::isatty(2) != 0 && !json;
    if (opt.corpus_dir.empty()) opt.corpus_dir = find_corpus();
    if (opt.fuzz_dir.empty()) opt.fuzz_dir = find_fuzz_dir(opt.corpus_dir);
    if (opt.regressions_dir.empty()) opt.regressions_dir = "qconform-findings";
    const auto report = campaign::run(opt, std::cerr);
    if (json) {
      std::cout << campaign::to_json(report).dump(2) << "\n";
    } else {
      campaign::print(report, std::cout);
    }
    if (report.exit_code == 2) {
      for (const auto& n : report.notes) std::cerr << "qconform: usage: " << n << "\n";
    }
    return report.exit_code;
  }

  int do_export() {
    vectors::ExportSummary s;
    if (auto err = vectors::export_to(dir, &s); !err.empty()) {
      std::cerr << "qconform: " << err << "\n";
      return 2;
    }
    std::cout << "wrote " << s.quantize << " quantize, " << s.dequantize << " dequantize and " << s.calibrate
              << " calibrate vectors to " << dir << " (schema version " << vectors::kSchemaVersion << ")\n";
    return 0;
  }

  int do_verify() {
    std::string why;
    auto i = resolve(impl, why);
    if (!i) {
      std::cerr << "qconform: " << why << "\n";
      return 2;
    }
    const auto s = vectors::verify(dir, *i);
    if (!s.error.empty()) {
      std::cerr << "qconform: " << s.error << "\n";
      return 2;
    }
    for (const auto& f : s.failures) std::cout << f.file << ":" << f.line << ": " << f.detail << "\n";
    std::cout << i->name() << ": " << s.checked << " vectors checked, " << s.failures.size() << " failed, " << s.skipped
              << " skipped\n";
    return s.failures.empty() ? 0 : 1;
  }

  int do_bench() {
#if QCONFORM_HAVE_BENCH
    qconform::optimized::set_far_prefetch(*qconform::bench::far_prefetch_mode(far_prefetch));  // checked by the options
    qconform::optimized::set_chunk_prefetch(*qconform::bench::chunk_prefetch_mode(chunk_prefetch));
    return qconform::bench::run(json, min_time, filter, offset);
#else
    std::cerr << "qconform: this build has no benchmarks\n";
    return 2;
#endif
  }

  int do_decode() {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "qconform: cannot read " << file << "\n";
      return 2;
    }
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
#if QCONFORM_HAVE_FUZZ_PRODUCER
    std::cout << fuzz::describe(target, bytes);
    return 0;
#else
    std::cerr << "qconform: this build has no fuzz producer\n";
    return 2;
#endif
  }
};

}  // namespace

std::unique_ptr<Extra> add_extra_commands(CLI::App& app) {
  auto c = std::make_unique<Commands>();
  c->run = app.add_subcommand("run", "the conformance campaign (exit 0 conformant, 1 not, 2 usage)");
  c->run->add_option("--budget", c->opt.budget_seconds, "seconds to spend (about)")->capture_default_str();
  c->run->add_option("--seed", c->opt.seed, "seed (0: from the clock; printed in the report)");
  c->run->add_option("--impl", c->impls, "implementation or plugin path (repeatable; default: every optimized target)");
  c->run->add_flag("--self-test", c->opt.self_test, "run against the mutant catalogue and print the kill table");
  c->run->add_option("--findings", c->opt.regressions_dir, "where reproducers are written")->capture_default_str();
  c->run->add_option("--corpus", c->opt.corpus_dir, "corpus directory to replay (default: the repository's corpus/)");
  c->run->add_option("--fuzz-dir", c->opt.fuzz_dir,
                     "libFuzzer binaries for a short session each (default: build/fuzz-clang/fuzz/bin when built)");
  c->run->add_flag("--json", c->json, "print the report as one JSON object");

  c->vectors = app.add_subcommand("vectors", "golden conformance vectors (docs/vectors.md)");
  c->vectors->require_subcommand(1);
  c->vexport = c->vectors->add_subcommand("export", "write the vectors as JSON Lines into DIR");
  c->vexport->add_option("dir", c->dir, "output directory")->required();
  c->vverify = c->vectors->add_subcommand("verify", "check an implementation against the vectors in DIR");
  c->vverify->add_option("dir", c->dir, "vector directory")->required();
  c->vverify->add_option("--impl", c->impl, "implementation or plugin path")->capture_default_str();

  c->bench = app.add_subcommand("bench", "benchmarks: reference, every supported target, bandwidth ceiling");
  c->bench->add_flag("--json", c->json, "one JSON object per case");
  c->bench->add_option("--min-time", c->min_time, "seconds per small case")->capture_default_str();
  c->bench->add_option("--filter", c->filter, "regex over case/size/impl");
  c->bench->add_option("--offset", c->offset, "bytes past a 64-byte boundary of every buffer (0, 4, ..., 60)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) {
            const bool ok = !v.empty() && v.size() <= 2 && v.find_first_not_of("0123456789") == std::string::npos &&
                            std::stoul(v) % 4 == 0 && std::stoul(v) <= 60;  // bench::kMaxOffset
            return ok ? std::string() : "not a multiple of 4 from 0 to 60: " + v;
          },
          "0..60, MULTIPLE OF 4"));
  CLI::Option* far = c->bench
      ->add_option("--far-prefetch", c->far_prefetch,
                   "far prefetches into L2 in the single-pass loops (auto: on for Intel CPUs)")
      ->capture_default_str();
  CLI::Option* chunk = c->bench
      ->add_option("--chunk-prefetch", c->chunk_prefetch,
                   "where calibrate+quantize's codes pass prefetches the next chunk (auto: l1 on the AVX-512 "
                   "targets of AMD Zen 5 and later, else l2)")
      ->capture_default_str();
#if QCONFORM_HAVE_BENCH
  far->check(CLI::Validator(
      [](std::string& v) { return qconform::bench::far_prefetch_mode(v) ? std::string() : "not auto, on or off: " + v; },
      "auto|on|off"));
  chunk->check(CLI::Validator(
      [](std::string& v) { return qconform::bench::chunk_prefetch_mode(v) ? std::string() : "not auto, l1 or l2: " + v; },
      "auto|l1|l2"));
#else
  static_cast<void>(far);
  static_cast<void>(chunk);
#endif

  c->decode = app.add_subcommand("decode", "print what a fuzz corpus file encodes");
  c->decode->add_option("file", c->file, "corpus file")->required();
  c->decode->add_option("--target", c->target, "fuzz target whose format the file has")->capture_default_str();
  return c;
}

}  // namespace qconform::cli
