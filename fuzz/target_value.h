// The value a target_bits case gives the optimized library's trailing `target` argument, and
// whether optimized.h promises that it runs (shared by fuzz/target_bits.cc and make_corpus).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "producer.h"
#include "qconform/optimized.h"

namespace qconform::fuzz {

[[nodiscard]] inline std::int64_t target_value(const TargetCase& c) {
  switch (c.pick) {
    case TargetPick::best: return 0;
    case TargetPick::compiled: {
      const std::vector<optimized::Target> all = optimized::targets();
      return all.empty() ? 0 : all[c.arg % all.size()].bits;
    }
    case TargetPick::bit: return std::bit_cast<std::int64_t>(std::uint64_t{1} << (c.arg % 64));
    case TargetPick::raw: break;
  }
  return std::bit_cast<std::int64_t>(c.arg);
}

// 0 (the best target) or the bits of a target that targets() lists as compiled in and supported.
[[nodiscard]] inline bool runnable(std::int64_t target) {
  if (target == 0) return true;
  for (const optimized::Target& t : optimized::targets()) {
    if (t.bits == target) return t.supported;
  }
  return false;
}

}  // namespace qconform::fuzz
