// The mutant catalogue must be killed by the default property run: each mutant runs through
// every differential family with RapidCheck's default budget, and survives only if none fails.
#include <cstdio>

#include "../mutants/mutants.h"
#include "support.h"

using namespace qconform;

TEST(Mutants, EveryMutantIsKilledByTheDefaultPropertyRun) {
  std::printf("%-40s %-16s %s\n", "mutant", "killed by", "cases to detection");
  std::size_t killed = 0;
  for (const auto& entry : mutants::kCatalogue) {
    const auto mutant = mutants::make(entry.kind);
    std::string by = "-";
    std::size_t cases = 0;
    for (const auto& prop : props::differential()) {
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
        break;
      }
    }
    if (by != "-") ++killed;
    std::printf("%-40s %-16s %zu\n", entry.name, by.c_str(), cases);
    EXPECT_NE(by, "-") << "mutant survived: " << entry.name << " (" << entry.description << ")";
  }
  std::printf("killed %zu of %zu mutants\n", killed, std::size(mutants::kCatalogue));
}
