// Scoped default floating-point environment: results must not depend on the caller's rounding
// mode or FTZ/DAZ (SPEC: IEEE binary32, round-to-nearest-even, one rounding per operation).
#pragma once

#include <cfenv>
#include <cfloat>

static_assert(FLT_EVAL_METHOD == 0, "float arithmetic must not use excess precision");

namespace qconform::detail {

class FpEnvGuard {
 public:
  FpEnvGuard() noexcept;
  ~FpEnvGuard();
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  std::fenv_t saved_{};
#if defined(__x86_64__) || defined(__i386__)
  unsigned mxcsr_ = 0;
#endif
};

}  // namespace qconform::detail
