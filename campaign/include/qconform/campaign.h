// The conformance campaign (`qconform run`): corpus and golden-vector replay, every property
// family at a time budget, the exhaustive sweeps that fit and short fuzz sessions, against
// one or more implementations; a report table and a reproducer for each nonconformance.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qconform::campaign {

struct Options {
  double budget_seconds = 60;
  std::uint64_t seed = 0;          // 0: drawn from the clock (printed, so a run can be repeated)
  std::vector<std::string> impls;  // names or plugin paths; empty: every optimized target
  bool self_test = false;          // the mutant catalogue instead of `impls`
  std::string corpus_dir;          // corpus/ to replay, when it exists
  std::string regressions_dir;     // where reproducers of nonconformances are written
  std::string fuzz_dir;            // libFuzzer binaries for a short session each, when present
  bool progress_tty = false;       // live progress line instead of plain lines
};

struct Row {
  std::string stage, impl;
  std::size_t checks = 0, cases = 0, failures = 0;
  double seconds = 0;
};

struct Finding {
  std::string stage, impl, check;
  std::string report;     // expected vs actual bits and the case in SPEC text form
  std::string reproduce;  // RC_PARAMS value, for property findings
  std::string file;       // the report written under regressions_dir
  std::string corpus_file;  // the case as a corpus file (regressions_dir/<fuzz target>/...): copy it
                            // into corpus/<fuzz target>/ and ctest replays it from then on
};

struct Kill {
  std::string mutant, description, killed_by;
  std::size_t cases = 0;
};

struct Report {
  std::uint64_t seed = 0;
  std::vector<Row> rows;
  std::vector<Finding> findings;
  std::vector<Kill> kills;       // self-test only
  std::vector<std::string> notes;
  int exit_code = 0;             // 0 conformant, 1 nonconformant, 2 usage error
  double seconds = 0;
};

[[nodiscard]] Report run(const Options& options, std::ostream& progress);
void print(const Report& report, std::ostream& out);
[[nodiscard]] nlohmann::json to_json(const Report& report);

}  // namespace qconform::campaign
