// Scoped IEEE default floating-point environment for every optimized entry point: the results
// must not depend on the caller's rounding mode or FTZ/DAZ (SPEC §5). The kernels use SSE/AVX
// arithmetic only, which MXCSR alone controls.
#pragma once

#include <cfenv>
#include <cfloat>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

static_assert(FLT_EVAL_METHOD == 0, "float arithmetic must not use excess precision");

namespace qconform::optimized::detail {

class FpGuard {
 public:
  FpGuard() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    saved_ = _mm_getcsr();
    // Round-to-nearest-even, FTZ and DAZ off, all exceptions masked, flags clear.
    _mm_setcsr(0x1F80u);
#else
    saved_ = std::fegetround();
    std::fesetround(FE_TONEAREST);
#endif
  }
  ~FpGuard() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(saved_);
#else
    std::fesetround(saved_);
#endif
  }
  FpGuard(const FpGuard&) = delete;
  FpGuard& operator=(const FpGuard&) = delete;

 private:
#if defined(__x86_64__) || defined(__i386__)
  unsigned saved_ = 0;
#else
  int saved_ = 0;
#endif
};

}  // namespace qconform::optimized::detail
