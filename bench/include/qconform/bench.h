// qconform benchmarks: the reference, the optimized implementation on every supported target and a
// bandwidth ceiling, in one run, so every figure is also a ratio to the ceiling and the reference.
#pragma once

#include <span>
#include <string_view>

namespace qconform::bench {

// Runs the cases whose name "<case>/<size>/<impl>" matches the regex `filter` (empty: all) and
// prints a table, or with `json` a JSON array with one object per case, size and implementation:
// case, bytes (f32 side), impl, target, ns_per_element, gb_per_s (f32 bytes per second),
// ratio_to_ceiling (ceiling time / this time) and ratio_to_reference (reference time / this time).
// At the small sizes each row runs for at least `min_time_seconds` in all, as five slices taken in
// rounds over the whole run, and reports its median slice; the DRAM size runs a fixed few
// iterations, each optimized one paired with a ceiling pass (the ratio: their median).
// Returns 0, or 1 when nothing matched or a run failed.
int run(bool json, double min_time_seconds, std::string_view filter);

// The benchmarks' input, like activations: deterministic, roughly Gaussian (the sum of four uniform
// draws: mean 0, standard deviation about 0.98, within [-3.4, 3.4)), every 997th element 8 times
// larger. The same values on every call.
void fill_activations(std::span<float> v);

}  // namespace qconform::bench
