// Exhaustive sweeps (ctest label `exhaustive`, not in the default run): every scale-grid point
// and its neighbours against the oracle, and all 2^32 f32 patterns through every minifloat
// conversion and a per-tensor quantize, each implementation under test against the reference.
#include <atomic>
#include <thread>

#include "support.h"

using namespace qconform;

// Every scale-grid point of f16, bf16 and ue4m3 and its f32 neighbours, against the oracle.
// Exhaustive over the grids, so it runs under the `exhaustive` label only.
TEST(OracleExhaustive, EveryScaleGridPointAndNeighbours) {
  std::size_t checked = 0;
  for (ScaleDtype dt : {ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3}) {
    for (float p : oracle::grid(dt)) {
      for (float s : {p, gen::next_up(p), gen::next_down(p)}) {
        if (s < 0 || std::isinf(s)) continue;
        const std::string d = checks::oracle_round_up(s, dt);
        ASSERT_TRUE(d.empty()) << d;
        ++checked;
      }
    }
  }
  std::printf("scale round-up checked against the oracle at %zu points\n", checked);
}

TEST(Exhaustive, AllFloatsThroughMinifloatsAndQuantize) {
  // Per-tensor quantize at scale 1 makes y = x exactly, so the minifloat schemes sweep the
  // conversion itself; q8s at a few scales sweeps division, rounding and clamping; each minifloat
  // at a scale whose reciprocal is inexact sweeps the optimized reciprocal path's midpoint check
  // (its fallback to the division) on every input.
  std::vector<std::pair<Scheme, float>> cases;
  for (const char* v : {"e4m3", "e5m2", "e2m1"}) cases.push_back({parse_scheme(std::string("value=") + v + ",store=native").value(), 1.0f});
  for (float sc : {1.0f, 0x1p-3f, 0.0137f}) cases.push_back({parse_scheme("value=q8s,store=native").value(), sc});
  cases.push_back({parse_scheme("value=e4m3,store=native").value(), 0.0137f});
  cases.push_back({parse_scheme("value=e5m2,store=native").value(), 3.7f});
  cases.push_back({parse_scheme("value=e2m1,store=native").value(), 0.3f});
  constexpr std::size_t kChunk = 4096;
  const Shape shape{kChunk};
  std::atomic<std::uint64_t> mismatches{0};
  auto sweep = [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<float> data(kChunk);
    for (std::uint64_t b = begin; b < end; b += kChunk) {
      for (std::size_t i = 0; i < kChunk; ++i) {
        const float x = gen::from_bits(static_cast<std::uint32_t>(b + i));
        data[i] = std::isnan(x) ? 0.0f : x;  // NaN is nan-input, covered elsewhere
      }
      for (const auto& [scheme, scale] : cases) {
        const std::vector<float> scales{scale};
        const auto r = qconform::quantize(scheme, shape, data, scales, std::nullopt);
        for (const auto& impl : test::under_test()) {
          const auto g = impl->quantize(scheme, shape, data, scales, std::nullopt, std::nullopt);
          if (r.ok() != g.ok() || (r.ok() && r->codes != g->codes)) ++mismatches;
        }
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t total = std::uint64_t{1} << 32, chunk = total / threads / kChunk * kChunk;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(sweep, t * chunk, t + 1 == threads ? total : (t + 1) * chunk);
  for (auto& th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0u);
  std::printf("all 2^32 f32 patterns swept through %zu schemes on %zu implementations\n", cases.size(),
              test::under_test().size());
}

// The reference's minifloat conversions against the oracle on every f32 exponent and a spread
// of mantissas (the oracle is too slow for all 2^32 patterns).
TEST(OracleExhaustive, MinifloatsOnEveryExponent) {
  std::size_t checked = 0;
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu, 0x100000u, 0x080000u, 0x0C0000u, 0x1FFFFFu, 0x200000u, 0x3FFFFFu}) {
      for (std::uint32_t sgn : {0u, 0x80000000u}) {
        const float x = gen::from_bits(sgn | (e << 23) | m);
        if (std::isnan(x)) continue;
        for (Value v : {Value::e4m3, Value::e5m2, Value::e2m1}) {
          const std::string d = checks::oracle_minifloat(x, v);
          ASSERT_TRUE(d.empty()) << d;
          ++checked;
        }
      }
    }
  }
  std::printf("minifloat conversions checked against the oracle at %zu points\n", checked);
}
