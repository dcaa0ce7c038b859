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
    // Round-to-nearest-even, FTZ and DAZ off, all exceptions masked. A caller already in that mode
    // (the usual case) keeps its MXCSR: no ldmxcsr on the way in, and none on the way out unless the
    // call raised an exception flag the caller had clear (the two ldmxcsr cost about 3 ns a call on
    // the Zen 4 of session 22, in a loop of small calls). The flags never affect a result.
    if ((saved_ & ~kFlags) != kDefault) _mm_setcsr(kDefault);
#else
    saved_ = std::fegetround();
    std::fesetround(FE_TONEAREST);
#endif
  }
  ~FpGuard() {
#if defined(__x86_64__) || defined(__i386__)
    // The caller's mode and flags, exactly. Unconditionally: reading MXCSR to skip this waits for
    // every floating-point operation in flight, and a call nearly always raises inexact anyway.
    _mm_setcsr(saved_);
#else
    std::fesetround(saved_);
#endif
  }
  FpGuard(const FpGuard&) = delete;
  FpGuard& operator=(const FpGuard&) = delete;

 private:
#if defined(__x86_64__) || defined(__i386__)
  static constexpr unsigned kFlags = 0x3Fu;     // the six sticky exception flags
  static constexpr unsigned kDefault = 0x1F80u;  // every exception masked, nearest-even, no FTZ/DAZ
  unsigned saved_ = 0;
#else
  int saved_ = 0;
#endif
};

}  // namespace qconform::optimized::detail
