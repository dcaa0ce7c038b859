// The property suites' main: GoogleTest, plus a listener that writes the shrunk counterexample
// of each failing property as a corpus file (SPEC text form printed beside it), so that
// `ctest -L corpus` replays it from then on. The directory is $QCONFORM_REGRESSION_DIR, else
// the repository's corpus/.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "qconform/corpus.h"

#ifndef QCONFORM_CORPUS_DIR
#error "QCONFORM_CORPUS_DIR must name the repository's corpus/ directory"
#endif

namespace {

class RegressionWriter : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo&) override { (void)qconform::corpus::take_recorded(); }
  void OnTestEnd(const testing::TestInfo& info) override {
    auto f = qconform::corpus::take_recorded();
    if (!info.result()->Failed() || !f) return;
    const char* env = std::getenv("QCONFORM_REGRESSION_DIR");
    const std::string root = env && *env ? env : QCONFORM_CORPUS_DIR;
    const std::string path = qconform::corpus::write(
        *f, root, "regression-" + std::string(info.test_suite_name()) + "." + info.name());
    std::printf("shrunk counterexample (replayed by `ctest -L corpus` as a %s input):\n%s\n", f->target.c_str(),
                f->text.c_str());
    if (path.empty()) {
      std::printf("could not write the regression file under %s\n", root.c_str());
    } else {
      std::printf("regression file written: %s (commit it with the fix)\n", path.c_str());
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  testing::UnitTest::GetInstance()->listeners().Append(new RegressionWriter);
  return RUN_ALL_TESTS();
}
