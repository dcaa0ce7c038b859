// The mutant catalogue: deliberately broken implementations of realistic quantizer bugs. The
// property suite must kill every one (ctest label `mutants`), which shows that it bites.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "qconform/implementation.h"

namespace qconform::mutants {

// X-macro registry: id, description. Adding a mutant is one line here plus its knob.
#define QCONFORM_MUTANTS(X)                                                                   \
  X(ties_to_even, "rounds exact ties to even instead of away from zero")                    \
  X(floor_plus_half, "rounds with floor(y + 0.5), wrong for negative ties")                 \
  X(reciprocal_multiply, "computes x * (1 / eff) instead of dividing")                      \
  X(no_zero_scale_guard, "divides by a zero scale instead of substituting 0.1")             \
  X(scale_rounded_to_nearest, "rounds scales to the nearest grid point instead of up")       \
  X(divides_by_raw_scale, "stores the rounded scale but divides by the raw one")            \
  X(missing_global_is_one, "treats a missing global scale as 1 instead of an error")        \
  X(high_nibble_first, "packs the first code into the highest bits of a unit")              \
  X(flat_packing, "packs the flat code stream without padding each line")                   \
  X(flat_blocks, "takes blocks as runs of flat storage instead of rectangles")              \
  X(q8s_clamps_to_minus_128, "clamps q8s to [-128, 127]")                                   \
  X(e4m3_not_saturating, "lets e4m3 overflow to the NaN pattern instead of saturating")     \
  X(drops_negative_zero, "encodes a minifloat -0 as +0")                                    \
  X(nan_checked_first, "reports nan-input before the scale count (wrong error order)")     \
  X(absmean_float_sum, "sums |x| in float for absmean instead of exactly")                  \
  X(lookup_ties_to_upper, "breaks lookup ties toward the higher index")                     \
  X(two_level_global_ignored_in_dequantize, "dequantizes two-level tensors without the global")

enum class Kind {
#define QCONFORM_X(id, desc) id,
  QCONFORM_MUTANTS(QCONFORM_X)
#undef QCONFORM_X
};

struct Entry {
  Kind kind;
  const char* name;
  const char* description;
};

inline constexpr Entry kCatalogue[] = {
#define QCONFORM_X(id, desc) {Kind::id, #id, desc},
    QCONFORM_MUTANTS(QCONFORM_X)
#undef QCONFORM_X
};

[[nodiscard]] std::unique_ptr<Implementation> make(Kind kind);

}  // namespace qconform::mutants
