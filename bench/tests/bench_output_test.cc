// What `qconform bench` prints, on a filter that keeps the run short: which rows, which fields,
// and the relations between them. Speed is never asserted here (benchmarks, not tests).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qconform/bench.h"
#include "qconform/optimized.h"

namespace {

using nlohmann::json;
namespace opt = qconform::optimized;

struct Captured {
  int status;
  std::string out;
};

Captured run(bool as_json, const std::string& filter, std::size_t offset = 0) {
  testing::internal::CaptureStdout();
  const int status = qconform::bench::run(as_json, 0.002, filter, offset);
  return {status, testing::internal::GetCapturedStdout()};
}

std::vector<std::string> supported_targets() {
  std::vector<std::string> names;
  for (const opt::Target& t : opt::targets()) {
    if (t.supported) names.push_back(t.name);
  }
  return names;
}

// Relative agreement of two figures printed with 6 significant digits.
bool close(double a, double b) { return std::fabs(a - b) <= 1e-5 * std::fabs(b); }

TEST(BenchJson, OneObjectPerImplementationWithEveryField) {
  const Captured c = run(true, "^quant-q8s-tensor/16KiB/");
  ASSERT_EQ(c.status, 0) << c.out;
  const json rows = json::parse(c.out);
  ASSERT_TRUE(rows.is_array());
  const std::vector<std::string> targets = supported_targets();
  ASSERT_EQ(rows.size(), 2 + targets.size()) << c.out;
  for (const json& r : rows) {
    for (const char* key : {"case", "bytes", "impl", "target", "ns_per_element", "gb_per_s", "ratio_to_ceiling",
                            "ratio_to_reference"}) {
      EXPECT_TRUE(r.contains(key)) << key << " missing in " << r.dump();
    }
    EXPECT_EQ(r["case"], "quant-q8s-tensor");
    EXPECT_EQ(r["bytes"], 16384);
    ASSERT_TRUE(r["ns_per_element"].is_number() && r["gb_per_s"].is_number()) << r.dump();
    const double ns = r["ns_per_element"], gbs = r["gb_per_s"];
    EXPECT_GT(ns, 0.0);
    // 4 bytes of f32 input per element: GB/s = 4 / (ns per element).
    EXPECT_TRUE(close(gbs * ns, 4.0)) << r.dump();
  }
  // The ceiling first (on the best target), then the reference, then each supported target.
  EXPECT_EQ(rows[0]["impl"], "ceiling");
  EXPECT_EQ(rows[0]["target"], opt::target_name(opt::best_target()));
  EXPECT_EQ(rows[0]["ratio_to_ceiling"], 1);
  EXPECT_EQ(rows[1]["impl"], "reference");
  EXPECT_TRUE(rows[1]["target"].is_null());
  EXPECT_EQ(rows[1]["ratio_to_reference"], 1);
  const double ceiling_ns = rows[0]["ns_per_element"], reference_ns = rows[1]["ns_per_element"];
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const json& r = rows[2 + k];
    EXPECT_EQ(r["impl"], "optimized");
    EXPECT_EQ(r["target"], targets[k]);
    const double ns = r["ns_per_element"];
    // Both ratios are of times measured in this run.
    EXPECT_TRUE(close(r["ratio_to_ceiling"].get<double>(), ceiling_ns / ns)) << r.dump();
    EXPECT_TRUE(close(r["ratio_to_reference"].get<double>(), reference_ns / ns)) << r.dump();
  }
}

TEST(BenchJson, FilterIsARegexOverCaseSizeAndImpl) {
  // One row: the dequantize ceiling at 16 KiB.
  const Captured c = run(true, "^deq-e4m3-tensor/16KiB/ceiling:[a-z0-9_]+$");
  ASSERT_EQ(c.status, 0) << c.out;
  const json rows = json::parse(c.out);
  ASSERT_EQ(rows.size(), 1u) << c.out;
  EXPECT_EQ(rows[0]["case"], "deq-e4m3-tensor");
  EXPECT_EQ(rows[0]["impl"], "ceiling");
  EXPECT_TRUE(rows[0]["ratio_to_reference"].is_null()) << "no reference row ran";
}

