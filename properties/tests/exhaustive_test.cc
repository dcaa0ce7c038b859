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
  const std::vector<Value> values{Value::e4m3, Value::e5m2, Value::e2m1};
  const Scheme q8 = parse_scheme("value=q8s,store=native").value();
  const Shape shape{1024};
  const std::vector<float> scales{0x1p-3f};
  std::atomic<std::uint64_t> mismatches{0};
  auto sweep = [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<float> data(1024);
    for (std::uint64_t b = begin; b < end; b += 1024) {
      for (std::size_t i = 0; i < 1024; ++i) data[i] = gen::from_bits(static_cast<std::uint32_t>(b + i));
      for (const auto& impl : test::under_test()) {
        for (Value v : values) {
          for (float x : data) {
            if (impl->encode_minifloat(x, v) != qconform::encode_minifloat(x, v)) ++mismatches;
          }
        }
        const auto r = qconform::quantize(q8, shape, data, scales, std::nullopt);
        const auto g = impl->quantize(q8, shape, data, scales, std::nullopt, std::nullopt);
        if (r.ok() != g.ok() || (r.ok() && r->codes != g->codes) || (!r.ok() && r.kind() != g.kind())) ++mismatches;
      }
      if (test::under_test().empty()) {  // the reference against the oracle on a sample
        for (Value v : values) {
          const float x = data[(b >> 10) % 1024];
          if (!checks::oracle_minifloat(x, v).empty()) ++mismatches;
        }
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t total = std::uint64_t{1} << 32, chunk = total / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(sweep, t * chunk, t + 1 == threads ? total : (t + 1) * chunk);
  for (auto& th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0u);
  std::printf("all 2^32 f32 patterns swept over %zu implementations\n", test::under_test().size());
}
