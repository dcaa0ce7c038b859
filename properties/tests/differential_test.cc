// Differential properties: every implementation under test gives the reference's bits or its
// error kind, on every SIMD target separately.
#include "support.h"

using namespace qconform;

// One named property per family; each runs on every implementation under test.
#define QC_DIFFERENTIAL(Name, body)                                   \
  RC_GTEST_PROP(Differential, Name, ()) {                             \
    bool first = true;                                                \
    for (const auto& impl : test::under_test()) {                     \
      props::tag_cases = first;                                       \
      first = false;                                                  \
      props::body(*impl);                                             \
    }                                                                 \
    props::tag_cases = true;                                          \
  }

QC_DIFFERENTIAL(Quantize, quantize)
QC_DIFFERENTIAL(Dequantize, dequantize)
QC_DIFFERENTIAL(PackUnpackSerializeParse, layout)
QC_DIFFERENTIAL(Calibrate, calibrate)
QC_DIFFERENTIAL(RoundUpScale, round_up)
QC_DIFFERENTIAL(Minifloat, minifloat)

TEST(Differential, EveryImplementationIsExercised) {
  // A build with the optimized library must put each supported target under test.
  const auto names = implementation_names();
  for (const auto& n : names) {
    if (n == "reference" || n == "optimized") continue;
    bool found = false;
    for (const auto& impl : test::under_test()) found = found || impl->name() == n;
    EXPECT_TRUE(found) << n << " is available but not under test";
  }
  std::printf("implementations under test: %zu\n", test::under_test().size());
}