TEST(BenchJson, NothingMatchedOrABadRegexIsAFailure) {
  EXPECT_EQ(run(true, "no-such-case").status, 1);
  EXPECT_EQ(run(false, "([unclosed").status, 1);
}

TEST(BenchTable, HeaderAndOneLinePerRow) {
  const Captured c = run(false, "^calq-q8s-b32-f16/16KiB/(ceiling|reference)");
  ASSERT_EQ(c.status, 0) << c.out;
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = c.out.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(c.out.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 3u) << c.out;
  EXPECT_EQ(lines[0].rfind("case", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("x ceiling"), std::string::npos);
  EXPECT_NE(lines[0].find("x reference"), std::string::npos);
  EXPECT_NE(lines[1].find("ceiling"), std::string::npos);
  EXPECT_NE(lines[2].find("reference"), std::string::npos);
}

// Every buffer at the offset asked for past a 64-byte boundary: the bench's figures then do not
// depend on where the heap put a std::vector.
TEST(BenchPlaced, DataLiesAtTheOffsetPastA64ByteBoundary) {
  for (std::size_t offset = 0; offset <= qconform::bench::kMaxOffset; offset += 4) {
    for (std::size_t n : {0u, 1u, 15u, 16u, 4097u}) {
      const qconform::bench::Placed<float> f(n, offset);
      const qconform::bench::Placed<std::uint8_t> b(n, offset);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.data()) % 64, offset) << n;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, offset) << n;
      ASSERT_EQ(f.span().size(), n);
      // Every element is writable and reads back (ASan: within the allocation).
      for (std::size_t i = 0; i < n; ++i) f.data()[i] = static_cast<float>(i);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(f.span()[i], static_cast<float>(i));
      if (n > 0) b.data()[n - 1] = 7;
    }
  }
}

// A batch holds as many calls as fit in kBatchSeconds, never none and never unbounded.
TEST(BenchBatch, CallsPerBatchFillAbout50MicrosecondsFromOneToTheCap) {
  using qconform::bench::batch_calls;
  using qconform::bench::kMaxBatch;
  EXPECT_EQ(qconform::bench::kBatchSeconds, 50e-6);
  EXPECT_EQ(batch_calls(1e-6), 50);
  EXPECT_EQ(batch_calls(3e-6), 16);      // 16.7 calls: whole ones
  EXPECT_EQ(batch_calls(50e-6), 1);
  EXPECT_EQ(batch_calls(1e-3), 1);       // a call longer than a batch: one
  EXPECT_EQ(batch_calls(1e-9), 50000);   // below the cap
  EXPECT_EQ(batch_calls(1e-10), kMaxBatch);
  EXPECT_EQ(batch_calls(0.0), kMaxBatch);  // a call the clock did not see
  EXPECT_EQ(batch_calls(std::numeric_limits<double>::quiet_NaN()), kMaxBatch);
}

TEST(BenchJson, OffsetRunsTheSameRowsAndAnOffsetOffTheGridIsAFailure) {
  const Captured c = run(true, "^calq-q8s-b32-f16/16KiB/(ceiling|reference)", 16);
  ASSERT_EQ(c.status, 0) << c.out;
  const json rows = json::parse(c.out);
  ASSERT_EQ(rows.size(), 2u) << c.out;
  EXPECT_EQ(rows[0]["impl"], "ceiling");
  EXPECT_EQ(rows[1]["impl"], "reference");
  for (std::size_t bad : {std::size_t{2}, std::size_t{17}, std::size_t{64}, std::size_t{4096}}) {
    EXPECT_EQ(run(true, "^calq-q8s-b32-f16/16KiB/ceiling", bad).status, 1) << bad;
  }
}

}  // namespace
