// FpEnvGuard: save the caller's environment, compute under IEEE defaults, restore.
#include "fpenv.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace qconform::detail {

FpEnvGuard::FpEnvGuard() noexcept {
  std::fegetenv(&saved_);
#if defined(__x86_64__) || defined(__i386__)
  mxcsr_ = _mm_getcsr();
  // Round-to-nearest, FTZ and DAZ off, every exception masked; flags cleared. fesetenv's
  // FE_DFL_ENV does not promise to clear FTZ/DAZ, so MXCSR is written explicitly.
  _mm_setcsr(0x1F80u);
#endif
  std::fesetround(FE_TONEAREST);
}

FpEnvGuard::~FpEnvGuard() {
  std::fesetenv(&saved_);
#if defined(__x86_64__) || defined(__i386__)
  // Exception flags raised here are not the caller's business: restore the word as it was,
  // FTZ/DAZ included, whatever fesetenv restored.
  _mm_setcsr(mxcsr_);
#endif
}

}  // namespace qconform::detail
