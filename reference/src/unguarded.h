// Unguarded forms of public helpers that take an FpEnvGuard of their own, for the reference's
// loops, which already run under one guard per call. A guard is an fegetenv and an fesetenv (and
// MXCSR reads and writes): taken once per scale, they had cost the reference's block-scaled
// quantize a few ns per element (nvfp4: two guards per 16 elements) and showed as 13 % of the
// differential tests' largest case.
#pragma once

#include "qconform/errors.h"
#include "qconform/scheme.h"

namespace qconform::detail {

// round_up_scale's result, under the environment the caller has set (the default one).
[[nodiscard]] Result<float> round_up_scale_unguarded(float s, ScaleDtype dtype);

}  // namespace qconform::detail
