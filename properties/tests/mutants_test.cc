// The mutant catalogue must be killed by the default property run: each mutant runs through
// every differential family with RapidCheck's default budget, and survives only if none fails.
#include <cstdio>

#include "../mutants/mutants.h"
#include "qconform/corpus.h"
#include "support.h"

using namespace qconform;

TEST(Mutants, EveryMutantIsKilledByTheDefaultPropertyRun) {
  std::printf("%-40s %-16s %-20s %s\n", "mutant", "killed by", "cases to detection", "regression file");
  std::size_t killed = 0;
  for (const auto& entry : mutants::kCatalogue) {
    const auto mutant = mutants::make(entry.kind);
    std::string by = "-";
    std::size_t cases = 0;
    std::optional<corpus::File> regression;
    for (const auto& prop : props::differential()) {
      (void)corpus::take_recorded();
      std::size_t runs = 0;
      bool first_failure_seen = false;
      std::size_t detection = 0;
      // A fixed seed keeps this ctest reproducible; `qconform run --self-test` draws fresh ones.
      rc::detail::TestParams params;
      params.seed = 20261130;
      params.maxSuccess = 100;
      params.maxSize = 100;
      rc::detail::TestMetadata meta;
      meta.id = std::string(entry.name) + " vs " + prop.name;
      const auto result = rc::detail::checkTestable([&] {
        ++runs;
        try {
          prop.body(*mutant);
        } catch (...) {
          if (!first_failure_seen) {
            first_failure_seen = true;
            detection = runs;
          }
          throw;
        }
      }, meta, params);
      const bool ok = result.template is<rc::detail::SuccessResult>();
      cases += first_failure_seen ? detection : runs;
      if (!ok) {
        by = prop.name;
        regression = corpus::take_recorded();
        break;
      }
    }
    if (by != "-") ++killed;
    std::printf("%-40s %-16s %-20zu %s\n", entry.name, by.c_str(), cases, regression ? regression->target.c_str() : "-");
    EXPECT_NE(by, "-") << "mutant survived: " << entry.name << " (" << entry.description << ")";
    // The shrunk counterexample, written as a corpus file, must still catch the mutant when
    // replayed, and the reference must pass it: that is what makes it a regression test.
    if (by != "-") {
      ASSERT_TRUE(regression.has_value()) << entry.name << ": the failing case was not recorded as a corpus file";
      const std::string caught = corpus::replay_file(*mutant, regression->target, regression->bytes);
      EXPECT_FALSE(caught.empty()) << entry.name << ": its regression file does not catch it:\n" << regression->text;
      EXPECT_EQ(corpus::replay_file(ReferenceImplementation(), regression->target, regression->bytes), "")
          << entry.name << ": the reference fails its own regression file";
    }
  }
  std::printf("killed %zu of %zu mutants\n", killed, std::size(mutants::kCatalogue));
}
